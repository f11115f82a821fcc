// Dense triangular solves on the GPU: sg_trsv_cuda (one system, n up to millions of
// unknowns, up to 16 right-hand sides) and sg_trsv_batch_solve_cuda (many systems of n<=512).
//
// Every variant (lower/upper x N/T) is solved as a forward substitution with an "effective
// lower" matrix M: M(i,j) = op(A)(i,j) for the forward cases (L N, U T) and op(A)(n-1-i,n-1-j)
// for the backward ones (U N, L T). M is cut into NB x NB tiles; tile (I,J) with J<I is a
// GEMV, tile (I,I) is inverted (Higham's method: 8x8 blocks by substitution, then doubling
// merges X21 = -X22 L21 X11), so the step on the critical path is a GEMV, not a substitution.
//
// One system (Hogg's global-memory synchronised solve, extended):
//  - work is split into jobs: block row I's off-diagonal tiles are cut into chunks of CT
//    tiles; the last chunk plus the diagonal tile is the row's "owner" job, the others are
//    "helper" jobs that write partial sums (at most MAXH per row). Jobs take tickets row by
//    row (build_jobs), so a job only ever waits for smaller tickets: no deadlock whatever the
//    scheduler does, and no block row is one long serial stream.
//  - tiles stream through a STAGES-deep cp.async ring in shared memory, issued before the
//    solution pieces they multiply are known (prefetch independent of the dependencies).
//  - readiness: owner I publishes flags[I] = epoch (release) after writing x_I; consumers
//    poll 32 flags at once with acquire loads, so in bandwidth mode a poll is rare. The
//    epoch (per-call counter) means flags are never reset; ticket/done counters and the
//    per-row helper counters return to zero by the end of every launch.
// Batched: one CTA per system walks the same tile stream sequentially (no flags needed).
#include "sys/sg_cuda.cuh"
#include "tri/trsv_internal.hpp"
#include <algorithm>
#include <cstdlib>
#include <vector>

namespace {


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
__device__ __forceinline__ void red_release_add(unsigned *p, unsigned v) { asm volatile("red.release.gpu.global.add.u32 [%0], %1;\n" ::"l"(p), "r"(v) : "memory"); }

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

// X = inverse of the lower-triangular tile L (both NB x NB, leading dimension NB+1);
// tmp holds NB*NB/4 values. Higham's method B by doubling, all threads.
template <class T, int NB, int NT>
__device__ void invert_lower(const T *L, T *X, T *tmp)
{
  constexpr int LDS = NB + 1;
  const int     tid = threadIdx.x;
  for (int e = tid; e < NB * LDS; e += NT) X[e] = T(0);
  __syncthreads();
  if (tid < NB) {  // 8x8 diagonal blocks, one thread per column
    const int o = (tid / 8) * 8, j = tid % 8;
    T         x[8];
#pragma unroll
    for (int i = 0; i < 8; i++) {
      if (i < j) x[i] = T(0);
      else if (i == j) x[i] = T(1) / L[(o + i) * LDS + o + i];
      else {
        T s = T(0);
#pragma unroll
        for (int k = 0; k < i; k++)
          if (k >= j) s = fma(L[(o + k) * LDS + o + i], x[k], s);
        x[i] = -s / L[(o + i) * LDS + o + i];
      }
    }
#pragma unroll
    for (int i = 0; i < 8; i++) X[(o + j) * LDS + o + i] = x[i];
  }
  __syncthreads();
  for (int s = 8; s < NB; s *= 2) {
    const int work = (NB / (2 * s)) * s * s;
    for (int e = tid; e < work; e += NT) {  // tmp = L21 * X11
      const int p = e / (s * s), i = (e % (s * s)) % s, j = (e % (s * s)) / s, o = 2 * s * p;
      T         a = T(0);
      for (int k = j; k < s; k++) a = fma(L[(o + k) * LDS + o + s + i], X[(o + j) * LDS + o + k], a);
      tmp[e] = a;
    }
    __syncthreads();
    for (int e = tid; e < work; e += NT) {  // X21 = -X22 * tmp
      const int p = e / (s * s), i = (e % (s * s)) % s, j = (e % (s * s)) / s, o = 2 * s * p;
      T         a = T(0);
      for (int k = 0; k <= i; k++) a = fma(X[(o + s + k) * LDS + o + s + i], tmp[p * s * s + j * s + k], a);
      X[(o + j) * LDS + o + s + i] = -a;
    }
    __syncthreads();
  }
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

// Finish block row I: ys holds b_I minus all off-diagonal products (the callers form it);
// x = Dinv * ys is written to X (checked finite). red is reused. Ends with a barrier.
template <class T, int NB, int NT, int K, int G = NT / NB>
__device__ void solve_diag(const View<T> &V, int I, const T *Dinv, T *ys, T *red, T *X, long long ldx, int nrhs, long long system, sg_dev_report *rep)
{
  T acc[K];
#pragma unroll
  for (int k = 0; k < K; k++) acc[k] = T(0);
  gemv<T, NB, G, K, true>(Dinv, ys, acc);
  store_groups<T, NB, G, K>(red, acc);
  __syncthreads();
  const int rows = min(NB, V.n - I * NB);
  for (int e = threadIdx.x; e < NB * K; e += NT) {
    const int r = e % NB, k = e / NB;
    if (r < rows && k < nrhs) {
      const T x = group_sum<T, NB, G, K>(red, r, k);
      if (!(fabs(x) < (T)INFINITY)) sg_dev_flag(rep, SG_FAIL_RESULT, system, V.orig(I * NB + r), (double)x);
      X[V.orig(I * NB + r) + k * ldx] = x;
    }
  }
  __syncthreads();
}

// ---------------------------------------------------------------- one system
constexpr int NB1 = 64, G1 = 8, NT1 = NB1 * G1, ST1 = 4, MAXH = 8;  // tile, threads, ring depth, helpers per row
constexpr int TILE1 = NB1 * (NB1 + 1);

template <class T> struct OneArgs {
  View<T>        V;
  const T       *B;
  long long      ldb;
  T             *X;
  long long      ldx;
  int            nrhs, CT;
  const int     *jobs;
  unsigned      *ctl, *flags, *cnt;  // ctl[0] ticket, ctl[1] done
  T             *part;               // [row][MAXH][K][NB]
  unsigned       epoch;
  T              pivtol;
  bool           unit;
  sg_dev_report *rep;
};

template <class T, int K> constexpr size_t one_smem() { return sizeof(T) * ((size_t)(ST1 + 1) * TILE1 + 2 * NB1 * K + NB1 * NB1 / 4); }

template <class T, int K>
__global__ void __launch_bounds__(NT1, 1) trsv_one_kernel(const OneArgs<T> a)
{
  static_assert(ST1 * TILE1 >= G1 * NB1 * K, "reduction buffer must fit in the ring");
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T *S = (T *)smem_raw, *Dinv = S + ST1 * TILE1, *xs = Dinv + TILE1, *tmp = xs + 2 * NB1 * K;
  __shared__ int s_job, s_ready[2];
  const int tid = threadIdx.x;
  if (tid == 0) {
    s_job = a.jobs[atomicAdd(&a.ctl[0], 1u)];
  }
  __syncthreads();
  const int  I = s_job >> 4, c = s_job & 15, nch = (I + a.CT - 1) / a.CT;
  const bool owner = c == 15;
  const int  j0 = owner ? (nch > 0 ? (nch - 1) * a.CT : 0) : c * a.CT, j1 = owner ? I : (c + 1) * a.CT;
  const int  first = owner ? 1 : 0, nitems = first + (j1 - j0);  // owner: item 0 = diagonal tile
  const View<T> &V = a.V;

  auto item_J = [&](int t) { return (owner && t == 0) ? I : j0 + t - first; };
  auto issue  = [&](int t) {
    if (t < nitems) load_tile<T, NB1, NT1>(S + (t % ST1) * TILE1, V, I, item_J(t), a.unit);
    cp_commit();
  };
  // make sure x_J is published; polls 32 flags at once, so streams rarely wait here.
  // `ready` (a register, the same in every thread) is what all threads agreed on at the last
  // poll; the shared slot alternates so that a slow warp still reads the value of its call.
  int  ready = 0, npoll = 0;
  auto ensure_ready = [&](int J) {
    if (J < ready) return;
    if (tid < 32) {
      unsigned m;
      for (;;) {
        const int jj = J + tid;
        m            = __ballot_sync(~0u, jj >= j1 || ld_acquire(a.flags + jj) == a.epoch);
        if (m & 1u) break;
      }
      if (tid == 0) s_ready[npoll & 1] = J + (~m ? __ffs(~m) - 1 : 32);
    }
    __syncthreads();
    ready = s_ready[npoll++ & 1];
  };
  T xr[(NB1 * K + NT1 - 1) / NT1];  // register prefetch of one x block
  auto load_x = [&](int J) {
#pragma unroll
    for (int q = 0; q < (NB1 * K + NT1 - 1) / NT1; q++) {
      const int e = tid + q * NT1, cc = e % NB1, k = e / NB1;
      xr[q]       = (e < NB1 * K && k < a.nrhs) ? __ldcg(a.X + V.orig(J * NB1 + cc) + k * a.ldx) : T(0);
    }
  };
  auto store_x = [&](T *dst) {
#pragma unroll
    for (int q = 0; q < (NB1 * K + NT1 - 1) / NT1; q++) {
      const int e = tid + q * NT1;
      if (e < NB1 * K) dst[(e % NB1) * K + e / NB1] = xr[q];
    }
  };

  for (int t = 0; t < ST1 - 1; t++) issue(t);
  constexpr int QB = (NB1 * K + NT1 - 1) / NT1;
  T             br[QB];  // owner: b_I, loaded now so that the finish does not wait for it
  const int     rows = min(NB1, V.n - I * NB1);
#pragma unroll
  for (int q = 0; q < QB; q++) {
    const int e = tid + q * NT1, r = e % NB1, k = e / NB1;
    br[q]       = (owner && e < NB1 * K && r < rows && k < a.nrhs) ? a.B[V.orig(I * NB1 + r) + k * a.ldb] : T(0);
  }
  if (nitems > first) {
    ensure_ready(item_J(first));
    load_x(item_J(first));
    store_x(xs + (first & 1) * NB1 * K);
  }
  T acc[K];
#pragma unroll
  for (int k = 0; k < K; k++) acc[k] = T(0);
  for (int t = 0; t < nitems; t++) {
    cp_wait<ST1 - 2>();
    __syncthreads();
    const T   *St   = S + (t % ST1) * TILE1;
    const bool next = t + 1 < nitems, pre = next && item_J(t + 1) < ready;
    if (pre) load_x(item_J(t + 1));  // ready already: the L2 round trip overlaps the tile work
    if (owner && t == 0) {
      if (!a.unit) check_diag<T, NB1>(St, V, I, a.pivtol, 0, a.rep);
      invert_lower<T, NB1, NT1>(St, Dinv, tmp);
    } else gemv<T, NB1, G1, K>(St, xs + (t & 1) * NB1 * K, acc);
    issue(t + ST1 - 1);
    if (next) {
      if (!pre) {
        ensure_ready(item_J(t + 1));
        load_x(item_J(t + 1));
      }
      store_x(xs + ((t + 1) & 1) * NB1 * K);
    }
  }
  cp_wait<0>();
  __syncthreads();
  T *red = S;  // the ring is idle now
  store_groups<T, NB1, G1, K>(red, acc);
  if (owner && tid == 0 && nch > 1) {  // helpers of this row are earlier tickets
    while (ld_acquire(a.cnt + I) != (unsigned)(nch - 1)) __nanosleep(32);
    a.cnt[I] = 0u;
  }
  __syncthreads();
#pragma unroll
  for (int q = 0; q < QB; q++) {
    const int e = tid + q * NT1, r = e % NB1, k = e / NB1;
    if (e >= NB1 * K) break;
    T s = group_sum<T, NB1, G1, K>(red, r, k);
    if (owner) {
      for (int h = 0; h + 1 < nch; h++) s += __ldcg(a.part + (((size_t)I * MAXH + h) * K + k) * NB1 + r);
      xs[r * K + k] = (r < rows && k < a.nrhs) ? br[q] - s : T(0);
    } else a.part[(((size_t)I * MAXH + c) * K + k) * NB1 + r] = s;
  }
  __syncthreads();
  if (owner) {
    solve_diag<T, NB1, NT1, K>(V, I, Dinv, xs, red, a.X, a.ldx, a.nrhs, 0, a.rep);
    if (tid == 0) st_release(a.flags + I, a.epoch);  // after the barrier: releases the whole CTA's x_I
  } else if (tid == 0) red_release_add(a.cnt + I, 1u);
  if (tid == 0 && atomicAdd(&a.ctl[1], 1u) == gridDim.x - 1) {  // last job: reset for the next call
    a.ctl[0] = 0u;
    a.ctl[1] = 0u;
  }
}

// Job table, in ticket order: row by row, a row's helpers before its owner. A job waits only
// for owners of earlier rows and for helpers of its own row, all earlier tickets, so the
// solve cannot deadlock; rows are started in the order the dependency chain reaches them,
// so an owner has its diagonal block inverted and its chunk streamed before it is needed.
void build_jobs(int nblk, int CT, std::vector<int> &jobs)
{
  jobs.clear();
  for (int I = 0; I < nblk; I++) {
    const int nch = (I + CT - 1) / CT;
    for (int c = 0; c + 1 < nch; c++) jobs.push_back((I << 4) | c);
    jobs.push_back((I << 4) | 15);
  }
}

int env_int(const char *name, int def, int lo, int hi)
{
  const char *s = getenv(name);
  if (!s) return def;
  const int v = atoi(s);
  return v < lo ? lo : (v > hi ? hi : v);
}

sg_status fail_one(sg_report *rep, int cls, long long, long long row, double value) { return sg_trsv_report_fail(rep, cls, -1, row, value); }
sg_status fail_batch(sg_report *rep, int cls, long long system, long long row, double value)
{
  if (cls == SG_FAIL_PIVOT_NONFINITE)  // batched: per-system size / leading dimension out of range
    return sg_report_set(rep, SG_ERR_ARG, system, -1, 0.0, "batched triangular solve: system %lld has an order or leading dimension out of range "
                                                          "(0 <= n <= %d and ld >= n required); it was left untouched", system, (int)row);
  return sg_trsv_report_fail(rep, cls, system, row, value);
}

template <class T, int K> sg_status launch_one(sg_ctx *ctx, const sg_trsv_problem *P, double pivtol, sg_report *rep)
{
  const int  n = (int)P->n, nblk = (n + NB1 - 1) / NB1;
  const int  CT = std::max(env_int("SG_TRSV_CT", 16, 1, 1 << 20), (nblk - 1 + MAXH) / (MAXH + 1));
  // control block: ticket, done, flags[nblk], cnt[nblk]; zeroed whenever (re)allocated
  const size_t ctl_bytes = (2 + 2 * (size_t)nblk) * sizeof(unsigned);
  void *old = ctx->work[SG_SLOT_TRSV_CTL];
  size_t oldb = ctx->work_bytes[SG_SLOT_TRSV_CTL];
  unsigned *ctl = (unsigned *)sg_ctx_work(ctx, ctl_bytes, SG_SLOT_TRSV_CTL);
  if (!ctl) return sg_report_set(rep, SG_ERR_MEM, -1, -1, 0.0, "cannot allocate %zu bytes of trsv control memory on the device", ctl_bytes);
  sg_status st;
  if (ctl != old || oldb != ctx->work_bytes[SG_SLOT_TRSV_CTL] || ++ctx->trsv_epoch == 0) {
    if ((st = sg_cuda_check(cudaMemsetAsync(ctl, 0, ctx->work_bytes[SG_SLOT_TRSV_CTL], sg_stream(ctx)), rep, "clearing trsv flags")) != SG_OK) return st;
    ctx->trsv_epoch = 1;
  }
  // job table: rebuilt and uploaded only when the shape (nblk, CT) changes
  const long long key = (long long)nblk * 4096 + CT;
  if (key != ctx->trsv_table_key) {
    std::vector<int> jobs;
    build_jobs(nblk, CT, jobs);
    // the pinned staging buffer may still feed an earlier upload: wait before reusing it
    if ((st = sg_cuda_check(cudaStreamSynchronize(sg_stream(ctx)), rep, "trsv job table")) != SG_OK) return st;
    int *djobs = (int *)sg_ctx_work(ctx, jobs.size() * sizeof(int), SG_SLOT_TRSV_TABLE);
    int *hjobs = (int *)sg_ctx_host_work(ctx, jobs.size() * sizeof(int), SG_SLOT_TRSV_TABLE);
    if (!djobs || !hjobs) return sg_report_set(rep, SG_ERR_MEM, -1, -1, 0.0, "cannot allocate the trsv job table (%zu jobs)", jobs.size());
    std::copy(jobs.begin(), jobs.end(), hjobs);
    if ((st = sg_cuda_check(cudaMemcpyAsync(djobs, hjobs, jobs.size() * sizeof(int), cudaMemcpyHostToDevice, sg_stream(ctx)), rep, "trsv job table")) != SG_OK) return st;
    ctx->trsv_table_key  = key;
    ctx->trsv_table_jobs = (long long)jobs.size();
  }
  const int *djobs = (const int *)ctx->work[SG_SLOT_TRSV_TABLE];
  T *part = nullptr;
  if (nblk > CT) {
    const size_t pb = (size_t)nblk * MAXH * K * NB1 * sizeof(T);
    if (!(part = (T *)sg_ctx_work(ctx, pb, SG_SLOT_TRSV_PART))) return sg_report_set(rep, SG_ERR_MEM, -1, -1, 0.0, "cannot allocate %zu bytes of trsv partial sums", pb);
  }
  OneArgs<T> a;
  a.V     = View<T>{(const T *)P->A, P->lda, n, (P->uplo == SG_UPPER) != (P->trans == SG_TRANS), P->trans == SG_TRANS};
  a.B     = (const T *)P->B;
  a.ldb   = P->nrhs > 1 ? P->ldb : P->n;
  a.X     = (T *)P->X;
  a.ldx   = P->nrhs > 1 ? P->ldx : P->n;
  a.nrhs  = (int)P->nrhs;
  a.CT    = CT;
  a.jobs  = djobs;
  a.ctl   = ctl;
  a.flags = ctl + 2;
  a.cnt   = ctl + 2 + nblk;
  a.part  = part;
  a.epoch = ctx->trsv_epoch;
  a.pivtol = (T)(pivtol > 0 ? pivtol : 0.0);
  a.unit  = P->diag == SG_UNIT;
  a.rep   = sg_dreport(ctx);
  const size_t smem = one_smem<T, K>();
  static bool attr = false;  // per instantiation
  if (!attr) {
    if ((st = sg_cuda_check(cudaFuncSetAttribute(trsv_one_kernel<T, K>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem), rep, "trsv shared memory")) != SG_OK) return st;
    attr = true;
  }
  if ((st = sg_dev_report_reset(ctx, rep)) != SG_OK) return st;
  trsv_one_kernel<T, K><<<(unsigned)ctx->trsv_table_jobs, NT1, smem, sg_stream(ctx)>>>(a);
  st = sg_dev_report_fetch(ctx, rep, fail_one);
  if (st == SG_ERR_DEVICE) {  // an aborted launch may leave counters behind: start clean next time
    ctx->trsv_table_key = -1;
    (void)cudaMemsetAsync(ctl, 0, ctl_bytes, sg_stream(ctx));
  }
  return st;
}

template <class T> sg_status dispatch_one(sg_ctx *ctx, const sg_trsv_problem *P, double pivtol, sg_report *rep)
{
  const long long k = P->nrhs;
  if (k <= 1) return launch_one<T, 1>(ctx, P, pivtol, rep);
  if (k <= 2) return launch_one<T, 2>(ctx, P, pivtol, rep);
  if (k <= 4) return launch_one<T, 4>(ctx, P, pivtol, rep);
  if (k <= 8) return launch_one<T, 8>(ctx, P, pivtol, rep);
  return launch_one<T, 16>(ctx, P, pivtol, rep);
}

// ---------------------------------------------------------------- batched
constexpr int NBB = 32, GB = 4, NTB = NBB * GB, STB = 3, TILEB = NBB * (NBB + 1);

template <class T> struct BatchArgs {
  const T *const *A;
  T *const       *X;
  const int      *nv, *ldav, *ldxv;
  int             n, lda, ldx, nrhs;
  bool            rev, trans, unit;
  T               pivtol;
  sg_dev_report  *rep;
};
template <class T, int K> constexpr size_t batch_smem() { return sizeof(T) * ((size_t)(STB + 1) * TILEB + 2 * NBB * K + NBB * NBB / 4 + GB * NBB * K); }

template <class T, int K>
__global__ void __launch_bounds__(NTB) trsv_batch_kernel(const BatchArgs<T> a)
{
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T *S = (T *)smem_raw, *Dinv = S + STB * TILEB, *xs = Dinv + TILEB, *tmp = xs + 2 * NBB * K, *red = tmp + NBB * NBB / 4;
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
    } else {  // x_J was finished by this CTA (visible after the barriers of its solve)
      for (int e = tid; e < NBB * K; e += NTB) xs[(e % NBB) * K + e / NBB] = (e / NBB < a.nrhs) ? X[V.orig(J * NBB + e % NBB) + (e / NBB) * ldx] : T(0);
    }
    cp_wait<STB - 2>();
    __syncthreads();
    const T *St = S + (t % STB) * TILEB;
    if (J == I) invert_lower<T, NBB, NTB>(St, Dinv, tmp);
    else gemv<T, NBB, GB, K>(St, xs, acc);
    __syncthreads();  // St and xs consumed
    issue(t + STB - 1);
    if (J == I - 1 || (J == I && I == 0)) {  // last item of row I: finish it
      store_groups<T, NBB, GB, K>(red, acc);
      __syncthreads();
      const int rows = min(NBB, n - I * NBB);
      for (int e = tid; e < NBB * K; e += NTB) {
        const int r = e % NBB, k = e / NBB;
        xs[r * K + k] = (r < rows && k < a.nrhs) ? X[V.orig(I * NBB + r) + k * ldx] - group_sum<T, NBB, GB, K>(red, r, k) : T(0);
      }
      __syncthreads();
      solve_diag<T, NBB, NTB, K>(V, I, Dinv, xs, red, X, ldx, a.nrhs, sys, a.rep);
    }
  }
  cp_wait<0>();
}

template <class T, int K> sg_status launch_batch(sg_ctx *ctx, const sg_trsv_batch *B, double pivtol, sg_report *rep)
{
  BatchArgs<T> a;
  a.A = (const T *const *)B->A;
  a.X = (T *const *)B->X;
  a.nv = B->nv;
  a.ldav = B->ldav;
  a.ldxv = B->ldxv;
  a.n = B->n;
  a.lda = B->lda;
  a.ldx = B->ldx;
  a.nrhs = B->nrhs;
  a.rev = (B->uplo == SG_UPPER) != (B->trans == SG_TRANS);
  a.trans = B->trans == SG_TRANS;
  a.unit = B->diag == SG_UNIT;
  a.pivtol = (T)(pivtol > 0 ? pivtol : 0.0);
  a.rep = sg_dreport(ctx);
  const size_t smem = batch_smem<T, K>();
  sg_status    st;
  static bool  attr = false;
  if (!attr) {
    if ((st = sg_cuda_check(cudaFuncSetAttribute(trsv_batch_kernel<T, K>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem), rep, "batched trsv shared memory")) != SG_OK) return st;
    attr = true;
  }
  if ((st = sg_dev_report_reset(ctx, rep)) != SG_OK) return st;
  trsv_batch_kernel<T, K><<<(unsigned)B->nbatch, NTB, smem, sg_stream(ctx)>>>(a);
  return sg_dev_report_fetch(ctx, rep, fail_batch);
}

template <class T> sg_status dispatch_batch(sg_ctx *ctx, const sg_trsv_batch *B, double pivtol, sg_report *rep)
{
  const int k = B->nrhs;
  if (k <= 1) return launch_batch<T, 1>(ctx, B, pivtol, rep);
  if (k <= 4) return launch_batch<T, 4>(ctx, B, pivtol, rep);
  return launch_batch<T, 16>(ctx, B, pivtol, rep);
}

} // namespace

extern "C" sg_status sg_trsv_cuda(sg_ctx *ctx, const sg_trsv_problem *P, double pivtol, sg_report *rep)
{
  sg_status st = sg_trsv_begin(ctx, SG_BACKEND_CUDA, P, rep);
  if (st != SG_OK) return st;
  return P->prec == SG_REAL64 ? dispatch_one<double>(ctx, P, pivtol, rep) : dispatch_one<float>(ctx, P, pivtol, rep);
}

extern "C" sg_status sg_trsv_batch_solve_cuda(sg_ctx *ctx, const sg_trsv_batch *B, double pivtol, sg_report *rep)
{
  sg_status st = sg_trsv_batch_begin(ctx, SG_BACKEND_CUDA, B, rep);
  if (st != SG_OK) return st;
  if (B->nbatch > 0x7fffffffLL) return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "batched triangular solve: at most 2^31-1 systems per call");
  return B->prec == SG_REAL64 ? dispatch_batch<double>(ctx, B, pivtol, rep) : dispatch_batch<float>(ctx, B, pivtol, rep);
}
