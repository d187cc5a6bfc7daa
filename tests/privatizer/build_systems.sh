#!/usr/bin/env bash
# Builds tests/privatizer/buildsys with make and with CMake through Skein's mpicc and
# -fprivatize (an executable, a static library and a shared library, each module with its
# own privatized globals), runs it, and checks -fprivatize-keep and incremental rebuilds.
# usage: build_systems.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run() { "$build/bin/skeinrun" -n "$1" --workers "$2" "$3" | tee "$work/out"; grep -q "^PASS buildsys" "$work/out"; }

# make
cp -r "$src/tests/privatizer/buildsys" "$work/make"
make -s -C "$work/make" CC="$build/bin/mpicc" CFLAGS="-O2 -fprivatize" >"$work/make.log" 2>&1 || { cat "$work/make.log"; echo "FAIL make build"; exit 1; }
run 8 2 "$work/make/app" || { echo "FAIL make-built program"; exit 1; }
run 16 1 "$work/make/app" || { echo "FAIL make-built program (16 ranks)"; exit 1; }
# dependency files name the original sources, so a second make has nothing to do
grep -q "$work/make/app.h" "$work/make/app.d" || grep -q " app.h" "$work/make/app.d" || { cat "$work/make/app.d"; echo "FAIL dependency file"; exit 1; }
if grep -q skein-priv "$work/make/app.d"; then cat "$work/make/app.d"; echo "FAIL dependency file names the rewritten copy"; exit 1; fi
[ -z "$(make -s -C "$work/make" -q CC="$build/bin/mpicc" CFLAGS="-O2 -fprivatize" app || echo stale)" ] || { echo "FAIL make is not up to date after a build"; exit 1; }

# the same program without -fprivatize computes the wrong thing
make -s -C "$work/make" clean
make -s -C "$work/make" CC="$build/bin/mpicc" CFLAGS="-O2" >/dev/null 2>&1
if "$build/bin/skeinrun" -n 8 --workers 1 "$work/make/app" >"$work/out" 2>&1; then echo "FAIL unprivatized build passed"; exit 1; fi
grep -q "^FAIL buildsys" "$work/out" || { cat "$work/out"; echo "FAIL unprivatized build did not report"; exit 1; }

# CMake
cmake -S "$src/tests/privatizer/buildsys" -B "$work/cmake" -DCMAKE_C_COMPILER="$build/bin/mpicc" \
  -DCMAKE_C_FLAGS="-fprivatize" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >"$work/cmake.log" 2>&1 || { cat "$work/cmake.log"; echo "FAIL cmake configure"; exit 1; }
cmake --build "$work/cmake" >"$work/cmake-build.log" 2>&1 || { cat "$work/cmake-build.log"; echo "FAIL cmake build"; exit 1; }
run 7 2 "$work/cmake/app" || { echo "FAIL cmake-built program"; exit 1; }
# report mode with the compilation database (-p)
"$build/bin/skein-privatize" --report -p "$work/cmake" "$src/tests/privatizer/buildsys/counter.c" \
  "$src/tests/privatizer/buildsys/app.c" > "$work/report" || { cat "$work/report"; echo "FAIL report -p"; exit 1; }
grep -q "counter.c:4:12: warning: file-scope 'count' of type 'int'" "$work/report" &&
  grep -q "app.c:5:5: warning: file-scope 'app_rank'" "$work/report" || { cat "$work/report"; echo "FAIL report -p output"; exit 1; }

# -fprivatize-keep keeps the rewritten source next to the object
mkdir -p "$work/keep"
"$build/bin/mpicc" -O2 -fprivatize-keep -c "$src/tests/privatizer/buildsys/util.c" -o "$work/keep/util.o"
grep -q "SKN_PRIV(app_total)" "$work/keep/skein-privatized/util.c" || { echo "FAIL -fprivatize-keep"; exit 1; }
# a privatized library loaded with dlopen after the ranks started: mapped at first use
mkdir -p "$work/dl"
cat > "$work/dl/plug.c" <<'EOC'
int plug_count;
int plug_bump(int by) { return plug_count += by; }
EOC
cat > "$work/dl/dl.c" <<'EOC'
#include <mpi.h>
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv) {
  int r, all, v = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  void *h = dlopen(argv[1], RTLD_NOW);
  int (*bump)(int) = h ? (int (*)(int))dlsym(h, "plug_bump") : NULL;
  for (int i = 0; bump && i < 5; i++) { v = bump(r + 1); MPI_Barrier(MPI_COMM_WORLD); }
  int ok = v == 5 * (r + 1);
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  MPI_Finalize();
  if (r == 0) printf(all ? "PASS buildsys dlopen\n" : "FAIL buildsys dlopen\n");
  return !all;
}
EOC
"$build/bin/mpicc" -O2 -fprivatize -fPIC -shared "$work/dl/plug.c" -o "$work/dl/libplug.so"
"$build/bin/mpicc" -O2 -fprivatize "$work/dl/dl.c" -o "$work/dl/dl" -ldl
"$build/bin/skeinrun" -n 8 --workers 2 "$work/dl/dl" "$work/dl/libplug.so" | grep -q "^PASS buildsys dlopen" ||
  { echo "FAIL dlopen of a privatized library"; exit 1; }
echo "PASS build systems: make, CMake, static and shared libraries, dlopen, -fprivatize-keep, report -p"
