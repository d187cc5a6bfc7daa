#!/usr/bin/env bash
# Installs the dependencies, builds and installs Skein in ./install, then compiles a demo
# MPI program with Skein's mpicc and runs it with 64 ranks on this machine.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
prefix=$PWD/install
mkdir -p build/demo
"$prefix/bin/mpicc" -O2 apps/examples/ring_pi.c -o build/demo/ring_pi -lm
"$prefix/bin/skein-info"
echo
echo "\$ mpiexec -n 64 build/demo/ring_pi"
"$prefix/bin/mpiexec" -n 64 build/demo/ring_pi
