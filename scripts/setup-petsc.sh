#!/usr/bin/env bash
# Set up a fresh Debian 12 machine for StructGPU and build PETSc 3.26.1 once.
#
#   scripts/setup-petsc.sh            # CUDA build when nvcc is found, else CPU-only
#   STRUCTGPU_CUDA=0 scripts/setup-petsc.sh   # force the CPU-only variant
#
# Honours an existing PETSC_DIR (and PETSC_ARCH): if $PETSC_DIR/$PETSC_ARCH holds a
# built PETSc, nothing is built. Otherwise PETSc is installed into a fixed cache path
# outside the repo, $STRUCTGPU_CACHE (default ~/.cache/structgpu), and reused by later
# runs. On success the last line printed is the PETSC_DIR to use, and the file
# $STRUCTGPU_CACHE/petsc.env is written (source it).
set -euo pipefail
say() { printf '[setup %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

PETSC_VERSION=3.26.1
CACHE=${STRUCTGPU_CACHE:-$HOME/.cache/structgpu}
CUDA_DIR=${CUDA_DIR:-/usr/local/cuda}
if [ -z "${STRUCTGPU_CUDA:-}" ]; then
  if [ -x "$CUDA_DIR/bin/nvcc" ]; then STRUCTGPU_CUDA=1; else STRUCTGPU_CUDA=0; fi
fi
CUDA_ARCH=${STRUCTGPU_CUDA_ARCH:-90}
NP=${STRUCTGPU_MAKE_NP:-$(nproc)}
mkdir -p "$CACHE"

# 1. Existing PETSc wins.
if [ -n "${PETSC_DIR:-}" ]; then
  if [ -f "$PETSC_DIR/${PETSC_ARCH:-}/lib/petsc/conf/petscvariables" ] || [ -f "$PETSC_DIR/lib/petsc/conf/petscvariables" ]; then
    say "using existing PETSC_DIR=$PETSC_DIR PETSC_ARCH=${PETSC_ARCH:-<prefix install>}"
    echo "$PETSC_DIR"; exit 0
  fi
  say "PETSC_DIR=$PETSC_DIR does not hold a built PETSc; building our own"
fi

# 2. System packages (Debian's OpenMPI and OpenBLAS, pkg-config, plotting for bench).
need=()
command -v mpicc >/dev/null || need+=(libopenmpi-dev openmpi-bin)
[ -e /usr/lib/x86_64-linux-gnu/libopenblas.so ] || need+=(libopenblas-dev)
[ -e /usr/lib/x86_64-linux-gnu/liblapack.so ] || need+=(liblapack-dev)
command -v pkg-config >/dev/null || need+=(pkg-config)
command -v cmake >/dev/null || need+=(cmake)
command -v valgrind >/dev/null || need+=(valgrind)
if [ ${#need[@]} -gt 0 ]; then
  say "installing Debian packages: ${need[*]}"
  SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
fi

if [ "$STRUCTGPU_CUDA" = 1 ]; then VARIANT=cuda-opt; else VARIANT=cpu-opt; fi
PREFIX=$CACHE/petsc-$PETSC_VERSION-$VARIANT
if [ -f "$PREFIX/.structgpu-complete" ]; then
  say "reusing cached PETSc $PETSC_VERSION ($VARIANT) at $PREFIX"
  printf 'export PETSC_DIR=%s\nexport PETSC_ARCH=\n' "$PREFIX" > "$CACHE/petsc.env"
  echo "$PREFIX"; exit 0
fi

# 3. nvml.h from PyPI (PETSc's optional -with-cuda-nvml; 3.26.1 leaves it off by default,
#    and the wheel holds only the header, so no libnvidia-ml stub is linked).
if [ "$STRUCTGPU_CUDA" = 1 ] && [ ! -f "$CACHE/nvml/nvidia/cu13/include/nvml.h" ]; then
  say "fetching nvml.h (PyPI nvidia-nvml-dev)"
  python3 -m pip install -q --no-deps --target "$CACHE/nvml" "nvidia-nvml-dev==13.0.*" >&2 || say "nvidia-nvml-dev unavailable (optional)"
fi

# 4. PETSc sdist from PyPI.
SRC=$CACHE/src/petsc-$PETSC_VERSION
if [ ! -f "$SRC/configure" ]; then
  say "downloading PETSc $PETSC_VERSION sdist from PyPI"
  mkdir -p "$CACHE/src" "$CACHE/dl"
  # the sdist (pip prepares its metadata in an isolated build env, which needs the index)
  [ -f "$CACHE/dl/petsc-$PETSC_VERSION.tar.gz" ] || \
    python3 -m pip download -q --no-deps --no-binary :all: "petsc==$PETSC_VERSION" -d "$CACHE/dl" >&2
  tar -C "$CACHE/src" -xzf "$CACHE/dl/petsc-$PETSC_VERSION.tar.gz"
fi

ARCH=arch-structgpu-$VARIANT
opts=(--with-cc=mpicc --with-cxx=mpicxx --with-fc=0 --with-debugging=0
      --with-shared-libraries=1 --with-x=0 --with-blaslapack-lib=-lopenblas
      --with-make-np="$NP" --prefix="$PREFIX"
      COPTFLAGS=-O2 CXXOPTFLAGS=-O2)
if [ "$STRUCTGPU_CUDA" = 1 ]; then
  opts+=(--with-cuda=1 --with-cuda-dir="$CUDA_DIR" --with-cuda-arch="$CUDA_ARCH" CUDAOPTFLAGS=-O2)
else
  opts+=(--with-cuda=0)
fi
cd "$SRC"
say "configuring PETSc ($VARIANT): this takes ~5 min on 2 cores"
unset PETSC_DIR PETSC_ARCH
python3 ./configure PETSC_ARCH="$ARCH" "${opts[@]}" > "$CACHE/configure-$VARIANT.log" 2>&1 || {
  tail -40 "$CACHE/configure-$VARIANT.log" >&2; say "configure failed; full log: $CACHE/configure-$VARIANT.log"; exit 1; }
say "building PETSc ($VARIANT): ~10-15 min on 2 cores"
make PETSC_DIR="$SRC" PETSC_ARCH="$ARCH" all > "$CACHE/make-$VARIANT.log" 2>&1 || {
  tail -40 "$CACHE/make-$VARIANT.log" >&2; say "make failed; log: $CACHE/make-$VARIANT.log"; exit 1; }
make PETSC_DIR="$SRC" PETSC_ARCH="$ARCH" install > "$CACHE/install-$VARIANT.log" 2>&1
touch "$PREFIX/.structgpu-complete"
printf 'export PETSC_DIR=%s\nexport PETSC_ARCH=\n' "$PREFIX" > "$CACHE/petsc.env"
say "PETSc $PETSC_VERSION ($VARIANT) installed at $PREFIX"
echo "$PREFIX"
