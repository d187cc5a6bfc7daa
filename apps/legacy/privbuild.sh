#!/usr/bin/env bash
# privbuild.sh — build time of mpicc -fprivatize against a plain mpicc build, on a generated
# legacy-style code base: N C sources (default 200) of ~150 lines, a shared header of
# extern globals and inline functions that use them, one source defining the globals,
# most sources using some, a quarter using none, static locals here and there.
# Times `make -jJ` from clean, plain and privatized alternately, R rounds (medians of wall
# and CPU time; SKEIN_PRIVATIZE_SERVER=0 in the environment measures without the server).
#
# usage: apps/legacy/privbuild.sh [--prefix DIR] [-n N] [-j J] [-R R] [--keep DIR]
set -euo pipefail
prefix=${SKEIN_PREFIX:-$(cd "$(dirname "$0")/../.." && pwd)/install}
n=200 jobs=2 runs=3 keep=""
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix=$2; shift ;;
    -n) n=$2; shift ;;
    -j) jobs=$2; shift ;;
    -R) runs=$2; shift ;;
    --keep) keep=$2; shift ;;
    *) echo "usage: $0 [--prefix DIR] [-n N] [-j J] [-R R] [--keep DIR]" >&2; exit 2 ;;
  esac
  shift
done
cc="$prefix/bin/mpicc"
[ -x "$cc" ] || { echo "no $cc" >&2; exit 1; }
dir=${keep:-$(mktemp -d)}
mkdir -p "$dir/src"
[ -n "$keep" ] || trap 'rm -rf "$dir"' EXIT

# the code base
{
  echo "/* generated: the shared header of globals */"
  echo "#ifndef GLOBALS_H"
  echo "#define GLOBALS_H"
  echo "#include <stddef.h>"
  for g in $(seq 0 39); do echo "extern double field$g[256];"; echo "extern int count$g;"; done
  echo "extern char logname[64];"
  echo "static inline void bump(int g) { count0 += g; }"
  echo "static inline double get(int i) { return field0[i & 255] + field1[(i + 1) & 255]; }"
  echo "#endif"
} > "$dir/src/globals.h"
{
  echo '#include "globals.h"'
  for g in $(seq 0 39); do echo "double field$g[256];"; echo "int count$g = $g;"; done
  echo 'char logname[64] = "run.log";'
} > "$dir/src/globals.c"
for i in $(seq 1 "$n"); do
  f="$dir/src/s$i.c"
  {
    echo "#include <mpi.h>"
    echo "#include <math.h>"
    echo "#include <stdio.h>"
    echo "#include <stdlib.h>"
    echo "#include <string.h>"
    echo '#include "globals.h"'
    echo "double s${i}_entry(int n);"
    uses=$((i % 4 != 0))   # a quarter of the sources use no global
    for k in $(seq 0 7); do
      echo "static double s${i}_f$k(const double *a, int n) {"
      echo "  double s = 0, t = 1;"
      echo "  for (int j = 0; j < n; j++) {"
      echo "    s += a[j] * sin(j * 0.5 + $k) - cos(a[j]) / (1.0 + j);"
      echo "    if (s > 1e6) s = sqrt(s);"
      echo "    t = t * 0.999 + fabs(a[(j * 7) % n]);"
      echo "  }"
      if [ "$uses" = 1 ]; then
        g=$(((i + k) % 40))
        echo "  count$g += n;"
        echo "  for (int j = 0; j < 256; j++) field$g[j] += s * 1e-9 + get(j);"
        [ "$k" = 3 ] && echo "  static int calls; calls++; bump(calls);"
      fi
      echo "  char buf[64]; snprintf(buf, sizeof buf, \"%d:%g\", n, s);"
      echo "  return s + t + strlen(buf);"
      echo "}"
    done
    echo "double s${i}_entry(int n) {"
    echo "  double *a = malloc(sizeof(double) * (size_t)n), r = 0;"
    echo "  for (int j = 0; j < n; j++) a[j] = j;"
    for k in $(seq 0 7); do echo "  r += s${i}_f$k(a, n);"; done
    echo "  free(a);"
    echo "  return r;"
    echo "}"
  } > "$f"
done
{
  echo "#include <mpi.h>"
  echo "#include <stdio.h>"
  echo '#include "globals.h"'
  for i in $(seq 1 "$n"); do echo "double s${i}_entry(int n);"; done
  echo "int main(int argc, char **argv) {"
  echo "  MPI_Init(&argc, &argv);"
  echo "  double r = 0;"
  for i in $(seq 1 "$n"); do echo "  r += s${i}_entry(16);"; done
  echo "  int rank; MPI_Comm_rank(MPI_COMM_WORLD, &rank);"
  echo "  if (rank == 0) printf(\"result %g count0 %d\\n\", r, count0);"
  echo "  MPI_Finalize();"
  echo "  return 0;"
  echo "}"
} > "$dir/src/main.c"
cat > "$dir/src/Makefile" <<'MK'
SRCS := $(wildcard s*.c) globals.c main.c
OBJS := $(SRCS:.c=.o)
app: $(OBJS)
	$(CC) $(CFLAGS) $(OBJS) -lm -o $@
%.o: %.c globals.h
	$(CC) $(CFLAGS) -c $< -o $@
clean:
	rm -f $(OBJS) app
MK

# One clean make: prints "wall cpu", CPU being user+sys of every process of the build
# (perf stat's task-clock, inherited by children), including the privatizer's compile
# server, which this build starts in a TMPDIR of its own and which is waited for (it exits
# after 10 s idle; a shorter wait restarts it during the build when a loaded machine stalls
# the compiles) so that its CPU time is counted; its idle time is not in the wall time.
# CPU time is the figure to trust on a loaded machine; wall time depends on the load.
t() {
  make -s -C "$dir/src" clean >/dev/null
  rm -rf "$dir/tmp" && mkdir -p "$dir/tmp"
  local out
  out=$(TMPDIR="$dir/tmp" SKEIN_PRIVATIZE_SERVER_IDLE=10 SKEIN_PRIVATIZE_WARNING=0 \
    perf stat -x, -e task-clock -o "$dir/perf.txt" sh -c '
      s=$(date +%s.%N)
      make -s -C "$1/src" -j"$2" CC="$3" CFLAGS="$4" >/dev/null || exit 1
      e=$(date +%s.%N)
      echo "$e - $s" | bc
      while pgrep -f -- "--serve $1/tmp/" >/dev/null; do sleep 0.2; done' sh "$dir" "$jobs" "$cc" "$1")
  echo "$out $(awk -F, '/task-clock/ {printf "%.2f", $1 / 1000}' "$dir/perf.txt")"
}
median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
pw="" pc="" qw="" qc=""
for r in $(seq 1 "$runs"); do
  read -r w c <<<"$(t "-O2")"; pw="$pw $w"; pc="$pc $c"
  read -r w2 c2 <<<"$(t "-O2 -fprivatize")"; qw="$qw $w2"; qc="$qc $c2"
  echo "round $r: plain $w s wall $c s cpu, privatized $w2 s wall $c2 s cpu (load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
done
m() { echo $1 | tr ' ' '\n' | median; }
"$prefix/bin/skeinrun" -n 4 "$dir/src/app" | head -1
printf "sources: %d + 2, make -j%d, %d rounds, load average now %s\n" "$n" "$jobs" "$runs" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-10s %10s %10s\n" "" "wall s" "cpu s"
printf "%-10s %10.2f %10.2f   (wall:%s; cpu:%s)\n" plain "$(m "$pw")" "$(m "$pc")" "$pw" "$pc"
printf "%-10s %10.2f %10.2f   (wall:%s; cpu:%s)\n" privatized "$(m "$qw")" "$(m "$qc")" "$qw" "$qc"
printf "%-10s %9.2fx %9.2fx\n" ratio "$(echo "$(m "$qw") / $(m "$pw")" | bc -l)" "$(echo "$(m "$qc") / $(m "$pc")" | bc -l)"
