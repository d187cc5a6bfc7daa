#!/usr/bin/env bash
# Install-tree checks: install into a fresh prefix, move the tree (it must be relocatable,
# with no LD_LIBRARY_PATH), then build programs with mpicc, pkg-config and CMake's FindMPI
# and run them through mpiexec.
# usage: check_install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
unset LD_LIBRARY_PATH

cmake --install "$build" --prefix "$work/first" >/dev/null
mv "$work/first" "$work/moved"
p=$work/moved

for tool in mpicc mpicxx skeincc skeinc++ mpiexec mpirun skeinrun skein-info; do
  [ -x "$p/bin/$tool" ] || { echo "FAIL missing bin/$tool"; exit 1; }
done
[ -f "$p/include/mpi.h" ] || { echo "FAIL missing include/mpi.h"; exit 1; }

"$p/bin/skein-info" | grep -q "^Skein " || { echo "FAIL skein-info"; exit 1; }

# mpicc from the moved tree
"$p/bin/mpicc" -O2 "$src/apps/examples/ring_pi.c" -o "$work/pi" -lm
out=$("$p/bin/mpiexec" -n 5 "$work/pi")
echo "$out" | grep -q "5 ranks" || { echo "FAIL mpicc program: $out"; exit 1; }
# the same over 2 processes: the UCX module is found in the moved tree (lib/skein/)
[ -f "$p/lib/skein/libskein-ucx.so" ] || { echo "FAIL missing lib/skein/libskein-ucx.so"; exit 1; }
out=$(UCX_TLS=tcp SKEIN_NETSTATS=1 "$p/bin/mpiexec" -n 5 --procs 2 "$work/pi" 2>&1)
echo "$out" | grep -q "5 ranks" && [ "$(echo "$out" | grep -c 'skein: net: process')" -eq 2 ] ||
  { echo "FAIL mpicc program over 2 processes: $out"; exit 1; }

# C++ wrapper
printf '#include <mpi.h>\n#include <cstdio>\nint main(int c,char**v){MPI_Init(&c,&v);int r;MPI_Comm_rank(MPI_COMM_WORLD,&r);MPI_Finalize();return r==0?0:0;}\n' > "$work/cxx.cpp"
"$p/bin/mpicxx" "$work/cxx.cpp" -o "$work/cxx"
"$p/bin/mpirun" -n 3 "$work/cxx"

# -show prints the underlying command
"$p/bin/mpicc" -show | grep -q -- "-lskein" || { echo "FAIL mpicc -show"; exit 1; }

# pkg-config
PKG_CONFIG_PATH=$p/lib/pkgconfig cc "$src/apps/examples/ring_pi.c" -o "$work/pi_pc" \
  $(PKG_CONFIG_PATH=$p/lib/pkgconfig pkg-config --cflags --libs skein) -lm
"$p/bin/mpiexec" -n 2 "$work/pi_pc" | grep -q "2 ranks" || { echo "FAIL pkg-config program"; exit 1; }

# CMake FindMPI with MPI_C_COMPILER. A sanitized Skein: FindMPI takes -fsanitize from
# `mpicc -show` as a compile option only (it keeps -l, -L and -Wl, for the link), so the
# project links the sanitizer runtime itself, as the user guide says ("Tools")
san=$("$p/bin/skein-info" | sed -n 's/.*sanitizer=\([a-z,]*\).*/\1/p')
findmpi_flags=()
[ -z "$san" ] || findmpi_flags=("-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=$san")
cmake -S "$src/tests/install/findmpi" -B "$work/findmpi" -DMPI_C_COMPILER="$p/bin/mpicc" "${findmpi_flags[@]}" >"$work/findmpi.log" 2>&1 \
  || { cat "$work/findmpi.log"; echo "FAIL FindMPI configure"; exit 1; }
cmake --build "$work/findmpi" >/dev/null
"$p/bin/mpiexec" -n 4 "$work/findmpi/hello" | grep -q "4 ranks" || { echo "FAIL FindMPI program"; exit 1; }

# C privatizer (when built): from the moved tree, through its compile server (a private
# TMPDIR: this tree's own server) and in-process, the same program
if [ -x "$p/bin/skein-privatize" ]; then
  [ -x "$p/bin/skein-privatize-client" ] || { echo "FAIL missing bin/skein-privatize-client"; exit 1; }
  mkdir -p "$work/ptmp"
  for s in 1 0; do
    TMPDIR=$work/ptmp SKEIN_PRIVATIZE_SERVER=$s SKEIN_PRIVATIZE_SERVER_IDLE=1 \
      "$p/bin/mpicc" -O2 -fprivatize "$src/apps/examples/ring_pi.c" -o "$work/pi_priv$s" -lm ||
      { echo "FAIL mpicc -fprivatize (server $s)"; exit 1; }
    "$p/bin/mpiexec" -n 3 "$work/pi_priv$s" | grep -q "3 ranks" || { echo "FAIL privatized program (server $s)"; exit 1; }
  done
fi

# Fortran (when built): mpifort, mpif.h/mpi module, pkg-config skein-fort, FindMPI's Fortran
if [ -x "$p/bin/mpifort" ]; then
  for tool in mpif90 mpif77; do [ -x "$p/bin/$tool" ] || { echo "FAIL missing bin/$tool"; exit 1; }; done
  for f in include/mpif.h include/mpi.mod include/mpi_f08.mod lib/libskein_f08.a lib/skein/skein_fpriv.so; do
    [ -f "$p/$f" ] || { echo "FAIL missing $f"; exit 1; }
  done
  "$p/bin/skein-info" | grep -q "^fortran: *gfortran" || { echo "FAIL skein-info: no gfortran line"; exit 1; }
  "$p/bin/mpifort" -O2 "$src/tests/install/findmpi_fortran/hello.f90" -o "$work/fhello"
  "$p/bin/mpiexec" -n 3 "$work/fhello" | grep -q "3 ranks" || { echo "FAIL mpifort program"; exit 1; }
  gfortran "$src/tests/install/findmpi_fortran/hello.f90" -o "$work/fhello_pc" -J "$work" \
    $(PKG_CONFIG_PATH=$p/lib/pkgconfig pkg-config --cflags --libs skein-fort)
  "$p/bin/mpiexec" -n 2 "$work/fhello_pc" | grep -q "2 ranks" || { echo "FAIL pkg-config Fortran program"; exit 1; }
  cmake -S "$src/tests/install/findmpi_fortran" -B "$work/findmpi_f" -DMPI_Fortran_COMPILER="$p/bin/mpifort" "${findmpi_flags[@]}" \
    >"$work/findmpi_f.log" 2>&1 || { cat "$work/findmpi_f.log"; echo "FAIL FindMPI Fortran configure"; exit 1; }
  cmake --build "$work/findmpi_f" >/dev/null
  "$p/bin/mpiexec" -n 4 "$work/findmpi_f/fhello" | grep -q "4 ranks" || { echo "FAIL FindMPI Fortran program"; exit 1; }
  # use mpi_f08 (module and lib/libskein_f08.a from the moved tree)
  "$p/bin/mpifort" -O2 -J "$work" "$src/tests/mpi/fbind_f08.f90" -o "$work/f08"
  "$p/bin/mpiexec" -n 3 "$work/f08" | grep -q "PASS fbind_f08" || { echo "FAIL mpi_f08 program"; exit 1; }
  # -fprivatize from the moved tree (plugin and stub found relative to mpifort)
  "$p/bin/mpifort" -fprivatize -I"$src/tests/mpi" "$src/tests/mpi/fbind_f77.f" -o "$work/f77p"
  "$p/bin/mpiexec" -n 3 "$work/f77p" | grep -q "PASS fbind_f77" || { echo "FAIL mpifort -fprivatize program"; exit 1; }
fi

echo "PASS install tree: relocatable, mpicc/mpicxx/mpifort/pkg-config/FindMPI programs run"
