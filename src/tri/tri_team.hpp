// Batched tridiagonal algorithms written once for the host twin and the CUDA kernels.
//
// A "Team" executes the algorithm for one system:
//   par(n, f)   calls f(i) for every i in [0, n)  (host: a loop; device: strided over the
//               team's threads),
//   sync()      barrier between steps           (host: nothing; device: __syncthreads()),
//   fail(cls, row, value)  records a breakdown (sg_fail_class) for this system.
// Every step is written so that the f(i) of one par() never read what another f(j) of
// the same par() writes (in-place where the index sets are disjoint, ping-pong buffers
// otherwise); hence the sequential host loop computes exactly what the threads compute.
//
// Workspace of one system, n = padded size (power of two >= m), values of type T:
//   w[0:n) a (sub-diagonal), w[n:2n) b (diagonal), w[2n:3n) c (super-diagonal),
//   w[3n:4n) d (right-hand side, holds x on return), then algorithm scratch
//   (tri_team_words gives the total). Rows i >= m are identity equations (b=1, a=c=d=0)
//   and a[0] = c[m-1] = 0, so the padded system decouples and returns x = 0 there.
#pragma once
#include "sys/sg_ctx.hpp"

constexpr int SG_TRI_INTER_DEFAULT = 64;  // hybrid CR+PCR / CR+RD: size of the intermediate system

// ---------------------------------------------------------------- teams
struct sg_host_team {
  unsigned long long key = ~0ull;  // minimum sg_fail_key(cls, 0, row) seen
  double             value = 0.0;
  template <class F> void par(int n, F &&f) { for (int i = 0; i < n; i++) f(i); }
  void sync() {}
  void fail(int cls, long long row, double v)
  {
    const unsigned long long k = sg_fail_key(cls, 0, row);
    if (k < key) { key = k; value = v; }
  }
  bool failed() const { return key != ~0ull; }
  int  fail_class() const { return sg_fail_key_class(key); }
  long long fail_row() const { return sg_fail_key_row(key); }
};

// ---------------------------------------------------------------- helpers
inline int sg_next_pow2(long long m)
{
  int n = 1;
  while (n < m) n *= 2;
  return n;
}

inline int sg_prev_pow2(long long m)  // the largest power of two <= m (1 for m < 2)
{
  int n = 1;
  while (2LL * n <= m) n *= 2;
  return n;
}

template <class T> SG_HD bool tri_finite(T v) { return v - v == (T)0; }  // false for Inf and NaN

// 1/b for the equation (a, b, c) of row `row`, flagging a breakdown (sg_bad_pivot).
template <class Team, class T> SG_HD T tri_inv(Team &t, T a, T b, T c, T tol, long long row)
{
  if (sg_bad_pivot(a, b, c, tol)) t.fail(tri_finite(b) ? SG_FAIL_PIVOT : SG_FAIL_PIVOT_NONFINITE, row, (double)b);
  return (T)1 / b;
}


// Row i (< n) of the workspace w from the input arrays at element offset `off` (rows < m);
// identity for padding rows; dl of row 0 and du of row m-1 are ignored (set to 0).
template <class Team, class T>
SG_HD void tri_put_row(Team &t, T *w, int n, int i, long long m, const T *dl, const T *d, const T *du, const T *b, long long off)
{
  T a = 0, bb = 1, c = 0, r = 0;
  if (i < m) {
    a  = i > 0 ? dl[off] : (T)0;
    bb = d[off];
    c  = i < m - 1 ? du[off] : (T)0;
    r  = b[off];
    if (!(tri_finite(a) && tri_finite(bb) && tri_finite(c) && tri_finite(r)))
      t.fail(SG_FAIL_INPUT, i, (double)(!tri_finite(a) ? a : !tri_finite(bb) ? bb : !tri_finite(c) ? c : r));
  }
  w[i] = a; w[n + i] = bb; w[2 * n + i] = c; w[3 * n + i] = r;
}

// ---------------------------------------------------------------- CR
// Forward reduction on (a,b,c,d) of size n, level by level, while more than `nstop`
// equations remain. After the level of stride s the remaining equations are
// i = 2s*k + 2s-1; each eliminates its neighbours i-s and i+s (equations of the previous
// level, disjoint from the written ones: in-place safe). Returns the final spacing S:
// n/S equations at i = S*k + S-1 remain, coupled at distance S.
template <class Team, class T>
SG_HD int tri_cr_forward(Team &t, T *a, T *b, T *c, T *d, int n, int nstop, T tol)
{
  int s = 1;
  while (n / s > nstop) {
    const int s2 = 2 * s;
    t.par(n / s2, [&](int k) {
      const int i = s2 * k + s2 - 1, il = i - s, ir = i + s;
      const T k1 = a[i] * tri_inv(t, a[il], b[il], c[il], tol, il);
      T na = -a[il] * k1, nb = b[i] - c[il] * k1, nc = 0, nd = d[i] - d[il] * k1;
      if (ir < n) {
        const T k2 = c[i] * tri_inv(t, a[ir], b[ir], c[ir], tol, ir);
        nb -= a[ir] * k2;
        nc = -c[ir] * k2;
        nd -= d[ir] * k2;
      }
      a[i] = na; b[i] = nb; c[i] = nc; d[i] = nd;
    });
    t.sync();
    s = s2;
  }
  return s;
}

// Backward substitution: the equations at spacing S are solved (x in d); solve the
// levels S/2, ..., 1 (equations i = s*k + s/2 - 1 read x at i -+ s/2, solved earlier).
template <class Team, class T>
SG_HD void tri_cr_backward(Team &t, const T *a, const T *b, const T *c, T *d, int n, int S, T tol)
{
  for (int s = S; s > 1; s /= 2) {
    const int h = s / 2;
    t.par(n / s, [&](int k) {
      const int i = s * k + h - 1;
      T v = d[i] - c[i] * d[i + h];
      if (i >= h) v -= a[i] * d[i - h];
      d[i] = v * tri_inv(t, a[i], b[i], c[i], tol, i);
    });
    t.sync();
  }
}

// ---------------------------------------------------------------- PCR
// Parallel cyclic reduction of the n-equation system in buffer p (4n: a,b,c,d), using
// the scratch buffer q (4n) for ping-pong. Writes x_i to x[xs*i]; rows are reported as
// r0 + rs*i. x may be p's d (each thread reads and writes only its own i in the last step).
template <class Team, class T>
SG_HD void tri_pcr(Team &t, T *p, T *q, int n, T *x, int xs, long long r0, long long rs, T tol)
{
  for (int s = 1; s < n; s *= 2) {
    const T *a = p, *b = p + n, *c = p + 2 * n, *d = p + 3 * n;
    T *na = q, *nb = q + n, *nc = q + 2 * n, *nd = q + 3 * n;
    t.par(n, [&](int i) {
      T ai = 0, bi = b[i], ci = 0, di = d[i];
      if (i - s >= 0) {
        const int l = i - s;
        const T k1 = a[i] * tri_inv(t, a[l], b[l], c[l], tol, r0 + rs * l);
        ai = -a[l] * k1; bi -= c[l] * k1; di -= d[l] * k1;
      }
      if (i + s < n) {
        const int r = i + s;
        const T k2 = c[i] * tri_inv(t, a[r], b[r], c[r], tol, r0 + rs * r);
        ci = -c[r] * k2; bi -= a[r] * k2; di -= d[r] * k2;
      }
      na[i] = ai; nb[i] = bi; nc[i] = ci; nd[i] = di;
    });
    t.sync();
    T *tmp = p; p = q; q = tmp;
  }
  t.par(n, [&](int i) { x[xs * i] = p[3 * n + i] * tri_inv(t, p[i], p[n + i], p[2 * n + i], tol, r0 + rs * i); });
  t.sync();
}

// ---------------------------------------------------------------- RD
// Recursive doubling (Stone) in a numerically sane form. The naive RD scans products of
// 3x3 matrices whose entries grow like the LU pivots' product and overflow for m > ~500
// (float) - here instead:
//  1. LU pivots u_i = b_i - a_i c_{i-1} / u_{i-1}: with u_i = p_i/q_i,
//     (p_i, q_i)^T = M_i (p_{i-1}, q_{i-1})^T, M_i = [[b_i, -a_i c_{i-1}], [1, 0]],
//     (p_{-1}, q_{-1}) = (1, 0). A Hillis-Steele scan forms P_i = M_i ... M_0 in log2(n)
//     steps; each partial product is NORMALISED by a power of two near its largest entry
//     (exact, and u_i = P_i[0][0]/P_i[1][0] is scale invariant), so it neither overflows
//     nor underflows.
//  2. Forward substitution y_i = d_i - (a_i/u_{i-1}) y_{i-1} and backward substitution
//     x_i = (y_i - c_i x_{i+1}) / u_i are affine recurrences; each is a scan of affine
//     maps (alpha, beta) composed in log2(n) steps.
// Input: buffer p (4n: a,b,c,d), scratch q (8n). Output x_i to x[xs*i] (may be p's d).
// Stability: the substitution scans compose the maps y -> -(a_i/u_{i-1}) y + ..., whose
// products stay bounded when every row is diagonally dominant and grow otherwise. Measured on
// the host (random systems, d = shift + U(-1, 1), dl, du = U(-1, 1), m = 1000): with shift 0 /
// 1.5 float RD returned forward errors of 1.5 / 0.10 where Thomas, CR, PCR and TPCR had 1e-2 /
// 3e-3 (the conditioning) and reported nothing. So with DOM (RD on the whole system) a row
// that is not diagonally dominant, |b| < (|a| + |c|)(1 - ~100 eps), is reported
// (SG_FAIL_NOT_DOMINANT: SG_ERR_UNSUPPORTED naming the row) instead of returning such an x. The
// hybrid CR+RD runs RD on the small system CR leaves, which stayed accurate there: no check.
template <class T> SG_HD void tri_rd_normalise(T &m00, T &m01, T &m10, T &m11)
{
  T mx = fabs(m00);
  if (fabs(m01) > mx) mx = fabs(m01);
  if (fabs(m10) > mx) mx = fabs(m10);
  if (fabs(m11) > mx) mx = fabs(m11);
  if (mx > (T)0 && mx < (T)INFINITY) {
    const int e = ilogb(mx);
    m00 = scalbn(m00, -e); m01 = scalbn(m01, -e); m10 = scalbn(m10, -e); m11 = scalbn(m11, -e);
  }
}

template <bool DOM, class Team, class T>
SG_HD void tri_rd(Team &t, T *p, T *q, int n, T *x, int xs, long long r0, long long rs, T tol)
{
  T *a = p, *b = p + n, *c = p + 2 * n, *d = p + 3 * n;
  // 1. pivots: scan of 2x2 matrices in q[0:4n) <-> q[4n:8n)
  T *P = q, *Q = q + 4 * n;
  t.par(n, [&](int i) {
    if (DOM && fabs(b[i]) < (T)(sizeof(T) == 8 ? 1 - 2e-14 : 1 - 1e-5) * (fabs(a[i]) + fabs(c[i])))  // (NaN: not flagged here)
      t.fail(SG_FAIL_NOT_DOMINANT, r0 + rs * i, (double)b[i]);
    P[i] = b[i]; P[n + i] = i > 0 ? -a[i] * c[i - 1] : (T)0; P[2 * n + i] = 1; P[3 * n + i] = 0;
  });
  t.sync();
  for (int s = 1; s < n; s *= 2) {
    t.par(n, [&](int i) {
      T m00 = P[i], m01 = P[n + i], m10 = P[2 * n + i], m11 = P[3 * n + i];
      if (i >= s) {  // (M_i..M_{i-s+1}) * (M_{i-s}..)
        const int j = i - s;
        const T l00 = P[j], l01 = P[n + j], l10 = P[2 * n + j], l11 = P[3 * n + j];
        const T r00 = m00 * l00 + m01 * l10, r01 = m00 * l01 + m01 * l11;
        const T r10 = m10 * l00 + m11 * l10, r11 = m10 * l01 + m11 * l11;
        m00 = r00; m01 = r01; m10 = r10; m11 = r11;
        tri_rd_normalise(m00, m01, m10, m11);
      }
      Q[i] = m00; Q[n + i] = m01; Q[2 * n + i] = m10; Q[3 * n + i] = m11;
    });
    t.sync();
    T *tmp = P; P = Q; Q = tmp;
  }
  // b <- 1/u_i (P holds the prefix products)
  t.par(n, [&](int i) { b[i] = tri_inv(t, a[i], P[i] / P[2 * n + i], c[i], tol, r0 + rs * i); });
  t.sync();
  // 2. forward substitution: y_i = alpha_i y_{i-1} + beta_i, alpha_i = -a_i/u_{i-1}
  T *A = q, *Bt = q + 2 * n;  // (alpha, beta) pairs: A[0:n) alpha, A[n:2n) beta
  t.par(n, [&](int i) { A[i] = i > 0 ? -a[i] * b[i - 1] : (T)0; A[n + i] = d[i]; });
  t.sync();
  for (int s = 1; s < n; s *= 2) {
    t.par(n, [&](int i) {
      T al = A[i], be = A[n + i];
      if (i >= s) { be += al * A[n + i - s]; al *= A[i - s]; }
      Bt[i] = al; Bt[n + i] = be;
    });
    t.sync();
    T *tmp = A; A = Bt; Bt = tmp;
  }
  // backward substitution: x_i = alpha_i x_{i+1} + beta_i, alpha_i = -c_i/u_i, beta_i = y_i/u_i
  t.par(n, [&](int i) { Bt[i] = -c[i] * b[i]; Bt[n + i] = A[n + i] * b[i]; });
  t.sync();
  { T *tmp = A; A = Bt; Bt = tmp; }
  for (int s = 1; s < n; s *= 2) {
    t.par(n, [&](int i) {
      T al = A[i], be = A[n + i];
      if (i + s < n) { be += al * A[n + i + s]; al *= A[i + s]; }
      Bt[i] = al; Bt[n + i] = be;
    });
    t.sync();
    T *tmp = A; A = Bt; Bt = tmp;
  }
  t.par(n, [&](int i) { x[xs * i] = A[n + i]; });
  t.sync();
}

// ---------------------------------------------------------------- drivers
// Size of the intermediate system of the hybrids (a power of two <= inter, <= n).
SG_HD int tri_inter_size(int n, int inter)
{
  int ni = 1;
  while (2 * ni <= inter && 2 * ni <= n) ni *= 2;
  return ni;
}

// Workspace words (values of T) per system for algorithm alg on the padded size n.
SG_HD long long tri_team_words(sg_tri_alg alg, int n, int inter)
{
  const long long N = n, ni = tri_inter_size(n, inter);
  switch (alg) {
  case SG_TRI_CR: return 4 * N;
  case SG_TRI_PCR: return 8 * N;
  case SG_TRI_RD: return 12 * N;
  case SG_TRI_CR_PCR: return 4 * N + 8 * ni;
  case SG_TRI_CR_RD: return 4 * N + 12 * ni;
  default: return 0;
  }
}

// Solve the system in workspace w (see the file comment) with algorithm ALG (CR, PCR, RD,
// CR_PCR or CR_RD); x is left in w[3n:4n). The hybrids reduce with CR until at most
// `inter` equations remain, copy that intermediate system (spacing S) into the scratch,
// solve it with PCR or RD, writing x back at the rows S*k + S-1, and substitute back.
template <sg_tri_alg ALG, class Team, class T>
SG_HD void tri_team_solve(Team &t, T *w, int n, int inter, T tol)
{
  T *a = w, *b = w + n, *c = w + 2 * n, *d = w + 3 * n, *scr = w + 4 * n;
  if (ALG == SG_TRI_PCR) { tri_pcr(t, w, scr, n, d, 1, 0, 1, tol); return; }
  if (ALG == SG_TRI_RD) { tri_rd<true>(t, w, scr, n, d, 1, 0, 1, tol); return; }
  const int ni = ALG == SG_TRI_CR ? 1 : tri_inter_size(n, inter);
  const int S  = tri_cr_forward(t, a, b, c, d, n, ni, tol);
  const int nn = n / S;  // == ni
  if (ALG == SG_TRI_CR) {
    t.par(1, [&](int) { d[n - 1] *= tri_inv(t, a[n - 1], b[n - 1], c[n - 1], tol, n - 1); });
    t.sync();
  } else {
    t.par(nn, [&](int k) {
      const int i = S * k + S - 1;
      scr[k] = a[i]; scr[nn + k] = b[i]; scr[2 * nn + k] = c[i]; scr[3 * nn + k] = d[i];
    });
    t.sync();
    if (ALG == SG_TRI_CR_PCR) tri_pcr(t, scr, scr + 4 * nn, nn, d + S - 1, S, S - 1, S, tol);
    else tri_rd<false>(t, scr, scr + 4 * nn, nn, d + S - 1, S, S - 1, S, tol);
  }
  tri_cr_backward(t, a, b, c, d, n, S, tol);
}

// Runtime dispatch of tri_team_solve (host twin; the kernels instantiate per algorithm).
template <class Team, class T>
SG_HD void tri_team_solve_alg(Team &t, sg_tri_alg alg, T *w, int n, int inter, T tol)
{
  switch (alg) {
  case SG_TRI_CR: tri_team_solve<SG_TRI_CR>(t, w, n, inter, tol); break;
  case SG_TRI_PCR: tri_team_solve<SG_TRI_PCR>(t, w, n, inter, tol); break;
  case SG_TRI_RD: tri_team_solve<SG_TRI_RD>(t, w, n, inter, tol); break;
  case SG_TRI_CR_PCR: tri_team_solve<SG_TRI_CR_PCR>(t, w, n, inter, tol); break;
  case SG_TRI_CR_RD: tri_team_solve<SG_TRI_CR_RD>(t, w, n, inter, tol); break;
  default: break;
  }
}

// ---------------------------------------------------------------- Thomas
// Gaussian elimination without pivoting for one system whose row i is at element i*rs of
// dl, d, du, b and x (x may alias b), with the modified super-diagonal in cp[i*cs].
// Input finiteness, pivots and the result are checked (team.fail); never stops early.
template <class Team, class T>
SG_HD void tri_thomas(Team &t, long long m, const T *dl, const T *d, const T *du, const T *b, long long rs, T *x,
                      T *cp, long long cs, T tol)
{
  T cprev = 0, xprev = 0;
  for (long long i = 0; i < m; i++) {
    const long long o = i * rs;
    const T a = i > 0 ? dl[o] : (T)0, bb = d[o], c = i < m - 1 ? du[o] : (T)0, r = b[o];
    if (!(tri_finite(a) && tri_finite(bb) && tri_finite(c) && tri_finite(r)))
      t.fail(SG_FAIL_INPUT, i, (double)(!tri_finite(a) ? a : !tri_finite(bb) ? bb : !tri_finite(c) ? c : r));
    const T u = bb - a * cprev, inv = tri_inv(t, a, u, c, tol, i);
    cprev = c * inv;
    xprev = (r - a * xprev) * inv;
    cp[i * cs] = cprev;
    x[o]       = xprev;
  }
  for (long long i = m - 1; i >= 0; i--) {
    if (i < m - 1) xprev = x[i * rs] - cp[i * cs] * xprev;
    if (!tri_finite(xprev)) t.fail(SG_FAIL_RESULT, i, (double)xprev);
    x[i * rs] = xprev;
  }
}
