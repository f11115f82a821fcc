// Batched small dense triangular solves on the GPU: sg_trsv_batch_solve_cuda (many
// independent systems of n <= 512, uniform or variable orders, in one launch). Every variant
// is a forward substitution with the effective lower matrix M of trsv_cuda.cuh (View).
//
// Five kernels, chosen by the bound B->n (the largest order of the batch) and nrhs:
//  - one right-hand side: for n <= 16 two systems per warp, each wholly loaded into registers
//    before its steps (trsv_batch_regs_kernel; float with a uniform order of 16 in whole 128-byte
//    lines, its PC instances); a warp per system with the matrix streamed into
//    registers (trsv_batch_stream_kernel: 17 <= n <= 64, and fp32 op = N 129..256); or persistent
//    warps with the matrix streamed through a per-lane cp.async ring in shared memory
//    (trsv_batch_ring_kernel: the rest up to n = 512); the substitution in registers;
//  - otherwise, n <= WARP_MAX_N (128): a WARP per system (the kernel is written for G-lane segments, but
//    only G = 32 is launched: the two-systems-per-warp G = 16 variant hung on the H100 at its
//    first launch and was withdrawn), several warps per CTA, no CTA barrier at all. The segment first issues
//    cp.async copies of its whole triangle (only the triangle, and the diagonal only for a
//    non-unit diagonal) into a packed triangle in shared memory, walking the lines that are
//    contiguous in A (columns of M for op = N, rows of M for op = T) so that every copy
//    instruction is coalesced whatever the variant; the right-hand side loads are issued at
//    the same time. All of a system's bytes are in flight at once (maximal memory-level
//    parallelism), which is what a bandwidth-bound batch needs. Then lane l owns rows
//    i = r*G + l (r < NR, n <= G*NR) and substitutes in registers: at step j the owner
//    of row j has its final value, x_j = y_j * (1/m_jj) is broadcast with one shuffle, and every
//    lane does y_i -= M(i,j) x_j reading M(i,j) from shared memory (the reads do not depend
//    on x, so they are off the critical path, which is shuffle + FMA per step). Packed
//    layouts, conflict-free for the copy and for the reads of a step: op = N column-packed,
//    slot(i,j) = j*NM - j(j-1)/2 + i - j (a step reads consecutive slots); op = T
//    row-packed, slot(i,j) = i(i+1)/2 + j (a step reads slots T_i + j, and the triangular
//    numbers T_i are distinct modulo any power of two for 2^k consecutive i). Up to K = 4
//    right-hand sides go through one substitution (more in chunks of 4), reusing the staged
//    triangle. Warps per CTA: as many (<= 8) as keep the CTA within 48 KB of shared memory
//    (fp64: 8 for n <= 32, 2 for n <= 64, 1 above; n <= 128 takes 66 KB, 3 warps per SM).
//    Why: the old CTA-per-system kernel inverted every 32 x 32 diagonal block with ~10
//    barriers; at n <= 64 that inversion was all the work (7.95 % of copy bandwidth at
//    n = 32 fp64, below cuBLAS trsmBatched).
//  - several right-hand sides and larger orders: one CTA of 128 threads per system walks the
//    32 x 32 tiles of its M in order through a cp.async ring (no flags needed); diagonal tiles are inverted
//    (trsv_cuda.cuh, Higham's method) and applied as GEMVs.
// All four kernels: a system of order 0 is skipped; an order or leading dimension out of range
// flags SG_FAIL_PIVOT_NONFINITE (reported as SG_ERR_ARG naming the system) and leaves the
// system untouched; with a non-unit diagonal the WHOLE diagonal is checked before anything
// is written, so a singular system keeps its B; a non-finite solution entry flags
// SG_FAIL_RESULT. The other triangle (and a unit diagonal) is never read.
#include "tri/trsv_cuda.cuh"

namespace {
using namespace sgtrsv;

sg_status fail_batch(sg_report *rep, int cls, long long system, long long row, double value)
{
  if (cls == SG_FAIL_PIVOT_NONFINITE)  // batched: per-system size / leading dimension out of range
    return sg_report_set(rep, SG_ERR_ARG, system, -1, 0.0, "batched triangular solve: system %lld has an order or leading dimension out of range "
                                                          "(0 <= n <= %d and ld >= n required); it was left untouched", system, (int)row);
  return sg_trsv_report_fail(rep, cls, system, row, value);
}

constexpr int NBB = 32, GB = 4, NTB = NBB * GB, TILEB = NBB * (NBB + 1);
// ring depth of the CTA kernel: shallow, so that several CTAs (systems) share an SM. Measured
// on the H100 (fp64, % of copy): 3 stages vs 8: n = 192: 42 vs 23, 256: 46 vs 27, 384: 49 vs
// 30, 512: 38 vs 37, orders 1..512: 29 vs 19.5.
constexpr int STB = 3;

template <class T> struct BatchArgs {
  const T *const *A;
  T *const       *X;
  const int      *nv, *ldav, *ldxv;
  long long       nbatch;
  int             n, lda, ldx, nrhs;
  bool            rev, trans, unit;
  T               pivtol;
  sg_dev_report  *rep;
};
// shared memory: ring, Dinv, ys, inversion scratch, group sums, b of the rows in flight (one
// slot per ring stage), and the whole solution (nmax x K)
template <class T, int K> size_t batch_smem(int nmax)
{
  const size_t nx = (size_t)((nmax + NBB - 1) / NBB) * NBB * K;
  return sizeof(T) * ((size_t)(STB + 1) * TILEB + NBB * K + NBB * NBB / 4 + GB * NBB * K + (size_t)STB * NBB * K + nx);
}

// ---------------------------------------------------------------- CTA per system (n > WARP_MAX_N)
template <class T, int K>
__global__ void __launch_bounds__(NTB) trsv_batch_kernel(const BatchArgs<T> a)
{
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T *S = (T *)smem_raw, *Dinv = S + STB * TILEB, *ys = Dinv + TILEB, *tmp = ys + NBB * K, *red = tmp + NBB * NBB / 4, *bw = red + GB * NBB * K, *xall = bw + STB * NBB * K;
  const long long sys = blockIdx.x;
  const int       n = a.nv ? a.nv[sys] : a.n, lda = a.ldav ? a.ldav[sys] : a.lda, ldx = a.ldxv ? a.ldxv[sys] : a.ldx;
  const int       tid = threadIdx.x;
  if (n < 0 || n > a.n || (n > 0 && (lda < n || ldx < n))) {
    if (tid == 0) sg_dev_flag(a.rep, SG_FAIL_PIVOT_NONFINITE, sys, n, 0.0);
    return;
  }
  if (n == 0) return;
  const View<T> V{a.A[sys], lda, n, a.rev, a.trans};
  T *X = a.X[sys];
  if (!a.unit) {  // leave a singular system untouched: check its whole diagonal first
    bool bad = false;
    for (int i = tid; i < n; i += NTB) {
      const T d = *V.at(i, i);
      if (sg_trsv_bad_diag(d, a.pivtol)) {
        sg_dev_flag(a.rep, sg_trsv_diag_class(d), sys, V.orig(i), (double)d);
        bad = true;
      }
    }
    if (__syncthreads_or(bad)) return;
  }
  const int nblk = (n + NBB - 1) / NBB, nitems = nblk * (nblk + 1) / 2;
  // item t: row I = the largest with I(I+1)/2 <= t; offset 0 = diagonal tile, u>0 = tile (I, u-1)
  auto item = [&](int t, int &I, int &J) {
    I = 0;
    while ((I + 1) * (I + 2) / 2 <= t) I++;
    const int u = t - I * (I + 1) / 2;
    J           = u == 0 ? I : u - 1;
  };
  auto issue = [&](int t) {
    if (t < nitems) {
      int I, J;
      item(t, I, J);
      load_tile<T, NBB, NTB>(S + (t % STB) * TILEB, V, I, J, a.unit);
      if (J == I) issue_rhs<T, NBB, NTB, K>(V, I, X, ldx, a.nrhs, bw + (I % STB) * NBB * K);  // b_I travels with row I's first tile
    }
    cp_commit();
  };
  for (int t = 0; t < STB - 1; t++) issue(t);
  T acc[K];
  for (int t = 0; t < nitems; t++) {
    int I, J;
    item(t, I, J);
    if (J == I) {
#pragma unroll
      for (int k = 0; k < K; k++) acc[k] = T(0);
    }
    cp_wait<STB - 2>();
    __syncthreads();
    const T *St = S + (t % STB) * TILEB;
    if (J == I) invert_lower<T, NBB, NTB>(St, Dinv, tmp);
    else gemv<T, NBB, GB, K>(St, xall + J * NBB * K, acc);  // x_J: this CTA's own, in shared memory
    issue(t + STB - 1);  // into the slot read at item t-1: every thread is past this item's barrier
    if (J == I - 1 || (J == I && I == 0)) {  // last item of row I: finish it
      store_groups<T, NBB, GB, K>(red, acc);
      __syncthreads();
      form_rhs<T, NBB, NTB, K>(red, bw + (I % STB) * NBB * K, ys);
      __syncthreads();
      solve_diag<T, NBB, NTB, K>(V, I, Dinv, ys, red, a.nrhs, sys, a.rep, [&](int r, int k, T x, bool valid) {
        if (valid) X[V.orig(I * NBB + r) + k * ldx] = x;
        xall[(I * NBB + r) * K + k] = x;
      });
    }
  }
  cp_wait<0>();
}


// ---------------------------------------------------------------- warp (segment) per system
constexpr int    WARP_MAX_N = 128;          // largest bound B->n solved by the warp kernel
constexpr size_t WARP_CTA_SMEM = 48 * 1024; // shared memory per CTA the warps-per-CTA choice aims at
constexpr unsigned FULL = 0xffffffffu;

// A segment of G lanes solves one system of order n <= NM = G*NR; lane l owns rows r*G + l.
// Its packed triangle (NM(NM+1)/2 values) lives in shared memory: slot(i,j), j <= i < NM.
template <int G, int NR, bool TR> struct WarpShape {
  static constexpr int NM = G * NR, TRI = NM * (NM + 1) / 2, SPW = 32 / G;
  // op = N: column-packed (a step j reads the consecutive slots of column j);
  // op = T: row-packed (the copy of a row of M, a column of A, is contiguous)
  __host__ __device__ static constexpr int slot(int i, int j) { return TR ? i * (i + 1) / 2 + j : j * NM - j * (j - 1) / 2 + (i - j); }
};
template <class T, int G, int NR> constexpr int warp_wpc()  // warps per CTA
{
  constexpr size_t w = sizeof(T) * (size_t)(G * NR) * (G * NR + 1) / 2 * (32 / G);
  return w * 8 <= WARP_CTA_SMEM ? 8 : w * 4 <= WARP_CTA_SMEM ? 4 : w * 2 <= WARP_CTA_SMEM ? 2 : 1;
}
template <class T, int G, int NR> constexpr size_t warp_smem()
{
  return sizeof(T) * (size_t)(G * NR) * (G * NR + 1) / 2 * (32 / G) * warp_wpc<T, G, NR>();
}

// K right-hand sides per substitution (nrhs > K: chunks of K). TR: op = T (row-packed).
// __maxnreg__ rather than __launch_bounds__: with the latter ptxas capped the fp64 NR = 4,
// K = 4 instantiation at 96 registers and spilled; no instantiation needs more than 110.
template <class T, int G, int NR, int K, bool TR>
__global__ void __maxnreg__(128) trsv_batch_warp_kernel(const BatchArgs<T> a)
{
  using W = WarpShape<G, NR, TR>;
  constexpr int SPW = W::SPW, WPC = warp_wpc<T, G, NR>();
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int       lane = threadIdx.x & 31, warp = threadIdx.x >> 5, l = lane % G, seg = lane / G;
  const long long first = ((long long)blockIdx.x * WPC + warp) * SPW, sys = first + seg;
  if (first >= a.nbatch) return;  // warp-uniform: no system for this warp
  T  *S = (T *)smem_raw + (size_t)(warp * SPW + seg) * W::TRI;
  int n = 0, lda = 0, ldx = 0;
  if (sys < a.nbatch) {
    n   = a.nv ? a.nv[sys] : a.n;
    lda = a.ldav ? a.ldav[sys] : a.lda;
    ldx = a.ldxv ? a.ldxv[sys] : a.ldx;
    if (n < 0 || n > a.n || (n > 0 && (lda < n || ldx < n))) {
      if (l == 0) sg_dev_flag(a.rep, SG_FAIL_PIVOT_NONFINITE, sys, n, 0.0);
      n = 0;  // left untouched
    }
  }
  const int nloop = (int)__reduce_max_sync(FULL, (unsigned)n);  // steps of the warp (its largest system)
  if (nloop == 0) return;                                        // warp-uniform
  const T *A = n > 0 ? a.A[sys] : nullptr;
  T       *X = n > 0 ? a.X[sys] : nullptr;
  const bool unit = a.unit, rev = a.rev;
  auto orig = [&](int i) { return rev ? n - 1 - i : i; };

  // 1. the whole triangle into S, by lines contiguous in A: op = N the columns j of M
  //    (rows i = j..n-1), op = T the rows i of M (columns j = 0..i); a unit diagonal is skipped
  for (int line = 0; line < n; line++) {
    const int len = TR ? line + 1 : n - line;
    for (int o = l; o < len; o += G) {
      const int i = TR ? line : line + o, j = TR ? o : line;
      if (unit && i == j) continue;
      const int ai = orig(i), aj = orig(j);  // M(i,j) = op(A)(ai,aj)
      cp_async(S + W::slot(i, j), A + (TR ? (long long)aj + (long long)ai * lda : (long long)ai + (long long)aj * lda));
    }
  }
  cp_commit();

  bool rowok[NR];
#pragma unroll
  for (int r = 0; r < NR; r++) rowok[r] = r * G + l < n;
  T    y[K][NR];
  auto load_y = [&](int k0) {
#pragma unroll
    for (int k = 0; k < K; k++)
#pragma unroll
      for (int r = 0; r < NR; r++) y[k][r] = (rowok[r] && k0 + k < a.nrhs) ? X[orig(r * G + l) + (long long)(k0 + k) * ldx] : T(0);
  };
  load_y(0);  // in flight together with the triangle
  cp_wait<0>();
  __syncwarp();  // the segment's copies visible to all its lanes

  // 2. the whole diagonal before anything is written; rows past n: inv = 1, y = 0 (x = 0)
  T    inv[NR];
  bool bad = false;
#pragma unroll
  for (int r = 0; r < NR; r++) {
    const int i = r * G + l;
    T         d = T(1);
    if (!unit && rowok[r]) {
      d = S[W::slot(i, i)];
      if (sg_trsv_bad_diag(d, a.pivtol)) {
        sg_dev_flag(a.rep, sg_trsv_diag_class(d), sys, orig(i), (double)d);
        bad = true;
        d   = T(1);  // (the segment is skipped)
      }
    }
    inv[r] = rcp(d);
  }
  const unsigned segmask = G == 32 ? FULL : ((1u << G) - 1u) << (seg * G);
  const bool     active  = n > 0 && !(__ballot_sync(FULL, bad) & segmask);
  if (!__any_sync(FULL, active)) return;  // warp-uniform

  // 3. substitution, K columns at a time; lanes of inactive segments (or rows past n) follow
  //    the shuffles but neither read S nor write X
  int rb[NR];  // op = T: slot(i, 0) of this lane's rows
#pragma unroll
  for (int r = 0; r < NR; r++) rb[r] = W::slot(r * G + l, 0);
  for (int k0 = 0; k0 < a.nrhs; k0 += K) {
    if (k0 > 0) load_y(k0);
#pragma unroll
    for (int jb = 0; jb < NR; jb++) {
      if (jb * G >= nloop) break;  // warp-uniform
#pragma unroll
      for (int jl = 0; jl < G; jl++) {
        const int j = jb * G + jl;
        if (j >= nloop) break;  // warp-uniform
        T xj[K];
#pragma unroll
        for (int k = 0; k < K; k++) xj[k] = __shfl_sync(FULL, y[k][jb] * inv[jb], jl, G);
#pragma unroll
        for (int r = jb; r < NR; r++)
          if (rowok[r] && (r > jb || l > jl)) {  // M(i,j) with j < i < n only: never 0 * (unread)
            const T m = S[TR ? rb[r] + j : W::slot(r * G, j) + l];
#pragma unroll
            for (int k = 0; k < K; k++) y[k][r] = fma(-m, xj[k], y[k][r]);
          }
      }
    }
    if (active) {
#pragma unroll
      for (int r = 0; r < NR; r++)
#pragma unroll
        for (int k = 0; k < K; k++)
          if (rowok[r] && k0 + k < a.nrhs) {
            const T   x  = y[k][r] * inv[r];
            const int ir = orig(r * G + l);
            if (!(fabs(x) < (T)INFINITY)) sg_dev_flag(a.rep, SG_FAIL_RESULT, sys, ir, (double)x);
            X[ir + (long long)(k0 + k) * ldx] = x;
          }
    }
  }
}

// ---------------------------------------------------------------- one right-hand side: shared steps
// A G-lane segment solves one system; lane l owns rows e = r*G + l (r < NR), y[r] its b and then
// its partial sums. Both one-right-hand-side kernels below use these three pieces.
//
// Where the diagonal comes from. By default it is the first line of a system (diag_inverse):
// one element per column, i.e. one 32-byte sector per column fetched apart from the column
// itself. Once a system takes longer than L2 keeps a sector (n = 128: ~100 us against ~20 us),
// the column's own fetch misses again: ncu measured 299 MB of DRAM reads against a 260 MB floor
// (fp64, n = 128) and 336 against 260 (fp32). Where it measured faster on the H100 (same-lease
// A/B, bench/trsv/README.md, "Session of 2026-11-25"), the diagonal travels with the lines
// instead, and the owner of row q (lane q % G) keeps M(q,q) and its reciprocal:
//  - ring kernel, 4 rows per lane (n = 65..128), op = N and fp32 op = T: every chunk also
//    carries the diagonal elements of the NEXT chunk's steps (a side element per lane and
//    slot), so their reciprocals are formed a chunk early, off the substitution chain; DRAM
//    reads 274 MB at fp64 n = 128 (floor 260); % of copy, two runs: fp64 LN 73.7 / 74.0 -> 76.6
//    / 76.6, fp32 LN 63.2 / 63.5 -> 67.8 / 67.8, fp32 LT 63.6 / 63.9 -> 64.8 / 65.0 (fp64 op = T:
//    no gain, 74.0 -> 72.7 in a first version).
// Elsewhere it lost: the per-step reciprocal and side copy cost more than the sector saves
// where few warps share an SM (n = 256 ring, fp64: 80 -> 73 %; n = 512), or where the columns
// follow within L2's lifetime (n <= 64, streamed kernel: up to -40 points with the reciprocal on
// the chain); the streamed kernel at 8 rows per lane (fp32 op = N, n = 129..256) measured 74.5 %
// in one version and 68 % in another against 71 %, so it keeps the diagonal line. In-line,
// the diagonal is checked once the steps are done (diag_check): nothing is written before, so
// a singular system still keeps its B.
template <class T, int NR, bool TR> constexpr bool ring_diag_inline() { return NR == 4 && (!TR || sizeof(T) == 4); }
// 1/d at one MUFU instruction (fp32: rcp.approx, <= 1 ulp; fp64: the 23-bit approximation and
// a cubic Newton step, ~1 ulp): formed once per chunk by every lane, where the IEEE-rounded
// __drcp_rn / __frcp_rn cost ~20 instructions and a slow-path branch. Subnormal fp64 pivots
// are scaled by 2^64 first (the approximation flushes them to zero).
__device__ __forceinline__ float rcp_fast(float d)
{
  float r;
  asm("rcp.approx.f32 %0, %1;" : "=f"(r) : "f"(d));
  return r;
}
__device__ __forceinline__ double rcp_fast(double d)
{
  const bool   sub = fabs(d) < 0x1p-1000;
  const double ds  = sub ? d * 0x1p64 : d;
  double       r;
  asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(r) : "d"(ds));
  const double e = fma(-ds, r, 1.0);
  r              = fma(fma(e, e, e), r, r);
  return sub ? r * 0x1p64 : r;
}
// The diagonal d[r] of this lane's rows (n rows; ignored for a unit diagonal or past n): every
// bad pivot is flagged (the row in A's numbering); with INV, 1/d into inv (1 for a bad pivot).
// True when any row of the segment was bad (then nothing of the system may be written).
// diag_inverse: the diagonal line first; diag_check: after the steps (diagonal in the lines).
template <bool INV, class T, int G, int NR>
__device__ __forceinline__ bool diag_scan(const BatchArgs<T> &a, long long sys, int n, int l, int seg, const T (&d)[NR], T (&inv)[NR])
{
  bool bad = false;
#pragma unroll
  for (int r = 0; r < NR; r++) {
    const int e = r * G + l;
    T         v = T(1);
    if (!a.unit && e < n) {
      v = d[r];
      if (sg_trsv_bad_diag(v, a.pivtol)) {
        sg_dev_flag(a.rep, sg_trsv_diag_class(v), sys, a.rev ? n - 1 - e : e, (double)v);
        bad = true;
        v   = T(1);
      }
    }
    if (INV) inv[r] = rcp(v);
  }
  const unsigned segmask = G == 32 ? FULL : ((1u << G) - 1u) << (seg * G);
  return (__ballot_sync(FULL, bad) & segmask) != 0;
}
template <class T, int G, int NR>
__device__ __forceinline__ bool diag_inverse(const BatchArgs<T> &a, long long sys, int n, int l, int seg, const T (&d)[NR], T (&inv)[NR])
{
  return diag_scan<true, T, G, NR>(a, sys, n, l, seg, d, inv);
}
template <class T, int G, int NR>
__device__ __forceinline__ bool diag_check(const BatchArgs<T> &a, long long sys, int n, int l, int seg, const T (&d)[NR])
{
  T unused[NR];  // (not written: INV = false)
  return diag_scan<false, T, G, NR>(a, sys, n, l, seg, d, unused);
}
// Step q = qb*G + ql with the step's line m (op = N: M(e, q) for this lane's rows e > q; op = T:
// M(q, e) for e < q; other entries are not read). op = N broadcasts x_q by one shuffle and every
// lane updates its rows; op = T sums the lanes' products with the x_e they own (a butterfly of
// log2 G shuffles) and the owner of row q finishes x_q. qb: an unrolled loop index.
template <class T, int G, int NR, bool TR>
__device__ __forceinline__ void subst_step(T (&y)[NR], const T (&inv)[NR], const T (&m)[NR], int qb, int ql, int l)
{
  if constexpr (!TR) {
    const T xq = __shfl_sync(FULL, y[qb] * inv[qb], ql, G);
    if (l > ql) y[qb] = fma(-m[qb], xq, y[qb]);  // rows q+1.. only: never 0 * (a non-finite x_q)
#pragma unroll
    for (int r = qb + 1; r < NR; r++) y[r] = fma(-m[r], xq, y[r]);
  } else {
    T v = T(0);
#pragma unroll
    for (int r = 0; r < qb; r++) v = fma(m[r], y[r], v);  // y of rows < q holds x; rows >= q (b) are not touched:
    if (l < ql) v = fma(m[qb], y[qb], v);                  // never 0 * (a non-finite b)
#pragma unroll
    for (int o = G / 2; o > 0; o /= 2) v += __shfl_xor_sync(FULL, v, o, G);
    if (l == ql) y[qb] = (y[qb] - v) * inv[qb];
  }
}
// x of this lane's rows (< n) into X; a non-finite x is flagged (and stored).
template <class T, int G, int NR, bool TR>
__device__ __forceinline__ void store_x(const BatchArgs<T> &a, long long sys, int n, int l, const T (&y)[NR], const T (&inv)[NR], T *X)
{
#pragma unroll
  for (int r = 0; r < NR; r++) {
    const int e = r * G + l;
    if (e < n) {
      const T   x  = TR ? y[r] : y[r] * inv[r];
      const int ie = a.rev ? n - 1 - e : e;
      if (!(fabs(x) < (T)INFINITY)) sg_dev_flag(a.rep, SG_FAIL_RESULT, sys, ie, (double)x);
      X[ie] = x;
    }
  }
}

// ---------------------------------------------------------------- warp per system, streamed
// One right-hand side, n <= 32*NR: a warp per system and no shared memory, so that many warps
// (systems) share an SM; the matrix lines come from global memory straight into registers, PF
// lines ahead of the step that uses them (the loads do not depend on x). Line q of M: op = N
// column q (rows q+1..n-1, contiguous in A), op = T row q (columns 0..q-1, a column of A).
constexpr int SWPC = 4;  // warps (systems) per CTA
// lines in flight per lane (measured when this kernel also ran n = 65..128: n = 128 LN 73.4 %
// with 4, 70.8 % with 8; n = 256 LN 76.8 % with 4, 68.4 % with 2)
template <int NR> constexpr int stream_pf() { return NR >= 4 ? 4 : 8; }
// UNI (a uniform order and leading dimensions, checked for the whole batch on the host; REV = a.rev at
// compile time): each lane's rows r*32 + l sit at immediate offsets (+-32 r) from one base,
// the column of the next line at a running offset (+-lda per step), and only the lines' row blocks the
// steps use are loaded (op = N: r >= qb; op = T: r <= qb, and qb + 1 for the next block's first
// lines), guarded by the step (< n) and the lane's rows (< n) alone. The other loads' values are never
// used (op = N reads rows > q, op = T rows < q; the steps' guards as above).
template <class T, int NR, bool TR, bool UNI = false, bool REV = false>
__global__ void __launch_bounds__(32 * SWPC, UNI ? 4 : 0) trsv_batch_stream_kernel(const BatchArgs<T> a)
{
  constexpr int   PF = stream_pf<NR>();
  const int       l = threadIdx.x & 31;
  const long long sys = (long long)blockIdx.x * SWPC + (threadIdx.x >> 5);
  if (sys >= a.nbatch) return;  // warp-uniform (one system per warp)
  const int n = UNI ? a.n : a.nv ? a.nv[sys] : a.n, lda = UNI ? a.lda : a.ldav ? a.ldav[sys] : a.lda, ldx = UNI ? a.ldx : a.ldxv ? a.ldxv[sys] : a.ldx;
  if (!UNI && (n < 0 || n > a.n || (n > 0 && (lda < n || ldx < n)))) {
    if (l == 0) sg_dev_flag(a.rep, SG_FAIL_PIVOT_NONFINITE, sys, n, 0.0);
    return;
  }
  if (n == 0) return;
  const T   *A = a.A[sys];
  const bool rev = UNI ? REV : a.rev;
  auto orig = [&](int i) { return rev ? n - 1 - i : i; };
  auto at   = [&](int i, int j) -> const T * {  // M(i,j) = op(A)(orig(i), orig(j))
    const long long ai = orig(i), aj = orig(j);
    return A + (TR ? aj + ai * lda : ai + aj * lda);
  };
  // the line of step q (q < n) into v
  auto line = [&](int q, T (&v)[NR]) {
#pragma unroll
    for (int r = 0; r < NR; r++) {
      const int e = r * 32 + l;
      v[r]        = q < n && e < n && (TR ? e < q : e > q) ? __ldg(TR ? at(q, e) : at(e, q)) : T(0);
    }
  };
  // UNI: A(orig(e), orig(s)) = rb[co(s) +- 32 r] (the same for both ops: M(e, s) / M(s, e))
  [[maybe_unused]] const T *rb = A + (REV ? n - 1 - l : l);
  [[maybe_unused]] const long long cstep = REV ? -(long long)lda : (long long)lda;
  [[maybe_unused]] long long       co    = REV ? (long long)(n - 1) * lda : 0;  // column of the next line to load
  [[maybe_unused]] unsigned        inm   = 0;                                    // the lane's row blocks inside the matrix
  if constexpr (UNI) {
#pragma unroll
    for (int r = 0; r < NR; r++)
      if (r * 32 + l < n) inm |= 1u << r;
  }
  // UNI: the line of step s (the column at co) into v, for a step of block qb (s = q + PF)
  auto line_u = [&](int s, T (&v)[NR], int qb) {
    const T *cb = rb + co;  // (one address per line, the rows at immediates)
    co += cstep;
    if (s < n) {  // warp-uniform (past n: the slot is never read)
#pragma unroll
      for (int r = 0; r < NR; r++) {
        const bool need = TR ? (r <= qb || (r == qb + 1 && s >= 32 * (qb + 1))) : r >= qb;  // (r, qb unrolled: folded)
        if (need) v[r] = inm >> r & 1u ? __ldg(cb + (REV ? -32 * r : 32 * r)) : T(0);
      }
    }
  };
  T ring[PF][NR];
#pragma unroll
  for (int p = 0; p < PF; p++) {
    if constexpr (UNI) {
#pragma unroll
      for (int r = 0; r < NR; r++) ring[p][r] = T(0);
      line_u(p, ring[p], 0);
    } else line(p, ring[p]);
  }
  T y[NR], d[NR], inv[NR];
#pragma unroll
  for (int r = 0; r < NR; r++) {
    const int i = r * 32 + l;
    y[r]        = i < n ? a.X[sys][orig(i)] : T(0);
    d[r]        = i < n && !a.unit ? *at(i, i) : T(1);
  }
  if (diag_inverse<T, 32, NR>(a, sys, n, l, 0, d, inv)) return;  // the whole diagonal was checked: nothing written
  // steps q = qb*32 + ql + p: qb and p unrolled (register indices), ql a loop (code size: the
  // fully unrolled 128+ steps overflowed the instruction cache)
#pragma unroll
  for (int qb = 0; qb < NR; qb++) {
#pragma unroll 1
    for (int q0 = qb * 32; q0 < qb * 32 + 32 && q0 < n; q0 += PF) {
#pragma unroll
      for (int p = 0; p < PF; p++) {
        const int q = q0 + p;  // q % PF == p (PF divides 32)
        T         m[NR];
#pragma unroll
        for (int r = 0; r < NR; r++) m[r] = ring[p][r];
        if constexpr (UNI) line_u(q + PF, ring[p], qb);
        else line(q + PF, ring[p]);
        if (q < n) subst_step<T, 32, NR, TR>(y, inv, m, qb, q - qb * 32, l);  // warp-uniform
      }
    }
  }
  store_x<T, 32, NR, TR>(a, sys, n, l, y, inv, a.X[sys]);
}

template <class T> struct SysMeta {  // one system's arguments (n = INT_MIN: past the batch)
  const T *A;
  T       *X;
  int      n, lda, ldx;
};
template <class T> __device__ __forceinline__ SysMeta<T> sys_meta(const BatchArgs<T> &a, long long s)
{
  SysMeta<T> m{nullptr, nullptr, INT_MIN, 0, 0};
  if (s < a.nbatch) {
    m.n   = a.nv ? a.nv[s] : a.n;
    m.lda = a.ldav ? a.ldav[s] : a.lda;
    m.ldx = a.ldxv ? a.ldxv[s] : a.ldx;
    m.A   = a.A[s];
    m.X   = a.X[s];
  }
  return m;
}
template <class T> __device__ __forceinline__ bool sys_bad(const BatchArgs<T> &a, const SysMeta<T> &m)  // order / leading dimension out of range
{
  return m.n != INT_MIN && (m.n < 0 || m.n > a.n || (m.n > 0 && (m.lda < m.n || m.ldx < m.n)));
}
template <class T> __device__ __forceinline__ int sys_order(const BatchArgs<T> &a, const SysMeta<T> &m)  // 0: nothing to solve
{
  return m.n > 0 && !sys_bad(a, m) ? m.n : 0;
}

// ---------------------------------------------------------------- n <= 16: the whole system in registers
// One right-hand side, n <= 16: two systems per warp (16-lane segments), lane e owns row e and
// loads, before any step, its element of every line (op = N: M(e, q), e >= q; op = T: M(q, e),
// e <= q; the diagonal is line e's own element), i.e. a whole system's 16 loads per lane in flight
// at once, coalesced (a line is contiguous in A), then (op = T: after a transposition through
// shared memory, below) the 16 steps in registers. No persistence: blocks run in launch order, so the warps sweep the batch in address
// order (the read-only rowsum reference of the same pattern reaches 54 % of copy in fp32 at
// n = 16). Measured on the H100 against the ring kernel with two systems per warp, which ran
// n <= 16 before (same lease, % of copy LN / LT): fp64 62.6 / 60.3 -> 72.2 / 70.3, fp32 47.5 /
// 44.2 -> 56.2 / 51.6. At n = 32 (G = 32, one system per warp) it lost to the streamed kernel:
// fp64 73.4 / 65.2 -> 63.9 / 53.0 (32 lines per lane in registers: fewer warps per SM). A cap
// of 32 registers for fp32 (64 warps per SM instead of 48, 36 bytes spilled): 48.4 / 48.7.
constexpr int RWPC = 4;  // warps per CTA
// PC (float, a uniform order of 16; SG_TRSV_BATCH_PC=0 turns it off): the lines are loaded in pairs
// of columns 2c, 2c + 1 of ONE system per instruction (lanes of segment h: column 2c + h, row l),
// first of the warp's first system, then of its second, so that an instruction covers a whole
// 128-byte line of a system stored with lda = 16 (two 64-byte float columns) instead of half lines of
// two systems, and each lane trades the other half with the partner lane (one shuffle per pair). The
// uniform order also drops the per-system argument loads and checks, the order tests of every load
// (one triangle test each; 32-bit offsets) and the steps' guard: 456 instructions against 688.
// Measured on the H200 (470589 systems, same lease, us): LN 163.1-163.4 -> 139.2-139.3, UN 163.2-163.4
// -> 139.2-139.4, LT / UT 183.0-183.2 -> 152.0-152.1 (ncu, LN: 79.8 M instructions against 130.8 M,
// DRAM 85.6 % of its peak against 68.3 %, the same 519.6 MB). The kernel had been issue-bound: the
// same line-wide loads with the general per-load tests (138.8 M instructions) were slower (188-191),
// as were four other load forms (bench/trsv/README.md, 2026-11-28).
// PC = 2: the same, each lane's pivot M(l, l) loaded once more on its own (an L1 hit: its line is in
// flight) instead of picked out of the row by 16 compares and selects; PC = 3: PC 2 bounded to 32
// registers (4 bytes spilled), every warp slot of the SM. Default (lda != 16): 2 for op = N, 3 for op = T (launch_regs).
// PC = 4 (lda = 16 as well; REV = a.rev at compile time): each lane loads its own system's elements
// (an instruction: one 64-byte float column of each of the warp's two systems), every offset an
// immediate, no triangle test (the steps of op = N and of the transposed op = T read M(l, q) for
// q < l only: the other triangle is loaded, never used) and no exchange: 320 SASS instructions
// against PC 2's 481, 32 registers. Measured on the H200 (470589 systems, same lease, two rounds, us):
// LN 138.4-138.5 -> 129.3-129.4, UN 138.5-138.6 -> 129.9-130.0, LT 143.2-143.4 -> 130.5, UT 143.2-143.4
// -> 130.0-130.1 (PC 2 / 3 before); ncu, LN: 46.8 M warp instructions against 77.9 M, DRAM 88.5 % of
// its peak against 84.1 %, the same 519.6 MB read.
// PC = 5: PC 4 loading only the triangle the steps use (one compare per load). At the GPU's default
// L2 fetch granularity (64 bytes) the DRAM reads do not shrink in float (a column is 64 bytes) but do in
// double (519.6 / 500.7 -> 519.6 / 395.3 MB, float / double, LN; ncu); with 32 bytes (sg_ctx_set_l2_fetch,
// the user's opt-in) they fall to 399.1 / 335.1 MB. H200, same lease, two rounds, us, LN / UN / LT / UT:
//   float  PC 4 129.3-129.4 / 129.9-130.0 / 130.4-130.6 / 130.0-130.1, PC 5 130.7-130.8 / 129.4-129.6 /
//          131.6-131.8 / 129.7-129.8; with 32 bytes PC 5 113.4 / 107.7 / 117.7-118.0 / 115.4-115.5
//          (PC 4 unchanged);
//   double PC 0 103.6-103.7 / 104.1-104.5 / 111.3-111.7 / 111.2-112.4 (the form before), PC 4 124.3-124.6
//          (the whole square), PC 5 100.3-100.4 / 100.1-100.2 / 102.5-102.6 / 102.2-102.3; with 32 bytes
//          PC 5 90.4-90.5 / 90.0-90.1 / 97.2-97.3 / 97.0-97.1;
// cuBLAS trsmBatched's times do not change with the limit (414 / 289 us LN either way).
// Defaults where lda = 16: double PC 5; float PC 5 when the limit is <= 32 bytes, else PC 4.
template <class T, int G, bool TR, int PC = 0, bool REV = false>
__global__ void __launch_bounds__(32 * RWPC, PC >= 4 && sizeof(T) == 8 ? 8 : PC >= 3 ? 16 : PC ? 10 : 0) trsv_batch_regs_kernel(const BatchArgs<T> a)  // (PC 1 / 2: 40 registers; 3: PC 2 at 32 registers, 4 bytes spilled, every warp slot)
{
  constexpr int   NL = G, SPW = 32 / G;  // lines (steps) at most, systems per warp
  const int       lane = threadIdx.x & 31, l = lane % G, seg = lane / G;
  const long long sys = ((long long)blockIdx.x * RWPC + (threadIdx.x >> 5)) * SPW + seg;
  if (((long long)blockIdx.x * RWPC + (threadIdx.x >> 5)) * SPW >= a.nbatch) return;  // warp-uniform
  SysMeta<T> C;
  if constexpr (PC) {  // (uniform: the order and leading dimensions were checked for the whole batch)
    const bool in = sys < a.nbatch;
    C             = SysMeta<T>{in ? a.A[sys] : nullptr, in ? a.X[sys] : nullptr, in ? G : 0, a.lda, a.ldx};
  } else {
    C = sys_meta(a, sys);
    if (sys_bad(a, C) && l == 0) sg_dev_flag(a.rep, SG_FAIL_PIVOT_NONFINITE, sys, C.n, 0.0);
  }
  const int n     = PC ? C.n : sys_order(a, C);                       // this segment's order (0: nothing to solve)
  const int nloop = PC ? G : (int)__reduce_max_sync(FULL, (unsigned)n);  // steps of the warp (PC: the warp's first system is in the batch)
  if (nloop == 0) return;                                             // warp-uniform
  const bool rev = PC >= 4 ? REV : a.rev;
  const long long oe = rev ? n - 1 - l : l;  // this lane's row in A's numbering
  T lv[NL], y[1], d[1], inv[1];
  [[maybe_unused]] T dpiv = T(1);  // (PC >= 2)
  if constexpr (PC >= 4) {
    static_assert(G == 16, "lda 16");
    // A(oe, oq) at oe + 16 oq: op = N / T alike (M(l, q) / M(q, l) = A(oe, oq)), REV: oe = 15 - l, oq = 15 - q
    const T *p = C.A + (REV ? 255 - l : l);
#pragma unroll
    for (int q = 0; q < NL; q++) lv[q] = T(0);
    if (n == G) {  // (0: past the batch; segment-uniform)
#pragma unroll
      for (int q = 0; q < NL; q++)
        if (PC == 4 || (TR ? q > l : l > q)) lv[q] = __ldg(p + (REV ? -16 * q : 16 * q));  // (PC 5: the used triangle only)
      if (!a.unit) dpiv = __ldg(p + (REV ? -16 * l : 16 * l));
    }
  } else if constexpr (PC) {
    // (the launch's condition: a uniform order of 16, so a segment's order is 16, or 0 past the batch;
    // the addresses step by a column pair, the only test per load is the triangle's)
    static_assert(G == 16, "pairs of columns across the two segments");
    const T  *Ap = (const T *)__shfl_xor_sync(FULL, (unsigned long long)C.A, 16);  // the partner segment's system
    const int np = __shfl_xor_sync(FULL, n, 16);
    const int ld = a.lda, st = rev ? -2 * ld : 2 * ld;                  // column pair to column pair (32 bits: 16 lda < 2^31, the launch's condition)
    const int o0 = (rev ? 15 - l : l) + (rev ? 15 - seg : seg) * ld;   // row oe, the column of q = seg
    const T  *p0 = seg ? Ap : C.A, *p1 = seg ? C.A : Ap;                // instruction t: the warp's system t
    const bool in0 = (seg ? np : n) == G, in1 = (seg ? n : np) == G;
    const int  lu  = TR ? l + (a.unit ? 1 : 0) : l - (a.unit ? 1 : 0);  // the triangle: q >= lu (op = T) / q <= lu (op = N)
    T          own[NL / 2], oth[NL / 2];
#pragma unroll
    for (int c = 0; c < NL / 2; c++) {
      const int  q  = 2 * c + seg;
      const bool tr = TR ? q >= lu : q <= lu;
      const T    v0 = in0 && tr ? __ldg(p0 + (o0 + c * st)) : T(0);
      const T    v1 = in1 && tr ? __ldg(p1 + (o0 + c * st)) : T(0);
      own[c]        = seg ? v1 : v0;  // (row l, column q of this segment's system)
      oth[c]        = seg ? v0 : v1;  // (row l, column q of the partner's: the one the partner lane lacks)
    }
    if constexpr (PC >= 2)
      if (!a.unit && n == G) dpiv = __ldg(C.A + (oe + oe * (long long)ld));
#pragma unroll
    for (int c = 0; c < NL / 2; c++) {
      const T r     = __shfl_xor_sync(FULL, oth[c], 16);  // column 2c + 1 - seg of this segment's system
      lv[2 * c]     = seg ? r : own[c];
      lv[2 * c + 1] = seg ? own[c] : r;
    }
  } else {
#pragma unroll
    for (int q = 0; q < NL; q++) {  // M(e, q) / M(q, e) = A(oe, oq) for both ops: column oq of A, row oe
      const long long oq = rev ? n - 1 - q : q;
      lv[q]              = q < n && l < n && (TR ? l <= q : l >= q) && !(a.unit && l == q) ? __ldg(C.A + oe + oq * C.lda) : T(0);
    }
  }
  y[0] = l < n ? C.X[oe] : T(0);
  // op = T: lane l holds column l of M; transposed through shared memory (one padded G x G tile
  // per segment, conflict-free both ways) it holds row l, so the steps take the op = N form: one
  // broadcast per step instead of a butterfly of log2 G shuffles (16 steps x 4 dependent shuffles).
  // Measured on the H100 (same lease, two repeats, n = 16, % of copy, LT / UT): fp32 51.6-51.8 /
  // 51.7-51.8 -> 54.1 / 54.1, fp64 70.1-70.2 / 70.1-70.2 -> 72.0 / 72.0 (the read-only triangle
  // sweep of the same bytes: 58 / 72 %); op = N unchanged (bench/trsv/README.md, 2026-11-28).
  if constexpr (TR) {
    __shared__ T tb[RWPC][32 / G][G][G + 1];
    T (&t)[G][G + 1] = tb[threadIdx.x >> 5][seg];
#pragma unroll
    for (int q = 0; q < NL; q++) t[q][l] = lv[q];
    __syncwarp();
#pragma unroll
    for (int q = 0; q < NL; q++) lv[q] = t[l][q];
  }
  d[0] = T(1);
  if constexpr (PC >= 2) {
    if (!a.unit && l < n) d[0] = dpiv;
  } else {
#pragma unroll
    for (int q = 0; q < NL; q++)
      if (q == l && !a.unit) d[0] = lv[q];
  }
  const bool bad = diag_inverse<T, G, 1>(a, sys, n, l, seg, d, inv);
#pragma unroll
  for (int q = 0; q < NL; q++) {
    if (!PC && q >= nloop) break;  // warp-uniform (PC: nloop = 16)
    const T m[1] = {lv[q]};
    subst_step<T, G, 1, false>(y, inv, m, 0, q, l);  // (op = T transposed above)
  }
  if (!bad && n > 0) store_x<T, G, 1, false>(a, sys, n, l, y, inv, C.X);
}

// ---------------------------------------------------------------- persistent warps, staged lines
// One right-hand side: the matrix streams through a per-warp ring in shared memory and the
// substitution runs in registers (the steps above). A warp solves one system at a time (lane l
// owns rows r*32 + l; two systems per warp in 16-lane segments ran n <= 16 until
// trsv_batch_regs_kernel replaced it). A system is a sequence of lines:
// b, the diagonal (or, ring_diag_inline, each chunk also carries the diagonal elements of the next
// chunk's steps), then the lines of steps q = 0..n-1 (as in the streamed kernel). Lines travel
// in chunks of K: the H header chunks hold b (line 0) and the diagonal (line 1), then chunk c
// holds the lines of steps (c-H)*K .. +K-1. Every lane copies, by cp.async, exactly the elements it
// later reads (element e of a line into the slot's element r*32+l), so the ring needs no barrier;
// PF-1 chunks are in flight per warp without costing registers. Warps are persistent: warp w
// solves the systems w, w+W, w+2W, ... and its ring runs on from one system into the next, so a
// system's first chunks are in flight while the previous one is finished.
// Used where it beats the streamed kernel (dispatch_batch), measured on the H100: the streamed
// kernel keeps PF*NR line values in registers, which costs occupancy at n > 256 (16 rows per
// lane), and it starts every system's loads cold. Variants measured and dropped (bench/trsv/README.md): one line per
// cp.async group (issue-bound: 65 instructions per step at n = 32, ncu); the lines as tensor
// copies (cp.async.bulk into the slot, completing on an mbarrier: 2-3x more instructions, 29-54 %
// of DRAM bandwidth at n = 32 / 128 fp64); 16-byte cp.async.cg pieces copied for the whole warp;
// deeper rings; two systems per warp at n = 32..128. All slower. So was a persistent CTA per SM
// that staged WHOLE systems (3 x 68 KB at fp64 n = 128) for one solver warp (2026-11-28, at most 61 %
// of copy against 77 %: one warp's 128-step substitution takes 6.3 us a system).
// Shapes used (dispatch_batch): 4, 8 and 16 rows per lane. Lines per chunk and chunks in the
// ring, measured on the H100 (% of copy, same lease):
//  - 8 rows per lane, op = T n = 256 fp64: 71.7 / 75.1 / 76.5 / 75.5 / 62.2 % with 3 / 4 / 5 /
//    10 / 14 chunks of one line; fp32 (LT / UT, 2026-11-25): 66.9 / 66.6 % with 5 chunks of one
//    line, 69.3 / 69.2 with 3 of 2, 68.9 / 68.9 with 5 of 2, 65.7 / 65.7 with 2 of 2, 56.2 / 58.2
//    with 3 of 4 (fp32 op = N stays with the streamed kernel: 71 % against 65 % for 3 of 2);
//  - 16 rows: n = 512 op = N 57.3 / 60.6 / 61.7 % with 4 / 6 / 8 chunks of one line;
//  - 4 rows, n = 128, LN / LT: fp64 73.7 / 70.8 (4 chunks of 2 lines), 74.2 / 74.2 (3 of 2),
//    70.9 / 72.8 (3 of 4), 73.3 / 74.3 (6 of 1); fp32 61.3 / 62.6, 60.1 / 62.5, 63.1 / 63.6,
//    60.6 / 57.1.
constexpr int RG = 32;  // lanes per system in the ring kernel (a warp)
template <class T, int NR> constexpr int ring_k()  // lines per chunk (divides RG)
{
  return NR <= 4 ? (sizeof(T) == 8 ? 2 : 4) : NR <= 8 && sizeof(T) == 4 ? 2 : 1;
}
template <class T, int NR> constexpr int ring_pf() { return NR <= 4 ? 3 : NR <= 8 ? (sizeof(T) == 4 ? 3 : 5) : 8; }  // chunks per ring
template <int NR> constexpr int ring_wpc() { return NR <= 4 ? 2 : 1; }                                    // warps per CTA
// a slot: K lines of RG*NR elements, and (ring_diag_inline) RG elements for the next chunk's diagonal
template <class T, int NR, bool TR> constexpr int ring_slot() { return ring_k<T, NR>() * RG * NR + (ring_diag_inline<T, NR, TR>() ? RG : 0); }
template <class T, int NR, bool TR> constexpr size_t ring_smem() { return sizeof(T) * (size_t)ring_pf<T, NR>() * ring_slot<T, NR, TR>() * ring_wpc<NR>(); }

template <class T> __device__ __forceinline__ void cp_async_s(unsigned dst, const T *src)  // to a shared-window address
{
  if constexpr (sizeof(T) == 8) asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(dst), "l"(src) : "memory");
  else asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(dst), "l"(src) : "memory");
}

template <class T, int NR, bool TR>
__global__ void __launch_bounds__(32 * ring_wpc<NR>()) trsv_batch_ring_kernel(const BatchArgs<T> a, long long W)
{
  constexpr bool DL = ring_diag_inline<T, NR, TR>();  // the diagonal a chunk ahead (else a header line of its own)
  constexpr int  G = RG, K = ring_k<T, NR>(), PF = ring_pf<T, NR>(), H = DL ? 1 : (2 + K - 1) / K, LINE = G * NR, CHUNK = ring_slot<T, NR, TR>();
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int       l = threadIdx.x & 31;
  const T *const  ring = (const T *)smem_raw + (size_t)(threadIdx.x >> 5) * PF * CHUNK + l;  // this lane's element 0 of slot 0
  const unsigned  ring_s = smem_u32(ring);
  const long long w      = (long long)blockIdx.x * ring_wpc<NR>() + (threadIdx.x >> 5);  // the warp's first system
  const bool      rev = a.rev, unit = a.unit;
  // chunks of a system of order n (0: nothing to solve), and the end of the batch. Both are the
  // same in every lane; the warp votes say so to the compiler (uniform registers and branches:
  // without them ptxas allocated these kernels differently and spilled up to 36 bytes)
  auto sys_chunks = [&](int n) { return (int)__reduce_max_sync(FULL, n > 0 ? (unsigned)(H + (n + K - 1) / K) : 0u); };
  auto past_end   = [&](const SysMeta<T> &m) { return !__any_sync(FULL, m.n != INT_MIN); };

  // issue cursor: chunk ic of the system ig (I, of order in, 0 when it has nothing to solve);
  // icl = this lane's element of step iq's line, idp = the step from one line to the next
  long long  ig = w;
  SysMeta<T> I = sys_meta(a, ig), In;
  int        ic = 0, ichunks = 0, islot = 0, in = 0, iq = 0;
  bool       iend = false;
  const T   *icl = nullptr;
  long long  idp = 0;
  auto next_sys = [&](bool first) {  // from I (or the next system) on to the first system with chunks
    for (;; first = false) {
      if (!first) ig += W, I = In;
      In      = sys_meta(a, ig + W);
      in      = sys_order(a, I);
      ichunks = sys_chunks(in), iend = past_end(I);
      if (iend || ichunks > 0) break;  // (empty or invalid systems: reported by the consumer)
    }
    ic = 0, iq = 0;
    if (in > 0) icl = I.A + (rev ? (long long)(in - 1) * I.lda + (in - 1 - l) : l), idp = rev ? -(long long)I.lda : I.lda;
  };
  next_sys(true);
  auto issue = [&]() {  // chunk ic into slot islot, then on to the next chunk
    if (!iend) {
      const unsigned d = ring_s + (unsigned)(islot * CHUNK * sizeof(T));
      if (ic < H) {  // header: b (line 0), and without DL the diagonal (line 1)
#pragma unroll
        for (int k = 0; k < K; k++) {
          const int ln = ic * K + k;
          if (ln > (DL ? 0 : 1)) break;
#pragma unroll
          for (int r = 0; r < NR; r++) {
            const int e = r * G + l;
            if (e < in && (ln == 0 || !unit)) {
              const long long oe = rev ? in - 1 - e : e;
              cp_async_s(d + (unsigned)((k * LINE + r * G) * sizeof(T)), ln == 0 ? I.X + oe : I.A + oe * ((long long)I.lda + 1));
            }
          }
        }
      } else {  // steps iq .. iq+K-1 (lines past the order: none)
#pragma unroll
        for (int k = 0; k < K; k++) {
          const int q = iq + k;
#pragma unroll
          for (int r = 0; r < NR; r++) {
            const int e = r * G + l;
            if (q < in && (TR ? e < q : (e > q && e < in))) cp_async_s(d + (unsigned)((k * LINE + r * G) * sizeof(T)), icl + k * idp + (rev ? -r * G : r * G));
          }
        }
        iq += K, icl += K * idp;
      }
      if (DL && !unit) {  // M(q,q) of the next chunk's steps q = (ic+1-H)*K + k, each by its owner (lane q % G) into its side element
        const int q = (ic + 1 - H) * K + l - (ic + 1 - H) * K % G;
        if (q >= (ic + 1 - H) * K && q < (ic + 1 - H) * K + K && q < in) {
          const long long oq = rev ? in - 1 - q : q;
          cp_async_s(d + (unsigned)(K * LINE * sizeof(T)), I.A + oq * ((long long)I.lda + 1));
        }
      }
      if (++ic == ichunks) next_sys(false);
    }
    cp_commit();  // an empty group past the end keeps the count
    islot = islot + 1 == PF ? 0 : islot + 1;
  };
  for (int p = 0; p < PF - 1; p++) issue();

  int  cslot = 0;
  T    m[K][NR];
  T    dc = T(1), rc = T(1), dn = T(1), rn = T(1);  // DL: this lane's M(q,q) for the chunk taken / the next one, and reciprocals
  // The next chunk: wait for it, read it, refill its predecessor's slot. Each lane refills only
  // elements it read itself, with earlier ld.shared instructions that the in-order shared-memory
  // pipeline performs before a later cp.async has even fetched its global data.
  auto take = [&](int rlo, int rhi) {
    cp_wait<PF - 2>();
    const T *s = ring + cslot * CHUNK;
#pragma unroll
    for (int k = 0; k < K; k++)
#pragma unroll
      for (int r = 0; r < NR; r++)
        if (r >= rlo && r < rhi) m[k][r] = s[k * LINE + r * G];
    if (DL && !unit) dc = dn, rc = rn, dn = s[K * LINE], rn = rcp_fast(dn);  // (a lane with no step in the next chunk: unused)
    cslot = cslot + 1 == PF ? 0 : cslot + 1;
    issue();
  };

  for (long long sys = w;; sys += W) {
    SysMeta<T> C = sys_meta(a, sys);
    if (past_end(C)) break;
    if (sys_bad(a, C) && l == 0) sg_dev_flag(a.rep, SG_FAIL_PIVOT_NONFINITE, sys, C.n, 0.0);
    const int n = sys_order(a, C);  // 0: nothing to solve
    const int chunks = sys_chunks(n);
    if (chunks == 0) continue;
    const int steps = (chunks - H) * K;  // >= n; steps past n touch only rows past it
    T         y[NR], d[NR], inv[NR];
#pragma unroll
    for (int hc = 0; hc < H; hc++) {
      take(0, NR);
#pragma unroll
      for (int k = 0; k < K; k++)
#pragma unroll
        for (int r = 0; r < NR; r++) {
          if (hc * K + k == 0) y[r] = m[k][r];
          if (hc * K + k == 1) d[r] = m[k][r];
        }
    }
    bool bad = false;
    if constexpr (DL) {
#pragma unroll
      for (int r = 0; r < NR; r++) d[r] = inv[r] = T(1);  // (unit diagonal, rows past n)
    } else bad = diag_inverse<T, G, NR>(a, sys, n, l, 0, d, inv);
#pragma unroll
    for (int qb = 0; qb < NR; qb++) {
      if (qb * G >= steps) break;  // warp-uniform
#pragma unroll 1
      for (int q0 = 0; q0 < G && qb * G + q0 < steps; q0 += K) {  // K divides G: a chunk stays in one row block
        if constexpr (!TR) take(qb, NR);
        else take(0, qb + 1);
        if (DL && !unit && l >= q0 && l < q0 + K) d[qb] = dc, inv[qb] = rc;  // the owner of one of the chunk's steps
#pragma unroll
        for (int k = 0; k < K; k++) subst_step<T, G, NR, TR>(y, inv, m[k], qb, q0 + k, l);
      }
    }
    if (DL) bad = diag_check<T, G, NR>(a, sys, n, l, 0, d);
    if (!bad) store_x<T, G, NR, TR>(a, sys, n, l, y, inv, C.X);  // a bad pivot: nothing written
  }
  cp_wait<0>();
}

template <class T> BatchArgs<T> make_args(sg_ctx *ctx, const sg_trsv_batch *B, double pivtol)
{
  BatchArgs<T> a;
  a.A = (const T *const *)B->A;
  a.X = (T *const *)B->X;
  a.nv = B->nv;
  a.ldav = B->ldav;
  a.ldxv = B->ldxv;
  a.nbatch = B->nbatch;
  a.n = B->n;
  a.lda = B->lda;
  a.ldx = B->ldx;
  a.nrhs = B->nrhs;
  a.rev = (B->uplo == SG_UPPER) != (B->trans == SG_TRANS);
  a.trans = B->trans == SG_TRANS;
  a.unit = B->diag == SG_UNIT;
  a.pivtol = (T)(pivtol > 0 ? pivtol : 0.0);
  a.rep = sg_dreport(ctx);
  return a;
}
template <class T, int K> sg_status launch_batch(sg_ctx *ctx, const sg_trsv_batch *B, double pivtol, sg_report *rep)
{
  const BatchArgs<T> a = make_args<T>(ctx, B, pivtol);
  const size_t smem = batch_smem<T, K>(B->n);
  sg_status    st;
  static size_t attr = 0;  // the limit set so far (grows with the largest order seen)
  if (smem > attr) {
    if ((st = sg_cuda_check(cudaFuncSetAttribute(trsv_batch_kernel<T, K>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem), rep, "batched trsv shared memory")) != SG_OK) return st;
    attr = smem;
  }
  if ((st = sg_dev_report_reset(ctx, rep)) != SG_OK) return st;
  trsv_batch_kernel<T, K><<<(unsigned)B->nbatch, NTB, smem, sg_stream(ctx)>>>(a);
  return sg_dev_report_fetch(ctx, rep, fail_batch);
}

template <class T, int G, int NR, int K, bool TR> sg_status launch_warp(sg_ctx *ctx, const sg_trsv_batch *B, double pivtol, sg_report *rep)
{
  const BatchArgs<T> a    = make_args<T>(ctx, B, pivtol);
  constexpr size_t   smem = warp_smem<T, G, NR>();
  constexpr int      WPC = warp_wpc<T, G, NR>(), SPC = WPC * (32 / G);  // warps, systems per CTA
  auto               kernel = trsv_batch_warp_kernel<T, G, NR, K, TR>;
  sg_status          st;
  if constexpr (smem > 48 * 1024) {
    static bool attr = false;
    if (!attr) {
      if ((int)smem > sg_cuda_smem_optin())
        return sg_report_set(rep, SG_ERR_DEVICE, -1, -1, 0.0, "batched trsv needs %zu bytes of shared memory per block, the device allows %d", smem,
                             sg_cuda_smem_optin());
      if ((st = sg_cuda_check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem), rep, "batched trsv shared memory")) != SG_OK)
        return st;
      attr = true;
    }
  }
  if ((st = sg_dev_report_reset(ctx, rep)) != SG_OK) return st;
  kernel<<<(unsigned)((B->nbatch + SPC - 1) / SPC), 32 * WPC, smem, sg_stream(ctx)>>>(a);
  return sg_dev_report_fetch(ctx, rep, fail_batch);
}

template <class T, int NR, bool TR> sg_status launch_stream_t(sg_ctx *ctx, const sg_trsv_batch *B, double pivtol, sg_report *rep)
{
  const BatchArgs<T> a = make_args<T>(ctx, B, pivtol);
  sg_status          st;
  if ((st = sg_dev_report_reset(ctx, rep)) != SG_OK) return st;
  // UNI where it measured faster (H200, same lease, two rounds, us, UNI off -> on; bench/trsv/README.md,
  // twenty-seventh session): float n = 17..32 LN / UN / LT / UT 158.6 / 158.7 / 209.1-209.3 / 209.2-209.4
  // -> 141.6-141.7 / 142.7-143.0 / 185.1-185.4 / 183.6-183.7 (n = 32), float n = 33..64 op = T LT / UT
  // 147.4 / 147.7-147.8 -> 143.7-143.8 / 132.2-132.3 (64), float op = N n = 129..256 LN / UN 98.4-98.5 /
  // 99.0-99.1 -> 94.5-95.1 / 95.1-95.3 (256). Slower, so not taken: float n = 33..64 op = N (LN 121.0 ->
  // 130.2-130.4) and double (n = 32 LN 105.2 -> 131.1, n = 64 LN 100.5-100.6 -> 121.1-121.2; op = T
  // within 2 % at 32, 23 % slower at 64): more registers (double NR 2: 80-104 against 72-82), fewer warps.
  // SG_TRSV_BATCH_UNI=0 / 1 turns it off / on everywhere (tests, A/B).
  static const int uni_env = env_int("SG_TRSV_BATCH_UNI", -1, -1, 1);
  constexpr bool   uni_def = sizeof(T) == 4 && (NR != 2 || TR);
  const bool       uni     = (uni_env < 0 ? uni_def : uni_env == 1) && !B->nv && !B->ldav && !B->ldxv;
  auto kernel = !uni ? trsv_batch_stream_kernel<T, NR, TR> : a.rev ? trsv_batch_stream_kernel<T, NR, TR, true, true> : trsv_batch_stream_kernel<T, NR, TR, true, false>;
  kernel<<<(unsigned)((B->nbatch + SWPC - 1) / SWPC), 32 * SWPC, 0, sg_stream(ctx)>>>(a);
  return sg_dev_report_fetch(ctx, rep, fail_batch);
}
// the PC 4 / 5 instance of (op, REV)
template <class T, int G, int PC> auto regs_lda16(bool tr, bool rev)
{
  return tr ? (rev ? trsv_batch_regs_kernel<T, G, true, PC, true> : trsv_batch_regs_kernel<T, G, true, PC, false>)
            : (rev ? trsv_batch_regs_kernel<T, G, false, PC, true> : trsv_batch_regs_kernel<T, G, false, PC, false>);
}
template <class T, int G> sg_status launch_regs(sg_ctx *ctx, const sg_trsv_batch *B, double pivtol, sg_report *rep)
{
  const BatchArgs<T> a = make_args<T>(ctx, B, pivtol);
  sg_status          st;
  if ((st = sg_dev_report_reset(ctx, rep)) != SG_OK) return st;
  constexpr int  SPC  = RWPC * (32 / G);  // systems per CTA
  const unsigned grid = (unsigned)((B->nbatch + SPC - 1) / SPC);
  // lda = 16: PC 5 (double; float where the L2 fetch granularity is <= 32 bytes), else PC 4 (float).
  // float, other lda: pairs of columns (trsv_batch_regs_kernel PC). Automatic (-1): op = N the PC 2 form (40 registers), op = T
  // PC 3 (32): H200, same lease, us: LN / UN 138.4-138.7 / 138.5-138.9 against 143.2-143.3 / 143.3-143.5 with PC 3,
  // LT / UT 141.5-143.5 with PC 3 against 150.3-150.8 (op = T's tile transposition hides behind more warps); PC 2
  // against 1 (the pivot loaded on its own): 0.3-0.6 % faster in all four
  static const int pc_env = env_int("SG_TRSV_BATCH_PC", -1, -1, 5);
  const int        pcd    = B->lda == 16 ? (sizeof(T) == 8 || sg_cuda_l2_fetch() <= 32 ? 5 : 4) : B->trans == SG_TRANS ? 3 : 2;
  const int        pc     = pc_env >= 4 && B->lda != 16 ? pcd : pc_env >= 0 ? pc_env : pcd;
  if (pc >= 4 && !B->nv && B->n == 16 && B->lda == 16) {
    const bool tr = B->trans == SG_TRANS;
    (pc == 5 ? regs_lda16<T, G, 5>(tr, a.rev) : regs_lda16<T, G, 4>(tr, a.rev))<<<grid, 32 * RWPC, 0, sg_stream(ctx)>>>(a);
    return sg_dev_report_fetch(ctx, rep, fail_batch);
  }
  if (sizeof(T) == 4 && pc && !B->nv && B->n == 16 && B->lda < (1 << 26)) {
    constexpr int P1 = sizeof(T) == 4 ? 1 : 0, P2 = sizeof(T) == 4 ? 2 : 0, P3 = sizeof(T) == 4 ? 3 : 0;  // (double: never)
    if (B->trans == SG_TRANS)
      (pc == 3 ? trsv_batch_regs_kernel<T, G, true, P3> : pc == 2 ? trsv_batch_regs_kernel<T, G, true, P2> : trsv_batch_regs_kernel<T, G, true, P1>)<<<grid, 32 * RWPC, 0, sg_stream(ctx)>>>(a);
    else (pc == 3 ? trsv_batch_regs_kernel<T, G, false, P3> : pc == 2 ? trsv_batch_regs_kernel<T, G, false, P2> : trsv_batch_regs_kernel<T, G, false, P1>)<<<grid, 32 * RWPC, 0, sg_stream(ctx)>>>(a);
  } else if (B->trans == SG_TRANS) trsv_batch_regs_kernel<T, G, true><<<grid, 32 * RWPC, 0, sg_stream(ctx)>>>(a);
  else trsv_batch_regs_kernel<T, G, false><<<grid, 32 * RWPC, 0, sg_stream(ctx)>>>(a);
  return sg_dev_report_fetch(ctx, rep, fail_batch);
}
template <class T, int NR> sg_status launch_stream(sg_ctx *ctx, const sg_trsv_batch *B, double pivtol, sg_report *rep)
{
  return B->trans == SG_TRANS ? launch_stream_t<T, NR, true>(ctx, B, pivtol, rep) : launch_stream_t<T, NR, false>(ctx, B, pivtol, rep);
}
// Persistent grid: as many warps as fit on the device (occupancy x SMs), but no more than the
// systems need, and balanced: every warp solves the same number of systems (+-1).
// SG_TRSV_BATCH_WARPS caps the warps (tests: several systems per warp with few systems).
template <class T, int NR, bool TR> sg_status launch_ring_t(sg_ctx *ctx, const sg_trsv_batch *B, double pivtol, sg_report *rep)
{
  const BatchArgs<T> a    = make_args<T>(ctx, B, pivtol);
  constexpr size_t   smem = ring_smem<T, NR, TR>();
  constexpr int      WPC  = ring_wpc<NR>();
  auto               kernel = trsv_batch_ring_kernel<T, NR, TR>;
  static int         per_sm = 0;  // resident CTAs per SM (once per instantiation)
  sg_status          st;
  if (!per_sm) {
    if (smem > 48 * 1024 && (st = sg_cuda_check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem), rep, "batched trsv shared memory")) != SG_OK)
      return st;
    if ((st = sg_cuda_check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, 32 * WPC, smem), rep, "batched trsv occupancy")) != SG_OK) return st;
    if (per_sm < 1) return sg_report_set(rep, SG_ERR_DEVICE, -1, -1, 0.0, "batched trsv: no CTA of %zu bytes of shared memory fits on an SM", smem);
  }
  long long       wmax   = (long long)per_sm * sg_cuda_num_sms() * WPC;
  wmax                   = std::min<long long>(wmax, env_int("SG_TRSV_BATCH_WARPS", 1 << 30, 1, 1 << 30));
  const long long per_w  = (B->nbatch + wmax - 1) / wmax;         // systems per warp
  const long long W      = (B->nbatch + per_w - 1) / per_w;       // warps, balanced
  const long long ctas   = (W + WPC - 1) / WPC;
  if ((st = sg_dev_report_reset(ctx, rep)) != SG_OK) return st;
  kernel<<<(unsigned)ctas, 32 * WPC, smem, sg_stream(ctx)>>>(a, ctas * WPC);
  return sg_dev_report_fetch(ctx, rep, fail_batch);
}
template <class T, int NR> sg_status launch_ring(sg_ctx *ctx, const sg_trsv_batch *B, double pivtol, sg_report *rep)
{
  return B->trans == SG_TRANS ? launch_ring_t<T, NR, true>(ctx, B, pivtol, rep) : launch_ring_t<T, NR, false>(ctx, B, pivtol, rep);
}
// segment width G and rows per lane NR by the bound n; 4 right-hand sides per substitution
template <class T, int G, int NR> sg_status warp_k(sg_ctx *ctx, const sg_trsv_batch *B, double pivtol, sg_report *rep)
{
  // (one right-hand side never comes here: it takes the ring or the streamed kernel)
  const bool tr = B->trans == SG_TRANS;
  return tr ? launch_warp<T, G, NR, 4, true>(ctx, B, pivtol, rep) : launch_warp<T, G, NR, 4, false>(ctx, B, pivtol, rep);
}

template <class T> sg_status dispatch_batch(sg_ctx *ctx, const sg_trsv_batch *B, double pivtol, sg_report *rep)
{
  // one right-hand side: n <= 16 the registers kernel (its comment; bench/trsv/README.md,
  // "Session of 2026-11-25"); above, the ring kernel where it measured faster than the streamed one (H100,
  // % of copy, from same-lease A/B runs, "Session of 2026-11-24 (sixth)"): n = 65..128 (fp64 74.2 / 74.2 against 73.9 / 67.1,
  // fp32 63.1 / 63.6 against 60.2 / 60.7), n = 129..256 except fp32 op = N (fp64 80.2 / 76.8
  // against 77.5 / 65.8), n = 257..512 (the streamed kernel cannot hold 16 rows per lane; the CTA
  // kernel ran before: fp64 62.1 / 47.9 against 50.1 / 50.3). The streamed kernel stays ahead at
  // n = 17..64 (fp64 n = 32: 73.6 / 66.3 against 65.2 / 59.6) and for fp32 op = N at 129..256
  // (71.2 against 62.2).
  if (B->nrhs == 1) {
    const bool tr = B->trans == SG_TRANS;
    if (B->n <= 16) return launch_regs<T, 16>(ctx, B, pivtol, rep);
    if (B->n <= 32) return launch_stream<T, 1>(ctx, B, pivtol, rep);
    if (B->n <= 64) return launch_stream<T, 2>(ctx, B, pivtol, rep);
    if (B->n <= 128) return launch_ring<T, 4>(ctx, B, pivtol, rep);
    if (B->n <= 256) {  // (only the variants used are instantiated)
      if (tr) return launch_ring_t<T, 8, true>(ctx, B, pivtol, rep);
      if constexpr (sizeof(T) == 8) return launch_ring_t<T, 8, false>(ctx, B, pivtol, rep);
      else return launch_stream_t<T, 8, false>(ctx, B, pivtol, rep);
    }
    return launch_ring<T, 16>(ctx, B, pivtol, rep);
  }
  if (B->n <= 32) return warp_k<T, 32, 1>(ctx, B, pivtol, rep);
  if (B->n <= 64) return warp_k<T, 32, 2>(ctx, B, pivtol, rep);
  if (B->n <= 96) return warp_k<T, 32, 3>(ctx, B, pivtol, rep);
  if (B->n <= WARP_MAX_N) return warp_k<T, 32, 4>(ctx, B, pivtol, rep);
  // (one right-hand side never comes here: the bound n is at most 512)
  return B->nrhs <= 4 ? launch_batch<T, 4>(ctx, B, pivtol, rep) : launch_batch<T, 16>(ctx, B, pivtol, rep);
}

} // namespace

extern "C" sg_status sg_trsv_batch_solve_cuda(sg_ctx *ctx, const sg_trsv_batch *B, double pivtol, sg_report *rep)
{
  sg_status st = sg_trsv_batch_begin(ctx, SG_BACKEND_CUDA, B, rep);
  if (st != SG_OK) return st;
  if (B->nbatch > 0x7fffffffLL) return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "batched triangular solve: at most 2^31-1 systems per call");
  return B->prec == SG_REAL64 ? dispatch_batch<double>(ctx, B, pivtol, rep) : dispatch_batch<float>(ctx, B, pivtol, rep);
}
