#!/usr/bin/env bash
# Quick start 2: set up, build, and run every test (ctest).
#   scripts/test.sh [extra ctest arguments, e.g. -R store]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh default
ctest --preset default -j"$(nproc)" "$@"
