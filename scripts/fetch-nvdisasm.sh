#!/usr/bin/env bash
# Installs a CUDA 11.8 nvdisasm (and cuobjdump) for the SASS test (ctest kernels_sass) on
# machines whose CUDA toolkit has no disassembler (this workplace's CUDA 13 image, CI).
#
# Source: Debian bookworm non-free, package nvidia-cuda-toolkit (11.8), fetched with
# `apt-get download` through a PRIVATE apt configuration (the machine's own sources and
# lists are left untouched; root is not needed). Only nvdisasm and cuobjdump are kept, in
#   ${XDG_CACHE_HOME:-$HOME/.cache}/warpstage/cuda-11.8-tools/
# where tests/kernels/check_sass.py looks for them. CUDA 11.8's nvdisasm reads CUDA 13
# sm_90a cubins once check_sass.py patches their ELF header (OSABI, ABI version, e_flags).
#
# Idempotent: does nothing when nvdisasm is already there. Exit 0 on success, 1 on failure.
set -euo pipefail

DEST="${XDG_CACHE_HOME:-$HOME/.cache}/warpstage/cuda-11.8-tools"
PKG=nvidia-cuda-toolkit
SUITE="deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm non-free contrib"

if [ -x "$DEST/nvdisasm" ] && "$DEST/nvdisasm" --version >/dev/null 2>&1; then
    echo "fetch-nvdisasm: already installed: $DEST/nvdisasm"
    exit 0
fi

fail() {
    echo "fetch-nvdisasm: FAILED: $*" >&2
    echo "fetch-nvdisasm: the SASS test (ctest -R kernels_sass) will report SKIP without a disassembler." >&2
    exit 1
}

command -v apt-get >/dev/null || fail "apt-get not found (this script needs a Debian/Ubuntu machine)"
command -v dpkg >/dev/null || fail "dpkg not found"
[ -r /usr/share/keyrings/debian-archive-keyring.gpg ] \
    || fail "/usr/share/keyrings/debian-archive-keyring.gpg missing (install debian-archive-keyring)"

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/lists/partial" "$WORK/cache/archives/partial" "$WORK/etc"
echo "$SUITE" >"$WORK/etc/sources.list"
APT_OPTS=(
    -o "Dir::Etc::SourceList=$WORK/etc/sources.list"
    -o "Dir::Etc::SourceParts=/nonexistent"
    -o "Dir::State::Lists=$WORK/lists"
    -o "Dir::Cache=$WORK/cache"
    -o "Dir::State::status=/dev/null"
    -o "APT::Architecture=amd64"
    -o "APT::Architectures=amd64"
    -o "Debug::NoLocking=1"
    -o "Acquire::Retries=5"   # CI: one failed fetch from the mirror must not turn into a skipped (= failed) SASS test
)

echo "fetch-nvdisasm: apt-get update (bookworm non-free, private lists in $WORK)"
apt-get "${APT_OPTS[@]}" update -qq >"$WORK/update.log" 2>&1 \
    || { cat "$WORK/update.log" >&2; fail "apt-get update of bookworm non-free failed (network?)"; }

echo "fetch-nvdisasm: apt-get download $PKG"
(cd "$WORK" && apt-get "${APT_OPTS[@]}" download "$PKG") >"$WORK/download.log" 2>&1 \
    || { cat "$WORK/download.log" >&2; fail "apt-get download $PKG failed"; }
DEB=$(ls "$WORK"/${PKG}_*.deb 2>/dev/null | head -n1)
[ -n "$DEB" ] || fail "no ${PKG}_*.deb was downloaded"

echo "fetch-nvdisasm: unpacking $(basename "$DEB")"
dpkg -x "$DEB" "$WORK/x" || fail "dpkg -x $DEB failed"
[ -x "$WORK/x/usr/bin/nvdisasm" ] || fail "$(basename "$DEB") has no usr/bin/nvdisasm"

mkdir -p "$DEST"
for tool in nvdisasm cuobjdump; do
    if [ -x "$WORK/x/usr/bin/$tool" ]; then
        install -m 0755 "$WORK/x/usr/bin/$tool" "$DEST/$tool.tmp"
        mv -f "$DEST/$tool.tmp" "$DEST/$tool"
    fi
done
"$DEST/nvdisasm" --version >/dev/null 2>&1 || fail "$DEST/nvdisasm does not run here"
echo "fetch-nvdisasm: installed $("$DEST/nvdisasm" --version | grep -o 'release [0-9.]*' || true): $DEST/nvdisasm"
