// Internal CUDA helpers shared by the kernel families (include from .cu files only).
#pragma once
#include "sys/sg_ctx.hpp"
#include <cuda_runtime.h>

inline cudaStream_t sg_stream(const sg_ctx *ctx) { return (cudaStream_t)ctx->stream; }
inline sg_dev_report *sg_dreport(const sg_ctx *ctx) { return (sg_dev_report *)ctx->dreport; }

// Record a failure (sg_fail_class) of `system` at `row` in the device report; the
// smallest sg_fail_key wins (system, then class, then row). The value is best effort when
// several threads fail at the same time.
__device__ __forceinline__ void sg_dev_flag(sg_dev_report *r, int cls, long long system, long long row, double value)
{
  const unsigned long long k = sg_fail_key(cls, system, row);
  if (k < atomicMin(&r->key, k)) r->value = value;
}

// CUDA error -> SG_ERR_DEVICE with "what: cudaGetErrorString" in rep (clears the error).
sg_status sg_cuda_check(cudaError_t e, sg_report *rep, const char *what);
// Before a launch: clear the device report (async on the ctx stream).
sg_status sg_dev_report_reset(sg_ctx *ctx, sg_report *rep);
// After a launch: check the launch, copy the report back (synchronises the ctx stream) and
// fill rep from the first failure with `fail` (default sg_report_fail, the tridiagonal
// sentences; the trsv family passes its own). Returns the resulting status.
typedef sg_status (*sg_fail_fn)(sg_report *rep, int cls, long long system, long long row, double value);
sg_status sg_dev_report_fetch(sg_ctx *ctx, sg_report *rep, sg_fail_fn fail = sg_report_fail);
// Device properties of the current device (cached per device).
int sg_cuda_num_sms(void);
int sg_cuda_smem_optin(void);  // max dynamic shared memory per block (opt-in), bytes
