#!/usr/bin/env bash
# Fortran side by side: fpingpong.f90 built with Skein's mpif90, mpif90.mpich and
# mpif90.openmpi (2 ranks for ping-pong, 16 for allreduce), then the instructions the
# Fortran layer adds per call over C (callgrind: self cost of mpi_send_/mpi_recv_/
# mpi_allreduce_ divided by calls). usage: fcompare.sh [BUILD_DIR] [RUNS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../../build}" && pwd)
runs=${2:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
"$build/bin/mpif90" -O2 -o skein "$here/fpingpong.f90"
mpif90.mpich -O2 -o mpich "$here/fpingpong.f90"
mpif90.openmpi -O2 -o openmpi "$here/fpingpong.f90"
for r in $(seq "$runs"); do
  for n in 2 16; do
    echo "-- run $r, $n ranks"
    "$build/bin/skeinrun" -n $n ./skein | sed 's/^/skein   /'
    mpiexec.mpich -n $n ./mpich | sed 's/^/mpich   /'
    mpirun.openmpi --allow-run-as-root --oversubscribe -n $n ./openmpi 2>/dev/null | sed 's/^/openmpi /'
  done
done
echo "== Fortran layer: instructions per MPI_SEND in mpi_send_ itself (callgrind, 2 ranks in one process)"
SKEIN_NP=2 valgrind --tool=callgrind --callgrind-out-file=cg.out ./skein 2000 >/dev/null 2>&1
self=$(callgrind_annotate --inclusive=no --threshold=100 cg.out 2>/dev/null |
  awk '/fortran_glue.c:mpi_send_ / {gsub(",","",$1); print $1; exit}')
csend=$(callgrind_annotate --inclusive=no --threshold=100 cg.out 2>/dev/null |
  awk '/p2p.c:PMPI_Send / {gsub(",","",$1); print $1; exit}')
calls=$(python3 - cg.out <<'PY'
import re, sys
names, cur, n = {}, None, 0
for line in open(sys.argv[1]):
    m = re.match(r'cfn=\((\d+)\)(?: (.*))?', line)
    if m:
        if m.group(2): names[m.group(1)] = m.group(2).strip()
        cur = names.get(m.group(1))
        continue
    m = re.match(r'calls=(\d+)', line)
    if m and cur == 'mpi_send_': n += int(m.group(1))
print(n)
PY
)
echo "mpi_send_ calls: $calls; glue: $self instructions ($((self / calls)) per call); PMPI_Send itself: $csend ($((csend / calls)) per call)"
