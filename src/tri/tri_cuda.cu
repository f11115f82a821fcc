// CUDA batched tridiagonal solvers. The algorithms are those of tri_team.hpp, run by a
// team of threads per system (sg_dev_team): CR, PCR, RD, CR+PCR, CR+RD on a shared-memory
// copy of the system padded to a power of two (several systems per block for small m),
// or, when one system does not fit in shared memory, on a per-block global workspace with
// the very same code. Thomas: one thread per system (coalesced for the interleaved layout).
// Breakdowns are recorded in the ctx's device report and fetched after the launch.
#include "sys/sg_cuda.cuh"
#include "tri/tri_internal.hpp"
#include "tri/tri_team.hpp"
#include <climits>

namespace {

struct sg_dev_team {
  int            tid, nt;
  sg_dev_report *rep;
  long long      system;
  bool           active;  // false for the padding teams of the last block
  template <class F> __host__ __device__ __forceinline__ void par(int n, F &&f)
  {
    for (int i = tid; i < n; i += nt) f(i);
  }
  __host__ __device__ __forceinline__ void sync()
  {
#ifdef __CUDA_ARCH__
    __syncthreads();
#endif
  }
  __host__ __device__ __forceinline__ void fail(int cls, long long row, double v)
  {
#ifdef __CUDA_ARCH__
    if (active) sg_dev_flag(rep, cls, system, row, v);
#else
    (void)cls; (void)row; (void)v;
#endif
  }
};

template <class T> struct tri_args {
  const T  *dl, *d, *du, *b;
  T        *x;
  long long m, nbatch, ld;
  bool      contig;
  __device__ __forceinline__ long long off(long long s, long long i) const { return contig ? s * ld + i : i * ld + s; }
};

// spb systems per block, `team` threads each (blockDim.x == spb*team); system workspaces
// of `words` values in shared memory (GLOBAL=false) or at gwork + blockIdx.x*spb*words.
template <sg_tri_alg ALG, class T, bool GLOBAL>
__global__ void tri_team_kernel(tri_args<T> A, int n, int inter, int spb, int team, long long words, T *gwork, T tol,
                                sg_dev_report *rep)
{
  extern __shared__ __align__(16) unsigned char sg_smem[];
  T *const        base    = GLOBAL ? gwork + (size_t)blockIdx.x * spb * words : reinterpret_cast<T *>(sg_smem);
  const long long ngroups = (A.nbatch + spb - 1) / spb;
  const int       sub = threadIdx.x / team, total = spb * n;
  for (long long g = blockIdx.x; g < ngroups; g += gridDim.x) {  // uniform over the block
    const long long s0 = g * spb;
    // load: consecutive threads read consecutive rows (contiguous) or systems (interleaved)
    for (int f = threadIdx.x; f < total; f += blockDim.x) {
      const int       j = A.contig ? f / n : f % spb, i = A.contig ? f % n : f / spb;
      const long long s = s0 + j;
      sg_dev_team     tj{0, 1, rep, s, s < A.nbatch};
      tri_put_row(tj, base + j * words, n, i, s < A.nbatch ? A.m : 0, A.dl, A.d, A.du, A.b, A.off(s, i));
    }
    __syncthreads();
    sg_dev_team t{(int)threadIdx.x % team, team, rep, s0 + sub, s0 + sub < A.nbatch};
    tri_team_solve<ALG>(t, base + sub * words, n, inter, tol);
    __syncthreads();
    for (int f = threadIdx.x; f < total; f += blockDim.x) {
      const int       j = A.contig ? f / n : f % spb, i = A.contig ? f % n : f / spb;
      const long long s = s0 + j;
      if (s < A.nbatch && i < A.m) {
        const T v = base[j * words + 3 * n + i];
        if (!tri_finite(v)) sg_dev_flag(rep, SG_FAIL_RESULT, s, i, (double)v);
        A.x[A.off(s, i)] = v;
      }
    }
    __syncthreads();  // the next group reuses the workspace
  }
}

// One thread per system; modified super-diagonal at cp[i*nbatch + s] (coalesced).
template <class T> __global__ void tri_thomas_kernel(tri_args<T> A, T *cp, T tol, sg_dev_report *rep)
{
  const long long s = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (s >= A.nbatch) return;
  sg_dev_team     t{0, 1, rep, s, true};
  const long long o = A.off(s, 0), rs = A.contig ? 1 : A.ld;
  tri_thomas(t, A.m, A.dl + o, A.d + o, A.du + o, A.b + o, rs, A.x + o, cp + s, A.nbatch, tol);
}

template <sg_tri_alg ALG, class T>
sg_status tri_launch_team(sg_ctx *ctx, const tri_args<T> &A, T tol, sg_report *rep)
{
  const int       n = sg_next_pow2(A.m), inter = SG_TRI_INTER_DEFAULT;
  const long long words = tri_team_words(ALG, n, inter);
  const size_t    sys_bytes = (size_t)words * sizeof(T);
  const int       smem_max = sg_cuda_smem_optin();
  const bool      global = sys_bytes > (size_t)smem_max;
  auto kernel = global ? tri_team_kernel<ALG, T, true> : tri_team_kernel<ALG, T, false>;
  cudaFuncAttributes fa;
  sg_status st = sg_cuda_check(cudaFuncGetAttributes(&fa, kernel), rep, "querying the tridiagonal kernel");
  if (st != SG_OK) return st;
  int max_threads = 32;  // largest power of two the kernel can run with
  while (2 * max_threads <= fa.maxThreadsPerBlock) max_threads *= 2;
  // threads per system: one per equation of the widest step (CR: n/2)
  const int want = (ALG == SG_TRI_PCR || ALG == SG_TRI_RD) ? n : (n > 1 ? n / 2 : 1);
  int team = want < (global ? 1024 : 512) ? want : (global ? 1024 : 512);
  if (team > max_threads) team = max_threads;
  int spb = team >= 128 ? 1 : 128 / team;  // pack small systems: >= 128 threads per block
  if (spb > A.nbatch) spb = (int)A.nbatch;
  while (!global && spb > 1 && (size_t)spb * sys_bytes > (size_t)smem_max) spb /= 2;
  const long long ngroups = (A.nbatch + spb - 1) / spb;
  long long       grid = ngroups < INT_MAX ? ngroups : INT_MAX;
  size_t          dyn = 0;
  T              *gwork = nullptr;
  if (global) {
    const size_t per_block = (size_t)spb * sys_bytes;
    long long    cap = 2ll * sg_cuda_num_sms();
    const long long fit = (long long)(((size_t)1 << 30) / per_block);  // keep the workspace near 1 GiB
    if (fit < cap) cap = fit > 0 ? fit : 1;
    if (grid > cap) grid = cap;
    gwork = (T *)sg_ctx_work(ctx, (size_t)grid * per_block, 0);
    if (!gwork)
      return sg_report_set(rep, SG_ERR_MEM, -1, -1, 0.0, "cannot allocate %.3g MB of device workspace for %s with m = %lld",
                           (double)grid * per_block / 1e6, sg_tri_alg_name(ALG), A.m);
  } else {
    dyn = (size_t)spb * sys_bytes;
    if (dyn > 48 * 1024) {
      st = sg_cuda_check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)dyn), rep,
                         "raising the shared memory limit");
      if (st != SG_OK) return st;
    }
  }
  kernel<<<(unsigned)grid, spb * team, dyn, sg_stream(ctx)>>>(A, n, inter, spb, team, words, gwork, tol, sg_dreport(ctx));
  return SG_OK;
}

template <class T> sg_status tri_cuda_solve(sg_ctx *ctx, sg_tri_alg alg, const sg_tri_batch *B, double pivtol, sg_report *rep)
{
  const T     tol = pivtol > 0 ? (T)pivtol : sg_default_pivtol<T>();
  tri_args<T> A{(const T *)B->dl, (const T *)B->d, (const T *)B->du, (const T *)B->b, (T *)B->x,
                B->m, B->nbatch, B->ld, B->layout == SG_TRI_CONTIGUOUS};
  if (alg != SG_TRI_THOMAS && B->m > (1ll << 29))
    return sg_report_set(rep, SG_ERR_UNSUPPORTED, -1, -1, 0.0, "%s supports m <= 2^29 (m = %lld); use tpcr or thomas",
                         sg_tri_alg_name(alg), B->m);
  sg_status st = sg_dev_report_reset(ctx, rep);
  if (st != SG_OK) return st;
  switch (alg) {
  case SG_TRI_THOMAS: {
    T *cp = (T *)sg_ctx_work(ctx, (size_t)(B->m * B->nbatch) * sizeof(T), 0);
    if (!cp)
      return sg_report_set(rep, SG_ERR_MEM, -1, -1, 0.0, "cannot allocate %.3g MB of device workspace for thomas",
                           (double)(B->m * B->nbatch) * sizeof(T) / 1e6);
    const long long blocks = (B->nbatch + 127) / 128;
    tri_thomas_kernel<T><<<(unsigned)blocks, 128, 0, sg_stream(ctx)>>>(A, cp, tol, sg_dreport(ctx));
  } break;
  case SG_TRI_CR: st = tri_launch_team<SG_TRI_CR>(ctx, A, tol, rep); break;
  case SG_TRI_PCR: st = tri_launch_team<SG_TRI_PCR>(ctx, A, tol, rep); break;
  case SG_TRI_RD: st = tri_launch_team<SG_TRI_RD>(ctx, A, tol, rep); break;
  case SG_TRI_CR_PCR: st = tri_launch_team<SG_TRI_CR_PCR>(ctx, A, tol, rep); break;
  case SG_TRI_CR_RD: st = tri_launch_team<SG_TRI_CR_RD>(ctx, A, tol, rep); break;
  default: return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "algorithm %s has no batch kernel", sg_tri_alg_name(alg));
  }
  if (st != SG_OK) return st;
  return sg_dev_report_fetch(ctx, rep);
}

} // namespace

extern "C" sg_status sg_tri_batch_solve_cuda(sg_ctx *ctx, sg_tri_alg alg, const sg_tri_batch *B, double pivtol, sg_report *rep)
{
  sg_report local;
  if (!rep) rep = &local;
  sg_status st = sg_tri_batch_begin(ctx, SG_BACKEND_CUDA, &alg, B, rep);
  if (st != SG_OK) return st;
  const void *ptrs[5]  = {B->dl, B->d, B->du, B->b, B->x};
  const char *names[5] = {"dl", "d", "du", "b", "x"};
  for (int k = 0; k < 5; k++)
    if ((st = sg_cuda_check_ptr(ptrs[k], names[k], rep)) != SG_OK) return st;
  if (alg == SG_TRI_TPCR) {
    st = sg_tri_tpcr_solve_cuda(ctx, B, pivtol, rep);
    rep->alg = SG_TRI_TPCR;
    return st;
  }
  return B->prec == SG_REAL64 ? tri_cuda_solve<double>(ctx, alg, B, pivtol, rep) : tri_cuda_solve<float>(ctx, alg, B, pivtol, rep);
}
