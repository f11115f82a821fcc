// bench_trsv: StructGPU dense triangular solves vs cuBLAS, side by side in one run.
// Method, byte floor, predictions and how to read the output: bench/trsv/README.md.
//
//   bench_trsv [--quick] [--prec double|float|both] [--only single,nrhs,batched] [--nmax N]
//              [--n 256,1000,...] [--batch-n 16,32,...] [--variants LN,LT,UN,UT] [--lda-pad P]
//              [--reps N] [--target-ms MS] [--seed S] [--out FILE.json] [--commit SHA] [--no-reads]
//              [--l2-fetch B]
//
// Families (every one non-unit diagonal, column-major, the other triangle filled with NaN):
//   single  one system, nrhs = 1: ours (sg_trsv_cuda) vs cublas<t>trsv and cublas<t>trsm (1 column)
//   nrhs    one system, nrhs = 4 and 16: ours vs cublas<t>trsm with the same columns
//   batched many systems of order n <= 512 (uniform), and one run of random orders 1..512:
//           ours (sg_trsv_batch_solve_cuda) vs cublas<t>trsmBatched (1 column, pointer arrays;
//           for the variable orders, one trsmBatched call per distinct order); beside each
//           uniform order, read-only references that move the same bytes without solving
//           (kind "read": the triangle's read ceiling, --no-reads skips them)
// Timing: a measurement is R back-to-back calls between two cudaEvents (R chosen so that it
// lasts >= --target-ms, default 20 ms); the median over --reps measurements (default 9) of the
// per-call time is reported. Matrices are rotated over copies so that the data touched by a
// measurement is >= 200 MB (4x the H100's L2) whatever n; right-hand sides come from a pool
// of slots restored (untimed) before every measurement. Every case is verified before it is
// timed: residual (backward error, in double on the device) for every solver, and ours vs
// cuBLAS (relative difference) so that a fast wrong answer cannot hide.
#include "structgpu/trsv_kernels.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <sys/stat.h>
#include <type_traits>
#include <vector>

#include "../common/bench_common.cuh"

using namespace sg_bench;

namespace {

// ============================================================== options and globals
const double MB = 1e6;
struct Opts {
  bool quick = false, prec_d = true, prec_s = true, single = true, nrhs = true, batched = true, reads = true;
  long long nmax = 32768, lda_pad = 0;
  int l2_fetch = -1;              // --l2-fetch: the device's L2 fetch granularity for the run (sg_ctx_set_l2_fetch), -1 = as it is
  int reps = 9;
  double target_ms = 20;
  double rot_bytes = 200 * MB;    // data touched per measurement, at least (single / nrhs)
  double copy_below = 100 * MB;   // matrices smaller than this get several rotating copies
  double batch_bytes = 256 * MB;  // matrix floor bytes of one batched case, at least
  double pool_bytes = 256 * MB;   // right-hand-side pool of the single / nrhs cases, at most
  double bpool_bytes = 1024 * MB; // right-hand-side sets of the batched cases, at most
  unsigned long long seed = 0;
  std::string out, commit;
  std::vector<long long> ns, bns, rhs_ns;
  std::vector<int> rhs_ks = {4, 16};
  std::vector<int> vars, rhs_vars, var_vars;  // variant ids 0..3 = LN LT UN UT
} O;

struct Variant {
  sg_uplo uplo;
  sg_trans trans;
  const char *name;
};
const Variant VARS[4] = {{SG_LOWER, SG_NOTRANS, "LN"}, {SG_LOWER, SG_TRANS, "LT"}, {SG_UPPER, SG_NOTRANS, "UN"}, {SG_UPPER, SG_TRANS, "UT"}};

struct Rec {
  std::string family, prec, variant, kind, solver, status = "ok", note;
  long long n = 0, nrhs = 1, nbatch = 1, lda = 0, copies = 1, slots = 1, calls = 0;
  double matrix_bytes = 0, floor_bytes = 0, touched_mb = NAN;
  int reps = 0;
  double us = NAN, us_min = NAN, us_max = NAN, gbps = NAN, pct = NAN;
  double spd_trsv = NAN, spd_trsm = NAN, spd_batched = NAN;
  double rel = NAN, bwd = NAN;
  double plan_us = NAN;  // ours-plan: sg_trsv_plan_create per matrix (the analysis, one solve's cost)
  long long nonfinite = -1;
  bool pass = false;
};

struct DevInfo {
  std::string name;
  int sms = 0, ccmaj = 0, ccmin = 0, rt = 0, drv = 0, cublas = 0, l2_fetch = -1;  // l2_fetch: the L2 fetch granularity of the run, bytes
  long long l2 = 0, mem = 0;
} G;

cublasHandle_t g_cb = nullptr;
sg_ctx *g_ctx = nullptr;
cudaEvent_t g_ev0 = nullptr, g_ev1 = nullptr;
double g_copy_gbps = NAN, g_copy_median = NAN;
std::vector<Rec> g_recs;
std::vector<std::string> g_fails, g_skips;

// ============================================================== error handling
bool cb_ok(cublasStatus_t s, const char *what)
{
  if (s == CUBLAS_STATUS_SUCCESS) return true;
  printf("  cuBLAS error in %s: %s\n", what, cublasGetStatusString(s));
  probe_device();
  return false;
}
#define CB(x) cb_ok((x), #x)

double free_bytes()
{
  size_t fr = 0, tot = 0;
  if (cudaMemGetInfo(&fr, &tot) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return (double)fr;
}
const double MEM_MARGIN = 1.5e9;  // left free for cuBLAS / StructGPU workspaces and the check buffers

// ============================================================== data (device-generated)
__host__ __device__ inline uint64_t mix64(uint64_t z)
{
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
// Uniform in [-1, 1), a function of (seed, a, b) only.
__host__ __device__ inline double urand(uint64_t seed, uint64_t a, uint64_t b)
{
  return (double)(mix64(seed ^ mix64(a ^ mix64(b))) >> 11) * 0x1.0p-52 - 1.0;
}
template <class T> __device__ inline T qnan() { return (T)__int_as_float(0x7fc00000); }

// Element (i, j) of matrix `sys` (0-based, i < ld): the triangle named by `upper` holds a
// well-conditioned triangular matrix, everything else (the other triangle, the lda padding)
// is NaN, so a solver that reads outside the triangle fails the check.
//   diagonal: sign * [2, 3];  off-diagonal: uniform [-1, 1] / sqrt(n)
// op(A) has cond_2 ~ 2 for every n (numpy, n = 256..4096: 1.87..1.92) and ||A^-1|| = O(1),
// while every off-diagonal block matters (a skipped 64 x 64 block changes x by ~1e-2).
template <class T> __device__ inline T tri_elem(uint64_t seed, uint64_t sys, long long i, long long j, long long n, int upper)
{
  if (i >= n || (upper ? i > j : i < j)) return qnan<T>();
  double v = urand(seed, sys, ((uint64_t)j << 32) | (uint64_t)i);
  if (i == j) return (T)((v < 0 ? -1.0 : 1.0) * (2.0 + fabs(v)));
  return (T)(v * rsqrt((double)n));
}

template <class T> __global__ void gen_single_kernel(T *A, long long n, long long lda, int upper, uint64_t seed, uint64_t sys)
{
  const long long total = lda * n;
  for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < total; k += (long long)gridDim.x * blockDim.x) {
    long long j = k / lda, i = k - j * lda;
    A[k] = tri_elem<T>(seed, sys, i, j, n, upper);
  }
}

// One block per system: system s at base + off[s] (or s * lda * n), order nv[s] (or n),
// leading dimension nv[s] (or lda).
template <class T>
__global__ void gen_batch_kernel(T *base, const long long *off, long long nbatch, int n, int lda, const int *nv, int upper, uint64_t seed)
{
  for (long long s = blockIdx.x; s < nbatch; s += gridDim.x) {
    const int ns = nv ? nv[s] : n, ld = nv ? nv[s] : lda;
    T *A = base + (off ? off[s] : s * (long long)lda * n);
    for (int k = threadIdx.x; k < ld * ns; k += blockDim.x) A[k] = tri_elem<T>(seed, (uint64_t)s, k % ld, k / ld, ns, upper);
  }
}

template <class T> __global__ void gen_vec_kernel(T *v, long long total, uint64_t seed)
{
  for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < total; k += (long long)gridDim.x * blockDim.x)
    v[k] = (T)urand(seed, 0x7777, (uint64_t)k);
}

// ============================================================== checks (in double, on the device)
// Backward error of a solution x of op(A) x = b:  max_i |b - op(A) x|_i / max_i (|op(A)||x| + |b|)_i
// (normwise in the max norm, as in bench_tri), and the number of non-finite x (outputs are
// poisoned with NaN before the checked run, so this also catches entries never written).
// op(A) is lower triangular when (uplo == LOWER) != (trans == TRANS).
//
// One large system: y = op(A) x and |op(A)||x| accumulated over column chunks with atomics.
// NOTRANS: one thread per row (coalesced down a column); TRANS: one warp per row (= column of A).
const int CHUNK = 512;
__device__ inline long long lmin(long long a, long long b) { return a < b ? a : b; }
__device__ inline long long lmax(long long a, long long b) { return a > b ? a : b; }
template <class T>
__global__ void opax_notrans_kernel(const T *A, long long n, long long lda, int oplower, const T *x, double *y, double *ay)
{
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x, j0 = blockIdx.y * (long long)CHUNK;
  if (i >= n) return;
  const long long j1 = lmin(n, j0 + CHUNK), lo = oplower ? j0 : lmax(j0, i), hi = oplower ? lmin(j1, i + 1) : j1;
  double s = 0, sa = 0;
  for (long long j = lo; j < hi; j++) {
    double t = (double)A[i + j * lda] * (double)x[j];
    s += t, sa += fabs(t);
  }
  if (lo < hi) atomicAdd(&y[i], s), atomicAdd(&ay[i], sa);
}
template <class T>
__global__ void opax_trans_kernel(const T *A, long long n, long long lda, int oplower, const T *x, double *y, double *ay)
{
  const long long i = blockIdx.x * (long long)(blockDim.x / 32) + threadIdx.x / 32, j0 = blockIdx.y * (long long)CHUNK;
  const int lane = threadIdx.x & 31;
  if (i >= n) return;  // whole warps leave together
  const long long j1 = lmin(n, j0 + CHUNK), lo = oplower ? j0 : lmax(j0, i), hi = oplower ? lmin(j1, i + 1) : j1;
  double s = 0, sa = 0;
  for (long long j = lo + lane; j < hi; j += 32) {
    double t = (double)A[j + i * lda] * (double)x[j];
    s += t, sa += fabs(t);
  }
  for (int o = 16; o; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o), sa += __shfl_down_sync(0xffffffffu, sa, o);
  if (lane == 0 && lo < hi) atomicAdd(&y[i], s), atomicAdd(&ay[i], sa);
}
// out[0] = max |r| bits, out[1] = max scale bits, out[2] += #nonfinite x.
template <class T>
__global__ void resid_finish_kernel(long long n, const T *x, const T *b, const double *y, const double *ay, unsigned long long *out)
{
  double rmax = 0, smax = 0;
  unsigned long long bad = 0;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    if (!isfinite((double)x[i])) {
      bad++;
      continue;
    }
    double r = (double)b[i] - y[i], sc = ay[i] + fabs((double)b[i]);
    if (!isfinite(r) || !isfinite(sc)) continue;  // a non-finite neighbour is counted where it sits
    rmax = fmax(rmax, fabs(r)), smax = fmax(smax, sc);
  }
  for (int o = 16; o; o >>= 1) {
    rmax = fmax(rmax, __shfl_down_sync(0xffffffffu, rmax, o));
    smax = fmax(smax, __shfl_down_sync(0xffffffffu, smax, o));
    bad += __shfl_down_sync(0xffffffffu, bad, o);
  }
  if ((threadIdx.x & 31) == 0) {  // non-negative doubles order like their bit patterns
    atomicMax(&out[0], (unsigned long long)__double_as_longlong(rmax));
    atomicMax(&out[1], (unsigned long long)__double_as_longlong(smax));
    if (bad) atomicAdd(&out[2], bad);
  }
}

// Many small systems: one block per system (uniform or per-system order / leading dimension),
// pointer arrays like the solvers. out[0] = max over systems of the system's backward error
// (bits), out[2] += #nonfinite x. X holds the solutions, B the untouched right-hand sides.
template <class T>
__global__ void resid_batch_kernel(const T *const *A, const T *const *X, const T *const *B, long long nbatch, int n, const int *nv,
                                   int lda, int oplower, int trans, unsigned long long *out)
{
  __shared__ double sr[32], ss[32];
  __shared__ unsigned long long sb[32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
  for (long long s = blockIdx.x; s < nbatch; s += gridDim.x) {
    const int ns = nv ? nv[s] : n, ld = nv ? nv[s] : lda;
    const T *a = A[s], *x = X[s], *b = B[s];
    double rmax = 0, smax = 0;
    unsigned long long bad = 0;
    for (int i = threadIdx.x; i < ns; i += blockDim.x) {
      if (!isfinite((double)x[i])) {
        bad++;
        continue;
      }
      const int lo = oplower ? 0 : i, hi = oplower ? i + 1 : ns;
      double y = 0, ay = 0;
      for (int j = lo; j < hi; j++) {
        double t = (double)(trans ? a[j + (long long)i * ld] : a[i + (long long)j * ld]) * (double)x[j];
        y += t, ay += fabs(t);
      }
      double r = (double)b[i] - y, sc = ay + fabs((double)b[i]);
      if (isfinite(r) && isfinite(sc)) rmax = fmax(rmax, fabs(r)), smax = fmax(smax, sc);
    }
    for (int o = 16; o; o >>= 1) {
      rmax = fmax(rmax, __shfl_down_sync(0xffffffffu, rmax, o));
      smax = fmax(smax, __shfl_down_sync(0xffffffffu, smax, o));
      bad += __shfl_down_sync(0xffffffffu, bad, o);
    }
    if (lane == 0) sr[warp] = rmax, ss[warp] = smax, sb[warp] = bad;
    __syncthreads();
    if (threadIdx.x == 0) {
      for (int w = 1; w < nw; w++) rmax = fmax(rmax, sr[w]), smax = fmax(smax, ss[w]), bad += sb[w];
      double bwd = smax > 0 ? rmax / smax : (rmax > 0 ? INFINITY : 0.0);
      atomicMax(&out[0], (unsigned long long)__double_as_longlong(bwd));
      if (bad) atomicAdd(&out[2], bad);
    }
    __syncthreads();
  }
}

int grid_for(long long work, int threads, int per_sm = 8)
{
  return (int)std::max(1LL, std::min<long long>((work + threads - 1) / threads, (long long)G.sms * per_sm));
}

struct Check {
  bool ok = false;
  double bwd = NAN;
  long long nonfinite = -1;
};

// Residual check of one system, nrhs columns (x: ldx, b: ldb); y, ay: n doubles of scratch.
template <class T>
Check check_single(sg_uplo uplo, sg_trans trans, long long n, const T *A, long long lda, const T *X, long long ldx, const T *B,
                   long long ldb, long long nrhs, double *y, double *ay)
{
  Check c;
  const int oplower = (uplo == SG_LOWER) != (trans == SG_TRANS);
  double bwd = 0;
  long long bad = 0;
  for (long long k = 0; k < nrhs; k++) {
    const T *x = X + k * ldx, *b = B + k * ldb;
    unsigned long long h[3] = {0, 0, 0};
    if (!CK(cudaMemsetAsync(y, 0, n * sizeof(double), g_stream)) || !CK(cudaMemsetAsync(ay, 0, n * sizeof(double), g_stream)) ||
        !CK(cudaMemsetAsync(g_scr, 0, sizeof h, g_stream)))
      return c;
    const long long chunks = (n + CHUNK - 1) / CHUNK;
    if (trans == SG_NOTRANS) opax_notrans_kernel<T><<<dim3((unsigned)((n + 255) / 256), (unsigned)chunks), 256, 0, g_stream>>>(A, n, lda, oplower, x, y, ay);
    else opax_trans_kernel<T><<<dim3((unsigned)((n + 7) / 8), (unsigned)chunks), 256, 0, g_stream>>>(A, n, lda, oplower, x, y, ay);
    if (!CK(cudaGetLastError())) return c;
    resid_finish_kernel<T><<<grid_for(n, 256), 256, 0, g_stream>>>(n, x, b, y, ay, g_scr);
    if (!CK(cudaGetLastError()) || !CK(cudaMemcpyAsync(h, g_scr, sizeof h, cudaMemcpyDeviceToHost, g_stream)) ||
        !CK(cudaStreamSynchronize(g_stream)))
      return c;
    double rmax, smax;
    memcpy(&rmax, &h[0], 8), memcpy(&smax, &h[1], 8);
    bwd = std::max(bwd, smax > 0 ? rmax / smax : (rmax > 0 ? INFINITY : 0.0));
    bad += (long long)h[2];
  }
  c.ok = true, c.bwd = bwd, c.nonfinite = bad;
  return c;
}

template <class T>
Check check_batch(sg_uplo uplo, sg_trans trans, long long nbatch, int n, const int *nv, int lda, T *const *A, T *const *X, T *const *B)
{
  Check c;
  unsigned long long h[3] = {0, 0, 0};
  if (!CK(cudaMemsetAsync(g_scr, 0, sizeof h, g_stream))) return c;
  const int oplower = (uplo == SG_LOWER) != (trans == SG_TRANS);
  resid_batch_kernel<T><<<grid_for(nbatch * 256, 256, 16), 256, 0, g_stream>>>((const T *const *)A, (const T *const *)X, (const T *const *)B, nbatch, n, nv, lda,
                                                                           oplower, trans == SG_TRANS, g_scr);
  if (!CK(cudaGetLastError()) || !CK(cudaMemcpyAsync(h, g_scr, sizeof h, cudaMemcpyDeviceToHost, g_stream)) ||
      !CK(cudaStreamSynchronize(g_stream)))
    return c;
  memcpy(&c.bwd, &h[0], 8);
  c.nonfinite = (long long)h[2], c.ok = true;
  return c;
}

// ||x - r||_2 / ||r||_2 over consecutive segments (one per system), the worst segment.
template <class T> double rel_diff(const std::vector<T> &x, const std::vector<T> &r, const std::vector<long long> &seg_off, const std::vector<long long> &seg_len)
{
  double worst = 0;
  for (size_t s = 0; s < seg_off.size(); s++) {
    double num = 0, den = 0;
    for (long long i = seg_off[s]; i < seg_off[s] + seg_len[s]; i++) {
      double e = (double)x[i] - (double)r[i];
      num += e * e, den += (double)r[i] * (double)r[i];
    }
    double d = std::sqrt(num) / (den > 0 ? std::sqrt(den) : 1.0);
    worst = std::isfinite(d) ? std::max(worst, d) : INFINITY;
  }
  return worst;
}
bool to_dev(void *d, const void *h, size_t bytes)
{
  return CK(cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, g_stream)) && CK(cudaStreamSynchronize(g_stream));
}
template <class T> bool to_host(std::vector<T> &h, const T *d, size_t count)
{
  h.resize(count);
  return CK(cudaMemcpyAsync(h.data(), d, count * sizeof(T), cudaMemcpyDeviceToHost, g_stream)) && CK(cudaStreamSynchronize(g_stream));
}

// ============================================================== cuBLAS by type
cublasFillMode_t cb_uplo(sg_uplo u) { return u == SG_LOWER ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER; }
cublasOperation_t cb_op(sg_trans t) { return t == SG_NOTRANS ? CUBLAS_OP_N : CUBLAS_OP_T; }
template <class T> struct Cb;
#define SG_CB(T, P)                                                                                                        \
  template <> struct Cb<T> {                                                                                               \
    static cublasStatus_t trsv(sg_uplo u, sg_trans t, long long n, const T *A, long long lda, T *x)                        \
    { return cublas##P##trsv_64(g_cb, cb_uplo(u), cb_op(t), CUBLAS_DIAG_NON_UNIT, n, A, lda, x, 1); }                      \
    static cublasStatus_t trsm(sg_uplo u, sg_trans t, long long n, long long k, const T *A, long long lda, T *B, long long ldb) \
    {                                                                                                                      \
      const T one = 1;                                                                                                     \
      return cublas##P##trsm_64(g_cb, CUBLAS_SIDE_LEFT, cb_uplo(u), cb_op(t), CUBLAS_DIAG_NON_UNIT, n, k, &one, A, lda, B, ldb); \
    }                                                                                                                      \
    static cublasStatus_t trsm_batched(sg_uplo u, sg_trans t, int n, T *const *A, int lda, T *const *B, int ldb, int count) \
    {                                                                                                                      \
      const T one = 1;                                                                                                     \
      return cublas##P##trsmBatched(g_cb, CUBLAS_SIDE_LEFT, cb_uplo(u), cb_op(t), CUBLAS_DIAG_NON_UNIT, n, 1, &one,        \
                                    (const T *const *)A, lda, B, ldb, count);                                              \
    }                                                                                                                      \
  };
SG_CB(double, D)
SG_CB(float, S)
#undef SG_CB
std::string cb_err(cublasStatus_t s) { return s == CUBLAS_STATUS_SUCCESS ? "" : std::string("cuBLAS: ") + cublasGetStatusString(s); }
std::string sg_err(sg_status st, const sg_report &rep) { return st == SG_OK ? "" : fmt("%s: %.200s", status_name(st), rep.msg); }

// ============================================================== timing
struct Timed {
  bool ok = false;
  double us = NAN, us_min = NAN, us_max = NAN;
  int reps = 0;
  long long calls = 0;
  std::string err, note;
};

// restore(): untimed, before every measurement (refills the in-place right-hand sides).
// call(i): enqueue call i of a measurement (it picks matrix copy and rhs slot from i), "" = ok.
// 2 warm-up calls, two pilots to size R (calls per measurement, >= --target-ms), then
// --reps measurements of R calls between two events; per-call time = elapsed / R.
template <class Restore, class Call> Timed time_calls(Restore restore, Call call)
{
  Timed t;
  auto measure = [&](long long cnt, double *us) -> std::string {
    if (!restore()) return "input restore failed";
    if (!CK(cudaEventRecord(g_ev0, g_stream))) return "event record failed";
    for (long long i = 0; i < cnt; i++) {
      std::string e = call(i);
      if (!e.empty()) return e;
    }
    cudaError_t ce = cudaGetLastError();
    if (ce != cudaSuccess) return std::string("CUDA: ") + cudaGetErrorString(ce);
    if (!CK(cudaEventRecord(g_ev1, g_stream))) return "event record failed";
    ce = cudaEventSynchronize(g_ev1);
    if (ce != cudaSuccess) return std::string("CUDA: ") + cudaGetErrorString(ce);
    float ms = NAN;
    if (!CK(cudaEventElapsedTime(&ms, g_ev0, g_ev1))) return "event timing failed";
    *us = 1000.0 * ms / (double)cnt;
    return "";
  };
  auto fail = [&](const std::string &e) {
    t.err = e;
    probe_device();
    return t;
  };
  double us = NAN;
  std::string e = measure(2, &us);  // warm-up (module load, cuBLAS kernel selection, workspaces)
  if (e.empty()) e = measure(3, &us);
  if (!e.empty()) return fail(e);
  const double target_us = O.target_ms * 1000.0;
  if (us < target_us / 10) {  // refine the estimate over ~1/10 of a measurement
    if (!(e = measure((long long)std::ceil(target_us / 10 / std::max(us, 0.5)), &us)).empty()) return fail(e);
  }
  const long long R = std::max(1LL, std::min(200000LL, (long long)std::ceil(target_us / std::max(us, 0.05))));
  int reps = O.reps;
  if (us > 1e6) reps = std::min(reps, 3), t.note = "slow: 3 measurements";
  std::vector<double> v;
  for (int k = 0; k < reps; k++) {
    if (!(e = measure(R, &us)).empty()) return fail(e);
    v.push_back(us);
  }
  t.ok = true, t.reps = reps, t.calls = R, t.us = median(v);
  t.us_min = *std::min_element(v.begin(), v.end()), t.us_max = *std::max_element(v.begin(), v.end());
  return t;
}

// Our solves are timed with deferred breakdown checks (sg_ctx_set_deferred): like cuBLAS, the
// calls only queue kernels; the device record is checked once after the measurements (any
// breakdown there turns the row into an error). Correctness was checked synchronously before.
template <class F> Timed timed_deferred(F f)
{
  sg_ctx_set_deferred(g_ctx, 1);
  Timed     t = f();
  sg_report rep;
  sg_status st = sg_ctx_check(g_ctx, &rep);
  sg_ctx_set_deferred(g_ctx, 0);
  if (st != SG_OK && t.ok) t.ok = false, t.err = std::string("deferred check: ") + rep.msg;
  return t;
}

double measure_copy_bw()
{
  const size_t bytes = 1ull << 30;
  DBuf a, b;
  if (!a.alloc(bytes, "copy test") || !b.alloc(bytes, "copy test")) return NAN;
  if (!CK(cudaMemsetAsync(a.p, 0x5a, bytes, g_stream)) || !CK(cudaMemsetAsync(b.p, 0, bytes, g_stream))) return NAN;
  const int n = 20;
  for (int k = 0; k < 3; k++)
    if (!CK(cudaMemcpyAsync(b.p, a.p, bytes, cudaMemcpyDeviceToDevice, g_stream))) return NAN;
  std::vector<double> v;
  for (int k = 0; k < n; k++) {
    float ms = 0;
    if (!CK(cudaEventRecord(g_ev0, g_stream)) || !CK(cudaMemcpyAsync(b.p, a.p, bytes, cudaMemcpyDeviceToDevice, g_stream)) ||
        !CK(cudaEventRecord(g_ev1, g_stream)) || !CK(cudaEventSynchronize(g_ev1)) || !CK(cudaEventElapsedTime(&ms, g_ev0, g_ev1)))
      return NAN;
    v.push_back(ms);
  }
  const double best = *std::min_element(v.begin(), v.end()), med = median(v);
  g_copy_median = 2.0 * bytes / (med * 1e6);
  printf("device-to-device copy: 1 GiB, %d runs: best %.4f ms -> %.1f GB/s, median %.4f ms -> %.1f GB/s (read + write bytes);"
         " %% of copy below uses the best\n",
         n, best, 2.0 * bytes / (best * 1e6), med, g_copy_median);
  return 2.0 * bytes / (best * 1e6);
}

// ============================================================== records
const char *prec_name(size_t word) { return word == 8 ? "fp64" : "fp32"; }
template <class T> sg_precision prec_of() { return sizeof(T) == 8 ? SG_REAL64 : SG_REAL32; }
double tol_of(size_t word) { return word == 8 ? 1e-8 : 1e-3; }

void set_time(Rec &r, const Timed &t)
{
  r.reps = t.reps, r.calls = t.calls;
  if (!t.note.empty()) r.note = t.note;
  if (!t.ok) {
    r.status = "error", r.note = t.err;
    return;
  }
  r.us = t.us, r.us_min = t.us_min, r.us_max = t.us_max;
  r.gbps = r.floor_bytes / (t.us * 1e3);
  r.pct = 100.0 * r.gbps / g_copy_gbps;
}
// pass = the solver ran, its residual is small, no non-finite output, and (when compared)
// it agrees with the reference cuBLAS solution.
void set_check(Rec &r, const Check &c, double rel, size_t word)
{
  r.bwd = c.bwd, r.nonfinite = c.nonfinite, r.rel = rel;
  const double tol = tol_of(word);
  r.pass = c.ok && c.bwd <= tol && c.nonfinite == 0 && (!std::isfinite(rel) ? std::isnan(rel) : rel <= tol);
  if (!c.ok && r.note.empty()) r.note = "check failed to run";
}

// A cuBLAS solution is used as the reference only when it passed its own residual check.
bool ref_ok(const Check &c, size_t word) { return c.ok && c.bwd <= tol_of(word) && c.nonfinite == 0; }
const char *NO_REF = "not compared: no cuBLAS reference that passed its own check";

void finish_rec(Rec &r)
{
  if (r.status == "ok" && !r.pass) r.status = "FAIL";
  std::string shape = r.family == "batched-var" ? fmt("n=1..%-4lld nb=%-7lld", r.n, r.nbatch)
                      : r.family == "batched"   ? fmt("n=%-6lld  nb=%-7lld", r.n, r.nbatch)
                                                : fmt("n=%-6lld k=%-2lld x%-4lld", r.n, r.nrhs, r.copies);
  printf("  %-11s %s %s %s %-24s", r.family.c_str(), r.prec.c_str(), r.variant.c_str(), shape.c_str(), r.solver.c_str());
  if (r.status == "skipped") printf(" skipped (%s)\n", r.note.c_str());
  else if (r.status == "error") printf(" ERROR %s\n", r.note.c_str());
  else {
    std::string spd;
    if (std::isfinite(r.spd_trsv)) spd += fmt(" %5.2fx trsv", r.spd_trsv);
    if (std::isfinite(r.spd_trsm)) spd += fmt(" %5.2fx trsm", r.spd_trsm);
    if (std::isfinite(r.spd_batched)) spd += fmt(" %5.2fx batched", r.spd_batched);
    printf(" %10.2f us %8.1f GB/s %5.1f%%cp%s  bwd %.1e%s%s%s%s\n", r.us, r.gbps, r.pct, spd.c_str(), r.bwd,
           std::isfinite(r.rel) ? fmt(" diff %.1e", r.rel).c_str() : "", r.nonfinite > 0 ? fmt(" nonfinite %lld", r.nonfinite).c_str() : "",
           r.pass ? "" : "  FAIL", r.note.empty() ? "" : ("  [" + r.note + "]").c_str());
  }
  if (r.status == "FAIL" || r.status == "error")
    g_fails.push_back(fmt("%s %s %s n=%lld k=%lld %s: %s %s", r.family.c_str(), r.prec.c_str(), r.variant.c_str(), r.n, r.nrhs,
                          r.solver.c_str(), r.status.c_str(),
                          r.status == "error" ? r.note.c_str() : fmt("bwd %.1e diff %.1e nonfinite %lld", r.bwd, r.rel, r.nonfinite).c_str()));
  g_recs.push_back(r);
}
void skip_rec(Rec r, const std::string &why)
{
  r.status = "skipped", r.note = why;
  g_skips.push_back(fmt("%s %s %s n=%lld k=%lld: %s", r.family.c_str(), r.prec.c_str(), r.variant.c_str(), r.n, r.nrhs, why.c_str()));
  finish_rec(r);
}

void save_json();

// ============================================================== single system, 1..16 right-hand sides
// family "single" (nrhs = 1: cuBLAS trsv, cuBLAS trsm, ours) or "nrhs" (cuBLAS trsm, ours).
template <class T> void run_dense(const char *family, long long n, long long k, const std::vector<int> &vars)
{
  if (g_dead || vars.empty()) return;
  const size_t W = sizeof(T);
  const long long lda = n + O.lda_pad, slot = n * k;  // a slot: n x k right-hand sides, ld = n
  const double tri = (double)n * (n + 1) / 2 * W, storage = (double)lda * n * W, slot_bytes = (double)slot * W;
  const long long want = tri < O.copy_below ? (long long)std::ceil(O.rot_bytes / tri) : 1;
  const long long nx = std::max(1LL, std::min(4096LL, (long long)(O.pool_bytes / slot_bytes)));
  // memory: copies x storage, B pool + X pool, 3 verification vectors (n x k), 2 n-doubles
  const double fixed = 2.0 * nx * slot_bytes + 3.0 * slot_bytes + 2.0 * n * 8;
  const double avail = free_bytes() - MEM_MARGIN - fixed;
  Rec base;
  base.family = family, base.prec = prec_name(W), base.n = n, base.nrhs = k, base.lda = lda, base.slots = nx;
  base.matrix_bytes = tri, base.floor_bytes = tri + 2.0 * slot_bytes;
  const long long copies = std::min(want, (long long)std::floor(avail / storage));
  if (copies < 1 || n > SG_TRSV_MAX_N) {
    for (int v : vars) {
      Rec r = base;
      r.variant = VARS[v].name;
      skip_rec(r, copies < 1 ? fmt("needs %.2f GB of device memory, %.2f GB free", (storage + fixed + MEM_MARGIN) / 1e9, free_bytes() / 1e9)
                             : "n > SG_TRSV_MAX_N");
    }
    return;
  }
  base.copies = copies, base.touched_mb = copies * tri / MB;
  std::string mem_note;
  if (copies < want) mem_note = fmt("only %lld matrix copies fit: %.0f MB rotated (wanted %.0f)", copies, copies * tri / MB, O.rot_bytes / MB);
  if (copies * tri < 2.0 * G.l2) mem_note += (mem_note.empty() ? "" : "; ") + std::string("working set < 2x L2: L2-assisted");

  DBuf dA, dB, dX, dXr, dXv, dXt, dy, day;
  if (!dA.alloc((size_t)(copies * storage), "matrix copies") || !dB.alloc((size_t)(nx * slot_bytes), "rhs pool") ||
      !dX.alloc((size_t)(nx * slot_bytes), "solution pool") || !dXr.alloc((size_t)slot_bytes, "reference") ||
      !dXv.alloc((size_t)slot_bytes, "check") || !dXt.alloc((size_t)slot_bytes, "check") || !dy.alloc(n * 8, "check") ||
      !day.alloc(n * 8, "check"))
    return;
  T *A = dA.as<T>(), *B = dB.as<T>(), *X = dX.as<T>();
  const uint64_t seed = mix64(O.seed ^ mix64((uint64_t)n * 131 + (uint64_t)k * 7 + W));
  gen_vec_kernel<T><<<grid_for(nx * slot, 256), 256, 0, g_stream>>>(B, nx * slot, seed ^ 0xB);
  if (!CK(cudaGetLastError())) return;
  const size_t pool_b = (size_t)(nx * slot_bytes), slot_b = (size_t)slot_bytes;
  const long long astride = lda * n;
  auto restore = [&]() { return CK(cudaMemcpyAsync(X, B, pool_b, cudaMemcpyDeviceToDevice, g_stream)); };
  auto no_restore = []() { return true; };
  std::vector<long long> seg_off = {0}, seg_len = {slot};

  int cur_upper = -1;
  for (int v : vars) {
    if (g_dead) return;
    const Variant &V = VARS[v];
    base.variant = V.name;
    const int upper = V.uplo == SG_UPPER;
    if (upper != cur_upper) {  // (re)generate the copies for this triangle; the other one is NaN
      for (long long c = 0; c < copies; c++)
        gen_single_kernel<T><<<grid_for(astride, 256), 256, 0, g_stream>>>(A + c * astride, n, lda, upper, seed, (uint64_t)c);
      if (!CK(cudaGetLastError()) || !CK(cudaStreamSynchronize(g_stream))) return;
      cur_upper = upper;
    }
    // --- the reference solution (cuBLAS trsv for one column, trsm for several), its check
    const bool one = k == 1;
    std::vector<T> href, hx;
    bool have_ref = false;
    auto cb_call = [&](bool use_trsv, T *A0, T *x) -> std::string {
      return cb_err(use_trsv ? Cb<T>::trsv(V.uplo, V.trans, n, A0, lda, x) : Cb<T>::trsm(V.uplo, V.trans, n, k, A0, lda, x, n));
    };
    std::vector<Rec> recs;
    for (int s = 0; s < (one ? 2 : 1); s++) {  // s = 0: trsv (one column) or trsm; s = 1: trsm
      const bool use_trsv = one && s == 0;
      Rec r = base;
      r.kind = "cublas", r.solver = use_trsv ? "cublas:trsv" : "cublas:trsm";
      T *xr = s == 0 ? dXr.as<T>() : dXt.as<T>();
      std::string e;
      if (!CK(cudaMemcpyAsync(xr, B, slot_b, cudaMemcpyDeviceToDevice, g_stream))) e = "copy failed";
      if (e.empty()) e = cb_call(use_trsv, A, xr);
      if (e.empty() && !CK(cudaStreamSynchronize(g_stream))) e = "CUDA error after the reference solve";
      if (!e.empty()) {
        r.status = "error", r.note = e;
        probe_device();
        recs.push_back(r);
        continue;
      }
      Check c = check_single<T>(V.uplo, V.trans, n, A, lda, xr, n, B, n, k, dy.as<double>(), day.as<double>());
      double rel = NAN;
      if (s == 0) have_ref = ref_ok(c, W) && to_host(href, xr, slot);
      else if (have_ref && to_host(hx, xr, slot)) rel = rel_diff(hx, href, seg_off, seg_len);
      set_check(r, c, rel, W);
      Timed t = time_calls(restore, [&](long long i) { return cb_call(use_trsv, A + (i % copies) * astride, X + (i % nx) * slot); });
      set_time(r, t);
      recs.push_back(r);
    }
    // --- ours, through either entry point: poisoned output, check against the reference, then
    // timed (B pool -> X pool); call(c, b, x) solves with copy c of A
    auto run_ours = [&](Rec &r, std::string e, auto call) {
      if (e.empty() && !CK(cudaMemsetAsync(dXv.p, 0xFF, slot_b, g_stream))) e = "poison failed";  // NaN in both precisions
      if (e.empty()) e = call(0, B, dXv.as<T>());
      if (e.empty() && !CK(cudaStreamSynchronize(g_stream))) e = "CUDA error after the solve";
      if (!e.empty()) {
        r.status = "error", r.note = e;
        probe_device();
        return;
      }
      Check c = check_single<T>(V.uplo, V.trans, n, A, lda, dXv.as<T>(), n, B, n, k, dy.as<double>(), day.as<double>());
      double rel = have_ref && to_host(hx, dXv.as<T>(), slot) ? rel_diff(hx, href, seg_off, seg_len) : NAN;
      set_check(r, c, rel, W);
      if (!have_ref) r.note = NO_REF;
      Timed t = timed_deferred([&] { return time_calls(no_restore, [&](long long i) { return call(i % copies, B + (i % nx) * slot, X + (i % nx) * slot); }); });
      set_time(r, t);
      for (const Rec &c2 : recs)
        if (std::isfinite(c2.us) && std::isfinite(r.us) && c2.kind == "cublas") (c2.solver == "cublas:trsv" ? r.spd_trsv : r.spd_trsm) = c2.us / r.us;
    };
    sg_report rep;
    memset(&rep, 0, sizeof rep);
    {
      Rec r = base;
      r.kind = "ours", r.solver = "ours:sg_trsv_cuda";
      run_ours(r, std::string(), [&](long long c, const T *b, T *x) {
        sg_trsv_problem P;
        P.prec = prec_of<T>(), P.uplo = V.uplo, P.trans = V.trans, P.diag = SG_NONUNIT, P.n = n, P.nrhs = k;
        P.A = A + c * astride, P.lda = lda, P.B = b, P.ldb = n, P.X = x, P.ldx = n;
        return sg_err(sg_trsv_cuda(g_ctx, &P, 0.0, &rep), rep);
      });
      recs.push_back(r);
    }
    // --- ours with a plan per matrix copy (sg_trsv_plan_create: pivots checked and, where the
    // cluster kernels run, the diagonal blocks inverted once), then the plan's solves
    if (one) {
      Rec r = base;
      r.kind = "ours-plan", r.solver = "ours:sg_trsv_plan_solve";
      std::vector<sg_trsv_plan> plans((size_t)copies, nullptr);
      std::string e;
      if (!CK(cudaEventRecord(g_ev0, g_stream))) e = "event record failed";
      for (long long c = 0; c < copies && e.empty(); c++) {
        sg_trsv_problem P;
        memset(&P, 0, sizeof P);
        P.prec = prec_of<T>(), P.uplo = V.uplo, P.trans = V.trans, P.diag = SG_NONUNIT, P.n = n, P.nrhs = 1;
        P.A = A + c * astride, P.lda = lda;
        e = sg_err(sg_trsv_plan_create(g_ctx, &P, 0.0, &plans[(size_t)c], &rep), rep);
      }
      float ms = 0;
      if (e.empty() && (!CK(cudaEventRecord(g_ev1, g_stream)) || !CK(cudaEventSynchronize(g_ev1)) || !CK(cudaEventElapsedTime(&ms, g_ev0, g_ev1)))) e = "event timing failed";
      if (e.empty()) r.plan_us = 1e3 * ms / (double)copies;
      run_ours(r, e, [&](long long c, const T *b, T *x) { return sg_err(sg_trsv_plan_solve(g_ctx, plans[(size_t)c], 1, b, n, x, n, &rep), rep); });
      if (r.status != "error") r.note += fmt("%splan create %.1f us per matrix", r.note.empty() ? "" : "; ", r.plan_us);
      for (sg_trsv_plan &pl : plans) sg_trsv_plan_destroy(&pl);
      recs.push_back(r);
    }
    for (Rec &r : recs) {
      if (!mem_note.empty()) r.note += (r.note.empty() ? "" : "; ") + mem_note;
      finish_rec(r);
    }
    save_json();
  }
}

// ============================================================== batched small systems
struct BatchLayout {  // where system s lives (elements) in the A buffer and in one rhs set
  long long nbatch = 0, a_total = 0, x_total = 0;
  int n = 0;                  // uniform order, or the largest order
  std::vector<int> nv;        // per-system orders (variable run), empty when uniform
  std::vector<long long> aoff, xoff;
};

// Uniform n: systems back to back (lda = n). Variable: random orders 1..nmax, each system
// aligned to 256 bytes, lda = ldx = n_s; as many systems as give O.batch_bytes of matrix.
template <class T> BatchLayout make_layout(int n, bool variable, uint64_t seed)
{
  BatchLayout L;
  const size_t W = sizeof(T);
  const long long al = 256 / W;
  double tri = 0;
  for (long long s = 0; tri < O.batch_bytes; s++) {
    const int ns = variable ? 1 + (int)(mix64(seed ^ mix64((uint64_t)s)) % (uint64_t)n) : n;
    if (variable) L.nv.push_back(ns);
    L.aoff.push_back(L.a_total), L.xoff.push_back(L.x_total);
    L.a_total += variable ? (ns * (long long)ns + al - 1) / al * al : (long long)ns * ns;
    L.x_total += variable ? (ns + al - 1) / al * al : ns;
    tri += (double)ns * (ns + 1) / 2 * W;
    L.nbatch = s + 1;
  }
  L.n = n;
  return L;
}

// ============================================================== read-only references (batched, uniform n)
// Kernels that solve nothing but move the bytes of a batched solve of the LOWER triangle
// (n(n+1)/2 matrix words read, b read, x written, per system), to tell what the access pattern
// itself allows (bench/trsv/README.md, "read-only references"):
//  - rowsum: a G-lane segment per system (G = min(n, 32); lane l owns rows r*G + l), walking
//    the triangle column by column like the solvers (column j: rows j..n-1, contiguous in A)
//    but with no dependence between columns: x_i = b_i + sum_j A(i,j). Loads of 8 columns are
//    in flight per lane (unrolled), no shared memory, ~40 registers: the pattern of
//    trsv_batch_stream_kernel without its substitution chain.
//  - triangle sweep (the ceiling): the whole grid sweeps the matrix array in address order, 16-byte loads, and reads
//    a vector only when it holds a triangle element (the same 32-byte sectors as the solvers
//    read); then x = b by 16-byte vectors. The best order for DRAM: every warp's load is 512
//    contiguous bytes and neighbouring warps read neighbouring addresses.
//  - square sweep: the sweep reading every element (n^2 words: the full storage), bytes counted as
//    moved. It calibrates a read-mostly stream against the copy bandwidth.
//  - triangle sweep x8: the triangle sweep with 8 of a thread's loads issued before any is used
//    (U = 8). The plain sweep leaves each thread one load in flight, and about half of its
//    iterations load nothing (upper-triangle vectors), so it has half the square sweep's bytes in
//    flight: if the x8 row is faster, the plain sweep is latency-bound and is no ceiling.
template <class T, int NR>
__global__ void __launch_bounds__(128) read_rowsum_kernel(const T *__restrict__ A, const T *__restrict__ B, T *__restrict__ X, long long nb, int n)
{
  const int G = n < 32 ? n : 32, lane = threadIdx.x & 31, l = lane % G, seg = lane / G, spw = 32 / G;
  const long long s = ((long long)blockIdx.x * 4 + (threadIdx.x >> 5)) * spw + seg;
  if (seg >= spw || s >= nb) return;
  const T *a = A + s * (long long)n * n;
  T acc[NR];
#pragma unroll
  for (int r = 0; r < NR; r++) acc[r] = T(0);
#pragma unroll 8
  for (int j = 0; j < n; j++) {
#pragma unroll
    for (int r = 0; r < NR; r++) {
      const int e = r * G + l;
      if (e >= j && e < n) acc[r] += a[e + (long long)j * n];
    }
  }
#pragma unroll
  for (int r = 0; r < NR; r++) {
    const int e = r * G + l;
    if (e < n) X[s * n + e] = B[s * n + e] + acc[r];
  }
}
// One round of a sweep: U 16-byte vectors v0 + u*stride of the n x n matrices at a (n = 2^lgn,
// nvec vectors in all) issued before any is used; with tri, vectors holding no lower-triangle
// element are skipped. Their sum goes to acc.
template <class T, int U, class VT>
__device__ __forceinline__ void sweep_round(const VT *a, long long v0, long long stride, long long nvec, int lgn, bool tri, T &acc)
{
  constexpr int V = 16 / sizeof(T);
  const int     n = 1 << lgn;
  VT            w[U];
#pragma unroll
  for (int u = 0; u < U; u++) {
    const long long v = v0 + u * stride, k = v * V;
    const int       i = (int)(k & (n - 1)), j = (int)((k >> lgn) & (n - 1));
    if (v < nvec && (!tri || i + V - 1 >= j)) w[u] = __ldg(a + v);
    else w[u] = VT{};
  }
#pragma unroll
  for (int u = 0; u < U; u++) {
    const T *e = (const T *)&w[u];
#pragma unroll
    for (int q = 0; q < V; q++) acc += e[q];
  }
}
template <class T, int U>
__global__ void __launch_bounds__(256) read_sweep_kernel(const T *__restrict__ A, const T *__restrict__ B, T *__restrict__ X, long long nb, int lgn,
                                                        bool tri, unsigned long long *sink)
{
  constexpr int V = 16 / sizeof(T);
  using VT = typename std::conditional<sizeof(T) == 8, double2, float4>::type;
  const long long nvec = (nb << (2 * lgn)) / V, stride = (long long)gridDim.x * blockDim.x;
  T acc = T(0);
  for (long long v0 = (long long)blockIdx.x * blockDim.x + threadIdx.x; v0 < nvec; v0 += U * stride)
    sweep_round<T, U>((const VT *)A, v0, stride, nvec, lgn, tri, acc);
  const long long xvec = (nb << lgn) / V;
  for (long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x; v < xvec; v += stride) ((VT *)X)[v] = __ldg((const VT *)B + v);
  if (acc == T(1.25e-7)) atomicAdd(sink, 1ull);  // keeps the sums (practically never true)
}

// system sweep (a question for a CTA-per-system solver): each CTA reads whole systems, one at a
// time (CTA b: systems b, b + grid, ...), the system's storage in address order by 16-byte vectors
// with U loads in flight per thread, vectors holding no triangle element skipped (the triangle
// sweep's sectors), then x = b. With BPS CTAs per SM, BPS x SMs systems are read at once, each a
// sequential stream (the ring kernel reads one stream per warp: ~2000-3900 at once).
template <class T, int U>
__global__ void __launch_bounds__(256) read_sys_kernel(const T *__restrict__ A, const T *__restrict__ B, T *__restrict__ X, long long nb, int lgn,
                                                      unsigned long long *sink)
{
  constexpr int V = 16 / sizeof(T);
  using VT = typename std::conditional<sizeof(T) == 8, double2, float4>::type;
  const int       n = 1 << lgn;
  const long long nvec = (1ll << (2 * lgn)) / V;
  T               acc = T(0);
  for (long long s = blockIdx.x; s < nb; s += gridDim.x) {
    const VT *a = (const VT *)(A + (s << (2 * lgn)));
    for (long long v0 = threadIdx.x; v0 < nvec; v0 += U * blockDim.x) sweep_round<T, U>(a, v0, (long long)blockDim.x, nvec, lgn, true, acc);
    for (int e = threadIdx.x; e < n; e += blockDim.x) X[(s << lgn) + e] = B[(s << lgn) + e];
  }
  if (acc == T(1.25e-7)) atomicAdd(sink, 1ull);
}

template <class T> void run_reads(const Rec &base, const T *A, const T *B, T *X, long long nb, int n)
{
  const size_t W = sizeof(T);
  int lgn = 0;
  while ((1 << lgn) < n) lgn++;
  const bool pow2 = (1 << lgn) == n && n * W % 16 == 0;
  static const char *const sysnm[4] = {"read:system-sweep-b1", "read:system-sweep-b2", "read:system-sweep-b4", "read:system-sweep-b8"};
  for (int c = 0; c < 8 && !g_dead; c++) {
    Rec r = base;
    r.kind = "read", r.solver = c == 0 ? "read:rowsum" : c == 1 ? "read:triangle-sweep" : c == 2 ? "read:square-sweep" : c == 3 ? "read:triangle-sweep-x8" : sysnm[c - 4];
    r.note = c == 2 ? "read-only bound, no solve: every element of the square storage (bytes counted as moved)" : "read-only bound, no solve: the lower triangle's bytes";
    if (c == 2) r.floor_bytes = (double)nb * ((double)n * n + 2.0 * n) * W;
    r.pass = true;
    if (c > 0 && !pow2) {
      skip_rec(r, "the sweeps need a power-of-two order");
      continue;
    }
    const int spb = 4 * (32 / std::min(n, 32));  // systems per block of the rowsum kernel
    auto call = [&](long long) -> std::string {
      if (c >= 4) read_sys_kernel<T, 8><<<(unsigned)(G.sms * (1 << (c - 4))), 256, 0, g_stream>>>(A, B, X, nb, lgn, g_scr);
      else if (c == 3) read_sweep_kernel<T, 8><<<(unsigned)(G.sms * 8), 256, 0, g_stream>>>(A, B, X, nb, lgn, true, g_scr);
      else if (c > 0) read_sweep_kernel<T, 1><<<(unsigned)(G.sms * 8), 256, 0, g_stream>>>(A, B, X, nb, lgn, c == 1, g_scr);
      else {
        const unsigned grid = (unsigned)((nb + spb - 1) / spb);
        if (n <= 32) read_rowsum_kernel<T, 1><<<grid, 128, 0, g_stream>>>(A, B, X, nb, n);
        else if (n <= 64) read_rowsum_kernel<T, 2><<<grid, 128, 0, g_stream>>>(A, B, X, nb, n);
        else if (n <= 128) read_rowsum_kernel<T, 4><<<grid, 128, 0, g_stream>>>(A, B, X, nb, n);
        else if (n <= 256) read_rowsum_kernel<T, 8><<<grid, 128, 0, g_stream>>>(A, B, X, nb, n);
        else read_rowsum_kernel<T, 16><<<grid, 128, 0, g_stream>>>(A, B, X, nb, n);
      }
      return "";
    };
    set_time(r, time_calls([] { return true; }, call));
    finish_rec(r);
  }
}

template <class T> void run_batched(int n, bool variable, const std::vector<int> &vars)
{
  if (g_dead || vars.empty()) return;
  const size_t W = sizeof(T);
  const uint64_t seed = mix64(O.seed ^ mix64((uint64_t)n * 977 + (variable ? 1 : 0) * 31 + W));
  BatchLayout L = make_layout<T>(n, variable, seed);
  const long long nb = L.nbatch;
  double tri = 0, xb = 0;
  for (long long s = 0; s < nb; s++) {
    const double ns = variable ? L.nv[s] : n;
    tri += ns * (ns + 1) / 2 * W, xb += 2 * ns * W;
  }
  const double set_bytes = (double)L.x_total * W;
  long long nsets = std::max(1LL, std::min(64LL, (long long)(O.bpool_bytes / set_bytes)));
  const double fixed = (double)L.a_total * W + 2.0 * set_bytes + (double)nb * 8 * 4 + (double)nb * 4;
  Rec base;
  base.family = variable ? "batched-var" : "batched", base.prec = prec_name(W), base.n = n, base.nbatch = nb, base.lda = variable ? 0 : n;
  base.matrix_bytes = tri, base.floor_bytes = tri + xb, base.touched_mb = tri / MB;
  const double avail = free_bytes() - MEM_MARGIN - fixed;
  nsets = std::min(nsets, (long long)std::floor(avail / (set_bytes + nb * 8.0)));
  if (nsets < 1) {
    for (int v : vars) {
      Rec r = base;
      r.variant = VARS[v].name;
      skip_rec(r, fmt("needs %.2f GB of device memory, %.2f GB free", (fixed + set_bytes + MEM_MARGIN) / 1e9, free_bytes() / 1e9));
    }
    return;
  }
  base.slots = nsets;
  DBuf dA, dB, dX, dPA, dPB, dPX, dOff, dNv, dPAs, dPXs;
  if (!dA.alloc(L.a_total * W, "batch matrices") || !dB.alloc((size_t)set_bytes, "batch rhs") ||
      !dX.alloc((size_t)(nsets * set_bytes), "batch solution sets") || !dPA.alloc(nb * 8, "pointers") || !dPB.alloc(nb * 8, "pointers") ||
      !dPX.alloc(nsets * nb * 8, "pointers"))
    return;
  T *A = dA.as<T>(), *B = dB.as<T>(), *X = dX.as<T>();
  {  // pointer arrays, orders, offsets
    std::vector<T *> pa(nb), pb(nb), px(nsets * nb);
    for (long long s = 0; s < nb; s++) {
      pa[s] = A + L.aoff[s], pb[s] = B + L.xoff[s];
      for (long long q = 0; q < nsets; q++) px[q * nb + s] = X + q * L.x_total + L.xoff[s];
    }
    if (!to_dev(dPA.p, pa.data(), nb * 8) || !to_dev(dPB.p, pb.data(), nb * 8) ||
        !to_dev(dPX.p, px.data(), nsets * nb * 8))
      return;
    if (variable) {
      if (!dOff.alloc(nb * 8, "offsets") || !dNv.alloc(nb * 4, "orders") ||
          !to_dev(dOff.p, L.aoff.data(), nb * 8) ||
          !to_dev(dNv.p, L.nv.data(), nb * 4))
        return;
    }
  }
  // cuBLAS for variable orders: the systems grouped by order (one trsmBatched call per order)
  struct Group {
    int n;
    long long first, count;
  };
  std::vector<Group> groups;
  if (variable) {
    std::vector<long long> idx(nb);
    std::iota(idx.begin(), idx.end(), 0LL);
    std::stable_sort(idx.begin(), idx.end(), [&](long long a, long long b) { return L.nv[a] < L.nv[b]; });
    std::vector<T *> pa(nb), px(nsets * nb);
    for (long long p = 0; p < nb; p++) {
      const long long s = idx[p];
      pa[p] = A + L.aoff[s];
      for (long long q = 0; q < nsets; q++) px[q * nb + p] = X + q * L.x_total + L.xoff[s];
      if (groups.empty() || groups.back().n != L.nv[s]) groups.push_back({L.nv[s], p, 0});
      groups.back().count++;
    }
    if (!dPAs.alloc(nb * 8, "pointers") || !dPXs.alloc(nsets * nb * 8, "pointers") ||
        !to_dev(dPAs.p, pa.data(), nb * 8) ||
        !to_dev(dPXs.p, px.data(), nsets * nb * 8))
      return;
  }
  gen_vec_kernel<T><<<grid_for(L.x_total, 256), 256, 0, g_stream>>>(B, L.x_total, seed ^ 0xB);
  if (!CK(cudaGetLastError())) return;
  T *const *PA = dPA.as<T *>(), *const *PB = dPB.as<T *>(), *const *PX = dPX.as<T *>();
  const int *NV = variable ? dNv.as<int>() : nullptr;
  const size_t set_b = (size_t)set_bytes;
  auto restore_all = [&]() {
    for (long long q = 0; q < nsets; q++)
      if (!CK(cudaMemcpyAsync(X + q * L.x_total, B, set_b, cudaMemcpyDeviceToDevice, g_stream))) return false;
    return true;
  };
  auto restore0 = [&]() { return CK(cudaMemcpyAsync(X, B, set_b, cudaMemcpyDeviceToDevice, g_stream)); };
  std::vector<long long> seg_len(nb);
  for (long long s = 0; s < nb; s++) seg_len[s] = variable ? L.nv[s] : n;

  int cur_upper = -1;
  bool reads_done = false;
  for (int v : vars) {
    if (g_dead) return;
    const Variant &V = VARS[v];
    base.variant = V.name;
    const int upper = V.uplo == SG_UPPER;
    if (upper != cur_upper) {
      gen_batch_kernel<T><<<grid_for(nb * 256, 256, 16), 256, 0, g_stream>>>(A, variable ? dOff.as<long long>() : nullptr, nb, n, n, NV, upper, seed);
      if (!CK(cudaGetLastError()) || !CK(cudaStreamSynchronize(g_stream))) return;
      cur_upper = upper;
    }
    // cuBLAS first (the reference solution), then ours; set q of the pool for call i is i % nsets
    auto cublas_call = [&](long long q) -> std::string {
      if (!variable) return cb_err(Cb<T>::trsm_batched(V.uplo, V.trans, n, PA, n, PX + q * nb, n, (int)nb));
      for (const Group &g : groups) {
        std::string e = cb_err(Cb<T>::trsm_batched(V.uplo, V.trans, g.n, dPAs.as<T *>() + g.first, g.n,
                                                   dPXs.as<T *>() + q * nb + g.first, g.n, (int)g.count));
        if (!e.empty()) return e;
      }
      return "";
    };
    sg_report rep;
    memset(&rep, 0, sizeof rep);
    auto ours_call = [&](long long q) -> std::string {
      sg_trsv_batch Bt;
      Bt.prec = prec_of<T>(), Bt.uplo = V.uplo, Bt.trans = V.trans, Bt.diag = SG_NONUNIT, Bt.nbatch = nb, Bt.n = n;
      Bt.nv = NV, Bt.nrhs = 1, Bt.A = (const void *const *)PA, Bt.lda = n, Bt.ldav = NV;
      Bt.X = (void *const *)(PX + q * nb), Bt.ldx = n, Bt.ldxv = NV;
      return sg_err(sg_trsv_batch_solve_cuda(g_ctx, &Bt, 0.0, &rep), rep);
    };
    std::vector<T> href, hx;
    bool have_ref = false;
    Rec rc = base, ro = base;
    rc.kind = "cublas", rc.solver = variable ? "cublas:trsmBatched(grouped)" : "cublas:trsmBatched";
    ro.kind = "ours", ro.solver = "ours:sg_trsv_batch_solve_cuda";
    if (variable) rc.note = fmt("%zu trsmBatched calls per solve (one per distinct order)", groups.size());
    for (int who = 0; who < 2 && !g_dead; who++) {
      Rec &r = who ? ro : rc;
      auto call = [&](long long q) { return who ? ours_call(q) : cublas_call(q); };
      std::string e = restore0() ? call(0) : "restore failed";
      if (e.empty() && !CK(cudaStreamSynchronize(g_stream))) e = "CUDA error after the solve";
      if (!e.empty()) {
        r.status = "error", r.note = e;
        probe_device();
        continue;
      }
      Check c = check_batch<T>(V.uplo, V.trans, nb, n, NV, n, PA, PX, PB);
      double rel = NAN;
      if (who == 0) have_ref = ref_ok(c, W) && to_host(href, X, L.x_total);
      else if (have_ref && to_host(hx, X, L.x_total)) rel = rel_diff(hx, href, L.xoff, seg_len);
      set_check(r, c, rel, W);
      if (who == 1 && !have_ref) r.note = NO_REF;
      Timed t = who ? timed_deferred([&] { return time_calls(restore_all, [&](long long i) { return call(i % nsets); }); })
                    : time_calls(restore_all, [&](long long i) { return call(i % nsets); });
      set_time(r, t);
    }
    if (std::isfinite(rc.us) && std::isfinite(ro.us)) ro.spd_batched = rc.us / ro.us;
    finish_rec(rc);
    finish_rec(ro);
    if (O.reads && !variable && !upper && !reads_done) {  // once per (precision, n), on the lower triangle
      run_reads<T>(base, A, B, X, nb, n);
      reads_done = true;
    }
    save_json();
  }
}

// ============================================================== output
std::string jlist(const std::vector<long long> &v)
{
  std::string s;
  for (long long x : v) s += (s.empty() ? "" : ", ") + std::to_string(x);
  return "[" + s + "]";
}

void save_json()
{
  if (g_out.empty()) return;
  size_t sl = g_out.rfind('/');
  if (sl != std::string::npos) mkdir_p(g_out.substr(0, sl));
  std::string tmp = g_out + ".tmp";
  FILE *f = fopen(tmp.c_str(), "w");
  if (!f) {
    printf("!! cannot write %s: %s\n", tmp.c_str(), strerror(errno));
    return;
  }
  fprintf(f, "{\n \"family\": \"trsv\",\n \"device\": %s,\n \"date\": %s,\n \"commit\": %s,\n", jstr(G.name).c_str(),
          jstr(g_date).c_str(), jstr(O.commit).c_str());
  fprintf(f, " \"sm_count\": %d,\n \"l2_bytes\": %lld,\n \"mem_bytes\": %lld,\n \"cc\": \"%d.%d\",\n", G.sms, G.l2, G.mem, G.ccmaj, G.ccmin);
  fprintf(f, " \"cuda_runtime\": %d,\n \"cuda_driver\": %d,\n \"cublas_version\": %d,\n", G.rt, G.drv, G.cublas);
  fprintf(f, " \"l2_fetch_bytes\": %d,\n \"l2_fetch_note\": \"the device's L2 fetch granularity during the run (cudaLimitMaxL2FetchGranularity; set by --l2-fetch through "
             "sg_ctx_set_l2_fetch, device-wide: cuBLAS ran under it too)\",\n", G.l2_fetch);
  fprintf(f, " \"copy_gbps\": %s,\n \"copy_gbps_median\": %s,\n", jnum(g_copy_gbps).c_str(), jnum(g_copy_median).c_str());
  fprintf(f, " \"floor\": \"word * (n(n+1)/2 + 2 n nrhs) bytes per system: the triangle read once, b read once, x written once\",\n");
  fprintf(f, " \"timing\": \"per call: median over reps measurements of (event time of `calls` back-to-back calls) / calls; matrices "
             "rotated over `copies` copies, right-hand sides over `slots` slots\",\n");
  fprintf(f,
          " \"options\": {\"quick\": %s, \"reps\": %d, \"target_ms\": %g, \"lda_pad\": %lld, \"seed\": %llu, \"n\": %s, \"batch_n\": %s, "
          "\"nrhs_n\": %s, \"rot_mb\": %g, \"batch_mb\": %g},\n",
          O.quick ? "true" : "false", O.reps, O.target_ms, O.lda_pad, O.seed, jlist(O.ns).c_str(), jlist(O.bns).c_str(),
          jlist(O.rhs_ns).c_str(), O.rot_bytes / MB, O.batch_bytes / MB);
  fprintf(f, " \"complete\": %s,\n \"cases\": [\n", g_dead ? "false" : "true");
  for (size_t i = 0; i < g_recs.size(); i++) {
    const Rec &r = g_recs[i];
    fprintf(f,
            "  {\"family\": %s, \"precision\": %s, \"variant\": %s, \"uplo\": %s, \"trans\": %s, \"kind\": %s, \"solver\": %s, "
            "\"n\": %lld, \"nrhs\": %lld, \"nbatch\": %lld, \"lda\": %lld, \"matrix_bytes\": %.0f, \"floor_bytes\": %.0f, "
            "\"copies\": %lld, \"slots\": %lld, \"touched_mb\": %s, \"calls\": %lld, \"reps\": %d, \"us\": %s, \"us_min\": %s, "
            "\"us_max\": %s, \"gbps\": %s, \"pct_copy\": %s, \"speedup_vs_cublas_trsv\": %s, \"speedup_vs_cublas_trsm\": %s, "
            "\"speedup_vs_cublas_trsm_batched\": %s, \"rel_diff_vs_cublas\": %s, \"bwd_err\": %s, \"nonfinite\": %lld, "
            "\"plan_create_us\": %s, \"pass\": %s, \"status\": %s, \"note\": %s}%s\n",
            jstr(r.family).c_str(), jstr(r.prec).c_str(), jstr(r.variant).c_str(), jstr(r.variant.size() == 2 ? (r.variant[0] == 'L' ? "lower" : "upper") : "").c_str(),
            jstr(r.variant.size() == 2 ? r.variant.substr(1) : "").c_str(), jstr(r.kind).c_str(), jstr(r.solver).c_str(), r.n, r.nrhs, r.nbatch, r.lda,
            r.matrix_bytes, r.floor_bytes, r.copies, r.slots, jnum(r.touched_mb).c_str(), r.calls, r.reps, jnum(r.us).c_str(),
            jnum(r.us_min).c_str(), jnum(r.us_max).c_str(), jnum(r.gbps).c_str(), jnum(r.pct).c_str(), jnum(r.spd_trsv).c_str(),
            jnum(r.spd_trsm).c_str(), jnum(r.spd_batched).c_str(), jnum(r.rel).c_str(), jnum(r.bwd).c_str(), r.nonfinite,
            jnum(r.plan_us).c_str(), r.pass ? "true" : "false", jstr(r.status).c_str(), jstr(r.note).c_str(), i + 1 < g_recs.size() ? "," : "");
  }
  fprintf(f, " ],\n \"failures\": [");
  for (size_t i = 0; i < g_fails.size(); i++) fprintf(f, "%s%s", i ? ", " : "", jstr(g_fails[i]).c_str());
  fprintf(f, "],\n \"skipped\": [");
  for (size_t i = 0; i < g_skips.size(); i++) fprintf(f, "%s%s", i ? ", " : "", jstr(g_skips[i]).c_str());
  fprintf(f, "]\n}\n");
  bool ok = !ferror(f);
  ok = (fclose(f) == 0) && ok;
  if (!ok || rename(tmp.c_str(), g_out.c_str()) != 0) printf("!! writing %s failed: %s\n", g_out.c_str(), strerror(errno));
}

const Rec *find(const std::string &fam, const std::string &prec, const std::string &var, long long n, long long k, const std::string &solver)
{
  for (const Rec &r : g_recs)
    if (r.family == fam && r.prec == prec && r.variant == var && r.n == n && r.nrhs == k && r.solver == solver) return &r;
  return nullptr;
}
// "ours%/lib% spd" for a summary cell; "-" parts when unmeasured, "!" after a failed check
std::string cell(const Rec *o, const Rec *c, double spd, int w)
{
  auto pc = [](const Rec *r) -> std::string {
    if (!r) return "-";
    if (r->status == "skipped") return "skip";
    if (!std::isfinite(r->pct)) return "err";
    return fmt("%.1f%s", r->pct, r->pass ? "" : "!");
  };
  std::string s = pc(o) + "/" + pc(c) + (std::isfinite(spd) ? fmt(" %.2fx", spd) : "");
  return fmt("%-*s", w, s.c_str());
}

void print_summary()
{
  printf("\n== SUMMARY %s | %s | copy %.0f GB/s (best; median %.0f) | L2 fetch %d B | floor word*(n(n+1)/2 + 2n*nrhs) per system | "
         "cells: ours %%copy / cuBLAS %%copy, speedup = cuBLAS time / ours ('!' = failed check)\n",
         G.name.c_str(), O.commit.empty() ? "commit ?" : O.commit.c_str(), g_copy_gbps, g_copy_median, G.l2_fetch);
  std::vector<std::string> precs;
  if (O.prec_d) precs.push_back("fp64");
  if (O.prec_s) precs.push_back("fp32");
  auto header = [&](const char *what, const std::vector<int> &vars) {
    printf("%s\n%-4s %-7s", what, "prec", "n");
    for (int v : vars) printf(" | %-25s", VARS[v].name);
    printf("\n");
  };
  if (O.single) {
    // one table per solver of ours: cells "ours% / cublas-trsv% speedup" and a suffix of the record
    auto table = [&](const char *what, const char *solver, std::string (*suffix)(const Rec *)) {
      header(what, O.vars);
      for (auto &p : precs)
        for (long long n : O.ns) {
          printf("%-4s %-7lld", p.c_str(), n);
          for (int v : O.vars) {
            const Rec *o = find("single", p, VARS[v].name, n, 1, solver);
            const Rec *c = find("single", p, VARS[v].name, n, 1, "cublas:trsv");
            std::string s = cell(o, c, o ? o->spd_trsv : NAN, 0) + (o ? suffix(o) : std::string());
            printf(" | %-25s", s.c_str());
          }
          printf("\n");
        }
    };
    table("single trsv, nrhs=1: ours/cublas-trsv %, speedup vs trsv; [speedup vs trsm with one column]", "ours:sg_trsv_cuda",
          [](const Rec *o) { return std::isfinite(o->spd_trsm) ? fmt(" [%.2fx]", o->spd_trsm) : std::string(); });
    table("single trsv with a plan (sg_trsv_plan_solve; create once per matrix, its time in brackets): ours/cublas-trsv %, speedup vs trsv",
          "ours:sg_trsv_plan_solve", [](const Rec *o) { return std::isfinite(o->plan_us) ? fmt(" [%.0fus]", o->plan_us) : std::string(); });
  }
  if (O.nrhs) {
    printf("multiple rhs: ours/cublas-trsm %%, speedup vs trsm with the same columns\n%-4s %-7s %-3s", "prec", "n", "k");
    for (int v : O.rhs_vars) printf(" | %-21s", VARS[v].name);
    printf("\n");
    for (auto &p : precs)
      for (long long n : O.rhs_ns)
        for (int k : O.rhs_ks) {
          printf("%-4s %-7lld %-3d", p.c_str(), n, k);
          for (int v : O.rhs_vars) {
            const Rec *o = find("nrhs", p, VARS[v].name, n, k, "ours:sg_trsv_cuda"), *c = find("nrhs", p, VARS[v].name, n, k, "cublas:trsm");
            printf(" | %s", cell(o, c, o ? o->spd_trsm : NAN, 21).c_str());
          }
          printf("\n");
        }
  }
  if (O.batched) {
    header("batched (one column): ours/cublas-trsmBatched %, speedup", O.vars);
    for (auto &p : precs) {
      for (long long n : O.bns) {
        printf("%-4s %-7lld", p.c_str(), n);
        for (int v : O.vars) {
          const Rec *o = find("batched", p, VARS[v].name, n, 1, "ours:sg_trsv_batch_solve_cuda");
          const Rec *c = find("batched", p, VARS[v].name, n, 1, "cublas:trsmBatched");
          printf(" | %s", cell(o, c, o ? o->spd_batched : NAN, 25).c_str());
        }
        printf("\n");
      }
      // what the issue's target (3x trsmBatched) asks of ours: 3 x cuBLAS's % of copy, the same floor bytes
      for (long long n : O.bns) {
        std::string line;
        for (int v : O.vars) {
          const Rec *c = find("batched", p, VARS[v].name, n, 1, "cublas:trsmBatched");
          line += fmt(" | %-25s", c && std::isfinite(c->pct) ? fmt("3x needs %.1f%%cp", 3 * c->pct).c_str() : "-");
        }
        printf("%-4s %-7lld%s\n", p.c_str(), n, line.c_str());
      }
      printf("%-4s 1..512 ", p.c_str());
      for (int v : O.vars) {
        const Rec *o = find("batched-var", p, VARS[v].name, 512, 1, "ours:sg_trsv_batch_solve_cuda");
        const Rec *c = find("batched-var", p, VARS[v].name, 512, 1, "cublas:trsmBatched(grouped)");
        printf(" | %s", cell(o, c, o ? o->spd_batched : NAN, 25).c_str());
      }
      printf("  (variable orders; cuBLAS grouped by order)\n");
    }
    if (O.reads) {
      // one line per (precision, order): four read-only references' % of copy
      auto refs = [&](const char *title, const char *const (&nm)[4]) {
        printf("%s\n", title);
        for (auto &p : precs)
          for (long long n : O.bns) {
            const Rec *c[4] = {nullptr, nullptr, nullptr, nullptr};
            for (int v : O.vars)
              for (int k = 0; k < 4; k++)
                if (!c[k]) c[k] = find("batched", p, VARS[v].name, n, 1, nm[k]);
            if (!c[0] && !c[1] && !c[2] && !c[3]) continue;
            auto pc = [](const Rec *r) { return r && std::isfinite(r->pct) ? fmt("%.1f", r->pct) : std::string("-"); };
            printf("%-4s %-7lld | %s / %s / %s / %s\n", p.c_str(), n, pc(c[0]).c_str(), pc(c[1]).c_str(), pc(c[2]).c_str(), pc(c[3]).c_str());
          }
      };
      refs("read-only references, lower triangle, no solve (% of copy): rowsum (warp per system) / triangle sweep (one load in flight per "
           "thread) / square sweep (its own bytes) / triangle sweep x8 (8 loads in flight per thread)",
           {"read:rowsum", "read:triangle-sweep", "read:square-sweep", "read:triangle-sweep-x8"});
      refs("read-only references, one system per CTA at a time in address order (x8 loads), 1 / 2 / 4 / 8 CTAs of 256 threads per SM (% of copy)",
           {"read:system-sweep-b1", "read:system-sweep-b2", "read:system-sweep-b4", "read:system-sweep-b8"});
    }
  }
  for (const auto &s : g_skips) printf("skipped: %s\n", s.c_str());
  printf("%zu FAIL/ERROR%s\n", g_fails.size(), g_fails.empty() ? "" : ":");
  for (size_t i = 0; i < g_fails.size() && i < 20; i++) printf("  %.200s\n", g_fails[i].c_str());
  if (g_fails.size() > 20) printf("  ... %zu more in the JSON\n", g_fails.size() - 20);
  if (g_dead) printf("!! RUN INCOMPLETE: the CUDA context died (see above)\n");
  printf("JSON: %s\nplot: python3 bench/plot.py %s -o %s.png\n", g_out.c_str(), g_out.c_str(), g_out.substr(0, g_out.size() - 5).c_str());
}

// ============================================================== setup, options, main
bool setup()
{
  cudaDeviceProp p;
  if (!device_props(p)) return false;
  G.name = p.name, G.sms = p.multiProcessorCount, G.l2 = p.l2CacheSize, G.mem = (long long)p.totalGlobalMem;
  G.ccmaj = p.major, G.ccmin = p.minor;
  cudaRuntimeGetVersion(&G.rt);
  cudaDriverGetVersion(&G.drv);
  if (!CK(cudaStreamCreate(&g_stream)) || !CB(cublasCreate(&g_cb)) || !CB(cublasSetStream(g_cb, g_stream)) ||
      !CB(cublasSetPointerMode(g_cb, CUBLAS_POINTER_MODE_HOST)))
    return false;
  cublasGetVersion(g_cb, &G.cublas);
  sg_status st = sg_ctx_create(SG_BACKEND_CUDA, (void *)g_stream, &g_ctx);
  if (st != SG_OK) {
    printf("sg_ctx_create(SG_BACKEND_CUDA) failed: %s\n", status_name(st));
    return false;
  }
  if (O.l2_fetch >= 0 && (st = sg_ctx_set_l2_fetch(g_ctx, O.l2_fetch, nullptr)) != SG_OK) {
    printf("sg_ctx_set_l2_fetch(%d) failed: %s\n", O.l2_fetch, status_name(st));
    return false;
  }
  size_t l2f = 0;
  if (!CK(cudaDeviceGetLimit(&l2f, cudaLimitMaxL2FetchGranularity))) return false;
  G.l2_fetch = (int)l2f;
  if (!CK(cudaEventCreate(&g_ev0)) || !CK(cudaEventCreate(&g_ev1)) || !CK(cudaMalloc(&g_scr, 4 * sizeof(unsigned long long)))) return false;
  return true;
}
void teardown()
{
  if (g_ctx) sg_ctx_destroy(&g_ctx);
  if (g_ev0) cudaEventDestroy(g_ev0);
  if (g_ev1) cudaEventDestroy(g_ev1);
  if (g_cb) cublasDestroy(g_cb);
  if (g_scr) cudaFree(g_scr);
  if (g_stream) cudaStreamDestroy(g_stream);
}

void usage()
{
  printf("usage: bench_trsv [--quick] [--prec double|float|both] [--only single,nrhs,batched] [--nmax N]\n"
         "                  [--n 256,1000,...] [--batch-n 16,32,...] [--nrhs-n 1024,...] [--variants LN,LT,UN,UT]\n"
         "                  [--lda-pad P] [--reps N] [--target-ms MS] [--seed S] [--out FILE.json] [--commit SHA] [--no-reads]\n"
         "                  [--l2-fetch B]\n"
         "  single:  n = 256 .. 32768 (powers of 2 up to --nmax), nrhs = 1, ours vs cuBLAS trsv and trsm\n"
         "  nrhs:    n = 1024, 4096, 16384, nrhs = 4 and 16 (LN, UT), ours vs cuBLAS trsm\n"
         "  batched: n = 16 .. 512 (>= 256 MB of matrices each) + random orders 1..512, ours vs cuBLAS trsmBatched,\n"
         "           and read-only references of the same bytes (rowsum, triangle sweep, square sweep; --no-reads: skip)\n"
         "  --l2-fetch B: the device's L2 fetch granularity for the whole run, 0..128 bytes (sg_ctx_set_l2_fetch; device-wide,\n"
         "           cuBLAS runs under it too; 32 lets batched order-16 solves read only their triangles' sectors)\n"
         "  --quick: fewer sizes and 5 measurements; commit also from env STRUCTGPU_COMMIT; see bench/trsv/README.md\n");
}
bool parse_list(const char *s, std::vector<long long> &v)
{
  v.clear();
  for (const char *p = s; *p;) {
    char *e;
    long long x = strtoll(p, &e, 10);
    if (e == p || x < 1) return false;
    v.push_back(x);
    if (*e && *e != ',') return false;
    p = *e == ',' ? e + 1 : e;
  }
  return !v.empty();
}
bool parse_vars(const char *s, std::vector<int> &v)
{
  v.clear();
  std::string str = s;
  for (size_t p = 0; p <= str.size();) {
    size_t q = str.find(',', p);
    if (q == std::string::npos) q = str.size();
    std::string nm = str.substr(p, q - p);
    int found = -1;
    for (int k = 0; k < 4; k++)
      if (nm == VARS[k].name) found = k;
    if (found < 0) return false;
    if (std::find(v.begin(), v.end(), found) == v.end()) v.push_back(found);
    p = q + 1;
  }
  std::sort(v.begin(), v.end());  // lower variants first: the matrix is generated once per triangle
  return !v.empty();
}
bool parse(int argc, char **argv)
{
  bool have_n = false, have_bn = false, have_rn = false, have_reps = false, have_vars = false;
  static const std::set<std::string> valued = {"--prec", "--only", "--out",  "--commit",   "--reps",     "--seed",
                                               "--nmax", "--n",    "--batch-n", "--nrhs-n", "--variants", "--lda-pad", "--target-ms", "--l2-fetch"};
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    const char *v = nullptr;
    if (a == "--quick") O.quick = true;
    else if (a == "--no-reads") O.reads = false;
    else if (a == "-h" || a == "--help") return usage(), exit(0), true;
    else if (!valued.count(a)) return printf("unknown option %s\n", a.c_str()), usage(), false;
    else if (i + 1 >= argc) return printf("missing value for %s\n", a.c_str()), false;
    else if ((v = argv[++i]), a == "--prec") {
      std::string s = v;
      if (s == "d") s = "double";
      if (s == "s") s = "float";
      if (s != "double" && s != "float" && s != "both") return printf("--prec double|float|both\n"), false;
      O.prec_d = s != "float", O.prec_s = s != "double";
    } else if (a == "--only") {
      std::string s = std::string(",") + v + ",";
      O.single = s.find(",single,") != std::string::npos, O.nrhs = s.find(",nrhs,") != std::string::npos;
      O.batched = s.find(",batched,") != std::string::npos || s.find(",batch,") != std::string::npos;
      if (!O.single && !O.nrhs && !O.batched) return printf("--only single|nrhs|batched (comma-separated)\n"), false;
    } else if (a == "--out") O.out = v;
    else if (a == "--commit") O.commit = v;
    else if (a == "--reps") O.reps = atoi(v), have_reps = true;
    else if (a == "--seed") O.seed = strtoull(v, nullptr, 10);
    else if (a == "--nmax") O.nmax = atoll(v);
    else if (a == "--lda-pad") O.lda_pad = atoll(v);
    else if (a == "--l2-fetch") O.l2_fetch = atoi(v);
    else if (a == "--target-ms") O.target_ms = atof(v);
    else if (a == "--n") {
      if (!parse_list(v, O.ns)) return printf("bad --n list\n"), false;
      have_n = true;
    } else if (a == "--batch-n") {
      if (!parse_list(v, O.bns)) return printf("bad --batch-n list\n"), false;
      have_bn = true;
    } else if (a == "--nrhs-n") {
      if (!parse_list(v, O.rhs_ns)) return printf("bad --nrhs-n list\n"), false;
      have_rn = true;
    } else {  // --variants
      if (!parse_vars(v, O.vars)) return printf("bad --variants (LN,LT,UN,UT)\n"), false;
      have_vars = true;
    }
  }
  if (O.reps < 1 || O.reps > 1000 || O.nmax < 1 || O.nmax > SG_TRSV_MAX_N || O.lda_pad < 0 || O.l2_fetch < -1 || O.l2_fetch > 128 || !(O.target_ms > 0))
    return printf("bad --reps, --nmax, --lda-pad, --l2-fetch or --target-ms\n"), false;
  if (O.quick && !have_reps) O.reps = 5;
  if (!have_n) {
    O.ns.clear();
    if (O.quick) O.ns = {256, 1024, 4096, 16384};
    else
      for (long long n = 256; n <= std::max(32768LL, O.nmax); n *= 2) O.ns.push_back(n);
  }
  if (!have_bn) O.bns = O.quick ? std::vector<long long>{32, 128, 512} : std::vector<long long>{16, 32, 64, 128, 256, 512};
  if (!have_rn) O.rhs_ns = O.quick ? std::vector<long long>{4096} : std::vector<long long>{1024, 4096, 16384};
  auto cap = [](std::vector<long long> &v, long long mx) { v.erase(std::remove_if(v.begin(), v.end(), [&](long long x) { return x > mx; }), v.end()); };
  cap(O.ns, O.nmax), cap(O.rhs_ns, O.nmax), cap(O.bns, SG_TRSV_BATCH_MAX_N);
  if (!have_vars) O.vars = {0, 1, 2, 3};
  O.rhs_vars = have_vars ? O.vars : std::vector<int>{0, 3};
  if (O.quick && !have_vars) O.rhs_vars = {0, 3};
  if (O.seed == 0) O.seed = (unsigned long long)std::chrono::system_clock::now().time_since_epoch().count();
  if (O.commit.empty() && getenv("STRUCTGPU_COMMIT")) O.commit = getenv("STRUCTGPU_COMMIT");
  return true;
}

template <class T> void run_all()
{
  const size_t W = sizeof(T);
  if (O.single) {
    printf("\n== single trsv, %s, nrhs = 1: floor = %zu * (n(n+1)/2 + 2n) bytes; matrices rotated over >= %.0f MB\n", prec_name(W), W,
           O.rot_bytes / MB);
    for (long long n : O.ns) run_dense<T>("single", n, 1, O.vars);
  }
  if (O.nrhs) {
    printf("\n== multiple right-hand sides, %s: floor = %zu * (n(n+1)/2 + 2n*k) bytes\n", prec_name(W), W);
    for (long long n : O.rhs_ns)
      for (int k : O.rhs_ks) run_dense<T>("nrhs", n, k, O.rhs_vars);
  }
  if (O.batched) {
    printf("\n== batched, %s, one column: floor = %zu * sum_s (n_s(n_s+1)/2 + 2 n_s) bytes, >= %.0f MB of matrix per case\n",
           prec_name(W), W, O.batch_bytes / MB);
    for (long long n : O.bns) run_batched<T>((int)n, false, O.vars);
    run_batched<T>(SG_TRSV_BATCH_MAX_N, true, O.vars);
  }
}

}  // namespace

int main(int argc, char **argv)
{
  setvbuf(stdout, nullptr, _IOLBF, 0);
  if (!parse(argc, argv)) return 2;
  if (!setup()) {
    teardown();
    return 1;
  }
  g_date = utc_now();
  g_out = O.out;
  if (g_out.empty()) {
    std::string dev = G.name;
    for (char &c : dev)
      if (!isalnum((unsigned char)c) && c != '.' && c != '_' && c != '-') c = '_';
    g_out = "bench/results/trsv-" + dev + "-" + g_date.substr(0, 10).erase(4, 1).erase(6, 1) + (O.quick ? "-quick" : "") + ".json";
  }
  printf("bench_trsv: %s, %d SMs, L2 %.1f MB, %.1f GB, cc %d.%d, CUDA runtime %d driver %d, cuBLAS %d\n", G.name.c_str(), G.sms,
         G.l2 / MB, G.mem / 1e9, G.ccmaj, G.ccmin, G.rt, G.drv, G.cublas);
  printf("date %s, commit %s, seed %llu, median of %d measurements of >= %.0f ms each, lda = n + %lld, L2 fetch granularity %d bytes%s\n",
         g_date.c_str(), O.commit.empty() ? "(unknown: pass --commit or STRUCTGPU_COMMIT)" : O.commit.c_str(), O.seed, O.reps, O.target_ms,
         O.lda_pad, G.l2_fetch, O.l2_fetch >= 0 ? " (--l2-fetch: device-wide, cuBLAS runs under it too)" : "");
  g_copy_gbps = measure_copy_bw();
  save_json();
  try {
    if (O.prec_d && !g_dead) run_all<double>();
    if (O.prec_s && !g_dead) run_all<float>();
  } catch (const std::exception &e) {
    printf("!! exception: %s\n", e.what());
    g_fails.push_back(std::string("exception: ") + e.what());
  }
  print_summary();
  save_json();
  teardown();
  return g_dead ? 3 : (g_fails.empty() ? 0 : 1);
}
