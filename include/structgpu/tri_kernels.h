/*
   StructGPU tridiagonal kernel family: plain C interface, no PETSc types.

   Every operation exists twice with the same signature: a host reference twin
   (suffix _host, C++ in src/tri/tri_host.cpp) and a CUDA version (suffix _cuda,
   src/tri/tri_cuda.cu, pointers are device pointers). sg_tri_*() without suffix
   dispatch on the context's backend. Status codes are returned; the PETSc glue turns
   them into PETSc errors (src/sys/sgpetsc.c).

   Conventions (same as cuSPARSE gtsv2): a system of m unknowns is
       dl[i] x[i-1] + d[i] x[i] + du[i] x[i+1] = b[i],   i = 0..m-1
   stored in three length-m arrays; dl[0] and du[m-1] are ignored (treated as 0)
   except by the *block* routines below, where they couple to external neighbours.
*/
#ifndef STRUCTGPU_TRI_KERNELS_H
#define STRUCTGPU_TRI_KERNELS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  SG_OK              = 0,
  SG_ERR_ARG         = 1, /* bad argument: size, stride, null pointer, precision */
  SG_ERR_ZERO_PIVOT  = 2, /* a pivot / divisor was zero or tiny relative to its row */
  SG_ERR_NONFINITE   = 3, /* input or result contained Inf or NaN */
  SG_ERR_MEM         = 4, /* allocation failed */
  SG_ERR_DEVICE      = 5, /* CUDA runtime/launch error, or CUDA path not built */
  SG_ERR_UNSUPPORTED = 6  /* valid request this build/backend cannot do (also: rd on a system that
                             is not diagonally dominant, which it cannot solve accurately) */
} sg_status;

typedef enum { SG_BACKEND_HOST = 0, SG_BACKEND_CUDA = 1 } sg_backend;
typedef enum { SG_REAL64 = 0, SG_REAL32 = 1 } sg_precision;

typedef enum {
  SG_TRI_AUTO = 0,  /* choose from size and batch count (sg_tri_choose)               */
  SG_TRI_THOMAS,    /* Gaussian elimination w/o pivoting; GPU: one thread per system */
  SG_TRI_CR,        /* cyclic reduction (shared memory on the GPU)                   */
  SG_TRI_PCR,       /* parallel cyclic reduction                                     */
  SG_TRI_RD,        /* recursive doubling (Stone), scans with normalisation; needs a
                       diagonally dominant system (else SG_ERR_UNSUPPORTED naming the row) */
  SG_TRI_CR_PCR,    /* CR down to an intermediate system, PCR on it, CR back         */
  SG_TRI_CR_RD,     /* CR down to an intermediate system, RD on it, CR back          */
  SG_TRI_TPCR,      /* ours: register-blocked partition (Thomas per thread chunk)
                       + PCR on the chunk interface system in shared memory          */
  SG_TRI_NUM_ALGS
} sg_tri_alg;

typedef enum {
  SG_TRI_CONTIGUOUS  = 0, /* row i of system s at  s*ld + i  (ld >= m)        */
  SG_TRI_INTERLEAVED = 1  /* row i of system s at  i*ld + s  (ld >= nbatch)   */
} sg_tri_layout;

/* A batch of independent tridiagonal systems, all of size m. x may alias b. */
typedef struct {
  sg_precision  prec;
  sg_tri_layout layout;
  long long     m;      /* unknowns per system, >= 1 (may be millions)  */
  long long     nbatch; /* number of systems, >= 1                      */
  long long     ld;     /* see sg_tri_layout                            */
  const void   *dl, *d, *du, *b;
  void         *x;
} sg_tri_batch;

/* Filled by every solve; status repeated as return value. */
typedef struct {
  sg_status  status;
  sg_tri_alg alg;        /* algorithm actually used (AUTO resolved)               */
  long long  system;     /* system index where breakdown was found, else -1       */
  long long  row;        /* row index within that system (best effort), else -1  */
  double     value;      /* offending pivot value when status==ZERO_PIVOT         */
  char       msg[200];   /* one sentence a user can act on                        */
} sg_report;

/* Execution context: backend, CUDA stream (cudaStream_t as void*, NULL = default),
   cached workspaces (host or device) and a device flag word for breakdown reports. */
typedef struct sg_ctx_s sg_ctx;
sg_status sg_ctx_create(sg_backend backend, void *stream, sg_ctx **ctx);
void      sg_ctx_destroy(sg_ctx **ctx);
sg_backend sg_ctx_backend(const sg_ctx *ctx);
int        sg_cuda_available(void); /* 1 if built with CUDA and a device is usable */
/* Deferred breakdown checks (CUDA contexts; no effect on host contexts). By default every
   solve synchronises its stream to return the breakdown status. With on != 0, solves only
   queue their kernels and return SG_OK (launch errors still show at once); breakdowns are
   recorded on the device and returned by the next sg_ctx_check(), which synchronises. Use it
   for back-to-back solves whose results are checked together (benchmarks, pipelines). */
sg_status  sg_ctx_set_deferred(sg_ctx *ctx, int on);
sg_status  sg_ctx_check(sg_ctx *ctx, sg_report *rep);
/* The device's L2 fetch granularity (CUDA contexts; cudaLimitMaxL2FetchGranularity, a hint the
   driver may round or ignore): on an L2 miss the GPU reads at least this many bytes from DRAM
   (64 by default on Hopper). With 32 it reads only the 32-byte sectors asked for, and the batched
   triangular solves of order 16 with lda = 16 (sg_trsv_batch_solve) then read only their triangles'
   sectors: on an H200, 1.10-1.21x faster (bench/trsv/README.md). The limit is device-wide: it applies to every kernel that later runs on
   the current device, the library's and any other's, so the library never changes it unless asked:
   here, or by the environment variable SG_L2_FETCH=<bytes>, applied (to the current device) when the
   process creates its first CUDA context. Each change costs ~0.1-0.2 ms of host time. bytes: 0..128; *prev (may be
   NULL) receives the value before. Host contexts: no effect (*prev = 0). */
sg_status  sg_ctx_set_l2_fetch(sg_ctx *ctx, int bytes, int *prev);

/* Names: "auto","thomas","cr","pcr","rd","cr_pcr","cr_rd","tpcr" */
const char *sg_tri_alg_name(sg_tri_alg alg);
const char *sg_status_string(sg_status s);

/* Automatic choice (measured crossovers, see bench/tri/CROSSOVERS.md). */
sg_tri_alg sg_tri_choose(sg_backend backend, sg_precision prec, sg_tri_layout layout, long long m, long long nbatch);

/* Solve a batch. pivtol: breakdown when |pivot| <= pivtol * (|dl|+|d|+|du| of that
   equation) or a value is not finite; pivtol <= 0 selects the default (100*eps of prec).
   Any algorithm accepts any m >= 1 and any layout (internally transposing/padding as
   needed). On error x may hold partial results, never the input is modified. */
sg_status sg_tri_batch_solve_host(sg_ctx *ctx, sg_tri_alg alg, const sg_tri_batch *B, double pivtol, sg_report *rep);
sg_status sg_tri_batch_solve_cuda(sg_ctx *ctx, sg_tri_alg alg, const sg_tri_batch *B, double pivtol, sg_report *rep);
sg_status sg_tri_batch_solve(sg_ctx *ctx, sg_tri_alg alg, const sg_tri_batch *B, double pivtol, sg_report *rep);

/* ---- Partitioned ("block") primitives: one contiguous block of n rows of a larger
   tridiagonal system (PCSPIKE with half-bandwidth 1 reuses these). Here dl[0]
   couples row 0 to the external unknown x_prev, du[n-1] couples row n-1 to x_next.

   sg_tri_block_reduce: eliminate the interior rows, giving k = min(n,2) interface
   equations written to iface (host memory, always double, 4 values per equation:
   {lower, diag, upper, rhs}):
     n >= 2: eq0: lower*x_prev  + diag*x_first + upper*x_last = rhs
             eq1: lower*x_first + diag*x_last  + upper*x_next = rhs
     n == 1: eq0: lower*x_prev  + diag*x_0     + upper*x_next = rhs
   Concatenating the interface equations of consecutive blocks (in block order) gives
   a tridiagonal system in the unknowns (first_0,last_0,first_1,last_1,...).
   *k is set to the number of equations written. */
sg_status sg_tri_block_reduce_host(sg_ctx *ctx, sg_precision prec, long long n, const void *dl, const void *d, const void *du, const void *b, double pivtol, double iface[8], int *k, sg_report *rep);
sg_status sg_tri_block_reduce_cuda(sg_ctx *ctx, sg_precision prec, long long n, const void *dl, const void *d, const void *du, const void *b, double pivtol, double iface[8], int *k, sg_report *rep);
sg_status sg_tri_block_reduce(sg_ctx *ctx, sg_precision prec, long long n, const void *dl, const void *d, const void *du, const void *b, double pivtol, double iface[8], int *k, sg_report *rep);

/* sg_tri_block_solve: solve the block's rows given the external neighbour values:
   b'[0] = b[0] - dl[0]*x_prev, b'[n-1] = b[n-1] - du[n-1]*x_next, then the block as an
   independent system with algorithm alg. x may alias b (b is then overwritten). */
sg_status sg_tri_block_solve_host(sg_ctx *ctx, sg_tri_alg alg, sg_precision prec, long long n, const void *dl, const void *d, const void *du, const void *b, double x_prev, double x_next, void *x, double pivtol, sg_report *rep);
sg_status sg_tri_block_solve_cuda(sg_ctx *ctx, sg_tri_alg alg, sg_precision prec, long long n, const void *dl, const void *d, const void *du, const void *b, double x_prev, double x_next, void *x, double pivtol, sg_report *rep);
sg_status sg_tri_block_solve(sg_ctx *ctx, sg_tri_alg alg, sg_precision prec, long long n, const void *dl, const void *d, const void *du, const void *b, double x_prev, double x_next, void *x, double pivtol, sg_report *rep);

/* Host reference: solve a small tridiagonal system held in double (used for the
   interface system of the block method). In-place, no pivoting. */
sg_status sg_tri_thomas_ref(long long n, const double *dl, const double *d, const double *du, double *bx, double pivtol, sg_report *rep);

#ifdef __cplusplus
}
#endif
#endif
