#!/bin/sh
# tests/lint/test_include_graph.sh: include_graph.py on trees made to pass
# and to fail: a tiny fixture (kernel/ below mm/), the fixture with an
# include that closes a cycle, one with an include of a header the file
# uses nothing from, and a copy of the real syscall-proxy/ with an include
# that closes a cycle. Prints "include_graph test ok" or what went wrong.
set -u
here=$(cd "$(dirname "$0")" && pwd)
script=$here/include_graph.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "include_graph test: $*" >&2; exit 1; }

# expect STATUS TREE [ARGS...]: the script's exit status on TREE is STATUS.
expect() {
    want=$1
    shift
    python3 "$script" "$@" > "$tmp/out" 2>&1
    got=$?
    [ "$got" = "$want" ] || { cat "$tmp/out" >&2; fail "exit $got, not $want: $*"; }
}

fixture() {
    rm -rf "$tmp/t"
    mkdir -p "$tmp/t/kernel" "$tmp/t/mm"
    cat > "$tmp/t/proxy.h" <<'EOF'
struct proxy_process { int pid; };
EOF
    cat > "$tmp/t/kernel/kernel.h" <<'EOF'
#include "proxy.h"
int proxy_signal_raise(struct proxy_process *p, int sig);
EOF
    cat > "$tmp/t/kernel/signal.c" <<'EOF'
#include "proxy.h"
#include "kernel.h"
int proxy_signal_raise(struct proxy_process *p, int sig) { return p->pid + sig; }
EOF
    cat > "$tmp/t/mm/mm.h" <<'EOF'
#include "proxy.h"
#define PROXY_MM_PAGE 4096
struct proxy_mm_state { int brk_pages; };
int proxy_mm_charge(struct proxy_process *p);
EOF
    cat > "$tmp/t/mm/memlimit.c" <<'EOF'
#include "proxy.h"
#include "kernel.h"
#include "mm.h"
int proxy_mm_charge(struct proxy_process *p) { return proxy_signal_raise(p, 9); }
EOF
}

# An acyclic tree passes and prints its graph and order.
fixture
expect 0 "$tmp/t"
grep -q '^mm -> kernel, proxy$' "$tmp/out" || fail "no mm -> kernel edge printed"
grep -q '^order: proxy < kernel < mm$' "$tmp/out" || fail "no order printed"

# kernel/ including mm.h (and using it) closes a cycle.
fixture
printf '#include "mm.h"\nint f(void) { return PROXY_MM_PAGE; }\n' >> "$tmp/t/kernel/signal.c"
expect 1 "$tmp/t"
grep -q 'include cycle between kernel, mm' "$tmp/out" || fail "cycle not reported"

# A member access counts as a use; an include used for nothing fails.
fixture
printf '#include "mm.h"\nint g(struct proxy_process *p) { return p->pid; }\n' > "$tmp/t/mm/brk.c"
expect 1 "$tmp/t"
grep -q 'mm/brk.c: includes mm.h but uses nothing' "$tmp/out" || fail "unused include not reported"
printf 'int h(void *s) { return ((struct x *)s)->brk_pages; }\n' >> "$tmp/t/mm/brk.c"
expect 0 "$tmp/t"

# A part header (kernel/*_state.h) counts with proxy.h, so proxy.h may
# include it; it may include no other header of the tree.
fixture
printf '#define PROXY_NSIG 65\n' > "$tmp/t/kernel/kernel_state.h"
printf '#include "kernel_state.h"\nstruct proxy_process { int pid; };\n' > "$tmp/t/proxy.h"
expect 0 "$tmp/t"
printf '#include "kernel.h"\n' >> "$tmp/t/kernel/kernel_state.h"
expect 1 "$tmp/t"
grep -q 'a part header includes kernel.h' "$tmp/out" || fail "part header's include not reported"

# The real tree passes; with mm/ including net.h it has a cycle.
real=$here/../../syscall-proxy
cp -r "$real" "$tmp/real"
expect 0 "$tmp/real"
printf '#include "net.h"\nconst void *include_graph_test = proxy_net_syscalls;\n' >> "$tmp/real/mm/ldt.c"
expect 1 "$tmp/real"
grep -q 'include cycle between' "$tmp/out" || fail "cycle in the real tree not reported"

echo "include_graph test ok"
