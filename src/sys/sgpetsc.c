#include <petscdevice.h>
#include "sys/sgpetsc.h"

PetscErrorCode SGStatusToPetscError(sg_status st)
{
  switch (st) {
  case SG_OK:
    return PETSC_SUCCESS;
  case SG_ERR_ARG:
    return PETSC_ERR_ARG_WRONG;
  case SG_ERR_ZERO_PIVOT:
    return PETSC_ERR_MAT_LU_ZRPVT;
  case SG_ERR_NONFINITE:
    return PETSC_ERR_FP;
  case SG_ERR_MEM:
    return PETSC_ERR_MEM;
  case SG_ERR_DEVICE:
    return PETSC_ERR_GPU;
  case SG_ERR_UNSUPPORTED:
    return PETSC_ERR_SUP;
  }
  return PETSC_ERR_LIB;
}

/* one message format for all kernel failures */
static PetscErrorCode SGFormatReport(sg_status st, const sg_report *rep, const char what[], char buf[], size_t len)
{
  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(buf, len, "%s: %s (%s)", what, rep && rep->msg[0] ? rep->msg : "kernel failure", sg_status_string(st)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SGCheckStatus(sg_status st, const sg_report *rep, const char what[])
{
  char buf[512];

  PetscFunctionBegin;
  if (st == SG_OK) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(SGFormatReport(st, rep, what, buf, sizeof(buf)));
  SETERRQ(PETSC_COMM_SELF, SGStatusToPetscError(st), "%s", buf);
}

PetscErrorCode SGAgree(MPI_Comm comm, PetscErrorCode code, const char msg[])
{
  struct {
    int code, rank;
  } in, out;
  PetscMPIInt rank;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  in.code = (int)code;
  in.rank = code ? (int)rank : -1;
  /* ranks without an error report the largest code, and the lowest rank having it */
  PetscCallMPI(MPIU_Allreduce(&in, &out, 1, MPI_2INT, MPI_MAXLOC, comm));
  if (!out.code) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCheck(!code, PETSC_COMM_SELF, code, "%s", msg); /* this rank's own error */
  SETERRQ(PETSC_COMM_SELF, (PetscErrorCode)out.code, "StructGPU: the error was detected on rank %d (see its message); this rank stops too", out.rank);
}

PetscErrorCode SGCheckStatusAll(MPI_Comm comm, sg_status st, const sg_report *rep, const char what[])
{
  char buf[512] = "";

  PetscFunctionBegin;
  if (st != SG_OK) PetscCall(SGFormatReport(st, rep, what, buf, sizeof(buf)));
  PetscCall(SGAgree(comm, SGStatusToPetscError(st), buf));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SGGetCtx(SGCtxCache *c, PetscMemType mtype, sg_ctx **ctx)
{
  sg_status st;

  PetscFunctionBegin;
  *ctx = NULL;
  if (PetscMemTypeHost(mtype)) {
    if (!c->host) {
      st = sg_ctx_create(SG_BACKEND_HOST, NULL, &c->host);
      PetscCheck(st == SG_OK, PETSC_COMM_SELF, SGStatusToPetscError(st), "StructGPU: cannot create the host execution context (%s)", sg_status_string(st));
    }
    *ctx = c->host;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCheck(PetscMemTypeCUDA(mtype), PETSC_COMM_SELF, PETSC_ERR_SUP, "StructGPU kernels run on host or CUDA memory; vector memory type %s is not supported (use a host or CUDA Vec type)", PetscMemTypeToString(mtype));
#if defined(SG_HAVE_CUDA) && defined(PETSC_HAVE_CUDA)
  {
    PetscDeviceContext dctx;
    PetscDeviceType    dtype;
    void              *handle, *stream = NULL;

    PetscCall(PetscDeviceContextGetCurrentContext(&dctx));
    PetscCall(PetscDeviceContextGetDeviceType(dctx, &dtype));
    if (dtype == PETSC_DEVICE_CUDA) {
      PetscCall(PetscDeviceContextGetStreamHandle(dctx, &handle));
      stream = *(void **)handle; /* handle points to a cudaStream_t */
    }
    if (c->cuda && c->stream != stream) sg_ctx_destroy(&c->cuda);
    if (!c->cuda) {
      st = sg_ctx_create(SG_BACKEND_CUDA, stream, &c->cuda);
      PetscCheck(st == SG_OK, PETSC_COMM_SELF, SGStatusToPetscError(st), "StructGPU: cannot create the CUDA execution context (%s)", sg_status_string(st));
      c->stream = stream;
    }
    *ctx = c->cuda;
  }
#else
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "StructGPU was built without CUDA kernels; cannot use vectors in CUDA memory (use a host Vec type)");
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SGCtxCacheDestroy(SGCtxCache *c)
{
  PetscFunctionBegin;
  if (c->host) sg_ctx_destroy(&c->host);
  if (c->cuda) sg_ctx_destroy(&c->cuda);
  c->stream = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SGScalarPrecision(sg_precision *prec)
{
  PetscFunctionBegin;
#if defined(PETSC_USE_COMPLEX)
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "StructGPU solvers support real scalars only (PETSc was configured with complex scalars)");
#elif defined(PETSC_USE_REAL_DOUBLE)
  *prec = SG_REAL64;
#elif defined(PETSC_USE_REAL_SINGLE)
  *prec = SG_REAL32;
#else
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "StructGPU supports PetscScalar double or single only");
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}
