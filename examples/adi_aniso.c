/*
  adi_aniso: anisotropic diffusion on a structured grid, a StructGPU example and test.

    -div(K grad u) = f   in the unit square (-dim 2) or cube (-dim 3),   u = g on the boundary,

  K = [[kx, k12, 0], [k12, ky, 0], [0, 0, kz]] with strong anisotropy, chosen by -coef:
    const    K = diag(1, eps, eps2)                       strong coupling along x
    rotated  K = R(theta) diag(1, eps) R(theta)^T (+ eps2) strong direction at angle theta in x-y
    swap     kx = eps + (1-eps) s(x), ky = 1 - (1-eps) s(x), kz = eps2, with the smooth step
             s(x) = (1 + tanh((x - 1/2)/w))/2: strong along y for x < 1/2, along x for x > 1/2
  Manufactured solution u = sin(pi x) sin(pi y) [sin(pi z)] + x y [z], f and g computed from it.

  Discretisation: vertex-centred finite differences on a DMDA with M x N [x P] nodes, h = 1/(M-1)
  per direction, second order: conservative 3-point differences for the diagonal terms (kx at the
  half points x_{i+-1/2}), the 4-corner central difference for the mixed term 2 k12 u_xy (box
  stencil, -coef rotated only). Dirichlet nodes get an identity row (scaled like an interior
  diagonal) and their values are moved to the right-hand side, so the matrix stays symmetric.
  The matrix comes from DMCreateMatrix() and is filled with MatSetValuesStencil(), so
  -dm_mat_type aijcusparse -dm_vec_type cuda put the whole solve on the GPU.

  The preconditioner is chosen on the command line; the example itself calls nothing special:
    -pc_type tridiag -pc_tridiag_mode lines -pc_tridiag_direction 0   line relaxation along x
  -use_shell_api instead calls PCShellSetLineSolve(pc, da, -line_dir) (StructGPU's PCSHELL helper);
  multigrid with line smoothers also comes from options alone: -pc_type mg -pc_mg_galerkin
  -mg_levels_pc_type tridiag -mg_levels_pc_tridiag_mode lines (the levels get coarsened DMDAs);
  -adi composes one line solve per direction in -adi_dirs (default x then y) multiplicatively
  (PCCOMPOSITE of PCTRIDIAG sub-PCs, options prefixes -sub_0_, -sub_1_, ...).

  The program checks itself: it returns nonzero unless the KSP converged (in at most
  -max_its_check iterations, if given) and the maximum nodal error is <= -err_factor * h^2
  (h the largest mesh width; default factor 2, measured constants are 0.8-1.0).

  Built against include/structgpu.h (-DADI_USE_STRUCTGPU_API=1, linked with libstructgpu) it
  registers the plugin itself and uses the C API; built against PETSc alone it reaches StructGPU
  only through options, e.g. -dll_append /path/to/libstructgpu.so -pc_type tridiag ...
*/
static char help[] = "Anisotropic diffusion -div(K grad u) = f on a 2D/3D DMDA with a manufactured solution.\n"
                     "Solver and preconditioner from the options, e.g.\n"
                     "  -pc_type tridiag -pc_tridiag_mode lines -pc_tridiag_direction 0   (StructGPU line relaxation)\n"
                     "  -adi                      x-lines then y-lines as a multiplicative PCCOMPOSITE\n"
                     "  -use_shell_api            PCShellSetLineSolve(pc, da, -line_dir)\n"
                     "  -dm_vec_type cuda -dm_mat_type aijcusparse   everything on the GPU\n"
                     "Grid size: -da_grid_x/-da_grid_y/-da_grid_z, or -n for all directions.\n\n";

#include <petscdmda.h>
#include <petscksp.h>

#ifndef ADI_USE_STRUCTGPU_API
  #define ADI_USE_STRUCTGPU_API 0
#endif
#if ADI_USE_STRUCTGPU_API
  #include <structgpu.h>
#endif

typedef enum {
  COEF_CONST,
  COEF_ROTATED,
  COEF_SWAP
} CoefType;
static const char *const CoefTypes[] = {"const", "rotated", "swap", "CoefType", "COEF_", NULL};

typedef struct {
  PetscInt  dim;
  CoefType  coef;
  PetscReal eps, eps2; /* ky (or the weak end of the swap) and kz */
  PetscReal theta;     /* rotation angle in degrees (-coef rotated) */
  PetscReal w;         /* width of the smooth step (-coef swap) */
  PetscReal c, s;      /* cos(theta), sin(theta) */
} AppCtx;

/* Coefficients at x (they depend on x only): kx, d kx/dx, ky, k12, kz */
static void Coef(const AppCtx *ctx, PetscReal x, PetscReal *kx, PetscReal *dkx, PetscReal *ky, PetscReal *k12, PetscReal *kz)
{
  const PetscReal e = ctx->eps;

  *dkx = 0;
  *k12 = 0;
  *kz  = ctx->eps2;
  switch (ctx->coef) {
  case COEF_CONST:
    *kx = 1;
    *ky = e;
    break;
  case COEF_ROTATED:
    *kx  = ctx->c * ctx->c + e * ctx->s * ctx->s;
    *ky  = ctx->s * ctx->s + e * ctx->c * ctx->c;
    *k12 = (1 - e) * ctx->c * ctx->s;
    break;
  case COEF_SWAP: {
    const PetscReal t = PetscTanhReal((x - 0.5) / ctx->w), st = 0.5 * (1 + t), dst = 0.5 * (1 - t * t) / ctx->w;
    *kx  = e + (1 - e) * st;
    *dkx = (1 - e) * dst;
    *ky  = 1 - (1 - e) * st;
  } break;
  }
}

/* Exact solution u = sin(pi x) sin(pi y) [sin(pi z)] + x y [z] (dim 2 [3]) */
static PetscReal Exact(const AppCtx *ctx, PetscReal x, PetscReal y, PetscReal z)
{
  if (ctx->dim == 2) return PetscSinReal(PETSC_PI * x) * PetscSinReal(PETSC_PI * y) + x * y;
  return PetscSinReal(PETSC_PI * x) * PetscSinReal(PETSC_PI * y) * PetscSinReal(PETSC_PI * z) + x * y * z;
}

/* f = -div(K grad u) = -(kx' u_x + kx u_xx + 2 k12 u_xy + ky u_yy + kz u_zz) for the exact solution */
static PetscReal Forcing(const AppCtx *ctx, PetscReal x, PetscReal y, PetscReal z)
{
  const PetscReal pi = PETSC_PI, sx = PetscSinReal(pi * x), cx = PetscCosReal(pi * x), sy = PetscSinReal(pi * y), cy = PetscCosReal(pi * y);
  const PetscReal sz = ctx->dim == 3 ? PetscSinReal(pi * z) : 1, zz = ctx->dim == 3 ? z : 1;
  const PetscReal S = sx * sy * sz, ux = pi * cx * sy * sz + y * zz, uxy = pi * pi * cx * cy * sz + zz, uxx = -pi * pi * S;
  PetscReal       kx, dkx, ky, k12, kz;

  Coef(ctx, x, &kx, &dkx, &ky, &k12, &kz);
  return -(dkx * ux + kx * uxx + 2 * k12 * uxy + ky * uxx + (ctx->dim == 3 ? kz * uxx : 0));
}

typedef struct {
  PetscInt  di, dj, dk; /* offset of the neighbour */
  PetscReal a;          /* matrix entry coupling to it */
} Neighbour;

/* Assemble A (5/7-point, 9/19-point stencil for rotated K), b and the exact nodal solution */
static PetscErrorCode Assemble(DM da, const AppCtx *ctx, Mat A, Vec b, Vec uex)
{
  DMDALocalInfo info;
  PetscReal     hx, hy, hz, bdiag;
  void         *barr, *uarr;

  PetscFunctionBeginUser;
  PetscCall(DMDAGetLocalInfo(da, &info));
  hx    = 1.0 / (info.mx - 1);
  hy    = 1.0 / (info.my - 1);
  hz    = ctx->dim == 3 ? 1.0 / (info.mz - 1) : 1;
  bdiag = 2 / (hx * hx) + 2 / (hy * hy) + (ctx->dim == 3 ? 2 / (hz * hz) : 0); /* Dirichlet rows: same scale as a Laplacian diagonal */
  PetscCall(DMDAVecGetArray(da, b, &barr));
  PetscCall(DMDAVecGetArray(da, uex, &uarr));
  for (PetscInt k = info.zs; k < info.zs + info.zm; k++) {
    for (PetscInt j = info.ys; j < info.ys + info.ym; j++) {
      for (PetscInt i = info.xs; i < info.xs + info.xm; i++) {
        const PetscReal x = i * hx, y = j * hy, z = ctx->dim == 3 ? k * hz : 0;
        const PetscBool bnd = (PetscBool)(i == 0 || j == 0 || i == info.mx - 1 || j == info.my - 1 || (ctx->dim == 3 && (k == 0 || k == info.mz - 1)));
        MatStencil      row = {.k = k, .j = j, .i = i}, col[19];
        PetscScalar     val[19], rhs;
        PetscInt        n = 0;

        if (bnd) {
          col[0] = row;
          val[0] = bdiag;
          n      = 1;
          rhs    = bdiag * Exact(ctx, x, y, z);
        } else {
          PetscReal kx, dkx, ky, k12, kz, kxw, kxe, dummy, diag = 0;
          Neighbour nb[10];
          PetscInt nn = 0;

          Coef(ctx, x, &kx, &dkx, &ky, &k12, &kz);
          Coef(ctx, x - 0.5 * hx, &kxw, &dummy, &dummy, &dummy, &dummy);
          Coef(ctx, x + 0.5 * hx, &kxe, &dummy, &dummy, &dummy, &dummy);
          /* off-diagonal couplings: -(coefficient), the diagonal collects the 3-point sums */
          nb[nn++] = (Neighbour){-1, 0, 0, -kxw / (hx * hx)};
          nb[nn++] = (Neighbour){1, 0, 0, -kxe / (hx * hx)};
          nb[nn++] = (Neighbour){0, -1, 0, -ky / (hy * hy)};
          nb[nn++] = (Neighbour){0, 1, 0, -ky / (hy * hy)};
          diag = (kxw + kxe) / (hx * hx) + 2 * ky / (hy * hy);
          if (ctx->dim == 3) {
            nb[nn++] = (Neighbour){0, 0, -1, -kz / (hz * hz)};
            nb[nn++] = (Neighbour){0, 0, 1, -kz / (hz * hz)};
            diag += 2 * kz / (hz * hz);
          }
          if (k12 != 0) { /* -2 k12 u_xy ~ -2 k12 (u_NE - u_SE - u_NW + u_SW) / (4 hx hy) */
            const PetscReal m = k12 / (2 * hx * hy);
            nb[nn++]          = (Neighbour){1, 1, 0, -m};
            nb[nn++]          = (Neighbour){-1, -1, 0, -m};
            nb[nn++]          = (Neighbour){1, -1, 0, m};
            nb[nn++]          = (Neighbour){-1, 1, 0, m};
          }
          rhs    = Forcing(ctx, x, y, z);
          col[0] = row;
          val[0] = diag;
          n      = 1;
          for (PetscInt q = 0; q < nn; q++) {
            const PetscInt ii = i + nb[q].di, jj = j + nb[q].dj, kk = k + nb[q].dk;
            const PetscBool nbnd = (PetscBool)(ii == 0 || jj == 0 || ii == info.mx - 1 || jj == info.my - 1 || (ctx->dim == 3 && (kk == 0 || kk == info.mz - 1)));

            if (nbnd) rhs -= nb[q].a * Exact(ctx, ii * hx, jj * hy, ctx->dim == 3 ? kk * hz : 0); /* known Dirichlet value */
            else {
              col[n].i = ii;
              col[n].j = jj;
              col[n].k = kk;
              val[n++] = nb[q].a;
            }
          }
        }
        PetscCall(MatSetValuesStencil(A, 1, &row, n, col, val, INSERT_VALUES));
        if (ctx->dim == 2) {
          ((PetscScalar **)barr)[j][i] = rhs;
          ((PetscScalar **)uarr)[j][i] = Exact(ctx, x, y, 0);
        } else {
          ((PetscScalar ***)barr)[k][j][i] = rhs;
          ((PetscScalar ***)uarr)[k][j][i] = Exact(ctx, x, y, z);
        }
      }
    }
  }
  PetscCall(DMDAVecRestoreArray(da, b, &barr));
  PetscCall(DMDAVecRestoreArray(da, uex, &uarr));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* -adi: PCCOMPOSITE (multiplicative) of one PCTRIDIAG line solve per direction in dirs[] */
static PetscErrorCode SetUpADI(PC pc, PetscInt ndir, const PetscInt dirs[])
{
  PetscFunctionBeginUser;
  PetscCall(PCSetType(pc, PCCOMPOSITE));
  PetscCall(PCCompositeSetType(pc, PC_COMPOSITE_MULTIPLICATIVE));
  for (PetscInt d = 0; d < ndir; d++) {
    PC sub;

    PetscCall(PCCompositeAddPCType(pc, "tridiag")); /* PCTRIDIAG, named by string so that -dll_append works */
    PetscCall(PCCompositeGetPC(pc, d, &sub));
#if ADI_USE_STRUCTGPU_API
    PetscCall(PCTridiagSetMode(sub, PC_TRIDIAG_LINES));
    PetscCall(PCTridiagSetDirection(sub, dirs[d]));
#else
    { /* no header: the same settings as option defaults for the sub-PC prefix (-sub_<d>_), unless given */
      const char *prefix;
      char        name[256], value[16];
      PetscBool   set;

      PetscCall(PCGetOptionsPrefix(sub, &prefix));
      PetscCall(PetscSNPrintf(name, sizeof(name), "-%spc_tridiag_mode", prefix ? prefix : ""));
      PetscCall(PetscOptionsHasName(NULL, NULL, name, &set));
      if (!set) PetscCall(PetscOptionsSetValue(NULL, name, "lines"));
      PetscCall(PetscSNPrintf(name, sizeof(name), "-%spc_tridiag_direction", prefix ? prefix : ""));
      PetscCall(PetscSNPrintf(value, sizeof(value), "%" PetscInt_FMT, dirs[d]));
      PetscCall(PetscOptionsHasName(NULL, NULL, name, &set));
      if (!set) PetscCall(PetscOptionsSetValue(NULL, name, value));
    }
#endif
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Number of StructGPU preconditioners (PCTRIDIAG, or our PCSHELL) in pc, looking into PCCOMPOSITE
   and into the smoothers of PCMG */
static PetscErrorCode CountStructGPU(PC pc, PetscBool shellapi, PetscInt *count)
{
  PetscBool is;

  PetscFunctionBeginUser;
  *count = 0;
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, "tridiag", &is));
  if (!is && shellapi) PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCSHELL, &is));
  if (is) *count = 1;
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCCOMPOSITE, &is));
  if (is) {
    PetscInt n;

    PetscCall(PCCompositeGetNumberPC(pc, &n));
    for (PetscInt i = 0; i < n; i++) {
      PC       sub;
      PetscInt c;

      PetscCall(PCCompositeGetPC(pc, i, &sub));
      PetscCall(CountStructGPU(sub, PETSC_FALSE, &c));
      *count += c;
    }
  }
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCMG, &is));
  if (is) {
    PetscInt nlev;

    PetscCall(PCMGGetLevels(pc, &nlev));
    for (PetscInt l = 1; l < nlev; l++) { /* level 0 is the coarse solve */
      KSP      smoother;
      PC       sub;
      PetscInt c;

      PetscCall(PCMGGetSmoother(pc, l, &smoother));
      PetscCall(KSPGetPC(smoother, &sub));
      PetscCall(CountStructGPU(sub, PETSC_FALSE, &c));
      *count += c;
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  AppCtx             ctx = {.dim = 2, .coef = COEF_CONST, .eps = 1e-3, .eps2 = -1, .theta = 30, .w = 0.1};
  PetscInt           maxits = -1, n = -1, linedir = 0, adidirs[3] = {0, 1, 2}, nadi = 3, its, nsg;
  PetscBool          dirsset, adi = PETSC_FALSE, shellapi = PETSC_FALSE, ongpu, failed = PETSC_FALSE;
  PetscReal          errfac = 2, errmax, errl2, h, rnorm;
  DM                 da;
  Mat                A;
  Vec                x, b, uex;
  KSP                ksp;
  PC                 pc;
  PCType             pctype;
  KSPType            ksptype;
  VecType            vtype;
  DMDALocalInfo      info;
  KSPConvergedReason reason;
  PetscLogStage      stage[2];
  PetscLogDouble     t0, t1, t2, t3;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
#if ADI_USE_STRUCTGPU_API
  PetscCall(StructGPUInitializePackage()); /* linked with libstructgpu: register PCTRIDIAG ourselves */
#endif
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "adi_aniso: anisotropic diffusion options", "");
  PetscCall(PetscOptionsRangeInt("-dim", "Dimension of the domain", "", ctx.dim, &ctx.dim, NULL, 2, 3));
  PetscCall(PetscOptionsInt("-n", "Grid nodes per direction (boundary included); -da_grid_x etc. override", "", n, &n, NULL));
  PetscCall(PetscOptionsEnum("-coef", "Diffusion tensor", "", CoefTypes, (PetscEnum)ctx.coef, (PetscEnum *)&ctx.coef, NULL));
  PetscCall(PetscOptionsReal("-eps", "Weak diffusivity (ky for const, K's minor axis for rotated, weak end of swap)", "", ctx.eps, &ctx.eps, NULL));
  PetscCall(PetscOptionsReal("-eps2", "kz in 3D (default: eps)", "", ctx.eps2, &ctx.eps2, NULL));
  PetscCall(PetscOptionsReal("-theta", "Angle of the strong direction in degrees (-coef rotated)", "", ctx.theta, &ctx.theta, NULL));
  PetscCall(PetscOptionsReal("-swap_width", "Width of the step in x between y-strong and x-strong (-coef swap)", "", ctx.w, &ctx.w, NULL));
  PetscCall(PetscOptionsBool("-adi", "Multiplicative PCCOMPOSITE of PCTRIDIAG line solves along -adi_dirs", "", adi, &adi, NULL));
  PetscCall(PetscOptionsIntArray("-adi_dirs", "Line directions for -adi, in order (0=x,1=y,2=z)", "", adidirs, &nadi, &dirsset));
  PetscCall(PetscOptionsBool("-use_shell_api", "Use PCShellSetLineSolve(pc, da, -line_dir) from structgpu.h", "PCShellSetLineSolve", shellapi, &shellapi, NULL));
  PetscCall(PetscOptionsRangeInt("-line_dir", "Line direction for -use_shell_api (0=x,1=y,2=z)", "", linedir, &linedir, NULL, 0, 2));
  if (ctx.coef == COEF_SWAP) errfac *= PetscMax(1, PetscSqr(0.1 / ctx.w)); /* the error constant grows like |kx''| ~ 1/w^2 */
  PetscCall(PetscOptionsInt("-max_its_check", "Fail if KSP needs more iterations than this (tests that the preconditioner works; < 0: no check)", "", maxits, &maxits, NULL));
  PetscCall(PetscOptionsReal("-err_factor", "Fail unless max error <= err_factor * h^2 (default 2, times (0.1/swap_width)^2 if that is > 1)", "", errfac, &errfac, NULL));
  PetscOptionsEnd();
  if (ctx.eps2 < 0) ctx.eps2 = ctx.eps;
  if (n < 0) n = ctx.dim == 2 ? 65 : 17;
  if (!dirsset) nadi = 2; /* default: x-lines then y-lines */
  PetscCheck(n >= 3, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-n %" PetscInt_FMT " must be >= 3", n);
  PetscCheck(ctx.eps > 0 && ctx.eps2 > 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-eps and -eps2 must be positive");
  PetscCheck(ctx.w > 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-swap_width must be positive");
  PetscCheck(!(adi && shellapi), PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP, "-adi and -use_shell_api are alternatives");
  PetscCheck(nadi >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-adi_dirs needs at least one direction");
  for (PetscInt d = 0; d < nadi; d++) PetscCheck(adidirs[d] >= 0 && adidirs[d] < ctx.dim, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-adi_dirs entry %" PetscInt_FMT " is not a direction of a %" PetscInt_FMT "D grid", adidirs[d], ctx.dim);
  PetscCheck(linedir < ctx.dim, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-line_dir %" PetscInt_FMT " is not a direction of a %" PetscInt_FMT "D grid", linedir, ctx.dim);
  ctx.c = PetscCosReal(ctx.theta * PETSC_PI / 180);
  ctx.s = PetscSinReal(ctx.theta * PETSC_PI / 180);
  if (PetscAbsReal(ctx.c) < 1e-12) ctx.c = 0; /* theta = 90, 270: exactly grid-aligned, no mixed term */
  if (PetscAbsReal(ctx.s) < 1e-12) ctx.s = 0;

  PetscCall(PetscLogStageRegister("Assembly", &stage[0]));
  PetscCall(PetscLogStageRegister("Solve", &stage[1]));
  PetscCall(PetscLogStagePush(stage[0]));
  {
    const DMDAStencilType st = ctx.coef == COEF_ROTATED && ctx.c * ctx.s != 0 ? DMDA_STENCIL_BOX : DMDA_STENCIL_STAR; /* corners for the mixed term */
    if (ctx.dim == 2) PetscCall(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, st, n, n, PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, &da));
    else PetscCall(DMDACreate3d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, st, n, n, n, PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, NULL, &da));
  }
  PetscCall(DMSetFromOptions(da)); /* -da_grid_x, -dm_vec_type cuda, -dm_mat_type aijcusparse, ... */
  PetscCall(DMSetUp(da));
  PetscCall(DMDAGetLocalInfo(da, &info));
  PetscCheck(info.mx >= 3 && info.my >= 3 && (ctx.dim == 2 || info.mz >= 3), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "Need at least 3 grid nodes per direction");
  PetscCall(DMCreateMatrix(da, &A));
  PetscCall(DMCreateGlobalVector(da, &b));
  PetscCall(VecDuplicate(b, &x));
  PetscCall(VecDuplicate(b, &uex));
  PetscCall(PetscObjectSetName((PetscObject)x, "u"));
  PetscCall(Assemble(da, &ctx, A, b, uex));
  PetscCall(PetscLogStagePop());

  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetDM(ksp, da)); /* the DMDA reaches the PC (line solves need the grid) */
  PetscCall(KSPSetDMActive(ksp, KSP_DMACTIVE_ALL, PETSC_FALSE));
  PetscCall(KSPSetTolerances(ksp, 1e-10, PETSC_CURRENT, PETSC_CURRENT, 20000));
  PetscCall(KSPGetPC(ksp, &pc));
  if (adi) PetscCall(SetUpADI(pc, nadi, adidirs));
  PetscCall(KSPSetFromOptions(ksp));
  if (shellapi) {
#if ADI_USE_STRUCTGPU_API
    PetscCall(PCShellSetLineSolve(pc, da, linedir));
#else
    SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_SUP, "-use_shell_api needs adi_aniso built with structgpu.h and libstructgpu (-DADI_USE_STRUCTGPU_API=1)");
#endif
  }

  PetscCall(PetscLogStagePush(stage[1]));
  PetscCall(PetscTime(&t0));
  PetscCall(KSPSetUp(ksp));
  PetscCall(PetscTime(&t1));
  PetscCall(PCGetType(pc, &pctype));
  PetscCall(KSPGetType(ksp, &ksptype));
  PetscCall(CountStructGPU(pc, shellapi, &nsg));
  PetscCall(VecGetType(x, &vtype));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)x, &ongpu, VECCUDA, VECSEQCUDA, VECMPICUDA, ""));
  if (ctx.dim == 2) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "adi_aniso: 2D grid %" PetscInt_FMT " x %" PetscInt_FMT ", ", info.mx, info.my));
  else PetscCall(PetscPrintf(PETSC_COMM_WORLD, "adi_aniso: 3D grid %" PetscInt_FMT " x %" PetscInt_FMT " x %" PetscInt_FMT ", ", info.mx, info.my, info.mz));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "coef %s, eps %g", CoefTypes[ctx.coef], (double)ctx.eps));
  if (ctx.dim == 3) PetscCall(PetscPrintf(PETSC_COMM_WORLD, ", eps2 %g", (double)ctx.eps2));
  if (ctx.coef == COEF_ROTATED) PetscCall(PetscPrintf(PETSC_COMM_WORLD, ", theta %g deg", (double)ctx.theta));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, ", vectors %s, KSP %s, PC %s\n", vtype, ksptype, pctype));
  if (nsg) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "StructGPU: line solves on the %s (%" PetscInt_FMT " StructGPU PC%s)\n", ongpu ? "GPU (CUDA)" : "host", nsg, nsg > 1 ? "s" : ""));
  else PetscCall(PetscPrintf(PETSC_COMM_WORLD, "StructGPU: not used by this PC (vectors on the %s)\n", ongpu ? "GPU (CUDA)" : "host"));

  PetscCall(PetscTime(&t2));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(PetscTime(&t3)); /* KSPSolve ends with a norm: device work is complete */
  PetscCall(PetscLogStagePop());
  PetscCall(KSPGetIterationNumber(ksp, &its));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  PetscCall(KSPGetResidualNorm(ksp, &rnorm));

  /* discretisation error of the nodal solution (the algebraic error is far below it at rtol 1e-10) */
  h = PetscMax(1.0 / (info.mx - 1), 1.0 / (info.my - 1));
  if (ctx.dim == 3) h = PetscMax(h, 1.0 / (info.mz - 1));
  PetscCall(VecAXPY(x, -1.0, uex));
  PetscCall(VecNorm(x, NORM_INFINITY, &errmax));
  PetscCall(VecNorm(x, NORM_2, &errl2));
  errl2 /= PetscSqrtReal((PetscReal)info.mx * info.my * (ctx.dim == 3 ? info.mz : 1));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "KSP %s: %s after %" PetscInt_FMT " iterations, residual norm %.3e\n", ksptype, KSPConvergedReasons[reason], its, (double)rnorm));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "time: KSPSetUp %.4f s, KSPSolve %.4f s (%.3g ms/iteration)\n", t1 - t0, t3 - t2, its ? 1e3 * (t3 - t2) / its : 0.0));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "error: max %.4e  rms %.4e  max/h^2 %.4f (h = %.4e, limit %g h^2)\n", (double)errmax, (double)errl2, (double)(errmax / (h * h)), (double)h, (double)errfac));
  if (reason <= 0) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAILED: KSP did not converge (%s)\n", KSPConvergedReasons[reason]));
    failed = PETSC_TRUE;
  }
  if (maxits >= 0 && its > maxits) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAILED: %" PetscInt_FMT " iterations > -max_its_check %" PetscInt_FMT "\n", its, maxits));
    failed = PETSC_TRUE;
  }
  if (!(errmax <= errfac * h * h)) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAILED: max error %.4e > %g h^2 = %.4e\n", (double)errmax, (double)errfac, (double)(errfac * h * h)));
    failed = PETSC_TRUE;
  }
  if (!failed) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "PASSED\n"));

  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&uex));
  PetscCall(MatDestroy(&A));
  PetscCall(DMDestroy(&da));
  PetscCall(PetscFinalize());
  return failed ? 1 : 0;
}
