#!/usr/bin/env bash
# check_install.sh BUILD_DIR SRC_DIR: install into a temporary prefix, then build and run a
# downstream project through find_package(StructGPU), and check the pkg-config file.
set -euo pipefail
build=$1 src=$2 petsc_pc=${3:-}
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
cmake --install "$build" --prefix "$t/prefix" > "$t/install.log"
for f in lib/libstructgpu.so include/structgpu.h include/structgpu/tri_kernels.h lib/pkgconfig/structgpu.pc lib/cmake/StructGPU/StructGPUConfig.cmake; do
  [ -e "$t/prefix/$f" ] || { echo "FAIL: $f not installed"; exit 1; }
done
PKG_CONFIG_PATH=$t/prefix/lib/pkgconfig:$petsc_pc:${PKG_CONFIG_PATH:-} pkg-config --libs structgpu | grep -q -- -lstructgpu || { echo "FAIL: pkg-config"; exit 1; }
cmake -S "$src/consumer" -B "$t/b" -DCMAKE_PREFIX_PATH="$t/prefix" > "$t/cfg.log" 2>&1 || { cat "$t/cfg.log"; exit 1; }
cmake --build "$t/b" > "$t/bld.log" 2>&1 || { cat "$t/bld.log"; exit 1; }
"$t/b/consumer"
echo "PASS install + find_package(StructGPU) + pkg-config"
