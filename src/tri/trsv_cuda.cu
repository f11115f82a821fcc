// Dense triangular solves on the GPU: sg_trsv_cuda (one system, n up to millions of
// unknowns, up to 16 right-hand sides); building blocks in trsv_cuda.cuh, batches in
// trsv_batch_cuda.cu.
// (One right-hand side of modest order runs on one thread-block cluster instead, and fp64 from
// n = 8192 on that chain plus helper clusters: trsv_cluster_cuda.cu, tried first by dispatch_one.)
// One system: a latency-critical "chain" CTA plus bandwidth "helper" CTAs (beyond Hogg,
// whose every block row waits for its predecessor through global flags):
//  - the chain walks the block rows I = 0, 1, ... on its own: y = b_I - (helpers' partial
//    sums) - sum_{J=I-L}^{I-1} M(I,J) x_J, x_I = Dinv_I y. The x_J it needs are its own (in
//    shared memory), so the critical path per block row is two 64 x 64 GEMVs and a few CTA
//    barriers, with no round trip through L2. Its loads go through a ring of shared-memory
//    slots issued ahead of need, each completing on the slot's mbarrier: a tile is ONE tensor
//    copy of a 64 x 64 box of A (the copy engine; 4096 per-thread cp.async or 64 line copies
//    per tile were measured to cost the chain 0.6-0.85 us per tile just to issue), Dinv_I one
//    bulk copy, b_I per-thread cp.async. Lag L = 1 by default (measured best here). With one
//    right-hand side and every tile one tensor copy, chain_prod runs instead: two copy warps
//    (chain_producer: one issues, one hands over) feed the ring outside the chain's barriers
//    (issuing stalls the issuing warp ~0.2 us per copy) through hardware named barriers, and the
//    chain's 512 threads split into a critical group (x_I from x_{I-1}: one tile and Dinv_I, sums
//    by shuffles, two barriers per row) and an off group (the row's other L-1 tiles beside it).
//  - inversion jobs invert the diagonal tiles (Higham's method, trsv_cuda.cuh) into a
//    workspace and publish each with a release flag; they depend on nothing.
//  - helper jobs compute the rest of block row I (columns 0 .. I-L-1, in chunks of CT tiles,
//    at most MAXH per row) from the published x_J and hand the chain one partial sum each.
//  - x_J and the partial sums are published in "LL" form (as in NCCL's low-latency protocol):
//    every 4-byte half of a value travels with the call's epoch in the same 8-byte word, so a
//    reader polls the data itself: no fences, no flag round trip, nothing to reset (the epoch
//    is a per-call counter).
//  - jobs take tickets in the order chain, inversions (P ahead), then row by row; a job only
//    waits for smaller tickets or for work that needs no resource, so the solve cannot
//    deadlock whatever the scheduler does (see build_jobs).
#include "tri/trsv_cuda.cuh"
#include <cudaTypedefs.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <vector>

namespace {
using namespace sgtrsv;

// ---------------------------------------------------------------- one system
constexpr int NB1 = 64, G1 = 8, NT1 = NB1 * G1;  // tile, column groups, threads
constexpr int MAXH = G1;                         // helper partial sums per row (one per column group of the chain)
// largest lag L; the chain keeps x of rows I-L..I (XW slots) and b of the rows in flight
// (BW slots: at most 3 rows past the current one are issued, fewer with K = 16's 3-tile ring)
template <int K> constexpr int lag_max() { return K >= 16 ? 2 : 4; }
template <int K> constexpr int XW() { return lag_max<K>() + 1; }
template <int K> constexpr int BW() { return K >= 16 ? 3 : 4; }
constexpr int PINV = 16;                         // inversion jobs ticketed ahead of the rows
constexpr int TILE1 = NB1 * (NB1 + 1);           // a tile in the layout of load_tile / gemv (and of Dinv)
// ring slots hold SLOT1 values: a tile in either layout (the chain's: the 64 x 64 box of A as the
// copy engine writes it, dense; 128-byte aligned slots)
constexpr int SLOT1 = TILE1;  // 33280 (fp64) or 16640 (fp32) bytes: multiples of 128
constexpr int HST = 3;                           // helpers' ring depth (3 and 6 measured alike; fewer bytes in flight)
constexpr int JOB_INV = 14, JOB_CHAIN = 15;      // job codes (I << 4) | c; c < MAXH: helper chunk c
constexpr size_t SMEM_OPTIN = 232448 - 1024;     // sm_90 opt-in limit less the static shared memory

// shared memory: the tile ring (ST tiles) + red (G x NB x K) + x window (XW x NB x K) + ys (NB x K)
// + b window (BW x NB x K) + row sums of op = T (NB x K), and 128 bytes to align the ring
template <class T, int K> constexpr size_t one_extra() { return (size_t)(G1 + XW<K>() + BW<K>() + 2) * NB1 * K + 128 / sizeof(T); }
template <class T, int K> constexpr int one_stages()
{
  const size_t st = (SMEM_OPTIN / sizeof(T) - one_extra<T, K>()) / SLOT1;
  return st > 6 ? 6 : (int)st;
}
// PROD (the copy-warp chain): slots of whole KB, 1024-byte aligned (the copy engine's 128-byte
// swizzle repeats every 1024 bytes; prod_at assumes it starts at a slot)
template <class T, bool PROD> constexpr int slot_vals() { return PROD ? (int)((SLOT1 * sizeof(T) + 1023) / 1024 * 1024 / sizeof(T)) : SLOT1; }
template <class T, int K, bool PROD> constexpr size_t one_smem()
{
  return sizeof(T) * ((size_t)one_stages<T, K>() * slot_vals<T, PROD>() + one_extra<T, K>()) + (PROD ? 1024 : 0);
}

// ---- bulk copies (the Hopper copy engine) completing on an mbarrier (sys/sg_cuda.cuh): the
// chain's Dinv tiles. One thread issues 33 KB with one instruction, so the chain's own loads do
// not compete with its tile stream for per-thread load slots.

template <class T> struct OneArgs {
  using R = typename LLw<T>::raw;
  View<T>        V;
  const T       *B;
  long long      ldb;
  T             *X;
  long long      ldx;
  int            nrhs, nblk, CT, L;
  bool           bulk;                      // the chain's tiles by tensor copies (the kernel's tensor map is valid)
  const int     *jobs;
  unsigned      *ctl;   // [0] ticket, [1] done, [2 + I] = epoch once Dinv_I is published
  R             *xll;   // x_J in LL form, [(J*NB + r)*K + k]
  R             *part;  // helpers' partial sums in LL form, [((I*MAXH + h)*K + k)*NB + r]
  T             *dinv;  // inverted diagonal tiles, [I][TILE1]
  unsigned       epoch;
  T              pivtol;
  bool           unit;
  sg_dev_report *rep;
  unsigned long long *prof;  // NULL, or SG_TRSV_PROFILE: the chain's time per phase (see chain_job)
};

// helper chunks of block row I: columns 0 .. I-L-1 in chunks of CT tiles (host and device)
__host__ __device__ __forceinline__ int one_chunks(int I, int L, int CT) { return I > L ? (I - L + CT - 1) / CT : 0; }

// SG_TRSV_PROFILE's start-up timeline: the GPU's global timer (ns)
__device__ __forceinline__ unsigned long long gtimer()
{
  unsigned long long t;
  asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
  return t;
}
// ---- the copy-warp chain's thread layout (chain_prod): its 512 job threads are two groups of
// eight warps, the critical group C (threads 0..255: x_I from x_{I-1}) and the off group O (256..511:
// the tiles of the next row that need only older x). In either group thread t works on rows
// r0 = prod_row(t) and r0 + 32 of a block row and on the eight columns g + 8q (g = t % 8, q = 0..7);
// the eight lanes of a row are consecutive, so a row's products are summed by three shuffles inside
// the warp (no shared-memory reduction, no barrier). Warp w (of its group) holds rows
// 16 (w / 4) + {0, 2, 8, 10}[w % 4] + {0, 1, 4, 5}[lane / 8] (+ 32): with these rows every read of a
// swizzled tile (prod_at) takes the fewest wavefronts in all four variants (fp64; fp32: two per 128
// bytes), and x is read as eight 64-byte runs (checked exhaustively).
constexpr int NTC = NT1 / 2;  // threads per group
__device__ __forceinline__ int prod_row(int tid)
{
  const int w = (tid >> 5) & 7, rl = (tid >> 3) & 3;
  return 16 * (w >> 2) + ((w & 1) << 1) + ((w & 2) << 2) + (rl & 1) + ((rl & 2) << 1);
}
// Dinv_I for C, thread-major (inv_job<T, true>): element k * NTC + t is Dinv(r0, g + 8k) for k < 4 (the
// columns of row r0 < 32 that can be in the lower triangle) and Dinv(r0 + 32, g + 8(k - 4)) for k >= 4.
constexpr int PDV = 12;                  // Dinv values per C thread
constexpr int PD_VALS = PDV * NTC;       // values of a PROD Dinv tile; b_I follows (NB1 values)
constexpr int PD_ITEM = PD_VALS + NB1;   // values of the chain's Dinv_I item
// Element (r, c) of tile (I, J) of M in a ring slot filled by prod tensor copies: the 64 x 64 box of
// A as NB1 / E boxes of E x 64 (E = 128 bytes of rows), each line of 128 bytes (one column of A)
// swizzled by the copy engine (CU_TENSOR_MAP_SWIZZLE_128B: 16-byte chunk k of line v at k ^ (v % 8)).
template <class T> __device__ __forceinline__ int prod_at(int r, int c, bool trans, bool rev)
{
  constexpr int E = 128 / (int)sizeof(T), P = 16 / (int)sizeof(T);
  int           u = trans ? c : r, v = trans ? r : c;
  if (rev) { u = NB1 - 1 - u; v = NB1 - 1 - v; }
  const int ue = u % E;
  return (u / E) * (NB1 * E) + v * E + (((ue / P) ^ (v & 7)) * P) + ue % P;
}

// Inversion job: Dinv_I to the workspace, then its flag. Layout: that of a shared-memory tile
// (load_tile / gemv), or PROD (chain_prod): its own order (PDV above), so each thread of the chain's
// critical group reads its twelve values conflict-free.
template <class T, bool PROD> __device__ void inv_job(const OneArgs<T> &a, int I, T *S)
{
  if (a.prof && I == 0 && threadIdx.x == 0) a.prof[11] = gtimer();
  load_tile<T, NB1, NT1>(S, a.V, I, I, a.unit);
  cp_commit();
  cp_wait<0>();
  bar_sync<NT1>();
  if (a.prof && I == 0 && threadIdx.x == 0) a.prof[12] = gtimer();
  if (!a.unit) check_diag<T, NB1>(S, a.V, I, a.pivtol, 0, a.rep);
  T *X = S + SLOT1;
  invert_lower<T, NB1, NT1>(S, X, S + 2 * SLOT1, a.prof && I == 0 ? a.prof + 16 : nullptr);  // ends with a barrier
  if (a.prof && I == 0 && threadIdx.x == 0) a.prof[13] = gtimer();
  if constexpr (PROD) {  // and b_I after it (rows past n: 0), so that one copy brings both to the chain
    T *dst = a.dinv + (size_t)I * TILE1;
    for (int e = threadIdx.x; e < PD_VALS; e += NT1) {
      const int t = e % NTC, k = e / NTC, r = prod_row(t) + (k < 4 ? 0 : 32), c = (t & 7) + 8 * (k < 4 ? k : k - 4);
      dst[e] = X[c * (NB1 + 1) + r];
    }
    if (threadIdx.x < NB1) {
      const int row = I * NB1 + threadIdx.x;
      dst[PD_VALS + threadIdx.x] = row < a.V.n ? a.B[a.V.orig(row)] : T(0);
    }
  } else {
    const int4 *src = (const int4 *)X;
    int4       *dst = (int4 *)(a.dinv + (size_t)I * TILE1);
    for (int e = threadIdx.x; e < TILE1 * (int)sizeof(T) / 16; e += NT1) dst[e] = src[e];
  }
  asm volatile("fence.proxy.async.global;\n" ::: "memory");  // the chain reads Dinv_I with the copy engine (async proxy)
  bar_sync<NT1>();
  if (threadIdx.x == 0) st_release(a.ctl + 2 + I, a.epoch);  // after the barrier: releases the whole tile
  if (a.prof && I == 0 && threadIdx.x == 0) a.prof[14] = gtimer();
}

// Helper job c of block row I: partial sum over columns j0 .. j1-1 into part[I][c].
template <class T, int K, int ST> __device__ void helper_job(const OneArgs<T> &a, int I, int c, T *S, T *red, T *xs)
{
  using R = typename LLw<T>::raw;
  constexpr int QB = (NB1 * K + NT1 - 1) / NT1;
  const int     tid = threadIdx.x, j0 = c * a.CT, j1 = min((c + 1) * a.CT, I - a.L), nitems = j1 - j0;
  auto issue = [&](int t) {
    if (t < nitems) load_tile<T, NB1, NT1>(S + (t % ST) * SLOT1, a.V, I, j0 + t, a.unit);
    cp_commit();
  };
  R    xr[QB];
  auto x_issue = [&](int J) {
#pragma unroll
    for (int q = 0; q < QB; q++) {
      const int e = tid + q * NT1;
      if (e < NB1 * K) xr[q] = ll_ld(a.xll + ((size_t)J * NB1 + e % NB1) * K + e / NB1);
    }
  };
  auto x_finish = [&](int J, T *dst) {
#pragma unroll
    for (int q = 0; q < QB; q++) {
      const int e = tid + q * NT1;
      if (e < NB1 * K) dst[(e % NB1) * K + e / NB1] = ll_wait(a.xll + ((size_t)J * NB1 + e % NB1) * K + e / NB1, xr[q], a.epoch, true);
    }
  };
  for (int t = 0; t < ST - 1; t++) issue(t);
  x_issue(j0);
  x_finish(j0, xs);
  T acc[K];
#pragma unroll
  for (int k = 0; k < K; k++) acc[k] = T(0);
  for (int t = 0; t < nitems; t++) {
    const bool next = t + 1 < nitems;
    if (next) x_issue(j0 + t + 1);  // the L2 round trip overlaps this tile's work
    cp_wait<ST - 2>();
    bar_sync<NT1>();
    gemv<T, NB1, G1, K>(S + (t % ST) * SLOT1, xs + (t & 1) * NB1 * K, acc);
    issue(t + ST - 1);
    if (next) x_finish(j0 + t + 1, xs + ((t + 1) & 1) * NB1 * K);
  }
  cp_wait<0>();
  store_groups<T, NB1, G1, K>(red, acc);
  bar_sync<NT1>();
#pragma unroll
  for (int q = 0; q < QB; q++) {
    const int e = tid + q * NT1, r = e % NB1, k = e / NB1;
    if (e < NB1 * K) ll_st(a.part + ((size_t)(I * MAXH + c) * K + k) * NB1 + r, group_sum<T, NB1, G1, K>(red, r, k), a.epoch);
  }
}

// One warp: wait until Dinv_I is published; returns J > I such that Dinv_I .. Dinv_{J-1} are
// (it looks at 32 flags at once; rows past nblk count as published). The acquire is lane i's for
// Dinv_{I+i}: a lane that reads another lane's block has to order itself after it (__syncwarp).
template <class T> __device__ __forceinline__ int dinv_ready(const OneArgs<T> &a, int I)
{
  const int lane = threadIdx.x % 32;
  unsigned  m;
  for (;;) {
    const int jj = I + lane;
    m            = __ballot_sync(~0u, jj >= a.nblk || ld_acquire(a.ctl + 2 + jj) == a.epoch);
    if (m & 1u) break;
  }
  return I + (~m ? __ffs(~m) - 1 : 32);
}

// The chain's tiles: tile (I, J) of M is a 64 x 64 box of A (transposed for op = T, reflected
// for the backward variants UN / LT); the box's element (row u, column v) of A lands at
// S[v*NB + u], as the copy engine writes it (rows or columns outside the matrix: zero).
// M(I*NB + r, J*NB + c) = S[chain_at(r, c)].
__device__ __forceinline__ int chain_at(int r, int c, bool trans, bool rev)
{
  const int u = trans ? c : r, v = trans ? r : c;  // box coordinates before the reflection
  return (rev ? NB1 - 1 - v : v) * NB1 + (rev ? NB1 - 1 - u : u);
}
// Tile (I, J) of M: the origin (r0, c0) in A of its 64 x 64 box (transposed for op = T, reflected
// for UN / LT). Used by the chain's own copies and by the copy warps.
template <class T> __device__ __forceinline__ void tile_box(const View<T> &V, int I, int J, int &r0, int &c0)
{
  const int n = V.n, i0 = I * NB1, j0 = J * NB1;
  r0 = V.rev ? n - NB1 - (V.trans ? j0 : i0) : (V.trans ? j0 : i0);
  c0 = V.rev ? n - NB1 - (V.trans ? i0 : j0) : (V.trans ? i0 : j0);
}
// Off-diagonal tile (I, J) into the slot: one tensor copy (the copy engine; completes on bar), or
// (no tensor map, or the partial last block row) element by element with cp.async (the item's
// group; then thread 0 gives bar its arrival).
template <class T> __device__ void chain_load(T *dst, const View<T> &V, int I, int J, const CUtensorMap *map, unsigned long long *bar)
{
  const int n = V.n, i0 = I * NB1, tid = threadIdx.x;
  int       r0, c0;
  tile_box(V, I, J, r0, c0);
  if (map && i0 + NB1 <= n) {  // full tiles only: a partial one (the last block row) would need negative coordinates when reflected
    if (tid == 0) {
      mbar_expect(bar, NB1 * NB1 * (unsigned)sizeof(T));
      tma_load_2d(dst, map, r0, c0, bar);
    }
    return;
  }
  for (int e = tid; e < NB1 * NB1; e += NT1) {
    const int u = r0 + e % NB1, v = c0 + e / NB1;
    if (u >= 0 && u < n && v >= 0 && v < n) cp_async(dst + e, V.A + u + (long long)v * V.lda);
    else dst[e] = T(0);
  }
  if (tid == 0) mbar_arrive(bar);
}
// op = N: acc[k] += sum over this thread's column group of M(r, c) x(c, k) (thread (g, r), as gemv)
template <class T, int K> __device__ __forceinline__ void chain_gemv(const T *St, const T *xs, T (&acc)[K], bool rev)
{
  constexpr int CPG = NB1 / G1;
  const int     r = threadIdx.x % NB1, c0 = (threadIdx.x / NB1) * CPG;
#pragma unroll
  for (int q = 0; q < CPG; q++) {
    const T a = St[chain_at(r, c0 + q, false, rev)];
#pragma unroll
    for (int k = 0; k < K; k++) acc[k] = fma(a, xs[(c0 + q) * K + k], acc[k]);
  }
}
// op = T (a row of M is contiguous in the slot): warp w sums rows 4w .. 4w+3 over all columns,
// lanes over columns; the four row sums by a reduce-scatter butterfly (xor 16 and 8 halve the
// rows a lane carries, xor 4, 2, 1 finish one row per 8-lane group: 6 shuffles per column of
// x instead of 4 x 5); lane 8q of the warp adds row 4w + q to ts[r*K + k]
template <class T, int K> __device__ __forceinline__ void chain_gemv_rows(const T *St, const T *xs, T *ts, bool rev)
{
  static_assert(NB1 / (NT1 / 32) == 4, "four rows per warp");
  const int  lane = threadIdx.x % 32, w = threadIdx.x / 32;
  const bool hi16 = lane & 16, hi8 = lane & 8;
  T          a0[4], a1[4];
#pragma unroll
  for (int q = 0; q < 4; q++) {
    a0[q] = St[chain_at(w * 4 + q, lane, true, rev)];
    a1[q] = St[chain_at(w * 4 + q, lane + 32, true, rev)];
  }
#pragma unroll
  for (int k = 0; k < K; k++) {
    const T x0 = xs[lane * K + k], x1 = xs[(lane + 32) * K + k];
    T       v[4];
#pragma unroll
    for (int q = 0; q < 4; q++) v[q] = fma(a0[q], x0, a1[q] * x1);
    // xor 16: the lower half keeps rows 0, 1, the upper half rows 2, 3
    const T s0 = __shfl_xor_sync(~0u, hi16 ? v[0] : v[2], 16), s1 = __shfl_xor_sync(~0u, hi16 ? v[1] : v[3], 16);
    const T w0 = (hi16 ? v[2] : v[0]) + s0, w1 = (hi16 ? v[3] : v[1]) + s1;
    // xor 8: keep one row of the two
    T z = (hi8 ? w1 : w0) + __shfl_xor_sync(~0u, hi8 ? w0 : w1, 8);
#pragma unroll
    for (int o = 4; o > 0; o /= 2) z += __shfl_xor_sync(~0u, z, o);
    if ((lane & 7) == 0) ts[(w * 4 + (hi16 ? 2 : 0) + (hi8 ? 1 : 0)) * K + k] += z;
  }
}

// The chain: block rows in order, x_I from its own x_{I-L..I-1}, the helpers' sums and Dinv_I.
// Nothing it waits for in the steady state is a global-memory round trip issued in the same
// step: tiles, Dinv_I and b_I come through the cp.async ring (b_I with Dinv_I), the helpers'
// sums of row I are loaded one row ahead, and the Dinv flags are polled 32 rows at a time.
// The hand-off between the copy warps and the chain (chain_prod), slot q of the ring: hardware
// barriers FULL(q) (the hand-over warp arrives once slot q holds its item, the chain's 512 threads
// wait) and EMPTY(q) (the chain's threads arrive once they are done with it, the issuing warp waits):
// 544 threads each. Named barriers 2 .. 2 + 2 ST - 1 (0: __syncthreads, 1: the job threads'
// bar_sync). The chain's two groups reach them (and barrier 1, prod_sync) from different code, so
// these are the non-aligned barrier instructions.
constexpr int CHAIN_BARS = NT1 + 32;
__device__ __forceinline__ void bar_full_sync(int q) { asm volatile("barrier.sync %0, %1;\n" ::"r"(2 + q), "n"(CHAIN_BARS) : "memory"); }
__device__ __forceinline__ void bar_full_arrive(int q) { asm volatile("barrier.arrive %0, %1;\n" ::"r"(2 + q), "n"(CHAIN_BARS) : "memory"); }
__device__ __forceinline__ void bar_empty_sync(int q) { asm volatile("barrier.sync %0, %1;\n" ::"r"(8 + q), "n"(CHAIN_BARS) : "memory"); }
__device__ __forceinline__ void bar_empty_arrive(int q) { asm volatile("barrier.arrive %0, %1;\n" ::"r"(8 + q), "n"(CHAIN_BARS) : "memory"); }
__device__ __forceinline__ void prod_sync() { asm volatile("barrier.sync 1, %0;\n" ::"n"(NT1) : "memory"); }

// (One right-hand side with every tile one tensor copy runs chain_prod instead, fed by the copy
// warp.) The chain issues its own copies (issue()).
template <class T, int K, int ST>
__device__ void chain_job(const OneArgs<T> &a, const CUtensorMap *map, T *S, T *red, T *xw, T *ys, T *bw, T *ts, unsigned long long *s_bar)
{
  using R = typename LLw<T>::raw;
  constexpr int KP = K < 2 ? K : 2;  // partial sums prefetched in registers (more: polled when needed)
  const View<T> &V = a.V;
  const int      tid = threadIdx.x, g = tid / NB1, r = tid % NB1, nblk = a.nblk, L = a.L;
  __shared__ int                s_dready[2];  // alternating: two polls without a barrier between them never share a slot
  if (a.prof && tid == 0) a.prof[8] = gtimer();
  // item stream, in consumption order: for each row I, tiles (I, max(0,I-L)) .. (I, I-1), then
  // Dinv_I (a bulk copy into the item's ring slot; b_I by cp.async in the item's group)
  int  ci = 0, cj = 0, slot = 0, dready = 0, npoll = 0;  // dready: Dinv_0 .. Dinv_{dready-1} are published
  auto issue = [&]() {
    if (ci < nblk) {
      T *dst = S + (slot % ST) * SLOT1;
      unsigned long long *bar = s_bar + slot % ST;
      if (cj == ci) {
        if (ci >= dready) {  // wait for Dinv_ci (its job depends on nothing); learn about 31 more
          if (tid < 32) {
            unsigned m;
            for (;;) {
              const int jj = ci + tid;
              m            = __ballot_sync(~0u, jj >= nblk || ld_acquire(a.ctl + 2 + jj) == a.epoch);
              if (m & 1u) break;
            }
            if (tid == 0) s_dready[npoll & 1] = ci + (~m ? __ffs(~m) - 1 : 32);
          }
          bar_sync<NT1>();
          dready = s_dready[npoll++ & 1];
        }
        if (tid == 0) {
          mbar_expect(bar, TILE1 * (unsigned)sizeof(T));
          bulk_copy(dst, a.dinv + (size_t)ci * TILE1, TILE1 * (unsigned)sizeof(T), bar);
        }
        issue_rhs<T, NB1, NT1, K>(V, ci, a.B, a.ldb, a.nrhs, bw + (ci % BW<K>()) * NB1 * K);
        ci++;
        cj = max(0, ci - L);
      } else if (V.trans && K >= 4) {  // several columns: the transposing copy of load_tile, summed by gemv
        load_tile<T, NB1, NT1>(dst, V, ci, cj++, a.unit);
        if (tid == 0) mbar_arrive(bar);
      } else chain_load<T>(dst, V, ci, cj++, map, bar);
    }
    cp_commit();
    slot++;
  };
  auto part = [&](int I, int k) { return a.part + ((size_t)(I * MAXH + g) * K + k) * NB1 + r; };
  R    pr[KP];  // row I's first partial sums, loaded during row I-1
  auto load_parts = [&](int I) {
    if (I < nblk && g < one_chunks(I, L, a.CT)) {
#pragma unroll
      for (int k = 0; k < KP; k++) pr[k] = ll_ld(part(I, k));
    }
  };
  for (int t = 0; t < ST - 1; t++) issue();
  load_parts(0);
  if (a.prof && tid == 0) a.prof[9] = gtimer();
  int used = 0;  // items consumed
  // SG_TRSV_PROFILE (thread 0's clock): [0] tile waits, [1] tile GEMVs, [2] Dinv wait, [3] helpers'
  // sums wait, [4] finish, [5] issuing loads; prof[5] total, [6] issue, [7] steps
  unsigned long long pt[6] = {0, 0, 0, 0, 0, 0}, tc = clock64(), t0 = tc;
  auto tick = [&](int phase) {
    if (a.prof) {
      const unsigned long long t = clock64();
      pt[phase] += t - tc;
      tc = t;
    }
  };
  for (int I = 0; I < nblk; I++) {
    T acc[K];
#pragma unroll
    for (int k = 0; k < K; k++) acc[k] = T(0);
    if (V.trans && K < 4 && tid % 32 == 0)  // the rows this lane sums (chain_gemv_rows); read back after barriers
      for (int e = (tid / 32) * (NB1 / (NT1 / 32)) * K; e < (tid / 32 + 1) * (NB1 / (NT1 / 32)) * K; e++) ts[e] = T(0);
    for (int J = max(0, I - L); J < I; J++, used++) {
      cp_wait<ST - 2>();
      mbar_wait(s_bar + used % ST, (used / ST) & 1);
      bar_sync<NT1>();
      tick(0);
      if (V.trans && K >= 4) gemv<T, NB1, G1, K>(S + (used % ST) * SLOT1, xw + (J % XW<K>()) * NB1 * K, acc);
      else if (V.trans) chain_gemv_rows<T, K>(S + (used % ST) * SLOT1, xw + (J % XW<K>()) * NB1 * K, ts, V.rev);
      else chain_gemv<T, K>(S + (used % ST) * SLOT1, xw + (J % XW<K>()) * NB1 * K, acc, V.rev);
      tick(1);
      issue();
      tick(5);
    }
    cp_wait<ST - 2>();
    mbar_wait(s_bar + used % ST, (used / ST) & 1);
    bar_sync<NT1>();
    tick(2);
    const T *Dinv = S + (used++ % ST) * SLOT1;
    if (g < one_chunks(I, L, a.CT)) {  // thread (g, r) adds helper g's sum of row r: the group sums combine them
#pragma unroll
      for (int k = 0; k < K; k++) acc[k] += k < KP ? ll_wait(part(I, k), pr[k < KP ? k : 0], a.epoch, false) : ll_wait(part(I, k), ll_ld(part(I, k)), a.epoch, false);
    }
    tick(3);
    load_parts(I + 1);
    store_groups<T, NB1, G1, K>(red, acc);
    bar_sync<NT1>();
    form_rhs<T, NB1, NT1, K>(red, bw + (I % BW<K>()) * NB1 * K, ys, V.trans && K < 4 ? ts : nullptr);
    bar_sync<NT1>();
    solve_diag<T, NB1, NT1, K>(V, I, Dinv, ys, red, a.nrhs, 0, a.rep, [&](int rr, int k, T x, bool valid) {
      if (valid) a.X[V.orig(I * NB1 + rr) + k * a.ldx] = x;
      xw[(I % XW<K>()) * NB1 * K + rr * K + k] = x;
      if (I + L + 1 < nblk) ll_st(a.xll + ((size_t)I * NB1 + rr) * K + k, x, a.epoch);  // helpers read x_I from row I+L+1 on
    });
    tick(4);
    issue();  // into the slot of the previous item; Dinv_I was read before the last barrier
    tick(5);
  }
  cp_wait<0>();
  if (a.prof && tid == 0) {
    for (int q = 0; q < 5; q++) a.prof[q] = pt[q];
    a.prof[5] = clock64() - t0;
    a.prof[6] = pt[5];
    a.prof[7] = nblk;
    a.prof[10] = gtimer();
  }
}

// The copy warps of the one-right-hand-side chain (launched only when every tile is one tensor
// copy: a tensor map, and n a multiple of 64 or a forward variant). The chain's items in its order
// (row I: tiles (I, max(0,I-L)) .. (I, I-1), then Dinv_I with b_I) go to ring slot u % ST (SL values
// apart). Warp ISSUE puts item u there once the chain has released the slot's previous item (EMPTY):
// a tile as NB1 / E swizzled tensor copies (prod_at), Dinv_I + b_I as one bulk copy; it also keeps
// the items 2 (L + 1) further on prefetched into L2. Warp HAND waits for each item to land (s_bar)
// and hands over the items the chain synchronises on (FULL): Dinv_I, and the last tile (I, I-1) of a
// row, which stands for the row's earlier tiles too. (Two warps: issuing a copy stalls its warp
// ~0.2 us and may wait for a release, and a landed item must not wait behind that.)
template <class T, int ST, int SL, bool ISSUE>
__device__ void chain_producer(const OneArgs<T> &a, const CUtensorMap *map, T *S, unsigned long long *s_bar)
{
  constexpr int  E = 128 / (int)sizeof(T);
  const View<T> &V = a.V;
  const int      lane = threadIdx.x % 32, nblk = a.nblk, n = V.n, L = a.L, PF = 2 * (L + 1);
  int            nitems = 0;
  for (int I = 0; I < nblk; I++) nitems += I - max(0, I - L) + 1;
  auto next = [&](int &ii, int &jj) {  // (I, J) -> the next item; J == I: Dinv_I
    if (jj == ii) {
      ii++;
      jj = max(0, ii - L);
    } else jj++;
  };
  if constexpr (!ISSUE) {
    for (int h = 0, I = 0, J = 0; h < nitems; h++, next(I, J)) {
      mbar_wait(s_bar + h % ST, (h / ST) & 1);
      if (J >= I - 1) bar_full_arrive(h % ST);  // Dinv_I, or the row's last tile
    }
    return;
  }
  auto box = [&](int ii, int jj, int &r0, int &c0) { tile_box(V, ii, jj, r0, c0); };
  int I = 0, J = 0, pI = 0, pJ = 0, dready = 0;  // next item to issue, to prefetch
  for (int p = 0; p < PF; p++) next(pI, pJ);
  for (int u = 0; u < nitems; u++, next(I, J)) {
    if (u + PF < nitems) {  // item u + PF into L2 (Dinv only once published; it is waited for when issued)
      if (lane == 0) {
        if (pJ < pI) {
          int r0, c0;
          box(pI, pJ, r0, c0);
#pragma unroll
          for (int k = 0; k < NB1 / E; k++)
            tma_prefetch_2d(map, r0 + k * E, c0);
        } else if (pI < dready)
          asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;\n" ::"l"(a.dinv + (size_t)pI * TILE1), "r"(PD_ITEM * (unsigned)sizeof(T)) : "memory");
      }
      next(pI, pJ);
    }
    const int q = u % ST;
    if (u >= ST) bar_empty_sync(q);
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  // the chain's reads of the slot before the copy engine's writes
    T *dst = S + q * SL;
    if (J < I) {
      int r0, c0;
      box(I, J, r0, c0);
      if (lane == 0) {
        mbar_expect(s_bar + q, NB1 * NB1 * (unsigned)sizeof(T));
#pragma unroll
        for (int k = 0; k < NB1 / E; k++) tma_load_2d(dst + k * NB1 * E, map, r0 + k * E, c0, s_bar + q);
      }
    } else {
      if (I >= dready) dready = dinv_ready(a, I);  // Dinv_I (its job depends on nothing); learn about 31 more
      if (lane == 0) {
        mbar_expect(s_bar + q, PD_ITEM * (unsigned)sizeof(T));
        bulk_copy(dst, a.dinv + (size_t)I * TILE1, PD_ITEM * (unsigned)sizeof(T), s_bar + q);
      }
    }
  }
  for (int u = max(nitems, ST); u < nitems + ST; u++) bar_empty_sync(u % ST);  // the last items' EMPTY arrivals: every barrier completes
}

// The chain with the copy warp (one right-hand side). Per block row I two barriers of all 512 job
// threads; the critical group C carries x_I, the off group O works beside it (thread layout: prod_row).
//   Ba(I) = FULL(Dinv_I, with b_I appended by the inversion job): x_{I-1} and off_I (row I's tiles
//           that need only older x, summed by O) are visible. C: y = b_I - off_I - M(I,I-1) x_{I-1}
//           - (the helpers' sums); the tile (I, I-1) is already in C's registers, so only x is
//           read; y to shared memory.
//   Bb(I) = FULL(tile (I+1, I)), which landed after the row's earlier tiles: y is visible.
//           C: x_I = Dinv_I y (Dinv_I read after Ba(I)), published (shared x window, X, LL words
//           for the helpers); the tile (I+1, I) into registers. O: off_{I+1} from the tiles
//           (I+1, I+1-L) .. (I+1, I-1) and the x_J they need.
// Each sum of a row is formed across its eight lanes by shuffles (two rows at once). Every job thread releases every
// ring item (EMPTY) once, after the barrier that handed it over and, if it read the item, after
// using what it read. Addresses and ring positions advance by additions; PROF (SG_TRSV_PROFILE) is a
// compile-time switch.
template <class T, int ST, int SL, bool PROF>
__device__ void chain_prod(const OneArgs<T> &a, T *S, T *xw, T *ys, T *offw)
{
  using R = typename LLw<T>::raw;
  constexpr int  NQ = 8, XWN = XW<1>(), E = 128 / (int)sizeof(T);
  const View<T> &V = a.V;
  const int      tid = threadIdx.x, nblk = a.nblk, L = a.L, n = V.n, g = tid & 7, r0 = prod_row(tid), r1 = r0 + 32;
  const bool     crit = tid < NTC;
  // this thread's element (r0, g + 8q) of a ring tile is ao[q % KA] + (q / KA) * as, and (r1, g + 8q)
  // is dr further (the swizzle repeats every KA column groups; checked for every thread and variant)
  constexpr int KA = 16 / (int)sizeof(T);
  int           ao[KA];
#pragma unroll
  for (int q = 0; q < KA; q++) ao[q] = prod_at<T>(r0, g + 8 * q, V.trans, V.rev);
  const int as = prod_at<T>(r0, g + 8 * KA, V.trans, V.rev) - ao[0];
  const int dr = (V.rev ? -1 : 1) * (V.trans ? 32 * E : 32 * NB1);
  auto      at = [&](int q) { return ao[q % KA] + (q / KA) * as; };
  // Row sums of the pair (r0, r1): lanes g < 4 end with row r0's, g >= 4 with row r1's (one exchange
  // of the other row's half, then a butterfly over four lanes). Lane g = 0 owns row r0, g = 4 row r1.
  const bool hi = g & 4, own = (g & 3) == 0;
  const int  rr = hi ? r1 : r0;
  auto       rowsum2 = [&](T v0, T v1) {
    T k = hi ? v1 : v0;
    k += __shfl_xor_sync(~0u, hi ? v0 : v1, 4);
    k += __shfl_xor_sync(~0u, k, 2);
    return k + __shfl_xor_sync(~0u, k, 1);
  };
  const long long bs = V.rev ? -NB1 : NB1;  // row I's b / x at (origin of row r) + I * bs
  __shared__ unsigned long long s_pt[6];     // PROF: thread 0's sums (shared memory: no registers held by every thread)
  unsigned long long             tc = 0, t0 = 0;
  auto                           tick = [&](int phase) {
    if constexpr (PROF)
      if (tid == 0) {
        const unsigned long long t = clock64();
        s_pt[phase] += t - tc;
        tc = t;
      }
  };
  if (PROF && tid == 0) {
    a.prof[8] = gtimer();
    for (int q = 0; q < 6; q++) s_pt[q] = 0;
    a.prof[9] = gtimer();
    tc = t0 = clock64();
  }
  int slot = 0;  // ring slot of the next item (Dinv_I at the top of row I)
  if (crit) {
    // helper g's sums of rows r0, r1 of row I at pw, pw + 32 (helper g covers row I once
    // I > L + g*CT, i.e. one_chunks(I, L, CT) > g); row rr of x_I to xo and to the LL word xl
    const int hfrom = L + g * a.CT;
    const R  *pw    = a.part + (size_t)g * NB1 + r0;
    T        *xo    = a.X + V.orig(rr);
    R        *xl    = a.xll + rr;
    const int qmax0 = (r0 - g) >> 3, qmax1 = (r1 - g) >> 3;  // Dinv(r, g + 8q) is in the lower triangle for q <= qmax
    R         p0, p1;                                         // the helper's sums of the next row, requested a step ahead
    T         tA0[NQ], tA1[NQ];                               // tile (I, I-1), rows r0, r1
#pragma unroll
    for (int q = 0; q < NQ; q++) tA0[q] = tA1[q] = T(0);
    int xc = 0, xprev = XWN - 1, tslot = -1;  // x window rows of I, I-1; slot of tile (I, I-1)
    for (int I = 0; I < nblk; I++, pw += MAXH * NB1, xo += bs, xl += NB1) {
      const int sd = slot;
      bar_full_sync(sd);  // Ba(I)
      tick(0);
      slot = slot + 1 < ST ? slot + 1 : 0;
      T a0 = T(0), a1 = T(0), c0 = T(0), c1 = T(0);
      if (I > 0) {
        const T *x = xw + xprev * NB1 + g;
#pragma unroll
        for (int q = 0; q < NQ; q += 2) {
          const T xa = x[8 * q], xb = x[8 * q + 8];
          a0 = fma(tA0[q], xa, a0);
          c0 = fma(tA0[q + 1], xb, c0);
          a1 = fma(tA1[q], xa, a1);
          c1 = fma(tA1[q + 1], xb, c1);
        }
      }
      tick(1);
      if (I > hfrom) {
        a0 += ll_wait(pw, p0, a.epoch, false);
        a1 += ll_wait(pw + 32, p1, a.epoch, false);
      }
      tick(3);
      const bool more = I + 1 < nblk;
      if (more && I + 1 > hfrom) {
        p0 = ll_ld(pw + MAXH * NB1);
        p1 = ll_ld(pw + MAXH * NB1 + 32);
      }
      const T sum = rowsum2(a0 + c0, a1 + c1);
      if (own) ys[rr] = S[sd * SL + PD_VALS + rr] - offw[rr] - sum;  // b_I follows Dinv_I in its slot
      if (tslot >= 0) bar_empty_arrive(tslot);                        // tile (I, I-1) used
      T d[PDV];
      {
        const T *D = S + sd * SL + tid;
#pragma unroll
        for (int k = 0; k < PDV; k++) d[k] = D[k * NTC];
      }
      tick(1);
      const int nt = more ? min(L, I + 1) : 0;  // tiles of row I+1, in slots slot .. slot + nt - 1
      if (nt) bar_full_sync(slot + nt - 1 < ST ? slot + nt - 1 : slot + nt - 1 - ST);  // Bb(I)
      else prod_sync();
      tick(2);
      for (int t = 0; t < nt - 1; t++) {  // row I+1's earlier tiles: O's
        bar_empty_arrive(slot);
        slot = slot + 1 < ST ? slot + 1 : 0;
      }
      T y[NQ];
#pragma unroll
      for (int q = 0; q < NQ; q++) y[q] = ys[g + 8 * q];
      T e0 = T(0), e1 = T(0), f1 = T(0);
#pragma unroll
      for (int q = 0; q < 4; q++)  // only the lower triangle: 0 * NaN must not reach rows that do not depend on it
        if (q <= qmax0) e0 = fma(d[q], y[q], e0);
#pragma unroll
      for (int q = 0; q < NQ; q += 2) {
        if (q <= qmax1) e1 = fma(d[4 + q], y[q], e1);
        if (q + 1 <= qmax1) f1 = fma(d[5 + q], y[q + 1], f1);
      }
      const T x = rowsum2(e0, e1 + f1);
      if (own) {
        const bool v = I * NB1 + rr < n;
        if (v) {
          if (!(fabs(x) < (T)INFINITY)) sg_dev_flag(a.rep, SG_FAIL_RESULT, 0, V.orig(I * NB1 + rr), (double)x);
          *xo = x;
        }
        xw[xc * NB1 + rr] = v ? x : T(0);
        if (I + L + 1 < nblk) ll_st(xl, v ? x : T(0), a.epoch);  // helpers read x_I from row I+L+1 on
      }
      bar_empty_arrive(sd);  // Dinv_I used
      tick(4);
      if (nt) {  // tile (I+1, I) into registers; released once used in row I+1
        tslot       = slot;
        const T *Tt = S + slot * SL;
#pragma unroll
        for (int q = 0; q < NQ; q++) {
          tA0[q] = Tt[at(q)];
          tA1[q] = Tt[at(q) + dr];
        }
        slot = slot + 1 < ST ? slot + 1 : 0;
      }
      xprev = xc;
      xc    = xc + 1 < XWN ? xc + 1 : 0;
      tick(5);
    }
  } else {
    // O: off_{I+1}
    if (g == 0) offw[r0] = offw[r1] = T(0);
    int xc = 0;  // x window row of I
    for (int I = 0; I < nblk; I++) {
      const int sd = slot;
      bar_full_sync(sd);  // Ba(I)
      slot = slot + 1 < ST ? slot + 1 : 0;
      bar_empty_arrive(sd);  // Dinv_I: C's
      const int nt = I + 1 < nblk ? min(L, I + 1) : 0;
      if (nt) bar_full_sync(slot + nt - 1 < ST ? slot + nt - 1 : slot + nt - 1 - ST);  // Bb(I)
      else prod_sync();
      T   s0 = T(0), s1 = T(0);
      int first = slot;
      for (int t = 0; t < nt - 1; t++) {  // tile (I+1, J), J = I+1-nt+t <= I-1: x_J is visible since Ba(I)
        const int js = xc - (nt - 1 - t);
        const T  *Tt = S + slot * SL, *x = xw + (js < 0 ? js + XWN : js) * NB1 + g;
#pragma unroll
        for (int q = 0; q < NQ; q++) {
          const T xv = x[8 * q];
          s0         = fma(Tt[at(q)], xv, s0);
          s1         = fma(Tt[at(q) + dr], xv, s1);
        }
        slot = slot + 1 < ST ? slot + 1 : 0;
      }
      if (nt) {
        const T o = rowsum2(s0, s1);
        if (own) offw[rr] = o;
        for (int t = 0; t < nt; t++) {  // the earlier tiles used; (I+1, I): C's
          bar_empty_arrive(first);
          first = first + 1 < ST ? first + 1 : 0;
        }
        slot = first;
      }
      xc = xc + 1 < XWN ? xc + 1 : 0;
    }
  }
  if (PROF && tid == 0) {
    for (int q = 0; q < 5; q++) a.prof[q] = s_pt[q];
    a.prof[5]  = clock64() - t0;
    a.prof[6]  = s_pt[5];
    a.prof[7]  = nblk;
    a.prof[10] = gtimer();
  }
}

// block size: PROD adds the chain's two copy warps
template <bool PROD> constexpr int one_threads() { return PROD ? NT1 + 64 : NT1; }
template <class T, int K, bool PROD>
__global__ void __launch_bounds__(one_threads<PROD>(), 1) trsv_one_kernel(const OneArgs<T> a, const __grid_constant__ CUtensorMap tmap)
{
  constexpr int ST = one_stages<T, K>();
  static_assert(ST >= 3, "the inversion job needs three tiles of shared memory");
  extern __shared__ __align__(16) unsigned char smem_raw[];
  // Tensor copies need 128-byte aligned slots. One right-hand side: offset the shared array
  // itself, so the compiler keeps the shared address space (ld.shared); rounding the address as
  // an integer loses it and every access below becomes a generic load. Measured on an H100
  // (bench/trsv/README.md, 2026-11-24 fourth session): K = 1 fp64 5-10 % faster (n = 16384 LN
  // 67.4 -> 72.2 % of copy), fp32 up to 6 %; but K = 16 10-20 % slower and K = 4 mixed, so the
  // several-column instantiations keep the generic accesses.
  // PROD: 1024-byte alignment, the same way (slot_vals).
  constexpr int SL = slot_vals<T, PROD>();
  static_assert(one_smem<T, K, PROD>() <= SMEM_OPTIN, "shared memory");
  T *S;
  if constexpr (PROD) S = (T *)(smem_raw + ((1024u - (smem_u32(smem_raw) & 1023u)) & 1023u));
  else if constexpr (K == 1) S = (T *)(smem_raw + ((128u - (smem_u32(smem_raw) & 127u)) & 127u));
  else S = (T *)(((uintptr_t)smem_raw + 127) & ~(uintptr_t)127);
  T *red = S + ST * SL, *xw = red + G1 * NB1 * K, *ys = xw + XW<K>() * NB1 * K, *bw = ys + NB1 * K, *ts = bw + BW<K>() * NB1 * K;
  __shared__ int                s_job;
  __shared__ unsigned long long s_bar[ST];  // the chain's ring: slot q's copy has landed
  static_assert(ST <= 6, "named barriers 2 .. 13 for the chain's ring");
  if (a.prof && threadIdx.x == 0) atomicMin(a.prof + 15, gtimer());
  if (threadIdx.x == 0) s_job = a.jobs[atomicAdd(&a.ctl[0], 1u)];
  __syncthreads();  // every thread, the copy warp included
  const int I = s_job >> 4, c = s_job & 15;
  if (c == JOB_CHAIN) {
    if (threadIdx.x == 0)
      for (int q = 0; q < ST; q++) {
        mbar_init(s_bar + q);
      }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    __syncthreads();
  }
  if (threadIdx.x >= NT1) {  // the copy warps (PROD) feed the chain and have no other job
    if constexpr (PROD)
      if (c == JOB_CHAIN) {
        if (threadIdx.x < NT1 + 32) chain_producer<T, ST, SL, true>(a, &tmap, S, s_bar);
        else chain_producer<T, ST, SL, false>(a, &tmap, S, s_bar);
      }
    return;
  }
  if (c == JOB_CHAIN) {
    if constexpr (PROD) {
      if (a.prof) chain_prod<T, ST, SL, true>(a, S, xw, ys, red);
      else chain_prod<T, ST, SL, false>(a, S, xw, ys, red);
    }
    else chain_job<T, K, ST>(a, a.bulk ? &tmap : nullptr, S, red, xw, ys, bw, ts, s_bar);
  } else if (c == JOB_INV) inv_job<T, PROD>(a, I, S);
  else helper_job<T, K, HST>(a, I, c, S, red, xw);
  if (threadIdx.x == 0 && atomicAdd(&a.ctl[1], 1u) == gridDim.x - 1) {  // last job: reset for the next call
    a.ctl[0] = 0u;
    a.ctl[1] = 0u;
  }
}

// Job table, in ticket order: the chain, the first PINV inversions, then row by row one more
// inversion and the row's helper chunks. Deadlock-free: a helper of row I waits only for the
// chain (ticket 0, resident); the chain waits for inversions (they wait for nothing) and for
// the helpers of its current row I. If a job of a later ticket is resident, every earlier
// ticket was taken, so row I's helpers are resident or done, and they need only x_J with
// J <= I-L-1, which the chain has published. The chain looks at most a few rows ahead for
// Dinv, fewer than PINV + L, so the inversion it waits for never queues behind a helper that
// waits for the chain.
void build_jobs(int nblk, int L, int CT, std::vector<int> &jobs)
{
  jobs.clear();
  jobs.push_back(JOB_CHAIN);
  int ninv = 0;
  for (; ninv < std::min(nblk, PINV); ninv++) jobs.push_back((ninv << 4) | JOB_INV);
  for (int I = 0; I < nblk; I++) {
    if (ninv < nblk) jobs.push_back((ninv++ << 4) | JOB_INV);
    for (int c = 0; c < one_chunks(I, L, CT); c++) jobs.push_back((I << 4) | c);
  }
}

sg_status fail_one(sg_report *rep, int cls, long long, long long row, double value) { return sg_trsv_report_fail(rep, cls, -1, row, value); }

template <class T, int K> sg_status launch_one(sg_ctx *ctx, const sg_trsv_problem *P, double pivtol, sg_report *rep)
{
  using R        = typename LLw<T>::raw;
  const int n    = (int)P->n, nblk = (n + NB1 - 1) / NB1;
  const bool rev  = (P->uplo == SG_UPPER) != (P->trans == SG_TRANS);
  // the copy-warp chain (chain_prod) when every chain tile is one tensor copy: one right-hand side,
  // A and its column stride 16-byte aligned, and a reflected variant (UN, LT) only when n is a
  // multiple of 64 (its boxes would start before the matrix; seen on the H100: an illegal
  // instruction). A partial last block row of a forward variant is whole boxes whose rows past n
  // arrive as zeros. Otherwise the chain issues its own copies (64 x 64 boxes when aligned).
  const bool aligned = (uintptr_t)P->A % 16 == 0 && (size_t)P->lda * sizeof(T) % 16 == 0 && (!rev || (size_t)n * sizeof(T) % 16 == 0) && !getenv("SG_TRSV_NOTMA");
  CUtensorMap tmap;  // the chain's tiles by the copy engine (prod: 128-byte swizzled boxes of 128 bytes x 64 columns)
  memset(&tmap, 0, sizeof tmap);
  auto encode_map = [&](bool swz) {
    PFN_cuTensorMapEncodeTiled_v12000 encode = sg_tensor_map_encoder();
    if (!encode) return false;
    const cuuint64_t dims[2] = {(cuuint64_t)n, (cuuint64_t)n}, strides[1] = {(cuuint64_t)P->lda * sizeof(T)};
    const cuuint32_t box[2] = {swz ? 128u / (cuuint32_t)sizeof(T) : (cuuint32_t)NB1, NB1}, estr[2] = {1, 1};
    return encode(&tmap, sizeof(T) == 8 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT64 : CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, (void *)P->A, dims, strides, box, estr,
                  CU_TENSOR_MAP_INTERLEAVE_NONE, swz ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
  };
  const bool prod = K == 1 && aligned && (n % NB1 == 0 || !rev) && encode_map(true);
  const bool bulk = prod || (aligned && encode_map(false));
  // lag L: the helpers' sums cover columns up to I-L-1, the chain the last L tiles of row I. With the
  // copy warps (chain_prod) its off group sums L-1 of them beside the critical step, so the helpers'
  // global-memory round trip gets L rows of time. Measured on an H100 (bench/trsv/README.md,
  // 2026-11-24 fifth session), % of copy at n = 16384 LN: fp64 L = 2 / 3: 77.7 / 68.8, fp32 58.4 /
  // 45.4 (L = 1: 57 / 39, one version earlier); the chain that issues its own copies is best at L = 1.
  const int L    = env_int("SG_TRSV_LAG", prod ? 2 : 1, 1, lag_max<K>());
  const int CT   = std::max(env_int("SG_TRSV_CT", 16, 1, 1 << 20), (nblk - 1 - L + MAXH - 1) / MAXH);
  sg_status st;
  const size_t smem = prod ? one_smem<T, K, true>() : one_smem<T, K, false>();
  if ((int)smem > sg_cuda_smem_optin())
    return sg_report_set(rep, SG_ERR_DEVICE, -1, -1, 0.0, "trsv needs %zu bytes of shared memory per block, the device allows %d", smem, sg_cuda_smem_optin());
  // control block, zeroed whenever (re)allocated: ticket, done, Dinv flags | x_J (LL) | partial sums (LL)
  const size_t off_x = align256((2 + (size_t)nblk) * sizeof(unsigned)), off_p = off_x + align256((size_t)nblk * NB1 * K * sizeof(R));
  const size_t ctl_bytes = off_p + (size_t)nblk * MAXH * K * NB1 * sizeof(R);
  void        *old = ctx->work[SG_SLOT_TRSV_CTL];
  const size_t oldb = ctx->work_bytes[SG_SLOT_TRSV_CTL];
  char        *ctl  = (char *)sg_ctx_work(ctx, ctl_bytes, SG_SLOT_TRSV_CTL);
  if (!ctl) return sg_report_set(rep, SG_ERR_MEM, -1, -1, 0.0, "cannot allocate %zu bytes of trsv control memory on the device", ctl_bytes);
  if (ctl != old || oldb != ctx->work_bytes[SG_SLOT_TRSV_CTL] || ++ctx->trsv_epoch == 0) {
    if ((st = sg_cuda_check(cudaMemsetAsync(ctl, 0, ctx->work_bytes[SG_SLOT_TRSV_CTL], sg_stream(ctx)), rep, "clearing trsv flags")) != SG_OK) return st;
    ctx->trsv_epoch = 1;
  }
  const size_t dinv_bytes = (size_t)nblk * TILE1 * sizeof(T);
  T           *dinv       = (T *)sg_ctx_work(ctx, dinv_bytes, SG_SLOT_TRSV_PART);
  if (!dinv) return sg_report_set(rep, SG_ERR_MEM, -1, -1, 0.0, "cannot allocate %zu bytes for the inverted diagonal blocks", dinv_bytes);
  // job table: rebuilt and uploaded only when the shape (nblk, CT, L) changes
  const long long key = ((long long)nblk << 28) | ((long long)CT << 4) | L;
  if (key != ctx->trsv_table_key) {
    std::vector<int> jobs;
    build_jobs(nblk, L, CT, jobs);
    if ((st = trsv_upload_jobs(ctx, key, jobs, rep)) != SG_OK) return st;
  }
  OneArgs<T> a;
  a.V      = View<T>{(const T *)P->A, P->lda, n, rev, P->trans == SG_TRANS};
  a.B      = (const T *)P->B;
  a.ldb    = P->nrhs > 1 ? P->ldb : P->n;
  a.X      = (T *)P->X;
  a.ldx    = P->nrhs > 1 ? P->ldx : P->n;
  a.nrhs   = (int)P->nrhs;
  a.nblk   = nblk;
  a.CT     = CT;
  a.L      = L;
  a.bulk   = bulk;
  a.jobs   = (const int *)ctx->work[SG_SLOT_TRSV_TABLE];
  a.ctl    = (unsigned *)ctl;
  a.xll    = (R *)(ctl + off_x);
  a.part   = (R *)(ctl + off_p);
  a.dinv   = dinv;
  a.epoch  = ctx->trsv_epoch;
  a.pivtol = (T)(pivtol > 0 ? pivtol : 0.0);
  a.unit   = P->diag == SG_UNIT;
  a.rep    = sg_dreport(ctx);
  auto *const  kern = prod ? trsv_one_kernel<T, K, K == 1> : trsv_one_kernel<T, K, false>;
  static bool  attr[2] = {false, false};  // per instantiation
  if (!attr[prod]) {
    if ((st = sg_cuda_check(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem), rep, "trsv shared memory")) != SG_OK) return st;
    attr[prod] = true;
  }
  if ((st = sg_dev_report_reset(ctx, rep)) != SG_OK) return st;
  a.prof = nullptr;
  if (getenv("SG_TRSV_PROFILE")) {  // diagnostics: the chain's phases, the start-up timeline and the first inversion's phases, printed to stderr after a synchronous solve
    a.prof = (unsigned long long *)sg_ctx_work(ctx, 24 * sizeof(unsigned long long), SG_SLOT_TRSV_BATCH);
    if (!a.prof) return sg_report_set(rep, SG_ERR_MEM, -1, -1, 0.0, "trsv profile buffer");
    (void)cudaMemsetAsync(a.prof, 0xff, 24 * sizeof(unsigned long long), sg_stream(ctx));
  }
  kern<<<(unsigned)ctx->trsv_table_jobs, prod ? one_threads<true>() : one_threads<false>(), smem, sg_stream(ctx)>>>(a, tmap);
  st = sg_dev_report_fetch(ctx, rep, fail_one);
  if (a.prof && st == SG_OK) {
    unsigned long long h[24];
    int                khz = 0;
    (void)cudaMemcpy(h, a.prof, sizeof h, cudaMemcpyDeviceToHost);
    (void)cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0);
    const double us = 1e3 / (khz > 0 ? khz : 1), steps = (double)(h[7] ? h[7] : 1);
    fprintf(stderr, prod ? "[trsv profile] n=%d L=%d CT=%d jobs=%lld: chain %.1f us for %llu rows; per row: Ba wait %.3f, critical gemv %.3f, Bb wait %.3f, sums wait %.3f, finish %.3f, next row's tiles %.3f us\n"
                         : "[trsv profile] n=%d L=%d CT=%d jobs=%lld: chain %.1f us for %llu rows; per row: tile wait %.3f, gemv %.3f, Dinv wait %.3f, sums wait %.3f, finish %.3f, issue %.3f us\n",
            n, L, CT, ctx->trsv_table_jobs, h[5] * us, h[7], h[0] * us / steps, h[1] * us / steps, h[2] * us / steps, h[3] * us / steps, h[4] * us / steps,
            h[6] * us / steps);
    const double t0 = (double)h[15];
    fprintf(stderr, "[trsv timeline] us from the first block's start: inv0 start %.2f loaded %.2f inverted %.2f published %.2f | chain entry %.2f loop %.2f end %.2f\n",
            (h[11] - t0) * 1e-3, (h[12] - t0) * 1e-3, (h[13] - t0) * 1e-3, (h[14] - t0) * 1e-3, (h[8] - t0) * 1e-3, (h[9] - t0) * 1e-3, (h[10] - t0) * 1e-3);
    fprintf(stderr, "[trsv inversion] us per phase: 8x8 blocks %.2f, levels 8/16/32: %.2f %.2f %.2f\n", (h[17] - h[16]) * us, (h[18] - h[17]) * us,
            (h[19] - h[18]) * us, (h[20] - h[19]) * us);
  }
  if (st == SG_ERR_DEVICE) {  // an aborted launch may leave counters behind: start clean next time
    ctx->trsv_table_key = -1;
    (void)cudaMemsetAsync(ctl, 0, off_x, sg_stream(ctx));
  }
  return st;
}

template <class T> sg_status dispatch_one(sg_ctx *ctx, const sg_trsv_problem *P, double pivtol, sg_report *rep)
{
  const long long k = P->nrhs;
  bool            used = false;
  const sg_status st   = trsv_cluster_solve<T>(ctx, P, pivtol, rep, &used);  // one cluster for one column of modest n
  if (used) return st;
  const sg_status sth = trsv_hybrid_solve<T>(ctx, P, pivtol, rep, &used);  // the chain on one cluster, helpers on the rest
  if (used) return sth;
  if (k <= 1) return launch_one<T, 1>(ctx, P, pivtol, rep);
  if (k <= 2) return launch_one<T, 2>(ctx, P, pivtol, rep);
  if (k <= 4) return launch_one<T, 4>(ctx, P, pivtol, rep);
  if (k <= 8) return launch_one<T, 8>(ctx, P, pivtol, rep);
  return launch_one<T, 16>(ctx, P, pivtol, rep);
}

} // namespace

namespace sgtrsv {
sg_status trsv_upload_jobs(sg_ctx *ctx, long long key, const std::vector<int> &jobs, sg_report *rep)
{
  sg_status st;
  // the pinned staging buffer may still feed an earlier upload: wait before reusing it
  if ((st = sg_cuda_check(cudaStreamSynchronize(sg_stream(ctx)), rep, "trsv job table")) != SG_OK) return st;
  const size_t bytes = std::max<size_t>(1, jobs.size()) * sizeof(int);  // (a table may be empty)
  int         *djobs = (int *)sg_ctx_work(ctx, bytes, SG_SLOT_TRSV_TABLE);
  int         *hjobs = (int *)sg_ctx_host_work(ctx, bytes, SG_SLOT_TRSV_TABLE);
  if (!djobs || !hjobs) return sg_report_set(rep, SG_ERR_MEM, -1, -1, 0.0, "cannot allocate the trsv job table (%zu jobs)", jobs.size());
  std::copy(jobs.begin(), jobs.end(), hjobs);
  if (!jobs.empty() && (st = sg_cuda_check(cudaMemcpyAsync(djobs, hjobs, jobs.size() * sizeof(int), cudaMemcpyHostToDevice, sg_stream(ctx)), rep, "trsv job table")) != SG_OK) return st;
  ctx->trsv_table_key  = key;
  ctx->trsv_table_jobs = (long long)jobs.size();
  return SG_OK;
}
} // namespace sgtrsv

extern "C" sg_status sg_trsv_cuda(sg_ctx *ctx, const sg_trsv_problem *P, double pivtol, sg_report *rep)
{
  sg_status st = sg_trsv_begin(ctx, SG_BACKEND_CUDA, P, rep);
  if (st != SG_OK) return st;
  return P->prec == SG_REAL64 ? dispatch_one<double>(ctx, P, pivtol, rep) : dispatch_one<float>(ctx, P, pivtol, rep);
}

namespace {
// A plan's solve: where the plan holds the inverted blocks (one right-hand side), the one-cluster
// kernel (small orders) or the cluster + helpers kernel, both without diagonal work; otherwise
// the ordinary dispatch. With fill, the cluster + helpers kernel computes the blocks into the plan
// (at every order it takes).
template <class T> sg_status plan_solve(sg_ctx *ctx, sg_trsv_plan plan, const sg_trsv_problem *P, bool fill, sg_report *rep)
{
  if ((plan->filled || fill) && P->nrhs == 1) {
    bool      used = false;
    sg_status st;
    if (plan->filled && (st = trsv_cluster_solve<T>(ctx, P, plan->pivtol, rep, &used, plan), used)) return st;
    if ((st = trsv_hybrid_solve<T>(ctx, P, plan->pivtol, rep, &used, plan), used)) return st;
  }
  return dispatch_one<T>(ctx, P, plan->pivtol, rep);
}
} // namespace

extern "C" sg_status sg_trsv_plan_create_cuda(sg_ctx *ctx, const sg_trsv_problem *P, double pivtol, sg_trsv_plan *plan, sg_report *rep)
{
  sg_report local;
  if (!rep) rep = &local;
  sg_status st = sg_trsv_plan_begin(ctx, SG_BACKEND_CUDA, P, plan, rep);
  if (st != SG_OK) return st;
  if (ctx->deferred && (st = sg_ctx_check(ctx, rep)) != SG_OK) return st;  // earlier solves' breakdowns first
  const size_t word = P->prec == SG_REAL64 ? sizeof(double) : sizeof(float);
  void        *z    = nullptr;  // the zero right-hand side of the analysing solve (and its solution)
  if (cudaMalloc(&z, (size_t)P->n * word) != cudaSuccess) {
    (void)cudaGetLastError();
    return sg_report_set(rep, SG_ERR_MEM, -1, -1, 0.0, "sg_trsv_plan_create_cuda: cannot allocate %lld words on the device", P->n);
  }
  sg_trsv_plan p = new sg_trsv_plan_s{SG_BACKEND_CUDA, *P, pivtol, nullptr, 0, 0, 0};
  p->P.nrhs = 1;
  p->P.B = p->P.X = nullptr;
  p->P.ldb = p->P.ldx = P->n;
  sg_trsv_problem Pz = p->P;
  Pz.B = Pz.X    = z;
  const int deferred = ctx->deferred;
  ctx->deferred      = 0;  // the analysis is checked now
  st = sg_cuda_check(cudaMemsetAsync(z, 0, (size_t)P->n * word, sg_stream(ctx)), rep, "sg_trsv_plan_create_cuda");
  if (st == SG_OK) st = P->prec == SG_REAL64 ? plan_solve<double>(ctx, p, &Pz, true, rep) : plan_solve<float>(ctx, p, &Pz, true, rep);
  if (st == SG_OK) st = P->prec == SG_REAL64 ? trsv_pair_fill<double>(ctx, &p->P, p, rep) : trsv_pair_fill<float>(ctx, &p->P, p, rep);
  ctx->deferred = deferred;
  (void)cudaStreamSynchronize(sg_stream(ctx));
  (void)cudaFree(z);
  if (st != SG_OK) {
    sg_trsv_plan_destroy(&p);
    return st;
  }
  *plan = p;
  return SG_OK;
}

sg_status sg_trsv_plan_solve_cuda(sg_ctx *ctx, sg_trsv_plan plan, const sg_trsv_problem *P, sg_report *rep)
{
  sg_status st = sg_trsv_begin(ctx, SG_BACKEND_CUDA, P, rep, true);  // the plan's A was checked at create
  if (st != SG_OK) return st;
  return sg_trsv_plan_run_cuda(ctx, plan, P, rep);
}

sg_status sg_trsv_plan_run_cuda(sg_ctx *ctx, sg_trsv_plan plan, const sg_trsv_problem *P, sg_report *rep)
{
  return P->prec == SG_REAL64 ? plan_solve<double>(ctx, plan, P, false, rep) : plan_solve<float>(ctx, plan, P, false, rep);
}

void sg_trsv_plan_free_cuda(sg_trsv_plan plan)
{
  if (plan->inv) (void)cudaFree(plan->inv);
  if (plan->pinv) (void)cudaFree(plan->pinv);
  plan->inv       = nullptr;
  plan->pinv      = nullptr;
  plan->inv_bytes = 0;
  plan->filled    = 0;
}

