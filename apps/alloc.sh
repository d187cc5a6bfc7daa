#!/usr/bin/env bash
# alloc.sh — allocation throughput of Skein's per-rank heap against glibc's malloc in the
# same run (apps/bench/alloc.c), with the page pool on and off, and the mmap/munmap/madvise
# system calls of each run counted by strace.
#
# usage: apps/alloc.sh [SKEIN_PREFIX] [--ranks N] [--workers W] [--runs R] [--out FILE]
#   SKEIN_PREFIX  Skein install (or build) prefix, or env SKEIN_PREFIX
#   --ranks N     ranks (default 16)      --workers W  Skein workers (default 2)
#   --runs R      runs per setting; figures are medians (default 3)
#   --out FILE    also write the table as markdown to FILE
# Environment: BENCH_CFLAGS (default -O2).
set -u -o pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
prefix="${SKEIN_PREFIX:-}"; ranks=16; workers=2; runs=3; out=""
die() { echo "alloc.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --ranks) ranks="$2"; shift 2 ;;
    --workers) workers="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) sed -n '2,/^set -u/p' "${BASH_SOURCE[0]}" | grep '^#' | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option $1" ;;
    *) prefix="$1"; shift ;;
  esac
done
[ -n "$prefix" ] || die "give the Skein prefix (argument or SKEIN_PREFIX)"
for v in "$ranks" "$workers" "$runs"; do [[ "$v" =~ ^[1-9][0-9]*$ ]] || die "bad number $v"; done
command -v strace >/dev/null || die "strace not found"
build=$(mktemp -d /tmp/alloc-bench.XXXXXX)
# shellcheck disable=SC2086
"$prefix/bin/mpicc" ${BENCH_CFLAGS:--O2} -o "$build/alloc" "$here/bench/alloc.c" || die "build failed"

median() { printf '%s\n' "$@" | grep -E '^[0-9.]+$' | sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
kv() { awk -v p="$2" -v a="alloc=$3" -v k="$4" '$1 == p && $2 == a { for (i = 3; i <= NF; i++) { split($i, x, "="); if (x[1] == k) print x[2] } }' "$1"; }
declare -A V
for setting in on off; do
  for r in $(seq 1 "$runs"); do
    log="$build/$setting.$r.txt"
    SKEIN_HEAP_RECYCLE=$([ $setting = on ] && echo 1 || echo 0) "$prefix/bin/mpiexec" -n "$ranks" --workers "$workers" \
      "$build/alloc" >"$log" 2>&1 || die "run failed: $log"
    for a in malloc glibc; do
      V[$setting:$a:churn]+=" $(kv "$log" churn $a Mpairs_per_s)"
      V[$setting:$a:prodcons]+=" $(kv "$log" prodcons $a Mblocks_per_s)"
      V[$setting:$a:relay]+=" $(kv "$log" relay $a ms_per_rank)"
    done
    V[$setting:maps]+=" $(kv "$log" relay malloc pool_maps)"
  done
  # one more run under strace for the system calls of the whole job
  SKEIN_HEAP_RECYCLE=$([ $setting = on ] && echo 1 || echo 0) SKEIN_NP=$ranks SKEIN_WORKERS=$workers \
    strace -f -c -e trace=mmap,munmap,madvise,mbind -o "$build/strace.$setting.txt" "$build/alloc" >/dev/null 2>&1
  for c in mmap munmap madvise mbind; do
    V[$setting:sys:$c]=$(awk -v c=$c '$NF == c { print $4 }' "$build/strace.$setting.txt")
  done
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "n/a"; else printf "%.2f", a / b }'; }
{
  echo "## Allocation throughput, $ranks ranks on $workers workers (median of $runs runs)"
  echo
  echo "| pool | figure | Skein heap | glibc | heap / glibc |"
  echo "|---|---|---:|---:|---:|"
  for setting in on off; do
    for m in churn:Mpairs/s prodcons:Mblocks/s relay:ms/rank; do
      k=${m%%:*}; u=${m#*:}
      a=$(median ${V[$setting:malloc:$k]}); b=$(median ${V[$setting:glibc:$k]})
      echo "| $setting | $k ($u) | $a | $b | $(ratio "$a" "$b") |"
    done
  done
  echo
  echo "System calls of one whole run (strace -f -c): "
  echo
  echo "| pool | mmap | munmap | madvise | mbind |"
  echo "|---|---:|---:|---:|---:|"
  for setting in on off; do
    echo "| $setting | ${V[$setting:sys:mmap]:-0} | ${V[$setting:sys:munmap]:-0} | ${V[$setting:sys:madvise]:-0} | ${V[$setting:sys:mbind]:-0} |"
  done
} | tee "${out:-/dev/null}"
rm -rf "$build"
