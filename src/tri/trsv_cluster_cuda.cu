// One dense triangular system of modest order (n up to a few thousand, one right-hand side) on
// ONE thread-block cluster (up to 16 CTAs on 16 SMs): the x blocks travel between the CTAs
// through distributed shared memory, never through L2. (trsv_cuda.cu's chain + helpers design
// pays a global-memory round trip and CTA-wide barriers per 64-row block row; for n <= 4096 its
// fixed cost and ~1.8 us per block row dominated, bench/trsv/README.md.)
//
// M (the effective lower matrix of View, trsv_cuda.cuh) is cut into block rows of CB = 32.
// Block row I belongs to CTA I % CS of the cluster. In every CTA:
//  - warp 1 + k ("update warp") owns block row I = rank + CS k. It loads the diagonal tile,
//    inverts it (one column per lane, forward substitution) into shared memory, loads the
//    tile (I, I-1) for the critical warp (both announced on rdyA[k]), then streams the tiles
//    (I, 0) .. (I, I-2) through its own cp.async ring as the x_J arrive and hands r_I =
//    b_I - sum_{J <= I-2} M(I,J) x_J to the critical warp (rdyB[k]). Every lane consumes only
//    the elements it copied itself, so the ring needs no barrier: op = N, lane = row (a row sum
//    per lane); op = T, lane = column (32 partial row sums per lane, one reduce-scatter of
//    shuffles at the end of the block row).
//  - warp 0 ("critical warp") runs the CTA's block rows in order: with tile (I, I-1) and
//    Dinv_I in registers, once x_{I-1} has arrived: y = r_I - M(I,I-1) x_{I-1}, x_I = Dinv_I y
//    (lane = row; y by shuffles), x_I to X and, by st.async, into every CTA's copy of x with
//    the bytes counted on that CTA's mbarrier xbar[I] (no flags, no fences).
// The critical path per block row is one DSMEM hop and two 32 x 32 GEMVs in one warp.
// Deadlock-free: a CTA of the cluster is co-resident with the others (cluster launch), warps
// wait only for x blocks of smaller rows and for their own CTA's update warps.
#include "tri/trsv_cuda.cuh"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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
  int            bcast;      // 0: st.async of 16-byte pieces, 1: bulk copies (experiment)
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

// The update warp of owned block row k (I = rank + CS k).
template <class T, bool TR, bool RV>
__device__ void update_warp(const ClArgs<T> &a, const CUtensorMap *map, unsigned char *smem, const ClLayout &L, int k, int I, int lane)
{
  const int nb = a.nb, rs = a.rs, ntile = I >= 1 ? I - 1 : 0;  // tiles (I, 0) .. (I, I-2)
  unsigned long long *xbar = (unsigned long long *)smem, *rdyA = xbar + nb, *rdyB = rdyA + a.ob, *ctb = rdyB + a.ob, *sb = ctb + a.ob + k * rs;
  const T *xs   = (const T *)(smem + L.xs);
  T       *dv   = (T *)(smem + L.dv) + (size_t)k * CB * CLD;
  T       *ct   = (T *)(smem + L.ct) + (size_t)k * CB * CB;
  T       *rv   = (T *)(smem + L.rv) + (size_t)k * CB;
  T       *ring = (T *)(smem + L.ring) + (size_t)k * rs * CB * CB;
  const int row = I * CB + lane;
  const T   bval = a.real(row) ? a.B[a.aidx(row)] : T(0);
  const unsigned vmask = __ballot_sync(~0u, a.real(row));  // real rows of the block
  // slot 0: the diagonal tile until inverted; ring tile t in slot (t + 1) % rs, the ((t + 1) / rs)-th fill of its slot
  if (lane == 0) {
    tile_copy(a, map, ring, I, I, sb);
    if (I > 0) tile_copy(a, map, ct, I, I - 1, ctb + k);
    for (int t = 0; t < rs - 1 && t < ntile; t++) tile_copy(a, map, ring + (size_t)((t + 1) % rs) * CB * CB, I, t, sb + (t + 1) % rs);
  }
  mbar_wait(sb, 0);
  // ---- Dinv = inverse of the diagonal tile D (lane j: column j, forward substitution by columns);
  // dummy rows and the unit diagonal read as identity rows
  const T *dg = ring;
  auto     D  = [&](int i, int m) { return dg[tat<TR, RV>(i, m)]; };
  const bool mine = (vmask >> lane) & 1;
  T          dl   = (!mine || a.unit) ? T(1) : D(lane, lane);
  if (mine && !a.unit && sg_trsv_bad_diag(dl, a.pivtol)) sg_dev_flag(a.rep, sg_trsv_diag_class(dl), 0, a.aidx(row), (double)dl);
  const T rl = rcp(dl);
  // The same substitution also forms P_I = D^{-1} M(I, I-1), lane j its column j (right-hand
  // side M(I, I-1)(:, j) beside e_j); the critical warp's step is then x_I = z_I - P_I x_{I-1},
  // one GEMV. (op = N: lane j reads column j of the copied tile with a 16- / 32-way bank
  // conflict, once per block row.)
  T x[CB], p[CB];
  if (I > 0) mbar_wait(ctb + k, 0);
#pragma unroll
  for (int i = 0; i < CB; i++) {
    x[i] = T(0);
    p[i] = I > 0 ? ct[tat<TR, RV>(i, lane)] : T(0);
  }
  // No predicates (code size: this runs once per launch, from a cold instruction cache): rows
  // m < j of x hold 0 and add nothing; a non-finite entry in row i of D or M(I, I-1) can only make
  // entries of rows i' >= i non-finite, i.e. rows that depend on row i's non-finite value anyway,
  // so the first non-finite row of x (the one reported) is unchanged. Dummy rows and columns are zero.
#pragma unroll
  for (int m = 0; m < CB; m++) {  // row m final, then removed from the rows below it
    const T rm = __shfl_sync(~0u, rl, m);
    x[m]       = (m == lane ? T(1) : x[m]) * rm;
    p[m] *= rm;
#pragma unroll
    for (int i = m + 1; i < CB; i++) {
      const T dim = D(i, m);
      x[i]        = fma(-dim, x[m], x[i]);
      p[i]        = fma(-dim, p[m], p[i]);
    }
  }
#pragma unroll
  for (int i = 0; i < CB; i++) dv[lane * CLD + i] = i >= lane ? x[i] : T(0);  // Dinv(i, lane)
  __syncwarp();  // every lane has read the tile (I, I-1) and is done with the diagonal tile (slot 0)
  if (I > 0) {
#pragma unroll
    for (int i = 0; i < CB; i++) ct[pskew(i, lane)] = p[i];  // P(i, lane), skewed: conflict-free both ways
  }
  if (a.prof && lane == 0) a.prof[4 * I] = gtime();
  mbar_arrive(rdyA + k);  // P_I is visible to the critical warp
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
    if (a.bcast) {  // stage x_I in r_k's slot (read above), then one bulk copy per CTA
      T *stage = (T *)(smem + L.rv) + k * CB;
      stage[lane] = xv;
      asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
      __syncwarp();
      if (lane < (int)cs) {
        const unsigned dst = cl_map(xs0 + (unsigned)(I * CB * sizeof(T)), (unsigned)lane), bar = cl_map(bar0 + (unsigned)(I * 8), (unsigned)lane);
        asm volatile("cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst), "r"(smem_u32(stage)),
                     "r"((unsigned)(CB * sizeof(T))), "r"(bar)
                     : "memory");
      }
    } else broadcast(xv, I, xs0, bar0, rank, cs, lane);
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
    for (int k = 0; k < 2 * a.ob; k++) bar_init(rdyA + k, 32);  // rdyA, rdyB: every lane of the update warp
    for (int k = 0; k < a.ob * (1 + a.rs); k++) bar_init(rdyA + 2 * a.ob + k, 1);  // ctb, ring slots: one expect each
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  cl_sync();  // every CTA's barriers exist before anyone sends
  if (w == 0) {
    critical_warp<T, TR, RV>(a, smem, L, rank, cs, lane);
    if (lane == 0)  // stay until every x block has landed here (the st.async of other CTAs target this CTA)
      for (int J = 0; J < a.nb; J++) bar_wait_cluster(xbar + J);
    __syncwarp();
  } else {
    const int k = w - 1, I = (int)rank + (int)cs * k;
    if (k < a.ob && I < a.nb) update_warp<T, TR, RV>(a, &tmap, smem, L, k, I, lane);
  }
}

} // namespace

template <class T> sg_status trsv_cluster_solve(sg_ctx *ctx, const sg_trsv_problem *P, double pivtol, sg_report *rep, bool *used)
{
  *used = false;
  const int  n = (int)P->n, nb = (n + CB - 1) / CB, maxn = env_int("SG_TRSV_CLUSTER_MAXN", sizeof(T) == 8 ? 2048 : 4096, 0, 1 << 20);
  // one column; every tile one tensor copy: A and its column stride 16-byte aligned
  if (P->nrhs != 1 || n > maxn || (uintptr_t)P->A % 16 || (size_t)P->lda * sizeof(T) % 16) return SG_OK;
  PFN_cuTensorMapEncodeTiled_v12000 encode = sg_tensor_map_encoder();
  if (!encode) return SG_OK;
  CUtensorMap tmap;
  memset(&tmap, 0, sizeof tmap);
  {
    const cuuint64_t dims[2] = {(cuuint64_t)n, (cuuint64_t)n}, strides[1] = {(cuuint64_t)P->lda * sizeof(T)};
    const cuuint32_t box[2] = {CB, CB}, estr[2] = {1, 1};
    if (encode(&tmap, sizeof(T) == 8 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT64 : CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, (void *)P->A, dims, strides, box, estr,
               CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS)
      return SG_OK;
  }
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
      cudaLaunchConfig_t cfg = {};
      cudaLaunchAttribute at[1];
      at[0].id               = cudaLaunchAttributeClusterDimension;
      at[0].val.clusterDim.x = (unsigned)cs;
      at[0].val.clusterDim.y = at[0].val.clusterDim.z = 1;
      cfg.gridDim = dim3((unsigned)cs);
      cfg.blockDim = dim3(32 * cl_warps<T>());
      cfg.dynamicSmemBytes = (size_t)optin;
      cfg.attrs = at;
      cfg.numAttrs = 1;
      int nc = 0;
      if (cudaOccupancyMaxActiveClusters(&nc, kern, &cfg) == cudaSuccess && nc > 0) cs_max = cs;
      else (void)cudaGetLastError();
    }
  }
  if (!cs_max) return SG_OK;
  const int csx = env_int("SG_TRSV_CLUSTER_CS", cs_max, 1, cs_max), cs = nb < csx ? nb : csx, ob = (nb + cs - 1) / cs;
  if (ob > cl_warps<T>() - 1) return SG_OK;  // more block rows per CTA than update warps
  const size_t fixed = cl_layout<T>(nb, ob, 0).total, per = (size_t)ob * (CB * CB * sizeof(T) + 8);
  if (fixed + 2 * per + 128 > (size_t)optin) return SG_OK;  // too large for one cluster's shared memory
  int rs = (int)(((size_t)optin - fixed - 128) / per);
  rs     = rs > RING_MAX ? RING_MAX : rs;
  rs     = env_int("SG_TRSV_CLUSTER_RING", rs, 2, rs);
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
  a.bcast  = env_int("SG_TRSV_CLUSTER_BCAST", 0, 0, 1);
  *used    = true;
  const size_t nprof = 4 * (size_t)nb + CS_MAX;
  if (getenv("SG_TRSV_PROFILE")) {  // diagnostics: a timeline per block row, printed to stderr after a synchronous solve
    a.prof = (unsigned long long *)sg_ctx_work(ctx, nprof * sizeof(unsigned long long), SG_SLOT_TRSV_BATCH);
    if (!a.prof) return sg_report_set(rep, SG_ERR_MEM, -1, -1, 0.0, "trsv profile buffer");
    (void)cudaMemsetAsync(a.prof, 0, nprof * sizeof(unsigned long long), sg_stream(ctx));
  }
  if ((st = sg_dev_report_reset(ctx, rep)) != SG_OK) return st;
  cudaLaunchConfig_t  cfg = {};
  cudaLaunchAttribute at[1];
  at[0].id               = cudaLaunchAttributeClusterDimension;
  at[0].val.clusterDim.x = (unsigned)cs;
  at[0].val.clusterDim.y = at[0].val.clusterDim.z = 1;
  cfg.gridDim          = dim3((unsigned)cs);
  cfg.blockDim         = dim3(32 * (1 + ob));
  cfg.dynamicSmemBytes = cl_layout<T>(nb, ob, rs).total;
  cfg.stream           = sg_stream(ctx);
  cfg.attrs            = at;
  cfg.numAttrs         = 1;
  if ((st = sg_cuda_check(cudaLaunchKernelEx(&cfg, kern, a, tmap), rep, "trsv cluster launch")) != SG_OK) return st;
  if (a.prof) {
    std::vector<unsigned long long> h(nprof);
    (void)cudaMemcpy(h.data(), a.prof, nprof * sizeof(unsigned long long), cudaMemcpyDeviceToHost);
    unsigned long long t0 = ~0ull;
    for (int q = 0; q < cs; q++) t0 = h[4 * nb + q] < t0 ? h[4 * nb + q] : t0;
    fprintf(stderr, "[trsv cluster] n=%d nb=%d cs=%d ob=%d rs=%d smem=%zu; us from the first CTA's start: CTA starts", n, nb, cs, ob, rs, cfg.dynamicSmemBytes);
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
