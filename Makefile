# hvrun - deterministic execution of Linux x86-64 programs in KVM micro-VMs.
#
#   make            build build/hvrun
#   make debug      build build/debug/hvrun (ASan/UBSan, -O1 -g)
#   make test       install deps if missing, build both, run every test
#   make check      Criterion unit tests only
#   make test-guest guest programs and the real-program matrix (both builds)
#   make demo       install deps, build, run a real program under hvrun
#   make bench      side-by-side benchmarks (native vs kvm)
#   make deps       install the Debian packages hvrun needs
#   make fuzz       the fuzz targets, FUZZ_SECONDS (600) each (not in test)
#   make fuzz-trinity  trinity inside hvrun, sandboxed, FUZZ_MINUTES (20)
#   make images     kernel + initramfs for QEMU boot experiments (build/images)
#   make images-check  build the images twice, compare (reproducibility)
#   make images-boot   boot them in QEMU-TCG natively, check the init's output
#   make man        the man pages into build/man (from cli/usage.c)
#   make install    binary, man pages, completions, docs under PREFIX
#                   (/usr/local; DESTDIR, BINDIR, MANDIR, DATADIR, DOCDIR)
#   make uninstall  removes what make install installed
#   make deb        the Debian package (dpkg-buildpackage) into build/deb

CC ?= cc
BUILD ?= build
WERROR ?= 1
WARNINGS = -Wall -Wextra -Wshadow -Wvla -Wformat=2 -Wmissing-prototypes \
           -Wundef -Wno-unused-parameter
ifeq ($(WERROR),1)
WARNINGS += -Werror
endif
# syscall-proxy/ is grouped by kernel subsystem (docs/ARCHITECTURE.md); each
# folder is on the include path so that a header's #include stays its name.
PROXY_DIRS := syscall-proxy $(addprefix syscall-proxy/,net io fs kernel mm)
CPPFLAGS += -D_GNU_SOURCE -Ivmm $(addprefix -I,$(PROXY_DIRS)) -Idetcore -Icli \
            -Iguestkernel
CFLAGS ?= -O2 -g
CFLAGS += -std=c11 $(WARNINGS)
# Capstone statically, and hvrun's own image not position-independent
# (HVRUN_PIE=1 builds it PIE): libcapstone's decoder tables hold ~77,000
# pointers, which a PIE image or a shared library makes the dynamic
# loader relocate (and copy the pages of) at every start: 8 of the 13 ms
# of CPU `hvrun --version` took (docs/PERFORMANCE.md). The shared
# libraries, heap, stack and mappings stay randomised (docs/SECURITY.md).
HVRUN_PIE ?= 0
# The other libraries statically too (HVRUN_STATIC_LIBS=0 links them
# shared): ld.so opening, mapping and binding five shared libraries
# (libelf, libzstd, libfdt, libseccomp, libz) cost ~1.2-2 ms of CPU at
# every start (docs/PERFORMANCE.md, "A run's fixed cost"); the price is a
# rebuild of hvrun to take up a security fix in one of them. zlib stays
# shared: a distribution's checks flag an embedded copy of it.
HVRUN_STATIC_LIBS ?= 1
ifeq ($(HVRUN_STATIC_LIBS),1)
LDLIBS += -l:libelf.a -l:libzstd.a -l:libfdt.a -l:libseccomp.a -lz \
          -l:libcapstone.a -pthread
else
LDLIBS += -lelf -lzstd -lfdt -lseccomp -l:libcapstone.a -pthread
endif
HVRUN_LDFLAGS := $(if $(filter 1,$(HVRUN_PIE)),,-no-pie)

DEBUG_FLAGS = -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer \
              -fno-sanitize-recover=undefined

VERSION := 0.1.0
# The commit hvrun is built from (hvrun --version, doctor --json): git's
# name for it, "unknown" outside a git checkout (a release tarball).
# Read-only git calls (no index refresh: a build writes nothing in .git).
ifeq ($(origin HVRUN_COMMIT),undefined)
HVRUN_COMMIT := $(or $(shell GIT_OPTIONAL_LOCKS=0 git rev-parse --short=12 \
                    HEAD 2>/dev/null),unknown)$(shell GIT_OPTIONAL_LOCKS=0 \
                    git diff-index --quiet HEAD -- 2>/dev/null || \
                    { git rev-parse HEAD >/dev/null 2>&1 && echo -dirty; })
endif
# No path into the checkout is compiled in (debug info, __FILE__): the
# installed binary says nothing of where it was built.
PREFIX_MAP := -ffile-prefix-map=$(CURDIR)=.

CORE_SRCS := $(wildcard vmm/*.c) $(foreach d,$(PROXY_DIRS),$(wildcard $(d)/*.c)) \
             $(wildcard detcore/*.c)
CORE_ASM := $(wildcard vmm/*.S)
# cli/filtergen.c is a build tool (below), not part of hvrun.
CLI_SRCS := $(filter-out cli/filtergen.c,$(wildcard cli/*.c))
CORE_OBJS := $(CORE_SRCS:%.c=$(BUILD)/%.o) $(CORE_ASM:%.S=$(BUILD)/%.o)
CLI_OBJS := $(CLI_SRCS:%.c=$(BUILD)/%.o)
SECCOMP_PREBUILT_OBJ := $(BUILD)/cli/seccomp_prebuilt.o
GK_BIN := $(BUILD)/guestkernel/gk.bin
GK_BLOB_OBJ := $(BUILD)/guestkernel/blob.o $(BUILD)/guestkernel/vdso_blob.o
GK_VDSO := $(BUILD)/guestkernel/vdso.so

DEPS_PKGS := libelf-dev libfdt-dev libzstd-dev libseccomp-dev \
             libcriterion-dev libcapstone-dev pkg-config
# Programs the real-program tests run (all from Debian packages).
TEST_PKGS := coreutils sed gawk gzip bzip2 xz-utils zstd openssl sqlite3 \
             perl python3 bc golang-go bubblewrap util-linux \
             cmake meson ninja-build python3-pytest cargo rustc strace gdb \
             keyutils

.PHONY: all debug test check check-docs test-guest test-chaos test-lane-a test-lane-b demo bench deps clean lint format \
        man install uninstall deb test-packaging \
        fuzz fuzz-deps fuzz-elf fuzz-syscalls fuzz-trinity images images-deps images-check images-boot \
        matrix matrix-deps stress stress-deps ltp ltp-deps ltp-verify

all: $(BUILD)/hvrun

$(BUILD)/hvrun: $(CORE_OBJS) $(CLI_OBJS) $(GK_BLOB_OBJ) $(SECCOMP_PREBUILT_OBJ)
	@echo "  LD      $@"
	@$(CC) $(CFLAGS) $(PREFIX_MAP) $(LDFLAGS) $(HVRUN_LDFLAGS) -o $@ $^ $(LDLIBS)

# hvrun's seccomp filters, compiled by libseccomp when hvrun is built
# (cli/filtergen.c says why) rather than at every run.
$(BUILD)/cli/filtergen: $(BUILD)/cli/filtergen.o $(BUILD)/cli/confine_rules.o \
                        $(BUILD)/libhvrun.a
	@echo "  LD      $@"
	@$(CC) $(CFLAGS) $(LDFLAGS) $(HVRUN_LDFLAGS) -o $@ $^ $(LDLIBS)
$(BUILD)/cli/seccomp_prebuilt.c: $(BUILD)/cli/filtergen
	@echo "  GEN     $@"
	@ASAN_OPTIONS=detect_leaks=0 $< $@.tmp && mv $@.tmp $@
$(SECCOMP_PREBUILT_OBJ): $(BUILD)/cli/seccomp_prebuilt.c cli/confine_rules.h \
                         vmm/ptrace_filter.h
	@echo "  CC      $@"
	@$(CC) $(CPPFLAGS) $(CFLAGS) $(PREFIX_MAP) -c -o $@ $<

$(BUILD)/libhvrun.a: $(CORE_OBJS) $(GK_BLOB_OBJ)
	@rm -f $@
	@ar rcs $@ $^

$(BUILD)/%.o: %.c $(wildcard */*.h syscall-proxy/*/*.h)
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	@$(CC) $(CPPFLAGS) -DHVRUN_VERSION='"$(VERSION)"' $(CFLAGS) $(PREFIX_MAP) -c -o $@ $<

# The two objects that name the commit are rebuilt when it changes.
COMMIT_STAMP := $(BUILD)/commit.stamp
$(COMMIT_STAMP): FORCE
	@mkdir -p $(dir $@)
	@echo '$(HVRUN_COMMIT)' | cmp -s - $@ || echo '$(HVRUN_COMMIT)' > $@
$(BUILD)/cli/main.o $(BUILD)/cli/cmd_doctor.o: $(COMMIT_STAMP)
$(BUILD)/cli/main.o $(BUILD)/cli/cmd_doctor.o: CPPFLAGS += -DHVRUN_COMMIT='"$(HVRUN_COMMIT)"'
FORCE:

# Guest code hvrun copies into probe VMs (vmm/*.S): data to hvrun.
$(BUILD)/vmm/%.o: vmm/%.S
	@mkdir -p $(dir $@)
	@echo "  AS      $@"
	@$(CC) -c -o $@ $<

# The guest kernel: assembled, linked at its high address, flattened.
$(BUILD)/guestkernel/entry.o: guestkernel/entry.S guestkernel/gk_abi.h
	@mkdir -p $(dir $@)
	$(CC) -Iguestkernel -c -o $@ $<
$(BUILD)/guestkernel/gk.elf: $(BUILD)/guestkernel/entry.o guestkernel/gk.lds
	ld -T guestkernel/gk.lds -o $@ $<
$(GK_BIN): $(BUILD)/guestkernel/gk.elf
	objcopy -O binary $< $@
$(BUILD)/guestkernel/blob.o: guestkernel/blob.S $(GK_BIN)
	$(CC) -DGK_BLOB_PATH='"$(GK_BIN)"' -c -o $@ $<

# The guest vDSO: a one-page shared object, freestanding, no relocations.
VDSO_FLAGS := -O2 -fPIC -shared -nostdlib -fno-stack-protector -fno-builtin \
              -fcf-protection=none -fno-asynchronous-unwind-tables \
              -Wall -Wextra -Werror -Iguestkernel \
              -Wl,-T,guestkernel/vdso-layout.lds \
              -Wl,--version-script=guestkernel/vdso.lds \
              -Wl,-soname=linux-vdso.so.1 -Wl,--hash-style=both \
              -Wl,-z,max-page-size=4096 -Wl,-z,noexecstack -Wl,--build-id=none
$(GK_VDSO): guestkernel/vdso.c guestkernel/vdso_abi.h guestkernel/gk_abi.h guestkernel/vdso.lds \
            guestkernel/vdso-layout.lds
	@mkdir -p $(dir $@)
	$(CC) $(VDSO_FLAGS) -o $@ $<
	@test $$(stat -c %s $@) -le 4096 || { echo "vdso.so over one page"; exit 1; }
$(BUILD)/guestkernel/vdso_blob.o: guestkernel/vdso_blob.S $(GK_VDSO)
	$(CC) -DGK_VDSO_PATH='"$(GK_VDSO)"' -c -o $@ $<

# The ptrace backend's stub process (vmm/stub/): a static libc-free
# program linked at its fixed address, embedded into hvrun as data.
PT_STUB_ELF := $(BUILD)/vmm/stub/ptrace_stub.elf
$(BUILD)/vmm/stub/ptrace_stub.o: vmm/stub/ptrace_stub.S vmm/ptrace_abi.h
	@mkdir -p $(dir $@)
	$(CC) -Ivmm -c -o $@ $<
$(PT_STUB_ELF): $(BUILD)/vmm/stub/ptrace_stub.o vmm/stub/ptrace_stub.lds
	ld -static -T vmm/stub/ptrace_stub.lds -z max-page-size=4096 \
	    -z noexecstack --build-id=none -o $@ $<
	@test "$$(nm $@ | awk '/ pt_stub_gadget$$/ {print $$1}')" = 00007ffff8000800 || \
	    { echo "ptrace stub: gadget not at PT_STUB_BASE + PT_STUB_GADGET_OFF"; exit 1; }
	@test "$$(nm $@ | awk '/ pt_stub_batch$$/ {print $$1}')" = 00007ffff8000840 || \
	    { echo "ptrace stub: batch not at PT_STUB_BASE + PT_STUB_BATCH_OFF"; exit 1; }
$(BUILD)/vmm/ptrace_stub_blob.o: vmm/ptrace_stub_blob.S $(PT_STUB_ELF)
	@mkdir -p $(dir $@)
	$(CC) -DPT_STUB_PATH='"$(PT_STUB_ELF)"' -c -o $@ $<

debug:
	$(MAKE) BUILD=build/debug CFLAGS="$(DEBUG_FLAGS)" all

# ---- tests -----------------------------------------------------------------

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/unit/%)

$(BUILD)/tests/unit/%: tests/unit/%.c $(wildcard tests/unit/*.h) $(BUILD)/libhvrun.a
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	@$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(BUILD)/libhvrun.a -lcriterion $(LDLIBS)

GUEST_SRCS := $(wildcard tests/guest/*.c)
GUEST_BINS := $(GUEST_SRCS:tests/guest/%.c=build/guest/%)

build/guest/%: tests/guest/%.c $(wildcard tests/guest/*.h)
	@mkdir -p $(dir $@)
	$(CC) -O1 -g -o $@ $< $(if $(findstring static,$*),-static,) \
	    $(if $(findstring nopie,$*),-no-pie,) \
	    $(if $(findstring seccomp,$*),-lseccomp,)

# tests/progress's programs (--progress software): not guest-suite
# programs, which every suite also runs in the default mode, where a timer
# in their compute loop waits ~100x as long as natively.
PROGRESS_SRCS := $(wildcard tests/progress/*.c)
PROGRESS_BINS := $(PROGRESS_SRCS:tests/progress/%.c=build/progress/%)

build/progress/%: tests/progress/%.c
	@mkdir -p $(dir $@)
	$(CC) -O1 -g -pthread -o $@ $<

check: deps $(UNIT_BINS)
	@fail=0; for t in $(UNIT_BINS); do echo "== $$t"; $$t || fail=1; done; \
	    exit $$fail

test-guest: deps all $(GUEST_BINS)
	tests/run-guest-tests.sh $(BUILD)/hvrun

# docs/SYSCALLS.md is generated; it must match what the tables say.
check-docs: all
	@./$(BUILD)/hvrun syscalls | diff -u docs/SYSCALLS.md - >/dev/null || \
	    { echo "docs/SYSCALLS.md is stale: run ./$(BUILD)/hvrun syscalls > docs/SYSCALLS.md"; exit 1; }
	@echo "docs/SYSCALLS.md matches 'hvrun syscalls'"

# Where this host offers /dev/kvm, the suites run hvrun's default (kvm)
# backend and the guest and determinism suites run again under ptrace
# (tests/parity/hvrun-ptrace). Without it (a VM guest without nested
# virtualisation, most CI runners) every suite runs with
# HVRUN_BACKEND=ptrace (hvrun's default backend then) instead of skipping;
# what needs kvm itself is a counted SKIP.
KVM_USABLE := $(shell [ -r /dev/kvm ] && [ -w /dev/kvm ] && echo yes)
SUITE_ENV := $(if $(KVM_USABLE),,HVRUN_BACKEND=ptrace)
# The determinism suite's chaos pass (every guest program under --chaos
# --verify, seeds 1-5, with the suite's first binary) is its longest part:
# 3 min for seed 1 alone under kvm on a 2-core kvm_pvm host, 4 min for the
# five seeds under ptrace. make test runs it once, with seed 1 (every
# program once), under hvrun's default backend: kvm where /dev/kvm works
# (the ptrace reruns none: the schedules chaos draws are detcore's, the
# same whichever backend runs them), else ptrace. `make test-chaos` runs
# the five seeds under both backends (not in make test: ~7 min).
KVM_CHAOS_SEEDS := HVRUN_DET_CHAOS_SEEDS=1

# The determinism suite's chaos pass with seeds 1-5 under each backend
# that works here (make test runs seed 1 under one; see KVM_CHAOS_SEEDS).
test-chaos: deps all $(GUEST_BINS) $(PROGRESS_BINS)
ifeq ($(KVM_USABLE),yes)
	HVRUN_DET_CHAOS_SEEDS=5 tests/determinism/run.sh $(BUILD)/hvrun
	HVRUN_BIN=$(CURDIR)/$(BUILD)/hvrun HVRUN_DET_CHAOS_SEEDS=5 tests/determinism/run.sh tests/parity/hvrun-ptrace
else
	HVRUN_BACKEND=ptrace HVRUN_DET_CHAOS_SEEDS=5 tests/determinism/run.sh $(BUILD)/hvrun
endif

# make test builds with TEST_JOBS jobs (the number of CPUs) unless make
# was given its own -j; the suites run HVRUN_TEST_JOBS cases at once
# (default the number of CPUs, at most 4; tests/lib.sh), which
# HVRUN_TEST_JOBS=1 makes one at a time.
TEST_JOBS ?= $(shell nproc 2>/dev/null || echo 1)
TEST_MAKE = $(MAKE) $(if $(filter -j%,$(MAKEFLAGS)),,-j$(TEST_JOBS))

test: deps
	$(TEST_MAKE) all check-docs
	$(TEST_MAKE) test-packaging
	$(TEST_MAKE) BUILD=build/debug CFLAGS="$(DEBUG_FLAGS)" all
	$(TEST_MAKE) DEPS_CHECKED=1 check
	$(TEST_MAKE) DEPS_CHECKED=1 BUILD=build/debug CFLAGS="$(DEBUG_FLAGS)" check
	$(TEST_MAKE) $(GUEST_BINS) $(PROGRESS_BINS)
	@echo "make test: $(if $(KVM_USABLE),/dev/kvm here: the suites run the kvm backend and then ptrace,no /dev/kvm here: the suites run the ptrace backend (HVRUN_BACKEND=ptrace))"
	$(SUITE_ENV) tests/run-guest-tests.sh build/hvrun build/debug/hvrun
	$(SUITE_ENV) $(KVM_CHAOS_SEEDS) tests/determinism/run.sh build/hvrun build/debug/hvrun
	$(SUITE_ENV) tests/progress/run.sh build/hvrun build/debug/hvrun
	$(SUITE_ENV) tests/processes/run.sh build/hvrun build/debug/hvrun
	$(SUITE_ENV) tests/record/run.sh build/hvrun build/debug/hvrun
	$(MAKE) --no-print-directory -j2 -Oline test-lane-a test-lane-b
ifeq ($(KVM_USABLE),yes)
	HVRUN_BIN=$(CURDIR)/build/hvrun tests/run-guest-tests.sh tests/parity/hvrun-ptrace
	HVRUN_BIN=$(CURDIR)/build/debug/hvrun tests/run-guest-tests.sh tests/parity/hvrun-ptrace
endif
	$(TEST_MAKE) images
	$(SUITE_ENV) tests/boot/run.sh build/hvrun build/debug/hvrun

# Two lanes of make test side by side, each suite's output printed whole
# when it ends (-Oline): suites whose every check compares hvrun with
# hvrun (a run with its --verify twin or its replay, kvm with ptrace, a
# session under gdb with a plain run, a test runner's verdicts under
# hvrun), none a native run or a host clock, which load beside them
# cannot change; each lane uses about one core. The suites with cases
# compared with native runs that time themselves (processes, record; the
# guest suite's GUEST_SERIAL_PROGRAMS) run alone: a native job that must
# stop itself within 0.1 s did not under a make test with the lanes
# beside it and `make ltp` (processes' script-bash-i).
test-lane-a:
	$(SUITE_ENV) tests/confine/run.sh build/hvrun build/debug/hvrun
	$(SUITE_ENV) tests/verify/run.sh build/hvrun build/debug/hvrun
	tests/confine/seccomp.sh build/hvrun build/debug/hvrun
	$(SUITE_ENV) tests/runners/run.sh build/hvrun build/debug/hvrun
	$(SUITE_ENV) tests/gdb/run.sh build/hvrun build/debug/hvrun

test-lane-b:
	tests/parity/run.sh build/hvrun
	tests/parity/run.sh build/debug/hvrun
ifeq ($(KVM_USABLE),yes)
	HVRUN_BIN=$(CURDIR)/build/hvrun HVRUN_DET_CHAOS_SEEDS=0 tests/determinism/run.sh tests/parity/hvrun-ptrace
	HVRUN_BIN=$(CURDIR)/build/debug/hvrun HVRUN_DET_CHAOS_SEEDS=0 tests/determinism/run.sh tests/parity/hvrun-ptrace
	HVRUN_BACKEND=ptrace tests/gdb/run.sh build/hvrun
endif

DEMO_BACKEND = $(if $(KVM_USABLE),kvm,ptrace)

demo: deps all
	@echo "make demo: --backend $(DEMO_BACKEND)"
	./$(BUILD)/hvrun run --backend $(DEMO_BACKEND) --verify -- /usr/bin/python3 -c 'import hashlib, json, os, random, time; print(json.dumps({"sha256": hashlib.sha256(b"hvrun").hexdigest(), "time": time.time(), "urandom": os.urandom(8).hex(), "random": random.random(), "pid": os.getpid()}))'

bench: deps all
	bench/run.sh $(BUILD)/hvrun
	bench/backends.sh $(BUILD)/hvrun
	bench/record.sh $(BUILD)/hvrun

# Installs what is missing, from Debian packages; a no-op when present
# (one dpkg-query for all; make test's make check, DEPS_CHECKED=1, skips
# the check make test made already).
deps:
	@[ -n "$(DEPS_CHECKED)" ] && exit 0; \
	installed=" $$(dpkg-query -W -f='$${Package}:$${db:Status-Status} ' \
	    $(DEPS_PKGS) $(TEST_PKGS) 2>/dev/null) "; \
	missing=""; for p in $(DEPS_PKGS) $(TEST_PKGS); do \
	    case $$installed in *" $$p:installed "*) ;; \
	    *) missing="$$missing $$p" ;; esac; done; \
	if [ -n "$$missing" ]; then \
	    echo "installing:$$missing"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
	        apt-get install -y -qq $$missing) >/dev/null || \
	    { echo "hvrun: make deps: apt-get install$$missing failed"; exit 1; }; \
	fi

# ---- installing ----------------------------------------------------------------
#
# GNU conventions: PREFIX (/usr/local), DESTDIR (staging: nothing is
# written outside it when set), BINDIR, DATADIR, MANDIR, DOCDIR; the
# completions go where bash-completion and zsh look under DATADIR
# (Debian's zsh: ZSHCOMPDIR=/usr/share/zsh/vendor-completions). The man
# pages are rendered by the hvrun just built from cli/usage.c, the same
# tables its --help prints.

PREFIX ?= $(or $(prefix),/usr/local)
EXEC_PREFIX ?= $(PREFIX)
BINDIR ?= $(EXEC_PREFIX)/bin
DATAROOTDIR ?= $(PREFIX)/share
DATADIR ?= $(DATAROOTDIR)
MANDIR ?= $(DATAROOTDIR)/man
DOCDIR ?= $(DATAROOTDIR)/doc/hvrun
BASHCOMPDIR ?= $(DATADIR)/bash-completion/completions
ZSHCOMPDIR ?= $(DATADIR)/zsh/site-functions
INSTALL ?= install

MAN_CMDS := run analyze record replay doctor detlog syscalls
MAN_PAGES := $(BUILD)/man/hvrun.1 $(MAN_CMDS:%=$(BUILD)/man/hvrun-%.1)
DOC_FILES := README.md $(wildcard docs/*.md)

man: $(MAN_PAGES)

$(BUILD)/man/hvrun.1: $(BUILD)/hvrun
	@mkdir -p $(dir $@)
	./$(BUILD)/hvrun help --man > $@
$(BUILD)/man/hvrun-%.1: $(BUILD)/hvrun
	@mkdir -p $(dir $@)
	./$(BUILD)/hvrun help --man $* > $@

install: all man
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 \
	    $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(DOCDIR)
	$(INSTALL) -m 0755 $(BUILD)/hvrun $(DESTDIR)$(BINDIR)/hvrun
	$(INSTALL) -m 0644 $(MAN_PAGES) $(DESTDIR)$(MANDIR)/man1/
	$(INSTALL) -m 0644 cli/completion/hvrun.bash $(DESTDIR)$(BASHCOMPDIR)/hvrun
	$(INSTALL) -m 0644 cli/completion/_hvrun $(DESTDIR)$(ZSHCOMPDIR)/_hvrun
	$(INSTALL) -m 0644 $(DOC_FILES) $(DESTDIR)$(DOCDIR)/

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/hvrun $(DESTDIR)$(BASHCOMPDIR)/hvrun \
	    $(DESTDIR)$(ZSHCOMPDIR)/_hvrun \
	    $(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(MAN_PAGES))) \
	    $(addprefix $(DESTDIR)$(DOCDIR)/,$(notdir $(DOC_FILES)))
	-rmdir $(DESTDIR)$(DOCDIR) 2>/dev/null

# The Debian package (debian/): dpkg-buildpackage builds in debian/build,
# leaving build/ alone, without the test suite (debian/rules), and puts
# what it makes in the parent directory; they are moved into build/deb.
DEB_PKGS := dpkg-dev debhelper python3 libelf-dev libfdt-dev libzstd-dev \
            libseccomp-dev libcapstone-dev

deb:
	@$(MAKE) --no-print-directory deps DEPS_PKGS="$(DEB_PKGS)" TEST_PKGS=
	dpkg-buildpackage -us -uc -b
	@mkdir -p build/deb
	mv ../hvrun_$(VERSION)_* ../hvrun-dbgsym_$(VERSION)_* build/deb/ 2>/dev/null; \
	    ls build/deb/hvrun_$(VERSION)_amd64.deb

# Quick checks of what is installed (in make test): the man pages say
# what --help says, doctor --json keeps its schema, make install and
# uninstall stay inside DESTDIR.
test-packaging: all man
	python3 tests/packaging/man_help.py $(BUILD)/hvrun $(BUILD)/man
	$(SUITE_ENV) python3 tests/packaging/doctor_json.py $(BUILD)/hvrun
	tests/packaging/install.sh

# ---- fuzzing (not part of make test) ------------------------------------------
#
# fuzz-elf: libFuzzer (clang) on the ELF loader, core built with clang and
# ASan+UBSan into build/fuzz. fuzz-syscalls: a guest program issuing seeded
# random syscalls under build/debug/hvrun. Each runs FUZZ_SECONDS; findings
# (crash inputs, failing seeds) are kept in build/fuzz/findings.

FUZZ_PKGS := clang libclang-rt-dev
FUZZ_SECONDS ?= 600
FUZZ_BUILD := build/fuzz
FUZZ_SAN := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer \
            -fno-sanitize-recover=undefined

fuzz: fuzz-elf fuzz-syscalls

fuzz-deps:
	@$(MAKE) --no-print-directory deps DEPS_PKGS="$(FUZZ_PKGS)" TEST_PKGS=

$(FUZZ_BUILD)/fuzz_elf: tests/fuzz/fuzz_elf.c fuzz-deps
	$(MAKE) BUILD=$(FUZZ_BUILD) CC=clang \
	    CFLAGS="$(FUZZ_SAN) -fsanitize=fuzzer-no-link" $(FUZZ_BUILD)/libhvrun.a
	clang $(CPPFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer -std=c11 $(WARNINGS) \
	    -o $@ $< $(FUZZ_BUILD)/libhvrun.a $(LDLIBS)

fuzz-elf: $(FUZZ_BUILD)/fuzz_elf
	tests/fuzz/run-elf.sh $(FUZZ_BUILD)/fuzz_elf $(FUZZ_SECONDS)

$(FUZZ_BUILD)/sysfuzz: tests/fuzz/sysfuzz.c
	@mkdir -p $(dir $@)
	$(CC) -O1 -g -Wall -Wextra -Werror -o $@ $<

fuzz-syscalls: deps $(FUZZ_BUILD)/sysfuzz
	$(MAKE) BUILD=build/debug CFLAGS="$(DEBUG_FLAGS)" all
	tests/fuzz/run-syscalls.sh build/debug/hvrun $(FUZZ_BUILD)/sysfuzz \
	    $(FUZZ_SECONDS)

# fuzz-trinity: trinity (Debian's) inside `hvrun run`, each run in a
# bubblewrap sandbox of its own, FUZZ_MINUTES (20) split over both builds,
# both backends, root and non-root guests, seeds and child counts
# (tests/fuzz/trinity.sh says what fails a run).
FUZZ_MINUTES ?= 20

fuzz-trinity: deps
	$(MAKE) all
	$(MAKE) BUILD=build/debug CFLAGS="$(DEBUG_FLAGS)" all
	FUZZ_MINUTES=$(FUZZ_MINUTES) tests/fuzz/trinity.sh

# ---- the stress-ng suite (not part of make test) ---------------------------------
#
# make stress: tests/stress/run.sh runs every stress-ng stressor natively and
# under `hvrun run --verify` on both backends, each run in a bubblewrap sandbox
# of its own, and writes docs/STRESS.md; resumable (build/stress). A subset:
# make stress STRESSORS="pidfd aiol"; STRESS_REDO=1 runs done ones again.

STRESS_PKGS := stress-ng bubblewrap

stress-deps:
	@$(MAKE) --no-print-directory deps DEPS_PKGS="$(STRESS_PKGS)" TEST_PKGS=

stress: stress-deps all
	tests/stress/run.sh

# ---- the Linux Test Project's syscall suite (not part of make test) -------------
#
# make ltp: tests/ltp/run.sh builds LTP's lib/ and testcases/kernel/syscalls
# from ../shared/ltp/ltp-*.tar.gz (or LTP_SRC=DIR) into build/ltp, runs every
# runtest/syscalls entry natively and under `hvrun run` on both backends, each
# in a bubblewrap sandbox of its own, and writes docs/LTP.md; resumable
# (build/ltp-results). A subset: LTP_TESTS=regex or LTP_SAMPLE=N (every Nth).
# Samples run apart go into one report with `tests/ltp/run.sh --report` and
# LTP_REPORT_FROM="DIR..." (the later directory's result wins); `run.sh
# --import DOC DIR` turns a committed docs/LTP.md back into a result directory.

LTP_PKGS := autoconf automake m4 bison flex libtool pkg-config make gcc \
    bubblewrap libaio-dev libacl1-dev libattr1-dev libcap-dev libnuma-dev \
    libkeyutils-dev libssl-dev libtirpc-dev

ltp-deps:
	@$(MAKE) --no-print-directory deps DEPS_PKGS="$(LTP_PKGS)" TEST_PKGS=

ltp: ltp-deps all
	tests/ltp/run.sh

# Every entry that passed under a backend in the last `make ltp`, again
# under `hvrun run --verify` (two runs, compared); the report gains its part.
ltp-verify: ltp-deps all
	MODES="$(if $(wildcard /dev/kvm),kvm-verify )ptrace-verify" tests/ltp/run.sh

# ---- the reference program matrix (not part of make test) -------------------------
#
# make matrix: bench/matrix.sh runs every row of bench/matrix.rows natively and
# under `hvrun run --verify` on both backends (3 times each, and once beside two
# CPU burners) and writes docs/MATRIX.md; resumable (build/matrix/state.tsv).
# MATRIX_ARGS=--quick for one repetition and no loaded runs.

MATRIX_PKGS := lua5.4 php-cli ruby redis-server rustc golang-go nodejs \
               default-jre-headless clang zip unzip sqlite3 bc xxd zstd bzip2 \
               xz-utils openssl curl gawk perl iproute2 procps git g++ \
               qemu-system-x86 cpio binutils
MATRIX_ARGS ?=

matrix-deps:
	@$(MAKE) --no-print-directory deps DEPS_PKGS="$(MATRIX_PKGS)" TEST_PKGS=

matrix: deps all matrix-deps images
	bench/matrix.sh --hvrun $(BUILD)/hvrun $(MATRIX_ARGS)

# ---- boot-experiment images (not part of make test) -----------------------------
#
# images/build.sh: vmlinuz, vmlinux and initramfs.cpio.gz in build/images from
# pinned Debian packages (apt-get download, dpkg -x; see images/README.md). The
# .debs are cached in IMAGES_CACHE (~/.cache/hvrun/images), which make clean keeps.

IMAGES_PKGS := cpio xz-utils binutils qemu-system-x86
IMAGES_DIR := $(BUILD)/images

images-deps:
	@$(MAKE) --no-print-directory deps DEPS_PKGS="$(IMAGES_PKGS)" TEST_PKGS=

# Rebuilt when the script or a file of the image changed, or an output is
# missing or not the one SHA256SUMS lists (the outputs themselves carry the
# fixed SOURCE_DATE_EPOCH mtime, so SHA256SUMS, written last, is the stamp).
# A new package version in apt's lists needs make -B images.
images: $(IMAGES_DIR)/SHA256SUMS
	@(cd $(IMAGES_DIR) && sha256sum --quiet -c SHA256SUMS 2>/dev/null) || \
	    images/build.sh $(IMAGES_DIR)

$(IMAGES_DIR)/SHA256SUMS: images/build.sh images/init images/motd | images-deps
	images/build.sh $(IMAGES_DIR)

images-check: images-deps
	images/check.sh $(BUILD)/images-check

images-boot: images
	IMAGES_DIR=$(IMAGES_DIR) images/boot-native.sh

lint:
	@! grep -rn '#include <linux/kvm.h>' syscall-proxy detcore cli || \
	    { echo "lint: <linux/kvm.h> above vmm/"; exit 1; }
	@python3 tests/lint/include_graph.py --quiet syscall-proxy
	@sh tests/lint/test_include_graph.sh
	@echo lint ok

format:
	clang-format -i */*.c */*.h syscall-proxy/*/*.c syscall-proxy/*/*.h

clean:
	rm -rf build
