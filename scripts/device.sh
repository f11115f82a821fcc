#!/usr/bin/env bash
# GPU pipeline: build here (no GPU), run on the lent GPU machine (no PETSc, no network).
#
#   bash scripts/device.sh pack            # here: build with CUDA + GPU tests + bench, pack
#                                          #       PETSc and the build into .carry/ (< 64 MiB)
#   then, with the device tool:  run(command="bash scripts/device.sh remote all", carry=[".carry"])
#
# remote steps (any of): env tests sanitize bench profile demo all
#   env      : nvidia-smi, unpack, library check
#   tests    : the whole ctest suite incl. GPU variants (GPU path checked against the host twin;
#              TESTS_REGEX=... selects a subset, TESTS_EXCLUDE=... leaves one out, TESTS_JOBS=N (4);
#              the whole suite takes more than one 10-minute call: split it, README "GPU pipeline")
#   sanitize : compute-sanitizer memcheck + racecheck on the GPU kernel tests (--quick;
#              SANITIZE_GLOB=test_tri* selects some)
#   bench    : bench/tri and bench/trsv side by side (BENCHES="tri trsv", BENCH_ARGS_<family>,
#              BENCH_TAG=x names the files <family>-<device>-<date>-x.*, BENCH_TAIL lines shown;
#              JSON to $OUT, copied back to bench/results by `fetch`)
#   profile  : Nsight Compute reports of bench kernels (PROFILES="name|kernel regex|family|args;...")
#   demo     : the main demo on the GPU
# remote machine, any command in the same environment: bash scripts/device.sh exec CMD...
# Everything prints to stdout and is also logged under $OUT.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${STRUCTGPU_CACHE:-$HOME/.cache/structgpu}
BUILD=$here/build-gpu
CARRY=$here/.carry
say() { printf '[device %s] %s\n' "$(date +%H:%M:%S)" "$*"; }

pack() {
  STRUCTGPU_BUILD=$BUILD CMAKE_CUDA_ARCHITECTURES=${CMAKE_CUDA_ARCHITECTURES:-90} \
    bash "$here/scripts/build.sh" -DSTRUCTGPU_TEST_GPU=ON -DSTRUCTGPU_BUILD_BENCH=ON >/dev/null
  source "$CACHE/petsc.env"
  mkdir -p "$CARRY/lib"; rm -f "$CARRY/build.tar.xz" "$CARRY/paths"
  if [ ! "$CARRY/petsc.tar.xz" -nt "$PETSC_DIR/.structgpu-complete" ]; then
  say "packing PETSc from $PETSC_DIR"
  tmp=$(mktemp -d)
  mkdir -p "$tmp/petsc"
  cp -a "$PETSC_DIR/include" "$tmp/petsc/"
  mkdir -p "$tmp/petsc/lib"
  cp -a "$PETSC_DIR"/lib/libpetsc* "$PETSC_DIR/lib/petsc" "$PETSC_DIR/lib/pkgconfig" "$tmp/petsc/lib/"
  strip --strip-unneeded "$tmp"/petsc/lib/libpetsc.so.*.*.* 2>/dev/null || true
  tar -C "$tmp/petsc" -cf - . | xz -T2 -6 > "$CARRY/petsc.tar.xz"; rm -rf "$tmp"
  fi
  say "packing build $BUILD (no objects or static archives: the GPU machine only runs it)"
  # PACK_SKIP: an extended regex of build paths left out (e.g. '^./bench/' for a tests-only run,
  # '^./tests/' for a bench-only one) when the working tree and the carry would pass 64 MiB
  (cd "$BUILD" && find . -name '*.o' -prune -o -name '*.a' -prune -o -name CMakeFiles -prune -o \( -type f -o -type l \) -print \
    | { if [ -n "${PACK_SKIP:-}" ]; then grep -Ev "$PACK_SKIP"; else cat; fi; } | tar -cf - -T -) \
    | xz -T1 -9e > "$CARRY/build.tar.xz"  # (one solid stream with a 64 MiB window: the binaries share the static kernel library; 9 MB against 36 with -6, 2026-11-28)
  # Debian runtime libraries the GPU machine (Ubuntu) might lack; used only where missing.
  rm -rf "$CARRY/lib"; mkdir -p "$CARRY/lib"
  for l in libopenblas.so.0 libgfortran.so.5 libquadmath.so.0; do
    f=$(ldconfig -p | awk -v l="$l" '$1==l {print $NF}' | head -n 1 || true)
    if [ -n "$f" ]; then cp -L "$f" "$CARRY/lib/$l"; fi
  done
  tar -C "$CARRY" -cf - lib | xz -T2 -6 > "$CARRY/lib.tar.xz"; rm -rf "$CARRY/lib"
  printf '%s\n%s\n%s\n' "$PETSC_DIR" "$BUILD" "$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$here" diff --quiet 2>/dev/null || echo -dirty)" > "$CARRY/paths"
  du -sh "$CARRY"/* | sed 's/^/  /'
  say "carry size: $(du -sm "$CARRY" | cut -f1) MiB (limit 64)"
}

remote_env() {
  OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
  PETSC_DIR=$(sed -n 1p "$CARRY/paths"); BUILD_ORIG=$(sed -n 2p "$CARRY/paths"); COMMIT=$(sed -n 3p "$CARRY/paths")
  export STRUCTGPU_COMMIT=$COMMIT
  if [ ! -f "$PETSC_DIR/lib/petsc/conf/petscvariables" ]; then
    mkdir -p "$PETSC_DIR" && xz -dc "$CARRY/petsc.tar.xz" | tar -C "$PETSC_DIR" -xf -
  fi
  # the build has absolute paths (ctest files, rpaths): recreate the source/build locations
  src_orig=$(dirname "$BUILD_ORIG")
  if [ "$src_orig" != "$here" ] && [ ! -e "$src_orig" ]; then mkdir -p "$(dirname "$src_orig")"; ln -s "$here" "$src_orig"; fi
  if [ ! -f "$BUILD_ORIG/CTestTestfile.cmake" ]; then mkdir -p "$BUILD_ORIG" && xz -dc "$CARRY/build.tar.xz" | tar -C "$BUILD_ORIG" -xf -; fi
  BUILD=$BUILD_ORIG
  extra=""
  # the Debian runtime libraries are optional (leave .carry/lib.tar.xz out of the carry when the
  # working tree is large: the GPU machine has OpenBLAS)
  if [ ! -d "$CARRY/lib" ] && [ -f "$CARRY/lib.tar.xz" ]; then xz -dc "$CARRY/lib.tar.xz" | tar -C "$CARRY" -xf -; fi
  if [ -d "$CARRY/lib" ]; then
    for l in "$CARRY"/lib/*; do ldconfig -p | grep -qF "$(basename "$l") (" || extra=$CARRY/lib; done
  fi
  export LD_LIBRARY_PATH="$PETSC_DIR/lib${extra:+:$extra}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export PETSC_OPTIONS="${PETSC_OPTIONS:-} -use_gpu_aware_mpi 0"
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
}

step_env() {
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv | tee "$OUT/nvidia-smi.txt"
  say "commit $COMMIT, PETSc $PETSC_DIR, build $BUILD, extra libs: ${extra:-none}"
  ldd "$BUILD/libstructgpu.so" | grep -E 'not found|petsc|mpi|cuda' || true
}
step_tests() {
  say "ctest (host + GPU variants)"
  (cd "$BUILD" && ctest --output-on-failure -j${TESTS_JOBS:-4} --timeout 300 -LE 'valgrind|install' -R "${TESTS_REGEX:-.}" ${TESTS_EXCLUDE:+-E "$TESTS_EXCLUDE"} 2>&1 | tee "$OUT/ctest.log" | tail -n 60) || true
}
step_sanitize() {
  for t in "$BUILD"/tests/${SANITIZE_GLOB:-test_*}; do
    [ -x "$t" ] || continue
    for tool in memcheck racecheck; do
      say "compute-sanitizer --tool $tool $(basename "$t") --cuda --quick"
      compute-sanitizer --tool $tool --error-exitcode 9 "$t" --cuda --quick > "$OUT/sanitize-$tool-$(basename "$t").log" 2>&1 \
        && say "  clean" || { say "  FAILED (rc=$?)"; tail -n 25 "$OUT/sanitize-$tool-$(basename "$t").log"; }
    done
  done
}
step_bench() {
  # BENCHES: families to run (default all built); BENCH_ARGS_<family>: extra options
  dev=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '_' | tr -cd 'A-Za-z0-9_-')
  for f in ${BENCHES:-tri trsv}; do
    b=$BUILD/bench/$f/bench_$f
    [ -x "$b" ] || { say "bench_$f not built"; continue; }
    eval "args=\${BENCH_ARGS_$f:-}"
    say "bench/$f on $dev $args"
    tag=${BENCH_TAG:+-$BENCH_TAG}
    "$b" --commit "$COMMIT" --out "$OUT/$f-$dev-$(date +%Y%m%d)$tag.json" $args 2>&1 | tee "$OUT/bench-$f$tag.log" | tail -n ${BENCH_TAIL:-120} || true
  done
}
step_profile() {
  # PROFILES: ';'-separated "name|kernel regex|bench family|bench args"; Nsight Compute report
  # (speed of light, occupancy, warp stalls, memory, source hot spots) to $OUT/ncu-<name>.txt
  IFS=';' read -ra specs <<< "${PROFILES:-}"
  for spec in "${specs[@]}"; do
    IFS='|' read -r name kre fam args <<< "$spec"
    say "ncu $name: kernel /$kre/ in bench_$fam $args"
    ncu -k "regex:$kre" --launch-skip "${NCU_SKIP:-2}" --launch-count "${NCU_COUNT:-1}" --section SpeedOfLight --section Occupancy \
      --section WarpStateStats --section MemoryWorkloadAnalysis --section LaunchStats --section SourceCounters \
      "$BUILD/bench/$fam/bench_$fam" --out /tmp/ncu-bench.json $args > "$OUT/ncu-$name.txt" 2>&1 || true
    grep -E "DRAM Throughput|Memory Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per|Duration|Block Limit|Stall|Warp Cycles Per Issued|Eligible|L1/TEX Hit|L2 Hit|Mem Busy|Max Bandwidth" "$OUT/ncu-$name.txt" | head -n 40
  done
}
step_demo() { STRUCTGPU_BUILD=$BUILD bash "$here/examples/demo.sh" 2>&1 | tee "$OUT/demo.log" | tail -n 30 || true; }

case "${1:-}" in
  pack) pack ;;
  remote)
    shift; remote_env
    steps=${*:-all}; [ "$steps" = all ] && steps="env tests sanitize bench demo"
    for s in $steps; do "step_$s"; done ;;
  exec) # exec CMD...: run a command in the remote environment (BUILD, COMMIT, OUT set; libraries found)
    shift; remote_env; export BUILD COMMIT OUT; exec "$@" ;;
  fetch) # fetch DIR: copy bench JSON fetched from $OUT into bench/results and plot
    mkdir -p "$here/bench/results"
    for j in "$2"/tri-*.json "$2"/trsv-*.json; do [ -f "$j" ] && cp "$j" "$here/bench/results/" && python3 "$here/bench/plot.py" "$j" -o "$here/bench/results/$(basename "${j%.json}").png"; done ;;
  *) sed -n 2,20p "$0"; exit 2 ;;
esac
