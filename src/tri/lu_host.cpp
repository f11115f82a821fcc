// Dense LU, host twin (LAPACK getrf) and the parts shared with the CUDA twin (lu_cuda.cu):
// ipiv -> perm conversion, the pivot breakdown test and its reports, and the getrs driver
// (permutation + two sg_trsv() calls per chunk of right-hand sides).
#include "tri/trsv_internal.hpp"
#include <cfloat>
#include <climits>

extern "C" {
void dgetrf_(const int *m, const int *n, double *a, const int *lda, int *ipiv, int *info);
void sgetrf_(const int *m, const int *n, float *a, const int *lda, int *ipiv, int *info);
}

bool sg_lu_ipiv_to_perm(long long n, const int *ipiv, int *perm)
{
  for (long long i = 0; i < n; i++) perm[i] = (int)i;
  for (long long i = 0; i < n; i++) {
    const long long p = (long long)ipiv[i] - 1;
    if (p < 0 || p >= n) return false;
    const int t = perm[i];
    perm[i]     = perm[p];
    perm[p]     = t;
  }
  return true;
}

double sg_lu_pivot_threshold(sg_precision prec, long long n, double pivtol, double amax)
{
  const double eps = prec == SG_REAL64 ? DBL_EPSILON : (double)FLT_EPSILON;
  return (pivtol < 0 ? (double)n * eps : pivtol) * amax;
}

sg_status sg_lu_check_diag(sg_precision prec, long long n, const void *diag, long long stride, double thresh, sg_report *rep)
{
  for (long long i = 0; i < n; i++) {
    const double d = prec == SG_REAL64 ? ((const double *)diag)[i * stride] : (double)((const float *)diag)[i * stride];
    if (!sg_trsv_bad_diag(d, thresh)) continue;
    if (sg_trsv_diag_class(d) == SG_FAIL_INPUT)
      return sg_report_set(rep, SG_ERR_NONFINITE, -1, i, d,
                           "LU factorization: pivot U(%lld,%lld) = %g is infinite (0-based): overflow, the matrix is badly scaled", i, i, d);
    return sg_report_set(rep, SG_ERR_ZERO_PIVOT, -1, i, d,
                         "LU factorization: pivot U(%lld,%lld) = %g is zero, tiny or NaN (|U_ii| <= %g = pivtol * max|A|; 0-based); "
                         "the matrix is singular to working precision",
                         i, i, d, thresh);
  }
  return SG_OK;
}

sg_status sg_lu_report_nonfinite(sg_report *rep, long long row, long long col, double value)
{
  return sg_report_set(rep, SG_ERR_NONFINITE, -1, row, value,
                       "LU factorization: matrix entry A(%lld,%lld) = %g is not finite (0-based); the matrix was not modified", row, col, value);
}

sg_status sg_lu_report_bad_perm(sg_report *rep, long long i, long long p, long long n)
{
  return sg_report_set(rep, SG_ERR_ARG, -1, i, 0.0, "LU solve: perm[%lld] = %lld is not a row index in 0..%lld; pass the perm of sg_getrf", i, p,
                       n - 1);
}

sg_status sg_getrs_chunks(sg_ctx *ctx, sg_precision prec, sg_trans trans, long long n, long long nrhs, const void *LU, long long lda,
                          const int *perm, const void *B, long long ldb, void *X, long long ldx, sg_lu_permute_fn permute, sg_report *rep,
                          sg_trsv_plan const *tp)
{
  auto tri = [&](int which, const sg_trsv_problem &P) {  // which: the plan of tp (L, U, U^T, L^T)
    return tp ? sg_trsv_plan_run(ctx, tp[which], &P, rep) : sg_trsv(ctx, &P, 0.0, rep);
  };
  const long long w    = prec == SG_REAL64 ? (long long)sizeof(double) : (long long)sizeof(float);
  const long long kmax = nrhs < SG_TRSV_MAX_NRHS ? nrhs : SG_TRSV_MAX_NRHS;
  void           *W    = sg_ctx_work(ctx, (size_t)(n * kmax * w), SG_SLOT_LU);
  if (!W) return sg_report_set(rep, SG_ERR_MEM, -1, -1, 0.0, "LU solve: cannot allocate %lld bytes of workspace", n * kmax * w);
  for (long long j0 = 0; j0 < nrhs; j0 += SG_TRSV_MAX_NRHS) {
    const long long k  = nrhs - j0 < SG_TRSV_MAX_NRHS ? nrhs - j0 : SG_TRSV_MAX_NRHS;
    const void     *Bj = (const char *)B + j0 * ldb * w;
    void           *Xj = (char *)X + j0 * ldx * w;
    sg_status       st;
    if (trans == SG_NOTRANS) {  // P A = L U: L U X = P B
      const sg_trsv_problem pl = {prec, SG_LOWER, SG_NOTRANS, SG_UNIT, n, k, LU, lda, W, n, W, n};
      const sg_trsv_problem pu = {prec, SG_UPPER, SG_NOTRANS, SG_NONUNIT, n, k, LU, lda, W, n, Xj, ldx};
      st = permute(ctx, prec, n, k, perm, false, Bj, ldb, W, n, rep);
      if (st == SG_OK) st = tri(0, pl);
      if (st == SG_OK) st = tri(1, pu);
    } else {  // A^T = U^T L^T P: U^T L^T (P X) = B
      const sg_trsv_problem pu = {prec, SG_UPPER, SG_TRANS, SG_NONUNIT, n, k, LU, lda, Bj, ldb, W, n};
      const sg_trsv_problem pl = {prec, SG_LOWER, SG_TRANS, SG_UNIT, n, k, LU, lda, W, n, W, n};
      st = tri(2, pu);
      if (st == SG_OK) st = tri(3, pl);
      if (st == SG_OK) st = permute(ctx, prec, n, k, perm, true, W, n, Xj, ldx, rep);
    }
    if (st != SG_OK) return st;
  }
  return SG_OK;
}

namespace {
inline void lapack_getrf(int n, double *A, int lda, int *ipiv, int *info) { dgetrf_(&n, &n, A, &lda, ipiv, info); }
inline void lapack_getrf(int n, float *A, int lda, int *ipiv, int *info) { sgetrf_(&n, &n, A, &lda, ipiv, info); }

template <class T> sg_status getrf_host(sg_ctx *ctx, sg_precision prec, long long n, T *A, long long lda, int *perm, double pivtol, sg_report *rep)
{
  double amax = 0;  // max |A_ij| for the relative pivot test; non-finite input is refused untouched
  for (long long j = 0; j < n; j++)
    for (long long i = 0; i < n; i++) {
      const T a = A[i + j * lda];
      if (!std::isfinite(a)) return sg_lu_report_nonfinite(rep, i, j, (double)a);
      amax = std::fabs((double)a) > amax ? std::fabs((double)a) : amax;
    }
  int *ipiv = (int *)sg_ctx_host_work(ctx, (size_t)n * sizeof(int), SG_SLOT_LU);
  if (!ipiv) return sg_report_set(rep, SG_ERR_MEM, -1, -1, 0.0, "LU factorization: cannot allocate %lld bytes of workspace", n * 4);
  int info = 0;
  lapack_getrf((int)n, A, (int)lda, ipiv, &info);
  if (info < 0) return sg_report_set(rep, SG_ERR_UNSUPPORTED, -1, -1, 0.0, "LAPACK getrf rejected its argument %d", -info);
  if (!sg_lu_ipiv_to_perm(n, ipiv, perm))
    return sg_report_set(rep, SG_ERR_UNSUPPORTED, -1, -1, 0.0, "LAPACK getrf returned an invalid pivot index (broken LAPACK library?)");
  // info > 0 (an exactly zero U_ii) is found by the scan as well, with the relative test
  return sg_lu_check_diag(prec, n, A, lda + 1, sg_lu_pivot_threshold(prec, n, pivtol, amax), rep);
}

template <class T> void permute_host(long long n, long long k, const int *perm, bool scatter, const T *src, long long lds, T *dst, long long ldd)
{
  for (long long e = 0; e < n * k; e++) sg_lu_permute(e, n, perm, scatter, src, lds, dst, ldd);
}

sg_status permute_host_fn(sg_ctx *, sg_precision prec, long long n, long long k, const int *perm, bool scatter, const void *src, long long lds,
                          void *dst, long long ldd, sg_report *)
{
  if (prec == SG_REAL64) permute_host(n, k, perm, scatter, (const double *)src, lds, (double *)dst, ldd);
  else permute_host(n, k, perm, scatter, (const float *)src, lds, (float *)dst, ldd);
  return SG_OK;
}

// the host twin's perm check (the CUDA twin's: sg_lu_perm_check_cuda): SG_ERR_ARG naming the first bad entry
sg_status perm_check_host(long long n, const int *perm, sg_report *rep)
{
  for (long long i = 0; i < n; i++)
    if (!sg_lu_perm_ok(perm[i], n)) return sg_lu_report_bad_perm(rep, i, perm[i], n);
  return SG_OK;
}
} // namespace

extern "C" sg_status sg_getrf_host(sg_ctx *ctx, sg_precision prec, long long n, void *A, long long lda, int *perm, double pivtol, sg_report *rep)
{
  sg_report local;
  if (!rep) rep = &local;
  sg_status st = sg_getrf_begin(ctx, SG_BACKEND_HOST, prec, n, A, lda, perm, rep);
  if (st != SG_OK) return st;
  if (lda > INT_MAX) return sg_report_set(rep, SG_ERR_UNSUPPORTED, -1, -1, 0.0, "LAPACK takes 32-bit leading dimensions (lda = %lld)", lda);
  return prec == SG_REAL64 ? getrf_host(ctx, prec, n, (double *)A, lda, perm, pivtol, rep)
                           : getrf_host(ctx, prec, n, (float *)A, lda, perm, pivtol, rep);
}

extern "C" sg_status sg_getrs_host(sg_ctx *ctx, sg_precision prec, sg_trans trans, long long n, long long nrhs, const void *LU, long long lda,
                                   const int *perm, const void *B, long long ldb, void *X, long long ldx, sg_report *rep)
{
  sg_report local;
  if (!rep) rep = &local;
  sg_status st = sg_getrs_begin(ctx, SG_BACKEND_HOST, prec, trans, n, nrhs, LU, lda, perm, B, ldb, X, ldx, rep);
  if (st != SG_OK || (st = perm_check_host(n, perm, rep)) != SG_OK) return st;
  return sg_getrs_chunks(ctx, prec, trans, n, nrhs, LU, lda, perm, B, ldb, X, ldx, permute_host_fn, rep);
}

// ---- getrs plans (both twins: the backend is the context's)
namespace {
// the triangular plans of one op: L then U (NOTRANS) or U^T then L^T (TRANS), into tp[2 * trans ..]
sg_status lu_tri_plans(sg_ctx *ctx, sg_getrs_plan p, sg_trans trans, sg_report *rep)
{
  const int       o  = trans == SG_TRANS ? 2 : 0;
  sg_trsv_problem pl = {p->prec, SG_LOWER, trans, SG_UNIT, p->n, 1, p->LU, p->lda, nullptr, 0, nullptr, 0};
  sg_trsv_problem pu = pl;
  pu.uplo            = SG_UPPER;
  pu.diag            = SG_NONUNIT;
  sg_status st       = sg_trsv_plan_create(ctx, trans == SG_TRANS ? &pu : &pl, 0.0, &p->tp[o], rep);
  if (st == SG_OK) st = sg_trsv_plan_create(ctx, trans == SG_TRANS ? &pl : &pu, 0.0, &p->tp[o + 1], rep);
  if (st != SG_OK) {
    sg_trsv_plan_destroy(&p->tp[o]);
    sg_trsv_plan_destroy(&p->tp[o + 1]);
  }
  return st;
}
} // namespace

extern "C" sg_status sg_getrs_plan_create(sg_ctx *ctx, sg_precision prec, long long n, const void *LU, long long lda, const int *perm, sg_getrs_plan *plan,
                                          sg_report *rep)
{
  sg_report local;
  if (!rep) rep = &local;
  sg_report_clear(rep, SG_TRI_AUTO);
  if (!plan) return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "sg_getrs_plan_create: the plan pointer is NULL");
  *plan                    = nullptr;
  const sg_backend backend = sg_ctx_backend(ctx);
  sg_status        st      = sg_getrf_begin(ctx, backend, prec, n, (void *)LU, lda, perm, rep);
  if (st != SG_OK) return st;
  if ((st = backend == SG_BACKEND_CUDA ? sg_lu_perm_check_cuda(ctx, n, perm, rep) : perm_check_host(n, perm, rep)) != SG_OK) return st;
  sg_getrs_plan p = new sg_getrs_plan_s{backend, prec, n, lda, LU, perm, {nullptr, nullptr, nullptr, nullptr}};
  if ((st = lu_tri_plans(ctx, p, SG_NOTRANS, rep)) != SG_OK) {
    sg_getrs_plan_destroy(&p);
    return st;
  }
  *plan = p;
  return SG_OK;
}

extern "C" sg_status sg_getrs_plan_solve(sg_ctx *ctx, sg_getrs_plan plan, sg_trans trans, long long nrhs, const void *B, long long ldb, void *X, long long ldx,
                                         sg_report *rep)
{
  sg_report local;
  if (!rep) rep = &local;
  sg_report_clear(rep, SG_TRI_AUTO);
  if (!plan) return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "sg_getrs_plan_solve: the plan is NULL (sg_getrs_plan_create makes one)");
  if (ctx && ctx->backend != plan->backend)
    return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "sg_getrs_plan_solve: the plan was made for the %s backend, the context is %s",
                         plan->backend == SG_BACKEND_CUDA ? "cuda" : "host", ctx->backend == SG_BACKEND_CUDA ? "cuda" : "host");
  sg_status st = sg_getrs_begin(ctx, plan->backend, plan->prec, trans, plan->n, nrhs, plan->LU, plan->lda, plan->perm, B, ldb, X, ldx, rep);
  if (st != SG_OK) return st;
  if (trans == SG_TRANS && !plan->tp[2] && (st = lu_tri_plans(ctx, plan, SG_TRANS, rep)) != SG_OK) return st;
  if (plan->backend == SG_BACKEND_CUDA) return sg_getrs_plan_run_cuda(ctx, plan, trans, nrhs, B, ldb, X, ldx, rep);
  return sg_getrs_chunks(ctx, plan->prec, trans, plan->n, nrhs, plan->LU, plan->lda, plan->perm, B, ldb, X, ldx, permute_host_fn, rep, plan->tp);
}

extern "C" void sg_getrs_plan_destroy(sg_getrs_plan *plan)
{
  if (!plan || !*plan) return;
  for (sg_trsv_plan &t : (*plan)->tp) sg_trsv_plan_destroy(&t);
  delete *plan;
  *plan = nullptr;
}
