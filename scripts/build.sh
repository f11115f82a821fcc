#!/usr/bin/env bash
# Build StructGPU (and PETSc first, if needed) into ${STRUCTGPU_BUILD:-build}.
#   scripts/build.sh [extra cmake args...]
# Environment: PETSC_DIR/PETSC_ARCH (honoured), STRUCTGPU_CACHE, STRUCTGPU_CUDA=0|1,
# CMAKE_CUDA_ARCHITECTURES (default 90).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
say() { printf '[build %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
PETSC_DIR=$("$here/scripts/setup-petsc.sh" | tail -n 1)
export PETSC_DIR
BUILD=${STRUCTGPU_BUILD:-$here/build}
case "$BUILD" in /*) ;; *) BUILD=$here/$BUILD ;; esac
args=(-S "$here" -B "$BUILD" -DPETSC_DIR="$PETSC_DIR" -DPETSC_ARCH="${PETSC_ARCH:-}" -DCMAKE_BUILD_TYPE=Release)
[ -n "${CMAKE_CUDA_ARCHITECTURES:-}" ] && args+=(-DCMAKE_CUDA_ARCHITECTURES="$CMAKE_CUDA_ARCHITECTURES")
[ "${STRUCTGPU_CUDA:-}" = 0 ] && args+=(-DSTRUCTGPU_ENABLE_CUDA=OFF)
say "configuring StructGPU in $BUILD (PETSC_DIR=$PETSC_DIR)"
cmake "${args[@]}" "$@" >&2
say "compiling (first build: a few minutes for the CUDA kernels)"
cmake --build "$BUILD" -j"$(nproc)" >&2
say "built $BUILD/libstructgpu.so"
echo "$BUILD"
