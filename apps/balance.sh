#!/usr/bin/env bash
# balance.sh — apps/bench/imbalance.c side by side: Skein with stealing (the default),
# Skein with SKEIN_BALANCE=off, Debian's MPICH and Open MPI (oversubscribed), in one go.
# Prints each run's ratio to the ideal (total work / cores, calibrated in the same run);
# with -R N, the median of N runs per figure.
#
# usage: apps/balance.sh [SKEIN_PREFIX] [-R runs] [-n "16 64"] [-s steps] [--flavours LIST]
#   LIST: a subset of skein,skein-off,mpich,openmpi (a flavour whose compiler is missing
#   is skipped). scripts/install-deps.sh --peers installs MPICH and Open MPI.
set -u -o pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
prefix="${SKEIN_PREFIX:-$here/../install}"
runs=3 ranks="16 64" steps=40 flavours="skein,skein-off,mpich,openmpi"
while [ $# -gt 0 ]; do
  case "$1" in
    -R) runs="$2"; shift 2 ;;
    -n) ranks="$2"; shift 2 ;;
    -s) steps="$2"; shift 2 ;;
    --flavours) flavours="$2"; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "balance.sh: unknown option $1" >&2; exit 2 ;;
    *) prefix="$1"; shift ;;
  esac
done
build=$(mktemp -d /tmp/balance.XXXXXX)
cores=$(nproc)
declare -A CC=([skein]="$prefix/bin/mpicc" [skein-off]="$prefix/bin/mpicc" [mpich]=mpicc.mpich [openmpi]=mpicc.openmpi)
launch() { # flavour ranks exe args...
  local f=$1 n=$2; shift 2
  case $f in
    skein) "$prefix/bin/mpiexec" -n "$n" "$@" ;;
    skein-off) SKEIN_BALANCE=off "$prefix/bin/mpiexec" -n "$n" "$@" ;;
    mpich) mpiexec.mpich -n "$n" "$@" ;;
    openmpi) mpirun.openmpi --allow-run-as-root --oversubscribe --mca btl self,vader -n "$n" "$@" ;;
  esac
}
active=()
for f in ${flavours//,/ }; do
  if command -v "${CC[$f]}" >/dev/null 2>&1 || [ -x "${CC[$f]}" ]; then
    "${CC[$f]}" -O2 -I"$here/bench" -o "$build/imbalance.$f" "$here/bench/imbalance.c" && active+=("$f")
  else
    echo "balance.sh: skipping $f (no ${CC[$f]})" >&2
  fi
done
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
echo "# imbalance: ratio of wall time to the ideal (work / $cores cores), median of $runs runs, $steps steps, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-6s %-8s" ranks pattern; for f in "${active[@]}"; do printf " %10s" "$f"; done; echo
for n in $ranks; do
  declare -A R=()
  for r in $(seq 1 "$runs"); do
    for f in "${active[@]}"; do # interleaved, so that a change of load hits every flavour
      launch "$f" "$n" "$build/imbalance.$f" -s "$steps" -c "$cores" > "$build/out.$f.$n.$r" 2>&1 ||
        echo "balance.sh: $f n=$n run $r failed (see $build/out.$f.$n.$r)" >&2
    done
  done
  for p in linear band random; do
    printf "%-6s %-8s" "$n" "$p"
    for f in "${active[@]}"; do
      m=$(cat "$build"/out."$f"."$n".* 2>/dev/null | awk -v p="$p" '$1 == p { print $NF }' | median)
      printf " %10s" "${m:-n/a}"
    done
    echo
  done
done
