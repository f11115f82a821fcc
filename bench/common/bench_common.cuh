// bench_common.cuh: helpers shared by bench/tri/bench_tri.cu and bench/trsv/bench_trsv.cu
// (error handling, a self-freeing device buffer, formatting, JSON strings, the run's date).
// Each benchmark is a single translation unit; everything here is inline.
#pragma once

#include "structgpu/tri_kernels.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <ctime>
#include <string>
#include <sys/stat.h>
#include <vector>

namespace sg_bench {

inline cudaStream_t g_stream = nullptr;
inline unsigned long long *g_scr = nullptr;  // check kernels' output: max error, max scale, #nonfinite
inline bool g_dead = false;
inline std::string g_date, g_out;

inline std::string fmt(const char *f, ...)
{
  char buf[1024];
  va_list ap;
  va_start(ap, f);
  vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}
inline const char *status_name(sg_status st)
{
  const char *s = sg_status_string(st);
  return s ? s : "?";
}

// ============================================================== error handling
// After any CUDA error: clear it if it is not sticky, then probe the device. A sticky error
// (illegal address, launch failure) leaves the context unusable: g_dead ends the run
// gracefully (summary and JSON are still written).
inline void probe_device()
{
  cudaGetLastError();
  if (!g_scr || cudaMemsetAsync(g_scr, 0, 8, g_stream) != cudaSuccess || cudaStreamSynchronize(g_stream) != cudaSuccess) {
    if (!g_dead) printf("!! the CUDA context is no longer usable: stopping the benchmark here\n");
    g_dead = true;
  }
}
inline bool cuda_ok(cudaError_t e, const char *what)
{
  if (e == cudaSuccess) return true;
  printf("  CUDA error in %s: %s\n", what, cudaGetErrorString(e));
  probe_device();
  return false;
}
#define CK(x) sg_bench::cuda_ok((x), #x)

// Device buffer that frees itself; alloc() reports failure instead of throwing.
struct DBuf {
  void *p = nullptr;
  size_t bytes = 0;
  DBuf() = default;
  DBuf(const DBuf &) = delete;
  DBuf &operator=(const DBuf &) = delete;
  ~DBuf() { reset(); }
  void reset()
  {
    if (p) cudaFree(p);
    p = nullptr, bytes = 0;
  }
  bool alloc(size_t b, const char *what)
  {
    reset();
    cudaError_t e = cudaMalloc(&p, std::max<size_t>(b, 16));
    if (e != cudaSuccess) {
      p = nullptr;
      cudaGetLastError();
      printf("  cannot allocate %.1f MB of device memory for %s: %s\n", b / 1e6, what, cudaGetErrorString(e));
      return false;
    }
    bytes = b;
    return true;
  }
  template <class T> T *as() const { return (T *)p; }
};

inline double median(std::vector<double> v)
{
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// ============================================================== JSON and files
inline std::string jstr(const std::string &s)
{
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\', o += c;
    else if ((unsigned char)c < 0x20) o += fmt("\\u%04x", c);
    else o += c;
  }
  return o + "\"";
}
inline std::string jnum(double v) { return std::isfinite(v) ? fmt("%.6g", v) : "null"; }
inline void mkdir_p(const std::string &path)
{
  for (size_t i = 1; i <= path.size(); i++)
    if (i == path.size() || path[i] == '/') mkdir(path.substr(0, i).c_str(), 0775);
}

// ============================================================== device and date
// Device 0's properties; false (with a message) when there is no CUDA device.
inline bool device_props(cudaDeviceProp &p)
{
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1) {
    printf("no CUDA device: %s\n", cudaGetErrorString(cudaGetLastError()));
    return false;
  }
  return CK(cudaGetDeviceProperties(&p, 0));
}
// The current UTC time, "YYYY-MM-DDTHH:MM:SSZ".
inline std::string utc_now()
{
  time_t now = time(nullptr);
  struct tm tu;
  gmtime_r(&now, &tu);
  char d[32];
  strftime(d, sizeof d, "%Y-%m-%dT%H:%M:%SZ", &tu);
  return d;
}

}  // namespace sg_bench
