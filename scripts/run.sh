#!/usr/bin/env bash
# Quick start 1: set up, build, and start Warpstage on the bundled sample trace.
#   scripts/run.sh [FILE] [more warpstage arguments]
# Without a display (no $DISPLAY / $WAYLAND_DISPLAY) the app runs under Xvfb,
# saves a screenshot of its window and says where.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh default
app=build/default/app/warpstage/warpstage
if [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; then
    exec "$app" "$@"
fi
shot="$PWD/build/default/warpstage-screenshot.png"
echo "warpstage: no display here: starting under Xvfb and saving a screenshot to $shot"
xvfb-run -a -s "-screen 0 1920x1080x24" "$app" --screenshot "$shot" "$@"
echo "warpstage: screenshot saved: $shot"
