#!/usr/bin/env bash
# multicompare.sh — Skein jobs spread over several processes (issue 6) side by side with
# Debian's MPICH (ch4:ucx) and Open MPI, in one run, as one markdown table:
#   - ping-pong between 2 processes of 1 rank each, UCX_TLS=tcp and UCX_TLS=sm:
#     8-byte latency (half round trip) and 4 MiB ping-pong bandwidth (pingpong.c);
#   - allreduce of 8 B and 1 MiB (coll.c): Skein 4 processes x 4 ranks, peers 16 processes;
#   - memory: PSS of every process of the job (apps/memory.sh, program memfoot miniapp):
#     Skein 4 processes x 8 ranks, peers 32 processes;
#   - connections: endpoints per process that Skein reports (SKEIN_NETSTATS=1) for 32 ranks
#     in 4 processes doing all-to-all (tests/mpi/storm), against the peers' count of
#     connected rank pairs (a formula: one process per rank).
# A column "Skein, 1 process" gives the same job with all ranks in one process.
#
# usage: apps/bench/multicompare.sh [BUILD_DIR] [options]
#   BUILD_DIR          Skein build (or install) directory: BUILD_DIR/bin/{mpicc,skeinrun};
#                      the connection count also needs BUILD_DIR/tests/mpi/storm
#   -R, --runs N       launches per figure, interleaved over the flavours; each cell is the
#                      median of the N launches' figures (default 5)
#   --only LIST        subset of pp,coll,mem,conn (default: all)
#   --flavours LIST    subset of skein,mpich,openmpi (default: all; the others say "not run")
#   --coll-cap S       time cap per allreduce figure (coll.c --time-cap, default 3)
#   --mem-prog P       memfoot program for the memory row (default miniapp)
#   --out FILE         also write the table to FILE
#   --scratch DIR      builds and logs (default /tmp/bench-build/multicompare)
# Environment: BENCH_CFLAGS (default -O2), SKEINRUN_FLAGS (extra skeinrun flags).
# Launchers (peers by their suffixed names only):
#   Skein     BUILD_DIR/bin/skeinrun -n N --procs P
#   MPICH     mpiexec.mpich -bind-to core (UCX_TLS passed through the environment)
#   Open MPI  ping-pong: mpirun.openmpi --mca pml ucx --mca pml_ucx_tls any
#             --mca pml_ucx_devices any -x UCX_TLS (pml ucx refuses to start here without
#             the last two: its defaults name InfiniBand transports and mlx devices only);
#             allreduce and memory: --mca pml ob1 --mca btl self,vader, as apps/compare.sh
#             and apps/memory.sh (its fastest shared-memory path on this machine)
# About 1-2 minutes for -R 7 on 2 cores.
set -u -o pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=""
runs=5
only="pp,coll,mem,conn"
flavours="skein,mpich,openmpi"
coll_cap=3
mem_prog=miniapp
out=""
scratch=/tmp/bench-build/multicompare
cflags="${BENCH_CFLAGS:--O2}"

die() { echo "multicompare.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    -R|--runs) runs="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    --flavours) flavours="$2"; shift 2 ;;
    --coll-cap) coll_cap="$2"; shift 2 ;;
    --mem-prog) mem_prog="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --scratch) scratch="$2"; shift 2 ;;
    -h|--help) sed -n '2,/^set -u/p' "${BASH_SOURCE[0]}" | grep '^#' | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option $1" ;;
    *) build="$1"; shift ;;
  esac
done
[ -n "$build" ] || build="$here/../../build"
[ -d "$build" ] || die "no build directory $build (give BUILD_DIR)"
build=$(cd "$build" && pwd)
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || die "bad --runs $runs"
[[ "$coll_cap" =~ ^[0-9]+([.][0-9]+)?$ ]] || die "bad --coll-cap $coll_cap"
want() { [[ ",$only," == *",$1,"* ]]; }

load0=$(cut -d' ' -f1-3 /proc/loadavg) # timings are only as good as the machine is idle
date0=$(date -u +%Y-%m-%dT%H:%MZ)
mkdir -p "$scratch" || die "cannot create $scratch"
scratch=$(cd "$scratch" && pwd)
logs=$scratch/logs
rm -rf "$logs"; mkdir -p "$logs"

# ------------------------------------------------------------------ flavours
# STATE[f]: empty = usable; otherwise what the table says instead of a figure
declare -A NAME=([skein]="Skein" [skein1]="Skein, 1 process" [mpich]="MPICH" [openmpi]="Open MPI")
declare -A MPICC=([skein]="$build/bin/mpicc" [mpich]=mpicc.mpich [openmpi]=mpicc.openmpi)
declare -A STATE
SKEINRUN="$build/bin/skeinrun${SKEINRUN_FLAGS:+ $SKEINRUN_FLAGS}"
OMPI="mpirun.openmpi --allow-run-as-root --oversubscribe"
OMPI_UCX="$OMPI --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any"
OMPI_SM="$OMPI --mca pml ob1 --mca btl self,vader"
MPICH="mpiexec.mpich -bind-to core"
for f in skein mpich openmpi; do
  [[ ",$flavours," == *",$f,"* ]] || { STATE[$f]="not run"; continue; }
  cc=${MPICC[$f]}
  if ! command -v "$cc" >/dev/null 2>&1; then
    STATE[$f]="not installed"; echo "${NAME[$f]}: $cc not found" >&2; continue
  fi
  launcher=$build/bin/skeinrun
  [ $f = mpich ] && launcher=mpiexec.mpich
  [ $f = openmpi ] && launcher=mpirun.openmpi
  command -v "$launcher" >/dev/null 2>&1 || { STATE[$f]="not installed"; echo "${NAME[$f]}: $launcher not found" >&2; continue; }
  mkdir -p "$scratch/$f"
  for prog in pingpong coll; do
    # shellcheck disable=SC2086 # flags
    if ! $cc $cflags -o "$scratch/$f/$prog" "$here/$prog.c" >"$logs/build-$f-$prog.txt" 2>&1; then
      STATE[$f]="build failed"; echo "${NAME[$f]}: $prog.c does not build, see $logs/build-$f-$prog.txt" >&2
    fi
  done
done
STATE[skein1]=${STATE[skein]:-}

# ------------------------------------------------------------------ helpers
# run TIMEOUT LOG cmd... : bounded run, output to LOG, status returned
run() {
  local t=$1 log=$2; shift 2
  echo "\$ $*" >"$log"
  timeout -k 5 "$t" "$@" >>"$log" 2>&1
  local rc=$?
  [ $rc -eq 0 ] || echo "  warning: rc=$rc ($([ $rc -eq 124 ] && echo timeout || echo failed)): $* -> $log" >&2
  return $rc
}
# kv FILE LINE-PREFIX SELECTOR KEY : KEY's value on the line "PREFIX ... SELECTOR ..."
kv() {
  awk -v p="$2" -v b="$3" -v k="$4" '
    $1 == p { hit = 0; for (i = 2; i <= NF; i++) if ($i == b) hit = 1
              if (hit) for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) v = kv[2] } }
    END { if (v != "") print v }' "$1" 2>/dev/null
}
median() {
  printf '%s\n' "$@" | grep -E '^[0-9.eE+-]+$' | sort -g |
    awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}
declare -A VALS # VALS[flavour:metric] = the launches' figures
add() { [ -n "$3" ] && VALS[$1:$2]="${VALS[$1:$2]:-} $3"; }
# launch FLAVOUR NPROCS NRANKS : the command line that starts NRANKS ranks in NPROCS
# processes (peers: NRANKS processes); TLS (global) is passed as UCX_TLS when set
launch() {
  local f=$1 np=$2 n=$3
  case $f in
    skein) echo "env ${TLS:+UCX_TLS=$TLS} $SKEINRUN -n $n --procs $np" ;;
    skein1) echo "$SKEINRUN -n $n" ;;
    mpich) echo "env ${TLS:+UCX_TLS=$TLS} $MPICH -n $n" ;;
    openmpi) if [ -n "${TLS:-}" ]; then echo "$OMPI_UCX -x UCX_TLS=$TLS -n $n"; else echo "$OMPI_SM -n $n"; fi ;;
  esac
}
exe() { local f=$1; [ "$f" = skein1 ] && f=skein; echo "$scratch/$f/$2"; }

# ------------------------------------------------------------------ ping-pong
TLS_LIST="tcp sm"
if want pp; then
  for r in $(seq 1 "$runs"); do
    echo "ping-pong run $r/$runs" >&2
    for TLS in $TLS_LIST; do
      for f in skein mpich openmpi; do
        [ -z "${STATE[$f]:-}" ] || continue
        lg="$logs/pp.$f.$TLS.r$r"
        # shellcheck disable=SC2046 # the launcher is a command line
        run 60 "$lg.lat.txt" $(launch $f 2 2) "$(exe $f pingpong)" latency --sizes 8 --reps 7
        add $f "lat_$TLS" "$(kv "$lg.lat.txt" latency bytes=8 usec)"
        # shellcheck disable=SC2046
        run 60 "$lg.bw.txt" $(launch $f 2 2) "$(exe $f pingpong)" bandwidth --sizes 4M --reps 7
        add $f "bw_$TLS" "$(kv "$lg.bw.txt" bandwidth bytes=4194304 MBps)"
      done
    done
    TLS=""
    if [ -z "${STATE[skein1]:-}" ]; then # both ranks in one process: UCX is not involved
      lg="$logs/pp.skein1.r$r"
      # shellcheck disable=SC2046
      run 60 "$lg.lat.txt" $(launch skein1 1 2) "$(exe skein1 pingpong)" latency --sizes 8 --reps 7
      add skein1 lat_1 "$(kv "$lg.lat.txt" latency bytes=8 usec)"
      # shellcheck disable=SC2046
      run 60 "$lg.bw.txt" $(launch skein1 1 2) "$(exe skein1 pingpong)" bandwidth --sizes 4M --reps 7
      add skein1 bw_1 "$(kv "$lg.bw.txt" bandwidth bytes=4194304 MBps)"
    fi
  done
fi
TLS=""

# ------------------------------------------------------------------ allreduce
# Oversubscribed busy-polling peers take up to ~0.5 s per call at 16 processes on 2
# cores: each figure is bounded by --time-cap, each launch by a timeout.
if want coll; then
  tmo=$(awk -v c="$coll_cap" 'BEGIN { printf "%d", 40 + 5 * c }')
  for r in $(seq 1 "$runs"); do
    echo "allreduce run $r/$runs" >&2
    for f in skein skein1 mpich openmpi; do
      [ -z "${STATE[$f]:-}" ] || continue
      lg="$logs/ar.$f.r$r.txt"
      # shellcheck disable=SC2046
      run "$tmo" "$lg" $(launch $f 4 16) "$(exe $f coll)" allreduce --sizes 8,1M --reps 5 --time-cap "$coll_cap"
      add $f ar8 "$(kv "$lg" allreduce bytes=8 usec)"
      add $f ar1m "$(kv "$lg" allreduce bytes=1048576 MBps)"
    done
  done
fi

# ------------------------------------------------------------------ memory
# apps/memory.sh measures (PSS of every process of the job while memfoot holds still);
# Skein's processes come from SKEIN_MPIEXEC_FLAGS. One sample per flavour.
if want mem; then
  echo "memory (apps/memory.sh, $mem_prog, 32 ranks)" >&2
  memflav=""
  for f in skein mpich openmpi; do [ -z "${STATE[$f]:-}" ] && memflav="$memflav,$f"; done
  memflav=${memflav#,}
  # mem_pss FILE COLUMN-NAME : PSS (MiB) of the row "| PROG | 32 |" under that column
  mem_pss() {
    awk -F'|' -v col="$2" -v prog="$mem_prog" '
      function trim(s) { gsub(/^ +| +$/, "", s); return s }
      /^\| program \| ranks \|/ && !c { for (i = 2; i < NF; i++) h[trim($i)] = i; c = 1; next }
      c && trim($2) == prog && trim($3) == "32" && (col in h) { v = trim($(h[col])); if (v != "n/a") print v; exit }' "$1" 2>/dev/null
  }
  if [ -n "$memflav" ]; then
    SKEIN_MPIEXEC_FLAGS="--procs 4" run 900 "$logs/mem.txt" bash "$here/../memory.sh" "$build" --ranks 32 \
      --progs "$mem_prog" --flavours "$memflav" --timeout 120 --build "$scratch/memory" --out "$logs/mem.md"
    for f in skein mpich openmpi; do add $f mem "$(mem_pss "$logs/mem.md" "${NAME[$f]}")"; done
  fi
  if [ -z "${STATE[skein1]:-}" ]; then
    SKEIN_MPIEXEC_FLAGS="" run 300 "$logs/mem1.txt" bash "$here/../memory.sh" "$build" --ranks 32 --progs "$mem_prog" \
      --flavours skein --timeout 120 --build "$scratch/memory1" --out "$logs/mem1.md"
    add skein1 mem "$(mem_pss "$logs/mem1.md" Skein)"
  fi
fi

# ------------------------------------------------------------------ connections
# Each Skein process prints at the end (SKEIN_NETSTATS=1):
#   skein: net: process P/NP: R ranks, E endpoints, ...
STORM=$build/tests/mpi/storm
conn_max="" conn_sum=""
if want conn && [ -z "${STATE[skein]:-}" ]; then
  if [ -x "$STORM" ]; then
    echo "connections (storm, 32 ranks, 4 processes)" >&2
    # shellcheck disable=SC2086 # SKEINRUN is a command line
    run 120 "$logs/conn.txt" env SKEIN_NETSTATS=1 $SKEINRUN -n 32 --procs 4 "$STORM"
    read -r conn_max conn_sum conn_lines <<<"$(awk '/skein: net: process [0-9]+\/4:/ {
        for (i = 1; i < NF; i++) if ($(i + 1) ~ /^endpoints/) { e = $i + 0; s += e; if (e > m) m = e }
        n++ } END { if (n) print m, s, n }' "$logs/conn.txt")"
    if [ "${conn_lines:-0}" != 4 ]; then
      echo "  connections: ${conn_lines:-no} stats lines instead of 4, see $logs/conn.txt" >&2
      conn_max="" conn_sum=""
    fi
  else
    echo "  connections: $STORM not built (tests/mpi)" >&2
  fi
fi

# ------------------------------------------------------------------ table
# shellcheck disable=SC2086 # the values are a space-separated list
med() { median ${VALS[$1:$2]:-}; }
fmt() { if [ -n "$1" ]; then printf "%.${2}f" "$1"; else printf "failed"; fi; }
ratio() { if [ -n "$1" ] && [ -n "$2" ]; then awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else printf "—" }'; else printf "—"; fi; }
# cell FLAVOUR METRIC DECIMALS : the median, or why there is none
cell() {
  if [ -n "${STATE[$1]:-}" ]; then printf '%s' "${STATE[$1]}"; else fmt "$(med "$1" "$2")" "$3"; fi
}
# row LABEL METRIC DECIMALS [SKEIN1_METRIC]
row() {
  local l sk
  l="| $1 | $(cell skein "$2" "$3") | "; sk=$(med skein "$2")
  if [ -n "${4:-}" ]; then l="$l$(cell skein1 "$4" "$3") |"; else l="$l— |"; fi
  l="$l $(cell mpich "$2" "$3") | $(cell openmpi "$2" "$3") |"
  l="$l $(ratio "$sk" "$(med mpich "$2")") | $(ratio "$sk" "$(med openmpi "$2")") |"
  echo "$l"
}
report=$(mktemp)
{
  echo "## Between processes: Skein over UCX vs MPICH and Open MPI ($date0, $(nproc) cores, $(uname -r), load average before: $load0)"
  echo
  echo "| figure | Skein | Skein, 1 process | MPICH | Open MPI | Skein / MPICH | Skein / Open MPI |"
  echo "|---|---:|---:|---:|---:|---:|---:|"
  if want pp; then
    for TLS in $TLS_LIST; do
      row "8 B latency, µs, 2 processes, UCX_TLS=$TLS" "lat_$TLS" 3 lat_1
      row "4 MiB ping-pong bandwidth, MB/s, 2 processes, UCX_TLS=$TLS" "bw_$TLS" 0 bw_1
    done
  fi
  if want coll; then
    row "8 B allreduce, µs per call, 16 ranks (Skein 4 processes x 4)" ar8 2 ar8
    row "1 MiB allreduce, MB/s, 16 ranks (Skein 4 processes x 4)" ar1m 0 ar1m
  fi
  if want mem; then
    row "memory, PSS MiB, 32 ranks ($mem_prog; Skein 4 processes x 8)" mem 1 mem
  fi
  if want conn; then
    c="${STATE[skein]:-}"; [ -n "$c" ] || c=${conn_max:-failed}
    c1="${STATE[skein1]:-}"; [ -n "$c1" ] || c1=0
    echo "| endpoints per process, 32 ranks all-to-all (Skein 4 processes x 8; peers N − 1) | $c | $c1 | 31 | 31 | $(ratio "$conn_max" 31) | $(ratio "$conn_max" 31) |"
    c="${STATE[skein]:-}"; [ -n "$c" ] || c=$([ -n "$conn_sum" ] && echo $((conn_sum / 2)) || echo failed)
    echo "| connected process pairs in the job (peers N(N − 1)/2) | $c | $c1 | 496 | 496 | $(ratio "$([ -n "$conn_sum" ] && echo $((conn_sum / 2)))" 496) | $(ratio "$([ -n "$conn_sum" ] && echo $((conn_sum / 2)))" 496) |"
  fi
  echo
  echo "Each timing cell is the median of $runs launches (flavours interleaved); each launch's"
  echo "figure is itself the median of its timed batches (apps/bench/pingpong.c, coll.c)."
  echo "Latency: half round trip; bandwidth: 4 MiB / half round trip, one message in flight,"
  echo "MB = 10^6 B; allreduce: MPI_SUM of doubles, slowest rank's time per call. Ratios"
  echo "Skein / peer: below 1 is better for µs, MiB and endpoints, above 1 for MB/s."
  echo "Skein, 1 process: the same ranks in one process (no UCX; UCX_TLS does not apply)."
  echo "Memory: apps/memory.sh, one sample, PSS summed over every process of the job"
  echo "(launchers included). Endpoints: Skein's SKEIN_NETSTATS=1 lines (tests/mpi/storm,"
  echo "every rank sends to every rank); a process-per-rank MPI connects each of its N = 32"
  echo "processes to the N − 1 others: N(N − 1)/2 pairs, where Skein needs P(P − 1)/2 = 6 for"
  echo "P = 4 processes. failed: the run failed or timed out (logs in $logs)."
  echo
  echo "Launchers: Skein \`$SKEINRUN -n N --procs P\`; MPICH \`UCX_TLS=… $MPICH\`; Open MPI"
  echo "ping-pong \`$OMPI_UCX -x UCX_TLS=…\`, allreduce and memory \`$OMPI_SM\`."
  echo "Compiled with \`$cflags\`."
} >"$report"
cat "$report"
if [ -n "$out" ]; then
  mkdir -p "$(dirname "$out")" && cp "$report" "$out" && echo "written: $out" >&2
fi
rm -f "$report"
