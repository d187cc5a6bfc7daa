#!/usr/bin/env bash
# Safe by default: linking with mpicc/mpicxx without -fprivatize warns once about the
# program's own mutable globals (silent for a program without any, and with
# SKEIN_PRIVATIZE_WARNING=0); a job with several ranks per process prints one start-up
# line about them (not with one rank per process, not once privatized, not when silenced).
# usage: warnings.sh BUILD_DIR SOURCE_DIR
set -uo pipefail
build=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL $*"; exit 1; }
cd "$work" || exit 1
cp "$src/tests/privatizer/idioms/stb/"* "$src/tests/privatizer/idioms/flags.c" .
cat > clean.c <<'C'
#include <mpi.h>
#include <stdio.h>
#include <skein_privatize.h>
static const int table[3] = {1, 2, 3};
SKEIN_SHARED int hits; /* shared on purpose: not counted */
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int r;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  __atomic_fetch_add(&hits, 1, __ATOMIC_RELAXED);
  if (r == 0) printf("clean %d\n", table[r % 3]);
  MPI_Finalize();
  return 0;
}
C
cat > clean.cpp <<'C'
#include <mpi.h>
#include <iostream>
#include <string>
#include <vector>
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  std::vector<std::string> v{"a"};
  int r;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  if (r == 0) std::cout << "clean " << v.size() << std::endl;
  MPI_Finalize();
  return 0;
}
C
# link time
"$build/bin/mpicc" -O2 -c impl.c -o impl.o 2>compile.err && [ ! -s compile.err ] || { cat compile.err; fail "compiling prints something"; }
"$build/bin/mpicc" -O2 main.c impl.o -o stb 2>link.err || { cat link.err; fail "plain link"; }
[ "$(grep -c 'warning' link.err)" = 1 ] || { cat link.err; fail "expected one link-time warning"; }
grep -q "mpicc: warning: stb defines mutable globals ('history', 'mylib_call_count', 'mylib_compression_level' and 1 more) that all ranks of a process share under Skein: build with -fprivatize" link.err ||
  { cat link.err; fail "link-time warning text"; }
SKEIN_PRIVATIZE_WARNING=0 "$build/bin/mpicc" -O2 main.c impl.o -o stb_quiet 2>quiet.err
[ ! -s quiet.err ] || { cat quiet.err; fail "SKEIN_PRIVATIZE_WARNING=0 does not silence the link-time warning"; }
"$build/bin/mpicc" -O2 clean.c -o clean 2>clean.err && [ ! -s clean.err ] || { cat clean.err; fail "warning for a program without mutable globals"; }
"$build/bin/mpicxx" -O2 clean.cpp -o cleanxx 2>cleanxx.err && [ ! -s cleanxx.err ] || { cat cleanxx.err; fail "warning for a C++ program without mutable globals (iostream, vector)"; }
"$build/bin/mpicc" -O2 -fprivatize main.c impl.c -o stb_priv 2>priv.err && [ ! -s priv.err ] || { cat priv.err; fail "warning for a privatized build"; }
# #pragma skein shared(...) counts as SKEIN_SHARED for a plain build (the GCC plugin):
# its variables are left out of both lists, wherever the pragma sits and whatever it names
cat > pragma.c <<'C'
#include <mpi.h>
#include <stdio.h>
#pragma skein shared(hits)
int hits;              /* named before its definition */
double table[4] = {1}; /* named after it */
static int calls;      /* file-scope static */
int unmarked;          /* the one to report */
#pragma skein shared(table, calls, seen)
int main(int argc, char **argv) {
  static int seen;     /* static local */
  MPI_Init(&argc, &argv);
  int r;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  __atomic_fetch_add(&hits, 1, __ATOMIC_RELAXED);
  /* shared by the ranks, so updated atomically (ranks on two workers run at once) */
  __atomic_fetch_add(&calls, 1, __ATOMIC_RELAXED);
  __atomic_fetch_add(&seen, 1, __ATOMIC_RELAXED);
  __atomic_fetch_add(&unmarked, 1, __ATOMIC_RELAXED);
  if (r == 0) printf("pragma %g %d\n", table[r % 4], __atomic_load_n(&unmarked, __ATOMIC_RELAXED) > 0);
  MPI_Finalize();
  return 0;
}
C
"$build/bin/mpicc" -O2 -Wall pragma.c -o pragma 2>pragma.err || { cat pragma.err; fail "plain build with #pragma skein shared"; }
[ "$(grep -c 'warning' pragma.err)" = 1 ] && grep -q "pragma defines mutable globals ('unmarked')" pragma.err ||
  { cat pragma.err; fail "link-time warning names the globals marked by #pragma skein shared, or not 'unmarked'"; }
n=$(objdump -t pragma | awk '/ skn_shared\t/ && ($NF == "hits" || $NF == "table" || $NF ~ /^(calls|seen)(\.[0-9]+)?$/)' | wc -l)
[ "$n" = 4 ] || { objdump -t pragma | grep -E "hits|table|calls|seen"; fail "the 4 variables named by #pragma skein shared are not all in skn_shared"; }
sed -i 's/^int unmarked;.*/SKEIN_SHARED int unmarked;/; s/^#include <stdio.h>/#include <stdio.h>\n#include <skein_privatize.h>/' pragma.c
"$build/bin/mpicc" -O2 -c pragma.c -o pragma.o 2>pragma.err && "$build/bin/mpicc" pragma.o -o pragma_all 2>>pragma.err &&
  [ ! -s pragma.err ] || { cat pragma.err; fail "warning for a program whose globals are all marked shared"; }
"$build/bin/skeinrun" -n 4 --workers 2 ./pragma_all >p.out 2>p.err || { cat p.out p.err; fail "pragma_all run"; }
[ ! -s p.err ] && grep -q "^pragma 1 1$" p.out || { cat p.out p.err; fail "start-up line (or wrong result) for a program whose globals are marked by #pragma skein shared"; }
printf '#pragma skein shared(x\nint x;\n' > badpragma.c
"$build/bin/mpicc" -c badpragma.c -o badpragma.o 2>bad.err && fail "a malformed #pragma skein shared is accepted by a plain build"
grep -q "expected .#pragma skein shared(name, ...)." bad.err || { cat bad.err; fail "malformed pragma: the privatizer's words"; }
# start-up
"$build/bin/skeinrun" -n 4 --workers 2 ./stb >run4.out 2>run4.err
[ "$(grep -c 'skein: warning' run4.err)" = 1 ] || { cat run4.err; fail "expected one start-up line for 4 ranks"; }
grep -Eq "^skein: warning: this program's mutable globals \('[a-z_]+', '[a-z_]+', '[a-z_]+' and 1 more\) are shared by the 4 ranks of each process: rebuild with mpicc -fprivatize" run4.err &&
  grep -q "mylib_compression_level\|mylib_call_count" run4.err ||
  { cat run4.err; fail "start-up line text"; }
"$build/bin/skeinrun" -n 1 ./stb >run1.out 2>run1.err
grep -q "skein: warning" run1.err && { cat run1.err; fail "start-up line with one rank per process"; }
SKEIN_PRIVATIZE_WARNING=0 "$build/bin/skeinrun" -n 4 ./stb >runq.out 2>runq.err
grep -q "skein: warning" runq.err && { cat runq.err; fail "SKEIN_PRIVATIZE_WARNING=0 does not silence the start-up line"; }
"$build/bin/skeinrun" -n 4 ./stb_priv >runp.out 2>runp.err || { cat runp.out runp.err; fail "privatized run"; }
grep -q "skein: warning" runp.err && { cat runp.err; fail "start-up line for a privatized program"; }
grep -q "^PASS idiom_stb" runp.out || { cat runp.out; fail "privatized program's result"; }
for exe in clean cleanxx; do
  "$build/bin/skeinrun" -n 4 --workers 2 ./$exe >c.out 2>c.err || { cat c.out c.err; fail "$exe run"; }
  [ ! -s c.err ] || { cat c.err; fail "start-up line for $exe, which has no mutable globals"; }
done
echo "PASS warnings"
