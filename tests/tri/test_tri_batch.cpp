// Batched tridiagonal solvers: every algorithm, both layouts (and ld > m / ld > nbatch),
// float and double, odd/prime/power-of-two sizes and several batch counts, against LAPACK
// dgtsv (partial pivoting, double, on copies of the same input values).
//   (no args)  host twin
//   --quick    reduced case set (for valgrind)
//   --cuda     GPU path: every case also runs on the device and is compared with the host
//              twin of the same algorithm and with LAPACK (SKIP line when no CUDA/GPU)
// Tolerances (relative max-norm error per system, ||x - x_ref||_max / ||x_ref||_max):
//   vs LAPACK:      1e-10 (double), 2e-4 (float)   [well-conditioned systems, cond <= ~50]
//   GPU vs host:    1e-12 (double), 1e-5 (float)   [same algorithm, only rounding/FMA differ]
// Entries the solver must not read (ld gaps, dl[0], du[m-1]) hold NaN; x's gaps hold a
// sentinel that must survive. Exit status 1 on any failure.
#include "structgpu/tri_kernels.h"
#include "tri/tri_team.hpp"  // internal: order-independence check of the team algorithms
#include <algorithm>
#include <cmath>
#include <numeric>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>
#ifdef SG_HAVE_CUDA
#include <cuda_runtime.h>
#endif

extern "C" void dgtsv_(int *n, int *nrhs, double *dl, double *d, double *du, double *b, int *ldb, int *info);

static int g_fail = 0, g_pass = 0;
#define CHECK(cond, ...)                                                                                                                 \
  do {                                                                                                                                   \
    if (!(cond)) {                                                                                                                       \
      g_fail++;                                                                                                                          \
      printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                                                        \
      printf(__VA_ARGS__);                                                                                                               \
      printf("\n");                                                                                                                      \
    } else g_pass++;                                                                                                                     \
  } while (0)

static bool g_cuda = false;
static sg_ctx *g_hctx = nullptr, *g_cctx = nullptr;
static const double kSentinel = 12345.0;

template <class T> struct Batch {
  sg_tri_layout     lay;
  long long         m, nb, ld;
  std::vector<T>    dl, d, du, b;
  std::vector<double> xref;  // [s*m + i]
  size_t size() const { return (size_t)(lay == SG_TRI_CONTIGUOUS ? ld * nb : ld * m); }
  size_t idx(long long s, long long i) const { return (size_t)(lay == SG_TRI_CONTIGUOUS ? s * ld + i : i * ld + s); }
};

// kind 0: random, strictly diagonally dominant with random signs; kind 1: (-1, 2.1, -1)
template <class T> static Batch<T> make_batch(sg_tri_layout lay, long long m, long long nb, long long ld, int kind, unsigned seed)
{
  Batch<T> B{lay, m, nb, ld, {}, {}, {}, {}, {}};
  const T nan = (T)NAN;
  B.dl.assign(B.size(), nan); B.d.assign(B.size(), nan); B.du.assign(B.size(), nan); B.b.assign(B.size(), nan);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> U(-1.0, 1.0);
  for (long long s = 0; s < nb; s++)
    for (long long i = 0; i < m; i++) {
      const size_t k = B.idx(s, i);
      double l = kind ? -1.0 : U(rng), u = kind ? -1.0 : U(rng), dd = kind ? 2.1 : (std::fabs(l) + std::fabs(u) + 0.5 + std::fabs(U(rng)));
      if (!kind && U(rng) < 0) dd = -dd;
      B.dl[k] = i > 0 ? (T)l : nan;       // must be ignored
      B.du[k] = i < m - 1 ? (T)u : nan;   // must be ignored
      B.d[k]  = (T)dd;
      B.b[k]  = (T)U(rng);
    }
  // reference: dgtsv on double copies of the (T-rounded) values
  B.xref.resize((size_t)(m * nb));
  std::vector<double> L(m), D(m), Uu(m), X(m);
  for (long long s = 0; s < nb; s++) {
    for (long long i = 0; i < m; i++) {
      const size_t k = B.idx(s, i);
      if (i > 0) L[i - 1] = B.dl[k];
      if (i < m - 1) Uu[i] = B.du[k];
      D[i] = B.d[k]; X[i] = B.b[k];
    }
    int n = (int)m, one = 1, info = 0;
    dgtsv_(&n, &one, L.data(), D.data(), Uu.data(), X.data(), &n, &info);
    if (info != 0) { printf("dgtsv failed info=%d\n", info); exit(1); }
    for (long long i = 0; i < m; i++) B.xref[(size_t)(s * m + i)] = X[i];
  }
  return B;
}

// max over systems of ||x - y||_max / ||y||_max, y given per system as double
template <class T> static double rel_err(const Batch<T> &B, const std::vector<T> &x, const double *y, bool y_layout)
{
  double worst = 0;
  for (long long s = 0; s < B.nb; s++) {
    double e = 0, nrm = 0;
    for (long long i = 0; i < B.m; i++) {
      const double yi = y_layout ? y[B.idx(s, i)] : y[s * B.m + i];
      const double d  = std::fabs((double)x[B.idx(s, i)] - yi);
      e = (d > e || d != d) ? d : e;
      nrm = std::fabs(yi) > nrm ? std::fabs(yi) : nrm;
    }
    const double r = nrm > 0 ? e / nrm : e;
    worst = (r > worst || r != r) ? r : worst;
  }
  return worst;
}

template <class T> static bool gaps_intact(const Batch<T> &B, const std::vector<T> &x)
{
  std::vector<char> used(B.size(), 0);
  for (long long s = 0; s < B.nb; s++)
    for (long long i = 0; i < B.m; i++) used[B.idx(s, i)] = 1;
  for (size_t k = 0; k < used.size(); k++)
    if (!used[k] && x[k] != (T)kSentinel) return false;
  return true;
}

template <class T> static sg_tri_batch desc(const Batch<T> &B, const T *dl, const T *d, const T *du, const T *b, T *x)
{
  sg_tri_batch D;
  D.prec = sizeof(T) == 8 ? SG_REAL64 : SG_REAL32;
  D.layout = B.lay; D.m = B.m; D.nbatch = B.nb; D.ld = B.ld;
  D.dl = dl; D.d = d; D.du = du; D.b = b; D.x = x;
  return D;
}

#ifdef SG_HAVE_CUDA
template <class T> struct DevBatch {
  T *p[5] = {nullptr, nullptr, nullptr, nullptr, nullptr};  // dl d du b x
  explicit DevBatch(const Batch<T> &B)
  {
    const size_t bytes = B.size() * sizeof(T);
    const std::vector<T> *src[4] = {&B.dl, &B.d, &B.du, &B.b};
    for (int k = 0; k < 5; k++) {
      if (cudaMalloc((void **)&p[k], bytes) != cudaSuccess) { printf("cudaMalloc failed\n"); exit(1); }
      if (k < 4) cudaMemcpy(p[k], src[k]->data(), bytes, cudaMemcpyHostToDevice);
    }
    std::vector<T> sent(B.size(), (T)kSentinel);
    cudaMemcpy(p[4], sent.data(), bytes, cudaMemcpyHostToDevice);
  }
  ~DevBatch() { for (T *q : p) cudaFree(q); }
};
#endif

static const char *lay_name(sg_tri_layout l) { return l == SG_TRI_CONTIGUOUS ? "contig" : "inter"; }

// Solve B with alg on the host (and the GPU), compare; alias: x == b.
template <class T> static void run_alg(const Batch<T> &B, sg_tri_alg alg, bool alias, const char *kind)
{
  const double tol_ref = sizeof(T) == 8 ? 1e-10 : 2e-4, tol_dev = sizeof(T) == 8 ? 1e-12 : 1e-5;
  (void)tol_dev;
  char tag[200];
  snprintf(tag, sizeof tag, "%-6s %-6s %-6s m=%lld nb=%lld ld=%lld %s%s", sg_tri_alg_name(alg), sizeof(T) == 8 ? "double" : "float",
           lay_name(B.lay), B.m, B.nb, B.ld, kind, alias ? " x=b" : "");
  std::vector<T> x(B.size(), (T)kSentinel);
  std::vector<T> bb = B.b;  // alias case: x and b are the same buffer
  if (alias) for (size_t k = 0; k < x.size(); k++) x[k] = B.b[k] == B.b[k] ? B.b[k] : (T)kSentinel;
  sg_tri_batch D = desc(B, B.dl.data(), B.d.data(), B.du.data(), alias ? (const T *)x.data() : bb.data(), x.data());
  sg_report rep;
  sg_status st = sg_tri_batch_solve_host(g_hctx, alg, &D, 0.0, &rep);
  const double eh = rel_err(B, x, B.xref.data(), false);
  bool ok = st == SG_OK && eh <= tol_ref && gaps_intact(B, x) && (alg == SG_TRI_AUTO || rep.alg == alg) && rep.alg != SG_TRI_AUTO;
  CHECK(ok, "host %s: status %s (%s) err %.3g (tol %.1g) gaps %d alg %s", tag, sg_status_string(st), rep.msg, eh, tol_ref,
        (int)gaps_intact(B, x), sg_tri_alg_name(rep.alg));
  printf("%s host %s err=%.2e\n", ok ? "ok  " : "FAIL", tag, eh);
#ifdef SG_HAVE_CUDA
  if (!g_cuda) return;
  DevBatch<T> G(B);
  const size_t bytes = B.size() * sizeof(T);
  if (alias) {  // x buffer = b values with sentinel gaps
    std::vector<T> xb(B.size(), (T)kSentinel);
    for (long long s = 0; s < B.nb; s++) for (long long i = 0; i < B.m; i++) xb[B.idx(s, i)] = B.b[B.idx(s, i)];
    cudaMemcpy(G.p[4], xb.data(), bytes, cudaMemcpyHostToDevice);
  }
  sg_tri_batch DD = desc(B, G.p[0], G.p[1], G.p[2], alias ? (const T *)G.p[4] : G.p[3], G.p[4]);
  sg_report drep;
  st = sg_tri_batch_solve_cuda(g_cctx, alg, &DD, 0.0, &drep);
  std::vector<T> xd(B.size());
  cudaMemcpy(xd.data(), G.p[4], bytes, cudaMemcpyDeviceToHost);
  std::vector<double> xh(x.begin(), x.end());
  const double ed = rel_err(B, xd, B.xref.data(), false);
  // host twin of the algorithm the device actually used (AUTO resolves differently)
  double edh = 0;
  if (st == SG_OK && drep.alg != rep.alg) {
    std::vector<T> x2(B.size(), (T)kSentinel);
    sg_tri_batch D2 = desc(B, B.dl.data(), B.d.data(), B.du.data(), bb.data(), x2.data());
    sg_report r2;
    sg_tri_batch_solve_host(g_hctx, drep.alg, &D2, 0.0, &r2);
    xh.assign(x2.begin(), x2.end());
  }
  edh = rel_err(B, xd, xh.data(), true);
  ok = st == SG_OK && ed <= tol_ref && edh <= tol_dev && gaps_intact(B, xd);
  CHECK(ok, "cuda %s: status %s (%s) err %.3g vs host %.3g gaps %d", tag, sg_status_string(st), drep.msg, ed, edh, (int)gaps_intact(B, xd));
  printf("%s cuda %s err=%.2e vs-host=%.2e (%s)\n", ok ? "ok  " : "FAIL", tag, ed, edh, sg_tri_alg_name(drep.alg));
#endif
}

static const sg_tri_alg kAlgs[] = {SG_TRI_THOMAS, SG_TRI_CR, SG_TRI_PCR, SG_TRI_RD, SG_TRI_CR_PCR, SG_TRI_CR_RD, SG_TRI_TPCR, SG_TRI_AUTO};

template <class T> static void sweep(bool quick)
{
  const std::vector<long long> ms  = quick ? std::vector<long long>{1, 2, 3, 17, 127, 1000} : std::vector<long long>{1, 2, 3, 17, 127, 512, 1000, 4097};
  const std::vector<long long> nbs = quick ? std::vector<long long>{1, 3, 100} : std::vector<long long>{1, 3, 100, 2000};
  const long long limit = quick ? 3000 : 300000;  // total rows per case, keeps the run at a few seconds
  unsigned seed = 1;
  for (int lay = 0; lay < 2; lay++)
    for (long long m : ms)
      for (long long nb : nbs) {
        if (m * nb > limit && nb > 3) continue;
        if (quick && m * nb > limit && m > 127) continue;
        for (int kind = 0; kind < 2; kind++) {
          if (kind == 1 && nb > 100) continue;
          Batch<T> B = make_batch<T>((sg_tri_layout)lay, m, nb, lay == 0 ? m : nb, kind, seed++);
          for (sg_tri_alg alg : kAlgs) run_alg(B, alg, false, kind ? "poisson" : "random");
        }
      }
  // ld > m / ld > nbatch, and x aliasing b
  for (int lay = 0; lay < 2; lay++)
    for (long long m : {17ll, 127ll})
      for (long long nb : {3ll, 100ll}) {
        Batch<T> B = make_batch<T>((sg_tri_layout)lay, m, nb, lay == 0 ? m + 5 : nb + 3, 0, seed++);
        for (sg_tri_alg alg : kAlgs) {
          run_alg(B, alg, false, "random");
          run_alg(B, alg, true, "random");
        }
      }
}

// Breakdown and argument errors, on the host and (with --cuda) the device.
template <class T> static void bad_inputs()
{
  const char *pn = sizeof(T) == 8 ? "double" : "float";
  for (int lay = 0; lay < 2; lay++)
    for (sg_tri_alg alg : kAlgs) {
      for (int what = 0; what < 2; what++) {
        Batch<T> B = make_batch<T>((sg_tri_layout)lay, 37, 9, lay == 0 ? 37 : 9, 0, 777);
        if (what == 0) {  // zero row 11 of system 5: singular
          B.d[B.idx(5, 11)] = 0; B.dl[B.idx(5, 11)] = 0; B.du[B.idx(5, 11)] = 0;
        } else B.b[B.idx(2, 3)] = (T)NAN;
        const sg_status want = what == 0 ? SG_ERR_ZERO_PIVOT : SG_ERR_NONFINITE;
        const long long wsys = what == 0 ? 5 : 2;
        for (int dev = 0; dev < (g_cuda ? 2 : 1); dev++) {
          sg_report rep;
          sg_status st = SG_OK;
          std::vector<T> x(B.size(), (T)kSentinel);
          sg_tri_batch D = desc(B, B.dl.data(), B.d.data(), B.du.data(), B.b.data(), x.data());
          if (!dev) st = sg_tri_batch_solve_host(g_hctx, alg, &D, 0.0, &rep);
#ifdef SG_HAVE_CUDA
          else {
            DevBatch<T> G(B);
            sg_tri_batch DD = desc(B, G.p[0], G.p[1], G.p[2], G.p[3], G.p[4]);
            st = sg_tri_batch_solve_cuda(g_cctx, alg, &DD, 0.0, &rep);
          }
#endif
          // the breakdown row is exact for our algorithms (first failure in step order wins)
          const bool row_ok = what == 1 ? rep.row == 3 : (rep.alg == SG_TRI_TPCR || rep.row == 11);
          const bool ok = st == want && rep.status == st && rep.system == wsys && row_ok && rep.msg[0];
          CHECK(ok, "%s %s %s %s: got %s system %lld (want %s system %lld): %s", dev ? "cuda" : "host", what ? "nan" : "zero-pivot",
                sg_tri_alg_name(alg), pn, sg_status_string(st), rep.system, sg_status_string(want), wsys, rep.msg);
          printf("%s %s %-10s %-6s %-6s %-6s -> %s system %lld row %lld: %s\n", ok ? "ok  " : "FAIL", dev ? "cuda" : "host",
                 what ? "nan-in-b" : "zero-pivot", sg_tri_alg_name(alg), pn, lay_name((sg_tri_layout)lay), sg_status_string(st),
                 rep.system, rep.row, rep.msg);
        }
      }
    }
  // argument errors (checked before any data is touched: host pointers are fine for both)
  Batch<T> B = make_batch<T>(SG_TRI_CONTIGUOUS, 5, 2, 5, 0, 3);
  std::vector<T> x(B.size());
  for (int dev = 0; dev < (g_cuda ? 2 : 1); dev++)
    for (int k = 0; k < 5; k++) {
      sg_tri_batch D = desc(B, B.dl.data(), B.d.data(), B.du.data(), B.b.data(), x.data());
      const char *what[] = {"m=0", "contig ld<m", "inter ld<nbatch", "d=NULL", "nbatch=0"};
      if (k == 0) D.m = 0;
      if (k == 1) D.ld = 4;
      if (k == 2) { D.layout = SG_TRI_INTERLEAVED; D.ld = 1; }
      if (k == 3) D.d = nullptr;
      if (k == 4) D.nbatch = 0;
      sg_report rep;
      sg_status st = dev ? sg_tri_batch_solve_cuda(g_cctx, SG_TRI_CR, &D, 0.0, &rep) : sg_tri_batch_solve_host(g_hctx, SG_TRI_CR, &D, 0.0, &rep);
      CHECK(st == SG_ERR_ARG && rep.msg[0], "%s %s %s: got %s", dev ? "cuda" : "host", what[k], pn, sg_status_string(st));
      printf("%s %s arg %-16s %-6s -> %s: %s\n", st == SG_ERR_ARG ? "ok  " : "FAIL", dev ? "cuda" : "host", what[k], pn,
             sg_status_string(st), rep.msg);
    }
}

// The GPU runs each par() step of tri_team.hpp with many threads at once; the host twin
// runs it as a loop. Both agree only if no step reads what another index of the same step
// writes. Check it: run every team algorithm with the iterations of each step in reverse
// and in shuffled order and require bitwise equal results (also for a small `inter`).
struct perm_team : sg_host_team {
  std::mt19937 rng{11};
  int          mode = 0;  // 0 reverse, 1 shuffled
  template <class F> void par(int n, F &&f)
  {
    std::vector<int> p(n);
    std::iota(p.begin(), p.end(), 0);
    if (mode == 0) std::reverse(p.begin(), p.end());
    else std::shuffle(p.begin(), p.end(), rng);
    for (int i : p) f(i);
  }
};

static void order_independence()
{
  const sg_tri_alg algs[] = {SG_TRI_CR, SG_TRI_PCR, SG_TRI_RD, SG_TRI_CR_PCR, SG_TRI_CR_RD};
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> R(-1, 1);
  for (int n : {1, 2, 8, 64, 128, 1024})
    for (int inter : {4, 64})
      for (sg_tri_alg alg : algs) {
        const long long words = tri_team_words(alg, n, inter);
        std::vector<double> w0((size_t)words, NAN), w1, w2, ref(4 * (size_t)n);
        for (int i = 0; i < n; i++) {
          w0[i] = i ? R(rng) : 0; w0[2 * n + i] = i < n - 1 ? R(rng) : 0;
          w0[n + i] = 2.5 + R(rng); w0[3 * n + i] = R(rng);
        }
        w1 = w0; w2 = w0;
        sg_host_team t0; perm_team t1, t2; t2.mode = 1;
        tri_team_solve_alg(t0, alg, w0.data(), n, inter, 1e-14);
        tri_team_solve_alg(t1, alg, w1.data(), n, inter, 1e-14);
        tri_team_solve_alg(t2, alg, w2.data(), n, inter, 1e-14);
        bool same = !t0.failed() && !t1.failed() && !t2.failed();
        for (int i = 0; i < n; i++) same = same && w0[3 * n + i] == w1[3 * n + i] && w0[3 * n + i] == w2[3 * n + i];
        CHECK(same, "order dependence: %s n=%d inter=%d", sg_tri_alg_name(alg), n, inter);
        printf("%s order-independent %-6s n=%d inter=%d\n", same ? "ok  " : "FAIL", sg_tri_alg_name(alg), n, inter);
      }
}

static void misc()
{
  order_independence();
  // sg_tri_thomas_ref against dgtsv on a prime-size system
  const int n = 53;
  std::vector<double> dl(n), d(n), du(n), bx(n), L(n), D(n), U(n), X(n);
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> R(-1, 1);
  for (int i = 0; i < n; i++) { dl[i] = R(rng); du[i] = R(rng); d[i] = 3 + R(rng); bx[i] = X[i] = R(rng); D[i] = d[i]; }
  for (int i = 0; i + 1 < n; i++) { L[i] = dl[i + 1]; U[i] = du[i]; }
  int nn = n, one = 1, info;
  dgtsv_(&nn, &one, L.data(), D.data(), U.data(), X.data(), &nn, &info);
  sg_report rep;
  sg_status st = sg_tri_thomas_ref(n, dl.data(), d.data(), du.data(), bx.data(), 0, &rep);
  double e = 0;
  for (int i = 0; i < n; i++) e = std::fmax(e, std::fabs(bx[i] - X[i]));
  CHECK(st == SG_OK && e < 1e-12, "thomas_ref err %g", e);
  printf("%s thomas_ref n=%d err=%.2e\n", st == SG_OK && e < 1e-12 ? "ok  " : "FAIL", n, e);
  d[20] = 0; dl[20] = 0; du[20] = 0;
  st = sg_tri_thomas_ref(n, dl.data(), d.data(), du.data(), bx.data(), 0, &rep);
  CHECK(st == SG_ERR_ZERO_PIVOT && rep.row == 20, "thomas_ref zero pivot: %s row %lld", sg_status_string(st), rep.row);
  // choice, names
  CHECK(sg_tri_choose(SG_BACKEND_HOST, SG_REAL64, SG_TRI_CONTIGUOUS, 100, 100) == SG_TRI_THOMAS, "host choice");
  CHECK(sg_tri_choose(SG_BACKEND_CUDA, SG_REAL64, SG_TRI_INTERLEAVED, 100, 100) == SG_TRI_TPCR, "cuda interleaved choice (measured: TPCR beats Thomas)");
  CHECK(sg_tri_choose(SG_BACKEND_CUDA, SG_REAL32, SG_TRI_CONTIGUOUS, 1 << 20, 1) == SG_TRI_TPCR, "cuda big choice");
  CHECK(!strcmp(sg_tri_alg_name(SG_TRI_CR_RD), "cr_rd") && !strcmp(sg_tri_alg_name(SG_TRI_TPCR), "tpcr"), "names");
  CHECK(sg_ctx_backend(g_hctx) == SG_BACKEND_HOST, "backend");
}

int main(int argc, char **argv)
{
  bool quick = false, want_cuda = false;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--quick")) quick = true;
    else if (!strcmp(argv[i], "--cuda")) want_cuda = true;
    else { printf("usage: %s [--quick] [--cuda]\n", argv[0]); return 2; }
  }
  if (want_cuda) {
    if (!sg_cuda_available()) {
      printf("SKIP: --cuda requested but no CUDA device is usable (or built without CUDA)\n");
      return 0;
    }
    sg_status st = sg_ctx_create(SG_BACKEND_CUDA, nullptr, &g_cctx);
    if (st != SG_OK) { printf("FAIL: cannot create CUDA context: %s\n", sg_status_string(st)); return 1; }
    g_cuda = true;
  }
  if (sg_ctx_create(SG_BACKEND_HOST, nullptr, &g_hctx) != SG_OK) return 1;
  misc();
  sweep<double>(quick);
  sweep<float>(quick);
  bad_inputs<double>();
  bad_inputs<float>();
  sg_ctx_destroy(&g_hctx);
  sg_ctx_destroy(&g_cctx);
  printf("test_tri_batch%s%s: %d checks passed, %d failed\n", g_cuda ? " --cuda" : "", quick ? " --quick" : "", g_pass, g_fail);
  return g_fail ? 1 : 0;
}
