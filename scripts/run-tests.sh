#!/usr/bin/env bash
# THE test command (README, .ci/run): set up everything on a fresh Debian machine
# (packages, PETSc 3.26.1, our build) and run the whole test suite on the host path.
#   bash scripts/run-tests.sh            # all host tests (kernels, PETSc/MPI, dll loading, examples)
#   STRUCTGPU_TEST_GPU=1 bash scripts/run-tests.sh   # also the GPU variants (needs a GPU)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
extra=()
[ "${STRUCTGPU_TEST_GPU:-0}" = 1 ] && extra+=(-DSTRUCTGPU_TEST_GPU=ON)
BUILD=$("$here/scripts/build.sh" "${extra[@]}" | tail -n 1)
echo "[tests $(date +%H:%M:%S)] running ctest in $BUILD" >&2
cd "$BUILD"
label=${STRUCTGPU_TEST_LABEL:-}
if [ -n "$label" ]; then ctest --output-on-failure -j2 -L "$label"; else ctest --output-on-failure -j2; fi
