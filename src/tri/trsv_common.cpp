// Dense triangular / LU kernels, backend-independent part: the argument prologues shared by
// the host and CUDA twins, the breakdown sentences and the backend dispatchers.
#include "tri/trsv_internal.hpp"
#include <climits>
#include <cstdint>
#include <cstring>

namespace {
// An enum field as the int the C caller stored (a C caller may store any int: read it
// without loading an out-of-range C++ enum value).
template <class E> int enum_int(const E &e)
{
  static_assert(sizeof(E) == sizeof(int), "C enums are int-sized");
  int v;
  memcpy(&v, &e, sizeof v);
  return v;
}

const char *twin_name(sg_backend b) { return b == SG_BACKEND_CUDA ? "cuda" : "host"; }

sg_status check_ctx(sg_ctx *ctx, sg_backend backend, const char *fn, sg_report *rep)
{
  if (!ctx) return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "%s_%s: the context is NULL", fn, twin_name(backend));
  if (ctx->backend != backend)
    return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "%s_%s needs a %s context (sg_ctx_create(%s, ...))", fn, twin_name(backend),
                         twin_name(backend), backend == SG_BACKEND_CUDA ? "SG_BACKEND_CUDA" : "SG_BACKEND_HOST");
  return SG_OK;
}

sg_status check_prec(const sg_precision &prec, sg_report *rep)
{
  const int p = enum_int(prec);
  if (p != SG_REAL64 && p != SG_REAL32) return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "unknown precision %d (use SG_REAL64 or SG_REAL32)", p);
  return SG_OK;
}

sg_status check_trans(const sg_trans &trans, sg_report *rep)
{
  const int t = enum_int(trans);
  if (t != SG_NOTRANS && t != SG_TRANS) return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "unknown trans %d (use SG_NOTRANS or SG_TRANS)", t);
  return SG_OK;
}

sg_status check_enums(const sg_precision &p, const sg_uplo &uplo, const sg_trans &t, const sg_diag &diag, sg_report *rep)
{
  sg_status st = check_prec(p, rep);
  if (st == SG_OK) st = check_trans(t, rep);
  if (st != SG_OK) return st;
  const int u = enum_int(uplo), d = enum_int(diag);
  if (u != SG_LOWER && u != SG_UPPER) return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "unknown uplo %d (use SG_LOWER or SG_UPPER)", u);
  if (d != SG_NONUNIT && d != SG_UNIT) return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "unknown diag %d (use SG_NONUNIT or SG_UNIT)", d);
  return SG_OK;
}

// leading dimension `ld` of an n-row array: ld >= n and (ld * ncols * 16) does not overflow
sg_status check_ld(const char *name, long long ld, long long n, long long ncols, sg_report *rep)
{
  if (ld < n) return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "leading dimension %s = %lld must be >= n = %lld", name, ld, n);
  if (ld > (LLONG_MAX / 16) / (ncols > 0 ? ncols : 1))
    return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "leading dimension %s = %lld is too large (overflows)", name, ld);
  return SG_OK;
}

// byte range [p, p + ((ncols-1)*ld + n) * word) of an n x ncols array
struct span {
  uintptr_t lo, hi;
  span(const void *p, long long n, long long ncols, long long ld, size_t word)
      : lo((uintptr_t)p), hi((uintptr_t)p + (uintptr_t)(((ncols - 1) * ld + n) * (long long)word)) {}
  bool overlaps(const span &o) const { return lo < o.hi && o.lo < hi; }
};

// X may alias B only exactly (same pointer and, with several columns, same ld); X must not
// overlap A (or, for getrs, the factors) at all.
sg_status check_alias(long long n, long long nrhs, const void *A, long long lda, const void *B, long long ldb, const void *X, long long ldx,
                      size_t word, sg_report *rep)
{
  const span sa(A, n, n, lda, word), sb(B, n, nrhs, ldb, word), sx(X, n, nrhs, ldx, word);
  if (X == B) {
    if (nrhs > 1 && ldx != ldb)
      return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "X aliases B but ldx = %lld differs from ldb = %lld (aliasing must be exact)", ldx, ldb);
  } else if (sx.overlaps(sb))
    return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "X overlaps B without being equal to it (X may only alias B exactly: X == B, ldx == ldb)");
  if (sx.overlaps(sa)) return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "X overlaps the matrix A");
  return SG_OK;
}

// CUDA twins: the data pointers must be device accessible
sg_status check_dev_ptrs(sg_backend backend, int k, const void *const *p, const char *const *names, sg_report *rep)
{
#if defined(SG_HAVE_CUDA)
  if (backend == SG_BACKEND_CUDA)
    for (int i = 0; i < k; i++) {
      if (!p[i]) continue;  // optional arrays
      sg_status st = sg_cuda_check_ptr(p[i], names[i], rep);
      if (st != SG_OK) return st;
    }
#else
  (void)backend; (void)k; (void)p; (void)names; (void)rep;
#endif
  return SG_OK;
}

size_t word_size(sg_precision p) { return p == SG_REAL64 ? sizeof(double) : sizeof(float); }
} // namespace

namespace {
// the matrix part of a problem descriptor: the descriptor itself, the enums, n, lda
sg_status check_matrix(const sg_trsv_problem *P, sg_report *rep)
{
  if (!P) return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "the problem descriptor is NULL");
  sg_status st = check_enums(P->prec, P->uplo, P->trans, P->diag, rep);
  if (st != SG_OK) return st;
  if (P->n < 1 || P->n > SG_TRSV_MAX_N)
    return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "order n = %lld, must be in 1..%lld", P->n, (long long)SG_TRSV_MAX_N);
  return check_ld("lda", P->lda, P->n, P->n, rep);
}
} // namespace

sg_status sg_trsv_begin(sg_ctx *ctx, sg_backend backend, const sg_trsv_problem *P, sg_report *rep, bool a_known)
{
  sg_report_clear(rep, SG_TRI_AUTO);
  sg_status st = check_ctx(ctx, backend, "sg_trsv", rep);
  if (st != SG_OK) return st;
  if ((st = check_matrix(P, rep)) != SG_OK) return st;
  if (P->nrhs < 1 || P->nrhs > SG_TRSV_MAX_NRHS)
    return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "nrhs = %lld right-hand sides, must be in 1..%d (solve larger blocks in chunks)", P->nrhs,
                         SG_TRSV_MAX_NRHS);
  if (P->nrhs > 1 && ((st = check_ld("ldb", P->ldb, P->n, P->nrhs, rep)) != SG_OK || (st = check_ld("ldx", P->ldx, P->n, P->nrhs, rep)) != SG_OK))
    return st;
  if (!P->A || !P->B || !P->X)
    return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "NULL array pointer (%s)", !P->A ? "A" : !P->B ? "B" : "X");
  if ((st = check_alias(P->n, P->nrhs, P->A, P->lda, P->B, P->ldb, P->X, P->ldx, word_size(P->prec), rep)) != SG_OK) return st;
  const void *ptrs[3]  = {P->A, P->B, P->X};
  const char *names[3] = {"A", "B", "X"};
  const int   skip     = a_known ? 1 : 0;
  return check_dev_ptrs(backend, 3 - skip, ptrs + skip, names + skip, rep);
}

sg_status sg_trsv_plan_begin(sg_ctx *ctx, sg_backend backend, const sg_trsv_problem *P, sg_trsv_plan *plan, sg_report *rep)
{
  sg_report_clear(rep, SG_TRI_AUTO);
  if (!plan) return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "sg_trsv_plan_create_%s: the plan pointer is NULL", twin_name(backend));
  *plan        = nullptr;
  sg_status st = check_ctx(ctx, backend, "sg_trsv_plan_create", rep);
  if (st != SG_OK) return st;
  if ((st = check_matrix(P, rep)) != SG_OK) return st;
  if (!P->A) return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "NULL array pointer (A)");
  const void *ptrs[1]  = {P->A};
  const char *names[1] = {"A"};
  return check_dev_ptrs(backend, 1, ptrs, names, rep);
}

sg_status sg_trsv_batch_begin(sg_ctx *ctx, sg_backend backend, const sg_trsv_batch *B, sg_report *rep)
{
  sg_report_clear(rep, SG_TRI_AUTO);
  sg_status st = check_ctx(ctx, backend, "sg_trsv_batch_solve", rep);
  if (st != SG_OK) return st;
  if (!B) return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "the batch descriptor is NULL");
  if ((st = check_enums(B->prec, B->uplo, B->trans, B->diag, rep)) != SG_OK) return st;
  if (B->nbatch < 1) return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "batch count nbatch = %lld, must be >= 1", B->nbatch);
  if (B->n < 1 || B->n > SG_TRSV_BATCH_MAX_N)
    return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "order n = %d, must be in 1..%d for a batched solve (use sg_trsv for larger systems)",
                         B->n, SG_TRSV_BATCH_MAX_N);
  if (B->nrhs < 1 || B->nrhs > SG_TRSV_MAX_NRHS)
    return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "nrhs = %d right-hand sides, must be in 1..%d", B->nrhs, SG_TRSV_MAX_NRHS);
  if (!B->ldav && B->lda < B->n)
    return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "leading dimension lda = %d must be >= n = %d (or give per-system ldav)", B->lda, B->n);
  if (!B->ldxv && B->ldx < B->n)
    return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "leading dimension ldx = %d must be >= n = %d (or give per-system ldxv)", B->ldx, B->n);
  if (!B->A || !B->X) return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "NULL pointer array (%s)", !B->A ? "A" : "X");
  const void *ptrs[5]  = {B->A, B->X, B->nv, B->ldav, B->ldxv};
  const char *names[5] = {"A (pointer array)", "X (pointer array)", "nv", "ldav", "ldxv"};
  return check_dev_ptrs(backend, 5, ptrs, names, rep);
}

sg_status sg_getrf_begin(sg_ctx *ctx, sg_backend backend, sg_precision prec, long long n, const void *A, long long lda, const int *perm,
                         sg_report *rep)
{
  sg_report_clear(rep, SG_TRI_AUTO);
  sg_status st = check_ctx(ctx, backend, "sg_getrf", rep);
  if (st == SG_OK) st = check_prec(prec, rep);
  if (st != SG_OK) return st;
  if (n < 1 || n > SG_TRSV_MAX_N) return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "order n = %lld, must be in 1..%lld", n, (long long)SG_TRSV_MAX_N);
  if ((st = check_ld("lda", lda, n, n, rep)) != SG_OK) return st;
  if (!A || !perm) return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "NULL array pointer (%s)", !A ? "A" : "perm");
  const void *ptrs[2]  = {A, perm};
  const char *names[2] = {"A", "perm"};
  return check_dev_ptrs(backend, 2, ptrs, names, rep);
}

sg_status sg_getrs_begin(sg_ctx *ctx, sg_backend backend, sg_precision prec, sg_trans trans, long long n, long long nrhs, const void *LU,
                         long long lda, const int *perm, const void *B, long long ldb, const void *X, long long ldx, sg_report *rep)
{
  sg_report_clear(rep, SG_TRI_AUTO);
  sg_status st = check_ctx(ctx, backend, "sg_getrs", rep);
  if (st == SG_OK) st = check_prec(prec, rep);
  if (st == SG_OK) st = check_trans(trans, rep);
  if (st != SG_OK) return st;
  if (n < 1 || n > SG_TRSV_MAX_N) return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "order n = %lld, must be in 1..%lld", n, (long long)SG_TRSV_MAX_N);
  if (nrhs < 1 || nrhs > INT_MAX) return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "nrhs = %lld right-hand sides, must be >= 1", nrhs);
  if ((st = check_ld("lda", lda, n, n, rep)) != SG_OK) return st;
  if (nrhs > 1 && ((st = check_ld("ldb", ldb, n, nrhs, rep)) != SG_OK || (st = check_ld("ldx", ldx, n, nrhs, rep)) != SG_OK)) return st;
  if (!LU || !perm || !B || !X)
    return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "NULL array pointer (%s)", !LU ? "LU" : !perm ? "perm" : !B ? "B" : "X");
  if ((st = check_alias(n, nrhs, LU, lda, B, ldb, X, ldx, word_size(prec), rep)) != SG_OK) return st;
  const void *ptrs[4]  = {LU, perm, B, X};
  const char *names[4] = {"LU", "perm", "B", "X"};
  return check_dev_ptrs(backend, 4, ptrs, names, rep);
}

sg_status sg_trsv_report_fail(sg_report *rep, int cls, long long system, long long row, double value)
{
  char where[64] = "triangular solve";
  if (system >= 0) snprintf(where, sizeof where, "triangular solve, system %lld", system);
  switch (cls) {
  case SG_FAIL_INPUT:
    return sg_report_set(rep, SG_ERR_NONFINITE, system, row, value,
                         "%s: diagonal entry A(%lld,%lld) = %g is infinite (0-based indices); the matrix holds non-finite values", where, row,
                         row, value);
  case SG_FAIL_PIVOT:
  case SG_FAIL_PIVOT_NONFINITE:
    return sg_report_set(rep, SG_ERR_ZERO_PIVOT, system, row, value,
                         "%s: diagonal entry A(%lld,%lld) = %g is zero, tiny or NaN (|d| <= pivtol; 0-based indices); the triangular "
                         "matrix is singular",
                         where, row, row, value);
  default:
    return sg_report_set(rep, SG_ERR_NONFINITE, system, row, value,
                         "%s: the solution is not finite at row %lld (value %g, 0-based): overflow, a badly conditioned matrix or "
                         "Inf/NaN in A or B",
                         where, row, value);
  }
}

// ---- dispatchers ---------------------------------------------------------------------
extern "C" sg_status sg_trsv(sg_ctx *ctx, const sg_trsv_problem *P, double pivtol, sg_report *rep)
{
  return sg_ctx_backend(ctx) == SG_BACKEND_CUDA ? sg_trsv_cuda(ctx, P, pivtol, rep) : sg_trsv_host(ctx, P, pivtol, rep);
}

extern "C" sg_status sg_trsv_plan_create(sg_ctx *ctx, const sg_trsv_problem *P, double pivtol, sg_trsv_plan *plan, sg_report *rep)
{
  return sg_ctx_backend(ctx) == SG_BACKEND_CUDA ? sg_trsv_plan_create_cuda(ctx, P, pivtol, plan, rep) : sg_trsv_plan_create_host(ctx, P, pivtol, plan, rep);
}

extern "C" sg_status sg_trsv_plan_solve(sg_ctx *ctx, sg_trsv_plan plan, long long nrhs, const void *B, long long ldb, void *X, long long ldx, sg_report *rep)
{
  sg_report local;
  if (!rep) rep = &local;
  sg_report_clear(rep, SG_TRI_AUTO);
  if (!plan) return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "sg_trsv_plan_solve: the plan is NULL (sg_trsv_plan_create makes one)");
  if (!ctx) return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "sg_trsv_plan_solve: the context is NULL");
  if (ctx->backend != plan->backend)
    return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "sg_trsv_plan_solve: the plan was made for the %s backend, the context is %s", twin_name(plan->backend),
                         twin_name(ctx->backend));
  sg_trsv_problem P = plan->P;
  P.nrhs            = nrhs;
  P.B               = B;
  P.ldb             = ldb;
  P.X               = X;
  P.ldx             = ldx;
  return plan->backend == SG_BACKEND_CUDA ? sg_trsv_plan_solve_cuda(ctx, plan, &P, rep) : sg_trsv_host(ctx, &P, plan->pivtol, rep);
}

sg_status sg_trsv_plan_run(sg_ctx *ctx, sg_trsv_plan plan, const sg_trsv_problem *P, sg_report *rep)
{
  if (plan->backend == SG_BACKEND_CUDA) {
    sg_report_clear(rep, SG_TRI_AUTO);
    return sg_trsv_plan_run_cuda(ctx, plan, P, rep);
  }
  return sg_trsv_host(ctx, P, plan->pivtol, rep);
}

extern "C" void sg_trsv_plan_destroy(sg_trsv_plan *plan)
{
  if (!plan || !*plan) return;
  if ((*plan)->backend == SG_BACKEND_CUDA) sg_trsv_plan_free_cuda(*plan);
  delete *plan;
  *plan = nullptr;
}

extern "C" sg_status sg_trsv_batch_solve(sg_ctx *ctx, const sg_trsv_batch *B, double pivtol, sg_report *rep)
{
  return sg_ctx_backend(ctx) == SG_BACKEND_CUDA ? sg_trsv_batch_solve_cuda(ctx, B, pivtol, rep) : sg_trsv_batch_solve_host(ctx, B, pivtol, rep);
}

extern "C" sg_status sg_getrf(sg_ctx *ctx, sg_precision prec, long long n, void *A, long long lda, int *perm, double pivtol, sg_report *rep)
{
  return sg_ctx_backend(ctx) == SG_BACKEND_CUDA ? sg_getrf_cuda(ctx, prec, n, A, lda, perm, pivtol, rep)
                                                : sg_getrf_host(ctx, prec, n, A, lda, perm, pivtol, rep);
}

extern "C" sg_status sg_getrs(sg_ctx *ctx, sg_precision prec, sg_trans trans, long long n, long long nrhs, const void *LU, long long lda,
                              const int *perm, const void *B, long long ldb, void *X, long long ldx, sg_report *rep)
{
  return sg_ctx_backend(ctx) == SG_BACKEND_CUDA ? sg_getrs_cuda(ctx, prec, trans, n, nrhs, LU, lda, perm, B, ldb, X, ldx, rep)
                                                : sg_getrs_host(ctx, prec, trans, n, nrhs, LU, lda, perm, B, ldb, X, ldx, rep);
}
