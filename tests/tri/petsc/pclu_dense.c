static const char help[] = "PCDENSELU and PCShellSetDenseLU() on nonsymmetric grid-like MPIAIJ matrices of odd and prime\n"
                           "orders, with row layouts where ranks own no rows, against PETSc's own solvers (KSPPREONLY):\n"
                           "gathered layout vs PCREDUNDANT + LU, local layout vs PCBJACOBI-style LU of each diagonal\n"
                           "block, both for KSPSolve and KSPSolveTranspose; a row-swapped matrix that needs pivoting vs\n"
                           "LAPACK (MatLUFactor of the gathered dense matrix); PCMatApply vs column-wise PCApply; options\n"
                           "with a prefix; re-factorization only after the operator changed; PCView lines.\n"
                           "Options: -sizes n1,n2,... (default 211,97,143,2,1)\n";

#include "pclu_common.h"

static PetscMPIInt rank, size;
static PetscBool   dev; /* the test's vectors live in CUDA memory: the auto backend must be cuda */
static PetscReal   worst  = 0;
static PetscInt    ncases = 0;

static PetscErrorCode Compare(Vec y, Vec yref, PetscReal tol, const char what[], PetscInt N, PetscInt lay)
{
  PetscReal rel = PETSC_MAX_REAL;

  PetscFunctionBegin;
  PetscCall(TTRelDiff(y, yref, &rel));
  TTCheck(rel <= tol, "N=%" PetscInt_FMT " layout %" PetscInt_FMT ", %s: relative difference %g > %g", N, lay, what, (double)rel, (double)tol);
  worst = PetscMax(worst, rel);
  ncases++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* set -<prefix of pc><name> value in the options database */
static PetscErrorCode SetPCOption(PC pc, const char name[], const char value[])
{
  const char *prefix;
  char        opt[256];

  PetscFunctionBegin;
  PetscCall(PCGetOptionsPrefix(pc, &prefix));
  PetscCall(PetscSNPrintf(opt, sizeof(opt), "-%s%s", prefix ? prefix : "", name));
  PetscCall(PetscOptionsSetValue(NULL, opt, value));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* KSPPREONLY with a dense LU PC: the PC type (shell = PETSC_FALSE) or PCShellSetDenseLU() */
static PetscErrorCode NewKSP(Mat A, PCDenseLULayout layout, PetscBool shell, const char prefix[], KSP *ksp)
{
  PC pc;

  PetscFunctionBegin;
  PetscCall(KSPCreate(PetscObjectComm((PetscObject)A), ksp));
  PetscCall(KSPSetOptionsPrefix(*ksp, prefix));
  PetscCall(KSPSetOperators(*ksp, A, A));
  PetscCall(KSPSetType(*ksp, KSPPREONLY));
  PetscCall(KSPGetPC(*ksp, &pc));
  if (shell) PetscCall(PCShellSetDenseLU(pc, layout));
  else {
    PetscCall(PCSetType(pc, PCDENSELU));
    PetscCall(PCDenseLUSetLayout(pc, layout));
  }
  PetscCall(KSPSetFromOptions(*ksp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* KSPSolve and KSPSolveTranspose against the references */
static PetscErrorCode CheckKSP(KSP ksp, Vec b, Vec yref, Vec ytref, const char what[], PetscInt N, PetscInt lay)
{
  Vec  y;
  char w[128];

  PetscFunctionBegin;
  PetscCall(VecDuplicate(b, &y));
  PetscCall(VecSet(y, -7.0)); /* the output must be fully overwritten */
  PetscCall(KSPSolve(ksp, b, y));
  PetscCall(PetscSNPrintf(w, sizeof(w), "%s, KSPSolve", what));
  PetscCall(Compare(y, yref, TT_TOL, w, N, lay));
  PetscCall(VecSet(y, -7.0));
  PetscCall(KSPSolveTranspose(ksp, b, y));
  PetscCall(PetscSNPrintf(w, sizeof(w), "%s, KSPSolveTranspose", what));
  PetscCall(Compare(y, ytref, TT_TOL, w, N, lay));
  PetscCall(VecDestroy(&y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* PCMatApply (and the transpose) with 3 right-hand sides vs PCApply column by column */
static PetscErrorCode CheckMatApply(KSP ksp, Mat A, PetscInt N, PetscInt lay, const char what[])
{
  PC       pc;
  Mat      X, Y;
  PetscInt nloc;
  char     w[128];

  PetscFunctionBegin;
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(MatGetLocalSize(A, &nloc, NULL));
  PetscCall(MatCreateDense(PetscObjectComm((PetscObject)A), nloc, PETSC_DECIDE, N, 3, NULL, &X));
  if (dev) PetscCall(MatConvert(X, MATDENSECUDA, MAT_INPLACE_MATRIX, &X));
  for (PetscInt j = 0; j < 3; j++) {
    Vec xj;

    PetscCall(MatDenseGetColumnVecWrite(X, j, &xj));
    PetscCall(TTFillVec(xj, 20 + j));
    PetscCall(MatDenseRestoreColumnVecWrite(X, j, &xj));
  }
  PetscCall(MatDuplicate(X, MAT_DO_NOT_COPY_VALUES, &Y));
  for (PetscInt tr = 0; tr < 2; tr++) {
    if (tr) PetscCall(PCMatApplyTranspose(pc, X, Y));
    else PetscCall(PCMatApply(pc, X, Y));
    for (PetscInt j = 0; j < 3; j++) {
      Vec xj, yj, r;

      PetscCall(MatDenseGetColumnVecRead(X, j, &xj));
      PetscCall(MatDenseGetColumnVecRead(Y, j, &yj));
      PetscCall(VecDuplicate(xj, &r));
      if (tr) PetscCall(PCApplyTranspose(pc, xj, r));
      else PetscCall(PCApply(pc, xj, r));
      PetscCall(PetscSNPrintf(w, sizeof(w), "%s, PCMatApply%s column %" PetscInt_FMT, what, tr ? "Transpose" : "", j));
      PetscCall(Compare(yj, r, 1e-12, w, N, lay));
      PetscCall(VecDestroy(&r));
      PetscCall(MatDenseRestoreColumnVecRead(Y, j, &yj));
      PetscCall(MatDenseRestoreColumnVecRead(X, j, &xj));
    }
  }
  PetscCall(MatDestroy(&X));
  PetscCall(MatDestroy(&Y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* dst = src through host arrays (vectors of different memory types, same layout) */
static PetscErrorCode CopyThroughHost(Vec src, Vec dst)
{
  const PetscScalar *a;
  PetscScalar       *b;
  PetscInt           n;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(src, &n));
  PetscCall(VecGetArrayRead(src, &a));
  PetscCall(VecGetArrayWrite(dst, &b));
  PetscCall(PetscArraycpy(b, a, n));
  PetscCall(VecRestoreArrayWrite(dst, &b));
  PetscCall(VecRestoreArrayRead(src, &a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  PetscInt    sizes[8] = {211, 97, 143, 2, 1}, nsizes = 8;
  PetscBool   flg;
  const char *used = NULL, *mem = NULL;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(StructGPUInitializePackage());
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(PetscOptionsGetIntArray(NULL, NULL, "-sizes", sizes, &nsizes, &flg));
  if (!flg) nsizes = 5;

  for (PetscInt is = 0; is < nsizes; is++) {
    const PetscInt N = sizes[is];

    for (PetscInt lay = 0; lay < (size > 1 ? 3 : 1); lay++) {
      const PetscInt nloc = DLLayout(N, lay, rank, size);
      Mat            A, At, Ap;
      Vec            b, yg, ygt, yl, ylt, yp, ypt, ychk;
      KSP            ksp;

      /* the operator, its transpose, the row-swapped variant, and the references */
      PetscCall(DLMatrix(PETSC_COMM_WORLD, N, nloc, PETSC_DECIDE, PETSC_FALSE, &A));
      PetscCall(DLMatrix(PETSC_COMM_WORLD, N, nloc, PETSC_DECIDE, PETSC_TRUE, &Ap));
      PetscCall(MatTranspose(A, MAT_INITIAL_MATRIX, &At));
      PetscCall(DLOnDevice(A, &dev));
      used = dev ? "backend used: cuda" : "backend used: host";
      mem  = dev ? "in device memory" : "in host memory";
      PetscCall(MatCreateVecs(A, &yg, &b));
      PetscCall(TTFillVec(b, 1));
      PetscCall(VecDuplicate(yg, &ygt));
      PetscCall(VecDuplicate(yg, &yl));
      PetscCall(VecDuplicate(yg, &ylt));
      PetscCall(VecDuplicate(yg, &yp));
      PetscCall(VecDuplicate(yg, &ypt));
      PetscCall(VecDuplicate(yg, &ychk));
      PetscCall(TTSolveRedundantLU(A, b, yg));
      PetscCall(TTSolveRedundantLU(At, b, ygt));
      PetscCall(TTSolveBlockLU(A, b, yl));
      PetscCall(TTSolveBlockLU(At, b, ylt));
      PetscCall(DLSolveDenseLU(Ap, b, yp, PETSC_FALSE));
      PetscCall(DLSolveDenseLU(Ap, b, ypt, PETSC_TRUE));
      PetscCall(DLSolveDenseLU(A, b, ychk, PETSC_FALSE)); /* the two references agree */
      PetscCall(Compare(ychk, yg, TT_TOL, "reference check: LAPACK vs PCREDUNDANT", N, lay));

      for (PetscInt shell = 0; shell < 2; shell++) {
        for (PetscInt l = PC_DENSELU_GATHERED; l <= PC_DENSELU_LOCAL; l++) {
          char what[64];

          PetscCall(PetscSNPrintf(what, sizeof(what), "%s %s", shell ? "PCShellSetDenseLU" : "PCDENSELU", PCDenseLULayouts[l]));
          PetscCall(NewKSP(A, (PCDenseLULayout)l, (PetscBool)shell, NULL, &ksp));
          PetscCall(CheckKSP(ksp, b, l == PC_DENSELU_GATHERED ? yg : yl, l == PC_DENSELU_GATHERED ? ygt : ylt, what, N, lay));
          if (is == 0 && lay == 0) { /* the view, once per variant */
            char        ord[64], nloc0[64], fac[64];
            const char *lines_g[] = {"layout gathered", "pivot tolerance default", "backend requested auto", used, ord, fac, mem, "factorizations 1", "right-hand sides solved 2", "used in place", "triangular solves with plans", NULL};
            const char *lines_l[] = {"layout local", "pivot tolerance default", "backend requested auto", used, ord, nloc0, mem, "factorizations 1", "right-hand sides solved 2", "used in place", "triangular solves with plans", NULL};
            const char *reject[]  = {"copied between host and device", NULL};
            PetscInt    n0        = 0;
            PC          pc;

            PetscCall(MatGetLocalSize(A, &n0, NULL));
            PetscCall(PetscSNPrintf(ord, sizeof(ord), "operator order %" PetscInt_FMT ",", N));
            PetscCall(PetscSNPrintf(fac, sizeof(fac), "factored on rank 0: n = %" PetscInt_FMT ",", N));
            PetscCall(PetscSNPrintf(nloc0, sizeof(nloc0), "[0] n = %" PetscInt_FMT " ", n0)); /* rank 0 checks */
            PetscCall(KSPGetPC(ksp, &pc));
            PetscCall(DLCheckView(pc, l == PC_DENSELU_GATHERED ? lines_g : lines_l, reject, what));
            if (!shell && l == PC_DENSELU_GATHERED) PetscCall(KSPView(ksp, PETSC_VIEWER_STDOUT_WORLD));
          }
          if (shell == 0) PetscCall(CheckMatApply(ksp, A, N, lay, what));
          PetscCall(KSPDestroy(&ksp));
        }
      }

      /* pivoting needed: the row-swapped matrix (gathered) vs LAPACK */
      PetscCall(NewKSP(Ap, PC_DENSELU_GATHERED, PETSC_FALSE, NULL, &ksp));
      PetscCall(CheckKSP(ksp, b, yp, ypt, "PCDENSELU gathered, rows swapped (pivoting)", N, lay));
      PetscCall(KSPDestroy(&ksp));
      /* the same without plans (-pc_denselu_plan 0: sg_getrs per apply) */
      PetscCall(PetscOptionsSetValue(NULL, "-np_pc_denselu_plan", "0"));
      PetscCall(NewKSP(Ap, PC_DENSELU_GATHERED, PETSC_TRUE, "np_", &ksp));
      PetscCall(CheckKSP(ksp, b, yp, ypt, "PCShellSetDenseLU gathered, rows swapped, no plans", N, lay));
      if (is == 0 && lay == 0) {
        const char *lines[] = {"triangular solves without plans", NULL}, *reject[] = {"triangular solves with plans", NULL};
        PC          pc;

        PetscCall(KSPGetPC(ksp, &pc));
        PetscCall(DLCheckView(pc, lines, reject, "PCShellSetDenseLU -pc_denselu_plan 0"));
      }
      PetscCall(KSPDestroy(&ksp));
      PetscCall(PetscOptionsClearValue(NULL, "-np_pc_denselu_plan"));

      PetscCall(VecDestroy(&b));
      PetscCall(VecDestroy(&yg));
      PetscCall(VecDestroy(&ygt));
      PetscCall(VecDestroy(&yl));
      PetscCall(VecDestroy(&ylt));
      PetscCall(VecDestroy(&yp));
      PetscCall(VecDestroy(&ypt));
      PetscCall(VecDestroy(&ychk));
      PetscCall(MatDestroy(&A));
      PetscCall(MatDestroy(&At));
      PetscCall(MatDestroy(&Ap));
    }
  }

  /* options with a prefix, re-factorization only after a change, and the staged (copying) paths */
  {
    const PetscInt N = 101;
    Mat            A;
    Vec            b, y, yg, yl;
    KSP            ksp;
    PC             pc;

    PetscCall(DLMatrix(PETSC_COMM_WORLD, N, PETSC_DECIDE, PETSC_DECIDE, PETSC_FALSE, &A));
    PetscCall(MatCreateVecs(A, &y, &b));
    PetscCall(VecDuplicate(y, &yg));
    PetscCall(VecDuplicate(y, &yl));
    PetscCall(TTFillVec(b, 2));
    PetscCall(TTSolveRedundantLU(A, b, yg));
    PetscCall(TTSolveBlockLU(A, b, yl));

    /* -opt_pc_type denselu -opt_pc_denselu_layout local -opt_pc_denselu_pivot_tol 1e-13 */
    PetscCall(PetscOptionsSetValue(NULL, "-opt_pc_type", "denselu"));
    PetscCall(PetscOptionsSetValue(NULL, "-opt_pc_denselu_layout", "local"));
    PetscCall(PetscOptionsSetValue(NULL, "-opt_pc_denselu_pivot_tol", "1e-13"));
    PetscCall(PetscOptionsSetValue(NULL, "-opt_pc_denselu_backend", dev ? "cuda" : "host"));
    PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
    PetscCall(KSPSetOptionsPrefix(ksp, "opt_"));
    PetscCall(KSPSetOperators(ksp, A, A));
    PetscCall(KSPSetType(ksp, KSPPREONLY));
    PetscCall(KSPSetFromOptions(ksp));
    PetscCall(KSPSolve(ksp, b, y));
    PetscCall(Compare(y, yl, TT_TOL, "options -opt_pc_type denselu -opt_pc_denselu_layout local", N, 0));
    PetscCall(KSPGetPC(ksp, &pc));
    {
      const char *lines[] = {"layout local", "pivot tolerance 1e-13", dev ? "backend requested cuda" : "backend requested host", used, "factorizations 1", NULL};
      PCDenseLULayout lay;

      PetscCall(PCDenseLUGetLayout(pc, &lay));
      TTCheck(lay == PC_DENSELU_LOCAL, "PCDenseLUGetLayout: %s, expected local", PCDenseLULayouts[lay]);
      PetscCall(DLCheckView(pc, lines, NULL, "options with a prefix"));
    }
    /* a second solve with the same operator does not factor again; after MatScale it does */
    PetscCall(KSPSolve(ksp, b, y));
    PetscCall(PCSetUp(pc));
    {
      const char *lines[] = {"factorizations 1", "right-hand sides solved 2", NULL};

      PetscCall(DLCheckView(pc, lines, NULL, "no re-factorization of an unchanged operator"));
    }
    PetscCall(MatScale(A, 2.0));
    PetscCall(KSPSolve(ksp, b, y));
    PetscCall(VecScale(y, 2.0));
    PetscCall(Compare(y, yl, TT_TOL, "after MatScale(A, 2)", N, 0));
    {
      const char *lines[] = {"factorizations 2", NULL};

      PetscCall(DLCheckView(pc, lines, NULL, "re-factorization after MatScale"));
    }
    PetscCall(KSPDestroy(&ksp));
    PetscCall(PetscOptionsClearValue(NULL, "-opt_pc_type"));
    PetscCall(PetscOptionsClearValue(NULL, "-opt_pc_denselu_layout"));
    PetscCall(PetscOptionsClearValue(NULL, "-opt_pc_denselu_pivot_tol"));
    PetscCall(PetscOptionsClearValue(NULL, "-opt_pc_denselu_backend"));
    PetscCall(MatScale(A, 0.5));

    /* vectors in the other memory than the factors: host factors with CUDA vectors, CUDA factors
       with host vectors; both copy at every apply and say so */
    if (dev) {
      const char *lines_h[] = {"backend requested host", "backend used: host", "copied between host and device", NULL};
      const char *lines_c[] = {"backend requested cuda", "backend used: cuda", "copied between host and device", NULL};
      Vec         bh, yh;
      PetscInt    nloc;

      PetscCall(PCCreate(PETSC_COMM_WORLD, &pc));
      PetscCall(PCSetOperators(pc, A, A));
      PetscCall(PCSetType(pc, PCDENSELU));
      PetscCall(SetPCOption(pc, "pc_denselu_backend", "host"));
      PetscCall(PCSetFromOptions(pc));
      PetscCall(PCApply(pc, b, y));
      PetscCall(Compare(y, yg, TT_TOL, "host backend, CUDA vectors", N, 0));
      PetscCall(DLCheckView(pc, lines_h, NULL, "host backend, CUDA vectors"));
      PetscCall(PCDestroy(&pc));
      PetscCall(VecGetLocalSize(b, &nloc));
      PetscCall(VecCreateMPI(PETSC_COMM_WORLD, nloc, N, &bh));
      PetscCall(VecDuplicate(bh, &yh));
      PetscCall(CopyThroughHost(b, bh));
      for (PetscInt l = PC_DENSELU_GATHERED; l <= PC_DENSELU_LOCAL; l++) {
        PetscCall(PCCreate(PETSC_COMM_WORLD, &pc));
        PetscCall(PCSetOperators(pc, A, A));
        PetscCall(SetPCOption(pc, "pc_denselu_backend", "cuda"));
        PetscCall(PCShellSetDenseLU(pc, (PCDenseLULayout)l)); /* reads the option */
        PetscCall(PCApply(pc, bh, yh));
        PetscCall(CopyThroughHost(yh, y));
        PetscCall(Compare(y, l == PC_DENSELU_GATHERED ? yg : yl, TT_TOL, "CUDA backend, host vectors", N, 0));
        PetscCall(DLCheckView(pc, lines_c, NULL, "CUDA backend, host vectors"));
        PetscCall(PCDestroy(&pc));
      }
      PetscCall(PetscOptionsClearValue(NULL, "-pc_denselu_backend"));
      PetscCall(VecDestroy(&bh));
      PetscCall(VecDestroy(&yh));
    }
    PetscCall(VecDestroy(&b));
    PetscCall(VecDestroy(&y));
    PetscCall(VecDestroy(&yg));
    PetscCall(VecDestroy(&yl));
    PetscCall(MatDestroy(&A));
  }

  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "pclu_dense: %" PetscInt_FMT " comparisons on %d ranks (%s vectors), worst relative difference %.3e (tol %.0e): OK\n", ncases, size, dev ? "CUDA" : "host", (double)worst, TT_TOL));
  PetscCall(PetscFinalize());
  return 0;
}
