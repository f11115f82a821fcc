/* Shared core of the dense LU direct solver: used by the PC type PCDENSELU
   (src/pc/denselu/denselu.c) and by the PCSHELL helper PCShellSetDenseLU() (src/tri/lushell.c).
   The core owns the settings, the dense LU factors (sg_getrf, host or CUDA) and the gather
   scatter; the front ends only decide which PC the options and the view belong to. */
#pragma once
#include <structgpu.h>
#include <petsc/private/pcimpl.h>
#include "sys/sgpetsc.h"
#include "structgpu/trsv_kernels.h"

/* backend request: auto = from the operator's vector type (CUDA for aijcusparse, densecuda, ...) */
typedef enum {
  SG_LU_BACKEND_AUTO,
  SG_LU_BACKEND_HOST,
  SG_LU_BACKEND_CUDA
} SGLUBackend;
PETSC_INTERN const char *const SGLUBackends[];

typedef struct {
  PC   pc; /* owner (not referenced), for PetscInfo() */
  char name[64];

  /* settings */
  PCDenseLULayout layout;
  PetscReal       pivtol; /* < 0: kernel default n * eps, relative to max |a_ij| */
  SGLUBackend     backend;
  PetscBool       useplan; /* analyse the factors once (sg_getrs_plan) */

  /* the factored operator (referenced) and what it was factored with */
  Mat              A;
  PetscObjectId    Aid; /* 0: no valid factors */
  PetscObjectState Astate;
  PCDenseLULayout  xlayout;
  PetscReal        xpivtol;
  SGLUBackend      xbackend;
  PetscBool        xuseplan;
  PetscInt         N, nloc, rstart; /* operator order, local rows, first local row */
  PetscInt         nf;              /* order factored on this rank (gathered: N on rank 0, else 0) */
  Mat              F;               /* nf x nf LU factors in place (MATSEQDENSE or MATSEQDENSECUDA); NULL if nf == 0 */
  int             *perm;            /* nf row permutation, in the backend's memory */
  sg_getrs_plan    plan;            /* the factors analysed (-pc_denselu_plan), or NULL */
  const void      *plan_lu;         /* the factors' array it was made for */
  PetscLogDouble   tplan;           /* seconds of sg_getrs_plan_create */
  PetscBool        dev;             /* factors and kernels on the CUDA backend */

  /* gathered layout: b (row layout of A) -> w on rank 0; w follows the memory of the vectors */
  VecScatter scat;
  Vec        w;
  /* CUDA backend with vectors in host memory: device staging of nf values */
  Vec stage;

  /* execution */
  sg_precision   prec;
  SGCtxCache     ctxs;
  PetscLogDouble tfactor;          /* seconds of the last sg_getrf on this rank */
  PetscInt       nfactor, napply;  /* factorizations, right-hand sides solved */
  PetscMemType   mtype_used;       /* memory type of the last PCApply vectors */
  PetscBool      applied, staged;  /* staged: the last apply copied between host and device */
} SGLU;

PETSC_INTERN PetscErrorCode SGLUCreate(PC, SGLU **);
PETSC_INTERN PetscErrorCode SGLUReset(SGLU *);
PETSC_INTERN PetscErrorCode SGLUDestroy(SGLU **);
/* options -pc_denselu_* (inside PetscOptionsBegin/End or PetscOptionsHeadBegin/End) */
PETSC_INTERN PetscErrorCode SGLUSetFromOptions(SGLU *, PetscOptionItems, const char manpage[]);
/* gather / extract and factor A unless A, its state and the settings are unchanged */
PETSC_INTERN PetscErrorCode SGLUSetUp(SGLU *, Mat A);
/* y = op(A)^{-1} x (transpose: A^{-T}) */
PETSC_INTERN PetscErrorCode SGLUApply(SGLU *, Vec x, Vec y, PetscBool transpose);
/* Y = op(A)^{-1} X for dense X, Y (MATDENSE / MATDENSECUDA): one multi-right-hand-side solve
   in the local layout when X and Y live in the factors' memory, else column by column */
PETSC_INTERN PetscErrorCode SGLUMatApply(SGLU *, Mat X, Mat Y, PetscBool transpose);
PETSC_INTERN PetscErrorCode SGLUView(SGLU *, PetscViewer);

PETSC_INTERN PetscErrorCode PCCreate_DenseLU(PC);
