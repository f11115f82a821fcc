// Host twin of TPCR and of the partitioned ("block") primitives: the tiles, chunks, PCR
// steps and merge tree of tri_partition.hpp executed sequentially, in the order and with
// the arithmetic of the CUDA kernels (tri_tpcr_cuda.cu), so it is their reference (float
// differs by a few ulp: the GPU takes the hardware reciprocal there, see tp_inv).
#include "tri/tri_internal.hpp"
#include "tri/tri_partition.hpp"
#include <new>
#include <vector>

namespace {
// Failure record of the host twin: the smallest sg_fail_key (system, class, row) wins.
struct tp_host_team {
  unsigned long long key = ~0ull;
  double             value = 0.0;
  long long          sys = 0, rscale = 1;
  void fail(int cls, long long row, double v)
  {
    const unsigned long long k = sg_fail_key(cls, sys, row * rscale);
    if (k < key) { key = k; value = v; }
  }
  bool failed() const { return key != ~0ull; }
  sg_status report(sg_report *rep) const
  {
    return sg_report_fail(rep, sg_fail_key_class(key), sg_fail_key_system(key), sg_fail_key_row(key), value);
  }
};

template <class T> struct tp_host_ex {
  static constexpr int Q = tp_q<T>();
  tp_host_team         tm;
  std::vector<T>       ca, cc, cr;  // per-chunk coefficients of one tile (Q each)
  std::vector<tp_eq<T>> cur, nxt, fe, u1, un;  // interface equations; PCR ping-pong; unit e1, unit PCR equations
  std::vector<T>        xf;            // x_first of the chunks
  std::vector<tp_node<T>> nodes;
  bool ok() const { return true; }
  // the host runs a fused plan (tp_fuse_plan) level by level
  bool fused(const tp_sys<T> &, const tp_sys<T> &, const tp_plan &, T) { return false; }

  void solve(const tp_sys<T> &S, const tp_plan &p, T tol)
  {
    const int n = 2 * p.team;
    ca.resize((size_t)p.tile); cc.resize((size_t)p.tile); cr.resize((size_t)p.tile);
    cur.resize(n); nxt.resize(p.team); fe.resize(p.team); u1.resize(p.team); un.resize(p.team); xf.resize(p.team);
    tm.rscale = S.rscale;
    for (long long s = 0; s < S.nbatch; s++) {
      tm.sys = s;
      for (long long t = 0; t < p.ntiles; t++) {
        const long long ts = t * p.tile, te = ts + p.tile < S.m ? ts + p.tile : S.m;
        for (int j = 0; j < p.team; j++) {
          const long long g0 = ts + (long long)j * Q;
          T a[Q], b[Q], c[Q], r[Q];
          tp_load_raw<Q>(S, s, g0, te, a, b, c, r);
          tp_fix_chunk<Q>(tm, S, s, t, ts, te, g0, a, b, c, r);
          tp_chunk_reduce<Q>(tm, a, b, c, r, Q, tol, g0, 1, cur[2 * j], cur[2 * j + 1]);
          for (int i = 0; i < Q; i++) { ca[j * Q + i] = a[i]; cc[j * Q + i] = c[i]; cr[j * Q + i] = r[i]; }
        }
        // even/odd step, PCR on the chunks' first unknowns (neighbours divided by their pivots,
        // tp_eq_unit, as the kernels exchange them), then the last unknowns
        for (int j = 0; j < p.team; j++) u1[j] = tp_eq_unit(tm, cur[2 * j + 1], tol, tp_eq_row(ts, 2 * j + 1, Q));
        for (int j = 0; j < p.team; j++) nxt[j] = tp_pcr_step(cur[2 * j], j > 0, u1[j > 0 ? j - 1 : 0], true, u1[j]);
        for (int st = 1; st < p.team; st *= 2) {
          for (int j = 0; j < p.team; j++) un[j] = tp_eq_unit(tm, nxt[j], tol, tp_eq_row(ts, 2 * j, Q));
          for (int j = 0; j < p.team; j++) {
            const bool hl = j - st >= 0, hr = j + st < p.team;
            fe[j] = tp_pcr_step(un[j], hl, un[hl ? j - st : j], hr, un[hr ? j + st : j]);
          }
          nxt.swap(fe);
        }
        for (int j = 0; j < p.team; j++) xf[j] = tp_pcr_x(tm, nxt[j], tol, tp_eq_row(ts, 2 * j, Q));
        for (int j = 0; j < p.team; j++) {
          const long long g0 = ts + (long long)j * Q;
          if (g0 >= te) break;
          T a[Q], c[Q], r[Q];
          for (int i = 0; i < Q; i++) { a[i] = ca[j * Q + i]; c[i] = cc[j * Q + i]; r[i] = cr[j * Q + i]; }
          const T x0 = xf[j], xl = tp_last_x(u1[j], x0, j + 1 < p.team ? xf[j + 1] : (T)0);
          tp_chunk_solve<Q>(a, c, r, x0, xl);
          tp_check_x<Q>(tm, r, g0, te);
          const long long o = s * S.ss + g0 * S.rs;
          for (int i = 0; i < Q && g0 + i < te; i++) S.x[o + i * S.rs] = r[i];
        }
      }
    }
  }

  void reduce(const tp_sys<T> &S, const tp_plan &p, T tol, T *rdl, T *rd, T *rdu, T *rb, long long rss, long long rrs)
  {
    nodes.resize(p.team);
    tm.rscale = S.rscale;
    for (long long s = 0; s < S.nbatch; s++) {
      tm.sys = s;
      for (long long t = 0; t < p.ntiles; t++) {
        const long long ts = t * p.tile, te = ts + p.tile < S.m ? ts + p.tile : S.m;
        for (int j = 0; j < p.team; j++) {
          const long long g0 = ts + (long long)j * Q, left = te - g0;
          T a[Q], b[Q], c[Q], r[Q];
          tp_load_raw<Q>(S, s, g0, te, a, b, c, r);
          tp_fix_chunk<Q>(tm, S, s, t, ts, te, g0, a, b, c, r);
          const int nrow = left <= 0 ? 0 : left >= Q ? Q : (int)left;
          nodes[j].cnt = tp_chunk_reduce<Q>(tm, a, b, c, r, nrow, tol, g0, 1, nodes[j].e0, nodes[j].e1);
        }
        for (int st = 1; st < p.team; st *= 2)
          for (int j = 0; j + st < p.team; j += 2 * st) nodes[j] = tp_merge(tm, nodes[j], nodes[j + st], tol, ts + (long long)(j + st) * Q);
        const tp_node<T> &nd = nodes[0];
        for (int k = 0; k < nd.cnt; k++) {
          const tp_eq<T>  e = k ? nd.e1 : nd.e0;
          const long long o = s * rss + (2 * t + k) * rrs;
          tp_check_eq(tm, e, k ? te - 1 : ts);
          rdl[o] = e.a; rd[o] = e.b; rdu[o] = e.c; rb[o] = e.d;
        }
      }
    }
  }
};

template <class T> sg_status tpcr_host(const sg_tri_batch *B, double pivtol, sg_report *rep)
{
  const T  tol = pivtol > 0 ? (T)pivtol : sg_default_pivtol<T>();
  tp_sys<T> S{};
  S.dl = (const T *)B->dl; S.d = (const T *)B->d; S.du = (const T *)B->du; S.b = (const T *)B->b; S.x = (T *)B->x;
  S.m = B->m; S.nbatch = B->nbatch;
  if (B->layout == SG_TRI_CONTIGUOUS) { S.ss = B->ld; S.rs = 1; }
  else { S.ss = 1; S.rs = B->ld; }
  S.endmode = TP_END_ZERO; S.rscale = 1; S.user = true; S.inter = B->layout == SG_TRI_INTERLEAVED;
  try {
    std::vector<T> work((size_t)tp_solve_work<T>(B->layout, B->m, B->nbatch));
    tp_host_ex<T>  ex;
    tp_solve_levels(ex, S, tol, work.data());
    return ex.tm.failed() ? ex.tm.report(rep) : SG_OK;
  } catch (const std::bad_alloc &) {
    return sg_report_set(rep, SG_ERR_MEM, -1, -1, 0.0, "tpcr: cannot allocate the host workspace (m = %lld, nbatch = %lld)", B->m, B->nbatch);
  }
}

template <class T>
sg_status block_reduce_host(long long n, const void *dl, const void *d, const void *du, const void *b, double pivtol, double iface[8], int *k,
                            sg_report *rep)
{
  const T  tol = pivtol > 0 ? (T)pivtol : sg_default_pivtol<T>();
  tp_sys<T> S{};
  S.dl = (const T *)dl; S.d = (const T *)d; S.du = (const T *)du; S.b = (const T *)b;
  S.m = n; S.nbatch = 1; S.ss = n; S.rs = 1; S.endmode = TP_END_KEEP; S.rscale = 1; S.user = true;
  try {
    std::vector<T> work((size_t)tp_reduce_work<T>(n));
    tp_host_ex<T>  ex;
    T             *out = nullptr;
    const int      cnt = tp_reduce_levels(ex, S, tol, work.data(), &out);
    for (int e = 0; e < cnt; e++)
      for (int v = 0; v < 4; v++) iface[4 * e + v] = (double)out[v * cnt + e];
    *k = cnt;
    return ex.tm.failed() ? ex.tm.report(rep) : SG_OK;
  } catch (const std::bad_alloc &) {
    return sg_report_set(rep, SG_ERR_MEM, -1, -1, 0.0, "block reduce: cannot allocate the host workspace (n = %lld)", n);
  }
}

template <class T>
sg_status block_solve_tpcr_host(long long n, const void *dl, const void *d, const void *du, const void *b, double xp, double xn, void *x,
                                double pivtol, sg_report *rep)
{
  const T  tol = pivtol > 0 ? (T)pivtol : sg_default_pivtol<T>();
  tp_sys<T> S{};
  S.dl = (const T *)dl; S.d = (const T *)d; S.du = (const T *)du; S.b = (const T *)b; S.x = (T *)x;
  S.m = n; S.nbatch = 1; S.ss = n; S.rs = 1; S.endmode = TP_END_KNOWN; S.xprev = (T)xp; S.xnext = (T)xn; S.rscale = 1; S.user = true;
  try {
    std::vector<T> work((size_t)tp_solve_work<T>(SG_TRI_CONTIGUOUS, n, 1));
    tp_host_ex<T>  ex;
    tp_solve_levels(ex, S, tol, work.data());
    return ex.tm.failed() ? ex.tm.report(rep) : SG_OK;
  } catch (const std::bad_alloc &) {
    return sg_report_set(rep, SG_ERR_MEM, -1, -1, 0.0, "block solve: cannot allocate the host workspace (n = %lld)", n);
  }
}

// Other algorithms: x = b with the known neighbours folded in, then a batch solve in place.
template <class T>
sg_status block_solve_copy_host(sg_ctx *ctx, sg_tri_alg alg, long long n, const void *dl, const void *d, const void *du, const void *b,
                                double xp, double xn, void *x, double pivtol, sg_report *rep)
{
  T *xx = (T *)x;
  const T *bb = (const T *)b;
  if (xx != bb)
    for (long long i = 0; i < n; i++) xx[i] = bb[i];
  xx[0] -= ((const T *)dl)[0] * (T)xp;
  xx[n - 1] -= ((const T *)du)[n - 1] * (T)xn;
  sg_tri_batch B;
  B.prec = sizeof(T) == 8 ? SG_REAL64 : SG_REAL32;
  B.layout = SG_TRI_CONTIGUOUS; B.m = n; B.nbatch = 1; B.ld = n;
  B.dl = dl; B.d = d; B.du = du; B.b = x; B.x = x;
  return sg_tri_batch_solve_host(ctx, alg, &B, pivtol, rep);
}
} // namespace

sg_status sg_tri_tpcr_solve_host(sg_ctx *, const sg_tri_batch *B, double pivtol, sg_report *rep)
{
  return B->prec == SG_REAL64 ? tpcr_host<double>(B, pivtol, rep) : tpcr_host<float>(B, pivtol, rep);
}

static sg_status block_ctx_check(sg_ctx *ctx, sg_backend backend, const char *fn, sg_report *rep)
{
  if (!ctx) return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "the context is NULL");
  if (backend == SG_BACKEND_CUDA && ctx->backend != SG_BACKEND_CUDA)
    return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "%s needs a CUDA context (sg_ctx_create(SG_BACKEND_CUDA, ...))", fn);
  return SG_OK;
}

sg_status sg_tri_block_reduce_begin(sg_ctx *ctx, sg_backend backend, sg_precision prec, long long n, const void *dl, const void *d,
                                    const void *du, const void *b, double iface[8], int *k, sg_report *rep)
{
  sg_report_clear(rep, SG_TRI_TPCR);
  if (k) *k = 0;
  sg_status st = backend == SG_BACKEND_CUDA ? block_ctx_check(ctx, backend, "sg_tri_block_reduce_cuda", rep) : SG_OK;
  if (st != SG_OK || (st = tp_block_check(prec, n, dl, d, du, b, rep)) != SG_OK) return st;
  if (!iface || !k) return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "NULL %s pointer", !iface ? "iface" : "k");
  return SG_OK;
}

sg_status sg_tri_block_solve_begin(sg_ctx *ctx, sg_backend backend, sg_tri_alg *alg, sg_precision prec, long long n, const void *dl,
                                   const void *d, const void *du, const void *b, void *x, sg_report *rep)
{
  sg_report_clear(rep, *alg);
  sg_status st = block_ctx_check(ctx, backend, "sg_tri_block_solve_cuda", rep);
  if (st != SG_OK) return st;
  if (*alg < SG_TRI_AUTO || *alg >= SG_TRI_NUM_ALGS) return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "unknown algorithm %d", (int)*alg);
  if ((st = tp_block_check(prec, n, dl, d, du, b, rep)) != SG_OK) return st;
  if (!x) return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "NULL array pointer (x)");
  if (*alg == SG_TRI_AUTO) *alg = sg_tri_choose(backend, prec, SG_TRI_CONTIGUOUS, n, 1);
  rep->alg = *alg;
  return SG_OK;
}

extern "C" sg_status sg_tri_block_reduce_host(sg_ctx *ctx, sg_precision prec, long long n, const void *dl, const void *d, const void *du,
                                              const void *b, double pivtol, double iface[8], int *k, sg_report *rep)
{
  sg_report local;
  if (!rep) rep = &local;
  sg_status st = sg_tri_block_reduce_begin(ctx, SG_BACKEND_HOST, prec, n, dl, d, du, b, iface, k, rep);
  if (st != SG_OK) return st;
  return prec == SG_REAL64 ? block_reduce_host<double>(n, dl, d, du, b, pivtol, iface, k, rep)
                           : block_reduce_host<float>(n, dl, d, du, b, pivtol, iface, k, rep);
}

extern "C" sg_status sg_tri_block_solve_host(sg_ctx *ctx, sg_tri_alg alg, sg_precision prec, long long n, const void *dl, const void *d,
                                             const void *du, const void *b, double x_prev, double x_next, void *x, double pivtol,
                                             sg_report *rep)
{
  sg_report local;
  if (!rep) rep = &local;
  sg_status st = sg_tri_block_solve_begin(ctx, SG_BACKEND_HOST, &alg, prec, n, dl, d, du, b, x, rep);
  if (st != SG_OK) return st;
  if (alg == SG_TRI_TPCR)
    return prec == SG_REAL64 ? block_solve_tpcr_host<double>(n, dl, d, du, b, x_prev, x_next, x, pivtol, rep)
                             : block_solve_tpcr_host<float>(n, dl, d, du, b, x_prev, x_next, x, pivtol, rep);
  return prec == SG_REAL64 ? block_solve_copy_host<double>(ctx, alg, n, dl, d, du, b, x_prev, x_next, x, pivtol, rep)
                           : block_solve_copy_host<float>(ctx, alg, n, dl, d, du, b, x_prev, x_next, x, pivtol, rep);
}

// ---- dispatchers (backend of the context)
extern "C" sg_status sg_tri_block_reduce(sg_ctx *ctx, sg_precision prec, long long n, const void *dl, const void *d, const void *du,
                                         const void *b, double pivtol, double iface[8], int *k, sg_report *rep)
{
  if (ctx && ctx->backend == SG_BACKEND_CUDA) return sg_tri_block_reduce_cuda(ctx, prec, n, dl, d, du, b, pivtol, iface, k, rep);
  return sg_tri_block_reduce_host(ctx, prec, n, dl, d, du, b, pivtol, iface, k, rep);
}

extern "C" sg_status sg_tri_block_solve(sg_ctx *ctx, sg_tri_alg alg, sg_precision prec, long long n, const void *dl, const void *d,
                                        const void *du, const void *b, double x_prev, double x_next, void *x, double pivtol, sg_report *rep)
{
  if (ctx && ctx->backend == SG_BACKEND_CUDA)
    return sg_tri_block_solve_cuda(ctx, alg, prec, n, dl, d, du, b, x_prev, x_next, x, pivtol, rep);
  return sg_tri_block_solve_host(ctx, alg, prec, n, dl, d, du, b, x_prev, x_next, x, pivtol, rep);
}

#if !defined(SG_HAVE_CUDA)
// Build without CUDA: the device entry points of this file's family report SG_ERR_DEVICE.
sg_status sg_tri_tpcr_solve_cuda(sg_ctx *, const sg_tri_batch *, double, sg_report *rep)
{
  return sg_report_set(rep, SG_ERR_DEVICE, -1, -1, 0.0, "StructGPU was built without CUDA");
}
extern "C" sg_status sg_tri_block_reduce_cuda(sg_ctx *, sg_precision, long long, const void *, const void *, const void *, const void *,
                                              double, double *, int *k, sg_report *rep)
{
  sg_report_clear(rep, SG_TRI_TPCR);
  if (k) *k = 0;
  return sg_report_set(rep, SG_ERR_DEVICE, -1, -1, 0.0, "StructGPU was built without CUDA");
}
extern "C" sg_status sg_tri_block_solve_cuda(sg_ctx *, sg_tri_alg alg, sg_precision, long long, const void *, const void *, const void *,
                                             const void *, double, double, void *, double, sg_report *rep)
{
  sg_report_clear(rep, alg);
  return sg_report_set(rep, SG_ERR_DEVICE, -1, -1, 0.0, "StructGPU was built without CUDA");
}
#endif
