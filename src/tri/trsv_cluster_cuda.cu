// One dense triangular system of modest order (one right-hand side; fp64 n <= 2048, fp32 n <=
// 4096 by default) on ONE thread-block cluster of up to 16 CTAs (16 SMs): the solution blocks
// travel between the CTAs through distributed shared memory, never through L2. (trsv_cuda.cu's
// chain + helpers design pays a global-memory round trip and CTA-wide barriers per 64-row block
// row; below n ~ 4096 its ~10 us fixed cost and ~1.8 us per block row dominated,
// bench/trsv/README.md.)
//
// M (the effective lower matrix: op(A), reflected for UN / LT) is cut into block rows of CB = 32
// on a grid aligned to A's, so that every tile is one 32 x 32 tensor copy (the partial block is
// the last of A; M's rows past A are "dummy" rows: zero, unit pivot, x = 0). Block row I belongs
// to CTA I % CS of the cluster. In every CTA (warps: 1 critical, ob update, up to ob helpers):
//  - the update warp of block row I copies the diagonal tile and the tile M(I, I-1) and inverts
//    the diagonal tile (Dinv_I, one column per lane, forward substitution); its helper warp (or,
//    without one, the update warp after Dinv) forms P_I = Dinv_I M(I, I-1) by the same
//    substitution (rdyA[k]). The update warp then streams the tiles M(I, 0) .. M(I, I-2) through
//    its own ring of tensor copies, each multiplied once its x_J has arrived (op = N: lane = row;
//    op = T: lane = column, 32 partial row sums, one reduce-scatter of shuffles at the end), and
//    hands z_I = Dinv_I (b_I - sum_{J <= I-2} M(I, J) x_J) to the critical warp (rdyB[k]).
//  - the critical warp takes the CTA's block rows in order: with P_I's row in registers, once
//    x_{I-1} has arrived: x_I = z_I - P_I x_{I-1} (one 32 x 32 GEMV, lane = row), x_I to X and,
//    by st.async of 16-byte pieces, into every CTA's copy of x, the bytes counted on that CTA's
//    mbarrier xbar[I] (no flags, no fences; the next ranks first).
// The critical path per block row is one DSMEM hop and one GEMV in one warp (~0.33 us on an
// H100), the fixed cost the diagonal work of the first block rows (~4-5 us).
// With a filled plan (sg_trsv_plan_*): Dinv_I, P_I and Q_I = Dinv_I M(I, I-2) come from the plan (no
// diagonal work; look-ahead 2: the update warps stop at tile I-3 and the critical warp subtracts
// Q_I x_{I-2} before it waits for x_{I-1}), the idle helper warps issue the update warps' tile copies
// (producer_warp), and the kernel is launched programmatically (it may start while the kernel before
// it runs, and waits for it before reading B and writing X). A plain solve is launched the same
// way but waits before any read (A too may be the previous kernel's output); meanwhile its update
// warps have the copy engine prefetch their diagonal tile, M(I, I-1) (M(I, I-2)) and b into L2
// (L2 is the point of coherence: a prefetch cannot return data older than the kernel before wrote).
// Where each CTA owns one block row (n <= 512), a plain solve also takes look-ahead 2: a third warp
// forms Q_I = Dinv_I M(I, I-2) beside Dinv_I and P_I (pass 2, slot cq).
// Where a plain solve's start-up goes (SG_TRSV_PROFILE, fp64 n = 512 on an H200, us from the CTAs'
// start, no programmatic launch): the barriers' set-up and the cluster barrier 1.4, the diagonal
// tile 2.1, Dinv_0 3.9 (the 32-step substitution ~1.8 us, for fp32 too: bound by the shared-memory data
// returned to the lanes, three passes at once 2-3x one, bench/trsv/README.md), z_0 4.45, x_0 4.6.
// Deadlock-free: the CTAs of a cluster are co-resident (cluster launch); warps wait only for x
// blocks of smaller rows and for their own CTA's update / helper warps. Every CTA stays until all
// x blocks have landed in it (the other CTAs' st.async target its shared memory).
// Bad pivots are flagged by the update warp (the solve goes on, as in the general kernel), a
// non-finite x by the critical warp: the smallest row is reported.
// Larger orders (fp64 from n = 8192 by default): the same chain on one cluster with persistent
// warps, the rest of the matrix on helper clusters of the same launch (trsv_hybrid_solve, below).
#include "tri/trsv_cuda.cuh"
#include "tri/trsv_hybrid_jobs.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <vector>

namespace sgtrsv {
namespace {

constexpr int CB = 32;              // rows of a block row (one per lane)
constexpr int CLD = CB + 1;         // leading dimension of the critical warp's tiles (conflict-free)
constexpr int RING_MAX = 8;         // update-warp ring depth, at most
constexpr int CS_MAX = 16;          // cluster size, at most (non-portable; 8 is portable)
// warps per CTA: the critical warp and up to cl_warps - 1 update warps. Registers are handed out
// per group of four warps, so 9 warps get at most 168 registers each (fp32 needs ~120), 8 warps
// 255 (fp64: 168 spills)
template <class T> constexpr int cl_warps() { return sizeof(T) == 8 ? 8 : 9; }

template <class T> struct ClArgs {
  const T       *B;
  T             *X;
  int            n, nb, ob, rs;  // order, block rows, block rows per CTA (update warps), ring slots per update warp
  bool           rev, trans;     // M(i, j) = op(A) reflected (UN, LT) / transposed
  T              pivtol;
  bool           unit;
  sg_dev_report *rep;
  unsigned long long *prof;  // NULL, or SG_TRSV_PROFILE: %globaltimer per block row (see trsv_cluster_solve)
  const T       *pdg, *ppg;  // one-cluster kernel with a filled plan: Dinv_I, P_I (layout of HyArgs::dg, pg), else NULL
  const T       *pqg;        // ... and Q_I = Dinv_I M(I, I-2) (look-ahead 2: the update warps stop at I-3), else NULL
  bool           pdl;        // one-cluster kernel: launched with programmatic stream serialization (a plan's solve, trsv_cluster_solve)
  bool           prod;       // one-cluster kernel with a plan: the idle helper warps issue the update warps' tile copies (producer_warp)
  int            pf;         // plain solve launched programmatically: each update warp warms L2 with its row's diagonal tile, M(I, I-1) and b before the wait (2: and its first ring tiles)
  bool           bpre;       // plain solve: the update warp loads b before its diagonal work (not after it)
  const T       *phg, *pgg;  // one-cluster kernel with a paired plan (pqg too): H_o, G_o of the odd block rows (trsv_pair_kernel), else NULL
  // Index in A (row of x and b) of row i of M. The block grid is aligned to A's, so every tile is
  // a 32 x 32 box of A at multiples of 32, and the partial block is the last one of A (the first
  // of M for the reflected variants: M's rows past A are padding, "dummy" rows).
  __device__ __forceinline__ int  aidx(int i) const { return rev ? nb * CB - 1 - i : i; }
  // one-cluster kernel: block row I's update warp sums the tile columns J <= I - 1 - la(I) (paired
  // plan: the odd rows stop a tile earlier, their tiles I-3 .. I-1 are in G_I, H_I and w_I)
  // (LA2: the kernel instance of a plain solve with look-ahead 2)
  template <bool LA2> __device__ __forceinline__ int la(int I) const { return pqg ? (phg && (I & 1) ? 3 : 2) : LA2 ? 2 : 1; }
  // paired plan: even block row I hands w_{I+1} = P_{I+1} z_I to block row I+1 (its last ring item is P_{I+1})
  __device__ __forceinline__ bool sends_w(int I) const { return phg && !(I & 1) && I + 1 < nb; }
  // one-cluster kernel with a plan: index of wbar[0] among the barriers (cl_layout); a plain solve
  // with look-ahead 2: of qbar[0] (the tile M(I, I-2) of owned row k has landed in slot cq)
  __device__ __forceinline__ int  wbar0() const { return nb + 3 * ob + 2 * ob * rs; }
  __device__ __forceinline__ bool real(int i) const { return aidx(i) < n; }
  // tile (I, J) of M: its box origin in A (row, column) ...
  __device__ __forceinline__ void box(int I, int J, int &row, int &col) const
  {
    int u = trans ? J : I, v = trans ? I : J;
    if (rev) { u = nb - 1 - u; v = nb - 1 - v; }
    row = u * CB;
    col = v * CB;
  }
};
// element (r, c) of a tile in the copied box, variant-specialised (compile-time layout: the
// shared-memory offsets become immediates)
template <bool TR, bool RV> __device__ __forceinline__ int tat(int r, int c)
{
  const int a = TR ? c : r, b = TR ? r : c, e = b * CB + a;
  return RV ? CB * CB - 1 - e : e;
}
// P(i, c) in the slot of tile (I, I-1), skewed: lane c writing column c and lane r reading row r
// both touch 32 different banks
__device__ __forceinline__ int pskew(int i, int c) { return c * CB + ((i + c) & (CB - 1)); }
__device__ __forceinline__ unsigned long long gtime()
{
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// shared memory carve-up (bytes), the same in every CTA (remote addresses are local ones mapped)
//   barriers: xbar[nb] (x_J has arrived), rdyA[ob] (Dinv), rdyB[ob] (r), ctb[ob] (tile (I, I-1)), sb[ob * rs] (ring slots
//   filled), eb[ob * rs] (ring slots read: producer_warp), with a plan wbar[ob] (w_k has arrived: paired plan),
//   in their place for a plain solve with look-ahead 2 qbar[ob] (tile (I, I-2) has landed in slot cq)
struct ClLayout {
  size_t xs, dv, ct, cq, rv, wv, ring, total;
};
// (pre: a plan's solve, Dinv_I and P_I come from the plan: no Dinv or tile (I, I-1) slots, more ring;
// q2: a plain solve with look-ahead 2, a slot for the tile (I, I-2) / Q_I and its barrier qbar per owned row)
template <class T> __host__ __device__ inline ClLayout cl_layout(int nb, int ob, int rs, bool pre, bool q2)
{
  ClLayout  L;
  const int od = pre ? 0 : ob, ow = pre ? ob : 0, oq = !pre && q2 ? ob : 0;
  L.xs    = ((size_t)(nb + 3 * ob + 2 * ob * rs + ow + oq) * 8 + 127) / 128 * 128;  // x, nb * CB
  L.dv    = L.xs + (size_t)nb * CB * sizeof(T);                         // Dinv_k, ob * CB * CLD
  L.ct    = (L.dv + (size_t)od * CB * CLD * sizeof(T) + 127) / 128 * 128;  // tile (I, I-1)_k as copied, ob * CB * CB
  L.cq    = L.ct + (size_t)od * CB * CB * sizeof(T);                    // tile (I, I-2)_k as copied (q2), oq * CB * CB
  L.rv    = L.cq + (size_t)oq * CB * CB * sizeof(T);                    // r_k, ob * CB
  L.wv    = L.rv + (size_t)ob * CB * sizeof(T);                         // w_k (paired plan, odd rows), ow * CB
  L.ring  = (L.wv + (size_t)ow * CB * sizeof(T) + 127) / 128 * 128;     // ob rings of rs tiles
  L.total = L.ring + (size_t)ob * rs * CB * CB * sizeof(T);
  return L;
}

__device__ __forceinline__ unsigned cl_rank()
{
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}
__device__ __forceinline__ unsigned cl_size()
{
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_nctarank;\n" : "=r"(r));
  return r;
}
__device__ __forceinline__ void cl_sync()
{
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
__device__ __forceinline__ unsigned cl_map(unsigned local, unsigned rank)
{
  unsigned r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(local), "r"(rank));
  return r;
}
__device__ __forceinline__ void bar_init(unsigned long long *bar, unsigned count)
{
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(count) : "memory");
}
// wait for the phase of parity `par` (by default phase 0) of a barrier completed by other CTAs' st.async
// (cluster-scope acquire)
__device__ __forceinline__ void bar_wait_cluster(const unsigned long long *bar, unsigned par = 0)
{
  asm volatile("{\n .reg .pred p;\n W_%=:\n mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%0], %1;\n @!p bra W_%=;\n}\n" ::"r"(
                 smem_u32(bar)), "r"(par)
               : "memory");
}
// Reduce-scatter of a[0..31] over the warp: lane l returns sum over lanes of a[l]. Level W: the
// lanes with bit W keep the upper half of their 2W values and send the lower one (compile-time
// indices only, so the array stays in registers).
template <int W, class T> __device__ __forceinline__ void rs_level(T (&a)[CB], bool hi)
{
#pragma unroll
  for (int i = 0; i < W; i++) {
    const T lo = a[i], up = a[W + i];
    a[i]       = (hi ? up : lo) + __shfl_xor_sync(~0u, hi ? lo : up, W);
  }
}
template <class T> __device__ __forceinline__ T reduce_scatter(T (&a)[CB], int lane)
{
  rs_level<16>(a, lane & 16);
  rs_level<8>(a, lane & 8);
  rs_level<4>(a, lane & 4);
  rs_level<2>(a, lane & 2);
  rs_level<1>(a, lane & 1);
  return a[0];
}
// The same sums through shared memory (the cluster + helpers kernel's op = T update-warp tail,
// SG_TRSV_T_TAIL): lane c stores a[r] at sc[c * CLD + r], then lane l adds sc[c * CLD + l], c = 0 .. 31,
// by a pairwise tree in column order (deterministic, every lane alike; not the reduce-scatter's order,
// so the last bits differ from it). Stride CLD = 33: every access is the lane's base plus an immediate
// (no address arithmetic), and conflict-free: fp32 bank (c + r) resp. (c + l) mod 32; fp64 bank pair
// (c + r) resp. (c + l) mod 16, each pair twice per warp, i.e. the two wavefronts that 256 bytes take
// anyway (each half-warp alone conflict-free). sc: CB * CLD elements the warp may write (no copy into
// them in flight); the caller orders these accesses before any later copy into sc (a proxy fence).
template <class T> __device__ __forceinline__ T transpose_sum(T (&a)[CB], T *sc, int lane)
{
  T *const wr = sc + lane * CLD;
#pragma unroll
  for (int r = 0; r < CB; r++) wr[r] = a[r];
  __syncwarp();
  const T *const rd = sc + lane;
#pragma unroll
  for (int c = 0; c < CB; c++) a[c] = rd[c * CLD];
#pragma unroll
  for (int h = 1; h < CB; h *= 2)
#pragma unroll
    for (int c = 0; c < CB; c += 2 * h) a[c] += a[c + h];
  return a[0];
}

// tile (I, J) of M into dst by one tensor copy completing on bar (lane 0 of the warp issues it)
template <class T> __device__ __forceinline__ void tile_copy(const ClArgs<T> &a, const CUtensorMap *map, T *dst, int I, int J, unsigned long long *bar)
{
  int row, col;
  a.box(I, J, row, col);
  mbar_expect(bar, CB * CB * (unsigned)sizeof(T));
  tma_load_2d(dst, map, row, col, bar);
}
// one word into another CTA's shared memory, counted on its mbarrier rbar (cluster addresses)
__device__ __forceinline__ void st_async_1(unsigned raddr, double v, unsigned rbar)
{
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.b64 [%0], %1, [%2];\n" ::"r"(raddr), "l"(__double_as_longlong(v)), "r"(rbar) : "memory");
}
__device__ __forceinline__ void st_async_1(unsigned raddr, float v, unsigned rbar)
{
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];\n" ::"r"(raddr), "r"(__float_as_uint(v)), "r"(rbar) : "memory");
}
// item t of the ring of an update warp of block row I (ntile tiles): tile (I, t), or (t == ntile,
// a.sends_w(I)) P_{I+1} of the plan by one bulk copy (column-major, as in the plan)
template <class T> __device__ __forceinline__ void ring_item(const ClArgs<T> &a, const CUtensorMap *map, T *dst, int I, int t, int ntile, unsigned long long *bar)
{
  if (t < ntile) {
    tile_copy(a, map, dst, I, t, bar);
    return;
  }
  mbar_expect(bar, CB * CB * (unsigned)sizeof(T));
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(smem_u32(dst)),
               "l"(a.ppg + (size_t)(I + 1) * CB * CB), "r"(CB * CB * (unsigned)sizeof(T)), "r"(smem_u32(bar))
               : "memory");
}

// A tile of M from shared memory into registers: TR: lane = column, tv[r] = M(r, lane); else
// lane = row, tv[c] = M(lane, c) (conflict-free either way)
template <class T, bool TR, bool RV> __device__ __forceinline__ void tile_regs(T (&tv)[CB], const T *tl, int lane)
{
#pragma unroll
  for (int q = 0; q < CB; q++) tv[q] = TR ? tl[tat<TR, RV>(q, lane)] : tl[tat<TR, RV>(lane, q)];
}
// acc += M(I, J) x_J for a tile in registers: TR: 32 partial row sums (xl: element `lane` of x_J);
// else four chains of row `lane` (xc(c): element c of x_J)
template <class T, bool TR, class XC> __device__ __forceinline__ void tile_fma(T (&acc)[CB], const T (&tv)[CB], T xl, XC xc)
{
  if (TR) {
#pragma unroll
    for (int r = 0; r < CB; r++) acc[r] = fma(tv[r], xl, acc[r]);
  } else {
#pragma unroll
    for (int c = 0; c < CB; c++) acc[c & 3] = fma(tv[c], xc(c), acc[c & 3]);
  }
}
// the row sum of lane's row once every tile is in acc (TR: one reduce-scatter)
template <class T, bool TR> __device__ __forceinline__ T tile_sum(T (&acc)[CB], int lane)
{
  if (TR) return reduce_scatter(acc, lane);
  return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}
// op = T with lane = row (kernel instance ROT): tv[q] = M(lane, c) for c = (q + lane) mod 32, then the op = N
// form of tile_fma / tile_sum with x_J read in the same rotated order, so that the tile (rows of M contiguous: TR's box) and x_J are both read conflict-free and the row
// sums need no reduce-scatter at the end. It shortens the update warp's hand-over of z_I but costs
// address arithmetic per element: measured on the H100 (same lease, two rounds, LT / UT speedup over
// cuBLAS trsv), plain fp64 n = 256 / 512 / 1024: 3.13 / 2.89 -> 3.53 / 3.29x, 3.32 / 3.08 -> 3.67 / 3.46x,
// 3.71 / 3.36 -> 3.82 / 3.53x; but fp64 2048 3.90 -> 3.72x, fp32 n = 1024 / 4096 4.21 -> 3.56x / 4.19 ->
// 3.06x and planned solves 5-25 % slower (the update warps' throughput). So: plain fp64 n <= 1024 only.
template <class T, bool RV> __device__ __forceinline__ void tile_regs_rot(T (&tv)[CB], const T *tl, int lane)
{
#pragma unroll
  for (int q = 0; q < CB; q++) tv[q] = tl[tat<true, RV>(lane, (q + lane) & (CB - 1))];
}
// z = Dinv r, lower part (dr: row `lane` of Dinv; r broadcast through the warp's scratch rv)
template <class T> __device__ __forceinline__ T apply_dinv(const T (&dr)[CB], T r, T *rv, int lane)
{
  rv[lane] = r;
  __syncwarp();
  T z[4] = {T(0), T(0), T(0), T(0)};
#pragma unroll
  for (int c = 0; c < CB; c++)
    if (c <= lane) z[c & 3] = fma(dr[c], rv[c], z[c & 3]);
  __syncwarp();
  return (z[0] + z[1]) + (z[2] + z[3]);
}
// x_I = z_I - P_I(lane, :) x_{I-1}: one row of the critical GEMV (t: P's row in registers). V16: x_{I-1} read by
// 16-byte broadcasts (xp 16-byte aligned; the one-CTA chain), else element by element (the same sums in the same order)
template <class T, bool V16 = false> __device__ __forceinline__ T chain_step(T z, const T (&t)[CB], const T *xp)
{
  T s[4] = {T(0), T(0), T(0), T(0)};
  if constexpr (V16) {
    constexpr int V = 16 / (int)sizeof(T);
    using vec       = typename std::conditional<sizeof(T) == 8, double2, float4>::type;
#pragma unroll
    for (int q = 0; q < CB / V; q++) {
      const vec v = ((const vec *)xp)[q];
      const T   e[4] = {v.x, v.y, V == 4 ? ((const T *)&v)[2] : T(0), V == 4 ? ((const T *)&v)[3] : T(0)};
#pragma unroll
      for (int u = 0; u < V; u++) s[(q * V + u) & 3] = fma(t[q * V + u], e[u], s[(q * V + u) & 3]);
    }
  } else {
#pragma unroll
    for (int c = 0; c < CB; c++) s[c & 3] = fma(t[c], xp[c], s[c & 3]);
  }
  return z - ((s[0] + s[1]) + (s[2] + s[3]));
}
// the reciprocal of the pivot of row `lane` of diagonal tile dg (block row I); a bad pivot is flagged
template <class T, bool TR, bool RV> __device__ __forceinline__ T pivot_rcp(const ClArgs<T> &a, const T *dg, int I, int lane, bool check)
{
  const int  row  = I * CB + lane;
  const bool mine = a.real(row);
  const T    dl   = (!mine || a.unit) ? T(1) : dg[tat<TR, RV>(lane, lane)];
  if (check && mine && !a.unit && sg_trsv_bad_diag(dl, a.pivtol)) sg_dev_flag(a.rep, sg_trsv_diag_class(dl), 0, a.aidx(row), (double)dl);
  return rcp(dl);
}

// y = D^{-1} y for the column this lane holds (forward substitution by columns; D: the diagonal
// tile as copied, rl: the reciprocal of this lane's pivot). No predicates (code size: this runs
// once per launch, from a cold instruction cache): entries above the column's first nonzero stay
// 0 and add nothing; a non-finite entry in row i of D or of y can only make entries of rows
// i' >= i non-finite, i.e. rows that depend on row i's non-finite value anyway, so the first
// non-finite row of x (the one reported) is unchanged. Dummy rows and columns are zero.
template <class T, bool TR, bool RV> __device__ __forceinline__ void lower_subst(T (&y)[CB], const T *dg, T rl)
{
  T r[CB];  // every pivot's reciprocal before the first step: no shuffle on the steps' chain
#pragma unroll
  for (int m = 0; m < CB; m++) r[m] = __shfl_sync(~0u, rl, m);
#pragma unroll
  for (int m = 0; m < CB; m++) {  // row m final, then removed from the rows below it
    y[m] *= r[m];
#pragma unroll
    for (int i = m + 1; i < CB; i++) y[i] = fma(-dg[tat<TR, RV>(i, m)], y[m], y[i]);
  }
}
// The diagonal work of block row I (k-th of its CTA), by its update warp and, where the CTA has
// them, its helper warps: pass 0 inverts the diagonal tile D into dv (Dinv(i, j) at j*CLD + i),
// pass 2 (look-ahead 2) forms Q_I = D^{-1} M(I, I-2) in place in slot cq as pass 1 does P_I,
// pass 1 forms P_I = D^{-1} M(I, I-1) (I > 0) in place of the tile M(I, I-1) (ct, as copied;
// op = N: lane j reads column j with a 16- / 32-way bank conflict, once per block row), stored
// skewed (pskew) for the critical warp, which takes it row by row. Lane j: column j, one
// substitution per pass (a loop, so the unrolled substitution is compiled once). The update warp
// (pass 0) checks the pivots.
template <class T, bool TR, bool RV>
__device__ __forceinline__ void diag_passes(const ClArgs<T> &a, unsigned char *smem, const ClLayout &L, int k, int I, int first, int last, int lane)
{
  unsigned long long *ctb = (unsigned long long *)smem + a.nb + 2 * a.ob, *sb = ctb + a.ob + k * a.rs;
  const T            *dg = (const T *)(smem + L.ring) + (size_t)k * a.rs * CB * CB;  // slot 0 of the update warp's ring
  T                  *ct = (T *)(smem + L.ct) + (size_t)k * CB * CB;
  T                  *dv = (T *)(smem + L.dv) + (size_t)k * CB * CLD;
  mbar_wait(sb, 0);  // the diagonal tile
  if (a.prof && first == 0 && lane == 0) a.prof[4 * a.nb + CS_MAX + I] = gtime();
  const T rl = pivot_rcp<T, TR, RV>(a, dg, I, lane, first == 0);
#pragma unroll 1
  for (int pass = first; pass < last; pass++) {
    T  y[CB];
    T *src = pass == 2 ? (T *)(smem + L.cq) + (size_t)k * CB * CB : ct;
    if (pass) mbar_wait(pass == 2 ? (unsigned long long *)smem + a.wbar0() + k : ctb + k, 0);
    if (pass && !TR) {  // column `lane` of the copied tile is contiguous (reversed for RV): 16-byte loads
      constexpr int V = 16 / (int)sizeof(T);
      using vec = typename std::conditional<sizeof(T) == 8, double2, float4>::type;
      const vec *col = (const vec *)(src + (RV ? CB - 1 - lane : lane) * CB);
#pragma unroll
      for (int q = 0; q < CB / V; q++) {
        const vec v = col[q];
        const T   e[4] = {v.x, v.y, V == 4 ? ((const T *)&v)[2] : T(0), V == 4 ? ((const T *)&v)[3] : T(0)};
#pragma unroll
        for (int u = 0; u < V; u++) y[RV ? CB - 1 - (q * V + u) : q * V + u] = e[u];
      }
    } else {
#pragma unroll
      for (int i = 0; i < CB; i++) y[i] = pass ? src[tat<TR, RV>(i, lane)] : (i == lane ? T(1) : T(0));
    }
    lower_subst<T, TR, RV>(y, dg, rl);
    __syncwarp();  // pass 1: every lane has read the tile before it is overwritten
#pragma unroll
    for (int i = 0; i < CB; i++) {
      if (pass) src[pskew(i, lane)] = y[i];
      else dv[lane * CLD + i] = i >= lane ? y[i] : T(0);
    }
  }
}

// The update warp of owned block row k (I = rank + CS k): its first tensor copies (lane 0) ...
template <class T, bool TR, bool RV, bool LA2> __device__ __forceinline__ void update_issue(const ClArgs<T> &a, const CUtensorMap *map, unsigned char *smem, const ClLayout &L, int k, int I)
{
  const int           rs = a.rs, ntile = I > a.template la<LA2>(I) ? I - a.template la<LA2>(I) : 0;  // tiles (I, 0) .. (I, I-1-la)
  unsigned long long *ctb = (unsigned long long *)smem + a.nb + 2 * a.ob, *sb = ctb + a.ob + k * rs;
  T                  *ct = (T *)(smem + L.ct) + (size_t)k * CB * CB, *ring = (T *)(smem + L.ring) + (size_t)k * rs * CB * CB;
  // slot 0: the diagonal tile until inverted; ring tile t in slot (t + 1) % rs, the ((t + 1) / rs)-th fill of its slot
  tile_copy(a, map, ring, I, I, sb);
  if (I > 0 && (LA2 || !a.ppg)) tile_copy(a, map, ct, I, I - 1, ctb + k);  // (with a plan, P_I comes from it)
  if (I > 1 && LA2) tile_copy(a, map, (T *)(smem + L.cq) + (size_t)k * CB * CB, I, I - 2, (unsigned long long *)smem + a.wbar0() + k);
  const int nseq = ntile + a.sends_w(I);  // ring items: the tiles, then (paired plan, even rows) P_{I+1}
  for (int t = 0; t < rs - 1 && t < nseq; t++) ring_item(a, map, ring + (size_t)((t + 1) % rs) * CB * CB, I, t, ntile, sb + (t + 1) % rs);
}
// ... and, once the diagonal work is done, r_I and z_I
template <class T, bool TR, bool RV, bool ROT, bool LA2>
__device__ void update_stream(const ClArgs<T> &a, const CUtensorMap *map, unsigned char *smem, const ClLayout &L, int k, int I, int lane, bool produced,
                              bool bhave = false, T bpre = T(0))
{
  const int nb = a.nb, rs = a.rs, ntile = I > a.template la<LA2>(I) ? I - a.template la<LA2>(I) : 0;  // tiles (I, 0) .. (I, I-1-la)
  unsigned long long *xbar = (unsigned long long *)smem, *rdyB = xbar + nb + a.ob, *ctb = rdyB + a.ob, *sb = ctb + a.ob + k * rs;
  unsigned long long *eb   = ctb + a.ob + a.ob * rs + k * rs;
  const T *xs   = (const T *)(smem + L.xs);
  const T *dv   = (const T *)(smem + L.dv) + (size_t)k * CB * CLD;
  T       *rv   = (T *)(smem + L.rv) + (size_t)k * CB;
  T       *ring = (T *)(smem + L.ring) + (size_t)k * rs * CB * CB;
  const int row = I * CB + lane;
  if (a.pdl && !bhave) sg_pdl_wait();  // B may be the previous kernel's output
  const T bval = bhave ? bpre : a.real(row) ? a.B[a.aidx(row)] : T(0);
  const int nseq = ntile + (!LA2 && a.sends_w(I));  // ring items: the tiles, then (paired plan, even rows) P_{I+1}
  if (!produced && lane == 0 && rs - 1 < nseq) {
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  // our reads of slot 0 before the copy engine's writes
    ring_item(a, map, ring, I, rs - 1, ntile, sb);
  }
  // ---- r_I = b_I - sum_{J <= I-1-la} M(I, J) x_J; each tile is read into registers before its x_J
  // is waited for (the last one is on the critical path)
  T dr[CB];  // row `lane` of Dinv, for z_I
  if (!LA2 && a.pdg) {
    const T *pd = a.pdg + (size_t)I * CB * CB + lane;
#pragma unroll
    for (int c = 0; c < CB; c++) dr[c] = __ldg(pd + c * CB);
  } else {
#pragma unroll
    for (int c = 0; c < CB; c++) dr[c] = dv[c * CLD + lane];
  }
  T acc[CB];
#pragma unroll
  for (int i = 0; i < CB; i++) acc[i] = T(0);
  // ring item t: slot q % rs of fill q / rs, q = t (produced) or t + 1 (slot 0 held the diagonal tile
  // first); s and ph follow q without a division (a runtime modulo per tile lengthened the loop)
  int      s  = produced ? 0 : 1;  // (rs >= 2)
  unsigned ph = 0;
  for (int t = 0; t < ntile; t++) {
    mbar_wait(sb + s, ph);
    const T *tl = ring + (size_t)s * CB * CB;
    const T *xj = xs + (size_t)t * CB;
    T        tv[CB];
    if (TR && ROT) tile_regs_rot<T, RV>(tv, tl, lane);
    else tile_regs<T, TR, RV>(tv, tl, lane);
    __syncwarp();  // the slot is read: refill it with tile t + rs
    if (produced) {
      if (lane == 0) mbar_arrive(eb + s);  // (release: the producer refills it)
    } else if (lane == 0 && t + rs < nseq) {
      asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
      ring_item(a, map, (T *)tl, I, t + rs, ntile, sb + s);
    }
    bar_wait_cluster(xbar + t);
    if (TR && ROT) tile_fma<T, false>(acc, tv, T(0), [&](int q) { return xj[(q + lane) & (CB - 1)]; });
    else tile_fma<T, TR>(acc, tv, TR ? xj[lane] : T(0), [&](int c) { return xj[c]; });
    if (++s == rs) {
      s = 0;
      ph ^= 1;
    }
  }
  const T sum = TR && ROT ? tile_sum<T, false>(acc, lane) : tile_sum<T, TR>(acc, lane);
  rv[lane]    = apply_dinv(dr, bval - sum, rv, lane);  // z_I = Dinv_I r_I
  if (a.prof && lane == 0) a.prof[4 * I + 1] = gtime();
  mbar_arrive(rdyB + k);
  if (a.sends_w(I)) {  // paired plan: w_{I+1} = P_{I+1} z_I (P_{I+1}: the ring's last item, s and ph now) into the CTA of block row I+1
    mbar_wait(sb + s, ph);
    __syncwarp();  // every lane's z_I in rv
    const T *pn = ring + (size_t)s * CB * CB;
    T        w[4] = {T(0), T(0), T(0), T(0)};
#pragma unroll
    for (int c = 0; c < CB; c++) w[c & 3] = fma(pn[c * CB + lane], rv[c], w[c & 3]);
    const unsigned cs = cl_size(), dst = (unsigned)(I + 1) % cs, kd = (unsigned)(I + 1) / cs;
    unsigned long long *wbar = xbar + a.wbar0() + kd;
    T *wv = (T *)(smem + L.wv) + (size_t)kd * CB + lane;
    st_async_1(cl_map(smem_u32(wv), dst), (w[0] + w[1]) + (w[2] + w[3]), cl_map(smem_u32(wbar), dst));
  }
}

// A plan's solve: the copies of update warp k's tiles (I, 0) .. (I, I-1-la), tile t into ring slot t % rs
// once the update warp has released the slot's previous tile (eb). Lane 0 of an otherwise idle helper
// warp issues them, so that the update warp, which works at the chain's pace, never stalls on issuing
// a tensor copy. Only A is read (no wait for the kernel before: programmatic launch).
template <class T> __device__ void producer_warp(const ClArgs<T> &a, const CUtensorMap *map, unsigned char *smem, const ClLayout &L, int k, int I)
{
  const int           rs = a.rs, ntile = I > a.template la<false>(I) ? I - a.template la<false>(I) : 0;  // (a plan's solve)
  unsigned long long *sb = (unsigned long long *)smem + a.nb + 3 * a.ob + k * rs, *eb = sb + a.ob * rs;
  T                  *ring = (T *)(smem + L.ring) + (size_t)k * rs * CB * CB;
  const int nseq = ntile + a.sends_w(I);  // ring items: the tiles, then (paired plan, even rows) P_{I+1}
  unsigned pf = 1;  // parity of the release of the slot's previous item, fill (t / rs - 1) (no division)
  for (int t = 0, s = 0; t < nseq; t++) {
    if (t >= rs) {
      mbar_wait(eb + s, pf);
      asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  // the update warp's reads of the slot before the copy engine's writes
    }
    ring_item(a, map, ring + (size_t)s * CB * CB, I, t, ntile, sb + s);
    if (++s == rs) {
      s = 0;
      pf ^= 1;
    }
  }
}

// x_I (lane r holds row r) into every CTA's x window, counted on its xbar[I]: 16-byte stores
// (fp64 pairs, fp32 quads gathered by shuffles), each lane serving a few CTAs
__device__ __forceinline__ void st_async_v(unsigned raddr, double v0, double v1, unsigned rbar)
{
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.b64 [%0], {%1, %2}, [%3];\n" ::"r"(raddr), "l"(__double_as_longlong(v0)),
               "l"(__double_as_longlong(v1)), "r"(rbar)
               : "memory");
}
__device__ __forceinline__ void st_async_v(unsigned raddr, float v0, float v1, float v2, float v3, unsigned rbar)
{
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [%0], {%1, %2, %3, %4}, [%5];\n" ::"r"(raddr), "r"(__float_as_uint(v0)),
               "r"(__float_as_uint(v1)), "r"(__float_as_uint(v2)), "r"(__float_as_uint(v3)), "r"(rbar)
               : "memory");
}
// The cluster addresses of the x window and barriers of the CTAs this lane sends to, mapped once
// (mapa is linear in the offset): entry i is rank + 1 + lane / G + i * (32 / G), modulo cs
template <class T> struct BcastMap {
  static constexpr int V = 16 / (int)sizeof(T), G = CB / V, N = (CS_MAX * G + 31) / 32;
  unsigned             xs[N], bar[N];
  int                  cnt;
  __device__ BcastMap(unsigned xs0, unsigned bar0, unsigned rank, unsigned cs, int lane) : cnt(0)
  {
#pragma unroll
    for (int i = 0; i < N; i++) {
      const unsigned h = (unsigned)(lane / G) + (unsigned)i * (32 / G);
      unsigned       q = rank + 1 + h;
      q                = q >= cs ? q - cs : q;
      if (h < cs) {
        xs[i]  = cl_map(xs0, q);
        bar[i] = cl_map(bar0, q);
        cnt    = i + 1;
      }
    }
  }
};
// (block I into block `slot` of the x window, counted on xbar[I]; the next ranks first, as they
// own the next block rows)
template <class T> __device__ __forceinline__ void broadcast(T x, int slot, int I, const BcastMap<T> &m, int lane)
{
  constexpr int V = BcastMap<T>::V, G = BcastMap<T>::G;
  const int     g = lane % G;
  T             v[V];
#pragma unroll
  for (int e = 0; e < V; e++) v[e] = __shfl_sync(~0u, x, g * V + e);
  const unsigned off = (unsigned)((slot * CB + g * V) * sizeof(T)), bo = (unsigned)(I * 8);
#pragma unroll
  for (int i = 0; i < BcastMap<T>::N; i++) {
    if (i >= m.cnt) break;
    if constexpr (V == 2) st_async_v(m.xs[i] + off, v[0], v[1], m.bar[i] + bo);
    else st_async_v(m.xs[i] + off, v[0], v[1], v[2], v[3], m.bar[i] + bo);
  }
}

template <class T, bool TR, bool RV, bool LA2> __device__ void critical_warp(const ClArgs<T> &a, unsigned char *smem, const ClLayout &L, unsigned rank, unsigned cs, int lane)
{
  const int           nb   = a.nb;
  unsigned long long *xbar = (unsigned long long *)smem, *rdyA = xbar + nb, *rdyB = rdyA + a.ob;
  T                  *xs   = (T *)(smem + L.xs);
  const unsigned      xs0 = smem_u32(xs), bar0 = smem_u32(xbar);
  const BcastMap<T>   bm(xs0, bar0, rank, cs, lane);
  bool                waited = !a.pdl;
  for (int k = 0;; k++) {
    const int I = (int)rank + (int)cs * k;
    if (I >= nb) break;
    const T *ct = (const T *)(smem + L.ct) + (size_t)k * CB * CB;
    // P_I = Dinv_I M(I, I-1): lane r takes row r
    T          t[CB], q[CB];
    const bool odd = !LA2 && a.phg && (I & 1);  // paired plan, odd row: x_I = z_I - G_I x_{I-3} - H_I x_{I-2} - w_I
    if (odd) {  // H_I, G_I from the plan (I = 1: none)
      const T *ph = a.phg + (size_t)I * CB * CB + lane, *pg = a.pgg + (size_t)I * CB * CB + lane;
#pragma unroll
      for (int c = 0; c < CB; c++) t[c] = I > 2 ? __ldg(ph + c * CB) : T(0);
#pragma unroll
      for (int c = 0; c < CB; c++) q[c] = I > 2 ? __ldg(pg + c * CB) : T(0);
    } else if (!LA2 && a.ppg) {  // from the plan, before any wait
      const T *pp = a.ppg + (size_t)I * CB * CB + lane;
#pragma unroll
      for (int c = 0; c < CB; c++) t[c] = I > 0 ? __ldg(pp + c * CB) : T(0);
      if (a.pqg) {  // Q_I's row too
        const T *pq = a.pqg + (size_t)I * CB * CB + lane;
#pragma unroll
        for (int c = 0; c < CB; c++) q[c] = I > 1 ? __ldg(pq + c * CB) : T(0);
      }
    } else {
      mbar_wait(rdyA + k, 0);
      if (I > 0) {
#pragma unroll
        for (int c = 0; c < CB; c++) t[c] = ct[pskew(lane, c)];
      }
      if (I > 1 && LA2) {  // Q_I (look-ahead 2)
        const T *cq = (const T *)(smem + L.cq) + (size_t)k * CB * CB;
#pragma unroll
        for (int c = 0; c < CB; c++) q[c] = cq[pskew(lane, c)];
      }
    }
    mbar_wait(rdyB + k, 0);
    T xv = ((const T *)(smem + L.rv))[k * CB + lane];  // z_I
    if (odd) {  // x_{I-3}, x_{I-2} (the previous pair), then w_I = P_I z_{I-1} (sent by block row I-1's update warp)
      if (I > 2) {
        bar_wait_cluster(xbar + I - 3);
        xv = chain_step(xv, q, xs + (size_t)(I - 3) * CB);
        bar_wait_cluster(xbar + I - 2);
        if (a.prof && lane == 0) a.prof[4 * I + 2] = gtime();
        xv = chain_step(xv, t, xs + (size_t)(I - 2) * CB);
      }
      bar_wait_cluster(xbar + a.wbar0() + k);
      xv -= ((const T *)(smem + L.wv))[k * CB + lane];
    } else {
      if ((a.pqg || LA2) && I > 1) {  // z_I - Q_I x_{I-2} as soon as x_{I-2} is here (a step before x_{I-1})
        bar_wait_cluster(xbar + I - 2);
        xv = chain_step(xv, q, xs + (size_t)(I - 2) * CB);
      }
      if (I > 0) {
        bar_wait_cluster(xbar + I - 1);
        if (a.prof && lane == 0) a.prof[4 * I + 2] = gtime();
        xv = chain_step(xv, t, xs + (size_t)(I - 1) * CB);
      }
    }
    const int  row  = I * CB + lane;
    const bool real = a.real(row);
    if (!real) xv = T(0);
    if (a.prof && lane == 0) a.prof[4 * I + 3] = gtime();
    broadcast(xv, I, I, bm, lane);
    if (!waited) {  // X (and the report) may still be read by the previous kernel (X = its B)
      sg_pdl_wait();
      waited = true;
    }
    if (real) {
      if (!(fabs(xv) < (T)INFINITY)) sg_dev_flag(a.rep, SG_FAIL_RESULT, 0, a.aidx(row), (double)xv);
      a.X[a.aidx(row)] = xv;
    }
  }
}

// A plain solve: does owned row k have a helper warp of its own for pass `pass` (1: P_I, 2: Q_I)? The
// warps after the update warps help rows 0, 1, ... in turn (with look-ahead 2, P then Q of each).
template <bool LA2, class T> __device__ __forceinline__ bool cl_helped(const ClArgs<T> &a, int k, int pass)
{
  const int nw = (int)(blockDim.x / 32), h = LA2 ? 2 * k + pass - 1 : pass == 1 ? k : nw;
  return 1 + a.ob + h < nw;
}

// Instances: ROT (op = T only) takes the update warps with lane = row (tile_regs_rot), LA2 a plain
// solve with look-ahead 2 (where each CTA owns one block row; never a plan's solve, so its instances
// compile no plan path: every test of a plan pointer or of prod reads `!LA2 && ...`). As runtime switches (ba56873, 216064d)
// they cost the op = T instances that take neither 3-13 % at n = 1024-4096, planned solves included
// (fp32 LT 4096 with a plan 49.3 -> 55.9 us); as instances of their own the others compile as before
// (48.2-49.2 us). Against 76f8a8b's kernel (H100, same lease, bench/trsv/README.md, 2026-11-28): plain
// n <= 512 3-18 % faster, plain op = N n = 1024-2048 still 1-5 % slower (cause not found: not the prefetch,
// not b loaded early, not the reciprocal shuffles, not these switches), planned solves equal.
template <class T, bool TR, bool RV, bool ROT, bool LA2> __global__ void __launch_bounds__(32 * cl_warps<T>(), 1) trsv_cluster_kernel(const ClArgs<T> a, const __grid_constant__ CUtensorMap tmap)
{
  extern __shared__ __align__(128) unsigned char smem[];
  const unsigned rank = cl_rank(), cs = cl_size();
  const ClLayout L = cl_layout<T>(a.nb, a.ob, a.rs, !LA2 && a.pdg != nullptr, LA2);
  const int      lane = threadIdx.x % 32, w = threadIdx.x / 32;
  unsigned long long *xbar = (unsigned long long *)smem, *rdyA = xbar + a.nb;
  if (a.prof && threadIdx.x == 0) a.prof[4 * a.nb + rank] = gtime();
  if (a.pdl) sg_pdl_open();  // the next solve may start now (a plan's solve: its copies of A and of the plan, which cannot change while the plan lives)
  if (a.pf && w >= 1 && w <= a.ob) {  // a plain solve waits for the kernel before to end before it reads A or B: meanwhile, warm L2
    const int I = (int)rank + (int)cs * (w - 1);
    if (I < a.nb) {
      if (lane == 0) {
        asm volatile("prefetch.tensormap [%0];\n" ::"l"((unsigned long long)&tmap) : "memory");
        int row, col;
        const int ntile = I > a.template la<LA2>(I) ? I - a.template la<LA2>(I) : 0;
        for (int J = I; J >= 0 && J >= I - (LA2 ? 2 : 1); J--) {  // the diagonal tile, M(I, I-1) (and M(I, I-2)) first (the start-up's critical path) ...
          a.box(I, J, row, col);
          tma_prefetch_2d(&tmap, row, col);
        }
        for (int J = 0; J < ntile && J < (a.pf > 1 ? RING_MAX : 0); J++) {  // ... then the first tiles of the update warp's ring
          a.box(I, J, row, col);
          tma_prefetch_2d(&tmap, row, col);
        }
      }
      if (a.real(I * CB + lane)) asm volatile("prefetch.global.L2 [%0];\n" ::"l"(a.B + a.aidx(I * CB + lane)) : "memory");
    }
  }
  if (threadIdx.x == 0) {
    // (every init, then every expect: the expect right after its own barrier's init waits out the init, ~48 against
    // ~20 cycles per barrier, experiments-20261128e/mbinit.cu)
    for (int J = 0; J < a.nb; J++) bar_init(xbar + J, 1);
    for (int J = 0; J < a.nb; J++) mbar_expect(xbar + J, CB * (unsigned)sizeof(T));  // the phase's arrival; completes when the block's bytes have come
    for (int k = 0; k < a.ob; k++) bar_init(rdyA + k, 32 * (1 + cl_helped<LA2>(a, k, 1) + cl_helped<LA2>(a, k, 2)));  // the update warp's lanes and its helpers'
    for (int k = 0; k < a.ob; k++) bar_init(rdyA + a.ob + k, 32);                                         // rdyB: the update warp's lanes
    for (int k = 0; k < a.ob * (1 + 2 * a.rs); k++) bar_init(rdyA + 2 * a.ob + k, 1);  // ctb, ring slots: one expect each; eb: one arrival
    if (LA2)  // plain solve, look-ahead 2: qbar, one expect each
      for (int k = 0; k < a.ob; k++) bar_init(xbar + a.wbar0() + k, 1);
    if (!LA2 && a.phg)  // paired plan: each odd row I gets w_I from row I-1's CTA
      for (int e = 0; e < 2; e++)  // (inits, then expects)
        for (int k = 0; k < a.ob; k++) {
          if (!(((int)rank + (int)cs * k) & 1)) continue;
          if (e == 0) bar_init(xbar + a.wbar0() + k, 1);
          else mbar_expect(xbar + a.wbar0() + k, CB * (unsigned)sizeof(T));
        }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  cl_sync();  // every CTA's barriers exist before anyone sends
  if (a.prof && threadIdx.x == 0) a.prof[5 * a.nb + CS_MAX + rank] = gtime();
  // without a plan A may be the previous kernel's output too: every thread waits before any read
  // (the launch and the barriers' set-up above still overlap the kernel before)
  if (a.pdl && (LA2 || !a.pdg)) sg_pdl_wait();
  if (w == 0) {
    critical_warp<T, TR, RV, LA2>(a, smem, L, rank, cs, lane);
    if (lane == 0)  // stay until every x block has landed here (the st.async of other CTAs target this CTA)
      for (int J = 0; J < a.nb; J++) bar_wait_cluster(xbar + J);
    __syncwarp();
  } else if (!LA2 && a.prod) {  // a plan's solve: update warps, and helper warps as producers of the last rows' update warps
    const int nw = (int)(blockDim.x / 32), np = nw - 1 - a.ob;  // producers
    if (w <= a.ob) {
      const int k = w - 1, I = (int)rank + (int)cs * k;
      if (I < a.nb) {
        const bool produced = k >= a.ob - np;
        if (!produced) {
          if (lane == 0) update_issue<T, TR, RV, LA2>(a, &tmap, smem, L, k, I);
          mbar_wait((unsigned long long *)smem + a.nb + 3 * a.ob + k * a.rs, 0);  // slot 0's first fill (the diagonal tile) has landed
        }
        if (a.prof && lane == 0) a.prof[4 * I] = gtime();
        update_stream<T, TR, RV, ROT, LA2>(a, &tmap, smem, L, k, I, lane, produced);
      }
    } else {
      const int k = a.ob - 1 - (w - 1 - a.ob), I = (int)rank + (int)cs * k;
      if (k >= 0 && I < a.nb && lane == 0) producer_warp<T>(a, &tmap, smem, L, k, I);
    }
  } else {  // update warp (w <= ob) or helper warp of block row k: P_I (role 1), Q_I (role 2, look-ahead 2) beside the update warp's Dinv
    const bool upd = w <= a.ob;
    const int  h = w - 1 - a.ob, role = upd ? 0 : LA2 ? 1 + (h & 1) : 1;  // helpers: (row 0, P), (row 0, Q), (row 1, P), ...
    const int  k = upd ? w - 1 : LA2 ? h >> 1 : h, I = (int)rank + (int)cs * k;
    if (k < a.ob && I < a.nb) {
      const bool helped = cl_helped<LA2>(a, k, 1), helped2 = cl_helped<LA2>(a, k, 2);
      // the passes of row I (0: Dinv, 1: P_I, 2: Q_I), each warp a contiguous range: the last
      // worker of the row takes the passes that have no warp of their own
      const int  lastp = I == 0 ? 1 : I == 1 || !LA2 ? 2 : 3;
      const int  pl = std::min(lastp, role == 0 ? (helped ? 1 : lastp) : role == 1 ? (helped2 ? 2 : lastp) : lastp);
      if (upd && lane == 0) update_issue<T, TR, RV, LA2>(a, &tmap, smem, L, k, I);
      // b before the diagonal work, so that its load overlaps it (A, B readable: no plan, the wait above)
      const bool bhave = upd && a.bpre && (LA2 || !a.pdg);
      const T    bpre  = bhave && a.real(I * CB + lane) ? a.B[a.aidx(I * CB + lane)] : T(0);
      if (LA2 || !a.pdg) diag_passes<T, TR, RV>(a, smem, L, k, I, role, pl > role ? pl : role, lane);
      else if (upd) mbar_wait((unsigned long long *)smem + a.nb + 3 * a.ob + k * a.rs, 0);  // with a plan: slot 0's first fill (the diagonal tile) has landed
      __syncwarp();
      if (upd && a.prof && lane == 0) a.prof[4 * I] = gtime();
      mbar_arrive(rdyA + k);  // Dinv / P_I visible to the critical warp
      if (upd) {
        if (helped) mbar_wait(rdyA + k, 0);  // the helpers are done with slot 0 too
        update_stream<T, TR, RV, ROT, LA2>(a, &tmap, smem, L, k, I, lane, false, bhave, bpre);
      }
    }
  }
}

// A paired plan (one-cluster kernel's orders): for every odd block row o >= 3, from the plan's
// Dinv, P, Q and the tile M(o, o-3), H_o = Q_o - P_o P_{o-1} and G_o = Dinv_o M(o, o-3) - P_o Q_{o-1}
// (column-major, as in the plan). Then x_o = z_o - G_o x_{o-3} - H_o x_{o-2} - P_o z_{o-1}, with z_o
// over the tiles J <= o-4: both rows of a pair (o-1, o) depend only on the pair before, and the
// chain takes one step per two block rows. One warp per odd row, lane c: column c.
template <class T> __global__ void __launch_bounds__(32) trsv_pair_kernel(const ClArgs<T> a, const T *A, long long lda, T *hg, T *gg)
{
  const int o = 2 * (int)blockIdx.x + 3, lane = (int)threadIdx.x;
  if (o >= a.nb) return;
  const size_t TT = (size_t)CB * CB;
  const T     *dgo = a.pdg + o * TT, *pgo = a.ppg + o * TT, *pgp = a.ppg + (o - 1) * TT, *qgp = a.pqg + (o - 1) * TT, *qgo = a.pqg + o * TT;
  T            m[CB], qc[CB], pc[CB];  // column `lane` of M(o, o-3), Q_{o-1}, P_{o-1}
  const int    j = a.aidx((o - 3) * CB + lane);
#pragma unroll
  for (int k = 0; k < CB; k++) {
    const int i = a.aidx(o * CB + k);
    m[k]        = i < a.n && j < a.n ? (a.trans ? A[j + (size_t)i * lda] : A[i + (size_t)j * lda]) : T(0);
    qc[k]       = qgp[lane * CB + k];
    pc[k]       = pgp[lane * CB + k];
  }
#pragma unroll 1
  for (int r = 0; r < CB; r++) {
    T rv = T(0), pq = T(0), pp = T(0);
#pragma unroll
    for (int k = 0; k < CB; k++) {
      const T d = dgo[k * CB + r], p = pgo[k * CB + r];  // Dinv_o(r, k), P_o(r, k): the same for every lane
      rv        = fma(d, m[k], rv);
      pq        = fma(p, qc[k], pq);
      pp        = fma(p, pc[k], pp);
    }
    gg[o * TT + lane * CB + r] = rv - pq;
    hg[o * TT + lane * CB + r] = qgo[lane * CB + r] - pp;
  }
}

// ================================================================ larger n: the chain on one
// cluster, the bulk of the matrix on helper CTAs (trsv_hybrid_solve)
//
// One launch of clusters of CS CTAs. The first cluster to start (a ticket) is the chain: block
// rows of 32 dealt round-robin to its CTAs as above, but with persistent warps (the critical
// warp, U update warps taking every U-th owned row) and an x window of XR blocks (ring) instead
// of all of x. The update warp of block row I sums only the window tiles M(I, J), I-W < J <=
// I-1-LA, and takes Dinv_I, P_I (Q_I) and the sum S_I of the rest from the helpers. Look-ahead
// LA = 1: the critical warp forms x_I = z_I - P_I x_{I-1}; LA = 2 (op = T by default): it also
// subtracts Q_I x_{I-2}, Q_I = Dinv_I M(I, I-2), as soon as x_{I-2} is there, so the update
// warp's tail (for op = T a reduce-scatter) overlaps two steps of the chain instead of one.
// The helpers are the other clusters'
// first HW warps, each an independent worker taking jobs by ticket from a table (the
// inversions of the first PD block rows, then row by row the inversion of row I + PD and the
// chunks of row I):
//  - inversion job of row I: Dinv_I, P_I = Dinv_I M(I, I-1) (and Q_I) by substitution into
//    the workspace, then a release flag (the epoch);
//  - chunk job (I, c): sum_{J in chunk c} M(I, J) x_J over at most CT tiles with J <= I-W, x_J
//    read in LL form (NCCL's low-latency words: the value and the call's epoch), published by
//    the chain's critical warp. A row's chunk partials are added in chunk order by the chunk
//    that finishes last (a counter; deterministic), which publishes S_I in LL form.
// Each helper warp streams its jobs' tiles through its own ring of tensor copies, one job ahead.
// Deadlock-free whatever the scheduler does: the chain is the first cluster to run (so
// resident); a job waits only for x_J that need jobs of smaller tickets (and the chain), and a
// warp holds at most one ticket beyond the one it works on, which is larger.
// The x window is safe to reuse: x_{J+XR} is formed after every CTA's last read of x_J (each
// CTA owns a row within the next CS + 1 whose window holds x_J, as W >= CS + 2, and XR > W).
constexpr int HY_WARPS = 8;      // warps per CTA (both roles; fp64 gets 255 registers)
constexpr int HY_RING_MAX = 16;  // helper ring slots per warp, at most
constexpr int HY_XPF = 6;        // helper: x loads in flight (tiles ahead)
constexpr int HY_LMAX = 4;       // P_{I,k} blocks per row, at most (HyArgs::lp)
constexpr int HY_XP = 8;         // the one-CTA chain: x blocks CTA 0 keeps (a ring, > HY_LMAX)

template <class T> struct HyArgs : ClArgs<T> {
  using R = typename LLw<T>::raw;
  int        W, CT, E, U, xr, nbar, hw, hrs, njobs, maxch;  // window, tiles per chunk, update warps, x window blocks and their barriers (hy_nbar), helper warps per CTA and their ring slots, jobs
  int        la;  // look-ahead: 1: x_I = z_I - P_I x_{I-1}; 2: x_I = z_I - Q_I x_{I-2} - P_I x_{I-1} (the update warps stop at I-3)
  const int *jobs;                          // (I << 12) | (c << 1) | HY_DIAG
  unsigned  *ctl;  // [0] job ticket, [1] CTAs done, [2] cluster ticket; cnt[nb] at 4, dflag[nb] after it
  R         *xll, *sll;                 // x_I, S_I: LL words [I * CB + r]
  T         *dg, *pg, *qg;              // Dinv_I, P_I, Q_I: column-major 32 x 32, [I * CB * CB + c * CB + r]
  T         *part;                      // chunk partial sums, [(I * maxch + c) * CB + r]
  unsigned   epoch;
  bool       hfence;  // helpers: proxy fence before refilling a slot (SG_TRSV_HYB_FENCE, experiment)
  bool       ttail;   // op = T update warps: the window partials summed through shared memory (transpose_sum, SG_TRSV_T_TAIL), not by the reduce-scatter
  bool       pre;     // Dinv_I, P_I (Q_I) are already in dg, pg (qg): no inversion jobs, no flags to wait for
  // The blocks P_{I,k} = Dinv_I M(I, I-k), k = 1 .. lp, that the inversion jobs form (P_{I,1} = P_I, P_{I,2} = Q_I; in
  // pg + ((k - 1) * nb + I) * CB * CB): lp >= la, and lp > 2 only for the one-CTA chain (one) or a plan made for it.
  int        lp;
  // the one-CTA chain (the ONE kernel instance; hy_one_*, below; a filled plan only): a z ring of zr blocks, a P ring of
  // pr rows, b2 B2 warps (1 or 2)
  int        zr, pr, b2;
  bool       spref;  // a plan's solve: the chain CTAs' first rows' blocks and b prefetched into L2 at the start (hy_start_prefetch)
  __device__ __forceinline__ unsigned *cnt() const { return ctl + 4; }
  __device__ __forceinline__ unsigned *dflag() const { return ctl + 4 + this->nb; }
};
// shared memory of a chain CTA: barriers xbar[nbar] (the x window's ring of barriers: hy_nbar, trsv_hybrid_jobs.hpp),
// rdy[U], fre[U], sb[U * rs] | x window | P slots | z | scratch | rings
struct HyChainLayout {
  size_t xs, ps, zs, rv, ring, total;
};
template <class T> __host__ __device__ inline HyChainLayout hy_chain_layout(int nbar, int U, int rs, int xr, int la)
{
  HyChainLayout L;
  L.xs    = ((size_t)(nbar + 2 * U + U * rs) * 8 + 127) / 128 * 128;
  L.ps    = L.xs + (size_t)xr * CB * sizeof(T);
  L.zs    = L.ps + (size_t)la * U * CB * CB * sizeof(T);  // P slots, then (la = 2) Q slots
  L.rv    = L.zs + (size_t)U * CB * sizeof(T);
  L.ring  = (L.rv + (size_t)U * CB * sizeof(T) + 127) / 128 * 128;
  L.total = L.ring + (size_t)U * rs * CB * CB * sizeof(T);
  return L;
}
// of a helper CTA: barriers hb[hw * hrs] | rings
template <class T> __host__ __device__ inline size_t hy_helper_ring(int hw, int hrs) { return ((size_t)hw * hrs * 8 + 127) / 128 * 128; }
template <class T> __host__ __device__ inline size_t hy_helper_bytes(int hw, int hrs) { return hy_helper_ring<T>(hw, hrs) + (size_t)hw * hrs * CB * CB * sizeof(T); }

template <class T, bool TR, bool RV> __device__ void hy_critical(const HyArgs<T> &a, unsigned char *smem, const HyChainLayout &L, unsigned rank, unsigned cs, int lane)
{
  const int           nb = a.nb, U = a.U, xr = a.xr, nbar = a.nbar;
  unsigned long long *xbar = (unsigned long long *)smem, *rdy = xbar + nbar, *fre = rdy + U;
  const T            *xs = (const T *)(smem + L.xs);
  const unsigned      xs0 = smem_u32(xs), bar0 = smem_u32(xbar);
  const BcastMap<T>   bm(xs0, bar0, rank, cs, lane);
  int      q = 0;   // k % U (no division)
  unsigned qp = 0;  // (k / U) & 1
  unsigned pI = 0;  // (I / nbar) & 1 (rank < cs < nbar, or nbar = nb)
  for (int k = 0, sI = (int)rank, bI = (int)rank;; k++) {  // sI = I % xr, bI = I % nbar, no division
    const int I = (int)rank + (int)cs * k;
    if (I >= nb) break;
    auto xin = [&](int d) -> const T * {  // x_{I-d} (d = 1, 2) once it has landed here (its barrier's phase)
      const int sj = sI - d, bj = bI - d;
      bar_wait_cluster(xbar + (bj < 0 ? bj + nbar : bj), bj < 0 ? pI ^ 1u : pI);
      return xs + (size_t)(sj < 0 ? sj + xr : sj) * CB;
    };
    if (k > 0 && ++q == U) {
      q = 0;
      qp ^= 1;
    }
    mbar_wait(rdy + q, qp);
    if (a.prof && I == 0 && lane == 0) a.prof[5 * nb + 4] = gtime();  // (start-up: z_0 taken)
    T xv = ((const T *)(smem + L.zs))[q * CB + lane];
    T t[CB];
    if (a.la == 2 && I > 1) {  // z_I - Q_I x_{I-2} as soon as x_{I-2} is here (a period before x_{I-1})
#pragma unroll
      for (int c = 0; c < CB; c++) t[c] = ((const T *)(smem + L.ps))[(U + q) * CB * CB + pskew(lane, c)];
      xv = chain_step(xv, t, xin(2));
    }
    if (I > 0) {
#pragma unroll
      for (int c = 0; c < CB; c++) t[c] = ((const T *)(smem + L.ps))[q * CB * CB + pskew(lane, c)];
    }
    mbar_arrive(fre + q);  // P_I, Q_I and z_I taken: the slot is free
    if (I > 0) xv = chain_step(xv, t, xin(1));
    const int  row  = I * CB + lane;
    const bool real = a.real(row);
    if (!real) xv = T(0);
    if (a.prof && lane == 0) a.prof[4 * I + 3] = gtime();
    broadcast(xv, sI, bI, bm, lane);  // (into slot sI, counted on barrier bI)
    ll_st(a.xll + (size_t)I * CB + lane, xv, a.epoch);  // for the helpers
    if (real) {
      if (!(fabs(xv) < (T)INFINITY)) sg_dev_flag(a.rep, SG_FAIL_RESULT, 0, a.aidx(row), (double)xv);
      a.X[a.aidx(row)] = xv;
    }
    sI = sI + (int)cs >= xr ? sI + (int)cs - xr : sI + (int)cs;
    if (bI + (int)cs >= nbar) {
      bI += (int)cs - nbar;
      pI ^= 1u;
    } else {
      bI += (int)cs;
    }
  }
}

// The one-CTA chain (ONE instances): CTA 0 of the chain's cluster owns no block row; five of its warps form every x_I:
//  - the producer (warp 2, lane 0) copies row J's blocks P_{J,1} .. P_{J,min(J,la)} of the plan into slot J % pr of
//    the P ring (bulk copies; full barrier pf, empty barrier pe: the lanes of A, B1, B2);
//  - warp B2 (warp 3) takes z_I (sent by row I's update warp into slot I % zr of the z ring) and forms
//    v_I = z_I - sum_{k = 3 .. la} P_{I,k} x_{I-k} (x blocks that are there) into the v ring;
//  - warp B1 (warp 1) forms w_I = v_I - P_{I,2} x_{I-2} once x_{I-2} is there, into the w ring;
//  - the critical warp A (warp 0) forms x_I = w_I - P_{I,1} x_{I-1} into its x ring (slot I % HY_XP, barrier xrb);
//  - warp C (warp 4) sends x_I to every CTA of the cluster (x windows) and to the helpers (LL words), stores it, and
//    frees its slot (xcb).
// No x block crosses a CTA on the chain's step: A's only wait is for w_I, one GEMV of B1 after x_{I-2}.
// Shared memory of CTA 0 (the chain layout, its update-warp parts unused): zbar[zr], pf[pr], pe[pr] in place of rdy,
// fre, sb; wbar, vbar[HY_WR], xrb, xcb[HY_XP] in the scratch rv; the z ring (zr blocks), the x ring (HY_XP), the w
// and v rings (HY_WR) in the P slots; the P ring (pr rows of la blocks, P_{I,k} at (s * la + k - 1) * CB * CB,
// column-major as in the plan: lane r reads row r conflict-free) in the update warps' rings.
// Flow: z_I is sent only after x_{I-1-la} has reached its update warp, i.e. after B2 has taken z_{I-zr} (zr > la) and
// re-armed the slot's barrier; v_J and w_J are written only after x_{J-2} (or z_J: after x_{J-2}), i.e. after their
// slots' previous blocks J - HY_WR were taken; A overwrites x_J's slot with x_{J+HY_XP} only after C took x_J and
// after B1 / B2's row J + HY_XP > J + la (the last to read x_J) gave w_{J+HY_XP}. Every barrier's phases are waited
// in order by warps that cannot fall two phases behind (the same arguments).
constexpr int HY_WR = 4;  // w and v ring slots
struct HyOneSmem {
  unsigned long long *zbar, *pf, *pe, *wbar, *vbar, *xrb, *xcb;
  size_t              zring, xp, wring, vring;  // byte offsets of the rings (in the P slots)
};
template <class T> __device__ __forceinline__ HyOneSmem hy_one_smem(const HyArgs<T> &a, unsigned char *smem, const HyChainLayout &L)
{
  HyOneSmem m;
  m.zbar  = (unsigned long long *)smem + a.nbar;
  m.pf    = m.zbar + a.zr;
  m.pe    = m.pf + a.pr;
  m.wbar  = (unsigned long long *)(smem + L.rv);
  m.vbar  = m.wbar + HY_WR;
  m.xrb   = m.vbar + HY_WR;
  m.xcb   = m.xrb + HY_XP;
  m.zring = L.ps;
  m.xp    = m.zring + (size_t)a.zr * CB * sizeof(T);
  m.wring = m.xp + (size_t)HY_XP * CB * sizeof(T);
  m.vring = m.wring + (size_t)HY_WR * CB * sizeof(T);
  return m;
}
// (its barriers, by thread 0 of CTA 0)
template <class T> __device__ void hy_one_init(const HyArgs<T> &a, unsigned char *smem, const HyChainLayout &L)
{
  const HyOneSmem m = hy_one_smem(a, smem, L);
  for (int k = 0; k < a.zr; k++) bar_init(m.zbar + k, 1);
  for (int k = 0; k < a.pr; k++) {
    bar_init(m.pf + k, 1);
    bar_init(m.pe + k, 96);  // the lanes of A, B1, B2
  }
  for (int k = 0; k < 2 * HY_WR + 2 * HY_XP; k++) bar_init(m.wbar + k, 32);  // wbar, vbar, xrb, xcb: one warp's lanes
  for (int k = 0; k < a.zr; k++) mbar_expect(m.zbar + k, CB * (unsigned)sizeof(T));  // phase 0: z_k (after the inits)
}
template <class T> __device__ void hy_one_producer(const HyArgs<T> &a, unsigned char *smem, const HyChainLayout &L)
{
  const HyOneSmem m = hy_one_smem(a, smem, L);
  const int       la = a.la, pr = a.pr;
  T              *pring = (T *)(smem + L.ring);
  const size_t    tiles = (size_t)a.nb * CB * CB;
  unsigned        ph = 0;
  for (int J = 0, s = 0; J < a.nb; J++) {
    if (J >= pr) mbar_wait(m.pe + s, ph ^ 1u);  // row J - pr read by all three (its phase (J / pr) - 1)
    const int nk = J < la ? J : la;
    mbar_expect(m.pf + s, (unsigned)(nk * CB * CB * sizeof(T)));
    for (int k = 1; k <= nk; k++)
      bulk_copy(pring + ((size_t)s * la + k - 1) * CB * CB, a.pg + (size_t)(k - 1) * tiles + (size_t)J * CB * CB, CB * CB * (unsigned)sizeof(T), m.pf + s);
    if (++s == pr) {
      s = 0;
      ph ^= 1u;
    }
  }
}
// row `lane` of the block P (column-major, in shared memory)
template <class T> __device__ __forceinline__ void one_row(T (&t)[CB], const T *P, int lane)
{
#pragma unroll
  for (int c = 0; c < CB; c++) t[c] = P[c * CB + lane];
}
// B2 (k0 = 3: v_I from z_I; with two B2 warps (a.b2), warp 3 takes the even rows, warp 5 the odd ones) and B1 (k0 = 2: w_I
// from v_I; every row), rows I = i0, i0 + di, ...
template <class T, int K0> __device__ void hy_one_b(const HyArgs<T> &a, unsigned char *smem, const HyChainLayout &L, int i0, int di, int lane)
{
  const HyOneSmem m = hy_one_smem(a, smem, L);
  const int       nb = a.nb, la = a.la, zr = a.zr, pr = a.pr;
  const T        *xp = (const T *)(smem + m.xp), *pring = (const T *)(smem + L.ring);
  const T        *in  = (const T *)(smem + (K0 == 3 ? m.zring : m.vring));
  T              *out = (T *)(smem + (K0 == 3 ? m.vring : m.wring));
  unsigned long long *obar = K0 == 3 ? m.vbar : m.wbar;
  for (int I = i0; I < nb; I += di) {
    const int      ps = I % pr, zs = I % zr;
    const unsigned pp = (unsigned)(I / pr) & 1u, zp = (unsigned)(I / zr) & 1u;
    T              w;
    if (K0 == 3) {
      bar_wait_cluster(m.zbar + zs, zp);
      w = in[zs * CB + lane];
      __syncwarp();
      if (lane == 0 && I + zr < nb) mbar_expect(m.zbar + zs, CB * (unsigned)sizeof(T));  // the slot's next phase: z_{I+zr}
    } else {
      mbar_wait(m.vbar + I % HY_WR, (unsigned)(I / HY_WR) & 1u);
      w = in[(I % HY_WR) * CB + lane];
    }
    mbar_wait(m.pf + ps, pp);
    const T *pt = pring + (size_t)ps * la * CB * CB;
    T        t[CB];
    if (K0 == 3) {
      if (I >= 3 && la >= 3) mbar_wait(m.xrb + ((I - 3) & (HY_XP - 1)), (unsigned)((I - 3) / HY_XP) & 1u);  // x_{I-3} (and the older ones)
#pragma unroll 1
      for (int k = I < la ? I : la; k >= 3; k--) {
        one_row(t, pt + (size_t)(k - 1) * CB * CB, lane);
        w = chain_step<T, true>(w, t, xp + ((I - k) & (HY_XP - 1)) * CB);
      }
    } else if (I >= 2 && la >= 2) {
      one_row(t, pt + CB * CB, lane);  // P_{I,2}'s row before the wait
      mbar_wait(m.xrb + ((I - 2) & (HY_XP - 1)), (unsigned)((I - 2) / HY_XP) & 1u);
      w = chain_step<T, true>(w, t, xp + ((I - 2) & (HY_XP - 1)) * CB);
    }
    out[(I % HY_WR) * CB + lane] = w;
    mbar_arrive(obar + I % HY_WR);  // (every lane: its own store before its arrival)
    mbar_arrive(m.pe + ps);
  }
}
template <class T> __device__ void hy_one_a(const HyArgs<T> &a, unsigned char *smem, const HyChainLayout &L, int lane)
{
  const HyOneSmem m = hy_one_smem(a, smem, L);
  const int       nb = a.nb, la = a.la, pr = a.pr;
  const T        *wring = (const T *)(smem + m.wring), *pring = (const T *)(smem + L.ring);
  T              *xp = (T *)(smem + m.xp);
  int             ps = 0;
  unsigned        pp = 0;
  for (int I = 0; I < nb; I++) {
    if (a.prof && lane == 0) a.prof[5 * nb + 6 + 4 * I] = gtime();  // (row start)
    mbar_wait(m.pf + ps, pp);
    if (a.prof && lane == 0) a.prof[5 * nb + 7 + 4 * I] = gtime();  // (P_{I,1} here)
    T t[CB];
    if (I > 0) one_row(t, pring + (size_t)ps * la * CB * CB, lane);
    mbar_wait(m.wbar + I % HY_WR, (unsigned)(I / HY_WR) & 1u);
    if (a.prof && I == 0 && lane == 0) a.prof[5 * nb + 4] = gtime();  // (start-up: w_0 taken)
    if (a.prof && lane == 0) a.prof[5 * nb + 8 + 4 * I] = gtime();  // (w_I here)
    T xv = wring[(I % HY_WR) * CB + lane];
    if (I > 0) xv = chain_step<T, true>(xv, t, xp + ((I - 1) & (HY_XP - 1)) * CB);
    mbar_arrive(m.pe + ps);
    if (!a.real(I * CB + lane)) xv = T(0);
    if (I >= HY_XP) mbar_wait(m.xcb + (I & (HY_XP - 1)), (unsigned)(I / HY_XP - 1) & 1u);  // C has taken x_{I-HY_XP}
    xp[(I & (HY_XP - 1)) * CB + lane] = xv;
    __syncwarp();  // x_I in the ring before this warp's next row reads it
    mbar_arrive(m.xrb + (I & (HY_XP - 1)));  // ... and B1's, B2's, C's (every lane: its own store before its arrival)
    if (a.prof && lane == 0) a.prof[4 * I + 3] = gtime();
    if (++ps == pr) {
      ps = 0;
      pp ^= 1u;
    }
  }
}
template <class T> __device__ void hy_one_c(const HyArgs<T> &a, unsigned char *smem, const HyChainLayout &L, unsigned cs, int lane)
{
  const HyOneSmem   m = hy_one_smem(a, smem, L);
  const int         nb = a.nb, xr = a.xr, nbar = a.nbar;
  const T          *xp = (const T *)(smem + m.xp);
  const BcastMap<T> bm(smem_u32(smem + L.xs), smem_u32(smem), 0, cs, lane);
  for (int I = 0, sI = 0, bI = 0; I < nb; I++) {  // sI = I % xr, bI = I % nbar
    mbar_wait(m.xrb + (I & (HY_XP - 1)), (unsigned)(I / HY_XP) & 1u);
    const T xv = xp[(I & (HY_XP - 1)) * CB + lane];
    mbar_arrive(m.xcb + (I & (HY_XP - 1)));
    broadcast(xv, sI, bI, bm, lane);
    ll_st(a.xll + (size_t)I * CB + lane, xv, a.epoch);  // for the helpers
    const int row = I * CB + lane;
    if (a.real(row)) {
      if (!(fabs(xv) < (T)INFINITY)) sg_dev_flag(a.rep, SG_FAIL_RESULT, 0, a.aidx(row), (double)xv);
      a.X[a.aidx(row)] = xv;
    }
    if (a.prof && lane == 0) a.prof[5 * nb + 9 + 4 * I] = gtime();  // (x_I sent)
    if (++sI == xr) sI = 0;
    if (++bI == nbar) bI = 0;
  }
}

// The x window barriers of a chain CTA (lane 0 of its last warp): in block row order, once x_J has
// landed (phase J / nbar of barrier J % nbar complete), it arms that barrier's next phase, for x_{J+nbar}:
// its arrival and its bytes (those may come first: the phase completes when both have). (hy_nbar: why
// the other warps' parity waits are unambiguous.) Returns once every x block has landed here (the other
// CTAs' st.async target this CTA).
template <class T> __device__ void hy_xbar_warp(const HyArgs<T> &a, unsigned char *smem)
{
  unsigned long long *xbar = (unsigned long long *)smem;
  const int           nbar = a.nbar;
  unsigned            p    = 0;
  for (int J = 0, b = 0; J < a.nb; J++) {
    bar_wait_cluster(xbar + b, p);  // (unambiguous: this warp armed the barrier's phase for x_J itself)
    if (J + nbar < a.nb) mbar_expect(xbar + b, CB * (unsigned)sizeof(T));
    if (++b == nbar) {
      b = 0;
      p ^= 1u;
    }
  }
}

// the block rows of chain CTA `rank`: own + ocs * k, k = 0, 1, ... (the one-CTA chain: CTA 0 owns none)
template <bool ONE> __device__ __forceinline__ int2 hy_deal(unsigned rank, unsigned cs)
{
  return ONE ? make_int2((int)rank - 1, (int)cs - 1) : make_int2((int)rank, (int)cs);
}
// update warp u of a chain CTA: owned rows k = u, u + U, ...: z_I = Dinv_I (b_I - S_I - sum of the window tiles)
template <class T, bool TR, bool RV, bool ONE> __device__ void hy_update(const HyArgs<T> &a, const CUtensorMap *map, unsigned char *smem, const HyChainLayout &L, unsigned rank, unsigned cs, int u, int lane)
{
  using R                 = typename LLw<T>::raw;
  const int           nb = a.nb, U = a.U, rs = a.rs;
  unsigned long long *xbar = (unsigned long long *)smem, *rdy = xbar + a.nbar, *fre = rdy + U, *sb = fre + U + u * rs;
  const T            *xs   = (const T *)(smem + L.xs);
  T                  *ps   = (T *)(smem + L.ps) + (size_t)u * CB * CB;
  T                  *ring = (T *)(smem + L.ring) + (size_t)u * rs * CB * CB;
  unsigned            g    = 0;  // tiles through the ring so far
  // the one-CTA chain: rows dealt to ranks 1 .. cs-1; z_I into CTA 0's z ring (hy_one_b)
  const int2     dl  = hy_deal<ONE>(rank, cs);
  const int      own = dl.x, ocs = dl.y;
  const unsigned zr0 = ONE ? cl_map(smem_u32(smem + L.ps), 0) : 0u, zb0 = ONE ? cl_map(smem_u32(xbar + a.nbar), 0) : 0u;
  for (int k = u, round = 0;; k += U, round++) {
    const int I = own + ocs * k;
    if (I >= nb) break;
    if (round > 0 && !ONE) mbar_wait(fre + u, (round - 1) & 1);  // the critical warp has taken our previous row
    // (op = T, a.ttail: every lane's stores of the previous row's transpose_sum into the ring before the copy engine's
    // writes into it, below and in the loop; each writer fences, then lane 0 issues, as for the TMA stores of CUTLASS)
    if (TR && a.ttail && round > 0) asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    const int j0 = I - a.W + 1 > 0 ? I - a.W + 1 : 0, nt = I - a.la - j0 > 0 ? I - a.la - j0 : 0;  // window tiles J = j0 .. I-1-la
    if (lane == 0) {
      asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  // our reads of the slots before the copy engine's writes
      for (int t = 0; t < rs && t < nt; t++) tile_copy(a, map, ring + (size_t)((g + t) % rs) * CB * CB, I, j0 + t, sb + (g + t) % rs);
    }
    const int row  = I * CB + lane;
    const T   bval = a.real(row) ? a.B[a.aidx(row)] : T(0);
    // (start-up: row 0's update warp has issued b_0's load. The stamp is written once b_0 has come, but
    // the timer may be read before: an upper bound of the warp's start. Kept in this form: the device runs
    // measured this kernel's code with it, and a plain stamp changes the fp64 op = T instances' registers.)
    if (a.prof && I == 0 && lane == 0) a.prof[5 * nb + 5] = gtime() + (unsigned long long)(bval != bval);
    if (lane == 0 && !a.pre)
      while (ld_acquire(a.dflag() + I) != a.epoch) __nanosleep(64);  // Dinv_I, P_I (and Q_I) published
    __syncwarp();
    const T *dgi = a.dg + (size_t)I * CB * CB, *pgi = a.pg + (size_t)I * CB * CB, *qgi = a.qg + (size_t)I * CB * CB;
    T        dr[CB];  // row `lane` of Dinv_I
#pragma unroll
    for (int c = 0; c < CB; c++) dr[c] = __ldcg(dgi + c * CB + lane);
    if (I > 0 && !ONE) {
#pragma unroll
      for (int c = 0; c < CB; c++) ps[pskew(lane, c)] = __ldcg(pgi + c * CB + lane);
    }
    if (a.la == 2 && I > 1 && !ONE) {
#pragma unroll
      for (int c = 0; c < CB; c++) ps[(size_t)U * CB * CB + pskew(lane, c)] = __ldcg(qgi + c * CB + lane);
    }
    T acc[CB];
#pragma unroll
    for (int i = 0; i < CB; i++) acc[i] = T(0);
    const R *sp = a.sll + (size_t)I * CB + lane;
    R        sv = {};
    unsigned s = g % (unsigned)rs, ph = (g / (unsigned)rs) & 1;  // slot and fill parity of ring tile g + t (no division per tile)
    unsigned pj = (unsigned)(j0 / a.nbar) & 1u;  // phase parity of x_{j0 + t} on its barrier
    for (int t = 0, sj = j0 % a.xr, bj = j0 % a.nbar; t < nt; t++) {  // sj = (j0 + t) % xr, bj = (j0 + t) % nbar
      if (t == nt - 1 && I >= a.W) sv = ll_ld(sp);  // the helpers' sum, probed before the last x arrives
      mbar_wait(sb + s, ph);
      const T *tl = ring + (size_t)s * CB * CB;
      T        tv[CB];
      tile_regs<T, TR, RV>(tv, tl, lane);
      __syncwarp();
      if (lane == 0 && t + rs < nt) {
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        tile_copy(a, map, (T *)tl, I, j0 + t + rs, sb + s);
      }
      bar_wait_cluster(xbar + bj, pj);
      const T *xj = xs + (size_t)sj * CB;
      tile_fma<T, TR>(acc, tv, TR ? xj[lane] : T(0), [&](int c) { return xj[c]; });
      if (++s == (unsigned)rs) {
        s = 0;
        ph ^= 1;
      }
      if (++sj == a.xr) sj = 0;
      if (++bj == a.nbar) {
        bj = 0;
        pj ^= 1u;
      }
    }
    if (a.prof && lane == 0) a.prof[4 * I] = gtime();  // (after the last window x has come)
    g += (unsigned)nt;
    // op = T: the 32 partial row sums of each lane, by the reduce-scatter or (a.ttail) through shared memory, in the
    // ring's first CB * CLD elements (slot 0 and 32 elements of slot 1; rs >= 2): every copy into the ring has been
    // waited for (the loop takes all nt it issued) and read (the __syncwarp after tile_regs), and the next ones come
    // after the fences at the next row's start
    T r = bval - (TR && a.ttail ? transpose_sum(acc, ring, lane) : tile_sum<T, TR>(acc, lane));
    if (I >= a.W) {
      if (a.prof && lane == 0 && !ll_ok(sv, a.epoch)) atomicAdd(a.prof + 4 * nb + 1, 1ull);  // the probe was too early
      r -= ll_wait(sp, nt ? sv : ll_ld(sp), a.epoch, false);
    }
    if (a.prof && lane == 0) a.prof[4 * I + 1] = gtime();
    const T z = apply_dinv(dr, r, (T *)(smem + L.rv) + (size_t)u * CB, lane);
    if (ONE) {
      const int zsl = I % a.zr;
      st_async_1(zr0 + (unsigned)((zsl * CB + lane) * sizeof(T)), z, zb0 + (unsigned)zsl * 8u);
      if (a.prof && lane == 0) a.prof[4 * I + 2] = gtime();
      continue;
    }
    ((T *)(smem + L.zs))[u * CB + lane] = z;
    if (a.prof && lane == 0) a.prof[4 * I + 2] = gtime();
    mbar_arrive(rdy + u);
  }
}

// ---- helper warps
struct HyJob {
  int  I, c, J0, nt;  // row, chunk, first tile column, tiles
  bool diag;          // inversion job (tiles (I, I) and (I, I-1))
};
template <class T> __device__ __forceinline__ HyJob hy_decode(const HyArgs<T> &a, int t)
{
  const int v = __ldg(a.jobs + t);
  HyJob     j;
  j.I    = v >> 12;
  j.diag = v & HY_DIAG;
  j.c    = (v >> 1) & 2047;
  hy_span(j.I, j.c, a.W, a.CT, a.E, j.J0, j.nt);
  if (j.diag) j.nt = (j.I < a.lp ? j.I : a.lp) + 1;  // tiles (I, I), (I, I-1), .. (I, I-lp)
  return j;
}
// tile i of job j
__device__ __forceinline__ int hy_tile_col(const HyJob &j, int i) { return j.diag ? j.I - i : j.J0 + i; }
// the warp's next ticket from counter ctr (-1: none below lim left)
__device__ __forceinline__ int hy_take(unsigned *ctr, int lim, int lane)
{
  int t = 0;
  if (lane == 0) t = (int)atomicAdd(ctr, 1u);
  t = __shfl_sync(~0u, t, 0);
  return t < lim ? t : -1;
}
// the inversion of block row I: Dinv_I (pass 0), P_{I,k} = Dinv_I M(I, I-k) (pass k = 1 .. lp: P_I, Q_I, ..) by substitution (lane j:
// column j), to the workspace, then the flag (tile (I, I-k) of the ring in slot (s0 + k) % hrs)
template <class T, bool TR, bool RV> __device__ void hy_diag(const HyArgs<T> &a, const T *ring, unsigned s0, int I, int lane)
{
  auto     slot = [&](int k) { const unsigned q = s0 + (unsigned)k; return ring + (size_t)(q >= (unsigned)a.hrs ? q - (unsigned)a.hrs : q) * CB * CB; };
  const T *D  = slot(0);
  const T  rl = pivot_rcp<T, TR, RV>(a, D, I, lane, true);
  T       *dgo = a.dg + (size_t)I * CB * CB;
#pragma unroll 1
  for (int pass = 0; pass <= (I < a.lp ? I : a.lp); pass++) {
    T        y[CB];
    const T *src = slot(pass);
    T       *out = pass == 0 ? dgo : a.pg + ((size_t)(pass - 1) * a.nb + I) * CB * CB;
#pragma unroll
    for (int i = 0; i < CB; i++) y[i] = pass ? src[tat<TR, RV>(i, lane)] : (i == lane ? T(1) : T(0));
    lower_subst<T, TR, RV>(y, D, rl);
#pragma unroll
    for (int i = 0; i < CB; i++) out[lane * CB + i] = (pass || i >= lane) ? y[i] : T(0);
  }
  __syncwarp();  // the warp's stores before lane 0's release (cumulative)
  if (lane == 0) st_release(a.dflag() + I, a.epoch);
}
// a chunk's partial sum p (lane: row) into S_I: alone, or added to the row's other chunks by the last one to finish
template <class T> __device__ void hy_publish(const HyArgs<T> &a, const HyJob &j, T p, int lane)
{
  const int nch = hy_chunks(j.I, a.W, a.CT, a.E);
  if (nch == 1) {
    ll_st(a.sll + (size_t)j.I * CB + lane, p, a.epoch);
    if (a.prof && lane == 0) a.prof[4 * a.nb + 2 + j.I] = gtime();
    return;
  }
  T *const p0 = a.part + (size_t)j.I * a.maxch * CB + lane;
  p0[(size_t)j.c * CB] = p;
  __syncwarp();  // the warp's partial sums before lane 0's arrival, an acq_rel atomic (its release is cumulative)
  unsigned old = 0;
  if (lane == 0) asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(a.cnt() + j.I) : "memory");
  old = __shfl_sync(~0u, old, 0);
  if (old != (unsigned)nch - 1) return;
  __syncwarp();  // the other chunks' sums (acquired by lane 0) before every lane's loads
  T s = T(0);
  for (int c0 = 0; c0 < nch; c0 += 8) {  // eight loads in flight, added in chunk order
    T v[8];
#pragma unroll
    for (int q = 0; q < 8; q++) v[q] = c0 + q < nch ? __ldcg(p0 + (size_t)(c0 + q) * CB) : T(0);
#pragma unroll
    for (int q = 0; q < 8; q++) s += v[q];
  }
  ll_st(a.sll + (size_t)j.I * CB + lane, s, a.epoch);
  if (a.prof && lane == 0) a.prof[4 * a.nb + 2 + j.I] = gtime();
  if (lane == 0) a.cnt()[j.I] = 0;  // for the next call (no other chunk of the row is left)
}
template <class T, bool TR, bool RV> __device__ void hy_helper(const HyArgs<T> &a, const CUtensorMap *map, unsigned char *smem, int w, int lane)
{
  using R                = typename LLw<T>::raw;
  const int           hrs = a.hrs;
  unsigned long long *hb = (unsigned long long *)smem + w * hrs;
  T                  *ring = (T *)(smem + hy_helper_ring<T>(a.hw, hrs)) + (size_t)w * hrs * CB * CB;
  int                 ct = hy_take(a.ctl, a.njobs, lane), nt = -2;  // current ticket, next ticket (-2: not taken yet, -1: none)
  if (ct < 0) return;
  HyJob    cj = hy_decode(a, ct), nj = cj;
  int      ci = 0, ni = 0;  // tiles issued of the current and of the next job
  unsigned gi = 0, gc = 0;  // tiles issued, consumed
  unsigned si = 0, sc = 0, pc = 0;  // slots of the next issue and of the next consumption (gi, gc % hrs), its fill's parity ((gc / hrs) & 1)
  auto     adv = [&](unsigned &sl, unsigned *par) {  // the next slot, without a division
    if (++sl == (unsigned)hrs) {
      sl = 0;
      if (par) *par ^= 1u;
    }
  };
  auto     issue = [&]() {  // keep the ring full, one job ahead
    while (gi - gc < (unsigned)hrs) {
      int I, J;  // the tile
      if (ci < cj.nt) {
        I = cj.I;
        J = hy_tile_col(cj, ci++);
      } else {
        if (nt == -2) {
          nt = hy_take(a.ctl, a.njobs, lane);
          if (nt >= 0) nj = hy_decode(a, nt);
        }
        if (nt < 0 || ni >= nj.nt) break;
        I = nj.I;
        J = hy_tile_col(nj, ni++);
      }
      if (lane == 0) {
        if (a.hfence) asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        tile_copy(a, map, ring + (size_t)si * CB * CB, I, J, hb + si);
      }
      gi++;
      adv(si, nullptr);
    }
  };
  issue();
  for (;;) {
    if (cj.diag) {  // its tiles are all in the ring (hrs >= la + 1)
      const unsigned s0 = sc;  // its cj.nt = min(I, lp) + 1 <= hrs consecutive slots (hy_diag reads no tile past them)
      for (int q = 0; q < cj.nt; q++) {
        mbar_wait(hb + sc, pc);
        adv(sc, &pc);
      }
      hy_diag<T, TR, RV>(a, ring, s0, cj.I, lane);
      __syncwarp();
      gc += (unsigned)cj.nt;
      issue();
    } else {
      T acc[CB];
#pragma unroll
      for (int i = 0; i < CB; i++) acc[i] = T(0);
      // x_J in LL form, loaded HY_XPF tiles ahead (each load is an L2 round trip; one per tile
      // in turn would bound a warp to ~9 GB/s, measured)
      const R *x0 = a.xll + (size_t)cj.J0 * CB + lane;
      R        xq[HY_XPF];
#pragma unroll
      for (int q = 0; q < HY_XPF; q++) xq[q] = q < cj.nt ? ll_ld(x0 + (size_t)q * CB) : R{};
      for (int i = 0; i < cj.nt; i++) {
        const R xr = xq[0];
#pragma unroll
        for (int q = 0; q + 1 < HY_XPF; q++) xq[q] = xq[q + 1];
        xq[HY_XPF - 1] = i + HY_XPF < cj.nt ? ll_ld(x0 + (size_t)(i + HY_XPF) * CB) : R{};
        const unsigned s = sc;
        mbar_wait(hb + s, pc);
        T tv[CB];
        tile_regs<T, TR, RV>(tv, ring + (size_t)s * CB * CB, lane);
        __syncwarp();
        gc++;
        adv(sc, &pc);
        issue();
        const T xl = ll_wait(x0 + (size_t)i * CB, xr, a.epoch, true);
        tile_fma<T, TR>(acc, tv, xl, [&](int c) { return __shfl_sync(~0u, xl, c); });
      }
      hy_publish(a, cj, tile_sum<T, TR>(acc, lane), lane);
    }
    if (nt == -2) {
      nt = hy_take(a.ctl, a.njobs, lane);
      if (nt >= 0) nj = hy_decode(a, nt);
    }
    if (nt < 0) break;
    cj = nj;
    ct = nt;
    ci = ni;
    nt = -2;
    ni = 0;
    issue();
  }
}

// A plan's solve, at the kernel's start (before the barrier set-up and the cluster barrier, while the helpers' first loads
// are not yet queued at the HBM): the L2 prefetches of what the chain's first block rows read first. Update warp u
// (w = 1 .. U): its first row's Dinv_I (and P_I, Q_I where the ordinary chain takes them) and b_I; the one-CTA chain's
// producer warp (CTA 0, w = 2): the P blocks of the rows 1 .. 3.
template <class T, bool ONE> __device__ void hy_start_prefetch(const HyArgs<T> &a, unsigned rank, unsigned cs, int w, int lane)
{
  constexpr int LINES = CB * CB * (int)sizeof(T) / 128;  // 128-byte lines per block
  auto          pf    = [](const void *p) { asm volatile("prefetch.global.L2 [%0];\n" ::"l"(p)); };
  auto          block = [&](const T *b) {
#pragma unroll
    for (int l = lane; l < LINES; l += 32) pf((const char *)b + (size_t)l * 128);
  };
  const size_t tiles = (size_t)a.nb * CB * CB;
  if (ONE && rank == 0) {
    if (w != 2) return;
    for (int J = 1; J < 4 && J < a.nb; J++)
      for (int k = 1; k <= J && k <= a.la; k++) block(a.pg + (size_t)(k - 1) * tiles + (size_t)J * CB * CB);
    return;
  }
  if (w < 1 || w > a.U) return;
  const int2 dl = hy_deal<ONE>(rank, cs);
  const int  I  = dl.x + dl.y * (w - 1);
  if (I >= a.nb) return;
  block(a.dg + (size_t)I * CB * CB);
  if (!ONE && I > 0) block(a.pg + (size_t)I * CB * CB);
  if (!ONE && a.la == 2 && I > 1) block(a.qg + (size_t)I * CB * CB);
  if (a.real(I * CB + lane)) pf(a.B + a.aidx(I * CB + lane));
}

// ONE: the one-CTA chain (hy_one_*), an instance of its own (the others compile without it)
template <class T, bool TR, bool RV, bool ONE> __global__ void __launch_bounds__(32 * HY_WARPS, 1) trsv_hybrid_kernel(const HyArgs<T> a, const __grid_constant__ CUtensorMap tmap)
{
  extern __shared__ __align__(128) unsigned char smem[];
  __shared__ unsigned s_ticket, s_chain;
  const unsigned rank = cl_rank(), cs = cl_size();
  const int      lane = threadIdx.x % 32, w = threadIdx.x / 32;
  if (rank == 0 && threadIdx.x == 0) s_ticket = atomicAdd(a.ctl + 2, 1u);
  cl_sync();
  if (threadIdx.x == 0) {  // rank 0's cluster ticket
    unsigned v;
    asm volatile("ld.shared::cluster.u32 %0, [%1];\n" : "=r"(v) : "r"(cl_map(smem_u32(&s_ticket), 0)) : "memory");
    s_chain = v == 0;
  }
  __syncthreads();
  const bool          chain = s_chain;
  const HyChainLayout L     = hy_chain_layout<T>(a.nbar, a.U, a.rs, a.xr, ONE ? 1 : a.la);
  unsigned long long *bars  = (unsigned long long *)smem;
  if (chain && a.spref) hy_start_prefetch<T, ONE>(a, rank, cs, w, lane);
  if (chain) {
    if (a.prof && rank == 0 && threadIdx.x == 0) a.prof[4 * a.nb] = gtime();
    // every barrier by thread 0 (barriers initialised by several threads draw racecheck hazard
    // warnings); every init, then every expect (~20 cycles per x barrier; ~48 with each expect right after its
    // init, which it waits out: experiments-20261128e/mbinit.cu)
    if (threadIdx.x == 0) {
      for (int b = 0; b < a.nbar; b++) bar_init(bars + b, 1);  // the ring of x barriers (hy_nbar)
      for (int b = 0; b < a.nbar; b++) mbar_expect(bars + b, CB * (unsigned)sizeof(T));  // phase 0's arrival; completes when x_b's bytes have come
      if (ONE && rank == 0) {
        hy_one_init<T>(a, smem, L);
      } else {
        for (int k = 0; k < 2 * a.U; k++) bar_init(bars + a.nbar + k, 32);  // rdy (the update warp's lanes), fre (the critical warp's)
        for (int k = 0; k < a.U * a.rs; k++) bar_init(bars + a.nbar + 2 * a.U + k, 1);
      }
      if (a.prof && rank == 0) a.prof[5 * a.nb + 2] = gtime();  // (start-up: barriers set up)
    }
  } else if (threadIdx.x == 0) {
    for (int k = 0; k < a.hw * a.hrs; k++) bar_init(bars + k, 1);
  }
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  cl_sync();  // every chain CTA's barriers exist before anyone sends; rank 0's ticket has been read
  if (chain) {
    if (a.prof && rank == 0 && threadIdx.x == 0) a.prof[5 * a.nb + 3] = gtime();  // (start-up: the cluster barrier passed)
    if (w == 0) {
      if constexpr (!ONE) hy_critical<T, TR, RV>(a, smem, L, rank, cs, lane);
      else if (rank == 0) hy_one_a<T>(a, smem, L, lane);
    } else if (w <= a.U) {  // (the one-CTA chain: U >= 4)
      if (!ONE || rank > 0) hy_update<T, TR, RV, ONE>(a, &tmap, smem, L, rank, cs, w - 1, lane);
      else if (w == 1) hy_one_b<T, 2>(a, smem, L, 0, 1, lane);
      else if (w == 2 && lane == 0) hy_one_producer<T>(a, smem, L);
      else if (w == 3) hy_one_b<T, 3>(a, smem, L, 0, a.b2, lane);
      else if (w == 4) hy_one_c<T>(a, smem, L, cs, lane);
      else if (w == 5 && a.b2 == 2) hy_one_b<T, 3>(a, smem, L, 1, 2, lane);
    } else if (w == HY_WARPS - 1) {  // (U <= HY_WARPS - 2)
      if (lane == 0) hy_xbar_warp<T>(a, smem);
      __syncwarp();
    }
  } else if (w < a.hw) {
    hy_helper<T, TR, RV>(a, &tmap, smem, w, lane);
  }
  __syncthreads();
  if (threadIdx.x == 0 && atomicAdd(a.ctl + 1, 1u) == gridDim.x - 1) {  // the last CTA: counters back to 0 for the next call
    a.ctl[0] = 0;
    a.ctl[1] = 0;
    a.ctl[2] = 0;
  }
}

} // namespace

// a launch of one cluster of cs CTAs (the configuration points into the struct: keep it in place)
struct ClLaunch {
  cudaLaunchConfig_t  cfg = {};
  cudaLaunchAttribute at[2];
  ClLaunch(int cs, int warps, size_t smem, cudaStream_t stream, bool pdl = false)
  {
    at[0].id               = cudaLaunchAttributeClusterDimension;
    at[0].val.clusterDim.x = (unsigned)cs;
    at[0].val.clusterDim.y = at[0].val.clusterDim.z = 1;
    cfg.gridDim          = dim3((unsigned)cs);
    cfg.blockDim         = dim3(32 * (unsigned)warps);
    cfg.dynamicSmemBytes = smem;
    cfg.stream           = stream;
    cfg.attrs            = at;
    cfg.numAttrs         = 1;
    if (pdl) {  // programmatic dependent launch: the kernel may start while the one before it runs
      at[1].id                                         = cudaLaunchAttributeProgrammaticStreamSerialization;
      at[1].val.programmaticStreamSerializationAllowed = 1;
      cfg.numAttrs                                     = 2;
    }
  }
  ClLaunch(const ClLaunch &) = delete;
};

// the arguments both cluster kernels share (rows of M, variant, pivots, report)
template <class T> void cl_args_fill(ClArgs<T> &a, sg_ctx *ctx, const sg_trsv_problem *P, double pivtol, int nb, int ob, int rs)
{
  a.B      = (const T *)P->B;
  a.X      = (T *)P->X;
  a.n      = (int)P->n;
  a.nb     = nb;
  a.ob     = ob;
  a.rs     = rs;
  a.rev    = (P->uplo == SG_UPPER) != (P->trans == SG_TRANS);
  a.trans  = P->trans == SG_TRANS;
  a.pivtol = (T)(pivtol > 0 ? pivtol : 0.0);
  a.unit   = P->diag == SG_UNIT;
  a.rep    = sg_dreport(ctx);
  a.prof   = nullptr;
  a.pdg    = nullptr;
  a.ppg    = nullptr;
  a.pqg    = nullptr;
  a.phg    = nullptr;
  a.pgg    = nullptr;
  a.pdl    = false;
  a.prod   = false;
  a.pf     = 0;
  a.bpre   = false;
}

// The tiles' tensor map (32 x 32 boxes of A, no swizzle), kept for the next call on the same
// matrix; NULL when the driver cannot encode one
template <class T> const CUtensorMap *tile_map(const sg_trsv_problem *P)
{
  PFN_cuTensorMapEncodeTiled_v12000 encode = sg_tensor_map_encoder();
  if (!encode) return nullptr;
  thread_local struct {
    const void *A = nullptr;
    long long   n = 0, lda = 0;
    int         prec = -1;
    CUtensorMap map;
  } mc;
  if (mc.A != P->A || mc.n != P->n || mc.lda != P->lda || mc.prec != (int)sizeof(T)) {
    mc.A = nullptr;
    memset(&mc.map, 0, sizeof mc.map);
    const cuuint64_t dims[2] = {(cuuint64_t)P->n, (cuuint64_t)P->n}, strides[1] = {(cuuint64_t)P->lda * sizeof(T)};
    const cuuint32_t box[2] = {CB, CB}, estr[2] = {1, 1};
    if (encode(&mc.map, sizeof(T) == 8 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT64 : CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, (void *)P->A, dims, strides, box, estr,
               CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS)
      return nullptr;
    mc.A    = P->A;
    mc.n    = P->n;
    mc.lda  = P->lda;
    mc.prec = (int)sizeof(T);
  }
  return &mc.map;
}

// the one-cluster kernel's largest order (SG_TRSV_CLUSTER_MAXN; 0: never)
template <class T> int cl_maxn()
{
  static const int maxn = env_int("SG_TRSV_CLUSTER_MAXN", sizeof(T) == 8 ? 2048 : 4096, 0, 1 << 20);
  return maxn;
}
// ... for a plan's solves (no diagonal work: the kernel's limit is one update warp per owned block
// row, 7 (fp64) / 8 (fp32) per CTA of 16; SG_TRSV_CLUSTER_PLAN_MAXN)
template <class T> int cl_plan_maxn()
{
  static const int maxn = env_int("SG_TRSV_CLUSTER_PLAN_MAXN", sizeof(T) == 8 ? 3584 : 4096, 0, 1 << 20);
  return maxn;
}

template <class T> sg_status trsv_cluster_solve(sg_ctx *ctx, const sg_trsv_problem *P, double pivtol, sg_report *rep, bool *used, const sg_trsv_plan_s *hp)
{
  *used = false;
  // tuning knobs, read once: the largest order (0: never), the cluster size and ring depth (0: automatic)
  const bool       pre  = hp && hp->filled;
  const int        maxn = pre ? cl_plan_maxn<T>() : cl_maxn<T>();
  static const int cs_env = env_int("SG_TRSV_CLUSTER_CS", 0, 0, CS_MAX), rs_env = env_int("SG_TRSV_CLUSTER_RING", 0, 0, RING_MAX);
  const int        n = (int)P->n, nb = (n + CB - 1) / CB;
  // one column; every tile one tensor copy: A and its column stride 16-byte aligned
  if (P->nrhs != 1 || n > maxn || (uintptr_t)P->A % 16 || (size_t)P->lda * sizeof(T) % 16) return SG_OK;
  const CUtensorMap *pmap = tile_map<T>(P);
  if (!pmap) return SG_OK;
  const CUtensorMap &tmap = *pmap;
  const bool rev = (P->uplo == SG_UPPER) != (P->trans == SG_TRANS), trans = P->trans == SG_TRANS;
  // SG_TRSV_T_ROT=0 / 1: op = T update warps with lane = row never / also outside plain fp64 n <= 1024 (A/B)
  static const int trot_env = env_int("SG_TRSV_T_ROT", -1, -1, 1);
  const bool       trot     = trans && (trot_env < 0 ? sizeof(T) == 8 && !pre && n <= 1024 : trot_env == 1);
  const int        var      = trot ? 4 + rev : 2 * trans + rev;
  // the instances: [variant] without, [6 + variant] with look-ahead 2 for plain solves (chosen below)
  void (*const kerns[12])(const ClArgs<T>, const CUtensorMap) = {
    trsv_cluster_kernel<T, false, false, false, false>, trsv_cluster_kernel<T, false, true, false, false>,
    trsv_cluster_kernel<T, true, false, false, false>,  trsv_cluster_kernel<T, true, true, false, false>,
    trsv_cluster_kernel<T, true, false, true, false>,   trsv_cluster_kernel<T, true, true, true, false>,
    trsv_cluster_kernel<T, false, false, false, true>,  trsv_cluster_kernel<T, false, true, false, true>,
    trsv_cluster_kernel<T, true, false, false, true>,   trsv_cluster_kernel<T, true, true, false, true>,
    trsv_cluster_kernel<T, true, false, true, true>,    trsv_cluster_kernel<T, true, true, true, true>};
  auto       *kern      = kerns[var];
  static int  cs_var[6] = {-1, -1, -1, -1, -1, -1};  // the largest cluster size this device runs with each variant (0: none)
  static int  la2_ok[6] = {-1, -1, -1, -1, -1, -1};  // the look-ahead-2 instance's attributes set (1) or refused (0)
  int        &cs_max    = cs_var[var];
  sg_status   st;
  const int   optin = sg_cuda_smem_optin();
  if (cs_max < 0) {
    cs_max = 0;
    if (cudaFuncSetAttribute(kern, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess ||
        cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, optin) != cudaSuccess) {
      (void)cudaGetLastError();
      return SG_OK;  // no cluster path on this device: the general kernel runs
    }
    for (int cs = CS_MAX; cs >= 2 && !cs_max; cs /= 2) {  // can a cluster of cs CTAs with the most shared memory be placed?
      const ClLaunch l(cs, cl_warps<T>(), (size_t)optin, nullptr);
      int            nc = 0;
      if (cudaOccupancyMaxActiveClusters(&nc, kern, &l.cfg) == cudaSuccess && nc > 0) cs_max = cs;
      else (void)cudaGetLastError();
    }
  }
  if (!cs_max) return SG_OK;
  // at least 2 CTAs: distributed shared memory needs a cluster of two (compute-sanitizer memcheck
  // reports st.async in a one-block cluster as an invalid write); with one block row, CTA 1 owns none
  const int csx = cs_env ? std::min(cs_env, cs_max) : cs_max, cs = std::max(2, std::min(nb, csx)), ob = (nb + cs - 1) / cs;
  if (ob > cl_warps<T>() - 1) return SG_OK;  // more block rows per CTA than update warps
  // Plain solves with look-ahead 2 where each CTA owns one block row (n <= 512): Q_I formed at
  // start-up by a third warp beside Dinv_I and P_I, the update warp stops at tile I-3. Measured on
  // an H200 (same lease, bench/trsv/README.md, 2026-11-28), us LN / UT, look-ahead 1 -> 2: fp64 n = 256
  // 7.29 / 8.26 -> 6.87 / 7.84, n = 512 10.78 / 12.99 -> 10.00 / 12.67; fp32 n = 256 6.33 / 7.40 ->
  // 5.88 / 6.77, n = 512 9.26 / 11.13 -> 8.78 / 10.04. With two and more rows per CTA the third pass
  // (done by the update warp where no warp is left) and the smaller ring cost more than it saves
  // (fp64 LN 2048 33.3 -> 37.0, fp32 LN 4096 54.6 -> 57.9). SG_TRSV_CL_LA2=0 / 1 / 2: never / where
  // each CTA owns one row (default) / wherever the ring keeps >= 3 slots (A/B).
  static const int la2_env = env_int("SG_TRSV_CL_LA2", 1, 0, 2);
  const size_t per = (size_t)ob * (CB * CB * sizeof(T) + 16);
  bool         q2  = !pre && (la2_env == 2 || (la2_env == 1 && ob == 1)) && nb > 2 && cl_layout<T>(nb, ob, 0, pre, true).total + 3 * per + 128 <= (size_t)optin;
  if (q2) {  // its own instance, with the same launch limits
    if (la2_ok[var] < 0) {
      la2_ok[var] = cudaFuncSetAttribute(kerns[6 + var], cudaFuncAttributeNonPortableClusterSizeAllowed, 1) == cudaSuccess &&
                    cudaFuncSetAttribute(kerns[6 + var], cudaFuncAttributeMaxDynamicSharedMemorySize, optin) == cudaSuccess;
      if (!la2_ok[var]) (void)cudaGetLastError();
    }
    q2 = la2_ok[var] == 1;
    if (q2) kern = kerns[6 + var];
  }
  const size_t fixed = cl_layout<T>(nb, ob, 0, pre, q2).total;
  if (fixed + 2 * per + 128 > (size_t)optin) return SG_OK;  // too large for one cluster's shared memory
  int rs = (int)(((size_t)optin - fixed - 128) / per);
  rs     = rs > RING_MAX ? RING_MAX : rs;
  rs     = rs_env ? std::max(2, std::min(rs_env, rs)) : rs;
  ClArgs<T> a;
  cl_args_fill(a, ctx, P, pivtol, nb, ob, rs);
  // SG_TRSV_PDL=0: plan solves without programmatic dependent launch (A/B)
  static const bool pdl_env = env_int("SG_TRSV_PDL", 1, 0, 1) != 0;
  // SG_TRSV_CL_LA=1: plan solves with look-ahead 1 even where the plan holds Q_I (A/B)
  static const int cl_la_env = env_int("SG_TRSV_CL_LA", 2, 1, 2);
  // SG_TRSV_CL_PROD=0: plan solves with the update warps issuing their own tile copies (A/B)
  static const bool prod_env = env_int("SG_TRSV_CL_PROD", 1, 0, 1) != 0;
  // SG_TRSV_CL_PAIR=0: plan solves without the paired look-ahead even where the plan holds it (A/B)
  static const bool pair_env = env_int("SG_TRSV_CL_PAIR", 1, 0, 1) != 0;
  // Plain solves are launched programmatically too: the kernel then waits before it reads A or B,
  // so only its launch and barrier set-up overlap the kernel before. Measured on the H100 (same
  // lease, two repeats, speedup over cuBLAS trsv LN / UT): fp64 n = 512 3.10 / 2.78 -> 3.78 / 3.24x,
  // n = 1024 3.53 / 3.22 -> 4.15 / 3.62x; fp32 n = 1024 4.15 / 3.43 -> 5.07 / 4.08x, n = 2048 4.59 /
  // 3.86 -> 5.25 / 4.33x (bench/trsv/README.md, 2026-11-28). SG_TRSV_PDL_NOPLAN=0: without (A/B).
  static const bool pdl_noplan_env = env_int("SG_TRSV_PDL_NOPLAN", 1, 0, 1) != 0;
  if (!pre) a.pdl = pdl_noplan_env;
  // SG_TRSV_CL_PF=0 / SG_TRSV_CL_BPRE=0: plain solves without the L2 prefetch before the wait / with b loaded after the diagonal work (A/B)
  static const int  pf_env = env_int("SG_TRSV_CL_PF", 1, 0, 2);
  static const bool bpre_env = env_int("SG_TRSV_CL_BPRE", 1, 0, 1) != 0;
  a.bpre = !pre && bpre_env;
  if (pre) {  // the plan's Dinv_I and P_I: no diagonal work (its pivots were checked)
    a.pdg = (const T *)hp->inv;
    a.ppg = a.pdg + (size_t)nb * CB * CB;
    if (hp->la == 2 && cl_la_env == 2) a.pqg = a.ppg + (size_t)nb * CB * CB;
    if (a.pqg && hp->pinv && pair_env) {  // paired look-ahead (trsv_pair_fill)
      a.phg = (const T *)hp->pinv;
      a.pgg = a.phg + (size_t)nb * CB * CB;
    }
    // A and the plan cannot change while the plan lives: this solve's copies of them may overlap
    // the kernel before it (the kernel waits before it reads B and before it writes X)
    a.pdl  = pdl_env;
    // producers where at least half the update warps get one (measured on an H100, bench/trsv/README.md:
    // fp64 n = 1024 / 2048 +3 / +4 %, fp32 n = 2048 +5-8 %; with 2 producers for 6 update warps, fp32
    // n = 3072, -2.5 %)
    const int np = std::min(cl_warps<T>(), 1 + 2 * ob) - 1 - ob;
    a.prod = prod_env && 2 * np >= ob;
  }
  *used = true;
  a.pf = a.pdl && !pre ? pf_env : 0;
  const size_t nprof = 5 * (size_t)nb + 2 * CS_MAX;
  if (getenv("SG_TRSV_PROFILE")) {  // diagnostics: a timeline per block row, printed to stderr after a synchronous solve
    a.prof = (unsigned long long *)sg_ctx_work(ctx, nprof * sizeof(unsigned long long), SG_SLOT_TRSV_BATCH);
    if (!a.prof) return sg_report_set(rep, SG_ERR_MEM, -1, -1, 0.0, "trsv profile buffer");
    (void)cudaMemsetAsync(a.prof, 0, nprof * sizeof(unsigned long long), sg_stream(ctx));
    a.pdl = false;  // the timeline starts at this kernel's own start
    a.pf  = 0;
  }
  if ((st = sg_dev_report_reset(ctx, rep)) != SG_OK) return st;
  // critical, update and (where they fit) helper warps
  const ClLaunch l(cs, std::min(cl_warps<T>(), 1 + (q2 ? 3 : 2) * ob), cl_layout<T>(nb, ob, rs, pre, q2).total, sg_stream(ctx), a.pdl);
  if ((st = sg_cuda_check(cudaLaunchKernelEx(&l.cfg, kern, a, tmap), rep, "trsv cluster launch")) != SG_OK) return st;
  if (a.prof) {
    std::vector<unsigned long long> h(nprof);
    (void)cudaMemcpy(h.data(), a.prof, nprof * sizeof(unsigned long long), cudaMemcpyDeviceToHost);
    unsigned long long t0 = ~0ull;
    for (int q = 0; q < cs; q++) t0 = h[4 * nb + q] < t0 ? h[4 * nb + q] : t0;
    fprintf(stderr, "[trsv cluster] n=%d nb=%d cs=%d ob=%d rs=%d smem=%zu; us from the first CTA's start: CTA starts", n, nb, cs, ob, rs, l.cfg.dynamicSmemBytes);
    for (int q = 0; q < cs; q++) fprintf(stderr, " %.2f", (h[4 * nb + q] - t0) * 1e-3);
    fprintf(stderr, "; past the cluster barrier");
    for (int q = 0; q < cs; q++) fprintf(stderr, " %.2f", (h[5 * nb + CS_MAX + q] - t0) * 1e-3);
    fprintf(stderr, "\n[trsv cluster] per block row I: diagonal tile here (no plan) / P ready / z ready / x_{I-1} here / x_I formed\n");
    const size_t td = 4 * (size_t)nb + CS_MAX;
    for (int I = 0; I < nb; I++)
      fprintf(stderr, "  %3d: %8.2f %8.2f %8.2f %8.2f %8.2f\n", I, h[td + I] ? (h[td + I] - t0) * 1e-3 : 0.0, (h[4 * I] - t0) * 1e-3, (h[4 * I + 1] - t0) * 1e-3,
              I ? (h[4 * I + 2] - t0) * 1e-3 : 0.0, (h[4 * I + 3] - t0) * 1e-3);
  }
  return sg_dev_report_fetch(ctx, rep, [](sg_report *r, int cls, long long, long long row, double value) { return sg_trsv_report_fail(r, cls, -1, row, value); });
}

template <class T> sg_status trsv_pair_fill(sg_ctx *ctx, const sg_trsv_problem *P, sg_trsv_plan_s *hp, sg_report *rep)
{
  const int n = (int)P->n, nb = (n + CB - 1) / CB;
  if (!hp->filled || hp->la != 2 || !hp->inv || n > cl_plan_maxn<T>() || nb < 4) return SG_OK;  // (no odd row >= 3: nothing to pair)
  const size_t tiles = (size_t)nb * CB * CB, bytes = 2 * tiles * sizeof(T);
  if (hp->pinv) (void)cudaFree(hp->pinv);
  hp->pinv = nullptr;
  if (cudaMalloc(&hp->pinv, bytes) != cudaSuccess) {
    (void)cudaGetLastError();
    hp->pinv = nullptr;
    return sg_report_set(rep, SG_ERR_MEM, -1, -1, 0.0, "cannot allocate %zu bytes for the plan's paired blocks", bytes);
  }
  ClArgs<T> a;
  cl_args_fill(a, ctx, P, hp->pivtol, nb, 0, 0);
  a.pdg = (const T *)hp->inv;
  a.ppg = a.pdg + tiles;
  a.pqg = a.ppg + tiles;
  T *hg = (T *)hp->pinv;
  sg_status st;
  if ((st = sg_cuda_check(cudaMemsetAsync(hg, 0, bytes, sg_stream(ctx)), rep, "trsv paired plan")) != SG_OK) return st;
  trsv_pair_kernel<T><<<(unsigned)((nb - 2) / 2), 32, 0, sg_stream(ctx)>>>(a, (const T *)P->A, P->lda, hg, hg + tiles);
  if ((st = sg_cuda_check(cudaGetLastError(), rep, "trsv paired plan")) != SG_OK) {
    (void)cudaFree(hp->pinv);
    hp->pinv = nullptr;
  }
  return st;
}
template sg_status trsv_pair_fill<double>(sg_ctx *, const sg_trsv_problem *, sg_trsv_plan_s *, sg_report *);
template sg_status trsv_pair_fill<float>(sg_ctx *, const sg_trsv_problem *, sg_trsv_plan_s *, sg_report *);

template sg_status trsv_cluster_solve<double>(sg_ctx *, const sg_trsv_problem *, double, sg_report *, bool *, const sg_trsv_plan_s *);
template sg_status trsv_cluster_solve<float>(sg_ctx *, const sg_trsv_problem *, double, sg_report *, bool *, const sg_trsv_plan_s *);

template <class T> sg_status trsv_hybrid_solve(sg_ctx *ctx, const sg_trsv_problem *P, double pivtol, sg_report *rep, bool *used, sg_trsv_plan_s *hp)
{
  using R = typename LLw<T>::raw;
  *used   = false;
  // tuning knobs, read once: the order range, cluster size, window, tiles per chunk, update warps, chain ring depth
  // Measured on an H100 (bench/trsv/README.md): the kernel takes every order above the one-cluster
  // kernel's (fp64 n > 2048, fp32 n > 4096): against the general kernel, fp64 n = 2560 / 3072 / 4096
  // LN 59 / 68 / 86 us against 69 / 82 / 105, UT 67 / 77 / 96 against 74 / 88 / 114; fp32 n = 4608 /
  // 8192 / 12288 LN 82 / 134 / 198 us against 94 / 160 / 235, UT 88 / 141 / 203 against 94 / 161 / 235
  // (since 2026-11-25; it started at fp64 8192 / fp32 16384 before). fp32, with chunks of 16 tiles up to 640 block rows (n = 20480) and
  // look-ahead 1: n = 16384 60.0-60.3 / 61.4 / 59.8-60.1 / 62.0 % of copy against 57.3 / 56.3 / 57.3 /
  // 56.3 (LN / LT / UN / UT), n = 20480 LN 65.2 against 64.3, UT 68.5 against 63.3; op = T with
  // look-ahead 2 and chunks of 32 gains 3-6 % at n = 24576 / 32768. fp32 op = N from n = 24576 stayed on
  // the general kernel (within 1 % either way) until the jobs' order 2: LN n = 24576 / 32768 512 / 875 us
  // against 576 / 935 (no plan), 506 / 859 with a plan (same lease, bench/trsv/README.md)
  static const int minn_env = env_int("SG_TRSV_HYB_MINN", 0, 0, 1 << 30), maxn_env = env_int("SG_TRSV_HYB_MAXN", 0, 0, 1 << 30);
  const bool       f32 = sizeof(T) == 4, tr = P->trans == SG_TRANS;
  const int        minn = hp && !hp->filled ? 1 : minn_env ? minn_env : (f32 ? 4097 : 2049);  // (a plan is filled at every order)
  const int        maxn = maxn_env ? maxn_env : 1 << 30;
  static const int cs_env = env_int("SG_TRSV_HYB_CS", 0, 0, CS_MAX), w_env = env_int("SG_TRSV_HYB_W", 32, 4, 1024);
  static const int ct_env = env_int("SG_TRSV_HYB_CT", 0, 0, 2047), u_env = env_int("SG_TRSV_HYB_U", 0, 0, HY_WARPS - 2);  // (the last warp of a chain CTA keeps its x barriers)
  static const int hw_env = env_int("SG_TRSV_HYB_HW", 4, 1, HY_WARPS), pd_env = env_int("SG_TRSV_HYB_PD", 64, 1, 1 << 20);
  static const int e_env = env_int("SG_TRSV_HYB_END", 4, 1, 1024), hrs_env = env_int("SG_TRSV_HYB_HRS", 0, 0, HY_RING_MAX);
  static const int fence_env = env_int("SG_TRSV_HYB_FENCE", 1, 0, 1), order_env = env_int("SG_TRSV_HYB_ORDER", -1, -1, 2);
  static const int step_env = env_int("SG_TRSV_HYB_SIM_STEP", 0, 0, 100000), bw_env = env_int("SG_TRSV_HYB_SIM_BW", 0, 0, 1 << 20);
  static const int lead_env = env_int("SG_TRSV_HYB_SIM_LEAD", -1, -1, 1 << 20);  // -1: automatic
  static const int rs_env = env_int("SG_TRSV_HYB_RING", 0, 0, HY_RING_MAX);  // 0: automatic
  static const int la_env = env_int("SG_TRSV_HYB_LA", 0, 0, 2);  // 0: automatic
  // The one-CTA chain (hy_one_*, ONE instances; SG_TRSV_HYB_ONE: -1 automatic, 0 off, 1 wherever a plan's solve
  // runs here) and its look-ahead (SG_TRSV_HYB_ONE_LA, the plan's blocks P_{I,k} per row; 0: 4 with two B2 warps, i.e.
  // six warps per CTA, else 3). Measured on an H200 against the chain across CTAs, planned solves, us (bench/trsv/
  // README.md, twenty-eighth session; same lease): fp32 op = T LT / UT n = 16384 200.7 / 200.6 -> 187.4 / 184.7, 20480
  // 265.2 / 259.9 -> 263.9 / 254.9, 24576 338.7 / 331.9 -> 337.2 / 327.6, 32768 585.7 / 577.6 -> 585.0 / 572.7; fp32
  // op = N within -1.0 .. +0.8 % (UN 20480 284.1 -> 286.3); fp64 (look-ahead 3) n = 16384 -0.4 .. -1.2 %, 20480 .. 32768
  // within +-0.4 %. So by default: fp32 op = T from n = 16384 (where the chain sets the pace). fp64 op = T with five
  // update warps (two B2 warps, look-ahead 4; twenty-ninth session, same lease, two rounds, LT / UT us): n = 4096
  // 68.1 / 67.7 -> 63.8-63.9 / 64.1-64.2, 6144 97.8 / 97.1 -> 91.4 / 91.4, 8192 127.1-127.5 / 126.5 -> 119.6-120.0 /
  // 119.8-119.9, 12288 192.3 / 191.9 -> 187.8 / 188.1, 16384 292.8-294.0 / 291.7-293.2 -> 287.5-287.7 / 287.2-288.6,
  // 24576 / 32768 -0.2 .. -0.4 %; fp64 op = N with it 1.5-3.7 % slower at n = 4096 / 8192 (stays off).
  static const int one_env = env_int("SG_TRSV_HYB_ONE", -1, -1, 1), one_la_env = env_int("SG_TRSV_HYB_ONE_LA", 0, 0, HY_LMAX);
  static const int one_zr_env = env_int("SG_TRSV_HYB_ONE_ZR", 8, 2, 16), one_pr_env = env_int("SG_TRSV_HYB_ONE_PR", 32, 2, 64);
  static const int one_b2_env = env_int("SG_TRSV_HYB_ONE_B2", 2, 1, 2);  // B2 warps where the CTA has them (U >= 5)
  // op = T update warps: the window partials summed through shared memory (1, transpose_sum) or by the shuffle
  // reduce-scatter (0) after the row's last window x. The reduce-scatter's ~386 instructions were on the chain's
  // step (0.472 against op = N's 0.384 us per block row at fp64 n = 4096). Measured on the H200, same lease, two
  // rounds, planned solves, us: fp64 n = 4096 LT 73.0-73.3 -> 67.4-67.6, UT 72.6 -> 67.5-67.6; n = 8192 LT / UT
  // 137.7-138.2 / 136.5 -> 126.3-126.4 / 126.3-126.4; fp32 n = 8192 LT / UT 100.8-101.0 / 102.1 -> 98.9-99.2 /
  // 100.2 (bench/trsv/README.md, twenty-fourth session)
  static const int ttail_env = env_int("SG_TRSV_T_TAIL", 1, 0, 1);
  static const int spref_env = env_int("SG_TRSV_HYB_SPREF", 1, 0, 1);  // (HyArgs::spref)
  const int        n = (int)P->n, nb = (n + CB - 1) / CB;
  if (P->nrhs != 1 || n < minn || n > maxn || nb >= (1 << 19) || (uintptr_t)P->A % 16 || (size_t)P->lda * sizeof(T) % 16) return SG_OK;
  const CUtensorMap *pmap = tile_map<T>(P);
  if (!pmap) return SG_OK;
  const int CT = ct_env ? ct_env : (f32 && nb > 640 ? 32 : 16);
  // the chain's cluster: 16 CTAs up to n = 12288, 8 above (0: automatic; measured on an H100, same lease,
  // bench/trsv/README.md, eleventh session: 16 against 8 gains 1-7 % from n = 4096 to 12288, e.g. fp64 LN
  // 4096 / 8192 68.4 / 141.3 -> 65.5 / 135.3 µs, fp32 LN 8192 / 10240 109.5 / 138.9 -> 102.8 / 129.9, and
  // loses 1-5 % at 16384 in fp32)
  const int cs = cs_env ? std::max(2, cs_env) : (n <= 12288 ? 16 : 8);
  // update warps per chain CTA: 4; fp32 from n = 16384, 6 (measured on an H100, same lease, bench/trsv/README.md,
  // twelfth session: with the lead below, fp32 n = 24576 +1-2.4 points of copy, 32768 +0.8-1.5 (UN without a plan
  // 84.0-84.2 -> 85.0-85.2 %), n = 16384 0-1.5 %; fp64 cannot hold 6 rings of 8 KB tiles beside the rest)
  // the one-CTA chain by default (one_auto): op = T plans of fp32 from n = 16384 (six update warps there: two B2
  // warps) and of fp64 above the one-cluster kernel's orders, with five update warps (two B2 warps; measured below)
  const bool one_auto = one_env == -1 && tr && hp && n > cl_plan_maxn<T>() && (!f32 || n >= 16384);
  const int W = std::max(w_env, cs + 2), xr = W + 2, U = u_env ? u_env : (f32 && n >= 16384 ? 6 : one_auto ? 5 : 4), hw = hw_env, PD = pd_env, E = e_env;
  // the update warps' tile rings: 4 slots; fp32 from n = 16384, 6 (fewer where they do not fit, below) (measured on an H100 with the ring of
  // x barriers, same lease, bench/trsv/README.md, twentieth session: fp32 16384 UT planned 223.0 -> 216.7 us, no plan
  // 249.4 -> 240.7, every variant 0.4-3.5 % faster up to n = 24576, 32768 within +-0.6 %)
  int rs = rs_env ? std::max(2, rs_env) : (f32 && n >= 16384 ? 6 : 4);
  // order 2's lead (SG_TRSV_HYB_SIM_LEAD): 192 block rows; fp32 256 (same runs: 256 against 192 +0.3-0.8 points at
  // fp32 n = 32768; in fp64 neutral to -0.4 at 16384 .. 32768)
  // fp32 below n = 24576: the model's chain step 320 ns (the chain's measured step while the HBM is lightly
  // loaded, ~0.32 us at fp32 n = 16384), so that order 2 starts at n ~ 15800 (below), and a lead of 128 block rows below
  // n = 20480. Measured on an H100 (same lease, two rounds, bench/trsv/README.md, nineteenth session), us per call,
  // plan / no plan, LN / UT: fp32 16384 255.8 / 252.3-253.2, 273.3 / 268.0 -> 244.4-244.7 / 247.8-248.0, 259.8 /
  // 264.7; fp32 20480 (lead 256) 382.5-383.0 / 366.2-367.2, 399.4-399.9 / 389.4-390.1 -> 363.1-364.2 / 352.6-352.9,
  // 373.5-373.7 / 370.9-372.7, fp32 18432 every variant 4-6 % faster; fp32 15360 (ratio 1.02) and 14336 stay on
  // order 0 (order 2 there: op = T 3.5-5 % slower); at 24576 / 32768 the step 320 is within +1 / -0.5 % of 480,
  // which stays there.
  // The HBM's peak (bytes per us, sg_cuda_hbm_peak): H100 SXM 3.35e6, H200 4.81e6.
  const double peak = sg_cuda_hbm_peak();
  // On the H200 (peak above 3.8e6) the model's step is shorter (values: hy_choose_order). With the H100's steps the H200's larger peak made the model's helpers too fast for the
  // chain: order 0 at fp32 / fp64 n = 16384, whose last quarter of block rows then ran at 0.54-0.59 us against 0.33 (fp32,
  // waiting for S), and an order 2 too lazy above. Measured on an H200, same lease, two rounds within 0.5 %
  // (bench/trsv/README.md, twenty-first session), us per call, plan / no plan, LN / UT, against the H100's values:
  // fp32 16384 207.4 / 236.9, 207.2 / 227.1 -> 192.6 / 218.8, 196.6 / 217.4; fp32 20480 303.5 / 335.7, 294.5 / 333.7 ->
  // 280.4 / 296.1, 259.7 / 310.2; fp32 24576 -10 to -13 %; fp64 16384 318.8 / 337.9, 303.3 / 352.1 -> 292.4 / 310.8,
  // 292.2 / 352.4; fp64 20480 / 24576 -4 to -8 %; fp32 / fp64 12288 within +-2 %. There order 2 starts at fp64 ratios
  // above 1.15 (below): n ~ 14000 (14336: ratio 1.18, order 2 against 0 -1.7 to -2.6 %, UT no plan +0.7 %; 15360 / 16384 /
  // 20480: -4 to -8.5 %, UT no plan +0.5 / 0 / -7.5 %).
  const double        tb = (double)CB * CB * sizeof(T);
  const HyOrderChoice oc = hy_choose_order(f32, n, nb, tb, peak, step_env, lead_env, order_env, bw_env);
  const int           lead = oc.lead, step_ns = oc.step_ns;
  // The look-ahead (measured on an H100 since the update warps' rings lost their divisions,
  // bench/trsv/README.md, eleventh session; same lease, µs per call):
  //  - plans: 2 for fp32 below n = 24576 (LN / UT n = 8192 118.3 / 132.8 -> 109.6 / 114.2, 16384 263.2 /
  //    267.5 -> 258.7 / 253.5; at 24576 / 32768 op = N loses 1-2 %), for op = T everywhere (fp64 UT
  //    8192 153 against 180 with 1), for fp64 op = N up to n = 12288 (8192: 146.2 -> 141.4), and at the
  //    one-cluster kernel's orders (its solves use Q_I); else 1;
  //  - without a plan: 1 for op = N (2 loses 2-4 % at every order); for op = T 2 below fp64 n = 14336 /
  //    fp32 n = 20480 (fp64 UT 8192 173 against 189, fp32 UT 8192 131 against 141) and 1 from there
  //    (fp64 UT 16384 424 -> 412, 32768 1511 -> 1495, fp32 UT 24576 514 -> 499, 32768 827 -> 806).
  const int la_auto = hp ? ((f32 && n < 24576) || tr || (!f32 && n <= 12288) || n <= cl_plan_maxn<T>() ? 2 : 1) : (tr && n < (f32 ? 20480 : 14336) ? 2 : 1);
  const bool pre    = hp && hp->filled;
  // lp: the blocks P_{I,k} per row the inversions form (a filled plan's: hp->la); la: this solve's look-ahead
  const bool one_want = one_env == 1 || one_auto;
  const bool one_ok   = one_want && hp && n > cl_plan_maxn<T>() && cs >= 3;
  const int  b2       = U >= 5 && one_b2_env == 2 ? 2 : 1;  // the one-CTA chain's B2 warps
  const int  one_la   = one_la_env ? one_la_env : b2 == 2 ? 4 : 3;
  const int  la0      = la_env ? la_env : la_auto;
  const int  lp       = pre ? hp->la : hp && one_ok ? std::max(la0, one_la) : la0;
  bool       one    = pre && one_ok && W >= lp + 2 && lp + 1 <= one_zr_env;  // (W: every row past lp waits for an x, the z ring's flow control)
  const int  la     = one ? lp : std::min(pre ? lp : la0, 2);
  if (hy_chunks(nb - 1, W, CT, E) > 2047) return SG_OK;  // (11 bits of chunk index in a job code)
  // The job order (SG_TRSV_HYB_ORDER; hy_build_jobs): 2, the simulated schedule, where the model
  // says the helpers' bytes take longer than the chain's block rows, by 35 % in fp64 (the matrix
  // streams at the HBM's pace: on an H100 fp64 from n ~ 15300, fp32 (where it exceeds them by 5 %) from
  // n ~ 15800 with the model step of 320 ns; on an H200 fp64 ~ 14000, fp32 ~ 14200), else 0 (by rows). The model: the
  // helper warps, their tile time when all stream at ~90 % of the HBM's peak (or SG_TRSV_HYB_SIM_BW GB/s), at most
  // ~10 GB/s per warp, a chain step of SG_TRSV_HYB_SIM_STEP ns, and chunks at most SG_TRSV_HYB_SIM_LEAD block rows
  // ahead of the chain (the steps, leads and thresholds: hy_choose_order, whose host test checks these switch points). The first measurements (with the step of
  // 480 ns everywhere; the fp32 16384 loss below was with it, and the step of 320 turned it into a gain): on an H100,
  // same lease (bench/trsv/README.md), order 2 with lead 192 against 0: fp64 n = 16384 LN / UT +3.1 /
  // +0.2 % (no plan), +2.4 / +0.6 % (plan), n = 32768 +0.5 to +1.4 %, fp32 UT n = 32768 +2.5 / +3.2 %;
  // fp32 UT n = 24576 +6 %; but fp64 n = 8192 -2 to -4 %, n = 12288 (ratio 1.09) -2.5 to -5 %, UT
  // n = 14336 (ratio 1.27) -2 / -3 %, fp32 UT n = 16384 -4 %, where the chain is the limit and the
  // helpers' early loads slow its own.
  const double bw = oc.bw, step_us = step_ns * 1e-3, ratio = oc.ratio;  // (ratio: the helpers' time over the chain's)
  const int    order = oc.order;
  const int optin = sg_cuda_smem_optin();
  const int nbar = hy_nbar(nb, cs, U, xr);
  const int lal = one ? 1 : la;  // the layout's P slots (the one-CTA chain: its z and x rings)
  while (rs > 2 && hy_chain_layout<T>(nbar, U, rs, xr, lal).total + 1024 > (size_t)optin) rs--;  // (fewer slots where they do not fit, also when asked for)
  const size_t chain_b = hy_chain_layout<T>(nbar, U, rs, xr, lal).total;
  // the one-CTA chain's rings: zr z blocks, pr rows of P blocks (in CTA 0's update-warp rings), their barriers in place of rdy, fre, sb
  const int zr = one_zr_env, pr = std::min(one_pr_env, U * rs / std::max(1, la));
  if (one && (U < 4 || pr < 2 || zr + 2 * pr > 2 * U + U * rs)) one = false;  // (hy_one_smem: warps A, B1, producer, B2, C; barriers in rdy, fre, sb)
  const int    hrs_fit = (int)std::min<size_t>(HY_RING_MAX, ((size_t)optin - 1024 - 128) / ((size_t)hw * (CB * CB * sizeof(T) + 8)));
  // helper ring slots: 3; fp32 with the jobs in order 2, 6 (measured on an H100, same lease: LT / UT
  // n = 32768 +2.2 / +1.3 %, n = 24576 +1.8 / +1.2 %; at n = 16384, chain-bound, 6 costs 0.5-2 %)
  const int    hrs_def = f32 && order == 2 ? 6 : 3;
  const int    hrs     = std::min(std::max(hrs_env ? hrs_env : hrs_def, pre ? 0 : lp + 1), hrs_fit);  // (an inversion job holds lp + 1 tiles)
  // an inversion job holds la + 1 tiles in the ring; 1 KB: static shared memory and reserve
  if (hrs < (pre ? std::min(la, 2) : lp) + 1 || chain_b + 1024 > (size_t)optin) return SG_OK;  // (a plan's solve: no inversion job)
  const size_t smem = std::max(chain_b, hy_helper_bytes<T>(hw, hrs));
  const bool   rev = (P->uplo == SG_UPPER) != (P->trans == SG_TRANS), trans = P->trans == SG_TRANS;
  const int    var = 4 * one + 2 * trans + rev;
  void (*const kerns[8])(const HyArgs<T>, const CUtensorMap) = {trsv_hybrid_kernel<T, false, false, false>, trsv_hybrid_kernel<T, false, true, false>,
                                                                 trsv_hybrid_kernel<T, true, false, false>,  trsv_hybrid_kernel<T, true, true, false>,
                                                                 trsv_hybrid_kernel<T, false, false, true>,  trsv_hybrid_kernel<T, false, true, true>,
                                                                 trsv_hybrid_kernel<T, true, false, true>,   trsv_hybrid_kernel<T, true, true, true>};
  auto *const kern = kerns[var];
  static size_t attr[8] = {};  // the dynamic shared memory each instance is set up for
  if (attr[var] < smem) {
    if (cudaFuncSetAttribute(kern, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess ||
        cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem) != cudaSuccess) {
      (void)cudaGetLastError();
      if (getenv("SG_TRSV_PROFILE")) fprintf(stderr, "[trsv hybrid] not used: %zu bytes of shared memory refused\n", smem);
      return SG_OK;
    }
    attr[var] = smem;
  }
  // clusters that fit at once (the chain and the helpers), per instance, for the last (cs, smem) asked
  static struct {
    int    cs = 0, n = 0;
    size_t smem = 0;
  } occ[8];
  if (occ[var].cs != cs || occ[var].smem != smem) {
    const ClLaunch l(cs, HY_WARPS, smem, nullptr);
    int            nc = 0;
    if (cudaOccupancyMaxActiveClusters(&nc, kern, &l.cfg) != cudaSuccess) {
      (void)cudaGetLastError();
      nc = 0;
    }
    occ[var].cs   = cs;
    occ[var].smem = smem;
    occ[var].n    = nc;
  }
  const int nclu = occ[var].n;
  if (nclu < 2) {
    if (getenv("SG_TRSV_PROFILE")) fprintf(stderr, "[trsv hybrid] not used: %d clusters of %d CTAs fit\n", nclu, cs);
    return SG_OK;
  }
  sg_status st;
  // control block (zeroed when allocated): tickets, chunk counters, Dinv flags | x (LL) | S (LL)
  const size_t off_x = align256((4 + 2 * (size_t)nb) * sizeof(unsigned)), off_s = off_x + align256((size_t)nb * CB * sizeof(R));
  const size_t ctl_bytes = off_s + (size_t)nb * CB * sizeof(R);
  void        *old = ctx->work[SG_SLOT_TRSV_HYB];
  const size_t oldb = ctx->work_bytes[SG_SLOT_TRSV_HYB];
  char        *ctl  = (char *)sg_ctx_work(ctx, ctl_bytes, SG_SLOT_TRSV_HYB);
  if (!ctl) return sg_report_set(rep, SG_ERR_MEM, -1, -1, 0.0, "cannot allocate %zu bytes of trsv control memory on the device", ctl_bytes);
  // zeroed also when the layout changes (the counters must start at 0; flags and LL words carry
  // the epoch: a counter of this kernel's calls, its own, so that no flag left by an earlier call
  // can carry the current epoch)
  const bool fresh = ctl != old || oldb != ctx->work_bytes[SG_SLOT_TRSV_HYB] || ctx->trsv_hyb_nb != nb;
  ctx->trsv_hyb_nb = nb;
  if (fresh || ++ctx->trsv_hyb_epoch == 0) {
    if ((st = sg_cuda_check(cudaMemsetAsync(ctl, 0, ctx->work_bytes[SG_SLOT_TRSV_HYB], sg_stream(ctx)), rep, "clearing trsv flags")) != SG_OK) return st;
    ctx->trsv_hyb_epoch = 1;
  }
  // job table: rebuilt and uploaded only when the shape changes
  // (order 2's model: the helpers as launched)
  HySchedModel md;
  md.helpers = std::max(1, (nclu - 1) * cs * hw);
  md.step_us = step_us;
  md.tile_us = std::max(tb / 1e4, tb * md.helpers / bw);
  md.lead    = lead;
  unsigned long long h = 1469598103934665603ull;  // (FNV-1a over the table's parameters; bit 62 marks this kernel's tables)
  for (long long v : {(long long)nb, (long long)W, (long long)CT, (long long)E, (long long)PD, (long long)order, (long long)pre, (long long)md.helpers,
                      (long long)(md.tile_us * 1e6), (long long)step_ns, (long long)lead, (long long)sizeof(T)})
    h = (h ^ (unsigned long long)v) * 1099511628211ull;
  const long long key = (long long)((h & ((1ull << 62) - 1)) | (1ull << 62));
  if (key != ctx->trsv_table_key) {
    std::vector<int> jobs;
    hy_build_jobs(nb, W, CT, E, PD, order, pre, md, jobs);
    if ((st = trsv_upload_jobs(ctx, key, jobs, rep)) != SG_OK) return st;
  }
  const int    njobs = (int)ctx->trsv_table_jobs;
  const int    maxch = std::max(1, hy_chunks(nb - 1, W, CT, E));
  const size_t tiles = (size_t)nb * CB * CB, ibytes = (1 + (size_t)lp) * tiles * sizeof(T);
  const size_t wbytes = (hp ? 0 : ibytes) + (size_t)nb * maxch * CB * sizeof(T);
  if (hp && !hp->filled) {  // the plan's storage for the inverted blocks
    if (hp->inv && hp->inv_bytes < ibytes) {
      (void)cudaFree(hp->inv);
      hp->inv       = nullptr;
      hp->inv_bytes = 0;
    }
    if (!hp->inv) {
      if (cudaMalloc(&hp->inv, ibytes) != cudaSuccess) {
        (void)cudaGetLastError();
        hp->inv = nullptr;
        return sg_report_set(rep, SG_ERR_MEM, -1, -1, 0.0, "cannot allocate %zu bytes for the plan's inverted diagonal blocks", ibytes);
      }
      hp->inv_bytes = ibytes;
    }
  }
  T *wk = (T *)sg_ctx_work(ctx, wbytes, SG_SLOT_TRSV_PART);
  if (!wk) return sg_report_set(rep, SG_ERR_MEM, -1, -1, 0.0, "cannot allocate %zu bytes for the inverted diagonal blocks", wbytes);
  T *inv = hp ? (T *)hp->inv : wk;
  HyArgs<T> a;
  cl_args_fill(a, ctx, P, pivtol, nb, 0, rs);
  a.W      = W;
  a.CT     = CT;
  a.E      = E;
  a.U      = U;
  a.xr     = xr;
  a.nbar   = nbar;
  a.hw     = hw;
  a.hrs    = hrs;
  a.njobs  = njobs;
  a.maxch  = maxch;
  a.jobs   = (const int *)ctx->work[SG_SLOT_TRSV_TABLE];
  a.ctl    = (unsigned *)ctl;
  a.xll    = (R *)(ctl + off_x);
  a.sll    = (R *)(ctl + off_s);
  a.dg     = inv;
  a.pg     = inv + tiles;
  a.qg     = lp >= 2 ? inv + 2 * tiles : nullptr;
  a.part   = hp ? wk : wk + (1 + (size_t)lp) * tiles;
  a.pre    = pre;
  a.epoch  = ctx->trsv_hyb_epoch;
  a.hfence = fence_env;
  a.ttail  = ttail_env && rs >= 2;  // (its scratch takes the ring's first CB * CLD elements: more than one slot)
  a.la     = la;
  a.lp     = lp;
  a.zr     = zr;
  a.pr     = pr;
  a.b2     = b2;
  a.spref  = pre && spref_env;
  *used    = true;
  const size_t nprof = 9 * (size_t)nb + 6;  // (the one-CTA chain's critical warp: 4 more per row)
  if (getenv("SG_TRSV_PROFILE")) {  // diagnostics: a timeline per block row, printed to stderr after a synchronous solve
    a.prof = (unsigned long long *)sg_ctx_work(ctx, nprof * sizeof(unsigned long long), SG_SLOT_TRSV_BATCH);
    if (!a.prof) return sg_report_set(rep, SG_ERR_MEM, -1, -1, 0.0, "trsv profile buffer");
    (void)cudaMemsetAsync(a.prof, 0, nprof * sizeof(unsigned long long), sg_stream(ctx));
  }
  if ((st = sg_dev_report_reset(ctx, rep)) != SG_OK) return st;
  ClLaunch l(cs, HY_WARPS, smem, sg_stream(ctx));
  l.cfg.gridDim = dim3((unsigned)(cs * (njobs ? nclu : 1)));  // no helper job: the chain's cluster alone
  if ((st = sg_cuda_check(cudaLaunchKernelEx(&l.cfg, kern, a, *pmap), rep, "trsv cluster + helpers launch")) != SG_OK) return st;
  if (a.prof) {
    std::vector<unsigned long long> h(nprof);
    (void)cudaMemcpy(h.data(), a.prof, nprof * sizeof(unsigned long long), cudaMemcpyDeviceToHost);
    const double t0 = (double)h[4 * nb];
    auto us = [&](size_t i) { return h[i] ? (h[i] - t0) * 1e-3 : -1.0; };
    fprintf(stderr, "[trsv hybrid] n=%d nb=%d cs=%d clusters=%d W=%d x barriers=%d CT=%d U=%d rs=%d hw=%d hrs=%d la=%d lp=%d one=%d zr=%d pr=%d jobs=%d order=%d (model: peak %.0f GB/s, step %d ns, ratio %.2f) lead=%d smem=%zu; late probes of S: %llu; start-up (us): barriers set up %.2f, cluster barrier %.2f, row 0's update warp at b_0 (upper bound) %.2f, z_0 taken %.2f; per block row I (us from the chain's start): last window x here / S taken / z handed / x_I formed / S published\n",
            n, nb, cs, nclu, W, nbar, CT, U, rs, hw, hrs, la, lp, (int)one, zr, pr, njobs, order, peak * 1e-3, step_ns, ratio, md.lead, smem, h[4 * nb + 1], us(5 * (size_t)nb + 2), us(5 * (size_t)nb + 3), us(5 * (size_t)nb + 5), us(5 * (size_t)nb + 4));
    for (int I = 0; I < nb; I++) {
      fprintf(stderr, "  %4d: %9.2f %9.2f %9.2f %9.2f %9.2f", I, (h[4 * I] - t0) * 1e-3, (h[4 * I + 1] - t0) * 1e-3, (h[4 * I + 2] - t0) * 1e-3, (h[4 * I + 3] - t0) * 1e-3,
              h[4 * nb + 2 + I] ? (h[4 * nb + 2 + I] - t0) * 1e-3 : 0.0);
      if (one)  // the critical warp A: row start / P_{I,1} here / w_I here; warp C: x_I sent
        fprintf(stderr, " | %9.2f %9.2f %9.2f %9.2f", us(5 * (size_t)nb + 6 + 4 * (size_t)I), us(5 * (size_t)nb + 7 + 4 * (size_t)I), us(5 * (size_t)nb + 8 + 4 * (size_t)I),
                us(5 * (size_t)nb + 9 + 4 * (size_t)I));
      fprintf(stderr, "\n");
    }
  }
  st = sg_dev_report_fetch(ctx, rep, [](sg_report *r, int cls, long long, long long row, double value) { return sg_trsv_report_fail(r, cls, -1, row, value); });
  if (st == SG_ERR_DEVICE) {  // an aborted launch may leave counters behind: start clean next time
    ctx->trsv_table_key = -1;
    (void)cudaMemsetAsync(ctl, 0, off_x, sg_stream(ctx));
  }
  if (one && hp) hp->one_solves++;  // (the tests check that the one-CTA chain ran where they ask for it)
  if (hp && !hp->filled && st == SG_OK) {  // every pivot checked, every block inverted
    hp->la     = lp;
    hp->filled = 1;
  }
  return st;
}

template sg_status trsv_hybrid_solve<double>(sg_ctx *, const sg_trsv_problem *, double, sg_report *, bool *, sg_trsv_plan_s *);
template sg_status trsv_hybrid_solve<float>(sg_ctx *, const sg_trsv_problem *, double, sg_report *, bool *, sg_trsv_plan_s *);

} // namespace sgtrsv
