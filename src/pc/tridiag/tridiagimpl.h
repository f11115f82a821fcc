/* Shared core of the tridiagonal preconditioners: used by the PC type PCTRIDIAG
   (src/pc/tridiag/tridiag.c) and by the PCSHELL helpers PCShellSetTridiagonal() /
   PCShellSetLineSolve() (src/tri/trishell.c). The core owns the settings, the extracted
   coefficients and the execution contexts; the front ends only decide which matrix and
   DM the coefficients come from. */
#pragma once
#include <structgpu.h>
#include <petsc/private/pcimpl.h>
#include <petscdmda.h>
#include "sys/sgpetsc.h"

typedef struct {
  PC        pc;       /* owner (not referenced), for PetscInfo() */
  PetscBool allmodes; /* PCTRIDIAG (all settings apply) rather than a PCSHELL helper */

  /* settings */
  PCTridiagMode mode;
  PetscInt      dir;    /* LINES: 0,1,2 = x,y,z */
  PetscBool     exact;  /* LINES: solve every grid line exactly across the ranks it crosses */
  sg_tri_alg    alg;    /* requested algorithm */
  PetscReal     pivtol; /* <= 0: kernel default (100 eps) */

  /* source of the coefficients (referenced) and its state at extraction */
  Mat              A;
  DM               da; /* LINES only */
  PetscObjectId    Aid;
  PetscObjectState Astate;
  PCTridiagMode    xmode; /* settings the coefficients were extracted with */
  PetscInt         xdir;
  PetscBool        xexact;

  /* extracted coefficients: the 3n values dl | d | du of the local rows, in a Vec so
     the same storage can be converted in place to VECSEQCUDA and uploaded once */
  PetscInt  n, N, rstart;
  Vec       coef;
  PetscBool want_device; /* convert coef to CUDA at (re)extraction: the operator's vectors live there */

  /* LINES geometry: local box and the batch description of the line systems */
  PetscInt     dim, box[3], corner[3]; /* xm, ym, zm and xs, ys, zs */
  PetscInt     linelen, nlines;
  PetscInt     nplanes, nbatch; /* batches of nbatch systems per plane, nplanes planes */
  PetscInt     planestride, ld;
  sg_tri_layout layout;
  /* LINES exact: global index of the grid neighbours across the rank boundary along dir */
  PetscInt     gcorner, glen;           /* first grid index along dir of this box, grid size along dir */
  PetscInt     prevstart, prevlen;      /* first row and box length along dir of the previous rank (-1: none) */
  PetscInt     nextstart, nextlen;      /* the same for the next rank */
  MPI_Comm     lcomm;                   /* ranks sharing this rank's lines, ordered along dir */
  /* LINES exact over more than one rank (SPIKE with half-bandwidth 1, see SGTriSetUpSpikes):
     [0] host, [1] device (converted on the first apply with CUDA vectors) */
  Mat          spk[2];  /* S, n x 2 nlines: row r of line l holds v_r (column 2l) and w_r (2l+1) */
  Mat          ends[2]; /* G, 2 nlines x n: picks the first and last row of each segment */
  Vec          yend[2]; /* G y: first and last value of every local segment */
  Vec          xnb[2];  /* -(x_prev, x_next) of every local segment, input of S */
  PetscScalar *spkend;  /* v_first, v_last, w_first, w_last of every segment (4 nlines) */

  /* interface systems (GLOBAL: one over all ranks; LINES exact: one per line over the ranks of
     lcomm): k_r = min(segment length,2) equations per rank and system, plus 1 status slot */
  PetscMPIInt *kr, *cnt, *dsp, *wrank; /* per rank of the interface communicator; wrank: rank in A's */
  PetscInt     niface;                 /* equations per interface system */
  PetscInt     nsys;                   /* interface systems (lines) per rank */
  double      *ibuf;                   /* gathered interface data, sum_r cnt[r] values */
  double      *isys;                   /* one interface system: dl | d | du | rhs, 4 niface values */
  double      *isend;                  /* this rank's equations: 4 k nsys values + status */

  /* execution */
  sg_precision prec;
  SGCtxCache   ctxs;
  sg_tri_alg   alg_choice; /* AUTO resolved by sg_tri_choose at setup (host backend) */
  sg_tri_alg   alg_used;   /* reported by the last solve, SG_TRI_NUM_ALGS = not yet */
  PetscMemType mtype_used; /* memory type of the last PCApply vectors */
  PetscBool    applied;
  char         name[64];
} SGTri;

PETSC_INTERN PetscErrorCode SGTriCreate(PC, SGTri **);
PETSC_INTERN PetscErrorCode SGTriReset(SGTri *);
PETSC_INTERN PetscErrorCode SGTriDestroy(SGTri **);
/* options -pc_tridiag_* (inside PetscOptionsBegin/End or PetscOptionsHeadBegin/End);
   allowmode / allowdir select which settings may be changed from the options */
PETSC_INTERN PetscErrorCode SGTriSetFromOptions(SGTri *, PetscOptionItems, PetscBool allowmode, PetscBool allowlines, PetscBool allowdir);
/* extract the coefficients of A (rows laid out like Pmat; for LINES, da gives the grid)
   unless A, its state and the settings are unchanged since the last extraction */
PETSC_INTERN PetscErrorCode SGTriSetUp(SGTri *, Mat A, Mat Pmat, DM da);
PETSC_INTERN PetscErrorCode SGTriApply(SGTri *, Vec x, Vec y);
PETSC_INTERN PetscErrorCode SGTriView(SGTri *, PetscViewer);

PETSC_INTERN PetscErrorCode PCCreate_Tridiag(PC);
