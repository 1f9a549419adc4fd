# callprof - top-level GNU Makefile.
#
#   make            build the tool, the runtime (.so and .a) into build/
#   make demo       install missing Debian build deps (as root), build, profile examples/demo.c
#   make check      install missing deps (as root), unit tests, layering check
#                   (tools/check-layering), end-to-end tests, smoke benchmark;
#                   ends with "N passed, N failed"
#   make bench      hook cost vs floor and peers, sampling's cost, truth vs perf, a server's
#                   calls per second before, during and after attach, hooks and sleds builds
#                   (long; not part of check)
#   make fuzz       the libFuzzer targets of tests/fuzz (clang), FUZZ_TIME seconds each
#                   (default 3600), built into build-fuzz/; check runs them a few seconds
#   make install PREFIX=/usr/local
#
# Switches: CC=clang, SANITIZE=address,undefined or SANITIZE=thread (builds into
# build-<san>/; `make check SANITIZE=...` runs that suite, see
# docs/internals/testing.md), WERROR=1 (on by default when CI=true).
# Without SANITIZE, `make check` also runs a reduced ASan/UBSan pass after
# the plain suite (CHECK_SANITIZE names it; CHECK_SANITIZE= turns it off).

PREFIX ?= /usr/local
BINDIR = $(PREFIX)/bin
LIBDIR = $(PREFIX)/lib
INCDIR = $(PREFIX)/include
MANDIR = $(PREFIX)/share/man

CC ?= cc
ifeq ($(origin CC),default)
CC = gcc
endif

comma := ,
ifdef SANITIZE
B ?= build-$(subst $(comma),-,$(SANITIZE))
san_list = $(subst $(comma), ,$(SANITIZE))
# UBSan findings fail (exit or trap) rather than print and go on.
SANFLAGS = $(strip $(call san_flags,$(SANITIZE)))
# The runtime is preloaded into programs that may not be sanitized at all
# (shells, static programs, uninstrumented ones), so it takes no sanitizer
# runtime library along: UBSan's checks trap (SIGILL, no libubsan), ASan
# stays out.  Only TSan instruments it fully: TSan sees no race in code it
# did not instrument, and its suite runs programs built with -fsanitize=thread
# only (docs/internals/testing.md).
RT_SANFLAGS = $(if $(filter thread,$(san_list)),-fsanitize=thread,\
	$(if $(filter undefined,$(san_list)),-fsanitize=undefined -fsanitize-undefined-trap-on-error))
else
B ?= build
endif

PKG_CONFIG ?= pkg-config
DEB_DEPS = gcc g++ clang make pkg-config libdw-dev libelf-dev zlib1g-dev libyajl-dev \
	libprotobuf-c-dev protobuf-c-compiler libncurses-dev go-md2man

# CI (which sets CI=true) treats warnings as errors, like git's DEVELOPER=1.
ifeq ($(CI),true)
WERROR ?= 1
endif
WARN = -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -Wshadow -Wstrict-prototypes -Wmissing-prototypes
ifdef WERROR
WARN += -Werror
endif
BASE_CFLAGS = -std=gnu11 -g -O2 $(WARN) -I. -D_GNU_SOURCE -include util/banned.h
CFLAGS ?=

# The runtime goes into the profiled process: no instrumentation of itself,
# hidden symbols, only libc.  Sanitizers: RT_SANFLAGS above.
RT_CFLAGS = $(BASE_CFLAGS) -fPIC -fvisibility=hidden \
	-fno-stack-protector -fno-omit-frame-pointer -ftls-model=initial-exec $(RT_SANFLAGS) $(CFLAGS)
TOOL_CFLAGS = $(BASE_CFLAGS) $(SANFLAGS) $(CFLAGS)

DW_CFLAGS = $(shell $(PKG_CONFIG) --cflags libdw 2>/dev/null)
DW_LIBS = $(shell $(PKG_CONFIG) --libs libdw 2>/dev/null)
# The exporters' libraries (Debian: libyajl-dev, libprotobuf-c-dev and
# protobuf-c-compiler, zlib1g-dev).
EXPORT_LIBS = -lyajl -lprotobuf-c -lz
# The terminal browser (callprof tui; Debian: libncurses-dev).
CURSES_LIBS = $(shell $(PKG_CONFIG) --libs ncursesw 2>/dev/null)
PROTOC_C ?= protoc-c

# The runtime is built once per recording mode; only hooks.c differs.
RT_SRCS = runtime/api.c runtime/attach.c runtime/arena.c runtime/env.c runtime/cct.c runtime/control.c runtime/filter.c runtime/offcpu.c runtime/thread.c runtime/session.c runtime/clock.c runtime/calibrate.c \
	runtime/flush.c runtime/modules.c runtime/cbpf.c runtime/sleds.c format/writer.c format/crc32.c format/job.c
# The sleds' entry trampoline and return stubs' common tail (sleds.c).
RT_ASM = runtime/sleds-tramp.S
RT_MODES = timing counting coverage cpu
RT_MODE_cpu = 4
RT_MODE_timing = 0
RT_MODE_counting = 1
RT_MODE_coverage = 2
# libcallprof.so is timing; the others are libcallprof-MODE.so/.a.
rt_name = libcallprof$(if $(filter timing,$(1)),,-$(1))
RT_LIBS = $(foreach m,$(RT_MODES),$(B)/$(call rt_name,$(m)).so $(B)/$(call rt_name,$(m)).a)
FORMAT_SRCS = format/reader.c format/crc32.c format/writer.c format/job.c
UTIL_SRCS = util/util.c util/strbuf.c util/text.c util/x86.c
# symbolize/ is the tool's one home for elfutils (tools/check-layering):
# the symbolizer, ELF file facts, the sampler's unwinder, the demangler.
SYM_SRCS = symbolize/symbolize.c symbolize/elffile.c symbolize/unwind.c symbolize/demangle.c
# The sampler (record --sample); ELF and unwinding through symbolize/.
SAMPLE_SRCS = sample/session.c sample/ring.c sample/tree.c
REPORT_SRCS = report/profile.c report/metric.c report/merge.c report/tree.c report/flat.c report/folded.c report/output.c \
	report/json.c report/json-export.c report/callgrind.c report/speedscope.c report/pprof.c \
	report/svg.c report/plist.c report/html.c report/merge-file.c report/diff.c report/imbalance.c \
	report/lines.c report/filter.c report/names.c report/verdict.c report/tui.c
# The HTML report's page, CSS and script, built in by report/html/assets.S.
HTML_ASSETS = report/html/page.html report/html/report.css report/html/report.js
CLI_SRCS = cli/callprof.c cli/cmd-record.c cli/select.c cli/cmd-report.c cli/cmd-export.c cli/cmd-merge.c \
	cli/cmd-diff.c cli/cmd-dump.c cli/cmd-cc.c cli/cmd-attach.c engine/attach-check.c engine/attach-ptrace.c cli/options.c cli/filter-options.c \
	cli/cmd-tui.c
# The terminal browser (callprof tui): in the tool only, which links $(CURSES_LIBS).
TUI_SRCS = tui/browser.c

RT_OBJS = $(RT_SRCS:%.c=$(B)/rt/%.o) $(RT_ASM:%.S=$(B)/rt/%.o)
hooks_obj = $(B)/rt/runtime/hooks-$(1).o
# Only a preloaded runtime can interpose libc (longjmp, exec, signals, contexts); the archives get a stub.
RT_SO_OBJS = $(B)/rt/runtime/creds.o $(B)/rt/runtime/guard.o $(B)/rt/runtime/interpose.o $(B)/rt/runtime/seccomp.o $(B)/rt/runtime/signals.o $(B)/rt/runtime/contexts.o \
	$(B)/rt/runtime/watch.o $(B)/rt/runtime/libcalls.o
RT_A_OBJS = $(B)/rt/runtime/interpose-none.o
# runtime/cbpf.c judges seccomp filters in both: the runtime's and attach's.
TOOL_LIB_OBJS = $(patsubst %.c,$(B)/tool/%.o,$(sort $(FORMAT_SRCS) $(UTIL_SRCS) $(SYM_SRCS) $(SAMPLE_SRCS) $(REPORT_SRCS) runtime/cbpf.c)) \
	$(B)/tool/gen/profile.pb-c.o $(B)/tool/report/html/assets.o
CLI_OBJS = $(patsubst %.c,$(B)/tool/%.o,$(CLI_SRCS) $(TUI_SRCS))

# The man pages, made from docs/*.1.md by go-md2man (Debian: go-md2man) at
# build time, so that `make install` always installs working ones.  The
# pages' pandoc title line ("% NAME(1) source | manual") becomes the
# fields of .TH that go-md2man passes through.
MAN_PAGES = $(patsubst docs/%.1.md,$(B)/man/%.1,$(wildcard docs/*.1.md))
MD2MAN ?= go-md2man

all: $(B)/callprof $(RT_LIBS) $(MAN_PAGES)

$(B)/man/%.1: docs/%.1.md | check-deps
	@mkdir -p $(@D)
	sed '1s/^% \(.*\)(\([0-9]\)) \(.*\) | \(.*\)$$/% \1 \2 "" "\3" "\4"/' $< | $(MD2MAN) -out $@.tmp
	@mv $@.tmp $@

check-deps:
	@$(PKG_CONFIG) --exists libdw yajl libprotobuf-c zlib ncursesw && command -v $(PROTOC_C) >/dev/null && \
	  command -v $(MD2MAN) >/dev/null || { \
	  echo "callprof: libdw (elfutils), yajl, protobuf-c, zlib or ncursesw development files, protoc-c or go-md2man, not found."; \
	  echo "  install them with: apt-get install -y $(DEB_DEPS)"; exit 1; }

$(B)/rt/%.o: %.c runtime/internal.h runtime/cct.h format/format.h include/callprof.h
	@mkdir -p $(dir $@)
	$(CC) $(RT_CFLAGS) -c $< -o $@

$(B)/rt/%.o: %.S
	@mkdir -p $(dir $@)
	$(CC) -c $< -o $@

# pprof's profile.proto, compiled by protoc-c into the build directory.
$(B)/gen/profile.pb-c.c $(B)/gen/profile.pb-c.h: proto/profile.proto | check-deps
	@mkdir -p $(B)/gen
	$(PROTOC_C) --c_out=$(B)/gen --proto_path=proto proto/profile.proto

$(B)/tool/gen/profile.pb-c.o: $(B)/gen/profile.pb-c.c
	@mkdir -p $(dir $@)
	$(CC) $(TOOL_CFLAGS) -Wno-missing-prototypes -I$(B)/gen -c $< -o $@

$(B)/tool/report/pprof.o: report/pprof.c $(B)/gen/profile.pb-c.h | check-deps
	@mkdir -p $(dir $@)
	$(CC) $(TOOL_CFLAGS) -I$(B)/gen -MMD -MP -c $< -o $@

# .incbin paths are relative to the top of the tree, where make runs; -MMD
# would not list them, hence the explicit prerequisites.
$(B)/tool/report/html/assets.o: report/html/assets.S $(HTML_ASSETS)
	@mkdir -p $(dir $@)
	$(CC) -c $< -o $@

$(B)/tool/symbolize/%.o: symbolize/%.c | check-deps
	@mkdir -p $(dir $@)
	$(CC) $(TOOL_CFLAGS) $(DW_CFLAGS) -MMD -MP -c $< -o $@

$(B)/tool/%.o: %.c | check-deps
	@mkdir -p $(dir $@)
	$(CC) $(TOOL_CFLAGS) -MMD -MP -c $< -o $@

# -mgeneral-regs-only: the sled trampolines' fast paths in hooks.c keep every
# register but rax and save none of the vector ones (cp_sled__enter_fast).
$(B)/rt/runtime/hooks-%.o: runtime/hooks.c runtime/internal.h runtime/cct.h format/format.h
	@mkdir -p $(dir $@)
	$(CC) $(RT_CFLAGS) -mgeneral-regs-only -DCP_HOOK_MODE=$(RT_MODE_$*) -c $< -o $@

define rt_rules
$(B)/$(call rt_name,$(1)).so: $(RT_OBJS) $(RT_SO_OBJS) $(call hooks_obj,$(1)) runtime/libcallprof.map
	$$(CC) -shared $(RT_SANFLAGS) -Wl,--version-script=runtime/libcallprof.map -Wl,-z,nodelete \
		-o $$@ $(RT_OBJS) $(RT_SO_OBJS) $(call hooks_obj,$(1)) -lpthread -ldl

$(B)/$(call rt_name,$(1)).a: $(RT_OBJS) $(RT_A_OBJS) $(call hooks_obj,$(1))
	@rm -f $$@
	ar rcs $$@ $(RT_OBJS) $(RT_A_OBJS) $(call hooks_obj,$(1))
endef
$(foreach m,$(RT_MODES),$(eval $(call rt_rules,$(m))))

$(B)/libcptool.a: $(TOOL_LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(B)/callprof: $(CLI_OBJS) $(B)/libcptool.a | check-deps
	$(CC) $(TOOL_CFLAGS) -o $@ $(CLI_OBJS) $(B)/libcptool.a $(DW_LIBS) $(EXPORT_LIBS) $(CURSES_LIBS) -lstdc++ -lm

-include $(wildcard $(B)/tool/*/*.d)

# ---- tests ----
UNIT_TESTS = $(patsubst tests/unit/%.c,$(B)/tests/%,$(filter-out tests/unit/unittest.c,$(wildcard tests/unit/test-*.c)))

$(B)/tests/test-%: tests/unit/test-%.c tests/unit/unittest.c tests/unit/unittest.h tests/unit/rtree.h tests/unit/profiles.h $(B)/libcptool.a
	@mkdir -p $(dir $@)
	$(CC) $(TOOL_CFLAGS) -o $@ $< tests/unit/unittest.c $(B)/libcptool.a $(DW_LIBS) $(EXPORT_LIBS) -lstdc++ -lm

# The runtime's tree core, compiled in with its publication points open to the test (cct.h).
$(B)/tests/test-cct: tests/unit/test-cct.c runtime/cct.c runtime/cct.h tests/unit/unittest.c tests/unit/unittest.h
	@mkdir -p $(dir $@)
	$(CC) $(TOOL_CFLAGS) -DCP_CCT_TEST -o $@ $< runtime/cct.c tests/unit/unittest.c

# Hand-made profiles for the end-to-end tests (off-CPU time, sampling).
$(B)/tests/mkprofile: tests/mkprofile.c $(B)/libcptool.a
	@mkdir -p $(dir $@)
	$(CC) $(TOOL_CFLAGS) -o $@ $< $(B)/libcptool.a

# ---- fuzzing: tests/fuzz, docs/internals/fuzzing.md ----
FUZZ_TARGETS = reader report export
FUZZ_B ?= build-fuzz
FUZZ_CC ?= clang
FUZZ_TIME ?= 3600
FUZZ_SANFLAGS = -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined \
	-fno-omit-frame-pointer
FUZZ_COMMON = tests/fuzz/fuzz.c tests/fuzz/fuzz.h

# Each target with a main() that replays files, by any compiler: make check
# replays tests/fuzz/seeds and tests/fuzz/regress with these.
$(B)/tests/fuzz-%-replay: tests/fuzz/fuzz-%.c tests/fuzz/replay.c $(FUZZ_COMMON) $(B)/libcptool.a
	@mkdir -p $(dir $@)
	$(CC) $(TOOL_CFLAGS) -o $@ $< tests/fuzz/fuzz.c tests/fuzz/replay.c $(B)/libcptool.a \
		$(DW_LIBS) $(EXPORT_LIBS) -lstdc++ -lm

# The libFuzzer binaries: only made by fuzz-build's own make, with B=$(FUZZ_B).
$(B)/fuzz/fuzz-%: tests/fuzz/fuzz-%.c $(FUZZ_COMMON) $(B)/libcptool.a
	@mkdir -p $(dir $@)
	$(CC) $(TOOL_CFLAGS) -fsanitize=fuzzer -o $@ $< tests/fuzz/fuzz.c $(B)/libcptool.a \
		$(DW_LIBS) $(EXPORT_LIBS) -lstdc++ -lm

fuzz-targets: $(FUZZ_TARGETS:%=$(B)/fuzz/fuzz-%)

# The whole tool library again, by clang with libFuzzer's coverage and the
# sanitizers, into $(FUZZ_B); says so and does nothing without libFuzzer.
fuzz-build:
	@mkdir -p $(FUZZ_B)
	@printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }\n' \
		>$(FUZZ_B)/probe.c
	@if $(FUZZ_CC) -fsanitize=fuzzer -o $(FUZZ_B)/probe $(FUZZ_B)/probe.c >/dev/null 2>&1; then \
	  $(MAKE) --no-print-directory B=$(FUZZ_B) CC=$(FUZZ_CC) SANFLAGS="$(FUZZ_SANFLAGS)" \
		fuzz-targets; \
	else \
	  echo "fuzz: $(FUZZ_CC) cannot link -fsanitize=fuzzer (apt-get install clang libclang-rt-14-dev): no fuzz targets built"; \
	fi

fuzz: fuzz-build
	@tests/fuzz/run -b $(FUZZ_B) -t $(FUZZ_TIME) $(FUZZ_TARGETS)

tests: all $(UNIT_TESTS) $(B)/tests/mkprofile $(FUZZ_TARGETS:%=$(B)/tests/fuzz-%-replay)

# Installs missing Debian packages first (as root; otherwise says what to
# install), so a fresh machine needs nothing but this command.
deps:
	@./tools/install-deps

# The sanitized pass of a plain `make check`: its build directory and the
# flags its workloads are compiled with (the same as SANITIZE=$(CHECK_SANITIZE)).
CHECK_SANITIZE ?= address,undefined
ifeq ($(SANITIZE),)
ifneq ($(CHECK_SANITIZE),)
CHECK_SAN_B = build-$(subst $(comma),-,$(CHECK_SANITIZE))
endif
endif
# The TSan runtime is the compiler's own (gcc: libtsan.so, clang: linked into
# the program): the workloads must come from the compiler the runtime was
# built with, so SANITIZE=thread runs the e2e columns of $(CC) only.
tsan_columns = $(notdir $(CC)):-O0 $(notdir $(CC)):-O2
san_flags = -fsanitize=$(1) -fno-omit-frame-pointer \
	$(if $(filter undefined,$(subst $(comma), ,$(1))),-fno-sanitize-recover=undefined)

check:
	@./tools/install-deps --tests
	@$(MAKE) --no-print-directory tests
ifdef CHECK_SAN_B
	@$(MAKE) --no-print-directory tests SANITIZE=$(CHECK_SANITIZE)
endif
	@$(MAKE) --no-print-directory fuzz-build
	@CALLPROF_BUILD=$(CURDIR)/$(B) CALLPROF_FUZZ_BUILD=$(CURDIR)/$(FUZZ_B) \
		CP_SANITIZE=$(SANITIZE) CP_TEST_CFLAGS='$(SANFLAGS)' \
		$(if $(filter thread,$(san_list)),CP_E2E_COLUMNS='$(tsan_columns)') \
		$(if $(CHECK_SAN_B),CP_SAN_BUILD=$(CURDIR)/$(CHECK_SAN_B) CP_SAN_SANITIZE=$(CHECK_SANITIZE) \
		CP_SAN_CFLAGS='$(strip $(call san_flags,$(CHECK_SANITIZE)))') tests/run-all

# The edit loop: unit tests and one e2e column (gcc -O2), a few minutes.
test:
	@./tools/install-deps --tests
	@$(MAKE) --no-print-directory tests
	@CALLPROF_BUILD=$(CURDIR)/$(B) tests/run-all --quick

bench: all $(B)/tests/mkprofile
	@CALLPROF_BUILD=$(CURDIR)/$(B) bench/run --write-doc
	@CALLPROF_BUILD=$(CURDIR)/$(B) bench/symbols
	@CALLPROF_BUILD=$(CURDIR)/$(B) bench/merge
	@CALLPROF_BUILD=$(CURDIR)/$(B) bench/merge-ranks --write-doc
	@CALLPROF_BUILD=$(CURDIR)/$(B) bench/many-files --write-doc
	@CALLPROF_BUILD=$(CURDIR)/$(B) bench/sample --write-doc
	@CALLPROF_BUILD=$(CURDIR)/$(B) bench/attach --write-doc
	@CALLPROF_BUILD=$(CURDIR)/$(B) KIND=sleds bench/attach --write-doc
	@CALLPROF_BUILD=$(CURDIR)/$(B) bench/tui --write-doc
	@CALLPROF_BUILD=$(CURDIR)/$(B) bench/truth

# ---- demo: a fresh Debian machine to a call tree in one command ----
demo: deps
	@$(MAKE) --no-print-directory all
	@mkdir -p $(B)/demo
	CALLPROF_CC="$(CC)" $(B)/callprof cc -O1 -o $(B)/demo/demo examples/demo.c -lpthread
	$(B)/callprof record -o $(B)/demo/demo.cprof -- $(B)/demo/demo
	$(B)/callprof report $(B)/demo/demo.cprof

# ---- install ----
install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/callprof $(DESTDIR)$(INCDIR) \
		$(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(MANDIR)/man1
	install -m 755 $(B)/callprof $(DESTDIR)$(BINDIR)/callprof
	for m in $(RT_MODES); do \
	  n=libcallprof$$( [ $$m = timing ] || echo -$$m ); \
	  install -m 755 $(B)/$$n.so $(DESTDIR)$(LIBDIR)/callprof/$$n.so; \
	  install -m 644 $(B)/$$n.a $(DESTDIR)$(LIBDIR)/callprof/$$n.a; \
	done
	install -m 644 include/callprof.h $(DESTDIR)$(INCDIR)/callprof.h
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' callprof.pc.in \
		> $(DESTDIR)$(LIBDIR)/pkgconfig/callprof.pc
	install -m 644 $(MAN_PAGES) $(DESTDIR)$(MANDIR)/man1/

clean:
	rm -rf build build-*

.PHONY: all deps check-deps tests test check bench fuzz fuzz-build fuzz-targets demo install clean
