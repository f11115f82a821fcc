// Shared fixtures of the dense triangular / LU kernel tests (test_trsv.cpp, test_lu.cpp; one
// translation unit each), on top of tri_test_util.hpp (CHECK, contexts, --quick/--cuda,
// dev_copy/host_copy): random well-conditioned triangular matrices with the unused triangle
// (and, for a unit diagonal, the diagonal) filled with NaN, an independent long double
// substitution reference, error measures and RAII device buffers.
#pragma once
#include "tri_test_util.hpp"
#include "structgpu/trsv_kernels.h"

// Tolerances (relative max-norm error per column, ||x - x_ref||_max / ||x_ref||_max):
//   trsv vs the long double reference:  1e-12 (double), 1e-4 (float)   [cond(A) <= ~3]
//   GPU vs host twin:                   1e-12 (double), 1e-5 (float)   [rounding order only]
template <class T> static double trsv_tol_ref() { return sizeof(T) == 8 ? 1e-12 : 1e-4; }
template <class T> static double trsv_tol_dev() { return sizeof(T) == 8 ? 1e-12 : 1e-5; }

inline const char *op_name(sg_uplo u, sg_trans t, sg_diag d)
{
  static char s[8];
  snprintf(s, sizeof s, "%c%c%c", u == SG_LOWER ? 'L' : 'U', t == SG_NOTRANS ? 'N' : 'T', d == SG_UNIT ? 'U' : 'N');
  return s;
}

// n x n triangle `uplo` of a (leading dimension lda): off-diagonal entries uniform(-1,1)/n,
// diagonal +-(1 + uniform(0,1)) (strictly diagonally dominant by rows and columns, so
// cond(A) <= ~3 for op(A) = A and A^T); everything else (the other triangle, the rows
// n..lda-1 and, for a unit diagonal, the diagonal) NaN: it must not be read. One draw of rng
// seeds a splitmix64 stream for the entries (a uniform_real_distribution call on rng per entry
// was ~23 % of the host test's time, perf; the GPU variants fill orders up to 9001, 40 M entries).
template <class T> static void fill_tri(T *a, long long n, long long lda, sg_uplo uplo, sg_diag diag, std::mt19937_64 &rng)
{
  unsigned long long st = rng();
  auto U = [&st]() {  // uniform in [-1, 1)
    unsigned long long z = (st += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1p-52 - 1.0;
  };
  for (long long j = 0; j < n; j++)
    for (long long i = 0; i < lda; i++) {
      T v = (T)NAN;
      if (i < n && (uplo == SG_LOWER ? i > j : i < j)) v = (T)(U() / (double)n);
      else if (i == j && diag == SG_NONUNIT) {
        const double u = U();
        v = (T)(u < 0 ? -(1 - u) : 1 + u);
      }
      a[i + j * lda] = v;
    }
}

// x = op(A)^-1 b in long double by substitution (column- or dot-oriented so that A is read
// by columns), on the T-valued entries; only the triangle (and the diagonal if non-unit).
template <class T>
static void ref_solve(const T *a, long long n, long long lda, sg_uplo uplo, sg_trans tr, sg_diag dg, const T *b, long double *x)
{
  for (long long i = 0; i < n; i++) x[i] = (long double)b[i];
  auto A = [&](long long i, long long j) { return (long double)a[i + j * lda]; };
  const bool fwd = (uplo == SG_LOWER) == (tr == SG_NOTRANS);  // forward substitution
  for (long long s = 0; s < n; s++) {
    const long long k = fwd ? s : n - 1 - s;
    if (tr == SG_NOTRANS) {  // x_k done: eliminate it from the rest of column k
      if (dg == SG_NONUNIT) x[k] /= A(k, k);
      if (uplo == SG_LOWER) for (long long i = k + 1; i < n; i++) x[i] -= A(i, k) * x[k];
      else for (long long i = 0; i < k; i++) x[i] -= A(i, k) * x[k];
    } else {  // x_k = (b_k - column k of A (off-diagonal part) . x) / A_kk
      long double sum = 0;
      if (uplo == SG_LOWER) for (long long i = k + 1; i < n; i++) sum += A(i, k) * x[i];
      else for (long long i = 0; i < k; i++) sum += A(i, k) * x[i];
      x[k] -= sum;
      if (dg == SG_NONUNIT) x[k] /= A(k, k);
    }
  }
}

// max over the nrhs columns of ||x - y||_max / ||y||_max (NaN counts as failure); y has ldy
template <class X, class Y> static double col_err(long long n, long long nrhs, const X *x, long long ldx, const Y *y, long long ldy)
{
  double worst = 0;
  for (long long c = 0; c < nrhs; c++) {
    double e = 0, nrm = 0;
    for (long long i = 0; i < n; i++) {
      const double yi = (double)y[i + c * ldy], d = std::fabs((double)x[i + c * ldx] - yi);
      e   = (d > e || d != d) ? d : e;
      nrm = std::fabs(yi) > nrm ? std::fabs(yi) : nrm;
    }
    const double r = nrm > 0 ? e / nrm : e;
    worst = (r > worst || r != r) ? r : worst;
  }
  return worst;
}

// bitwise equality (NaN-safe) of two arrays
template <class T> static bool same_bits(const std::vector<T> &a, const std::vector<T> &b)
{
  return a.size() == b.size() && (a.empty() || !memcmp(a.data(), b.data(), a.size() * sizeof(T)));
}

#ifdef SG_HAVE_CUDA
// device copy of a host vector, freed on scope exit
template <class T> struct Dev {
  T     *p = nullptr;
  size_t n = 0;
  explicit Dev(const std::vector<T> &h) : p(dev_copy(h.data(), h.size())), n(h.size()) {}
  Dev(const Dev &)            = delete;
  Dev &operator=(const Dev &) = delete;
  ~Dev() { cudaFree(p); }
  std::vector<T> get() const { return host_copy(p, n); }
};
#endif
