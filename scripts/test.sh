#!/usr/bin/env bash
# Installs the dependencies, builds Skein and runs every test: GoogleTest units, the
# MPI-level tests through the launcher, and the install-tree checks.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
ctest --test-dir "${SKEIN_BUILD_DIR:-build}" -j "$(nproc)" --output-on-failure "$@"
