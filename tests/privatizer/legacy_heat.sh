#!/usr/bin/env bash
# apps/legacy/heat built with Skein's mpicc -fprivatize must print, for 1 to 64 ranks on 1
# and 2 workers, exactly what the same sources print when built with Debian's MPICH
# (the output does not depend on the rank count). Built without -fprivatize under Skein,
# it must not. usage: legacy_heat.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2/apps/legacy
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
command -v mpicc.mpich >/dev/null || { echo "mpicc.mpich not installed: skipped"; exit 77; }
mpicc.mpich -O2 -o "$work/heat_mpich" "$src/heat.c" "$src/halo.c" "$src/params.c"
"$build/bin/mpicc" -O2 -fprivatize -o "$work/heat" "$src/heat.c" "$src/halo.c" "$src/params.c"
"$build/bin/mpicc" -O2 -o "$work/heat_plain" "$src/heat.c" "$src/halo.c" "$src/params.c"
mpiexec.mpich -n 3 "$work/heat_mpich" 150 > "$work/expected"
grep -q "halo messages as expected" "$work/expected" || { cat "$work/expected"; echo "FAIL MPICH run"; exit 1; }
for nw in "1 1" "2 1" "7 2" "16 1" "64 2" "64 1"; do
  set -- $nw
  "$build/bin/skeinrun" -n "$1" --workers "$2" "$work/heat" 150 > "$work/got" 2>&1 || true
  diff "$work/expected" "$work/got" || { echo "FAIL heat with $1 ranks on $2 workers differs from MPICH"; exit 1; }
done
SKEIN_DEADLOCK_MS=2000 "$build/bin/skeinrun" -n 16 --workers 1 "$work/heat_plain" 150 > "$work/plain" 2>&1 || true
if diff -q "$work/expected" "$work/plain" >/dev/null; then echo "FAIL the unprivatized build printed the right answer"; exit 1; fi
echo "PASS heat: privatized Skein output equals MPICH's for 1-64 ranks; unprivatized differs"
