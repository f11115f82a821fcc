// TPCR (register-chunk partition + PCR), the multi-level solver for very large systems and
// the partitioned ("block") primitives, against LAPACK dgtsv (partial pivoting, double, on
// copies of the same input values).
//   (no args)  host twin
//   --quick    reduced case set (for valgrind)
//   --cuda     also the GPU path on device copies, compared with the host twin and LAPACK
//              (SKIP line when no CUDA/GPU)
// Tolerances: see tri_test_util.hpp (1e-10 / 2e-4 vs LAPACK, 1e-12 / 1e-5 GPU vs host).
// Block method: a system of N rows is split into P blocks, each block is reduced to its
// interface equations, the interface system is solved with sg_tri_thomas_ref and every
// block is solved with its neighbours' values; compared with LAPACK on the whole system.
// Exit status 1 on any failure.
#include "tri_test_util.hpp"

// ---------------------------------------------------------------- TPCR batch
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
          run_batch(B, SG_TRI_TPCR, false, kind ? "poisson" : "random");
        }
      }
  // ld > m / ld > nbatch, x aliasing b; multi-level with several systems (both layouts)
  for (int lay = 0; lay < 2; lay++) {
    for (long long m : {17ll, 1000ll}) {
      Batch<T> B = make_batch<T>((sg_tri_layout)lay, m, 5, lay == 0 ? m + 3 : 5 + 2, 0, seed++);
      run_batch(B, SG_TRI_TPCR, false, "random");
      run_batch(B, SG_TRI_TPCR, true, "random");
    }
    const long long m = quick ? 9001 : 40009, nb = quick ? 2 : 9;
    Batch<T> B = make_batch<T>((sg_tri_layout)lay, m, nb, lay == 0 ? m + 1 : nb, 0, seed++);
    run_batch(B, SG_TRI_TPCR, false, "random multi-level");
    run_batch(B, SG_TRI_TPCR, true, "random multi-level");
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
      run_batch(B, SG_TRI_TPCR, false, kind ? "poisson large" : "random large");
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
        B.dl[0] = 0; B.du[m - 1] = 0;
        std::vector<T> x = x_init(B, false);
        if (!dev) {
          sg_tri_batch D = desc(B, B.dl.data(), B.d.data(), B.du.data(), B.b.data(), x.data());
          if (prim == 0) st = sg_tri_batch_solve_host(g_hctx, SG_TRI_TPCR, &D, 0.0, &rep);
          if (prim == 1) st = sg_tri_block_reduce_host(g_hctx, prec<T>(), m, B.dl.data(), B.d.data(), B.du.data(), B.b.data(), 0.0, iface, &k, &rep);
          if (prim == 2)
            st = sg_tri_block_solve_host(g_hctx, SG_TRI_TPCR, prec<T>(), m, B.dl.data(), B.d.data(), B.du.data(), B.b.data(), 0.5, -0.5, x.data(), 0.0, &rep);
        }
#ifdef SG_HAVE_CUDA
        else {
          DevBatch<T> G(B);
          T *const   *g = G.p;
          sg_tri_batch DD = desc(B, g[0], g[1], g[2], g[3], g[4]);
          if (prim == 0) st = sg_tri_batch_solve_cuda(g_cctx, SG_TRI_TPCR, &DD, 0.0, &rep);
          if (prim == 1) st = sg_tri_block_reduce_cuda(g_cctx, prec<T>(), m, g[0], g[1], g[2], g[3], 0.0, iface, &k, &rep);
          if (prim == 2) st = sg_tri_block_solve_cuda(g_cctx, SG_TRI_TPCR, prec<T>(), m, g[0], g[1], g[2], g[3], 0.5, -0.5, g[4], 0.0, &rep);
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
  bool quick;
  if (const int rc = tri_test_init(argc, argv, &quick); rc >= 0) return rc;
  tpcr_sweep<double>(quick);
  tpcr_sweep<float>(quick);
  tpcr_large<double>(quick);
  tpcr_large<float>(quick);
  block_sweep<double>(quick);
  block_sweep<float>(quick);
  errors<double>(quick);
  errors<float>(quick);
  return tri_test_finish("test_tri_block", quick);
}
