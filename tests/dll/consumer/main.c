/* Downstream program: links the installed plugin, registers it, and checks that the PC
   type is known and solves a small tridiagonal system to 1e-12. */
#include <structgpu.h>
#include <petscksp.h>
int main(int argc, char **argv)
{
  Mat       A;
  Vec       x, b;
  KSP       ksp;
  PC        pc;
  PetscInt  i, n = 37, col[3];
  PetscReal err;
  PetscScalar v[3] = {-1.0, 3.0, -1.0};
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(StructGPUInitializePackage());
  PetscCall(MatCreateAIJ(PETSC_COMM_SELF, n, n, n, n, 3, NULL, 0, NULL, &A));
  for (i = 0; i < n; i++) {
    col[0] = i - 1; col[1] = i; col[2] = i + 1;
    if (i == 0) PetscCall(MatSetValues(A, 1, &i, 2, col + 1, v + 1, INSERT_VALUES));
    else if (i == n - 1) PetscCall(MatSetValues(A, 1, &i, 2, col, v, INSERT_VALUES));
    else PetscCall(MatSetValues(A, 1, &i, 3, col, v, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY)); PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatCreateVecs(A, &x, &b)); PetscCall(VecSet(x, 1.0)); PetscCall(MatMult(A, x, b)); PetscCall(VecSet(x, 0.0));
  PetscCall(KSPCreate(PETSC_COMM_SELF, &ksp)); PetscCall(KSPSetOperators(ksp, A, A)); PetscCall(KSPSetType(ksp, KSPPREONLY));
  PetscCall(KSPGetPC(ksp, &pc)); PetscCall(PCSetType(pc, PCTRIDIAG)); PetscCall(KSPSetFromOptions(ksp));
  PetscCall(KSPSolve(ksp, b, x)); PetscCall(VecShift(x, -1.0)); PetscCall(VecNorm(x, NORM_INFINITY, &err));
  PetscCheck(err < 1e-12, PETSC_COMM_SELF, PETSC_ERR_PLIB, "installed StructGPU: error %g", (double)err);
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "consumer OK: error %g\n", (double)err));
  PetscCall(KSPDestroy(&ksp)); PetscCall(MatDestroy(&A)); PetscCall(VecDestroy(&x)); PetscCall(VecDestroy(&b));
  PetscCall(PetscFinalize());
  return 0;
}
