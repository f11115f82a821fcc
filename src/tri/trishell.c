/* PCSHELL helpers of the tridiagonal family: the same core as PCTRIDIAG
   (src/pc/tridiag/tridiagimpl.h), with the matrix or DMDA given by the caller. */
#include "pc/tridiag/tridiagimpl.h"

typedef struct {
  SGTri *core;
  Mat    T;  /* PCShellSetTridiagonal: user matrix or NULL (= Pmat) */
  DM     da; /* PCShellSetLineSolve */
} SGTriShell;

static PetscErrorCode SGTriShellSetUp(PC pc)
{
  SGTriShell *s;
  Mat         P;

  PetscFunctionBegin;
  PetscCall(PCShellGetContext(pc, &s));
  PetscCall(PCGetOperators(pc, NULL, &P));
  PetscCall(SGTriSetUp(s->core, s->T ? s->T : P, P, s->da));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SGTriShellApply(PC pc, Vec x, Vec y)
{
  SGTriShell *s;

  PetscFunctionBegin;
  PetscCall(PCShellGetContext(pc, &s));
  PetscCall(SGTriApply(s->core, x, y)); /* re-extracts if T changed since PCSetUp() */
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SGTriShellView(PC pc, PetscViewer viewer)
{
  SGTriShell *s;
  PetscBool   isascii;

  PetscFunctionBegin;
  PetscCall(PCShellGetContext(pc, &s));
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &isascii));
  if (isascii && s->core->mode != PC_TRIDIAG_LINES) PetscCall(PetscViewerASCIIPrintf(viewer, "  tridiagonal part of %s\n", s->T ? "a user-given matrix T" : "the preconditioning matrix"));
  PetscCall(SGTriView(s->core, viewer));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SGTriShellDestroy(PC pc)
{
  SGTriShell *s;

  PetscFunctionBegin;
  PetscCall(PCShellGetContext(pc, &s));
  PetscCall(SGTriDestroy(&s->core));
  PetscCall(MatDestroy(&s->T));
  PetscCall(DMDestroy(&s->da));
  PetscCall(PetscFree(s));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* turn pc into a fresh PCSHELL (dropping an earlier shell context) running the core */
static PetscErrorCode SGTriShellCreate(PC pc, SGTriShell **sp)
{
  SGTriShell *s;
  PetscBool   isshell;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCSHELL, &isshell));
  if (isshell) PetscCall(PCSetType(pc, PCNONE)); /* destroys the old shell and its context */
  PetscCall(PCSetType(pc, PCSHELL));
  PetscCall(PetscNew(&s));
  PetscCall(SGTriCreate(pc, &s->core));
  PetscCall(PCShellSetContext(pc, s));
  PetscCall(PCShellSetSetUp(pc, SGTriShellSetUp));
  PetscCall(PCShellSetApply(pc, SGTriShellApply));
  PetscCall(PCShellSetView(pc, SGTriShellView));
  PetscCall(PCShellSetDestroy(pc, SGTriShellDestroy));
  *sp = s;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SGTriShellSetName(PC pc, SGTriShell *s, const char name[])
{
  PetscFunctionBegin;
  PetscCall(PetscStrncpy(s->core->name, name, sizeof(s->core->name)));
  PetscCall(PCShellSetName(pc, name));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCShellSetTridiagonal - Turns `pc` into a `PCSHELL` that solves exactly with the tridiagonal part
  of a matrix, using the StructGPU tridiagonal kernels (host or CUDA, from the vectors' memory)

  Collective

  Input Parameters:
+ pc     - the preconditioner context
. T      - matrix whose entries (i,i-1), (i,i), (i,i+1) form the system, with the row layout of the
           preconditioning matrix; `NULL` to use the preconditioning matrix itself (at `PCSetUp()`)
- global - `PETSC_TRUE`: one system coupling all ranks; `PETSC_FALSE`: each rank solves the
           tridiagonal part of its rows (block Jacobi)

  Options Database Keys (with the prefix of `pc`, read by this call):
+ -pc_tridiag_mode <global,local>                                  - overrides `global`
. -pc_tridiag_algorithm <auto,thomas,cr,pcr,rd,cr_pcr,cr_rd,tpcr> - tridiagonal algorithm
- -pc_tridiag_pivot_tol <tol>                                     - breakdown tolerance

  Level: intermediate

  Note:
  `T` is referenced; its coefficients are re-extracted when it changes. Calling this again on the same
  `pc` replaces the earlier shell.

.seealso: `PCTRIDIAG`, `PCShellSetLineSolve()`, `PCSHELL`
@*/
PetscErrorCode PCShellSetTridiagonal(PC pc, Mat T, PetscBool global)
{
  SGTriShell *s;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  if (T) PetscValidHeaderSpecific(T, MAT_CLASSID, 2);
  PetscValidLogicalCollectiveBool(pc, global, 3);
  PetscCall(SGTriShellCreate(pc, &s));
  s->core->mode = global ? PC_TRIDIAG_GLOBAL : PC_TRIDIAG_LOCAL;
  if (T) PetscCall(PetscObjectReference((PetscObject)T));
  s->T = T;
  PetscObjectOptionsBegin((PetscObject)pc);
  PetscCall(SGTriSetFromOptions(s->core, PetscOptionsObject, PETSC_TRUE, PETSC_FALSE, PETSC_FALSE));
  PetscOptionsEnd();
  PetscCall(SGTriShellSetName(pc, s, s->core->mode == PC_TRIDIAG_GLOBAL ? "StructGPU tridiagonal (global)" : "StructGPU tridiagonal (local)"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCShellSetLineSolve - Turns `pc` into a `PCSHELL` that solves, on each rank, all grid lines of a
  `DMDA` along one direction (tridiagonal systems from the operator entries coupling neighbours along
  that direction), using the StructGPU batched tridiagonal kernels

  Collective

  Input Parameters:
+ pc  - the preconditioner context
. da  - the `DMDA` (dof 1) the preconditioning matrix lives on
- dir - 0 (x), 1 (y) or 2 (z)

  Options Database Keys (with the prefix of `pc`, read by this call):
+ -pc_tridiag_direction <0,1,2>                                    - overrides `dir`
. -pc_tridiag_lines_exact <bool>                                   - solve each line exactly across the ranks it crosses (default false)
. -pc_tridiag_algorithm <auto,thomas,cr,pcr,rd,cr_pcr,cr_rd,tpcr> - tridiagonal algorithm
- -pc_tridiag_pivot_tol <tol>                                     - breakdown tolerance

  Level: intermediate

  Note:
  Lines are cut at rank boundaries (block Jacobi across ranks) unless -pc_tridiag_lines_exact is set; couplings across periodic boundaries
  are dropped.

.seealso: `PCTRIDIAG`, `PCShellSetTridiagonal()`, `PCSHELL`, `DMDA`
@*/
PetscErrorCode PCShellSetLineSolve(PC pc, DM da, PetscInt dir)
{
  SGTriShell *s;
  PetscBool   isda;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  PetscValidHeaderSpecific(da, DM_CLASSID, 2);
  PetscValidLogicalCollectiveInt(pc, dir, 3);
  PetscCall(PetscObjectTypeCompare((PetscObject)da, DMDA, &isda));
  PetscCheck(isda, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_WRONG, "PCShellSetLineSolve() needs a DMDA, got DM type %s", ((PetscObject)da)->type_name);
  PetscCheck(dir >= 0 && dir <= 2, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_OUTOFRANGE, "Line direction must be 0 (x), 1 (y) or 2 (z), got %" PetscInt_FMT, dir);
  PetscCall(SGTriShellCreate(pc, &s));
  PetscCall(SGTriShellSetName(pc, s, "StructGPU line solve"));
  s->core->mode = PC_TRIDIAG_LINES;
  s->core->dir  = dir;
  PetscCall(PetscObjectReference((PetscObject)da));
  s->da = da;
  PetscObjectOptionsBegin((PetscObject)pc);
  PetscCall(SGTriSetFromOptions(s->core, PetscOptionsObject, PETSC_FALSE, PETSC_FALSE, PETSC_TRUE));
  PetscOptionsEnd();
  PetscFunctionReturn(PETSC_SUCCESS);
}
