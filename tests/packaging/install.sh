#!/usr/bin/env bash
# make install / make uninstall (GNU conventions): with DESTDIR set,
# the install writes nothing outside DESTDIR (it runs on a host made
# read-only but DESTDIR and the build directory); the expected files
# are there; the binary names no path of the checkout and works from /;
# make uninstall removes every file again.
#
# usage: tests/packaging/install.sh   (from the checkout, after make all man)
set -uo pipefail
cd "$(dirname "$0")/../.."
top=$PWD
BUILD=${BUILD:-build}
pass=0 fail=0 skip=0
ok() { echo "PASS install/$1"; pass=$((pass + 1)); }
bad() { echo "FAIL install/$1: $2"; fail=$((fail + 1)); }

dest=$(mktemp -d /tmp/hvrun-install.XXXXXX)
trap 'rm -rf "$dest"' EXIT
mk() { make --no-print-directory -s BUILD="$BUILD" DESTDIR="$dest" "$@"; }

# The install runs with the whole host read-only but DESTDIR and build/
# (bubblewrap): a write anywhere else fails it.
if command -v bwrap >/dev/null &&
    bwrap --ro-bind / / --dev /dev --proc /proc true 2>/dev/null; then
    if bwrap --ro-bind / / --dev /dev --proc /proc --bind "$dest" "$dest" \
        --bind "$top/$BUILD" "$top/$BUILD" --chdir "$top" \
        make --no-print-directory -s BUILD="$BUILD" DESTDIR="$dest" install \
        >"$dest.log" 2>&1; then
        ok destdir-only
    else
        bad destdir-only "make install in a read-only host but DESTDIR: $(tail -3 "$dest.log")"
        mk install >/dev/null
    fi
    rm -f "$dest.log"
else
    echo "SKIP install/destdir-only: no bubblewrap sandbox here"
    skip=$((skip + 1))
    mk install >/dev/null || bad install "make install failed"
fi

want="usr/local/bin/hvrun usr/local/share/man/man1/hvrun.1
usr/local/share/man/man1/hvrun-run.1 usr/local/share/man/man1/hvrun-analyze.1
usr/local/share/man/man1/hvrun-record.1 usr/local/share/man/man1/hvrun-replay.1
usr/local/share/man/man1/hvrun-doctor.1 usr/local/share/man/man1/hvrun-detlog.1
usr/local/share/man/man1/hvrun-syscalls.1
usr/local/share/bash-completion/completions/hvrun
usr/local/share/zsh/site-functions/_hvrun usr/local/share/doc/hvrun/README.md"
missing=
for f in $want; do [ -f "$dest/$f" ] || missing="$missing $f"; done
if [ -z "$missing" ]; then ok files; else bad files "missing:$missing"; fi

bin=$dest/usr/local/bin/hvrun
if grep -qF "$top" "$bin"; then
    bad no-checkout-path "$bin contains '$top'"
else
    ok no-checkout-path
fi
version=$(cd / && "$bin" --version)
page=$(cd / && "$bin" help --man run)
if [[ $version == "hvrun "*" (commit "* && $page == *'.TH "HVRUN-RUN"'* ]]; then
    ok runs-from-root
else
    bad runs-from-root "hvrun --version / help --man from / failed"
fi

mk uninstall >/dev/null 2>&1 || bad uninstall "make uninstall failed"
left=$(find "$dest" -type f -o -type l)
if [ -z "$left" ]; then ok uninstall; else bad uninstall "left: $left"; fi

echo "install: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
