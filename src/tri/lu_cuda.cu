// Dense LU, CUDA twin: cuSOLVER getrf (a handle per call on the ctx stream) framed by the
// checks of the host twin (lu_host.cpp, whose shared helpers convert ipiv -> perm and test
// the pivots): a scan kernel for max|A| and non-finite entries before the factorization,
// a diagonal gather after it. getrs: a perm check kernel, then the shared driver
// sg_getrs_chunks with a gather/scatter kernel (sg_lu_permute) and sg_trsv_cuda.
#include "sys/sg_cuda.cuh"
#include "tri/trsv_internal.hpp"
#include <climits>
#include <cstdlib>
#include <cstring>
#include <cusolverDn.h>

namespace {
struct lu_scan {
  unsigned long long amax_bits;  // bits of max |A_ij| as a double (>= 0: ordered like the values)
  unsigned long long bad;        // j*n + i of the first non-finite entry (column-major), ~0 = none
};

constexpr int kThreads = 256;

int lu_blocks(long long work)
{
  const long long cap = 8ll * sg_cuda_num_sms();
  const long long b   = (work + kThreads - 1) / kThreads;
  return (int)(b < 1 ? 1 : (b < cap ? b : cap));
}

// one column per block (grid-stride over columns), threads over rows
template <class T> __global__ void lu_scan_kernel(const T *A, long long n, long long lda, lu_scan *out)
{
  double             m   = 0;
  unsigned long long bad = ~0ull;
  for (long long j = blockIdx.x; j < n; j += gridDim.x)
    for (long long i = threadIdx.x; i < n; i += blockDim.x) {
      const T a = A[i + j * lda];
      if (!isfinite(a)) bad = min(bad, (unsigned long long)(j * n + i));
      else m = fmax(m, fabs((double)a));
    }
  for (int o = 16; o > 0; o >>= 1) {
    m   = fmax(m, __shfl_xor_sync(0xffffffffu, m, o));
    bad = min(bad, __shfl_xor_sync(0xffffffffu, bad, o));
  }
  if ((threadIdx.x & 31) == 0) {
    atomicMax(&out->amax_bits, (unsigned long long)__double_as_longlong(m));
    if (bad != ~0ull) atomicMin(&out->bad, bad);
  }
}

template <class T> __global__ void lu_diag_kernel(const T *A, long long n, long long lda, T *diag)
{
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) diag[i] = A[i + i * lda];
}

// smallest i with perm[i] outside 0..n-1, packed as (i << 32) | (unsigned)perm[i]
__global__ void lu_perm_check_kernel(const int *perm, long long n, unsigned long long *bad)
{
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    const int p = perm[i];
    if (!sg_lu_perm_ok(p, n)) atomicMin(bad, ((unsigned long long)i << 32) | (unsigned)p);
  }
}

template <class T>
__global__ void lu_permute_kernel(long long n, long long total, const int *perm, bool scatter, const T *src, long long lds, T *dst, long long ldd)
{
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < total; e += (long long)gridDim.x * blockDim.x)
    sg_lu_permute(e, n, perm, scatter, src, lds, dst, ldd);
}

sg_status permute_cuda_fn(sg_ctx *ctx, sg_precision prec, long long n, long long k, const int *perm, bool scatter, const void *src, long long lds,
                          void *dst, long long ldd, sg_report *rep)
{
  const long long total = n * k;
  if (prec == SG_REAL64)
    lu_permute_kernel<double><<<lu_blocks(total), kThreads, 0, sg_stream(ctx)>>>(n, total, perm, scatter, (const double *)src, lds, (double *)dst, ldd);
  else lu_permute_kernel<float><<<lu_blocks(total), kThreads, 0, sg_stream(ctx)>>>(n, total, perm, scatter, (const float *)src, lds, (float *)dst, ldd);
  return sg_cuda_check(cudaGetLastError(), rep, "LU solve: permutation kernel launch");
}

size_t align_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

struct solver_handle {
  cusolverDnHandle_t h = nullptr;
  ~solver_handle() { if (h) cusolverDnDestroy(h); }
};

sg_status solver_check(cusolverStatus_t s, sg_report *rep, const char *what)
{
  if (s == CUSOLVER_STATUS_SUCCESS) return SG_OK;
  return sg_report_set(rep, SG_ERR_DEVICE, -1, -1, 0.0, "cuSOLVER %s failed (cusolverStatus_t %d)", what, (int)s);
}

inline cusolverStatus_t getrf_buffer(cusolverDnHandle_t h, int n, double *A, int lda, int *lw) { return cusolverDnDgetrf_bufferSize(h, n, n, A, lda, lw); }
inline cusolverStatus_t getrf_buffer(cusolverDnHandle_t h, int n, float *A, int lda, int *lw) { return cusolverDnSgetrf_bufferSize(h, n, n, A, lda, lw); }
inline cusolverStatus_t getrf(cusolverDnHandle_t h, int n, double *A, int lda, double *w, int *ipiv, int *info)
{
  return cusolverDnDgetrf(h, n, n, A, lda, w, ipiv, info);
}
inline cusolverStatus_t getrf(cusolverDnHandle_t h, int n, float *A, int lda, float *w, int *ipiv, int *info)
{
  return cusolverDnSgetrf(h, n, n, A, lda, w, ipiv, info);
}

template <class T> sg_status getrf_cuda(sg_ctx *ctx, sg_precision prec, long long n, T *A, long long lda, int *perm, double pivtol, sg_report *rep)
{
  const cudaStream_t s = sg_stream(ctx);
  solver_handle      H;
  sg_status          st = solver_check(cusolverDnCreate(&H.h), rep, "handle creation");
  if (st == SG_OK) st = solver_check(cusolverDnSetStream(H.h, s), rep, "set stream");
  int lwork = 0;
  if (st == SG_OK) st = solver_check(getrf_buffer(H.h, (int)n, A, (int)lda, &lwork), rep, "getrf buffer size");
  if (st != SG_OK) return st;
  // device: [scan | ipiv (n) info (1) . diag (n) | cuSOLVER work]; the middle part comes back in one copy
  const size_t o_ipiv = 256, o_diag = align_up(o_ipiv + sizeof(int) * (size_t)(n + 1), 16), o_work = align_up(o_diag + sizeof(T) * (size_t)n, 256);
  const size_t back = o_diag + sizeof(T) * (size_t)n - o_ipiv, o_hperm = align_up(back > sizeof(lu_scan) ? back : sizeof(lu_scan), 16);
  char *d = (char *)sg_ctx_work(ctx, o_work + sizeof(T) * (size_t)(lwork > 0 ? lwork : 1), SG_SLOT_LU);
  char *h = (char *)sg_ctx_host_work(ctx, o_hperm + sizeof(int) * (size_t)n, SG_SLOT_LU);
  if (!d || !h) return sg_report_set(rep, SG_ERR_MEM, -1, -1, 0.0, "LU factorization: cannot allocate the %s workspace", !d ? "device" : "pinned host");
  lu_scan *scan = (lu_scan *)d;
  int     *ipiv = (int *)(d + o_ipiv), *info = ipiv + n;

  // 1. max |A| and the first non-finite entry (A untouched if there is one)
  if ((st = sg_cuda_check(cudaMemsetAsync(&scan->amax_bits, 0, 8, s), rep, "LU factorization: scan reset")) != SG_OK ||
      (st = sg_cuda_check(cudaMemsetAsync(&scan->bad, 0xff, 8, s), rep, "LU factorization: scan reset")) != SG_OK)
    return st;
  lu_scan_kernel<T><<<(int)(n < 8ll * sg_cuda_num_sms() ? n : 8ll * sg_cuda_num_sms()), kThreads, 0, s>>>(A, n, lda, scan);
  if ((st = sg_cuda_check(cudaGetLastError(), rep, "LU factorization: scan kernel launch")) != SG_OK ||
      (st = sg_cuda_check(cudaMemcpyAsync(h, scan, sizeof(lu_scan), cudaMemcpyDeviceToHost, s), rep, "LU factorization: scan read-back")) != SG_OK ||
      (st = sg_cuda_check(cudaStreamSynchronize(s), rep, "LU factorization: scan kernel")) != SG_OK)
    return st;
  const lu_scan sc = *(const lu_scan *)h;
  if (sc.bad != ~0ull) {
    const long long i = (long long)(sc.bad % (unsigned long long)n), j = (long long)(sc.bad / (unsigned long long)n);
    if ((st = sg_cuda_check(cudaMemcpyAsync(h, A + i + j * lda, sizeof(T), cudaMemcpyDeviceToHost, s), rep, "LU factorization: read-back")) != SG_OK ||
        (st = sg_cuda_check(cudaStreamSynchronize(s), rep, "LU factorization: read-back")) != SG_OK)
      return st;
    return sg_lu_report_nonfinite(rep, i, j, (double)*(const T *)h);
  }
  double amax;
  memcpy(&amax, &sc.amax_bits, sizeof amax);

  // 2. factorization, then ipiv, info and U's diagonal back in one copy
  if ((st = solver_check(getrf(H.h, (int)n, A, (int)lda, (T *)(d + o_work), ipiv, info), rep, "getrf")) != SG_OK) return st;
  lu_diag_kernel<T><<<lu_blocks(n), kThreads, 0, s>>>(A, n, lda, (T *)(d + o_diag));
  if ((st = sg_cuda_check(cudaGetLastError(), rep, "LU factorization: diagonal kernel launch")) != SG_OK ||
      (st = sg_cuda_check(cudaMemcpyAsync(h, d + o_ipiv, back, cudaMemcpyDeviceToHost, s), rep, "LU factorization: pivot read-back")) != SG_OK ||
      (st = sg_cuda_check(cudaStreamSynchronize(s), rep, "LU factorization (cuSOLVER getrf)")) != SG_OK)
    return st;
  const int *hipiv = (const int *)h, hinfo = hipiv[n];
  if (hinfo < 0) return sg_report_set(rep, SG_ERR_DEVICE, -1, -1, 0.0, "cuSOLVER getrf rejected its argument %d", -hinfo);

  // 3. perm (shared conversion with the host twin), uploaded; then the pivot test
  int *hperm = (int *)(h + o_hperm);
  if (!sg_lu_ipiv_to_perm(n, hipiv, hperm))
    return sg_report_set(rep, SG_ERR_DEVICE, -1, -1, 0.0, "cuSOLVER getrf returned an invalid pivot index");
  if ((st = sg_cuda_check(cudaMemcpyAsync(perm, hperm, sizeof(int) * (size_t)n, cudaMemcpyHostToDevice, s), rep, "LU factorization: perm upload")) != SG_OK ||
      (st = sg_cuda_check(cudaStreamSynchronize(s), rep, "LU factorization: perm upload")) != SG_OK)
    return st;
  // hinfo > 0 (an exactly zero U_ii) is found by the scan as well, with the relative test
  return sg_lu_check_diag(prec, n, h + (o_diag - o_ipiv), 1, sg_lu_pivot_threshold(prec, n, pivtol, amax), rep);
}
} // namespace

extern "C" sg_status sg_getrf_cuda(sg_ctx *ctx, sg_precision prec, long long n, void *A, long long lda, int *perm, double pivtol, sg_report *rep)
{
  sg_report local;
  if (!rep) rep = &local;
  sg_status st = sg_getrf_begin(ctx, SG_BACKEND_CUDA, prec, n, A, lda, perm, rep);
  if (st != SG_OK) return st;
  if (lda > INT_MAX) return sg_report_set(rep, SG_ERR_UNSUPPORTED, -1, -1, 0.0, "cuSOLVER getrf takes 32-bit leading dimensions (lda = %lld)", lda);
  return prec == SG_REAL64 ? getrf_cuda(ctx, prec, n, (double *)A, lda, perm, pivtol, rep)
                           : getrf_cuda(ctx, prec, n, (float *)A, lda, perm, pivtol, rep);
}

extern "C" sg_status sg_getrs_cuda(sg_ctx *ctx, sg_precision prec, sg_trans trans, long long n, long long nrhs, const void *LU, long long lda,
                                   const int *perm, const void *B, long long ldb, void *X, long long ldx, sg_report *rep)
{
  sg_report local;
  if (!rep) rep = &local;
  sg_status st = sg_getrs_begin(ctx, SG_BACKEND_CUDA, prec, trans, n, nrhs, LU, lda, perm, B, ldb, X, ldx, rep);
  if (st != SG_OK) return st;
  // perm check first (nothing is touched on a bad perm)
  if ((st = sg_lu_perm_check_cuda(ctx, n, perm, rep)) != SG_OK) return st;
  return sg_getrs_chunks(ctx, prec, trans, n, nrhs, LU, lda, perm, B, ldb, X, ldx, permute_cuda_fn, rep);
}

sg_status sg_getrs_plan_run_cuda(sg_ctx *ctx, sg_getrs_plan plan, sg_trans trans, long long nrhs, const void *B, long long ldb, void *X, long long ldx,
                                 sg_report *rep)
{
  static const bool one_sync = sg_env_flag("SG_GETRS_ONESYNC", true);
  const bool        defer    = one_sync && !ctx->deferred;  // (a deferred context is checked by its owner)
  sg_status         st;
  if (defer) {  // a clean record (a failed solve before may have left one), then no per-kernel checks
    if ((st = sg_dev_report_reset(ctx, rep)) != SG_OK) return st;
    ctx->deferred = 1;
  }
  st = sg_getrs_chunks(ctx, plan->prec, trans, plan->n, nrhs, plan->LU, plan->lda, plan->perm, B, ldb, X, ldx, permute_cuda_fn, rep, plan->tp);
  if (defer) {  // one synchronisation; the record cleared
    ctx->deferred      = 0;
    sg_report    local;
    const sg_status ck = sg_ctx_check(ctx, st == SG_OK ? rep : &local);
    if (st == SG_OK) st = ck;
    // A breakdown: the shared record keeps the lowest row of all the solves, but the first failing
    // stage is what counts (an Inf in b that the forward solve meets at row 5 turns every row of
    // the backward solve's result into NaN, row 0 first). So the solve runs again with a check per
    // stage, as SG_GETRS_ONESYNC=0 does, and reports the same first failure as the host. Only
    // failed solves pay for it. Not when X is B (solved in place, B is gone): then the row is
    // the lowest one any stage reported (the status is the same).
    if ((st == SG_ERR_NONFINITE || st == SG_ERR_ZERO_PIVOT) && X != B)
      st = sg_getrs_chunks(ctx, plan->prec, trans, plan->n, nrhs, plan->LU, plan->lda, plan->perm, B, ldb, X, ldx, permute_cuda_fn, rep, plan->tp);
  }
  return st;
}

// (its flag lives in the LU slots until the getrs driver takes them over for its workspace)
sg_status sg_lu_perm_check_cuda(sg_ctx *ctx, long long n, const int *perm, sg_report *rep)
{
  sg_status           st;
  const cudaStream_t  s  = sg_stream(ctx);
  unsigned long long *db = (unsigned long long *)sg_ctx_work(ctx, sizeof(unsigned long long), SG_SLOT_LU);
  unsigned long long *hb = (unsigned long long *)sg_ctx_host_work(ctx, sizeof(unsigned long long), SG_SLOT_LU);
  if (!db || !hb) return sg_report_set(rep, SG_ERR_MEM, -1, -1, 0.0, "LU solve: cannot allocate a workspace");
  if ((st = sg_cuda_check(cudaMemsetAsync(db, 0xff, sizeof *db, s), rep, "LU solve: perm check reset")) != SG_OK) return st;
  lu_perm_check_kernel<<<lu_blocks(n), kThreads, 0, s>>>(perm, n, db);
  if ((st = sg_cuda_check(cudaGetLastError(), rep, "LU solve: perm check launch")) != SG_OK ||
      (st = sg_cuda_check(cudaMemcpyAsync(hb, db, sizeof *db, cudaMemcpyDeviceToHost, s), rep, "LU solve: perm check read-back")) != SG_OK ||
      (st = sg_cuda_check(cudaStreamSynchronize(s), rep, "LU solve: perm check")) != SG_OK)
    return st;
  if (*hb != ~0ull) return sg_lu_report_bad_perm(rep, (long long)(*hb >> 32), (long long)(int)(unsigned)(*hb & 0xffffffffull), n);
  return SG_OK;
}
