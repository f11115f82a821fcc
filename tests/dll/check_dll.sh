#!/usr/bin/env bash
# check_dll.sh EX2 LIBSTRUCTGPU NP MPIEXEC : assertions on an unmodified PETSc tutorial
# that loads StructGPU only through -dll_append.
set -u
ex=$1 lib=$2 np=$3 mpiexec=${4:-mpiexec}
fail=0
check() { # name, pattern, file
  if grep -Eq -- "$2" "$3"; then echo "PASS $1"; else echo "FAIL $1: /$2/ not found in:"; sed 's/^/    | /' "$3" | tail -40; fail=1; fi
}
run() { "$mpiexec" -n "$np" "$ex" -dll_append "$lib" "$@" ; }
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
# 1. -help lists our options with the PC's prefix (and the type in the -pc_type list)
run -m 15 -n 13 -pc_type tridiag -help > "$t/help" 2>&1
check "help lists -pc_tridiag_mode"      '-pc_tridiag_mode'       "$t/help"
check "help lists -pc_tridiag_algorithm" '-pc_tridiag_algorithm'  "$t/help"
check "help lists tridiag among PC types" '-pc_type <.*tridiag'  "$t/help"
# 2. -dll_view lists the library; our PC is selected from the command line only; exact
#    solve of the tridiagonal part (lines) as preconditioner of GMRES converges.
run -m 31 -n 17 -ksp_type gmres -pc_type tridiag -pc_tridiag_mode global -ksp_rtol 1e-10 \
    -ksp_view -dll_view -malloc_dump > "$t/run" 2>&1
rc=$?
[ $rc -eq 0 ] && echo "PASS run exit code" || { echo "FAIL run exit code $rc"; fail=1; }
check "dll_view lists libstructgpu" 'libstructgpu'              "$t/run"
check "ksp_view shows PC type tridiag" 'type: tridiag'          "$t/run"
check "ksp_view shows our settings"  'mode global'             "$t/run"
# ex2 prints "Norm of error X iterations N": require a converged, accurate solution
err=$(sed -n 's/.*Norm of error \([^ ]*\).*/\1/p' "$t/run" | tail -1)
awk -v e="${err:-nan}" 'BEGIN{ exit !(e+0 == e+0 && e+0 < 1e-6) }' && echo "PASS error $err < 1e-6" || { echo "FAIL error '$err'"; fail=1; }
# 3. local mode (block Jacobi over ranks) also selected purely from options
run -m 20 -n 20 -ksp_type gmres -pc_type tridiag -pc_tridiag_mode local -ksp_rtol 1e-10 > "$t/loc" 2>&1 || fail=1
err=$(sed -n 's/.*Norm of error \([^ ]*\).*/\1/p' "$t/loc" | tail -1)
awk -v e="${err:-nan}" 'BEGIN{ exit !(e+0 == e+0 && e+0 < 1e-6) }' && echo "PASS local error $err" || { echo "FAIL local '$err'"; cat "$t/loc" | tail; fail=1; }
# 4. the dense LU direct solver (PCDENSELU): its options in -help, an exact solve from options only
run -m 15 -n 13 -pc_type denselu -help > "$t/helplu" 2>&1
check "help lists -pc_denselu_layout"    '-pc_denselu_layout'     "$t/helplu"
check "help lists denselu among PC types" '-pc_type <.*denselu'  "$t/helplu"
run -m 19 -n 11 -ksp_type preonly -pc_type denselu -ksp_view > "$t/lu" 2>&1 || fail=1
check "ksp_view shows PC type denselu"   'type: denselu'          "$t/lu"
err=$(sed -n 's/.*Norm of error \([^ ]*\).*/\1/p' "$t/lu" | tail -1)
awk -v e="${err:-nan}" 'BEGIN{ exit !(e+0 == e+0 && e+0 < 1e-10) }' && echo "PASS denselu error $err < 1e-10" || { echo "FAIL denselu '$err'"; tail "$t/lu"; fail=1; }
exit $fail
