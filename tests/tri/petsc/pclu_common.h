/* Shared helpers of the PETSc-level dense LU tests (PCDENSELU, PCShellSetDenseLU()): a nonsymmetric
   grid-like matrix (independent of the number of ranks), a row-swapped variant that needs pivoting,
   a dense LAPACK reference (MatLUFactor of the gathered matrix), row layouts with empty ranks, and a
   check of PCView() output. Builds on pctri_common.h (TTRand, TTFillVec, TTRelDiff, the PETSc LU
   references TTSolveRedundantLU / TTSolveBlockLU). */
#pragma once
#include "pctri_common.h"
#include <stdio.h>
#include <unistd.h>

/* row i of the nonsymmetric "convection-diffusion" matrix of order N: 5-point couplings on a grid
   of width nx = floor(sqrt(N)) with random asymmetric weights, one long-range coupling (7i+3) mod N,
   diagonal dominant by a factor 1.1..1.5. swap: rows 2k and 2k+1 exchanged (the diagonal then
   holds off-diagonal values, so the factorization must pivot). */
static inline void DLRow(PetscInt i, PetscInt N, PetscBool swap, PetscInt cols[], PetscScalar vals[], PetscInt *nz)
{
  const PetscInt nx = PetscMax(1, (PetscInt)PetscSqrtReal((PetscReal)N));
  PetscInt       r  = swap && (i ^ 1) < N ? (i ^ 1) : i, cand[5];
  PetscReal      w[5], sum = 0;

  cand[0] = r - nx, w[0] = -1 + 0.3 * TTRand(r, 1);
  cand[1] = r - 1, w[1] = -1 + 0.3 * TTRand(r, 2);
  cand[2] = r + 1, w[2] = -1 + 0.3 * TTRand(r, 3);
  cand[3] = r + nx, w[3] = -1 + 0.3 * TTRand(r, 4);
  cand[4] = (7 * r + 3) % N, w[4] = 0.5 * TTRand(r, 5);
  *nz = 0;
  for (PetscInt k = 0; k < 5; k++) {
    PetscBool dup = (PetscBool)(cand[k] < 0 || cand[k] >= N || cand[k] == r);

    for (PetscInt l = 0; l < *nz && !dup; l++) dup = (PetscBool)(cols[l] == cand[k]);
    if (dup) continue;
    cols[*nz] = cand[k];
    vals[*nz] = w[k];
    sum += PetscAbsReal(w[k]);
    (*nz)++;
  }
  cols[*nz] = r;
  vals[*nz] = (sum > 0 ? sum : 1) * (1.1 + 0.4 * PetscAbsReal(TTRand(r, 6)));
  (*nz)++;
}

/* the matrix of DLRow with nloc local rows (PETSC_DECIDE) and local columns ncol (PETSC_DECIDE: like the rows) */
static inline PetscErrorCode DLMatrix(MPI_Comm comm, PetscInt N, PetscInt nloc, PetscInt ncol, PetscBool swap, Mat *A)
{
  PetscInt rs, re;

  PetscFunctionBegin;
  PetscCall(MatCreate(comm, A));
  PetscCall(MatSetSizes(*A, nloc, ncol == PETSC_DECIDE ? nloc : ncol, N, N));
  PetscCall(MatSetFromOptions(*A));
  PetscCall(MatSeqAIJSetPreallocation(*A, 6, NULL));
  PetscCall(MatMPIAIJSetPreallocation(*A, 6, NULL, 6, NULL));
  PetscCall(MatSetUp(*A));
  PetscCall(MatGetOwnershipRange(*A, &rs, &re));
  for (PetscInt i = rs; i < re; i++) {
    PetscInt    cols[6], nz;
    PetscScalar vals[6];

    DLRow(i, N, swap, cols, vals, &nz);
    PetscCall(MatSetValues(*A, 1, &i, nz, cols, vals, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* local row count of layout lay: 0 PETSc default, 1 rank 0 owns no rows (the others split evenly),
   2 the last rank owns all rows */
static inline PetscInt DLLayout(PetscInt N, PetscInt lay, PetscMPIInt rank, PetscMPIInt size)
{
  if (lay == 0 || size == 1) return PETSC_DECIDE;
  if (lay == 2) return rank == size - 1 ? N : 0;
  if (rank == 0) return 0;
  return N / (size - 1) + (rank - 1 < N % (size - 1));
}

/* reference: y = op(A)^{-1} b by LAPACK (MatLUFactor, partial pivoting) of A gathered densely on every rank */
static inline PetscErrorCode DLSolveDenseLU(Mat A, Vec b, Vec y, PetscBool transpose)
{
  PetscInt           N, rs, re;
  IS                 all;
  Mat               *sub, D;
  Vec                ball, yall;
  VecScatter         sc;
  MatFactorInfo      info;
  const PetscScalar *pa;
  PetscScalar       *py;

  PetscFunctionBegin;
  PetscCall(MatGetSize(A, &N, NULL));
  PetscCall(ISCreateStride(PETSC_COMM_SELF, N, 0, 1, &all));
  PetscCall(MatCreateSubMatrices(A, 1, &all, &all, MAT_INITIAL_MATRIX, &sub));
  PetscCall(MatConvert(sub[0], MATSEQDENSE, MAT_INITIAL_MATRIX, &D));
  PetscCall(MatDestroySubMatrices(1, &sub));
  PetscCall(ISDestroy(&all));
  PetscCall(MatFactorInfoInitialize(&info));
  PetscCall(MatLUFactor(D, NULL, NULL, &info));
  PetscCall(VecScatterCreateToAll(b, &sc, &ball));
  PetscCall(VecScatterBegin(sc, b, ball, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(sc, b, ball, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecDuplicate(ball, &yall));
  if (transpose) PetscCall(MatSolveTranspose(D, ball, yall));
  else PetscCall(MatSolve(D, ball, yall));
  PetscCall(VecGetOwnershipRange(y, &rs, &re));
  PetscCall(VecGetArrayRead(yall, &pa));
  PetscCall(VecGetArrayWrite(y, &py));
  PetscCall(PetscArraycpy(py, pa + rs, re - rs));
  PetscCall(VecRestoreArrayWrite(y, &py));
  PetscCall(VecRestoreArrayRead(yall, &pa));
  PetscCall(VecScatterDestroy(&sc));
  PetscCall(VecDestroy(&ball));
  PetscCall(VecDestroy(&yall));
  PetscCall(MatDestroy(&D));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* PCView(pc) into a file, read back on rank 0: every string of expect[] (NULL-terminated) must occur,
   no string of reject[] (NULL-terminated, may be NULL) may. Collective. */
static inline PetscErrorCode DLCheckView(PC pc, const char *const expect[], const char *const reject[], const char what[])
{
  char        fname[PETSC_MAX_PATH_LEN], buf[16384] = "", missing[256] = "";
  int         bad = 0;
  PetscMPIInt rank;
  PetscViewer v;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)pc), &rank));
  PetscCall(PetscSNPrintf(fname, sizeof(fname), "/tmp/pclu_view_%d.txt", (int)getpid()));
  PetscCallMPI(MPI_Bcast(fname, sizeof(fname), MPI_CHAR, 0, PetscObjectComm((PetscObject)pc)));
  PetscCall(PetscViewerASCIIOpen(PetscObjectComm((PetscObject)pc), fname, &v));
  PetscCall(PCView(pc, v));
  PetscCall(PetscViewerDestroy(&v));
  if (rank == 0) {
    FILE  *f   = fopen(fname, "r");
    size_t len = 0;

    if (f) {
      len = fread(buf, 1, sizeof(buf) - 1, f);
      fclose(f);
      remove(fname);
    } else {
      bad = 1;
      PetscCall(PetscSNPrintf(missing, sizeof(missing), "cannot be read back from %s", fname));
    }
    buf[len] = 0;
    for (PetscInt k = 0; expect[k] && !bad; k++) {
      bad = !strstr(buf, expect[k]);
      if (bad) PetscCall(PetscSNPrintf(missing, sizeof(missing), "missing \"%s\"", expect[k]));
    }
    for (PetscInt k = 0; reject && reject[k] && !bad; k++) {
      bad = strstr(buf, reject[k]) != NULL;
      if (bad) PetscCall(PetscSNPrintf(missing, sizeof(missing), "unexpected \"%s\"", reject[k]));
    }
    if (bad) PetscCall(PetscPrintf(PETSC_COMM_SELF, "---- view of %s:\n%s----\n", what, buf));
  }
  PetscCallMPI(MPI_Bcast(&bad, 1, MPI_INT, 0, PetscObjectComm((PetscObject)pc)));
  PetscCallMPI(MPI_Bcast(missing, sizeof(missing), MPI_CHAR, 0, PetscObjectComm((PetscObject)pc)));
  TTCheck(!bad, "%s: PCView output %s", what, missing);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the operator's vectors live in CUDA memory (then the auto backend must be cuda) */
static inline PetscErrorCode DLOnDevice(Mat A, PetscBool *dev)
{
  VecType vt;

  PetscFunctionBegin;
  PetscCall(MatGetVecType(A, &vt));
  PetscCall(PetscStrcmpAny(vt, dev, VECCUDA, VECSEQCUDA, VECMPICUDA, ""));
  PetscFunctionReturn(PETSC_SUCCESS);
}
