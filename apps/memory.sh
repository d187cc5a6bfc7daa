#!/usr/bin/env bash
# memory.sh — memory footprint of the same MPI programs on Skein, Debian MPICH and Debian
# Open MPI: PSS summed over every process of the job (launcher, proxies and ranks),
# sampled while the program holds still at a barrier with its buffers allocated
# (apps/bench/memfoot.c). Prints one table of MiB and ratios, and for Skein the
# increment per rank and a breakdown (stacks, heap, program, other anonymous, files).
#
# usage: apps/memory.sh [SKEIN_PREFIX] [options]
#   --skein-prefix DIR  Skein install (or build) prefix, or env SKEIN_PREFIX; uses
#                       DIR/bin/mpicc and DIR/bin/mpiexec
#   --ranks LIST        rank counts (default 2,8,16,32,64)
#   --progs LIST        subset of pingpong,allreduce,miniapp (default: all three)
#   --flavours LIST     subset of skein,mpich,openmpi (default: all three)
#   --workers W         Skein workers (default: the launcher's, one per core)
#   --timeout S         seconds a run may take to reach its barrier (default 300)
#   --out FILE          also write the tables as markdown to FILE
#   --svg FILE          also draw total PSS against ranks (miniapp) as an SVG plot
#   --build DIR         scratch directory (default /tmp/bench-build/memory)
# Environment: BENCH_CFLAGS (default -O2), SKEIN_MPIEXEC_FLAGS (extra flags for Skein).
# Figures: PSS from /proc/PID/smaps_rollup, in MiB (2^20 bytes). A job that fails or
# times out is reported as n/a.
set -u -o pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src="$here/bench"
ranks_list="2,8,16,32,64"
progs="pingpong,allreduce,miniapp"
flavours="skein,mpich,openmpi"
workers=""
tmo=300
out=""
svg=""
build=/tmp/bench-build/memory
prefix="${SKEIN_PREFIX:-}"
cflags="${BENCH_CFLAGS:--O2}"

die() { echo "memory.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --skein-prefix) prefix="$2"; shift 2 ;;
    --ranks) ranks_list="$2"; shift 2 ;;
    --progs) progs="$2"; shift 2 ;;
    --flavours) flavours="$2"; shift 2 ;;
    --workers) workers="$2"; shift 2 ;;
    --timeout) tmo="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --svg) svg="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    -h|--help) sed -n '2,/^set -u/p' "${BASH_SOURCE[0]}" | grep '^#' | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option $1" ;;
    *) prefix="$1"; shift ;;
  esac
done
[[ "$ranks_list" =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || die "bad --ranks $ranks_list"
[[ "$tmo" =~ ^[1-9][0-9]*$ ]] || die "bad --timeout $tmo"
[ -z "$workers" ] || [[ "$workers" =~ ^[1-9][0-9]*$ ]] || die "bad --workers $workers"
IFS=, read -r -a RANKS <<<"$ranks_list"
IFS=, read -r -a PROGS <<<"$progs"
for p in "${PROGS[@]}"; do case "$p" in pingpong|allreduce|miniapp) ;; *) die "unknown program $p" ;; esac; done
mkdir -p "$build" || die "cannot create $build"
build=$(cd "$build" && pwd)
logs="$build/logs"; rm -rf "$logs"; mkdir -p "$logs"

# ------------------------------------------------------------------ flavours
# Peer MPIs by their suffixed names only. Their launch flags are compare.sh's.
declare -A MPICC LAUNCH NAME
NAME[skein]="Skein"; NAME[mpich]="MPICH"; NAME[openmpi]="Open MPI"
MPICC[skein]="${prefix:+$prefix/bin/mpicc}"
LAUNCH[skein]="${prefix:+$prefix/bin/mpiexec} ${workers:+--workers $workers} ${SKEIN_MPIEXEC_FLAGS:-}"
MPICC[mpich]="mpicc.mpich"
LAUNCH[mpich]="mpiexec.mpich -bind-to core"
MPICC[openmpi]="mpicc.openmpi"
LAUNCH[openmpi]="mpirun.openmpi --allow-run-as-root --oversubscribe --mca pml ob1 --mca btl self,vader"
active=()
IFS=, read -r -a wanted <<<"$flavours"
for f in "${wanted[@]}"; do
  case "$f" in skein|mpich|openmpi) ;; *) die "unknown flavour $f" ;; esac
  cc="${MPICC[$f]}"
  [ -n "$cc" ] || { echo "skip ${NAME[$f]}: no prefix given (--skein-prefix DIR or SKEIN_PREFIX)" >&2; continue; }
  command -v "$cc" >/dev/null 2>&1 || { echo "skip ${NAME[$f]}: compiler $cc not found" >&2; continue; }
  mkdir -p "$build/$f"
  # shellcheck disable=SC2086
  if ! $cc $cflags -o "$build/$f/memfoot" "$src/memfoot.c" >"$logs/build-$f.txt" 2>&1; then
    echo "skip ${NAME[$f]}: build failed, see $logs/build-$f.txt" >&2; continue
  fi
  active+=("$f")
done
[ ${#active[@]} -gt 0 ] || die "no MPI flavour available"

# ------------------------------------------------------------------ sampling
# descendants PID : PID and every process below it
descendants() {
  local all=("$1") i=0
  while [ $i -lt ${#all[@]} ]; do
    local p=${all[$i]}
    for c in $(cat /proc/"$p"/task/*/children 2>/dev/null); do all+=("$c"); done
    i=$((i + 1))
  done
  echo "${all[@]}"
}
# pss_kb PIDS... : sum of Pss (kB)
pss_kb() {
  local sum=0 v
  for p in "$@"; do
    v=$(awk '$1 == "Pss:" { print $2 }' /proc/"$p"/smaps_rollup 2>/dev/null)
    sum=$((sum + ${v:-0}))
  done
  echo $sum
}
# skein_breakdown PID : "stacks_kb heap_kb anon_kb file_kb" (PSS) of a Skein process.
# ULT stacks: anonymous mappings of exactly the stack size (8 MiB unless SKEIN_STACK_KB
# says; their guard pages are mappings of their own). Heap: the mappings the rank arenas
# bound to a NUMA node (policy "bind" in /proc/PID/numa_maps): every rank arena's pages,
# its metadata and the pool's free pages. Anon: every other anonymous mapping. File:
# binaries and libraries.
skein_breakdown() {
  awk -v stk=${SKEIN_STACK_KB:-8192} '
    FNR == NR { if ($2 ~ /^bind:/) bound[$1] = 1; next }
    /^[0-9a-f]+-[0-9a-f]+ / { split($1, r, "-"); kind = (r[1] in bound) ? "h" : ($6 != "" && $6 !~ /^\[/) ? "f" : "a"; next }
    $1 == "Size:" { size = $2 }
    $1 == "Pss:" { if (kind == "a" && size == stk) kind = "s"; v[kind] += $2 }
    END { printf "%d %d %d %d\n", v["s"], v["h"], v["a"], v["f"] }' /proc/"$1"/numa_maps /proc/"$1"/smaps 2>/dev/null
}

declare -A PSS NPROC BRK OWN MEMST
for f in "${active[@]}"; do
  for prog in "${PROGS[@]}"; do
    for n in "${RANKS[@]}"; do
      dir="$build/run.$f.$prog.$n"; rm -rf "$dir"; mkdir -p "$dir"
      log="$logs/$f.$prog.$n.txt"
      echo "${NAME[$f]} $prog -n $n" >&2
      extra_env=()
      [ "$f" = skein ] && extra_env=(SKEIN_MEMSTATS=1)
      # shellcheck disable=SC2086 # LAUNCH is a command line
      env MEMFOOT_DIR="$dir" "${extra_env[@]}" setsid ${LAUNCH[$f]} -n "$n" "$build/$f/memfoot" "$prog" >"$log" 2>&1 &
      job=$!
      t0=$SECONDS
      while [ ! -e "$dir/ready" ] && kill -0 $job 2>/dev/null && [ $((SECONDS - t0)) -lt "$tmo" ]; do sleep 0.2; done
      if [ -e "$dir/ready" ]; then
        sleep 0.5 # let every rank reach the barrier
        pids=$(descendants $job)
        # shellcheck disable=SC2086
        PSS[$f:$prog:$n]=$(pss_kb $pids)
        NPROC[$f:$prog:$n]=$(echo $pids | wc -w)
        [ "$f" = skein ] && BRK[$prog:$n]=$(skein_breakdown $job)
        touch "$dir/go"
        wait $job || echo "  warning: ${NAME[$f]} $prog -n $n exited with $?, see $log" >&2
        OWN[$prog]=$(awk '$1 == "memfoot" { for (i = 2; i <= NF; i++) if ($i ~ /^own_bytes=/) { sub(/own_bytes=/, "", $i); print $i } }' "$log")
        [ "$f" = skein ] && MEMST[$prog:$n]=$(awk '$1 == "memfoot_skein" {
            for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
            print v["in_use"] }' "$log")
      else
        echo "  n/a: ${NAME[$f]} $prog -n $n did not reach its barrier (see $log)" >&2
        kill -- -$job 2>/dev/null; sleep 1; kill -9 -- -$job 2>/dev/null; wait $job 2>/dev/null
      fi
    done
  done
done

# ------------------------------------------------------------------ tables
mib() { awk -v k="$1" 'BEGIN { if (k == "") print "n/a"; else printf "%.1f", k / 1024 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "n/a"; else printf "%.2f", a / b }'; }
{
  echo "## Memory footprint: PSS of all processes of the job (MiB)"
  echo
  echo "Machine: $(nproc) cores; $(date -u +%Y-%m-%dT%H:%MZ); load before: $(cut -d' ' -f1-3 /proc/loadavg)."
  echo
  hdr="| program | ranks |"; sep="|---|---:|"
  for f in "${active[@]}"; do hdr="$hdr ${NAME[$f]} |"; sep="$sep---:|"; done
  for f in "${active[@]}"; do [ "$f" != skein ] && { hdr="$hdr Skein / ${NAME[$f]} |"; sep="$sep---:|"; }; done
  echo "$hdr"; echo "$sep"
  for prog in "${PROGS[@]}"; do
    for n in "${RANKS[@]}"; do
      row="| $prog | $n |"
      for f in "${active[@]}"; do row="$row $(mib "${PSS[$f:$prog:$n]:-}") |"; done
      for f in "${active[@]}"; do
        [ "$f" != skein ] && row="$row $(ratio "${PSS[skein:$prog:$n]:-}" "${PSS[$f:$prog:$n]:-}") |"
      done
      echo "$row"
    done
  done
  if [[ " ${active[*]} " == *" skein "* ]]; then
    echo
    echo "### Skein: increment per rank and breakdown (KiB)"
    echo
    echo "Per rank: (PSS(n) − PSS(n_prev)) / (n − n_prev) − the program's own bytes per rank."
    echo "Breakdown of the same sample (PSS, KiB): stacks = touched pages of the ranks' stacks;"
    echo "heap = the page pool's chunks (all rank arenas: the program's blocks, jemalloc's"
    echo "metadata and slack, free pages kept for reuse); program = bytes the ranks hold"
    echo "(MPIX_Heap_get_stats in_use, usable sizes); other anonymous = runtime tables, the"
    echo "default arena, worker threads; files = binaries and libraries."
    echo
    echo "| program | ranks | total | per rank beyond own | stacks | heap | of which program | other anonymous | files |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
    for prog in "${PROGS[@]}"; do
      prev=""
      for n in "${RANKS[@]}"; do
        cur=${PSS[skein:$prog:$n]:-}
        per="n/a"
        if [ -n "$prev" ] && [ -n "$cur" ]; then
          per=$(awk -v a="$cur" -v b="${PSS[skein:$prog:$prev]}" -v n="$n" -v m="$prev" -v own="${OWN[$prog]:-0}" \
            'BEGIN { printf "%.0f", (a - b) / (n - m) - own / 1024 }')
        fi
        read -r stk heap anon file <<<"${BRK[$prog:$n]:-"" "" "" ""}"
        used=$(awk -v b="${MEMST[$prog:$n]:-}" 'BEGIN { if (b == "") print "n/a"; else printf "%.0f", b / 1024 }')
        echo "| $prog | $n | ${cur:-n/a} | $per | ${stk:-n/a} | ${heap:-n/a} | $used | ${anon:-n/a} | ${file:-n/a} |"
        [ -n "$cur" ] && prev=$n
      done
    done
  fi
} | tee "${out:-/dev/null}"

# ------------------------------------------------------------------ plot
if [ -n "$svg" ]; then
  prog=miniapp; [[ " ${PROGS[*]} " == *" miniapp "* ]] || prog=${PROGS[0]}
  data=""
  for f in "${active[@]}"; do
    for n in "${RANKS[@]}"; do [ -n "${PSS[$f:$prog:$n]:-}" ] && data="$data$f $n ${PSS[$f:$prog:$n]}\n"; done
  done
  printf "$data" | python3 "$here/memory_plot.py" "$prog" >"$svg" && echo "plot: $svg" >&2
fi
