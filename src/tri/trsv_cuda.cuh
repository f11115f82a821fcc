// Device building blocks shared by the dense triangular CUDA kernels (trsv_cuda.cu: one
// system; trsv_batch_cuda.cu: many small systems). Include from .cu files only.
//
// Every variant (lower/upper x N/T) is solved as a forward substitution with an "effective
// lower" matrix M: M(i,j) = op(A)(i,j) for the forward cases (L N, U T) and op(A)(n-1-i,n-1-j)
// for the backward ones (U N, L T). M is cut into NB x NB tiles; tile (I,J) with J<I is a
// GEMV, tile (I,I) is inverted (Higham's method: 8x8 blocks by substitution, then doubling
// merges X21 = -X22 L21 X11), so the step on the critical path is a GEMV, not a substitution.
#pragma once
#include "sys/sg_cuda.cuh"
#include "tri/trsv_internal.hpp"

#include <cstdlib>
#include <vector>

namespace sgtrsv {

// b rounded up to 256 bytes (workspace sub-buffers)
inline size_t align256(size_t b) { return (b + 255) / 256 * 256; }

// A tuning knob from the environment (host side), clamped to [lo, hi]; def when unset.
inline int env_int(const char *name, int def, int lo, int hi)
{
  const char *s = getenv(name);
  if (!s) return def;
  const int v = atoi(s);
  return v < lo ? lo : (v > hi ? hi : v);
}


template <class T> struct View {  // effective lower M of op(A)
  const T  *A;
  long long lda;
  int       n;
  bool      rev, trans;
  __device__ __forceinline__ int       orig(int i) const { return rev ? n - 1 - i : i; }
  __device__ __forceinline__ const T *at(int i, int j) const
  {
    const long long ii = orig(i), jj = orig(j);
    return A + (trans ? jj + ii * lda : ii + jj * lda);
  }
};

template <class T> __device__ __forceinline__ void cp_async(T *dst, const T *src)
{
  const unsigned s = (unsigned)__cvta_generic_to_shared(dst);
  if constexpr (sizeof(T) == 8) asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(s), "l"(src) : "memory");
  else asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(s), "l"(src) : "memory");
}
__device__ __forceinline__ void cp_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void cp_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }

__device__ __forceinline__ unsigned ld_acquire(const unsigned *p)
{
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void st_release(unsigned *p, unsigned v) { asm volatile("st.release.gpu.global.u32 [%0], %1;\n" ::"l"(p), "r"(v) : "memory"); }

// ---- LL words: a value and the call's epoch, polled together (NCCL's LL protocol: each 8-byte
// half {data, epoch} of a 16-byte volatile store is single-copy atomic)
template <class T> struct LLw;
template <> struct LLw<double> { using raw = uint4; };
template <> struct LLw<float> { using raw = uint2; };
__device__ __forceinline__ void ll_st(uint4 *p, double x, unsigned e)
{
  const unsigned long long b = (unsigned long long)__double_as_longlong(x);
  asm volatile("st.volatile.global.v4.u32 [%0], {%1,%2,%3,%4};\n" ::"l"(p), "r"((unsigned)b), "r"(e), "r"((unsigned)(b >> 32)), "r"(e) : "memory");
}
__device__ __forceinline__ void ll_st(uint2 *p, float x, unsigned e) { asm volatile("st.volatile.global.v2.u32 [%0], {%1,%2};\n" ::"l"(p), "r"(__float_as_uint(x)), "r"(e) : "memory"); }
__device__ __forceinline__ uint4 ll_ld(const uint4 *p)
{
  uint4 v;
  asm volatile("ld.volatile.global.v4.u32 {%0,%1,%2,%3}, [%4];\n" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ uint2 ll_ld(const uint2 *p)
{
  uint2 v;
  asm volatile("ld.volatile.global.v2.u32 {%0,%1}, [%2];\n" : "=r"(v.x), "=r"(v.y) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ bool   ll_ok(uint4 v, unsigned e) { return v.y == e && v.w == e; }
__device__ __forceinline__ bool   ll_ok(uint2 v, unsigned e) { return v.y == e; }
__device__ __forceinline__ double ll_val(uint4 v) { return __longlong_as_double((long long)(((unsigned long long)v.z << 32) | v.x)); }
__device__ __forceinline__ float  ll_val(uint2 v) { return __uint_as_float(v.x); }
// the value at p once it carries epoch e; v is an earlier load of p (issued ahead)
template <class R> __device__ __forceinline__ auto ll_wait(const R *p, R v, unsigned e, bool backoff)
{
  while (!ll_ok(v, e)) {
    if (backoff) __nanosleep(32);
    v = ll_ld(p);
  }
  return ll_val(v);
}
// One tensor copy (the Hopper copy engine) of the box at (row, col) of a 2-D tensor map into
// shared memory, completing on the mbarrier bar (whose phase expects the box's bytes).
__device__ __forceinline__ void tma_load_2d(void *dst, const CUtensorMap *map, int row, int col, unsigned long long *bar)
{
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(smem_u32(dst)),
               "l"((unsigned long long)map), "r"(row), "r"(col), "r"(smem_u32(bar))
               : "memory");
}

// An L2 prefetch of the same box by the copy engine (no shared memory, no barrier). L2 is the
// point of coherence of global memory, so this may precede a programmatic launch's
// griddepcontrol.wait even where the kernel before writes the box: it only warms L2.
__device__ __forceinline__ void tma_prefetch_2d(const CUtensorMap *map, int row, int col)
{
  asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%0, {%1, %2}];\n" ::"l"((unsigned long long)map), "r"(row), "r"(col) : "memory");
}

// Barrier over the NT threads that run the kernels' jobs (named barrier 1; the same as
// __syncthreads when NT is the block size). The one-system kernel adds a copy warp that feeds the
// chain and stays outside it.
template <int NT> __device__ __forceinline__ void bar_sync() { asm volatile("bar.sync 1, %0;\n" ::"n"(NT) : "memory"); }

// Tile (I,J) of M into S (column-major, leading dimension NB+1: conflict-free for both the
// row-contiguous (N) and column-contiguous (T) copy patterns). Rows past n are zero; the
// diagonal tile keeps its lower triangle, with 1 on the diagonal for unit / padding rows.
template <class T, int NB, int NT>
__device__ __forceinline__ void load_tile(T *S, const View<T> &V, int I, int J, bool unit)
{
  constexpr int LDS = NB + 1;
  const int     rows = min(NB, V.n - I * NB);
  const bool    diag = I == J;
  if (!diag && rows == NB) {  // full off-diagonal tile: this thread's elements are equally spaced
    constexpr int G = NT / NB;
    const int     r0 = V.trans ? threadIdx.x / NB : threadIdx.x % NB, c0 = V.trans ? threadIdx.x % NB : threadIdx.x / NB;
    const T      *p0 = V.at(I * NB + r0, J * NB + c0);
    const long long step = (V.trans ? V.at(I * NB + r0 + G, J * NB + c0) : V.at(I * NB + r0, J * NB + c0 + G)) - p0;
    T *d = S + c0 * LDS + r0;
#pragma unroll
    for (int q = 0; q < NB / G; q++) cp_async(d + q * (V.trans ? G : G * LDS), p0 + q * step);
    return;
  }
#pragma unroll 4
  for (int e = threadIdx.x; e < NB * NB; e += NT) {
    const int r = V.trans ? e / NB : e % NB, c = V.trans ? e % NB : e / NB;  // lanes follow memory
    T *d = S + c * LDS + r;
    if (r >= rows || (diag && c > r)) *d = (diag && c == r) ? T(1) : T(0);
    else if (diag && c == r && unit) *d = T(1);
    else cp_async(d, V.at(I * NB + r, J * NB + c));
  }
}

// Thread (r, g) = (tid % NB, tid / NB) of a CTA of NB*G threads works on row r of a tile and
// the g-th of G column groups.
// acc[k] += sum over this thread's column group of S(r, c) * xs[c*K + k]; LOWER: only c <= r
// (for the inverted diagonal block: 0 * NaN in its upper part would spread a non-finite
// entry to rows that do not depend on it)
template <class T, int NB, int G, int K, bool LOWER = false>
__device__ __forceinline__ void gemv(const T *S, const T *xs, T (&acc)[K])
{
  constexpr int LDS = NB + 1, CPG = NB / G;
  const int     r = threadIdx.x % NB, c0 = (threadIdx.x / NB) * CPG;
#pragma unroll 8
  for (int q = 0; q < CPG; q++) {
    if (LOWER && c0 + q > r) continue;
    const T a = S[(c0 + q) * LDS + r];
#pragma unroll
    for (int k = 0; k < K; k++) acc[k] = fma(a, xs[(c0 + q) * K + k], acc[k]);
  }
}

// correctly rounded reciprocals (the same value as 1 / d, without the division's slow path)
__device__ __forceinline__ double rcp(double d) { return __drcp_rn(d); }
__device__ __forceinline__ float  rcp(float d) { return __frcp_rn(d); }

// One FP64 tensor-core step D += A B of shapes 8x4 and 4x8 (mma.m8n8k4, fp64 in and out): lane
// l holds A(l/4, l%4), B(l%4, l/4) and D(l/4, 2(l%4) + {0, 1}).
__device__ __forceinline__ void dmma_8x8x4(double (&d)[2], double a, double b)
{
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n" : "+d"(d[0]), "+d"(d[1]) : "d"(a), "d"(b));
}

// d += A(i, k) B(k, j) for the 8 x 8 output block of a warp (rows i = lane/4, columns j =
// 2(lane%4) + {0, 1}; a(i, k) and b(k, j) read the operands, as doubles) where A is lower
// triangular from column kd on (kd a multiple of 8: A(i, k) = 0 for k > kd + i): the columns
// k < kd by tensor-core steps, the diagonal block by scalar FMAs over k <= kd + i only, so a
// structural zero of A never meets B (0 * NaN would make rows non-finite that do not depend
// on the NaN).
template <class FA, class FB> __device__ __forceinline__ void lower_block(double (&d)[2], int kd, FA a, FB b)
{
  const int lane = threadIdx.x % 32, lr = lane / 4, lc = lane % 4;
  for (int kk = 0; kk < kd; kk += 4) dmma_8x8x4(d, a(lr, kk + lc), b(kk + lc, lr));
#pragma unroll
  for (int u = 0; u < 8; u++)
    if (u <= lr) {
      const double av = a(lr, kd + u);
      d[0]            = fma(av, b(kd + u, 2 * lc), d[0]);
      d[1]            = fma(av, b(kd + u, 2 * lc + 1), d[1]);
    }
}

// One doubling level of invert_lower: for each pair p of S x S diagonal blocks (offset o = 2Sp)
// whose inverses X11, X22 are known, X21 = -X22 (L21 X11), both products by FP64 tensor-core
// steps on 8 x 8 output blocks (one per warp at a time; the all-zero 4-wide slices of the
// triangular factors are skipped). fp32 tiles are multiplied in fp64 and rounded once.
template <class T, int NB, int NT, int S>
__device__ __forceinline__ void invert_level(const T *L, T *X, T *tmp)
{
  constexpr int LDS = NB + 1, NW = NT / 32, NBS = S / 8, NBLK = NB / (2 * S) * NBS * NBS;
  const int     lane = threadIdx.x % 32, w = threadIdx.x / 32, lr = lane / 4, lc = lane % 4;
  for (int q = w; q < NBLK; q += NW) {  // tmp = L21 X11 (X11 lower: rows k < j are zero)
    const int p = q / (NBS * NBS), bi = q % NBS, bj = (q / NBS) % NBS, o = 2 * S * p;
    double    d[2] = {0.0, 0.0};
#pragma unroll
    for (int kk = 0; kk < S; kk += 4) {
      if (kk + 3 < bj * 8) continue;
      dmma_8x8x4(d, (double)L[(o + kk + lc) * LDS + o + S + bi * 8 + lr], (double)X[(o + bj * 8 + lr) * LDS + o + kk + lc]);
    }
    T *t = tmp + p * S * S;  // column-major, leading dimension S
    t[(bj * 8 + 2 * lc) * S + bi * 8 + lr]     = (T)d[0];
    t[(bj * 8 + 2 * lc + 1) * S + bi * 8 + lr] = (T)d[1];
  }
  bar_sync<NT>();
  for (int q = w; q < NBLK; q += NW) {  // X21 = -X22 tmp (X22 lower)
    const int p = q / (NBS * NBS), bi = q % NBS, bj = (q / NBS) % NBS, o = 2 * S * p;
    const T  *t = tmp + p * S * S;
    double    d[2] = {0.0, 0.0};
    lower_block(
      d, bi * 8, [&](int i, int k) { return (double)X[(o + S + k) * LDS + o + S + bi * 8 + i]; }, [&](int k, int j) { return (double)t[(bj * 8 + j) * S + k]; });
    X[(o + bj * 8 + 2 * lc) * LDS + o + S + bi * 8 + lr]     = (T)-d[0];
    X[(o + bj * 8 + 2 * lc + 1) * LDS + o + S + bi * 8 + lr] = (T)-d[1];
  }
  bar_sync<NT>();
}
template <class T, int NB, int NT, int S> __device__ __forceinline__ void invert_levels(const T *L, T *X, T *tmp, unsigned long long *st)
{
  if constexpr (S < NB) {
    invert_level<T, NB, NT, S>(L, X, tmp);
    if (st && threadIdx.x == 0) *st++ = clock64();
    invert_levels<T, NB, NT, 2 * S>(L, X, tmp, st);
  }
}

// X = inverse of the lower-triangular tile L (both NB x NB, leading dimension NB+1, L's upper
// part zero); tmp holds NB*NB/4 values. Higham's method B by doubling, all threads (NB a
// power of two >= 16, NT >= NB): the 8 x 8 diagonal blocks by substitution (one thread per
// column, the reciprocals of the diagonal first), then log2(NB/8) doubling levels on the
// FP64 tensor cores (invert_level). Ends with a barrier. st (diagnostics, may be NULL):
// thread 0's clock64 at the start and after each phase, 2 + log2(NB/8) values.
template <class T, int NB, int NT>
__device__ void invert_lower(const T *L, T *X, T *tmp, unsigned long long *st = nullptr)
{
  static_assert(NB >= 16 && (NB & (NB - 1)) == 0 && NT >= NB && NT % 32 == 0, "invert_lower: NB a power of two >= 16, NT >= NB");
  if (st && threadIdx.x == 0) *st++ = clock64();
  constexpr int LDS = NB + 1;
  const int     tid = threadIdx.x;
  for (int e = tid; e < NB * NB; e += NT) {  // zero above the 8 x 8 diagonal blocks (the products read it)
    const int r = e % NB, c = e / NB;
    if (c / 8 > r / 8) X[c * LDS + r] = T(0);
  }
  if (tid < NB) {  // 8x8 diagonal blocks, one thread per column
    const int o = (tid / 8) * 8, j = tid % 8;
    T         rd[8], x[8];
#pragma unroll
    for (int i = 0; i < 8; i++) rd[i] = rcp(L[(o + i) * LDS + o + i]);
#pragma unroll
    for (int i = 0; i < 8; i++) {
      if (i < j) x[i] = T(0);
      else if (i == j) x[i] = rd[i];
      else {
        T s = T(0);
#pragma unroll
        for (int k = 0; k < i; k++)
          if (k >= j) s = fma(L[(o + k) * LDS + o + i], x[k], s);
        x[i] = -s * rd[i];
      }
    }
#pragma unroll
    for (int i = 0; i < 8; i++) X[(o + j) * LDS + o + i] = x[i];
  }
  bar_sync<NT>();
  if (st && threadIdx.x == 0) *st++ = clock64();
  invert_levels<T, NB, NT, 8>(L, X, tmp, st);
}

// Diagonal check of tile (I,I) in S (non-unit only): flags the bad entries.
template <class T, int NB>
__device__ __forceinline__ void check_diag(const T *S, const View<T> &V, int I, T pivtol, long long system, sg_dev_report *rep)
{
  const int r = threadIdx.x;
  if (r < NB && I * NB + r < V.n) {
    const T d = S[r * (NB + 1) + r];
    if (sg_trsv_bad_diag(d, pivtol)) sg_dev_flag(rep, sg_trsv_diag_class(d), system, V.orig(I * NB + r), (double)d);
  }
}

// Sum of the G column-group partial sums: red[(g*NB + r)*K + k] -> value of (r, k)
template <class T, int NB, int G, int K> __device__ __forceinline__ T group_sum(const T *red, int r, int k)
{
  T s = T(0);
#pragma unroll
  for (int g = 0; g < G; g++) s += red[(g * NB + r) * K + k];
  return s;
}
template <class T, int NB, int G, int K> __device__ __forceinline__ void store_groups(T *red, const T (&acc)[K])
{
  const int r = threadIdx.x % NB, g = threadIdx.x / NB;
#pragma unroll
  for (int k = 0; k < K; k++) red[(g * NB + r) * K + k] = acc[k];
}

// b_I (block row I of the right-hand sides, b(i, k) at B[orig(i) + k*ldb]) into bs[r*K + k]
// by cp.async (the caller commits it with the tile it travels with); entries outside the
// matrix or nrhs are zeroed by plain stores (visible after the consumer's barrier).
template <class T, int NB, int NT, int K>
__device__ __forceinline__ void issue_rhs(const View<T> &V, int I, const T *B, long long ldb, int nrhs, T *bs)
{
  const int rows = min(NB, V.n - I * NB);
  for (int e = threadIdx.x; e < NB * K; e += NT) {
    const int r = e % NB, k = e / NB;
    if (r < rows && k < nrhs) cp_async(bs + r * K + k, B + V.orig(I * NB + r) + k * ldb);
    else bs[r * K + k] = T(0);
  }
}
// ys = bs - (the column-group sums in red) - (ts, row sums formed otherwise; may be NULL)
template <class T, int NB, int NT, int K, int G = NT / NB>
__device__ __forceinline__ void form_rhs(const T *red, const T *bs, T *ys, const T *ts = nullptr)
{
  for (int e = threadIdx.x; e < NB * K; e += NT) {
    const int r = e % NB, k = e / NB;
    ys[r * K + k] = bs[r * K + k] - group_sum<T, NB, G, K>(red, r, k) - (ts ? ts[r * K + k] : T(0));
  }
}

// Finish block row I: ys holds b_I minus all off-diagonal products (the callers form it);
// x = Dinv * ys. For every entry (r, k) of the block, emit(r, k, x, valid): valid for a real
// row (r < rows left in the matrix) and right-hand side (k < nrhs), x = 0 otherwise; a
// non-finite valid x is flagged. red is reused. No barrier after the emits: the caller's
// next barrier publishes what emit wrote to shared memory.
template <class T, int NB, int NT, int K, class Emit, int G = NT / NB>
__device__ void solve_diag(const View<T> &V, int I, const T *Dinv, const T *ys, T *red, int nrhs, long long system, sg_dev_report *rep, Emit emit)
{
  T acc[K];
#pragma unroll
  for (int k = 0; k < K; k++) acc[k] = T(0);
  gemv<T, NB, G, K, true>(Dinv, ys, acc);
  store_groups<T, NB, G, K>(red, acc);
  bar_sync<NT>();
  const int rows = min(NB, V.n - I * NB);
#pragma unroll
  for (int q = 0; q < (NB * K + NT - 1) / NT; q++) {
    const int e = threadIdx.x + q * NT, r = e % NB, k = e / NB;
    if (e >= NB * K) break;
    const bool valid = r < rows && k < nrhs;
    const T    x     = group_sum<T, NB, G, K>(red, r, k);
    if (valid && !(fabs(x) < (T)INFINITY)) sg_dev_flag(rep, SG_FAIL_RESULT, system, V.orig(I * NB + r), (double)x);
    emit(r, k, valid ? x : T(0), valid);
  }
}

// Uploads a one-system kernel's job table (tickets -> job codes) into the trsv table slot and
// records it as the cached shape `key` (ctx->trsv_table_key / _jobs); waits for the stream first,
// since the pinned staging buffer may still feed an earlier upload.
sg_status trsv_upload_jobs(sg_ctx *ctx, long long key, const std::vector<int> &jobs, sg_report *rep);

// One system (nrhs = 1) of modest order on one thread-block cluster (trsv_cluster_cuda.cu). When
// the case is its own (one right-hand side, n within SG_TRSV_CLUSTER_MAXN, the device runs the
// cluster, its shared memory fits) it solves it, sets *used and returns the status; otherwise
// *used = false and SG_OK, and the caller solves it.
// With a filled plan (trsv_hybrid_solve below fills one at every order), the kernel takes Dinv_I
// and P_I from it and does no diagonal work.
template <class T> sg_status trsv_cluster_solve(sg_ctx *ctx, const sg_trsv_problem *P, double pivtol, sg_report *rep, bool *used, const sg_trsv_plan_s *hp = nullptr);
// One system (nrhs = 1) of larger order (SG_TRSV_HYB_MINN .. SG_TRSV_HYB_MAXN): the chain on one
// cluster, the bulk of the matrix on helper clusters (trsv_cluster_cuda.cu); same contract.
// With a plan (hp != NULL; trsv_internal.hpp): the inverted diagonal blocks live in hp->inv
// (device memory of hp->inv_bytes bytes, grown here). Not yet filled: this solve computes them
// there (checking the pivots) and fills the plan when it succeeds; filled: the solve runs no
// inversion job, checks no pivot (they were checked when the plan was filled) and takes the
// plan's look-ahead.
// After a plan of an order the one-cluster kernel takes has been filled (look-ahead 2): its paired
// blocks (hp->pinv), with which the one-cluster kernel's chain takes one step per two block rows.
template <class T> sg_status trsv_pair_fill(sg_ctx *ctx, const sg_trsv_problem *P, sg_trsv_plan_s *hp, sg_report *rep);
template <class T> sg_status trsv_hybrid_solve(sg_ctx *ctx, const sg_trsv_problem *P, double pivtol, sg_report *rep, bool *used, sg_trsv_plan_s *hp = nullptr);

} // namespace sgtrsv
