/*
   PCTRIDIAG: exact solve with the tridiagonal part of the operator (globally coupled,
   per rank, or along DMDA grid lines) using the StructGPU tridiagonal kernels.

   The first half of this file is the core shared with the PCSHELL helpers of
   src/tri/trishell.c (declared in tridiagimpl.h), the second half the PC type.
*/
#include "pc/tridiag/tridiagimpl.h"

const char *const PCTridiagModes[] = {"global", "local", "lines", "PCTridiagMode", "PC_TRIDIAG_", NULL};

static const char SGDirName[] = "xyz";

/* ================================================================== core */

PetscErrorCode SGTriCreate(PC pc, SGTri **tp)
{
  SGTri *t;

  PetscFunctionBegin;
  PetscCall(StructGPUInitializePackage()); /* log events, also for PCSHELL users */
  PetscCall(PetscNew(&t));
  t->pc       = pc;
  t->mode     = PC_TRIDIAG_GLOBAL;
  t->alg      = SG_TRI_AUTO;
  t->pivtol   = 0.0;
  t->alg_used = SG_TRI_NUM_ALGS;
  t->lcomm    = MPI_COMM_NULL;
  *tp         = t;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SGTriDestroySpikes(SGTri *t)
{
  PetscFunctionBegin;
  for (int k = 0; k < 2; k++) {
    PetscCall(MatDestroy(&t->spk[k]));
    PetscCall(MatDestroy(&t->ends[k]));
    PetscCall(VecDestroy(&t->yend[k]));
    PetscCall(VecDestroy(&t->xnb[k]));
  }
  PetscCall(PetscFree(t->spkend));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SGTriReset(SGTri *t)
{
  PetscFunctionBegin;
  PetscCall(MatDestroy(&t->A));
  PetscCall(DMDestroy(&t->da));
  PetscCall(VecDestroy(&t->coef));
  PetscCall(PetscFree4(t->kr, t->cnt, t->dsp, t->wrank));
  PetscCall(PetscFree3(t->ibuf, t->isys, t->isend));
  PetscCall(SGTriDestroySpikes(t));
  if (t->lcomm != MPI_COMM_NULL) PetscCallMPI(MPI_Comm_free(&t->lcomm));
  PetscCall(SGCtxCacheDestroy(&t->ctxs));
  t->Aid = 0;
  t->Astate = 0;
  t->n = t->N = t->rstart = 0;
  t->niface = t->nsys = t->linelen = t->nlines = 0;
  t->alg_used = SG_TRI_NUM_ALGS;
  t->applied  = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SGTriDestroy(SGTri **t)
{
  PetscFunctionBegin;
  if (!*t) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(SGTriReset(*t));
  PetscCall(PetscFree(*t));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SGTriSetFromOptions(SGTri *t, PetscOptionItems PetscOptionsObject, PetscBool allowmode, PetscBool allowlines, PetscBool allowdir)
{
  const char   *names[SG_TRI_NUM_ALGS];
  PetscInt      ialg = (PetscInt)t->alg;
  PCTridiagMode mode = t->mode;

  PetscFunctionBegin;
  for (int a = 0; a < SG_TRI_NUM_ALGS; a++) names[a] = sg_tri_alg_name((sg_tri_alg)a);
  if (allowmode && allowlines) {
    PetscCall(PetscOptionsEnum("-pc_tridiag_mode", "Tridiagonal system solved: global (all ranks coupled), local (block Jacobi over ranks), lines (DMDA grid lines)", "PCTridiagSetMode", PCTridiagModes, (PetscEnum)t->mode, (PetscEnum *)&mode, NULL));
    t->mode = mode;
  } else if (allowmode) { /* PCShellSetTridiagonal(): lines need PCShellSetLineSolve() */
    PetscInt imode = (PetscInt)t->mode;

    PetscCall(PetscOptionsEList("-pc_tridiag_mode", "Tridiagonal system solved: global (all ranks coupled), local (block Jacobi over ranks)", "PCShellSetTridiagonal", PCTridiagModes, 2, PCTridiagModes[t->mode], &imode, NULL));
    t->mode = (PCTridiagMode)imode;
  }
  if (allowdir) {
    PetscCall(PetscOptionsRangeInt("-pc_tridiag_direction", "Grid direction of the lines (lines mode): 0=x, 1=y, 2=z", "PCTridiagSetDirection", t->dir, &t->dir, NULL, 0, 2));
    PetscCall(PetscOptionsBool("-pc_tridiag_lines_exact", "Lines mode: solve every grid line exactly across the ranks it crosses (false: lines cut at rank boundaries, block Jacobi across ranks)", "PCTRIDIAG", t->exact, &t->exact, NULL));
  }
  PetscCall(PetscOptionsEList("-pc_tridiag_algorithm", "Tridiagonal algorithm (auto: chosen from system size and batch count; rd needs a diagonally dominant operator)", "PCTRIDIAG", names, SG_TRI_NUM_ALGS, names[t->alg], &ialg, NULL));
  t->alg = (sg_tri_alg)ialg;
  PetscCall(PetscOptionsReal("-pc_tridiag_pivot_tol", "Breakdown when |pivot| <= tol*(|l|+|d|+|u|) of its equation (<= 0: default 100*eps)", "PCTRIDIAG", t->pivtol, &t->pivtol, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Make the coefficients available in device memory (in-place conversion of the Vec to
   VECSEQCUDA, then one upload; PETSc logs the copy with PetscLogCpuToGpu). */
static PetscErrorCode SGTriUpload(SGTri *t)
{
  const PetscScalar *c;
  PetscMemType       mt;

  PetscFunctionBegin;
  PetscCheck(PetscDefined(HAVE_CUDA), PETSC_COMM_SELF, PETSC_ERR_SUP, "PETSc was configured without CUDA");
  PetscCall(VecSetType(t->coef, VECCUDA));
  PetscCall(VecGetArrayReadAndMemType(t->coef, &c, &mt));
  PetscCall(VecRestoreArrayReadAndMemType(t->coef, &c));
  PetscCheck(PetscMemTypeCUDA(mt), PETSC_COMM_SELF, PETSC_ERR_GPU, "Coefficient Vec did not move to CUDA memory");
  PetscCall(PetscInfo(t->pc, "%s: uploaded %" PetscInt_FMT " tridiagonal coefficients to the device\n", t->name, 3 * t->n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SGTriSetUpInterface(SGTri *, MPI_Comm, PetscInt, PetscInt);

/* DMDA checks and line geometry (LINES) */
static PetscErrorCode SGTriSetUpLines(SGTri *t, DM da, PetscInt M)
{
  PetscInt  dim, gx, gy, gz, dof, sw, xs, ys, zs, xm, ym, zm;
  PetscBool isda;

  PetscFunctionBegin;
  PetscCheck(da, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "Tridiagonal lines mode needs a DMDA: call KSPSetDM()/PCSetDM(), create the operator with DMCreateMatrix(), or use PCShellSetLineSolve()");
  PetscCall(PetscObjectTypeCompare((PetscObject)da, DMDA, &isda));
  PetscCheck(isda, PetscObjectComm((PetscObject)da), PETSC_ERR_ARG_WRONG, "Tridiagonal lines mode needs a DMDA, got DM type %s", ((PetscObject)da)->type_name);
  PetscCall(DMDAGetInfo(da, &dim, &gx, &gy, &gz, NULL, NULL, NULL, &dof, &sw, NULL, NULL, NULL, NULL));
  PetscCheck(dof == 1, PetscObjectComm((PetscObject)da), PETSC_ERR_SUP, "Tridiagonal lines mode supports DMDAs with dof = 1 only (got %" PetscInt_FMT ")", dof);
  PetscCheck(sw >= 1, PetscObjectComm((PetscObject)da), PETSC_ERR_ARG_WRONG, "Tridiagonal lines mode needs stencil width >= 1 (got 0): the operator cannot couple grid neighbours");
  PetscCheck(t->dir >= 0 && t->dir < dim, PetscObjectComm((PetscObject)da), PETSC_ERR_ARG_OUTOFRANGE, "Line direction %" PetscInt_FMT " is not valid on a %" PetscInt_FMT "D DMDA", t->dir, dim);
  PetscCheck(gx * gy * gz == M, PetscObjectComm((PetscObject)da), PETSC_ERR_ARG_SIZ, "The operator has %" PetscInt_FMT " rows but the DMDA %" PetscInt_FMT " points", M, gx * gy * gz);
  PetscCall(DMDAGetCorners(da, &xs, &ys, &zs, &xm, &ym, &zm));
  t->corner[0] = xs;
  t->corner[1] = ys;
  t->corner[2] = zs;
  t->dim    = dim;
  t->box[0] = xm;
  t->box[1] = ym;
  t->box[2] = zm;
  t->linelen = t->box[t->dir];
  if (t->dir == 0) { /* rows of a line are consecutive */
    t->layout = SG_TRI_CONTIGUOUS;
    t->nbatch = ym * zm;
    t->ld     = xm;
    t->nplanes = 1;
  } else if (t->dir == 1) { /* per z plane: system i, row j at j*xm + i */
    t->layout  = SG_TRI_INTERLEAVED;
    t->nbatch  = xm;
    t->ld      = xm;
    t->nplanes = zm;
  } else { /* system i + xm j, row k at k*xm*ym + (i + xm j) */
    t->layout  = SG_TRI_INTERLEAVED;
    t->nbatch  = xm * ym;
    t->ld      = xm * ym;
    t->nplanes = 1;
  }
  t->planestride = xm * ym;
  t->nlines      = t->nbatch * t->nplanes;
  t->gcorner     = t->corner[t->dir];
  t->glen        = t->dir == 0 ? gx : (t->dir == 1 ? gy : gz);
  t->prevstart = t->nextstart = -1;
  t->prevlen = t->nextlen = 0;
  if (t->lcomm != MPI_COMM_NULL) PetscCallMPI(MPI_Comm_free(&t->lcomm));
  PetscCall(SGTriDestroySpikes(t));
  if (t->exact) { /* the ranks of a line: same process coordinates in the other directions */
    const PetscInt *lx[3] = {NULL, NULL, NULL}, *ranges;
    PetscInt        np[3], pc[3], stride, d = t->dir;
    PetscMPIInt     rank;

    PetscCall(DMDAGetInfo(da, NULL, NULL, NULL, NULL, &np[0], &np[1], &np[2], NULL, NULL, NULL, NULL, NULL, NULL));
    PetscCall(DMDAGetOwnershipRanges(da, &lx[0], &lx[1], &lx[2]));
    PetscCall(MatGetOwnershipRanges(t->A, &ranges));
    PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)da), &rank));
    pc[0]  = rank % np[0]; /* DMDA rank order: x fastest */
    pc[1]  = (rank / np[0]) % np[1];
    pc[2]  = rank / (np[0] * np[1]);
    stride = d == 0 ? 1 : (d == 1 ? np[0] : np[0] * np[1]);
    if (pc[d] > 0) t->prevstart = ranges[rank - stride], t->prevlen = lx[d][pc[d] - 1];
    if (pc[d] < np[d] - 1) t->nextstart = ranges[rank + stride], t->nextlen = lx[d][pc[d] + 1];
    PetscCallMPI(MPI_Comm_split(PetscObjectComm((PetscObject)da), (PetscMPIInt)(d == 0 ? pc[1] + np[1] * pc[2] : (d == 1 ? pc[0] + np[0] * pc[2] : pc[0] + np[0] * pc[1])), (PetscMPIInt)pc[d], &t->lcomm));
    PetscCall(SGTriSetUpInterface(t, t->lcomm, PetscMin(t->linelen, 2), t->nlines));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* LINES: local row of point p of line l (lines numbered like the batch systems) */
static inline PetscInt SGTriLineRow(const SGTri *t, PetscInt l, PetscInt p)
{
  if (t->dir == 0) return l * t->box[0] + p;
  if (t->dir == 1) return (l / t->nbatch) * t->planestride + p * t->box[0] + l % t->nbatch;
  return p * t->ld + l;
}

/* LINES exact: row (in the PETSc numbering of the neighbouring rank, relative to its first row) of
   the grid point next to local row r along dir, in that rank's box of length blen at position q */
static inline PetscInt SGTriNbrRow(const SGTri *t, PetscInt r, PetscInt blen, PetscInt q)
{
  PetscInt co[3] = {r % t->box[0], (r / t->box[0]) % t->box[1], r / (t->box[0] * t->box[1])}, bx[3] = {t->box[0], t->box[1], t->box[2]};

  co[t->dir] = q;
  bx[t->dir] = blen;
  return co[0] + bx[0] * (co[1] + bx[1] * co[2]);
}

/* Read dl | d | du of the local rows from A into t->coef.
   GLOBAL: columns g-1, g, g+1 in global numbering; LOCAL: the same without couplings to
   other ranks; LINES: the grid neighbours along dir inside the rank's box (the DMDA's
   PETSc ordering is the natural one inside each box: r = i + xm (j + ym k)). */
static PetscErrorCode SGTriExtract(SGTri *t, Mat A)
{
  PetscScalar *c, *dl, *d, *du;
  PetscInt     s = 1, len = t->n, bad = -1;
  char         msg[256] = "";

  PetscFunctionBegin;
  if (t->mode == PC_TRIDIAG_LINES) {
    s   = t->dir == 0 ? 1 : (t->dir == 1 ? t->box[0] : t->box[0] * t->box[1]);
    len = t->box[t->dir];
  }
  PetscCall(VecGetArrayWrite(t->coef, &c));
  dl = c;
  d  = c + t->n;
  du = c + 2 * t->n;
  for (PetscInt r = 0; r < t->n; r++) {
    const PetscInt    *cols;
    const PetscScalar *vals;
    PetscInt           nz, g = t->rstart + r, pos = t->mode == PC_TRIDIAG_LINES ? (r / s) % len : r, gp = g - s, gn = g + s;
    PetscBool          hasprev, hasnext;

    if (t->mode == PC_TRIDIAG_GLOBAL) {
      hasprev = (PetscBool)(g > 0);
      hasnext = (PetscBool)(g < t->N - 1);
    } else if (t->mode == PC_TRIDIAG_LINES && t->exact) { /* whole grid line, not across a periodic wrap */
      hasprev = (PetscBool)(t->gcorner + pos > 0);
      hasnext = (PetscBool)(t->gcorner + pos < t->glen - 1);
      if (hasprev && pos == 0) gp = t->prevstart + SGTriNbrRow(t, r, t->prevlen, t->prevlen - 1);
      if (hasnext && pos == len - 1) gn = t->nextstart + SGTriNbrRow(t, r, t->nextlen, 0);
    } else {
      hasprev = (PetscBool)(pos > 0);
      hasnext = (PetscBool)(pos < len - 1);
    }
    dl[r] = d[r] = du[r] = 0.0;
    PetscCall(MatGetRow(A, g, &nz, &cols, &vals));
    for (PetscInt e = 0; e < nz; e++) {
      if (cols[e] == g) d[r] += vals[e];
      else if (hasprev && cols[e] == gp) dl[r] += vals[e];
      else if (hasnext && cols[e] == gn) du[r] += vals[e];
    }
    PetscCall(MatRestoreRow(A, g, &nz, &cols, &vals));
    if (bad < 0 && (PetscIsInfOrNanScalar(dl[r]) || PetscIsInfOrNanScalar(d[r]) || PetscIsInfOrNanScalar(du[r]))) bad = g;
  }
  PetscCall(VecRestoreArrayWrite(t->coef, &c));
  if (bad >= 0) PetscCall(PetscSNPrintf(msg, sizeof(msg), "Operator row %" PetscInt_FMT " has an Inf or NaN entry in its tridiagonal part", bad));
  PetscCall(SGAgree(PetscObjectComm((PetscObject)A), bad >= 0 ? PETSC_ERR_FP : PETSC_SUCCESS, msg));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Interface layout over comm (GLOBAL: A's communicator, one system; LINES exact: the ranks
   sharing this rank's lines, nsys systems): this rank contributes k equations of 4 values to
   each of the nsys systems, plus one status slot */
static PetscErrorCode SGTriSetUpInterface(SGTri *t, MPI_Comm comm, PetscInt k, PetscInt nsys)
{
  PetscMPIInt size, kk = (PetscMPIInt)k, wr;
  PetscInt    tot = 0;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)t->A), &wr));
  PetscCall(PetscFree4(t->kr, t->cnt, t->dsp, t->wrank));
  PetscCall(PetscFree3(t->ibuf, t->isys, t->isend));
  PetscCall(PetscMalloc4(size, &t->kr, size, &t->cnt, size, &t->dsp, size, &t->wrank));
  PetscCallMPI(MPI_Allgather(&kk, 1, MPI_INT, t->kr, 1, MPI_INT, comm));
  PetscCallMPI(MPI_Allgather(&wr, 1, MPI_INT, t->wrank, 1, MPI_INT, comm));
  t->niface = 0;
  t->nsys   = nsys;
  for (PetscMPIInt r = 0; r < size; r++) {
    t->niface += t->kr[r];
    t->cnt[r] = (PetscMPIInt)(4 * t->kr[r] * nsys + 1);
    t->dsp[r] = r ? t->dsp[r - 1] + t->cnt[r - 1] : 0;
    tot += t->cnt[r];
  }
  PetscCall(PetscMalloc3(tot, &t->ibuf, 4 * t->niface, &t->isys, 4 * k * nsys + 1, &t->isend));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SGTriSetUpSpikes(SGTri *);
static PetscErrorCode SGTriWhere(SGTri *, const sg_report *, PetscBool, char[], size_t);

PetscErrorCode SGTriSetUp(SGTri *t, Mat A, Mat P, DM da)
{
  MPI_Comm         comm = PetscObjectComm((PetscObject)A);
  PetscObjectId    id;
  PetscObjectState state;
  PetscInt         M, Nc, m, rend;
  PetscBool        sbaij;
  VecType          vt;
  char             msg[256] = "";

  PetscFunctionBegin;
  PetscCall(SGScalarPrecision(&t->prec));
  PetscCall(PetscObjectGetId((PetscObject)A, &id));
  PetscCall(PetscObjectStateGet((PetscObject)A, &state));
  if (t->coef && id == t->Aid && state == t->Astate && t->mode == t->xmode && t->dir == t->xdir && t->exact == t->xexact && (t->mode != PC_TRIDIAG_LINES || da == t->da)) PetscFunctionReturn(PETSC_SUCCESS);

  PetscCall(PetscLogEventBegin(SG_TRI_SetUp, A, 0, 0, 0));
  PetscCall(MatGetSize(A, &M, &Nc));
  PetscCheck(M == Nc, comm, PETSC_ERR_ARG_SIZ, "Tridiagonal solve needs a square matrix, got %" PetscInt_FMT " x %" PetscInt_FMT, M, Nc);
  PetscCall(MatGetLocalSize(A, &m, NULL));
  if (P && P != A) {
    PetscInt PM, Pm;

    PetscCall(MatGetSize(P, &PM, NULL));
    PetscCall(MatGetLocalSize(P, &Pm, NULL));
    PetscCheck(PM == M, comm, PETSC_ERR_ARG_SIZ, "The tridiagonal matrix has %" PetscInt_FMT " rows but the preconditioning matrix %" PetscInt_FMT, M, PM);
    if (Pm != m) PetscCall(PetscSNPrintf(msg, sizeof(msg), "The tridiagonal matrix has %" PetscInt_FMT " local rows but the preconditioning matrix %" PetscInt_FMT ": use the same row layout", m, Pm));
    PetscCall(SGAgree(comm, Pm != m ? PETSC_ERR_ARG_SIZ : PETSC_SUCCESS, msg));
  }
  PetscCall(PetscObjectTypeCompareAny((PetscObject)A, &sbaij, MATSEQSBAIJ, MATMPISBAIJ, MATSBAIJ, ""));
  PetscCheck(!sbaij, comm, PETSC_ERR_SUP, "Symmetric-storage matrices (%s) are not supported: use AIJ or BAIJ", ((PetscObject)A)->type_name);

  PetscCall(PetscObjectReference((PetscObject)A));
  PetscCall(MatDestroy(&t->A));
  t->A = A;
  if (t->mode == PC_TRIDIAG_LINES) {
    PetscCall(PetscObjectReference((PetscObject)da));
    PetscCall(DMDestroy(&t->da));
    t->da = da;
  } else PetscCall(DMDestroy(&t->da));
  PetscCall(MatGetOwnershipRange(A, &t->rstart, &rend));
  t->N = M;
  if (!t->coef || t->n != m) {
    PetscCall(VecDestroy(&t->coef));
    PetscCall(VecCreate(PETSC_COMM_SELF, &t->coef));
    PetscCall(VecSetSizes(t->coef, 3 * m, 3 * m));
    PetscCall(VecSetType(t->coef, VECSEQ));
  }
  t->n = m;
  t->Aid = 0; /* marks the coefficients invalid until extraction succeeded */

  t->nlines = t->linelen = t->niface = 0;
  if (t->mode == PC_TRIDIAG_LINES) {
    PetscCall(SGTriSetUpLines(t, da, M));
    if (t->box[0] * t->box[1] * t->box[2] != m) PetscCall(PetscSNPrintf(msg, sizeof(msg), "The operator has %" PetscInt_FMT " local rows but the DMDA's local box %" PetscInt_FMT " x %" PetscInt_FMT " x %" PetscInt_FMT " points", m, t->box[0], t->box[1], t->box[2]));
    PetscCall(SGAgree(comm, t->box[0] * t->box[1] * t->box[2] != m ? PETSC_ERR_ARG_SIZ : PETSC_SUCCESS, msg));
  } else if (t->mode == PC_TRIDIAG_GLOBAL) PetscCall(SGTriSetUpInterface(t, comm, PetscMin(t->n, 2), 1));
  PetscCall(SGTriExtract(t, A));
  if (t->mode == PC_TRIDIAG_LINES && t->exact) PetscCall(SGTriSetUpSpikes(t));

  /* coefficients go to the device now when the operator's vectors live there */
  PetscCall(MatGetVecType(P ? P : A, &vt));
  if (SGVecTypeCUDA(vt)) t->want_device = PETSC_TRUE;
  if (t->want_device && t->n) PetscCall(SGTriUpload(t));

  {
    sg_backend be = t->want_device ? SG_BACKEND_CUDA : SG_BACKEND_HOST;
    long long  sm = t->mode == PC_TRIDIAG_LINES ? t->linelen : t->n, nb = t->mode == PC_TRIDIAG_LINES ? t->nbatch : 1;

    t->alg_choice = t->alg != SG_TRI_AUTO ? t->alg : (t->n ? sg_tri_choose(be, t->prec, t->mode == PC_TRIDIAG_LINES ? t->layout : SG_TRI_CONTIGUOUS, sm, nb) : SG_TRI_AUTO);
    if (t->alg == SG_TRI_AUTO && t->n) PetscCall(PetscInfo(t->pc, "%s: auto algorithm chooses %s for %lld system(s) of size %lld on the %s backend (measured crossovers, sg_tri_choose)\n", t->name, sg_tri_alg_name(t->alg_choice), nb, sm, be == SG_BACKEND_CUDA ? "cuda" : "host"));
  }
  if (t->mode == PC_TRIDIAG_LINES) PetscCall(PetscInfo(t->pc, "%s: %" PetscInt_FMT " local rows, %" PetscInt_FMT " lines along %c of length %" PetscInt_FMT " (%s)\n", t->name, t->n, t->nlines, SGDirName[t->dir], t->linelen, t->exact ? "solved exactly across ranks" : "cut at the rank boundary"));
  else if (t->mode == PC_TRIDIAG_GLOBAL) PetscCall(PetscInfo(t->pc, "%s: %" PetscInt_FMT " local rows of %" PetscInt_FMT ", interface system of %" PetscInt_FMT " equations over all ranks\n", t->name, t->n, t->N, t->niface));
  else PetscCall(PetscInfo(t->pc, "%s: %" PetscInt_FMT " local rows of %" PetscInt_FMT ", couplings between ranks dropped\n", t->name, t->n, t->N));

  t->Aid    = id;
  t->Astate = state;
  t->xmode  = t->mode;
  t->xdir   = t->dir;
  t->xexact = t->exact;
  PetscCall(PetscLogEventEnd(SG_TRI_SetUp, A, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Gather every rank's interface equations (t->isend: 4 k nsys values, the status slot is set
   here) over comm; *st / *who: the first failing rank's status and rank in comm (-1 none) */
static PetscErrorCode SGTriExchange(SGTri *t, MPI_Comm comm, sg_status *st, PetscMPIInt *who)
{
  PetscMPIInt rank, size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  if (*st != SG_OK) PetscCall(PetscArrayzero(t->isend, t->cnt[rank] - 1));
  t->isend[t->cnt[rank] - 1] = (double)*st;
  PetscCallMPI(MPI_Allgatherv(t->isend, t->cnt[rank], MPI_DOUBLE, t->ibuf, t->cnt, t->dsp, MPI_DOUBLE, comm));
  *who = -1;
  for (PetscMPIInt r = 0; r < size; r++) {
    sg_status sr = (sg_status)(int)t->ibuf[t->dsp[r] + t->cnt[r] - 1];

    if (sr != SG_OK) {
      *st  = sr;
      *who = r;
      break;
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Assemble interface system l from the gathered equations (ranks in order) and solve it
   (redundantly: same outcome on every rank); *xp / *xn: the neighbours of rank me's block */
static PetscErrorCode SGTriIfaceSolve(SGTri *t, PetscInt l, PetscMPIInt me, PetscMPIInt size, double *xp, double *xn, sg_status *st, sg_report *rep)
{
  double  *idl = t->isys, *id = t->isys + t->niface, *idu = t->isys + 2 * t->niface, *irhs = t->isys + 3 * t->niface;
  PetscInt j = 0, off = 0;

  PetscFunctionBegin;
  *xp = *xn = 0.0;
  if (!t->niface) PetscFunctionReturn(PETSC_SUCCESS);
  for (PetscMPIInt r = 0; r < size; r++) {
    if (r == me) off = j;
    for (PetscMPIInt e = 0; e < t->kr[r]; e++, j++) {
      const double *q = t->ibuf + t->dsp[r] + 4 * (t->kr[r] * l + e);

      idl[j]  = q[0];
      id[j]   = q[1];
      idu[j]  = q[2];
      irhs[j] = q[3];
    }
  }
  *st = sg_tri_thomas_ref(t->niface, idl, id, idu, irhs, t->pivtol, rep);
  PetscCall(PetscLogFlops(8.0 * t->niface));
  if (*st == SG_OK) {
    if (off > 0) *xp = irhs[off - 1];
    if (off + t->kr[me] < t->niface) *xn = irhs[off + t->kr[me]];
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* block reduction of one block; k must be the kernel contract min(n,2) fixed at setup */
static PetscErrorCode SGTriReduce(SGTri *t, sg_ctx *ctx, PetscBool dev, PetscInt n, const PetscScalar *dl, const PetscScalar *d, const PetscScalar *du, const PetscScalar *b, int kexp, double *eq, sg_status *st, sg_report *rep)
{
  double iface[8];
  int    k = 0;

  PetscFunctionBegin;
  if (dev) PetscCall(PetscLogGpuTimeBegin());
  *st = sg_tri_block_reduce(ctx, t->prec, n, dl, d, du, b, t->pivtol, iface, &k, rep);
  if (dev) PetscCall(PetscLogGpuTimeEnd());
  if (dev) PetscCall(PetscLogGpuToCpu(4.0 * k * sizeof(double)));
  if (*st == SG_OK && k != kexp) { /* kernel contract: min(n,2) interface equations */
    *st = rep->status = SG_ERR_ARG;
    PetscCall(PetscSNPrintf(rep->msg, sizeof(rep->msg), "block reduction returned %d interface equations, expected %d", k, kexp));
  }
  if (*st == SG_OK) PetscCall(PetscArraycpy(eq, iface, 4 * kexp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Partitioned solve of the global tridiagonal system. Returns the first failure in
   *st / rep (*who = failing rank, -1 none); never leaves a rank behind in a collective. */
static PetscErrorCode SGTriSolveGlobal(SGTri *t, sg_ctx *ctx, PetscBool dev, const PetscScalar *c, const PetscScalar *b, PetscScalar *x, sg_status *st, sg_report *rep, PetscMPIInt *who, PetscBool *iniface)
{
  MPI_Comm    comm = PetscObjectComm((PetscObject)t->A);
  PetscMPIInt rank, size;
  double      xp = 0.0, xn = 0.0;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  *iniface = PETSC_FALSE;
  if (t->n) PetscCall(SGTriReduce(t, ctx, dev, t->n, c, c + t->n, c + 2 * t->n, b, t->kr[rank], t->isend, st, rep));
  PetscCall(PetscLogEventBegin(SG_TRI_Iface, t->A, 0, 0, 0));
  PetscCall(SGTriExchange(t, comm, st, who));
  if (*who < 0) {
    PetscCall(SGTriIfaceSolve(t, 0, rank, size, &xp, &xn, st, rep));
    if (*st != SG_OK) *who = rank, *iniface = PETSC_TRUE;
  }
  PetscCall(PetscLogEventEnd(SG_TRI_Iface, t->A, 0, 0, 0));
  if (*who < 0) {
    PetscMPIInt mine = size * 8, first; /* first failing rank * 8 + its status, size * 8: none */

    if (t->n) {
      if (dev) PetscCall(PetscLogGpuTimeBegin());
      *st = sg_tri_block_solve(ctx, t->alg, t->prec, t->n, c, c + t->n, c + 2 * t->n, b, xp, xn, x, t->pivtol, rep);
      if (dev) PetscCall(PetscLogGpuTimeEnd());
      if (*st != SG_OK) mine = rank * 8 + (PetscMPIInt)*st;
    }
    /* The block solve's algorithm may meet a breakdown the reduction did not (rd on a row that
       is not diagonally dominant, another elimination order): every rank learns the first
       failing rank, so that all of them return the error and none is left in a later collective */
    PetscCallMPI(MPIU_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm));
    if (first < size * 8) *who = first / 8, *st = (sg_status)(first % 8);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* LINES and LOCAL: the systems of the local rows with the couplings to other ranks dropped
   (LINES: every line segment of the box, one batched solve per plane; LOCAL: one system). */
static PetscErrorCode SGTriSolveBatched(SGTri *t, sg_ctx *ctx, const PetscScalar *c, const PetscScalar *b, PetscScalar *xo, sg_status *st, sg_report *rep)
{
  sg_tri_batch B;

  PetscFunctionBegin;
  B.prec   = t->prec;
  B.layout = t->mode == PC_TRIDIAG_LINES ? t->layout : SG_TRI_CONTIGUOUS;
  B.m      = t->mode == PC_TRIDIAG_LINES ? t->linelen : t->n;
  B.nbatch = t->mode == PC_TRIDIAG_LINES ? t->nbatch : 1;
  B.ld     = t->mode == PC_TRIDIAG_LINES ? t->ld : t->n;
  for (PetscInt p = 0; p < (t->mode == PC_TRIDIAG_LINES ? t->nplanes : 1) && *st == SG_OK; p++) {
    PetscInt o = p * t->planestride;

    B.dl = c + o;
    B.d  = c + t->n + o;
    B.du = c + 2 * t->n + o;
    B.b  = b + o;
    B.x  = xo + o;
    *st  = sg_tri_batch_solve(ctx, t->alg, &B, t->pivtol, rep);
    if (*st != SG_OK) rep->system += p * t->nbatch; /* system numbers over all planes */
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* LINES exact over more than one rank: SPIKE with half-bandwidth 1. With the couplings to the
   neighbouring ranks dropped, a segment's solution is y = A_loc^{-1} b (SGTriSolveBatched); the
   exact one is x = y - x_prev v - x_next w with the spikes v = A_loc^{-1}(dl_first e_first) and
   w = A_loc^{-1}(du_last e_last), where x_prev, x_next are the neighbours' unknowns across the rank
   boundary. The spikes depend on the operator only, so they are computed here, once per
   extraction, on the host: two batched solves of the same local lines. Stored as
     S (n x 2 nlines): row r of line l holds v_r in column 2l and w_r in column 2l+1,
     G (2 nlines x n): picks the first and last row of every segment,
   so that a PCApply is the batched solve, G y, one exchange of 2 interface equations per
   segment and y += S (-x_prev, -x_next): AIJ (host) or AIJCUSPARSE (device vectors) products,
   no per-line loop over the rows. */
static PetscErrorCode SGTriSetUpSpikes(SGTri *t)
{
  const PetscInt     n = t->n, nl = t->nlines, len = t->linelen;
  const PetscScalar *c;
  PetscScalar       *e = NULL, *v = NULL;
  PetscErrorCode     ierr;
  sg_ctx            *ctx;
  sg_status          st  = SG_OK;
  sg_report          rep = {SG_OK, SG_TRI_AUTO, -1, -1, 0.0, ""};
  PetscMPIInt        lsize;
  char               where[160] = "";

  PetscFunctionBegin;
  PetscCall(SGTriDestroySpikes(t));
  PetscCallMPI(MPI_Comm_size(t->lcomm, &lsize));
  if (lsize == 1) PetscFunctionReturn(PETSC_SUCCESS); /* whole lines on this rank: y is exact */
  if (n) {
    PetscCall(PetscCalloc2(2 * n, &e, 2 * n, &v)); /* e_first dl | e_last du, then v | w */
    PetscCall(VecGetArrayRead(t->coef, &c));
    for (PetscInt l = 0; l < nl; l++) {
      const PetscInt r0 = SGTriLineRow(t, l, 0), r1 = SGTriLineRow(t, l, len - 1);

      e[r0]     = c[r0];
      e[n + r1] = c[2 * n + r1];
    }
    PetscCall(SGGetCtx(&t->ctxs, PETSC_MEMTYPE_HOST, &ctx));
    PetscCall(SGTriSolveBatched(t, ctx, c, e, v, &st, &rep));
    PetscCall(SGTriSolveBatched(t, ctx, c, e + n, v + n, &st, &rep));
    PetscCall(VecRestoreArrayRead(t->coef, &c));
    if (st != SG_OK) PetscCall(SGTriWhere(t, &rep, PETSC_FALSE, where, sizeof(where)));
  }
  ierr = SGCheckStatusAll(PetscObjectComm((PetscObject)t->A), st, &rep, where); /* every rank stops together */
  if (ierr && n) PetscCall(PetscFree2(e, v));
  PetscCall(ierr);
  PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, n, 2 * nl, 2, NULL, &t->spk[0]));
  PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, 2 * nl, n, 1, NULL, &t->ends[0]));
  PetscCall(PetscMalloc1(4 * nl, &t->spkend));
  for (PetscInt l = 0; l < nl; l++) {
    const PetscInt r0 = SGTriLineRow(t, l, 0), r1 = SGTriLineRow(t, l, len - 1), cols[2] = {2 * l, 2 * l + 1};

    for (PetscInt p = 0; p < len; p++) {
      const PetscInt    r     = SGTriLineRow(t, l, p);
      const PetscScalar vw[2] = {v[r], v[n + r]};

      PetscCall(MatSetValues(t->spk[0], 1, &r, 2, cols, vw, INSERT_VALUES));
    }
    PetscCall(MatSetValue(t->ends[0], 2 * l, r0, 1.0, INSERT_VALUES));
    PetscCall(MatSetValue(t->ends[0], 2 * l + 1, r1, 1.0, INSERT_VALUES));
    t->spkend[4 * l]     = v[r0];
    t->spkend[4 * l + 1] = v[r1];
    t->spkend[4 * l + 2] = v[n + r0];
    t->spkend[4 * l + 3] = v[n + r1];
  }
  for (int k = 0; k < 2; k++) {
    Mat M = k ? t->ends[0] : t->spk[0];

    PetscCall(MatAssemblyBegin(M, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(M, MAT_FINAL_ASSEMBLY));
  }
  PetscCall(MatCreateVecs(t->ends[0], NULL, &t->yend[0]));
  PetscCall(MatCreateVecs(t->spk[0], &t->xnb[0], NULL));
  if (n) PetscCall(PetscFree2(e, v));
  PetscCall(PetscInfo(t->pc, "%s: lines exact, %" PetscInt_FMT " segment spike pairs computed on the host (SPIKE, half-bandwidth 1)\n", t->name, nl));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Interface equations of one segment (k = 1 or 2 of them, 4 values each: lower, diagonal, upper,
   rhs over the line's interface unknowns f_0, l_0, f_1, l_1, ... = first and last unknown of each
   segment) from its spike ends and the ends of y:
     E_F: f + vf x_prev + wf x_next = yf,   E_L: l + vl x_prev + wl x_next = yl.
   x_next (= f of the next segment) is eliminated from E_F and x_prev (= l of the previous one)
   from E_L, which makes the interface system tridiagonal:
     T1 = wl E_F - wf E_L: (vf wl - wf vl) x_prev + wl f - wf l = wl yf - wf yl
     T2 = vf E_L - vl E_F: -vl f + vf l + (vf wl - vl wf) x_next = vf yl - vl yf
   (E_F itself when the segment has no right coupling, E_L when it has no left one). */
static void SGTriSpikeEquations(const PetscScalar s[4], PetscScalar yf, PetscScalar yl, int k, double *q)
{
  const PetscScalar vf = s[0], vl = s[1], wf = s[2], wl = s[3], cr = vf * wl - vl * wf;

  if (k == 1) { /* one-point segment: f = l */
    q[0] = (double)vf, q[1] = 1.0, q[2] = (double)wf, q[3] = (double)yf;
    return;
  }
  if (wf == 0 && wl == 0) q[0] = (double)vf, q[1] = 1.0, q[2] = 0.0, q[3] = (double)yf;
  else q[0] = (double)cr, q[1] = (double)wl, q[2] = (double)-wf, q[3] = (double)(wl * yf - wf * yl);
  if (vf == 0 && vl == 0) q[4] = 0.0, q[5] = 1.0, q[6] = (double)wl, q[7] = (double)yl;
  else q[4] = (double)-vl, q[5] = (double)vf, q[6] = (double)cr, q[7] = (double)(vf * yl - vl * yf);
}

/* LINES exact, after SGTriSolveBatched wrote y into x (host or device array, dev): exchange the
   segments' interface equations over the ranks of the lines (one MPI_Allgatherv), solve each
   line's interface system, then x += S (-x_prev, -x_next). *who: the failing rank in A's
   communicator, -1 none; rep->system = line. */
static PetscErrorCode SGTriLinesExactCorrect(SGTri *t, PetscBool dev, PetscScalar *x, sg_status *st, sg_report *rep, PetscMPIInt *who, PetscBool *iniface)
{
  const int   k = dev ? 1 : 0;
  Vec         yw = NULL;
  PetscMPIInt rank, lwho = -1;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(t->lcomm, &rank));
  *iniface = PETSC_FALSE;
  if (!t->spk[0]) { /* the lines lie on this rank only */
    *who = *st != SG_OK ? t->wrank[rank] : -1;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (dev && !t->spk[1]) {
    PetscCall(MatConvert(t->spk[0], MATSEQAIJCUSPARSE, MAT_INITIAL_MATRIX, &t->spk[1]));
    PetscCall(MatConvert(t->ends[0], MATSEQAIJCUSPARSE, MAT_INITIAL_MATRIX, &t->ends[1]));
    PetscCall(MatCreateVecs(t->ends[1], NULL, &t->yend[1]));
    PetscCall(MatCreateVecs(t->spk[1], &t->xnb[1], NULL));
  }
  if (t->n) {
    if (dev) PetscCall(VecCreateSeqCUDAWithArray(PETSC_COMM_SELF, 1, t->n, x, &yw));
    else PetscCall(VecCreateSeqWithArray(PETSC_COMM_SELF, 1, t->n, x, &yw));
  }
  if (*st == SG_OK && t->n) {
    const PetscScalar *ye;
    const int          kr = t->kr[rank];

    PetscCall(MatMult(t->ends[k], yw, t->yend[k]));
    PetscCall(VecGetArrayRead(t->yend[k], &ye));
    for (PetscInt l = 0; l < t->nlines; l++) SGTriSpikeEquations(t->spkend + 4 * l, ye[2 * l], ye[2 * l + 1], kr, t->isend + 4 * kr * l);
    PetscCall(VecRestoreArrayRead(t->yend[k], &ye));
  }
  PetscCall(PetscLogEventBegin(SG_TRI_Iface, t->A, 0, 0, 0));
  PetscCall(SGTriExchange(t, t->lcomm, st, &lwho));
  if (lwho < 0) {
    PetscMPIInt  size;
    PetscScalar *q;

    PetscCallMPI(MPI_Comm_size(t->lcomm, &size));
    PetscCall(VecGetArrayWrite(t->xnb[k], &q));
    for (PetscInt l = 0; l < t->nlines; l++) {
      double xp, xn;

      PetscCall(SGTriIfaceSolve(t, l, rank, size, &xp, &xn, st, rep));
      if (*st != SG_OK) {
        lwho = rank, *iniface = PETSC_TRUE, rep->system = l;
        break;
      }
      q[2 * l]     = (PetscScalar)-xp;
      q[2 * l + 1] = (PetscScalar)-xn;
    }
    PetscCall(VecRestoreArrayWrite(t->xnb[k], &q));
  }
  PetscCall(PetscLogEventEnd(SG_TRI_Iface, t->A, 0, 0, 0));
  if (lwho < 0 && t->n) PetscCall(MatMultAdd(t->spk[k], t->xnb[k], yw, yw));
  PetscCall(VecDestroy(&yw));
  *who = lwho < 0 ? -1 : t->wrank[lwho];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* user-level location of a kernel failure: global row, or grid point of the line */
static PetscErrorCode SGTriWhere(SGTri *t, const sg_report *rep, PetscBool iniface, char where[], size_t len)
{
  PetscFunctionBegin;
  if (iniface && t->mode == PC_TRIDIAG_LINES) {
    const PetscInt r = SGTriLineRow(t, (PetscInt)rep->system, 0);

    PetscCall(PetscSNPrintf(where, len, "%s, interface system (equation %lld of the segments' first/last rows) of the %c-line through grid point (%" PetscInt_FMT ",%" PetscInt_FMT ",%" PetscInt_FMT ")", t->name, rep->row, SGDirName[t->dir], t->corner[0] + r % t->box[0], t->corner[1] + (r / t->box[0]) % t->box[1], t->corner[2] + r / (t->box[0] * t->box[1])));
  } else if (iniface) PetscCall(PetscSNPrintf(where, len, "%s, interface system (equation %lld of the first/last rows of all ranks)", t->name, rep->row));
  else if (rep->row < 0 || rep->system < 0) PetscCall(PetscSNPrintf(where, len, "%s", t->name));
  else if (t->mode != PC_TRIDIAG_LINES) PetscCall(PetscSNPrintf(where, len, "%s, matrix row %" PetscInt_FMT, t->name, t->rstart + (PetscInt)rep->row));
  else {
    const PetscInt xm = t->box[0], ym = t->box[1], r = SGTriLineRow(t, (PetscInt)rep->system, (PetscInt)rep->row);

    PetscCall(PetscSNPrintf(where, len, "%s, %c-line through grid point (%" PetscInt_FMT ",%" PetscInt_FMT ",%" PetscInt_FMT "), matrix row %" PetscInt_FMT, t->name, SGDirName[t->dir], t->corner[0] + r % xm, t->corner[1] + (r / xm) % ym, t->corner[2] + r / (xm * ym), t->rstart + r));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SGTriApply(SGTri *t, Vec x, Vec y)
{
  const PetscScalar *b, *c;
  PetscScalar       *xo;
  PetscMemType       mtx, mty, mtc = PETSC_MEMTYPE_HOST;
  PetscInt           nx, ny;
  PetscBool          dev, exactlines = (PetscBool)(t->mode == PC_TRIDIAG_LINES && t->exact);
  sg_ctx            *ctx;
  sg_status          st  = SG_OK;
  sg_report          rep = {SG_OK, SG_TRI_AUTO, -1, -1, 0.0, ""};
  PetscMPIInt        who = -1;
  PetscBool          iniface = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCheck(t->A, PETSC_COMM_SELF, PETSC_ERR_ORDER, "Tridiagonal preconditioner is not set up: call PCSetUp() first");
  PetscCall(SGTriSetUp(t, t->A, NULL, t->da)); /* re-extract when the matrix or the settings changed */
  PetscCall(VecGetLocalSize(x, &nx));
  PetscCall(VecGetLocalSize(y, &ny));
  PetscCheck(nx == t->n && ny == t->n, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "Vector local sizes %" PetscInt_FMT ", %" PetscInt_FMT " do not match the %" PetscInt_FMT " local rows of the tridiagonal operator", nx, ny, t->n);

  PetscCall(VecGetArrayReadAndMemType(x, &b, &mtx));
  PetscCall(VecGetArrayWriteAndMemType(y, &xo, &mty));
  if (PetscMemTypeDevice(mtx) != PetscMemTypeDevice(mty) || !(PetscMemTypeHost(mtx) || PetscMemTypeCUDA(mtx))) {
    PetscCall(VecRestoreArrayReadAndMemType(x, &b));
    PetscCall(VecRestoreArrayWriteAndMemType(y, &xo));
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "Vectors in %s and %s memory: %s needs both in host memory or both in CUDA memory (no hidden copies are made)", PetscMemTypeToString(mtx), PetscMemTypeToString(mty), t->name);
  }
  dev = PetscMemTypeDevice(mtx); /* the kernels run on the device */
  PetscCall(SGGetCtx(&t->ctxs, dev ? mtx : PETSC_MEMTYPE_HOST, &ctx));
  if (dev && !t->want_device) {
    PetscCall(PetscInfo(t->pc, "%s: first PCApply with device vectors, moving the coefficients to the device\n", t->name));
    t->want_device = PETSC_TRUE;
    if (t->n) PetscCall(SGTriUpload(t));
  }
  if (dev) PetscCall(VecGetArrayReadAndMemType(t->coef, &c, &mtc));
  else PetscCall(VecGetArrayRead(t->coef, &c));
  PetscCheck(!t->n || PetscMemTypeDevice(mtc) == dev, PETSC_COMM_SELF, PETSC_ERR_GPU, "Tridiagonal coefficients are not in the vectors' memory");

  PetscCall(PetscLogEventBegin(SG_TRI_Solve, t->A, x, y, 0));
  if (t->mode == PC_TRIDIAG_GLOBAL) PetscCall(SGTriSolveGlobal(t, ctx, dev, c, b, xo, &st, &rep, &who, &iniface));
  else if (t->n) {
    if (dev) PetscCall(PetscLogGpuTimeBegin());
    PetscCall(SGTriSolveBatched(t, ctx, c, b, xo, &st, &rep));
    if (dev) PetscCall(PetscLogGpuTimeEnd());
  }
  if (exactlines) PetscCall(SGTriLinesExactCorrect(t, dev, xo, &st, &rep, &who, &iniface)); /* collective over the ranks of the lines */
  if (dev) PetscCall(PetscLogGpuFlops(8.0 * t->n));
  else PetscCall(PetscLogFlops(8.0 * t->n));
  PetscCall(PetscLogEventEnd(SG_TRI_Solve, t->A, x, y, 0));

  if (dev) PetscCall(VecRestoreArrayReadAndMemType(t->coef, &c));
  else PetscCall(VecRestoreArrayRead(t->coef, &c));
  PetscCall(VecRestoreArrayReadAndMemType(x, &b));
  PetscCall(VecRestoreArrayWriteAndMemType(y, &xo));

  if (st != SG_OK) {
    PetscMPIInt rank;

    PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)t->A), &rank));
    if ((t->mode != PC_TRIDIAG_GLOBAL && !exactlines) || who == rank) {
      char where[160];

      PetscCall(SGTriWhere(t, &rep, iniface, where, sizeof(where)));
      PetscCall(SGCheckStatus(st, &rep, where));
    }
    SETERRQ(PETSC_COMM_SELF, SGStatusToPetscError(st), "%s: the tridiagonal solve failed on rank %d (see its message)", t->name, who);
  }
  if (t->n) t->alg_used = rep.alg;
  if (!t->applied || t->mtype_used != mtx) PetscCall(PetscInfo(t->pc, "%s: %s backend (vectors in %s memory%s), algorithm %s\n", t->name, dev ? "cuda" : "host", PetscMemTypeToString(mtx), dev ? ", stream of the current PetscDeviceContext" : "", t->n ? sg_tri_alg_name(t->alg_used) : "none (no local rows)"));
  t->mtype_used = mtx;
  t->applied    = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SGTriView(SGTri *t, PetscViewer viewer)
{
  PetscBool   isascii;
  PetscMPIInt rank;
  const char *cdev;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &isascii));
  if (!isascii) PetscFunctionReturn(PETSC_SUCCESS);
  if (t->mode == PC_TRIDIAG_LINES && t->exact) PetscCall(PetscViewerASCIIPrintf(viewer, "  mode lines, direction %c (%" PetscInt_FMT "): DMDA grid lines solved exactly across ranks (lines_exact: batched local line solves, one MPI_Allgatherv of 2 interface equations per segment, spike correction y -= S (x_prev, x_next))\n", SGDirName[t->dir], t->dir));
  else if (t->mode == PC_TRIDIAG_LINES) PetscCall(PetscViewerASCIIPrintf(viewer, "  mode lines, direction %c (%" PetscInt_FMT "): DMDA grid lines, cut at rank boundaries (block Jacobi across ranks)\n", SGDirName[t->dir], t->dir));
  else if (t->mode == PC_TRIDIAG_LOCAL) PetscCall(PetscViewerASCIIPrintf(viewer, "  mode local: tridiagonal part of each rank's rows, couplings between ranks dropped (block Jacobi)\n"));
  else PetscCall(PetscViewerASCIIPrintf(viewer, "  mode global: exact solve with the tridiagonal part, all ranks coupled\n"));
  if (t->mode != PC_TRIDIAG_LINES && t->allmodes) PetscCall(PetscViewerASCIIPrintf(viewer, "  line direction %c (used in lines mode only)\n", SGDirName[t->dir]));
  if (t->applied) PetscCall(PetscViewerASCIIPrintf(viewer, "  algorithm requested %s, used %s (last PCApply)\n", sg_tri_alg_name(t->alg), t->alg_used < SG_TRI_NUM_ALGS ? sg_tri_alg_name(t->alg_used) : "none (no local rows)"));
  else PetscCall(PetscViewerASCIIPrintf(viewer, "  algorithm requested %s, used: not applied yet%s%s\n", sg_tri_alg_name(t->alg), t->alg_choice != SG_TRI_AUTO ? ", expected " : "", t->alg_choice != SG_TRI_AUTO ? sg_tri_alg_name(t->alg_choice) : ""));
  if (t->pivtol > 0) PetscCall(PetscViewerASCIIPrintf(viewer, "  pivot tolerance %g (breakdown when |pivot| <= tol * row sum)\n", (double)t->pivtol));
  else PetscCall(PetscViewerASCIIPrintf(viewer, "  pivot tolerance default (100 * machine epsilon of the precision)\n"));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  backend used: %s\n", t->applied ? (PetscMemTypeHost(t->mtype_used) ? "host" : "cuda") : "none yet (chosen from the vectors' memory at PCApply)"));
  if (!t->A) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscViewerASCIIPrintf(viewer, "  %" PetscInt_FMT " rows in total, precision %s\n", t->N, t->prec == SG_REAL64 ? "double" : "single"));
  if (t->mode == PC_TRIDIAG_GLOBAL) PetscCall(PetscViewerASCIIPrintf(viewer, "  interface system: %" PetscInt_FMT " equations (MPI_Allgatherv, solved redundantly on every rank)\n", t->niface));
  if (t->mode == PC_TRIDIAG_LINES && t->exact) {
    PetscMPIInt ls;

    PetscCallMPI(MPI_Comm_size(t->lcomm, &ls));
    PetscCall(PetscViewerASCIIPrintf(viewer, "  lines exact: each line spans %d rank(s), interface system of %" PetscInt_FMT " equations per line\n", ls, t->niface));
  }
  cdev = t->want_device && t->n ? "host and device" : "host";
  PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)viewer), &rank));
  PetscCall(PetscViewerASCIIPushSynchronized(viewer));
  if (t->mode == PC_TRIDIAG_LINES)
    PetscCall(PetscViewerASCIISynchronizedPrintf(viewer, "    [%d] %" PetscInt_FMT " rows, box %" PetscInt_FMT " x %" PetscInt_FMT " x %" PetscInt_FMT ", %" PetscInt_FMT " lines of length %" PetscInt_FMT ", coefficients in %s memory\n", rank, t->n, t->box[0], t->box[1], t->box[2], t->nlines, t->linelen, cdev));
  else PetscCall(PetscViewerASCIISynchronizedPrintf(viewer, "    [%d] %" PetscInt_FMT " rows (first %" PetscInt_FMT "), coefficients in %s memory\n", rank, t->n, t->rstart, cdev));
  PetscCall(PetscViewerFlush(viewer));
  PetscCall(PetscViewerASCIIPopSynchronized(viewer));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ================================================================== PC type */

static PetscErrorCode PCSetUp_Tridiag(PC pc)
{
  SGTri *t  = (SGTri *)pc->data;
  DM     dm = NULL;

  PetscFunctionBegin;
  if (t->mode == PC_TRIDIAG_LINES) {
    dm = pc->dm;
    if (!dm) PetscCall(MatGetDM(pc->pmat, &dm));
  }
  PetscCall(SGTriSetUp(t, pc->pmat, pc->pmat, dm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCApply_Tridiag(PC pc, Vec x, Vec y)
{
  PetscFunctionBegin;
  PetscCall(SGTriApply((SGTri *)pc->data, x, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCSetFromOptions_Tridiag(PC pc, PetscOptionItems PetscOptionsObject)
{
  SGTri        *t    = (SGTri *)pc->data;
  PCTridiagMode mode = t->mode;
  PetscInt      dir  = t->dir;
  PetscBool     ex   = t->exact;

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "Tridiagonal solver options (StructGPU)");
  PetscCall(SGTriSetFromOptions(t, PetscOptionsObject, PETSC_TRUE, PETSC_TRUE, PETSC_TRUE));
  PetscOptionsHeadEnd();
  if (t->mode != mode || t->dir != dir || t->exact != ex) pc->setupcalled = PETSC_FALSE; /* new DM / coefficients needed */
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCView_Tridiag(PC pc, PetscViewer viewer)
{
  PetscFunctionBegin;
  PetscCall(SGTriView((SGTri *)pc->data, viewer));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCReset_Tridiag(PC pc)
{
  PetscFunctionBegin;
  PetscCall(SGTriReset((SGTri *)pc->data));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCDestroy_Tridiag(PC pc)
{
  PetscFunctionBegin;
  PetscCall(SGTriDestroy((SGTri **)&pc->data));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCTridiagSetMode_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCTridiagSetDirection_C", NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCTridiagSetMode_Tridiag(PC pc, PCTridiagMode mode)
{
  PetscFunctionBegin;
  if (((SGTri *)pc->data)->mode != mode) pc->setupcalled = PETSC_FALSE; /* re-extract at the next PCSetUp() */
  ((SGTri *)pc->data)->mode = mode;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCTridiagSetDirection_Tridiag(PC pc, PetscInt dir)
{
  PetscFunctionBegin;
  if (((SGTri *)pc->data)->dir != dir) pc->setupcalled = PETSC_FALSE;
  ((SGTri *)pc->data)->dir = dir;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCTridiagSetMode - Sets which tridiagonal system `PCTRIDIAG` solves

  Logically Collective

  Input Parameters:
+ pc   - the preconditioner context
- mode - `PC_TRIDIAG_GLOBAL` (default), `PC_TRIDIAG_LOCAL` or `PC_TRIDIAG_LINES`

  Options Database Key:
. -pc_tridiag_mode <global,local,lines> - the mode

  Level: intermediate

.seealso: `PCTRIDIAG`, `PCTridiagMode`, `PCTridiagSetDirection()`
@*/
PetscErrorCode PCTridiagSetMode(PC pc, PCTridiagMode mode)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  PetscValidLogicalCollectiveEnum(pc, mode, 2);
  PetscCheck(mode >= PC_TRIDIAG_GLOBAL && mode <= PC_TRIDIAG_LINES, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_OUTOFRANGE, "Unknown PCTridiagMode %d", (int)mode);
  PetscTryMethod(pc, "PCTridiagSetMode_C", (PC, PCTridiagMode), (pc, mode));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCTridiagSetDirection - Sets the grid direction of the lines solved by `PCTRIDIAG` in `PC_TRIDIAG_LINES` mode

  Logically Collective

  Input Parameters:
+ pc  - the preconditioner context
- dir - 0 (x, default), 1 (y) or 2 (z)

  Options Database Key:
. -pc_tridiag_direction <0,1,2> - the direction

  Level: intermediate

.seealso: `PCTRIDIAG`, `PCTridiagSetMode()`, `PCShellSetLineSolve()`
@*/
PetscErrorCode PCTridiagSetDirection(PC pc, PetscInt dir)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  PetscValidLogicalCollectiveInt(pc, dir, 2);
  PetscCheck(dir >= 0 && dir <= 2, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_OUTOFRANGE, "Line direction must be 0 (x), 1 (y) or 2 (z), got %" PetscInt_FMT, dir);
  PetscTryMethod(pc, "PCTridiagSetDirection_C", (PC, PetscInt), (pc, dir));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*MC
   PCTRIDIAG - Exact solve with the tridiagonal part of the preconditioning matrix, on the host
   or a CUDA GPU (StructGPU plugin: -dll_append libstructgpu.so)

   Options Database Keys:
+  -pc_tridiag_mode <global,local,lines>                           - system solved, see `PCTridiagMode`
.  -pc_tridiag_direction <0,1,2>                                   - line direction in lines mode (x, y, z)
.  -pc_tridiag_lines_exact <bool>                                  - lines mode: solve each grid line exactly across ranks (default false)
.  -pc_tridiag_algorithm <auto,thomas,cr,pcr,rd,cr_pcr,cr_rd,tpcr> - tridiagonal algorithm (auto: chosen from size and batch count; rd needs a diagonally dominant operator)
-  -pc_tridiag_pivot_tol <tol>                                     - breakdown when |pivot| <= tol * (|l|+|d|+|u|) of its equation

   Level: intermediate

   Notes:
   The coefficients are the entries (i,i-1), (i,i), (i,i+1) of the Pmat in global numbering
   (global mode), the same restricted to each rank's rows (local mode, block Jacobi), or the entries
   coupling neighbouring grid points along one direction of a `DMDA` with dof 1 (lines mode; lines are
   cut at rank boundaries, so the preconditioner is block Jacobi across ranks, unless -pc_tridiag_lines_exact
   is set: then every line is solved exactly across the ranks it crosses (SPIKE with half-bandwidth 1: the
   batched local line solve, the spikes of every segment computed once at setup, one MPI_Allgatherv of 2
   interface equations per segment per PCApply over the ranks sharing the lines, and a sparse spike
   correction; host or CUDA vectors). Couplings across periodic boundaries are dropped. They are extracted at
   `PCSetUp()` with `MatGetRow()` (AIJ and BAIJ types, including `MATAIJCUSPARSE`) and re-extracted when
   the matrix changes.

   With vectors in CUDA memory (`VECCUDA`, e.g. -vec_type cuda, -dm_vec_type cuda, -mat_type aijcusparse)
   the CUDA kernels run on the stream of PETSc's current `PetscDeviceContext` and the coefficients are
   uploaded once; with host vectors the host kernels run. No vector is copied between host and device;
   the only transfers in global mode are the 2-4 interface equations per rank.

   Breakdown (zero or tiny pivot) gives `PETSC_ERR_MAT_LU_ZRPVT`, Inf/NaN `PETSC_ERR_FP`.
   Only real scalars are supported.

.seealso: `PCTridiagSetMode()`, `PCTridiagSetDirection()`, `PCShellSetTridiagonal()`, `PCShellSetLineSolve()`, `PCBJACOBI`
M*/
PETSC_INTERN PetscErrorCode PCCreate_Tridiag(PC pc)
{
  SGTri *t;

  PetscFunctionBegin;
  PetscCall(SGTriCreate(pc, &t));
  PetscCall(PetscStrncpy(t->name, "StructGPU PCTRIDIAG", sizeof(t->name)));
  t->allmodes              = PETSC_TRUE;
  pc->data                 = (void *)t;
  pc->ops->setup           = PCSetUp_Tridiag;
  pc->ops->apply           = PCApply_Tridiag;
  pc->ops->setfromoptions  = PCSetFromOptions_Tridiag;
  pc->ops->view            = PCView_Tridiag;
  pc->ops->reset           = PCReset_Tridiag;
  pc->ops->destroy         = PCDestroy_Tridiag;
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCTridiagSetMode_C", PCTridiagSetMode_Tridiag));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCTridiagSetDirection_C", PCTridiagSetDirection_Tridiag));
  PetscFunctionReturn(PETSC_SUCCESS);
}
