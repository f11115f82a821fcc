static const char help[] = "Bad input to the tridiagonal preconditioners gives the right PETSc error codes (with the\n"
                           "return error handler), on every rank where the error is collective, and no leaks:\n"
                           "zero pivot -> PETSC_ERR_MAT_LU_ZRPVT, NaN in the operator -> PETSC_ERR_FP at setup,\n"
                           "NaN in the right-hand side -> PETSC_ERR_FP, T of the wrong size -> PETSC_ERR_ARG_SIZ,\n"
                           "lines mode without a DMDA / on a non-DMDA -> PETSC_ERR_ARG_WRONG, dof 2 -> PETSC_ERR_SUP,\n"
                           "rd on a row that is not diagonally dominant -> PETSC_ERR_SUP (local: owning rank, global: every rank).\n";

#include "pctri_common.h"
#include <petscdmshell.h>

/* run `call` with the return handler and check that it gives `expect` on this rank */
#define EXPECT_ERROR(call, expect, what) \
  do { \
    PetscErrorCode _e; \
    const char    *_msg = NULL; \
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL)); \
    _e = (call); \
    PetscCall(PetscPopErrorHandler()); \
    PetscCall(PetscErrorMessage(_e, NULL, &_msg)); \
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "  [%d] %-40s -> error %d (expected %d) %s\n", rank, what, (int)_e, (int)(expect), _e && _msg ? _msg : "")); \
    TTCheck(_e == (expect), "%s: got error code %d, expected %d", what, (int)_e, (int)(expect)); \
    nchecks++; \
  } while (0)

static PetscMPIInt rank;
static PetscInt    nchecks = 0;

/* tridiagonal matrix of size N whose row `zrow` is entirely zero (singular) and, if nanrow >= 0,
   with a NaN at (nanrow, nanrow + 1) */
static PetscErrorCode BadMatrix(PetscInt N, PetscInt zrow, PetscInt nanrow, Mat *A)
{
  PetscInt rs, re;

  PetscFunctionBegin;
  PetscCall(TTBandMatrix(PETSC_COMM_WORLD, N, PETSC_DECIDE, 1, A));
  PetscCall(MatGetOwnershipRange(*A, &rs, &re));
  for (PetscInt i = rs; i < re; i++) {
    if (i == zrow) {
      for (PetscInt j = PetscMax(0, i - 1); j <= PetscMin(N - 1, i + 1); j++) PetscCall(MatSetValue(*A, i, j, 0.0, INSERT_VALUES));
    }
    if (i == nanrow) PetscCall(MatSetValue(*A, i, i + 1, (PetscScalar)NAN, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

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

static PetscErrorCode NewPC(Mat A, PCTridiagMode mode, const char alg[], PC *pc)
{
  PetscFunctionBegin;
  PetscCall(PCCreate(PETSC_COMM_WORLD, pc));
  PetscCall(PCSetOperators(*pc, A, A));
  PetscCall(PCSetType(*pc, PCTRIDIAG));
  PetscCall(PCTridiagSetMode(*pc, mode));
  PetscCall(TTSetAlgorithm(*pc, alg));
  PetscCall(PCSetFromOptions(*pc));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* 2D DMDA operator: diag on the diagonal, -1 for the grid neighbours along the first ndirs directions */
static PetscErrorCode StarMatrix(DM da, PetscScalar diag, PetscInt ndirs, Mat *A)
{
  PetscInt xs, ys, xm, ym, M[2];

  PetscFunctionBegin;
  PetscCall(DMDAGetInfo(da, NULL, &M[0], &M[1], NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
  PetscCall(DMDAGetCorners(da, &xs, &ys, NULL, &xm, &ym, NULL));
  PetscCall(DMCreateMatrix(da, A));
  for (PetscInt j = ys; j < ys + ym; j++)
    for (PetscInt i = xs; i < xs + xm; i++) {
      MatStencil  row = {.i = i, .j = j}, col[5];
      PetscScalar v[5];
      PetscInt    nc = 0;

      col[nc] = row, v[nc++] = diag;
      if (i > 0) col[nc] = row, col[nc].i--, v[nc++] = -1.0;
      if (i < M[0] - 1) col[nc] = row, col[nc].i++, v[nc++] = -1.0;
      if (ndirs > 1 && j > 0) col[nc] = row, col[nc].j--, v[nc++] = -1.0;
      if (ndirs > 1 && j < M[1] - 1) col[nc] = row, col[nc].j++, v[nc++] = -1.0;
      PetscCall(MatSetValuesStencil(*A, 1, &row, nc, col, v, INSERT_VALUES));
    }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  const PetscInt N = 101, zrow = 50;
  PetscMPIInt    size;
  PetscInt       rs, re;
  Mat            A, T;
  Vec            b, y;
  PC             pc;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(StructGPUInitializePackage());
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));

  /* zero pivot: global mode fails on every rank, local mode on the rank owning the zero row */
  PetscCall(BadMatrix(N, zrow, -1, &A));
  PetscCall(MatCreateVecs(A, &y, &b));
  PetscCall(TTFillVec(b, 7));
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  for (PetscInt ia = 0; ia < TT_NALGS; ia++) {
    char what[64];

    PetscCall(NewPC(A, PC_TRIDIAG_GLOBAL, TTAlgs[ia], &pc));
    PetscCall(PetscSNPrintf(what, sizeof(what), "zero row, global, %s", TTAlgs[ia]));
    EXPECT_ERROR(SetUpAndApply(pc, b, y), PETSC_ERR_MAT_LU_ZRPVT, what);
    PetscCall(PCDestroy(&pc));
    PetscCall(NewPC(A, PC_TRIDIAG_LOCAL, TTAlgs[ia], &pc));
    PetscCall(PetscSNPrintf(what, sizeof(what), "zero row, local, %s", TTAlgs[ia]));
    EXPECT_ERROR(SetUpAndApply(pc, b, y), (zrow >= rs && zrow < re) ? PETSC_ERR_MAT_LU_ZRPVT : PETSC_SUCCESS, what);
    PetscCall(PCDestroy(&pc));
  }
  PetscCall(MatDestroy(&A));

  /* a row that is not diagonally dominant (|d| = 1.5 < 2): rd refuses it with PETSC_ERR_SUP, in
     local mode (block Jacobi) on the rank that owns it, in global mode on every rank (the final
     block solve's failure is made collective); thomas solves the same operator */
  PetscCall(TTBandMatrix(PETSC_COMM_WORLD, N, PETSC_DECIDE, 1, &A));
  if (rs <= 30 && 30 < re) {
    PetscCall(MatSetValue(A, 30, 29, 1.0, INSERT_VALUES));
    PetscCall(MatSetValue(A, 30, 30, 1.5, INSERT_VALUES));
    PetscCall(MatSetValue(A, 30, 31, 1.0, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(NewPC(A, PC_TRIDIAG_LOCAL, "rd", &pc));
  EXPECT_ERROR(SetUpAndApply(pc, b, y), (rs <= 30 && 30 < re) ? PETSC_ERR_SUP : PETSC_SUCCESS, "row not diagonally dominant, local, rd");
  PetscCall(PCDestroy(&pc));
  PetscCall(NewPC(A, PC_TRIDIAG_GLOBAL, "rd", &pc));
  EXPECT_ERROR(SetUpAndApply(pc, b, y), PETSC_ERR_SUP, "row not diagonally dominant, global, rd");
  PetscCall(PCDestroy(&pc));
  PetscCall(NewPC(A, PC_TRIDIAG_LOCAL, "thomas", &pc));
  EXPECT_ERROR(SetUpAndApply(pc, b, y), PETSC_SUCCESS, "row not diagonally dominant, local, thomas");
  PetscCall(PCDestroy(&pc));
  PetscCall(NewPC(A, PC_TRIDIAG_GLOBAL, "thomas", &pc));
  EXPECT_ERROR(SetUpAndApply(pc, b, y), PETSC_SUCCESS, "row not diagonally dominant, global, thomas");
  PetscCall(PCDestroy(&pc));
  PetscCall(MatDestroy(&A));

  /* NaN in the operator: PETSC_ERR_FP at setup on every rank */
  PetscCall(BadMatrix(N, -1, 17, &A));
  PetscCall(NewPC(A, PC_TRIDIAG_GLOBAL, "auto", &pc));
  EXPECT_ERROR(PCSetUp(pc), PETSC_ERR_FP, "NaN in the operator, PCSetUp");
  PetscCall(PCDestroy(&pc));
  PetscCall(MatDestroy(&A));

  /* NaN in the right-hand side: PETSC_ERR_FP (global: every rank) */
  PetscCall(TTBandMatrix(PETSC_COMM_WORLD, N, PETSC_DECIDE, 1, &A));
  PetscCall(NewPC(A, PC_TRIDIAG_GLOBAL, "auto", &pc));
  PetscCall(PCSetUp(pc));
  if (rs <= 30 && 30 < re) PetscCall(VecSetValue(b, 30, (PetscScalar)NAN, INSERT_VALUES));
  PetscCall(VecAssemblyBegin(b));
  PetscCall(VecAssemblyEnd(b));
  EXPECT_ERROR(Apply(pc, b, y), PETSC_ERR_FP, "NaN in the right-hand side, global");
  PetscCall(PCDestroy(&pc));
  PetscCall(TTFillVec(b, 7));

  /* T of the wrong global size, and of the right size with another row layout */
  PetscCall(TTBandMatrix(PETSC_COMM_WORLD, N + 1, PETSC_DECIDE, 1, &T));
  PetscCall(PCCreate(PETSC_COMM_WORLD, &pc));
  PetscCall(PCSetOperators(pc, A, A));
  PetscCall(PCShellSetTridiagonal(pc, T, PETSC_TRUE));
  EXPECT_ERROR(PCSetUp(pc), PETSC_ERR_ARG_SIZ, "T with N+1 rows");
  PetscCall(PCDestroy(&pc));
  PetscCall(MatDestroy(&T));
  if (size > 1) {
    PetscCall(TTBandMatrix(PETSC_COMM_WORLD, N, rank == 0 ? N : 0, 1, &T));
    PetscCall(PCCreate(PETSC_COMM_WORLD, &pc));
    PetscCall(PCSetOperators(pc, A, A));
    PetscCall(PCShellSetTridiagonal(pc, T, PETSC_FALSE));
    EXPECT_ERROR(PCSetUp(pc), PETSC_ERR_ARG_SIZ, "T with another row layout");
    PetscCall(PCDestroy(&pc));
    PetscCall(MatDestroy(&T));
  }

  /* lines mode without a DMDA (plain MPIAIJ), and PCShellSetLineSolve with a DMSHELL */
  PetscCall(NewPC(A, PC_TRIDIAG_LINES, "auto", &pc));
  EXPECT_ERROR(PCSetUp(pc), PETSC_ERR_ARG_WRONG, "lines mode on a matrix without DM");
  PetscCall(PCDestroy(&pc));
  {
    DM dm;

    PetscCall(DMShellCreate(PETSC_COMM_WORLD, &dm));
    PetscCall(PCCreate(PETSC_COMM_WORLD, &pc));
    PetscCall(PCSetOperators(pc, A, A));
    EXPECT_ERROR(PCShellSetLineSolve(pc, dm, 0), PETSC_ERR_ARG_WRONG, "PCShellSetLineSolve on a DMSHELL");
    PetscCall(PCSetDM(pc, dm));
    PetscCall(PCSetType(pc, PCTRIDIAG));
    PetscCall(PCTridiagSetMode(pc, PC_TRIDIAG_LINES));
    EXPECT_ERROR(PCSetUp(pc), PETSC_ERR_ARG_WRONG, "lines mode with a DMSHELL");
    PetscCall(PCDestroy(&pc));
    PetscCall(DMDestroy(&dm));
  }
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&y));
  PetscCall(MatDestroy(&A));

  /* DMDA with dof 2 -> PETSC_ERR_SUP; direction z on a 2D DMDA -> PETSC_ERR_ARG_OUTOFRANGE */
  {
    DM da;

    PetscCall(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, 11, 7, PETSC_DECIDE, PETSC_DECIDE, 2, 1, NULL, NULL, &da));
    PetscCall(DMSetUp(da));
    PetscCall(DMCreateMatrix(da, &A));
    PetscCall(MatShift(A, 1.0));
    PetscCall(PCCreate(PETSC_COMM_WORLD, &pc));
    PetscCall(PCSetOperators(pc, A, A));
    PetscCall(PCShellSetLineSolve(pc, da, 1));
    EXPECT_ERROR(PCSetUp(pc), PETSC_ERR_SUP, "line solve on a dof-2 DMDA");
    PetscCall(PCDestroy(&pc));
    PetscCall(MatDestroy(&A));
    PetscCall(DMDestroy(&da));
    PetscCall(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, 11, 7, PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, &da));
    PetscCall(DMSetUp(da));
    PetscCall(DMCreateMatrix(da, &A));
    PetscCall(MatShift(A, 1.0));
    PetscCall(PCCreate(PETSC_COMM_WORLD, &pc));
    PetscCall(PCSetOperators(pc, A, A));
    PetscCall(PCShellSetLineSolve(pc, da, 2));
    EXPECT_ERROR(PCSetUp(pc), PETSC_ERR_ARG_OUTOFRANGE, "direction z on a 2D DMDA");
    PetscCall(PCDestroy(&pc));
    PetscCall(MatDestroy(&A));
    PetscCall(DMDestroy(&da));
  }

  /* zero pivot in lines mode: the owner of grid point (5,3) fails and names the point */
  {
    DM          da;
    PetscInt    xs, ys, xm, ym;
    PetscInt    np[2];
    PetscBool   own;
    MatStencil  bad = {.i = 5, .j = 3};
    const char *msg;

    PetscCall(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, 11, 7, PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, &da));
    PetscCall(DMSetUp(da));
    PetscCall(DMDAGetCorners(da, &xs, &ys, NULL, &xm, &ym, NULL));
    own = (PetscBool)(xs <= 5 && 5 < xs + xm && ys <= 3 && 3 < ys + ym);
    PetscCall(StarMatrix(da, 4.0, 2, &A));
    PetscCall(MatZeroRowsStencil(A, own ? 1 : 0, &bad, 0.0, NULL, NULL));
    PetscCall(MatCreateVecs(A, &y, &b));
    PetscCall(TTFillVec(b, 9));
    /* lines cut at rank boundaries: the owner fails; with -pc_tridiag_lines_exact, when the line
       crosses ranks the spikes computed at setup break down and every rank stops, when it lies on
       one rank its owner fails at PCApply */
    PetscCall(DMDAGetInfo(da, NULL, NULL, NULL, NULL, &np[0], &np[1], NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    for (PetscInt exact = 0; exact < 2; exact++) {
      if (exact) PetscCall(PetscOptionsSetValue(NULL, "-pc_tridiag_lines_exact", "1"));
      for (PetscInt dir = 0; dir < 2; dir++) {
        char what[64];

        PetscCall(PetscSNPrintf(what, sizeof(what), "zero row in a%s-line%s", dir ? " y" : "n x", exact ? ", lines exact" : ""));
        PetscCall(PCCreate(PETSC_COMM_WORLD, &pc));
        PetscCall(PCSetOperators(pc, A, A));
        PetscCall(PCShellSetLineSolve(pc, da, dir));
        EXPECT_ERROR(SetUpAndApply(pc, b, y), own || (exact && np[dir] > 1) ? PETSC_ERR_MAT_LU_ZRPVT : PETSC_SUCCESS, what);
        if (own) {
          PetscCall(PetscErrorMessage(PETSC_ERR_MAT_LU_ZRPVT, NULL, &msg));
          TTCheck(msg && strstr(msg, "grid point (5,3,0)"), "%s: the message does not name grid point (5,3,0): %s", what, msg ? msg : "(none)");
        }
        PetscCall(PCDestroy(&pc));
      }
    }
    /* NaN in b at grid point (0,0) with lines exact: PETSC_ERR_FP on the ranks of that x-line */
    PetscCall(MatDestroy(&A));
    PetscCall(StarMatrix(da, 4.0, 2, &A));
    PetscCall(TTFillVec(b, 11));
    if (xs == 0 && ys == 0) PetscCall(VecSetValue(b, 0, (PetscScalar)NAN, INSERT_VALUES));
    PetscCall(VecAssemblyBegin(b));
    PetscCall(VecAssemblyEnd(b));
    PetscCall(PCCreate(PETSC_COMM_WORLD, &pc));
    PetscCall(PCSetOperators(pc, A, A));
    PetscCall(PCShellSetLineSolve(pc, da, 0));
    PetscCall(PCSetUp(pc));
    EXPECT_ERROR(Apply(pc, b, y), ys == 0 ? PETSC_ERR_FP : PETSC_SUCCESS, "NaN in b, x-lines exact");
    PetscCall(PCDestroy(&pc));
    PetscCall(PetscOptionsClearValue(NULL, "-pc_tridiag_lines_exact"));
    PetscCall(VecDestroy(&b));
    PetscCall(VecDestroy(&y));
    PetscCall(MatDestroy(&A));
    PetscCall(DMDestroy(&da));
  }

  PetscCall(PetscOptionsClearValue(NULL, "-pc_tridiag_algorithm"));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "pctri_errors: %" PetscInt_FMT " checks on rank 0: OK\n", nchecks));
  PetscCall(PetscFinalize());
  return 0;
}
