// Shared fixtures of the tridiagonal kernel tests (test_tri_*.cpp; one translation unit each):
// check counters and CHECK, contexts and command line (--quick, --cuda), batches of random
// strictly diagonally dominant (kind 0) or Poisson-like (-1, 2.1, -1; kind 1) systems with a
// LAPACK dgtsv reference, error measures, sentinel/NaN gap checks and device buffers.
// Tolerances (relative max-norm error per system, ||x - x_ref||_max / ||x_ref||_max):
//   vs LAPACK:      1e-10 (double), 2e-4 (float)   [well-conditioned systems, cond <= ~50]
//   GPU vs host:    1e-12 (double), 1e-5 (float)   [same algorithm, only rounding/FMA differ]
#pragma once
#include "structgpu/tri_kernels.h"
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
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

static bool         g_cuda = false;
static sg_ctx      *g_hctx = nullptr, *g_cctx = nullptr;
static const double kSentinel = 12345.0;  // x entries the solver must not write

template <class T> static const char  *pname() { return sizeof(T) == 8 ? "double" : "float"; }
template <class T> static sg_precision prec() { return sizeof(T) == 8 ? SG_REAL64 : SG_REAL32; }
template <class T> static double       tol_ref() { return sizeof(T) == 8 ? 1e-10 : 2e-4; }
template <class T> static double       tol_dev() { return sizeof(T) == 8 ? 1e-12 : 1e-5; }
inline const char *lay_name(sg_tri_layout l) { return l == SG_TRI_CONTIGUOUS ? "contig" : "inter"; }

// Parses [--quick] [--cuda] and creates the contexts. Returns -1 to go on, else the exit code.
inline int tri_test_init(int argc, char **argv, bool *quick)
{
  bool want_cuda = false;
  *quick         = false;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--quick")) *quick = true;
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
  if (sg_ctx_create(SG_BACKEND_HOST, nullptr, &g_hctx) != SG_OK) { sg_ctx_destroy(&g_cctx); return 1; }
  return -1;
}

// Destroys the contexts, prints the summary line; returns the exit code.
inline int tri_test_finish(const char *name, bool quick)
{
  sg_ctx_destroy(&g_hctx);
  sg_ctx_destroy(&g_cctx);
  printf("%s%s%s: %d checks passed, %d failed\n", name, g_cuda ? " --cuda" : "", quick ? " --quick" : "", g_pass, g_fail);
  return g_fail ? 1 : 0;
}

// LAPACK solution of one system given as double arrays (dl[0], du[m-1] ignored)
inline void lapack(long long m, const double *dl, const double *d, const double *du, const double *b, double *x)
{
  std::vector<double> L(m > 1 ? m - 1 : 1), D(d, d + m), U(m > 1 ? m - 1 : 1);
  for (long long i = 0; i + 1 < m; i++) { L[i] = dl[i + 1]; U[i] = du[i]; }
  for (long long i = 0; i < m; i++) x[i] = b[i];
  int n = (int)m, one = 1, info = 0;
  dgtsv_(&n, &one, L.data(), D.data(), U.data(), x, &n, &info);
  if (info != 0) { printf("dgtsv failed info=%d\n", info); exit(1); }
}

// Batch of systems in a layout; unused entries (ld gaps, dl[0], du[m-1]) hold NaN.
template <class T> struct Batch {
  sg_tri_layout       lay;
  long long           m, nb, ld;
  std::vector<T>      dl, d, du, b;
  std::vector<double> xref;  // [s*m + i], LAPACK on double copies of the (T-rounded) values
  // the arrays end at the last system's last row (no ld gap after it), so that a read past the element a solver needs
  // leaves the allocation (memcheck / valgrind report it)
  size_t size() const { return (size_t)(lay == SG_TRI_CONTIGUOUS ? ld * (nb - 1) + m : ld * (m - 1) + nb); }
  size_t idx(long long s, long long i) const { return (size_t)(lay == SG_TRI_CONTIGUOUS ? s * ld + i : i * ld + s); }
};

// B.xref of system s from B's current (T-rounded) values, by LAPACK (after editing a batch)
template <class T> static void batch_ref(Batch<T> &B, long long s)
{
  std::vector<double> L(B.m), D(B.m), U(B.m), R(B.m);
  for (long long i = 0; i < B.m; i++) {
    const size_t k = B.idx(s, i);
    L[i] = i > 0 ? (double)B.dl[k] : 0.0; D[i] = (double)B.d[k]; U[i] = i < B.m - 1 ? (double)B.du[k] : 0.0; R[i] = (double)B.b[k];
  }
  lapack(B.m, L.data(), D.data(), U.data(), R.data(), &B.xref[(size_t)(s * B.m)]);
}

// kind 0: random, strictly diagonally dominant with random signs; kind 1: (-1, 2.1, -1)
template <class T> static Batch<T> make_batch(sg_tri_layout lay, long long m, long long nb, long long ld, int kind, unsigned seed)
{
  Batch<T> B{lay, m, nb, ld, {}, {}, {}, {}, {}};
  const T  nan = (T)NAN;
  B.dl.assign(B.size(), nan); B.d.assign(B.size(), nan); B.du.assign(B.size(), nan); B.b.assign(B.size(), nan);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> U(-1.0, 1.0);
  B.xref.resize((size_t)(m * nb));
  for (long long s = 0; s < nb; s++) {
    for (long long i = 0; i < m; i++) {
      const size_t k = B.idx(s, i);
      double l = kind ? -1.0 : U(rng), u = kind ? -1.0 : U(rng), dd = kind ? 2.1 : (std::fabs(l) + std::fabs(u) + 0.5 + std::fabs(U(rng)));
      if (!kind && U(rng) < 0) dd = -dd;
      if (i > 0) B.dl[k] = (T)l;      // dl[0] stays NaN: must be ignored
      if (i < m - 1) B.du[k] = (T)u;  // du[m-1] stays NaN: must be ignored
      B.d[k] = (T)dd;
      B.b[k] = (T)U(rng);
    }
    batch_ref(B, s);
  }
  return B;
}

// Initial x buffer: the sentinel everywhere, or (alias: x == b) b's values with sentinel gaps.
template <class T> static std::vector<T> x_init(const Batch<T> &B, bool alias)
{
  std::vector<T> x(B.size(), (T)kSentinel);
  if (alias)
    for (long long s = 0; s < B.nb; s++)
      for (long long i = 0; i < B.m; i++) x[B.idx(s, i)] = B.b[B.idx(s, i)];
  return x;
}

// max over systems of ||x - y||_max / ||y||_max; y in the batch layout (y_layout) or [s*m+i]
template <class T, class Y> static double rel_err(const Batch<T> &B, const std::vector<T> &x, const Y *y, bool y_layout)
{
  double worst = 0;
  for (long long s = 0; s < B.nb; s++) {
    double e = 0, nrm = 0;
    for (long long i = 0; i < B.m; i++) {
      const double yi = (double)(y_layout ? y[B.idx(s, i)] : y[s * B.m + i]);
      const double d  = std::fabs((double)x[B.idx(s, i)] - yi);
      e   = (d > e || d != d) ? d : e;
      nrm = std::fabs(yi) > nrm ? std::fabs(yi) : nrm;
    }
    const double r = nrm > 0 ? e / nrm : e;
    worst = (r > worst || r != r) ? r : worst;
  }
  return worst;
}

// every x entry outside the systems still holds the sentinel
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
  D.prec = prec<T>(); D.layout = B.lay; D.m = B.m; D.nbatch = B.nb; D.ld = B.ld;
  D.dl = dl; D.d = d; D.du = du; D.b = b; D.x = x;
  return D;
}

#ifdef SG_HAVE_CUDA
template <class T> static T *dev_copy(const T *h, size_t n)
{
  T *p = nullptr;
  if (cudaMalloc((void **)&p, (n ? n : 1) * sizeof(T)) != cudaSuccess) { printf("cudaMalloc failed\n"); exit(1); }
  if (n) cudaMemcpy(p, h, n * sizeof(T), cudaMemcpyHostToDevice);
  return p;
}
template <class T> static std::vector<T> host_copy(const T *p, size_t n)
{
  std::vector<T> h(n);
  cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost);
  return h;
}
// Device copies of a batch: p = {dl, d, du, b, x}; x starts as x_init(B, alias).
template <class T> struct DevBatch {
  T *p[5];
  DevBatch(const Batch<T> &B, bool alias = false)
  {
    const std::vector<T> x0 = x_init(B, alias);
    const std::vector<T> *src[5] = {&B.dl, &B.d, &B.du, &B.b, &x0};
    for (int k = 0; k < 5; k++) p[k] = dev_copy(src[k]->data(), B.size());
  }
  DevBatch(const DevBatch &) = delete;
  DevBatch &operator=(const DevBatch &) = delete;
  ~DevBatch() { for (T *q : p) cudaFree(q); }
  std::vector<T> x(const Batch<T> &B) const { return host_copy(p[4], B.size()); }
};
#endif

// Solve B with alg on the host and (with --cuda) on the device; alias: x == b. Host: vs LAPACK,
// gaps kept, the algorithm used reported. Device: vs LAPACK and vs the host twin of the
// algorithm the device used (AUTO may resolve differently there), gaps kept.
template <class T> static void run_batch(const Batch<T> &B, sg_tri_alg alg, bool alias, const char *kind)
{
  char tag[200];
  snprintf(tag, sizeof tag, "%-6s %-6s %-6s m=%lld nb=%lld ld=%lld %s%s", sg_tri_alg_name(alg), pname<T>(), lay_name(B.lay), B.m, B.nb,
           B.ld, kind, alias ? " x=b" : "");
  std::vector<T> x = x_init(B, alias);
  sg_tri_batch   D = desc(B, B.dl.data(), B.d.data(), B.du.data(), alias ? (const T *)x.data() : B.b.data(), x.data());
  sg_report      rep;
  sg_status      st = sg_tri_batch_solve_host(g_hctx, alg, &D, 0.0, &rep);
  const double   eh = rel_err(B, x, B.xref.data(), false);
  bool ok = st == SG_OK && eh <= tol_ref<T>() && gaps_intact(B, x) && (alg == SG_TRI_AUTO || rep.alg == alg) && rep.alg != SG_TRI_AUTO;
  CHECK(ok, "host %s: status %s (%s) err %.3g (tol %.1g) gaps %d alg %s", tag, sg_status_string(st), rep.msg, eh, tol_ref<T>(),
        (int)gaps_intact(B, x), sg_tri_alg_name(rep.alg));
  printf("%s host %s err=%.2e\n", ok ? "ok  " : "FAIL", tag, eh);
#ifdef SG_HAVE_CUDA
  if (!g_cuda) return;
  DevBatch<T>  G(B, alias);
  sg_tri_batch DD = desc(B, G.p[0], G.p[1], G.p[2], alias ? (const T *)G.p[4] : G.p[3], G.p[4]);
  sg_report    drep;
  st = sg_tri_batch_solve_cuda(g_cctx, alg, &DD, 0.0, &drep);
  const std::vector<T> xd = G.x(B);
  std::vector<T>       xh = x;
  if (st == SG_OK && drep.alg != rep.alg) {  // host twin of the algorithm the device used
    xh = x_init(B, false);
    sg_tri_batch D2 = desc(B, B.dl.data(), B.d.data(), B.du.data(), B.b.data(), xh.data());
    sg_report    r2;
    sg_tri_batch_solve_host(g_hctx, drep.alg, &D2, 0.0, &r2);
  }
  const double ed = rel_err(B, xd, B.xref.data(), false), edh = rel_err(B, xd, xh.data(), true);
  ok = st == SG_OK && ed <= tol_ref<T>() && edh <= tol_dev<T>() && gaps_intact(B, xd) && (alg == SG_TRI_AUTO || drep.alg == alg);
  CHECK(ok, "cuda %s: status %s (%s) err %.3g vs host %.3g gaps %d alg %s", tag, sg_status_string(st), drep.msg, ed, edh,
        (int)gaps_intact(B, xd), sg_tri_alg_name(drep.alg));
  printf("%s cuda %s err=%.2e vs-host=%.2e (%s)\n", ok ? "ok  " : "FAIL", tag, ed, edh, sg_tri_alg_name(drep.alg));
#endif
}
