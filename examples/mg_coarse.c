/*
  mg_coarse: Poisson's equation on a DMDA solved by CG (or FGMRES) with geometric multigrid, where
  the coarse-grid solve is chosen purely from options: StructGPU's dense LU (PCDENSELU) against
  PETSc's sparse LU, PCREDUNDANT or PCTELESCOPE. A StructGPU example, a test and a benchmark.

     -Laplace(u) = f  in (0,1)^d (d = 2, 3),  u = 0 on the boundary,  u = prod_i sin(pi x_i)

  Vertex-centred 5/7-point finite differences; the fine grid has (coarse_n - 1) 2^(L-1) + 1 points
  per direction for L = -pc_mg_levels (default 3) levels and -coarse_n (default 17), so the coarsest
  DMDA has coarse_n^d points. Coarse operators by re-discretisation (default) or -pc_mg_galerkin.

     mg_coarse -coarse_n 33 -mg_coarse_pc_type denselu                   StructGPU dense LU (gathered on rank 0)
     mg_coarse -coarse_n 33 -mg_coarse_pc_type lu                        PETSc sparse LU (1 rank)
     mg_coarse -coarse_n 33 -mg_coarse_pc_type redundant -mg_coarse_redundant_pc_type lu
     mpiexec -n 4 mg_coarse -mg_coarse_pc_type telescope -mg_coarse_pc_telescope_reduction_factor 4
                            -mg_coarse_telescope_pc_type lu             PETSc LU on one rank (the gathered analogue)
     ... -dm_vec_type cuda -dm_mat_type aijcusparse                     everything on the GPU

  It prints the iterations, the true relative residual, the error, and the time of the coarse solves
  (PCMG's per-level log events, -pc_mg_log, set here) and of KSPSolve (a log stage), after -warmup
  (default 1) untimed solves. It returns nonzero unless the KSP converged, the true residual is
  below -check_rtol (default 1e-8) and max |u_h - u| <= 2 h^2.

  Built twice: mg_coarse (linked with libstructgpu: registers the plugin with
  StructGPUInitializePackage()) and mg_coarse_petsc (PETSc only: -dll_append libstructgpu.so).
*/
static const char help[] = "Poisson on a DMDA with PCMG; the coarse solve from options (e.g. -mg_coarse_pc_type denselu).\n"
                           "  -dim 2|3 -coarse_n <17> -pc_mg_levels <3> -warmup <1> -check_rtol <1e-8>\n";

#include <petscdmda.h>
#include <petscksp.h>
#include <petsctime.h>
#if defined(MG_USE_STRUCTGPU_API)
  #include <structgpu.h>
#endif

typedef struct {
  PetscInt dim;
} AppCtx;

/* -Laplace on the DMDA of ksp's current level, scaled by the cell volume h^d (finite-element scaling,
   so that re-discretised coarse operators match PCMG's Galerkin ones R A P with R = P^T): interior rows
   the (1/h^2) stencil with the couplings to boundary nodes dropped (u = 0 there), boundary rows the
   interior diagonal alone: symmetric positive definite */
static PetscErrorCode ComputeMatrix(KSP ksp, Mat J, Mat A, void *ctx)
{
  DM            da;
  DMDALocalInfo info;
  PetscReal     ih2[3] = {0, 0, 0}, diag = 0, vol; /* vol/h^2 per direction, cell volume */

  PetscFunctionBeginUser;
  (void)J;
  (void)ctx;
  PetscCall(KSPGetDM(ksp, &da));
  PetscCall(DMDAGetLocalInfo(da, &info));
  ih2[0] = (info.mx - 1.0) * (info.mx - 1.0);
  ih2[1] = (info.my - 1.0) * (info.my - 1.0);
  if (info.dim == 3) ih2[2] = (info.mz - 1.0) * (info.mz - 1.0);
  vol = 1.0 / ((info.mx - 1.0) * (info.my - 1.0) * (info.dim == 3 ? info.mz - 1.0 : 1.0));
  for (PetscInt d = 0; d < info.dim; d++) ih2[d] *= vol;
  for (PetscInt d = 0; d < info.dim; d++) diag += 2 * ih2[d];
  for (PetscInt k = info.zs; k < info.zs + info.zm; k++)
    for (PetscInt j = info.ys; j < info.ys + info.ym; j++)
      for (PetscInt i = info.xs; i < info.xs + info.xm; i++) {
        const PetscInt m[3] = {info.mx, info.my, info.mz}, p[3] = {i, j, k};
        MatStencil     row  = {.k = k, .j = j, .i = i}, col[7];
        PetscScalar    v[7];
        PetscInt       n   = 1;
        PetscBool      bnd = PETSC_FALSE;

        for (PetscInt d = 0; d < info.dim; d++) bnd = (PetscBool)(bnd || p[d] == 0 || p[d] == m[d] - 1);
        col[0] = row;
        v[0]   = diag;
        for (PetscInt d = 0; d < info.dim && !bnd; d++)
          for (PetscInt s = -1; s <= 1; s += 2) {
            const PetscInt q = p[d] + s;
            MatStencil     c = row;

            if (q == 0 || q == m[d] - 1) continue; /* boundary neighbour: u = 0 */
            if (d == 0) c.i = q;
            else if (d == 1) c.j = q;
            else c.k = q;
            col[n] = c;
            v[n++] = -ih2[d];
          }
        PetscCall(MatSetValuesStencil(A, 1, &row, n, col, v, INSERT_VALUES));
      }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* f = h^d d pi^2 prod sin(pi x_i) at interior nodes (zero on the boundary; scaled like the operator);
   u = prod sin(pi x_i) */
static PetscErrorCode FillExact(DM da, Vec f, Vec u)
{
  DMDALocalInfo info;
  PetscScalar  *pf, *pu;
  PetscReal     vol;

  PetscFunctionBeginUser;
  PetscCall(DMDAGetLocalInfo(da, &info));
  vol = 1.0 / ((info.mx - 1.0) * (info.my - 1.0) * (info.dim == 3 ? info.mz - 1.0 : 1.0));
  PetscCall(VecGetArrayWrite(f, &pf)); /* natural local ordering: i fastest, then j, k */
  PetscCall(VecGetArrayWrite(u, &pu));
  for (PetscInt k = info.zs, r = 0; k < info.zs + info.zm; k++)
    for (PetscInt j = info.ys; j < info.ys + info.ym; j++)
      for (PetscInt i = info.xs; i < info.xs + info.xm; i++, r++) {
        const PetscReal x[3] = {i / (info.mx - 1.0), j / (info.my - 1.0), info.dim == 3 ? k / (info.mz - 1.0) : 0.5};
        PetscReal       s    = 1;
        PetscBool       bnd  = (PetscBool)(i == 0 || j == 0 || i == info.mx - 1 || j == info.my - 1 || (info.dim == 3 && (k == 0 || k == info.mz - 1)));

        for (PetscInt d = 0; d < info.dim; d++) s *= PetscSinReal(PETSC_PI * x[d]);
        pu[r] = bnd ? 0 : s;
        pf[r] = bnd ? 0 : vol * info.dim * PETSC_PI * PETSC_PI * s;
      }
  PetscCall(VecRestoreArrayWrite(f, &pf));
  PetscCall(VecRestoreArrayWrite(u, &pu));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ComputeRHS(KSP ksp, Vec b, void *ctx)
{
  DM  da;
  Vec u;

  PetscFunctionBeginUser;
  (void)ctx;
  PetscCall(KSPGetDM(ksp, &da));
  PetscCall(VecDuplicate(b, &u));
  PetscCall(FillExact(da, b, u));
  PetscCall(VecDestroy(&u));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* set -name value unless the user gave -name */
static PetscErrorCode DefaultOption(const char name[], const char value[])
{
  PetscBool set;

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsHasName(NULL, NULL, name, &set));
  if (!set) PetscCall(PetscOptionsSetValue(NULL, name, value));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the coarse solver in words ("denselu", "redundant+lu", "telescope+lu", ...) */
static PetscErrorCode DescribeCoarse(PC pcc, char desc[], size_t len, PetscBool *isdenselu)
{
  PCType    type, inner = NULL;
  PetscBool red, tel;
  KSP       ik = NULL;
  PC        ipc;

  PetscFunctionBeginUser;
  PetscCall(PCGetType(pcc, &type));
  PetscCall(PetscObjectTypeCompare((PetscObject)pcc, PCREDUNDANT, &red));
  PetscCall(PetscObjectTypeCompare((PetscObject)pcc, PCTELESCOPE, &tel));
  if (red) PetscCall(PCRedundantGetKSP(pcc, &ik));
  if (tel) PetscCall(PCTelescopeGetKSP(pcc, &ik)); /* NULL on the ranks left out */
  if (ik) {
    PetscCall(KSPGetPC(ik, &ipc));
    PetscCall(PCGetType(ipc, &inner));
  }
  PetscCall(PetscStrcmp(type, "denselu", isdenselu));
  if (inner) PetscCall(PetscSNPrintf(desc, len, "%s+%s", type, inner));
  else PetscCall(PetscSNPrintf(desc, len, "%s", type));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* this rank's time and count of a log event in a stage (0 if the event does not exist) */
static PetscErrorCode EventTime(PetscLogStage stage, const char name[], PetscLogDouble *time, PetscInt *count)
{
  PetscLogEvent      ev = -1;
  PetscEventPerfInfo info;

  PetscFunctionBeginUser;
  *time  = 0;
  *count = 0;
  PetscCall(PetscLogEventGetId(name, &ev));
  if (ev < 0 || stage < 0) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscLogEventGetPerfInfo(stage, ev, &info));
  *time  = info.time;
  *count = info.count;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* time of the LU factorizations (StructGPU's SGLUFactor, PETSc's MatLUFactorSym/Num) in any of the
   given stages: PCREDUNDANT factors at the first KSPSolve, not at KSPSetUp */
static PetscErrorCode FactorTime(const PetscLogStage stages[], PetscInt nstages, PetscLogDouble *time)
{
  const char *names[] = {"SGLUFactor", "MatLUFactorSym", "MatLUFactorNum"};

  PetscFunctionBeginUser;
  *time = 0;
  for (PetscInt s = 0; s < nstages; s++)
    for (PetscInt e = 0; e < 3; e++) {
      PetscLogDouble t;
      PetscInt       c;

      PetscCall(EventTime(stages[s], names[e], &t, &c));
      *time += t;
    }
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  AppCtx             app = {2};
  PetscInt           cn = 17, levels = 3, warmup = 1, M, its, ncoarse, ncoarse0, nc_setup, N, Nc;
  PetscReal          check_rtol = 1e-8, rnorm, bnorm, err, h;
  PetscMPIInt        size;
  PetscLogStage      st_setup, st_solve, st_apply = -1;
  PetscLogDouble     t0, t1, tcoarse, tcoarse0, tcsetup, tsetup, tfactor;
  DM                 da;
  KSP                ksp, kc;
  PC                 pc, pcc;
  Mat                A, Ac;
  Vec                x, b, r, u;
  KSPType            ktype;
  VecType            vt;
  KSPConvergedReason reason;
  PetscBool          denselu, ongpu, ok;
  char               desc[64], lv[16];

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
#if defined(MG_USE_STRUCTGPU_API)
  PetscCall(StructGPUInitializePackage()); /* linked with libstructgpu: -pc_type denselu works from here on */
#endif
  PetscCall(PetscLogDefaultBegin()); /* the coarse solve times come from the log */
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "mg_coarse options", "");
  PetscCall(PetscOptionsRangeInt("-dim", "Space dimension", "", app.dim, &app.dim, NULL, 2, 3));
  PetscCall(PetscOptionsInt("-coarse_n", "Grid points per direction of the coarsest level", "", cn, &cn, NULL));
  PetscCall(PetscOptionsInt("-pc_mg_levels", "Multigrid levels (also read by PCMG)", "", levels, &levels, NULL));
  PetscCall(PetscOptionsInt("-warmup", "Untimed solves before the timed one", "", warmup, &warmup, NULL));
  PetscCall(PetscOptionsReal("-check_rtol", "Fail unless ||b - A x|| / ||b|| is below this", "", check_rtol, &check_rtol, NULL));
  PetscOptionsEnd();
  PetscCheck(cn >= 3 && levels >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "Need -coarse_n >= 3 and -pc_mg_levels >= 1");
  M = (cn - 1) * (1 << (levels - 1)) + 1;

  /* solver defaults (all can be overridden): CG + PCMG, Chebyshev/Jacobi smoothing, per-level logging */
  PetscCall(PetscSNPrintf(lv, sizeof(lv), "%" PetscInt_FMT, levels));
  PetscCall(DefaultOption("-pc_mg_levels", lv));
  PetscCall(DefaultOption("-mg_levels_ksp_type", "chebyshev"));
  PetscCall(DefaultOption("-mg_levels_pc_type", "jacobi"));
  PetscCall(PetscOptionsSetValue(NULL, "-pc_mg_log", NULL));

  if (app.dim == 2) PetscCall(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, M, M, PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, &da));
  else PetscCall(DMDACreate3d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, M, M, M, PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, NULL, &da));
  PetscCall(DMSetFromOptions(da));
  PetscCall(DMSetUp(da));
  PetscCall(DMDASetUniformCoordinates(da, 0, 1, 0, 1, 0, 1));

  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetDM(ksp, da));
  PetscCall(KSPSetComputeOperators(ksp, ComputeMatrix, &app));
  PetscCall(KSPSetComputeRHS(ksp, ComputeRHS, &app));
  PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED)); /* rtol on the true residual (CG and FGMRES) */
  PetscCall(KSPSetTolerances(ksp, 1e-10, PETSC_CURRENT, PETSC_CURRENT, 200));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCMG));
  PetscCall(KSPSetFromOptions(ksp));

  PetscCall(PetscLogStageRegister("MG setup", &st_setup));
  PetscCall(PetscLogStageRegister("MG solve", &st_solve));
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  PetscCall(PetscTime(&t0));
  PetscCall(PetscLogStagePush(st_setup));
  PetscCall(KSPSetUp(ksp));
  PetscCall(PetscLogStagePop());
  PetscCall(PetscTime(&t1));
  tsetup = t1 - t0;
  for (PetscInt w = 0; w < warmup; w++) PetscCall(KSPSolve(ksp, NULL, NULL));
  /* PCMG's -pc_mg_log times its applies in its own stage "MG Apply": take the timed solve's share */
  PetscCall(PetscLogStageGetId("MG Apply", &st_apply));
  PetscCall(EventTime(st_apply, "MGSmooth Level 0", &tcoarse0, &ncoarse0));
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  PetscCall(PetscTime(&t0));
  PetscCall(PetscLogStagePush(st_solve));
  PetscCall(KSPSolve(ksp, NULL, NULL));
  PetscCall(PetscLogStagePop());
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  PetscCall(PetscTime(&t1));

  /* the coarse level: size, solver, times (max over ranks) */
  PetscCall(PCMGGetCoarseSolve(pc, &kc));
  PetscCall(KSPGetPC(kc, &pcc));
  PetscCall(KSPGetOperators(kc, NULL, &Ac));
  PetscCall(MatGetSize(Ac, &Nc, NULL));
  PetscCall(DescribeCoarse(pcc, desc, sizeof(desc), &denselu));
  PetscCall(EventTime(st_apply, "MGSmooth Level 0", &tcoarse, &ncoarse));
  tcoarse -= tcoarse0;
  ncoarse -= ncoarse0;
  PetscCall(EventTime(st_setup, "MGSetup Level 0", &tcsetup, &nc_setup));
  {
    const PetscLogStage stages[4] = {0, st_setup, st_apply, st_solve};

    PetscCall(FactorTime(stages, 4, &tfactor));
  }
  PetscCallMPI(MPIU_Allreduce(MPI_IN_PLACE, &tfactor, 1, MPIU_PETSCLOGDOUBLE, MPI_MAX, PETSC_COMM_WORLD));
  PetscCallMPI(MPIU_Allreduce(MPI_IN_PLACE, &tcoarse, 1, MPIU_PETSCLOGDOUBLE, MPI_MAX, PETSC_COMM_WORLD));
  PetscCallMPI(MPIU_Allreduce(MPI_IN_PLACE, &tcsetup, 1, MPIU_PETSCLOGDOUBLE, MPI_MAX, PETSC_COMM_WORLD));

  /* self-check: true residual and error */
  PetscCall(KSPGetSolution(ksp, &x));
  PetscCall(KSPGetRhs(ksp, &b));
  PetscCall(KSPGetOperators(ksp, &A, NULL));
  PetscCall(MatGetSize(A, &N, NULL));
  PetscCall(VecDuplicate(x, &r));
  PetscCall(VecDuplicate(x, &u));
  PetscCall(MatMult(A, x, r));
  PetscCall(VecAYPX(r, -1.0, b));
  PetscCall(VecNorm(r, NORM_2, &rnorm));
  PetscCall(VecNorm(b, NORM_2, &bnorm));
  PetscCall(FillExact(da, r, u));
  PetscCall(VecAXPY(u, -1.0, x));
  PetscCall(VecNorm(u, NORM_INFINITY, &err));
  PetscCall(KSPGetIterationNumber(ksp, &its));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  PetscCall(KSPGetType(ksp, &ktype));
  PetscCall(DMGetVecType(da, &vt));
  PetscCall(PetscStrcmpAny(vt, &ongpu, VECCUDA, VECSEQCUDA, VECMPICUDA, ""));
  h = 1.0 / (M - 1);

  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "mg_coarse: %" PetscInt_FMT "D grid %" PetscInt_FMT "^%" PetscInt_FMT " (%" PetscInt_FMT " unknowns), %" PetscInt_FMT " levels, coarse grid %" PetscInt_FMT " unknowns, %d rank(s), %s vectors\n", app.dim, M, app.dim, N, levels, Nc, size, ongpu ? "CUDA" : "host"));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "mg_coarse: coarse solver %s\n", desc));
  if (denselu) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "StructGPU dense LU coarse solve %s\n", ongpu ? "on the GPU (CUDA vectors)" : "on the host"));
  else PetscCall(PetscPrintf(PETSC_COMM_WORLD, "StructGPU: not used by the coarse solve\n"));
#if defined(MG_USE_STRUCTGPU_API)
  if (denselu) {
    PCDenseLULayout layout;

    PetscCall(PCDenseLUGetLayout(pcc, &layout));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "mg_coarse: PCDENSELU layout %s (PCDenseLUGetLayout)\n", PCDenseLULayouts[layout]));
  }
#endif
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "mg_coarse: %s %s in %" PetscInt_FMT " iterations, true relative residual %.3e, max error %.3e = %.3f h^2\n", ktype, KSPConvergedReasons[reason], its, (double)(rnorm / bnorm), (double)err, (double)(err / (h * h))));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "mg_coarse: %" PetscInt_FMT " coarse solves in the timed KSPSolve, %.4e s per coarse solve; LU factorization %.4e s; coarse level setup %.4e s (KSPSetUp %.4e s); KSPSolve %.4e s\n", ncoarse, ncoarse ? (double)(tcoarse / ncoarse) : 0.0, (double)tfactor, (double)tcsetup, (double)tsetup, (double)(t1 - t0)));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "RESULT dim=%" PetscInt_FMT " coarse_n=%" PetscInt_FMT " np=%d vec=%s coarse=%s its=%" PetscInt_FMT " coarse_solves=%" PetscInt_FMT " coarse_apply_s=%.4e factor_s=%.4e coarse_setup_s=%.4e solve_s=%.4e\n", app.dim, Nc, size, ongpu ? "cuda" : "host", desc, its, ncoarse, ncoarse ? (double)(tcoarse / ncoarse) : 0.0, (double)tfactor, (double)tcsetup, (double)(t1 - t0)));
  ok = (PetscBool)(reason > 0 && rnorm <= check_rtol * bnorm && err <= 2 * h * h);
  if (!ok) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "mg_coarse: FAILED (converged %s, residual %.3e vs %.1e, error %.3e vs 2 h^2 = %.3e)\n", reason > 0 ? "yes" : "no", (double)(rnorm / bnorm), (double)check_rtol, (double)err, (double)(2 * h * h)));

  PetscCall(VecDestroy(&r));
  PetscCall(VecDestroy(&u));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(DMDestroy(&da));
  PetscCall(PetscFinalize());
  return ok ? 0 : 1;
}
