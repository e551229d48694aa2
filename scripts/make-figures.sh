#!/usr/bin/env bash
# Remakes the README's figures from the bundled H200 sample with the headless exporter
# (no display needed for the timelines; the window picture runs under Xvfb).
#   scripts/make-figures.sh [BUILD_DIR]     (default: build/default)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build/default}"
app="$build/app/warpstage/warpstage"
# the migrated copy when the build made one (a sample older than the code's schema), else the committed file
sample=$(ls "$build"/samples/*.wstrace resources/samples/*.wstrace 2>/dev/null | head -n1)
out=docs/images
mkdir -p "$out"
export QT_QPA_PLATFORM=offscreen
"$app" export "$sample" --run 2 --kernel 3 --range 0:40us --lanes "sm:0-1" --size 1600x700 \
    --title "tma_sync, H200, 4096³: load, wait, then MMA — nothing overlaps within a CTA" --out "$out/tma_sync.png"
"$app" export "$sample" --run 4 --kernel 7 --range 0:40us --lanes "sm:0-1" --size 1600x700 \
    --title "warp_specialized, H200, 4096³: a producer warp keeps the ring full while the consumers compute" --out "$out/warp_specialized.png"
"$app" export "$sample" --run 6 --kernel 11 --range 40us:56us --lanes "sm:0-1" --size 1600x700 \
    --title "pingpong, H200, 4096³: a tile boundary — short TMA-store epilogue, warpgroup 1 waits for its turn" --out "$out/pingpong.png"
unset QT_QPA_PLATFORM
xvfb-run -a -s "-screen 0 1920x1080x24" "$app" --screenshot "$out/main-window.png" "$sample"
echo "figures written to $out/"
