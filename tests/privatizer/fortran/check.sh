#!/usr/bin/env bash
# Fortran privatizer (mpifort -fprivatize, GCC plugin) diagnostics: each err_*.f90 must fail
# to compile with the messages of its "! expect:" lines; report.f90 under -fprivatize-report
# must list exactly its "! expect:" lines ("! expect-lines: N" notes); a unit compiled with
# -fprivatize that uses a module compiled without it must not link.
# usage: check.sh MPIFORT SOURCE_DIR
set -uo pipefail
fc=$1
dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bad=0
expect() { # file output
  while IFS= read -r re; do
    printf '%s\n' "$2" | grep -Eq -- "$re" || { echo "FAIL $(basename "$1"): no message matching /$re/"; bad=1; }
  done < <(sed -n 's/^! expect: //p' "$1")
}
for f in "$dir"/err_*.f90; do
  out=$("$fc" -fopenmp -fprivatize -c "$f" -J "$work" -o "$work/x.o" 2>&1)
  rc=$?
  [ $rc -ne 0 ] || { echo "FAIL $(basename "$f"): compiled, expected an error"; bad=1; }
  expect "$f" "$out"
done
out=$(cd "$work" && "$fc" -fprivatize-report "$dir/report.f90" 2>&1)
[ $? -eq 0 ] || { echo "FAIL report mode exited non-zero: $out"; bad=1; }
expect "$dir/report.f90" "$out"
n=$(printf '%s\n' "$out" | grep -c "would be per rank")
want=$(sed -n 's/^! expect-lines: //p' "$dir/report.f90")
[ "$n" -eq "$want" ] || { echo "FAIL report: $n variables listed, expected $want"; printf '%s\n' "$out"; bad=1; }
[ -e "$work/report.o" ] && { echo "FAIL report mode wrote an object"; bad=1; }
# -fprivatize-shared leaves the named variable and COMMON block shared
out=$(cd "$work" && "$fc" -fprivatize-report -fprivatize-shared=counter,/rnamed/ "$dir/report.f90" 2>&1)
n=$(printf '%s\n' "$out" | grep -c "would be per rank")
[ "$n" -eq $((want - 2)) ] && ! printf '%s\n' "$out" | grep -q "rmod::counter\|/rnamed/" ||
  { echo "FAIL -fprivatize-shared: $n variables listed"; printf '%s\n' "$out"; bad=1; }
# a module compiled without -fprivatize, used by a privatized unit: a link error naming it
printf 'module lm\n  integer :: shared_by_mistake = 1\nend module\n' > "$work/lm.f90"
printf 'program lp\n  use lm\n  shared_by_mistake = 2\nend program\n' > "$work/lp.f90"
out=$(cd "$work" && "$fc" -c lm.f90 -o lm.o && "$fc" -fprivatize lp.f90 lm.o -o lp 2>&1)
[ $? -ne 0 ] && printf '%s\n' "$out" | grep -q "undefined reference to .__lm_MOD_shared_by_mistake.skn_priv" ||
  { echo "FAIL mixed privatized/unprivatized units linked: $out"; bad=1; }
out=$(cd "$work" && "$fc" -fprivatize -c lm.f90 -o lm.o && "$fc" -fprivatize lp.f90 lm.o -o lp 2>&1)
[ $? -eq 0 ] || { echo "FAIL privatized units do not link: $out"; bad=1; }
# a COMMON block in an object compiled without -fprivatize, linked with one that keeps it
# per rank (plain .comm, and BLOCK DATA in .data): mpifort refuses the link, naming both
printf 'subroutine bump()\n  integer :: n\n  common /cnt/ n\n  n = n + 1\nend subroutine\n' > "$work/cb.f90"
printf 'block data cinit\n  integer :: n\n  common /cnt/ n\n  data n /5/\nend block data\n' > "$work/cd.f90"
printf 'program cp\n  integer :: n\n  common /cnt/ n\n  call bump()\n  print *, n\nend program\n' > "$work/cp.f90"
out=$(cd "$work" && "$fc" -fprivatize -c cp.f90 -o cp.o && "$fc" -c cb.f90 -o cb.o && "$fc" -c cd.f90 -o cd.o &&
      "$fc" -fprivatize -c cd.f90 -o cdp.o && "$fc" -fprivatize cp.o cb.o cdp.o -o cpx 2>&1)
[ $? -ne 0 ] && printf '%s\n' "$out" | grep -q "COMMON block /cnt/ is per rank in cp.o but cb.o was compiled without -fprivatize" ||
  { echo "FAIL unprivatized COMMON (.comm) linked: $out"; bad=1; }
out=$(cd "$work" && "$fc" -fprivatize -c cb.f90 -o cb.o && ar rcs libcd.a cd.o && "$fc" -fprivatize cp.o cb.o libcd.a -o cpx 2>&1)
[ $? -ne 0 ] && printf '%s\n' "$out" | grep -q "COMMON block /cnt/ is per rank in cp.o but libcd.a(cd.o) was compiled without" ||
  { echo "FAIL unprivatized BLOCK DATA in an archive linked: $out"; bad=1; }
out=$(cd "$work" && "$fc" -fprivatize cp.o cb.o cdp.o -o cpx 2>&1)
[ $? -eq 0 ] || { echo "FAIL privatized COMMON units do not link: $out"; bad=1; }
out=$(cd "$work" && "$fc" -c cp.f90 -o cp.o && "$fc" -c cb.f90 -o cb.o && "$fc" cp.o cb.o cd.o -o cpx 2>&1)
[ $? -eq 0 ] || { echo "FAIL unprivatized COMMON units do not link: $out"; bad=1; }
[ $bad -eq 0 ] && echo "PASS fortran privatizer diagnostics"
exit $bad
