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
// Resident blocks per SM of the contiguous streaming kernel (tp_stream_kernel) at its largest single tile (m = 4096:
// 512 threads double, 256 float), word = 8 / 4, kind 0 SOLVE, 1 REDUCE, 2 FINISH; -1 if the query fails. The GPU
// tests hold it to the design (float 2, double 1): a register regression (da58e01's launch bounds: 150 registers,
// 1 float block per SM) cost 4-29 % and failed no other test (bench/tri/README.md, ninth H200 session).
int sg_tri_tpcr_stream_blocks_per_sm(int word, int kind);

// Common prologues of the block primitives' host and CUDA twins: clear rep, check the
// context (CUDA twin: a CUDA context), the algorithm, sizes and pointers; the solve
// prologue resolves SG_TRI_AUTO for `backend`.
sg_status sg_tri_block_reduce_begin(sg_ctx *ctx, sg_backend backend, sg_precision prec, long long n, const void *dl, const void *d,
                                    const void *du, const void *b, double iface[8], int *k, sg_report *rep);
sg_status sg_tri_block_solve_begin(sg_ctx *ctx, sg_backend backend, sg_tri_alg *alg, sg_precision prec, long long n, const void *dl,
                                   const void *d, const void *du, const void *b, void *x, sg_report *rep);
