/*
   StructGPU dense triangular kernel family (src/tri, part 2): triangular solves (trsv with
   a few right-hand sides), batched small triangular solves, and a dense LU built on them.
   Plain C interface, no PETSc types; same conventions as tri_kernels.h (sg_ctx, sg_status,
   sg_report): every operation exists as a host reference twin (suffix _host, BLAS/LAPACK
   underneath, src/tri/trsv_host.cpp, src/tri/lu_host.cpp) and a CUDA version (suffix _cuda,
   device pointers, src/tri/trsv_cuda.cu, src/tri/lu_cuda.cu); the unsuffixed name dispatches
   on the context's backend.

   Matrices are column-major with a leading dimension (BLAS convention): element (i,j) of A
   is A[i + j*lda]. Only the triangle named by uplo is read (for unit diagonal, not the
   diagonal either); the other triangle may hold anything (e.g. the other LU factor).
*/
#ifndef STRUCTGPU_TRSV_KERNELS_H
#define STRUCTGPU_TRSV_KERNELS_H

#include "structgpu/tri_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { SG_LOWER = 0, SG_UPPER = 1 } sg_uplo;
typedef enum { SG_NOTRANS = 0, SG_TRANS = 1 } sg_trans; /* solve op(A) x = b, op(A) = A or A^T */
typedef enum { SG_NONUNIT = 0, SG_UNIT = 1 } sg_diag;

#define SG_TRSV_MAX_N       (1LL << 20) /* largest order of one triangular solve          */
#define SG_TRSV_MAX_NRHS    16          /* right-hand sides solved together by one call   */
#define SG_TRSV_BATCH_MAX_N 512         /* largest order in a batched solve               */

/* One triangular system op(A) X = B with nrhs right-hand sides. */
typedef struct {
  sg_precision prec;
  sg_uplo      uplo;
  sg_trans     trans;
  sg_diag      diag;
  long long    n;    /* order, 1 <= n <= SG_TRSV_MAX_N                                   */
  long long    nrhs; /* 1 <= nrhs <= SG_TRSV_MAX_NRHS                                     */
  const void  *A;    /* n x n, lda >= n                                                   */
  long long    lda;
  const void  *B; /* n x nrhs right-hand sides, ldb >= n (ignored when nrhs == 1)          */
  long long    ldb;
  void        *X; /* n x nrhs solution, ldx >= n; may alias B exactly (X == B, ldx == ldb) */
  long long    ldx;
} sg_trsv_problem;

/* Solve one triangular system. Breakdown (non-unit diagonal only): a diagonal entry d with
   !(|d| > pivtol) (zero, tiny, NaN) gives SG_ERR_ZERO_PIVOT, an infinite diagonal entry or a
   non-finite solution entry gives SG_ERR_NONFINITE; rep->row is the smallest such row
   (0-based, in A's numbering) and rep->value the diagonal entry. pivtol is absolute;
   pivtol <= 0 means exactly zero only. B is never modified (unless X aliases it); on error X
   is unspecified. Bad sizes / pointers / leading dimensions give SG_ERR_ARG and touch nothing. */
sg_status sg_trsv_host(sg_ctx *ctx, const sg_trsv_problem *P, double pivtol, sg_report *rep);
sg_status sg_trsv_cuda(sg_ctx *ctx, const sg_trsv_problem *P, double pivtol, sg_report *rep);
sg_status sg_trsv(sg_ctx *ctx, const sg_trsv_problem *P, double pivtol, sg_report *rep);

/* ---- Plans: repeated solves with one unchanged triangular matrix ----
   sg_trsv_plan_create analyses op(A) once, like the analysis phase of cuSPARSE SpSV: it
   checks every pivot and, on the GPU where the cluster kernels run (one right-hand side, A and
   lda 16-byte aligned; not float op = A from n = 24576), inverts the 32 x 32 diagonal blocks and
   forms the products the solve's chain needs, in device memory owned by the plan (about
   (1 + la) * 32 * n words: la = 4 for op = A^T where the solve takes the one-CTA chain (fp64
   n > 3584, fp32 n >= 16384), 2 for the other op = A^T plans and for the orders of the one-cluster
   kernel (fp64 n <= 3584, fp32 n <= 4096), else 1). sg_trsv_plan_solve then solves op(A) X = B without
   redoing that work; on the one-cluster kernel it may start while the kernel before it in the
   stream still runs (programmatic dependent launch: it waits for it before reading B and before
   writing X). Elsewhere (several right-hand sides, the host) it
   solves as sg_trsv() does. Only prec, uplo, trans, diag, n, A and lda of P are used (B, X, nrhs, ldb,
   ldx are ignored and may be NULL / 0). A must stay allocated and unchanged while the plan
   lives: after changing A's values, destroy the plan and create a new one. A CUDA plan's memory
   is on the device current at create: solve on that device.
   create: breakdown of the matrix (a zero, tiny or non-finite pivot, or Inf/NaN elsewhere in the
   triangle) is reported as sg_trsv() would report it for a zero right-hand side, and no plan is
   made (*plan = NULL). A CUDA context with deferred checks (sg_ctx_set_deferred) is first
   checked as by sg_ctx_check(), whose breakdown, if any, is returned. create is one solve's cost.
   solve: nrhs 1..SG_TRSV_MAX_NRHS right-hand sides B (ldb) into X (ldx), X may alias B exactly;
   the context must have the plan's backend; a non-finite solution entry gives SG_ERR_NONFINITE
   (the pivots were checked by create). destroy: frees the plan and sets *plan = NULL (NULL is fine). */
typedef struct sg_trsv_plan_s *sg_trsv_plan;
sg_status sg_trsv_plan_create_host(sg_ctx *ctx, const sg_trsv_problem *P, double pivtol, sg_trsv_plan *plan, sg_report *rep);
sg_status sg_trsv_plan_create_cuda(sg_ctx *ctx, const sg_trsv_problem *P, double pivtol, sg_trsv_plan *plan, sg_report *rep);
sg_status sg_trsv_plan_create(sg_ctx *ctx, const sg_trsv_problem *P, double pivtol, sg_trsv_plan *plan, sg_report *rep);
sg_status sg_trsv_plan_solve(sg_ctx *ctx, sg_trsv_plan plan, long long nrhs, const void *B, long long ldb, void *X, long long ldx, sg_report *rep);
void      sg_trsv_plan_destroy(sg_trsv_plan *plan);

/* Many independent small triangular systems, solved in place (X holds B on entry), in one
   launch. Pointer arrays and the optional per-system arrays live in the backend's memory
   (device memory for CUDA), like cuBLAS trsmBatched. */
typedef struct {
  sg_precision      prec;
  sg_uplo           uplo;
  sg_trans          trans;
  sg_diag           diag;
  long long         nbatch; /* number of systems, >= 1                                    */
  int               n;      /* uniform order (nv == NULL), else an upper bound of nv[]; 1..SG_TRSV_BATCH_MAX_N */
  const int        *nv;     /* NULL, or per-system orders 0 <= nv[s] <= n (0 = skip)      */
  int               nrhs;   /* 1..SG_TRSV_MAX_NRHS, same for all systems                  */
  const void *const *A;     /* A[s]: system s, column-major                               */
  int               lda;    /* uniform leading dimension (ldav == NULL), >= n             */
  const int        *ldav;   /* NULL, or per-system leading dimensions, ldav[s] >= nv[s]   */
  void *const      *X;      /* X[s]: right-hand sides in, solution out                    */
  int               ldx;    /* uniform (ldxv == NULL), >= n                               */
  const int        *ldxv;   /* NULL, or per-system                                        */
} sg_trsv_batch;

/* Batched solve. Breakdown as in sg_trsv(); a system whose diagonal breaks down is left
   untouched (its X keeps B), the others are solved, and the report names the smallest such
   system (rep->system) and its smallest bad row. Per-system sizes or leading dimensions out
   of range also leave that system untouched and give SG_ERR_ARG naming it. */
sg_status sg_trsv_batch_solve_host(sg_ctx *ctx, const sg_trsv_batch *B, double pivtol, sg_report *rep);
sg_status sg_trsv_batch_solve_cuda(sg_ctx *ctx, const sg_trsv_batch *B, double pivtol, sg_report *rep);
sg_status sg_trsv_batch_solve(sg_ctx *ctx, const sg_trsv_batch *B, double pivtol, sg_report *rep);

/* ---- Dense LU (the direct solver of the dense PCSHELL helper) ----
   sg_getrf: LU with partial pivoting of the n x n matrix A (in place: L unit lower, U upper,
   LAPACK getrf on the host, cuSOLVER getrf on the GPU). perm[i] (0-based, n ints in the
   backend's memory) is the row of the original A that became row i: P A = L U with
   (P b)[i] = b[perm[i]]. Breakdown: SG_ERR_ZERO_PIVOT when some |U_ii| <= pivtol * max|A_ij|
   (max over the input matrix) or U_ii == 0 (rep->row = i, rep->value = U_ii);
   SG_ERR_NONFINITE when A holds Inf/NaN. pivtol < 0 selects the default, n * eps(prec). */
sg_status sg_getrf_host(sg_ctx *ctx, sg_precision prec, long long n, void *A, long long lda, int *perm, double pivtol, sg_report *rep);
sg_status sg_getrf_cuda(sg_ctx *ctx, sg_precision prec, long long n, void *A, long long lda, int *perm, double pivtol, sg_report *rep);
sg_status sg_getrf(sg_ctx *ctx, sg_precision prec, long long n, void *A, long long lda, int *perm, double pivtol, sg_report *rep);

/* sg_getrs: solve op(A) X = B with the factors of sg_getrf, by the permutation and two
   sg_trsv() calls (NOTRANS: L then U; TRANS: U^T then L^T then the inverse permutation).
   B is n x nrhs (ldb), X may alias B exactly. nrhs any >= 1 (solved 16 columns at a time). */
sg_status sg_getrs_host(sg_ctx *ctx, sg_precision prec, sg_trans trans, long long n, long long nrhs, const void *LU, long long lda, const int *perm, const void *B, long long ldb, void *X, long long ldx, sg_report *rep);
sg_status sg_getrs_cuda(sg_ctx *ctx, sg_precision prec, sg_trans trans, long long n, long long nrhs, const void *LU, long long lda, const int *perm, const void *B, long long ldb, void *X, long long ldx, sg_report *rep);
sg_status sg_getrs(sg_ctx *ctx, sg_precision prec, sg_trans trans, long long n, long long nrhs, const void *LU, long long lda, const int *perm, const void *B, long long ldb, void *X, long long ldx, sg_report *rep);

/* sg_getrs with a plan, for many solves with one factorization (the dense direct PCSHELL helper
   and PCDENSELU use it): sg_getrs_plan_create checks perm once and makes the sg_trsv_plan of L
   and of U (those of U^T and L^T at the first SG_TRANS solve), so that each solve runs no perm
   check and no diagonal-block inversion. LU, lda and perm are those of sg_getrf, in the memory
   of ctx's backend; they must stay allocated and unchanged while the plan lives. create:
   SG_ERR_ARG as sg_getrs for bad arguments or a bad perm entry (*plan = NULL); a zero pivot of U
   (an LU that sg_getrf did not accept) gives SG_ERR_ZERO_PIVOT. solve: as sg_getrs, on a context
   of the plan's backend. destroy: frees the plan, *plan = NULL (NULL is fine). */
typedef struct sg_getrs_plan_s *sg_getrs_plan;
sg_status sg_getrs_plan_create(sg_ctx *ctx, sg_precision prec, long long n, const void *LU, long long lda, const int *perm, sg_getrs_plan *plan, sg_report *rep);
sg_status sg_getrs_plan_solve(sg_ctx *ctx, sg_getrs_plan plan, sg_trans trans, long long nrhs, const void *B, long long ldb, void *X, long long ldx, sg_report *rep);
void      sg_getrs_plan_destroy(sg_getrs_plan *plan);

#ifdef __cplusplus
}
#endif
#endif
