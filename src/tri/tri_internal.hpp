// Internal declarations shared by the tridiagonal kernel files (no PETSc).
#pragma once
#include "sys/sg_ctx.hpp"

// Validation common to every batch entry point (host and CUDA): sizes, strides,
// pointers. Returns SG_OK or SG_ERR_ARG with rep->msg filled.
sg_status sg_tri_batch_check(const sg_tri_batch *B, sg_report *rep);

// Common prologue of sg_tri_batch_solve_host/_cuda: clears rep, checks ctx (and, for the
// CUDA twin, its backend), the algorithm and the batch, resolves SG_TRI_AUTO for `backend`.
sg_status sg_tri_batch_begin(sg_ctx *ctx, sg_backend backend, sg_tri_alg *alg, const sg_tri_batch *B, sg_report *rep);

// TPCR (register-blocked partition + PCR) and the multi-level partitioned solver for
// large systems: src/tri/tri_tpcr_host.cpp and src/tri/tri_tpcr_cuda.cu.
// Called by the dispatchers in tri_host.cpp / tri_cuda.cu after sg_tri_batch_check.
sg_status sg_tri_tpcr_solve_host(sg_ctx *ctx, const sg_tri_batch *B, double pivtol, sg_report *rep);
sg_status sg_tri_tpcr_solve_cuda(sg_ctx *ctx, const sg_tri_batch *B, double pivtol, sg_report *rep);

// Common prologues of the block primitives' host and CUDA twins: clear rep, check the
// context (CUDA twin: a CUDA context), the algorithm, sizes and pointers; the solve
// prologue resolves SG_TRI_AUTO for `backend`.
sg_status sg_tri_block_reduce_begin(sg_ctx *ctx, sg_backend backend, sg_precision prec, long long n, const void *dl, const void *d,
                                    const void *du, const void *b, double iface[8], int *k, sg_report *rep);
sg_status sg_tri_block_solve_begin(sg_ctx *ctx, sg_backend backend, sg_tri_alg *alg, sg_precision prec, long long n, const void *dl,
                                   const void *d, const void *du, const void *b, void *x, sg_report *rep);
