// Batched small dense triangular solves on the GPU: sg_trsv_batch_solve_cuda (many
// independent systems of n <= 512, uniform or variable orders, in one launch).
// One CTA per system walks the tiles of its effective lower matrix (trsv_cuda.cuh)
// sequentially: no flags needed.
#include "tri/trsv_cuda.cuh"

namespace {
using namespace sgtrsv;

sg_status fail_batch(sg_report *rep, int cls, long long system, long long row, double value)
{
  if (cls == SG_FAIL_PIVOT_NONFINITE)  // batched: per-system size / leading dimension out of range
    return sg_report_set(rep, SG_ERR_ARG, system, -1, 0.0, "batched triangular solve: system %lld has an order or leading dimension out of range "
                                                          "(0 <= n <= %d and ld >= n required); it was left untouched", system, (int)row);
  return sg_trsv_report_fail(rep, cls, system, row, value);
}

constexpr int NBB = 32, GB = 4, NTB = NBB * GB, STB = 3, TILEB = NBB * (NBB + 1);

template <class T> struct BatchArgs {
  const T *const *A;
  T *const       *X;
  const int      *nv, *ldav, *ldxv;
  int             n, lda, ldx, nrhs;
  bool            rev, trans, unit;
  T               pivtol;
  sg_dev_report  *rep;
};
template <class T, int K> constexpr size_t batch_smem() { return sizeof(T) * ((size_t)(STB + 1) * TILEB + 2 * NBB * K + NBB * NBB / 4 + GB * NBB * K); }

template <class T, int K>
__global__ void __launch_bounds__(NTB) trsv_batch_kernel(const BatchArgs<T> a)
{
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T *S = (T *)smem_raw, *Dinv = S + STB * TILEB, *xs = Dinv + TILEB, *tmp = xs + 2 * NBB * K, *red = tmp + NBB * NBB / 4;
  const long long sys = blockIdx.x;
  const int       n = a.nv ? a.nv[sys] : a.n, lda = a.ldav ? a.ldav[sys] : a.lda, ldx = a.ldxv ? a.ldxv[sys] : a.ldx;
  const int       tid = threadIdx.x;
  if (n < 0 || n > a.n || (n > 0 && (lda < n || ldx < n))) {
    if (tid == 0) sg_dev_flag(a.rep, SG_FAIL_PIVOT_NONFINITE, sys, n, 0.0);
    return;
  }
  if (n == 0) return;
  const View<T> V{a.A[sys], lda, n, a.rev, a.trans};
  T *X = a.X[sys];
  if (!a.unit) {  // leave a singular system untouched: check its whole diagonal first
    bool bad = false;
    for (int i = tid; i < n; i += NTB) {
      const T d = *V.at(i, i);
      if (sg_trsv_bad_diag(d, a.pivtol)) {
        sg_dev_flag(a.rep, sg_trsv_diag_class(d), sys, V.orig(i), (double)d);
        bad = true;
      }
    }
    if (__syncthreads_or(bad)) return;
  }
  const int nblk = (n + NBB - 1) / NBB, nitems = nblk * (nblk + 1) / 2;
  // item t: row I = the largest with I(I+1)/2 <= t; offset 0 = diagonal tile, u>0 = tile (I, u-1)
  auto item = [&](int t, int &I, int &J) {
    I = 0;
    while ((I + 1) * (I + 2) / 2 <= t) I++;
    const int u = t - I * (I + 1) / 2;
    J           = u == 0 ? I : u - 1;
  };
  auto issue = [&](int t) {
    if (t < nitems) {
      int I, J;
      item(t, I, J);
      load_tile<T, NBB, NTB>(S + (t % STB) * TILEB, V, I, J, a.unit);
    }
    cp_commit();
  };
  for (int t = 0; t < STB - 1; t++) issue(t);
  T acc[K];
  for (int t = 0; t < nitems; t++) {
    int I, J;
    item(t, I, J);
    if (J == I) {
#pragma unroll
      for (int k = 0; k < K; k++) acc[k] = T(0);
    } else {  // x_J was finished by this CTA (visible after the barriers of its solve)
      for (int e = tid; e < NBB * K; e += NTB) xs[(e % NBB) * K + e / NBB] = (e / NBB < a.nrhs) ? X[V.orig(J * NBB + e % NBB) + (e / NBB) * ldx] : T(0);
    }
    cp_wait<STB - 2>();
    __syncthreads();
    const T *St = S + (t % STB) * TILEB;
    if (J == I) invert_lower<T, NBB, NTB>(St, Dinv, tmp);
    else gemv<T, NBB, GB, K>(St, xs, acc);
    __syncthreads();  // St and xs consumed
    issue(t + STB - 1);
    if (J == I - 1 || (J == I && I == 0)) {  // last item of row I: finish it
      store_groups<T, NBB, GB, K>(red, acc);
      __syncthreads();
      const int rows = min(NBB, n - I * NBB);
      for (int e = tid; e < NBB * K; e += NTB) {
        const int r = e % NBB, k = e / NBB;
        xs[r * K + k] = (r < rows && k < a.nrhs) ? X[V.orig(I * NBB + r) + k * ldx] - group_sum<T, NBB, GB, K>(red, r, k) : T(0);
      }
      __syncthreads();
      solve_diag<T, NBB, NTB, K>(V, I, Dinv, xs, red, X, ldx, a.nrhs, sys, a.rep);
    }
  }
  cp_wait<0>();
}

template <class T, int K> sg_status launch_batch(sg_ctx *ctx, const sg_trsv_batch *B, double pivtol, sg_report *rep)
{
  BatchArgs<T> a;
  a.A = (const T *const *)B->A;
  a.X = (T *const *)B->X;
  a.nv = B->nv;
  a.ldav = B->ldav;
  a.ldxv = B->ldxv;
  a.n = B->n;
  a.lda = B->lda;
  a.ldx = B->ldx;
  a.nrhs = B->nrhs;
  a.rev = (B->uplo == SG_UPPER) != (B->trans == SG_TRANS);
  a.trans = B->trans == SG_TRANS;
  a.unit = B->diag == SG_UNIT;
  a.pivtol = (T)(pivtol > 0 ? pivtol : 0.0);
  a.rep = sg_dreport(ctx);
  const size_t smem = batch_smem<T, K>();
  sg_status    st;
  static bool  attr = false;
  if (!attr) {
    if ((st = sg_cuda_check(cudaFuncSetAttribute(trsv_batch_kernel<T, K>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem), rep, "batched trsv shared memory")) != SG_OK) return st;
    attr = true;
  }
  if ((st = sg_dev_report_reset(ctx, rep)) != SG_OK) return st;
  trsv_batch_kernel<T, K><<<(unsigned)B->nbatch, NTB, smem, sg_stream(ctx)>>>(a);
  return sg_dev_report_fetch(ctx, rep, fail_batch);
}

template <class T> sg_status dispatch_batch(sg_ctx *ctx, const sg_trsv_batch *B, double pivtol, sg_report *rep)
{
  const int k = B->nrhs;
  if (k <= 1) return launch_batch<T, 1>(ctx, B, pivtol, rep);
  if (k <= 4) return launch_batch<T, 4>(ctx, B, pivtol, rep);
  return launch_batch<T, 16>(ctx, B, pivtol, rep);
}

} // namespace

extern "C" sg_status sg_trsv_batch_solve_cuda(sg_ctx *ctx, const sg_trsv_batch *B, double pivtol, sg_report *rep)
{
  sg_status st = sg_trsv_batch_begin(ctx, SG_BACKEND_CUDA, B, rep);
  if (st != SG_OK) return st;
  if (B->nbatch > 0x7fffffffLL) return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "batched triangular solve: at most 2^31-1 systems per call");
  return B->prec == SG_REAL64 ? dispatch_batch<double>(ctx, B, pivtol, rep) : dispatch_batch<float>(ctx, B, pivtol, rep);
}
