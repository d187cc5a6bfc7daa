#!/usr/bin/env bash
# privbuild.sh — build time of mpicc -fprivatize against a plain mpicc build, on a generated
# legacy-style code base: N C sources (default 200) of ~150 lines, a shared header of
# extern globals and inline functions that use them, one source defining the globals,
# most sources using some, a quarter using none, static locals here and there.
# Times `make -jJ` from clean, plain and privatized alternately, R times each (medians).
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

t() {  # wall seconds of one clean make
  make -s -C "$dir/src" clean >/dev/null
  local s e
  s=$(date +%s.%N)
  SKEIN_PRIVATIZE_WARNING=0 make -s -C "$dir/src" -j"$jobs" CC="$cc" CFLAGS="$1" >/dev/null
  e=$(date +%s.%N)
  echo "$e - $s" | bc
}
median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
plain="" priv=""
for r in $(seq 1 "$runs"); do
  plain="$plain $(t "-O2")"
  priv="$priv $(t "-O2 -fprivatize")"
done
mp=$(echo $plain | tr ' ' '\n' | median)
mq=$(echo $priv | tr ' ' '\n' | median)
"$prefix/bin/skeinrun" -n 4 "$dir/src/app" | head -1
printf "sources: %d + 2, make -j%d, %d runs each\n" "$n" "$jobs" "$runs"
printf "plain      %8.2f s   (runs:%s)\n" "$mp" "$plain"
printf "privatized %8.2f s   (runs:%s)\n" "$mq" "$priv"
printf "ratio      %8.2fx\n" "$(echo "$mq / $mp" | bc -l)"
