// Batched tridiagonal solvers: every algorithm, both layouts (and ld > m / ld > nbatch),
// float and double, odd/prime/power-of-two sizes (64 / 128: rows of whole 128-byte lines, for the
// streaming kernels) and several batch counts, against LAPACK
// dgtsv (partial pivoting, double, on copies of the same input values).
//   (no args)  host twin
//   --quick    reduced case set (for valgrind)
//   --cuda     GPU path: every case also runs on the device and is compared with the host
//              twin of the same algorithm and with LAPACK (SKIP line when no CUDA/GPU)
// Tolerances: see tri_test_util.hpp (1e-10 / 2e-4 vs LAPACK, 1e-12 / 1e-5 GPU vs host).
// Entries the solver must not read (ld gaps, dl[0], du[m-1]) hold NaN; x's gaps hold a
// sentinel that must survive. Exit status 1 on any failure.
#include "tri_test_util.hpp"
#include "tri/tri_team.hpp"  // internal: order-independence check of the team algorithms
#include "tri/tri_partition.hpp"  // internal: the streaming kernels' thresholds by device class
#include "tri/tri_internal.hpp"   // internal: the streaming kernels' occupancy (--cuda)
#include <algorithm>
#include <array>
#include <numeric>

static const sg_tri_alg kAlgs[] = {SG_TRI_THOMAS, SG_TRI_CR, SG_TRI_PCR, SG_TRI_RD, SG_TRI_CR_PCR, SG_TRI_CR_RD, SG_TRI_TPCR, SG_TRI_AUTO};

template <class T> static void sweep(bool quick)
{
  const std::vector<long long> ms  = quick ? std::vector<long long>{1, 2, 3, 17, 127, 128, 251, 1000} : std::vector<long long>{1, 2, 3, 17, 64, 127, 128, 251, 512, 1000, 4097};
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
          for (sg_tri_alg alg : kAlgs) run_batch(B, alg, false, kind ? "poisson" : "random");
        }
      }
  // ld > m / ld > nbatch, and x aliasing b
  for (int lay = 0; lay < 2; lay++)
    for (long long m : {17ll, 127ll})
      for (long long nb : {3ll, 100ll}) {
        Batch<T> B = make_batch<T>((sg_tri_layout)lay, m, nb, lay == 0 ? m + 5 : nb + 3, 0, seed++);
        for (sg_tri_alg alg : kAlgs) {
          run_batch(B, alg, false, "random");
          run_batch(B, alg, true, "random");
        }
      }
  // The CUDA streaming kernel (tensor copies of whole systems: double, contiguous, one tile of
  // >= 64 chunks, 128-byte rows, 16-byte aligned stride): packed, padded by 16 (aligned) and
  // by 1 (not aligned: the other kernel), and in place.
  // m = 100 / 300 / 1000: rows that are not whole 128-byte lines (300 / 1000: the map holds the whole lines, the kernel
  // reads the rest; 100: teams of < 32 chunks, tp_solve_kernel); 700 / 2500: teams of a multiple of 32 chunks, not a power of two
  if (!quick)
    for (long long m : {100ll, 300ll, 512ll, 700ll, 1000ll, 1024ll, 2500ll, 4096ll})
      for (long long nb : {3ll, 61ll})
        for (long long pad : {0ll, 16ll, 1ll}) {
          Batch<T> B = make_batch<T>(SG_TRI_CONTIGUOUS, m, nb, m + pad, 0, seed++);
          for (sg_tri_alg alg : {SG_TRI_TPCR, SG_TRI_AUTO}) {
            run_batch(B, alg, false, "random");
            if (pad == 16) run_batch(B, alg, true, "random");
          }
        }
  // The CUDA interleaved streaming kernel (double, one tile of >= 64 chunks, >= 4 systems per
  // block: m = 512, 1024; cp.async pieces of 16 bytes when aligned, else 8), and the single tiles
  // of 16-byte rows (m = 2048 double, 4096 float): partial last groups (nb = 3, 61), ld > nbatch
  // aligned (+2: 16-byte pieces) and not (+1: 8-byte pieces), and in place (--quick: a subset,
  // so that the sanitizer runs cover the kernel). An odd ld (nb = 3, 61 unpadded or + 2) in double: the 16-byte copies from
  // the boundary below each row (ODD, tiles of >= 512 rows); m = 400 / 1000: tiles of 512 / 1024 rows, partly filled;
  // 700: a team of 96 chunks (768 rows, double).
  for (long long m : {400ll, 512ll, 700ll, 1000ll, 1024ll, 2048ll, 4096ll})
    for (long long nb : {3ll, 61ll})
      for (long long pad : {0ll, 2ll, 1ll}) {
        if (quick && (m > 1024 || m == 400 || nb == 3 || (pad == 0 && m != 1000))) continue;  // (1000, 61 unpadded: ODD's last row)
        Batch<T> B = make_batch<T>(SG_TRI_INTERLEAVED, m, nb, nb + pad, 0, seed++);
        for (sg_tri_alg alg : {SG_TRI_TPCR, SG_TRI_AUTO}) {
          run_batch(B, alg, false, "random");
          if (pad == 2) run_batch(B, alg, true, "random");
        }
      }
  // The CUDA fused interleaved kernel (tp_fuse_plan: m >= 1025 in both precisions; every m >=
  // 129 under SG_TRI_FUSE_MIN=1, ctest ".fuse"): enough groups for FINISH items to alternate with
  // REDUCE items (517 / 518 systems: a partial last group), in place too. An odd row stride
  // loads the tiles into registers; an even one (518, and 518 + 6 padded) brings them by tensor
  // copies (the STG form, 16-byte aligned rows)
  for (long long m : {1100ll, 2048ll, 3001ll, 4096ll})
    for (long long nb : {517ll, 518ll})
      for (long long pad : {0ll, 6ll}) {
        if ((quick && m != 2048) || (nb == 517 && pad)) continue;
        const long long n = quick ? nb - 456 : nb;
        Batch<T> B = make_batch<T>(SG_TRI_INTERLEAVED, m, n, n + pad, 0, seed++);
        for (sg_tri_alg alg : {SG_TRI_TPCR, SG_TRI_AUTO}) run_batch(B, alg, false, "random");
        run_batch(B, SG_TRI_TPCR, true, "random");
      }
  // ... and its multi-level use (REDUCE and FINISH tiles of 512 rows): one long system with
  // 128-byte rows, and one without; and one above 2^20 rows (tiles of 128 chunks in both precisions);
  // 262164: rows that are not whole 128-byte lines in both precisions (a partial last chunk)
  if (!quick)
    for (long long m : {262160ll, 262161ll, 262164ll, 1048577ll}) {
      Batch<T> B = make_batch<T>(SG_TRI_CONTIGUOUS, m, 1, m, 0, seed++);
      run_batch(B, SG_TRI_TPCR, false, "random");
    }
  // the multi-level streaming passes on batches of long systems with 128-byte rows (one and
  // three systems, packed and padded, in place): with SG_TRI_OPEN_MIN=1 (ctest ".open") the
  // reduced levels open early and the FINISH takes its tiles by ticket (also in --quick, for
  // the sanitizer runs)
  for (long long nb : {1ll, 3ll})
    for (long long pad : {0ll, 32ll}) {
      Batch<T> B = make_batch<T>(SG_TRI_CONTIGUOUS, 16416, nb, 16416 + pad, 0, seed++);
      run_batch(B, SG_TRI_TPCR, false, "random");
      if (pad) run_batch(B, SG_TRI_TPCR, true, "random");
    }
}

// Solve B (copies: B is untouched) with alg on the host (dev = 0) or the GPU (dev = 1); the
// solution (batch layout) into *xout if given.
template <class T> static sg_status solve_on(const Batch<T> &B, sg_tri_alg alg, int dev, sg_report &rep, std::vector<T> *xout = nullptr)
{
  std::vector<T> x = x_init(B, false);
  sg_status      st;
  if (!dev) {
    sg_tri_batch D = desc(B, B.dl.data(), B.d.data(), B.du.data(), B.b.data(), x.data());
    st             = sg_tri_batch_solve_host(g_hctx, alg, &D, 0.0, &rep);
  } else {
#ifdef SG_HAVE_CUDA
    DevBatch<T>  G(B);
    sg_tri_batch DD = desc(B, G.p[0], G.p[1], G.p[2], G.p[3], G.p[4]);
    st              = sg_tri_batch_solve_cuda(g_cctx, alg, &DD, 0.0, &rep);
    x               = G.x(B);
#else
    st = SG_ERR_UNSUPPORTED;  // not reached: dev = 1 only with --cuda in a CUDA build
#endif
  }
  if (xout) *xout = std::move(x);
  return st;
}

// Scale invariance: the same systems with every coefficient and right-hand side multiplied by
// S (x unchanged) must solve as well at S = 1e+-30 (float) / 1e+-300 (double). Before 2026-11-27
// float TPCR failed from S ~ 1e19 or 1e-20 (its closed-form merge multiplied two interface
// equations at scale S: a non-finite result or a false zero pivot). RD and CR+RD multiply 2x2
// matrices along the system and may overflow: for them a reported error is accepted, never a
// wrong x. Cases: batches of one tile (PCR on the chunk equations), one long system (REDUCE /
// FINISH levels with the merge tree), interleaved batches on the fused kernel (m = 2048).
template <class T> static void scaled_systems(bool quick)
{
  const double Ss[] = {sizeof(T) == 8 ? 1e-300 : 1e-30, sizeof(T) == 8 ? 1e300 : 1e30};
  struct Case { sg_tri_layout lay; long long m, nb; };
  std::vector<Case> cases = {{SG_TRI_CONTIGUOUS, 1000, 7}, {SG_TRI_INTERLEAVED, 1000, 7}, {SG_TRI_CONTIGUOUS, 9001, 1}};
  if (!quick) cases.push_back({SG_TRI_CONTIGUOUS, 100003, 1}), cases.push_back({SG_TRI_INTERLEAVED, 2048, 518});
  unsigned seed = 4242;
  for (const Case &c : cases)
    for (double S : Ss) {
      Batch<T> B = make_batch<T>(c.lay, c.m, c.nb, c.lay == SG_TRI_CONTIGUOUS ? c.m : c.nb, 0, seed++);
      for (auto *v : {&B.dl, &B.d, &B.du, &B.b})
        for (T &e : *v) e = (T)((double)e * S);
      char kind[48];
      snprintf(kind, sizeof kind, "scaled %.0e", S);
      for (sg_tri_alg alg : kAlgs) {
        if (c.m * c.nb > 200000 && alg != SG_TRI_TPCR && alg != SG_TRI_AUTO) continue;
        if (alg != SG_TRI_RD && alg != SG_TRI_CR_RD) {
          run_batch(B, alg, false, kind);
          continue;
        }
        for (int dev = 0; dev < (g_cuda ? 2 : 1); dev++) {  // RD, CR+RD: solved, or an error reported
          sg_report       rep;
          std::vector<T>  x;
          const sg_status st = solve_on<T>(B, alg, dev, rep, &x);
          const double e  = rel_err(B, x, B.xref.data(), false);
          const bool   ok = st == SG_OK ? e <= tol_ref<T>() : (st == SG_ERR_ZERO_PIVOT || st == SG_ERR_NONFINITE) && rep.msg[0];
          CHECK(ok, "%s %s %s %s m=%lld %s: %s err %.3g (%s)", dev ? "cuda" : "host", sg_tri_alg_name(alg), pname<T>(), lay_name(c.lay), c.m, kind,
                sg_status_string(st), e, rep.msg);
          printf("%s %s %-6s %-6s %-6s m=%lld nb=%lld %s -> %s%s\n", ok ? "ok  " : "FAIL", dev ? "cuda" : "host", sg_tri_alg_name(alg), pname<T>(),
                 lay_name(c.lay), c.m, c.nb, kind, sg_status_string(st), st == SG_OK ? "" : " (reported)");
        }
      }
    }
}

// Breakdown and argument errors, on the host and (with --cuda) the device.
template <class T> static void bad_inputs()
{
  const char *pn = pname<T>();
  for (int lay = 0; lay < 2; lay++)
    // 1024 double: the CUDA streaming kernels (both layouts); 128 contiguous: on the H200 the
    // streaming kernel's several teams per warp (MULTI, with padding systems: nb = 9); 2048: the fused
    // interleaved kernel, its rows loaded into registers (ld = 9) and by tensor copies (double, ld = 10:
    // 16-byte rows); interleaved 128 with ld = 10: on the H200 the interleaved streaming kernel's tensor
    // boxes (double: 16 systems per group, 7 of them padding past nb = 9); interleaved 128 with nb = 20,
    // ld = 24: the same form for float too (32 systems per group, 12 of them padding); interleaved 512 / 1024
    // with ld = 12: the wide form on the H200 (64 / 32-byte rows, two / four boxes of 256 rows per array; the
    // zero pivot at row 300 / 700, in the second / third box)
    // (m < 0: interleaved only, with the row stride ldi; zr: the zero pivot's row)
    for (const auto sh : {std::array<long long, 4>{37, 9, 9, 11}, {128, 9, 9, 11}, {-128, 9, 10, 11}, {-128, 20, 24, 11}, {-512, 9, 12, 300}, {-1024, 9, 12, 700},
                          {1024, 9, 9, 11}, {2048, 9, 9, 11}, {-2048, 9, 10, 11}})
    for (sg_tri_alg alg : kAlgs) {
      const long long mbp = sh[0], mb = mbp < 0 ? -mbp : mbp, nb = sh[1], ldi = sh[2], zr = sh[3];
      if ((mb >= 512 || mb == 128) && alg != SG_TRI_TPCR && alg != SG_TRI_AUTO) continue;
      if (mbp < 0 && lay == 0) continue;
      for (int what = 0; what < 2; what++) {
        Batch<T> B = make_batch<T>((sg_tri_layout)lay, mb, nb, lay == 0 ? mb : ldi, 0, 777);
        if (what == 0) {  // zero row zr of system 5: singular
          B.d[B.idx(5, zr)] = 0; B.dl[B.idx(5, zr)] = 0; B.du[B.idx(5, zr)] = 0;
        } else B.b[B.idx(2, 3)] = (T)NAN;
        const sg_status want = what == 0 ? SG_ERR_ZERO_PIVOT : SG_ERR_NONFINITE;
        const long long wsys = what == 0 ? 5 : 2;
        for (int dev = 0; dev < (g_cuda ? 2 : 1); dev++) {
          sg_report       rep;
          const sg_status st = solve_on<T>(B, alg, dev, rep);
          // the breakdown row is exact for our algorithms (first failure in step order wins)
          const bool row_ok = what == 1 ? rep.row == 3 : (rep.alg == SG_TRI_TPCR || rep.row == zr);
          const bool ok = st == want && rep.status == st && rep.system == wsys && row_ok && rep.msg[0];
          CHECK(ok, "%s %s %s %s: got %s system %lld (want %s system %lld): %s", dev ? "cuda" : "host", what ? "nan" : "zero-pivot",
                sg_tri_alg_name(alg), pn, sg_status_string(st), rep.system, sg_status_string(want), wsys, rep.msg);
          printf("%s %s %-10s %-6s %-6s %-6s -> %s system %lld row %lld: %s\n", ok ? "ok  " : "FAIL", dev ? "cuda" : "host",
                 what ? "nan-in-b" : "zero-pivot", sg_tri_alg_name(alg), pn, lay_name((sg_tri_layout)lay), sg_status_string(st),
                 rep.system, rep.row, rep.msg);
        }
      }
    }
  // An exactly singular 2x2 block, rows r-r+1 of one system, decoupled from its neighbours (du[r-1] =
  // dl[r+2] = 0): any correct elimination must stop on it.
  //  - m = 64, rows 7-8 of system 1, both layouts: for float TPCR the block is the meeting of the twisted
  //    reduction of a 16-row chunk (rows H-1, H), whose pivot det = 1 - gamma*beta is exactly 0 and is reported
  //    at row 8; double (8-row chunks) meets it across two chunks.
  //  - "merge": the merge tree of a REDUCE tile meets it above its first level, at the fused interleaved kernel's
  //    tensor-copy shape (m = 2048, 20 systems, row stride 24: double 16 / float 32 systems per group, 16-byte
  //    rows): rows 15-16 of system 17 join chunks 1 and 2 (double, 8-row chunks: merge level 2) / 0 and 1 (float:
  //    level 1, no shuffle level there), so the pivot is the merge's (tp_merge's det = 0).
  struct Sing { int lay; long long m, nb, ld, sys, r; unsigned seed; bool merge; };
  for (const Sing c : {Sing{0, 64, 3, 64, 1, 7, 778, false}, Sing{1, 64, 3, 3, 1, 7, 778, false}, Sing{1, 2048, 20, 24, 17, 15, 780, true}})
    for (sg_tri_alg alg : {SG_TRI_TPCR, SG_TRI_AUTO}) {
      Batch<T> B = make_batch<T>((sg_tri_layout)c.lay, c.m, c.nb, c.ld, 0, c.seed);
      B.du[B.idx(c.sys, c.r - 1)] = 0;
      B.dl[B.idx(c.sys, c.r)] = 0; B.d[B.idx(c.sys, c.r)] = 1; B.du[B.idx(c.sys, c.r)] = 1;
      B.dl[B.idx(c.sys, c.r + 1)] = 1; B.d[B.idx(c.sys, c.r + 1)] = 1; B.du[B.idx(c.sys, c.r + 1)] = 0;
      B.dl[B.idx(c.sys, c.r + 2)] = 0;
      const char *what = c.merge ? "singular-2x2-merge" : "singular-2x2";
      for (int dev = 0; dev < (g_cuda ? 2 : 1); dev++) {
        sg_report       rep;
        const sg_status st = solve_on<T>(B, alg, dev, rep);
        // (merge: the merge names the absorbed node's first row, r + 1, as Thomas does; both on the H200, call 8)
        const bool row_ok = c.merge ? rep.row == c.r + 1 : sizeof(T) != 4 || rep.alg != SG_TRI_TPCR || rep.row == c.r + 1;
        const bool ok     = st == SG_ERR_ZERO_PIVOT && rep.status == st && rep.system == c.sys && row_ok && rep.msg[0];
        CHECK(ok, "%s %s %s %s %s: got %s system %lld row %lld: %s", dev ? "cuda" : "host", what, sg_tri_alg_name(alg), pn,
              lay_name((sg_tri_layout)c.lay), sg_status_string(st), rep.system, rep.row, rep.msg);
        printf("%s %s %s %-6s %-6s %-6s -> %s system %lld row %lld: %s\n", ok ? "ok  " : "FAIL", dev ? "cuda" : "host", what,
               sg_tri_alg_name(alg), pn, lay_name((sg_tri_layout)c.lay), sg_status_string(st), rep.system, rep.row, rep.msg);
      }
    }
  // RD needs diagonal dominance to be accurate (tri_team.hpp): one row that is not dominant
  // (|d| = 1.5 < |dl| + |du| = 2, a regular pivot) gets SG_ERR_UNSUPPORTED naming it, from RD
  // only; Thomas, TPCR and CR+RD solve the same systems to the usual tolerance.
  for (int lay = 0; lay < 2; lay++)
    for (long long m : {37ll, 1000ll}) {
      Batch<T> B = make_batch<T>((sg_tri_layout)lay, m, 9, lay == 0 ? m : 9, 0, 779);
      B.dl[B.idx(4, 13)] = 1; B.d[B.idx(4, 13)] = (T)1.5; B.du[B.idx(4, 13)] = 1;
      batch_ref(B, 4);
      for (int dev = 0; dev < (g_cuda ? 2 : 1); dev++) {
        sg_report       rep;
        const sg_status st = solve_on<T>(B, SG_TRI_RD, dev, rep);
        const bool      ok = st == SG_ERR_UNSUPPORTED && rep.status == st && rep.system == 4 && rep.row == 13 && rep.msg[0];
        CHECK(ok, "%s not-dominant rd %s %s m=%lld: got %s system %lld row %lld: %s", dev ? "cuda" : "host", pn, lay_name((sg_tri_layout)lay), m,
              sg_status_string(st), rep.system, rep.row, rep.msg);
        printf("%s %s not-dominant rd %-6s %-6s m=%lld -> %s system %lld row %lld: %s\n", ok ? "ok  " : "FAIL", dev ? "cuda" : "host", pn,
               lay_name((sg_tri_layout)lay), m, sg_status_string(st), rep.system, rep.row, rep.msg);
      }
      for (sg_tri_alg alg : {SG_TRI_THOMAS, SG_TRI_TPCR, SG_TRI_CR_RD}) run_batch(B, alg, false, "one row not dominant");
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
          w0[n + i] = 2.01 + std::fabs(R(rng)); w0[3 * n + i] = R(rng);  // diagonally dominant (RD checks it)
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

// The smallest m (a power of two from 64) whose single-tile plan's team reaches the streaming threshold.
template <class T> static long long stream_from(int layout, int least)
{
  for (long long m = 64; m <= 8192; m *= 2)
    if (tp_make_plan<T>(layout, m, 4096).team >= least) return m;
  return -1;
}
// The streaming kernels' thresholds by the HBM's peak (tp_stream_min_teams): the switch points that
// bench/tri/README.md measured and states (H100: fp64 contiguous / interleaved from m = 512, fp32
// contiguous from 2048, fp32 interleaved never; H200: fp64 contiguous from 256, interleaved from 64, fp32
// contiguous from 512, interleaved from 64 (tensor boxes: up to 256), and the contiguous teams of < 32
// chunks, several per warp).
static void stream_thresholds()
{
  // the default plans only: the .fuse variants' SG_TRI_FUSE_MIN=1 turns interleaved m >= 129 into fused plans
  for (const char *knob : {"SG_TRI_FUSE_MIN", "SG_TRI_FUSE_SPB"})
    if (getenv(knob)) {
      printf("skip streaming thresholds (%s is set: not the default plans)\n", knob);
      return;
    }
  const struct { const char *dev; double peak; long long cd, cf, id, fi; bool multi; } cases[] = {{"H100", 3.35e6, 512, 2048, 512, -1, false},
                                                                                              {"H200", 4.81e6, 256, 512, 64, 64, true}};
  for (const auto &c : cases) {
    const tp_stream_mins k  = tp_stream_min_teams(c.peak);
    const long long      cd = stream_from<double>(SG_TRI_CONTIGUOUS, k.contig), cf = stream_from<float>(SG_TRI_CONTIGUOUS, k.flt),
                         id = stream_from<double>(SG_TRI_INTERLEAVED, k.ilv), fi = k.ilv_f > 0 ? stream_from<float>(SG_TRI_INTERLEAVED, k.ilv_f) : -1;
    const bool ok = cd == c.cd && cf == c.cf && id == c.id && fi == c.fi && k.multi == c.multi;
    CHECK(ok, "%s streaming from m = %lld / %lld / %lld / %lld (fp64 contiguous / fp32 contiguous / fp64 interleaved / fp32 interleaved), expected %lld / %lld / %lld / %lld",
          c.dev, cd, cf, id, fi, c.cd, c.cf, c.id, c.fi);
    printf("%s streaming thresholds %s: fp64 contiguous m >= %lld, fp32 contiguous m >= %lld, fp64 interleaved m >= %lld, fp32 interleaved m >= %lld, smaller contiguous teams %s\n",
           ok ? "ok  " : "FAIL", c.dev, cd, cf, id, fi, k.multi ? "too (several per warp)" : "not");
  }
}

// The fused interleaved plans (tp_fuse_plan) start above one tile of 1024 rows in both precisions (default plans only)
static void fuse_threshold()
{
  for (const char *knob : {"SG_TRI_FUSE_MIN", "SG_TRI_FUSE_SPB"})
    if (getenv(knob)) {
      printf("skip the fused plans' threshold (%s is set: not the default plans)\n", knob);
      return;
    }
  for (long long m : {1000ll, 1024ll, 1025ll, 1500ll, 2048ll}) {
    tp_plan   pd, pf;
    const bool d = tp_fuse_plan<double>(m, 16384, pd), f = tp_fuse_plan<float>(m, 16384, pf), want = m > 1024;
    CHECK(d == want && f == want, "fused plan at interleaved m = %lld: fp64 %d fp32 %d, expected %d", m, (int)d, (int)f, (int)want);
    printf("%s fused interleaved plan at m = %lld: %s\n", d == want && f == want ? "ok  " : "FAIL", m, d ? "yes" : "no");
  }
}

// tp_ilv_regroup (the H200's streamed interleaved plans, tp_stream_ilv_kernel): up to 128-byte rows of systems
// within 512 threads; fp64 m = 251 (teams of 32) is regrouped by the GPU sweep above (nb = 100: a partial last group)
static void ilv_regroup()
{
  for (const char *knob : {"SG_TRI_FUSE_MIN", "SG_TRI_FUSE_SPB"})
    if (getenv(knob)) {
      printf("skip interleaved regrouping (%s is set: not the default plans)\n", knob);
      return;
    }
  const struct { long long m, nb; int spb0, spb1; } cases[] = {{128, 65536, 16, 16}, {251, 65536, 8, 16}, {256, 100, 8, 16}, {256, 5, 8, 8},
                                                              {512, 65536, 8, 8}, {1024, 16384, 4, 4}, {4096, 100, 16, 16}};
  for (const auto &c : cases) {
    tp_plan p = tp_make_plan<double>(SG_TRI_INTERLEAVED, c.m, c.nb), q = p;
    tp_ilv_regroup<double>(q, c.nb);
    const bool ok = p.spb == c.spb0 && q.spb == c.spb1 && q.team == p.team && q.ntiles == p.ntiles && q.groups == (c.nb + q.spb - 1) / q.spb &&
                    q.team * q.spb <= TP_BLOCK_MAX;
    CHECK(ok, "regroup fp64 interleaved m = %lld nb = %lld: spb %d -> %d, expected %d -> %d", c.m, c.nb, p.spb, q.spb, c.spb0, c.spb1);
    printf("%s ilv regroup fp64 m=%lld nb=%lld: team %d, systems per block %d -> %d\n", ok ? "ok  " : "FAIL", c.m, c.nb, p.team, p.spb, q.spb);
  }
}

// (--cuda) the streaming kernels keep their designed occupancy: 2 float blocks of 256 threads per SM (<= 128 registers), 1 double
// block of 512 (tri_internal.hpp)
static void stream_occupancy()
{
#ifdef SG_HAVE_CUDA
  if (!g_cuda) return;
  for (int word : {4, 8})
    for (int kind = 0; kind < 3; kind++) {
      const int n = sg_tri_tpcr_stream_blocks_per_sm(word, kind), want = word == 4 ? 2 : 1;
      CHECK(n >= want, "%s stream kernel (%s): %d blocks per SM, designed for %d", word == 4 ? "float" : "double",
            kind == 0 ? "SOLVE" : kind == 1 ? "REDUCE" : "FINISH", n, want);
      printf("%s %s stream kernel %s: %d blocks per SM (designed: %d)\n", n >= want ? "ok  " : "FAIL", word == 4 ? "float" : "double",
             kind == 0 ? "SOLVE" : kind == 1 ? "REDUCE" : "FINISH", n, want);
    }
#endif
}

static void misc()
{
  ilv_regroup();
  fuse_threshold();
  stream_occupancy();
  order_independence();
  stream_thresholds();
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
  bool quick;
  if (const int rc = tri_test_init(argc, argv, &quick); rc >= 0) return rc;
  // STRUCTGPU_TEST_ONLY=bad: the bad-input cases alone (GPU debugging, sanitizer runs)
  if (const char *only = getenv("STRUCTGPU_TEST_ONLY"); only && !strcmp(only, "bad")) {
    bad_inputs<double>();
    bad_inputs<float>();
    return tri_test_finish("test_tri_batch", quick);
  }
  misc();
  sweep<double>(quick);
  sweep<float>(quick);
  scaled_systems<double>(quick);
  scaled_systems<float>(quick);
  bad_inputs<double>();
  bad_inputs<float>();
  return tri_test_finish("test_tri_batch", quick);
}
