#!/usr/bin/env bash
# Instructions the Fortran layer adds per MPI call over C (issue 15's goal: at most 20), for
# Skein, MPICH and Open MPI side by side.
# fcalls.c and its Fortran twins (include 'mpif.h', use mpi, use mpi_f08) run N 8-byte
# ping-pong round trips (2 ranks: MPI_Send + MPI_Recv per rank, 4 calls per round trip) or
# N 8-byte MPI_Allreduce (2 ranks, 2 calls per iteration), as 2 ranks under callgrind
# (Skein: 2 ranks on 1 worker; MPICH and Open MPI: 2 processes, each under valgrind).
# Counted (cgself.py): the instructions outside the MPI library's C layer, i.e. the
# program's own code with its PLT stubs, plus the Fortran binding (MPICH's libmpichfort,
# Open MPI's libmpi_mpifh/libmpi_usempif08, Skein's glue functions), so the peers' busy
# polling inside their C layer does not blur the figures. Per iteration =
# (count(N2) - count(N1)) / (N2 - N1): start-up, MPI_Init and MPI_Finalize cancel out.
# Overhead per call = (Fortran - C per iteration) / calls.
# usage: fcalls.sh [skein [BUILD_OR_INSTALL_DIR] | mpich | openmpi] [N1] [N2]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mpi=${1:-skein}
shift || true
case $mpi in
  skein)
    dir=$(cd "${1:-$here/../../../build}" && pwd)
    shift || true
    cc="$dir/bin/mpicc" fc="$dir/bin/mpifort"
    run() { SKEIN_NP=2 SKEIN_WORKERS=1 valgrind --tool=callgrind --callgrind-out-file=cg.out.%p "$@"; } ;;
  mpich)
    cc=mpicc.mpich fc=mpif90.mpich
    run() { mpirun.mpich -np 2 valgrind --tool=callgrind --callgrind-out-file=cg.out.%p "$@"; } ;;
  openmpi)
    cc=mpicc.openmpi fc=mpif90.openmpi
    run() { mpirun.openmpi --allow-run-as-root --oversubscribe -np 2 \
              valgrind --tool=callgrind --callgrind-out-file=cg.out.%p "$@"; } ;;
  *) echo "usage: $0 [skein [DIR] | mpich | openmpi] [N1] [N2]" >&2; exit 2 ;;
esac
n1=${1:-1000}
n2=${2:-3000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
$cc -O2 -o c "$here/fcalls.c"
for v in h mod f08; do $fc -O2 -o $v "$here/fcalls_$v.f90"; done
count() {  # instructions outside the C layer of one run: count PROGRAM MODE N
  rm -f cg.out.*
  run ./$1 $2 $3 >/dev/null 2>&1
  python3 "$here/cgself.py" $1 cg.out.*
}
echo "$mpi ($($fc --version | head -1)), N = $n1 and $n2"
for mode in 1 2; do
  calls=$((mode == 1 ? 4 : 2))
  name=$([ $mode = 1 ] && echo "ping-pong round trip (4 calls)" || echo "allreduce x2 ranks (2 calls)")
  declare -A per
  for v in c h mod f08; do
    a=$(count $v $mode $n1); b=$(count $v $mode $n2)
    per[$v]=$(python3 -c "print(($b - $a) / ($n2 - $n1))")
  done
  printf '%-34s C %.1f' "$name:" "${per[c]}"
  for v in h mod f08; do
    printf ' | %s %.1f (%+.1f per call)' "$v" "${per[$v]}" "$(python3 -c "print((${per[$v]} - ${per[c]}) / $calls)")"
  done
  echo
done
