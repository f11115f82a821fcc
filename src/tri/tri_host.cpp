// Host reference twin of the batched tridiagonal solvers: the algorithms of tri_team.hpp
// run through sg_host_team, one system at a time (gather with padding into the ctx host
// workspace, solve, scatter). Also: argument checks, the automatic choice, the dispatcher
// and the double Thomas reference.
#include "tri/tri_internal.hpp"
#include "tri/tri_team.hpp"
#include <climits>
#include <cstdlib>

sg_status sg_tri_batch_check(const sg_tri_batch *B, sg_report *rep)
{
  if (!B) return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "the batch descriptor is NULL");
  if (B->prec != SG_REAL64 && B->prec != SG_REAL32)
    return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "unknown precision %d (use SG_REAL64 or SG_REAL32)", (int)B->prec);
  if (B->layout != SG_TRI_CONTIGUOUS && B->layout != SG_TRI_INTERLEAVED)
    return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "unknown layout %d", (int)B->layout);
  if (B->m < 1) return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "system size m = %lld, must be >= 1", B->m);
  if (B->nbatch < 1) return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "batch count nbatch = %lld, must be >= 1", B->nbatch);
  if (B->layout == SG_TRI_CONTIGUOUS && B->ld < B->m)
    return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "contiguous layout needs ld >= m (ld = %lld, m = %lld)", B->ld, B->m);
  if (B->layout == SG_TRI_INTERLEAVED && B->ld < B->nbatch)
    return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "interleaved layout needs ld >= nbatch (ld = %lld, nbatch = %lld)", B->ld,
                         B->nbatch);
  const long long outer = B->layout == SG_TRI_CONTIGUOUS ? B->nbatch : B->m;  // number of ld-strides spanned
  if (B->ld > (LLONG_MAX / 16) / outer)
    return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "batch too large: ld*%s overflows", B->layout == SG_TRI_CONTIGUOUS ? "nbatch" : "m");
  if (!B->dl || !B->d || !B->du || !B->b || !B->x)
    return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "NULL array pointer (%s)",
                         !B->dl ? "dl" : !B->d ? "d" : !B->du ? "du" : !B->b ? "b" : "x");
  return SG_OK;
}

// Crossover table for the automatic choice. The numbers come from bench/tri/CROSSOVERS.md
// (first matching row wins: m <= m_max and nbatch >= nbatch_min; -1 = any prec/layout).
namespace {
struct sg_tri_crossover {
  sg_backend backend;
  int        prec, layout;
  long long  m_max, nbatch_min;
  sg_tri_alg alg;
};
const sg_tri_crossover kTriCrossovers[] = {
  {SG_BACKEND_HOST, -1, -1, LLONG_MAX, 1, SG_TRI_THOMAS},
  // CUDA: measured on H200 (bench/results/tri-NVIDIA_H200-*.json, bench/tri/CROSSOVERS.md):
  // TPCR is the fastest of ours for every m in 64..4096 in both layouts and for single
  // systems (2^20..2^26); Thomas (one thread per system) loses even on interleaved
  // batches (1.7x at m=64, 22x at m=4096 where 1024 systems give too few threads) and the
  // shared-memory CR/PCR/RD family loses by 2-100x.
  {SG_BACKEND_CUDA, -1, -1, LLONG_MAX, 1, SG_TRI_TPCR},
};
} // namespace

extern "C" sg_tri_alg sg_tri_choose(sg_backend backend, sg_precision prec, sg_tri_layout layout, long long m, long long nbatch)
{
  for (const sg_tri_crossover &r : kTriCrossovers)
    if (r.backend == backend && (r.prec < 0 || r.prec == (int)prec) && (r.layout < 0 || r.layout == (int)layout) && m <= r.m_max &&
        nbatch >= r.nbatch_min)
      return r.alg;
  return SG_TRI_THOMAS;
}

namespace {
template <class T> sg_status tri_host_solve(sg_ctx *ctx, sg_tri_alg alg, const sg_tri_batch *B, double pivtol, sg_report *rep)
{
  const T         tol = pivtol > 0 ? (T)pivtol : sg_default_pivtol<T>();
  const long long m = B->m, ld = B->ld;
  const bool      contig = B->layout == SG_TRI_CONTIGUOUS;
  const long long rs = contig ? 1 : ld;  // row stride
  const T *dl = (const T *)B->dl, *d = (const T *)B->d, *du = (const T *)B->du, *b = (const T *)B->b;
  T       *x  = (T *)B->x;

  if (alg == SG_TRI_THOMAS) {
    T *cp = (T *)sg_ctx_host_work(ctx, (size_t)m * sizeof(T), 0);
    if (!cp) return sg_report_set(rep, SG_ERR_MEM, -1, -1, 0.0, "cannot allocate %lld bytes of host workspace", m * (long long)sizeof(T));
    for (long long s = 0; s < B->nbatch; s++) {
      const long long off = contig ? s * ld : s;
      sg_host_team    t;
      tri_thomas(t, m, dl + off, d + off, du + off, b + off, rs, x + off, cp, 1, tol);
      if (t.failed()) return sg_report_fail(rep, t.fail_class(), s, t.fail_row(), t.value);
    }
    return SG_OK;
  }
  if (m > (1ll << 29))
    return sg_report_set(rep, SG_ERR_UNSUPPORTED, -1, -1, 0.0, "%s supports m <= 2^29 (m = %lld); use tpcr or thomas",
                         sg_tri_alg_name(alg), m);
  const int       n = sg_next_pow2(m);
  const long long words = tri_team_words(alg, n, SG_TRI_INTER_DEFAULT);
  T *w = (T *)sg_ctx_host_work(ctx, (size_t)words * sizeof(T), 0);
  if (!w) return sg_report_set(rep, SG_ERR_MEM, -1, -1, 0.0, "cannot allocate %lld bytes of host workspace", words * (long long)sizeof(T));
  for (long long s = 0; s < B->nbatch; s++) {
    const long long off = contig ? s * ld : s;
    sg_host_team    t;
    for (int i = 0; i < n; i++) tri_put_row(t, w, n, i, m, dl, d, du, b, off + i * rs);
    tri_team_solve_alg(t, alg, w, n, SG_TRI_INTER_DEFAULT, tol);
    for (long long i = 0; i < m; i++) {
      const T v = w[3 * n + i];
      if (!tri_finite(v)) t.fail(SG_FAIL_RESULT, i, (double)v);
      x[off + i * rs] = v;
    }
    if (t.failed()) return sg_report_fail(rep, t.fail_class(), s, t.fail_row(), t.value);
  }
  return SG_OK;
}
} // namespace

sg_status sg_tri_batch_begin(sg_ctx *ctx, sg_backend backend, sg_tri_alg *alg, const sg_tri_batch *B, sg_report *rep)
{
  sg_report_clear(rep, *alg);
  if (!ctx) return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "the context is NULL");
  if (backend == SG_BACKEND_CUDA && ctx->backend != SG_BACKEND_CUDA)
    return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "sg_tri_batch_solve_cuda needs a CUDA context (sg_ctx_create(SG_BACKEND_CUDA, ...))");
  if (*alg < SG_TRI_AUTO || *alg >= SG_TRI_NUM_ALGS) return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "unknown algorithm %d", (int)*alg);
  sg_status st = sg_tri_batch_check(B, rep);
  if (st != SG_OK) return st;
  if (*alg == SG_TRI_AUTO) *alg = sg_tri_choose(backend, B->prec, B->layout, B->m, B->nbatch);
  rep->alg = *alg;
  return SG_OK;
}

extern "C" sg_status sg_tri_batch_solve_host(sg_ctx *ctx, sg_tri_alg alg, const sg_tri_batch *B, double pivtol, sg_report *rep)
{
  sg_report local;
  if (!rep) rep = &local;
  sg_status st = sg_tri_batch_begin(ctx, SG_BACKEND_HOST, &alg, B, rep);
  if (st != SG_OK) return st;
  if (alg == SG_TRI_TPCR) {
    st = sg_tri_tpcr_solve_host(ctx, B, pivtol, rep);
    rep->alg = SG_TRI_TPCR;
    return st;
  }
  return B->prec == SG_REAL64 ? tri_host_solve<double>(ctx, alg, B, pivtol, rep) : tri_host_solve<float>(ctx, alg, B, pivtol, rep);
}

extern "C" sg_status sg_tri_batch_solve(sg_ctx *ctx, sg_tri_alg alg, const sg_tri_batch *B, double pivtol, sg_report *rep)
{
  if (ctx && ctx->backend == SG_BACKEND_CUDA) return sg_tri_batch_solve_cuda(ctx, alg, B, pivtol, rep);
  return sg_tri_batch_solve_host(ctx, alg, B, pivtol, rep);
}

extern "C" sg_status sg_tri_thomas_ref(long long n, const double *dl, const double *d, const double *du, double *bx, double pivtol,
                                       sg_report *rep)
{
  sg_report local;
  if (!rep) rep = &local;
  sg_report_clear(rep, SG_TRI_THOMAS);
  if (n < 1) return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "system size n = %lld, must be >= 1", n);
  if (!dl || !d || !du || !bx) return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "NULL array pointer");
  double *cp = (double *)malloc((size_t)n * sizeof(double));
  if (!cp) return sg_report_set(rep, SG_ERR_MEM, -1, -1, 0.0, "cannot allocate %lld bytes", n * 8);
  sg_host_team t;
  tri_thomas(t, n, dl, d, du, (const double *)bx, 1, bx, cp, 1, pivtol > 0 ? pivtol : sg_default_pivtol<double>());
  free(cp);
  return t.failed() ? sg_report_fail(rep, t.fail_class(), 0, t.fail_row(), t.value) : SG_OK;
}
