// TPCR (register-chunk partition + PCR), the multi-level solver for very large systems and
// the partitioned ("block") primitives, against LAPACK dgtsv (partial pivoting, double, on
// copies of the same input values).
//   (no args)  host twin
//   --quick    reduced case set (for valgrind)
//   --cuda     also the GPU path on device copies, compared with the host twin and LAPACK
//              (SKIP line when no CUDA/GPU)
// Tolerances (relative max-norm error per system, ||x - x_ref||_max / ||x_ref||_max):
//   vs LAPACK:    1e-10 (double), 2e-4 (float)    [diagonally dominant, cond <= ~50]
//   GPU vs host:  1e-12 (double), 1e-5 (float)    [same algorithm, rounding/FMA differ]
// Block method: a system of N rows is split into P blocks, each block is reduced to its
// interface equations, the interface system is solved with sg_tri_thomas_ref and every
// block is solved with its neighbours' values; compared with LAPACK on the whole system.
// Exit status 1 on any failure.
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

static bool    g_cuda = false;
static sg_ctx *g_hctx = nullptr, *g_cctx = nullptr;
static const double kSentinel = 12345.0;

template <class T> static const char *pname() { return sizeof(T) == 8 ? "double" : "float"; }
template <class T> static sg_precision prec() { return sizeof(T) == 8 ? SG_REAL64 : SG_REAL32; }
template <class T> static double tol_ref() { return sizeof(T) == 8 ? 1e-10 : 2e-4; }
template <class T> static double tol_dev() { return sizeof(T) == 8 ? 1e-12 : 1e-5; }

// Batch of systems in a layout. kind 0: random strictly diagonally dominant with random
// signs; kind 1: Poisson-like (-1, 2.1, -1). Unused entries (ld gaps, dl[0], du[m-1]) = NaN.
template <class T> struct Batch {
  sg_tri_layout       lay;
  long long           m, nb, ld;
  std::vector<T>      dl, d, du, b;
  std::vector<double> xref;  // [s*m + i]
  size_t size() const { return (size_t)(lay == SG_TRI_CONTIGUOUS ? ld * nb : ld * m); }
  size_t idx(long long s, long long i) const { return (size_t)(lay == SG_TRI_CONTIGUOUS ? s * ld + i : i * ld + s); }
};

// LAPACK solution of one system given as double arrays (dl[0], du[m-1] ignored)
static void lapack(long long m, const double *dl, const double *d, const double *du, const double *b, double *x)
{
  std::vector<double> L(m > 1 ? m - 1 : 1), D(d, d + m), U(m > 1 ? m - 1 : 1);
  for (long long i = 0; i + 1 < m; i++) { L[i] = dl[i + 1]; U[i] = du[i]; }
  for (long long i = 0; i < m; i++) x[i] = b[i];
  int n = (int)m, one = 1, info = 0;
  dgtsv_(&n, &one, L.data(), D.data(), U.data(), x, &n, &info);
  if (info != 0) { printf("dgtsv failed info=%d\n", info); exit(1); }
}

template <class T> static Batch<T> make_batch(sg_tri_layout lay, long long m, long long nb, long long ld, int kind, unsigned seed)
{
  Batch<T> B{lay, m, nb, ld, {}, {}, {}, {}, {}};
  const T nan = (T)NAN;
  B.dl.assign(B.size(), nan); B.d.assign(B.size(), nan); B.du.assign(B.size(), nan); B.b.assign(B.size(), nan);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> U(-1.0, 1.0);
  B.xref.resize((size_t)(m * nb));
  std::vector<double> L(m), D(m), Uu(m), R(m);
  for (long long s = 0; s < nb; s++) {
    for (long long i = 0; i < m; i++) {
      const size_t k = B.idx(s, i);
      double l = kind ? -1.0 : U(rng), u = kind ? -1.0 : U(rng), dd = kind ? 2.1 : (std::fabs(l) + std::fabs(u) + 0.5 + std::fabs(U(rng)));
      if (!kind && U(rng) < 0) dd = -dd;
      if (i > 0) B.dl[k] = (T)l;
      if (i < m - 1) B.du[k] = (T)u;
      B.d[k] = (T)dd;
      B.b[k] = (T)U(rng);
      L[i] = (double)B.dl[k]; D[i] = (double)B.d[k]; Uu[i] = (double)B.du[k]; R[i] = (double)B.b[k];
    }
    lapack(m, L.data(), D.data(), Uu.data(), R.data(), &B.xref[(size_t)(s * m)]);
  }
  return B;
}

// max over systems of ||x - y||_max / ||y||_max; y in the batch layout (lay) or [s*m+i]
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
#endif

static const char *lay_name(sg_tri_layout l) { return l == SG_TRI_CONTIGUOUS ? "contig" : "inter"; }

// ---------------------------------------------------------------- TPCR batch
template <class T> static void run_tpcr(const Batch<T> &B, bool alias, const char *kind)
{
  char tag[200];
  snprintf(tag, sizeof tag, "tpcr %-6s %-6s m=%lld nb=%lld ld=%lld %s%s", pname<T>(), lay_name(B.lay), B.m, B.nb, B.ld, kind,
           alias ? " x=b" : "");
  std::vector<T> x(B.size(), (T)kSentinel);
  if (alias)
    for (long long s = 0; s < B.nb; s++)
      for (long long i = 0; i < B.m; i++) x[B.idx(s, i)] = B.b[B.idx(s, i)];
  sg_tri_batch D = desc(B, B.dl.data(), B.d.data(), B.du.data(), alias ? (const T *)x.data() : B.b.data(), x.data());
  sg_report    rep;
  sg_status    st = sg_tri_batch_solve_host(g_hctx, SG_TRI_TPCR, &D, 0.0, &rep);
  const double eh = rel_err(B, x, B.xref.data(), false);
  bool ok = st == SG_OK && eh <= tol_ref<T>() && gaps_intact(B, x) && rep.alg == SG_TRI_TPCR;
  CHECK(ok, "host %s: status %s (%s) err %.3g gaps %d", tag, sg_status_string(st), rep.msg, eh, (int)gaps_intact(B, x));
  printf("%s host %s err=%.2e\n", ok ? "ok  " : "FAIL", tag, eh);
#ifdef SG_HAVE_CUDA
  if (!g_cuda) return;
  std::vector<T> x0(B.size(), (T)kSentinel);
  if (alias)
    for (long long s = 0; s < B.nb; s++)
      for (long long i = 0; i < B.m; i++) x0[B.idx(s, i)] = B.b[B.idx(s, i)];
  T *g[5] = {dev_copy(B.dl.data(), B.size()), dev_copy(B.d.data(), B.size()), dev_copy(B.du.data(), B.size()),
             dev_copy(B.b.data(), B.size()), dev_copy(x0.data(), B.size())};
  sg_tri_batch DD = desc(B, g[0], g[1], g[2], alias ? (const T *)g[4] : g[3], g[4]);
  sg_report    drep;
  st = sg_tri_batch_solve_cuda(g_cctx, SG_TRI_TPCR, &DD, 0.0, &drep);
  std::vector<T> xd = host_copy(g[4], B.size());
  for (T *p : g) cudaFree(p);
  const double ed = rel_err(B, xd, B.xref.data(), false), edh = rel_err(B, xd, x.data(), true);
  ok = st == SG_OK && ed <= tol_ref<T>() && edh <= tol_dev<T>() && gaps_intact(B, xd);
  CHECK(ok, "cuda %s: status %s (%s) err %.3g vs host %.3g gaps %d", tag, sg_status_string(st), drep.msg, ed, edh, (int)gaps_intact(B, xd));
  printf("%s cuda %s err=%.2e vs-host=%.2e\n", ok ? "ok  " : "FAIL", tag, ed, edh);
#endif
}

template <class T> static void tpcr_sweep(bool quick)
{
  const std::vector<long long> ms  = {1, 2, 3, 17, 127, 512, 1000, 4097};
  const std::vector<long long> nbs = quick ? std::vector<long long>{1, 7, 100} : std::vector<long long>{1, 7, 100, 2000};
  const long long limit = quick ? 5000 : 400000;  // rows per case
  unsigned seed = 11;
  for (int lay = 0; lay < 2; lay++)
    for (long long m : ms)
      for (long long nb : nbs) {
        if (m * nb > limit && nb > 1) continue;
        for (int kind = 0; kind < 2; kind++) {
          if (kind == 1 && nb > 100) continue;
          Batch<T> B = make_batch<T>((sg_tri_layout)lay, m, nb, lay == 0 ? m : nb, kind, seed++);
          run_tpcr(B, false, kind ? "poisson" : "random");
        }
      }
  // ld > m / ld > nbatch, x aliasing b; multi-level with several systems (both layouts)
  for (int lay = 0; lay < 2; lay++) {
    for (long long m : {17ll, 1000ll}) {
      Batch<T> B = make_batch<T>((sg_tri_layout)lay, m, 5, lay == 0 ? m + 3 : 5 + 2, 0, seed++);
      run_tpcr(B, false, "random");
      run_tpcr(B, true, "random");
    }
    const long long m = quick ? 9001 : 40009, nb = quick ? 2 : 9;
    Batch<T> B = make_batch<T>((sg_tri_layout)lay, m, nb, lay == 0 ? m + 1 : nb, 0, seed++);
    run_tpcr(B, false, "random multi-level");
    run_tpcr(B, true, "random multi-level");
  }
}

// one very large system (multi-level solver)
template <class T> static void tpcr_large(bool quick)
{
  const std::vector<long long> ms = quick ? std::vector<long long>{70001} : std::vector<long long>{1000003, 1ll << 21};
  unsigned seed = 101;
  for (long long m : ms)
    for (int kind = 0; kind < 2; kind++) {
      Batch<T> B = make_batch<T>(SG_TRI_CONTIGUOUS, m, 1, m, kind, seed++);
      run_tpcr(B, false, kind ? "poisson large" : "random large");
    }
}

// ---------------------------------------------------------------- block method
// Whole system of N rows (contiguous, dl[0] = du[N-1] = 0), split into blocks `sizes`.
template <class T> static void block_method(long long N, const std::vector<long long> &sizes, sg_tri_alg alg, unsigned seed, bool dev)
{
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> U(-1.0, 1.0);
  std::vector<T> dl(N), d(N), du(N), b(N);
  std::vector<double> Dl(N), D(N), Du(N), Bv(N), xref(N);
  for (long long i = 0; i < N; i++) {
    const double l = i > 0 ? U(rng) : 0, u = i < N - 1 ? U(rng) : 0;
    double dd = std::fabs(l) + std::fabs(u) + 0.5 + std::fabs(U(rng));
    if (U(rng) < 0) dd = -dd;
    dl[i] = (T)l; du[i] = (T)u; d[i] = (T)dd; b[i] = (T)U(rng);
    Dl[i] = dl[i]; D[i] = d[i]; Du[i] = du[i]; Bv[i] = b[i];
  }
  lapack(N, Dl.data(), D.data(), Du.data(), Bv.data(), xref.data());
  const int P = (int)sizes.size();
  std::vector<long long> off(P + 1, 0);
  for (int p = 0; p < P; p++) off[p + 1] = off[p] + sizes[p];
  char tag[220];
  int  len = snprintf(tag, sizeof tag, "block %-4s %-6s %-6s N=%lld P=%d sizes=", dev ? "cuda" : "host", sg_tri_alg_name(alg), pname<T>(), N, P);
  for (int p = 0; p < P && len < 180; p++) len += snprintf(tag + len, sizeof tag - len, "%s%lld", p ? "," : "", sizes[p]);
  if (off[P] != N) { CHECK(false, "%s: sizes do not add up", tag); return; }
#ifdef SG_HAVE_CUDA
  T *g[5] = {nullptr, nullptr, nullptr, nullptr, nullptr};
  if (dev) {
    g[0] = dev_copy(dl.data(), N); g[1] = dev_copy(d.data(), N); g[2] = dev_copy(du.data(), N); g[3] = dev_copy(b.data(), N);
    g[4] = dev_copy(b.data(), N);
  }
#else
  if (dev) return;
#endif
  // 1. reduce every block
  std::vector<double> il, id, iu, ib;
  std::vector<int>    first(P);
  bool ok = true;
  double ediff = 0;
  for (int p = 0; p < P; p++) {
    double    iface[8];
    int       k = -1;
    sg_report rep;
    const long long o = off[p];
    sg_status st;
    if (!dev) st = sg_tri_block_reduce_host(g_hctx, prec<T>(), sizes[p], &dl[o], &d[o], &du[o], &b[o], 0.0, iface, &k, &rep);
#ifdef SG_HAVE_CUDA
    else {
      st = sg_tri_block_reduce_cuda(g_cctx, prec<T>(), sizes[p], g[0] + o, g[1] + o, g[2] + o, g[3] + o, 0.0, iface, &k, &rep);
      double hf[8];
      int    hk = -1;
      sg_tri_block_reduce_host(g_hctx, prec<T>(), sizes[p], &dl[o], &d[o], &du[o], &b[o], 0.0, hf, &hk, &rep);
      if (hk != k) ok = false;
      for (int e = 0; e < k && e == (int)e; e++) {
        double sc = 0;
        for (int v = 0; v < 4; v++) sc = std::fmax(sc, std::fabs(hf[4 * e + v]));
        for (int v = 0; v < 4; v++) ediff = std::fmax(ediff, std::fabs(hf[4 * e + v] - iface[4 * e + v]) / (sc > 0 ? sc : 1));
      }
    }
#endif
    if (st != SG_OK || k != (sizes[p] < 2 ? (int)sizes[p] : 2)) {
      CHECK(false, "%s: reduce of block %d: %s (%s) k=%d", tag, p, sg_status_string(st), rep.msg, k);
      ok = false;
      break;
    }
    first[p] = (int)il.size();
    for (int e = 0; e < k; e++) { il.push_back(iface[4 * e]); id.push_back(iface[4 * e + 1]); iu.push_back(iface[4 * e + 2]); ib.push_back(iface[4 * e + 3]); }
  }
  // 2. interface system, 3. every block with its neighbours' values
  std::vector<T> x(N, (T)kSentinel);
  if (ok) {
    sg_report rep;
    sg_status st = sg_tri_thomas_ref((long long)id.size(), il.data(), id.data(), iu.data(), ib.data(), 0.0, &rep);
    if (st != SG_OK) { CHECK(false, "%s: interface solve %s (%s)", tag, sg_status_string(st), rep.msg); ok = false; }
    for (int p = 0; ok && p < P; p++) {
      const long long o = off[p];
      const double xp = p > 0 ? ib[first[p] - 1] : 0.0, xn = p < P - 1 ? ib[first[p + 1]] : 0.0;
      if (!dev) {
        // alternately x separate and x aliasing a copy of b
        if (p % 2) st = sg_tri_block_solve_host(g_hctx, alg, prec<T>(), sizes[p], &dl[o], &d[o], &du[o], &b[o], xp, xn, &x[o], 0.0, &rep);
        else {
          for (long long i = 0; i < sizes[p]; i++) x[o + i] = b[o + i];
          st = sg_tri_block_solve_host(g_hctx, alg, prec<T>(), sizes[p], &dl[o], &d[o], &du[o], &x[o], xp, xn, &x[o], 0.0, &rep);
        }
      }
#ifdef SG_HAVE_CUDA
      else
        st = sg_tri_block_solve_cuda(g_cctx, alg, prec<T>(), sizes[p], g[0] + o, g[1] + o, g[2] + o, p % 2 ? g[3] + o : g[4] + o, xp, xn,
                                     g[4] + o, 0.0, &rep);
#endif
      if (st != SG_OK) { CHECK(false, "%s: solve of block %d: %s (%s)", tag, p, sg_status_string(st), rep.msg); ok = false; }
    }
  }
#ifdef SG_HAVE_CUDA
  if (dev) {
    x = host_copy(g[4], N);
    for (T *q : g) cudaFree(q);
  }
#endif
  double e = 0, nrm = 0;
  for (long long i = 0; i < N; i++) {
    const double di = std::fabs((double)x[i] - xref[i]);
    e   = (di > e || di != di) ? di : e;
    nrm = std::fmax(nrm, std::fabs(xref[i]));
  }
  e /= nrm;
  const bool good = ok && e <= tol_ref<T>() && ediff <= tol_dev<T>() * 10;
  CHECK(good, "%s: err %.3g (tol %.1g), iface gpu-host %.3g", tag, e, tol_ref<T>(), ediff);
  printf("%s %s err=%.2e%s\n", good ? "ok  " : "FAIL", tag, e, dev ? "" : "");
  if (dev) printf("     iface cuda vs host rel diff %.2e\n", ediff);
}

template <class T> static void block_sweep(bool quick)
{
  const long long N = quick ? 2003 : 10007;
  unsigned seed = 500;
  for (int dev = 0; dev < (g_cuda ? 2 : 1); dev++) {
    for (int P = 1; P <= 7; P++) {
      // small blocks first (a 1-row and a 2-row block), the rest split unevenly
      std::vector<long long> sz;
      if (P >= 2) sz.push_back(1);
      if (P >= 3) sz.push_back(2);
      long long rest = N - (P >= 2) - 2 * (P >= 3);
      const int  nrest = P - (int)sz.size();
      for (int q = 0; q < nrest; q++) {
        const long long s = q == nrest - 1 ? rest : rest / (nrest - q) + (q % 2 ? 37 : -13);
        sz.push_back(s);
        rest -= s;
      }
      if (P >= 4) std::swap(sz[1], sz[3]);  // interior 2-row block
      for (sg_tri_alg alg : {SG_TRI_TPCR, SG_TRI_THOMAS, SG_TRI_PCR}) {
        if (alg == SG_TRI_PCR && P % 3) continue;
        block_method<T>(N, sz, alg, seed++, dev == 1);
      }
    }
    // large blocks: multi-level reduce and solve inside every block
    const long long NL = quick ? 50021 : 2500007;
    block_method<T>(NL, {NL / 3 + 17, 2, NL - NL / 3 - 19}, SG_TRI_TPCR, seed++, dev == 1);
    block_method<T>(NL, {NL / 2, NL - NL / 2}, SG_TRI_AUTO, seed++, dev == 1);
  }
}

// ---------------------------------------------------------------- errors
template <class T> static void errors(bool quick)
{
  const long long m = quick ? 30011 : 100003, bad = m / 2 + 1;  // bad: not the first row of a chunk
  for (int dev = 0; dev < (g_cuda ? 2 : 1); dev++)
    for (int what = 0; what < 3; what++) {  // 0 zero row, 1 NaN in b, 2 Inf in d
      Batch<T> B = make_batch<T>(SG_TRI_CONTIGUOUS, m, 1, m, 0, 900 + what);
      if (what == 0) { B.d[bad] = 0; B.dl[bad] = 0; B.du[bad] = 0; }
      if (what == 1) B.b[bad] = (T)NAN;
      if (what == 2) B.d[bad] = (T)INFINITY;
      const sg_status want = what == 0 ? SG_ERR_ZERO_PIVOT : SG_ERR_NONFINITE;
      const char     *wn[] = {"zero-pivot", "nan-in-b", "inf-in-d"};
      for (int prim = 0; prim < 3; prim++) {  // batch tpcr, block reduce, block solve
        sg_report rep;
        sg_status st = SG_OK;
        double    iface[8];
        int       k;
        std::vector<T> x(m, (T)kSentinel);
        B.dl[0] = 0; B.du[m - 1] = 0;
        if (!dev) {
          sg_tri_batch D = desc(B, B.dl.data(), B.d.data(), B.du.data(), B.b.data(), x.data());
          if (prim == 0) st = sg_tri_batch_solve_host(g_hctx, SG_TRI_TPCR, &D, 0.0, &rep);
          if (prim == 1) st = sg_tri_block_reduce_host(g_hctx, prec<T>(), m, B.dl.data(), B.d.data(), B.du.data(), B.b.data(), 0.0, iface, &k, &rep);
          if (prim == 2)
            st = sg_tri_block_solve_host(g_hctx, SG_TRI_TPCR, prec<T>(), m, B.dl.data(), B.d.data(), B.du.data(), B.b.data(), 0.5, -0.5, x.data(), 0.0, &rep);
        }
#ifdef SG_HAVE_CUDA
        else {
          T *g[5] = {dev_copy(B.dl.data(), m), dev_copy(B.d.data(), m), dev_copy(B.du.data(), m), dev_copy(B.b.data(), m), dev_copy(x.data(), m)};
          sg_tri_batch DD = desc(B, g[0], g[1], g[2], g[3], g[4]);
          if (prim == 0) st = sg_tri_batch_solve_cuda(g_cctx, SG_TRI_TPCR, &DD, 0.0, &rep);
          if (prim == 1) st = sg_tri_block_reduce_cuda(g_cctx, prec<T>(), m, g[0], g[1], g[2], g[3], 0.0, iface, &k, &rep);
          if (prim == 2) st = sg_tri_block_solve_cuda(g_cctx, SG_TRI_TPCR, prec<T>(), m, g[0], g[1], g[2], g[3], 0.5, -0.5, g[4], 0.0, &rep);
          for (T *q : g) cudaFree(q);
        }
#endif
        // the row is exact: the failure is found inside a chunk (zero pivot) or on input
        const bool ok = st == want && rep.status == st && rep.system == 0 && rep.row == bad && rep.msg[0];
        const char *pn[] = {"batch tpcr", "block_reduce", "block_solve"};
        CHECK(ok, "%s %s %s %s m=%lld: got %s row %lld (want %s row %lld): %s", dev ? "cuda" : "host", pn[prim], wn[what], pname<T>(), m,
              sg_status_string(st), rep.row, sg_status_string(want), bad, rep.msg);
        printf("%s %s %-12s %-10s %-6s -> %s row %lld: %s\n", ok ? "ok  " : "FAIL", dev ? "cuda" : "host", pn[prim], wn[what], pname<T>(),
               sg_status_string(st), rep.row, rep.msg);
      }
    }
  // argument errors (checked before any data is touched; host pointers are fine for both)
  std::vector<T> v(8, (T)1);
  for (int dev = 0; dev < (g_cuda ? 2 : 1); dev++)
    for (long long n : {0ll, -3ll}) {
      sg_report rep;
      double    iface[8];
      int       k = 7;
      sg_status st = dev ? sg_tri_block_reduce_cuda(g_cctx, prec<T>(), n, v.data(), v.data(), v.data(), v.data(), 0.0, iface, &k, &rep)
                         : sg_tri_block_reduce_host(g_hctx, prec<T>(), n, v.data(), v.data(), v.data(), v.data(), 0.0, iface, &k, &rep);
      CHECK(st == SG_ERR_ARG && rep.msg[0] && k == 0, "%s block_reduce n=%lld: %s", dev ? "cuda" : "host", n, sg_status_string(st));
      st = dev ? sg_tri_block_solve_cuda(g_cctx, SG_TRI_TPCR, prec<T>(), n, v.data(), v.data(), v.data(), v.data(), 0, 0, v.data(), 0.0, &rep)
               : sg_tri_block_solve_host(g_hctx, SG_TRI_TPCR, prec<T>(), n, v.data(), v.data(), v.data(), v.data(), 0, 0, v.data(), 0.0, &rep);
      CHECK(st == SG_ERR_ARG && rep.msg[0], "%s block_solve n=%lld: %s", dev ? "cuda" : "host", n, sg_status_string(st));
      printf("%s %s block n=%lld %s -> %s: %s\n", st == SG_ERR_ARG ? "ok  " : "FAIL", dev ? "cuda" : "host", n, pname<T>(), sg_status_string(st),
             rep.msg);
      st = dev ? sg_tri_block_reduce_cuda(g_cctx, prec<T>(), 4, nullptr, v.data(), v.data(), v.data(), 0.0, iface, &k, &rep)
               : sg_tri_block_reduce_host(g_hctx, prec<T>(), 4, nullptr, v.data(), v.data(), v.data(), 0.0, iface, &k, &rep);
      CHECK(st == SG_ERR_ARG, "%s block_reduce dl=NULL: %s", dev ? "cuda" : "host", sg_status_string(st));
      st = dev ? sg_tri_block_solve_cuda(g_cctx, SG_TRI_NUM_ALGS, prec<T>(), 4, v.data(), v.data(), v.data(), v.data(), 0, 0, v.data(), 0.0, &rep)
               : sg_tri_block_solve_host(g_hctx, SG_TRI_NUM_ALGS, prec<T>(), 4, v.data(), v.data(), v.data(), v.data(), 0, 0, v.data(), 0.0, &rep);
      CHECK(st == SG_ERR_ARG, "%s block_solve bad alg: %s", dev ? "cuda" : "host", sg_status_string(st));
    }
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
    if (sg_ctx_create(SG_BACKEND_CUDA, nullptr, &g_cctx) != SG_OK) { printf("FAIL: cannot create CUDA context\n"); return 1; }
    g_cuda = true;
  }
  if (sg_ctx_create(SG_BACKEND_HOST, nullptr, &g_hctx) != SG_OK) return 1;
  tpcr_sweep<double>(quick);
  tpcr_sweep<float>(quick);
  tpcr_large<double>(quick);
  tpcr_large<float>(quick);
  block_sweep<double>(quick);
  block_sweep<float>(quick);
  errors<double>(quick);
  errors<float>(quick);
  sg_ctx_destroy(&g_hctx);
  sg_ctx_destroy(&g_cctx);
  printf("test_tri_block%s%s: %d checks passed, %d failed\n", g_cuda ? " --cuda" : "", quick ? " --quick" : "", g_pass, g_fail);
  return g_fail ? 1 : 0;
}
