/*
   PCDENSELU: dense LU direct solver (partial pivoting) on the host (LAPACK getrf + our trsv twins)
   or a CUDA GPU (cuSOLVER getrf + our trsv kernels), through the kernel API
   structgpu/trsv_kernels.h (sg_getrf / sg_getrs). The operator is either gathered to rank 0
   and factored there (exact solve), or each rank factors its own diagonal block (block Jacobi).

   The first half of this file is the core shared with the PCSHELL helper PCShellSetDenseLU()
   (src/tri/lushell.c, declared in denseluimpl.h), the second half the PC type.
*/
#include "pc/denselu/denseluimpl.h"
#include <petsctime.h>
#if defined(PETSC_HAVE_CUDA)
  #include <petscdevice.h>
#endif

const char *const PCDenseLULayouts[] = {"gathered", "local", "PCDenseLULayout", "PC_DENSELU_", NULL};
const char *const SGLUBackends[]     = {"auto", "host", "cuda", "SGLUBackend", "SG_LU_BACKEND_", NULL};

#if defined(SG_HAVE_CUDA) && defined(PETSC_HAVE_CUDA)
  #define SG_LU_HAVE_CUDA 1
#else
  #define SG_LU_HAVE_CUDA 0
#endif

/* ================================================================== core */

PetscErrorCode SGLUCreate(PC pc, SGLU **tp)
{
  SGLU *t;

  PetscFunctionBegin;
  PetscCall(StructGPUInitializePackage()); /* log events, also for PCSHELL users */
  PetscCall(PetscNew(&t));
  t->pc      = pc;
  t->layout  = PC_DENSELU_GATHERED;
  t->pivtol  = -1.0;
  t->backend = SG_LU_BACKEND_AUTO;
  t->useplan = PETSC_TRUE;
  *tp        = t;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* drop the factors (perm lives in the memory of the backend it was factored on) */
static PetscErrorCode SGLUFreeFactors(SGLU *t)
{
  PetscFunctionBegin;
  sg_getrs_plan_destroy(&t->plan); /* (before the factors it refers to) */
  t->plan_lu = NULL;
  t->tplan   = 0;
  PetscCall(MatDestroy(&t->F));
  if (t->perm && t->dev) {
#if SG_LU_HAVE_CUDA
    PetscCall(PetscDeviceFree(NULL, t->perm));
#endif
  } else PetscCall(PetscFree(t->perm));
  t->perm = NULL;
  t->Aid  = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SGLUReset(SGLU *t)
{
  PetscFunctionBegin;
  PetscCall(SGLUFreeFactors(t));
  PetscCall(MatDestroy(&t->A));
  PetscCall(VecScatterDestroy(&t->scat));
  PetscCall(VecDestroy(&t->w));
  PetscCall(VecDestroy(&t->stage));
  PetscCall(SGCtxCacheDestroy(&t->ctxs));
  t->N = t->nloc = t->rstart = t->nf = 0;
  t->nfactor = t->napply = 0;
  t->tfactor = 0;
  t->applied = t->staged = PETSC_FALSE;
  t->dev     = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SGLUDestroy(SGLU **t)
{
  PetscFunctionBegin;
  if (!*t) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(SGLUReset(*t));
  PetscCall(PetscFree(*t));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SGLUSetFromOptions(SGLU *t, PetscOptionItems PetscOptionsObject, const char manpage[])
{
  PCDenseLULayout layout = t->layout;
  PetscInt        ib     = (PetscInt)t->backend;

  PetscFunctionBegin;
  PetscCall(PetscOptionsEnum("-pc_denselu_layout", "Matrix factored: gathered (whole operator on rank 0, exact solve) or local (each rank's diagonal block, block Jacobi)", manpage, PCDenseLULayouts, (PetscEnum)t->layout, (PetscEnum *)&layout, NULL));
  t->layout = layout;
  PetscCall(PetscOptionsReal("-pc_denselu_pivot_tol", "Breakdown when |U_ii| <= tol * max|a_ij| (< 0: default n * machine epsilon; 0: exactly zero pivots only)", manpage, t->pivtol, &t->pivtol, NULL));
  PetscCall(PetscOptionsEList("-pc_denselu_backend", "Where the factorization and the solves run (auto: CUDA when the operator's vectors are CUDA vectors, e.g. aijcusparse)", manpage, SGLUBackends, 3, SGLUBackends[t->backend], &ib, NULL));
  t->backend = (SGLUBackend)ib;
  PetscCall(PetscOptionsBool("-pc_denselu_plan", "Analyse the factors once at setup (StructGPU triangular plans: perm checked, diagonal blocks inverted), so that each apply runs only the permutation and the two triangular solves", manpage, t->useplan, &t->useplan, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* vectors / dense matrices in CUDA memory, by type (no transfer is triggered) */
static PetscErrorCode SGLUVecOnDevice(Vec v, PetscBool *dev)
{
  VecType   vt;
  PetscBool bound = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(VecGetType(v, &vt));
  *dev = SGVecTypeCUDA(vt);
  if (*dev) PetscCall(VecBoundToCPU(v, &bound));
  *dev = (PetscBool)(*dev && !bound);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SGLUMatOnDevice(Mat X, PetscBool *dev)
{
  PetscBool bound = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompareAny((PetscObject)X, dev, MATSEQDENSECUDA, MATMPIDENSECUDA, MATDENSECUDA, ""));
  if (*dev) PetscCall(MatBoundToCPU(X, &bound));
  *dev = (PetscBool)(*dev && !bound);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* location of a factorization failure, for the error message */
static PetscErrorCode SGLUWhere(SGLU *t, sg_status st, const sg_report *rep, char where[], size_t len)
{
  char        col[128] = "";
  PetscMPIInt rank;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)t->A), &rank));
  if (st == SG_ERR_ZERO_PIVOT && rep->row >= 0) PetscCall(PetscSNPrintf(col, sizeof(col), ", zero pivot at elimination step %lld (global column %" PetscInt_FMT " depends linearly on the earlier ones)", rep->row, (t->layout == PC_DENSELU_LOCAL ? t->rstart : 0) + (PetscInt)rep->row));
  if (t->layout == PC_DENSELU_GATHERED) PetscCall(PetscSNPrintf(where, len, "%s: dense LU of the %" PetscInt_FMT " x %" PetscInt_FMT " operator gathered on rank 0%s", t->name, t->N, t->N, col));
  else PetscCall(PetscSNPrintf(where, len, "%s: dense LU of the diagonal block of rank %d (rows %" PetscInt_FMT "..%" PetscInt_FMT ")%s", t->name, rank, t->rstart, t->rstart + t->nloc - 1, col));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the backend of the factorization: CUDA on request, or (auto) when the operator's vectors are CUDA vectors */
static PetscErrorCode SGLUChooseBackend(SGLU *t, Mat A, PetscBool *dev)
{
  MPI_Comm  comm = PetscObjectComm((PetscObject)A);
  VecType   vt;
  PetscBool cudavec, usable = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(MatGetVecType(A, &vt));
  cudavec = SGVecTypeCUDA(vt);
  if (SG_LU_HAVE_CUDA) usable = sg_cuda_available() ? PETSC_TRUE : PETSC_FALSE;
  switch (t->backend) {
  case SG_LU_BACKEND_HOST:
    *dev = PETSC_FALSE;
    break;
  case SG_LU_BACKEND_CUDA:
    PetscCheck(SG_LU_HAVE_CUDA, comm, PETSC_ERR_SUP, "%s: -pc_denselu_backend cuda: StructGPU (or PETSc) was built without CUDA; use -pc_denselu_backend host or auto", t->name);
    PetscCall(SGAgree(comm, usable ? PETSC_SUCCESS : PETSC_ERR_GPU, "-pc_denselu_backend cuda: no usable CUDA device on this rank"));
    *dev = PETSC_TRUE;
    break;
  default:
    *dev = (PetscBool)(cudavec && SG_LU_HAVE_CUDA);
    if (cudavec && !SG_LU_HAVE_CUDA) PetscCall(PetscInfo(t->pc, "%s: operator vectors of type %s but StructGPU was built without CUDA kernels: host backend\n", t->name, vt));
    if (*dev) PetscCall(SGAgree(comm, usable ? PETSC_SUCCESS : PETSC_ERR_GPU, "operator with CUDA vectors but no usable CUDA device on this rank (use -pc_denselu_backend host)"));
    break;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SGLUSetUp(SGLU *t, Mat A)
{
  MPI_Comm         comm = PetscObjectComm((PetscObject)A);
  PetscObjectId    id;
  PetscObjectState state;
  PetscInt         M, Nc, m, mc, rs;
  PetscMPIInt      rank;
  PetscBool        dev;
  IS               is;
  Mat             *sub;
  sg_status        st  = SG_OK;
  sg_report        rep = {SG_OK, SG_TRI_AUTO, -1, -1, 0.0, ""};
  char             msg[256] = "";

  PetscFunctionBegin;
  PetscCall(SGScalarPrecision(&t->prec));
  PetscCall(PetscObjectGetId((PetscObject)A, &id));
  PetscCall(PetscObjectStateGet((PetscObject)A, &state));
  if (t->Aid && id == t->Aid && state == t->Astate && t->layout == t->xlayout && t->pivtol == t->xpivtol && t->backend == t->xbackend && t->useplan == t->xuseplan) PetscFunctionReturn(PETSC_SUCCESS);

  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(MatGetSize(A, &M, &Nc));
  PetscCheck(M == Nc, comm, PETSC_ERR_ARG_SIZ, "%s needs a square operator, got %" PetscInt_FMT " x %" PetscInt_FMT, t->name, M, Nc);
  PetscCall(MatGetLocalSize(A, &m, &mc));
  PetscCall(MatGetOwnershipRange(A, &rs, NULL));
  if (t->layout == PC_DENSELU_LOCAL && m != mc) PetscCall(PetscSNPrintf(msg, sizeof(msg), "%s, local layout: rank %d owns %" PetscInt_FMT " rows but %" PetscInt_FMT " columns; the diagonal blocks must be square (use the same row and column layout)", t->name, rank, m, mc));
  PetscCall(SGAgree(comm, t->layout == PC_DENSELU_LOCAL && m != mc ? PETSC_ERR_ARG_SIZ : PETSC_SUCCESS, msg));
  PetscCall(SGLUChooseBackend(t, A, &dev));

  /* the gather scatter depends on the operator's row layout and the layout setting */
  if (t->A != A || t->N != M || t->nloc != m || t->layout != t->xlayout) {
    PetscCall(VecScatterDestroy(&t->scat));
    PetscCall(VecDestroy(&t->w));
  }
  PetscCall(PetscObjectReference((PetscObject)A));
  PetscCall(MatDestroy(&t->A));
  t->A = A;
  PetscCall(SGLUFreeFactors(t)); /* with the backend it was factored on */
  PetscCall(VecDestroy(&t->stage));
  t->dev    = dev;
  t->N      = M;
  t->nloc   = m;
  t->rstart = rs;
  t->nf     = t->layout == PC_DENSELU_GATHERED ? (rank == 0 ? M : 0) : m;

  /* the dense matrix: all of A on rank 0 (gathered) or each rank's diagonal block (local) */
  PetscCall(ISCreateStride(PETSC_COMM_SELF, t->nf, t->layout == PC_DENSELU_GATHERED ? 0 : rs, 1, &is));
  PetscCall(MatCreateSubMatrices(A, 1, &is, &is, MAT_INITIAL_MATRIX, &sub));
  PetscCall(ISDestroy(&is));
  if (t->nf) {
    /* leading dimension padded to 16 bytes: the triangular solve kernels copy 32 x 32 tiles of the
       factors with the tensor memory accelerator only when every column starts 16-byte aligned */
    const PetscInt ld = (t->nf + 16 / (PetscInt)sizeof(PetscScalar) - 1) / (16 / (PetscInt)sizeof(PetscScalar)) * (16 / (PetscInt)sizeof(PetscScalar));
    Mat            D;

    PetscCall(MatConvert(sub[0], MATSEQDENSE, MAT_INITIAL_MATRIX, &D));
    PetscCall(MatCreate(PETSC_COMM_SELF, &t->F));
    PetscCall(MatSetSizes(t->F, t->nf, t->nf, t->nf, t->nf));
    PetscCall(MatSetType(t->F, MATSEQDENSE));
    PetscCall(MatDenseSetLDA(t->F, ld));
    PetscCall(MatSetUp(t->F));
    PetscCall(MatCopy(D, t->F, SAME_NONZERO_PATTERN));
    PetscCall(MatDestroy(&D));
    if (dev) PetscCall(MatConvert(t->F, MATSEQDENSECUDA, MAT_INPLACE_MATRIX, &t->F));
  }
  PetscCall(MatDestroySubMatrices(1, &sub));

  /* factor in place */
  t->tfactor = 0;
  if (t->nf) {
    sg_ctx        *ctx;
    PetscScalar   *a;
    PetscMemType   mt;
    PetscInt       lda;
    PetscLogDouble t0, t1;

    PetscCall(SGGetCtx(&t->ctxs, dev ? PETSC_MEMTYPE_CUDA : PETSC_MEMTYPE_HOST, &ctx));
    PetscCall(MatDenseGetLDA(t->F, &lda));
#if SG_LU_HAVE_CUDA
    if (dev) PetscCall(PetscDeviceMalloc(NULL, PETSC_MEMTYPE_CUDA, t->nf, &t->perm));
    else
#endif
      PetscCall(PetscMalloc1(t->nf, &t->perm));
    PetscCall(MatDenseGetArrayAndMemType(t->F, &a, &mt));
    PetscCheck(PetscMemTypeDevice(mt) == dev, PETSC_COMM_SELF, PETSC_ERR_GPU, "%s: dense matrix in %s memory, expected %s", t->name, PetscMemTypeToString(mt), dev ? "device" : "host");
    PetscCall(PetscLogEventBegin(SG_LU_Factor, A, 0, 0, 0));
    PetscCall(PetscTime(&t0));
    if (dev) PetscCall(PetscLogGpuTimeBegin());
    st = sg_getrf(ctx, t->prec, t->nf, a, lda, t->perm, (double)t->pivtol, &rep);
    if (dev) PetscCall(PetscLogGpuTimeEnd());
    PetscCall(PetscTime(&t1));
    t->tfactor = t1 - t0;
    if (dev) PetscCall(PetscLogGpuFlops(2.0 / 3.0 * (PetscLogDouble)t->nf * t->nf * t->nf));
    else PetscCall(PetscLogFlops(2.0 / 3.0 * (PetscLogDouble)t->nf * t->nf * t->nf));
    PetscCall(PetscLogEventEnd(SG_LU_Factor, A, 0, 0, 0));
    if (st == SG_OK && t->useplan) { /* the analysis of the factors: two triangular solves with a zero right-hand side */
      PetscCall(PetscLogEventBegin(SG_LU_Plan, A, 0, 0, 0));
      PetscCall(PetscTime(&t0));
      if (dev) PetscCall(PetscLogGpuTimeBegin());
      st = sg_getrs_plan_create(ctx, t->prec, t->nf, a, lda, t->perm, &t->plan, &rep);
      if (dev) PetscCall(PetscLogGpuTimeEnd());
      PetscCall(PetscTime(&t1));
      if (dev) PetscCall(PetscLogGpuFlops(2.0 * (PetscLogDouble)t->nf * t->nf));
      else PetscCall(PetscLogFlops(2.0 * (PetscLogDouble)t->nf * t->nf));
      PetscCall(PetscLogEventEnd(SG_LU_Plan, A, 0, 0, 0));
      t->tplan   = t1 - t0;
      t->plan_lu = st == SG_OK ? (const void *)a : NULL;
    }
    PetscCall(MatDenseRestoreArrayAndMemType(t->F, &a));
  }
  if (st != SG_OK) PetscCall(SGLUWhere(t, st, &rep, msg, sizeof(msg)));
  if (st != SG_OK) PetscCall(SGLUFreeFactors(t));
  PetscCall(SGCheckStatusAll(comm, st, &rep, msg));

  t->Aid      = id;
  t->Astate   = state;
  t->xlayout  = t->layout;
  t->xpivtol  = t->pivtol;
  t->xbackend = t->backend;
  t->xuseplan = t->useplan;
  t->nfactor++;
  if (t->plan) PetscCall(PetscInfo(t->pc, "%s: factors analysed for the triangular solves (sg_getrs_plan) in %g s\n", t->name, (double)t->tplan));
  if (t->layout == PC_DENSELU_GATHERED) PetscCall(PetscInfo(t->pc, "%s: gathered layout, operator of order %" PetscInt_FMT " factored on rank 0 by the %s backend in %g s\n", t->name, M, dev ? "cuda" : "host", (double)t->tfactor));
  else PetscCall(PetscInfo(t->pc, "%s: local layout, diagonal block of order %" PetscInt_FMT " (of %" PetscInt_FMT ") factored by the %s backend in %g s\n", t->name, m, M, dev ? "cuda" : "host", (double)t->tfactor));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* one sg_getrs call on arrays in the factors' memory (nf rows, nrhs columns) */
static PetscErrorCode SGLUSolveArrays(SGLU *t, PetscBool transpose, PetscInt nrhs, const PetscScalar *b, PetscInt ldb, PetscScalar *x, PetscInt ldx, sg_status *st, sg_report *rep)
{
  sg_ctx            *ctx;
  const PetscScalar *lu;
  PetscMemType       mt;
  PetscInt           lda;

  PetscFunctionBegin;
  PetscCall(SGGetCtx(&t->ctxs, t->dev ? PETSC_MEMTYPE_CUDA : PETSC_MEMTYPE_HOST, &ctx));
  PetscCall(MatDenseGetLDA(t->F, &lda));
  PetscCall(MatDenseGetArrayReadAndMemType(t->F, &lu, &mt));
  PetscCheck(PetscMemTypeDevice(mt) == t->dev, PETSC_COMM_SELF, PETSC_ERR_GPU, "%s: the LU factors moved out of the backend's memory", t->name);
  if (t->dev) PetscCall(PetscLogGpuTimeBegin());
  if (t->plan && (const void *)lu == t->plan_lu) *st = sg_getrs_plan_solve(ctx, t->plan, transpose ? SG_TRANS : SG_NOTRANS, nrhs, b, ldb, x, ldx, rep);
  else *st = sg_getrs(ctx, t->prec, transpose ? SG_TRANS : SG_NOTRANS, t->nf, nrhs, lu, lda, t->perm, b, ldb, x, ldx, rep);
  if (t->dev) PetscCall(PetscLogGpuTimeEnd());
  if (t->dev) PetscCall(PetscLogGpuFlops(2.0 * nrhs * (PetscLogDouble)t->nf * t->nf));
  else PetscCall(PetscLogFlops(2.0 * nrhs * (PetscLogDouble)t->nf * t->nf));
  PetscCall(MatDenseRestoreArrayReadAndMemType(t->F, &lu));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* out = op(F)^{-1} in for sequential-size-nf vectors (or the local parts of parallel ones),
   in == out allowed. Vectors in the factors' memory are passed to the kernels directly; else
   the values are copied (host backend: PETSc's own logged transfers of the CUDA vectors; CUDA
   backend with host vectors: through the device vector t->stage, also logged by PETSc). */
static PetscErrorCode SGLUSolveVec(SGLU *t, Vec in, Vec out, PetscBool transpose, sg_status *st, sg_report *rep)
{
  const PetscInt     n = t->nf;
  const PetscScalar *b;
  PetscScalar       *x;
  PetscBool          indev, outdev, ok = PETSC_TRUE;
  PetscMemType       mb = PETSC_MEMTYPE_HOST, mx = PETSC_MEMTYPE_HOST;

  PetscFunctionBegin;
  PetscCall(SGLUVecOnDevice(in, &indev));
  PetscCall(SGLUVecOnDevice(out, &outdev));
  t->mtype_used = indev ? PETSC_MEMTYPE_CUDA : PETSC_MEMTYPE_HOST;
  t->staged     = (PetscBool)(indev != t->dev || outdev != t->dev);
  if (!n) { /* nothing to solve here; out still changes (its cached norms must not survive) */
    PetscCall(VecGetArrayWrite(out, &x));
    PetscCall(VecRestoreArrayWrite(out, &x));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscLogEventBegin(SG_LU_Solve, t->A, in, out, 0));
  if (!t->dev || (indev && outdev)) { /* direct (host backend: PETSc makes host copies of CUDA vectors) */
    if (in == out) {
      if (t->dev) PetscCall(VecGetArrayAndMemType(out, &x, &mx));
      else PetscCall(VecGetArray(out, &x));
      b  = x;
      mb = mx;
    } else if (t->dev) {
      PetscCall(VecGetArrayReadAndMemType(in, &b, &mb));
      PetscCall(VecGetArrayWriteAndMemType(out, &x, &mx));
    } else {
      PetscCall(VecGetArrayRead(in, &b));
      PetscCall(VecGetArrayWrite(out, &x));
    }
    ok = (PetscBool)(PetscMemTypeDevice(mb) == t->dev && PetscMemTypeDevice(mx) == t->dev);
    if (ok) PetscCall(SGLUSolveArrays(t, transpose, 1, b, n, x, n, st, rep));
    if (in == out) {
      if (t->dev) PetscCall(VecRestoreArrayAndMemType(out, &x));
      else PetscCall(VecRestoreArray(out, &x));
    } else if (t->dev) {
      PetscCall(VecRestoreArrayReadAndMemType(in, &b));
      PetscCall(VecRestoreArrayWriteAndMemType(out, &x));
    } else {
      PetscCall(VecRestoreArrayRead(in, &b));
      PetscCall(VecRestoreArrayWrite(out, &x));
    }
  } else { /* CUDA factors, some vector in host memory: stage through a device vector */
    PetscScalar       *s;
    const PetscScalar *hs;

    if (!t->stage) {
      PetscCall(VecCreate(PETSC_COMM_SELF, &t->stage));
      PetscCall(VecSetSizes(t->stage, n, n));
      PetscCall(VecSetType(t->stage, VECSEQCUDA));
    }
    PetscCall(VecGetArrayRead(in, &b));
    PetscCall(VecGetArrayWrite(t->stage, &s)); /* host side of the staging vector */
    PetscCall(PetscArraycpy(s, b, n));
    PetscCall(VecRestoreArrayWrite(t->stage, &s));
    PetscCall(VecRestoreArrayRead(in, &b));
    PetscCall(VecGetArrayAndMemType(t->stage, &s, &mx)); /* upload, logged as CpuToGpu */
    ok = (PetscBool)PetscMemTypeDevice(mx);
    if (ok) PetscCall(SGLUSolveArrays(t, transpose, 1, s, n, s, n, st, rep));
    PetscCall(VecRestoreArrayAndMemType(t->stage, &s));
    PetscCall(VecGetArrayRead(t->stage, &hs)); /* download, logged as GpuToCpu */
    PetscCall(VecGetArrayWrite(out, &x));
    PetscCall(PetscArraycpy(x, hs, n));
    PetscCall(VecRestoreArrayWrite(out, &x));
    PetscCall(VecRestoreArrayRead(t->stage, &hs));
  }
  PetscCall(PetscLogEventEnd(SG_LU_Solve, t->A, in, out, 0));
  PetscCheck(ok, PETSC_COMM_SELF, PETSC_ERR_GPU, "%s: vector arrays are not in the memory of the factors (%s)", t->name, t->dev ? "device" : "host");
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SGLUApply(SGLU *t, Vec x, Vec y, PetscBool transpose)
{
  MPI_Comm  comm;
  PetscInt  nx, ny;
  sg_status st  = SG_OK;
  sg_report rep = {SG_OK, SG_TRI_AUTO, -1, -1, 0.0, ""};
  char      where[160];

  PetscFunctionBegin;
  PetscCheck(t->A && t->Aid, PETSC_COMM_SELF, PETSC_ERR_ORDER, "%s is not set up (or its factorization failed): call PCSetUp() first", t->name);
  comm = PetscObjectComm((PetscObject)t->A);
  PetscCall(VecGetLocalSize(x, &nx));
  PetscCall(VecGetLocalSize(y, &ny));
  PetscCheck(nx == t->nloc && ny == t->nloc, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "Vector local sizes %" PetscInt_FMT ", %" PetscInt_FMT " do not match the %" PetscInt_FMT " local rows of the operator of %s", nx, ny, t->nloc, t->name);
  if (t->layout == PC_DENSELU_GATHERED) {
    PetscBool xdev, wdev;

    /* x -> w on rank 0; w is a sequential vector in the memory of x (PETSc's scatter moves the data) */
    PetscCall(SGLUVecOnDevice(x, &xdev));
    if (t->w) {
      PetscCall(SGLUVecOnDevice(t->w, &wdev));
      if (wdev != xdev) PetscCall(VecDestroy(&t->w));
    }
    if (!t->w) {
      PetscCall(VecCreate(PETSC_COMM_SELF, &t->w));
      PetscCall(VecSetSizes(t->w, t->nf, t->nf));
      PetscCall(VecSetType(t->w, xdev ? VECSEQCUDA : VECSEQ));
    }
    if (!t->scat) {
      IS is;

      PetscCall(ISCreateStride(PETSC_COMM_SELF, t->nf, 0, 1, &is));
      PetscCall(VecScatterCreate(x, is, t->w, NULL, &t->scat));
      PetscCall(ISDestroy(&is));
    }
    PetscCall(VecScatterBegin(t->scat, x, t->w, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(VecScatterEnd(t->scat, x, t->w, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(SGLUSolveVec(t, t->w, t->w, transpose, &st, &rep));
    PetscCall(PetscSNPrintf(where, sizeof(where), "%s: solve with the dense LU factors on rank 0%s", t->name, transpose ? " (transpose)" : ""));
    PetscCall(SGCheckStatusAll(comm, st, &rep, where));
    PetscCall(VecScatterBegin(t->scat, t->w, y, INSERT_VALUES, SCATTER_REVERSE));
    PetscCall(VecScatterEnd(t->scat, t->w, y, INSERT_VALUES, SCATTER_REVERSE));
  } else {
    PetscCall(SGLUSolveVec(t, x, y, transpose, &st, &rep));
    PetscCall(PetscSNPrintf(where, sizeof(where), "%s: solve with the dense LU factors of the diagonal block (rows %" PetscInt_FMT "..%" PetscInt_FMT ")%s", t->name, t->rstart, t->rstart + t->nloc - 1, transpose ? " (transpose)" : ""));
    PetscCall(SGCheckStatusAll(comm, st, &rep, where));
  }
  if (!t->applied) PetscCall(PetscInfo(t->pc, "%s: first apply, %s backend, vectors in %s memory%s\n", t->name, t->dev ? "cuda" : "host", PetscMemTypeHost(t->mtype_used) ? "host" : "device", t->staged ? ", copied between host and device at every apply" : ", used in place"));
  t->applied = PETSC_TRUE;
  t->napply++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SGLUMatApply(SGLU *t, Mat X, Mat Y, PetscBool transpose)
{
  PetscInt  k;
  PetscBool xdev, ydev;

  PetscFunctionBegin;
  PetscCheck(t->A && t->Aid, PETSC_COMM_SELF, PETSC_ERR_ORDER, "%s is not set up (or its factorization failed): call PCSetUp() first", t->name);
  PetscCall(MatGetSize(X, NULL, &k));
  PetscCall(SGLUMatOnDevice(X, &xdev));
  PetscCall(SGLUMatOnDevice(Y, &ydev));
  if (t->layout == PC_DENSELU_LOCAL && xdev == t->dev && ydev == t->dev) { /* one solve with k right-hand sides */
    sg_status st  = SG_OK;
    sg_report rep = {SG_OK, SG_TRI_AUTO, -1, -1, 0.0, ""};
    char      where[160];

    if (t->nf && k) {
      const PetscScalar *b;
      PetscScalar       *x;
      PetscMemType       mb, mx;
      PetscInt           ldb, ldx;
      PetscBool          ok;

      PetscCall(MatDenseGetLDA(X, &ldb));
      PetscCall(MatDenseGetLDA(Y, &ldx));
      PetscCall(MatDenseGetArrayReadAndMemType(X, &b, &mb));
      PetscCall(MatDenseGetArrayWriteAndMemType(Y, &x, &mx));
      ok = (PetscBool)(PetscMemTypeDevice(mb) == t->dev && PetscMemTypeDevice(mx) == t->dev);
      PetscCall(PetscLogEventBegin(SG_LU_Solve, t->A, 0, 0, 0));
      if (ok) PetscCall(SGLUSolveArrays(t, transpose, k, b, ldb, x, ldx, &st, &rep));
      PetscCall(PetscLogEventEnd(SG_LU_Solve, t->A, 0, 0, 0));
      PetscCall(MatDenseRestoreArrayReadAndMemType(X, &b));
      PetscCall(MatDenseRestoreArrayWriteAndMemType(Y, &x));
      PetscCheck(ok, PETSC_COMM_SELF, PETSC_ERR_GPU, "%s: dense matrix arrays are not in the memory of the factors", t->name);
    } else {
      PetscScalar *x;

      PetscCall(MatDenseGetArrayWrite(Y, &x)); /* Y changes on every rank */
      PetscCall(MatDenseRestoreArrayWrite(Y, &x));
    }
    PetscCall(PetscSNPrintf(where, sizeof(where), "%s: solve with %" PetscInt_FMT " right-hand sides and the dense LU factors of the diagonal block%s", t->name, k, transpose ? " (transpose)" : ""));
    PetscCall(SGCheckStatusAll(PetscObjectComm((PetscObject)t->A), st, &rep, where));
    t->mtype_used = xdev ? PETSC_MEMTYPE_CUDA : PETSC_MEMTYPE_HOST;
    t->staged     = PETSC_FALSE;
    t->applied    = PETSC_TRUE;
    t->napply += k;
  } else { /* gathered, or arrays in the other memory: column by column */
    for (PetscInt j = 0; j < k; j++) {
      Vec xj, yj;

      PetscCall(MatDenseGetColumnVecRead(X, j, &xj));
      PetscCall(MatDenseGetColumnVecWrite(Y, j, &yj));
      PetscCall(SGLUApply(t, xj, yj, transpose));
      PetscCall(MatDenseRestoreColumnVecWrite(Y, j, &yj));
      PetscCall(MatDenseRestoreColumnVecRead(X, j, &xj));
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SGLUView(SGLU *t, PetscViewer viewer)
{
  PetscBool   isascii;
  const char *where = t->dev ? "device" : "host", *vmem = PetscMemTypeHost(t->mtype_used) ? "host" : "device";
  double      mb    = (double)t->nf * (double)t->nf * sizeof(PetscScalar) / 1048576.0;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &isascii));
  if (!isascii) PetscFunctionReturn(PETSC_SUCCESS);
  if (t->layout == PC_DENSELU_GATHERED) PetscCall(PetscViewerASCIIPrintf(viewer, "  layout gathered: the whole operator is factored on rank 0 (exact solve; each apply gathers the right-hand side to rank 0 and scatters the solution back)\n"));
  else PetscCall(PetscViewerASCIIPrintf(viewer, "  layout local: each rank factors its diagonal block (block Jacobi over ranks with exact dense solves, couplings between ranks dropped)\n"));
  if (t->pivtol < 0) PetscCall(PetscViewerASCIIPrintf(viewer, "  pivot tolerance default (breakdown when |U_ii| <= n * machine epsilon * max |a_ij|)\n"));
  else if (t->pivtol == 0) PetscCall(PetscViewerASCIIPrintf(viewer, "  pivot tolerance 0 (only exactly zero pivots are breakdowns)\n"));
  else PetscCall(PetscViewerASCIIPrintf(viewer, "  pivot tolerance %g (breakdown when |U_ii| <= tol * max |a_ij|)\n", (double)t->pivtol));
  if (!t->Aid) {
    PetscCall(PetscViewerASCIIPrintf(viewer, "  backend requested %s, backend used: none yet (chosen at PCSetUp() from the operator's vector type)\n", SGLUBackends[t->backend]));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscViewerASCIIPrintf(viewer, "  backend requested %s, backend used: %s\n", SGLUBackends[t->backend], t->dev ? "cuda (cuSOLVER getrf, StructGPU trsv kernels)" : "host (LAPACK getrf, StructGPU trsv host twins)"));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  operator order %" PetscInt_FMT ", precision %s, factorizations %" PetscInt_FMT ", right-hand sides solved %" PetscInt_FMT "\n", t->N, t->prec == SG_REAL64 ? "double" : "single", t->nfactor, t->napply));
  if (t->useplan) PetscCall(PetscViewerASCIIPrintf(viewer, "  triangular solves with plans: factors analysed once at setup (%s)\n", t->dev ? "perm checked, the 32 x 32 diagonal blocks of L and U inverted on the GPU; one synchronisation per apply" : "perm and pivots checked; the host solves are BLAS trsv"));
  else PetscCall(PetscViewerASCIIPrintf(viewer, "  triangular solves without plans (-pc_denselu_plan 0): each apply checks perm and inverts the diagonal blocks\n"));
  if (t->layout == PC_DENSELU_GATHERED) {
    PetscCall(PetscViewerASCIIPrintf(viewer, "  factored on rank 0: n = %" PetscInt_FMT ", dense LU factors (%.1f MB) in %s memory, factorization time %.3g s\n", t->nf, mb, where, (double)t->tfactor));
  } else {
    PetscMPIInt rank;

    PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)viewer), &rank));
    PetscCall(PetscViewerASCIIPushSynchronized(viewer));
    PetscCall(PetscViewerASCIISynchronizedPrintf(viewer, "    [%d] n = %" PetscInt_FMT " (rows %" PetscInt_FMT "..%" PetscInt_FMT "), dense LU factors (%.1f MB) in %s memory, factorization time %.3g s\n", rank, t->nf, t->rstart, t->rstart + t->nloc - 1, mb, where, (double)t->tfactor));
    PetscCall(PetscViewerFlush(viewer));
    PetscCall(PetscViewerASCIIPopSynchronized(viewer));
  }
  if (t->applied && t->staged) PetscCall(PetscViewerASCIIPrintf(viewer, "  vectors in %s memory: copied between host and device at every apply (logged as CpuToGpu/GpuToCpu); keep the vectors in %s memory or use -pc_denselu_backend %s\n", vmem, where, t->dev ? "host" : "cuda"));
  else if (t->applied) PetscCall(PetscViewerASCIIPrintf(viewer, "  vectors in %s memory, used in place (no host-device copies)\n", vmem));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ================================================================== PC type */

static PetscErrorCode PCSetUp_DenseLU(PC pc)
{
  PetscFunctionBegin;
  PetscCall(SGLUSetUp((SGLU *)pc->data, pc->pmat));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCApply_DenseLU(PC pc, Vec x, Vec y)
{
  PetscFunctionBegin;
  PetscCall(SGLUApply((SGLU *)pc->data, x, y, PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCApplyTranspose_DenseLU(PC pc, Vec x, Vec y)
{
  PetscFunctionBegin;
  PetscCall(SGLUApply((SGLU *)pc->data, x, y, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCMatApply_DenseLU(PC pc, Mat X, Mat Y)
{
  PetscFunctionBegin;
  PetscCall(SGLUMatApply((SGLU *)pc->data, X, Y, PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCMatApplyTranspose_DenseLU(PC pc, Mat X, Mat Y)
{
  PetscFunctionBegin;
  PetscCall(SGLUMatApply((SGLU *)pc->data, X, Y, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCSetFromOptions_DenseLU(PC pc, PetscOptionItems PetscOptionsObject)
{
  SGLU           *t      = (SGLU *)pc->data;
  PCDenseLULayout layout = t->layout;
  SGLUBackend     be     = t->backend;
  PetscReal       tol    = t->pivtol;

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "Dense LU direct solver options (StructGPU)");
  PetscCall(SGLUSetFromOptions(t, PetscOptionsObject, "PCDENSELU"));
  PetscOptionsHeadEnd();
  if (t->layout != layout || t->backend != be || t->pivtol != tol) pc->setupcalled = PETSC_FALSE; /* factor again at the next PCSetUp() */
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCView_DenseLU(PC pc, PetscViewer viewer)
{
  PetscFunctionBegin;
  PetscCall(SGLUView((SGLU *)pc->data, viewer));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCReset_DenseLU(PC pc)
{
  PetscFunctionBegin;
  PetscCall(SGLUReset((SGLU *)pc->data));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCDestroy_DenseLU(PC pc)
{
  PetscFunctionBegin;
  PetscCall(SGLUDestroy((SGLU **)&pc->data));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCDenseLUSetLayout_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCDenseLUGetLayout_C", NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCDenseLUSetLayout_DenseLU(PC pc, PCDenseLULayout layout)
{
  SGLU *t = (SGLU *)pc->data;

  PetscFunctionBegin;
  if (t->layout != layout) pc->setupcalled = PETSC_FALSE; /* factor again at the next PCSetUp() */
  t->layout = layout;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCDenseLUGetLayout_DenseLU(PC pc, PCDenseLULayout *layout)
{
  PetscFunctionBegin;
  *layout = ((SGLU *)pc->data)->layout;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCDenseLUSetLayout - Sets which matrix `PCDENSELU` factors: the whole operator gathered on rank 0,
  or each rank's diagonal block

  Logically Collective

  Input Parameters:
+ pc     - the preconditioner context
- layout - `PC_DENSELU_GATHERED` (default) or `PC_DENSELU_LOCAL`

  Options Database Key:
. -pc_denselu_layout <gathered,local> - the layout

  Level: intermediate

  Note:
  Has no effect on other PC types; for a `PCSHELL` made by `PCShellSetDenseLU()` pass the layout there.

.seealso: `PCDENSELU`, `PCDenseLULayout`, `PCDenseLUGetLayout()`, `PCShellSetDenseLU()`
@*/
PetscErrorCode PCDenseLUSetLayout(PC pc, PCDenseLULayout layout)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  PetscValidLogicalCollectiveEnum(pc, layout, 2);
  PetscCheck(layout == PC_DENSELU_GATHERED || layout == PC_DENSELU_LOCAL, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_OUTOFRANGE, "Unknown PCDenseLULayout %d", (int)layout);
  PetscTryMethod(pc, "PCDenseLUSetLayout_C", (PC, PCDenseLULayout), (pc, layout));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCDenseLUGetLayout - Gets the layout of `PCDENSELU`

  Not Collective

  Input Parameter:
. pc - the preconditioner context, of type `PCDENSELU`

  Output Parameter:
. layout - `PC_DENSELU_GATHERED` or `PC_DENSELU_LOCAL`

  Level: intermediate

.seealso: `PCDENSELU`, `PCDenseLUSetLayout()`
@*/
PetscErrorCode PCDenseLUGetLayout(PC pc, PCDenseLULayout *layout)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  PetscAssertPointer(layout, 2);
  PetscUseMethod(pc, "PCDenseLUGetLayout_C", (PC, PCDenseLULayout *), (pc, layout));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*MC
   PCDENSELU - Direct solver with a dense LU factorization (partial pivoting) of the preconditioning
   matrix, on the host or a CUDA GPU (StructGPU plugin: -dll_append libstructgpu.so); meant for small
   operators such as the coarse grid of `PCMG`

   Options Database Keys:
+  -pc_denselu_layout <gathered,local>  - `PC_DENSELU_GATHERED`: the whole operator on rank 0 (exact solve);
                                          `PC_DENSELU_LOCAL`: each rank's diagonal block (block Jacobi), see `PCDenseLULayout`
.  -pc_denselu_pivot_tol <tol>          - breakdown when |U_ii| <= tol * max |a_ij| (default n * machine epsilon; 0: exactly zero pivots only)
.  -pc_denselu_backend <auto,host,cuda> - where the factorization and the solves run (auto: CUDA when the operator's vector type is a
                                          CUDA type, e.g. -mat_type aijcusparse, -dm_mat_type aijcusparse, or a `MATDENSECUDA` operator)
-  -pc_denselu_plan <bool>              - analyse the factors once at `PCSetUp()` (default true): the row permutation is checked and
                                          the 32 x 32 diagonal blocks of L and U are inverted there (`sg_getrs_plan_create()`), so
                                          that each `PCApply()` runs only the permutation and the two triangular solves

   Level: intermediate

   Notes:
   At `PCSetUp()` the operator (any type that supports `MatCreateSubMatrices()`) is gathered to rank 0 (gathered layout) or
   each rank's diagonal block is extracted (local layout), converted to a dense matrix and factored in place with
   LU and partial pivoting: LAPACK getrf on the host, cuSOLVER getrf on the GPU. Each `PCApply()` solves with the
   two triangular factors by StructGPU's triangular solve kernels (the host twins with host vectors); in the
   gathered layout the right-hand side is first gathered on rank 0 and the solution scattered back. The factors
   are computed again only when the operator changes (its object state). Storage: n^2 scalars on the factoring
   rank; work: 2n^3/3 flops per factorization, 2n^2 per right-hand side (`PCMatApply()` solves all columns in one
   call in the local layout).

   With the CUDA backend and vectors in host memory (or the reverse) every apply copies the right-hand side and the
   solution between host and device (logged; `PCView()` says so). A zero or tiny pivot (singular operator) gives
   `PETSC_ERR_MAT_LU_ZRPVT`, Inf/NaN `PETSC_ERR_FP`, on every rank. Only real scalars are supported.

   The log events SGLUFactor and SGLUSolve (-log_view) time the factorization and the triangular solves.

.seealso: `PCDenseLUSetLayout()`, `PCShellSetDenseLU()`, `PCLU`, `PCREDUNDANT`, `PCBJACOBI`, `PCMG`
M*/
PETSC_INTERN PetscErrorCode PCCreate_DenseLU(PC pc)
{
  SGLU *t;

  PetscFunctionBegin;
  PetscCall(SGLUCreate(pc, &t));
  PetscCall(PetscStrncpy(t->name, "StructGPU PCDENSELU", sizeof(t->name)));
  pc->data                    = (void *)t;
  pc->ops->setup              = PCSetUp_DenseLU;
  pc->ops->apply              = PCApply_DenseLU;
  pc->ops->applytranspose     = PCApplyTranspose_DenseLU;
  pc->ops->matapply           = PCMatApply_DenseLU;
  pc->ops->matapplytranspose  = PCMatApplyTranspose_DenseLU;
  pc->ops->setfromoptions     = PCSetFromOptions_DenseLU;
  pc->ops->view               = PCView_DenseLU;
  pc->ops->reset              = PCReset_DenseLU;
  pc->ops->destroy            = PCDestroy_DenseLU;
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCDenseLUSetLayout_C", PCDenseLUSetLayout_DenseLU));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCDenseLUGetLayout_C", PCDenseLUGetLayout_DenseLU));
  PetscFunctionReturn(PETSC_SUCCESS);
}
