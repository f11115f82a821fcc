/* StructGPU package registration: PC/Mat/KSP types, log events, finalization. */
#include <structgpu.h>
#include "sys/sgpetsc.h"
#include "pc/tridiag/tridiagimpl.h"
#include "pc/denselu/denseluimpl.h"

PetscLogEvent SG_TRI_SetUp, SG_TRI_Solve, SG_TRI_Iface;
PetscLogEvent SG_LU_Factor, SG_LU_Solve, SG_LU_Plan;

static PetscBool StructGPUPackageInitialized = PETSC_FALSE;

static PetscErrorCode StructGPUFinalizePackage(void)
{
  PetscFunctionBegin;
  StructGPUPackageInitialized = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  StructGPUInitializePackage - Registers the StructGPU types (`PCTRIDIAG`, `PCDENSELU`, ...) and log events
  with PETSc. Called by `PetscDLLibraryRegister_structgpu()` when the plugin is loaded with
  -dll_append, and on first use of any StructGPU function; call it yourself when you link the
  library and want -pc_type tridiag or -pc_type denselu to work before that.

  Level: developer

.seealso: `PetscDLLibraryRegister_structgpu()`, `PCTRIDIAG`
@*/
PetscErrorCode StructGPUInitializePackage(void)
{
  PetscFunctionBegin;
  if (StructGPUPackageInitialized) PetscFunctionReturn(PETSC_SUCCESS);
  StructGPUPackageInitialized = PETSC_TRUE;
  PetscCall(PCInitializePackage());
  PetscCall(PCRegister(PCTRIDIAG, PCCreate_Tridiag));
  PetscCall(PCRegister(PCDENSELU, PCCreate_DenseLU));
  PetscCall(PetscLogEventRegister("SGTriSetUp", PC_CLASSID, &SG_TRI_SetUp));
  PetscCall(PetscLogEventRegister("SGTriSolve", PC_CLASSID, &SG_TRI_Solve));
  PetscCall(PetscLogEventRegister("SGTriIface", PC_CLASSID, &SG_TRI_Iface));
  PetscCall(PetscLogEventRegister("SGLUFactor", PC_CLASSID, &SG_LU_Factor));
  PetscCall(PetscLogEventRegister("SGLUPlan", PC_CLASSID, &SG_LU_Plan));
  PetscCall(PetscLogEventRegister("SGLUSolve", PC_CLASSID, &SG_LU_Solve));
#if defined(SG_HAVE_CUDA)
  {
    PetscBool info; /* probing the device initializes the CUDA runtime: only when asked */

    PetscCall(PetscInfoEnabled(PETSC_SMALLEST_CLASSID, &info));
    if (info) PetscCall(PetscInfo(NULL, "StructGPU: CUDA kernels built; CUDA device usable: %s\n", sg_cuda_available() ? "yes" : "no"));
  }
#else
  PetscCall(PetscInfo(NULL, "StructGPU: built without CUDA kernels, host backend only\n"));
#endif
  PetscCall(PetscRegisterFinalize(StructGPUFinalizePackage));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  PetscDLLibraryRegister_structgpu - Entry point PETSc calls when libstructgpu.so is loaded
  dynamically (-dll_append /path/libstructgpu.so)

  Level: developer

.seealso: `StructGPUInitializePackage()`
@*/
PetscErrorCode PetscDLLibraryRegister_structgpu(void)
{
  PetscFunctionBegin;
  PetscCall(StructGPUInitializePackage());
  PetscFunctionReturn(PETSC_SUCCESS);
}
