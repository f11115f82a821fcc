// Internal: the job table of the cluster + helpers trsv kernel (trsv_hybrid_solve in
// trsv_cluster_cuda.cu): the chunk geometry of a block row (host and device) and the ticket
// order of the helpers' jobs (host). No CUDA needed: the host tests check every order's
// invariants (test_trsv).
//
// Jobs: the inversion of block row I (Dinv_I, P_I, Q_I; none when a plan holds them) and the
// chunks (I, c) of row I: sum_{J in chunk c} M(I, J) x_J over the tiles J <= I - W (W: the chain's
// window). A job code is (I << 12) | (c << 1) | HY_DIAG. The helper warps take jobs by ticket, in
// table order; a chunk waits (spins) for the x_J it reads. Deadlock-free for any order in which
// every chunk comes after every job of the rows up to its last column (hy_jobs_valid): the chain
// needs, to form x_m, the inversion and the chunks of row m only, so a job waits only for jobs of
// smaller tickets (and the chain), and the smallest unfinished ticket always progresses.
#pragma once
#include "sys/sg_ctx.hpp"
#include <algorithm>
#include <functional>
#include <queue>
#include <utility>
#include <vector>

namespace sgtrsv {

constexpr int HY_DIAG = 1;  // job code bit: inversion job (else chunk job, chunk index in bits 1..11)

// Chunks of block row I (host and device): its H = I-W+1 helper tiles J = 0 .. I-W are cut into
// chunks of CT from J = 0 and an end chunk of the last E (or fewer), the tiles whose x_J came
// last: small, so that it is done soon after x_{I-W} arrives.
SG_HD int hy_big(int I, int W, int CT, int E) { return I - W + 1 > E ? (I - W + 1 - E + CT - 1) / CT : 0; }
SG_HD int hy_chunks(int I, int W, int CT, int E) { return I >= W ? hy_big(I, W, CT, E) + 1 : 0; }
// the tiles J0 .. J0+nt-1 of chunk c of block row I
SG_HD void hy_span(int I, int c, int W, int CT, int E, int &J0, int &nt)
{
  const int H = I - W + 1, hb = H - E, big = hy_big(I, W, CT, E);
  J0 = c < big ? c * CT : (hb > 0 ? hb : 0);
  nt = c < big ? (hb - J0 < CT ? hb - J0 : CT) : H - J0;
}

// The x window of a chain CTA (trsv_cluster_cuda.cu: hy_critical, hy_update, hy_xbar_warp): x_J lands in
// slot J % xr (xr = W + 2: x_{J+xr} is formed only once every CTA has read x_J), its bytes counted on
// barrier J % nbar, in its phase J / nbar (a ring of barriers, re-armed by the CTA's last warp as each x
// lands). A parity wait cannot tell phase P from P - 1 (x_{J-nbar} not landed yet): nbar is large enough
// that x_{J-nbar} has always landed when a warp waits for x_J. An update warp starts row I once the
// critical warp has taken z of its row I - cs U, having finished row I - cs (U + 1) and with it every x
// block before (the rows' windows cover them all, W > cs); it waits for x_J up to J = I - la - 1; so
// x_{J-nbar} has landed if nbar >= cs (U + 1) - la (the critical warp needs nbar >= cs). test_trsv
// (xbar_protocol) checks this on a model of the protocol with random interleavings; one barrier per
// block row (before 2026-11-28) took ~24 ns each to set up, 12.5 us of fp32 n = 16384's ~245.
SG_HD int hy_nbar(int nb, int cs, int U, int xr)
{
  const int m = cs * (U + 1) + 2 > xr ? cs * (U + 1) + 2 : xr;
  return m < nb ? m : nb;
}

// The timing model of order 2 (a list schedule of the helper warps, simulated on the host).
// Its numbers only steer the order; a wrong guess costs speed, never correctness.
struct HySchedModel {
  double step_us  = 0.48;  // the chain: one block row (H100: 0.46-0.48 us, bench/trsv/README.md)
  double first_us = 7.0;   // the chain's first x after the launch, without waiting for Dinv_0
  double start_us = 3.0;   // the helpers' first job
  double tile_us  = 1.0;   // one tile of a chunk, per helper warp, with every helper streaming
  double inv_us   = 5.0;   // one inversion job
  double lat_us   = 1.0;   // a published result (S_I, Dinv_I, x_J) to its reader
  int    helpers  = 1;     // helper warps
  int    lead     = 0;     // > 0: a chunk of row I no earlier than x_{I-lead} (bounds the work ahead)
};

// The choice of the job order and of order 2's model (host; trsv_hybrid_solve, measurements in its comments and in
// bench/trsv/README.md). peak: the HBM's peak in bytes per us by the device's clock and bus width (H100 SXM 3.35e6, H200
// 4.81e6); tile_bytes: one 32 x 32 tile; *_env: the SG_TRSV_HYB_SIM_STEP / _SIM_LEAD / _ORDER / _SIM_BW overrides (0 or -1:
// automatic); nb: block rows. The model's chain step depends on the device: above a peak of 3.8e6 (the H200) it is shorter, fp32 200 ns
// below n = 20480 and 260 from there, fp64 360 below 20480 and 480 from there (H100: fp32 320 below 24576, else 480), and
// order 2 starts at fp64 ratios above 1.15 (H100: 1.35; fp32 1.05 on both). ratio: the helpers' time for the whole
// triangle at 90 % of the peak over the chain's nb steps.
struct HyOrderChoice {
  int    step_ns = 480, lead = 192, order = 0;
  double bw = 0, ratio = 0;  // the model's bandwidth (bytes per us) and ratio
};
inline HyOrderChoice hy_choose_order(bool f32, int n, int nb, double tile_bytes, double peak, int step_env, int lead_env, int order_env, int bw_env)
{
  HyOrderChoice c;
  const bool    hbm3e = sg_hbm_fast(peak);
  c.lead              = lead_env >= 0 ? lead_env : (f32 ? (n < 20480 ? 128 : 256) : 192);
  c.step_ns           = step_env ? step_env : hbm3e ? (f32 ? (n < 20480 ? 200 : 260) : (n < 20480 ? 360 : 480)) : (f32 && n < 24576 ? 320 : 480);
  c.bw                = bw_env ? bw_env * 1e3 : 0.9 * peak;
  c.ratio             = 0.5 * nb * (nb + 1.0) * tile_bytes / c.bw / (nb * (c.step_ns * 1e-3));
  c.order             = order_env >= 0 ? order_env : c.ratio > (f32 ? 1.05 : hbm3e ? 1.15 : 1.35) ? 2 : 0;
  return c;
}

// The ticket order. order 0 (by rows): the inversions of the first PD block rows, then row by row
// the inversion of row I + PD and the chunks of row I. order 1 (by columns): every job keyed by the
// last x it needs (a chunk: its last tile column; the inversion of row I: I - PD, before the
// chunks of equal key), then by row. order 2 (scheduled): the helpers' list schedule under the
// model md, earliest deadline first: whenever a helper warp is free it takes, of the jobs whose x
// exist by then, the one of the smallest row (an inversion counts PD rows early); so the chunks
// the chain needs next go first, and far rows' chunks of old columns fill the bandwidth the chain
// leaves idle (the first ~130 of 512 block rows at fp64 n = 16384, ~350 at fp32), instead of
// waiting for their rows' turns. With md.lead, a chunk of row I waits also for x_{I-lead} (work at
// most `lead` rows ahead of the chain: far work competes with the chain's own tile loads).
inline void hy_build_jobs(int nb, int W, int CT, int E, int PD, int order, bool pre, const HySchedModel &md, std::vector<int> &jobs)
{
  jobs.clear();
  if (order == 0) {
    for (int I = 0; I < nb && I < PD && !pre; I++) jobs.push_back((I << 12) | HY_DIAG);
    for (int I = 0; I < nb; I++) {
      if (I + PD < nb && !pre) jobs.push_back(((I + PD) << 12) | HY_DIAG);
      for (int c = 0; c < hy_chunks(I, W, CT, E); c++) jobs.push_back((I << 12) | (c << 1));
    }
    return;
  }
  if (order == 1) {
    std::vector<std::pair<long long, int>> keyed;  // (key, code): key = (last column + PD) * 2 * 2^20 + kind * 2^20 + row
    for (int I = 0; I < nb; I++) {
      if (!pre) keyed.push_back({((long long)I * 2) << 20 | I, (I << 12) | HY_DIAG});
      for (int c = 0; c < hy_chunks(I, W, CT, E); c++) {
        int J0, nt;
        hy_span(I, c, W, CT, E, J0, nt);
        keyed.push_back({(((long long)(J0 + nt - 1 + PD) * 2 + 1) << 20) | I, (I << 12) | (c << 1)});
      }
    }
    std::sort(keyed.begin(), keyed.end());
    for (const auto &k : keyed) jobs.push_back(k.second);
    return;
  }
  // order 2: simulate. A row's jobs: its inversion (!pre) and its chunks; x_R is formed (X[R]) once
  // x_{R-1} is and row R's jobs are done; a chunk is released once its last column's x exists.
  std::vector<int>                     need(nb), placed(nb, 0);
  std::vector<double>                  X(nb), sdone(nb, 0.0), ddone(nb, 0.0);
  std::vector<std::vector<int>>        relq(nb);  // chunk codes released by x_R
  long long                            total = 0;
  for (int I = 0; I < nb; I++) {
    const int nch = hy_chunks(I, W, CT, E);
    need[I]       = nch + (pre ? 0 : 1);
    total += need[I];
    for (int c = 0; c < nch; c++) {
      int J0, nt;
      hy_span(I, c, W, CT, E, J0, nt);
      const int R = md.lead > 0 && I - md.lead > J0 + nt - 1 ? I - md.lead : J0 + nt - 1;  // (R >= its last column: still valid)
      relq[R].push_back((I << 12) | (c << 1));
    }
  }
  using Rel = std::pair<long long, int>;                  // (priority key, code)
  using Pen = std::pair<double, Rel>;                     // (release time, ...)
  std::priority_queue<Rel, std::vector<Rel>, std::greater<Rel>> rel;
  std::priority_queue<Pen, std::vector<Pen>, std::greater<Pen>> pen;
  std::priority_queue<double, std::vector<double>, std::greater<double>> freew;
  auto key = [&](int code) {  // earliest deadline: the row (an inversion PD rows early, before chunks)
    const int I = code >> 12;
    return (code & HY_DIAG) ? (long long)(I - PD) * 4096 : (long long)I * 4096 + 1 + ((code >> 1) & 2047);
  };
  if (!pre)
    for (int I = 0; I < nb; I++) rel.push({key((I << 12) | HY_DIAG), (I << 12) | HY_DIAG});
  int  next    = 0;
  auto advance = [&]() {  // rows whose jobs are all placed: their x, and the chunks that x releases
    while (next < nb && placed[next] == need[next]) {
      const int R = next;
      double    x = R == 0 ? md.first_us : X[R - 1] + md.step_us;
      if (hy_chunks(R, W, CT, E) > 0) x = std::max(x, sdone[R] + md.lat_us);
      if (!pre) x = std::max(x, ddone[R] + md.lat_us);
      X[R] = x;
      for (int code : relq[R]) pen.push({x + md.lat_us, {key(code), code}});
      next++;
    }
  };
  for (int h = 0; h < std::max(1, md.helpers); h++) freew.push(md.start_us);
  advance();
  jobs.reserve((size_t)total);
  auto release = [&](double t) {  // the pending chunks released by time t
    while (!pen.empty() && pen.top().first <= t) { rel.push(pen.top().second); pen.pop(); }
  };
  while ((long long)jobs.size() < total) {
    double tau = freew.top();
    freew.pop();
    release(tau);
    if (rel.empty()) {
      if (pen.empty()) break;  // (cannot happen: row `next` has an unplaced job, released)
      tau = pen.top().first;  // the warp idles until the next release
      release(tau);
    }
    const int code = rel.top().second;
    rel.pop();
    const int I = code >> 12;
    double    dur;
    if (code & HY_DIAG) dur = md.inv_us;
    else {
      int J0, nt;
      hy_span(I, (code >> 1) & 2047, W, CT, E, J0, nt);
      dur = nt * md.tile_us;
    }
    const double end = tau + dur;
    jobs.push_back(code);
    placed[I]++;
    if (code & HY_DIAG) ddone[I] = end;
    else sdone[I] = std::max(sdone[I], end);
    freew.push(end);
    advance();
  }
  if ((long long)jobs.size() < total) hy_build_jobs(nb, W, CT, E, PD, 0, pre, md, jobs);  // (never: a table must be whole, or the chain waits forever)
}

// The invariants of a job table (the tests check every order): each job of the shape exactly once
// (no other code), and every chunk after every job of the rows up to its last column.
inline bool hy_jobs_valid(int nb, int W, int CT, int E, bool pre, const std::vector<int> &jobs)
{
  std::vector<int>  need(nb), done(nb, 0);
  std::vector<char> seen;
  long long         total = 0;
  for (int I = 0; I < nb; I++) total += need[I] = hy_chunks(I, W, CT, E) + (pre ? 0 : 1);
  if ((long long)jobs.size() != total) return false;
  std::vector<long long> base(nb + 1, 0);  // job index of (I, slot): base[I] + slot, slot 0 the inversion
  for (int I = 0; I < nb; I++) base[I + 1] = base[I] + hy_chunks(I, W, CT, E) + 1;
  seen.assign((size_t)base[nb], 0);
  int full = 0;  // rows 0 .. full-1 have all their jobs placed
  auto adv = [&]() { while (full < nb && done[full] == need[full]) full++; };
  adv();
  for (int code : jobs) {
    const int I = code >> 12, c = (code >> 1) & 2047;
    const bool diag = code & HY_DIAG;
    if (I < 0 || I >= nb || (diag && (pre || c != 0)) || (!diag && c >= hy_chunks(I, W, CT, E))) return false;
    const long long slot = base[I] + (diag ? 0 : 1 + c);
    if (seen[(size_t)slot]) return false;
    seen[(size_t)slot] = 1;
    if (!diag) {
      int J0, nt;
      hy_span(I, c, W, CT, E, J0, nt);
      if (J0 + nt - 1 >= full) return false;  // a row up to its last column still has a job to come
    }
    done[I]++;
    adv();
  }
  return full == nb;
}

} // namespace sgtrsv
