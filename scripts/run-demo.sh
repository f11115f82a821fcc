#!/usr/bin/env bash
# The main demo: builds everything if needed, then solves a strongly anisotropic diffusion
# problem with StructGPU's line solver selected from the options database, on the GPU when
# one is present, else on the host (it says which).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export STRUCTGPU_BUILD=$("$here/scripts/build.sh" | tail -n 1)
exec bash "$here/examples/demo.sh" "$@"
