// CUDA TPCR (register-chunk partition + PCR), the multi-level solver for very large
// systems and the partitioned ("block") primitives. The algorithm pieces are those of
// tri_partition.hpp; tri_tpcr_host.cpp is the host twin (same plan, same order).
//
// Design notes
// ------------
// Bandwidth floor: read dl, d, du, b and write x = 5 words per unknown (40 B double,
// 20 B float); everything else happens in registers and shared memory.
//   Threads: one thread = one chunk of Q consecutive rows (Q = 8 double, 16 float: 64 B per
//   array per thread). Contiguous layout: each array of a chunk is read with four 16-byte
//   vector loads (ld.global.nc for dl/d/du) when aligned, so every 32-byte sector fetched
//   is used whole and a thread has 16 independent loads in flight (plenty for Little's
//   law: 256 threads x 256 B = 64 KB in flight per block); when a warp's 32 chunks are one
//   contiguous range (packed systems), the warp moves them with lane-consecutive 16-byte
//   accesses through a per-warp shared buffer instead (tp_warp_load / tp_warp_store: whole
//   128-byte lines per instruction; see "coalesced warp I/O"). Interleaved layout: rows are
//   scalar loads, but the threads of a warp are >= 4 (double) / 8 (float) consecutive
//   systems times <= 8 / 4 chunks, so a row of them is a whole 32-byte sector. (One thread per whole system, i.e. Thomas, would need the modified
//   coefficients stored and re-read: 9 words per unknown instead of 5.)
//   Single tile (m <= 512*Q: 4096 double / 8192 float contiguous; interleaved 2048 double /
//   4096 float, i.e. >= 16 bytes of systems per block row):
//   one pass, 5 words per unknown; expected >= 80% of copy bandwidth for large batches.
//   Multi-level (larger m, in particular one system of millions of rows): tiles of
//   256*Q rows (2048 double / 4096 float; interleaved 512 rows of 4 / 8 systems), halved
//   down to 32*Q while that leaves fewer than TP_MIN_BLOCKS = 512 blocks (m = 1e6 double:
//   tiles of 1024 rows, 977 blocks; m = 2^21: 2048 rows, 1024 blocks). Pass 1 (REDUCE) reads 4 words per unknown and
//   writes 2 equations (8 words) per tile; the reduced system (2 unknowns per tile, 0.1%
//   of the data) is solved recursively; pass 2 (FINISH) reads 4 words and writes 1:
//   9 words per unknown plus ~0.4%, i.e. 5/9 = 56% of copy bandwidth at best, more when
//   pass 2 finds tiles in L2: it walks the tiles in reverse order, so the ~50 MB that
//   pass 1 read last are read first (m = 2^21 double is 64 MB of input).
// Blocks and kernels (measured on an H100, bench/tri/README.md): contiguous single-tile
//   batches run one warp (teams < 32 chunks, warp barriers only) or one team per block, so
//   blocks run decoupled; interleaved ones 256 threads (512 from 512 rows: longer runs of
//   consecutive systems per row), with an L2::128B line-fetch hint on the row loads. Double
//   teams of >= 64 chunks (float: >= 128; on the H200 every contiguous team, tp_stream_min_teams)
//   and the tiles of long systems use tp_stream_kernel:
//   persistent blocks, each tile's four arrays brought by TMA tensor copies (128-byte
//   swizzle: conflict-free chunk reads) while the previous tile is solved. Interleaved double
//   batches of m = 512 / 1024 (on the H200 from m = 64, with up to 128-byte rows of systems per block: tp_ilv_regroup;
//   there float m = 64-1024 too, by tensor boxes only) use tp_stream_ilv_kernel (persistent blocks, cp.async copies of a
//   group's rows, or one tensor box per array and 256 rows: 128- or 256-byte rows of <= 256-row tiles, on the H200 also
//   64- and 32-byte rows of 512- and 1024-row tiles read in an XOR order; the same overlap); from m = 1025 (both
//   precisions) tp_fused_ilv_kernel (the
//   REDUCE, the reduced solves and the FINISH of 128-row tiles in one persistent grid, the FINISH
//   finding its tile in L2, each tile brought by tensor copies while the item before is computed).
// Interface system of a tile (2 equations per chunk): one even/odd step (each chunk's e0
//   absorbs the e1 of its left neighbour and its own e1), PCR on the chunks' first
//   unknowns (1 equation per thread, log2(team) steps: 8 for team 256), then x_last from
//   e1. The equations travel divided by their pivots (tp_eq_unit, b = 1 not stored): per PCR
//   step a thread reads 6 and writes 3 shared words, ~(9*8/Q) words of shared traffic per
//   unknown, i.e. ~72 B/unknown double against 40 B of global traffic, with ~8x the bandwidth
//   (PCR on all 2*team equations would move ~2.2x more and needed 48 registers more). Compute
//   per unknown: chunk reduce ~1 division + 12 flops, back substitution 4 flops, PCR ~(8 steps
//   * (1 division + 12 flops))/Q (2 divisions per step in the division form); the REDUCE tree
//   is log2(team) levels over a halving number of threads. All well under the bandwidth
//   time on an H100 (3.35 TB/s vs ~60 TFLOP/s fp64).
// Registers: a, b, c, r of the chunk (4*Q values: 64 registers double, 64 float), reused
//   in place for the reduced coefficients; __launch_bounds__(512) caps at 128 per thread
//   (2 blocks of 256 per SM). ptxas (sm_90, CUDA 13.0, -O3 -Xptxas -v): no spills, no stack:
//     tp_solve_kernel  double contig 118, double inter 110, float contig 122, float inter 111
//     tp_reduce_kernel double contig 114, double inter 112, float contig 122, float inter 124
//   (The input check re-reads the rows on its rare failure path, tp_find_bad_input, so the
//   loaded values need not stay live: that saved ~40 registers.)
// Shared memory: 9 words per thread (SOLVE: e1 + PCR equation = 8 words; REDUCE: the
//   9-word nodes of the merge tree), i.e. 18 KB (double) / 9 KB (float) for 256 threads,
//   36 KB for the largest block (512 threads, one team); contiguous layout: plus the
//   2.5 KB staging buffer per warp (77 KB for 512 threads double: opt-in above 48 KB). Layout per
//   team: system-major with stride 9*team (contiguous; conflict-free for teams < 32
//   sharing a warp) or equation-major with the spb systems innermost (interleaved).
// Workspace: the reduced systems of all levels in sg_ctx_work slot 1 (slot 0 is used by
//   the other batch algorithms, which sg_tri_block_solve calls).
// Breakdowns are recorded in the ctx's device report (sg_dev_flag) and fetched once at
//   the end (one stream synchronisation per call).
#include "sys/sg_cuda.cuh"
#include "tri/tri_internal.hpp"
#include "tri/tri_partition.hpp"
#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <cstdint>

namespace {

// COLD: the report out of line (tp_flag_cold), for the fused kernel's float instances: inlined at
// each check site the report (key clamps, atomicMin, store) was ~900 of the fp64 instance's 5600 SASS
// instructions, and the float instances spilled 20 / 16 bytes (0 with the call; ptxas). Measured on
// the H100 (same lease, two repeats, % of copy, interleaved m = 2048 / 4096): float 56.1 / 54.4 ->
// 57.8 / 56.3, double 62.1 / 61.1 -> 61.2 / 60.5, so double keeps the report inline. Out of line in
// every kernel it raised other kernels' registers (float tp_stream_kernel 123 -> 156).
__device__ __noinline__ void tp_flag_cold(sg_dev_report *rep, int cls, long long sys, long long row, double v) { sg_dev_flag(rep, cls, sys, row, v); }
template <bool COLD> struct tp_dev_team_t {
  sg_dev_report *rep;
  long long      sys, rscale;
  bool           active;  // false for the padding teams of the last block
  __host__ __device__ __forceinline__ void fail(int cls, long long row, double v)
  {
#ifdef __CUDA_ARCH__
    if (active) {
      if constexpr (COLD) tp_flag_cold(rep, cls, sys, row * rscale, v);
      else sg_dev_flag(rep, cls, sys, row * rscale, v);
    }
#else
    (void)cls; (void)row; (void)v;
#endif
  }
};
using tp_dev_team = tp_dev_team_t<false>;

// ---------------------------------------------------------------- global memory
__device__ __forceinline__ void tp_unpack(const double2 &w, double *v) { v[0] = w.x; v[1] = w.y; }
__device__ __forceinline__ void tp_unpack(const float4 &w, float *v) { v[0] = w.x; v[1] = w.y; v[2] = w.z; v[3] = w.w; }
__device__ __forceinline__ double2 tp_pack(const double *v) { return make_double2(v[0], v[1]); }
__device__ __forceinline__ float4 tp_pack(const float *v) { return make_float4(v[0], v[1], v[2], v[3]); }
template <class T> struct tp_vec;
template <> struct tp_vec<double> { using type = double2; };
template <> struct tp_vec<float> { using type = float4; };

// Q contiguous values at p (16-byte vector accesses when p is aligned; NC: read-only path).
template <bool NC, int Q, class T> __device__ __forceinline__ void tp_ld(const T *p, T (&v)[Q])
{
  using V = typename tp_vec<T>::type;
  constexpr int W = 16 / sizeof(T);
  if ((reinterpret_cast<uintptr_t>(p) & 15) == 0) {
    const V *pv = reinterpret_cast<const V *>(p);
#pragma unroll
    for (int k = 0; k < Q / W; k++) {
      if constexpr (NC) tp_unpack(__ldg(pv + k), v + k * W);
      else tp_unpack(pv[k], v + k * W);
    }
  } else {
#pragma unroll
    for (int i = 0; i < Q; i++) {
      if constexpr (NC) v[i] = __ldg(p + i);
      else v[i] = p[i];
    }
  }
}
template <int Q, class T> __device__ __forceinline__ void tp_st(T *p, const T (&v)[Q])
{
  using V = typename tp_vec<T>::type;
  constexpr int W = 16 / sizeof(T);
  if ((reinterpret_cast<uintptr_t>(p) & 15) == 0) {
#pragma unroll
    for (int k = 0; k < Q / W; k++) reinterpret_cast<V *>(p)[k] = tp_pack(v + k * W);
  } else {
#pragma unroll
    for (int i = 0; i < Q; i++) p[i] = v[i];
  }
}

// One value with an L2 fetch of its whole 128-byte line (SG_TP_L2HINT bytes); NC: read-only path.
#ifndef SG_TP_L2HINT
#define SG_TP_L2HINT 128
#endif
#define TP_STR2(x) #x
#define TP_STR(x) TP_STR2(x)
template <bool NC> __device__ __forceinline__ double tp_ld_l2(const double *p)
{
  double v;
  if constexpr (NC) asm("ld.global.nc.L2::" TP_STR(SG_TP_L2HINT) "B.f64 %0, [%1];" : "=d"(v) : "l"(p));
  else asm volatile("ld.global.L2::" TP_STR(SG_TP_L2HINT) "B.f64 %0, [%1];" : "=d"(v) : "l"(p) : "memory");
  return v;
}
template <bool NC> __device__ __forceinline__ float tp_ld_l2(const float *p)
{
  float v;
  if constexpr (NC) asm("ld.global.nc.L2::" TP_STR(SG_TP_L2HINT) "B.f32 %0, [%1];" : "=f"(v) : "l"(p));
  else asm volatile("ld.global.L2::" TP_STR(SG_TP_L2HINT) "B.f32 %0, [%1];" : "=f"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ unsigned long long tp_policy(int k)  // L2 eviction: 0 normal, 1 last, 2 first
{
  unsigned long long p;
  if (k == 1) asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;\n" : "=l"(p));
  else if (k == 2) asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(p));
  else asm volatile("createpolicy.fractional.L2::evict_normal.b64 %0, 1.0;\n" : "=l"(p));
  return p;
}
template <bool NC> __device__ __forceinline__ double tp_ld_pol(const double *p, unsigned long long pol)
{
  double v;
  if constexpr (NC) asm("ld.global.nc.L2::cache_hint.L2::128B.f64 %0, [%1], %2;" : "=d"(v) : "l"(p), "l"(pol));
  else asm volatile("ld.global.L2::cache_hint.L2::128B.f64 %0, [%1], %2;" : "=d"(v) : "l"(p), "l"(pol) : "memory");
  return v;
}
template <bool NC> __device__ __forceinline__ float tp_ld_pol(const float *p, unsigned long long pol)
{
  float v;
  if constexpr (NC) asm("ld.global.nc.L2::cache_hint.L2::128B.f32 %0, [%1], %2;" : "=f"(v) : "l"(p), "l"(pol));
  else asm volatile("ld.global.L2::cache_hint.L2::128B.f32 %0, [%1], %2;" : "=f"(v) : "l"(p), "l"(pol) : "memory");
  return v;
}
// Raw rows [g0, g0+Q) of system s (identity for rows >= te): vector path for full chunks
// of the contiguous layout (row stride 1), else tp_load_raw. POL (interleaved only): the row
// loads carry the L2 eviction policy pol (tp_policy).
template <int Q, bool INTER, bool POL = false, class T>
__device__ __forceinline__ void tp_dev_load(const tp_sys<T> &S, long long s, long long g0, long long te, T (&a)[Q], T (&b)[Q], T (&c)[Q],
                                            T (&r)[Q], unsigned long long pol = 0)
{
  static_assert(INTER || !POL, "L2 policies: interleaved rows only");
  if (!INTER && g0 + Q <= te) {
    const long long o = s * S.ss + g0;
    tp_ld<true>(S.dl + o, a); tp_ld<true>(S.d + o, b); tp_ld<true>(S.du + o, c); tp_ld<false>(S.b + o, r);
  } else if (INTER) {
    // rows of the interleaved layout: a warp reads 32-byte pieces of many 128-byte lines whose
    // other pieces belong to the neighbouring blocks' systems; the L2::128B hint makes an L2
    // miss fetch the whole line, so those blocks find their pieces in L2
    const long long o = s * S.ss + g0 * S.rs;
#pragma unroll
    for (int i = 0; i < Q; i++) {
      if (g0 + i < te) {
        const long long k = o + i * S.rs;
        if constexpr (POL) {  // (b not read-only: x may alias it)
          a[i] = tp_ld_pol<true>(S.dl + k, pol); b[i] = tp_ld_pol<true>(S.d + k, pol); c[i] = tp_ld_pol<true>(S.du + k, pol); r[i] = tp_ld_pol<false>(S.b + k, pol);
        } else {
          a[i] = tp_ld_l2<true>(S.dl + k); b[i] = tp_ld_l2<true>(S.d + k); c[i] = tp_ld_l2<true>(S.du + k); r[i] = tp_ld_l2<false>(S.b + k);
        }
      } else { a[i] = 0; b[i] = 1; c[i] = 0; r[i] = 0; }
    }
  } else tp_load_raw<Q>(S, s, g0, te, a, b, c, r);
}
template <int Q, bool INTER, class T> __device__ __forceinline__ void tp_dev_store(const tp_sys<T> &S, long long s, long long g0, long long te, const T (&x)[Q])
{
  const long long o = s * S.ss + g0 * S.rs;
  if (!INTER && g0 + Q <= te) tp_st(S.x + o, x);
  else {
#pragma unroll
    for (int i = 0; i < Q; i++)
      if (g0 + i < te) S.x[o + i * S.rs] = x[i];
  }
}

// An interleaved chunk's x (g0 < te) through one pointer stepped by the row stride, each row under a 32-bit predicate
// (i < the chunk's rows below te). tp_dev_store's per-row form (g0 + i < te, x[o + i * rs]) made the compiler rebuild
// the 64-bit address of every row behind its own branch (~18 instructions a row in the float stream kernel's SASS:
// ~290 of the ~1800 a thread issues per group at fp32 interleaved m = 256). Used by the tensor-box instances of
// tp_stream_ilv_kernel and by the fused kernel's FINISH (in tp_dev_store itself it made the cp.async instances spill:
// 32 / 48 bytes). Measured on the H200 (e27464f; bench/tri/README.md, twelfth session): fp32 interleaved m = 64-1024
// 4-9 % faster (m = 256: 59.2 M -> 48.5 M instructions), fp64 within 1 %.
template <int Q, class T, class St> __device__ __forceinline__ void tp_ilv_store(T *x0, long long rs, long long g0, long long te, const T (&x)[Q], St st)
{
  const long long left = te - g0;
  const int       nv   = left >= Q ? Q : (int)left;
  T              *p    = x0;
#pragma unroll
  for (int i = 0; i < Q; i++, p += rs)
    if (i < nv) st(p, x[i]);
}

// ---------------------------------------------------------------- coalesced warp I/O
// Contiguous layout: when the 32 lanes of a warp hold 32 consecutive full chunks (the common
// case: packed systems of m >= 256 double / 512 float rows, or m = team*Q), their 32*Q rows are
// one contiguous range. They are then moved with lane-consecutive 16-byte accesses, so a warp
// instruction covers 512 contiguous bytes (whole 128-byte lines), and redistributed through a
// per-warp shared buffer (the XOR order of tp_stage_slot: conflict-free writes and reads).
// The per-lane path (a lane's four 16-byte accesses 64 bytes apart from its neighbours') made
// every instruction touch 32 sectors and fetch half of them twice: ncu on an H100 counted 52%
// excessive sectors and 38% of the warp cycles stalled on the full LG queue (m = 1024 double).
// 16-byte vectors per chunk (Q*sizeof(T)/16: 4 for the default Q) and the staging bytes per warp
// (VEC+1 vectors per chunk: the padded layout's; the XOR order, tp_stage_slot, uses VEC of them)
template <class T> constexpr int tp_stage_vec() { return tp_q<T>() * (int)sizeof(T) / 16; }
template <class T> constexpr int tp_stage_bytes() { return 32 * (tp_stage_vec<T>() + 1) * 16; }
template <class T> constexpr bool tp_stage_ok() { return tp_q<T>() * (int)sizeof(T) % 32 == 0; }
// The staged vectors without a padding vector, in an XOR order: vector k of lane l's chunk at slot
// l*V + (k ^ ((l / (8 / V)) % V)). The padded layout (stride V + 1 = 5) wrote conflict-free but read 2-way conflicted
// in every quarter-warp (slots base + {0, 1, 2, 3, 5, 6, 7, 8}: 0 and 8 share banks). Here both directions hit 8
// distinct 16-byte slots per quarter-warp. Measured on the H200 (1dc43b1; bench/tri/README.md, twelfth session): ncu
// at fp64 contiguous m = 4096 shared-load conflicts 1.36 M -> 0.61 M of ~15 M wavefronts, fp64 contiguous m = 1024-4096
// ~1 % faster.
template <class T> __device__ __forceinline__ int tp_stage_slot(int l, int k)
{
  constexpr int V = tp_stage_vec<T>();
  static_assert(V >= 1 && V <= 8 && (V & (V - 1)) == 0, "tp_stage_slot: 1, 2, 4 or 8 vectors per chunk");
  return l * V + (k ^ ((l / (8 / V)) & (V - 1)));
}

// Warp-uniform: may this warp use the coalesced path for the rows at element offset o (this
// lane's chunk; full = the lane's chunk is a whole chunk of an active system)? o0: lane 0's offset.
template <int Q, class T>
__device__ __forceinline__ bool tp_warp_contig(bool full, long long o, const T *p0, const T *p1, const T *p2, const T *p3, long long &o0)
{
  if (!tp_stage_ok<T>() || (blockDim.x & 31)) return false;  // block-uniform
  const int lane = (int)threadIdx.x & 31;
  o0             = __shfl_sync(0xffffffffu, o, 0);
  const uintptr_t al = reinterpret_cast<uintptr_t>(p0 + o0) | reinterpret_cast<uintptr_t>(p1 + o0) | reinterpret_cast<uintptr_t>(p2 + o0) |
                       reinterpret_cast<uintptr_t>(p3 + o0);
  return __all_sync(0xffffffffu, full && o == o0 + (long long)lane * Q && (al & 15) == 0);
}

// Lane-consecutive vectors v[k] (k-th 512-byte piece of the warp's range) -> this lane's chunk.
template <int Q, class T, class V> __device__ __forceinline__ void tp_stage_in(V *buf, const V (&v)[tp_stage_vec<T>()], T (&x)[Q])
{
  constexpr int TP_STAGE_VEC = tp_stage_vec<T>();
  constexpr int W    = 16 / sizeof(T);
  const int     lane = (int)threadIdx.x & 31;
#pragma unroll
  for (int k = 0; k < TP_STAGE_VEC; k++) {
    const int g = k * 32 + lane;
    buf[tp_stage_slot<T>(g / TP_STAGE_VEC, g % TP_STAGE_VEC)] = v[k];
  }
  __syncwarp();
#pragma unroll
  for (int k = 0; k < TP_STAGE_VEC; k++) tp_unpack(buf[tp_stage_slot<T>(lane, k)], x + k * W);
  __syncwarp();
}

// Rows of the warp's 32 chunks from o0 (tp_warp_contig) into each lane's a, b, c, r: all 16
// loads are issued before the first is used.
template <int Q, class T>
__device__ __forceinline__ void tp_warp_load(const tp_sys<T> &S, long long o0, unsigned char *stage, T (&a)[Q], T (&b)[Q], T (&c)[Q], T (&r)[Q])
{
  using V             = typename tp_vec<T>::type;
  const int lane      = (int)threadIdx.x & 31;
  constexpr int TP_STAGE_VEC = tp_stage_vec<T>();
  V *const  buf       = reinterpret_cast<V *>(stage + (threadIdx.x / 32) * tp_stage_bytes<T>());
  const V  *pa = reinterpret_cast<const V *>(S.dl + o0), *pb = reinterpret_cast<const V *>(S.d + o0);
  const V  *pc = reinterpret_cast<const V *>(S.du + o0), *pr = reinterpret_cast<const V *>(S.b + o0);
  V         va[TP_STAGE_VEC], vb[TP_STAGE_VEC], vc[TP_STAGE_VEC], vr[TP_STAGE_VEC];
#pragma unroll
  for (int k = 0; k < TP_STAGE_VEC; k++) {
    va[k] = __ldg(pa + k * 32 + lane); vb[k] = __ldg(pb + k * 32 + lane); vc[k] = __ldg(pc + k * 32 + lane); vr[k] = pr[k * 32 + lane];
  }
  tp_stage_in(buf, va, a); tp_stage_in(buf, vb, b); tp_stage_in(buf, vc, c); tp_stage_in(buf, vr, r);
}

// This lane's chunk x -> the warp's 32 chunks at o0 with lane-consecutive 16-byte stores.
template <int Q, class T> __device__ __forceinline__ void tp_warp_store(T *xp, long long o0, unsigned char *stage, const T (&x)[Q])
{
  using V        = typename tp_vec<T>::type;
  constexpr int W    = 16 / sizeof(T);
  const int     lane = (int)threadIdx.x & 31;
  constexpr int TP_STAGE_VEC = tp_stage_vec<T>();
  V *const      buf  = reinterpret_cast<V *>(stage + (threadIdx.x / 32) * tp_stage_bytes<T>());
#pragma unroll
  for (int k = 0; k < TP_STAGE_VEC; k++) buf[tp_stage_slot<T>(lane, k)] = tp_pack(x + k * W);
  __syncwarp();
  V *const pv = reinterpret_cast<V *>(xp + o0);
#pragma unroll
  for (int k = 0; k < TP_STAGE_VEC; k++) {
    const int g = k * 32 + lane;
    pv[g] = buf[tp_stage_slot<T>(g / TP_STAGE_VEC, g % TP_STAGE_VEC)];
  }
  __syncwarp();
}

// ---------------------------------------------------------------- shared memory
// Word w of this thread's team: W[w*ws] (W, ws set per layout, see the design notes).
template <class T> __device__ __forceinline__ void tp_put(T *W, int ws, int n, int i, const tp_eq<T> &e)
{
  W[i * ws] = e.a; W[(n + i) * ws] = e.b; W[(2 * n + i) * ws] = e.c; W[(3 * n + i) * ws] = e.d;
}
template <class T> __device__ __forceinline__ tp_eq<T> tp_get(const T *W, int ws, int n, int i)
{
  return {W[i * ws], W[(n + i) * ws], W[(2 * n + i) * ws], W[(3 * n + i) * ws]};
}
// A unit equation (tp_eq_unit: b = 1) in the same slots, b not stored.
template <class T> __device__ __forceinline__ void tp_put_unit(T *W, int ws, int n, int i, const tp_eq<T> &e)
{
  W[i * ws] = e.a; W[(2 * n + i) * ws] = e.c; W[(3 * n + i) * ws] = e.d;
}
template <class T> __device__ __forceinline__ tp_eq<T> tp_get_unit(const T *W, int ws, int n, int i)
{
  return {W[i * ws], (T)1, W[(2 * n + i) * ws], W[(3 * n + i) * ws]};
}
template <class T> __device__ __forceinline__ void tp_put_node(T *W, int ws, int team, int j, const tp_node<T> &nd)
{
  tp_put(W, ws, 2 * team, j, nd.e0);
  tp_put(W, ws, 2 * team, j + team, nd.e1);
  W[(8 * team + j) * ws] = (T)nd.cnt;
}
template <class T> __device__ __forceinline__ tp_node<T> tp_get_node(const T *W, int ws, int team, int j)
{
  tp_node<T> nd;
  nd.e0  = tp_get(W, ws, 2 * team, j);
  nd.e1  = tp_get(W, ws, 2 * team, j + team);
  nd.cnt = (int)W[(8 * team + j) * ws];
  return nd;
}

// The node of the lane d lanes up (whole warp takes part; the value is unused where the
// source lies outside the warp).
template <class T> __device__ __forceinline__ tp_eq<T> tp_shfl_down_eq(const tp_eq<T> &e, int d)
{
  return {__shfl_down_sync(0xffffffffu, e.a, d), __shfl_down_sync(0xffffffffu, e.b, d), __shfl_down_sync(0xffffffffu, e.c, d),
          __shfl_down_sync(0xffffffffu, e.d, d)};
}
template <class T> __device__ __forceinline__ tp_node<T> tp_shfl_down_node(const tp_node<T> &nd, int d)
{
  tp_node<T> o;
  o.e0  = tp_shfl_down_eq(nd.e0, d);
  o.e1  = tp_shfl_down_eq(nd.e1, d);
  o.cnt = __shfl_down_sync(0xffffffffu, nd.cnt, d);
  return o;
}

// Thread -> (system of the block, chunk of the team). Contiguous: the team's threads are
// consecutive; interleaved: the block's systems are consecutive (coalesced rows).
struct tp_map {
  int sl, j, ws, wofs;
  __device__ __forceinline__ tp_map(bool inter, const tp_plan &P)
  {
    sl   = inter ? (int)threadIdx.x % P.spb : (int)threadIdx.x / P.team;
    j    = inter ? (int)threadIdx.x / P.spb : (int)threadIdx.x % P.team;
    ws   = inter ? P.spb : 1;
    wofs = inter ? sl : sl * 9 * P.team;
  }
};

// A team that reports nothing: the chunk reduction of a FINISH meets the pivots its REDUCE
// checked already (the downward pivots do not depend on the folded x_prev / x_next, and the
// folded rows' pivot scales are not larger), so with it the checks compile away.
struct tp_quiet_team {
  __device__ __forceinline__ void fail(int, long long, double) {}
};
// The team's chunks (rows g0.. of tile ts in a, b, c, r) -> their solution (left in r):
// chunk reduce, interface system, back substitution. Barriers: nbar > 0, named barrier 1 of the
// block's first nbar threads (a multiple of 32); else wl: 0 (block barriers), or the mask of the
// lanes of one warp that make up the team (warp barriers). CHK = false: the chunk reduction's
// pivots are not checked (a FINISH after its REDUCE, see tp_quiet_team); the interface system's are.
// UNIT (default): the interface equations exchanged divided by their pivots (tp_eq_unit); false: the
// division form (tp_pcr_step_div), kept where the unit form measured slower on the H200 (twelfth
// tridiagonal session, bench/tri/README.md): the MULTI stream kernel (contiguous teams below 32 chunks:
// m = 128 +2 %) and the float tensor-box interleaved instance without the XOR order (m = 64-256
// +2-4 %: the unit form spills 52 bytes there).
template <int Q, bool CHK = true, bool UNIT = true, class T, class Team>
__device__ __forceinline__ void tp_team_solve(Team &tm, T (&a)[Q], const T (&b)[Q], T (&c)[Q], T (&r)[Q], T *W, int ws, int j, int team,
                                              long long ts, long long g0, T tol, unsigned wl, int nbar = 0)
{
  tp_eq<T> e0, e1;
  if constexpr (CHK) tp_chunk_reduce<Q>(tm, a, b, c, r, Q, tol, g0, 1, e0, e1);
  else {
    tp_quiet_team qt;
    tp_chunk_reduce<Q>(qt, a, b, c, r, Q, tol, g0, 1, e0, e1);
  }
  // Interface system (UNIT: equations exchanged divided by their pivots, tp_eq_unit; slot b unused).
  // Words [0, 4*team) hold the chunks' e1; the PCR equations of the
  // chunks' first unknowns (after the even/odd step) ping-pong between buffer 0 = words
  // [4*team, 8*team) and buffer 1 = the e1 words: step k writes buffer k%2, which was last
  // read in step k-2 (or, for k = 1, in the even/odd step), and every thread finished those
  // reads before the barrier of step k-1, so one barrier per step suffices. x_first goes to
  // the buffer the last step did not read. When a team lies inside one warp (contiguous
  // layout, team <= 32: wl) the barriers are warp barriers, so the warps of a block run
  // decoupled (one warp can load while another computes).
  auto sync = [wl, nbar]() {
    if (nbar) asm volatile("bar.sync 1, %0;" ::"r"(nbar) : "memory");
    else if (wl) __syncwarp(wl);
    else __syncthreads();
  };
  // UNIT: e1 and every PCR equation go out divided by their pivots (the owner's reciprocal and check),
  // the readers only multiply; else raw, and every reader divides by its neighbours' pivots
  auto put = [&](T *B, const tp_eq<T> &e) {
    if constexpr (UNIT) tp_put_unit(B, ws, team, j, e);
    else tp_put(B, ws, team, j, e);
  };
  auto get = [&](const T *B, int i) {
    if constexpr (UNIT) return tp_get_unit(B, ws, team, i);
    else return tp_get(B, ws, team, i);
  };
  auto step = [&](const tp_eq<T> &e, bool hl, const tp_eq<T> &L, bool hr, const tp_eq<T> &R, long long rl, long long rr) {
    if constexpr (UNIT) return tp_pcr_step(e, hl, L, hr, R);
    else return tp_pcr_step_div(tm, e, hl, L, hr, R, tol, rl, rr);
  };
  const tp_eq<T> s1 = UNIT ? tp_eq_unit(tm, e1, tol, tp_eq_row(ts, 2 * j + 1, Q)) : e1;  // chunk j's e1 as sent
  put(W, s1);
  sync();
  tp_eq<T> q = step(e0, j > 0, j > 0 ? get(W, j - 1) : s1, true, s1, tp_eq_row(ts, 2 * j - 1, Q), tp_eq_row(ts, 2 * j + 1, Q));
  int k = 0;
  for (int st = 1; st < team; st *= 2, k++) {
    T *const       B  = (k & 1) ? W : W + 4 * team * ws;
    const tp_eq<T> qs = UNIT ? tp_eq_unit(tm, q, tol, tp_eq_row(ts, 2 * j, Q)) : q;  // (UNIT: the step continues from it)
    put(B, qs);
    sync();
    const bool hl = j >= st, hr = j + st < team;
    q = step(qs, hl, hl ? get(B, j - st) : qs, hr, hr ? get(B, j + st) : qs, tp_eq_row(ts, 2 * (j - st), Q), tp_eq_row(ts, 2 * (j + st), Q));
  }
  const T  xf = tp_pcr_x(tm, q, tol, tp_eq_row(ts, 2 * j, Q));
  T *const XF = (k & 1) ? W : W + 4 * team * ws;
  XF[j * ws]  = xf;
  sync();
  const T xn = j + 1 < team ? XF[(j + 1) * ws] : (T)0;
  T       xl;
  if constexpr (UNIT) xl = tp_last_x(s1, xf, xn);
  else xl = tp_last_x_div(tm, s1, xf, xn, tol, tp_eq_row(ts, 2 * j + 1, Q));
  tp_chunk_solve<Q>(a, c, r, xf, xl);
}

template <class T> struct tp_out {  // reduced system being written: element (s, k) at s*ss + k*rs
  T        *dl, *d, *du, *b;
  long long ss, rs;
  unsigned *tick = nullptr;  // STREAM: REDUCE zeroes it; FINISH takes its items after the first from it
};

// The team's chunks (nrow rows from g0 of tile t = rows [ts, te) of system s) -> the tile's
// (<= 2) interface equations, written by thread j = 0 to O. stride: thread distance of
// consecutive chunks.
template <int Q, class T, class Team>
__device__ __forceinline__ void tp_team_reduce(Team &tm, T (&a)[Q], const T (&b)[Q], T (&c)[Q], T (&r)[Q], int nrow, T *W, int ws, int j,
                                               int team, long long s, long long t, long long ts, long long te, long long g0, T tol, int stride,
                                               const tp_out<T> &O)
{
  tp_node<T> nd;
  nd.cnt = tp_chunk_reduce<Q>(tm, a, b, c, r, nrow, tol, g0, 1, nd.e0, nd.e1);
  // merge tree: at level st, node j (j % 2st == 0) absorbs node j + st. While both lie in
  // one warp (2*st*stride <= 32 lanes, stride = thread distance of consecutive chunks) node
  // j + st comes by shuffles; above that its owner stores it just before the barrier (slots
  // written and read at different levels are disjoint). Same merges in the same order.
  int st = 1;
  if ((blockDim.x & 31) == 0)
    for (; st < team && 2 * st * stride <= 32; st *= 2) {
      const tp_node<T> o = tp_shfl_down_node(nd, st * stride);
      if ((j & (2 * st - 1)) == 0 && j + st < team) nd = tp_merge(tm, nd, o, tol, ts + (long long)(j + st) * Q);
    }
  for (; st < team; st *= 2) {
    if ((j & (2 * st - 1)) == st) tp_put_node(W, ws, team, j, nd);
    __syncthreads();
    if ((j & (2 * st - 1)) == 0 && j + st < team) nd = tp_merge(tm, nd, tp_get_node(W, ws, team, j + st), tol, ts + (long long)(j + st) * Q);
  }
  if (j == 0 && tm.active) {
    for (int k = 0; k < nd.cnt; k++) {
      const tp_eq<T>  e = k ? nd.e1 : nd.e0;
      const long long o = s * O.ss + (2 * t + k) * O.rs;
      tp_check_eq(tm, e, k ? te - 1 : ts);
      O.dl[o] = e.a; O.d[o] = e.b; O.du[o] = e.c; O.b[o] = e.d;
    }
  }
}

// ---------------------------------------------------------------- kernels
// Programmatic dependent launch (the levels of a multi-level solve, tp_cuda_ex::launch): a
// kernel launched with programmatic stream serialization is scheduled as the blocks of the
// kernel before it retire, instead of after a full kernel boundary; sg_pdl_wait() (every
// thread, before reading what an earlier kernel of the solve wrote and before any global write)
// returns once that kernel has completed and its writes are visible. A no-op for a kernel
// launched without the attribute (the first of a solve). sg_pdl_open() (P.open: the reduced
// levels of large solves, TP_OPEN_MIN) lets the next kernel's blocks be scheduled at once, so that
// the level-0 FINISH's blocks are resident and have their first tiles in flight before the reduced
// system is solved; that FINISH takes its items by ticket, as its blocks on the SMs the reduced
// levels hold start late. The streaming passes never open early (measured on an H100: it costs
// 1-3 % at 2^24 / 2^26, bench/tri/README.md).

// SOLVE (and FINISH when S.xr is set): one tile of one system per team.
template <class T, int Q, bool INTER>
__global__ void __launch_bounds__(TP_BLOCK_MAX) tp_solve_kernel(const tp_sys<T> S, const tp_plan P, const T tol, sg_dev_report *rep)
{
  extern __shared__ __align__(16) unsigned char tp_smem[];
  sg_pdl_wait();
  if (P.open) sg_pdl_open();
  const tp_map    mp(INTER, P);
  T *const        W  = reinterpret_cast<T *>(tp_smem) + mp.wofs;
  const int       ws = mp.ws, j = mp.j, team = P.team;
  const long long tb = blockIdx.x % P.ntiles, grp = blockIdx.x / P.ntiles;
  const long long t  = S.xr ? P.ntiles - 1 - tb : tb;  // FINISH: reverse order (L2 reuse)
  const long long s  = grp * P.spb + mp.sl;
  tp_dev_team     tm{rep, s, S.rscale, s < S.nbatch};
  const long long ts = t * P.tile, te = ts + P.tile < S.m ? ts + P.tile : S.m, g0 = ts + (long long)j * Q;

  unsigned char *const stage = tp_smem + (size_t)9 * blockDim.x * sizeof(T);
  const long long      o     = s * S.ss + g0;  // contiguous layout (rs = 1)
  long long            o0    = 0;
  bool                 co    = false;
  if constexpr (!INTER) co = tp_warp_contig<Q>(tm.active && g0 + Q <= te, o, S.dl, S.d, S.du, S.b, o0);

  T a[Q], b[Q], c[Q], r[Q];
  if (co || tm.active) {
    if (co) tp_warp_load<Q>(S, o0, stage, a, b, c, r);
    else tp_dev_load<Q, INTER>(S, s, g0, te, a, b, c, r);
    tp_fix_chunk<Q>(tm, S, s, t, ts, te, g0, a, b, c, r);
  } else {
#pragma unroll
    for (int i = 0; i < Q; i++) { a[i] = 0; b[i] = 1; c[i] = 0; r[i] = 0; }
  }
  tp_team_solve<Q>(tm, a, b, c, r, W, ws, j, team, ts, g0, tol, !INTER && team <= 32 && (blockDim.x & 31) == 0 ? 0xffffffffu : 0u);
  if (tm.active && g0 < te) tp_check_x<Q>(tm, r, g0, te);
  if constexpr (!INTER) co = tp_warp_contig<Q>(tm.active && g0 + Q <= te, o, S.x, S.x, S.x, S.x, o0);
  if (co) tp_warp_store<Q>(S.x, o0, stage, r);
  else if (tm.active && g0 < te) tp_dev_store<Q, INTER>(S, s, g0, te, r);
}

// STREAM: contiguous systems of one tile (team >= 32 chunks = the whole block), see
// stream_smem. Persistent blocks walk the systems s = blockIdx.x, += gridDim.x; the four
// arrays of a system arrive in shared memory by four tensor copies (the TMA engine, one
// mbarrier), and as soon as every thread holds its chunk in registers the next system's
// copies are issued, so they stream in while this system is reduced, its interface system
// solved and its x stored. (tp_solve_kernel loads while nothing else of its block can run:
// with 1-2 blocks per SM at m >= 2048 double the memory idles during the compute phases.)
// The copies use the 128-byte swizzle (16-byte piece p of 128-byte row w lands at p ^ (w % 8)):
// a thread reads its 64-byte chunk as 4 16-byte pieces, and without the swizzle 4 threads of
// every 8 would hit the same banks (4-way conflicts, measured ~8% slower at m = 4096).
// Shared memory: the 4 arrays (4*tile values, 1024-byte aligned for the swizzle), the team
// words (9 per thread), the x staging buffers, the mbarrier.
constexpr int TP_STREAM_MIN_TEAM = 64;  // m >= 512 double
// Which single tiles stream: tp_stream_min_teams (tri_partition.hpp) by the HBM's peak, with the A/B
// overrides SG_TRI_STREAM_MIN (double contiguous teams, at least 32: the kernel's block is one team),
// SG_TRI_STREAM_MIN_F (float, at least 32), SG_TRI_STREAM_ILV_MIN (double interleaved, at least 8),
// SG_TRI_STREAM_ILV_MIN_F (float interleaved, at least 4; 0: never) and SG_TRI_STREAM_MULTI=0 / 1
// (contiguous teams of < 32 chunks, several per warp: tp_stream_kernel MULTI).
static tp_stream_mins tp_stream_rule()
{
  static const int env[5] = {[] { const char *e = getenv("SG_TRI_STREAM_MIN"); return e ? std::max(32, atoi(e)) : -1; }(),
                             [] { const char *e = getenv("SG_TRI_STREAM_MIN_F"); return e ? std::max(32, atoi(e)) : -1; }(),
                             [] { const char *e = getenv("SG_TRI_STREAM_ILV_MIN"); return e ? std::max(8, atoi(e)) : -1; }(),
                             [] { const char *e = getenv("SG_TRI_STREAM_MULTI"); return e ? (e[0] == '1' ? 1 : 0) : -1; }(),
                             [] { const char *e = getenv("SG_TRI_STREAM_ILV_MIN_F"); return e ? (atoi(e) <= 0 ? 0 : std::max(4, atoi(e))) : -1; }()};
  tp_stream_mins r = tp_stream_min_teams(sg_cuda_hbm_peak());
  if (env[0] >= 0) r.contig = env[0];
  if (env[1] >= 0) r.flt = env[1];
  if (env[2] >= 0) r.ilv = env[2];
  if (env[3] >= 0) r.multi = env[3] == 1;
  if (env[4] >= 0) r.ilv_f = env[4];
  return r;
}
struct tp_maps {
  CUtensorMap m[4];  // dl, d, du, b as [system][row / R][R] with R = 128 bytes of rows
};
__device__ __forceinline__ void tp_tma_load_3d(void *dst, const CUtensorMap *map, int row, int s, unsigned long long *bar)
{
  asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(smem_u32(dst)),
               "l"((unsigned long long)map), "r"(0), "r"(row), "r"(s), "r"(smem_u32(bar))
               : "memory");
}
template <int Q, class T> __device__ __forceinline__ void tp_ld_swz(const T *arr, long long g0, T (&v)[Q])
{
  using V          = typename tp_vec<T>::type;
  constexpr int W  = 16 / sizeof(T);
  const char   *bp = reinterpret_cast<const char *>(arr);
#pragma unroll
  for (int k = 0; k < Q / W; k++) {
    const unsigned off = (unsigned)((g0 + k * W) * (long long)sizeof(T));
    tp_unpack(*reinterpret_cast<const V *>(bp + (off ^ (((off >> 7) & 7) << 4))), v + k * W);
  }
}
// DYN (FINISH of a large solve only, with O.tick): items after the first by ticket (below); a
// separate instantiation, so that the single-tile batches' SOLVE keeps its code. MULTI (SOLVE of
// single tiles of teams < 32 chunks): one warp of spb = 32 / team systems per item, the box holds
// spb systems; a separate instantiation too (the general one's indexing made the double SOLVE spill).
// MULTI's registers are capped at 170 (12 warps per SM): capped at 128 it spilled 48 bytes (double) and
// was slower, fp64 m = 64 0.1816-0.1828 ms against 0.1676-0.1688 (H200, bench/tri/README.md).
// The float instances are capped at 128 (2 blocks of 256 per SM): with a minimum of 1 block (da58e01)
// ptxas gave the SOLVE 150 registers and the FINISH 139 (1 block per SM, 128 before) and the H200's full
// run lost 4-30 % on every float stream shape (contiguous m = 4096 80.5 -> 56.9 % of copy, one system
// 2^26 46.0 -> 37.1 %; bench/tri/README.md, 2026-11-28 ninth session).
// tp_stream_kernel's shared memory: the 1024-byte alignment slack, the tile's 4 arrays, the team words, the x staging, the mbarrier
template <class T> size_t tp_stream_smem_bytes(long long tile, int spb, int nthr)
{
  return 1024 + (size_t)4 * tile * spb * sizeof(T) + (size_t)9 * nthr * sizeof(T) + (size_t)((nthr + 31) / 32) * tp_stage_bytes<T>() + 16;
}
template <class T, int Q, bool RED, bool DYN = false, bool MULTI = false, bool TAIL = false>
__global__ void __launch_bounds__(MULTI ? TP_BLOCK_CONTIG : sizeof(T) == 8 ? TP_BLOCK_MAX : TP_BLOCK,
                                  MULTI ? 12 : sizeof(T) == 8 ? 1 : 2) tp_stream_kernel(const tp_sys<T> S, const tp_plan P, const T tol, sg_dev_report *rep,
                                                                 const __grid_constant__ tp_maps M, const tp_out<T> O)
{
  extern __shared__ __align__(1024) unsigned char tp_smem[];
  constexpr int   R    = 128 / (int)sizeof(T);  // rows per 128-byte tensor row
  static_assert(!(MULTI && (RED || DYN)), "MULTI is a SOLVE of single tiles");
  static_assert(!(MULTI && TAIL), "MULTI: whole 128-byte rows");
  const int       team = P.team, spb = MULTI ? P.spb : 1, nthr = team * spb;
  const int       sl = MULTI ? (int)threadIdx.x / team : 0, j = MULTI ? (int)threadIdx.x % team : (int)threadIdx.x;
  const long long tile = P.tile, items = P.groups * P.ntiles;
  unsigned char  *base  = tp_smem + ((1024 - (smem_u32(tp_smem) & 1023)) & 1023);
  T *const        buf   = reinterpret_cast<T *>(base);  // [array][system of the group][tile]
  T *const        W     = buf + 4 * tile * spb;
  unsigned char  *stage = reinterpret_cast<unsigned char *>(W + 9 * nthr);
  auto *const     bar   = reinterpret_cast<unsigned long long *>(stage + (nthr + 31) / 32 * tp_stage_bytes<T>());
  long long *const nxs  = reinterpret_cast<long long *>(bar + 1);  // the next item (DYN)
  static_assert(!(RED && DYN), "tickets are for the FINISH");
  // item -> (group of spb systems, tile); FINISH walks the tiles of a system backwards (L2 reuse, as tp_solve_kernel)
  auto where = [&](long long it, long long &s, long long &t) {
    s = it / P.ntiles;
    t = it % P.ntiles;
    if (S.xr) t = P.ntiles - 1 - t;
  };
  auto issue = [&](long long it) {  // thread 0; a box is a whole tile (rows past m arrive as 0)
    long long s, t;
    where(it, s, t);
    mbar_expect(bar, 4u * (unsigned)(tile * spb * (long long)sizeof(T)));  // (systems past nbatch arrive as 0 too)
#pragma unroll
    for (int k = 0; k < 4; k++) tp_tma_load_3d(buf + k * tile * spb, &M.m[k], (int)(t * tile / R), (int)(s * spb), bar);
  };
  // The user's arrays are read by no earlier kernel's writes: the first tile of a FINISH comes
  // while the reduced levels are still being solved (programmatic launch)
  if (threadIdx.x == 0) {
    mbar_init(bar);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    if (S.user && blockIdx.x < items) issue(blockIdx.x);
  }
  sg_pdl_wait();
  if (threadIdx.x == 0 && !S.user && blockIdx.x < items) issue(blockIdx.x);
  if (RED && O.tick && blockIdx.x == 0 && threadIdx.x == 0) *O.tick = 0u;  // for this solve's FINISH
  __syncthreads();
  unsigned phase = 0;
  // A FINISH whose level before it opened early (P.open of that level: tp_cuda_ex) may find some
  // of its blocks started late (SMs still held by that level): after its first item, each block
  // takes the next by ticket, so a late block takes fewer instead of ending last
  for (long long it = blockIdx.x; it < items; phase ^= 1) {
    long long g, t;
    where(it, g, t);
    const long long s = g * spb + sl, ts = t * tile, te = ts + tile < S.m ? ts + tile : S.m, g0 = ts + (long long)j * Q;
    tp_dev_team     tm{rep, s, S.rscale, !MULTI || s < S.nbatch};
    T               a[Q], b[Q], c[Q], r[Q];
    mbar_wait(bar, phase);
    // a chunk lies in the map's whole 128-byte rows (R is a multiple of Q), or past them; !TAIL: m is a multiple of R
    if (tm.active && g0 < (TAIL ? S.m / R * R : te)) {
      const long long l = sl * tile + (g0 - ts), ta = tile * spb;
      tp_ld_swz<Q>(buf, l, a); tp_ld_swz<Q>(buf + ta, l, b); tp_ld_swz<Q>(buf + 2 * ta, l, c); tp_ld_swz<Q>(buf + 3 * ta, l, r);
    } else if (TAIL && tm.active && g0 < te) {  // the last m % R rows (m not a multiple of R: past the map) from global memory
      const long long ge = s * S.ss + g0;
#pragma unroll
      for (int i = 0; i < Q; i++)
        if (g0 + i < te) {
          a[i] = S.dl[ge + i]; b[i] = S.d[ge + i]; c[i] = S.du[ge + i]; r[i] = S.b[ge + i];
        } else { a[i] = 0; b[i] = 1; c[i] = 0; r[i] = 0; }
    } else {
#pragma unroll
      for (int i = 0; i < Q; i++) { a[i] = 0; b[i] = 1; c[i] = 0; r[i] = 0; }
    }
    __syncthreads();  // the buffer is free (generic reads done): fetch the next item now
    if (threadIdx.x == 0) {
      long long nx = it + gridDim.x;
      if constexpr (DYN) nx = (long long)gridDim.x + (long long)atomicAdd(O.tick, 1u);
      if (nx < items) {
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        issue(nx);
      }
      if constexpr (DYN) *nxs = nx;
    }
    if (tm.active && g0 < te) tp_fix_chunk<Q>(tm, S, s, t, ts, te, g0, a, b, c, r);
    if constexpr (RED) {
      tp_team_reduce<Q>(tm, a, b, c, r, g0 < te ? (TAIL && te - g0 < Q ? (int)(te - g0) : Q) : 0, W, 1, j, team, s, t, ts, te, g0, tol, 1, O);  // (TAIL: a tail chunk's rows)
    } else {
      // MULTI: the block is one warp of 32 / team teams (warp barriers, as tp_solve_kernel's)
      tp_team_solve<Q, !DYN, !MULTI>(tm, a, b, c, r, W + sl * 9 * team, 1, j, team, ts, g0, tol, MULTI ? 0xffffffffu : 0u);  // (DYN: a level-0 FINISH, after its REDUCE)
      if (tm.active && g0 < te) tp_check_x<Q>(tm, r, g0, te);
      long long  o0 = 0;
      const bool co = tp_warp_contig<Q>(tm.active && g0 + Q <= te, s * S.ss + g0, S.x, S.x, S.x, S.x, o0);
      if (co) tp_warp_store<Q>(S.x, o0, stage, r);
      else if (tm.active && g0 < te) tp_dev_store<Q, false>(S, s, g0, te, r);
    }
    if constexpr (DYN) {
      __syncthreads();  // thread 0's *nxs
      it = *nxs;
    } else it += gridDim.x;
  }
}

// STREAM, interleaved layout (single-tile systems, SOLVE): persistent blocks walk the groups
// of spb consecutive systems; a group's four arrays (rows x spb systems) arrive in shared memory
// by cp.async copies of PB bytes (16 when aligned: 2 double / 4 float systems of one row), all
// of them in flight at once, and the next group's copies are issued as soon as every thread
// holds its chunk, so they stream in while this group is solved and its x stored.
// (tp_solve_kernel with 512-thread blocks runs 1 block per SM, register-bound: its loads and its
// compute phases alternate and the memory idles during the latter.)
// Shared layout per array: chunk-major [j][i][sl] with one padding row per chunk
// (stride (Q+1)*spb), so that the spb x (32/spb) lanes of a warp reading row i of their chunks
// hit all banks evenly; a 16-byte piece (consecutive systems of one row) lands contiguously.
template <int PB> __device__ __forceinline__ void tp_cp_async(void *dst, const void *src, int srcbytes)
{
  if constexpr (PB == 16)
    asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16, %2;\n" ::"r"(smem_u32(dst)), "l"(src), "r"(srcbytes) : "memory");
  else asm volatile("cp.async.ca.shared.global.L2::128B [%0], [%1], %2, %3;\n" ::"r"(smem_u32(dst)), "l"(src), "n"(PB), "r"(srcbytes) : "memory");
}
// One piece (PB bytes of consecutive systems of one row, sb of them from src, the rest zero-filled) of all four arrays, array
// stride aw. (A 16-byte piece holding only the batch's last double goes as an 8-byte copy, tp_cp_async_piece<8>: a 16-byte
// copy of 8 source bytes still addresses the word past them, past the arrays' end on the last row of unpadded arrays.)
template <int PB, class T> __device__ __forceinline__ void tp_cp_async_piece(T *buf, int aw, int dst, const tp_sys<T> &S, long long src, int sb)
{
  tp_cp_async<PB>(buf + dst, S.dl + src, sb);
  tp_cp_async<PB>(buf + aw + dst, S.d + src, sb);
  tp_cp_async<PB>(buf + 2 * aw + dst, S.du + src, sb);
  tp_cp_async<PB>(buf + 3 * aw + dst, S.b + src, sb);
}
template <int Q> __host__ __device__ constexpr long long tp_ilv_words(const tp_plan &P) { return (long long)P.team * (Q + 1) * P.spb; }
// Words per array of a group in shared memory: chunk-major with a padding row per chunk for the cp.async copies,
// dense [rows][spb systems] for the tensor boxes (TMA); and the kernel's shared memory: the 4 arrays, the team words
// and, for TMA, the 128-byte alignment slack and the mbarrier
template <int Q> __host__ __device__ constexpr long long tp_ilv_aw(const tp_plan &P, bool tma) { return tma ? P.tile * P.spb : tp_ilv_words<Q>(P); }
// ODD (double, a row stride of an odd number of words, i.e. rows at 8 bytes past a 16-byte boundary every other row, in
// place of 8-byte copies; tp_cuda_ex::stream_ilv has the measurements): 16-byte copies from the 16-byte boundary at or
// below each row's first system; an odd row's copy starts one word early and ends one word late, so each pair of rows is
// [even row: spb words][1 pad][odd row: spb words][1 pad] (the odd row's copies land from its leading pad to its trailing
// pad, 16-byte aligned). A chunk's pitch: the next odd multiple of spb words at or above its Q / 2 pairs (a half-warp's
// chunks hit distinct banks, as the (Q + 1) * spb pitch)
template <int Q> __host__ __device__ constexpr long long tp_ilv_odd_pitch(int spb)
{
  const long long base = (long long)Q * spb + Q, k = (base + spb - 1) / spb;
  return (k | 1) * spb;
}
template <class T, int Q> size_t tp_ilv_odd_smem_bytes(const tp_plan &P)
{
  return (size_t)(4 * P.team * tp_ilv_odd_pitch<Q>(P.spb) + 9LL * P.team * P.spb) * sizeof(T);
}
template <class T, int Q> size_t tp_ilv_smem_bytes(const tp_plan &P, bool tma)
{
  return (tma ? 128 + 8 : 0) + (size_t)(4 * tp_ilv_aw<Q>(P, tma) + 9LL * P.team * P.spb) * sizeof(T);
}
// TMA (plans of 128- or 256-byte rows of systems and single tiles of <= 256 rows: fp64 m = 129-256 regrouped, m <= 128;
// float m <= 256; on the H200 class also 64- and 32-byte rows and tiles of 512 and 1024 rows: fp64 / float m = 257-1024):
// thread 0 brings a group's four arrays as one 2D tensor box each per 256 rows ([rows][spb systems], unpadded: a warp's
// chunks read two 128-byte rows or one 256-byte row, conflict-free; 64 / 32-byte rows: in the XOR order, below) in
// place of every thread's 16-byte cp.async copies (8192 per group at m = 256); the same overlap. Measured on the H200,
// same lease, two rounds, ms per 2^24 unknowns: fp64 interleaved m = 128 0.1741-0.1744 -> 0.1688-0.1703, m = 256
// 0.1881-0.1882 -> 0.1731-0.1739 (83.4 -> 90.6-91.0 % of copy; bench/tri/README.md, ninth session).
__device__ __forceinline__ void tp_tma_load_2d(void *dst, const CUtensorMap *map, int x, int y, unsigned long long *bar)
{
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(smem_u32(dst)),
               "l"((unsigned long long)map), "r"(x), "r"(y), "r"(smem_u32(bar))
               : "memory");
}
// XOR (the wide tensor boxes, rows of 32 / 64 bytes): the dense [rows][spb] layout puts row i of every chunk of a warp
// in the same banks (a chunk is Q rows: a multiple of 128 bytes). Each thread reads its rows in the order i ^ x, x = its
// chunk index mod 4 (32-byte rows) / 2 (64-byte rows), so that a warp's chunks hit different 32 / 64-byte bank windows
// (conflict-free), and tp_xor_perm puts them back in order in registers (selects, after the buffer is released).
// XM = the mask of x: 3 (32-byte rows), 1 (64-byte rows); a template constant (a runtime mask spilled: 120 bytes, fp64).
// H200 (SG_TRI_ILV_XOR=0 / 1, same lease, two rounds, ms per 2^24 unknowns): interleaved m = 1024 fp64 0.2843-0.2853 ->
// 0.2450-0.2470, float 0.1392-0.1402 -> 0.1215-0.1228; m = 512 fp64 0.2076-0.2088 -> 0.1998-0.2008, float 0.1101-0.1109
// -> 0.1070-0.1075. ncu, fp64 m = 1024: shared-load bank conflicts 12.6 M -> 0.01 M (wavefronts 23.8 M -> 11.2 M),
// instructions +8 % (bench/tri/README.md, eleventh session)
template <int XM, int Q, class T> __device__ __forceinline__ void tp_xor_perm(int x, T (&a)[Q], T (&b)[Q], T (&c)[Q], T (&r)[Q])
{
#pragma unroll
  for (int bit = 1; bit <= 2; bit <<= 1)
    if (XM & bit) {
      const bool sw = (x & bit) != 0;
#pragma unroll
      for (int i = 0; i < Q; i++)
        if (!(i & bit)) {
          T t;
          t = a[i]; a[i] = sw ? a[i | bit] : a[i]; a[i | bit] = sw ? t : a[i | bit];
          t = b[i]; b[i] = sw ? b[i | bit] : b[i]; b[i | bit] = sw ? t : b[i | bit];
          t = c[i]; c[i] = sw ? c[i | bit] : c[i]; c[i | bit] = sw ? t : c[i | bit];
          t = r[i]; r[i] = sw ? r[i | bit] : r[i]; r[i | bit] = sw ? t : r[i | bit];
        }
    }
}
// RING (tensor boxes; double tiles of 512 rows, i.e. fp64 interleaved m = 257-512 on 32- / 64-byte rows): the staging buffer
// is a ring of NS slots of TP_RING_ROWS rows of the group (all four arrays), NS > the SG slices of a group (as many as the shared memory
// holds, at most two groups'): when a group's slices have been read, lanes 0..SG-1 of warp 0 refill their slots with the
// next slices, one each, so NS - SG slices of the next group are in flight while a group is read into registers (with one
// buffer no copy is in flight from a group's arrival to its release). Each thread waits only for the slice of its chunk.
// The geometry is fixed at compile time (tp_ring_geo): computed at run time, with thread 0 issuing every slice from a state
// in shared memory, the same ring took 11 % longer than the single buffer at fp64 m = 300 (H200).
constexpr int TP_RING_ROWS = 128;
constexpr int TP_RING_TILE = 4 * TP_RING_ROWS;  // the ring's tile: 4 slices
constexpr long long TP_RING_OPTIN = 227 * 1024;  // the shared memory a ring instance is laid out for (sm_90's opt-in)
// A ring instance's geometry, fixed at compile time (rows of 64 / 32 bytes for XOR mask 1 / 3; tiles of TP_RING_TILE rows,
// slots of TP_RING_ROWS rows), so that it takes no register: systems per block, team, threads, array stride and slot words,
// slices per group, slots (as many as fit, at most two groups'), the dynamic shared memory (host and device)
template <class T, int Q, int XM> struct tp_ring_geo {
  static constexpr int       rr = TP_RING_ROWS, spb = (XM == 1 ? 64 : 32) / (int)sizeof(T), team = TP_RING_TILE / Q, nthr = team * spb;
  static constexpr int       as = rr * spb, sw = 4 * as, sg = TP_RING_TILE / rr;
  static constexpr long long fit = (TP_RING_OPTIN - 128 - 9LL * nthr * (long long)sizeof(T)) / ((long long)sw * (long long)sizeof(T) + 8);
  static constexpr int       ns = (int)(fit > 2 * sg ? 2 * sg : fit);
  static constexpr size_t    smem = 128 + (size_t)ns * (sw * sizeof(T) + 8) + 9 * (size_t)nthr * sizeof(T);
  static_assert(nthr <= 512 && ns > sg, "a ring instance: one block of <= 512 threads, more slots than a group's slices");
};
template <class T, int Q, int PB, bool TMA = false, int XM = 0, bool RING = false, bool ODD = false>
__global__ void __launch_bounds__(TP_BLOCK_MAX) tp_stream_ilv_kernel(const tp_sys<T> S, const tp_plan P, const T tol, sg_dev_report *rep,
                                                                     const __grid_constant__ tp_maps M)
{
  static_assert(!RING || (TMA && XM != 0), "RING: the tensor-box instances of the XOR order");
  static_assert(!ODD || (!TMA && PB == 16 && sizeof(T) == 8 && XM == 0), "ODD: the 16-byte cp.async copies of double rows");
  extern __shared__ __align__(128) unsigned char tp_smem[];
  sg_pdl_wait();
  constexpr int   E    = PB / (int)sizeof(T);  // systems per piece
  using G = tp_ring_geo<T, Q, XM == 3 ? 3 : 1>;  // (RING only)
  const int       spb  = RING ? G::spb : P.spb, team = RING ? G::team : P.team, nthr = RING ? G::nthr : (int)blockDim.x;
  const int       sl   = (int)threadIdx.x % spb, j = (int)threadIdx.x / spb;
  const int       cpo  = ODD ? (int)tp_ilv_odd_pitch<Q>(spb) : 0;  // (ODD: the chunk pitch)
  const int       aw   = ODD ? team * cpo : (int)tp_ilv_aw<Q>(P, TMA);
  T *const        buf  = reinterpret_cast<T *>(TMA ? tp_smem + ((128u - (smem_u32(tp_smem) & 127u)) & 127u) : tp_smem);
  // RING: slots of sw words (4 arrays of G::rr rows: array stride as), NS of them, then the team words and NS barriers
  const int       as   = RING ? G::as : aw, sw = 4 * as;
  constexpr int   SG   = RING ? G::sg : 1, NS = RING ? G::ns : 1;
  T *const        W    = buf + (RING ? NS * sw : 4 * aw) + sl;
  auto *const     sbar = reinterpret_cast<unsigned long long *>(buf + (RING ? NS * sw : 4 * aw) + 9 * nthr);  // TMA: the group's copies (after the team words)
  const int       pr   = ODD ? spb / 2 + 1 : spb / E;  // pieces per row (ODD: an even row takes spb / 2 of them)
  const int       np   = (int)S.m * pr;  // pieces per array of a group (one tile: rows [0, m))
  auto issue = [&](long long g) {  // every thread: its pieces of group g (TMA: thread 0, the four boxes)
    if constexpr (TMA) {
      if (threadIdx.x == 0) {
        mbar_expect(sbar, 4u * (unsigned)(aw * (int)sizeof(T)));  // (rows past m, systems past nbatch arrive as 0)
        // boxes of <= 256 rows (the tensor copy's limit), stacked: tiles of 512 / 1024 rows take two / four per array
        const int br = P.tile < 256 ? (int)P.tile : 256;
#pragma unroll 1
        for (int y = 0; y < (int)P.tile; y += br)
#pragma unroll
          for (int k = 0; k < 4; k++) tp_tma_load_2d(buf + k * aw + (long long)y * spb, &M.m[k], (int)(g * spb), y, sbar);
      }
    } else if constexpr (ODD) {
      const long long s0 = g * spb;
#pragma unroll 1
      for (int p = (int)threadIdx.x; p < np; p += nthr) {
        const int row = p / pr, pc = p - row * pr, od = row & 1;
        if (!od && pc == pr - 1) continue;
        // (an odd row's first copy starts at system s0 - 1: the word before the row's first system, in the arrays for row >= 1)
        const long long sy = s0 - od + 2 * pc, nv = S.nbatch - sy;
        const int       dst = (row / Q) * cpo + ((row % Q) >> 1) * (2 * spb + 2) + od * spb + 2 * pc;
        const long long src = nv > 0 ? sy + row * S.rs : 0;
        if (nv == 1) tp_cp_async_piece<8>(buf, aw, dst, S, src, 8);  // (the batch's last system alone)
        else tp_cp_async_piece<16>(buf, aw, dst, S, src, nv <= 0 ? 0 : 16);
      }
      asm volatile("cp.async.commit_group;\n" ::: "memory");
    } else {
      const long long s0 = g * spb;
#pragma unroll 1
      for (int p = (int)threadIdx.x; p < np; p += nthr) {
        const int       row = p / pr, pc = p - row * pr;
        const long long sy  = s0 + pc * E, nv = S.nbatch - sy;
        const int       sb  = nv <= 0 ? 0 : nv >= E ? PB : (int)nv * (int)sizeof(T);
        const int       dst = (row / Q) * (Q + 1) * spb + (row % Q) * spb + pc * E;
        const long long src = sb ? sy + row * S.rs : 0;
        if (PB == 16 && sizeof(T) == 8 && nv == 1) tp_cp_async_piece<8>(buf, aw, dst, S, src, 8);  // (the batch's last system alone)
        else tp_cp_async_piece<PB>(buf, aw, dst, S, src, sb);
      }
      asm volatile("cp.async.commit_group;\n" ::: "memory");
    }
  };
  const long long groups = P.groups;
  // RING: the block's slices in order, q = it * SG + (slice of group it), slice q in slot q mod NS, its barrier's phase parity
  // floor(q / NS) & 1 (SG, NS compile-time: no division). Lane l < n of warp 0 issues slice q0 + l (its group's, if it exists),
  // so a refill takes no state and no loop
  auto ring_fill = [&](int q0, int n) {
    const int l = (int)threadIdx.x;
    if (l < n) {
      const int       q = q0 + l, slot = q % NS;
      const long long g = blockIdx.x + (long long)(q / SG) * gridDim.x;
      if (g < groups) {
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        unsigned long long *const bar = sbar + slot;
        mbar_expect(bar, 4u * (unsigned)(as * (int)sizeof(T)));
#pragma unroll
        for (int k = 0; k < 4; k++) tp_tma_load_2d(buf + slot * sw + k * as, &M.m[k], (int)(g * spb), (q % SG) * G::rr, bar);
      }
    }
  };
  if constexpr (TMA) {
    if (threadIdx.x == 0) {
      if constexpr (RING)
        for (int k = 0; k < NS; k++) mbar_init(sbar + k);
      else mbar_init(sbar);
      asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    // (warp 0 converges before thread 0's first arrive: racecheck attributed the init to lane 31 and reported a
    // warp-level RAW hazard against that arrive at fp64 interleaved m = 128 with 9 systems; H200, tenth session)
    __syncwarp();
  }
  if constexpr (RING) {
    ring_fill(0, NS);  // (after the __syncwarp above: thread 0's barrier init before lanes 1.. arm them)
  } else if (blockIdx.x < groups) issue(blockIdx.x);
  if constexpr (TMA) __syncthreads();  // (the barrier's init before any thread waits on it)
  unsigned phase = 0;
  int      it    = 0;  // RING: this block's group count
  for (long long g = blockIdx.x; g < groups; g += gridDim.x, phase ^= 1, it++) {
    const long long s  = g * spb + sl, g0 = (long long)j * Q, te = S.m;
    tp_dev_team     tm{rep, s, S.rscale, s < S.nbatch};
    T               a[Q], b[Q], c[Q], r[Q];
    int             o;
    if constexpr (RING) {  // the slice of this thread's chunk
      const unsigned q = (unsigned)(it * SG + (j * Q) / G::rr), slot = q % (unsigned)NS;
      mbar_wait(sbar + slot, (q / (unsigned)NS) & 1u);
      o = (int)slot * sw + ((j * Q) % G::rr) * spb + sl;
    } else {
      if constexpr (TMA) mbar_wait(sbar, phase);
      else {
        asm volatile("cp.async.wait_all;\n" ::: "memory");
        __syncthreads();
      }
      o = TMA ? j * Q * spb + sl : ODD ? j * cpo + sl : j * (Q + 1) * spb + sl;
    }
    const int x = j & XM;
    // (two loops, not one with ri = i ^ x for XM = 0 too: that one changed the machine code of the 4 plain instances,
    // whose times the benches hold)
    if constexpr (RING) {  // (XM + 1 base offsets, one per i & XM, each row at a constant offset from its base: no spill)
      int bk[XM + 1];
#pragma unroll
      for (int k = 0; k <= XM; k++) bk[k] = o + ((k ^ x) - k) * spb;
#pragma unroll
      for (int i = 0; i < Q; i++) {
        const int ri = i ^ x, e = bk[i & XM] + i * spb;
        if (tm.active && g0 + ri < te) {
          a[i] = buf[e]; b[i] = buf[as + e]; c[i] = buf[2 * as + e]; r[i] = buf[3 * as + e];
        } else { a[i] = 0; b[i] = 1; c[i] = 0; r[i] = 0; }
      }
    } else if constexpr (XM != 0) {
#pragma unroll
      for (int i = 0; i < Q; i++) {
        const int ri = i ^ x, e = o + ri * spb;
        if (tm.active && g0 + ri < te) {
          a[i] = buf[e]; b[i] = buf[as + e]; c[i] = buf[2 * as + e]; r[i] = buf[3 * as + e];
        } else { a[i] = 0; b[i] = 1; c[i] = 0; r[i] = 0; }
      }
    } else if constexpr (ODD) {  // row i of the chunk: pair i / 2, the odd row 1 + spb words in
#pragma unroll
      for (int i = 0; i < Q; i++) {
        const int e = o + (i >> 1) * (2 * spb + 2) + (i & 1) * (spb + 1);
        if (tm.active && g0 + i < te) {
          a[i] = buf[e]; b[i] = buf[aw + e]; c[i] = buf[2 * aw + e]; r[i] = buf[3 * aw + e];
        } else { a[i] = 0; b[i] = 1; c[i] = 0; r[i] = 0; }
      }
    } else {
#pragma unroll
      for (int i = 0; i < Q; i++) {
        if (tm.active && g0 + i < te) {
          a[i] = buf[o + i * spb]; b[i] = buf[aw + o + i * spb]; c[i] = buf[2 * aw + o + i * spb]; r[i] = buf[3 * aw + o + i * spb];
        } else { a[i] = 0; b[i] = 1; c[i] = 0; r[i] = 0; }
      }
    }
    __syncthreads();  // the buffer is free: fetch the next group now
    if constexpr (RING) ring_fill(it * SG + NS, SG);  // (the slots of this group's slices are free)
    else if (g + gridDim.x < groups) {
      if constexpr (TMA)
        if (threadIdx.x == 0) asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
      issue(g + gridDim.x);
    }
    if constexpr (XM != 0) tp_xor_perm<XM, Q>(x, a, b, c, r);
    if (tm.active) tp_fix_chunk<Q>(tm, S, s, 0, 0, te, g0, a, b, c, r);
    tp_team_solve<Q, true, !(TMA && XM == 0 && sizeof(T) == 4)>(tm, a, b, c, r, W, spb, j, team, 0, g0, tol, 0u);  // (UNIT: see tp_team_solve)
    if (tm.active && g0 < te) {
      tp_check_x<Q>(tm, r, g0, te);
      if constexpr (TMA) tp_ilv_store<Q>(S.x + (s * S.ss + g0 * S.rs), S.rs, g0, te, r, [](T *p, T v) { *p = v; });
      else tp_dev_store<Q, true>(S, s, g0, te, r);
    }
  }
}

// REDUCE: one tile of one system per team -> the tile's (<= 2) interface equations.
template <class T, int Q, bool INTER>
__global__ void __launch_bounds__(TP_BLOCK_MAX) tp_reduce_kernel(const tp_sys<T> S, const tp_plan P, const T tol, const tp_out<T> O,
                                                                 sg_dev_report *rep)
{
  extern __shared__ __align__(16) unsigned char tp_smem[];
  sg_pdl_wait();
  if (P.open) sg_pdl_open();
  const tp_map    mp(INTER, P);
  T *const        W  = reinterpret_cast<T *>(tp_smem) + mp.wofs;
  const int       ws = mp.ws, j = mp.j, team = P.team;
  const long long t = blockIdx.x % P.ntiles, grp = blockIdx.x / P.ntiles;
  const long long s = grp * P.spb + mp.sl;
  tp_dev_team     tm{rep, s, S.rscale, s < S.nbatch};
  const long long ts = t * P.tile, te = ts + P.tile < S.m ? ts + P.tile : S.m, g0 = ts + (long long)j * Q, left = te - g0;
  const int       nrow = !tm.active || left <= 0 ? 0 : left >= Q ? Q : (int)left;

  unsigned char *const stage = tp_smem + (size_t)9 * blockDim.x * sizeof(T);
  long long            o0    = 0;
  bool                 co    = false;
  if constexpr (!INTER) co = tp_warp_contig<Q>(nrow == Q, s * S.ss + g0, S.dl, S.d, S.du, S.b, o0);

  T a[Q], b[Q], c[Q], r[Q];
  if (co || nrow) {
    if (co) tp_warp_load<Q>(S, o0, stage, a, b, c, r);
    else tp_dev_load<Q, INTER>(S, s, g0, te, a, b, c, r);
    tp_fix_chunk<Q>(tm, S, s, t, ts, te, g0, a, b, c, r);
  } else {
#pragma unroll
    for (int i = 0; i < Q; i++) { a[i] = 0; b[i] = 1; c[i] = 0; r[i] = 0; }
  }
  tp_team_reduce<Q>(tm, a, b, c, r, nrow, W, ws, j, team, s, t, ts, te, g0, tol, INTER ? P.spb : 1, O);
}

// FUSED (interleaved batches, tp_fuse_plan): the REDUCE of every tile, the reduced solve of
// every group and the FINISH of every tile in one persistent kernel. The reason is the L2: a
// group's rows are runs of 128 bytes (16 double / 32 float systems) at a stride of nbatch words,
// so a block holds only a tile (128 rows) of its group, not the whole system, and two passes
// over the user's arrays would move 9 words per unknown. Here a group's FINISH items follow its
// REDUCE items by a lag of about 1.5 rounds of the grid, so the FINISH finds most of its tile
// still in L2 (REDUCE loads carry an evict_last policy, FINISH loads and the x stores
// evict_first).
// Measured on an H100 (fp64, 4096 systems of m = 4096, ncu, 64-byte rows): DRAM reads 673 MB
// for 537 MB of input (75 % of the FINISH's re-reads hit L2), writes 128 MB (x); DRAM throughput
// 45 % and issue 48 %: latency-bound at 2 blocks of 256 per SM (registers), each item a load, a
// dependent chain (chunk reduce, merge tree or PCR) and barriers. Wider rows help (fewer, longer
// DRAM runs): fp64 m = 2048 / 4096 at 128-byte rows 55.2 / 55.3 % of copy against 42.6 / 40.3
// before and 48.8 / 49.7 at 64 bytes. Lag 100 / 200 / 300 % of the grid: 52.1 / 51.7 / 49.2 %,
// no L2 policies 48.6 %; the next item's tile staged in shared memory by cp.async during this
// item's compute (64-byte rows, 2 x 92 KB per SM): 46 % against 49 %. The same staging by four
// tensor copies per item (STG, 128-byte rows, 2 x 100 KB per SM) gains: m = 2048 / 4096 fp64
// 55.1 / 55.3 -> 61.0-61.2 / 60.3-60.7 %, float 41.9-42.1 / 42.4-42.5 -> 47.2-47.7 / 47.5-48.1
// (same lease; lag 100 / 200 / 300 %: fp64 58-60 / 53-54 / 51-52, float 45 / 47 / 47; no L2
// policies fp64 50 %). ncu at m = 4096 fp64: DRAM 59 % of peak (1.99 TB/s), 35 % L2 hits,
// 8.5 cycles between a warp's instructions at 16 warps per SM: still latency-bound.
// Items (tickets, tp_fuse_item): REDUCE items in group-major order, the first F.lag of them
// alone, then REDUCE and FINISH items alternately, then the last FINISH items. Every REDUCE item
// a FINISH item depends on (the tiles of its group) has a smaller ticket (lag >= ntiles), and a
// REDUCE item never waits, so the kernel cannot deadlock whatever the number of resident blocks.
// The last REDUCE item of a group to arrive (counter F.cnt) solves the group's reduced system
// with the block's first teamr x spb threads (the same team as the host twin's single-tile SOLVE
// of that level; named barrier 1, or warp barriers below 32 threads) and releases F.ready; a
// FINISH item loads its tile first and waits for the flag (every thread, with acquire loads)
// only before it folds the reduced solution in.
struct tp_fuse {
  unsigned *tick, *cnt, *ready;  // zeroed before the launch
  long long nitem;               // REDUCE items = FINISH items = groups * ntiles
  long long lag;                 // REDUCE items before the first FINISH item (>= ntiles)
  int       teamr;               // chunks of the reduced system's team
  int       pol;                 // L2 policies (REDUCE loads evict_last, FINISH evict_first); 0: none
};
__device__ __forceinline__ void tp_fuse_item(const tp_fuse &F, long long u, bool &fin, long long &i)
{
  const long long D = F.lag, alt = 2 * (F.nitem - D);
  if (u < D) { fin = false; i = u; return; }
  const long long v = u - D;
  if (v < alt) { fin = (v & 1) != 0; i = fin ? v >> 1 : D + (v >> 1); }
  else { fin = true; i = F.nitem - D + (v - alt); }
}
__device__ __forceinline__ void tp_st_pol(double *p, double v, unsigned long long pol)
{
  asm volatile("st.global.L2::cache_hint.f64 [%0], %1, %2;" ::"l"(p), "d"(v), "l"(pol) : "memory");
}
__device__ __forceinline__ void tp_st_pol(float *p, float v, unsigned long long pol)
{
  asm volatile("st.global.L2::cache_hint.f32 [%0], %1, %2;" ::"l"(p), "f"(v), "l"(pol) : "memory");
}
__device__ __forceinline__ unsigned tp_ld_acquire(const unsigned *p)
{
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
// STG: the tiles come by tensor copies (TMA, 2D maps of the interleaved arrays, a box = one tile
// of the group's spb systems) into a shared staging buffer, and the next item's copies are issued
// as soon as every thread holds this item's tile in registers, so they are in flight during this
// item's chains and barriers (without it a block's loads wait at the start of every item).
__device__ __forceinline__ void tp_tma_load_2d_pol(void *dst, const CUtensorMap *map, int x, int y, unsigned long long *bar, unsigned long long pol)
{
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(
                 smem_u32(dst)),
               "l"((unsigned long long)map), "r"(x), "r"(y), "r"(smem_u32(bar)), "l"(pol)
               : "memory");
}
template <class T, int Q, bool STG>
__global__ void __launch_bounds__(TP_BLOCK, 2) tp_fused_ilv_kernel(const tp_sys<T> S, const tp_sys<T> R, const tp_plan P, const T tol, const tp_out<T> O,
                                                                     const tp_fuse F, sg_dev_report *rep, const __grid_constant__ tp_maps M)
{
  extern __shared__ __align__(128) unsigned char tp_smem[];
  __shared__ unsigned long long nxt[2];
  __shared__ int                last;
  __shared__ unsigned long long sbar;  // STG: the staging buffer's copies
  __shared__ int                nco[3];  // STG, thread 0: the next item's copy (x, y, FINISH): kept out of registers
  sg_pdl_wait();
  // STG: the plan's default shape only (128 bytes of systems x TP_BLOCK / spb chunks), compile-time
  constexpr int   SPB = 128 / (int)sizeof(T);
  constexpr bool  COLD = sizeof(T) == 4;  // the failure report out of line (tp_dev_team_t)
  const int       spb = STG ? SPB : P.spb, team = STG ? TP_BLOCK / SPB : P.team, tid = (int)threadIdx.x, sl = tid % spb, j = tid / spb;
  // STG: staging [4 arrays][tile rows][spb systems] first (128-byte aligned for the copy engine)
  unsigned char *const base = STG ? tp_smem + ((128u - (smem_u32(tp_smem) & 127u)) & 127u) : tp_smem;
  T *const        stg = reinterpret_cast<T *>(base);
  constexpr int   aw  = STG ? TP_BLOCK * Q : 0;  // words per staged array (tile * spb)
  T *const        W   = stg + 4 * aw + sl;
  T *const        Wr  = stg + 4 * aw + (size_t)9 * blockDim.x + sl;  // the reduced solve's team words
  const long long items = 2 * F.nitem;
  const unsigned long long keep = tp_policy(F.pol ? 1 : 0), drop = tp_policy(F.pol ? 2 : 0);
  tp_sys<T> S0 = S;  // REDUCE: no reduced solution to fold in
  S0.xr        = nullptr;
  tp_sys<T> Sx = S;  // FINISH: its tile's input was checked for Inf/NaN by the tile's REDUCE item
  Sx.xr = R.x; Sx.xss = R.ss; Sx.xrs = R.rs;
  Sx.checked = true;
  // (thread 0) the copy coordinates of item u: x = first system, y = first row, f = FINISH; the
  // copies are issued later (issue), so that no division runs while the tile is in registers
  auto where = [&](long long u) {
    bool      f;
    long long iu;
    tp_fuse_item(F, u, f, iu);
    const long long gu = iu / P.ntiles;
    nco[0] = (int)(gu * spb);
    nco[1] = (int)((iu - gu * P.ntiles) * P.tile);
    nco[2] = f;
  };
  auto issue = [&]() {  // rows past m, systems past nbatch arrive as 0
    const unsigned long long pol = nco[2] ? drop : keep;
    mbar_expect(&sbar, 4u * (unsigned)(aw * sizeof(T)));
#pragma unroll
    for (int k = 0; k < 4; k++) tp_tma_load_2d_pol(stg + k * aw, &M.m[k], nco[0], nco[1], &sbar, pol);
  };
  if (tid == 0) {
    nxt[0] = atomicAdd(F.tick, 1u);
    if constexpr (STG) {
      mbar_init(&sbar);
      asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
      if ((long long)nxt[0] < items) {
        where((long long)nxt[0]);
        issue();
      }
    }
  }
  __syncthreads();
  for (int ph = 0;; ph ^= 1) {  // (STG: ph is also the parity of sbar's phase, one per item)
    const long long u = (long long)nxt[ph];
    if (u >= items) break;
    if (tid == 0) {
      nxt[ph ^ 1] = atomicAdd(F.tick, 1u);  // read after this item's last barrier
      if constexpr (STG)
        if ((long long)nxt[ph ^ 1] < items) where((long long)nxt[ph ^ 1]);
    }
    bool      fin;
    long long i;
    tp_fuse_item(F, u, fin, i);
    const long long grp = i / P.ntiles, t = i - grp * P.ntiles, s = grp * spb + sl;
    tp_dev_team_t<COLD> tm{rep, s, S.rscale, s < S.nbatch};
    const long long ts = t * P.tile, te = ts + P.tile < S.m ? ts + P.tile : S.m, g0 = ts + (long long)j * Q, left = te - g0;
    const int       nrow = !tm.active || left <= 0 ? 0 : left >= Q ? Q : (int)left;
    // the tile: REDUCE loads rows < te of active chunks (as tp_reduce_kernel), FINISH every chunk
    // of an active system (as tp_solve_kernel; rows >= te are the identity either way)
    T a[Q], b[Q], c[Q], r[Q];
    if constexpr (STG) {
      mbar_wait(&sbar, (unsigned)ph);
      const T *sp = stg + (g0 - ts) * spb + sl;
      const bool use = fin ? tm.active : nrow > 0;
#pragma unroll
      for (int k = 0; k < Q; k++) {
        if (use && g0 + k < te) { a[k] = sp[k * spb]; b[k] = sp[aw + k * spb]; c[k] = sp[2 * aw + k * spb]; r[k] = sp[3 * aw + k * spb]; }
        else { a[k] = 0; b[k] = 1; c[k] = 0; r[k] = 0; }
      }
      __syncthreads();  // the staging buffer is free (generic reads done): the next item's copies now
      if (tid == 0 && (long long)nxt[ph ^ 1] < items) {
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        issue();
      }
    } else if (fin ? tm.active : nrow > 0) tp_dev_load<Q, true, true>(S, s, g0, te, a, b, c, r, fin ? drop : keep);
    else {
#pragma unroll
      for (int k = 0; k < Q; k++) { a[k] = 0; b[k] = 1; c[k] = 0; r[k] = 0; }
    }
    if (!fin) {  // REDUCE (as tp_reduce_kernel), then the group's arrival
      if (nrow) tp_fix_chunk<Q>(tm, S0, s, t, ts, te, g0, a, b, c, r);
      tp_team_reduce<Q>(tm, a, b, c, r, nrow, W, spb, j, team, s, t, ts, te, g0, tol, spb, O);
      // the arrival: the block barrier orders the tile's equations (written by the j == 0 threads)
      // before thread 0's acq_rel atomic, whose release is cumulative; its acquire orders the
      // group's other equations before the reduced solve's loads (and the barrier after it, for
      // the other threads)
      __syncthreads();
      if (tid == 0) {
        unsigned old;
        asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(F.cnt + grp) : "memory");
        last = old == (unsigned)(P.ntiles - 1);
      }
      __syncthreads();
      const int tr = F.teamr, nl = tr * spb, np = nl < 32 ? 32 : nl;  // the reduced team's lanes; its warps
      if (last && tid < np) {  // the group's reduced system: the first tr x spb threads
        const int       jr = tid / spb;
        const unsigned  wm = nl >= 32 ? 0u : (1u << nl) - 1u;
        const long long g0r = (long long)jr * Q;
        tp_dev_team_t<COLD> tmr{rep, s, R.rscale, jr < tr && s < R.nbatch};
        if (tmr.active) {
          const long long o = s * R.ss + g0r * R.rs;
#pragma unroll
          for (int k = 0; k < Q; k++) {
            if (g0r + k < R.m) {
              const long long q = o + k * R.rs;
              a[k] = __ldcg(R.dl + q); b[k] = __ldcg(R.d + q); c[k] = __ldcg(R.du + q); r[k] = __ldcg(R.b + q);
            } else { a[k] = 0; b[k] = 1; c[k] = 0; r[k] = 0; }
          }
          tp_fix_chunk<Q>(tmr, R, s, 0, 0, R.m, g0r, a, b, c, r);
        } else {
#pragma unroll
          for (int k = 0; k < Q; k++) { a[k] = 0; b[k] = 1; c[k] = 0; r[k] = 0; }
        }
        if (jr < tr) tp_team_solve<Q>(tmr, a, b, c, r, Wr, spb, jr, tr, 0, g0r, tol, wm, nl >= 32 ? nl : 0);
        if (tmr.active && g0r < R.m) {
          tp_check_x<Q>(tmr, r, g0r, R.m);
          tp_dev_store<Q, true>(R, s, g0r, R.m, r);
        }
        if (nl > 32) asm volatile("bar.sync 1, %0;" ::"r"(nl) : "memory");
        else __syncwarp();
        // the reduced solution (written by the team) before the flag: the barrier, then a release
        // (cumulative) by thread 0
        if (tid == 0) asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(F.ready + grp), "r"(1u) : "memory");
      }
    } else {  // FINISH (as tp_solve_kernel with S.xr): the flag before the reduced solution is read
      while (tp_ld_acquire(F.ready + grp) == 0u) __nanosleep(256);
      if (tm.active) tp_fix_chunk<Q>(tm, Sx, s, t, ts, te, g0, a, b, c, r);
      tp_team_solve<Q, false>(tm, a, b, c, r, W, spb, j, team, ts, g0, tol, 0u);  // (its REDUCE checked the chunk pivots)
      if (tm.active && g0 < te) {
        tp_check_x<Q>(tm, r, g0, te);
        tp_ilv_store<Q>(S.x + (s * S.ss + g0 * S.rs), S.rs, g0, te, r, [drop](T *p, T v) { tp_st_pol(p, v, drop); });
      }
    }
    __syncthreads();  // nxt[ph ^ 1]; the team words
  }
}

// x[0] -= dl[0]*xp, x[n-1] -= du[n-1]*xn (sg_tri_block_solve with a non-TPCR algorithm)
template <class T> __global__ void tp_fold_kernel(T *x, const T *dl, const T *du, long long n, T xp, T xn)
{
  x[0] -= dl[0] * xp;
  x[n - 1] -= du[n - 1] * xn;
}

// ---------------------------------------------------------------- executor
// Solves of at least this many unknowns let their reduced levels open early and take the FINISH
// items by ticket (tp_cuda_ex::pdl_mode 2). Measured on an H100, one system, % of copy: fp64 2^24 /
// 2^25 / 2^26 51.7 / 52.8 / 53.4 -> 52.5 / 54.1 / 55.5, fp32 49.0-49.2 / 51.5-51.6 / 52.9-53.0 -> 49.6 /
// 52.7 / 54.8, 2^22-2^23 within +-1; but fp32 2^20 / 2^21 23.4 / 30.6-31.1 -> 20.2-21.2 / 27.6-27.8 (the
// early FINISH blocks' first tiles, the whole input there, compete with the reduced solve). On the H200
// (same lease, two rounds, ms): 2^22 fp64 0.1033 / 0.1033 -> 0.1021 / 0.1021, fp32 0.0557 / 0.0558 ->
// 0.0546 / 0.0548; 2^20-2^21 within +-1 % either way. So from 2^22.
// (SG_TRI_OPEN_MIN overrides it: the GPU tests run the dynamic FINISH on small systems.)
constexpr long long TP_OPEN_MIN = 1LL << 22;
template <class T> struct tp_cuda_ex {
  static constexpr int Q = tp_q<T>();
  sg_ctx              *ctx;
  sg_report           *rep;
  sg_status            st;
  int                  launches = 0;  // kernels of this solve so far
  unsigned            *tick     = nullptr;  // a device counter of the workspace (dynamic FINISH items)
  bool                 armed    = false;    // the level-0 REDUCE zeroes tick
  bool                 big      = false;    // >= TP_OPEN_MIN unknowns: the levels open early
  unsigned            *fflags   = nullptr;  // FUSED: ticket, per-group counters and flags (workspace)
  bool ok() const { return st == SG_OK; }
  // SG_TRI_PDL: 0 no programmatic launches; 1 programmatic launches only; 2 (default) also the
  // reduced levels open early and the level-0 FINISH takes its items by ticket (bench/tri/README.md)
  static int pdl_mode()
  {
    static const int m = [] { const char *e = getenv("SG_TRI_PDL"); return e && e[0] >= '0' && e[0] <= '2' ? e[0] - '0' : 2; }();
    return m;
  }
  // Every kernel of a solve after its first is launched with programmatic stream serialization
  // (the kernels' sg_pdl_wait): the next level's launch and start-up, and a FINISH pass's first
  // tiles, overlap the end of the level before it. SG_TRI_PDL=0 turns it off (A/B).
  template <class... P, class... A> void launch(void (*kern)(P...), unsigned grid, int block, size_t smem, const char *what, const A &...args)
  {
    const bool pdl = pdl_mode() > 0;
    cudaLaunchAttribute at;
    at.id                                         = cudaLaunchAttributeProgrammaticStreamSerialization;
    at.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg                        = {};
    cfg.gridDim = dim3(grid), cfg.blockDim = dim3((unsigned)block), cfg.dynamicSmemBytes = smem, cfg.stream = sg_stream(ctx);
    cfg.attrs    = &at;
    cfg.numAttrs = pdl && launches > 0 ? 1 : 0;
    launches++;
    st = sg_cuda_check(cudaLaunchKernelEx(&cfg, kern, args...), rep, what);
  }
  bool geometry(const tp_plan &p, bool inter, unsigned &grid, int &block, size_t &smem)
  {
    const long long g = p.ntiles * p.groups;
    if (g > INT_MAX) {
      st = sg_report_set(rep, SG_ERR_UNSUPPORTED, -1, -1, 0.0, "tpcr: %lld thread blocks exceed the grid limit", g);
      return false;
    }
    grid  = (unsigned)g;
    block = p.team * p.spb;
    smem  = (size_t)9 * block * sizeof(T) + (!inter && block % 32 == 0 && tp_stage_ok<T>() ? (size_t)(block / 32) * tp_stage_bytes<T>() : 0);
    return true;
  }
  // dynamic shared memory above the 48 KB default (512-thread blocks: 77 KB double): raised once
  // per kernel to the largest size any plan uses, like the trsv kernels (not on every launch)
  template <auto Kernel> bool smem_limit(size_t smem)
  {
    static bool raised = false;  // per kernel instantiation
    if (smem <= 48 * 1024 || raised) return true;
    const size_t most = (size_t)9 * TP_BLOCK_MAX * sizeof(T) + (size_t)(TP_BLOCK_MAX / 32) * tp_stage_bytes<T>();
    st = sg_cuda_check(cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)most), rep, "raising the tpcr shared memory limit");
    raised = ok();
    return raised;
  }
  // STREAM applies (SOLVE, FINISH and REDUCE): contiguous systems whose tiles have >= TP_STREAM_MIN_TEAM
  // chunks (single tiles: >= tp_stream_rule's, by the device: tp_stream_min_teams), one team per block, rows
  // a multiple of 128 bytes, 16-byte aligned arrays and system stride, shared memory enough; and the
  // tensor maps encode. Measured on an H100, % of copy bandwidth (bench/tri/README.md):
  //   double m = 256 / 512 / 1024 / 2048 / 4096: STREAM 89.5 / 90.3 / 90.5 / 90.7 / 85.5,
  //     tp_solve_kernel 94.9 / 90.5 / 85.8 / 76.9 / 63.7;
  //   float (kernel launch bounds 256: teams of <= 256 chunks) with the correctly rounded
  //     reciprocal: batches m = 512 / 1024 / 2048 / 4096: STREAM 74.9 / 75.1 / 67.7 / 63.6,
  //     tp_solve_kernel 77.4 / 75.7 / 74.0 / 66.4 (compute-bound: the division chain); with
  //     the hardware reciprocal (tp_inv) m = 2048 / 4096: STREAM 83.1 / 84.6, tp_solve_kernel
  //     80.8 / 74.7, so float streams teams of >= 128 chunks (m >= 2048; on the H200 from 32), and the tiles of long
  //     systems (REDUCE + FINISH; 2^26: 36.2 -> 43.8 % before the reciprocal change, 48.5 after).
  size_t stream_smem(const tp_sys<T> &S, const tp_plan &p) const
  {
    if (S.inter || S.rs != 1 || p.groups * p.ntiles > INT_MAX) return 0;
    const tp_stream_mins rule = tp_stream_rule();
    if (p.spb > 1) {  // single tiles of teams < 32 chunks, spb systems per warp (rule.multi)
      // (tiles of >= 64 rows: the shapes run on the GPU, m = 64-256; the smaller ones keep tp_solve_kernel)
      if (!rule.multi || p.ntiles != 1 || p.team * p.spb != TP_BLOCK_CONTIG || p.tile < 64) return 0;
    } else {
      const int least = p.ntiles > 1 ? TP_STREAM_MIN_TEAM : sizeof(T) == 4 ? rule.flt : rule.contig;
      if (p.team < least || (sizeof(T) == 4 && p.team > TP_BLOCK)) return 0;  // float: see above
    }
    const long long rb = S.m * (long long)sizeof(T);
    const uintptr_t al = reinterpret_cast<uintptr_t>(S.dl) | reinterpret_cast<uintptr_t>(S.d) | reinterpret_cast<uintptr_t>(S.du) |
                         reinterpret_cast<uintptr_t>(S.b) | (uintptr_t)(S.ss * (long long)sizeof(T));
    // Rows that are not whole 128-byte lines (m * sizeof(T) % 128 != 0, at least one line; one tile per block): the map holds
    // each system's whole lines, the kernel reads the last m % R rows from global memory. Measured on the H200 (same lease,
    // two rounds, ms per 2^24 unknowns, against tp_solve_kernel; bench/tri/README.md, fifteenth session): fp64 m = 200 /
    // 300 / 450 / 600 / 700 / 1000 / 1500 / 3000 0.2119-0.2120 / 0.2672-0.2675 / 0.2038 / 0.2781-0.2783 / 0.2617-0.2632 /
    // 0.1978-0.1980 / 0.2712-0.2716 / 0.3179-0.3182 -> 0.1870-0.1873 / 0.2327-0.2339 / 0.1737-0.1757 / 0.2300-0.2301 /
    // 0.2037-0.2039 / 0.1674 / 0.2036-0.2038 / 0.2267-0.2272; float m = 300 / 600 / 700 / 1000 / 1500 / 2000 / 3000
    // 0.1763-0.1765 / 0.1707-0.1712 / 0.1558-0.1559 / 0.1191-0.1193 / 0.1484-0.1490 / 0.1114-0.1117 / 0.1489-0.1494 ->
    // 0.1387-0.1392 / 0.1341-0.1346 / 0.1200-0.1201 / 0.0899-0.0901 / 0.1078-0.1082 / 0.0891-0.0894 / 0.1095-0.1101.
    // fp64 m = 250 within 1 % (0.1843-0.1844 -> 0.1856-0.1866). The MULTI instance (teams of < 32 chunks) keeps whole
    // lines: there it was slower (fp64 m = 72 / 100 0.2627-0.2628 / 0.2098-0.2103 -> 0.3073-0.3078 / 0.2329-0.2334: 162
    // registers against tp_solve_kernel's 118, 48 % more L2 sectors).
    // SG_TRI_STREAM_TAIL=0: whole lines only (A/B).
    static const bool tail = sg_env_flag("SG_TRI_STREAM_TAIL", true);
    if ((al & 15) || (tail && p.spb == 1 ? rb < 128 : rb % 128 != 0) || p.tile * (long long)sizeof(T) / 128 > 256) return 0;
    const size_t smem = tp_stream_smem_bytes<T>(p.tile, p.spb, p.team * p.spb);
    return smem <= (size_t)sg_cuda_smem_optin() ? smem : 0;
  }
  // arrays as [system][row / R][R] (R = 128 bytes of rows), a box = one tile (rows past m
  // are zero-filled by the copy engine and never used)
  bool stream_maps(const tp_sys<T> &S, const tp_plan &p, tp_maps &M) const
  {
    PFN_cuTensorMapEncodeTiled_v12000 encode = sg_tensor_map_encoder();
    if (!encode) return false;
    constexpr cuuint32_t R = 128 / sizeof(T);
    const cuuint64_t     dims[3] = {R, (cuuint64_t)(S.m / R), (cuuint64_t)S.nbatch}, strides[2] = {128, (cuuint64_t)S.ss * sizeof(T)};
    const cuuint32_t     box[3] = {R, (cuuint32_t)(p.tile / R), (cuuint32_t)p.spb}, estr[3] = {1, 1, 1};  // spb systems per box
    const T             *arr[4] = {S.dl, S.d, S.du, S.b};
    memset(&M, 0, sizeof M);
    for (int k = 0; k < 4; k++)
      if (encode(&M.m[k], sizeof(T) == 8 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT64 : CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 3, (void *)arr[k], dims, strides, box, estr,
                 CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) !=
          CUDA_SUCCESS)
        return false;
    return true;
  }
  // A streaming kernel with persistent blocks: as many as fit at once, at most `items`.
  template <auto Kern, class... A> void launch_persistent(long long items, int block, size_t smem, const char *what, const A &...args)
  {
    static bool raised = false;  // per kernel instantiation
    if (!raised) {
      st = sg_cuda_check(cudaFuncSetAttribute(Kern, cudaFuncAttributeMaxDynamicSharedMemorySize, sg_cuda_smem_optin()), rep,
                         "raising the tpcr stream shared memory limit");
      if (!ok()) return;
      raised = true;
    }
    int per_sm = 0;
    st = sg_cuda_check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, Kern, block, smem), rep, "tpcr stream occupancy");
    if (!ok()) return;
    const long long most = (long long)(per_sm > 0 ? per_sm : 1) * sg_cuda_num_sms();
    launch(Kern, (unsigned)(items < most ? items : most), block, smem, what, args...);
  }
  template <bool RED> bool stream(const tp_sys<T> &S, const tp_plan &p, T tol, const tp_out<T> &O)
  {
    const size_t smem = stream_smem(S, p);
    tp_maps      M;
    if (!smem || !stream_maps(S, p, M)) return false;
    const char *what = "launching the tpcr stream kernel";
    // TAIL instances (rows past the map's whole 128-byte lines): their own instantiation, so that the whole-line shapes (the
    // powers of two, one long system) keep their machine code (with the tail's code in every instance, the full run at
    // f544fee had float one system 2^22-2^26 1.5-2.5 % below d72cf39's run: another lease, not an A/B)
    const bool tail = S.m % (128 / (long long)sizeof(T)) != 0;
    if constexpr (!RED)
      if (O.tick) {
        if (tail) launch_persistent<tp_stream_kernel<T, Q, false, true, false, true>>(p.groups * p.ntiles, p.team, smem, what, S, p, tol, sg_dreport(ctx), M, O);
        else launch_persistent<tp_stream_kernel<T, Q, false, true>>(p.groups * p.ntiles, p.team, smem, what, S, p, tol, sg_dreport(ctx), M, O);
        return true;
      }
    if constexpr (!RED)
      if (p.spb > 1) {
        launch_persistent<tp_stream_kernel<T, Q, false, false, true>>(p.groups, p.team * p.spb, smem, what, S, p, tol, sg_dreport(ctx), M, O);
        return true;
      }
    if (tail) launch_persistent<tp_stream_kernel<T, Q, RED, false, false, true>>(p.groups * p.ntiles, p.team, smem, what, S, p, tol, sg_dreport(ctx), M, O);
    else launch_persistent<tp_stream_kernel<T, Q, RED>>(p.groups * p.ntiles, p.team, smem, what, S, p, tol, sg_dreport(ctx), M, O);
    return true;
  }
  // Interleaved STREAM (tp_stream_ilv_kernel) applies to single-tile SOLVE plans of double
  // systems with teams of >= tp_stream_rule().ilv chunks (on the H100: 64) and rows of >= 32 bytes per block (spb >= 4:
  // m = 512 and 1024), when the shared memory fits. Measured on an H100 (fp64 interleaved, % of
  // copy, bench/tri/README.md): m = 512 / 1024: 82.7 / 66.7 against 68.9 / 49.3 with
  // tp_solve_kernel; m = 256 (teams of 32: 2 blocks of 256 per SM already overlap) 80.1 against
  // 86.1; m = 2048 (spb = 2, 16-byte rows) 40.5 against 41.8.
  // Float (teams of >= tp_stream_rule().ilv_f: on the H200 class m = 64 / 128 / 256; never on the H100) takes only the
  // tensor-box form (126 registers, no spills). Its cp.async form spills (124 bytes at 128 registers) and ran slower
  // than tp_solve_kernel on the H100 (m = 1024: 52.5 against 56.4 % of copy) and on the H200 (172 bytes of spills;
  // ms, m = 256 / 512 / 1024: 0.1393-0.1397 / 0.1550-0.1583 / 0.1866-0.1882 against 0.1173-0.1176 / 0.1474-0.1483 /
  // 0.1745-0.1751); the tensor-box form, H200, same lease: m = 128 / 256 0.1054-0.1055 / 0.1172-0.1183 ->
  // 0.0910-0.0914 / 0.0983-0.0993 ms (bench/tri/README.md, tenth session).
  static constexpr const char *ilv_what = "launching the tpcr interleaved stream kernel";
  template <int XM> void stream_ilv_tma(const tp_sys<T> &S, const tp_plan &p, T tol, const tp_maps &M)
  {
    launch_persistent<tp_stream_ilv_kernel<T, Q, 16, true, XM>>(p.groups, p.team * p.spb, tp_ilv_smem_bytes<T, Q>(p, true), ilv_what, S, p, tol,
                                                               sg_dreport(ctx), M);
  }
  // the ring instance (XOR mask XM), if the plan has its geometry (double only)
  template <int XM> bool stream_ilv_ring(const tp_sys<T> &S, const tp_plan &p, T tol)
  {
    if constexpr (sizeof(T) == 8) {
      using Gx = tp_ring_geo<T, Q, XM>;
      tp_maps M{};
      if (p.tile != TP_RING_TILE || p.spb != Gx::spb || p.team != Gx::team || !ilv_maps(S, p.spb, Gx::rr, M)) return false;
      launch_persistent<tp_stream_ilv_kernel<T, Q, 16, true, XM, true>>(p.groups, Gx::nthr, Gx::smem, ilv_what, S, p, tol, sg_dreport(ctx), M);
      return true;
    } else return false;
  }
  bool stream_ilv(const tp_sys<T> &S, const tp_plan &p0, T tol)
  {
    const tp_stream_mins rule  = tp_stream_rule();
    const int            least = sizeof(T) == 8 ? rule.ilv : rule.ilv_f;
    if (least <= 0 || !S.inter || S.ss != 1 || p0.ntiles != 1 || p0.team < least || p0.spb * sizeof(T) < 32 || p0.groups > INT_MAX) return false;
    // On the H200 class the streamed plans take up to 128-byte rows of systems (tp_ilv_regroup; SG_TRI_ILV_REGROUP=0 / 1
    // overrides, A/B): fp64 m = 256 (teams of 32: 8 -> 16 systems per block) 0.1985-0.1987 -> 0.1889-0.1893 ms per
    // 2^24 unknowns, m = 128 / 512 unchanged (no regrouping at 512: 8 systems fill 512 threads; bench/tri/README.md, ninth session)
    static const int  rgx    = [] { const char *e = getenv("SG_TRI_ILV_REGROUP"); return e ? (e[0] == '1' ? 1 : 0) : -1; }();
    // TMA: 128- or 256-byte rows of systems, a single box of <= 256 rows per array (SG_TRI_ILV_TMA=0: the cp.async
    // copies, A/B). 256-byte rows (fp64 / float m = 64: 32 / 64 systems per block), H200, same lease, two rounds, ms:
    // fp64 0.1652-0.1666 -> 0.1642-0.1644; float (streamed from teams of 4 for it) 0.0991-0.0998 -> 0.0886-0.0897
    // (bench/tri/README.md, tenth session)
    static const bool tma_on = sg_env_flag("SG_TRI_ILV_TMA", true);
    // Wide: on the H200 class the form takes 64- and 32-byte rows and tiles of 512 and 1024 rows too (two / four boxes
    // per array; fp64 / float m = 257-1024, one block of 512 threads per SM; SG_TRI_ILV_TMA_WIDE=0 / 1 overrides, A/B).
    // H200, same lease, two rounds, ms per 2^24 unknowns: m = 512 fp64 0.2297-0.2304 -> 0.2066-0.2069 (the cp.async
    // form before), float 0.1472-0.1477 -> 0.1103-0.1107 (not streamed before); m = 1024 (32-byte rows: a warp's 8 / 4
    // chunks read the same 8 banks, 4-way conflicts) fp64 0.2915-0.2947 -> 0.2857-0.2869, float 0.1731-0.1759 ->
    // 0.1388-0.1390; m = 64-256, 2048-4096 unchanged (bench/tri/README.md, eleventh session). These rows are read in
    // the XOR order (tp_xor_perm, above the kernel): conflict-free.
    static const int  widex  = [] { const char *e = getenv("SG_TRI_ILV_TMA_WIDE"); return e ? (e[0] == '1' ? 1 : 0) : -1; }();
    const bool        fast   = sg_hbm_fast(sg_cuda_hbm_peak());  // (the H200 class: regrouping and the wide boxes)
    const bool        wide   = widex >= 0 ? widex == 1 : fast;
    static const bool xorx   = sg_env_flag("SG_TRI_ILV_XOR", true);  // (tp_stream_ilv_kernel's XOR; 0: A/B)
    const size_t      optin  = (size_t)sg_cuda_smem_optin();
    const uintptr_t   ap     = reinterpret_cast<uintptr_t>(S.dl) | reinterpret_cast<uintptr_t>(S.d) | reinterpret_cast<uintptr_t>(S.du) |
                         reinterpret_cast<uintptr_t>(S.b);  // (the arrays' alignment; al: and the row stride's)
    const uintptr_t   al     = ap | (uintptr_t)(S.rs * (long long)sizeof(T));
    tp_plan           p      = p0;
    if (rgx >= 0 ? rgx == 1 : fast) tp_ilv_regroup<T>(p, S.nbatch);
    tp_maps    M{};
    const int  rowb = p.spb * (int)sizeof(T);  // (128 / 256 bytes: a warp reads whole rows or half a float row of 256; 32 / 64: the XOR order)
    const bool tma = tma_on && (al & 15) == 0 && (rowb == 128 || rowb == 256 || (wide && (rowb == 64 || rowb == 32))) &&
                     p.tile <= (wide ? 1024 : 256) &&
                     tp_ilv_smem_bytes<T, Q>(p, true) <= optin && ilv_maps(S, p.spb, p.tile < 256 ? p.tile : 256, M);
    if (tma) {  // (the XOR mask by the row size: 64-byte rows 1, 32-byte rows 3, wider rows or SG_TRI_ILV_XOR=0: 0)
      const int xm = xorx && rowb <= 64 ? (rowb == 64 ? 1 : 3) : 0;
      // RING (double tiles of 512 rows in the XOR order; SG_TRI_ILV_RING=0: the single staging buffer, A/B). Measured on
      // the H200 (same lease, two rounds, ms per 2^24 unknowns, bench/tri/README.md, fourteenth session): fp64 interleaved
      // m = 450 / 512 0.2432-0.2467 / 0.1885-0.1893 -> 0.2140-0.2162 / 0.1835-0.1836; m = 300 / 400 within +-1 %. Tiles of
      // 1024 rows (8 slices of 128 rows or 4 of 256) were 1.5-6 % slower (more instructions, more barrier stalls) and float
      // within noise: they keep the single buffer.
      static const bool ring_on = sg_env_flag("SG_TRI_ILV_RING", true);
      if (ring_on && optin >= TP_RING_OPTIN) {
        if (xm == 1 && stream_ilv_ring<1>(S, p, tol)) return true;
        if (xm == 3 && stream_ilv_ring<3>(S, p, tol)) return true;
      }
      if (xm == 1) stream_ilv_tma<1>(S, p, tol, M);
      else if (xm == 3) stream_ilv_tma<3>(S, p, tol, M);
      else stream_ilv_tma<0>(S, p, tol, M);
      return true;
    }
    if constexpr (sizeof(T) != 8) return false;  // (float: the tensor-box form only)
    else {
      // ODD: 16-byte aligned arrays, a row stride of an odd number of words (an odd nbatch, unpadded), tiles of >= 512 rows
      // (tp_stream_ilv_kernel ODD: 16-byte copies in place of 8-byte ones; SG_TRI_ILV_ODD=0: the 8-byte copies, A/B). H200,
      // same lease, two rounds, ms per 2^24 unknowns (bench/tri/README.md, fifteenth session): fp64 interleaved m = 400 /
      // 700 / 1000 0.3184-0.3186 / 0.4176-0.4203 / 0.3947-0.3987 -> 0.3124-0.3127 / 0.4040-0.4064 / 0.3482-0.3490; m = 300 /
      // 450 / 600 within 1 %; m = 100 (tiles of 128 rows) 0.1877-0.1883 -> 0.1892-0.1916, so smaller tiles keep the 8-byte copies
      static const bool odd_on = sg_env_flag("SG_TRI_ILV_ODD", true);
      if (odd_on && (ap & 15) == 0 && (S.rs & 1) && p0.tile >= 512) {
        tp_plan po = p;
        if (po.spb % 2 || tp_ilv_odd_smem_bytes<T, Q>(po) > optin) po = p0;
        if (po.spb % 2 == 0 && tp_ilv_odd_smem_bytes<T, Q>(po) <= optin) {
          launch_persistent<tp_stream_ilv_kernel<T, Q, 16, false, 0, false, true>>(po.groups, po.team * po.spb, tp_ilv_odd_smem_bytes<T, Q>(po),
                                                                                   ilv_what, S, po, tol, sg_dreport(ctx), M);
          return true;
        }
      }
      if (tp_ilv_smem_bytes<T, Q>(p, false) > optin) p = p0;  // (the plan's own grouping when the regrouped one does not fit)
      const size_t smem = tp_ilv_smem_bytes<T, Q>(p, false);
      if (smem > optin) return false;
      if ((al & 15) == 0) launch_persistent<tp_stream_ilv_kernel<T, Q, 16>>(p.groups, p.team * p.spb, smem, ilv_what, S, p, tol, sg_dreport(ctx), M);
      else launch_persistent<tp_stream_ilv_kernel<T, Q, (int)sizeof(T)>>(p.groups, p.team * p.spb, smem, ilv_what, S, p, tol, sg_dreport(ctx), M);
      return true;
    }
  }
  // FUSED (tp_fused_ilv_kernel): a tp_fuse_plan plan of the user's interleaved systems whose
  // reduced system is a single tile of a team no larger than the plan's. SG_TRI_FUSED=0 runs such plans level by level
  // (the same arithmetic: an A/B switch); SG_TRI_FUSE_LAG sets the lag in percent of the grid
  // (default 150: FINISH items run about 1.5 rounds of the grid behind their REDUCE items; float on the H200 class 200);
  // SG_TRI_FUSE_POL=0 drops the L2 policies (A/B).
  bool fused(const tp_sys<T> &S, const tp_sys<T> &R, const tp_plan &p, T tol)
  {
    static const bool      on     = sg_env_flag("SG_TRI_FUSED", true);
    // float on the H200 class: 200 (fp32 interleaved m = 2048 / 4096, lag 400 / 200 / 600: 0.1639-0.1640 / 0.1605-0.1611 /
    // 0.1634-0.1642 and 0.1638-0.1640 / 0.1600-0.1604 / 0.1630-0.1632 ms after the unit-form team solve; double: 150 best,
    // 100 / 200 / 300 +5 / +2 / +8 %; bench/tri/README.md, twelfth session. Before it, 400 beat 150 for float)
    static const long long lagx   = [] { const char *e = getenv("SG_TRI_FUSE_LAG"); return e ? atoll(e) : -1LL; }();
    const long long        lagpct = lagx >= 0 ? lagx : sizeof(T) == 4 && sg_hbm_fast(sg_cuda_hbm_peak()) ? 200LL : 150LL;
    tp_plan                pf;
    if (!on || !ok() || !S.user || !S.inter || S.ss != 1 || !fflags || !tp_fuse_plan<T>(S.m, S.nbatch, pf) || pf.team != p.team || pf.spb != p.spb ||
        pf.ntiles != p.ntiles)
      return false;
    const tp_plan pr = tp_make_plan<T>(SG_TRI_INTERLEAVED, R.m, R.nbatch);
    if (pr.ntiles != 1 || pr.team > p.team) return false;
    static const int pol   = sg_env_flag("SG_TRI_FUSE_POL", true);
    const int        block = p.team * p.spb;
    tp_maps          M;
    const bool       stg   = fuse_maps(S, p, M);
    size_t           smem  = (size_t)(17LL * block) * sizeof(T);
    auto            *kern  = stg ? tp_fused_ilv_kernel<T, Q, true> : tp_fused_ilv_kernel<T, Q, false>;
    if (stg) {
      smem += 128 + (size_t)4 * p.tile * p.spb * sizeof(T);  // (the same for every plan it takes)
      static bool raised = false;
      if (!raised) {
        st = sg_cuda_check(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem), rep, "raising the tpcr fused shared memory limit");
        if (!ok()) return true;
        raised = true;
      }
    }
    int per_sm = 0;
    st = sg_cuda_check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, block, smem), rep, "tpcr fused occupancy");
    if (!ok()) return true;
    const long long nitem = p.groups * p.ntiles, most = (long long)(per_sm > 0 ? per_sm : 1) * sg_cuda_num_sms();
    const long long grid  = 2 * nitem < most ? 2 * nitem : most;
    long long       lag   = lagpct * grid / 100;
    lag = lag < p.ntiles ? p.ntiles : lag > nitem ? nitem : lag;
    st  = sg_cuda_check(cudaMemsetAsync(fflags, 0, (size_t)(2 * p.groups + 1) * sizeof(unsigned), sg_stream(ctx)), rep, "zeroing the tpcr fused counters");
    if (!ok()) return true;
    const tp_fuse   F{fflags, fflags + 1, fflags + 1 + p.groups, nitem, lag, pr.team, pol};
    const tp_out<T> O{const_cast<T *>(R.dl), const_cast<T *>(R.d), const_cast<T *>(R.du), const_cast<T *>(R.b), R.ss, R.rs};
    launch(kern, (unsigned)grid, block, smem, "launching the tpcr fused kernel", S, R, p, tol, O, F, sg_dreport(ctx), M);
    return true;
  }
  // The fused kernel's tensor maps (its STG form): the interleaved arrays as [row][system], a box =
  // one tile of a group (spb systems x tile rows). Needs the plan's default shape (128 bytes of
  // systems per group: nbatch >= 16 double / 32 float), 16-byte aligned arrays and row stride;
  // SG_TRI_FUSE_TMA=0 turns it off (A/B). false: the kernel loads its tiles into registers
  // directly (M zeroed, unused).
  bool fuse_maps(const tp_sys<T> &S, const tp_plan &p, tp_maps &M) const
  {
    static const bool on = sg_env_flag("SG_TRI_FUSE_TMA", true);
    memset(&M, 0, sizeof M);
    const uintptr_t al = reinterpret_cast<uintptr_t>(S.dl) | reinterpret_cast<uintptr_t>(S.d) | reinterpret_cast<uintptr_t>(S.du) |
                         reinterpret_cast<uintptr_t>(S.b) | (uintptr_t)(S.rs * (long long)sizeof(T));  // (the box: 128 bytes, below)
    if (!on || (al & 15) || p.spb != 128 / (int)sizeof(T) || p.team * p.spb != TP_BLOCK) return false;
    return ilv_maps(S, p.spb, p.tile, M);
  }
  // The interleaved arrays as 2D tensor maps [row][system], a box = rows x spb systems (<= 256 each); the caller checked
  // the 16-byte alignment of the arrays and the row stride
  bool ilv_maps(const tp_sys<T> &S, int spb, long long rows, tp_maps &M) const
  {
    memset(&M, 0, sizeof M);
    if (S.m >= (1LL << 31) || S.nbatch >= (1LL << 31) || spb > 256 || rows > 256) return false;
    PFN_cuTensorMapEncodeTiled_v12000 encode = sg_tensor_map_encoder();
    if (!encode) return false;
    const cuuint64_t dims[2] = {(cuuint64_t)S.nbatch, (cuuint64_t)S.m}, strides[1] = {(cuuint64_t)S.rs * sizeof(T)};
    const cuuint32_t box[2] = {(cuuint32_t)spb, (cuuint32_t)rows}, estr[2] = {1, 1};
    const T         *arr[4] = {S.dl, S.d, S.du, S.b};
    for (int k = 0; k < 4; k++)
      if (encode(&M.m[k], sizeof(T) == 8 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT64 : CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, (void *)arr[k], dims, strides, box, estr,
                 CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) !=
          CUDA_SUCCESS) {
        memset(&M, 0, sizeof M);
        return false;
      }
    return true;
  }
  void solve(const tp_sys<T> &S, const tp_plan &p0, T tol)
  {
    unsigned grid; int block; size_t smem;
    if (!ok()) return;
    tp_plan   p = p0;
    tp_out<T> O{};
    p.open = big && !S.user && pdl_mode() == 2;  // a reduced level: the next kernel may start early
    if (S.user && S.xr && armed) O.tick = tick;    // the level-0 FINISH (its REDUCE zeroed tick)
    if (stream<false>(S, p, tol, O)) return;
    if (stream_ilv(S, p, tol)) return;
    if (!geometry(p, S.inter, grid, block, smem)) return;
    const char *what = "launching the tpcr solve kernel";
    if (S.inter) {
      if (smem_limit<tp_solve_kernel<T, Q, true>>(smem)) launch(tp_solve_kernel<T, Q, true>, grid, block, smem, what, S, p, tol, sg_dreport(ctx));
    } else if (smem_limit<tp_solve_kernel<T, Q, false>>(smem)) launch(tp_solve_kernel<T, Q, false>, grid, block, smem, what, S, p, tol, sg_dreport(ctx));
  }
  void reduce(const tp_sys<T> &S, const tp_plan &p0, T tol, T *rdl, T *rd, T *rdu, T *rb, long long rss, long long rrs)
  {
    unsigned grid; int block; size_t smem;
    if (!ok()) return;
    tp_plan   p = p0;
    tp_out<T> O{rdl, rd, rdu, rb, rss, rrs};
    p.open = big && !S.user && pdl_mode() == 2;
    if (big && S.user && tick && pdl_mode() == 2) O.tick = tick;
    if (stream<true>(S, p, tol, O)) {
      armed = armed || O.tick;
      return;
    }
    if (!geometry(p, S.inter, grid, block, smem)) return;
    const char *what = "launching the tpcr reduce kernel";
    if (S.inter) {
      if (smem_limit<tp_reduce_kernel<T, Q, true>>(smem)) launch(tp_reduce_kernel<T, Q, true>, grid, block, smem, what, S, p, tol, O, sg_dreport(ctx));
    } else if (smem_limit<tp_reduce_kernel<T, Q, false>>(smem)) launch(tp_reduce_kernel<T, Q, false>, grid, block, smem, what, S, p, tol, O, sg_dreport(ctx));
  }
};

template <class T> T *tp_workspace(sg_ctx *ctx, long long words, sg_report *rep, sg_status &st)
{
  st = SG_OK;
  if (words == 0) return nullptr;
  T *w = (T *)sg_ctx_work(ctx, (size_t)words * sizeof(T), 1);
  if (!w) st = sg_report_set(rep, SG_ERR_MEM, -1, -1, 0.0, "tpcr: cannot allocate %.3g MB of device workspace", (double)words * sizeof(T) / 1e6);
  return w;
}

// Solve all levels of S (user input) and fetch the report.
template <class T> sg_status tp_cuda_run(sg_ctx *ctx, const tp_sys<T> &S, double pivtol, sg_report *rep)
{
  const T   tol = pivtol > 0 ? (T)pivtol : sg_default_pivtol<T>();
  sg_status st;
  const long long words = tp_solve_work<T>(S.inter ? SG_TRI_INTERLEAVED : SG_TRI_CONTIGUOUS, S.m, S.nbatch);
  const long long fw    = S.inter ? ((2 * S.nbatch + 2) * 4 + (long long)sizeof(T) - 1) / (long long)sizeof(T) : 0;  // FUSED flags
  T              *work  = tp_workspace<T>(ctx, words + 8 / (long long)sizeof(T) + fw, rep, st);  // + the FINISH ticket counter
  if (st != SG_OK) return st;
  if ((st = sg_dev_report_reset(ctx, rep)) != SG_OK) return st;
  tp_cuda_ex<T> ex{ctx, rep, SG_OK};
  ex.tick = reinterpret_cast<unsigned *>(work + words);
  if (fw) ex.fflags = reinterpret_cast<unsigned *>(work + words + 8 / (long long)sizeof(T));
  static const long long open_min = [] { const char *e = getenv("SG_TRI_OPEN_MIN"); return e ? atoll(e) : TP_OPEN_MIN; }();  // tests: lower
  ex.big = S.m * S.nbatch >= open_min;
  tp_solve_levels(ex, S, tol, work);
  if (!ex.ok()) return ex.st;
  return sg_dev_report_fetch(ctx, rep);
}

template <class T> sg_status tpcr_cuda(sg_ctx *ctx, const sg_tri_batch *B, double pivtol, sg_report *rep)
{
  tp_sys<T> S{};
  S.dl = (const T *)B->dl; S.d = (const T *)B->d; S.du = (const T *)B->du; S.b = (const T *)B->b; S.x = (T *)B->x;
  S.m = B->m; S.nbatch = B->nbatch;
  if (B->layout == SG_TRI_CONTIGUOUS) { S.ss = B->ld; S.rs = 1; }
  else { S.ss = 1; S.rs = B->ld; }
  S.endmode = TP_END_ZERO; S.rscale = 1; S.user = true; S.inter = B->layout == SG_TRI_INTERLEAVED;
  return tp_cuda_run(ctx, S, pivtol, rep);
}

template <class T>
sg_status block_reduce_cuda(sg_ctx *ctx, long long n, const void *dl, const void *d, const void *du, const void *b, double pivtol, double iface[8],
                            int *k, sg_report *rep)
{
  const T   tol = pivtol > 0 ? (T)pivtol : sg_default_pivtol<T>();
  sg_status st;
  T        *work = tp_workspace<T>(ctx, tp_reduce_work<T>(n), rep, st);
  if (st != SG_OK) return st;
  T *h = (T *)sg_ctx_host_work(ctx, 8 * sizeof(T), 1);
  if (!h) return sg_report_set(rep, SG_ERR_MEM, -1, -1, 0.0, "block reduce: cannot allocate pinned host memory");
  tp_sys<T> S{};
  S.dl = (const T *)dl; S.d = (const T *)d; S.du = (const T *)du; S.b = (const T *)b;
  S.m = n; S.nbatch = 1; S.ss = n; S.rs = 1; S.endmode = TP_END_KEEP; S.rscale = 1; S.user = true;
  if ((st = sg_dev_report_reset(ctx, rep)) != SG_OK) return st;
  tp_cuda_ex<T> ex{ctx, rep, SG_OK};
  T            *out = nullptr;
  const int     cnt = tp_reduce_levels(ex, S, tol, work, &out);
  if (!ex.ok()) return ex.st;
  st = sg_cuda_check(cudaMemcpyAsync(h, out, 4 * cnt * sizeof(T), cudaMemcpyDeviceToHost, sg_stream(ctx)), rep, "copying the interface equations");
  if (st != SG_OK) return st;
  st = sg_dev_report_fetch(ctx, rep);  // synchronises the stream
  if (st == SG_OK || rep->status != SG_ERR_DEVICE) {
    for (int e = 0; e < cnt; e++)
      for (int v = 0; v < 4; v++) iface[4 * e + v] = (double)h[v * cnt + e];
    *k = cnt;
  }
  return st;
}

template <class T>
sg_status block_solve_cuda(sg_ctx *ctx, sg_tri_alg alg, long long n, const void *dl, const void *d, const void *du, const void *b, double xp,
                           double xn, void *x, double pivtol, sg_report *rep)
{
  if (alg == SG_TRI_TPCR) {
    tp_sys<T> S{};
    S.dl = (const T *)dl; S.d = (const T *)d; S.du = (const T *)du; S.b = (const T *)b; S.x = (T *)x;
    S.m = n; S.nbatch = 1; S.ss = n; S.rs = 1; S.endmode = TP_END_KNOWN; S.xprev = (T)xp; S.xnext = (T)xn; S.rscale = 1; S.user = true;
    return tp_cuda_run(ctx, S, pivtol, rep);
  }
  // other algorithms: x = b with the neighbours folded in, then a batch solve in place
  sg_status st = SG_OK;
  if (x != b) st = sg_cuda_check(cudaMemcpyAsync(x, b, (size_t)n * sizeof(T), cudaMemcpyDeviceToDevice, sg_stream(ctx)), rep, "copying b");
  if (st != SG_OK) return st;
  tp_fold_kernel<T><<<1, 1, 0, sg_stream(ctx)>>>((T *)x, (const T *)dl, (const T *)du, n, (T)xp, (T)xn);
  if ((st = sg_cuda_check(cudaGetLastError(), rep, "launching the block fold kernel")) != SG_OK) return st;
  sg_tri_batch B;
  B.prec = sizeof(T) == 8 ? SG_REAL64 : SG_REAL32;
  B.layout = SG_TRI_CONTIGUOUS; B.m = n; B.nbatch = 1; B.ld = n;
  B.dl = dl; B.d = d; B.du = du; B.b = x; B.x = x;
  return sg_tri_batch_solve_cuda(ctx, alg, &B, pivtol, rep);
}

// sg_tri_tpcr_stream_blocks_per_sm: the instance's resident blocks at its largest single tile's launch
template <class T, auto Kern> int tp_stream_blocks_per_sm()
{
  constexpr int Q = tp_q<T>();
  const int     team = sizeof(T) == 8 ? TP_BLOCK_MAX : TP_BLOCK;  // the largest single tile: m = 4096 (512 x 8 / 256 x 16)
  const size_t  smem = tp_stream_smem_bytes<T>((long long)team * Q, 1, team);
  int           per_sm = -1;
  if (cudaFuncSetAttribute(Kern, cudaFuncAttributeMaxDynamicSharedMemorySize, sg_cuda_smem_optin()) != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, Kern, team, smem) != cudaSuccess)
    return -1;
  return per_sm;
}
template <class T> int tp_stream_blocks_by_kind(int kind)
{
  constexpr int Q = tp_q<T>();
  return kind == 0 ? tp_stream_blocks_per_sm<T, tp_stream_kernel<T, Q, false>>()
       : kind == 1 ? tp_stream_blocks_per_sm<T, tp_stream_kernel<T, Q, true>>()
                   : tp_stream_blocks_per_sm<T, tp_stream_kernel<T, Q, false, true>>();
}

} // namespace

int sg_tri_tpcr_stream_blocks_per_sm(int word, int kind)
{
  return word == 8 ? tp_stream_blocks_by_kind<double>(kind) : tp_stream_blocks_by_kind<float>(kind);
}

sg_status sg_tri_tpcr_solve_cuda(sg_ctx *ctx, const sg_tri_batch *B, double pivtol, sg_report *rep)
{
  return B->prec == SG_REAL64 ? tpcr_cuda<double>(ctx, B, pivtol, rep) : tpcr_cuda<float>(ctx, B, pivtol, rep);
}

extern "C" sg_status sg_tri_block_reduce_cuda(sg_ctx *ctx, sg_precision prec, long long n, const void *dl, const void *d, const void *du,
                                              const void *b, double pivtol, double iface[8], int *k, sg_report *rep)
{
  sg_report local;
  if (!rep) rep = &local;
  sg_status st = sg_tri_block_reduce_begin(ctx, SG_BACKEND_CUDA, prec, n, dl, d, du, b, iface, k, rep);
  if (st != SG_OK) return st;
  const void *ptrs[4]  = {dl, d, du, b};
  const char *names[4] = {"dl", "d", "du", "b"};
  for (int i = 0; i < 4; i++)
    if ((st = sg_cuda_check_ptr(ptrs[i], names[i], rep)) != SG_OK) return st;
  return prec == SG_REAL64 ? block_reduce_cuda<double>(ctx, n, dl, d, du, b, pivtol, iface, k, rep)
                           : block_reduce_cuda<float>(ctx, n, dl, d, du, b, pivtol, iface, k, rep);
}

extern "C" sg_status sg_tri_block_solve_cuda(sg_ctx *ctx, sg_tri_alg alg, sg_precision prec, long long n, const void *dl, const void *d,
                                             const void *du, const void *b, double x_prev, double x_next, void *x, double pivtol,
                                             sg_report *rep)
{
  sg_report local;
  if (!rep) rep = &local;
  sg_status st = sg_tri_block_solve_begin(ctx, SG_BACKEND_CUDA, &alg, prec, n, dl, d, du, b, x, rep);
  if (st != SG_OK) return st;
  const void *ptrs[5]  = {dl, d, du, b, x};
  const char *names[5] = {"dl", "d", "du", "b", "x"};
  for (int i = 0; i < 5; i++)
    if ((st = sg_cuda_check_ptr(ptrs[i], names[i], rep)) != SG_OK) return st;
  return prec == SG_REAL64 ? block_solve_cuda<double>(ctx, alg, n, dl, d, du, b, x_prev, x_next, x, pivtol, rep)
                           : block_solve_cuda<float>(ctx, alg, n, dl, d, du, b, x_prev, x_next, x, pivtol, rep);
}
