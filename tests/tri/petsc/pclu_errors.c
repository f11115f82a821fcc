static const char help[] = "Bad input to PCDENSELU / PCShellSetDenseLU() gives the right PETSc error codes on every rank\n"
                           "(with the return error handler) and no leaks: a zero row or two identical rows -> PETSC_ERR_MAT_LU_ZRPVT\n"
                           "(gathered and local layouts), a nearly singular matrix passes the default pivot tolerance and fails a\n"
                           "larger -pc_denselu_pivot_tol, NaN in the operator or the right-hand side -> PETSC_ERR_FP, a non-square\n"
                           "operator or non-square diagonal blocks -> PETSC_ERR_ARG_SIZ; after a failure the PC recovers once the\n"
                           "matrix is repaired.\n";

#include "pclu_common.h"

/* run `call` with the return handler and check that it gives `expect` on this rank */
#define EXPECT_ERROR(call, expect, what) \
  do { \
    PetscErrorCode _e; \
    const char    *_msg = NULL; \
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL)); \
    _e = (call); \
    PetscCall(PetscPopErrorHandler()); \
    PetscCall(PetscErrorMessage(_e, NULL, &_msg)); \
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "  [%d] %-52s -> error %d (expected %d) %s\n", rank, what, (int)_e, (int)(expect), _e && _msg ? _msg : "")); \
    TTCheck(_e == (expect), "%s: got error code %d, expected %d", what, (int)_e, (int)(expect)); \
    nchecks++; \
  } while (0)

static PetscMPIInt rank, size;
static PetscInt    nchecks = 0;

/* PCApply that releases the read lock PCApply() leaves on b when it fails */
static PetscErrorCode Apply(PC pc, Vec b, Vec y)
{
  PetscErrorCode e = PCApply(pc, b, y);
  PetscInt       lock;

  PetscCall(VecLockGet(b, &lock));
  if (lock > 0) PetscCall(VecLockReadPop(b));
  return e;
}

static PetscErrorCode SetUpAndApply(PC pc, Vec b, Vec y)
{
  PetscFunctionBegin;
  PetscCall(PCSetUp(pc));
  PetscCall(Apply(pc, b, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a dense LU PC on A (shell: PCShellSetDenseLU) with the pivot tolerance tol ("" = default) */
static PetscErrorCode NewPC(Mat A, PCDenseLULayout layout, PetscBool shell, const char tol[], PC *pc)
{
  PetscFunctionBegin;
  PetscCall(PCCreate(PetscObjectComm((PetscObject)A), pc));
  PetscCall(PCSetOperators(*pc, A, A));
  if (tol[0]) PetscCall(PetscOptionsSetValue(NULL, "-pc_denselu_pivot_tol", tol));
  else PetscCall(PetscOptionsClearValue(NULL, "-pc_denselu_pivot_tol"));
  if (shell) PetscCall(PCShellSetDenseLU(*pc, layout));
  else {
    PetscCall(PCSetType(*pc, PCDENSELU));
    PetscCall(PCDenseLUSetLayout(*pc, layout));
    PetscCall(PCSetFromOptions(*pc));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* row `dst` of A (DLMatrix, N) replaced: by zeros (src < 0), or by a copy of row src whose entry in
   column src is multiplied by 1 + pert (pert = 0: an identical row, the matrix is singular) */
static PetscErrorCode ReplaceRow(Mat A, PetscInt N, PetscInt dst, PetscInt src, PetscReal pert)
{
  PetscInt rs, re;

  PetscFunctionBegin;
  PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  if (dst >= rs && dst < re) {
    PetscInt    cols[6], nz;
    PetscScalar vals[6];

    DLRow(dst, N, PETSC_FALSE, cols, vals, &nz);
    for (PetscInt k = 0; k < nz; k++) vals[k] = 0;
    PetscCall(MatSetValues(A, 1, &dst, nz, cols, vals, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FLUSH_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FLUSH_ASSEMBLY));
  if (src >= 0 && dst >= rs && dst < re) {
    PetscInt    cols[6], nz;
    PetscScalar vals[6];

    DLRow(src, N, PETSC_FALSE, cols, vals, &nz);
    for (PetscInt k = 0; k < nz; k++)
      if (cols[k] == src) vals[k] *= 1 + pert;
    PetscCall(MatSetValues(A, 1, &dst, nz, cols, vals, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* owner of global row r */
static PetscBool Owns(Mat A, PetscInt r)
{
  PetscInt rs = 0, re = 0;

  if (MatGetOwnershipRange(A, &rs, &re) != PETSC_SUCCESS) return PETSC_FALSE;
  return (PetscBool)(r >= rs && r < re);
}

int main(int argc, char **argv)
{
  const PetscInt N = 101, zrow = 50;
  Mat            A;
  Vec            b, y, yref;
  PC             pc;
  const char    *msg;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(StructGPUInitializePackage());
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));

  /* a zero row: every rank fails, in both layouts (local: the owner's block is singular, the others
     stop too), for the PC type and the shell; the failing rank's message names the column */
  PetscCall(DLMatrix(PETSC_COMM_WORLD, N, PETSC_DECIDE, PETSC_DECIDE, PETSC_FALSE, &A));
  PetscCall(MatCreateVecs(A, &y, &b));
  PetscCall(VecDuplicate(y, &yref));
  PetscCall(TTFillVec(b, 3));
  PetscCall(TTSolveRedundantLU(A, b, yref));
  PetscCall(ReplaceRow(A, N, zrow, -1, 0));
  for (PetscInt shell = 0; shell < 2; shell++) {
    for (PetscInt l = PC_DENSELU_GATHERED; l <= PC_DENSELU_LOCAL; l++) {
      char what[96];

      PetscCall(NewPC(A, (PCDenseLULayout)l, (PetscBool)shell, "", &pc));
      PetscCall(PetscSNPrintf(what, sizeof(what), "zero row, %s, %s", PCDenseLULayouts[l], shell ? "shell" : "PCDENSELU"));
      EXPECT_ERROR(SetUpAndApply(pc, b, y), PETSC_ERR_MAT_LU_ZRPVT, what);
      if ((l == PC_DENSELU_GATHERED && rank == 0) || (l == PC_DENSELU_LOCAL && Owns(A, zrow))) {
        PetscCall(PetscErrorMessage(PETSC_ERR_MAT_LU_ZRPVT, NULL, &msg));
        TTCheck(msg && strstr(msg, "zero pivot") && strstr(msg, "singular"), "the message of the failing rank does not explain the zero pivot: %s", msg ? msg : "(none)");
      }
      PetscCall(PCDestroy(&pc));
    }
  }

  /* recovery: the same PC after the row is repaired (no PCReset) solves correctly */
  PetscCall(NewPC(A, PC_DENSELU_GATHERED, PETSC_FALSE, "", &pc));
  EXPECT_ERROR(PCSetUp(pc), PETSC_ERR_MAT_LU_ZRPVT, "zero row, PCSetUp");
  PetscCall(MatDestroy(&A));
  PetscCall(DLMatrix(PETSC_COMM_WORLD, N, PETSC_DECIDE, PETSC_DECIDE, PETSC_FALSE, &A));
  PetscCall(PCSetOperators(pc, A, A));
  EXPECT_ERROR(SetUpAndApply(pc, b, y), PETSC_SUCCESS, "repaired matrix, same PC");
  {
    PetscReal rel;

    PetscCall(TTRelDiff(y, yref, &rel));
    TTCheck(rel <= TT_TOL, "after recovery: relative error %g", (double)rel);
  }
  PetscCall(PCDestroy(&pc));

  /* two identical rows (17 and 83, on different ranks for np > 1): singular */
  PetscCall(ReplaceRow(A, N, 83, 17, 0));
  PetscCall(NewPC(A, PC_DENSELU_GATHERED, PETSC_TRUE, "", &pc));
  EXPECT_ERROR(SetUpAndApply(pc, b, y), PETSC_ERR_MAT_LU_ZRPVT, "rows 17 and 83 identical, gathered");
  PetscCall(PCDestroy(&pc));
  /* nearly identical (one entry differs by a relative 1e-11): passes the default tolerance
     (n eps = 2.2e-14 relative to max |a_ij|), fails 1e-8 */
  PetscCall(ReplaceRow(A, N, 83, 17, 1e-11));
  PetscCall(NewPC(A, PC_DENSELU_GATHERED, PETSC_FALSE, "", &pc));
  EXPECT_ERROR(SetUpAndApply(pc, b, y), PETSC_SUCCESS, "rows 17, 83 differ by 1e-11, default tolerance");
  PetscCall(PCDestroy(&pc));
  PetscCall(NewPC(A, PC_DENSELU_GATHERED, PETSC_FALSE, "1e-8", &pc));
  EXPECT_ERROR(SetUpAndApply(pc, b, y), PETSC_ERR_MAT_LU_ZRPVT, "rows 17, 83 differ by 1e-11, pivot_tol 1e-8");
  PetscCall(PCDestroy(&pc));
  PetscCall(PetscOptionsClearValue(NULL, "-pc_denselu_pivot_tol"));
  PetscCall(MatDestroy(&A));

  /* NaN in the operator: PETSC_ERR_FP at setup on every rank */
  PetscCall(DLMatrix(PETSC_COMM_WORLD, N, PETSC_DECIDE, PETSC_DECIDE, PETSC_FALSE, &A));
  if (Owns(A, 30)) PetscCall(MatSetValue(A, 30, 30, (PetscScalar)NAN, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  for (PetscInt l = PC_DENSELU_GATHERED; l <= PC_DENSELU_LOCAL; l++) {
    PetscCall(NewPC(A, (PCDenseLULayout)l, PETSC_FALSE, "", &pc));
    EXPECT_ERROR(PCSetUp(pc), PETSC_ERR_FP, l == PC_DENSELU_GATHERED ? "NaN in the operator, gathered" : "NaN in the operator, local");
    PetscCall(PCDestroy(&pc));
  }
  PetscCall(MatDestroy(&A));

  /* NaN in the right-hand side: PETSC_ERR_FP on every rank */
  PetscCall(DLMatrix(PETSC_COMM_WORLD, N, PETSC_DECIDE, PETSC_DECIDE, PETSC_FALSE, &A));
  if (Owns(A, 40)) PetscCall(VecSetValue(b, 40, (PetscScalar)NAN, INSERT_VALUES));
  PetscCall(VecAssemblyBegin(b));
  PetscCall(VecAssemblyEnd(b));
  for (PetscInt l = PC_DENSELU_GATHERED; l <= PC_DENSELU_LOCAL; l++) {
    PetscCall(NewPC(A, (PCDenseLULayout)l, PETSC_FALSE, "", &pc));
    PetscCall(PCSetUp(pc));
    EXPECT_ERROR(Apply(pc, b, y), PETSC_ERR_FP, l == PC_DENSELU_GATHERED ? "NaN in the right-hand side, gathered" : "NaN in the right-hand side, local");
    PetscCall(PCDestroy(&pc));
  }
  PetscCall(TTFillVec(b, 3));
  PetscCall(MatDestroy(&A));

  /* a non-square operator, and (np > 1) square but with non-square diagonal blocks in the local layout */
  {
    PetscInt rs, re;

    PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, N, N + 2, 1, NULL, 1, NULL, &A));
    PetscCall(MatGetOwnershipRange(A, &rs, &re));
    for (PetscInt i = rs; i < re; i++) PetscCall(MatSetValue(A, i, i, 1.0, INSERT_VALUES));
    PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
    PetscCall(NewPC(A, PC_DENSELU_GATHERED, PETSC_FALSE, "", &pc));
    EXPECT_ERROR(PCSetUp(pc), PETSC_ERR_ARG_SIZ, "non-square operator (N x N+2)");
    PetscCall(PCDestroy(&pc));
    PetscCall(MatDestroy(&A));
  }
  if (size > 1) {
    const PetscInt ncol = rank == 0 ? N : 0; /* rows split evenly, all columns on rank 0 */

    PetscCall(DLMatrix(PETSC_COMM_WORLD, N, PETSC_DECIDE, ncol, PETSC_FALSE, &A));
    PetscCall(NewPC(A, PC_DENSELU_LOCAL, PETSC_TRUE, "", &pc));
    EXPECT_ERROR(PCSetUp(pc), PETSC_ERR_ARG_SIZ, "local layout, non-square diagonal blocks");
    PetscCall(PCDestroy(&pc));
    PetscCall(NewPC(A, PC_DENSELU_GATHERED, PETSC_TRUE, "", &pc)); /* the gathered layout does not care */
    EXPECT_ERROR(PCSetUp(pc), PETSC_SUCCESS, "gathered layout, other column layout");
    PetscCall(PCDestroy(&pc));
    PetscCall(MatDestroy(&A));
  }

  /* the CUDA backend requested from a build without CUDA */
#if !defined(PETSC_HAVE_CUDA)
  PetscCall(DLMatrix(PETSC_COMM_WORLD, N, PETSC_DECIDE, PETSC_DECIDE, PETSC_FALSE, &A));
  PetscCall(PetscOptionsSetValue(NULL, "-pc_denselu_backend", "cuda"));
  PetscCall(NewPC(A, PC_DENSELU_GATHERED, PETSC_FALSE, "", &pc));
  EXPECT_ERROR(PCSetUp(pc), PETSC_ERR_SUP, "-pc_denselu_backend cuda without CUDA");
  PetscCall(PCDestroy(&pc));
  PetscCall(PetscOptionsClearValue(NULL, "-pc_denselu_backend"));
  PetscCall(MatDestroy(&A));
#endif

  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&yref));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "pclu_errors: %" PetscInt_FMT " checks on rank 0: OK\n", nchecks));
  PetscCall(PetscFinalize());
  return 0;
}
