#!/bin/bash
# images/check.sh - reproducibility check of `make images`
# (`make images-check`): builds the images twice, each into its own fresh
# output dir (from the cached .debs: the first build downloads them when
# they are missing), and compares the sha256 of the three outputs.
# The second build runs with another umask and time zone, so what leaks
# from the environment (modes, local time) shows as a difference too.
# Exit 0 when they are identical, 1 with the differing files named.
#
#   images/check.sh [WORKDIR]             (default build/images-check)
set -euo pipefail

WORK=${1:-build/images-check}
HERE=$(cd "$(dirname "$0")" && pwd)

rm -rf "$WORK"
mkdir -p "$WORK"
for run in a b; do
    start=$(date +%s%N)
    if [ "$run" = a ]; then env=(TZ=UTC); mask=022; else env=(TZ=Pacific/Kiritimati); mask=077; fi
    (umask "$mask" && env "${env[@]}" "$HERE/build.sh" "$WORK/$run") 2>"$WORK/build-$run.log" ||
        { cat "$WORK/build-$run.log" >&2; echo "images-check: build $run failed" >&2; exit 1; }
    echo "images-check: build $run: $((($(date +%s%N) - start) / 1000000)) ms"
done
if ! diff -u "$WORK/a/SHA256SUMS" "$WORK/b/SHA256SUMS"; then
    echo "images-check: FAIL: two builds from the same .debs differ (above: $WORK/a vs $WORK/b)" >&2
    exit 1
fi
echo "images-check: PASS: both builds identical:"
cat "$WORK/a/SHA256SUMS"
rm -rf "$WORK"
