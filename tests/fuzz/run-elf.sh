#!/usr/bin/env bash
# tests/fuzz/run-elf.sh FUZZ_ELF SECONDS
#
# Runs the libFuzzer ELF-loader target for SECONDS, seeded with the guest
# test binaries, the host's ld.so and a few system programs; the corpus it
# grows is kept in build/fuzz/corpus-elf, crash/leak/timeout inputs in
# build/fuzz/findings/elf. Exits non-zero on a finding.
set -u
fuzzer=$1
seconds=${2:-600}
root=$(cd "$(dirname "$0")/../.." && pwd)
corpus=$root/build/fuzz/corpus-elf
seeds=$root/build/fuzz/seeds-elf
findings=$root/build/fuzz/findings/elf
mkdir -p "$corpus" "$seeds" "$findings"
for f in "$root"/build/guest/* /lib64/ld-linux-x86-64.so.2 /bin/true \
    /usr/bin/env; do
    [ -f "$f" ] && cp -L "$f" "$seeds/$(basename "$f")" 2>/dev/null
done
echo "fuzz-elf: ${seconds}s, corpus $corpus"
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
    "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -max_len=2000000 -artifact_prefix="$findings/" -print_final_stats=1 \
    "$corpus" "$seeds"
status=$?
if [ $status -ne 0 ]; then
    echo "fuzz-elf: FINDING (status $status), inputs in $findings"
else
    echo "fuzz-elf: clean after ${seconds}s"
fi
exit $status
