// Dense triangular solves on the GPU: sg_trsv_cuda (one system, n up to millions of
// unknowns, up to 16 right-hand sides); building blocks in trsv_cuda.cuh, batches in
// trsv_batch_cuda.cu.
// One system (Hogg's global-memory synchronised solve, extended):
//  - work is split into jobs: block row I's off-diagonal tiles are cut into chunks of CT
//    tiles; the last chunk plus the diagonal tile is the row's "owner" job, the others are
//    "helper" jobs that write partial sums (at most MAXH per row). Jobs take tickets row by
//    row (build_jobs), so a job only ever waits for smaller tickets: no deadlock whatever the
//    scheduler does, and no block row is one long serial stream.
//  - tiles stream through a STAGES-deep cp.async ring in shared memory, issued before the
//    solution pieces they multiply are known (prefetch independent of the dependencies).
//  - readiness: owner I publishes flags[I] = epoch (release) after writing x_I; consumers
//    poll 32 flags at once with acquire loads, so in bandwidth mode a poll is rare. The
//    epoch (per-call counter) means flags are never reset; ticket/done counters and the
//    per-row helper counters return to zero by the end of every launch.
#include "tri/trsv_cuda.cuh"
#include <algorithm>
#include <cstdlib>
#include <vector>

namespace {
using namespace sgtrsv;

// ---------------------------------------------------------------- one system
constexpr int NB1 = 64, G1 = 8, NT1 = NB1 * G1, ST1 = 4, MAXH = 8;  // tile, threads, ring depth, helpers per row
constexpr int TILE1 = NB1 * (NB1 + 1);

template <class T> struct OneArgs {
  View<T>        V;
  const T       *B;
  long long      ldb;
  T             *X;
  long long      ldx;
  int            nrhs, CT;
  const int     *jobs;
  unsigned      *ctl, *flags, *cnt;  // ctl[0] ticket, ctl[1] done
  T             *part;               // [row][MAXH][K][NB]
  unsigned       epoch;
  T              pivtol;
  bool           unit;
  sg_dev_report *rep;
};

template <class T, int K> constexpr size_t one_smem() { return sizeof(T) * ((size_t)(ST1 + 1) * TILE1 + 2 * NB1 * K + NB1 * NB1 / 4); }

template <class T, int K>
__global__ void __launch_bounds__(NT1, 1) trsv_one_kernel(const OneArgs<T> a)
{
  static_assert(ST1 * TILE1 >= G1 * NB1 * K, "reduction buffer must fit in the ring");
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T *S = (T *)smem_raw, *Dinv = S + ST1 * TILE1, *xs = Dinv + TILE1, *tmp = xs + 2 * NB1 * K;
  __shared__ int s_job, s_ready[2];
  const int tid = threadIdx.x;
  if (tid == 0) {
    s_job = a.jobs[atomicAdd(&a.ctl[0], 1u)];
  }
  __syncthreads();
  const int  I = s_job >> 4, c = s_job & 15, nch = (I + a.CT - 1) / a.CT;
  const bool owner = c == 15;
  const int  j0 = owner ? (nch > 0 ? (nch - 1) * a.CT : 0) : c * a.CT, j1 = owner ? I : (c + 1) * a.CT;
  const int  first = owner ? 1 : 0, nitems = first + (j1 - j0);  // owner: item 0 = diagonal tile
  const View<T> &V = a.V;

  auto item_J = [&](int t) { return (owner && t == 0) ? I : j0 + t - first; };
  auto issue  = [&](int t) {
    if (t < nitems) load_tile<T, NB1, NT1>(S + (t % ST1) * TILE1, V, I, item_J(t), a.unit);
    cp_commit();
  };
  // make sure x_J is published; polls 32 flags at once, so streams rarely wait here.
  // `ready` (a register, the same in every thread) is what all threads agreed on at the last
  // poll; the shared slot alternates so that a slow warp still reads the value of its call.
  int  ready = 0, npoll = 0;
  auto ensure_ready = [&](int J) {
    if (J < ready) return;
    if (tid < 32) {
      unsigned m;
      for (;;) {
        const int jj = J + tid;
        m            = __ballot_sync(~0u, jj >= j1 || ld_acquire(a.flags + jj) == a.epoch);
        if (m & 1u) break;
      }
      if (tid == 0) s_ready[npoll & 1] = J + (~m ? __ffs(~m) - 1 : 32);
    }
    __syncthreads();
    ready = s_ready[npoll++ & 1];
  };
  T xr[(NB1 * K + NT1 - 1) / NT1];  // register prefetch of one x block
  auto load_x = [&](int J) {
#pragma unroll
    for (int q = 0; q < (NB1 * K + NT1 - 1) / NT1; q++) {
      const int e = tid + q * NT1, cc = e % NB1, k = e / NB1;
      xr[q]       = (e < NB1 * K && k < a.nrhs) ? __ldcg(a.X + V.orig(J * NB1 + cc) + k * a.ldx) : T(0);
    }
  };
  auto store_x = [&](T *dst) {
#pragma unroll
    for (int q = 0; q < (NB1 * K + NT1 - 1) / NT1; q++) {
      const int e = tid + q * NT1;
      if (e < NB1 * K) dst[(e % NB1) * K + e / NB1] = xr[q];
    }
  };

  for (int t = 0; t < ST1 - 1; t++) issue(t);
  constexpr int QB = (NB1 * K + NT1 - 1) / NT1;
  T             br[QB];  // owner: b_I, loaded now so that the finish does not wait for it
  const int     rows = min(NB1, V.n - I * NB1);
#pragma unroll
  for (int q = 0; q < QB; q++) {
    const int e = tid + q * NT1, r = e % NB1, k = e / NB1;
    br[q]       = (owner && e < NB1 * K && r < rows && k < a.nrhs) ? a.B[V.orig(I * NB1 + r) + k * a.ldb] : T(0);
  }
  if (nitems > first) {
    ensure_ready(item_J(first));
    load_x(item_J(first));
    store_x(xs + (first & 1) * NB1 * K);
  }
  T acc[K];
#pragma unroll
  for (int k = 0; k < K; k++) acc[k] = T(0);
  for (int t = 0; t < nitems; t++) {
    cp_wait<ST1 - 2>();
    __syncthreads();
    const T   *St   = S + (t % ST1) * TILE1;
    const bool next = t + 1 < nitems, pre = next && item_J(t + 1) < ready;
    if (pre) load_x(item_J(t + 1));  // ready already: the L2 round trip overlaps the tile work
    if (owner && t == 0) {
      if (!a.unit) check_diag<T, NB1>(St, V, I, a.pivtol, 0, a.rep);
      invert_lower<T, NB1, NT1>(St, Dinv, tmp);
    } else gemv<T, NB1, G1, K>(St, xs + (t & 1) * NB1 * K, acc);
    issue(t + ST1 - 1);
    if (next) {
      if (!pre) {
        ensure_ready(item_J(t + 1));
        load_x(item_J(t + 1));
      }
      store_x(xs + ((t + 1) & 1) * NB1 * K);
    }
  }
  cp_wait<0>();
  __syncthreads();
  T *red = S;  // the ring is idle now
  store_groups<T, NB1, G1, K>(red, acc);
  if (owner && tid == 0 && nch > 1) {  // helpers of this row are earlier tickets
    while (ld_acquire(a.cnt + I) != (unsigned)(nch - 1)) __nanosleep(32);
    a.cnt[I] = 0u;
  }
  __syncthreads();
#pragma unroll
  for (int q = 0; q < QB; q++) {
    const int e = tid + q * NT1, r = e % NB1, k = e / NB1;
    if (e >= NB1 * K) break;
    T s = group_sum<T, NB1, G1, K>(red, r, k);
    if (owner) {
      for (int h = 0; h + 1 < nch; h++) s += __ldcg(a.part + (((size_t)I * MAXH + h) * K + k) * NB1 + r);
      xs[r * K + k] = (r < rows && k < a.nrhs) ? br[q] - s : T(0);
    } else a.part[(((size_t)I * MAXH + c) * K + k) * NB1 + r] = s;
  }
  __syncthreads();
  if (owner) {
    solve_diag<T, NB1, NT1, K>(V, I, Dinv, xs, red, a.X, a.ldx, a.nrhs, 0, a.rep);
    if (tid == 0) st_release(a.flags + I, a.epoch);  // after the barrier: releases the whole CTA's x_I
  } else if (tid == 0) red_release_add(a.cnt + I, 1u);
  if (tid == 0 && atomicAdd(&a.ctl[1], 1u) == gridDim.x - 1) {  // last job: reset for the next call
    a.ctl[0] = 0u;
    a.ctl[1] = 0u;
  }
}

// Job table, in ticket order: row by row, a row's helpers before its owner. A job waits only
// for owners of earlier rows and for helpers of its own row, all earlier tickets, so the
// solve cannot deadlock; rows are started in the order the dependency chain reaches them,
// so an owner has its diagonal block inverted and its chunk streamed before it is needed.
void build_jobs(int nblk, int CT, std::vector<int> &jobs)
{
  jobs.clear();
  for (int I = 0; I < nblk; I++) {
    const int nch = (I + CT - 1) / CT;
    for (int c = 0; c + 1 < nch; c++) jobs.push_back((I << 4) | c);
    jobs.push_back((I << 4) | 15);
  }
}

int env_int(const char *name, int def, int lo, int hi)
{
  const char *s = getenv(name);
  if (!s) return def;
  const int v = atoi(s);
  return v < lo ? lo : (v > hi ? hi : v);
}

sg_status fail_one(sg_report *rep, int cls, long long, long long row, double value) { return sg_trsv_report_fail(rep, cls, -1, row, value); }

template <class T, int K> sg_status launch_one(sg_ctx *ctx, const sg_trsv_problem *P, double pivtol, sg_report *rep)
{
  const int  n = (int)P->n, nblk = (n + NB1 - 1) / NB1;
  const int  CT = std::max(env_int("SG_TRSV_CT", 16, 1, 1 << 20), (nblk - 1 + MAXH) / (MAXH + 1));
  // control block: ticket, done, flags[nblk], cnt[nblk]; zeroed whenever (re)allocated
  const size_t ctl_bytes = (2 + 2 * (size_t)nblk) * sizeof(unsigned);
  void *old = ctx->work[SG_SLOT_TRSV_CTL];
  size_t oldb = ctx->work_bytes[SG_SLOT_TRSV_CTL];
  unsigned *ctl = (unsigned *)sg_ctx_work(ctx, ctl_bytes, SG_SLOT_TRSV_CTL);
  if (!ctl) return sg_report_set(rep, SG_ERR_MEM, -1, -1, 0.0, "cannot allocate %zu bytes of trsv control memory on the device", ctl_bytes);
  sg_status st;
  if (ctl != old || oldb != ctx->work_bytes[SG_SLOT_TRSV_CTL] || ++ctx->trsv_epoch == 0) {
    if ((st = sg_cuda_check(cudaMemsetAsync(ctl, 0, ctx->work_bytes[SG_SLOT_TRSV_CTL], sg_stream(ctx)), rep, "clearing trsv flags")) != SG_OK) return st;
    ctx->trsv_epoch = 1;
  }
  // job table: rebuilt and uploaded only when the shape (nblk, CT) changes
  const long long key = (long long)nblk * 4096 + CT;
  if (key != ctx->trsv_table_key) {
    std::vector<int> jobs;
    build_jobs(nblk, CT, jobs);
    // the pinned staging buffer may still feed an earlier upload: wait before reusing it
    if ((st = sg_cuda_check(cudaStreamSynchronize(sg_stream(ctx)), rep, "trsv job table")) != SG_OK) return st;
    int *djobs = (int *)sg_ctx_work(ctx, jobs.size() * sizeof(int), SG_SLOT_TRSV_TABLE);
    int *hjobs = (int *)sg_ctx_host_work(ctx, jobs.size() * sizeof(int), SG_SLOT_TRSV_TABLE);
    if (!djobs || !hjobs) return sg_report_set(rep, SG_ERR_MEM, -1, -1, 0.0, "cannot allocate the trsv job table (%zu jobs)", jobs.size());
    std::copy(jobs.begin(), jobs.end(), hjobs);
    if ((st = sg_cuda_check(cudaMemcpyAsync(djobs, hjobs, jobs.size() * sizeof(int), cudaMemcpyHostToDevice, sg_stream(ctx)), rep, "trsv job table")) != SG_OK) return st;
    ctx->trsv_table_key  = key;
    ctx->trsv_table_jobs = (long long)jobs.size();
  }
  const int *djobs = (const int *)ctx->work[SG_SLOT_TRSV_TABLE];
  T *part = nullptr;
  if (nblk > CT) {
    const size_t pb = (size_t)nblk * MAXH * K * NB1 * sizeof(T);
    if (!(part = (T *)sg_ctx_work(ctx, pb, SG_SLOT_TRSV_PART))) return sg_report_set(rep, SG_ERR_MEM, -1, -1, 0.0, "cannot allocate %zu bytes of trsv partial sums", pb);
  }
  OneArgs<T> a;
  a.V     = View<T>{(const T *)P->A, P->lda, n, (P->uplo == SG_UPPER) != (P->trans == SG_TRANS), P->trans == SG_TRANS};
  a.B     = (const T *)P->B;
  a.ldb   = P->nrhs > 1 ? P->ldb : P->n;
  a.X     = (T *)P->X;
  a.ldx   = P->nrhs > 1 ? P->ldx : P->n;
  a.nrhs  = (int)P->nrhs;
  a.CT    = CT;
  a.jobs  = djobs;
  a.ctl   = ctl;
  a.flags = ctl + 2;
  a.cnt   = ctl + 2 + nblk;
  a.part  = part;
  a.epoch = ctx->trsv_epoch;
  a.pivtol = (T)(pivtol > 0 ? pivtol : 0.0);
  a.unit  = P->diag == SG_UNIT;
  a.rep   = sg_dreport(ctx);
  const size_t smem = one_smem<T, K>();
  static bool attr = false;  // per instantiation
  if (!attr) {
    if ((st = sg_cuda_check(cudaFuncSetAttribute(trsv_one_kernel<T, K>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem), rep, "trsv shared memory")) != SG_OK) return st;
    attr = true;
  }
  if ((st = sg_dev_report_reset(ctx, rep)) != SG_OK) return st;
  trsv_one_kernel<T, K><<<(unsigned)ctx->trsv_table_jobs, NT1, smem, sg_stream(ctx)>>>(a);
  st = sg_dev_report_fetch(ctx, rep, fail_one);
  if (st == SG_ERR_DEVICE) {  // an aborted launch may leave counters behind: start clean next time
    ctx->trsv_table_key = -1;
    (void)cudaMemsetAsync(ctl, 0, ctl_bytes, sg_stream(ctx));
  }
  return st;
}

template <class T> sg_status dispatch_one(sg_ctx *ctx, const sg_trsv_problem *P, double pivtol, sg_report *rep)
{
  const long long k = P->nrhs;
  if (k <= 1) return launch_one<T, 1>(ctx, P, pivtol, rep);
  if (k <= 2) return launch_one<T, 2>(ctx, P, pivtol, rep);
  if (k <= 4) return launch_one<T, 4>(ctx, P, pivtol, rep);
  if (k <= 8) return launch_one<T, 8>(ctx, P, pivtol, rep);
  return launch_one<T, 16>(ctx, P, pivtol, rep);
}

} // namespace

extern "C" sg_status sg_trsv_cuda(sg_ctx *ctx, const sg_trsv_problem *P, double pivtol, sg_report *rep)
{
  sg_status st = sg_trsv_begin(ctx, SG_BACKEND_CUDA, P, rep);
  if (st != SG_OK) return st;
  return P->prec == SG_REAL64 ? dispatch_one<double>(ctx, P, pivtol, rep) : dispatch_one<float>(ctx, P, pivtol, rep);
}

