#!/usr/bin/env bash
# rmacompare.sh — build apps/bench/rma.c with Skein, MPICH and Open MPI, run each in turn
# (interleaved, R rounds), print the median of every figure per MPI and the ratios.
#
# usage: apps/bench/rmacompare.sh SKEIN_PREFIX [R] [OUT.md] [procs]
#   SKEIN_PREFIX  Skein install prefix (its bin/mpicc and bin/mpiexec)
#   R             rounds (default 3); each run is already the median of 7 batches
#   OUT.md        also write the markdown table there ("" for none)
#   procs         the 2-process mode: origin and target in two processes over UCX's tcp
#                 transport (UCX_TLS=tcp for all three): Skein with --procs 2, MPICH
#                 (ch4:ucx on Debian), Open MPI with pml ucx + osc ucx; -n 2 only
#                 (put/get/accumulate latency, epoch, 4 MiB put/get bandwidth, overlap)
# MPICH runs with -bind-to core, Open MPI with the shared-memory BTL (vader) as in
# apps/compare.sh; its one-sided component is whatever it picks (osc sm on one node).
set -u -o pipefail
prefix=${1:?usage: rmacompare.sh SKEIN_PREFIX [R] [OUT.md]}
runs=${2:-3}
out=${3:-}
mode=${4:-node}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=/tmp/bench-build/rma
mkdir -p "$build"
declare -A CC=([skein]="$prefix/bin/mpicc" [mpich]=mpicc.mpich [openmpi]=mpicc.openmpi)
declare -A RUN=([skein]="$prefix/bin/mpiexec" [mpich]="mpiexec.mpich -bind-to core"
                [openmpi]="mpirun.openmpi --allow-run-as-root --oversubscribe --mca pml ob1 --mca btl self,vader")
flavours=""
for f in skein mpich openmpi; do
  if command -v "${CC[$f]%% *}" >/dev/null && ${CC[$f]} -O2 -o "$build/rma_$f" "$here/rma.c" -lm; then
    flavours="$flavours $f"
  else
    echo "rmacompare: $f skipped (no compiler or build failed)" >&2
  fi
done
pair_args=""
if [ "$mode" = procs ]; then
  pair_args="5 100" # 5 batches of 100 8-byte operations: each takes 0.1-3 ms over tcp here
  export UCX_TLS=tcp
  RUN=([skein]="$prefix/bin/mpiexec --procs 2" [mpich]="mpiexec.mpich"
       [openmpi]="mpirun.openmpi --allow-run-as-root --oversubscribe -x UCX_TLS --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any --mca osc ucx")
fi
rm -f "$build"/*.pair.* "$build"/*.fop.*
for r in $(seq 1 "$runs"); do
  for f in $flavours; do
    timeout 300 ${RUN[$f]} -n 2 "$build/rma_$f" $pair_args >"$build/$f.pair.$r" 2>&1 || echo "rmacompare: $f -n 2 failed (round $r)" >&2
    [ "$mode" = procs ] && continue
    timeout 300 ${RUN[$f]} -n 16 "$build/rma_$f" >"$build/$f.fop.$r" 2>&1 || echo "rmacompare: $f -n 16 failed (round $r)" >&2
  done
done
median() { sort -g | awk '{v[NR]=$1} END {if (NR==0) print "-"; else if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
declare -A M
keys="put_lat get_lat acc_lat epoch put_bw get_bw memcpy_bw overlap_idle overlap_busy overlap fop_rate"
for f in $flavours; do
  for k in $keys; do
    M[$f.$k]=$(cat "$build/$f".*.* 2>/dev/null | awk -v k="$k" '$1==k {print $2}' | median)
  done
done
{
  echo "mode $mode${UCX_TLS:+ (UCX_TLS=$UCX_TLS)}; load average: $(cut -d' ' -f1-3 /proc/loadavg); $runs rounds, medians"
  echo
  printf '| figure |'; for f in $flavours; do printf ' %s |' "$f"; done; printf ' Skein/MPICH | Skein/Open MPI |\n'
  printf '|---|'; for f in $flavours; do printf -- '---|'; done; printf -- '---|---|\n'
  for k in $keys; do
    printf '| %s |' "$k"
    for f in $flavours; do printf ' %s |' "${M[$f.$k]}"; done
    s=${M[skein.$k]:--}; m=${M[mpich.$k]:--}; o=${M[openmpi.$k]:--}
    ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a+0 > 0 && b+0 > 0) printf "%.3f", a / b; else printf "-" }'; }
    printf ' %s | %s |\n' "$(ratio "$s" "$m")" "$(ratio "$s" "$o")"
  done
  echo
  echo "units: *_lat and epoch in us per operation, *_bw in MB/s (4 MiB), overlap_* in us for 1000 put+flush,"
  echo "overlap = busy/idle, fop_rate in million MPI_Fetch_and_op per second over 16 ranks."
} | tee ${out:+"$out"}
