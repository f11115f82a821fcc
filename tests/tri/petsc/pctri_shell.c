static const char help[] = "PCShellSetTridiagonal() with a user matrix T (tridiagonal part of a pentadiagonal\n"
                           "operator): GMRES converges, PCApply equals PETSc's LU solve with T (global) or its\n"
                           "diagonal blocks (local); T = NULL and PCTRIDIAG take the tridiagonal part of the\n"
                           "pentadiagonal Pmat; coefficients are re-extracted after the matrices change.\n";

#include "pctri_common.h"

/* y = PCApply(pc, b) compared with yref */
static PetscErrorCode CheckApply(PC pc, Vec b, Vec yref, const char what[])
{
  Vec       y;
  PetscReal rel = PETSC_MAX_REAL;

  PetscFunctionBegin;
  PetscCall(VecDuplicate(yref, &y));
  PetscCall(PCApply(pc, b, y));
  PetscCall(TTRelDiff(y, yref, &rel));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %-44s relative error %.3e\n", what, (double)rel));
  TTCheck(rel <= TT_TOL, "%s: relative error %g > %g", what, (double)rel, TT_TOL);
  PetscCall(VecDestroy(&y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  PetscInt  N = 1009;
  Mat       A, T;
  Vec       b, x, r, yref, yloc;
  KSP       ksp;
  PC        pc;
  PetscReal rnorm, bnorm;
  PetscInt  its;

  KSPConvergedReason reason;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(StructGPUInitializePackage());
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n_rows", &N, NULL));
  PetscCall(TTBandMatrix(PETSC_COMM_WORLD, N, PETSC_DECIDE, 2, &A));
  PetscCall(TTBandMatrix(PETSC_COMM_WORLD, N, PETSC_DECIDE, 1, &T));
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecDuplicate(x, &r));
  PetscCall(VecDuplicate(x, &yref));
  PetscCall(VecDuplicate(x, &yloc));
  PetscCall(TTFillVec(b, 3));
  PetscCall(TTSolveRedundantLU(T, b, yref));
  PetscCall(TTSolveBlockLU(T, b, yloc));

  /* (a) GMRES on the pentadiagonal operator, preconditioned by the exact global solve with T */
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPGMRES));
  PetscCall(KSPSetTolerances(ksp, 1e-10, 1e-50, PETSC_DEFAULT, 200));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCShellSetTridiagonal(pc, T, PETSC_TRUE));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  PetscCall(KSPGetIterationNumber(ksp, &its));
  PetscCall(MatMult(A, x, r));
  PetscCall(VecAYPX(r, -1.0, b));
  PetscCall(VecNorm(r, NORM_2, &rnorm));
  PetscCall(VecNorm(b, NORM_2, &bnorm));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  GMRES + shell tridiagonal (global): %s in %" PetscInt_FMT " iterations, true residual %.3e\n", KSPConvergedReasons[reason], its, (double)(rnorm / bnorm)));
  TTCheck(reason > 0 && rnorm <= 1e-8 * bnorm, "GMRES with the tridiagonal shell PC did not converge: %s, residual %g", KSPConvergedReasons[reason], (double)(rnorm / bnorm));
  TTCheck(its < 40, "GMRES took %" PetscInt_FMT " iterations: the preconditioner is not the tridiagonal solve", its);
  PetscCall(KSPView(ksp, PETSC_VIEWER_STDOUT_WORLD));
  PetscCall(CheckApply(pc, b, yref, "shell, T, global"));

  /* (b) local mode = block-wise LU of T */
  PetscCall(PCShellSetTridiagonal(pc, T, PETSC_FALSE)); /* replaces the shell */
  PetscCall(PCSetUp(pc));
  PetscCall(CheckApply(pc, b, yloc, "shell, T, local"));

  /* (c) T = NULL: the tridiagonal part of the pentadiagonal Pmat */
  PetscCall(PCShellSetTridiagonal(pc, NULL, PETSC_TRUE));
  PetscCall(PCSetUp(pc));
  PetscCall(CheckApply(pc, b, yref, "shell, Pmat (pentadiagonal), global"));
  PetscCall(KSPDestroy(&ksp));

  /* (d) the PC type on the pentadiagonal operator */
  PetscCall(PCCreate(PETSC_COMM_WORLD, &pc));
  PetscCall(PCSetOperators(pc, A, A));
  PetscCall(PCSetType(pc, PCTRIDIAG));
  PetscCall(PCSetFromOptions(pc));
  PetscCall(PCSetUp(pc));
  PetscCall(CheckApply(pc, b, yref, "PCTRIDIAG, Pmat (pentadiagonal), global"));

  /* (e) re-extraction: scaling the matrices halves the solution */
  PetscCall(MatScale(A, 2.0));
  PetscCall(VecScale(yref, 0.5));
  PetscCall(CheckApply(pc, b, yref, "PCTRIDIAG after MatScale(Pmat, 2)"));
  PetscCall(PCDestroy(&pc));
  PetscCall(PCCreate(PETSC_COMM_WORLD, &pc));
  PetscCall(PCSetOperators(pc, A, A));
  PetscCall(PCShellSetTridiagonal(pc, T, PETSC_TRUE));
  PetscCall(PCSetUp(pc));
  PetscCall(VecScale(yref, 2.0));
  PetscCall(CheckApply(pc, b, yref, "shell, T, global (before MatScale(T))"));
  PetscCall(MatScale(T, 2.0));
  PetscCall(VecScale(yref, 0.5));
  PetscCall(CheckApply(pc, b, yref, "shell after MatScale(T, 2) (no PCSetUp)"));
  PetscCall(PCDestroy(&pc));

  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "pctri_shell: OK\n"));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&r));
  PetscCall(VecDestroy(&yref));
  PetscCall(VecDestroy(&yloc));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&T));
  PetscCall(PetscFinalize());
  return 0;
}
