// Build without CUDA: the CUDA context hooks and every *_cuda entry point of the kernel
// families owned here report SG_ERR_DEVICE.
#include "sys/sg_ctx.hpp"
#include "tri/tri_internal.hpp"

sg_status sg_ctx_cuda_init(sg_ctx *) { return SG_ERR_DEVICE; }
void      sg_ctx_cuda_fini(sg_ctx *) {}
void     *sg_cuda_dev_alloc(sg_ctx *, size_t) { return nullptr; }
void      sg_cuda_dev_free(sg_ctx *, void *) {}
void     *sg_cuda_pinned_alloc(size_t) { return nullptr; }
void      sg_cuda_pinned_free(void *) {}

extern "C" int sg_cuda_available(void) { return 0; }

static const char *const kNoCuda = "StructGPU was built without CUDA";

extern "C" sg_status sg_tri_batch_solve_cuda(sg_ctx *, sg_tri_alg alg, const sg_tri_batch *, double, sg_report *rep)
{
  sg_report_clear(rep, alg);
  return sg_report_set(rep, SG_ERR_DEVICE, -1, -1, 0.0, "%s", kNoCuda);
}

extern "C" sg_status sg_ctx_set_deferred(sg_ctx *ctx, int) { return ctx ? SG_OK : SG_ERR_ARG; }
extern "C" sg_status sg_ctx_set_l2_fetch(sg_ctx *ctx, int bytes, int *prev)
{
  if (prev) *prev = 0;
  return ctx && bytes >= 0 && bytes <= 128 ? SG_OK : SG_ERR_ARG;
}
extern "C" sg_status sg_ctx_check(sg_ctx *ctx, sg_report *rep)
{
  sg_report_clear(rep, SG_TRI_AUTO);
  return ctx ? SG_OK : sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "sg_ctx_check: NULL context");
}
