// Internal CUDA helpers shared by the kernel families (include from .cu files only).
#pragma once
#include "sys/sg_ctx.hpp"
#include <cuda_runtime.h>
#include <cudaTypedefs.h>

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
// The HBM's peak by its memory clock and bus width, bytes per us (H100 SXM 3.35e6, H200 4.81e6; their
// device-to-device copies move 3.01 / 4.26 TB/s counting reads and writes); 3.35e6 if the attributes fail.
// Device-class choices of the kernels (trsv job order, tridiagonal streaming) are taken from it.
double sg_cuda_hbm_peak(void);
// The device's L2 fetch granularity in bytes (cudaLimitMaxL2FetchGranularity) as last read or set
// through sg_ctx_set_l2_fetch (read once, then cached; a change made outside the library is not seen:
// it only picks between two equally correct forms of a kernel).
int sg_cuda_l2_fetch(void);
// cuTensorMapEncodeTiled from the driver (through the runtime: no link to libcuda), or NULL
PFN_cuTensorMapEncodeTiled_v12000 sg_tensor_map_encoder();

// ---- Programmatic dependent launch (sm_90): a kernel launched with
// cudaLaunchAttributeProgrammaticStreamSerialization may start while the kernel before it in the
// stream still runs. sg_pdl_wait() (griddepcontrol.wait) returns, in the calling thread, once that
// kernel has completed and its writes are visible: call it before reading what it may have written
// and before any global write it may still read. sg_pdl_open() (griddepcontrol.launch_dependents)
// lets the next such kernel be scheduled before this one ends. Both are no-ops for a kernel launched
// without the attribute / with no dependent.
__device__ __forceinline__ void sg_pdl_wait() { asm volatile("griddepcontrol.wait;\n" ::: "memory"); }
__device__ __forceinline__ void sg_pdl_open() { asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory"); }

// ---- Hopper bulk copies (the TMA copy engine) completing on a shared-memory mbarrier
// (sm_90; used by the trsv chain and the streaming tridiagonal kernel).
__device__ __forceinline__ unsigned smem_u32(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void     mbar_init(unsigned long long *bar) { asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(smem_u32(bar)) : "memory"); }
__device__ __forceinline__ void mbar_arrive(unsigned long long *bar) { asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_u32(bar)) : "memory"); }
__device__ __forceinline__ void mbar_expect(unsigned long long *bar, unsigned bytes)  // the phase's one arrival, and its bytes
{
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(bytes) : "memory");
}
// bytes: a multiple of 16; dst and src 16-byte aligned; counted by bar's expect
__device__ __forceinline__ void bulk_copy(void *dst, const void *src, unsigned bytes, unsigned long long *bar)
{
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(smem_u32(dst)), "l"(src), "r"(bytes),
               "r"(smem_u32(bar))
               : "memory");
}
__device__ __forceinline__ void mbar_wait(unsigned long long *bar, unsigned parity)
{
  asm volatile("{\n .reg .pred p;\n WAIT_%=:\n mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n @!p bra WAIT_%=;\n}\n" ::"r"(smem_u32(bar)), "r"(parity) : "memory");
}
