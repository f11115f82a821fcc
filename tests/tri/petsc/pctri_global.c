static const char help[] = "PCTRIDIAG global and local modes on random diagonally dominant tridiagonal MPIAIJ\n"
                           "matrices of prime sizes, with several row layouts (ranks owning 0 or 1 rows) and\n"
                           "every algorithm, against PETSc's LU: global vs the LU of the whole matrix gathered\n"
                           "on every rank (PCREDUNDANT), local vs LU of each rank's diagonal block.\n"
                           "Options: -sizes n1,n2,... (default 1009,7,3) -algs all|auto (default all)\n";

#include "pctri_common.h"

/* local row counts of layout `lay` (0: PETSc default, 1: rank 0 owns 0 rows and rank 1 one row,
   2: rank 0 owns 1 row and the last rank 0 rows, 3: ranks alternate 1 and 0 rows, the last owns
   the rest); the rest is split evenly among the ranks not fixed */
static PetscErrorCode Layout(PetscInt N, PetscInt lay, PetscMPIInt rank, PetscMPIInt size, PetscInt *nloc, PetscBool *valid)
{
  PetscInt  cnt[64], fixed = 0, nfree = 0, rest, k = 0;
  PetscBool isfree[64];

  PetscFunctionBegin;
  TTCheck(size <= 64, "test supports up to 64 ranks");
  *valid = PETSC_TRUE;
  if (lay == 0) {
    *nloc = PETSC_DECIDE;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  for (PetscMPIInt r = 0; r < size; r++) {
    isfree[r] = PETSC_TRUE;
    cnt[r]    = 0;
  }
  if (lay == 1) {
    isfree[0] = PETSC_FALSE, cnt[0] = 0;
    if (size > 2) isfree[1] = PETSC_FALSE, cnt[1] = 1;
  } else if (lay == 2) {
    isfree[0] = PETSC_FALSE, cnt[0] = 1;
    if (size > 2) isfree[size - 1] = PETSC_FALSE, cnt[size - 1] = 0;
  } else {
    for (PetscMPIInt r = 0; r < size - 1; r++) isfree[r] = PETSC_FALSE, cnt[r] = (r % 2 == 0);
  }
  for (PetscMPIInt r = 0; r < size; r++) {
    if (isfree[r]) nfree++;
    else fixed += cnt[r];
  }
  rest   = N - fixed;
  *valid = (PetscBool)(rest >= 0); /* N too small for this layout */
  if (!*valid) PetscFunctionReturn(PETSC_SUCCESS);
  for (PetscMPIInt r = 0; r < size; r++)
    if (isfree[r]) cnt[r] = rest / nfree + (k++ < rest % nfree);
  *nloc = cnt[rank];
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  PetscMPIInt rank, size;
  PetscInt    sizes[8] = {1009, 7, 3}, nsizes = 8, nalgs = TT_NALGS, ncases = 0;
  PetscBool   autoonly = PETSC_FALSE, flg;
  char        algs[16] = "all";
  PetscReal   worst    = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(StructGPUInitializePackage());
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(PetscOptionsGetIntArray(NULL, NULL, "-sizes", sizes, &nsizes, &flg));
  if (!flg) nsizes = 3;
  PetscCall(PetscOptionsGetString(NULL, NULL, "-algs", algs, sizeof(algs), NULL));
  PetscCall(PetscStrcmp(algs, "auto", &autoonly));
  if (autoonly) nalgs = 1;

  for (PetscInt is = 0; is < nsizes; is++) {
    const PetscInt N = sizes[is];

    for (PetscInt lay = 0; lay < (size > 1 ? 4 : 1); lay++) {
      PetscInt  nloc;
      PetscBool valid;
      Mat       A;
      Vec       b, y, yref;

      PetscCall(Layout(N, lay, rank, size, &nloc, &valid));
      if (!valid) continue;
      PetscCall(TTBandMatrix(PETSC_COMM_WORLD, N, nloc, 1, &A));
      PetscCall(MatCreateVecs(A, &y, &b));
      PetscCall(VecDuplicate(y, &yref));
      PetscCall(TTFillVec(b, 1));
      for (PetscInt mode = PC_TRIDIAG_GLOBAL; mode <= PC_TRIDIAG_LOCAL; mode++) {
        if (mode == PC_TRIDIAG_GLOBAL) PetscCall(TTSolveRedundantLU(A, b, yref));
        else PetscCall(TTSolveBlockLU(A, b, yref));
        for (PetscInt ia = 0; ia < nalgs; ia++) {
          PC        pc;
          PetscReal rel = PETSC_MAX_REAL;

          PetscCall(PCCreate(PETSC_COMM_WORLD, &pc));
          PetscCall(PCSetType(pc, PCTRIDIAG));
          PetscCall(PCSetOperators(pc, A, A));
          PetscCall(PCTridiagSetMode(pc, (PCTridiagMode)mode));
          PetscCall(TTSetAlgorithm(pc, TTAlgs[ia]));
          PetscCall(PCSetFromOptions(pc));
          PetscCall(PCSetUp(pc));
          PetscCall(VecSet(y, -7.0)); /* the output must be fully overwritten */
          PetscCall(PCApply(pc, b, y));
          PetscCall(TTRelDiff(y, yref, &rel));
          if (N == sizes[0] && lay == size - 1 && ia == 0 && mode == PC_TRIDIAG_GLOBAL) PetscCall(PCView(pc, PETSC_VIEWER_STDOUT_WORLD));
          TTCheck(rel <= TT_TOL, "N=%" PetscInt_FMT " layout %" PetscInt_FMT " mode %s algorithm %s: relative error %g > %g", N, lay, PCTridiagModes[mode], TTAlgs[ia], (double)rel, TT_TOL);
          worst = PetscMax(worst, rel);
          ncases++;
          PetscCall(PCDestroy(&pc));
        }
      }
      PetscCall(VecDestroy(&b));
      PetscCall(VecDestroy(&y));
      PetscCall(VecDestroy(&yref));
      PetscCall(MatDestroy(&A));
    }
  }
  PetscCall(PetscOptionsClearValue(NULL, "-pc_tridiag_algorithm"));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "pctri_global: %" PetscInt_FMT " cases on %d ranks, worst relative error %.3e (tol %.0e): OK\n", ncases, size, (double)worst, TT_TOL));
  PetscCall(PetscFinalize());
  return 0;
}
