#!/usr/bin/env bash
# Installs what Warpstage needs to build on Debian 12 and is missing, then stops.
# Skips everything that is already present, so a second run does nothing.
# Used by scripts/run.sh and scripts/test.sh; safe to run by hand.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
    cmake ninja-build g++ pkg-config python3 xz-utils
    qt6-base-dev qt6-svg-dev libqcustomplot-dev libsqlite3-dev sqlite3 libzstd-dev zlib1g-dev
    xvfb xauth
    clang libclang-rt-14-dev   # libFuzzer + sanitizer runtimes for the fuzz preset
    dpkg-dev file desktop-file-utils   # cpack -G DEB (dpkg-shlibdeps, file) and scripts/check-package.sh
)

missing=()
for p in "${PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done

if [ ${#missing[@]} -gt 0 ]; then
    echo "warpstage setup: installing missing Debian packages: ${missing[*]}"
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1; then
            SUDO="sudo"
        else
            echo "warpstage setup: ERROR: these packages are missing and I am not root (and there is no sudo):" >&2
            echo "    apt-get install ${missing[*]}" >&2
            exit 2
        fi
    fi
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "warpstage setup: ERROR: no apt-get: this script knows Debian/Ubuntu only. Install by hand: ${missing[*]}" >&2
        exit 2
    fi
    export DEBIAN_FRONTEND=noninteractive
    # Acquire::Retries: a fresh CI machine's first fetch from the mirror may fail once; apt retries each download
    # (with a growing delay) before giving up.
    if ! { $SUDO apt-get -o Acquire::Retries=5 update -qq \
           && $SUDO apt-get -o Acquire::Retries=5 install -y -qq --no-install-recommends "${missing[@]}"; }; then
        echo "warpstage setup: ERROR: could not install: ${missing[*]} (is the network or the package mirror reachable?)" >&2
        exit 2
    fi
else
    echo "warpstage setup: Debian packages present"
fi

# CUDA is optional: with the toolkit the kernel ladder and the recorder are built too.
if [ -x /usr/local/cuda/bin/nvcc ] || command -v nvcc >/dev/null 2>&1; then
    echo "warpstage setup: CUDA toolkit found: the kernel ladder (sm_90a) and the recorder will be built"
    # The SASS test needs a disassembler. The CUDA toolkit image may lack cuobjdump;
    # fetch Debian's nvdisasm once (cached) so the test can run. Not fatal.
    if [ -x scripts/fetch-nvdisasm.sh ] && ! command -v cuobjdump >/dev/null 2>&1 \
        && [ ! -x /usr/local/cuda/bin/cuobjdump ]; then
        scripts/fetch-nvdisasm.sh || echo "warpstage setup: warning: could not fetch nvdisasm; the SASS test will be skipped"
    fi
else
    echo "warpstage setup: no CUDA toolkit: building the viewer, core and the tests that need no GPU"
fi
