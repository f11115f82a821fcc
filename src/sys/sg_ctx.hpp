// Internal: execution context shared by all kernel families (no PETSc).
#pragma once
#include "structgpu/tri_kernels.h"
#include <cstddef>
#include <cmath>
#include <cstdio>
#include <cstdarg>
#include <cstdlib>

#if defined(__CUDACC__)
#define SG_HD __host__ __device__ __forceinline__
#else
#define SG_HD inline
#endif

#define SG_CTX_SLOTS 9
struct sg_ctx_s {
  sg_backend backend;
  void      *stream;          // cudaStream_t
  void      *work[SG_CTX_SLOTS];        // backend-memory workspaces (device memory for CUDA)
  size_t     work_bytes[SG_CTX_SLOTS];
  void      *hwork[SG_CTX_SLOTS];       // host workspaces (pinned when CUDA)
  size_t     hwork_bytes[SG_CTX_SLOTS];
  void      *dreport;                   // device: sg_dev_report (CUDA only)
  // trsv (src/tri/trsv_cuda.cu): call counter ("epoch") that tags the ready flags of one
  // solve, and the shape whose job table is cached in the trsv table slot.
  unsigned   trsv_epoch;
  long long  trsv_table_key, trsv_table_jobs;
  int        trsv_hyb_nb;      // block rows of the last cluster + helpers solve (its control block's layout)
  unsigned   trsv_hyb_epoch;   // its own call counter (its flags live in their own slot)
  // deferred breakdown checks (sg_ctx_set_deferred): the formatter of the family whose
  // kernels may have recorded a failure since the last sg_ctx_check (sg_fail_fn), or NULL
  int        deferred;
  void      *pending_fail;
};
// Workspace slots. Device (work): 0 tri batch, 1 tri TPCR, 2 trsv control block (ticket,
// flags, x and partial sums in LL form; zeroed when allocated), 4 trsv job table, 5 trsv
// inverted diagonal blocks, 6 dense-LU temporaries, 7 trsv profile (SG_TRSV_PROFILE), 8 the trsv cluster +
// helpers kernel's control block (tickets, counters, flags, x and sums in LL form; zeroed when
// allocated). Host (hwork): 3 pinned report, 6 dense-LU temporaries.
enum { SG_SLOT_TRI_BATCH = 0, SG_SLOT_TRI_TPCR = 1, SG_SLOT_TRSV_CTL = 2, SG_SLOT_REPORT = 3,
       SG_SLOT_TRSV_TABLE = 4, SG_SLOT_TRSV_PART = 5, SG_SLOT_LU = 6, SG_SLOT_TRSV_BATCH = 7,
       SG_SLOT_TRSV_HYB = 8 };

// Workspace slot `slot` (0..SG_CTX_SLOTS-1) of at least `bytes`, in the backend's memory; grows,
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
// The device class of the kernels' measured choices, by the HBM's peak in bytes per us (sg_cuda_hbm_peak:
// H100 SXM 3.35e6, H200 4.81e6): true for the H200's class. Fitted on those two devices only (the trsv
// job order, hy_choose_order; the tridiagonal streaming, tp_stream_min_teams).
inline bool sg_hbm_fast(double peak) { return peak > 3.8e6; }
// An on / off switch from the environment (host side, experiments and A/B runs): def when unset, else off
// for a value starting with '0' and on for any other
inline bool sg_env_flag(const char *name, bool def)
{
  const char *e = std::getenv(name);
  return e ? e[0] != '0' : def;
}
template <class T> SG_HD T sg_default_pivtol() { return sizeof(T) == 8 ? (T)2.220446049250313e-14 : (T)1.1920929e-5; }

#if defined(SG_HAVE_CUDA)
// SG_ERR_ARG unless p is device-accessible memory (defined in sg_ctx_cuda.cu; declared here
// so that plain C++ prologues can check CUDA-path pointers).
sg_status sg_cuda_check_ptr(const void *p, const char *name, sg_report *rep);
// Device-side breakdown record: the first failure (smallest system, then row) wins.
struct sg_dev_report {
  unsigned long long key;  // sg_fail_key(class, system, row), the smallest seen (sg_dev_flag); ~0ull = no failure
  double             value;
};
#endif

// ---- breakdown records shared by host and device code (added by the tri helper k1) ----
// Failure classes, in priority order within one system: a non-finite input, then a zero or
// tiny (finite) pivot, then a non-finite pivot (overflow, or the consequence of an earlier
// breakdown), then a non-finite result, then a row that is not diagonally dominant where the
// algorithm needs dominance to be stable (RD). Status: NONFINITE, ZERO_PIVOT, ZERO_PIVOT,
// NONFINITE, UNSUPPORTED.
enum sg_fail_class { SG_FAIL_INPUT = 0, SG_FAIL_PIVOT = 1, SG_FAIL_PIVOT_NONFINITE = 2, SG_FAIL_RESULT = 3, SG_FAIL_NOT_DOMINANT = 4 };
// Ordering key of a failure: smallest system first, then class, then row (the device
// record keeps the minimum with atomicMin). ~0ull means "no failure".
// Layout: system (29 bits) << 35 | class (3 bits) << 32 | row (32 bits), both clamped.
SG_HD unsigned long long sg_fail_key(int cls, long long system, long long row)
{
  const unsigned long long s = system < 0 ? 0ull : (system > 0x1fffffffll ? 0x1fffffffull : (unsigned long long)system);
  const unsigned long long r = row < 0 ? 0ull : (row > 0xffffffffll ? 0xffffffffull : (unsigned long long)row);
  return (s << 35) | ((unsigned long long)(cls & 7) << 32) | r;
}
SG_HD int       sg_fail_key_class(unsigned long long key) { return (int)((key >> 32) & 7); }
SG_HD long long sg_fail_key_system(unsigned long long key) { return (long long)(key >> 35); }
SG_HD long long sg_fail_key_row(unsigned long long key) { return (long long)(key & 0xffffffffull); }
// Fill rep from a failure (class, system, row, value) with a sentence naming rep->alg.
sg_status sg_report_fail(sg_report *rep, int cls, long long system, long long row, double value);
