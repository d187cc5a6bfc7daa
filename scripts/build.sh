#!/usr/bin/env bash
# Configures and builds Skein in ./build (or $SKEIN_BUILD_DIR) and installs it in
# ./install (or $SKEIN_PREFIX). Extra arguments go to cmake's configure step.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${SKEIN_BUILD_DIR:-build}
prefix=${SKEIN_PREFIX:-$PWD/install}
cmake -S . -B "$build" -G Ninja -DCMAKE_INSTALL_PREFIX="$prefix" "$@" >/dev/null
cmake --build "$build" -j "$(nproc)"
cmake --install "$build" >/dev/null
