// Execution context (host part, every build): creation, workspaces, reports, names.
// The CUDA-specific pieces live in sg_ctx_cuda.cu (or sg_ctx_nocuda.cpp when CUDA is off)
// behind the small set of backend hooks declared below.
#include "sys/sg_ctx.hpp"
#include <cstdlib>
#include <cstring>

// ---- backend hooks, defined in sg_ctx_cuda.cu / sg_ctx_nocuda.cpp --------------------
sg_status sg_ctx_cuda_init(sg_ctx *ctx);             // device check, dreport allocation
void      sg_ctx_cuda_fini(sg_ctx *ctx);             // synchronises, frees dreport
void     *sg_cuda_dev_alloc(sg_ctx *ctx, size_t bytes);  // stream-ordered when possible
void      sg_cuda_dev_free(sg_ctx *ctx, void *p);
void     *sg_cuda_pinned_alloc(size_t bytes);
void      sg_cuda_pinned_free(void *p);

extern "C" sg_status sg_ctx_create(sg_backend backend, void *stream, sg_ctx **ctx)
{
  if (!ctx) return SG_ERR_ARG;
  *ctx = nullptr;
  if (backend != SG_BACKEND_HOST && backend != SG_BACKEND_CUDA) return SG_ERR_ARG;
  sg_ctx *c = (sg_ctx *)calloc(1, sizeof(sg_ctx));
  if (!c) return SG_ERR_MEM;
  c->backend = backend;
  c->stream  = stream;
  if (backend == SG_BACKEND_CUDA) {
    sg_status st = sg_ctx_cuda_init(c);
    if (st != SG_OK) { free(c); return st; }
  }
  *ctx = c;
  return SG_OK;
}

extern "C" void sg_ctx_destroy(sg_ctx **ctx)
{
  if (!ctx || !*ctx) return;
  sg_ctx *c = *ctx;
  const bool cuda = c->backend == SG_BACKEND_CUDA;
  if (cuda) sg_ctx_cuda_fini(c);  // synchronises the stream first
  for (int i = 0; i < SG_CTX_SLOTS; i++) {
    if (c->work[i]) { if (cuda) sg_cuda_dev_free(c, c->work[i]); else free(c->work[i]); }
    if (c->hwork[i]) { if (cuda) sg_cuda_pinned_free(c->hwork[i]); else free(c->hwork[i]); }
  }
  free(c);
  *ctx = nullptr;
}

extern "C" sg_backend sg_ctx_backend(const sg_ctx *ctx) { return ctx ? ctx->backend : SG_BACKEND_HOST; }

void *sg_ctx_work(sg_ctx *ctx, size_t bytes, int slot)
{
  if (!ctx || slot < 0 || slot >= SG_CTX_SLOTS) return nullptr;
  if (bytes == 0) bytes = 1;
  if (ctx->work[slot] && ctx->work_bytes[slot] >= bytes) return ctx->work[slot];
  const bool cuda = ctx->backend == SG_BACKEND_CUDA;
  if (ctx->work[slot]) { if (cuda) sg_cuda_dev_free(ctx, ctx->work[slot]); else free(ctx->work[slot]); }
  bytes += bytes / 4;  // grow geometrically so that slowly increasing requests do not thrash
  ctx->work[slot]       = cuda ? sg_cuda_dev_alloc(ctx, bytes) : malloc(bytes);
  ctx->work_bytes[slot] = ctx->work[slot] ? bytes : 0;
  return ctx->work[slot];
}

void *sg_ctx_host_work(sg_ctx *ctx, size_t bytes, int slot)
{
  if (!ctx || slot < 0 || slot >= SG_CTX_SLOTS) return nullptr;
  if (bytes == 0) bytes = 1;
  if (ctx->hwork[slot] && ctx->hwork_bytes[slot] >= bytes) return ctx->hwork[slot];
  const bool cuda = ctx->backend == SG_BACKEND_CUDA;
  if (ctx->hwork[slot]) { if (cuda) sg_cuda_pinned_free(ctx->hwork[slot]); else free(ctx->hwork[slot]); }
  bytes += bytes / 4;
  ctx->hwork[slot]       = cuda ? sg_cuda_pinned_alloc(bytes) : malloc(bytes);
  ctx->hwork_bytes[slot] = ctx->hwork[slot] ? bytes : 0;
  return ctx->hwork[slot];
}

sg_status sg_report_set(sg_report *rep, sg_status st, long long system, long long row, double value, const char *fmt, ...)
{
  if (!rep) return st;
  rep->status = st;
  rep->system = system;
  rep->row    = row;
  rep->value  = value;
  rep->msg[0] = 0;
  if (fmt) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rep->msg, sizeof(rep->msg), fmt, ap);
    va_end(ap);
  }
  return st;
}

void sg_report_clear(sg_report *rep, sg_tri_alg alg)
{
  if (!rep) return;
  rep->status = SG_OK;
  rep->alg    = alg;
  rep->system = -1;
  rep->row    = -1;
  rep->value  = 0.0;
  rep->msg[0] = 0;
}

extern "C" const char *sg_tri_alg_name(sg_tri_alg alg)
{
  static const char *names[SG_TRI_NUM_ALGS] = {"auto", "thomas", "cr", "pcr", "rd", "cr_pcr", "cr_rd", "tpcr"};
  return (alg >= 0 && alg < SG_TRI_NUM_ALGS) ? names[alg] : "unknown";
}

extern "C" const char *sg_status_string(sg_status s)
{
  switch (s) {
  case SG_OK: return "ok";
  case SG_ERR_ARG: return "bad argument";
  case SG_ERR_ZERO_PIVOT: return "zero or tiny pivot";
  case SG_ERR_NONFINITE: return "non-finite value (Inf or NaN)";
  case SG_ERR_MEM: return "out of memory";
  case SG_ERR_DEVICE: return "CUDA device error";
  case SG_ERR_UNSUPPORTED: return "unsupported";
  }
  return "unknown status";
}

sg_status sg_report_fail(sg_report *rep, int cls, long long system, long long row, double value)
{
  const char *alg = rep ? sg_tri_alg_name(rep->alg) : "";
  switch (cls) {
  case SG_FAIL_INPUT:
    return sg_report_set(rep, SG_ERR_NONFINITE, system, row, value,
                         "input value %g of system %lld, row %lld is not finite (Inf or NaN)", value, system, row);
  case SG_FAIL_PIVOT:
    return sg_report_set(rep, SG_ERR_ZERO_PIVOT, system, row, value,
                         "pivot %g of system %lld, row %lld is zero or tiny relative to its equation (%s); "
                         "the system is singular or needs pivoting", value, system, row, alg);
  case SG_FAIL_PIVOT_NONFINITE:
    return sg_report_set(rep, SG_ERR_ZERO_PIVOT, system, row, value,
                         "pivot of system %lld, row %lld became %g (%s): overflow or an earlier breakdown; "
                         "the system is singular, badly scaled or needs pivoting", system, row, value, alg);
  case SG_FAIL_NOT_DOMINANT:
    return sg_report_set(rep, SG_ERR_UNSUPPORTED, system, row, value,
                         "row %lld of system %lld is not diagonally dominant (|d| = %g < |dl| + |du|): %s (recursive doubling) "
                         "is not stable on such systems and would return an inaccurate solution; use thomas, cr, pcr or tpcr",
                         row, system, value < 0 ? -value : value, alg);
  default:
    return sg_report_set(rep, SG_ERR_NONFINITE, system, row, value,
                         "solution of system %lld is not finite at row %lld (%s): overflow, the system is badly conditioned",
                         system, row, alg);
  }
}
