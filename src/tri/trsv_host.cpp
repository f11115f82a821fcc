// Host reference twins of the triangular solves: BLAS dtrsv/strsv underneath, one call per
// right-hand side, with the breakdown checks of the interface (trsv_kernels.h): the diagonal
// is checked before X is written, the solution is checked to be finite afterwards.
#include "tri/trsv_internal.hpp"
#include <vector>
#include <climits>
#include <cstring>

extern "C" {
void dtrsv_(const char *uplo, const char *trans, const char *diag, const int *n, const double *a, const int *lda, double *x, const int *incx);
void strsv_(const char *uplo, const char *trans, const char *diag, const int *n, const float *a, const int *lda, float *x, const int *incx);
}

namespace {
inline void blas_trsv(const char *u, const char *t, const char *d, int n, const double *a, int lda, double *x)
{
  const int one = 1;
  dtrsv_(u, t, d, &n, a, &lda, x, &one);
}
inline void blas_trsv(const char *u, const char *t, const char *d, int n, const float *a, int lda, float *x)
{
  const int one = 1;
  strsv_(u, t, d, &n, a, &lda, x, &one);
}

struct trsv_op {
  sg_uplo  uplo;
  sg_trans trans;
  sg_diag  diag;
};

// The diagonal breakdown of a system, if any: the smallest sg_fail_key (class, then row).
template <class T> bool diag_fails(const trsv_op &op, long long n, const T *A, long long lda, T tol, int *cls, long long *row, double *val)
{
  if (op.diag == SG_UNIT) return false;
  *cls = -1;
  for (long long i = 0; i < n; i++) {
    const T d = A[i + i * lda];
    if (!sg_trsv_bad_diag(d, tol)) continue;
    const int c = sg_trsv_diag_class(d);
    if (*cls < 0 || c < *cls) { *cls = c; *row = i; *val = (double)d; }
    if (c == SG_FAIL_INPUT) break;  // the smallest class: nothing later can win
  }
  return *cls >= 0;
}

// Solve op(A) X = X in place (diagonal already checked); the smallest row where some column
// of the solution is not finite, or -1.
template <class T> long long solve_in_place(const trsv_op &op, long long n, long long nrhs, const T *A, long long lda, T *X, long long ldx, double *val)
{
  const char *u = op.uplo == SG_LOWER ? "L" : "U", *t = op.trans == SG_NOTRANS ? "N" : "T", *d = op.diag == SG_UNIT ? "U" : "N";
  for (long long c = 0; c < nrhs; c++) blas_trsv(u, t, d, (int)n, A, (int)lda, X + c * ldx);
  long long bad = -1;
  for (long long c = 0; c < nrhs; c++) {
    const T  *x   = X + c * ldx;
    long long end = bad < 0 ? n : bad;
    for (long long i = 0; i < end; i++)
      if (!std::isfinite(x[i])) { bad = i; *val = (double)x[i]; break; }
  }
  return bad;
}

template <class T> sg_status trsv_host(const sg_trsv_problem *P, double pivtol, sg_report *rep)
{
  const trsv_op   op{P->uplo, P->trans, P->diag};
  const long long n = P->n, nrhs = P->nrhs, ldb = nrhs > 1 ? P->ldb : n, ldx = nrhs > 1 ? P->ldx : n;
  const T        *A = (const T *)P->A, *B = (const T *)P->B;
  T              *X = (T *)P->X;
  int             cls = -1;
  long long       row = -1;
  double          val = 0;
  if (diag_fails(op, n, A, P->lda, pivtol > 0 ? (T)pivtol : (T)0, &cls, &row, &val)) return sg_trsv_report_fail(rep, cls, -1, row, val);
  if (X != B)
    for (long long c = 0; c < nrhs; c++) memcpy(X + c * ldx, B + c * ldb, (size_t)n * sizeof(T));
  row = solve_in_place(op, n, nrhs, A, P->lda, X, ldx, &val);
  return row < 0 ? SG_OK : sg_trsv_report_fail(rep, SG_FAIL_RESULT, -1, row, val);
}

template <class T> sg_status batch_host(const sg_trsv_batch *B, double pivtol, sg_report *rep)
{
  const trsv_op op{B->uplo, B->trans, B->diag};
  const T       tol    = pivtol > 0 ? (T)pivtol : (T)0;
  bool          failed = false;  // systems run in order: the first failure is the smallest system
  sg_status     first  = SG_OK;
  for (long long s = 0; s < B->nbatch; s++) {
    const int n = B->nv ? B->nv[s] : B->n, lda = B->ldav ? B->ldav[s] : B->lda, ldx = B->ldxv ? B->ldxv[s] : B->ldx;
    sg_status st = SG_OK;
    sg_report r;
    if (n < 0 || n > B->n)
      st = sg_report_set(&r, SG_ERR_ARG, s, -1, 0.0, "batched triangular solve, system %lld: order nv[%lld] = %d is outside 0..n = %d", s, s, n,
                         B->n);
    else if (n == 0) continue;
    else if (lda < n || ldx < n)
      st = sg_report_set(&r, SG_ERR_ARG, s, -1, 0.0, "batched triangular solve, system %lld: leading dimension %s = %d is smaller than its order %d",
                         s, lda < n ? "lda" : "ldx", lda < n ? lda : ldx, n);
    else if (!B->A[s] || !B->X[s])
      st = sg_report_set(&r, SG_ERR_ARG, s, -1, 0.0, "batched triangular solve, system %lld: NULL %s pointer", s, !B->A[s] ? "A" : "X");
    else {
      const T  *A = (const T *)B->A[s];
      T        *X = (T *)B->X[s];
      int       cls = -1;
      long long row = -1;
      double    val = 0;
      if (diag_fails(op, n, A, lda, tol, &cls, &row, &val)) st = sg_trsv_report_fail(&r, cls, s, row, val);
      else if ((row = solve_in_place(op, n, B->nrhs, A, lda, X, ldx, &val)) >= 0) st = sg_trsv_report_fail(&r, SG_FAIL_RESULT, s, row, val);
    }
    if (st != SG_OK && !failed) {
      failed = true;
      first  = st;
      if (rep) {
        r.alg = rep->alg;
        *rep  = r;
      }
    }
  }
  return first;
}
} // namespace

extern "C" sg_status sg_trsv_host(sg_ctx *ctx, const sg_trsv_problem *P, double pivtol, sg_report *rep)
{
  sg_report local;
  if (!rep) rep = &local;
  sg_status st = sg_trsv_begin(ctx, SG_BACKEND_HOST, P, rep);
  if (st != SG_OK) return st;
  if (P->lda > INT_MAX)
    return sg_report_set(rep, SG_ERR_UNSUPPORTED, -1, -1, 0.0, "the host BLAS takes 32-bit leading dimensions (lda = %lld)", P->lda);
  return P->prec == SG_REAL64 ? trsv_host<double>(P, pivtol, rep) : trsv_host<float>(P, pivtol, rep);
}

extern "C" sg_status sg_trsv_plan_create_host(sg_ctx *ctx, const sg_trsv_problem *P, double pivtol, sg_trsv_plan *plan, sg_report *rep)
{
  sg_report local;
  if (!rep) rep = &local;
  sg_status st = sg_trsv_plan_begin(ctx, SG_BACKEND_HOST, P, plan, rep);
  if (st != SG_OK) return st;
  // the analysis: a solve with a zero right-hand side checks every pivot and the triangle's values
  std::vector<double> z(P->prec == SG_REAL64 ? (size_t)P->n : ((size_t)P->n + 1) / 2, 0.0);
  sg_trsv_problem     Pz = *P;
  Pz.nrhs                = 1;
  Pz.B = Pz.X = z.data();
  Pz.ldb = Pz.ldx = P->n;
  if ((st = sg_trsv_host(ctx, &Pz, pivtol, rep)) != SG_OK) return st;
  Pz.B = Pz.X = nullptr;
  *plan       = new sg_trsv_plan_s{SG_BACKEND_HOST, Pz, pivtol, nullptr, 0, 0, 0};
  return SG_OK;
}

extern "C" sg_status sg_trsv_batch_solve_host(sg_ctx *ctx, const sg_trsv_batch *B, double pivtol, sg_report *rep)
{
  sg_report local;
  if (!rep) rep = &local;
  sg_status st = sg_trsv_batch_begin(ctx, SG_BACKEND_HOST, B, rep);
  if (st != SG_OK) return st;
  return B->prec == SG_REAL64 ? batch_host<double>(B, pivtol, rep) : batch_host<float>(B, pivtol, rep);
}
