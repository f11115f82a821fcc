// Build without CUDA: the CUDA twins of the dense triangular / LU kernels report
// SG_ERR_DEVICE (see sys/sg_ctx_nocuda.cpp for the context hooks).
#include "tri/trsv_internal.hpp"

namespace {
sg_status no_cuda(sg_report *rep)
{
  sg_report_clear(rep, SG_TRI_AUTO);
  return sg_report_set(rep, SG_ERR_DEVICE, -1, -1, 0.0, "StructGPU was built without CUDA");
}
} // namespace

extern "C" sg_status sg_trsv_cuda(sg_ctx *, const sg_trsv_problem *, double, sg_report *rep) { return no_cuda(rep); }
extern "C" sg_status sg_trsv_batch_solve_cuda(sg_ctx *, const sg_trsv_batch *, double, sg_report *rep) { return no_cuda(rep); }
extern "C" sg_status sg_getrf_cuda(sg_ctx *, sg_precision, long long, void *, long long, int *, double, sg_report *rep) { return no_cuda(rep); }
extern "C" sg_status sg_getrs_cuda(sg_ctx *, sg_precision, sg_trans, long long, long long, const void *, long long, const int *, const void *,
                                   long long, void *, long long, sg_report *rep)
{
  return no_cuda(rep);
}
extern "C" sg_status sg_trsv_plan_create_cuda(sg_ctx *, const sg_trsv_problem *, double, sg_trsv_plan *plan, sg_report *rep)
{
  if (plan) *plan = nullptr;
  return no_cuda(rep);
}
sg_status sg_trsv_plan_solve_cuda(sg_ctx *, sg_trsv_plan, const sg_trsv_problem *, sg_report *rep) { return no_cuda(rep); }
void      sg_trsv_plan_free_cuda(sg_trsv_plan) {}
sg_status        sg_lu_perm_check_cuda(sg_ctx *, long long, const int *, sg_report *rep) { return no_cuda(rep); }
sg_status        sg_trsv_plan_run_cuda(sg_ctx *, sg_trsv_plan, const sg_trsv_problem *, sg_report *rep) { return no_cuda(rep); }
sg_status sg_getrs_plan_run_cuda(sg_ctx *, sg_getrs_plan, sg_trans, long long, const void *, long long, void *, long long, sg_report *rep)
{
  return no_cuda(rep);
}
