// Dense LU (sg_getrf / sg_getrs): random nonsymmetric matrices of odd and even orders with
// lda > n, float and double, NOTRANS and TRANS, 1 and 20 right-hand sides (> 16: solved in
// chunks), X separate (ldb, ldx > n) or aliasing B, against LAPACK dgesv on double copies
// of the same (T-rounded) values; the factors themselves: perm is a permutation and
// P A = L U (long double product). Two matrix kinds:
//   "dominant-perm": uniform(-1,1) plus 3 sqrt(n) at the positions of a random permutation
//                    (partial pivoting must find it; cond(A) <= ~3);
//   "random":        uniform(-1,1) (cond(A) up to ~1e4 at n = 600).
//   (no args)  host twin (LAPACK getrf + BLAS trsv)
//   --quick    reduced case set (for valgrind)
//   --cuda     every case also on the CUDA twin (cuSOLVER getrf + our trsv) with device
//              buffers (SKIP line when no CUDA/GPU)
// Tolerances (relative max-norm error per column vs dgesv, ||x - x_ref|| / ||x_ref||):
//   dominant-perm: 1e-12 (double), 1e-4 (float); random: 1e-10 (double), 1e-3 (float, n <= 100)
//   GPU vs dgesv: the same; GPU vs host twin: 2x that (different blocking of the factorization).
//   ||P A - L U||_max <= 4 n eps ||A||_max.
#include "trsv_test_util.hpp"
#include <algorithm>
#include <memory>

extern "C" void dgesv_(int *n, int *nrhs, double *a, int *lda, int *ipiv, double *b, int *ldb, int *info);

template <class T> static double lu_tol(int kind) { return kind == 0 ? (sizeof(T) == 8 ? 1e-12 : 1e-4) : (sizeof(T) == 8 ? 1e-10 : 1e-3); }
static const char *kKind[] = {"dominant-perm", "random"};

template <class T> static std::vector<T> make_mat(long long n, long long lda, int kind, std::mt19937_64 &rng)
{
  std::uniform_real_distribution<double> U(-1.0, 1.0);
  std::vector<T> A((size_t)(lda * n), (T)NAN);  // rows n..lda-1: NaN, never read
  std::vector<double> M((size_t)(n * n));
  for (double &v : M) v = U(rng);
  if (kind == 0) {
    std::vector<long long> p((size_t)n);
    for (long long i = 0; i < n; i++) p[i] = i;
    std::shuffle(p.begin(), p.end(), rng);
    for (long long j = 0; j < n; j++) M[p[j] + j * n] += 3.0 * std::sqrt((double)n);
  }
  for (long long j = 0; j < n; j++)
    for (long long i = 0; i < n; i++) A[i + j * lda] = (T)M[i + j * n];
  return A;
}

// x = op(A)^-1 b by LAPACK dgesv on double copies (op = A^T: transposed copy)
template <class T>
static std::vector<double> dgesv_ref(const std::vector<T> &A, long long n, long long lda, sg_trans tr, const std::vector<T> &B, long long ldb, long long nrhs)
{
  std::vector<double> M((size_t)(n * n)), X((size_t)(n * nrhs));
  for (long long j = 0; j < n; j++)
    for (long long i = 0; i < n; i++) M[tr == SG_NOTRANS ? i + j * n : j + i * n] = (double)A[i + j * lda];
  for (long long c = 0; c < nrhs; c++)
    for (long long i = 0; i < n; i++) X[i + c * n] = (double)B[i + c * ldb];
  std::vector<int> ipiv((size_t)n);
  int nn = (int)n, nr = (int)nrhs, info = 0;
  dgesv_(&nn, &nr, M.data(), &nn, ipiv.data(), X.data(), &nn, &info);
  if (info != 0) { printf("dgesv failed info=%d\n", info); exit(1); }
  return X;
}

// perm is a permutation of 0..n-1 and ||P A - L U||_max / ||A||_max (long double), or -1
template <class T> static double factor_err(const std::vector<T> &A, const std::vector<T> &LU, long long n, long long lda, const std::vector<int> &perm)
{
  std::vector<char> seen((size_t)n, 0);
  for (long long i = 0; i < n; i++) {
    if (perm[i] < 0 || perm[i] >= n || seen[perm[i]]) return -1;
    seen[perm[i]] = 1;
  }
  double e = 0, amax = 0;
  for (long long j = 0; j < n; j++)
    for (long long i = 0; i < n; i++) {
      long double s = 0;  // (L U)(i,j) = sum_k L(i,k) U(k,j), k <= min(i,j), L(i,i) = 1
      for (long long k = 0; k <= std::min(i, j); k++) s += (k == i ? 1.0L : (long double)LU[i + k * lda]) * (long double)LU[k + j * lda];
      const double a = (double)A[perm[i] + j * lda];
      e    = std::max(e, (double)std::fabs((long double)a - s));
      amax = std::max(amax, std::fabs(a));
    }
  return amax > 0 ? e / amax : e;
}

template <class T> static void run_lu(long long n, int kind, std::mt19937_64 &rng, bool factors)
{
  const long long lda = n + (n % 3), ldb = n + 1, ldx = n + 3;
  const double    tol = lu_tol<T>(kind), ftol = 4.0 * (double)n * (sizeof(T) == 8 ? 2.22e-16 : 1.19e-7);
  const std::vector<T> A = make_mat<T>(n, lda, kind, rng);
  std::vector<T>   LU = A;
  std::vector<int> perm((size_t)n, -7);
  sg_report        rep;
  sg_status        st = sg_getrf_host(g_hctx, prec<T>(), n, LU.data(), lda, perm.data(), -1.0, &rep);
  const double     fe = factors ? factor_err(A, LU, n, lda, perm) : 0;
  bool gaps = true;  // rows n..lda-1 untouched
  for (long long j = 0; j < n; j++) gaps = gaps && !memcmp(&LU[n + j * lda], &A[n + j * lda], (size_t)(lda - n) * sizeof(T));
  bool ok = st == SG_OK && fe >= 0 && fe <= ftol && gaps;
  CHECK(ok, "host getrf %s %s n=%lld: %s (%s) ||PA-LU||/||A|| = %.3g (tol %.1g)", pname<T>(), kKind[kind], n, sg_status_string(st), rep.msg, fe, ftol);
  printf("%s host getrf %-6s %-13s n=%lld lda=%lld ||PA-LU||/||A||=%.2e\n", ok ? "ok  " : "FAIL", pname<T>(), kKind[kind], n, lda, fe);
#ifdef SG_HAVE_CUDA
  std::unique_ptr<Dev<T>>   dLU;  // device factors (--cuda only)
  std::unique_ptr<Dev<int>> dperm;
  if (g_cuda) {
    dLU.reset(new Dev<T>(A));
    dperm.reset(new Dev<int>(std::vector<int>((size_t)n, -7)));
    sg_report drep;
    st = sg_getrf_cuda(g_cctx, prec<T>(), n, dLU->p, lda, dperm->p, -1.0, &drep);
    const double fd = factors ? factor_err(A, dLU->get(), n, lda, dperm->get()) : 0;
    ok = st == SG_OK && fd >= 0 && fd <= ftol;
    CHECK(ok, "cuda getrf %s %s n=%lld: %s (%s) ||PA-LU||/||A|| = %.3g", pname<T>(), kKind[kind], n, sg_status_string(st), drep.msg, fd);
    printf("%s cuda getrf %-6s %-13s n=%lld ||PA-LU||/||A||=%.2e\n", ok ? "ok  " : "FAIL", pname<T>(), kKind[kind], n, fd);
  }
#endif
  // getrs plans of the same factors (host, and --cuda device): every solve below is repeated through them
  sg_getrs_plan hplan = nullptr;
  st                  = sg_getrs_plan_create(g_hctx, prec<T>(), n, LU.data(), lda, perm.data(), &hplan, &rep);
  CHECK(st == SG_OK && hplan, "host getrs plan %s n=%lld: %s (%s)", pname<T>(), n, sg_status_string(st), rep.msg);
#ifdef SG_HAVE_CUDA
  sg_getrs_plan cplan = nullptr;
  if (g_cuda) {
    st = sg_getrs_plan_create(g_cctx, prec<T>(), n, dLU->p, lda, dperm->p, &cplan, &rep);
    CHECK(st == SG_OK && cplan, "cuda getrs plan %s n=%lld: %s (%s)", pname<T>(), n, sg_status_string(st), rep.msg);
  }
#endif
  std::uniform_real_distribution<double> U(-1.0, 1.0);
  for (sg_trans tr : {SG_NOTRANS, SG_TRANS})
    for (long long nrhs : {1ll, 20ll})
      for (int alias = 0; alias < 2; alias++) {
        if (alias && nrhs == 1) continue;
        std::vector<T> B((size_t)(ldb * nrhs), (T)NAN);
        for (long long c = 0; c < nrhs; c++)
          for (long long i = 0; i < n; i++) B[i + c * ldb] = (T)U(rng);
        const std::vector<double> R  = dgesv_ref(A, n, lda, tr, B, ldb, nrhs);
        const long long           lx = alias ? ldb : ldx;
        std::vector<T>            X  = alias ? B : std::vector<T>((size_t)(ldx * nrhs), (T)kSentinel);
        const std::vector<T>      B0 = B, X0 = X;
        st = sg_getrs_host(g_hctx, prec<T>(), tr, n, nrhs, LU.data(), lda, perm.data(), alias ? X.data() : B.data(), ldb, X.data(), lx, &rep);
        const double eh = col_err(n, nrhs, X.data(), lx, R.data(), n);
        bool gaps = true;
        for (long long c = 0; c < nrhs; c++)
          for (long long i = n; i < lx; i++) gaps = gaps && !memcmp(&X[i + c * lx], &X0[i + c * lx], sizeof(T));
        ok = st == SG_OK && eh <= tol && gaps && same_bits(B, B0);
        char tag[128];
        snprintf(tag, sizeof tag, "getrs %-6s %-13s %s n=%lld nrhs=%lld%s", pname<T>(), kKind[kind], tr == SG_NOTRANS ? "N" : "T", n, nrhs, alias ? " X=B" : "");
        CHECK(ok, "host %s: %s (%s) err %.3g (tol %.0e) gaps %d", tag, sg_status_string(st), rep.msg, eh, tol, (int)gaps);
        printf("%s host %s err=%.2e\n", ok ? "ok  " : "FAIL", tag, eh);
        if (hplan) {  // the plan: the same solution bit for bit (same BLAS calls)
          std::vector<T> B2 = B0, X2 = X0;
          st = sg_getrs_plan_solve(g_hctx, hplan, tr, nrhs, alias ? X2.data() : B2.data(), ldb, X2.data(), lx, &rep);
          const bool same = st == SG_OK && same_bits(X2, X) && same_bits(B2, B0);
          CHECK(same, "host plan %s: %s (%s), same as sg_getrs %d", tag, sg_status_string(st), rep.msg, (int)same_bits(X2, X));
        }
#ifdef SG_HAVE_CUDA
        if (!g_cuda) continue;
        Dev<T> dB(B0), dX(X0);
        sg_report drep;
        st = sg_getrs_cuda(g_cctx, prec<T>(), tr, n, nrhs, dLU->p, lda, dperm->p, alias ? dX.p : dB.p, ldb, dX.p, lx, &drep);
        const std::vector<T> xd = dX.get();
        const double ed = col_err(n, nrhs, xd.data(), lx, R.data(), n), edh = col_err(n, nrhs, xd.data(), lx, X.data(), lx);
        ok = st == SG_OK && ed <= tol && edh <= 2 * tol && same_bits(dB.get(), B0);
        CHECK(ok, "cuda %s: %s (%s) err %.3g vs host %.3g", tag, sg_status_string(st), drep.msg, ed, edh);
        printf("%s cuda %s err=%.2e vs-host=%.2e\n", ok ? "ok  " : "FAIL", tag, ed, edh);
        if (cplan) {  // the plan's solve (other kernels where the plan holds inverted blocks): the same tolerances
          Dev<T> pB(B0), pX(X0);
          st = sg_getrs_plan_solve(g_cctx, cplan, tr, nrhs, alias ? pX.p : pB.p, ldb, pX.p, lx, &drep);
          const std::vector<T> xp = pX.get();
          const double ep = col_err(n, nrhs, xp.data(), lx, R.data(), n), eph = col_err(n, nrhs, xp.data(), lx, X.data(), lx);
          ok = st == SG_OK && ep <= tol && eph <= 2 * tol && same_bits(pB.get(), B0);
          CHECK(ok, "cuda plan %s: %s (%s) err %.3g vs host %.3g", tag, sg_status_string(st), drep.msg, ep, eph);
          printf("%s cuda plan %s err=%.2e vs-host=%.2e\n", ok ? "ok  " : "FAIL", tag, ep, eph);
        }
#endif
      }
  sg_getrs_plan_destroy(&hplan);
#ifdef SG_HAVE_CUDA
  sg_getrs_plan_destroy(&cplan);
#endif
}

// getrs plans of bad input: a bad perm entry (no plan), a NULL plan, a context of the other backend
template <class T> static void plan_errors()
{
  const long long n = 9, lda = 9;
  std::vector<T>   LU((size_t)(n * lda), (T)0);
  std::vector<int> perm((size_t)n);
  for (long long i = 0; i < n; i++) LU[i + i * lda] = (T)2, perm[i] = (int)(n - 1 - i);
  std::vector<T> B((size_t)n, (T)1), X((size_t)n, (T)0);
  for (int dev = 0; dev < (g_cuda ? 2 : 1); dev++) {
    sg_ctx     *ctx = dev ? g_cctx : g_hctx;
    const char *who = dev ? "cuda" : "host";
    std::vector<int> bad = perm;
    bad[4]               = 12;
    std::vector<T> Binf  = B;  // b(3) = Inf: x(5) is Inf (perm reverses the rows, L = I, U = 2 I)
    Binf[3]              = (T)INFINITY;
#ifdef SG_HAVE_CUDA
    std::unique_ptr<Dev<T>>   dLU, dB, dX, dBinf;
    std::unique_ptr<Dev<int>> dperm, dbad;
    if (dev) dLU.reset(new Dev<T>(LU)), dB.reset(new Dev<T>(B)), dX.reset(new Dev<T>(X)), dperm.reset(new Dev<int>(perm)), dbad.reset(new Dev<int>(bad)), dBinf.reset(new Dev<T>(Binf));
    const T   *pLU = dev ? dLU->p : LU.data(), *pB = dev ? dB->p : B.data(), *pBinf = dev ? dBinf->p : Binf.data();
    T         *pX  = dev ? dX->p : X.data();
    const int *pp = dev ? dperm->p : perm.data(), *pbad = dev ? dbad->p : bad.data();
#else
    const T   *pLU = LU.data(), *pB = B.data(), *pBinf = Binf.data();
    T         *pX  = X.data();
    const int *pp = perm.data(), *pbad = bad.data();
#endif
    sg_getrs_plan pl = nullptr;
    sg_report     rep;
    sg_status     st = sg_getrs_plan_create(ctx, prec<T>(), n, pLU, lda, pbad, &pl, &rep);
    CHECK(st == SG_ERR_ARG && !pl && rep.row == 4, "%s %s getrs plan with perm[4] = 12: %s row %lld (%s)", who, pname<T>(), sg_status_string(st), rep.row, rep.msg);
    printf("%s %s %-6s getrs plan, bad perm -> %s: %s\n", st == SG_ERR_ARG ? "ok  " : "FAIL", who, pname<T>(), sg_status_string(st), rep.msg);
    st = sg_getrs_plan_create(ctx, prec<T>(), n, pLU, lda, pp, &pl, &rep);
    CHECK(st == SG_OK && pl, "%s %s getrs plan: %s (%s)", who, pname<T>(), sg_status_string(st), rep.msg);
    st = sg_getrs_plan_solve(ctx, pl, SG_TRANS, 1, pB, n, pX, n, &rep);
    CHECK(st == SG_OK, "%s %s getrs plan solve (T): %s (%s)", who, pname<T>(), sg_status_string(st), rep.msg);
    // a breakdown of a planned solve (on the GPU checked once per solve, SG_GETRS_ONESYNC) is reported
    // with its row, and the next solve starts clean
    st = sg_getrs_plan_solve(ctx, pl, SG_NOTRANS, 1, pBinf, n, pX, n, &rep);
    CHECK(st == SG_ERR_NONFINITE && rep.status == st && rep.row == 5, "%s %s getrs plan solve with b(3) = Inf: %s row %lld (%s)", who, pname<T>(),
          sg_status_string(st), rep.row, rep.msg);
    printf("%s %s %-6s getrs plan, b(3) = Inf -> %s: %s\n", st == SG_ERR_NONFINITE && rep.row == 5 ? "ok  " : "FAIL", who, pname<T>(), sg_status_string(st), rep.msg);
    st = sg_getrs_plan_solve(ctx, pl, SG_NOTRANS, 1, pB, n, pX, n, &rep);
    CHECK(st == SG_OK, "%s %s getrs plan solve after a breakdown: %s (%s)", who, pname<T>(), sg_status_string(st), rep.msg);
    st = sg_getrs_plan_solve(ctx, nullptr, SG_NOTRANS, 1, pB, n, pX, n, &rep);
    CHECK(st == SG_ERR_ARG, "%s %s getrs solve with a NULL plan: %s", who, pname<T>(), sg_status_string(st));
    st = sg_getrs_plan_solve(ctx, pl, SG_NOTRANS, 2, pB, n - 1, pX, n, &rep);
    CHECK(st == SG_ERR_ARG, "%s %s getrs plan solve with ldb < n: %s", who, pname<T>(), sg_status_string(st));
    if (g_cuda) {
      st = sg_getrs_plan_solve(dev ? g_hctx : g_cctx, pl, SG_NOTRANS, 1, pB, n, pX, n, &rep);
      CHECK(st == SG_ERR_ARG && strstr(rep.msg, "backend"), "%s %s getrs plan solve on the other backend: %s (%s)", who, pname<T>(), sg_status_string(st), rep.msg);
    }
    sg_getrs_plan_destroy(&pl);
    CHECK(!pl, "%s getrs plan destroy", who);
    sg_getrs_plan_destroy(nullptr);
  }
}

// getrf breakdowns on the host (and --cuda the device): status, row; A untouched for NaN/Inf
template <class T> static void lu_expect(const char *what, const std::vector<T> &A, long long n, long long lda, double pivtol, sg_status want, long long want_row)
{
  for (int dev = 0; dev < (g_cuda ? 2 : 1); dev++) {
    std::vector<T>   LU = A;
    std::vector<int> perm((size_t)n);
    sg_report        rep;
    sg_status        st = SG_OK;
    if (!dev) st = sg_getrf_host(g_hctx, prec<T>(), n, LU.data(), lda, perm.data(), pivtol, &rep);
#ifdef SG_HAVE_CUDA
    else {
      Dev<T>   dA(A);
      Dev<int> dp(perm);
      st = sg_getrf_cuda(g_cctx, prec<T>(), n, dA.p, lda, dp.p, pivtol, &rep);
      LU = dA.get();
    }
#endif
    const bool kept = want != SG_ERR_NONFINITE && want != SG_ERR_ARG ? true : same_bits(LU, A);
    const bool ok   = st == want && rep.status == st && rep.msg[0] && (want_row < 0 || rep.row == want_row) && kept;
    CHECK(ok, "%s getrf %s %s: %s row %lld (want %s row %lld) A kept %d: %s", dev ? "cuda" : "host", pname<T>(), what, sg_status_string(st), rep.row,
          sg_status_string(want), want_row, (int)kept, rep.msg);
    printf("%s %s getrf %-6s %-28s -> %s row %lld: %s\n", ok ? "ok  " : "FAIL", dev ? "cuda" : "host", pname<T>(), what, sg_status_string(st), rep.row, rep.msg);
  }
}

template <class T> static void bad_inputs()
{
  std::mt19937_64 rng(31);
  const long long n = 23, lda = 25;
  std::vector<T>  A = make_mat<T>(n, lda, 1, rng), S = A;
  for (long long j = 0; j < n; j++) S[17 + j * lda] = S[4 + j * lda];  // rows 4 and 17 equal
  lu_expect<T>("two equal rows", S, n, lda, -1.0, SG_ERR_ZERO_PIVOT, -1);
  S = A;
  for (long long i = 0; i < n; i++) S[i + 9 * lda] = 0;  // column 9 zero: U(9,9) = 0 exactly
  lu_expect<T>("zero column 9", S, n, lda, 0.0, SG_ERR_ZERO_PIVOT, 9);
  lu_expect<T>("pivtol 2 (> any |U_00|/max|A|)", A, n, lda, 2.0, SG_ERR_ZERO_PIVOT, 0);
  S = std::vector<T>(A.size(), (T)0);
  lu_expect<T>("zero matrix", S, n, lda, -1.0, SG_ERR_ZERO_PIVOT, 0);
  S = A; S[3 + 7 * lda] = (T)NAN; S[12 + 2 * lda] = (T)INFINITY;
  lu_expect<T>("NaN A(3,7), Inf A(12,2)", S, n, lda, -1.0, SG_ERR_NONFINITE, 12);
  S = A; S[3 + 7 * lda] = (T)NAN;
  lu_expect<T>("NaN A(3,7)", S, n, lda, -1.0, SG_ERR_NONFINITE, 3);
  lu_expect<T>("lda < n", A, n, n - 1, -1.0, SG_ERR_ARG, -1);
  // getrs on a factorization with U(9,9) = 0: the triangular solve reports the zero
  S = A;
  for (long long i = 0; i < n; i++) S[i + 9 * lda] = 0;
  std::vector<int> perm((size_t)n);
  sg_report        rep;
  sg_getrf_host(g_hctx, prec<T>(), n, S.data(), lda, perm.data(), 0.0, &rep);
  std::vector<T> B((size_t)(lda * 2), (T)1), X((size_t)(lda * 2), (T)kSentinel), X0 = X, B0 = B;
  sg_status st = sg_getrs_host(g_hctx, prec<T>(), SG_NOTRANS, n, 2, S.data(), lda, perm.data(), B.data(), lda, X.data(), lda, &rep);
  CHECK(st == SG_ERR_ZERO_PIVOT && rep.row == 9, "getrs on a singular factor: %s row %lld", sg_status_string(st), rep.row);
  printf("%s host getrs singular U            -> %s row %lld: %s\n", st == SG_ERR_ZERO_PIVOT && rep.row == 9 ? "ok  " : "FAIL", sg_status_string(st), rep.row, rep.msg);
  // getrs argument errors: nothing touched
  std::vector<T> LU = A;
  sg_getrf_host(g_hctx, prec<T>(), n, LU.data(), lda, perm.data(), -1.0, &rep);
  struct { const char *what; long long nrhs, ldb, ldx; int bad_perm; bool alias; } cases[] = {
    {"perm[5] = n", 2, lda, lda, 1, false}, {"perm[5] = -1", 2, lda, lda, 2, false}, {"nrhs = 0", 0, lda, lda, 0, false},
    {"ldb < n", 2, n - 1, lda, 0, false},   {"X == B, ldx != ldb", 2, lda, lda - 1, 0, true}};
  for (auto &c : cases)
    for (int dev = 0; dev < (g_cuda ? 2 : 1); dev++) {
      X = X0;
      std::vector<int> p = perm;
      if (c.bad_perm) p[5] = c.bad_perm == 1 ? (int)n : -1;
      if (!dev) st = sg_getrs_host(g_hctx, prec<T>(), SG_TRANS, n, c.nrhs, LU.data(), lda, p.data(), c.alias ? X.data() : B.data(), c.ldb, X.data(), c.ldx, &rep);
#ifdef SG_HAVE_CUDA
      else {
        Dev<T> dLU(LU), dB(B), dX(X0);
        Dev<int> dp(p);
        st = sg_getrs_cuda(g_cctx, prec<T>(), SG_TRANS, n, c.nrhs, dLU.p, lda, dp.p, c.alias ? dX.p : dB.p, c.ldb, dX.p, c.ldx, &rep);
        X = dX.get();
        if (!same_bits(dB.get(), B0)) X.clear();  // device B modified: fail below
      }
#endif
      const bool ok = st == SG_ERR_ARG && rep.msg[0] && same_bits(X, X0) && same_bits(B, B0);
      CHECK(ok, "%s getrs %s %s: %s: %s", dev ? "cuda" : "host", pname<T>(), c.what, sg_status_string(st), rep.msg);
      printf("%s %s getrs %-6s %-20s -> %s: %s\n", ok ? "ok  " : "FAIL", dev ? "cuda" : "host", pname<T>(), c.what, sg_status_string(st), rep.msg);
    }
  // dispatchers, NULL report, backend checks
  std::vector<T> LU2 = A;
  CHECK(sg_getrf(g_hctx, prec<T>(), n, LU2.data(), lda, perm.data(), -1.0, nullptr) == SG_OK, "getrf dispatcher, NULL report");
  CHECK(sg_getrs(g_hctx, prec<T>(), SG_NOTRANS, n, 1, LU2.data(), lda, perm.data(), B.data(), 0, X.data(), 0, nullptr) == SG_OK, "getrs dispatcher");
  CHECK(sg_getrf_host(g_hctx, (sg_precision)3, n, LU2.data(), lda, perm.data(), -1.0, &rep) == SG_ERR_ARG && rep.msg[0], "bad precision");
  CHECK(sg_getrs_host(g_hctx, prec<T>(), (sg_trans)4, n, 1, LU2.data(), lda, perm.data(), B.data(), 0, X.data(), 0, &rep) == SG_ERR_ARG, "bad trans");
#ifndef SG_HAVE_CUDA
  CHECK(sg_getrf_cuda(g_hctx, prec<T>(), n, LU2.data(), lda, perm.data(), -1.0, &rep) == SG_ERR_DEVICE && strstr(rep.msg, "without CUDA"), "CPU-only build");
#else
  if (g_cuda) {
    CHECK(sg_getrf_cuda(g_cctx, prec<T>(), n, LU2.data(), lda, perm.data(), -1.0, &rep) == SG_ERR_ARG && rep.msg[0], "CUDA getrf with host pointers");
    CHECK(sg_getrf_host(g_cctx, prec<T>(), n, LU2.data(), lda, perm.data(), -1.0, &rep) == SG_ERR_ARG && rep.msg[0], "host getrf with a CUDA ctx");
  }
#endif
}

int main(int argc, char **argv)
{
  bool quick;
  if (const int rc = tri_test_init(argc, argv, &quick); rc >= 0) return rc;
  const std::vector<long long> ns = quick ? std::vector<long long>{1, 2, 5, 33, 100} : std::vector<long long>{1, 2, 5, 33, 100, 257, 600};
  std::mt19937_64 rng(4242);
  for (long long n : ns)
    for (int kind = 0; kind < 2; kind++) {
      run_lu<double>(n, kind, rng, n <= 257);
      if (kind == 0 || n <= 100) run_lu<float>(n, kind, rng, n <= 257);
    }
  bad_inputs<double>();
  bad_inputs<float>();
  plan_errors<double>();
  plan_errors<float>();
  return tri_test_finish("test_lu", quick);
}
