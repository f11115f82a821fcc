// Partitioned tridiagonal solver (TPCR) and the block primitives: the algorithm pieces
// written once for the host twin (tri_tpcr_host.cpp) and the CUDA kernels
// (tri_tpcr_cuda.cu). Both follow the same plan (tp_make_plan) and call the same
// SG_HD functions in the same order, so they agree up to rounding (FMA contraction; two
// kernel instances keep the division form of the PCR step, tp_pcr_step_div: the same checks
// at the same rows, other rounding).
//
// Structure (Q = rows per chunk = rows per thread, a compile-time constant):
//   chunk    Q consecutive rows of one system, held in registers by one thread.
//            tp_chunk_reduce eliminates the sub-diagonal downwards (fill in the chunk's
//            first column) and the super-diagonal upwards (fill in the last column; a full
//            float chunk from both ends at once, tp_chunk_reduce_twisted), leaving 2
//            interface equations
//               e0: a*x_prev  + b*x_first + c*x_last = d
//               e1: a*x_first + b*x_last  + c*x_next = d
//            (1 equation (x_prev, x_0, x_next) for a 1-row chunk). Concatenated over
//            consecutive chunks they form a tridiagonal system in
//            (first_0, last_0, first_1, last_1, ...). tp_chunk_solve recovers the interior
//            from x_first, x_last by back substitution with the stored coefficients.
//   tile     team = up to 512 chunks (threads) of one system: TEAM*Q rows (multi-level:
//            256 chunks, fewer for moderate sizes, see tp_make_plan).
//            SOLVE: the tile's 2*TEAM interface equations are solved by one
//            even/odd reduction step (chunk j's e0 absorbs e1 of chunks j-1 and j: an
//            equation in first_{j-1}, first_j, first_{j+1}), PCR on those TEAM equations
//            (tp_pcr_step, log2(TEAM) steps; the equations exchanged divided by their
//            pivots, tp_eq_unit), x_last_j from e1_j (tp_last_x), then every
//            chunk is back-substituted. (The even/odd step halves the PCR's shared
//            memory traffic and registers compared with PCR on all 2*TEAM equations.)
//            Rows past the end of the tile are identity equations (decoupled).
//            REDUCE: the chunks' equation pairs are merged pairwise in a tree
//            (tp_merge = tp_chunk_reduce of the <= 4 stacked equations) down to the
//            tile's own 2 interface equations (same form as a chunk's). Rows past the end
//            are absent (a ragged chunk has fewer rows; empty chunks drop out), so the
//            tile's last unknown is the system's true last row and its coupling to an
//            external x_next is kept (needed by sg_tri_block_reduce).
//   levels   a system longer than one tile (tp_plan.ntiles > 1): REDUCE every tile
//            -> reduced tridiagonal system of mr = 2*ntiles (-1) equations in
//            (first_0, last_0, first_1, ...), solved recursively by the same scheme; then
//            SOLVE every tile again with its neighbours x_prev = last of the previous tile
//            and x_next = first of the next tile known (FINISH, tp_sys::xr).
// Boundary rules (tp_sys::endmode) for row 0 / row m-1 of a system:
//   TP_END_ZERO   dl[0], du[m-1] ignored (batch convention)
//   TP_END_KNOWN  b[0] -= dl[0]*xprev, b[m-1] -= du[m-1]*xnext (sg_tri_block_solve)
//   TP_END_KEEP   the couplings stay in the reduced equations (sg_tri_block_reduce)
// Breakdown: every division goes through tp_inv (tp_check_pivot: the sg_bad_pivot condition,
// computed without overflow; tp_merge also checks the pivots it does not divide by) and reports through the
// Team's fail(class, row, value); inputs and results are checked for Inf/NaN.
#pragma once
#include "tri/tri_team.hpp"
#include <climits>
#include <cstdlib>

#if defined(__CUDACC__)
#define TP_UNROLL _Pragma("unroll")
#elif defined(__GNUC__) && !defined(__clang__)
#define TP_UNROLL _Pragma("GCC unroll 16")
#else
#define TP_UNROLL
#endif

enum { TP_END_ZERO = 0, TP_END_KNOWN = 1, TP_END_KEEP = 2 };
constexpr int TP_BLOCK     = 256;  // threads per block (default)
// Contiguous single-tile batches: threads per block = max(team, TP_BLOCK_CONTIG). Small blocks
// run decoupled (a block's warps wait only for each other); measured on an H100 (fp64, % of
// copy at m = 256 / 512 / 1024): 89.9 / 82.9 / 78.8 with 256-thread blocks, 95.6 / 93.3 / 86.3
// with one warp or one team per block (bench/tri/README.md).
constexpr int TP_BLOCK_CONTIG = 32;
constexpr int TP_BLOCK_MAX = 512;  // largest block (one team of 512 chunks)
// Multi-level tiles shrink (down to 32 chunks) until there are this many blocks: about two
// waves of 2 blocks per SM on a 132-SM H100 (a fixed number: host and device must agree).
constexpr long long TP_MIN_BLOCKS = 512;

// Rows per thread (tuning knobs SG_TP_QD / SG_TP_QS, fixed at build time so the host twin
// follows the same plan): 64 bytes per array per thread = 4 x 16-byte vector loads.
#ifndef SG_TP_QD
#define SG_TP_QD 8
#endif
#ifndef SG_TP_QS
#define SG_TP_QS 16
#endif
template <class T> constexpr int tp_q() { return sizeof(T) == 8 ? SG_TP_QD : SG_TP_QS; }

template <class T> struct tp_eq {
  T a, b, c, d;
};
template <class T> struct tp_node {  // reduced equations of a chunk / merged chunks
  tp_eq<T> e0, e1;
  int      cnt;  // 0 (empty), 1 or 2 equations
};

// One level: a batch of systems (input, or a reduced system in workspace).
template <class T> struct tp_sys {
  const T  *dl, *d, *du, *b;
  T        *x;
  long long m, nbatch;
  long long ss, rs;            // element (system s, row i) at s*ss + i*rs
  int       endmode;           // TP_END_*
  T         xprev, xnext;      // TP_END_KNOWN: values of the external neighbours
  const T  *xr;                // FINISH: solution of the reduced system, or NULL
  long long xss, xrs;          // element (s, k) of xr at s*xss + k*xrs
  long long rscale;            // reported row = local row * rscale (best effort)
  bool      user;              // user input (checked for Inf/NaN), not a reduced system
  bool      checked;           // user input that an earlier pass of this solve has checked (a FINISH)
  bool      inter;             // layout SG_TRI_INTERLEAVED (thread mapping, plan)
};

// Launch geometry, shared by host and device.
struct tp_plan {
  int       team, spb;  // chunks (threads) per system tile; system tiles per block
  long long tile;       // rows per tile = team*Q
  long long ntiles;     // tiles per system
  long long groups;     // ceil(nbatch/spb)
  long long mr;         // size of the reduced system when ntiles > 1
  bool      open = false;  // CUDA: the next kernel of the solve may start early (tp_cuda_ex)
};

// Smallest teams (chunks, tp_plan::team) whose single-tile plans run on the GPU's streaming kernels
// (persistent blocks that bring the next system by tensor / cp.async copies while this one is solved:
// tp_stream_kernel for contiguous systems, tp_stream_ilv_kernel for interleaved ones), by the
// device's HBM peak in bytes per us (sg_cuda_hbm_peak): a kernel choice only, the plan and its
// arithmetic are the same. The GPU's % of copy, auto, same lease, two rounds (bench/tri/README.md):
//   H100 (3.35e6): fp64 contiguous m = 256 (team 32) 94.9 with tp_solve_kernel against 89.5
//     streamed, interleaved m = 256 86.1 against 80.1, m = 512 68.9 against 82.7: contiguous and
//     interleaved double stream from teams of 64 (m = 512); float from 128 (m = 2048: 83.1 / 84.6
//     against 80.8 / 74.7 at m = 2048 / 4096; m = 512 / 1024 were measured only before the
//     hardware reciprocal, 74.9 / 75.1 against 77.4 / 75.7).
//   H200 (4.81e6; the kernels had gained 1.02-1.36x on its 1.42x bandwidth), ms per solve of
//     2^24 unknowns: fp64 contiguous m = 256 0.2008-0.2014 -> 0.1739-0.1740 streamed (78.7 -> 90.0 % of copy in
//     the full run); interleaved m = 128 (team 16) 0.1874-0.1879 -> 0.1739-0.1740, m = 256
//     0.2360 -> 0.1981-0.1990; float contiguous m = 512 (team 32) 0.1068-0.1077 -> 0.0895-0.0900,
//     m = 1024 0.1099-0.1104 -> 0.0866-0.0873 (71.5 -> 90.1 %; bench/tri/README.md, eighth session). So there every such team streams.
//   On the H200 the teams of < 32 chunks stream too (multi: a warp of 32 / team systems per item;
//     bench/tri/README.md, eighth session), ms: fp64 m = 64 / 128 0.1788-0.1789 / 0.1898-0.1899 -> 0.1676-0.1688 /
//     0.1643-0.1651 (93.8 / 95.7 % of copy), fp32 m = 64 / 128 / 256 0.0949-0.0950 / 0.0983-0.0986 /
//     0.1024-0.1028 -> 0.0885-0.0888 / 0.0870-0.0871 / 0.0900-0.0901 (88.9 / 90.5 / 87.5 %); the H100
//     keeps tp_solve_kernel there (92 / 90 % at fp64 m = 64 / 128; multi not measured on it).
//   H200, interleaved (bench/tri/README.md, tenth session; same lease, two rounds, ms): fp64 m = 64 (team 8)
//     0.1719-0.1721 -> 0.1675 streamed; float m = 128 / 256 (teams 8 / 16) 0.1054-0.1055 / 0.1172-0.1183 ->
//     0.0910-0.0914 / 0.0983-0.0993 by the tensor-box form of tp_stream_ilv_kernel (float takes only that form:
//     its cp.async form spills), m = 64 (team 4, 256-byte rows) 0.0991-0.0998 -> 0.0886-0.0897. The H100
//     keeps float interleaved on tp_solve_kernel (not measured there). Since the eleventh session the form
//     takes 64- / 32-byte rows too (the wide boxes), so float m = 512 / 1024 (teams 32 / 64) stream there as
//     well: 0.1472-0.1477 / 0.1731-0.1759 -> 0.1070-0.1075 / 0.1215-0.1228 (with the XOR order).
// The devices between are untested: the rule is the device class (sg_hbm_fast), as the trsv job
// order's (hy_choose_order). SG_TRI_STREAM_MIN / _MIN_F / _ILV_MIN / _ILV_MIN_F / _MULTI override it (A/B).
struct tp_stream_mins {
  int  contig, flt, ilv;  // double contiguous, float contiguous (single tile), double interleaved
  bool multi;             // contiguous single tiles of teams < 32 chunks (several systems per warp) stream too
  int  ilv_f;             // float interleaved (tensor-box form only); 0: never
};
inline tp_stream_mins tp_stream_min_teams(double peak)
{
  if (sg_hbm_fast(peak)) return {32, 32, 8, true, 4};
  return {64, 128, 64, false, 0};
}

// Interleaved batches of more than 1024 rows (2048 and more before the fifteenth session): tiles of TP_BLOCK threads = 128
// bytes of consecutive systems (16 double / 32 float) x 128 rows, in place of one tile of 16-byte rows
// (m = 2048 double / 4096 float) or two passes over tiles of 32-byte rows (m = 4096 double). On
// the GPU the REDUCE, the reduced solve and the FINISH of such a plan run as one persistent kernel
// (tp_fused_ilv_kernel) in which each group's FINISH follows its REDUCE closely enough to find most
// of its tile still in L2, and the tiles come by tensor copies while the item before is computed;
// the host twin runs the same plan level by level (same arithmetic). The reduced system (2 rows
// per tile) must be one block's single-tile team (its team <= the plan's).
// Measured on an H100 (bench/tri/README.md), interleaved, % of copy, before -> fused (tiles loaded
// into registers) -> fused with tensor copies: fp64 m = 2048 42.0-42.6 -> 55.2 -> 61.0-61.2,
// m = 4096 40.2-40.3 -> 55.3 -> 60.3-60.7; float m = 2048 41.0 -> 42.1 -> 47.2-47.7, m = 4096
// 37.7 -> 42.5 -> 47.5-48.1. At m = 1024 the single tile stays faster (fp64 68.1 against 60.5,
// float 62.1 against 45.5), so the default was from 2048 rows in both precisions. Between the powers of two the
// single tile is padded to the next one (m = 1025-2047: one tile of 2048 rows and 16-byte rows), and the fused plan
// (tiles of 128 rows) wins from m = 1025 on the H200 (same lease, two rounds, ms per 2^24 unknowns, SG_TRI_FUSE_MIN=1
// against the default, bench/tri/README.md, fifteenth session): fp64 m = 1025 / 1200 / 1500 / 1800 / 2000
// 0.5746-0.5768 / 0.5761 / 0.5188-0.5192 / 0.4874-0.4886 / 0.4728-0.4741 -> 0.3210-0.3213 / 0.3796-0.3816 / 0.3025-0.3030 /
// 0.3155-0.3164 / 0.3178-0.3189; float 0.3290-0.3292 / 0.3267-0.3277 / 0.3017-0.3029 / 0.2776-0.2779 / 0.2671-0.2673 ->
// 0.1810-0.1811 / 0.2253-0.2259 / 0.1722-0.1734 / 0.1814-0.1820 / 0.1894-0.1926; below (m = 300-1000) the single tile
// stays faster but at fp64 m = 600 / 700 (within 2-4 %). So the default is from 1025 rows. Other shapes,
// fp64: rows of 64 / 32 / 16 bytes 49 / 36 / 21 %, of 256 bytes (64-row tiles: m <= 2048 only)
// 52.7 % at m = 2048 (registers, before the tensor copies).
// SG_TRI_FUSE_MIN overrides the smallest m for both precisions, SG_TRI_FUSE_SPB the systems per
// block (read once; host and device agree; the GPU tests set SG_TRI_FUSE_MIN=1).
template <class T> long long tp_fuse_min()
{
  static const long long v = [] {
    const char *e = getenv("SG_TRI_FUSE_MIN");
    return e ? atoll(e) : 1025LL;
  }();
  return v;
}
template <class T> bool tp_fuse_plan(long long m, long long nbatch, tp_plan &p)
{
  constexpr int Q   = tp_q<T>();
  const int     nbp = sg_next_pow2(nbatch < (1 << 20) ? nbatch : (1 << 20));
  if (m < 2 || m < tp_fuse_min<T>()) return false;
  static const int spbx = [] {
    const char *e = getenv("SG_TRI_FUSE_SPB");
    const int   v = e ? atoi(e) : 0;
    return v >= 1 && v <= TP_BLOCK && (v & (v - 1)) == 0 ? v : 0;
  }();
  const int sm = spbx ? spbx : 128 / (int)sizeof(T);
  p.spb    = nbp < sm ? nbp : sm;
  p.team   = TP_BLOCK / sm;
  p.tile   = (long long)p.team * Q;
  p.ntiles = (m + p.tile - 1) / p.tile;
  if (p.ntiles < 2) return false;
  const long long lastrows = m - (p.ntiles - 1) * p.tile;
  p.mr     = 2 * (p.ntiles - 1) + (lastrows < 2 ? lastrows : 2);
  p.groups = (nbatch + p.spb - 1) / p.spb;
  return sg_next_pow2((p.mr + Q - 1) / Q) <= p.team && p.groups * p.ntiles <= (1LL << 30);
}

template <class T> tp_plan tp_make_plan(int layout, long long m, long long nbatch)
{
  constexpr int Q = tp_q<T>();
  tp_plan       p;
  if (layout == SG_TRI_INTERLEAVED && tp_fuse_plan<T>(m, nbatch, p)) return p;
  const int     nbp = sg_next_pow2(nbatch < (1 << 20) ? nbatch : (1 << 20));
  // interleaved: >= 32 bytes of consecutive systems per block (4 double, 8 float), so that
  // a row of a block's systems is made of whole 32-byte sectors; a single tile may use 16 bytes
  // (m = 2048 double / 4096 float: one pass with 16-byte rows, 41.8 % of copy on an H100,
  // beats two passes with 32-byte rows, 36.0 %; 8 bytes at m = 4096 double: 26.7 % against 38.2)
  const int       w32    = 32 / (int)sizeof(T), w16 = 16 / (int)sizeof(T);
  const int       spb0   = layout == SG_TRI_INTERLEAVED ? (nbp < w32 ? nbp : w32) : 1;
  const int       spb1   = layout == SG_TRI_INTERLEAVED ? (nbp < w16 ? nbp : w16) : 1;
  const long long chunks = (m + Q - 1) / Q;
  // Single tiles of more than 32 chunks take teams of a multiple of 32 chunks (a tile of a multiple of 256 rows double, 512
  // float), not the next power of two (m = 600 double: 96 chunks, 768 rows, in place of 128 and 1024; the PCR of the
  // interface system takes any team size). SG_TRI_TEAM_POW2=1: the next power of two (A/B). H200, same lease, two rounds,
  // ms per 2^24 unknowns (bench/tri/README.md, fifteenth session), power of two -> multiple of 32: fp64 contiguous m = 600 /
  // 700 / 1500 / 2500 / 3000 / 3500 0.2290-0.2291 / 0.2032-0.2035 / 0.2035-0.2036 / 0.2568-0.2575 / 0.2255-0.2261 /
  // 0.2053-0.2054 -> 0.1943-0.1944 / 0.1782 / 0.1812-0.1825 / 0.2211-0.2217 / 0.2034-0.2040 / 0.1997-0.2003; fp64
  // interleaved m = 600 / 700 0.3508-0.3512 / 0.4013-0.4015 -> 0.2828-0.2839 / 0.3699-0.3707; float contiguous m = 1500 /
  // 2500 / 3000 0.1073-0.1077 / 0.1238-0.1239 / 0.1092-0.1093 -> 0.0974 / 0.0920-0.0923 / 0.1024-0.1041; the shapes whose
  // team does not change within 1 %
  static const bool pow2 = sg_env_flag("SG_TRI_TEAM_POW2", false);
  if (chunks * spb1 <= TP_BLOCK_MAX) {  // one tile per system
    p.team   = pow2 || chunks <= 32 ? sg_next_pow2(chunks) : (int)((chunks + 31) / 32 * 32);
    // contiguous: one warp (teams of < 32 chunks) or one team per block; interleaved: TP_BLOCK
    // threads, TP_BLOCK_MAX from 512 rows so that a block's rows are longer runs of consecutive
    // systems (measured on an H100, fp64 m = 512: 67 % of copy with 8 systems per block, i.e.
    // 64-byte runs, 58 % with 4; smaller m lose 2-8 points with the bigger blocks)
    // (on the H200 the sweep of this block, 128 / 256 / 512 threads, found only fp64 m = 256 faster with 512, on the
    // streaming kernel: tp_ilv_regroup there; bench/tri/README.md, ninth session)
    const int blk = layout == SG_TRI_INTERLEAVED ? ((long long)p.team * Q >= 512 ? TP_BLOCK_MAX : TP_BLOCK) : TP_BLOCK_CONTIG;
    // (powers of two: systems per block in whole sectors)
    const int fill = blk / p.team > 1 ? (sg_prev_pow2(blk / p.team) < nbp ? sg_prev_pow2(blk / p.team) : nbp) : 1;
    const int cap  = sg_prev_pow2(TP_BLOCK_MAX / p.team), lo = spb0 < cap ? spb0 : cap;  // >= spb1 systems (above)
    p.spb    = fill > lo ? fill : lo;
    p.ntiles = 1;
  } else {  // tiles of TP_BLOCK threads, smaller (>= 32 chunks) when that leaves too few blocks
    const long long groups = (nbatch + spb0 - 1) / spb0;
    p.team = TP_BLOCK / spb0;
    // one long system: tiles of 128 chunks (1024 rows double, 2048 float) instead of 256. Measured on an H100
    // with the programmatic launches (bench/tri/README.md), % of copy, fp64 2^22 / 2^24 / 2^26: 43.1 /
    // 51.8 / 53.5 against 42.5 / 50.2 / 53.2-53.5 (64 chunks: 42.3 / 50.3 / 51.9); float lost there with
    // 128 (2^24: 48.4 against 49.1). On the H200 (same lease, two rounds, ms; SG_TRI_LONG_TEAM, thirteenth
    // session): float 2^21 / 2^22 / 2^23 / 2^24 / 2^25 / 2^26 0.0365-0.0372 / 0.0576-0.0578 / 0.0972-0.0978 /
    // 0.1780-0.1782 / 0.3385-0.3388 / 0.6536-0.6543 -> 0.0348-0.0349 / 0.0556-0.0567 / 0.0949-0.0957 / 0.1784-0.1786 /
    // 0.3362-0.3366 / 0.6478-0.6482, 2^20 0.0243-0.0245 -> 0.0244-0.0249; double 2^20 0.0371-0.0373 -> 0.0360-0.0363. So double
    // from 2^20, float above it.
    // SG_TRI_LONG_TEAM (a power of two, 32..TP_BLOCK) overrides it for one contiguous system (A/B)
    static const int longx = [] {
      const char *e = getenv("SG_TRI_LONG_TEAM");
      const int   v = e ? atoi(e) : 0;
      return v >= 32 && v <= TP_BLOCK && (v & (v - 1)) == 0 ? v : 0;
    }();
    if (layout == SG_TRI_CONTIGUOUS && nbatch == 1) {
      if (longx) p.team = longx;
      else if (sizeof(T) == 8 ? m >= (1LL << 20) : m > (1LL << 20)) p.team = TP_BLOCK / 2;
    }
    while (p.team > 32 && (m + (long long)p.team * Q - 1) / ((long long)p.team * Q) * groups < TP_MIN_BLOCKS) p.team /= 2;
    p.spb    = spb0;
    p.ntiles = (m + (long long)p.team * Q - 1) / ((long long)p.team * Q);
  }
  p.tile   = (long long)p.team * Q;
  p.groups = (nbatch + p.spb - 1) / p.spb;
  if (p.ntiles > 1) {
    const long long lastrows = m - (p.ntiles - 1) * p.tile;
    p.mr = 2 * (p.ntiles - 1) + (lastrows < 2 ? lastrows : 2);
  } else p.mr = 0;
  return p;
}

// Interleaved single-tile plans on the streaming kernel (tp_stream_ilv_kernel): more systems per
// block, up to 128-byte rows of consecutive systems within TP_BLOCK_MAX threads. A grouping of the
// systems only: each system is still solved by its own team with the same arithmetic.
template <class T> void tp_ilv_regroup(tp_plan &p, long long nbatch)
{
  const long long nbp = sg_next_pow2(nbatch < (1 << 20) ? nbatch : (1 << 20));
  long long       spb = 128 / (long long)sizeof(T);
  if (spb > TP_BLOCK_MAX / p.team) spb = sg_prev_pow2(TP_BLOCK_MAX / p.team);
  if (spb > nbp) spb = nbp;
  if (p.ntiles != 1 || spb <= p.spb) return;
  p.spb    = (int)spb;
  p.groups = (nbatch + spb - 1) / spb;
}

// Element offsets of a reduced system of size mr for nbatch systems in `layout`.
inline void tp_reduced_strides(int layout, long long mr, long long nbatch, long long &ss, long long &rs)
{
  if (layout == SG_TRI_INTERLEAVED) { ss = 1; rs = nbatch; }
  else { ss = mr; rs = 1; }
}

// Workspace (values of T) of tp_solve_levels / tp_reduce_levels.
template <class T> long long tp_solve_work(int layout, long long m, long long nbatch)
{
  const tp_plan p = tp_make_plan<T>(layout, m, nbatch);
  return p.ntiles == 1 ? 0 : 4 * p.mr * nbatch + tp_solve_work<T>(layout, p.mr, nbatch);
}
template <class T> long long tp_reduce_work(long long n)
{
  const tp_plan p = tp_make_plan<T>(SG_TRI_CONTIGUOUS, n, 1);
  return p.ntiles == 1 ? 8 : 4 * p.mr + tp_reduce_work<T>(p.mr);
}

// 1/b for the equation (a, b, c) of row `row`. A breakdown (sg_bad_pivot's condition) is reported
// only for a finite equation: a non-finite one is the consequence of a failure reported
// already (input check, an earlier pivot) or of an overflow (reported by the result check),
// so the row that caused the breakdown is the one reported.
// The test works on s4 = (|a| + |b| + |c|) / 4, summed as |a|/4 + |b|/4 + |c|/4 (exact powers of
// two): s4 is finite exactly when a, b and c are (it cannot overflow: at most 3/4 of the
// largest value), so a breakdown is `s4 < inf && !(|b|/4 > tol s4)`, the same condition as
// before, with no finiteness test of a, b, c. The form `sg_bad_pivot && finite(a) && finite(b)
// && finite(c)` had the compiler evaluate all three tests before its branch, ~6 instructions
// per pivot on the hot path (a REDUCE pass of one float system: ~110 instructions per row,
// issue- and latency-bound; bench/tri/README.md, 2026-11-27). (A plain s = |a| + |b| + |c|
// would overflow for finite values near the largest one and miss such a row.)
template <class Team, class T> SG_HD void tp_check_pivot(Team &t, T a, T b, T c, T tol, long long row)
{
  const T q = (T)0.25, s4 = fabs(a) * q + fabs(b) * q + fabs(c) * q;  // (exact products: contracted to FFMA on the GPU)
  if (s4 < (T)INFINITY && !(fabs(b) * q > tol * s4)) t.fail(SG_FAIL_PIVOT, row, (double)b);
}
template <class Team, class T> SG_HD T tp_inv(Team &t, T a, T b, T c, T tol, long long row)
{
  tp_check_pivot(t, a, b, c, tol, row);
#if defined(__CUDA_ARCH__)
  // float on the GPU: the hardware reciprocal (rcp.approx.f32: <= 1 ulp, full range, subnormals
  // kept) instead of the correctly rounded one. The float kernels are bound by this dependency
  // chain (16 divisions in a row per chunk): measured on an H100, % of copy at m = 64 / 256 /
  // 1024 / 4096: 85.9 / 81.0 / 76.4 / 66.2 -> 90.4 / 88.8 / 83.2 / 74.9. Unusable pivots were
  // flagged above, so the approximation only touches regular values (host and GPU then differ
  // by a few ulp, well inside the float tolerances).
  if constexpr (sizeof(T) == 4) {
    float v;
    asm("rcp.approx.f32 %0, %1;" : "=f"(v) : "f"((float)b));
    return v;
  }
#endif
  return (T)1 / b;
}

// Arguments common to the block primitives (host and CUDA).
inline sg_status tp_block_check(sg_precision prec, long long n, const void *dl, const void *d, const void *du, const void *b, sg_report *rep)
{
  if (prec != SG_REAL64 && prec != SG_REAL32)
    return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "unknown precision %d (use SG_REAL64 or SG_REAL32)", (int)prec);
  if (n < 1) return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "block size n = %lld, must be >= 1", n);
  if (!dl || !d || !du || !b)
    return sg_report_set(rep, SG_ERR_ARG, -1, -1, 0.0, "NULL array pointer (%s)", !dl ? "dl" : !d ? "d" : !du ? "du" : "b");
  return SG_OK;
}

// Row (of the tile starting at ts) that interface equation i stands for.
SG_HD long long tp_eq_row(long long ts, int i, int Q) { return ts + (long long)(i >> 1) * Q + (i & 1) * (Q - 1); }

// ---------------------------------------------------------------- chunk load / checks
// Raw rows [g0, g0+Q) of system s (identity for rows >= te).
template <int Q, class T>
SG_HD void tp_load_raw(const tp_sys<T> &S, long long s, long long g0, long long te, T (&a)[Q], T (&b)[Q], T (&c)[Q], T (&r)[Q])
{
  const long long o = s * S.ss + g0 * S.rs;
TP_UNROLL
  for (int i = 0; i < Q; i++) {
    if (g0 + i < te) {
      const long long k = o + i * S.rs;
      a[i] = S.dl[k]; b[i] = S.d[k]; c[i] = S.du[k]; r[i] = S.b[k];
    } else { a[i] = 0; b[i] = 1; c[i] = 0; r[i] = 0; }
  }
}

// Slow path of the input check: re-read rows [g0, ge) of system s (so that the caller's
// registers need not stay live) and report the first non-finite value used.
template <class T, class Team>
SG_HD void tp_find_bad_input(Team &tm, const tp_sys<T> &S, bool sysfirst, bool syslast, long long s, long long g0, long long ge)
{
  for (long long g = g0; g < ge; g++) {
    const long long k = s * S.ss + g * S.rs;
    const bool ia = sysfirst && g == 0 && S.endmode == TP_END_ZERO, ic = syslast && g == S.m - 1 && S.endmode == TP_END_ZERO;
    const T    v[4] = {ia ? (T)0 : S.dl[k], S.d[k], ic ? (T)0 : S.du[k], S.b[k]};
    for (int q = 0; q < 4; q++)
      if (!tri_finite(v[q])) { tm.fail(SG_FAIL_INPUT, g, (double)v[q]); return; }
  }
}

// Boundary rules and input check for the chunk at row g0 of tile t (rows [ts, te)) of
// system s. xr (FINISH): x_prev = xr[2t-1], x_next = xr[2t+2] of the reduced system.
template <int Q, class T, class Team>
SG_HD void tp_fix_chunk(Team &tm, const tp_sys<T> &S, long long s, long long t, long long ts, long long te, long long g0,
                        T (&a)[Q], T (&b)[Q], T (&c)[Q], T (&r)[Q])
{
  const bool first = g0 == ts, last = g0 + Q >= te && g0 < te;
  const int  L     = (int)(te - 1 - g0);  // local index of the tile's last row (when `last`)
  if (first && ts == 0 && S.endmode == TP_END_ZERO) a[0] = 0;
  if (last && te == S.m && S.endmode == TP_END_ZERO) {
TP_UNROLL
    for (int i = 0; i < Q; i++)
      if (i == L) c[i] = 0;
  }
  if (S.user && !S.checked) {  // reduced systems are not checked: a NaN there is a consequence
    // z is not finite if some value is Inf or NaN (rows >= te are the identity), or if the sum of
    // finite values overflows: the slow path then re-reads the rows and reports only a value
    // that is not finite. 4 additions per row (the x - x form took 8)
    T z = 0;
TP_UNROLL
    for (int i = 0; i < Q; i++) z += (a[i] + b[i]) + (c[i] + r[i]);
    if (!(z - z == (T)0)) tp_find_bad_input(tm, S, g0 == ts && ts == 0, te == S.m, s, g0, te < g0 + Q ? te : g0 + Q);
  }
  if (first) {  // fold a known x_prev into the right-hand side
    if (ts == 0 ? S.endmode == TP_END_KNOWN : S.xr != nullptr) {
      const T xp = ts == 0 ? S.xprev : S.xr[s * S.xss + (2 * t - 1) * S.xrs];
      r[0] -= a[0] * xp;
      a[0] = 0;
    }
  }
  if (last && (te == S.m ? S.endmode == TP_END_KNOWN : S.xr != nullptr)) {
    const T xn = te == S.m ? S.xnext : S.xr[s * S.xss + (2 * t + 2) * S.xrs];
TP_UNROLL
    for (int i = 0; i < Q; i++)
      if (i == L) { r[i] -= c[i] * xn; c[i] = 0; }
  }
}

// ---------------------------------------------------------------- chunk reduce / solve
// Full float chunks (nrow = Q >= 16) are reduced from both ends ("twisted"): the top half downwards,
// rows i = 1..H-1 (H = Q/2) normalised to
//   alpha_i x_first + x_i + gamma_i x_{i+1} = rho_i        (a = alpha, c = gamma, r = rho),
// the bottom half upwards, rows i = Q-2..H, to
//   beta_i x_{i-1} + x_i + delta_i x_last = sigma_i         (a = beta, c = delta, r = sigma),
// step k of both chains together, and the two chains meet in the 2x2 system of rows H-1, H
// (pivot det = 1 - gamma_{H-1} beta_H, reported at row H; 1/det is kept in a[0]). The two
// chains are independent, so the dependent divisions per chunk go from Q-1 to Q/2 + 1. e1 is
// then row Q-1 with x_{Q-2} substituted, normalised (diagonal 1; its pivot checked at row Q-1) as
// the one-sided reduction's e1 is: with both e0 and e1 at the row scale S, the closed-form merge
// (tp_merge) multiplies two of them and overflowed or underflowed for S beyond ~1e+-19 in float
// (a well-posed system scaled by 1e19 or 1e-20 failed with a non-finite result or a false zero
// pivot; Thomas solved it). One equation of each pair normalised keeps every merge at O(S). Measured on an H100 (bench/tri/README.md, same run, two repeats, % of copy):
// float interleaved m = 1024: 56.2 / 56.8 -> 59.7 / 60.3, every other float case within noise
// (so the 16-division chain does not limit float batches of m <= 256); double (Q = 8) lost
// up to 16 points (interleaved m = 512: 81 -> 65; the streaming kernel spills), so double
// keeps the one-sided reduction.
constexpr int TP_TWIST_MIN_Q = 16;

// Downward elimination of row i (both reductions): with row i-1 normalised to
// pa x_first + x_{i-1} + pc x_i = pr, row i becomes a x_first + x_i + c x_{i+1} = r, stored in
// a[i], c[i], r[i] and carried in (pa, pc, pr).
template <int Q, class T, class Team>
SG_HD void tp_down_step(Team &tm, T (&a)[Q], const T (&b)[Q], T (&c)[Q], T (&r)[Q], int i, T &pa, T &pc, T &pr, T tol, long long row)
{
  const T ai = a[i], inv = tp_inv(tm, ai, b[i] - ai * pc, c[i], tol, row);
  pa = a[i] = -ai * pa * inv;
  pc = c[i] = c[i] * inv;
  pr = r[i] = (r[i] - ai * pr) * inv;
}

template <int Q, class T, class Team>
SG_HD void tp_chunk_reduce_twisted(Team &tm, T (&a)[Q], const T (&b)[Q], T (&c)[Q], T (&r)[Q], T tol, long long row0, long long rstep,
                                   tp_eq<T> &e0, tp_eq<T> &e1)
{
  constexpr int H = Q / 2;
  T pa = -1, pc = 0, pr = 0;  // top: pseudo row "x_first - x_first = 0" makes row 1 the general case
  T qa = 0, qc = -1, qr = 0;  // bottom: pseudo row "x_last - x_last = 0" makes row Q-2 the general case
TP_UNROLL
  for (int k = 1; k < H; k++) {
    tp_down_step<Q>(tm, a, b, c, r, k, pa, pc, pr, tol, row0 + k * rstep);
    {
      const int i = Q - 1 - k;
      const T   ci = c[i], inv = tp_inv(tm, a[i], b[i] - ci * qa, ci, tol, row0 + i * rstep);
      qa = a[i] = a[i] * inv;
      qc = c[i] = -ci * qc * inv;
      qr = r[i] = (r[i] - ci * qr) * inv;
    }
  }
  // rows H-1 (pa, pc, pr) and H (qa, qc, qr): x_{H-1} = P0 + P1 x_first + P2 x_last, x_H likewise
  const T g  = tp_inv(tm, qa, (T)1 - pc * qa, pc, tol, row0 + H * rstep);
  T       u0 = g * (pr - pc * qr), u1 = -g * pa, u2 = g * pc * qc;      // x_{H-1}
  T       v0 = g * (qr - qa * pr), v1 = g * qa * pa, v2 = -g * qc;      // x_H
TP_UNROLL
  for (int k = 1; k < H - 1; k++) {
    {  // x_i, i = H-1-k, from x_{i+1} (top rows)
      const int i = H - 1 - k;
      u0 = r[i] - c[i] * u0;
      u1 = -a[i] - c[i] * u1;
      u2 = -c[i] * u2;
    }
    {  // x_i, i = H+k, from x_{i-1} (bottom rows)
      const int i = H + k;
      v0 = r[i] - a[i] * v0;
      v1 = -a[i] * v1;
      v2 = -c[i] - a[i] * v2;
    }
  }
  // x_1 = u0 + u1 x_first + u2 x_last into row 0, x_{Q-2} = v0 + v1 x_first + v2 x_last into row Q-1
  e0   = {a[0], b[0] + c[0] * u1, c[0] * u2, r[0] - c[0] * u0};
  {
    const T e1a = a[Q - 1] * v1, e1b = b[Q - 1] + a[Q - 1] * v2, n1 = tp_inv(tm, e1a, e1b, c[Q - 1], tol, row0 + (Q - 1) * rstep);
    e1 = {e1a * n1, (T)1, c[Q - 1] * n1, (r[Q - 1] - a[Q - 1] * v0) * n1};
  }
  a[0] = g;
}

// Reduce the first nrow (0..Q) rows of a chunk to its interface equations (returns their
// number). On return a, c, r hold the coefficients that tp_chunk_solve uses: for a full chunk
// of Q >= TP_TWIST_MIN_Q rows those of tp_chunk_reduce_twisted, else the normalised downward rows
// i = 1..nrow-1 (alpha, gamma, rho as above) and e1 = row nrow-1 normalised.
// Row of local i for reports: row0 + i*rstep.
template <int Q, class T, class Team>
SG_HD int tp_chunk_reduce(Team &tm, T (&a)[Q], const T (&b)[Q], T (&c)[Q], T (&r)[Q], int nrow, T tol, long long row0, long long rstep,
                          tp_eq<T> &e0, tp_eq<T> &e1)
{
  if constexpr (Q >= TP_TWIST_MIN_Q)
    if (nrow == Q) {
      tp_chunk_reduce_twisted<Q>(tm, a, b, c, r, tol, row0, rstep, e0, e1);
      return 2;
    }
  T pa = -1, pc = 0, pr = 0;  // pseudo row "x_first - x_first = 0" makes row 1 the general case
TP_UNROLL
  for (int i = 1; i < Q; i++)
    if (i < nrow) tp_down_step<Q>(tm, a, b, c, r, i, pa, pc, pr, tol, row0 + i * rstep);
  // upward: x_1 = ur - ua*x_first - uc*x_last, starting from the identity for x_last
  T ua = 0, uc = -1, ur = 0;
TP_UNROLL
  for (int i = Q - 2; i >= 1; i--)
    if (i <= nrow - 2) {
      ua = a[i] - c[i] * ua;
      ur = r[i] - c[i] * ur;
      uc = -c[i] * uc;
    }
  e0 = {a[0], b[0] - c[0] * ua, -c[0] * uc, r[0] - c[0] * ur};
  e1 = {pa, (T)1, pc, pr};  // row nrow-1 after the downward pass
  return nrow >= 2 ? 2 : nrow;
}

// Interior of a full chunk from x_first, x_last (after tp_chunk_reduce with nrow = Q: the
// twisted coefficients for Q >= TP_TWIST_MIN_Q); x is left in r.
template <int Q, class T> SG_HD void tp_chunk_solve(const T (&a)[Q], const T (&c)[Q], T (&r)[Q], T x0, T xl)
{
  r[Q - 1] = xl;  // read by the one-sided substitution's first step
  if constexpr (Q >= TP_TWIST_MIN_Q) {  // twisted: rows H-1, H from their 2x2 system, then both halves outwards
    constexpr int H = Q / 2;
    const T       t = r[H - 1] - a[H - 1] * x0, u = r[H] - c[H] * xl;
    r[H - 1]        = a[0] * (t - c[H - 1] * u);
    r[H]            = a[0] * (u - a[H] * t);
TP_UNROLL
    for (int k = 1; k < H - 1; k++) {
      const int i = H - 1 - k, j = H + k;
      r[i] = r[i] - a[i] * x0 - c[i] * r[i + 1];
      r[j] = r[j] - a[j] * r[j - 1] - c[j] * xl;
    }
  } else {
TP_UNROLL
    for (int i = Q - 2; i >= 1; i--) r[i] = r[i] - a[i] * x0 - c[i] * r[i + 1];
  }
  r[0] = x0;
}

// Merge the reduced equations of two adjacent pieces (A left of B): eliminate A's last
// and B's first unknown (a 2..4-row chunk reduce).
template <class T, class Team> SG_HD tp_node<T> tp_merge(Team &tm, const tp_node<T> &A, const tp_node<T> &B, T tol, long long row)
{
  if (B.cnt == 0) return A;
  if (A.cnt == 0) return B;
  if (A.cnt == 2 && B.cnt == 2) {
    // The common case, in closed form: A.e1 and B.e0 give (x_last of A, x_first of B) in terms of
    // (x_first of A, x_last of B) through their 2x2 block [[e1.b, e1.c], [f0.a, f0.b]], which is
    // substituted into A.e0 and B.e1. One division (1/det) instead of the three dependent ones of
    // the 4-row chunk reduction: the merge tree is the critical path of a REDUCE tile. Same
    // breakdown checks: rows 1, 2, 3 of that reduction have the pivots e1.b, det/e1.b (scaled
    // here by e1.b) and the new e1.b.
    const tp_eq<T> &e0 = A.e0, &e1 = A.e1, &f0 = B.e0, &f1 = B.e1;
    tp_check_pivot(tm, e1.a, e1.b, e1.c, tol, row);
    const T    det = e1.b * f0.b - e1.c * f0.a;
    const T    g   = tp_inv(tm, e1.b * f0.a, det, e1.b * f0.c, tol, row);
    const T    ce  = e0.c * g, pf = f1.a * g;
    tp_node<T> o;
    o.cnt = 2;
    o.e0  = {e0.a, e0.b - ce * f0.b * e1.a, ce * e1.c * f0.c, e0.d - ce * (f0.b * e1.d - e1.c * f0.d)};
    o.e1  = {pf * f0.a * e1.a, f1.b - pf * e1.b * f0.c, f1.c, f1.d - pf * (e1.b * f0.d - f0.a * e1.d)};
    tp_check_pivot(tm, f1.a, o.e1.b, f1.c, tol, row);
    return o;
  }
  const bool two = A.cnt == 2;
  const tp_eq<T> q0 = A.e0, q1 = two ? A.e1 : B.e0, q2 = two ? B.e0 : B.e1, q3 = B.e1;
  T a[4] = {q0.a, q1.a, q2.a, q3.a}, b[4] = {q0.b, q1.b, q2.b, q3.b}, c[4] = {q0.c, q1.c, q2.c, q3.c}, r[4] = {q0.d, q1.d, q2.d, q3.d};
  tp_node<T> o;
  o.cnt = tp_chunk_reduce<4>(tm, a, b, c, r, A.cnt + B.cnt, tol, row, 0, o.e0, o.e1);
  return o;
}

// ---------------------------------------------------------------- PCR on interface eqs
// The interface equations travel between the team's threads divided by their diagonal (b = 1,
// not stored): each thread forms the reciprocal of its own equation's pivot once, before the
// barrier, and checks it (tp_inv) at that equation's row, instead of every reader dividing by its
// neighbours' pivots after the barrier (two reciprocals and two checks per step, each pivot formed
// by both of its readers). The set of (row, pivot) checked is the same: with a power-of-two team
// every equation of a PCR step is some thread's neighbour, and e1_j is chunk j's own right
// neighbour in the even/odd step. A PCR step then updates the thread's own unit equation (the
// same equation scaled by 1/b), so the raw one is dead once it has been divided.
template <class T, class Team> SG_HD tp_eq<T> tp_eq_unit(Team &tm, const tp_eq<T> &e, T tol, long long row)
{
  const T v = tp_inv(tm, e.a, e.b, e.c, tol, row);
  return {e.a * v, (T)1, e.c * v, e.d * v};
}
// One PCR step for equation e with unit neighbours L (distance -s) and R (distance +s).
template <class T> SG_HD tp_eq<T> tp_pcr_step(const tp_eq<T> &e, bool hasL, const tp_eq<T> &L, bool hasR, const tp_eq<T> &R)
{
  tp_eq<T> o = {0, e.b, 0, e.d};
  if (hasL) { o.a = -L.a * e.a; o.b -= L.c * e.a; o.d -= L.d * e.a; }
  if (hasR) { o.c = -R.c * e.c; o.b -= R.a * e.c; o.d -= R.d * e.c; }
  return o;
}
template <class T, class Team> SG_HD T tp_pcr_x(Team &tm, const tp_eq<T> &e, T tol, long long row)
{
  return e.d * tp_inv(tm, e.a, e.b, e.c, tol, row);
}
// x_last of a chunk from its unit e1 (x_first, x_last, x_first of the next chunk).
template <class T> SG_HD T tp_last_x(const tp_eq<T> &u1, T xf, T xf_next) { return u1.d - u1.a * xf - u1.c * xf_next; }
// The division form (every reader divides by its neighbours' pivots; raw equations exchanged):
// kept by the two kernel instances where the unit form measured slower (tp_team_solve<.., false>,
// tri_tpcr_cuda.cu). Same checks, same rows.
template <class T, class Team>
SG_HD tp_eq<T> tp_pcr_step_div(Team &tm, const tp_eq<T> &e, bool hasL, const tp_eq<T> &L, bool hasR, const tp_eq<T> &R, T tol, long long rowL,
                               long long rowR)
{
  tp_eq<T> o = {0, e.b, 0, e.d};
  if (hasL) {
    const T k = e.a * tp_inv(tm, L.a, L.b, L.c, tol, rowL);
    o.a = -L.a * k; o.b -= L.c * k; o.d -= L.d * k;
  }
  if (hasR) {
    const T k = e.c * tp_inv(tm, R.a, R.b, R.c, tol, rowR);
    o.c = -R.c * k; o.b -= R.a * k; o.d -= R.d * k;
  }
  return o;
}
template <class T, class Team> SG_HD T tp_last_x_div(Team &tm, const tp_eq<T> &e1, T xf, T xf_next, T tol, long long row)
{
  return (e1.d - e1.a * xf - e1.c * xf_next) * tp_inv(tm, e1.a, e1.b, e1.c, tol, row);
}

// Result check: flags the first non-finite x of rows [g0, te).
template <int Q, class T, class Team> SG_HD void tp_check_x(Team &tm, const T (&x)[Q], long long g0, long long te)
{
  T z = 0;
TP_UNROLL
  for (int i = 0; i < Q; i++) z += g0 + i < te ? x[i] - x[i] : (T)0;
  if (!(z == (T)0)) {
TP_UNROLL
    for (int i = 0; i < Q; i++)
      if (g0 + i < te && !tri_finite(x[i])) { tm.fail(SG_FAIL_RESULT, g0 + i, (double)x[i]); break; }
  }
}

// Output check of a reduced equation (sg_tri_block_reduce returns them).
template <class T, class Team> SG_HD void tp_check_eq(Team &tm, const tp_eq<T> &e, long long row)
{
  const T z = (e.a - e.a) + (e.b - e.b) + (e.c - e.c) + (e.d - e.d);
  if (!(z == (T)0)) tm.fail(SG_FAIL_RESULT, row, (double)(tri_finite(e.b) ? e.d : e.b));
}

// ---------------------------------------------------------------- level drivers
// Executor interface (host: tri_tpcr_host.cpp, device: tri_tpcr_cuda.cu):
//   ex.solve(S, plan, tol)   SOLVE every tile (FINISH when S.xr is set)
//   ex.reduce(S, plan, tol, rdl, rd, rdu, rb, rss, rrs)  REDUCE every tile; tile t's
//        equations go to elements (s, 2t), (s, 2t+1) at s*rss + k*rrs
//   ex.ok()  false once a launch failed (device errors; stop early)
//   ex.fused(S, R, plan, tol)  true if it solved S whole (REDUCE into R's arrays, R, FINISH) in
//        one pass of its own (CUDA, tp_fuse_plan plans); false: the levels run one by one
template <class T, class Ex> void tp_solve_levels(Ex &ex, const tp_sys<T> &S, T tol, T *work)
{
  const int     layout = S.inter ? SG_TRI_INTERLEAVED : SG_TRI_CONTIGUOUS;
  const tp_plan p = tp_make_plan<T>(layout, S.m, S.nbatch);
  if (p.ntiles == 1) { ex.solve(S, p, tol); return; }
  const long long nr = p.mr * S.nbatch;
  T *rdl = work, *rd = work + nr, *rdu = work + 2 * nr, *rb = work + 3 * nr;
  tp_sys<T> R = S;
  R.dl = rdl; R.d = rd; R.du = rdu; R.b = rb; R.x = rb;  // the reduced x overwrites its b
  R.m = p.mr;
  tp_reduced_strides(layout, p.mr, S.nbatch, R.ss, R.rs);
  R.endmode = TP_END_ZERO;  // the system's own ends were zeroed or folded by the reduce
  R.xr = nullptr;
  R.rscale = S.rscale * (p.tile / 2);
  R.user   = false;
  if (ex.fused(S, R, p, tol)) return;  // CUDA: REDUCE, reduced solve and FINISH in one kernel
  ex.reduce(S, p, tol, rdl, rd, rdu, rb, R.ss, R.rs);
  if (!ex.ok()) return;
  tp_solve_levels(ex, R, tol, work + 4 * nr);
  if (!ex.ok()) return;
  tp_sys<T> F = S;
  F.xr = rb; F.xss = R.ss; F.xrs = R.rs;
  F.checked = true;  // the REDUCE read and checked every row already
  ex.solve(F, p, tol);
}

// Reduce one system (nbatch = 1, contiguous) to its min(m, 2) interface equations, level by
// level (TP_END_KEEP: external couplings kept). Returns the count; the equations are
// elements (*out)[v*cnt + e] for equation e, value v = 0..3 (lower, diag, upper, rhs).
template <class T, class Ex> int tp_reduce_levels(Ex &ex, tp_sys<T> S, T tol, T *work, T **out)
{
  for (;;) {
    const tp_plan   p  = tp_make_plan<T>(SG_TRI_CONTIGUOUS, S.m, 1);
    const long long mr = p.ntiles > 1 ? p.mr : (S.m < 2 ? S.m : 2);
    T *rdl = work, *rd = work + mr, *rdu = work + 2 * mr, *rb = work + 3 * mr;
    ex.reduce(S, p, tol, rdl, rd, rdu, rb, mr, 1);
    if (!ex.ok() || p.ntiles == 1) { *out = work; return (int)mr; }
    S.dl = rdl; S.d = rd; S.du = rdu; S.b = rb; S.x = nullptr;
    S.m = mr; S.ss = mr; S.rs = 1;
    S.rscale *= p.tile / 2;
    S.user = false;
    work += 4 * mr;
  }
}
