#!/usr/bin/env bash
# Configure (once) and build one preset incrementally: scripts/build.sh [preset]
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-default}"
dir="build/${preset}"
if [ ! -f "${dir}/build.ninja" ]; then
    cmake --preset "${preset}"
fi
# Later runs: ninja re-runs CMake by itself when a CMakeLists.txt changed.
cmake --build --preset "${preset}" -- -j"$(nproc)"
