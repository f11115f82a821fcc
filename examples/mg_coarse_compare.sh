#!/usr/bin/env bash
# mg_coarse_compare.sh: when does StructGPU's dense LU (PCDENSELU) beat PETSc's sparse LU as the coarse
# solve of PCMG? Runs examples/mg_coarse (2D Poisson, CG + PCMG with -pc_mg_levels 3, Chebyshev/Jacobi
# smoothing) for several coarse grids, on 1 and 4 ranks, with host vectors and, when `nvidia-smi -L`
# lists a GPU, with CUDA vectors (-dm_vec_type cuda -dm_mat_type aijcusparse), and prints one table row
# per run: coarse unknowns, ranks, vectors, coarse solver, CG iterations, coarse solves, time per
# coarse solve (PCMG's "MGSmooth Level 0" event of the timed solve), the LU factorization (log events
# SGLUFactor or MatLUFactorSym + MatLUFactorNum, wherever they happen: PCREDUNDANT factors at the first
# solve), and the whole KSPSolve (after one untimed warm-up solve).
#
# Coarse solvers: denselu (StructGPU, gathered on rank 0); lu (PETSc sparse LU; on several ranks, where
# PETSc's native LU is sequential, the same on one rank through PCTELESCOPE: telescope+lu); redundant+lu
# (PETSc's default coarse solve in parallel: the coarse matrix on every rank, LU everywhere).
#
#   examples/mg_coarse_compare.sh [extra options for every run]   build dir: ${STRUCTGPU_BUILD:-build}
#   MG_SIZES="17 33 65" MG_NPS="1 4" MG_LEVELS=3 MG_VECS="host cuda" examples/mg_coarse_compare.sh
# Coarse grid side c gives c^2 coarse unknowns and a fine grid of (c-1) 2^(L-1) + 1 points per side.
set -uo pipefail
BUILD=${STRUCTGPU_BUILD:-build}
EXE=$BUILD/examples/mg_coarse
MPIEXEC=${MPIEXEC:-mpiexec}
LEVELS=${MG_LEVELS:-3}
NPS=${MG_NPS:-"1 4"}
if [ ! -x "$EXE" ]; then
  echo "mg_coarse_compare: $EXE not found: build first (cmake -S . -B $BUILD -DPETSC_DIR=... && cmake --build $BUILD)" >&2
  exit 1
fi
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  VECS=${MG_VECS:-"host cuda"}
  SIZES=${MG_SIZES:-"17 33 65 129"}
else
  VECS=${MG_VECS:-host}
  SIZES=${MG_SIZES:-"17 33 65"} # dense LU of 129^2 = 16641 unknowns takes minutes on a small host
fi
mpiflags=()
"$MPIEXEC" --version 2>/dev/null | grep -Eq "Open MPI|OpenRTE" && mpiflags+=(--oversubscribe)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

printf '%-8s %-3s %-5s %-14s %4s %7s %14s %12s %12s\n' "coarse_n" "np" "vec" "coarse solver" "its" "solves" "ms/coarse-sol" "factor-s" "KSPSolve-s"
fail=0
for vec in $VECS; do
  dev=()
  [ "$vec" = cuda ] && dev=(-dm_vec_type cuda -dm_mat_type aijcusparse -use_gpu_aware_mpi 0)
  for np in $NPS; do
    for c in $SIZES; do
      if [ "$np" -gt 1 ]; then lu=(-mg_coarse_pc_type telescope -mg_coarse_pc_telescope_reduction_factor "$np" -mg_coarse_telescope_pc_type lu)
      else lu=(-mg_coarse_pc_type lu); fi
      for variant in denselu lu redundant; do
        case $variant in
          denselu) opts=(-mg_coarse_pc_type denselu) ;;
          lu) opts=("${lu[@]}") ;;
          redundant) opts=(-mg_coarse_pc_type redundant -mg_coarse_redundant_pc_type lu) ;;
        esac
        out=$("$MPIEXEC" -n "$np" "${mpiflags[@]}" "$EXE" -coarse_n "$c" -pc_mg_levels "$LEVELS" "${opts[@]}" "${dev[@]}" "$@" 2>&1)
        rc=$?
        res=$(printf '%s\n' "$out" | grep '^RESULT' | tail -n 1)
        if [ $rc -ne 0 ] || [ -z "$res" ]; then
          printf '%-8s %-3s %-5s %-14s FAILED (exit %d)\n' "$((c * c))" "$np" "$vec" "$variant" "$rc"
          printf '%s\n' "$out" | tail -n 5 | sed 's/^/    | /'
          fail=1
          continue
        fi
        get() { printf '%s\n' "$res" | sed -n "s/.* $1=\([^ ]*\).*/\1/p"; }
        printf '%-8s %-3s %-5s %-14s %4s %7s %14.4f %12.4f %12.4f\n' "$(get coarse_n)" "$np" "$(get vec)" "$(get coarse)" "$(get its)" \
          "$(get coarse_solves)" "$(awk -v t="$(get coarse_apply_s)" 'BEGIN{print 1000*t}')" "$(get factor_s)" "$(get solve_s)"
      done
    done
  done
done
exit $fail
