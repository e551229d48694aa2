#!/usr/bin/env bash
# Session 9, s9-tilegeom (issue 14): a stream-K recording says which tile configuration ran ([ws-tiles] tag in the
# run's notes, core/include/warpstage/tilegeom.h). Records stream-K through the real recorder at two shapes with two
# forced non-default configurations (WARPSTAGE_STREAMK_TILE=2: 128x128 per CTA, 6 stages; =4: 128x64, 8 stages) and
# a cluster configuration (=1: 256x128 per CTA pair) at M = 300, where a cluster's second block lies wholly past M,
# and one shape with the rule's pick, then checks each file with python3's sqlite3: the tag is there and matches
# kernels/src/streamk_schedule.h's kTiles (read from the header: one source of truth), the grid is the shape over the
# block, every TileBegin coordinate of the traced launch lies inside that grid, the traced launch's tiles cover every
# block of C (stream-K computes each block at least once), the CUPTI launch's cluster size is the configuration's, and
# the recorder noted no tile mismatch. Builds nothing; about 20-40 s. $OUT: summary.txt, t2-notes.txt, logs.tar.gz.
# Build HERE (after the merge; no Qt needed), then copy into the ignored folder of /work/main:
#   cmake -S . -B build/kchecks -G Ninja -DWARPSTAGE_WITH_QT=OFF -DCMAKE_BUILD_TYPE=Release
#   cmake --build build/kchecks --target warpstage-record
#   D=/work/main/build-s9-tilegeom; mkdir -p $D
#   cp build/kchecks/app/record/warpstage-record scripts/device/s9-tilegeom.sh scripts/device/lib.sh $D/
#   strip $D/warpstage-record
# On the device (run tool, carry ["build-s9-tilegeom"], from the repository root of the copy):
#   bash build-s9-tilegeom/s9-tilegeom.sh build-s9-tilegeom
# Success: four "PASS record-..." lines and four "PASS check-..." lines, and the last line "s9-tilegeom: OK".
set -u
D=${1:-build-s9-tilegeom}
WS_LIB=$(dirname "${BASH_SOURCE[0]}")/lib.sh
[ -f "$WS_LIB" ] || WS_LIB=scripts/device/lib.sh
# shellcheck source=lib.sh
. "$WS_LIB" 2>/dev/null || { echo "$0: lib.sh is neither beside this script nor in scripts/device/" >&2; exit 2; }
ws_begin s9-tilegeom 55
ws_cuda_env
HDR=kernels/src/streamk_schedule.h
[ -f "$HDR" ] || { echo "$0: run from the repository root ($HDR not found)" >&2; exit 2; }
REC=$D/warpstage-record
[ -x "$REC" ] || { echo "$0: $REC not found or not executable" >&2; exit 2; }
note "env: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1); $(date -u)"

fails=0
RUN='"$@"; r=$?; echo "recorder rc=$r"; exit $r'  # a line to match even when the recorder prints nothing
# name, shape, forced configuration ("" = the rule)
for spec in "t2 384x1024x1088 2" "t4 400x1000x4096 4" "t1 300x1000x1032 1" "rule 256x4096x4096 -"; do
    set -- $spec
    name=$1 shape=$2 tile=$3
    f=$OUT/$name.wstrace
    rm -f "$f"
    if [ "$tile" = - ]; then
        step "record-$name" 20 "recorder rc=0" sh -c "$RUN" _ env -u WARPSTAGE_STREAMK_TILE "$REC" --rungs streamk --shape "$shape" -n 1 --no-stalls -o "$f" || fails=$((fails + 1))
    else
        step "record-$name" 20 "recorder rc=0" sh -c "$RUN" _ env WARPSTAGE_STREAMK_TILE="$tile" "$REC" --rungs streamk --shape "$shape" -n 1 --no-stalls -o "$f" || fails=$((fails + 1))
    fi
    step "check-$name" 15 "^OK" python3 - "$f" "$shape" "$tile" "$HDR" <<'EOF' || fails=$((fails + 1))
import re, sqlite3, sys
path, shape, tile, hdr = sys.argv[1:5]
m, n, k = (int(x) for x in shape.split("x"))
src = open(hdr).read()
body = src[src.index("kTiles[] = {"):]
body = body[:body.index("};")]
ktiles = [(int(a), int(b), int(c), int(d or 128))  # {bn, cl, stages[, bm = 128]} (s9-smallm added bm)
          for a, b, c, d in re.findall(r"\{\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*(?:,\s*(\d+)\s*)?\}", body)]
bad = []
db = sqlite3.connect(path)
runs = db.execute("SELECT id, variant, notes FROM runs").fetchall()
if len(runs) != 1:
    bad.append(f"{len(runs)} runs, expected 1")
rid, variant, notes = runs[0]
tag = re.search(r"\[ws-tiles ([^\]]*)\]", notes)
if not tag:
    print("FAIL no [ws-tiles] tag in the notes:", notes[:300]); sys.exit(1)
kv = dict(t.split("=", 1) for t in tag.group(1).split())
print("tag:", tag.group(0))
bm, bn = (int(x) for x in kv["block"].split("x"))
cfg, count = (int(x) for x in kv["config"].split("/"))
if count != len(ktiles): bad.append(f"config count {count} != kTiles' {len(ktiles)}")
if tile != "-":
    if cfg != int(tile): bad.append(f"config {cfg}, forced {tile}")
    if kv.get("pick") != "forced": bad.append(f"pick {kv.get('pick')}, expected forced")
elif kv.get("pick") != "rule": bad.append(f"pick {kv.get('pick')}, expected rule")
tbn, tcl, tst, tbm = ktiles[cfg]
if (bm, bn, int(kv["cluster"]), int(kv["stages"])) != (tbm, tbn, tcl, tst):
    bad.append(f"block {bm}x{bn} cluster {kv['cluster']} stages {kv['stages']} != kTiles[{cfg}] = {tbm}x{tbn} cl {tcl} S {tst}")
gm, gn = (int(x) for x in kv["grid"].split("x"))
if (gm, gn) != (-(-m // (bm * tcl)) * tcl, -(-n // bn)): bad.append(f"grid {gm}x{gn} for {m}x{n} over {bm}x{bn}, cluster {tcl}")
if int(kv["kt"]) != -(-k // 64): bad.append(f"kt {kv['kt']}")
kern = db.execute("SELECT id, cluster_x FROM kernels WHERE run_id = ? AND traced = 1", (rid,)).fetchall()
if not kern: bad.append("no traced launch")
for kid, clx in kern[:1]:
    if max(clx, 1) != tcl: bad.append(f"CUPTI cluster {clx}, configuration {tcl}")
    rows = db.execute("SELECT DISTINCT tile_m, tile_n FROM tiles WHERE kernel_id = ?", (kid,)).fetchall()
    out = [r for r in rows if not (0 <= r[0] < gm and 0 <= r[1] < gn)]
    if out: bad.append(f"{len(out)} tile coordinates outside {gm}x{gn}, e.g. {out[:3]}")
    if len(rows) - len(out) != gm * gn: bad.append(f"tiles cover {len(rows) - len(out)} of {gm * gn} blocks")
    print(f"traced launch {kid}: {len(rows)} distinct tiles of a {gm}x{gn} grid, CUPTI cluster {clx}")
if "tile markers lie outside" in notes or "start at a tile outside" in notes:
    bad.append("the recorder noted a tile mismatch")
for b in bad: print("FAIL", b)
print("OK" if not bad else "FAIL")
sys.exit(1 if bad else 0)
EOF
done
sqlite3 "$OUT/t2.wstrace" "SELECT notes FROM runs" >"$OUT/t2-notes.txt" 2>/dev/null || true
[ "$fails" = 0 ] && note "s9-tilegeom: OK" || note "s9-tilegeom: $fails FAILED"
tar -czf "$OUT/logs.tar.gz" -C "$L" . 2>/dev/null
rm -f "$OUT"/*.wstrace
exit $((fails > 0))
