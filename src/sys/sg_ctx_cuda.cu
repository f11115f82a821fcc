// Execution context, CUDA part: device workspaces (stream-ordered where the device has
// memory pools), pinned host workspaces, the device breakdown record and error helpers.
#include "sys/sg_cuda.cuh"
#include <atomic>
#include <mutex>

extern "C" int sg_cuda_available(void)
{
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) { (void)cudaGetLastError(); return 0; }
  return n > 0;
}

static bool sg_cuda_pools()
{
  int dev = 0, pools = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, dev) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return pools != 0;
}

void *sg_cuda_dev_alloc(sg_ctx *ctx, size_t bytes)
{
  void *p = nullptr;
  cudaError_t e = sg_cuda_pools() ? cudaMallocAsync(&p, bytes, sg_stream(ctx)) : cudaMalloc(&p, bytes);
  if (e != cudaSuccess) { (void)cudaGetLastError(); return nullptr; }
  return p;
}

void sg_cuda_dev_free(sg_ctx *ctx, void *p)
{
  if (!p) return;
  if (sg_cuda_pools()) (void)cudaFreeAsync(p, sg_stream(ctx));
  else (void)cudaFree(p);
}

void *sg_cuda_pinned_alloc(size_t bytes)
{
  void *p = nullptr;
  if (cudaMallocHost(&p, bytes) != cudaSuccess) { (void)cudaGetLastError(); return nullptr; }
  return p;
}

void sg_cuda_pinned_free(void *p)
{
  if (p) (void)cudaFreeHost(p);
}

static std::atomic<int> g_l2_fetch{-1};  // bytes, as last read or set here (-1: not read yet)
int sg_cuda_l2_fetch(void)
{
  int v = g_l2_fetch.load();
  if (v < 0) {
    size_t b = 64;
    if (cudaDeviceGetLimit(&b, cudaLimitMaxL2FetchGranularity) != cudaSuccess) { (void)cudaGetLastError(); b = 64; }
    g_l2_fetch = v = (int)b;
  }
  return v;
}
static sg_status sg_l2_fetch_set(int bytes, int *prev)
{
  size_t old = 0;
  if (cudaDeviceGetLimit(&old, cudaLimitMaxL2FetchGranularity) != cudaSuccess) { (void)cudaGetLastError(); return SG_ERR_DEVICE; }
  if (prev) *prev = (int)old;
  if ((size_t)bytes != old && cudaDeviceSetLimit(cudaLimitMaxL2FetchGranularity, (size_t)bytes) != cudaSuccess) {
    (void)cudaGetLastError();
    return SG_ERR_DEVICE;
  }
  size_t now = (size_t)bytes;
  if (cudaDeviceGetLimit(&now, cudaLimitMaxL2FetchGranularity) != cudaSuccess) { (void)cudaGetLastError(); now = (size_t)bytes; }
  g_l2_fetch = (int)now;
  return SG_OK;
}
extern "C" sg_status sg_ctx_set_l2_fetch(sg_ctx *ctx, int bytes, int *prev)
{
  if (prev) *prev = 0;
  if (!ctx || bytes < 0 || bytes > 128) return SG_ERR_ARG;
  if (ctx->backend != SG_BACKEND_CUDA) return SG_OK;
  return sg_l2_fetch_set(bytes, prev);
}

sg_status sg_ctx_cuda_init(sg_ctx *ctx)
{
  if (!sg_cuda_available()) return SG_ERR_DEVICE;
  static std::once_flag l2_env;  // SG_L2_FETCH=<bytes>: the user's opt-in (sg_ctx_set_l2_fetch), once per process
  std::call_once(l2_env, [] {
    const char *e = getenv("SG_L2_FETCH");
    char       *end = nullptr;
    const long  v   = e && *e ? strtol(e, &end, 10) : -1;
    if (e && *e && (*end || v < 0 || v > 128)) fprintf(stderr, "StructGPU: SG_L2_FETCH=%s ignored (bytes, 0..128)\n", e);
    else if (v >= 0 && sg_l2_fetch_set((int)v, nullptr) != SG_OK) fprintf(stderr, "StructGPU: SG_L2_FETCH=%ld: the device refused the limit\n", v);
  });
  if (cudaMalloc(&ctx->dreport, sizeof(sg_dev_report)) != cudaSuccess) {
    (void)cudaGetLastError();
    ctx->dreport = nullptr;
    return SG_ERR_MEM;
  }
  if (cudaMemset(ctx->dreport, 0xff, sizeof(sg_dev_report)) != cudaSuccess) {
    (void)cudaGetLastError();
    (void)cudaFree(ctx->dreport);
    ctx->dreport = nullptr;
    return SG_ERR_DEVICE;
  }
  return SG_OK;
}

void sg_ctx_cuda_fini(sg_ctx *ctx)
{
  if (ctx->stream) (void)cudaStreamSynchronize(sg_stream(ctx));  // stream-ordered frees done before
  else (void)cudaDeviceSynchronize();
  if (ctx->dreport) (void)cudaFree(ctx->dreport);
  ctx->dreport = nullptr;
}

sg_status sg_cuda_check(cudaError_t e, sg_report *rep, const char *what)
{
  if (e == cudaSuccess) return SG_OK;
  (void)cudaGetLastError();
  return sg_report_set(rep, SG_ERR_DEVICE, -1, -1, 0.0, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

sg_status sg_cuda_check_ptr(const void *p, const char *name, sg_report *rep)
{
  cudaPointerAttributes a;
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "%s is not a device pointer (CUDA cannot identify it)", name);
  }
  if (a.type == cudaMemoryTypeUnregistered)
    return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "%s points to ordinary host memory; the CUDA path needs device memory", name);
  return SG_OK;
}

sg_status sg_dev_report_reset(sg_ctx *ctx, sg_report *rep)
{
  if (ctx->deferred) return SG_OK;  // the record is cleared by sg_ctx_check only
  return sg_cuda_check(cudaMemsetAsync(ctx->dreport, 0xff, sizeof(sg_dev_report), sg_stream(ctx)), rep, "resetting the device report");
}

sg_status sg_dev_report_fetch(sg_ctx *ctx, sg_report *rep, sg_fail_fn fail)
{
  sg_status st = sg_cuda_check(cudaGetLastError(), rep, "kernel launch");
  if (st != SG_OK || ctx->deferred) {
    if (ctx->deferred && !ctx->pending_fail) ctx->pending_fail = (void *)fail;
    return st;
  }
  // pinned host slot 3 (reserved for this record): a direct DMA, no pageable staging copy
  sg_dev_report *hp = (sg_dev_report *)sg_ctx_host_work(ctx, sizeof(sg_dev_report), 3);
  if (!hp) return sg_report_set(rep, SG_ERR_MEM, -1, -1, 0.0, "cannot allocate the pinned report buffer");
  st = sg_cuda_check(cudaMemcpyAsync(hp, ctx->dreport, sizeof *hp, cudaMemcpyDeviceToHost, sg_stream(ctx)), rep, "reading the device report");
  if (st == SG_OK) st = sg_cuda_check(cudaStreamSynchronize(sg_stream(ctx)), rep, "kernel execution");
  const sg_dev_report h = *hp;
  if (st != SG_OK || h.key == ~0ull) return st;
  return fail(rep, sg_fail_key_class(h.key), sg_fail_key_system(h.key), sg_fail_key_row(h.key), h.value);
}

namespace {
struct sg_dev_props { int sms = 0, smem = 0, mem_khz = 0, bus_bits = 0; };
sg_dev_props sg_props()
{
  static std::mutex   mtx;
  static sg_dev_props cache[64];
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= 64) { (void)cudaGetLastError(); return sg_dev_props{}; }
  std::lock_guard<std::mutex> lock(mtx);
  if (!cache[dev].sms) {
    cudaDeviceGetAttribute(&cache[dev].sms, cudaDevAttrMultiProcessorCount, dev);
    cudaDeviceGetAttribute(&cache[dev].smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
    cudaDeviceGetAttribute(&cache[dev].mem_khz, cudaDevAttrMemoryClockRate, dev);
    cudaDeviceGetAttribute(&cache[dev].bus_bits, cudaDevAttrGlobalMemoryBusWidth, dev);
    (void)cudaGetLastError();
  }
  return cache[dev];
}
} // namespace

int sg_cuda_num_sms(void) { int n = sg_props().sms; return n > 0 ? n : 1; }
int sg_cuda_smem_optin(void) { int n = sg_props().smem; return n > 0 ? n : 48 * 1024; }
double sg_cuda_hbm_peak(void)
{
  const sg_dev_props p = sg_props();
  return p.mem_khz > 0 && p.bus_bits > 0 ? 2.0 * p.mem_khz * 1e-3 * p.bus_bits / 8 : 3.35e6;  // double data rate
}

extern "C" sg_status sg_ctx_set_deferred(sg_ctx *ctx, int on)
{
  if (!ctx) return SG_ERR_ARG;
  if (ctx->backend != SG_BACKEND_CUDA) return SG_OK;
  if (!on && ctx->deferred) {  // leaving deferred mode: nothing recorded may be lost
    ctx->deferred = 0;
    return sg_ctx_check(ctx, nullptr);
  }
  ctx->deferred = on != 0;
  return SG_OK;
}

extern "C" sg_status sg_ctx_check(sg_ctx *ctx, sg_report *rep)
{
  sg_report local;
  if (!rep) rep = &local;
  sg_report_clear(rep, SG_TRI_AUTO);
  if (!ctx) return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "sg_ctx_check: NULL context");
  if (ctx->backend != SG_BACKEND_CUDA) return SG_OK;
  const int deferred = ctx->deferred;
  sg_fail_fn fail    = ctx->pending_fail ? (sg_fail_fn)ctx->pending_fail : sg_report_fail;
  ctx->deferred      = 0;
  ctx->pending_fail  = nullptr;
  sg_status st       = sg_dev_report_fetch(ctx, rep, fail);
  sg_status st2      = sg_dev_report_reset(ctx, st == SG_OK ? rep : nullptr);  // clear for the next batch
  ctx->deferred      = deferred;
  return st != SG_OK ? st : st2;
}

// cuTensorMapEncodeTiled from the driver (through the runtime: no link to libcuda), or NULL
PFN_cuTensorMapEncodeTiled_v12000 sg_tensor_map_encoder()
{
  static PFN_cuTensorMapEncodeTiled_v12000 fn    = nullptr;
  static bool                              tried = false;
  if (!tried) {
    tried = true;
    void                            *p = nullptr;
    cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q) == cudaSuccess && q == cudaDriverEntryPointSuccess)
      fn = (PFN_cuTensorMapEncodeTiled_v12000)p;
    else (void)cudaGetLastError();
  }
  return fn;
}
