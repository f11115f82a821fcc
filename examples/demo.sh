#!/usr/bin/env bash
# StructGPU main demo: strongly anisotropic diffusion -div(K grad u) = f, K = diag(1, eps),
# on a 513 x 513 grid (257 x 257 on the host) with eps = 1e-4, solved by CG preconditioned
# with StructGPU's line solver (PCTRIDIAG, x-lines), chosen purely from options; point Jacobi
# for comparison; then ADI (two PCTRIDIAG in a PCCOMPOSITE) on a variable coefficient.
# On the GPU (-dm_vec_type cuda -dm_mat_type aijcusparse) when `nvidia-smi -L` lists one,
# else on the host. Each run checks itself (converged, max error <= 2 h^2).
#
#   examples/demo.sh [extra PETSc options]      build dir: ${STRUCTGPU_BUILD:-build}
#   DEMO_N=1025 DEMO_EPS=1e-5 examples/demo.sh -log_view
set -euo pipefail
BUILD=${STRUCTGPU_BUILD:-build}
EXE=$BUILD/examples/adi_aniso
EPS=${DEMO_EPS:-1e-4}
if [ ! -x "$EXE" ]; then
  echo "demo: $EXE not found: build first (cmake -S . -B $BUILD -DPETSC_DIR=... && cmake --build $BUILD)" >&2
  exit 1
fi
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  where="the GPU ($(nvidia-smi -L | head -n 1))"
  dev=(-dm_vec_type cuda -dm_mat_type aijcusparse)
  N=${DEMO_N:-513}
else
  where="the host (no GPU found by nvidia-smi)"
  dev=()
  N=${DEMO_N:-257} # the point-Jacobi comparison takes ~half a minute at 513 on a small host
fi
common=(-n "$N" -eps "$EPS" -ksp_type cg "${dev[@]}")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

echo "== StructGPU demo on $where: ${N}x${N} grid, K = diag(1, $EPS)"
echo
echo "-- 1. StructGPU line relaxation along the strong direction (options only):"
echo "   $EXE ${common[*]} -pc_type tridiag -pc_tridiag_mode lines -pc_tridiag_direction 0 $*"
"$EXE" "${common[@]}" -pc_type tridiag -pc_tridiag_mode lines -pc_tridiag_direction 0 "$@"
echo
echo "-- 2. the same problem with point Jacobi, for comparison:"
echo "   $EXE ${common[*]} -pc_type jacobi $*"
"$EXE" "${common[@]}" -pc_type jacobi "$@"
echo
adi=(-coef swap -adi -pc_composite_type symmetric_multiplicative)
echo "-- 3. ADI where the strong direction turns from y (x < 1/2) to x (x > 1/2): x-lines, y-lines,"
echo "      x-lines (symmetric PCCOMPOSITE of two PCTRIDIAG), CG:"
echo "   $EXE ${common[*]} ${adi[*]} $*"
"$EXE" "${common[@]}" "${adi[@]}" "$@"
echo
echo "== demo done: all runs converged and met the h^2 error check"
