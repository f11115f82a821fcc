/* Shared helpers of the PETSc-level tridiagonal tests: deterministic random banded
   matrices (independent of the number of ranks), independent reference solves with
   PETSc's own LU, and relative-difference checks. Vectors follow the matrix type, so
   -mat_type aijcusparse (or -dm_mat_type/-dm_vec_type) runs the same tests on the GPU. */
#pragma once
#include <structgpu.h>
#include <petscksp.h>
#include <petscdmda.h>
#include <stdint.h>

static const char *const TTAlgs[] = {"auto", "thomas", "cr", "pcr", "rd", "cr_pcr", "cr_rd", "tpcr"};
#define TT_NALGS 8

/* deterministic value in [-1,1) from two integers */
static inline PetscReal TTRand(PetscInt a, PetscInt b)
{
  uint64_t z = (uint64_t)a * 0x9E3779B97F4A7C15ull + (uint64_t)b * 0xBF58476D1CE4E5B9ull + 0x94D049BB133111EBull;
  z          = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z          = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (PetscReal)((double)(z >> 11) / 4503599627370496.0 - 1.0);
}

/* row i of the random band matrix: off-diagonals o[k] at column i + k - bw (k != bw), diagonal
   dominant by a factor >= 1.05 with a random sign; the tridiagonal part does not depend on bw */
static inline void TTRow(PetscInt i, PetscInt N, PetscInt bw, PetscInt cols[], PetscScalar vals[], PetscInt *nz)
{
  PetscReal off[5], sum = 0;

  *nz = 0;
  for (PetscInt k = -2; k <= 2; k++) off[k + 2] = k ? (PetscAbsInt(k) == 1 ? 1.0 : 0.5) * TTRand(i, 10 + k) : 0;
  for (PetscInt k = 0; k < 5; k++) sum += PetscAbsReal(off[k]);
  off[2] = (TTRand(i, 7) < 0 ? -1 : 1) * sum * (1.05 + 0.5 * PetscAbsReal(TTRand(i, 8)));
  for (PetscInt k = -bw; k <= bw; k++) {
    if (i + k < 0 || i + k >= N) continue;
    cols[*nz]   = i + k;
    vals[*nz]   = off[k + 2];
    (*nz)++;
  }
}

/* band matrix (bw = 1 tridiagonal, 2 pentadiagonal) of size N with nloc local rows */
static inline PetscErrorCode TTBandMatrix(MPI_Comm comm, PetscInt N, PetscInt nloc, PetscInt bw, Mat *A)
{
  PetscInt rs, re;

  PetscFunctionBegin;
  PetscCall(MatCreate(comm, A));
  PetscCall(MatSetSizes(*A, nloc, nloc, N, N));
  PetscCall(MatSetFromOptions(*A));
  PetscCall(MatSeqAIJSetPreallocation(*A, 2 * bw + 1, NULL));
  PetscCall(MatMPIAIJSetPreallocation(*A, 2 * bw + 1, NULL, 2 * bw, NULL));
  PetscCall(MatSeqBAIJSetPreallocation(*A, 1, 2 * bw + 1, NULL));
  PetscCall(MatMPIBAIJSetPreallocation(*A, 1, 2 * bw + 1, NULL, 2 * bw, NULL));
  PetscCall(MatSetUp(*A));
  PetscCall(MatGetOwnershipRange(*A, &rs, &re));
  for (PetscInt i = rs; i < re; i++) {
    PetscInt    cols[5], nz;
    PetscScalar vals[5];

    TTRow(i, N, bw, cols, vals, &nz);
    PetscCall(MatSetValues(*A, 1, &i, nz, cols, vals, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* deterministic right-hand side, by global index */
static inline PetscErrorCode TTFillVec(Vec v, PetscInt seed)
{
  PetscInt     rs, re;
  PetscScalar *a;

  PetscFunctionBegin;
  PetscCall(VecGetOwnershipRange(v, &rs, &re));
  PetscCall(VecGetArrayWrite(v, &a));
  for (PetscInt i = rs; i < re; i++) a[i - rs] = TTRand(i, 100 + seed);
  PetscCall(VecRestoreArrayWrite(v, &a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ||x - ref|| / ||ref|| (collective) */
static inline PetscErrorCode TTRelDiff(Vec x, Vec ref, PetscReal *rel)
{
  Vec       d;
  PetscReal nd, nr;

  PetscFunctionBegin;
  PetscCall(VecDuplicate(ref, &d));
  PetscCall(VecWAXPY(d, -1.0, x, ref));
  PetscCall(VecNorm(d, NORM_2, &nd));
  PetscCall(VecNorm(ref, NORM_2, &nr));
  *rel = nr > 0 ? nd / nr : nd;
  PetscCall(VecDestroy(&d));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* reference: y = A^{-1} b with PETSc's LU of A gathered on every rank (PCREDUNDANT) */
static inline PetscErrorCode TTSolveRedundantLU(Mat A, Vec b, Vec y)
{
  KSP ksp;
  PC  pc;

  PetscFunctionBegin;
  PetscCall(KSPCreate(PetscObjectComm((PetscObject)A), &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPPREONLY));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCREDUNDANT));
  PetscCall(KSPSolve(ksp, b, y));
  PetscCall(KSPDestroy(&ksp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* reference: block Jacobi over ranks, each diagonal block solved with PETSc's LU on one rank */
static inline PetscErrorCode TTSolveBlockLU(Mat A, Vec b, Vec y)
{
  Mat                Ad;
  PetscInt           n;
  const PetscScalar *pb;
  PetscScalar       *pl, *py;

  PetscFunctionBegin;
  PetscCall(MatGetLocalSize(A, &n, NULL));
  PetscCall(MatGetDiagonalBlock(A, &Ad));
  /* y changes on every rank (also with 0 rows), else cached norms differ between ranks */
  PetscCall(VecGetArrayWrite(y, &py));
  PetscCall(VecRestoreArrayWrite(y, &py));
  if (n > 0) {
    KSP ksp;
    PC  pc;
    Vec bl, yl;

    PetscCall(MatCreateVecs(Ad, &yl, &bl));
    PetscCall(VecGetArrayRead(b, &pb));
    PetscCall(VecGetArrayWrite(bl, &pl));
    PetscCall(PetscArraycpy(pl, pb, n));
    PetscCall(VecRestoreArrayWrite(bl, &pl));
    PetscCall(VecRestoreArrayRead(b, &pb));
    PetscCall(KSPCreate(PETSC_COMM_SELF, &ksp));
    PetscCall(KSPSetOperators(ksp, Ad, Ad));
    PetscCall(KSPSetType(ksp, KSPPREONLY));
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCSetType(pc, PCLU));
    PetscCall(KSPSolve(ksp, bl, yl));
    PetscCall(VecGetArrayRead(yl, &pb));
    PetscCall(VecGetArrayWrite(y, &py));
    PetscCall(PetscArraycpy(py, pb, n));
    PetscCall(VecRestoreArrayWrite(y, &py));
    PetscCall(VecRestoreArrayRead(yl, &pb));
    PetscCall(KSPDestroy(&ksp));
    PetscCall(VecDestroy(&bl));
    PetscCall(VecDestroy(&yl));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* select the algorithm of a tridiagonal PC through its options (no public setter) */
static inline PetscErrorCode TTSetAlgorithm(PC pc, const char alg[])
{
  const char *prefix;
  char        opt[256];

  PetscFunctionBegin;
  PetscCall(PCGetOptionsPrefix(pc, &prefix));
  PetscCall(PetscSNPrintf(opt, sizeof(opt), "-%spc_tridiag_algorithm", prefix ? prefix : ""));
  PetscCall(PetscOptionsSetValue(NULL, opt, alg));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#define TTCheck(cond, ...) PetscCheck(cond, PETSC_COMM_SELF, PETSC_ERR_PLIB, __VA_ARGS__)
#define TT_TOL             1e-10
