// Dense triangular solves (sg_trsv, sg_trsv_batch_solve): all 8 variants (lower/upper x
// N/T x unit/non-unit), float and double, odd/prime/power-of-two orders, lda > n, several
// right-hand sides with ldb/ldx > n, X aliasing B, against an independent long double
// substitution (trsv_test_util.hpp). The unused triangle, the diagonal of unit variants and
// the rows n..lda-1 hold NaN (never read); X's gap rows hold a sentinel (never written).
//   (no args)  host twin (BLAS dtrsv/strsv)
//   --quick    reduced case set (for valgrind)
//   --cuda     every case also on the CUDA twin with device buffers, compared with the host
//              twin and the reference (SKIP line when no CUDA/GPU)
// Tolerances: see trsv_test_util.hpp (1e-12 / 1e-4 vs reference, 1e-12 / 1e-5 GPU vs host).
// Breakdown and argument errors: status, system, row, B (and on the host X) untouched.
// Solves in a row (chained): a solve whose matrix the solve queued just before it writes.
#include <string>
#include "trsv_test_util.hpp"
#include "tri/trsv_internal.hpp"  // sg_trsv_plan_s: whether a CUDA plan holds the inverted blocks
#include "tri/trsv_hybrid_jobs.hpp"  // the cluster + helpers kernel's job tables (host only)
#include <algorithm>
#include <optional>
#include <utility>

static const sg_uplo  kUplo[]  = {SG_LOWER, SG_UPPER};
static const sg_trans kTrans[] = {SG_NOTRANS, SG_TRANS};
static const sg_diag  kDiag[]  = {SG_NONUNIT, SG_UNIT};

// ---------------------------------------------------------------- one triangular solve
struct Tri {
  long long n, lda;
  sg_uplo   uplo;
};

// Solve op(A) X = B for nrhs columns (ldb, ldx; with nrhs == 1 they are passed as 0 since
// they are ignored), X separate or aliasing B; host vs reference, then (--cuda) device vs
// host and reference. Returns the host error.
template <class T>
static double run_trsv(const Tri &M, const std::vector<T> &A, sg_trans tr, sg_diag dg, long long nrhs, long long ldb, long long ldx, bool alias,
                       std::mt19937_64 &rng)
{
  const long long n = M.n, ldbe = nrhs > 1 ? ldb : n, ldxe = alias ? ldbe : (nrhs > 1 ? ldx : n);
  std::uniform_real_distribution<double> U(-1.0, 1.0);
  std::vector<T> B((size_t)(ldbe * nrhs), (T)NAN);
  for (long long c = 0; c < nrhs; c++)
    for (long long i = 0; i < n; i++) B[i + c * ldbe] = (T)U(rng);
  std::vector<long double> R((size_t)(n * nrhs));
  for (long long c = 0; c < nrhs; c++) ref_solve(A.data(), n, M.lda, M.uplo, tr, dg, &B[c * ldbe], &R[c * n]);
  const std::vector<T> B0 = B;
  std::vector<T>       X  = alias ? B : std::vector<T>((size_t)(ldxe * nrhs), (T)kSentinel);
  auto gaps_ok = [&](const std::vector<T> &x) {  // rows n..ldx-1 untouched
    for (long long c = 0; c < nrhs; c++)
      for (long long i = n; i < ldxe; i++) {
        const T v = x[i + c * ldxe], w = alias ? B0[i + c * ldxe] : (T)kSentinel;
        if (memcmp(&v, &w, sizeof v)) return false;
      }
    return true;
  };
  const long long pb = nrhs > 1 ? ldb : 0, px = nrhs > 1 ? (alias ? ldb : ldx) : 0;
  sg_trsv_problem P = {prec<T>(), M.uplo, tr, dg, n, nrhs, A.data(), M.lda, alias ? X.data() : B.data(), pb, X.data(), px};
  sg_report       rep;
  sg_status       st = sg_trsv_host(g_hctx, &P, 0.0, &rep);
  const double    eh = col_err(n, nrhs, X.data(), ldxe, R.data(), n);
  char            tag[160];
  snprintf(tag, sizeof tag, "%s %-6s n=%lld lda=%lld nrhs=%lld ldb=%lld ldx=%lld%s", op_name(M.uplo, tr, dg), pname<T>(), n, M.lda, nrhs, pb, px,
           alias ? " X=B" : "");
  bool ok = st == SG_OK && eh <= trsv_tol_ref<T>() && gaps_ok(X) && (alias || same_bits(B, B0));
  CHECK(ok, "host %s: %s (%s) err %.3g (tol %.0e) gaps %d B kept %d", tag, sg_status_string(st), rep.msg, eh, trsv_tol_ref<T>(), (int)gaps_ok(X),
        (int)same_bits(B, B0));
  if (!ok || n >= 1000) printf("%s host %s err=%.2e\n", ok ? "ok  " : "FAIL", tag, eh);
#ifdef SG_HAVE_CUDA
  if (g_cuda) {
    Dev<T> dA(A), dB(B0), dX(alias ? B0 : std::vector<T>((size_t)(ldxe * nrhs), (T)kSentinel));
    sg_trsv_problem D = P;
    D.A = dA.p; D.B = alias ? dX.p : dB.p; D.X = dX.p;
    sg_report drep;
    st = sg_trsv_cuda(g_cctx, &D, 0.0, &drep);
    const std::vector<T> xd = dX.get();
    const double ed = col_err(n, nrhs, xd.data(), ldxe, R.data(), n), edh = col_err(n, nrhs, xd.data(), ldxe, X.data(), ldxe);
    ok = st == SG_OK && ed <= trsv_tol_ref<T>() && edh <= trsv_tol_dev<T>() && gaps_ok(xd) && (alias || same_bits(dB.get(), B0));
    CHECK(ok, "cuda %s: %s (%s) err %.3g vs host %.3g gaps %d", tag, sg_status_string(st), drep.msg, ed, edh, (int)gaps_ok(xd));
    if (!ok || n >= 1000) printf("%s cuda %s err=%.2e vs-host=%.2e\n", ok ? "ok  " : "FAIL", tag, ed, edh);
  }
#endif
  return eh;
}

template <class T> static void sweep(bool quick)
{
  // multiples of 64 with lda = n (aligned): the GPU chain is fed by its copy warp (192: three block
  // rows, a helper from row 2; 1280: two helper chunks per row from row 18); other orders: the chain
  // issues its own copies. One column with A 16-byte aligned (fp64: every order here, lda = n + 3
  // for odd n; fp32: lda * 4 a multiple of 16) runs the cluster kernel up to n = 2048 (fp64) / 4096
  // (fp32): 2048 and 3000 / 4096 have 4 / 6 / 8 block rows per CTA of a 16-CTA cluster
  // (fp32). Larger orders with one column and A aligned run the cluster + helpers kernel on the GPU
  // (fp64 from n = 2049: 3000, 4096, 4099; fp32 from 4097); with --cuda also 5000 and 9001 (up to
  // 9 / 17 helper chunks per block row in fp64)
  std::vector<long long> ns = quick ? std::vector<long long>{1, 2, 3, 17, 64, 65, 192, 257}
                                    : std::vector<long long>{1, 2, 3, 17, 31, 64, 65, 127, 192, 257, 1000, 1280, 2048, 3000, 4096, 4099};
  if (!quick && g_cuda) ns.insert(ns.end(), {5000, 9001});
  std::mt19937_64 rng(2024 + sizeof(T));
  for (long long n : ns) {
    const long long lda = n % 2 ? n + 3 : n;  // odd orders: lda > n
    std::vector<T>  A((size_t)(lda * n));
    for (sg_uplo u : kUplo)
      for (sg_diag d : kDiag) {
        fill_tri(A.data(), n, lda, u, d, rng);
        const Tri M{n, lda, u};
        for (sg_trans t : kTrans) {
          double worst = 0;
          worst = std::max(worst, run_trsv<T>(M, A, t, d, 1, 0, 0, false, rng));
          worst = std::max(worst, run_trsv<T>(M, A, t, d, 3, n + 2, n + 5, false, rng));
          worst = std::max(worst, run_trsv<T>(M, A, t, d, 1, 0, 0, true, rng));
          if (n <= 1000 || t == SG_NOTRANS) worst = std::max(worst, run_trsv<T>(M, A, t, d, 16, n + 1, n + 1, true, rng));
          if (n < 1000) printf("     host %s %-6s n=%lld lda=%lld nrhs 1,3,1(X=B),16(X=B): worst err=%.2e\n", op_name(u, t, d), pname<T>(), n, lda, worst);
        }
      }
  }
}

// ---------------------------------------------------------------- solves in a row
// Two solves queued back to back (deferred checks, one stream), the second one's matrix written
// by the first: solve 1 writes x1 into column j of A2 (all n rows of it; b1 = op(A1) t with t[j] = 2,
// |t| <= 0.25 elsewhere, so x1 = t up to rounding and A2 keeps a safe pivot), solve 2 solves with
// A2. Column j is one that solve 2's chain needs first (M's column or row 1), and on the device it
// holds NaN until solve 1 has written it. A GPU solve launched while the kernel before it still runs
// (programmatic dependent launch) must wait for that kernel before reading A: a read too early
// gives a NaN breakdown or a wrong x2. Reference: x2 = op(A2)^-1 b2 in long double with the host's
// x1 in column j (the device's x1 differs by rounding only).
template <class T> static void chained(bool quick)
{
  const std::vector<long long> ns = quick ? std::vector<long long>{3, 64, 257} : std::vector<long long>{3, 64, 257, 512, 1000, 2048, 4096};
  std::mt19937_64                        rng(77 + sizeof(T));
  std::uniform_real_distribution<double> U(-1.0, 1.0);
  for (long long n : ns)
    for (sg_uplo u : kUplo)
      for (sg_trans t : kTrans) {
        const bool      rev = (u == SG_UPPER) != (t == SG_TRANS);  // M = op(A) reflected: A's column n-2 is M's column / row 1
        const long long lda = n, j = rev ? n - 2 : 1;
        std::vector<T>  A1((size_t)(lda * n)), A2((size_t)(lda * n)), tv((size_t)n), b1((size_t)n), b2((size_t)n), x2((size_t)n);
        fill_tri(A1.data(), n, lda, u, SG_NONUNIT, rng);
        fill_tri(A2.data(), n, lda, u, SG_NONUNIT, rng);
        for (long long i = 0; i < n; i++) tv[i] = i == j ? T(2) : (T)(0.25 * U(rng));
        for (long long i = 0; i < n; i++) {  // b1 = op(A1) tv over the triangle
          long double s = 0;
          for (long long k = 0; k < n; k++) {
            const long long r = t == SG_NOTRANS ? i : k, c = t == SG_NOTRANS ? k : i;  // op(A1)(i, k) = A1(r, c)
            if (u == SG_LOWER ? r >= c : r <= c) s += (long double)A1[r + c * lda] * tv[k];
          }
          b1[i] = (T)s;
          b2[i] = (T)U(rng);
        }
        std::vector<T>  A2h = A2;
        sg_trsv_problem P1 = {prec<T>(), u, t, SG_NONUNIT, n, 1, A1.data(), lda, b1.data(), 0, A2h.data() + j * lda, 0};
        sg_trsv_problem P2 = {prec<T>(), u, t, SG_NONUNIT, n, 1, A2h.data(), lda, b2.data(), 0, x2.data(), 0};
        sg_report       rep;
        sg_status       st = sg_trsv_host(g_hctx, &P1, 0.0, &rep);
        if (st == SG_OK) st = sg_trsv_host(g_hctx, &P2, 0.0, &rep);
        std::vector<long double> R((size_t)n);
        ref_solve(A2h.data(), n, lda, u, t, SG_NONUNIT, b2.data(), R.data());
        const double eh = col_err(n, 1, x2.data(), n, R.data(), n), e1 = col_err(n, 1, A2h.data() + j * lda, n, tv.data(), n);
        char         tag[96];
        snprintf(tag, sizeof tag, "%s %-6s n=%lld column %lld", op_name(u, t, SG_NONUNIT), pname<T>(), n, j);
        CHECK(st == SG_OK && eh <= trsv_tol_ref<T>() && e1 <= 100 * trsv_tol_ref<T>(), "host chained %s: %s (%s) err %.3g, x1 vs t %.3g", tag,
              sg_status_string(st), rep.msg, eh, e1);
#ifdef SG_HAVE_CUDA
        if (g_cuda) {
          std::vector<T> A2n = A2;
          for (long long i = 0; i < n; i++) A2n[i + j * lda] = (T)NAN;  // written by solve 1 before solve 2 may read it
          Dev<T>          dA1(A1), dA2(A2n), db1(b1), db2(b2), dx2(std::vector<T>((size_t)n, (T)kSentinel));
          sg_trsv_problem D1 = P1, D2 = P2;
          D1.A = dA1.p; D1.B = db1.p; D1.X = dA2.p + j * lda;
          D2.A = dA2.p; D2.B = db2.p; D2.X = dx2.p;
          sg_report drep;
          sg_ctx_set_deferred(g_cctx, 1);
          st = sg_trsv_cuda(g_cctx, &D1, 0.0, &drep);
          if (st == SG_OK) st = sg_trsv_cuda(g_cctx, &D2, 0.0, &drep);
          const sg_status sc = sg_ctx_check(g_cctx, &drep);
          sg_ctx_set_deferred(g_cctx, 0);
          if (st == SG_OK) st = sc;
          const std::vector<T> xd = dx2.get(), a2d = dA2.get();
          const double ed = col_err(n, 1, xd.data(), n, R.data(), n), edh = col_err(n, 1, xd.data(), n, x2.data(), n);
          const double e1d = col_err(n, 1, a2d.data() + j * lda, n, A2h.data() + j * lda, n);
          const bool   ok = st == SG_OK && ed <= trsv_tol_ref<T>() && edh <= 10 * trsv_tol_dev<T>() && e1d <= trsv_tol_dev<T>();
          CHECK(ok, "cuda chained %s: %s (%s) err %.3g vs host %.3g, x1 vs host %.3g", tag, sg_status_string(st), drep.msg, ed, edh, e1d);
          if (!ok || n >= 1000) printf("%s cuda chained %s err=%.2e vs-host=%.2e\n", ok ? "ok  " : "FAIL", tag, ed, edh);
        }
#endif
      }
}

// ---------------------------------------------------------------- breakdown / arguments
// Runs P on the host (and --cuda the device, on copies); checks status, row, B untouched and,
// on the host when X is separate and nothing was solved (want_x_kept), X untouched.
template <class T>
static void expect(const char *what, sg_trsv_problem P, double pivtol, sg_status want, long long want_row, bool want_x_kept, bool dev_ok = true)
{
  const long long ldbe = P.nrhs > 1 ? P.ldb : P.n, ldxe = P.nrhs > 1 ? P.ldx : P.n;
  const size_t    nb = P.B && P.n > 0 && P.nrhs > 0 && ldbe > 0 ? (size_t)(ldbe * P.nrhs) : 0;
  const size_t    nx = P.X && P.n > 0 && P.nrhs > 0 && ldxe > 0 ? (size_t)(ldxe * P.nrhs) : 0;
  std::vector<T>  B0(nb), X0(nx);
  if (nb) memcpy(B0.data(), P.B, nb * sizeof(T));
  if (nx) memcpy(X0.data(), P.X, nx * sizeof(T));
  for (int dev = 0; dev < (g_cuda && dev_ok ? 2 : 1); dev++) {
    sg_report rep;
    sg_status st;
    bool      b_kept = true, x_kept = true;
    if (!dev) {
      st     = sg_trsv_host(g_hctx, &P, pivtol, &rep);
      b_kept = !nb || P.B == P.X || !memcmp(B0.data(), P.B, nb * sizeof(T));
      x_kept = !nx || !memcmp(X0.data(), P.X, nx * sizeof(T));
      if (nx) memcpy((void *)P.X, X0.data(), nx * sizeof(T));  // restore for the device run
    }
#ifdef SG_HAVE_CUDA
    else {  // device copies of A (whole lda x n), B, X
      const long long na = P.A && P.n > 0 && P.lda >= P.n ? P.lda * P.n : 1;
      Dev<T> dA(P.A ? std::vector<T>((const T *)P.A, (const T *)P.A + na) : std::vector<T>(1)), dB(B0.size() ? B0 : std::vector<T>(1)),
          dX(X0.size() ? X0 : std::vector<T>(1));
      sg_trsv_problem D = P;
      D.A = P.A ? dA.p : nullptr;
      D.B = P.B == P.X ? dX.p : (P.B ? dB.p : nullptr);
      D.X = P.X ? dX.p : nullptr;
      st     = sg_trsv_cuda(g_cctx, &D, pivtol, &rep);
      b_kept = !nb || P.B == P.X || same_bits(dB.get(), B0.size() ? B0 : std::vector<T>(1));
      x_kept = want == SG_ERR_ARG ? same_bits(dX.get(), X0.size() ? X0 : std::vector<T>(1)) : true;  // X unspecified on breakdown
    }
#endif
    const bool ok = st == want && rep.status == st && (want == SG_OK || rep.msg[0]) && (want_row < 0 || rep.row == want_row) && b_kept && (!want_x_kept || x_kept) &&
                    (st != SG_OK || rep.system == -1);
    CHECK(ok, "%s %s %s: got %s row %lld (want %s row %lld) B kept %d X kept %d: %s", dev ? "cuda" : "host", pname<T>(), what, sg_status_string(st),
          rep.row, sg_status_string(want), want_row, (int)b_kept, (int)x_kept, rep.msg);
    printf("%s %s %-6s %-34s -> %s row %lld: %s\n", ok ? "ok  " : "FAIL", dev ? "cuda" : "host", pname<T>(), what, sg_status_string(st), rep.row, rep.msg);
  }
}

// Diagonal breakdowns of every variant (uplo x op) of an n x n problem with leading dimension lda
// and nrhs columns (B, X: ldb = ldx = lda when nrhs > 1): two zero pivots at rows z0 < z1 (the
// smaller is reported, whatever the solve direction), then z1 alone; the unit diagonal ignores
// them; NaN (row 3), -Inf (row inf) and tiny (row 6, with and without pivtol) pivots.
template <class T>
static void diag_breakdowns(long long n, long long lda, long long nrhs, long long z0, long long z1, long long inf, T *B, T *X, std::mt19937_64 &rng)
{
  const long long ld = nrhs > 1 ? lda : 0;
  std::vector<T>  A((size_t)(lda * n));
  auto            d = [&](long long r) -> T & { return A[r + r * lda]; };
  for (sg_uplo u : kUplo)
    for (sg_trans t : kTrans) {
      fill_tri(A.data(), n, lda, u, SG_NONUNIT, rng);
      sg_trsv_problem P = {prec<T>(), u, t, SG_NONUNIT, n, nrhs, A.data(), lda, B, ld, X, ld};
      char            what[64];
      auto            name = [&](const std::string &c) {
        snprintf(what, sizeof what, "%s n=%lld %s", op_name(u, t, P.diag), n, c.c_str());
        return what;
      };
      const std::string s0 = std::to_string(z0), s1 = std::to_string(z1);
      d(z0) = 0; d(z1) = 0;
      expect<T>(name("zero diag rows " + s0 + "," + s1), P, 0.0, SG_ERR_ZERO_PIVOT, z0, true);
      d(z0) = 1;
      expect<T>(name("zero diag row " + s1), P, 0.0, SG_ERR_ZERO_PIVOT, z1, true);
      P.diag = SG_UNIT;  // the zeros are not read
      expect<T>(name("zero diag, unit: ignored"), P, 0.0, SG_OK, -1, false);
      P.diag = SG_NONUNIT;
      d(z1) = 1;
      d(3)  = (T)NAN;
      expect<T>(name("NaN diag row 3"), P, 0.0, SG_ERR_ZERO_PIVOT, 3, true);
      d(3)   = 1;
      d(inf) = (T)-INFINITY;
      expect<T>(name("-Inf diag row " + std::to_string(inf)), P, 0.0, SG_ERR_NONFINITE, inf, true);
      d(inf) = 1;
      d(6)   = (T)1e-20;
      expect<T>(name("diag 1e-20, pivtol 1e-10"), P, 1e-10, SG_ERR_ZERO_PIVOT, 6, true);
      expect<T>(name("diag 1e-20, pivtol 0"), P, 0.0, SG_OK, -1, false);
    }
}

// One right-hand side, lower and upper N of order n (leading dimension lda): NaN in b[7] makes the
// solution non-finite from row 7 on (lower) / up to row 7 (upper, row 0 reported); an Inf at
// A(2, c), c > 2, in the read upper triangle makes rows 0..2 non-finite. b[7] is restored.
template <class T> static void rhs_breakdowns(long long n, long long lda, long long c, T *B, T *X, std::mt19937_64 &rng)
{
  std::vector<T> A((size_t)(lda * n));
  char           what[64];
  fill_tri(A.data(), n, lda, SG_LOWER, SG_NONUNIT, rng);
  const T b7 = B[7];
  B[7]       = (T)NAN;
  sg_trsv_problem P = {prec<T>(), SG_LOWER, SG_NOTRANS, SG_NONUNIT, n, 1, A.data(), lda, B, 0, X, 0};
  snprintf(what, sizeof what, "LNN n=%lld NaN in b[7]", n);
  expect<T>(what, P, 0.0, SG_ERR_NONFINITE, 7, false);
  fill_tri(A.data(), n, lda, SG_UPPER, SG_NONUNIT, rng);
  P.uplo = SG_UPPER;
  snprintf(what, sizeof what, "UNN n=%lld NaN in b[7]", n);
  expect<T>(what, P, 0.0, SG_ERR_NONFINITE, 0, false);
  B[7]             = b7;
  A[2 + c * lda]   = (T)INFINITY;
  snprintf(what, sizeof what, "UNN n=%lld Inf in A(2,%lld)", n, c);
  expect<T>(what, P, 0.0, SG_ERR_NONFINITE, 0, false);
}

template <class T> static void bad_inputs(bool quick)
{
  std::mt19937_64 rng(77);
  const long long n = 31, lda = 33;
  std::vector<T>  B((size_t)(lda * 17)), X((size_t)(lda * 17), (T)kSentinel);  // room for the nrhs = 17 case
  std::uniform_real_distribution<double> U(-1.0, 1.0);
  for (T &v : B) v = (T)U(rng);
  diag_breakdowns<T>(n, lda, 2, 9, 20, 4, B.data(), X.data(), rng);
  // the same with one right-hand side and A 16-byte aligned (n = 40, lda = 40): on the GPU the
  // cluster kernel (two block rows, the second partial; reflected variants pad the first), with
  // pivots in the partial block; NaN in b and an off-diagonal Inf there as well
  {
    const long long n1 = 40;
    std::vector<T>  B1((size_t)n1), X1((size_t)n1, (T)kSentinel);
    for (T &v : B1) v = (T)U(rng);
    diag_breakdowns<T>(n1, n1, 1, 20, 35, 33, B1.data(), X1.data(), rng);
    rhs_breakdowns<T>(n1, n1, 36, B1.data(), X1.data(), rng);
  }
  rhs_breakdowns<T>(n, lda, 5, B.data(), X.data(), rng);
  // and at n = 4500 (lda = n): on the GPU the cluster + helpers kernel (block rows of 32 from the
  // top, the last one partial: rows 4480..4499), pivots in the window and in helper-covered block
  // rows and one in the partial block; the Inf in A(2, 3001) is read by a helper chunk
  if (!quick) {
    const long long n1 = 4500;
    std::vector<T>  B1((size_t)n1), X1((size_t)n1, (T)kSentinel);
    for (T &v : B1) v = (T)U(rng);
    diag_breakdowns<T>(n1, n1, 1, 1500, 4490, 2100, B1.data(), X1.data(), rng);
    rhs_breakdowns<T>(n1, n1, 3001, B1.data(), X1.data(), rng);
  }
  // NaN below the diagonal inside a 64 x 64 diagonal block (the GPU inverts these blocks): only
  // rows 45.. depend on A(45,10); rows 32..44 (same block, same doubling level) must stay finite
  {
    const long long n2 = 100;
    std::vector<T>  A2((size_t)(n2 * n2)), B2((size_t)n2), X2((size_t)n2);
    fill_tri(A2.data(), n2, n2, SG_LOWER, SG_NONUNIT, rng);
    for (T &v : B2) v = (T)0.5;
    A2[45 + 10 * n2] = (T)NAN;
    sg_trsv_problem P = {prec<T>(), SG_LOWER, SG_NOTRANS, SG_NONUNIT, n2, 1, A2.data(), n2, B2.data(), 0, X2.data(), 0};
    expect<T>("LNN n=100 NaN in A(45,10)", P, 0.0, SG_ERR_NONFINITE, 45, false);
  }
  // breakdown on the copy-warp path (n a multiple of 64, lda = n): zero diagonal entries in block
  // rows 2 and 3 (the smaller row is reported, every variant); a NaN in the lag tile (2,1) of LNN
  {
    const long long n3 = 256;
    std::vector<T>  A3((size_t)(n3 * n3)), B3((size_t)n3), X3((size_t)n3);
    for (T &v : B3) v = (T)0.5;
    for (sg_uplo u : kUplo)
      for (sg_trans t : kTrans) {
        fill_tri(A3.data(), n3, n3, u, SG_NONUNIT, rng);
        A3[130 + 130 * n3] = 0; A3[200 + 200 * n3] = 0;
        sg_trsv_problem P = {prec<T>(), u, t, SG_NONUNIT, n3, 1, A3.data(), n3, B3.data(), 0, X3.data(), 0};
        char            what[64];
        snprintf(what, sizeof what, "%s n=256 zero diag rows 130,200", op_name(u, t, SG_NONUNIT));
        expect<T>(what, P, 0.0, SG_ERR_ZERO_PIVOT, 130, true);
      }
    fill_tri(A3.data(), n3, n3, SG_LOWER, SG_NONUNIT, rng);
    A3[150 + 100 * n3] = (T)NAN;
    sg_trsv_problem P = {prec<T>(), SG_LOWER, SG_NOTRANS, SG_NONUNIT, n3, 1, A3.data(), n3, B3.data(), 0, X3.data(), 0};
    expect<T>("LNN n=256 NaN in A(150,100)", P, 0.0, SG_ERR_NONFINITE, 150, false);
  }
  // argument errors: nothing touched
  std::vector<T> A((size_t)(lda * n));
  fill_tri(A.data(), n, lda, SG_LOWER, SG_NONUNIT, rng);
  const sg_trsv_problem P0 = {prec<T>(), SG_LOWER, SG_NOTRANS, SG_NONUNIT, n, 2, A.data(), lda, B.data(), lda, X.data(), lda};
  sg_trsv_problem P;
  P = P0; P.lda = n - 1; expect<T>("lda < n", P, 0.0, SG_ERR_ARG, -1, true);
  P = P0; P.n = 0; expect<T>("n = 0", P, 0.0, SG_ERR_ARG, -1, true);
  P = P0; P.n = SG_TRSV_MAX_N + 1; expect<T>("n > SG_TRSV_MAX_N", P, 0.0, SG_ERR_ARG, -1, true, false);
  P = P0; P.nrhs = 17; expect<T>("nrhs = 17", P, 0.0, SG_ERR_ARG, -1, true, false);
  P = P0; P.nrhs = 0; expect<T>("nrhs = 0", P, 0.0, SG_ERR_ARG, -1, true);
  P = P0; P.ldb = n - 1; expect<T>("ldb < n (nrhs 2)", P, 0.0, SG_ERR_ARG, -1, true);
  P = P0; P.ldx = n - 1; expect<T>("ldx < n (nrhs 2)", P, 0.0, SG_ERR_ARG, -1, true);
  P = P0; P.B = X.data(); P.ldx = lda - 1; P.ldb = lda; expect<T>("X == B, ldx != ldb", P, 0.0, SG_ERR_ARG, -1, true, false);
  P = P0; P.X = B.data() + 1; expect<T>("X overlaps B (B + 1)", P, 0.0, SG_ERR_ARG, -1, false, false);
  P = P0; P.X = A.data() + 5; expect<T>("X overlaps A", P, 0.0, SG_ERR_ARG, -1, false, false);
  P = P0; P.A = nullptr; expect<T>("A = NULL", P, 0.0, SG_ERR_ARG, -1, true);
  P = P0; P.uplo = (sg_uplo)7; expect<T>("uplo = 7", P, 0.0, SG_ERR_ARG, -1, true);
  P = P0; P.trans = (sg_trans)-1; expect<T>("trans = -1", P, 0.0, SG_ERR_ARG, -1, true);
  P = P0; P.diag = (sg_diag)2; expect<T>("diag = 2", P, 0.0, SG_ERR_ARG, -1, true);
  P = P0; P.prec = (sg_precision)9; expect<T>("prec = 9", P, 0.0, SG_ERR_ARG, -1, true);
  P = P0; P.nrhs = 1; P.ldb = 0; P.ldx = -4; expect<T>("nrhs 1: ldb, ldx ignored", P, 0.0, SG_OK, -1, false);
  sg_report rep;
  CHECK(sg_trsv_host(nullptr, &P0, 0.0, &rep) == SG_ERR_ARG && rep.msg[0], "NULL ctx");
  CHECK(sg_trsv_host(g_hctx, nullptr, 0.0, &rep) == SG_ERR_ARG && rep.msg[0], "NULL problem");
  CHECK(sg_trsv_host(g_hctx, &P0, 0.0, nullptr) == SG_OK, "NULL report");
  CHECK(sg_trsv(g_hctx, &P0, 0.0, &rep) == SG_OK, "dispatcher on a host ctx: %s", rep.msg);
#ifdef SG_HAVE_CUDA
  if (g_cuda) {
    CHECK(sg_trsv_host(g_cctx, &P0, 0.0, &rep) == SG_ERR_ARG && rep.msg[0], "host twin with a CUDA ctx");
    CHECK(sg_trsv_cuda(g_hctx, &P0, 0.0, &rep) == SG_ERR_ARG && rep.msg[0], "CUDA twin with a host ctx");
    const sg_status st = sg_trsv_cuda(g_cctx, &P0, 0.0, &rep);
    CHECK(st == SG_ERR_ARG && rep.msg[0], "CUDA twin with host pointers: %s (%s)", sg_status_string(st), rep.msg);
    printf("ok?  cuda host pointers -> %s: %s\n", sg_status_string(st), rep.msg);
  }
#else
  CHECK(sg_trsv_cuda(g_hctx, &P0, 0.0, &rep) == SG_ERR_DEVICE && strstr(rep.msg, "without CUDA"), "CPU-only build: CUDA twin says so");
#endif
}

// ---------------------------------------------------------------- batched solves
// Systems stored back to back: A_s (lda_s x n_s), X_s (ldx_s x nrhs) with gap rows = sentinel.
template <class T> struct BatchT {
  sg_uplo                  uplo;
  sg_trans                 trans;
  sg_diag                  diag;
  int                      nmax, nrhs, lda, ldx;  // uniform values (when the per-system arrays are unused)
  bool                     var;                   // nv/ldav/ldxv given
  std::vector<int>         nv, ldav, ldxv;
  std::vector<size_t>      aoff, xoff;
  std::vector<T>           A, X0;
  std::vector<long double> R;  // reference, system s at rof[s], n_s x nrhs
  std::vector<size_t>      rof;
  long long nb() const { return (long long)nv.size(); }
};

template <class T>
static BatchT<T> make_tb(sg_uplo u, sg_trans t, sg_diag d, long long nb, int nmax, int nrhs, bool var, std::mt19937_64 &rng, int lda_u = 0)
{
  BatchT<T> S{u, t, d, nmax, nrhs, lda_u > 0 ? lda_u : nmax + 1, nmax + 2, var, {}, {}, {}, {}, {}, {}, {}, {}, {}};
  std::uniform_real_distribution<double> U(-1.0, 1.0);
  for (long long s = 0; s < nb; s++) {
    const int n = var ? (s % 5 == 2 ? 0 : (int)(rng() % (unsigned)(nmax + 1))) : nmax;
    const int lda = var ? n + (int)(s % 3) : S.lda, ldx = var ? n + (int)(s % 2) : S.ldx;
    S.nv.push_back(n); S.ldav.push_back(lda); S.ldxv.push_back(ldx);
    S.aoff.push_back(S.A.size()); S.xoff.push_back(S.X0.size()); S.rof.push_back(S.R.size());
    S.A.resize(S.A.size() + (size_t)lda * n);
    S.X0.resize(S.X0.size() + (size_t)ldx * nrhs, (T)kSentinel);
    fill_tri(S.A.data() + S.aoff[s], n, lda, u, d, rng);
    T *x = S.X0.data() + S.xoff[s];
    for (int c = 0; c < nrhs; c++)
      for (int i = 0; i < n; i++) x[i + c * ldx] = (T)U(rng);
    S.R.resize(S.R.size() + (size_t)n * nrhs);
    for (int c = 0; c < nrhs; c++) ref_solve(S.A.data() + S.aoff[s], n, lda, u, t, d, x + c * ldx, S.R.data() + S.rof[s] + (size_t)c * n);
  }
  return S;
}

// descriptor over the given bases (host or device copies of A and X)
template <class T>
static sg_trsv_batch tb_desc(const BatchT<T> &S, std::vector<const void *> &ap, std::vector<void *> &xp, const T *A, T *X)
{
  ap.resize(S.nv.size()); xp.resize(S.nv.size());
  for (size_t s = 0; s < S.nv.size(); s++) { ap[s] = A + S.aoff[s]; xp[s] = X + S.xoff[s]; }
  sg_trsv_batch D = {prec<T>(), S.uplo, S.trans, S.diag, S.nb(), S.nmax, S.var ? S.nv.data() : nullptr, S.nrhs, ap.data(), S.lda,
                     S.var ? S.ldav.data() : nullptr, xp.data(), S.ldx, S.var ? S.ldxv.data() : nullptr};
  return D;
}

// per system: solved (vs reference, gaps kept) unless listed in `bad` (then X_s == X0_s)
template <class T> static bool tb_check(const BatchT<T> &S, const std::vector<T> &X, const std::vector<long long> &bad, double *worst)
{
  bool ok = true;
  *worst  = 0;
  for (long long s = 0; s < S.nb(); s++) {
    const int n = S.nv[s], ldx = S.ldxv[s];
    const T  *x = X.data() + S.xoff[s], *x0 = S.X0.data() + S.xoff[s];
    if (std::find(bad.begin(), bad.end(), s) != bad.end()) {
      ok = ok && !memcmp(x, x0, (size_t)ldx * S.nrhs * sizeof(T));
      continue;
    }
    for (int c = 0; c < S.nrhs; c++)
      for (int i = n; i < ldx; i++) ok = ok && x[i + c * ldx] == (T)kSentinel;
    *worst = std::max(*worst, col_err(n, S.nrhs, x, ldx, S.R.data() + S.rof[s], n));
  }
  return ok && *worst <= trsv_tol_ref<T>();
}

// Host solve (and --cuda device solve, compared with the host result) of S; expect status
// `want` naming system `wsys` (row `wrow` when >= 0); systems in `bad` untouched.
template <class T>
static void run_tb(const BatchT<T> &S, const char *kind, sg_status want = SG_OK, long long wsys = -1, long long wrow = -1,
                   const std::vector<long long> &bad = {})
{
  char tag[160];
  snprintf(tag, sizeof tag, "batch %s %-6s nb=%lld n<=%d nrhs=%d %s", op_name(S.uplo, S.trans, S.diag), pname<T>(), S.nb(), S.nmax, S.nrhs, kind);
  std::vector<T>            X = S.X0;
  std::vector<const void *> ap;
  std::vector<void *>       xp;
  sg_trsv_batch             D = tb_desc(S, ap, xp, S.A.data(), X.data());
  sg_report                 rep;
  sg_status                 st = sg_trsv_batch_solve_host(g_hctx, &D, 0.0, &rep);
  double                    eh;
  const bool rep_ok = st == want && rep.status == st && (want == SG_OK || (rep.system == wsys && rep.msg[0] && (wrow < 0 || rep.row == wrow)));
  bool       ok     = rep_ok && tb_check(S, X, bad, &eh);
  CHECK(ok, "host %s: %s system %lld row %lld (want %s system %lld row %lld) err %.3g: %s", tag, sg_status_string(st), rep.system, rep.row,
        sg_status_string(want), wsys, wrow, eh, rep.msg);
  printf("%s host %s -> %s err=%.2e%s%s\n", ok ? "ok  " : "FAIL", tag, sg_status_string(st), eh, rep.msg[0] ? ": " : "", rep.msg);
#ifdef SG_HAVE_CUDA
  if (!g_cuda) return;
  Dev<T> dA(S.A.size() ? S.A : std::vector<T>(1)), dX(S.X0);
  sg_trsv_batch DD = tb_desc(S, ap, xp, dA.p, dX.p);
  Dev<const void *> dap(ap);
  Dev<void *>       dxp(xp);
  Dev<int>          dnv(S.nv), dla(S.ldav), dlx(S.ldxv);
  DD.A = dap.p; DD.X = dxp.p;
  if (S.var) { DD.nv = dnv.p; DD.ldav = dla.p; DD.ldxv = dlx.p; }
  sg_report drep;
  st = sg_trsv_batch_solve_cuda(g_cctx, &DD, 0.0, &drep);
  const std::vector<T> xd = dX.get();
  double               ed, edh = 0;
  for (long long s = 0; s < S.nb(); s++)
    edh = std::max(edh, col_err(S.nv[s], S.nrhs, xd.data() + S.xoff[s], S.ldxv[s], X.data() + S.xoff[s], S.ldxv[s]));
  const bool drep_ok = st == want && drep.status == st && (want == SG_OK || (drep.system == wsys && drep.msg[0] && (wrow < 0 || drep.row == wrow)));
  ok = drep_ok && tb_check(S, xd, bad, &ed) && edh <= trsv_tol_dev<T>();
  CHECK(ok, "cuda %s: %s system %lld row %lld (want %s system %lld) err %.3g vs host %.3g: %s", tag, sg_status_string(st), drep.system, drep.row,
        sg_status_string(want), wsys, ed, edh, drep.msg);
  printf("%s cuda %s -> %s err=%.2e vs-host=%.2e\n", ok ? "ok  " : "FAIL", tag, sg_status_string(st), ed, edh);
#endif
}

template <class T> static void batch_sweep(bool quick)
{
  std::mt19937_64 rng(99 + sizeof(T));
  // CUDA paths by the bound n: nrhs = 1: two systems per warp wholly in registers for n <= 16,
  // the persistent ring kernel for 65..128 (4 rows per lane; op = N and fp32 op = T with the
  // diagonal a chunk ahead), 129..256 (8; fp32 op = N: the streamed kernel) and 257..512 (16),
  // the streamed warp kernel for 17..64 (1, 2 rows per lane); otherwise a
  // warp per system with 1..4 rows per lane (n <= 32, 64, 96, 128), a CTA per system (n > 128);
  // nrhs 3 (one partial chunk of 4) / 16 (four chunks; the CTA kernel's K = 16)
  const std::vector<int> ns = quick ? std::vector<int>{1, 7, 17, 64, 100, 150}
                                    : std::vector<int>{1, 7, 16, 17, 32, 33, 64, 65, 96, 100, 128, 129, 200, 256, 257, 512};
  const std::vector<int> nvar = quick ? std::vector<int>{16, 40} : std::vector<int>{16, 40, 128, 512};
  for (sg_uplo u : kUplo)
    for (sg_trans t : kTrans)
      for (sg_diag d : kDiag)
        for (int nrhs : {1, 3, 16}) {
          for (int n : ns) {
            const long long nb = n >= 257 ? 3 : (n >= 100 ? 9 : 37);
            if (getenv("STRUCTGPU_TEST_VERBOSE")) printf("  batch %s %s n=%d nrhs=%d\n", op_name(u, t, d), pname<T>(), n, nrhs), fflush(stdout);
            run_tb(make_tb<T>(u, t, d, nb, n, nrhs, false, rng), "uniform");
          }
          for (int nmax : nvar) run_tb(make_tb<T>(u, t, d, 23, nmax, nrhs, true, rng), "variable (incl. n=0)");
        }
  // lda = n (lda = 12 at n = 8), the systems back to back, their base 16-byte aligned or shifted by
  // one element: the bench's layout (lda = n), and the shapes a vector-load kernel would special-case
  // (the 2026-11-28 experiments: bench/trsv/README.md); the other triangle is NaN here, as everywhere
  // in these tests, so a kernel that used it would fail.
  for (sg_uplo u : kUplo)
    for (sg_trans t : kTrans)
      for (sg_diag d : kDiag)
        for (int n : {4, 8, 12, 16, 33, 64, 200})  // (33-200: the streamed kernel's uniform form)
          for (int shift : {0, 1}) {
            BatchT<T> S = make_tb<T>(u, t, d, quick ? 9 : 37, n, 1, false, rng, n == 8 ? 12 : n);
            if (shift) {
              S.A.insert(S.A.begin(), (T)NAN);
              for (size_t &o : S.aoff) o++;
            }
            run_tb(S, shift ? "lda = n (+4 at 8), base + 1" : "lda = n (+4 at 8)");
          }
  // one bad system among good ones: zero diagonal in systems 5 (row 11) and 7 (row 2); n = 12:
  // systems 4 and 5 (6 and 7) share a warp on the GPU, 4 and 6 must still be solved; nrhs = 1:
  // the GPU's registers kernel (n = 12), streamed warp kernel (37) and ring kernel (100: the
  // diagonal a chunk ahead for op = N and fp32 op = T), nrhs = 2 the staged ones
  // (n = 12 once more with lda = n; lda 0: n + 1; n = 16: float's uniform-16 loads on the GPU)
  for (int nrhs : {2, 1})
  for (const std::pair<int, int> nl : {std::pair<int, int>{12, 0}, {37, 0}, {100, 0}, {12, 12}, {16, 0}, {16, 16}})
    for (sg_uplo u : kUplo)
      for (sg_trans t : kTrans) {
        BatchT<T> S = make_tb<T>(u, t, SG_NONUNIT, 9, nl.first, nrhs, false, rng, nl.second);
        S.A[S.aoff[5] + 11 + 11 * (size_t)S.lda] = 0;
        S.A[S.aoff[7] + 2 + 2 * (size_t)S.lda]   = 0;
        run_tb(S, "zero diag in systems 5, 7", SG_ERR_ZERO_PIVOT, 5, 11, {5, 7});
      }
  // Inf diagonal (system 4) before a NaN diagonal (system 6): NONFINITE naming system 4
  // (GPU, one column: n = 20 the streamed kernel, 12 the registers kernel, 100 the ring kernel
  // with the diagonal a chunk ahead)
  // (and n = 12 with lda = n, n = 16 as above)
  for (const std::pair<int, int> nl : {std::pair<int, int>{20, 0}, {12, 0}, {100, 0}, {12, 12}, {16, 0}, {16, 16}}) {
    BatchT<T> S = make_tb<T>(SG_LOWER, SG_NOTRANS, SG_NONUNIT, 8, nl.first, 1, false, rng, nl.second);
    S.A[S.aoff[4] + 3 + 3 * (size_t)S.lda] = (T)INFINITY;
    S.A[S.aoff[6] + 1 + 1 * (size_t)S.lda] = (T)NAN;
    run_tb(S, "Inf diag sys 4, NaN diag sys 6", SG_ERR_NONFINITE, 4, 3, {4, 6});
  }
  // per-system argument errors: that system untouched, the others solved
  for (int nrhs : {3, 1})
  for (int nmax : {14, 30, 60, 200}) {  // (GPU: a warp per system, one row or two per lane; a CTA per system)
    BatchT<T> S = make_tb<T>(SG_UPPER, SG_TRANS, SG_NONUNIT, 11, nmax, nrhs, true, rng);
    S.nv[3] = nmax + 1;  // > n: system 3 invalid (its arrays are those of a smaller system)
    S.ldav[8] = S.nv[8] > 0 ? S.nv[8] - 1 : -1;
    run_tb(S, "nv[3] > n, ldav[8] < nv[8]", SG_ERR_ARG, 3, -1, {3, 8});
    S.nv[3] = -1;
    run_tb(S, "nv[3] < 0, ldav[8] < nv[8]", SG_ERR_ARG, 3, -1, {3, 8});
  }
  // whole-batch argument errors
  BatchT<T> S = make_tb<T>(SG_LOWER, SG_NOTRANS, SG_NONUNIT, 3, 5, 1, false, rng);
  std::vector<T>            X = S.X0;
  std::vector<const void *> ap;
  std::vector<void *>       xp;
  const sg_trsv_batch       D0 = tb_desc(S, ap, xp, S.A.data(), X.data());
  const char               *what[] = {"n = 0", "n = 513", "nrhs = 17", "nbatch = 0", "lda < n", "ldx < n", "A = NULL", "diag = 5"};
  for (int k = 0; k < 8; k++) {
    sg_trsv_batch D = D0;
    if (k == 0) D.n = 0;
    if (k == 1) D.n = SG_TRSV_BATCH_MAX_N + 1;
    if (k == 2) D.nrhs = 17;
    if (k == 3) D.nbatch = 0;
    if (k == 4) D.lda = 4;
    if (k == 5) D.ldx = 4;
    if (k == 6) D.A = nullptr;
    if (k == 7) D.diag = (sg_diag)5;
    sg_report rep;
    const sg_status st = sg_trsv_batch_solve_host(g_hctx, &D, 0.0, &rep);
    const bool ok = st == SG_ERR_ARG && rep.msg[0] && same_bits(X, S.X0);
    CHECK(ok, "batch %s %s: %s", what[k], pname<T>(), sg_status_string(st));
    printf("%s host batch %-10s %-6s -> %s: %s\n", ok ? "ok  " : "FAIL", what[k], pname<T>(), sg_status_string(st), rep.msg);
  }
  sg_report rep;
  double    err;
  CHECK(sg_trsv_batch_solve(g_hctx, &D0, 0.0, &rep) == SG_OK && tb_check(S, X, {}, &err), "batch dispatcher on a host ctx");
}

// ---------------------------------------------------------------- plans (sg_trsv_plan_*)
// One plan per matrix, then several solves with fresh right-hand sides (nrhs 1, 1 with X = B, 3
// with ldb / ldx > n), each against the long double reference; --cuda: the CUDA plan's solves
// also against the host twin, and where A and lda are 16-byte aligned the plan must hold the
// inverted blocks, so that the one-column solves after create take the paths without diagonal
// work (the one-cluster kernel up to fp64 2048 / fp32 4096, the cluster + helpers kernel above).
template <class T> static void plan_case(long long n, long long lda, sg_uplo u, sg_trans t, sg_diag d, std::mt19937_64 &rng)
{
  std::vector<T> A((size_t)(lda * n));
  fill_tri(A.data(), n, lda, u, d, rng);
  const sg_trsv_problem P = {prec<T>(), u, t, d, n, 1, A.data(), lda, nullptr, 0, nullptr, 0};
  char                  tag[96];
  snprintf(tag, sizeof tag, "plan %s %-6s n=%lld lda=%lld", op_name(u, t, d), pname<T>(), n, lda);
  sg_trsv_plan hp = nullptr;
  sg_report    rep;
  sg_status    st = sg_trsv_plan_create(g_hctx, &P, 0.0, &hp, &rep);
  CHECK(st == SG_OK && hp, "host %s: create %s (%s)", tag, sg_status_string(st), rep.msg);
#ifdef SG_HAVE_CUDA
  sg_trsv_plan          cp = nullptr;
  std::optional<Dev<T>> dA;
  if (g_cuda) {
    dA.emplace(A);
    sg_trsv_problem D = P;
    D.A               = dA->p;
    st                = sg_trsv_plan_create(g_cctx, &D, 0.0, &cp, &rep);
    CHECK(st == SG_OK && cp, "cuda %s: create %s (%s)", tag, sg_status_string(st), rep.msg);
    const bool aligned = (lda * (long long)sizeof(T)) % 16 == 0;
    if (cp) CHECK(!aligned || cp->filled, "cuda %s: the plan holds no inverted blocks", tag);
    // orders of the one-cluster kernel with at least 4 block rows: the paired blocks too (trsv_pair_fill)
    const bool paired = aligned && cp && cp->la == 2 && n > 96 && n <= (sizeof(T) == 8 ? 3584 : 4096) && !getenv("SG_TRSV_CLUSTER_PLAN_MAXN");
    if (cp) CHECK(!paired || cp->pinv, "cuda %s: the plan holds no paired blocks", tag);
  }
#endif
  std::uniform_real_distribution<double> Ud(-1.0, 1.0);
  struct Shape {
    long long k, ldb, ldx;
    bool      alias;
  };
  for (const Shape sh : {Shape{1, n, n, false}, Shape{1, n, n, true}, Shape{3, n + 2, n + 5, false}, Shape{1, n, n, false}}) {
    const long long ldx = sh.alias ? sh.ldb : sh.ldx;
    std::vector<T>  B((size_t)(sh.ldb * sh.k), (T)NAN);
    for (long long c = 0; c < sh.k; c++)
      for (long long i = 0; i < n; i++) B[i + c * sh.ldb] = (T)Ud(rng);
    std::vector<long double> R((size_t)(n * sh.k));
    for (long long c = 0; c < sh.k; c++) ref_solve(A.data(), n, lda, u, t, d, &B[c * sh.ldb], &R[c * n]);
    std::vector<T> X = sh.alias ? B : std::vector<T>((size_t)(ldx * sh.k), (T)kSentinel);
    if (hp) {
      st              = sg_trsv_plan_solve(g_hctx, hp, sh.k, sh.alias ? X.data() : B.data(), sh.ldb, X.data(), ldx, &rep);
      const double eh = col_err(n, sh.k, X.data(), ldx, R.data(), n);
      CHECK(st == SG_OK && eh <= trsv_tol_ref<T>(), "host %s nrhs=%lld%s: %s (%s) err %.3g", tag, sh.k, sh.alias ? " X=B" : "", sg_status_string(st), rep.msg, eh);
    }
#ifdef SG_HAVE_CUDA
    if (cp) {
      Dev<T> dB(B), dX(sh.alias ? B : std::vector<T>((size_t)(ldx * sh.k), (T)kSentinel));
      st                       = sg_trsv_plan_solve(g_cctx, cp, sh.k, sh.alias ? dX.p : dB.p, sh.ldb, dX.p, ldx, &rep);
      const std::vector<T> xd  = dX.get();
      const double         ed  = col_err(n, sh.k, xd.data(), ldx, R.data(), n);
      const double         edh = col_err(n, sh.k, xd.data(), ldx, X.data(), ldx);
      CHECK(st == SG_OK && ed <= trsv_tol_ref<T>() && edh <= trsv_tol_dev<T>() && (sh.alias || same_bits(dB.get(), B)), "cuda %s nrhs=%lld%s: %s (%s) err %.3g vs host %.3g", tag,
            sh.k, sh.alias ? " X=B" : "", sg_status_string(st), rep.msg, ed, edh);
      if (n >= 1000) printf("%s cuda %s nrhs=%lld%s err=%.2e vs-host=%.2e\n", st == SG_OK && ed <= trsv_tol_ref<T>() ? "ok  " : "FAIL", tag, sh.k, sh.alias ? " X=B" : "", ed, edh);
    }
#endif
  }
  sg_trsv_plan_destroy(&hp);
  CHECK(!hp, "host %s: destroy leaves the handle set", tag);
#ifdef SG_HAVE_CUDA
  // SG_TRSV_HYB_ONE=1 (the hybrid_one ctest variants, whose settings take every aligned plan's one-column solves to
  // the cluster + helpers kernel): those solves must have run the one-CTA chain, not fallen back
  const char *one = getenv("SG_TRSV_HYB_ONE");
  if (cp && one && !strcmp(one, "1") && (lda * (long long)sizeof(T)) % 16 == 0)
    CHECK(cp->one_solves >= 3, "cuda %s: %lld of its 3 one-column solves ran the one-CTA chain", tag, cp->one_solves);
  sg_trsv_plan_destroy(&cp);
#endif
}

// Plans of bad input: a zero pivot (create fails, no plan), an infinite RHS entry (the solve
// reports the non-finite solution), a NULL plan, a plan of the other backend, a bad lda; with
// deferred checks, create returns an earlier solve's breakdown first.
template <class T> static void plan_errors(std::mt19937_64 &rng)
{
  const long long n = 77, lda = 80;
  std::vector<T>  A((size_t)(lda * n));
  fill_tri(A.data(), n, lda, SG_LOWER, SG_NONUNIT, rng);
  std::vector<T> Az = A;
  Az[40 + 40 * lda] = 0;
  std::vector<T> B((size_t)n, (T)1), X((size_t)n, (T)0);
  B[11] = (T)INFINITY;
  for (int dev = 0; dev < (g_cuda ? 2 : 1); dev++) {
    sg_ctx *ctx = dev ? g_cctx : g_hctx;
    const char *who = dev ? "cuda" : "host";
#ifdef SG_HAVE_CUDA
    std::optional<Dev<T>> dA, dAz, dB, dX;
    if (dev) dA.emplace(A), dAz.emplace(Az), dB.emplace(B), dX.emplace(X);
    const T *pA = dev ? dA->p : A.data(), *pAz = dev ? dAz->p : Az.data(), *pB = dev ? dB->p : B.data();
    T       *pX = dev ? dX->p : X.data();
#else
    const T *pA = A.data(), *pAz = Az.data(), *pB = B.data();
    T       *pX = X.data();
#endif
    sg_trsv_problem P = {prec<T>(), SG_LOWER, SG_NOTRANS, SG_NONUNIT, n, 1, pAz, lda, nullptr, 0, nullptr, 0};
    sg_trsv_plan    pl = (sg_trsv_plan)&P;  // create must reset it
    sg_report       rep;
    sg_status       st = sg_trsv_plan_create(ctx, &P, 0.0, &pl, &rep);
    CHECK(st == SG_ERR_ZERO_PIVOT && rep.row == 40 && !pl, "%s %s plan of a singular matrix: %s row %lld (%s)", who, pname<T>(), sg_status_string(st), rep.row, rep.msg);
    printf("%s %s %-6s plan of a singular matrix -> %s row %lld: %s\n", st == SG_ERR_ZERO_PIVOT ? "ok  " : "FAIL", who, pname<T>(), sg_status_string(st), rep.row, rep.msg);
    P.lda = n - 1;
    st    = sg_trsv_plan_create(ctx, &P, 0.0, &pl, &rep);
    CHECK(st == SG_ERR_ARG && !pl, "%s %s plan with lda < n: %s", who, pname<T>(), sg_status_string(st));
    st = sg_trsv_plan_create(ctx, &P, 0.0, nullptr, &rep);
    CHECK(st == SG_ERR_ARG, "%s %s plan create into NULL: %s", who, pname<T>(), sg_status_string(st));
    P.lda = lda;
    P.A   = pA;
    st    = sg_trsv_plan_create(ctx, &P, 0.0, &pl, &rep);
    CHECK(st == SG_OK && pl, "%s %s plan: %s (%s)", who, pname<T>(), sg_status_string(st), rep.msg);
    st = sg_trsv_plan_solve(ctx, pl, 1, pB, 0, pX, 0, &rep);
    CHECK(st == SG_ERR_NONFINITE && rep.row == 11, "%s %s plan solve with B(11) = Inf: %s row %lld (%s)", who, pname<T>(), sg_status_string(st), rep.row, rep.msg);
    st = sg_trsv_plan_solve(ctx, nullptr, 1, pB, 0, pX, 0, &rep);
    CHECK(st == SG_ERR_ARG && rep.msg[0], "%s %s solve with a NULL plan: %s", who, pname<T>(), sg_status_string(st));
    st = sg_trsv_plan_solve(ctx, pl, 17, pB, n, pX, n, &rep);
    CHECK(st == SG_ERR_ARG, "%s %s plan solve with nrhs = 17: %s", who, pname<T>(), sg_status_string(st));
    if (g_cuda) {  // the other backend's context
      st = sg_trsv_plan_solve(dev ? g_hctx : g_cctx, pl, 1, pB, 0, pX, 0, &rep);
      CHECK(st == SG_ERR_ARG && strstr(rep.msg, "backend"), "%s %s plan solve on the other backend: %s (%s)", who, pname<T>(), sg_status_string(st), rep.msg);
    }
#ifdef SG_HAVE_CUDA
    if (dev) {  // deferred checks: a singular solve's breakdown is returned by the next create
      sg_trsv_problem S = {prec<T>(), SG_LOWER, SG_NOTRANS, SG_NONUNIT, n, 1, pAz, lda, pX, 0, pX, 0};
      sg_ctx_set_deferred(g_cctx, 1);
      st = sg_trsv_cuda(g_cctx, &S, 0.0, &rep);
      CHECK(st == SG_OK, "cuda %s deferred singular solve: %s", pname<T>(), sg_status_string(st));
      sg_trsv_plan p2 = nullptr;
      st              = sg_trsv_plan_create(g_cctx, &P, 0.0, &p2, &rep);
      CHECK(st == SG_ERR_ZERO_PIVOT && !p2, "cuda %s create after a deferred breakdown: %s (%s)", pname<T>(), sg_status_string(st), rep.msg);
      st = sg_trsv_plan_create(g_cctx, &P, 0.0, &p2, &rep);
      CHECK(st == SG_OK && p2, "cuda %s create with deferred checks: %s (%s)", pname<T>(), sg_status_string(st), rep.msg);
      sg_trsv_plan_destroy(&p2);
      st = sg_ctx_set_deferred(g_cctx, 0);
      CHECK(st == SG_OK, "cuda %s leaving deferred mode: %s", pname<T>(), sg_status_string(st));
    }
#endif
    sg_trsv_plan_destroy(&pl);
    sg_trsv_plan_destroy(&pl);  // twice: a no-op
    sg_trsv_plan_destroy(nullptr);
  }
}

template <class T> static void plan_sweep(bool quick)
{
  std::mt19937_64 rng(77 + sizeof(T));
  // one-cluster orders (n = 64, lda = 65: not aligned, no filled plan; with a filled plan fp64 up to 3584 (7 block rows per CTA),
  // 3000 and 2049), the cluster + helpers kernel's orders (fp64 3585, 4096; fp32 4100, 5000; --cuda also 9001 / 9004 and, fp64,
  // 9000 with lda = n + 2 (16-byte aligned))
  std::vector<std::pair<long long, long long>> ns = {{1, 4}, {17, 20}, {257, 260}, {64, 65}};
  if (!quick) ns.insert(ns.end(), {{1000, 1000}, {1024, 1028}, sizeof(T) == 8 ? std::pair<long long, long long>{2048, 2048} : std::pair<long long, long long>{4096, 4096}});
  if (!quick) {
    if (sizeof(T) == 8) ns.insert(ns.end(), {{3000, 3000}, {4096, 4096}, {2049, 2052}, {3584, 3584}, {3585, 3588}});
    else ns.insert(ns.end(), {{4100, 4100}, {5000, 5000}, {4097, 4104}});
    if (g_cuda) ns.push_back(sizeof(T) == 8 ? std::pair<long long, long long>{9000, 9002} : std::pair<long long, long long>{9001, 9004});
  }
  for (auto [n, lda] : ns)
    for (sg_uplo u : kUplo)
      for (sg_trans t : kTrans)
        for (sg_diag d : kDiag)
          if (n < 2000 || d == SG_NONUNIT) plan_case<T>(n, lda, u, t, d, rng);
  plan_errors<T>(rng);
  printf("     plans %s: done\n", pname<T>());
}

// ---------------------------------------------------------------- job tables of the cluster + helpers kernel
// Every ticket order (0 rows, 1 columns, 2 the simulated schedule) must hold each job of the
// shape once and put every chunk after all jobs of the rows up to its last column, the condition
// the kernel's deadlock freedom rests on (trsv_hybrid_jobs.hpp). The shapes: the defaults at
// fp64 / fp32 n = 16384 and 32768, the GPU tests' small settings (window 4, chunks of 2, end 1,
// down to one block row), with and without inversion jobs, and models from one helper warp (all
// work serial) to thousands (everything released at once) and chain steps of 0.1 to 10 us.
// Order 2 must also differ from order 0 where far rows' chunks can go early (else it tests nothing).
static void job_tables(bool quick)
{
  struct Shape {
    int nb, W, CT, E, PD;
  };
  const Shape shapes[] = {{512, 32, 16, 4, 64}, {1024, 32, 32, 4, 64}, {700, 32, 16, 4, 64}, {1, 4, 2, 1, 64}, {2, 4, 2, 1, 64},
                          {5, 4, 2, 1, 64},     {37, 4, 2, 1, 64},     {131, 4, 2, 1, 3},    {97, 10, 3, 2, 7}, {64, 32, 16, 4, 64}};
  const double tiles[] = {0.02, 0.655, 1.31, 50.0};
  const int    helpers[] = {1, 7, 480, 5000};
  const double steps[] = {0.1, 0.32, 0.48, 10.0};  // (0.32, 0.48: the defaults' models)
  const int    leads[] = {0, 1, 5, 64, 128, 256};
  int          differ = 0, big = 0;
  for (const Shape &sh : shapes)
    for (int pre = 0; pre < 2; pre++) {
      std::vector<int> j0;
      sgtrsv::HySchedModel md0;
      sgtrsv::hy_build_jobs(sh.nb, sh.W, sh.CT, sh.E, sh.PD, 0, pre, md0, j0);
      CHECK(sgtrsv::hy_jobs_valid(sh.nb, sh.W, sh.CT, sh.E, pre, j0), "job table order 0 nb=%d W=%d pre=%d invalid", sh.nb, sh.W, pre);
      std::vector<int> j1;
      sgtrsv::hy_build_jobs(sh.nb, sh.W, sh.CT, sh.E, sh.PD, 1, pre, md0, j1);
      CHECK(sgtrsv::hy_jobs_valid(sh.nb, sh.W, sh.CT, sh.E, pre, j1), "job table order 1 nb=%d W=%d pre=%d invalid", sh.nb, sh.W, pre);
      for (double tu : tiles)
        for (int hw : helpers)
          for (double st : steps) {
            if (quick && (tu != 0.655 || st != 0.48 || hw > 480)) continue;  // (valgrind)
            for (int ld : leads) {
              if (quick && ld != 0 && ld != 64) continue;
              sgtrsv::HySchedModel md;
              md.tile_us = tu;
              md.helpers = hw;
              md.step_us = st;
              md.lead    = ld;
              std::vector<int> j2;
              sgtrsv::hy_build_jobs(sh.nb, sh.W, sh.CT, sh.E, sh.PD, 2, pre, md, j2);
              CHECK(sgtrsv::hy_jobs_valid(sh.nb, sh.W, sh.CT, sh.E, pre, j2), "job table order 2 nb=%d W=%d CT=%d pre=%d tile=%g helpers=%d step=%g lead=%d invalid",
                    sh.nb, sh.W, sh.CT, pre, tu, hw, st, ld);
              if (sh.nb >= 512 && hw == 480 && st == 0.48 && tu < 2 && (ld == 0 || ld == 64)) {
                big++;
                differ += j2 != j0;
              }
            }
          }
    }
  // a corrupted table is caught: a chunk moved before a job of its last column's row, a duplicate
  std::vector<int>     j;
  sgtrsv::HySchedModel md;
  sgtrsv::hy_build_jobs(64, 4, 2, 1, 8, 0, false, md, j);
  std::vector<int> bad = j;
  const auto       it = std::find_if(bad.begin(), bad.end(), [](int c) { return !(c & sgtrsv::HY_DIAG) && (c >> 12) == 40; });
  std::rotate(bad.begin() + 1, it, it + 1);  // row 40's first chunk right after the first job
  CHECK(!sgtrsv::hy_jobs_valid(64, 4, 2, 1, false, bad), "a chunk ahead of its columns' rows passed the job table check");
  bad    = j;
  bad[5] = bad[4];
  CHECK(!sgtrsv::hy_jobs_valid(64, 4, 2, 1, false, bad), "a duplicated job passed the job table check");
  CHECK(big > 0 && differ == big, "order 2 equals order 0 in %d of %d large shapes", big - differ, big);
}

// ---------------------------------------------------------------- the chain's x barrier protocol
// A model of the cluster + helpers kernel's x window (trsv_cluster_cuda.cu: hy_critical, hy_update,
// hy_xbar_warp; hy_nbar in trsv_hybrid_jobs.hpp) with PTX's mbarrier semantics (pending arrivals,
// tx-count, phase; try_wait.parity(p) passes iff the current phase's parity differs from p): one cluster
// of cs CTAs, row I owned by CTA I % cs; its critical warp, U update warps and the barrier warp, and every
// delivery of an x block's bytes to a CTA, run in a random order. Checked: every wait for x_J passes in
// x_J's own phase and finds x_J in its slot, every delivery counts on its own phase and lands in a slot
// nobody is reading, and the run ends. (bench/results/experiments-20261128f/slot_barrier_model.py is the
// same model in Python, with the earlier protocols that failed on the GPU.)
namespace {
struct XbMBar {
  int  pending = 1, tx = 0, phase = 0;
  void check()
  {
    if (pending == 0 && tx == 0) {
      phase++;
      pending = 1;
    }
  }
  void arrive_expect(int b) { tx += b, pending--, check(); }
  void complete_tx(int b) { tx -= b, check(); }
  bool parity_done(int p) const { return (phase & 1) != p; }
};
enum XbOpKind { XB_WAIT_ZREADY, XB_SET_ZTAKEN, XB_XWAIT, XB_XREAD, XB_FORM, XB_WAIT_ZTAKEN, XB_SET_ZREADY, XB_SLOT };
struct XbOp {
  XbOpKind k;
  int      v;  // row or block
};
// returns "" when the run passes, else what failed
std::string xbar_run(int nb, int cs, int U, int W, int la, int nbar, std::mt19937_64 &rng)
{
  const int                        xr = W + 2;
  std::vector<std::vector<XbMBar>> bar(cs, std::vector<XbMBar>(nbar));
  std::vector<std::vector<int>>    data(cs, std::vector<int>(xr, -1)), readers(cs, std::vector<int>(xr, 0));
  std::vector<char>                zready(nb, 0), ztaken(nb, 0);
  std::vector<std::pair<int, int>> deliveries;  // (J, CTA)
  for (auto &b : bar)
    for (auto &m : b) m.arrive_expect(1);
  struct Agent {
    int               c;
    std::vector<XbOp> ops;
    size_t            pc = 0;
  };
  std::vector<Agent> ag;
  for (int c = 0; c < cs; c++) {
    Agent cr{c, {}};
    for (int I = c; I < nb; I += cs) {
      cr.ops.push_back({XB_WAIT_ZREADY, I});
      if (la == 2 && I > 1) cr.ops.insert(cr.ops.end(), {{XB_XWAIT, I - 2}, {XB_XREAD, I - 2}});
      cr.ops.push_back({XB_SET_ZTAKEN, I});
      if (I > 0) cr.ops.insert(cr.ops.end(), {{XB_XWAIT, I - 1}, {XB_XREAD, I - 1}});
      cr.ops.push_back({XB_FORM, I});
    }
    ag.push_back(cr);
    for (int u = 0; u < U; u++) {
      Agent up{c, {}};
      for (int I = c + cs * u, prev = -1; I < nb; prev = I, I += cs * U) {
        if (prev >= 0) up.ops.push_back({XB_WAIT_ZTAKEN, prev});
        for (int J = std::max(0, I - W + 1); J < I - la; J++) up.ops.insert(up.ops.end(), {{XB_XWAIT, J}, {XB_XREAD, J}});
        up.ops.push_back({XB_SET_ZREADY, I});
      }
      ag.push_back(up);
    }
    Agent sw{c, {}};
    for (int J = 0; J < nb; J++) sw.ops.push_back({XB_SLOT, J});
    ag.push_back(sw);
  }
  auto runnable = [&](const Agent &a) {
    if (a.pc == a.ops.size()) return false;
    const XbOp &o = a.ops[a.pc];
    switch (o.k) {
    case XB_WAIT_ZREADY:
      return zready[o.v] != 0;
    case XB_WAIT_ZTAKEN:
      return ztaken[o.v] != 0;
    case XB_XWAIT:
    case XB_SLOT:
      return bar[a.c][o.v % nbar].parity_done((o.v / nbar) & 1);
    default:
      return true;
    }
  };
  char msg[160];
  for (long step = 0;; step++) {
    if (step > 50000000) return "too many steps";
    std::vector<int> ready;
    for (int i = 0; i < (int)ag.size(); i++)
      if (runnable(ag[i])) ready.push_back(i);
    const size_t nch = ready.size() + (deliveries.empty() ? 0 : 1);
    if (nch == 0) {
      for (const Agent &a : ag)
        if (a.pc < a.ops.size()) return "deadlock";
      return "";
    }
    const size_t ch = std::uniform_int_distribution<size_t>(0, nch - 1)(rng);
    if (ch == ready.size()) {  // one delivery, chosen at random
      const size_t k = std::uniform_int_distribution<size_t>(0, deliveries.size() - 1)(rng);
      const auto [J, d] = deliveries[k];
      deliveries[k]     = deliveries.back();
      deliveries.pop_back();
      XbMBar &m = bar[d][J % nbar];
      if (m.phase != J / nbar) return snprintf(msg, sizeof msg, "x_%d's bytes counted on phase %d of barrier %d in CTA %d", J, m.phase, J % nbar, d), msg;
      if (readers[d][J % xr]) return snprintf(msg, sizeof msg, "x_%d landed in CTA %d while x_%d is being read", J, d, data[d][J % xr]), msg;
      data[d][J % xr] = J;
      m.complete_tx(1);
      continue;
    }
    Agent      &a = ag[ready[ch]];
    const XbOp &o = a.ops[a.pc++];
    switch (o.k) {
    case XB_SET_ZTAKEN:
      ztaken[o.v] = 1;
      break;
    case XB_SET_ZREADY:
      zready[o.v] = 1;
      break;
    case XB_XWAIT:
      if (bar[a.c][o.v % nbar].phase != o.v / nbar + 1)
        return snprintf(msg, sizeof msg, "ambiguous wait: CTA %d passed x_%d's wait in phase %d of barrier %d", a.c, o.v, bar[a.c][o.v % nbar].phase, o.v % nbar), msg;
      if (data[a.c][o.v % xr] != o.v) return snprintf(msg, sizeof msg, "stale read: CTA %d wanted x_%d, found x_%d", a.c, o.v, data[a.c][o.v % xr]), msg;
      readers[a.c][o.v % xr]++;
      break;
    case XB_XREAD:
      readers[a.c][o.v % xr]--;
      break;
    case XB_FORM:
      for (int d = 0; d < cs; d++) deliveries.push_back({o.v, d});
      break;
    case XB_SLOT:
      if (o.v + nbar < nb) bar[a.c][o.v % nbar].arrive_expect(1);
      break;
    default:
      break;
    }
  }
}
} // namespace

static void xbar_protocol(bool quick)
{
  std::mt19937_64 rng(20261128);
  // the kernel's ring (hy_nbar): random shapes (clusters of 2-16 CTAs, 1-6 update warps, windows from
  // cs + 2, look-ahead 1 / 2, up to ~4 rings of rows) and the defaults' shapes
  const int cl[] = {2, 3, 4, 8, 16};
  int       runs = quick ? 12 : 400, bad = 0;
  for (int r = 0; r < runs; r++) {
    const int cs = cl[rng() % (quick ? 3 : 5)], U = 1 + (int)(rng() % 6), la = 1 + (int)(rng() % 2);
    const int Ws[] = {cs + 2, cs + 3, std::max(cs + 2, 8), std::max(cs + 2, 32)}, W = Ws[rng() % 4];
    const int nb = 1 + (int)(rng() % (quick ? 2 * (W + 2) : 4 * (W + 2) + cs * U));
    const int nbar = sgtrsv::hy_nbar(nb, cs, U, W + 2);
    const std::string e = xbar_run(nb, cs, U, W, la, nbar, rng);
    CHECK(e.empty(), "x barrier protocol nb=%d cs=%d U=%d W=%d la=%d nbar=%d: %s", nb, cs, U, W, la, nbar, e.c_str());
  }
  if (!quick)
    for (int cs : {8, 16})
      for (int U : {4, 6})
        for (int la : {1, 2}) {  // the defaults: 16 CTAs up to n = 12288, 8 above; 4 or 6 update warps; window 32
          const int nb = 160;
          const std::string e = xbar_run(nb, cs, U, 32, la, sgtrsv::hy_nbar(nb, cs, U, 34), rng);
          CHECK(e.empty(), "x barrier protocol (defaults) cs=%d U=%d la=%d: %s", cs, U, la, e.c_str());
        }
  // the model can fail: a ring of one barrier per window slot (75a67f2, which read stale x on the GPU with
  // 16 CTAs x 4 update warps) and a ring 4 shorter than the bound must be caught
  for (int r = 0; r < (quick ? 3 : 20); r++) bad += !xbar_run(128, 16, 4, 32, 1, 34, rng).empty();
  CHECK(bad > 0, "a ring of xr barriers with 16 CTAs x 4 update warps passed the x barrier model (%d runs)", quick ? 3 : 20);
  bad = 0;
  for (int r = 0; r < (quick ? 3 : 20); r++) bad += !xbar_run(60, 2, 5, 4, 1, 2 * 6 - 1 - 4, rng).empty();
  CHECK(bad > 0, "a ring 4 shorter than the bound passed the x barrier model");
}

// The job order's choice (hy_choose_order) against what the GPU printed (SG_TRSV_PROFILE's "model: peak, step,
// ratio", bench/results/experiments-20261128g runs 4-5, H200: peak 4814 GB/s; the orders are this rule's: the GPU ran
// fp64 14336 at order 0 under 2295865's threshold 1.2, and measured it with order 2 forced) and the switch points
// the README states: order 2 from fp64 n ~ 15300 / fp32 ~ 15800 on the H100, fp64 ~ 14000 / fp32 ~ 14200 on the H200.
static void order_choice()
{
  const double h100 = 2.0 * 2619000 * 1e-3 * 5120 / 8, h200 = 2.0 * 3761000 * 1e-3 * 5120 / 8;  // (clock kHz, bus bits)
  CHECK(std::fabs(h200 * 1e-3 - 4814) < 0.5 && std::fabs(h100 - 3.35e6) < 0.01e6, "peaks %.0f / %.0f", h100, h200);
  auto pick = [](bool f32, int n, double peak) { return sgtrsv::hy_choose_order(f32, n, (n + 31) / 32, 32.0 * 32 * (f32 ? 4 : 8), peak, 0, -1, -1, 0); };
  struct Seen {
    bool   f32;
    int    n, step, order;
    double ratio;
  };
  const Seen seen[] = {{true, 16384, 200, 2, 1.21}, {true, 12288, 200, 0, 0.91}, {false, 16384, 360, 2, 1.35}, {false, 14336, 360, 2, 1.18}, {false, 20480, 480, 2, 1.26}};
  for (const Seen &e : seen) {
    const sgtrsv::HyOrderChoice c = pick(e.f32, e.n, h200);
    CHECK(c.step_ns == e.step && c.order == e.order && std::fabs(c.ratio - e.ratio) < 0.006, "H200 %s n=%d: step %d order %d ratio %.3f, the GPU printed %d / %d / %.2f",
          e.f32 ? "fp32" : "fp64", e.n, c.step_ns, c.order, c.ratio, e.step, e.order, e.ratio);
  }
  struct Switch {
    bool   f32;
    double peak;
    int    lo, hi;  // order 0 at lo, order 2 from hi on (every 32 rows up to 32768)
  };
  const Switch sw[] = {{false, h100, 14848, 15360}, {true, h100, 15616, 15872}, {false, h200, 13824, 14080}, {true, h200, 14080, 14336}};
  for (const Switch &w : sw) {
    int first = -1;
    for (int n = 4096; n <= 32768; n += 32) {
      const int o = pick(w.f32, n, w.peak).order;
      if (o == 2 && first < 0) first = n;
      CHECK(first < 0 || o == 2, "%s peak %.0f: order %d at n=%d after order 2 from %d", w.f32 ? "fp32" : "fp64", w.peak, o, n, first);
    }
    CHECK(first > w.lo && first <= w.hi, "%s peak %.0f: order 2 from n=%d, expected (%d, %d]", w.f32 ? "fp32" : "fp64", w.peak, first, w.lo, w.hi);
  }
  // the overrides win
  const sgtrsv::HyOrderChoice o = sgtrsv::hy_choose_order(true, 16384, 512, 4096, h200, 333, 77, 0, 2000);
  CHECK(o.step_ns == 333 && o.lead == 77 && o.order == 0 && o.bw == 2.0e6, "overrides: step %d lead %d order %d bw %g", o.step_ns, o.lead, o.order, o.bw);
}

// sg_ctx_set_l2_fetch: argument checks, no effect on host contexts; on a CUDA context a change to 32
// bytes, read back, and the restore of the value before (the batched order-16 solves pick their form
// by it: the batch part runs after this, under the restored value)
static void l2_fetch_api()
{
  int prev = -5;
  CHECK(sg_ctx_set_l2_fetch(nullptr, 32, &prev) == SG_ERR_ARG && prev == 0, "NULL context: SG_ERR_ARG, prev %d", prev);
  CHECK(sg_ctx_set_l2_fetch(g_hctx, -1, nullptr) == SG_ERR_ARG && sg_ctx_set_l2_fetch(g_hctx, 129, nullptr) == SG_ERR_ARG, "bytes out of 0..128: SG_ERR_ARG");
  prev = -5;
  CHECK(sg_ctx_set_l2_fetch(g_hctx, 32, &prev) == SG_OK && prev == 0, "host context: no effect, prev %d", prev);
  if (!g_cctx) return;
  int p0 = -1, p1 = -1, p2 = -1;
  CHECK(sg_ctx_set_l2_fetch(g_cctx, 32, &p0) == SG_OK && p0 >= 0 && p0 <= 128, "CUDA context: 32 bytes (before: %d)", p0);
  CHECK(sg_ctx_set_l2_fetch(g_cctx, p0, &p1) == SG_OK && p1 == 32, "CUDA context: the device took 32 bytes (read back %d)", p1);
  CHECK(sg_ctx_set_l2_fetch(g_cctx, p0, &p2) == SG_OK && p2 == p0, "CUDA context: %d bytes restored (read back %d)", p0, p2);
}

int main(int argc, char **argv)
{
  bool quick;
  if (const int rc = tri_test_init(argc, argv, &quick); rc >= 0) return rc;
  // STRUCTGPU_TEST_ONLY=single|batch|plan: one part alone (GPU debugging, sanitizer runs)
  const char *only = getenv("STRUCTGPU_TEST_ONLY");
  if (only && !strcmp(only, "plan")) {  // (sanitizer runs of the plans alone)
    plan_sweep<double>(quick);
    plan_sweep<float>(quick);
    return tri_test_finish("test_trsv", quick);
  }
  if (!only || strcmp(only, "batch")) {
    job_tables(quick);
    order_choice();
    xbar_protocol(quick);
    sweep<double>(quick);
    sweep<float>(quick);
    chained<double>(quick);
    chained<float>(quick);
    bad_inputs<double>(quick);
    bad_inputs<float>(quick);
    plan_sweep<double>(quick);
    plan_sweep<float>(quick);
  }
  if (!only || strcmp(only, "single")) {
    l2_fetch_api();
    batch_sweep<double>(quick);
    batch_sweep<float>(quick);
  }
  return tri_test_finish("test_trsv", quick);
}
