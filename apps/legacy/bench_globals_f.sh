#!/usr/bin/env bash
# Builds bench_globals.f90 with Debian's MPICH (mpif90.mpich), with Skein's mpifort, and
# with mpifort -fprivatize (the GCC plugin); prints median times (noisy on a shared
# machine) and callgrind instruction counts per kernel (exact). usage: bench_globals_f.sh [BUILD_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../../build}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
flags="-O2 -fno-inline"
mpif90.mpich $flags -o mpich "$here/bench_globals.f90"
"$build/bin/mpifort" $flags -o skein "$here/bench_globals.f90"
"$build/bin/mpifort" $flags -fprivatize -o priv "$here/bench_globals.f90"
echo "== median times (1 rank; 5 runs each, best median shown)"
for b in mpich skein priv; do
  for i in 1 2 3 4 5; do
    if [ $b = mpich ]; then out=$(mpiexec.mpich -n 1 ./$b 15 30000000); else out=$("$build/bin/skeinrun" -n 1 ./$b 15 30000000); fi
    echo "$b: $out" >> times.txt
  done
  grep "^$b:" times.txt | sort -t' ' -k3 -n | head -1
done
echo "== instructions per kernel (callgrind, 3 repetitions, 3e6 iterations)"
printf "%-8s %14s %14s %14s %14s\n" build stencil scalar calls+tick accessor
for b in mpich skein priv; do
  valgrind --tool=callgrind --callgrind-out-file=cg.$b ./$b 3 3000000 >/dev/null 2>&1
  ann=$(callgrind_annotate cg.$b 2>/dev/null)
  get() { echo "$ann" | awk -v f="$1" '$0 ~ ":"f" " {gsub(",","",$1); s+=$1} END {print s+0}'; }
  printf "%-8s %14s %14s %14s %14s\n" $b "$(get stencil_)" "$(get scalar_)" "$(( $(get calls_) + $(get tick_) ))" "$(get __skn_priv_delta)"
done
