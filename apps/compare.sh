#!/usr/bin/env bash
# compare.sh — build apps/bench against Skein, Debian MPICH and Debian Open MPI,
# run them side by side, print one table of medians and ratios.
#
# usage: apps/compare.sh [SKEIN_PREFIX] [options]
#   --skein-prefix DIR  Skein install prefix (or env SKEIN_PREFIX); uses DIR/bin/mpicc
#                       and DIR/bin/mpiexec. A flavour whose compiler is missing is skipped.
#   -R, --runs N        repeated runs per benchmark; figures are medians (default 3)
#   --flavours LIST     subset of skein,mpich,openmpi (default: all three)
#   --out FILE          also write the results as markdown to FILE
#   --callgrind         also count instructions per send+recv pair with callgrind
#   --cg-runs K         callgrind runs per N; the minimum is kept (default 2)
#   --no-timing         skip the timed benchmarks (with --callgrind: counts only);
#                       with --coll the collective table is still made
#   --coll              make the collective table (the default, unless --no-timing):
#                       apps/bench/coll.c and halo.c, allreduce, bcast, barrier,
#                       alltoall, halo exchange with 2 to 16 ranks (~2 min for R = 3)
#   --no-coll           skip the collective table
#   --coll-cap S        time cap in seconds per figure of coll/halo (default 3)
#   --build DIR         scratch directory (default /tmp/bench-build/compare)
#   --pairs-ranks N     ranks of the pairwise test (default 16)
#
# Environment: BENCH_CFLAGS (default -O2), CC for memcpy_bw (default cc),
# SKEIN_MPIEXEC_FLAGS (extra launcher flags for Skein), SKEIN_CALLGRIND_ENV
# (environment for Skein's plain callgrind run, default SKEIN_WORKERS=1: all
# ranks on one worker, so that no idle worker spins while the other rank runs).
set -u -o pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src="$here/bench"

runs=3
flavours="skein,mpich,openmpi"
out=""
do_cg=0
cg_runs=2
do_timing=1
build=/tmp/bench-build/compare
pairs_ranks=16
do_coll=auto   # auto: with the timed benchmarks
coll_cap=3
prefix="${SKEIN_PREFIX:-}"
cflags="${BENCH_CFLAGS:--O2}"

die() { echo "compare.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --skein-prefix) prefix="$2"; shift 2 ;;
    -R|--runs) runs="$2"; shift 2 ;;
    --flavours) flavours="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --callgrind) do_cg=1; shift ;;
    --cg-runs) cg_runs="$2"; shift 2 ;;
    --no-timing) do_timing=0; shift ;;
    --coll) do_coll=1; shift ;;
    --no-coll) do_coll=0; shift ;;
    --coll-cap) coll_cap="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    --pairs-ranks) pairs_ranks="$2"; shift 2 ;;
    -h|--help) sed -n '2,/^set -u/p' "${BASH_SOURCE[0]}" | grep '^#' | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option $1" ;;
    *) prefix="$1"; shift ;;
  esac
done
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || die "bad --runs $runs"
[[ "$cg_runs" =~ ^[1-9][0-9]*$ ]] || die "bad --cg-runs $cg_runs"
[[ "$coll_cap" =~ ^[0-9]+([.][0-9]+)?$ ]] || die "bad --coll-cap $coll_cap"
[ "$do_coll" = auto ] && do_coll=$do_timing

load0=$(cut -d' ' -f1-3 /proc/loadavg)  # timings are only as good as the machine is idle
mkdir -p "$build" || die "cannot create $build"
build=$(cd "$build" && pwd)
logs="$build/logs"
rm -rf "$logs"; mkdir -p "$logs"

# ------------------------------------------------------------------ flavours
# Peer MPIs are always called by their suffixed names, never plain mpicc/mpirun.
# MPICH: -bind-to core (unbound, both ranks sometimes share a core for a while,
#   which made a whole run ~8 ms per round trip).
# Open MPI: --mca pml ob1 --mca btl self,vader (the shared-memory BTL; pml ucx
#   cannot be selected on this machine, so this is also what the default picks,
#   said explicitly so that no other BTL is probed).
hostcc="${CC:-cc}"
declare -A MPICC LAUNCH NAME
NAME[skein]="Skein"; NAME[mpich]="MPICH"; NAME[openmpi]="Open MPI"
MPICC[skein]="${prefix:+$prefix/bin/mpicc}"
LAUNCH[skein]="${prefix:+$prefix/bin/mpiexec} ${SKEIN_MPIEXEC_FLAGS:-}"
MPICC[mpich]="mpicc.mpich"
LAUNCH[mpich]="mpiexec.mpich -bind-to core"
MPICC[openmpi]="mpicc.openmpi"
LAUNCH[openmpi]="mpirun.openmpi --allow-run-as-root --oversubscribe --mca pml ob1 --mca btl self,vader"
declare -A BUILDFAIL   # BUILDFAIL[flavour:prog] = first error line of a failed build
declare -A RANKVAR=([mpich]=PMI_RANK [openmpi]=OMPI_COMM_WORLD_RANK) # for callgrind file names

active=()
IFS=, read -r -a wanted <<<"$flavours"
for f in "${wanted[@]}"; do
  case "$f" in skein|mpich|openmpi) ;; *) die "unknown flavour $f" ;; esac
  cc="${MPICC[$f]}"
  if [ -z "$cc" ]; then
    echo "skip ${NAME[$f]}: no prefix given (--skein-prefix DIR or SKEIN_PREFIX)" >&2; continue
  fi
  if ! command -v "$cc" >/dev/null 2>&1; then
    echo "skip ${NAME[$f]}: compiler $cc not found" >&2; continue
  fi
  launcher=${LAUNCH[$f]%% *}
  if ! command -v "$launcher" >/dev/null 2>&1; then
    echo "skip ${NAME[$f]}: launcher $launcher not found" >&2; continue
  fi
  mkdir -p "$build/$f"
  # shellcheck disable=SC2086 # $cflags is a list of flags
  if ! $cc $cflags -o "$build/$f/pingpong" "$src/pingpong.c" >"$logs/build-$f.txt" 2>&1; then
    echo "skip ${NAME[$f]}: build failed, see $logs/build-$f.txt" >&2; continue
  fi
  active+=("$f")
  # collective benchmarks: a program that does not build is n/a for this flavour
  if [ $do_coll -eq 1 ]; then
    for prog in coll halo; do
      # shellcheck disable=SC2086
      if ! $cc $cflags -o "$build/$f/$prog" "$src/$prog.c" >"$logs/build-$f-$prog.txt" 2>&1; then
        rm -f "$build/$f/$prog"
        why=$(grep -m1 -E 'undefined reference|error' "$logs/build-$f-$prog.txt" | sed 's/^.*: //' | tr -d "\`'")
        echo "  ${NAME[$f]}: $prog.c does not build (${why:-see log}), $logs/build-$f-$prog.txt" >&2
        BUILDFAIL[$f:$prog]="${why:-build failed}"
      fi
    done
  fi
done
# shellcheck disable=SC2086
if ! "$hostcc" $cflags -o "$build/memcpy_bw" "$src/memcpy_bw.c" >"$logs/build-memcpy.txt" 2>&1; then
  die "memcpy_bw build failed, see $logs/build-memcpy.txt"
fi
[ ${#active[@]} -gt 0 ] || die "no MPI flavour available"
echo "flavours: ${active[*]}; runs: $runs; scratch: $build" >&2

# ------------------------------------------------------------------ helpers
# run TIMEOUT LOG cmd... : run with a time limit; output to LOG; status kept.
run() {
  local t=$1 log=$2; shift 2
  timeout -k 5 "$t" "$@" >"$log" 2>&1
  local rc=$?
  if [ $rc -ne 0 ]; then
    echo "  warning: rc=$rc ($([ $rc -eq 124 ] && echo timeout || echo failed)): $* -> $log" >&2
  fi
  return $rc
}

# field FILE LINE-PREFIX BYTES KEY : value of KEY= on the line "PREFIX bytes=BYTES ..."
field() {
  awk -v p="$2" -v b="bytes=$3" -v k="$4" '
    $1 == p { hit = 0; for (i = 2; i <= NF; i++) if ($i == b) hit = 1
              if (hit) for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) v = kv[2] } }
    END { if (v != "") print v }' "$1" 2>/dev/null
}

# kv FILE LINE-PREFIX SELECTOR KEY : value of KEY= on the line "PREFIX ... SELECTOR ..."
# (SELECTOR is a whole key=value field, e.g. bytes=8 or ranks=4)
kv() {
  awk -v p="$2" -v b="$3" -v k="$4" '
    $1 == p { hit = 0; for (i = 2; i <= NF; i++) if ($i == b) hit = 1
              if (hit) for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) v = kv[2] } }
    END { if (v != "") print v }' "$1" 2>/dev/null
}

# median of the numbers given as arguments (empty when none)
median() {
  printf '%s\n' "$@" | grep -E '^[0-9.eE+-]+$' | sort -g |
    awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}

declare -A VALS   # VALS[flavour:metric] = space-separated per-run values
add() { VALS[$1:$2]="${VALS[$1:$2]:-} $3"; }

# ------------------------------------------------------------------ timed runs
if [ $do_timing -eq 1 ]; then
  for r in $(seq 1 "$runs"); do
    echo "run $r/$runs" >&2
    for f in "${active[@]}"; do
      exe="$build/$f/pingpong"; L="${LAUNCH[$f]}"
      lg="$logs/$f.r$r"
      # shellcheck disable=SC2086
      run 60 "$lg.latency.txt" $L -n 2 "$exe" latency --sizes 0,8 --reps 11
      add "$f" lat0 "$(field "$lg.latency.txt" latency 0 usec)"
      add "$f" lat8 "$(field "$lg.latency.txt" latency 8 usec)"
      # shellcheck disable=SC2086
      run 60 "$lg.bandwidth.txt" $L -n 2 "$exe" bandwidth --sizes 4M,16M --reps 11
      add "$f" bw4 "$(field "$lg.bandwidth.txt" bandwidth 4194304 MBps)"
      add "$f" bw16 "$(field "$lg.bandwidth.txt" bandwidth 16777216 MBps)"
      # Oversubscribed busy-polling peers take ~16 ms per round trip here: the
      # test is bounded by --reps, --max-iters and --time-cap, and by timeout.
      # shellcheck disable=SC2086
      run 90 "$lg.pairs.txt" $L -n "$pairs_ranks" "$exe" pairs --bytes 0 --reps 5 \
        --max-iters 100000 --time-cap 10
      add "$f" pairs "$(field "$lg.pairs.txt" pairs 0 usec)"
      grep -h '^ERROR' "$lg".*.txt >&2 && echo "  ${NAME[$f]}: data errors, see $lg.*.txt" >&2
    done
    run 60 "$logs/memcpy.r$r.txt" "$build/memcpy_bw" --sizes 4M,16M --reps 9
    add mem mem4 "$(field "$logs/memcpy.r$r.txt" memcpy 4194304 MBps)"
    add mem mem16 "$(field "$logs/memcpy.r$r.txt" memcpy 16777216 MBps)"
  done
fi

# ------------------------------------------------------------------ collectives
# coll.c and halo.c, flavours interleaved within each run. Figures (bytes, ranks):
#   allreduce 8 B and 1 MiB at 2 and 16 ranks, 1 MiB at 4 and 8; bcast 1 MiB at
#   2, 4, 8, 16; barrier 16; alltoall 8 B and 64 KiB per block at 16; halo 4, 16.
# Process-based peers oversubscribed on few cores take up to ~0.5 s per call;
# each figure is bounded by --time-cap (coll_cap) and each launch by timeout.
COLL_RANKS="2 4 8 16"
if [ $do_coll -eq 1 ]; then
  # crun FLAVOUR PROG NRANKS NFIGURES LOG args... : one bounded launch
  crun() {
    local f=$1 prog=$2 np=$3 nfig=$4 log=$5; shift 5
    local exe="$build/$f/$prog"
    if [ ! -x "$exe" ]; then echo "not built: ${BUILDFAIL[$f:$prog]:-}" >"$log"; return 1; fi
    local t
    t=$(awk -v n="$nfig" -v c="$coll_cap" 'BEGIN { printf "%d", 40 + 2.5 * n * c }')
    # shellcheck disable=SC2086 # the launcher is a command and its flags
    run "$t" "$log" ${LAUNCH[$f]} -n "$np" "$exe" "$@" --time-cap "$coll_cap"
  }
  for r in $(seq 1 "$runs"); do
    echo "collectives run $r/$runs" >&2
    for f in "${active[@]}"; do
      lg="$logs/$f.r$r.coll"
      for np in $COLL_RANKS; do
        sz=1M; nfig=1
        if [ "$np" = 2 ] || [ "$np" = 16 ]; then sz=8,1M; nfig=2; fi
        crun "$f" coll "$np" $nfig "$lg.allreduce.$np.txt" allreduce --sizes $sz --reps 5
        add "$f" "ar1m_$np" "$(kv "$lg.allreduce.$np.txt" allreduce bytes=1048576 MBps)"
        [ $nfig = 2 ] && add "$f" "ar8_$np" "$(kv "$lg.allreduce.$np.txt" allreduce bytes=8 usec)"
        crun "$f" coll "$np" 1 "$lg.bcast.$np.txt" bcast --sizes 1M --reps 5
        add "$f" "bc1m_$np" "$(kv "$lg.bcast.$np.txt" bcast bytes=1048576 MBps)"
      done
      crun "$f" coll 16 1 "$lg.barrier.16.txt" barrier --reps 5
      add "$f" bar16 "$(kv "$lg.barrier.16.txt" barrier bytes=0 usec)"
      crun "$f" coll 16 2 "$lg.alltoall.16.txt" alltoall --sizes 8,64K --reps 5
      add "$f" a2a8 "$(kv "$lg.alltoall.16.txt" alltoall bytes=8 usec)"
      add "$f" a2a64k "$(kv "$lg.alltoall.16.txt" alltoall bytes=65536 usec)"
      for np in 4 16; do
        crun "$f" halo "$np" 1 "$lg.halo.$np.txt" --reps 5
        add "$f" "halo_$np" "$(kv "$lg.halo.$np.txt" halo "ranks=$np" MBps)"
        add "$f" "halou_$np" "$(kv "$lg.halo.$np.txt" halo "ranks=$np" usec)"
      done
      grep -h '^ERROR' "$lg".*.txt >&2 && echo "  ${NAME[$f]}: data errors, see $lg.*.txt" >&2
    done
  done
fi

# shellcheck disable=SC2086 # the values are a space-separated list
med() { median ${VALS[$1:$2]:-}; }
# fmt VALUE DECIMALS -> formatted or "n/a"
fmt() { if [ -n "$1" ]; then printf "%.${2}f" "$1"; else printf "n/a"; fi; }
# ratio A B -> A/B with 2 decimals or "—"
ratio() { if [ -n "$1" ] && [ -n "$2" ]; then awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else printf "—" }'; else printf "—"; fi; }
# best DIRECTION(min|max) values... -> best non-empty value
best() {
  local dir=$1; shift
  printf '%s\n' "$@" | grep -E '^[0-9.eE+-]+$' | sort -g | if [ "$dir" = min ]; then head -1; else tail -1; fi
}

report=$(mktemp)

{
  echo "## Skein vs peer MPIs ($(date -u +%Y-%m-%d), $(nproc) cores, $(uname -r), load average before: $load0)"
  echo
  if [ $do_timing -eq 1 ]; then
    hdr="| metric |"; sep="|---|"
    for f in skein mpich openmpi; do hdr="$hdr ${NAME[$f]} |"; sep="$sep---:|"; done
    echo "$hdr Skein / better peer |"; echo "$sep---:|"
    row() { # row LABEL METRIC DECIMALS min|max
      local line="| $1 |" v peers=() sk
      for f in skein mpich openmpi; do
        v=$(med "$f" "$2"); line="$line $(fmt "$v" "$3") |"
        [ "$f" = skein ] && sk="$v" || peers+=("$v")
      done
      echo "$line $(ratio "$sk" "$(best "$4" "${peers[@]}")") |"
    }
    row "0 B latency, µs (half round trip)" lat0 3 min
    row "8 B latency, µs" lat8 3 min
    row "4 MiB bandwidth, MB/s (ping-pong)" bw4 0 max
    row "16 MiB bandwidth, MB/s (ping-pong)" bw16 0 max
    row "$pairs_ranks ranks pairwise 0 B latency, µs" pairs 3 min
    m4=$(med mem mem4); m16=$(med mem mem16)
    echo "| memcpy 4 MiB, MB/s (1 thread) | $(fmt "$m4" 0) | $(fmt "$m4" 0) | $(fmt "$m4" 0) | — |"
    echo "| memcpy 16 MiB, MB/s (1 thread) | $(fmt "$m16" 0) | $(fmt "$m16" 0) | $(fmt "$m16" 0) | — |"
    line4="| 4 MiB bandwidth / memcpy 4 MiB |"; line16="| 16 MiB bandwidth / memcpy 16 MiB |"
    for f in skein mpich openmpi; do
      line4="$line4 $(ratio "$(med "$f" bw4)" "$m4") |"; line16="$line16 $(ratio "$(med "$f" bw16)" "$m16") |"
    done
    echo "$line4 — |"; echo "$line16 — |"
    echo
    echo "Each cell is the median of $runs runs; each run's figure is itself the median of"
    echo "several timed batches (pingpong.c). Bandwidth is ping-pong: bytes / half round trip,"
    echo "one message in flight, MB = 10^6 B. Ratio Skein / better peer: below 1 is better for"
    echo "latency, above 1 is better for bandwidth. The pairwise test runs $pairs_ranks ranks on"
    echo "$(nproc) cores: process-based MPIs busy-poll, so their figure depends on OS time slices."
    echo "n/a: flavour skipped or the run failed (logs in $logs)."
    echo
    sk_launch="(no prefix given)"; [ -n "$prefix" ] && sk_launch="${LAUNCH[skein]% }"
    echo "Launchers: Skein \`$sk_launch\`; MPICH \`${LAUNCH[mpich]}\`;"
    echo "Open MPI \`${LAUNCH[openmpi]}\`. Compiled with \`$cflags\`."
    echo
  fi
} >"$report"

if [ $do_coll -eq 1 ]; then
  {
    echo "### Collectives and halo exchange ($(nproc) cores)"
    echo
    hdr="| metric |"; sep="|---|"
    for f in skein mpich openmpi; do hdr="$hdr ${NAME[$f]} |"; sep="$sep---:|"; done
    echo "$hdr Skein / better peer | goal |"; echo "$sep---:|---|"
    # crow LABEL METRIC DECIMALS min|max [GOAL: "<= X" or ">= X"]
    crow() {
      local line="| $1 |" v peers=() sk rt goal="${5:-}" mark=""
      for f in skein mpich openmpi; do
        v=$(med "$f" "$2"); line="$line $(fmt "$v" "$3") |"
        [ "$f" = skein ] && sk="$v" || peers+=("$v")
      done
      rt=$(ratio "$sk" "$(best "$4" "${peers[@]}")")
      if [ -n "$goal" ] && [[ "$rt" =~ ^[0-9.]+$ ]]; then
        mark=$(awk -v r="$rt" -v op="${goal%% *}" -v g="${goal##* }" \
          'BEGIN { ok = (op == "<=") ? (r <= g) : (r >= g); printf "%s", ok ? " ✓" : " ✗" }')
      fi
      echo "$line $rt | ${goal:+$goal$mark} |"
    }
    crow "8 B allreduce, 2 ranks, µs per call" ar8_2 3 min "<= 0.5"
    crow "8 B allreduce, 16 ranks, µs per call" ar8_16 3 min "<= 0.05"
    for np in $COLL_RANKS; do crow "1 MiB allreduce, $np ranks, MB/s" "ar1m_$np" 0 max ">= 1.5"; done
    for np in $COLL_RANKS; do crow "1 MiB bcast, $np ranks, MB/s" "bc1m_$np" 0 max ">= 1.5"; done
    crow "barrier, 16 ranks, µs" bar16 3 min
    crow "8 B alltoall, 16 ranks, µs per call" a2a8 3 min
    crow "64 KiB alltoall (per block), 16 ranks, µs per call" a2a64k 1 min
    for np in 4 16; do
      crow "halo 4096², $np ranks, MB/s exchanged" "halo_$np" 0 max ">= 1.5"
      crow "halo 4096², $np ranks, µs per iteration" "halou_$np" 1 min
    done
    echo
    echo "Each cell is the median of $runs runs; each run's figure is the median over timed"
    echo "batches of the slowest rank's batch time (apps/bench/coll.c, halo.c), per call."
    echo "Allreduce sums doubles; MB/s = bytes / time per call (allreduce, bcast), MB = 10^6 B."
    echo "Alltoall: bytes per destination block. Halo: 4096 x 4096 doubles on a periodic"
    echo "near-square process grid (2 x 2, 4 x 4), 4 edges per rank per iteration, east/west as"
    echo "MPI_Type_vector; MB/s = bytes sent by all ranks per iteration / time per iteration."
    echo "Ratio Skein / better peer: below 1 is better for times, above 1 for MB/s; goal ✓/✗"
    echo "compares that ratio with the target. $(nproc) cores: beyond $(nproc) ranks the"
    echo "process-based MPIs are oversubscribed (each figure is capped at ${coll_cap} s of batches,"
    echo "so their slowest figures rest on few batches)."
    for k in "${!BUILDFAIL[@]}"; do
      echo "n/a for ${NAME[${k%%:*}]}: ${k##*:}.c does not build (\`${BUILDFAIL[$k]}\`)."
    done
    echo "n/a: flavour skipped, program not built, or the run failed (logs in $logs)."
    echo
  } >>"$report"
fi

# ------------------------------------------------------------------ callgrind
# Instructions per send+recv pair, from I(2N) - I(N) with N = 1000, 8 B.
#   plain   : `pingpong iters N`, the ping-pong as is.
#   handoff : `pingpong iters N --handoff`: the ranks pass the turn through POSIX
#             semaphores outside MPI, so every receive finds its message already
#             sent and never polls; the semaphore calls are left out of the count.
# Peers (one process per rank): rank 0's process, counted only inside the loop
#   function (--collect-atstart=no --toggle-collect=pp_loop | pp_handoff) so that
#   the polling inside MPI_Init does not swamp the difference. Per iteration rank 0
#   does one send and one receive: pair = diff / N.
# Skein (all ranks in one process): per iteration the process runs two sends and
#   two receives (one of each per rank): pair = diff / N / 2.
#   plain  : whole process, with $SKEIN_CALLGRIND_ENV (one worker: a blocked rank
#            switches to the other, nothing polls; a toggle on pp_loop would not
#            survive the user-level stack switches).
#   handoff: default workers (one rank per worker; a semaphore wait blocks the
#            whole worker), counted inside pp_handoff of each worker thread.
# Each count is the minimum over --cg-runs runs (waiting can only add instructions).
if [ $do_cg -eq 1 ]; then
  if ! command -v valgrind >/dev/null; then
    echo "skip callgrind: valgrind not found" >&2
  else
    cgdir="$build/callgrind"; rm -rf "$cgdir"; mkdir -p "$cgdir"
    N=1000; N2=2000
    skein_cg_env="${SKEIN_CALLGRIND_ENV-SKEIN_WORKERS=1}"
    # total Ir of one callgrind output file
    cg_total() { awk '/^(summary|totals):/ { print $2; exit }' "$1"; }
    # cg_count FLAVOUR MODE N -> "MIN MAX" Ir over cg_runs runs (empty if none)
    cg_count() {
      local f=$1 mode=$2 n=$3 k best="" worst="" v
      local args=(iters "$n") exe="$build/$1/pingpong" L="${LAUNCH[$1]}"
      local tog=(--collect-atstart=no --toggle-collect=pp_loop)
      if [ "$mode" = handoff ]; then
        args+=(--handoff)
        tog=(--collect-atstart=no --toggle-collect=pp_handoff --toggle-collect=pp_oob_post
             --toggle-collect=pp_oob_wait)
      fi
      for k in $(seq 1 "$cg_runs"); do
        local d="$cgdir/$f.$mode.$n.$k"; mkdir -p "$d"; v=""
        if [ "$f" = skein ]; then
          local envs=()
          # shellcheck disable=SC2206 # a list of VAR=value words
          [ "$mode" = plain ] && { envs=($skein_cg_env); tog=(); }
          # shellcheck disable=SC2086
          run 300 "$d/log.txt" env "${envs[@]}" valgrind --tool=callgrind --trace-children=yes \
            "${tog[@]}" --callgrind-out-file="$d/cg.%p.out" $L -n 2 "$exe" "${args[@]}"
          # the process(es) running the ranks: outputs whose command is the pingpong
          # executable (not the launcher); summed, in case Skein used several
          v=$(for o in "$d"/cg.*.out; do
                [ -f "$o" ] && awk '/^cmd:/ { n = split($2, p, "/"); exit !(p[n] == "pingpong") }' "$o" &&
                  cg_total "$o"
              done | awk '{ s += $1; n++ } END { if (n) printf "%d", s }')
        else
          # shellcheck disable=SC2086
          run 300 "$d/log.txt" $L -n 2 valgrind --tool=callgrind "${tog[@]}" \
            --callgrind-out-file="$d/cg.%q{${RANKVAR[$f]}}.out" "$exe" "${args[@]}"
          [ -f "$d/cg.0.out" ] && v=$(cg_total "$d/cg.0.out")
        fi
        if grep -q 'handoff wait timed out' "$d/log.txt"; then
          echo "  ${NAME[$f]} $mode: both ranks on one kernel thread, handoff invalid ($d)" >&2; v=""
        fi
        if [ -n "$v" ] && { [ -z "$best" ] || [ "$v" -lt "$best" ]; }; then best=$v; fi
        if [ -n "$v" ] && { [ -z "$worst" ] || [ "$v" -gt "$worst" ]; }; then worst=$v; fi
      done
      [ -n "$best" ] && echo "$best $worst"
    }
    {
      echo "### Instructions per send+recv pair (callgrind, 8 B, N = $N vs $N2, min of $cg_runs runs)"
      echo
      echo "| flavour | mode | I(N) | I(2N) | per send+recv pair | run-to-run spread | counted |"
      echo "|---|---|---:|---:|---:|---:|---|"
    } >>"$report"
    for f in "${active[@]}"; do
      for mode in plain handoff; do
        echo "callgrind: ${NAME[$f]} $mode" >&2
        read -r a amax <<<"$(cg_count "$f" "$mode" $N)"
        read -r b bmax <<<"$(cg_count "$f" "$mode" $N2)"
        if [ "$f" = skein ] && [ "$mode" = plain ]; then div=$((2 * N)); how="whole process ($skein_cg_env), diff / N / 2"
        elif [ "$f" = skein ]; then div=$((2 * N)); how="both workers, loop only, diff / N / 2"
        else div=$N; how="rank 0 process, loop only, diff / N"; fi
        per="n/a"; spread="n/a"
        if [ -n "$a" ] && [ -n "$b" ]; then
          per=$(awk -v a="$a" -v b="$b" -v d="$div" 'BEGIN { printf "%.0f", (b - a) / d }')
          # largest (max - min) over the two N, in instructions per pair
          spread=$(awk -v a="$a" -v A="$amax" -v b="$b" -v B="$bmax" -v d="$div" \
            'BEGIN { s = A - a; if (B - b > s) s = B - b; printf "%.0f", s / d }')
        fi
        echo "| ${NAME[$f]} | $mode | ${a:-n/a} | ${b:-n/a} | $per | $spread | $how |" >>"$report"
      done
    done
    {
      echo
      echo "A process-based MPI runs one rank per process: one iteration of rank 0 is one send"
      echo "and one receive, so the cost of a pair is (I(2N) - I(N)) / N of rank 0's process."
      echo "Skein runs both ranks in one process: one iteration of the process is two sends and"
      echo "two receives, so the cost of a pair is (I(2N) - I(N)) / N / 2."
      echo "*plain* counts everything a rank executes, including the empty progress polls of"
      echo "a receiver that waits: for busy-polling peers it varies from run to run and with"
      echo "the machine's load (an upper bound). *handoff* passes the turn between the ranks"
      echo "through semaphores outside MPI, so each receive finds its message already sent:"
      echo "the send and receive paths alone, exact to a few instructions. (For the peers the"
      echo "message waits in the shared-memory queue and meets a posted receive when the receiver"
      echo "polls; Skein's local transport delivers at send time, so under handoff Skein's sender"
      echo "finds no posted receive and takes the unexpected-message path, while its plain"
      echo "one-worker run takes the posted-receive path.) *run-to-run spread*:"
      echo "largest max - min of the $cg_runs counts of one N, per pair; a spread near the"
      echo "per-pair figure means that figure is noise. Outputs: $cgdir."
      echo
    } >>"$report"
  fi
fi

cat "$report"
if [ -n "$out" ]; then
  mkdir -p "$(dirname "$out")" && cp "$report" "$out" && echo "written: $out" >&2
fi
rm -f "$report"
