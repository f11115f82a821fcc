/* PCSHELL helper of the dense LU direct solver: the same core as PCDENSELU
   (src/pc/denselu/denseluimpl.h), factoring the PC's preconditioning matrix. */
#include "pc/denselu/denseluimpl.h"

static PetscErrorCode SGLUShellSetUp(PC pc)
{
  SGLU *t;
  Mat   P;

  PetscFunctionBegin;
  PetscCall(PCShellGetContext(pc, &t));
  PetscCall(PCGetOperators(pc, NULL, &P));
  PetscCall(SGLUSetUp(t, P));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SGLUShellApply(PC pc, Vec x, Vec y)
{
  SGLU *t;

  PetscFunctionBegin;
  PetscCall(PCShellGetContext(pc, &t));
  PetscCall(SGLUApply(t, x, y, PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SGLUShellApplyTranspose(PC pc, Vec x, Vec y)
{
  SGLU *t;

  PetscFunctionBegin;
  PetscCall(PCShellGetContext(pc, &t));
  PetscCall(SGLUApply(t, x, y, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SGLUShellMatApply(PC pc, Mat X, Mat Y)
{
  SGLU *t;

  PetscFunctionBegin;
  PetscCall(PCShellGetContext(pc, &t));
  PetscCall(SGLUMatApply(t, X, Y, PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SGLUShellMatApplyTranspose(PC pc, Mat X, Mat Y)
{
  SGLU *t;

  PetscFunctionBegin;
  PetscCall(PCShellGetContext(pc, &t));
  PetscCall(SGLUMatApply(t, X, Y, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SGLUShellView(PC pc, PetscViewer viewer)
{
  SGLU *t;

  PetscFunctionBegin;
  PetscCall(PCShellGetContext(pc, &t));
  PetscCall(SGLUView(t, viewer));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SGLUShellDestroy(PC pc)
{
  SGLU *t;

  PetscFunctionBegin;
  PetscCall(PCShellGetContext(pc, &t));
  PetscCall(SGLUDestroy(&t));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCShellSetDenseLU - Turns `pc` into a `PCSHELL` that solves exactly with a dense LU factorization of the
  preconditioning matrix (gathered on rank 0, or per rank), using cuSOLVER/LAPACK getrf and the StructGPU
  triangular solve kernels (host or CUDA, from the operator's vector type)

  Collective

  Input Parameters:
+ pc     - the preconditioner context
- layout - `PC_DENSELU_GATHERED`: the whole operator is gathered to rank 0 and factored there (exact solve);
           `PC_DENSELU_LOCAL`: each rank factors its diagonal block (block Jacobi with exact dense local solves)

  Options Database Keys (with the prefix of `pc`, read by this call):
+ -pc_denselu_layout <gathered,local>  - overrides `layout`
. -pc_denselu_pivot_tol <tol>          - breakdown when |U_ii| <= tol * max |a_ij| (default n * machine epsilon)
. -pc_denselu_backend <auto,host,cuda> - where the factorization and the solves run
- -pc_denselu_plan <bool>              - analyse the factors once at setup (default true; see `PCDENSELU`)

  Level: intermediate

  Notes:
  The factorization happens at `PCSetUp()` and again only when the preconditioning matrix changes. The shell
  provides `PCApply()`, `PCApplyTranspose()`, `PCMatApply()` and `PCView()`; it behaves like `PCDENSELU`
  (see there for the details). Calling this again on the same `pc` replaces the earlier shell.

.seealso: `PCDENSELU`, `PCDenseLULayout`, `PCShellSetTridiagonal()`, `PCSHELL`
@*/
PetscErrorCode PCShellSetDenseLU(PC pc, PCDenseLULayout layout)
{
  SGLU     *t;
  PetscBool isshell;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  PetscValidLogicalCollectiveEnum(pc, layout, 2);
  PetscCheck(layout == PC_DENSELU_GATHERED || layout == PC_DENSELU_LOCAL, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_OUTOFRANGE, "Unknown PCDenseLULayout %d", (int)layout);
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCSHELL, &isshell));
  if (isshell) PetscCall(PCSetType(pc, PCNONE)); /* destroys the old shell and its context */
  PetscCall(PCSetType(pc, PCSHELL));
  PetscCall(SGLUCreate(pc, &t));
  t->layout = layout;
  PetscCall(PCShellSetContext(pc, t));
  PetscCall(PCShellSetSetUp(pc, SGLUShellSetUp));
  PetscCall(PCShellSetApply(pc, SGLUShellApply));
  PetscCall(PCShellSetApplyTranspose(pc, SGLUShellApplyTranspose));
  PetscCall(PCShellSetMatApply(pc, SGLUShellMatApply));
  PetscCall(PCShellSetMatApplyTranspose(pc, SGLUShellMatApplyTranspose));
  PetscCall(PCShellSetView(pc, SGLUShellView));
  PetscCall(PCShellSetDestroy(pc, SGLUShellDestroy));
  PetscObjectOptionsBegin((PetscObject)pc);
  PetscCall(SGLUSetFromOptions(t, PetscOptionsObject, "PCShellSetDenseLU"));
  PetscOptionsEnd();
  PetscCall(PetscStrncpy(t->name, t->layout == PC_DENSELU_GATHERED ? "StructGPU dense LU (gathered)" : "StructGPU dense LU (local)", sizeof(t->name)));
  PetscCall(PCShellSetName(pc, t->name));
  PetscFunctionReturn(PETSC_SUCCESS);
}
