static const char help[] = "Line solves (PCTRIDIAG lines mode and PCShellSetLineSolve) on 2D and 3D DMDAs with an\n"
                           "anisotropic, variable-coefficient star-stencil operator, every direction and algorithm,\n"
                           "against PETSc's LU of the line-tridiagonal matrix: along-line couplings inside each\n"
                           "rank's box only, solved with block Jacobi over ranks (default), or, with\n"
                           "-pc_tridiag_lines_exact, the whole grid lines across ranks (no periodic wrap), solved\n"
                           "with PCREDUNDANT LU; also on DMDAs split across all ranks along the line direction.\n";

#include "pctri_common.h"

/* coefficient of the coupling between grid point p and its neighbour along direction d on side s */
static PetscReal Coef(PetscInt i, PetscInt j, PetscInt k, PetscInt d, PetscInt s)
{
  static const PetscReal aniso[3] = {1.0, 25.0, 0.04};
  PetscInt               lo[3]    = {i, j, k};

  if (s < 0) lo[d]--; /* the edge is identified by its lower end, so A is structurally symmetric */
  return -aniso[d] * (1.0 + 0.6 * TTRand(lo[0] + 1000 * lo[1] + 1000000 * lo[2], 20 + d));
}

/* operator (full star stencil, linesonly = PETSC_FALSE) or the line-tridiagonal reference
   matrix along dir, keeping only neighbours inside this rank's box (cut) or all neighbours
   along the grid line except across a periodic wrap (!cut) */
static PetscErrorCode Assemble(DM da, PetscBool linesonly, PetscBool cut, PetscInt dir, Mat *A)
{
  PetscInt dim, M[3], xs[3], xm[3];

  DMBoundaryType b[3];

  PetscFunctionBegin;
  PetscCall(DMDAGetInfo(da, &dim, &M[0], &M[1], &M[2], NULL, NULL, NULL, NULL, NULL, &b[0], &b[1], &b[2], NULL));
  PetscCall(DMDAGetCorners(da, &xs[0], &xs[1], &xs[2], &xm[0], &xm[1], &xm[2]));
  PetscCall(DMCreateMatrix(da, A));
  for (PetscInt k = xs[2]; k < xs[2] + xm[2]; k++)
    for (PetscInt j = xs[1]; j < xs[1] + xm[1]; j++)
      for (PetscInt i = xs[0]; i < xs[0] + xm[0]; i++) {
        MatStencil  row = {.i = i, .j = j, .k = k}, col[7];
        PetscScalar v[7], diag = 0;
        PetscInt    nc = 1;

        for (PetscInt d = 0; d < dim; d++)
          for (PetscInt s = -1; s <= 1; s += 2) {
            PetscInt  q[3] = {i, j, k};
            PetscReal c    = Coef(i, j, k, d, s);

            q[d] += s;
            diag -= 2.2 * c; /* diagonally dominant, also near the boundary */
            if (b[d] != DM_BOUNDARY_PERIODIC && (q[d] < 0 || q[d] >= M[d])) continue;
            if (linesonly && (d != dir || (cut && (q[d] < xs[d] || q[d] >= xs[d] + xm[d])) || q[d] < 0 || q[d] >= M[d])) continue;
            col[nc].i = q[0], col[nc].j = q[1], col[nc].k = q[2];
            v[nc++]   = c;
          }
        col[0] = row;
        v[0]   = diag;
        PetscCall(MatSetValuesStencil(*A, 1, &row, nc, col, v, INSERT_VALUES));
      }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* exact: lines solved across ranks (-pc_tridiag_lines_exact); split >= 0: all ranks along that
   direction (one in the others) and only lines along it, else PETSC_DECIDE and every direction */
static PetscErrorCode RunGrid(PetscInt dim, const PetscInt M[3], DMBoundaryType bx, PetscBool exact, PetscInt split, PetscInt nalgs, PetscReal *worst, PetscInt *ncases)
{
  DM          da;
  Mat         A;
  Vec         b, y, yref;
  PetscMPIInt size;
  PetscInt    np[3] = {PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE};

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  if (split >= 0) {
    np[0] = np[1] = np[2] = 1;
    np[split]             = size;
  }
  if (dim == 2) PetscCall(DMDACreate2d(PETSC_COMM_WORLD, bx, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, M[0], M[1], np[0], np[1], 1, 1, NULL, NULL, &da));
  else PetscCall(DMDACreate3d(PETSC_COMM_WORLD, bx, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, M[0], M[1], M[2], np[0], np[1], np[2], 1, 1, NULL, NULL, NULL, &da));
  if (split < 0) PetscCall(DMSetFromOptions(da));
  else { /* keep the forced process grid, but honour -dm_vec_type / -dm_mat_type (GPU runs) */
    char      type[256];
    PetscBool flg;

    PetscCall(PetscOptionsGetString(NULL, NULL, "-dm_vec_type", type, sizeof(type), &flg));
    if (flg) PetscCall(DMSetVecType(da, type));
    PetscCall(PetscOptionsGetString(NULL, NULL, "-dm_mat_type", type, sizeof(type), &flg));
    if (flg) PetscCall(DMSetMatType(da, type));
  }
  PetscCall(DMSetUp(da));
  PetscCall(Assemble(da, PETSC_FALSE, PETSC_TRUE, 0, &A));
  PetscCall(DMCreateGlobalVector(da, &b));
  PetscCall(VecDuplicate(b, &y));
  PetscCall(VecDuplicate(b, &yref));
  PetscCall(TTFillVec(b, 5));
  if (exact) PetscCall(PetscOptionsSetValue(NULL, "-pc_tridiag_lines_exact", "1"));
  for (PetscInt dir = split >= 0 ? split : 0; dir < (split >= 0 ? split + 1 : dim); dir++) {
    Mat L;

    PetscCall(Assemble(da, PETSC_TRUE, (PetscBool)!exact, dir, &L));
    if (exact) PetscCall(TTSolveRedundantLU(L, b, yref));
    else PetscCall(TTSolveBlockLU(L, b, yref));
    for (PetscInt shell = 0; shell < 2; shell++)
      for (PetscInt ia = 0; ia < nalgs; ia++) {
        PC        pc;
        PetscReal rel = PETSC_MAX_REAL;

        PetscCall(PCCreate(PETSC_COMM_WORLD, &pc));
        PetscCall(PCSetOperators(pc, A, A));
        PetscCall(TTSetAlgorithm(pc, TTAlgs[ia]));
        if (shell) PetscCall(PCShellSetLineSolve(pc, da, dir)); /* reads the options */
        else {
          PetscCall(PCSetType(pc, PCTRIDIAG)); /* the DMDA comes from the matrix (DMCreateMatrix) */
          PetscCall(PCTridiagSetMode(pc, PC_TRIDIAG_LINES));
          PetscCall(PCTridiagSetDirection(pc, dir));
          PetscCall(PCSetFromOptions(pc));
        }
        PetscCall(PCSetUp(pc));
        PetscCall(VecSet(y, -3.0));
        PetscCall(PCApply(pc, b, y));
        PetscCall(TTRelDiff(y, yref, &rel));
        if (ia == 0 && shell == 0 && (dir == dim - 1 || split >= 0)) PetscCall(PCView(pc, PETSC_VIEWER_STDOUT_WORLD));
        TTCheck(rel <= TT_TOL, "%" PetscInt_FMT "D grid %s%s, split %" PetscInt_FMT ", direction %" PetscInt_FMT ", %s, algorithm %s: relative error %g > %g", dim, DMBoundaryTypes[bx], exact ? ", lines exact" : "", split, dir, shell ? "PCShellSetLineSolve" : "PCTRIDIAG", TTAlgs[ia], (double)rel, TT_TOL);
        *worst = PetscMax(*worst, rel);
        (*ncases)++;
        PetscCall(PCDestroy(&pc));
      }
    PetscCall(MatDestroy(&L));
  }
  if (exact) PetscCall(PetscOptionsClearValue(NULL, "-pc_tridiag_lines_exact"));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&yref));
  PetscCall(MatDestroy(&A));
  PetscCall(DMDestroy(&da));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  const PetscInt M2[3] = {37, 23, 1}, M3[3] = {13, 11, 7};
  PetscInt       nalgs = TT_NALGS, ncases = 0;
  PetscReal      worst = 0;
  PetscBool      autoonly = PETSC_FALSE;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(StructGPUInitializePackage());
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-auto_only", &autoonly, NULL));
  if (autoonly) nalgs = 1;
  for (PetscInt exact = 0; exact < 2; exact++) {
    PetscCall(RunGrid(2, M2, DM_BOUNDARY_NONE, (PetscBool)exact, -1, nalgs, &worst, &ncases));
    PetscCall(RunGrid(2, M2, DM_BOUNDARY_PERIODIC, (PetscBool)exact, -1, nalgs, &worst, &ncases)); /* wrap couplings are dropped */
    PetscCall(RunGrid(3, M3, DM_BOUNDARY_NONE, (PetscBool)exact, -1, nalgs, &worst, &ncases));
  }
  /* every line crosses all ranks */
  for (PetscInt d = 0; d < 2; d++) PetscCall(RunGrid(2, M2, d ? DM_BOUNDARY_NONE : DM_BOUNDARY_PERIODIC, PETSC_TRUE, d, nalgs, &worst, &ncases));
  for (PetscInt d = 0; d < 3; d++) PetscCall(RunGrid(3, M3, DM_BOUNDARY_NONE, PETSC_TRUE, d, nalgs, &worst, &ncases));
  PetscCall(PetscOptionsClearValue(NULL, "-pc_tridiag_algorithm"));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "pctri_lines: %" PetscInt_FMT " cases, worst relative error %.3e (tol %.0e): OK\n", ncases, (double)worst, TT_TOL));
  PetscCall(PetscFinalize());
  return 0;
}
