/*
   StructGPU: GPU solvers for structured sparse systems, shipped as a PETSc plugin
   (libstructgpu.so; load with -dll_append /path/libstructgpu.so or link it and call
   StructGPUInitializePackage()).

   This header is the public PETSc-level API. Kernel-level C API: structgpu/tri_kernels.h,
   structgpu/trsv_kernels.h.
*/
#ifndef STRUCTGPU_H
#define STRUCTGPU_H

#include <petscpc.h>
#include <petscdm.h>

/* ---------------------------------------------------------------- tridiagonal family */
#define PCTRIDIAG "tridiag"

/*E
   PCTridiagMode - which tridiagonal system `PCTRIDIAG` (and `PCShellSetTridiagonal()`) solves

   Values:
+  `PC_TRIDIAG_GLOBAL` - exact solve with the tridiagonal part of the operator in global numbering,
                         all ranks coupled (partitioned method with a gathered interface system)
.  `PC_TRIDIAG_LOCAL`  - block Jacobi over ranks: each rank solves the tridiagonal part of its own rows
-  `PC_TRIDIAG_LINES`  - `DMDA` line solve along one grid direction, lines cut at rank boundaries

   Level: beginner

.seealso: `PCTRIDIAG`, `PCTridiagSetMode()`, `PCTridiagSetDirection()`
E*/
typedef enum {
  PC_TRIDIAG_GLOBAL,
  PC_TRIDIAG_LOCAL,
  PC_TRIDIAG_LINES
} PCTridiagMode;
PETSC_EXTERN const char *const PCTridiagModes[];

PETSC_EXTERN PetscErrorCode PCTridiagSetMode(PC, PCTridiagMode);
PETSC_EXTERN PetscErrorCode PCTridiagSetDirection(PC, PetscInt);
PETSC_EXTERN PetscErrorCode PCShellSetTridiagonal(PC, Mat, PetscBool);
PETSC_EXTERN PetscErrorCode PCShellSetLineSolve(PC, DM, PetscInt);

/* ---------------------------------------------------------------- dense LU direct solver */
#define PCDENSELU "denselu"

/*E
   PCDenseLULayout - which matrix `PCDENSELU` (and `PCShellSetDenseLU()`) factors, and where

   Values:
+  `PC_DENSELU_GATHERED` - the whole operator is gathered to rank 0 and factored there (exact solve);
                           each `PCApply()` gathers the right-hand side to rank 0, solves and scatters back
-  `PC_DENSELU_LOCAL`    - each rank factors its own diagonal block (block Jacobi over ranks with exact
                           dense local solves)

   Level: beginner

.seealso: `PCDENSELU`, `PCDenseLUSetLayout()`, `PCShellSetDenseLU()`
E*/
typedef enum {
  PC_DENSELU_GATHERED,
  PC_DENSELU_LOCAL
} PCDenseLULayout;
PETSC_EXTERN const char *const PCDenseLULayouts[];

PETSC_EXTERN PetscErrorCode PCDenseLUSetLayout(PC, PCDenseLULayout);
PETSC_EXTERN PetscErrorCode PCDenseLUGetLayout(PC, PCDenseLULayout *);
PETSC_EXTERN PetscErrorCode PCShellSetDenseLU(PC, PCDenseLULayout);

/* ---------------------------------------------------------------- package */
PETSC_EXTERN PetscErrorCode StructGPUInitializePackage(void);
PETSC_EXTERN PetscErrorCode PetscDLLibraryRegister_structgpu(void);

#endif
