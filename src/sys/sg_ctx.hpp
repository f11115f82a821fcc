// Internal: execution context shared by all kernel families (no PETSc).
#pragma once
#include "structgpu/tri_kernels.h"
#include <cstddef>
#include <cmath>
#include <cstdio>
#include <cstdarg>

#if defined(__CUDACC__)
#define SG_HD __host__ __device__ __forceinline__
#else
#define SG_HD inline
#endif

struct sg_ctx_s {
  sg_backend backend;
  void      *stream;          // cudaStream_t
  void      *work[4];         // backend-memory workspaces (device memory for CUDA)
  size_t     work_bytes[4];
  void      *hwork[4];        // host workspaces (pinned when CUDA)
  size_t     hwork_bytes[4];
  void      *dreport;         // device: sg_dev_report (CUDA only)
};

// Workspace slot `slot` (0..3) of at least `bytes`, in the backend's memory; grows,
// never shrinks; NULL on allocation failure. Contents are not preserved on growth.
void *sg_ctx_work(sg_ctx *ctx, size_t bytes, int slot);
// Host workspace slot (pinned host memory on CUDA builds).
void *sg_ctx_host_work(sg_ctx *ctx, size_t bytes, int slot);

// Fill a report (status, system, row, value and a printf-style message); returns status.
sg_status sg_report_set(sg_report *rep, sg_status st, long long system, long long row, double value, const char *fmt, ...);
void      sg_report_clear(sg_report *rep, sg_tri_alg alg);

// Breakdown test used by every algorithm, host and device: equation with coefficients
// (a, b, c) is divided by b. Returns true when b is unusable as a divisor.
template <class T>
SG_HD bool sg_bad_pivot(T a, T b, T c, T tol)
{
  T s = fabs(a) + fabs(b) + fabs(c);
  return !(fabs(b) > tol * s) || !(s < (T)INFINITY);  // catches 0, tiny, NaN and Inf
}
template <class T> SG_HD T sg_default_pivtol() { return sizeof(T) == 8 ? (T)2.220446049250313e-14 : (T)1.1920929e-5; }

#if defined(SG_HAVE_CUDA)
// Device-side breakdown record: the first failure (smallest system, then row) wins.
struct sg_dev_report {
  unsigned long long key;  // (status << 60) | (system << 24 ... ) packed by sg_dev_flag; ~0ull = no failure
  double             value;
};
#endif
