#!/usr/bin/env bash
# Instructions the Fortran layer adds per MPI call over C (issue 15's goal: at most 20).
# fcalls.c and its Fortran twins (include 'mpif.h', use mpi, use mpi_f08) run N 8-byte
# ping-pong round trips (2 ranks: MPI_Send + MPI_Recv per rank, 4 calls per round trip) or
# N 8-byte MPI_Allreduce (2 ranks, 2 calls per iteration), as 2 ranks on 1 worker under
# callgrind. Per iteration = (Ir(N2) - Ir(N1)) / (N2 - N1): start-up, MPI_Init and
# MPI_Finalize cancel out. Overhead per call = (Fortran - C per iteration) / calls.
# usage: fcalls.sh [BUILD_OR_INSTALL_DIR] [N1] [N2]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=$(cd "${1:-$here/../../../build}" && pwd)
n1=${2:-1000}
n2=${3:-3000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
"$dir/bin/mpicc" -O2 -o c "$here/fcalls.c"
for v in h mod f08; do "$dir/bin/mpifort" -O2 -o $v "$here/fcalls_$v.f90"; done
ir() {  # total instructions of one run: ir PROGRAM MODE N
  SKEIN_NP=2 SKEIN_WORKERS=1 valgrind --tool=callgrind --callgrind-out-file=cg.out ./$1 $2 $3 >/dev/null 2>&1
  awk '/^summary:/ {print $2}' cg.out
}
for mode in 1 2; do
  calls=$((mode == 1 ? 4 : 2))
  name=$([ $mode = 1 ] && echo "ping-pong round trip (4 calls)" || echo "allreduce x2 ranks (2 calls)")
  declare -A per
  for v in c h mod f08; do
    a=$(ir $v $mode $n1); b=$(ir $v $mode $n2)
    per[$v]=$(python3 -c "print(($b - $a) / ($n2 - $n1))")
  done
  printf '%-34s C %.1f' "$name:" "${per[c]}"
  for v in h mod f08; do
    printf ' | %s %.1f (%+.1f per call)' "$v" "${per[$v]}" "$(python3 -c "print((${per[$v]} - ${per[c]}) / $calls)")"
  done
  echo
done
