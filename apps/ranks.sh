#!/usr/bin/env bash
# ranks.sh - cost of starting and ending many ranks: wall time of a trivial MPI program
# (apps/bench/trivial.c) at several rank counts, and the time per rank, which must not
# grow with the count (it did: ending a rank refreshed the heap statistics of every
# arena, O(ranks^2); 1024 ranks took 72 s). MPICH and Open MPI run one process per rank:
# with --peers they are timed too, at the counts up to --peer-max (default 256).
#
# usage: apps/ranks.sh [--skein-prefix DIR] [--ranks 256,1024,4096] [--peers] [--peer-max N]
# Prints: flavour ranks seconds ms_per_rank, then the ratio of the largest count's time
# per rank to the smallest's (1.0 = linear).
set -u -o pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
prefix=${SKEIN_PREFIX:-$here/../install}
ranks_list="256,1024,4096"
peers=0
peer_max=256
while [ $# -gt 0 ]; do
  case $1 in
    --skein-prefix) prefix=$2; shift ;;
    --ranks) ranks_list=$2; shift ;;
    --peers) peers=1 ;;
    --peer-max) peer_max=$2; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
build=${TMPDIR:-/tmp}/bench-build/ranks
mkdir -p "$build"
"$prefix/bin/mpicc" -O2 -o "$build/trivial-skein" "$here/bench/trivial.c" || exit 1
run() { # flavour launcher exe n -> seconds
  local t0 t1
  t0=$(date +%s.%N)
  "$2" -n "$4" "$3" >/dev/null 2>&1 || { echo "n/a"; return; }
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc -l
}
printf "%-8s %6s %9s %12s\n" flavour ranks seconds ms_per_rank
first="" last=""
IFS=, read -ra counts <<< "$ranks_list"
for n in "${counts[@]}"; do
  s=$(run skein "$prefix/bin/mpiexec" "$build/trivial-skein" "$n")
  if [ "$s" = n/a ]; then printf "%-8s %6d %9s %12s\n" skein "$n" n/a n/a; continue; fi
  per=$(echo "$s * 1000 / $n" | bc -l)
  printf "%-8s %6d %9.2f %12.3f\n" skein "$n" "$s" "$per"
  [ -z "$first" ] && first=$per
  last=$per
done
[ -n "$first" ] && printf "per-rank time, largest/smallest count: %.2f\n" "$(echo "$last / $first" | bc -l)"
if [ $peers = 1 ]; then
  for fl in mpich openmpi; do
    cc=mpicc.$fl; ex=mpiexec.$fl
    command -v $cc >/dev/null || continue
    $cc -O2 -o "$build/trivial-$fl" "$here/bench/trivial.c" || continue
    extra=""; [ $fl = openmpi ] && extra="--oversubscribe"
    for n in "${counts[@]}"; do
      [ "$n" -le "$peer_max" ] || continue
      t0=$(date +%s.%N)
      if $ex $extra -n "$n" "$build/trivial-$fl" >/dev/null 2>&1; then
        s=$(echo "$(date +%s.%N) - $t0" | bc -l)
        printf "%-8s %6d %9.2f %12.3f\n" $fl "$n" "$s" "$(echo "$s * 1000 / $n" | bc -l)"
      else
        printf "%-8s %6d %9s %12s\n" $fl "$n" n/a n/a
      fi
    done
  done
fi
