#!/usr/bin/env bash
# The install and the Debian packages, checked from a built tree (docs/testing.md, "Install and packages"):
#
#   1. cmake --install into a temporary prefix, then move that prefix elsewhere (the install is relocatable):
#      the expected files are there (every public header of kernels/include/warpstage), the CMake files name no
#      build or source path, `warpstage --version`, `warpstage info` on the installed sample, the installed viewer
#      opens its own sample (not the build tree's), warpstage-record finds its injection library;
#   2. tests/package/consumer, a user's CMake project, is configured and built against that prefix only
#      (find_package(Warpstage), a .cu with the installed header; compile only, no GPU), and with it the two
#      projects of examples/ (each also with -DWARPSTAGE_TRACE=0: the SASS check; bad sizes refused, exit 2);
#   3. cpack -G DEB: the packages' file lists (dpkg-deb -c) and their Depends (dpkg-deb -f) are checked;
#   4. the packages are unpacked into a scratch root (dpkg -x): the viewer runs from there, its .desktop entry is
#      valid and its MIME type recognises a trace (when desktop-file-validate / gio are installed).
#
#   scripts/check-package.sh [BUILD_DIR] [--keep]     BUILD_DIR: a configured and built tree (build/default)
#
# Exit 0 when everything holds; 1 with the failed checks listed; 2 for bad usage or a tree that is not built.
set -uo pipefail
cd "$(dirname "$0")/.."
SRC=$PWD
BUILD=build/default
KEEP=0
for a in "$@"; do
    case "$a" in
        --keep) KEEP=1 ;;
        -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "check-package: unknown option '$a'" >&2; exit 2 ;;
        *) BUILD=$a ;;
    esac
done
if [ ! -f "$BUILD/CMakeCache.txt" ] || [ ! -f "$BUILD/CPackConfig.cmake" ]; then
    echo "check-package: '$BUILD' is not a configured Warpstage build folder (no CMakeCache.txt / CPackConfig.cmake)" >&2
    exit 2
fi
BUILD=$(cd "$BUILD" && pwd)
for tool in cmake cpack dpkg-deb dpkg dpkg-shlibdeps; do
    command -v "$tool" >/dev/null || { echo "check-package: '$tool' is not installed (apt-get install dpkg-dev)" >&2; exit 2; }
done
cache() { sed -n "s/^$1:[A-Z]*=//p" "$BUILD/CMakeCache.txt" | head -n1; }
HAVE_VIEWER=0; [ -x "$BUILD/app/warpstage/warpstage" ] && HAVE_VIEWER=1
HAVE_RECORDER=0; grep -q 'warpstage-record' "$BUILD/build.ninja" 2>/dev/null && HAVE_RECORDER=1
CUDA_COMPILER=$(sed -n 's/^set(CMAKE_CUDA_COMPILER "\(.*\)")$/\1/p' "$BUILD"/CMakeFiles/*/CMakeCUDACompiler.cmake 2>/dev/null | head -n1)
VERSION=$(cache CMAKE_PROJECT_VERSION)

W=$(mktemp -d /tmp/warpstage-package.XXXXXX)
if [ "$KEEP" = 1 ]; then echo "check-package: work folder $W (kept)"; else trap 'rm -rf "$W"' EXIT; fi
FAILS=()
ok() { echo "  ok    $*"; }
bad() { echo "  FAIL  $*"; FAILS+=("$*"); }
check_file() { if [ -e "$1" ]; then ok "${1#"$2"/}"; else bad "missing: ${1#"$2"/}"; fi; }
t0=$(date +%s)

echo "=== 1. cmake --install into a temporary prefix, moved after the install ==="
if ! cmake --install "$BUILD" --prefix "$W/staged" >"$W/install.log" 2>&1; then
    tail -20 "$W/install.log"
    echo "check-package: cmake --install failed (is '$BUILD' built? cmake --build $BUILD)" >&2
    exit 1
fi
mv "$W/staged" "$W/prefix"
P=$W/prefix
LIBDIR=$(cache CMAKE_INSTALL_LIBDIR); LIBDIR=${LIBDIR:-lib}
for h in "$SRC"/kernels/include/warpstage/*.cuh "$SRC"/kernels/include/warpstage/*.h; do
    n=$(basename "$h")
    [ "$n" = ladder.h ] && continue  # the ladder's host API: its library is not installed
    check_file "$P/include/warpstage/$n" "$P"
done
for f in share/cmake/Warpstage/WarpstageConfig.cmake share/cmake/Warpstage/WarpstageConfigVersion.cmake \
         share/cmake/Warpstage/WarpstageTargets.cmake; do
    check_file "$P/$f" "$P"
done
if grep -rlF -e "$BUILD" -e "$SRC/" "$P/share/cmake" >/dev/null 2>&1; then
    bad "the CMake package names the build or source tree: $(grep -rlF -e "$BUILD" -e "$SRC/" "$P/share/cmake" | tr '\n' ' ')"
else
    ok "the CMake package names no build or source path"
fi
SAMPLE=
if [ "$HAVE_VIEWER" = 1 ]; then
    for f in bin/warpstage share/applications/warpstage.desktop share/mime/packages/warpstage.xml \
             share/icons/hicolor/scalable/apps/warpstage.svg share/icons/hicolor/scalable/mimetypes/application-x-warpstage-trace.svg; do
        check_file "$P/$f" "$P"
    done
    SAMPLE=$(ls "$P"/share/warpstage/samples/*.wstrace 2>/dev/null | head -n1)
    if [ -n "$SAMPLE" ]; then ok "sample ${SAMPLE#"$P"/}"; else bad "no *.wstrace in share/warpstage/samples"; fi
    out=$("$P/bin/warpstage" --version 2>&1)
    if [[ "$out" == "warpstage $VERSION"* ]]; then ok "warpstage --version: $out"; else bad "warpstage --version said: $out"; fi
    if [ -n "$SAMPLE" ]; then
        if "$P/bin/warpstage" info "$SAMPLE" >"$W/info.txt" 2>&1; then
            ok "warpstage info on the installed sample ($(wc -l <"$W/info.txt") lines)"
        else
            bad "warpstage info on the installed sample failed: $(tail -3 "$W/info.txt")"
        fi
        # The viewer opens the bundled sample of ITS installation: with that file spoiled it must fail on it,
        # not quietly open the build tree's copy.
        cp "$SAMPLE" "$W/sample.keep" && echo "not a trace" >"$SAMPLE"
        QT_QPA_PLATFORM=offscreen timeout 120 "$P/bin/warpstage" --screenshot "$W/spoiled.png" >"$W/spoiled.txt" 2>&1
        rc=$?
        if [ "$rc" = 3 ] && grep -qF "$SAMPLE" "$W/spoiled.txt"; then
            ok "the installed viewer opens its own sample (spoiled copy refused: exit 3)"
        else
            bad "the installed viewer did not open its own sample (exit $rc): $(tail -2 "$W/spoiled.txt")"
        fi
        mv "$W/sample.keep" "$SAMPLE"
        if QT_QPA_PLATFORM=offscreen timeout 120 "$P/bin/warpstage" --screenshot "$W/shot.png" >"$W/shot.txt" 2>&1 \
           && [ -s "$W/shot.png" ]; then
            ok "the installed viewer draws its sample (--screenshot, offscreen)"
        else
            bad "the installed viewer did not draw its sample: $(tail -2 "$W/shot.txt")"
        fi
    fi
fi
# the SQLite extension (viewer component): installed, and the sqlite3 shell loads it from there
check_file "$P/$LIBDIR/warpstage/libwarpstage_sqlite.so" "$P"
if [ -n "$SAMPLE" ] && [ -f "$P/$LIBDIR/warpstage/libwarpstage_sqlite.so" ] && command -v sqlite3 >/dev/null; then
    n=$(printf '.load %s\nSELECT count(*) FROM intervals WHERE kernel_id = (SELECT min(id) FROM kernels WHERE traced = 1);\n' \
        "$P/$LIBDIR/warpstage/libwarpstage_sqlite" | sqlite3 -readonly -batch "$SAMPLE" 2>"$W/sqlite3.txt")
    if [[ "$n" =~ ^[1-9][0-9]*$ ]] && [ ! -s "$W/sqlite3.txt" ]; then
        ok "sqlite3 .load $LIBDIR/warpstage/libwarpstage_sqlite: $n intervals in the installed sample's first traced launch"
    else
        bad "sqlite3 could not .load the installed extension: '$n' $(tail -2 "$W/sqlite3.txt")"
    fi
fi
if [ "$HAVE_RECORDER" = 1 ]; then
    check_file "$P/bin/warpstage-record" "$P"
    check_file "$P/bin/warpstage-sink-dump" "$P"
    check_file "$P/$LIBDIR/warpstage/libwarpstage-inject.so" "$P"
fi
if [ "$HAVE_RECORDER" = 1 ] && [ -x "$P/bin/warpstage-record" ] && [ -f "$P/$LIBDIR/warpstage/libwarpstage-inject.so" ]; then
    if "$P/bin/warpstage-record" --version >/dev/null 2>&1; then ok "warpstage-record --version"; else bad "warpstage-record --version failed"; fi
    # The recorder looks for its injection library relative to itself: this run gets past that check
    # (on a machine without a GPU it stops later, at the GPU); without the library it names the problem.
    inject_missing() {
        env -u WARPSTAGE_INJECT_LIB timeout 60 "$P/bin/warpstage-record" -o "$W/rec-$1.wstrace" -- /bin/true >"$W/rec-$1.txt" 2>&1
        grep -q "libwarpstage-inject.so not found" "$W/rec-$1.txt"
    }
    if inject_missing found; then bad "the installed warpstage-record does not find its injection library: $(tail -2 "$W/rec-found.txt")"
    else ok "the installed warpstage-record finds $LIBDIR/warpstage/libwarpstage-inject.so"; fi
    mv "$P/$LIBDIR/warpstage/libwarpstage-inject.so" "$W/inject.keep"
    if inject_missing gone; then ok "without it, warpstage-record says so"; else bad "without libwarpstage-inject.so warpstage-record did not say so: $(tail -2 "$W/rec-gone.txt")"; fi
    mv "$W/inject.keep" "$P/$LIBDIR/warpstage/libwarpstage-inject.so"
fi

echo "=== 2. tests/package/consumer and examples/ against the prefix only ==="
if [ -z "$CUDA_COMPILER" ] || [ ! -x "$CUDA_COMPILER" ]; then
    echo "  (this build has no CUDA compiler: the consumer and the examples, CUDA projects, are not built)"
else
    # The examples (examples/softmax-ws, examples/gemm-2consumer) are configured inside the consumer project (one
    # CUDA compiler detection) and built twice: as shipped, and with -DWARPSTAGE_TRACE=0 for the SASS check.
    t2=$(date +%s)
    if cmake -S tests/package/consumer -B "$W/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$P" \
             -DWARPSTAGE_EXPECT_PREFIX="$P" -DCMAKE_CUDA_COMPILER="$CUDA_COMPILER" \
             -DWARPSTAGE_EXAMPLES_DIR="$SRC/examples" -DWARPSTAGE_EXAMPLES_NOTRACE=ON \
             -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF \
             >"$W/consumer-configure.log" 2>&1 \
       && cmake --build "$W/consumer" >"$W/consumer-build.log" 2>&1; then
        ok "consumer and examples configured and built: $(grep -o 'Warpstage [0-9.]* from [^,]*' "$W/consumer-configure.log") ($(( $(date +%s) - t2 )) s)"
        if "$W/consumer/consumer_host" >/dev/null; then ok "consumer_host runs (event format from the installed header)"; else bad "consumer_host failed"; fi
        # Bad sizes are refused with a sentence and exit 2, before any CUDA call (so: also without a GPU).
        example_refuses() {
            local exe=$W/consumer/examples/$1 want=$2; shift 2
            out=$("$exe" "$@" 2>&1); rc=$?
            if [ "$rc" = 2 ] && grep -qF "$want" <<<"$out"; then ok "$(basename "$exe") $*: refused (exit 2)"
            else bad "$(basename "$exe") $*: exit $rc, said: $out"; fi
        }
        example_refuses softmax-ws/softmax_ws "multiple of 2048" --len 1000
        example_refuses gemm-2consumer/gemm_2consumer "not whole tiles" --m 1000
        # SASS: the shipped build holds the trace code, the -DWARPSTAGE_TRACE=0 build none of it.
        for ex in softmax-ws/softmax_ws:softmaxWs gemm-2consumer/gemm_2consumer:gemm2Consumer; do
            exe=$W/consumer/examples/${ex%%:*}
            python3 tests/recorder/check_user_sass.py --traced "$exe" --untraced "${exe}_notrace" --kernel "${ex##*:}" \
                >"$W/sass-$(basename "$exe").txt" 2>&1
            case $? in
                0) ok "SASS $(basename "$exe"): $(grep -o 'instructions: .*' "$W/sass-$(basename "$exe").txt" | head -n1)" ;;
                77) echo "  ($(tail -n1 "$W/sass-$(basename "$exe").txt"))" ;;
                *) bad "SASS $(basename "$exe"): $(grep -E '^FAIL|check_user_sass' "$W/sass-$(basename "$exe").txt" | head -3)" ;;
            esac
        done
    else
        tail -15 "$W/consumer-configure.log" "$W/consumer-build.log" 2>/dev/null
        bad "the consumer project or the examples did not configure or build against the install prefix"
    fi
fi

echo "=== 3. cpack -G DEB ==="
if ! cpack -G DEB --config "$BUILD/CPackConfig.cmake" -B "$W/deb" >"$W/cpack.log" 2>&1; then
    tail -20 "$W/cpack.log"; bad "cpack -G DEB failed"
fi
deb_of() { ls "$W"/deb/"$1"_*.deb 2>/dev/null | head -n1; }
# deb_has PACKAGE PATH...: each path is in the package's file list
deb_has() {
    local d; d=$(deb_of "$1"); shift
    dpkg-deb -c "$d" | awk '{print $NF}' >"$W/list.txt"
    for f in "$@"; do
        if grep -qxF "./$f" "$W/list.txt"; then ok "$(basename "$d"): /$f"; else bad "$(basename "$d") lacks /$f"; fi
    done
}
# depends_has PACKAGE NAME...: each package name is in Depends
depends_has() {
    local d deps; d=$(deb_of "$1"); shift
    deps=$(dpkg-deb -f "$d" Depends)
    for n in "$@"; do
        if [[ ", $deps," =~ ,\ $n[\ ,] ]]; then ok "$(basename "$d") Depends: $n"; else bad "$(basename "$d") Depends lacks $n (Depends: $deps)"; fi
    done
}
PACKAGES=(warpstage-dev)
[ "$HAVE_VIEWER" = 1 ] && PACKAGES+=(warpstage)
[ "$HAVE_RECORDER" = 1 ] && PACKAGES+=(warpstage-recorder)
for p in "${PACKAGES[@]}"; do
    if [ -z "$(deb_of "$p")" ]; then bad "no ${p}_*.deb was made"; fi
done
if [ ${#FAILS[@]} = 0 ]; then
    headers=()
    for h in "$P"/include/warpstage/*; do headers+=("usr/include/warpstage/$(basename "$h")"); done
    deb_has warpstage-dev "${headers[@]}" usr/share/cmake/Warpstage/WarpstageConfig.cmake \
        usr/share/cmake/Warpstage/WarpstageConfigVersion.cmake usr/share/cmake/Warpstage/WarpstageTargets.cmake
    arch=$(dpkg-deb -f "$(deb_of warpstage-dev)" Architecture)
    if [ "$arch" = all ]; then ok "warpstage-dev: Architecture all"; else bad "warpstage-dev: Architecture $arch (header-only: all)"; fi
    if [ "$HAVE_VIEWER" = 1 ]; then
        deb_has warpstage usr/bin/warpstage "usr/share/warpstage/samples/$(basename "$SAMPLE")" \
            usr/share/applications/warpstage.desktop usr/share/mime/packages/warpstage.xml \
            usr/share/icons/hicolor/scalable/apps/warpstage.svg \
            usr/share/icons/hicolor/scalable/mimetypes/application-x-warpstage-trace.svg \
            "usr/$LIBDIR/warpstage/libwarpstage_sqlite.so"
        # libqt6svg6 also holds the SVG icon engine the viewer's icons need
        depends_has warpstage libqt6core6 libqt6gui6 libqt6widgets6 libqt6svg6 'libqcustomplot2\.1-qt6' \
            libsqlite3-0 libzstd1
        deps=$(dpkg-deb -f "$(deb_of warpstage)" Depends)
        if grep -qiE 'cuda|cupti|nvidia|warpstage-recorder' <<<"$deps"; then bad "the viewer depends on CUDA or the recorder: $deps"
        else ok "the viewer's Depends name no CUDA (installs without it)"; fi
        if dpkg-deb -c "$(deb_of warpstage)" | grep -qE 'warpstage-record|libwarpstage-inject|include/warpstage'; then
            bad "the viewer package carries recorder or header files"
        else ok "the viewer package carries only the viewer"; fi
    fi
    if [ "$HAVE_RECORDER" = 1 ]; then
        deb_has warpstage-recorder usr/bin/warpstage-record usr/bin/warpstage-sink-dump "usr/$LIBDIR/warpstage/libwarpstage-inject.so"
        depends_has warpstage-recorder libc6 'libstdc\+\+6' libsqlite3-0 libzstd1
    fi
    for d in "$W"/deb/*.deb; do echo "  $(basename "$d"): $(du -h "$d" | cut -f1), Depends: $(dpkg-deb -f "$d" Depends)"; done
fi

# Debian docs (cmake/WarpstageDebianDocs.cmake): each package's /usr/share/doc/<package>/copyright in the
# machine-readable format (DEP-5) and changelog.Debian.gz that dpkg-parsechangelog reads.
for p in "${PACKAGES[@]}"; do
    d=$(deb_of "$p"); [ -n "$d" ] || continue
    deb_has "$p" "usr/share/doc/$p/copyright" "usr/share/doc/$p/changelog.Debian.gz"
    c=$(dpkg-deb --fsys-tarfile "$d" | tar -xO "./usr/share/doc/$p/copyright" 2>/dev/null)
    lic=$(sed -n 's/^License: \([^ ]*\)$/\1/p' <<<"$c" | head -n1)
    if grep -qx 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/' <<<"$c" && grep -qx 'Files: \*' <<<"$c" \
        && grep -q '^Copyright: ' <<<"$c" && [ -n "$lic" ] && [ "$(grep -cx "License: $lic" <<<"$c")" -ge 2 ] \
        && grep -q '^ [^ ]' <<<"$c"; then
        ok "$p: copyright is DEP-5 (License: $lic, with its text)"
    else
        bad "$p: /usr/share/doc/$p/copyright is not a DEP-5 file with a Files: * paragraph and the licence text"
    fi
    dpkg-deb --fsys-tarfile "$d" | tar -xO "./usr/share/doc/$p/changelog.Debian.gz" 2>/dev/null | gzip -dc >"$W/changelog.$p" 2>/dev/null
    cv=$(dpkg-parsechangelog -l "$W/changelog.$p" -S Version 2>/dev/null)
    cs=$(dpkg-parsechangelog -l "$W/changelog.$p" -S Source 2>/dev/null)
    if [ "$cv" = "$VERSION" ] && [ "$cs" = warpstage ]; then ok "$p: changelog.Debian.gz parses (warpstage $cv)"
    else bad "$p: changelog.Debian.gz does not parse as warpstage $VERSION (source '$cs', version '$cv')"; fi
done

echo "=== 4. the packages unpacked into a scratch root (dpkg -x) ==="
R=$W/root
for d in "$W"/deb/*.deb; do dpkg -x "$d" "$R"; done
if [ "$HAVE_VIEWER" = 1 ] && [ -x "$R/usr/bin/warpstage" ]; then
    out=$("$R/usr/bin/warpstage" --version 2>&1)
    if [[ "$out" == "warpstage $VERSION"* ]]; then ok "unpacked warpstage --version: $out"; else bad "unpacked warpstage --version said: $out"; fi
    RS=$(ls "$R"/usr/share/warpstage/samples/*.wstrace 2>/dev/null | head -n1)
    if [ -n "$RS" ] && QT_QPA_PLATFORM=offscreen "$R/usr/bin/warpstage" info "$RS" >/dev/null 2>"$W/rinfo.txt"; then
        ok "unpacked warpstage info on its sample"
    else
        bad "unpacked warpstage info on its sample failed: $(tail -2 "$W/rinfo.txt" 2>/dev/null)"
    fi
    if command -v desktop-file-validate >/dev/null; then
        if desktop-file-validate "$R/usr/share/applications/warpstage.desktop" >"$W/desktop.txt" 2>&1; then ok "desktop-file-validate"
        else bad "desktop-file-validate: $(cat "$W/desktop.txt")"; fi
    else
        echo "  (desktop-file-validate is not installed: the .desktop entry is not validated)"
    fi
    if command -v update-mime-database >/dev/null && command -v gio >/dev/null && [ -f /usr/share/mime/packages/freedesktop.org.xml ]; then
        M=$W/mime/share
        mkdir -p "$M/mime/packages"
        cp /usr/share/mime/packages/freedesktop.org.xml "$R/usr/share/mime/packages/warpstage.xml" "$M/mime/packages/"
        update-mime-database "$M/mime" >/dev/null 2>&1
        cp "$RS" "$W/renamed-trace"
        python3 -c "import sqlite3,sys; sqlite3.connect(sys.argv[1]).execute('create table t(a)')" "$W/other.sqlite"
        mime() { XDG_DATA_DIRS=$M XDG_DATA_HOME=$W/mime/none gio info -a standard::content-type "$1" 2>/dev/null | sed -n 's/.*content-type: //p'; }
        for c in "$RS:application/x-warpstage-trace" "$W/renamed-trace:application/x-warpstage-trace" \
                 "$W/other.sqlite:application/vnd.sqlite3"; do
            f=${c%:*}; want=${c##*:}; got=$(mime "$f")
            if [ "$got" = "$want" ]; then ok "MIME $(basename "$f"): $got"; else bad "MIME $(basename "$f"): $got (want $want)"; fi
        done
    else
        echo "  (update-mime-database or gio is not installed: the MIME type is not checked)"
    fi
fi

echo "check-package: $(( $(date +%s) - t0 )) s"
if [ ${#FAILS[@]} -gt 0 ]; then
    echo "check-package: ${#FAILS[@]} check(s) FAILED:"
    printf '  - %s\n' "${FAILS[@]}"
    exit 1
fi
echo "check-package: all checks passed"
