#!/usr/bin/env bash
# Installs Skein's build and test dependencies from Debian's packages.
# Usage: scripts/install-deps.sh [--peers]
#   --peers  also installs Debian's MPICH and Open MPI for side-by-side benchmarks.
# Skips apt entirely when everything is already present.
set -euo pipefail

# runtime: hwloc; allocator: jemalloc, libnuma; privatizer: Clang 16 libtooling;
# netlayer: UCX, PMIx; tests: GoogleTest, valgrind, procps.
pkgs=(build-essential cmake ninja-build pkg-config
      libhwloc-dev hwloc-nox libgtest-dev valgrind procps
      libjemalloc-dev libnuma-dev
      clang-16 libclang-16-dev llvm-16-dev
      libucx-dev libpmix-dev)
# netlayer launch tests: real PMIx (Open MPI's mpirun) and Slurm (srun --mpi=pmi2/pmix);
# tmux gives the Ctrl-C test a terminal.
pkgs+=(openmpi-bin slurm-wlm tmux)
# Fortran: mpifort and the bindings (gfortran), -fprivatize's GCC plugin (plugin headers)
pkgs+=(gfortran gcc-12-plugin-dev)
if [[ "${1:-}" == "--peers" ]]; then
  pkgs+=(mpich libmpich-dev openmpi-bin libopenmpi-dev hyperfine)
  pkgs+=(ucx-utils) # ucx_perftest, for apps/bench/netcompare.sh
  pkgs+=(strace) # apps/alloc.sh counts mmap/munmap with strace -c
fi

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

SUDO=""
[[ $(id -u) -ne 0 ]] && SUDO=sudo
echo "skein: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
