/* Shared PETSc glue helpers (C): kernel status -> PETSc error, execution contexts per
   memory type, log events. Used by every StructGPU PETSc type; no kernel code here. */
#pragma once
#include <petscsys.h>
#include <petscdevicetypes.h>
#include <petscvec.h> /* VECCUDA, ... */
#include "structgpu/tri_kernels.h"

/* log events registered by StructGPUInitializePackage() */
PETSC_INTERN PetscLogEvent SG_TRI_SetUp, SG_TRI_Solve, SG_TRI_Iface;
PETSC_INTERN PetscLogEvent SG_LU_Factor, SG_LU_Solve, SG_LU_Plan; /* "SGLUFactor", "SGLUSolve", "SGLUPlan": dense LU (sg_getrf / sg_getrs / sg_getrs_plan_create) */

/* PETSc error code for a kernel status (SG_OK -> PETSC_SUCCESS). Size problems are caught
   by the glue before calling a kernel (PETSC_ERR_ARG_SIZ), so SG_ERR_ARG maps to
   PETSC_ERR_ARG_WRONG. */
PETSC_INTERN PetscErrorCode SGStatusToPetscError(sg_status);

/* Not collective: raise the PETSc error for st (if not SG_OK) with rep->msg in the message. */
PETSC_INTERN PetscErrorCode SGCheckStatus(sg_status st, const sg_report *rep, const char what[]);
/* Collective on comm: every rank raises an error if any rank has st != SG_OK (the failing
   rank with its report, the others naming that rank), so no rank is left in a collective. */
PETSC_INTERN PetscErrorCode SGCheckStatusAll(MPI_Comm comm, sg_status st, const sg_report *rep, const char what[]);
/* Collective on comm: error code `code` (0 = none) raised on all ranks if any rank has one;
   msg is used on the first failing rank, the others report "error on rank r". */
PETSC_INTERN PetscErrorCode SGAgree(MPI_Comm comm, PetscErrorCode code, const char msg[]);

/* Execution contexts (sg_ctx) by memory type, created on first use and kept until
   SGCtxCacheDestroy(). The CUDA context runs on the stream of PETSc's current
   PetscDeviceContext (the stream VECCUDA operations use), recreated if that changes. */
typedef struct {
  sg_ctx *host, *cuda;
  void   *stream; /* cudaStream_t of the CUDA context */
} SGCtxCache;
PETSC_INTERN PetscErrorCode SGGetCtx(SGCtxCache *, PetscMemType, sg_ctx **);
PETSC_INTERN PetscErrorCode SGCtxCacheDestroy(SGCtxCache *);

/* PetscScalar -> kernel precision (PETSC_ERR_SUP for complex / other precisions) */
PETSC_INTERN PetscErrorCode SGScalarPrecision(sg_precision *);

/* a CUDA vector type name (VECCUDA, VECSEQCUDA, VECMPICUDA) */
static inline PetscBool SGVecTypeCUDA(const char vt[])
{
  PetscBool flg = PETSC_FALSE;

  if (vt && PetscStrcmpAny(vt, &flg, VECCUDA, VECSEQCUDA, VECMPICUDA, "") != PETSC_SUCCESS) return PETSC_FALSE;
  return flg;
}
