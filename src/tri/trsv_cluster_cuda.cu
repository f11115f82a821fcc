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
// Deadlock-free: the CTAs of a cluster are co-resident (cluster launch); warps wait only for x
// blocks of smaller rows and for their own CTA's update / helper warps. Every CTA stays until all
// x blocks have landed in it (the other CTAs' st.async target its shared memory).
// Bad pivots are flagged by the update warp (the solve goes on, as in the general kernel), a
// non-finite x by the critical warp: the smallest row is reported.
#include "tri/trsv_cuda.cuh"

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
  // Index in A (row of x and b) of row i of M. The block grid is aligned to A's, so every tile is
  // a 32 x 32 box of A at multiples of 32, and the partial block is the last one of A (the first
  // of M for the reflected variants: M's rows past A are padding, "dummy" rows).
  __device__ __forceinline__ int  aidx(int i) const { return rev ? nb * CB - 1 - i : i; }
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
//   barriers: xbar[nb] (x_J has arrived), rdyA[ob] (Dinv), rdyB[ob] (r), ctb[ob] (tile (I, I-1)), sb[ob * rs] (ring slots)
struct ClLayout {
  size_t xs, dv, ct, rv, ring, total;
};
template <class T> __host__ __device__ inline ClLayout cl_layout(int nb, int ob, int rs)
{
  ClLayout L;
  L.xs    = ((size_t)(nb + 3 * ob + ob * rs) * 8 + 127) / 128 * 128;  // x, nb * CB
  L.dv    = L.xs + (size_t)nb * CB * sizeof(T);                         // Dinv_k, ob * CB * CLD
  L.ct    = (L.dv + (size_t)ob * CB * CLD * sizeof(T) + 127) / 128 * 128;  // tile (I, I-1)_k as copied, ob * CB * CB
  L.rv    = L.ct + (size_t)ob * CB * CB * sizeof(T);                    // r_k, ob * CB
  L.ring  = (L.rv + (size_t)ob * CB * sizeof(T) + 127) / 128 * 128;     // ob rings of rs tiles
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
// wait for phase 0 of a barrier completed by other CTAs' st.async (cluster-scope acquire)
__device__ __forceinline__ void bar_wait_cluster(const unsigned long long *bar)
{
  asm volatile("{\n .reg .pred p;\n W_%=:\n mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%0], 0;\n @!p bra W_%=;\n}\n" ::"r"(
                 smem_u32(bar))
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

// tile (I, J) of M into dst by one tensor copy completing on bar (lane 0 of the warp issues it)
template <class T> __device__ __forceinline__ void tile_copy(const ClArgs<T> &a, const CUtensorMap *map, T *dst, int I, int J, unsigned long long *bar)
{
  int row, col;
  a.box(I, J, row, col);
  mbar_expect(bar, CB * CB * (unsigned)sizeof(T));
  tma_load_2d(dst, map, row, col, bar);
}

// y = D^{-1} y for the column this lane holds (forward substitution by columns; D: the diagonal
// tile as copied, rl: the reciprocal of this lane's pivot). No predicates (code size: this runs
// once per launch, from a cold instruction cache): entries above the column's first nonzero stay
// 0 and add nothing; a non-finite entry in row i of D or of y can only make entries of rows
// i' >= i non-finite, i.e. rows that depend on row i's non-finite value anyway, so the first
// non-finite row of x (the one reported) is unchanged. Dummy rows and columns are zero.
template <class T, bool TR, bool RV> __device__ __forceinline__ void lower_subst(T (&y)[CB], const T *dg, T rl)
{
#pragma unroll
  for (int m = 0; m < CB; m++) {  // row m final, then removed from the rows below it
    y[m] *= __shfl_sync(~0u, rl, m);
#pragma unroll
    for (int i = m + 1; i < CB; i++) y[i] = fma(-dg[tat<TR, RV>(i, m)], y[m], y[i]);
  }
}
// The diagonal work of block row I (k-th of its CTA), by its update warp and, where the CTA has
// one, its helper warp: pass 0 inverts the diagonal tile D into dv (Dinv(i, j) at j*CLD + i),
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
  const int           row = I * CB + lane;
  const bool          mine = a.real(row);
  mbar_wait(sb, 0);  // the diagonal tile
  const T dl = (!mine || a.unit) ? T(1) : dg[tat<TR, RV>(lane, lane)];
  if (first == 0 && mine && !a.unit && sg_trsv_bad_diag(dl, a.pivtol)) sg_dev_flag(a.rep, sg_trsv_diag_class(dl), 0, a.aidx(row), (double)dl);
  const T rl = rcp(dl);
#pragma unroll 1
  for (int pass = first; pass < last; pass++) {
    T y[CB];
    if (pass) mbar_wait(ctb + k, 0);
    if (pass && !TR) {  // column `lane` of the copied tile is contiguous (reversed for RV): 16-byte loads
      constexpr int V = 16 / (int)sizeof(T);
      using vec = typename std::conditional<sizeof(T) == 8, double2, float4>::type;
      const vec *col = (const vec *)(ct + (RV ? CB - 1 - lane : lane) * CB);
#pragma unroll
      for (int q = 0; q < CB / V; q++) {
        const vec v = col[q];
        const T   e[4] = {v.x, v.y, V == 4 ? ((const T *)&v)[2] : T(0), V == 4 ? ((const T *)&v)[3] : T(0)};
#pragma unroll
        for (int u = 0; u < V; u++) y[RV ? CB - 1 - (q * V + u) : q * V + u] = e[u];
      }
    } else {
#pragma unroll
      for (int i = 0; i < CB; i++) y[i] = pass ? ct[tat<TR, RV>(i, lane)] : (i == lane ? T(1) : T(0));
    }
    lower_subst<T, TR, RV>(y, dg, rl);
    __syncwarp();  // pass 1: every lane has read the tile before it is overwritten
#pragma unroll
    for (int i = 0; i < CB; i++) {
      if (pass) ct[pskew(i, lane)] = y[i];
      else dv[lane * CLD + i] = i >= lane ? y[i] : T(0);
    }
  }
}

// The update warp of owned block row k (I = rank + CS k): its first tensor copies (lane 0) ...
template <class T, bool TR, bool RV> __device__ __forceinline__ void update_issue(const ClArgs<T> &a, const CUtensorMap *map, unsigned char *smem, const ClLayout &L, int k, int I)
{
  const int           rs = a.rs, ntile = I >= 1 ? I - 1 : 0;
  unsigned long long *ctb = (unsigned long long *)smem + a.nb + 2 * a.ob, *sb = ctb + a.ob + k * rs;
  T                  *ct = (T *)(smem + L.ct) + (size_t)k * CB * CB, *ring = (T *)(smem + L.ring) + (size_t)k * rs * CB * CB;
  // slot 0: the diagonal tile until inverted; ring tile t in slot (t + 1) % rs, the ((t + 1) / rs)-th fill of its slot
  tile_copy(a, map, ring, I, I, sb);
  if (I > 0) tile_copy(a, map, ct, I, I - 1, ctb + k);
  for (int t = 0; t < rs - 1 && t < ntile; t++) tile_copy(a, map, ring + (size_t)((t + 1) % rs) * CB * CB, I, t, sb + (t + 1) % rs);
}
// ... and, once the diagonal work is done, r_I and z_I
template <class T, bool TR, bool RV>
__device__ void update_stream(const ClArgs<T> &a, const CUtensorMap *map, unsigned char *smem, const ClLayout &L, int k, int I, int lane)
{
  const int nb = a.nb, rs = a.rs, ntile = I >= 1 ? I - 1 : 0;  // tiles (I, 0) .. (I, I-2)
  unsigned long long *xbar = (unsigned long long *)smem, *rdyB = xbar + nb + a.ob, *ctb = rdyB + a.ob, *sb = ctb + a.ob + k * rs;
  const T *xs   = (const T *)(smem + L.xs);
  const T *dv   = (const T *)(smem + L.dv) + (size_t)k * CB * CLD;
  T       *rv   = (T *)(smem + L.rv) + (size_t)k * CB;
  T       *ring = (T *)(smem + L.ring) + (size_t)k * rs * CB * CB;
  const int row = I * CB + lane;
  const T   bval = a.real(row) ? a.B[a.aidx(row)] : T(0);
  if (lane == 0 && rs - 1 < ntile) {
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  // our reads of slot 0 before the copy engine's writes
    tile_copy(a, map, ring, I, rs - 1, sb);
  }
  // ---- r_I = b_I - sum_{J <= I-2} M(I, J) x_J; each tile is read into registers before its x_J
  // is waited for (the last one is on the critical path)
  T dr[CB];  // row `lane` of Dinv, for z_I
#pragma unroll
  for (int c = 0; c < CB; c++) dr[c] = dv[c * CLD + lane];
  T acc[CB];
#pragma unroll
  for (int i = 0; i < CB; i++) acc[i] = T(0);
  for (int t = 0; t < ntile; t++) {
    const int s = (t + 1) % rs;
    mbar_wait(sb + s, ((t + 1) / rs) & 1);
    const T *tl = ring + (size_t)s * CB * CB;
    const T *xj = xs + (size_t)t * CB;
    T        tv[CB];  // TR: lane = column, tv[r] = M(r, lane); else lane = row, tv[c] = M(lane, c)
#pragma unroll
    for (int q = 0; q < CB; q++) tv[q] = TR ? tl[tat<TR, RV>(q, lane)] : tl[tat<TR, RV>(lane, q)];
    __syncwarp();  // the slot is read: refill it with tile t + rs
    if (lane == 0 && t + rs < ntile) {
      asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
      tile_copy(a, map, (T *)tl, I, t + rs, sb + s);
    }
    bar_wait_cluster(xbar + t);
    if (TR) {  // partial sums of all 32 rows
      const T xv = xj[lane];
#pragma unroll
      for (int r = 0; r < CB; r++) acc[r] = fma(tv[r], xv, acc[r]);
    } else {  // four chains
#pragma unroll
      for (int c = 0; c < CB; c++) acc[c & 3] = fma(tv[c], xj[c], acc[c & 3]);
    }
  }
  T sum;
  if (TR) sum = reduce_scatter(acc, lane);
  else sum = (acc[0] + acc[1]) + (acc[2] + acc[3]);
  // z_I = Dinv_I r_I (lower part only), r_I broadcast through shared memory
  rv[lane] = bval - sum;
  __syncwarp();
  T z[4] = {T(0), T(0), T(0), T(0)};
#pragma unroll
  for (int c = 0; c < CB; c++)
    if (c <= lane) z[c & 3] = fma(dr[c], rv[c], z[c & 3]);
  __syncwarp();
  rv[lane] = (z[0] + z[1]) + (z[2] + z[3]);
  if (a.prof && lane == 0) a.prof[4 * I + 1] = gtime();
  mbar_arrive(rdyB + k);
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
template <class T> __device__ __forceinline__ void broadcast(T x, int I, unsigned xs0, unsigned bar0, unsigned rank, unsigned cs, int lane)
{
  constexpr int V = 16 / (int)sizeof(T), G = CB / V;  // values per store, stores per CTA
  const int     g = lane % G;
  T             v[V];
#pragma unroll
  for (int e = 0; e < V; e++) v[e] = __shfl_sync(~0u, x, g * V + e);
  const unsigned off = xs0 + (unsigned)((I * CB + g * V) * sizeof(T)), bo = bar0 + (unsigned)(I * 8);
  for (unsigned h = (unsigned)(lane / G); h < cs; h += 32 / G) {  // the next ranks first (they own the next block rows)
    unsigned q = rank + 1 + h;
    q          = q >= cs ? q - cs : q;
    if constexpr (V == 2) st_async_v(cl_map(off, q), v[0], v[1], cl_map(bo, q));
    else st_async_v(cl_map(off, q), v[0], v[1], v[2], v[3], cl_map(bo, q));
  }
}

template <class T, bool TR, bool RV> __device__ void critical_warp(const ClArgs<T> &a, unsigned char *smem, const ClLayout &L, unsigned rank, unsigned cs, int lane)
{
  const int           nb   = a.nb;
  unsigned long long *xbar = (unsigned long long *)smem, *rdyA = xbar + nb, *rdyB = rdyA + a.ob;
  T                  *xs   = (T *)(smem + L.xs);
  const unsigned      xs0 = smem_u32(xs), bar0 = smem_u32(xbar);
  for (int k = 0;; k++) {
    const int I = (int)rank + (int)cs * k;
    if (I >= nb) break;
    const T *ct = (const T *)(smem + L.ct) + (size_t)k * CB * CB;
    // P_I = Dinv_I M(I, I-1): lane r takes row r
    T t[CB];
    mbar_wait(rdyA + k, 0);
    if (I > 0) {
#pragma unroll
      for (int c = 0; c < CB; c++) t[c] = ct[pskew(lane, c)];
    }
    mbar_wait(rdyB + k, 0);
    T xv = ((const T *)(smem + L.rv))[k * CB + lane];  // z_I
    if (I > 0) {
      bar_wait_cluster(xbar + I - 1);
      if (a.prof && lane == 0) a.prof[4 * I + 2] = gtime();
      const T *xp = xs + (size_t)(I - 1) * CB;
      T        s[4] = {T(0), T(0), T(0), T(0)};
#pragma unroll
      for (int c = 0; c < CB; c++) s[c & 3] = fma(t[c], xp[c], s[c & 3]);
      xv -= (s[0] + s[1]) + (s[2] + s[3]);
    }
    const int  row  = I * CB + lane;
    const bool real = a.real(row);
    if (!real) xv = T(0);
    if (a.prof && lane == 0) a.prof[4 * I + 3] = gtime();
    broadcast(xv, I, xs0, bar0, rank, cs, lane);
    if (real) {
      if (!(fabs(xv) < (T)INFINITY)) sg_dev_flag(a.rep, SG_FAIL_RESULT, 0, a.aidx(row), (double)xv);
      a.X[a.aidx(row)] = xv;
    }
  }
}

template <class T, bool TR, bool RV> __global__ void __launch_bounds__(32 * cl_warps<T>(), 1) trsv_cluster_kernel(const ClArgs<T> a, const __grid_constant__ CUtensorMap tmap)
{
  extern __shared__ __align__(128) unsigned char smem[];
  const unsigned rank = cl_rank(), cs = cl_size();
  const ClLayout L = cl_layout<T>(a.nb, a.ob, a.rs);
  const int      lane = threadIdx.x % 32, w = threadIdx.x / 32;
  unsigned long long *xbar = (unsigned long long *)smem, *rdyA = xbar + a.nb;
  if (a.prof && threadIdx.x == 0) a.prof[4 * a.nb + rank] = gtime();
  if (threadIdx.x == 0) {
    for (int J = 0; J < a.nb; J++) {
      bar_init(xbar + J, 1);
      mbar_expect(xbar + J, CB * (unsigned)sizeof(T));  // the phase's arrival; completes when the block's bytes have come
    }
    for (int k = 0; k < a.ob; k++) bar_init(rdyA + k, 1 + a.ob + k < (int)(blockDim.x / 32) ? 64 : 32);  // the update (and helper) warp's lanes
    for (int k = 0; k < a.ob; k++) bar_init(rdyA + a.ob + k, 32);                                         // rdyB: the update warp's lanes
    for (int k = 0; k < a.ob * (1 + a.rs); k++) bar_init(rdyA + 2 * a.ob + k, 1);  // ctb, ring slots: one expect each
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  cl_sync();  // every CTA's barriers exist before anyone sends
  if (w == 0) {
    critical_warp<T, TR, RV>(a, smem, L, rank, cs, lane);
    if (lane == 0)  // stay until every x block has landed here (the st.async of other CTAs target this CTA)
      for (int J = 0; J < a.nb; J++) bar_wait_cluster(xbar + J);
    __syncwarp();
  } else {  // update warp (w <= ob) or helper warp (P_I beside the update warp's Dinv) of block row k
    const bool upd = w <= a.ob;
    const int  k = upd ? w - 1 : w - 1 - a.ob, I = (int)rank + (int)cs * k;
    if (k < a.ob && I < a.nb) {
      const bool helped = 1 + a.ob + k < (int)(blockDim.x / 32);
      if (upd && lane == 0) update_issue<T, TR, RV>(a, &tmap, smem, L, k, I);
      diag_passes<T, TR, RV>(a, smem, L, k, I, upd ? 0 : 1, upd ? (helped || I == 0 ? 1 : 2) : (I > 0 ? 2 : 1), lane);
      __syncwarp();
      if (upd && a.prof && lane == 0) a.prof[4 * I] = gtime();
      mbar_arrive(rdyA + k);  // Dinv / P_I visible to the critical warp
      if (upd) {
        if (helped) mbar_wait(rdyA + k, 0);  // the helper is done with slot 0 too
        update_stream<T, TR, RV>(a, &tmap, smem, L, k, I, lane);
      }
    }
  }
}

} // namespace

// a launch of one cluster of cs CTAs (the configuration points into the struct: keep it in place)
struct ClLaunch {
  cudaLaunchConfig_t  cfg = {};
  cudaLaunchAttribute at[1];
  ClLaunch(int cs, int warps, size_t smem, cudaStream_t stream)
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
  }
  ClLaunch(const ClLaunch &) = delete;
};

template <class T> sg_status trsv_cluster_solve(sg_ctx *ctx, const sg_trsv_problem *P, double pivtol, sg_report *rep, bool *used)
{
  *used = false;
  // tuning knobs, read once: the largest order (0: never), the cluster size and ring depth (0: automatic)
  static const int maxn = env_int("SG_TRSV_CLUSTER_MAXN", sizeof(T) == 8 ? 2048 : 4096, 0, 1 << 20);
  static const int cs_env = env_int("SG_TRSV_CLUSTER_CS", 0, 0, CS_MAX), rs_env = env_int("SG_TRSV_CLUSTER_RING", 0, 0, RING_MAX);
  const int        n = (int)P->n, nb = (n + CB - 1) / CB;
  // one column; every tile one tensor copy: A and its column stride 16-byte aligned
  if (P->nrhs != 1 || n > maxn || (uintptr_t)P->A % 16 || (size_t)P->lda * sizeof(T) % 16) return SG_OK;
  PFN_cuTensorMapEncodeTiled_v12000 encode = sg_tensor_map_encoder();
  if (!encode) return SG_OK;
  // the tiles' tensor map (32 x 32 boxes, no swizzle), kept for the next call on the same matrix
  thread_local struct {
    const void *A = nullptr;
    long long   n = 0, lda = 0;
    CUtensorMap map;
  } mc;
  if (mc.A != P->A || mc.n != P->n || mc.lda != P->lda) {
    mc.A = nullptr;
    memset(&mc.map, 0, sizeof mc.map);
    const cuuint64_t dims[2] = {(cuuint64_t)n, (cuuint64_t)n}, strides[1] = {(cuuint64_t)P->lda * sizeof(T)};
    const cuuint32_t box[2] = {CB, CB}, estr[2] = {1, 1};
    if (encode(&mc.map, sizeof(T) == 8 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT64 : CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, (void *)P->A, dims, strides, box, estr,
               CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS)
      return SG_OK;
    mc.A   = P->A;
    mc.n   = P->n;
    mc.lda = P->lda;
  }
  const CUtensorMap &tmap = mc.map;
  const bool rev = (P->uplo == SG_UPPER) != (P->trans == SG_TRANS), trans = P->trans == SG_TRANS;
  const int  var = 2 * trans + rev;
  void (*const kerns[4])(const ClArgs<T>, const CUtensorMap) = {trsv_cluster_kernel<T, false, false>, trsv_cluster_kernel<T, false, true>,
                                                                 trsv_cluster_kernel<T, true, false>, trsv_cluster_kernel<T, true, true>};
  auto *const kern = kerns[var];
  static int  cs_var[4] = {-1, -1, -1, -1};  // the largest cluster size this device runs with each instance (0: none)
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
  const size_t fixed = cl_layout<T>(nb, ob, 0).total, per = (size_t)ob * (CB * CB * sizeof(T) + 8);
  if (fixed + 2 * per + 128 > (size_t)optin) return SG_OK;  // too large for one cluster's shared memory
  int rs = (int)(((size_t)optin - fixed - 128) / per);
  rs     = rs > RING_MAX ? RING_MAX : rs;
  rs     = rs_env ? std::max(2, std::min(rs_env, rs)) : rs;
  ClArgs<T> a;
  a.B      = (const T *)P->B;
  a.X      = (T *)P->X;
  a.n      = n;
  a.nb     = nb;
  a.ob     = ob;
  a.rs     = rs;
  a.rev    = rev;
  a.trans  = trans;
  a.pivtol = (T)(pivtol > 0 ? pivtol : 0.0);
  a.unit   = P->diag == SG_UNIT;
  a.rep    = sg_dreport(ctx);
  a.prof   = nullptr;
  *used    = true;
  const size_t nprof = 4 * (size_t)nb + CS_MAX;
  if (getenv("SG_TRSV_PROFILE")) {  // diagnostics: a timeline per block row, printed to stderr after a synchronous solve
    a.prof = (unsigned long long *)sg_ctx_work(ctx, nprof * sizeof(unsigned long long), SG_SLOT_TRSV_BATCH);
    if (!a.prof) return sg_report_set(rep, SG_ERR_MEM, -1, -1, 0.0, "trsv profile buffer");
    (void)cudaMemsetAsync(a.prof, 0, nprof * sizeof(unsigned long long), sg_stream(ctx));
  }
  if ((st = sg_dev_report_reset(ctx, rep)) != SG_OK) return st;
  // critical, update and (where they fit) helper warps
  const ClLaunch l(cs, std::min(cl_warps<T>(), 1 + 2 * ob), cl_layout<T>(nb, ob, rs).total, sg_stream(ctx));
  if ((st = sg_cuda_check(cudaLaunchKernelEx(&l.cfg, kern, a, tmap), rep, "trsv cluster launch")) != SG_OK) return st;
  if (a.prof) {
    std::vector<unsigned long long> h(nprof);
    (void)cudaMemcpy(h.data(), a.prof, nprof * sizeof(unsigned long long), cudaMemcpyDeviceToHost);
    unsigned long long t0 = ~0ull;
    for (int q = 0; q < cs; q++) t0 = h[4 * nb + q] < t0 ? h[4 * nb + q] : t0;
    fprintf(stderr, "[trsv cluster] n=%d nb=%d cs=%d ob=%d rs=%d smem=%zu; us from the first CTA's start: CTA starts", n, nb, cs, ob, rs, l.cfg.dynamicSmemBytes);
    for (int q = 0; q < cs; q++) fprintf(stderr, " %.2f", (h[4 * nb + q] - t0) * 1e-3);
    fprintf(stderr, "\n[trsv cluster] per block row I: P ready / z ready / x_{I-1} here / x_I formed\n");
    for (int I = 0; I < nb; I++)
      fprintf(stderr, "  %3d: %8.2f %8.2f %8.2f %8.2f\n", I, (h[4 * I] - t0) * 1e-3, (h[4 * I + 1] - t0) * 1e-3, I ? (h[4 * I + 2] - t0) * 1e-3 : 0.0,
              (h[4 * I + 3] - t0) * 1e-3);
  }
  return sg_dev_report_fetch(ctx, rep, [](sg_report *r, int cls, long long, long long row, double value) { return sg_trsv_report_fail(r, cls, -1, row, value); });
}

template sg_status trsv_cluster_solve<double>(sg_ctx *, const sg_trsv_problem *, double, sg_report *, bool *);
template sg_status trsv_cluster_solve<float>(sg_ctx *, const sg_trsv_problem *, double, sg_report *, bool *);

} // namespace sgtrsv
