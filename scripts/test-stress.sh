#!/usr/bin/env bash
# Runs ctest tests again and again on a machine made slower, busier or different, to find tests that depend on
# the machine they run on (docs/testing.md, "Tests and the machine they run on").
#
#   scripts/test-stress.sh BUILD_DIR MODE ROUNDS [ctest arguments, e.g. -R 'tst_smoke|tst_whatif']
#
# MODE (several joined with +, e.g. load+random):
#   plain    nothing changed (the reference)
#   load     two busy loops per core (nice 0) beside the tests: every test thread waits for a CPU
#   pin      the tests pinned to one core (taskset -c 0): the tests' own worker threads compete with them
#   random   ctest --schedule-random: another order every round
#   j2       ctest -j2 (as CI's stage 1 does); without it ctest runs one test at a time
#   tz       TZ=Pacific/Kiritimati (UTC+14), LANG=C, LC_ALL=C: another time zone and a non-UTF-8 locale
#   home     HOME and XDG_CONFIG_HOME pointed at an empty, read-only folder
# Prints one line per round (passed / failed, the failed tests' names) and a summary per test; the rounds'
# logs stay in $WORK (default /tmp/ws-test-stress). Exit 1 when any round failed.
set -uo pipefail
if [ $# -lt 3 ]; then
    sed -n '2,20p' "$0"
    exit 2
fi
BUILD=$(cd "$1" && pwd) || { echo "test-stress: no build folder '$1'" >&2; exit 2; }
MODE=$2
ROUNDS=$3
shift 3
case "$ROUNDS" in '' | *[!0-9]*) echo "test-stress: ROUNDS must be a whole number, got '$ROUNDS'" >&2; exit 2 ;; esac
WORK=${WORK:-/tmp/ws-test-stress}
mkdir -p "$WORK"
export QT_QPA_PLATFORM=offscreen

ctest_args=(--test-dir "$BUILD" --output-on-failure --test-output-size-passed 100000 -V)
prefix=()
hogs=()
for m in ${MODE//+/ }; do
    case "$m" in
        plain) ;;
        load)
            for _ in $(seq $((2 * $(nproc)))); do
                (while :; do :; done) &
                hogs+=($!)
            done ;;
        pin) prefix=(taskset -c 0) ;;
        random) ctest_args+=(--schedule-random) ;;
        j2) ctest_args+=(-j2) ;;
        tz) export TZ=Pacific/Kiritimati LANG=C LC_ALL=C ;;
        home)
            mkdir -p "$WORK/home"
            chmod 555 "$WORK/home"
            export HOME="$WORK/home" XDG_CONFIG_HOME="$WORK/home/.config" ;;
        *) echo "test-stress: unknown mode '$m' (plain, load, pin, random, j2, tz, home)" >&2; exit 2 ;;
    esac
done
stop_hogs() { for p in "${hogs[@]}"; do kill "$p" 2>/dev/null; done; }
trap stop_hogs EXIT

declare -A fails
bad=0
for r in $(seq "$ROUNDS"); do
    log="$WORK/${MODE//+/_}-$r.log"
    t0=$(date +%s)
    "${prefix[@]}" ctest "${ctest_args[@]}" "$@" > "$log" 2>&1
    rc=$?
    failed=$(grep -E '^[ 0-9/]+Test +#[0-9]+: .*(\*\*\*Failed|\*\*\*Timeout|\*\*\*Exception|Failed)' "$log" |
             sed -E 's/.*Test +#[0-9]+: ([^ ]+).*/\1/' | tr '\n' ' ')
    summary=$(grep -E 'tests passed, [0-9]+ tests failed' "$log")
    echo "round $r/$ROUNDS ($MODE, $(( $(date +%s) - t0 )) s, load $(cut -d' ' -f1-3 /proc/loadavg)): rc $rc; $summary ${failed:+FAILED: $failed}"
    if [ "$rc" -ne 0 ]; then
        bad=$((bad + 1))
        for t in $failed; do fails[$t]=$(( ${fails[$t]:-0} + 1 )); done
    fi
done
for t in "${!fails[@]}"; do
    echo "  $t failed in ${fails[$t]} of $ROUNDS rounds (logs: $WORK/${MODE//+/_}-*.log)"
done
echo "test-stress: $bad of $ROUNDS rounds failed ($MODE)"
[ "$bad" -eq 0 ]
