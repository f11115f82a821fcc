// Internal declarations shared by the dense triangular / LU kernel files (no PETSc):
// trsv_common.cpp (prologues, dispatchers, reports), trsv_host.cpp, trsv_cuda.cu,
// lu_host.cpp, lu_cuda.cu.
#pragma once
#include "sys/sg_ctx.hpp"
#include "structgpu/trsv_kernels.h"

// Common prologues of the host and CUDA twins: clear rep, check ctx (and that its backend
// is `backend`), the enums, sizes, leading dimensions and pointers of what is in host memory
// (the structs themselves). SG_ERR_ARG with a sentence in rep->msg, touching nothing.
// A CUDA twin additionally checks (sg_cuda_check_ptr) that the data pointers are device
// accessible; with a_known (a plan's solve: its create checked A) only B and X are.
sg_status sg_trsv_begin(sg_ctx *ctx, sg_backend backend, const sg_trsv_problem *P, sg_report *rep, bool a_known = false);
sg_status sg_trsv_batch_begin(sg_ctx *ctx, sg_backend backend, const sg_trsv_batch *B, sg_report *rep);
sg_status sg_getrf_begin(sg_ctx *ctx, sg_backend backend, sg_precision prec, long long n, const void *A, long long lda, const int *perm, sg_report *rep);
sg_status sg_getrs_begin(sg_ctx *ctx, sg_backend backend, sg_precision prec, sg_trans trans, long long n, long long nrhs, const void *LU, long long lda,
                         const int *perm, const void *B, long long ldb, const void *X, long long ldx, sg_report *rep);

// Breakdown report of a triangular solve (sg_fail_class from sg_ctx.hpp: SG_FAIL_PIVOT for a
// zero / tiny / NaN diagonal entry, SG_FAIL_INPUT for an infinite one, SG_FAIL_RESULT for a
// non-finite solution entry). system = -1 for sg_trsv. Fills rep with a sentence naming the
// system, row and value; returns the status (ZERO_PIVOT or NONFINITE).
sg_status sg_trsv_report_fail(sg_report *rep, int cls, long long system, long long row, double value);

// Breakdown test of a diagonal entry d, host and device: true when d cannot be divided by.
template <class T> SG_HD bool sg_trsv_bad_diag(T d, T pivtol) { return !(fabs(d) > pivtol) || !(fabs(d) < (T)INFINITY); }
// The class of a bad diagonal entry (caller has checked sg_trsv_bad_diag).
template <class T> SG_HD int sg_trsv_diag_class(T d) { return (fabs(d) == (T)INFINITY) ? SG_FAIL_INPUT : SG_FAIL_PIVOT; }

// ---- plans (sg_trsv_plan_*): the analysed matrix and, on the GPU, its inverted diagonal blocks
struct sg_trsv_plan_s {
  sg_backend      backend;
  sg_trsv_problem P;       // the matrix and op (B, X, nrhs, ldb, ldx unused)
  double          pivtol;  // as given to create (solves without a filled plan check with it)
  void           *inv;     // CUDA: Dinv_I, P_I (and Q_I) of every block row, device memory (trsv_hybrid_solve)
  size_t          inv_bytes;
  int             la;      // the look-ahead they were made for
  int             filled;  // inv holds them: the solve skips the inversions
  void           *pinv;    // CUDA, orders of the one-cluster kernel: H_o, G_o of the odd block rows (paired look-ahead,
                           // trsv_pair_fill), device memory, or NULL
  long long       one_solves;  // CUDA: its solves that ran the one-CTA chain (trsv_hybrid_solve; read by the tests)
};
// The prologue of sg_trsv_plan_create_*: clear rep, *plan = NULL, check plan, ctx (backend) and
// P as sg_trsv_begin does for the fields a plan uses. SG_ERR_ARG with a sentence.
sg_status sg_trsv_plan_begin(sg_ctx *ctx, sg_backend backend, const sg_trsv_problem *P, sg_trsv_plan *plan, sg_report *rep);
// The plan solve of the CUDA twin (trsv_cuda.cu; arguments checked) and the release of a plan's
// device memory (no-ops without CUDA, trsv_nocuda.cpp).
sg_status sg_trsv_plan_solve_cuda(sg_ctx *ctx, sg_trsv_plan plan, const sg_trsv_problem *P, sg_report *rep);
void      sg_trsv_plan_free_cuda(sg_trsv_plan plan);
// A plan's solve for a caller that has checked everything (sg_getrs_chunks: P is the plan's
// matrix and op, B and X checked by sg_getrs_begin or the workspace): no argument or pointer
// checks. sg_trsv_plan_run_cuda is the CUDA twin's (trsv_cuda.cu).
sg_status sg_trsv_plan_run(sg_ctx *ctx, sg_trsv_plan plan, const sg_trsv_problem *P, sg_report *rep);
sg_status sg_trsv_plan_run_cuda(sg_ctx *ctx, sg_trsv_plan plan, const sg_trsv_problem *P, sg_report *rep);

// ---- dense LU helpers shared by lu_host.cpp (definitions) and lu_cuda.cu ----
// LAPACK / cuSOLVER getrf row interchanges (1-based ipiv: row i was swapped with row
// ipiv[i]-1, i = 0..n-1 in order) -> sg_getrf's 0-based perm (perm[i] = row of the original
// A that became row i). False (perm unspecified) when some ipiv[i] is out of range.
bool sg_lu_ipiv_to_perm(long long n, const int *ipiv, int *perm);
// sg_getrf's breakdown threshold: (pivtol < 0 ? n * eps(prec) : pivtol) * amax.
double sg_lu_pivot_threshold(sg_precision prec, long long n, double pivtol, double amax);
// Breakdown scan of U's diagonal (host memory, entry i at diag[i*stride], precision prec):
// the smallest i with sg_trsv_bad_diag(U_ii, thresh) gives SG_ERR_ZERO_PIVOT (zero, tiny,
// NaN) or SG_ERR_NONFINITE (infinite) with a sentence; SG_OK when none.
sg_status sg_lu_check_diag(sg_precision prec, long long n, const void *diag, long long stride, double thresh, sg_report *rep);
// sg_getrf's report of a non-finite input entry A(row, col): SG_ERR_NONFINITE.
sg_status sg_lu_report_nonfinite(sg_report *rep, long long row, long long col, double value);
// sg_getrs's report of a perm entry outside 0..n-1: SG_ERR_ARG.
sg_status sg_lu_report_bad_perm(sg_report *rep, long long i, long long p, long long n);

// Row permutation of a block of k columns of n rows, host and device: entry e = i + c*n
// (i < n, c < k). Gather (NOTRANS, y = P b): dst(i,c) = src(perm[i],c); scatter (TRANS,
// x = P^T v): dst(perm[i],c) = src(i,c). The caller has checked perm (sg_lu_perm_ok).
template <class T>
SG_HD void sg_lu_permute(long long e, long long n, const int *perm, bool scatter, const T *src, long long lds, T *dst, long long ldd)
{
  const long long i = e % n, c = e / n, p = perm[i];
  if (scatter) dst[p + c * ldd] = src[i + c * lds];
  else dst[i + c * ldd] = src[p + c * lds];
}
SG_HD bool sg_lu_perm_ok(int p, long long n) { return p >= 0 && p < n; }

// The sg_getrs algorithm for both twins (lu_host.cpp): chunks of up to SG_TRSV_MAX_NRHS
// columns through a workspace W (n x k, ld n, sg_ctx_work slot SG_SLOT_LU, the backend's
// memory): NOTRANS: W = P B, L W = W, U X = W; TRANS: U^T W = B, L^T W = W, X = P^T W; the
// triangular solves by sg_trsv() on ctx's backend, the row permutation by the twin's
// `permute` (dst = gather/scatter of src as in sg_lu_permute, k columns). Arguments and perm
// already checked.
typedef sg_status (*sg_lu_permute_fn)(sg_ctx *ctx, sg_precision prec, long long n, long long k, const int *perm, bool scatter,
                                      const void *src, long long lds, void *dst, long long ldd, sg_report *rep);
// With tp (a getrs plan's four triangular plans: L, U, U^T, L^T), the triangular solves are
// sg_trsv_plan_solve() calls.
sg_status sg_getrs_chunks(sg_ctx *ctx, sg_precision prec, sg_trans trans, long long n, long long nrhs, const void *LU, long long lda,
                          const int *perm, const void *B, long long ldb, void *X, long long ldx, sg_lu_permute_fn permute, sg_report *rep,
                          sg_trsv_plan const *tp = nullptr);
// The CUDA twin's perm check (lu_cuda.cu: a kernel and a read-back; SG_ERR_ARG naming the first
// bad entry).
sg_status        sg_lu_perm_check_cuda(sg_ctx *ctx, long long n, const int *perm, sg_report *rep);
// The CUDA twin's getrs plan solve (arguments checked): on a context without deferred checks,
// its kernels run with the device record deferred and are checked once at the end (one
// synchronisation per solve instead of one per triangular solve; SG_GETRS_ONESYNC=0: per solve).
sg_status sg_getrs_plan_run_cuda(sg_ctx *ctx, sg_getrs_plan plan, sg_trans trans, long long nrhs, const void *B, long long ldb, void *X, long long ldx,
                                 sg_report *rep);
// A getrs plan: the factors it was made for and its triangular plans (tp[2], tp[3] made at the
// first SG_TRANS solve).
struct sg_getrs_plan_s {
  sg_backend   backend;
  sg_precision prec;
  long long    n, lda;
  const void  *LU;
  const int   *perm;
  sg_trsv_plan tp[4];
};
