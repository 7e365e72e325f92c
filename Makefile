# mailsoak build: two programs (the load tester and the reference server) over one
# shared library of event loop, transport and parsing code; cmocka unit tests; shell
# integration tests against real servers; benchmarks.

PREFIX  ?= /usr/local
DESTDIR ?=
CC      ?= cc
BUILD   ?= build

PKGS     := openssl inih jansson libcurl sqlite3 libmicrohttpd libpq libmariadb
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           -Wpointer-arith -Wformat=2 -Wvla -Wno-unused-parameter
CFLAGS  ?= -O2 -g
ALL_CFLAGS := -std=gnu11 -D_GNU_SOURCE $(WARN) $(CFLAGS) -Iinclude $(PKG_CFLAGS) -MMD -MP
LDLIBS  := $(PKG_LIBS) -lpthread -lm

# A settings stamp, so changing flags (make asan) rebuilds everything in that tree.
SETTINGS := $(BUILD)/.settings
$(shell mkdir -p $(BUILD) && echo '$(CC) $(ALL_CFLAGS) $(LDFLAGS)' | cmp -s - $(SETTINGS) || echo '$(CC) $(ALL_CFLAGS) $(LDFLAGS)' > $(SETTINGS))

# The version: git's description of this checkout (the last tag or the commit, and
# "-dirty" with uncommitted changes); without git (a source tarball, a package built
# from one), debian/changelog's. `make VERSION=...` overrides both. It is compiled
# into version.o alone, so a new commit relinks rather than rebuilds.
ifneq ($(origin VERSION),command line)
VERSION := $(or $(shell test -e .git && git describe --always --dirty 2>/dev/null),$(shell sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' debian/changelog 2>/dev/null),unknown)
endif
VERSION_STAMP := $(BUILD)/.version
$(shell echo '$(VERSION)' | cmp -s - $(VERSION_STAMP) || echo '$(VERSION)' > $(VERSION_STAMP))

LIB_SRC    := $(wildcard src/lib/*.c)
CLIENT_SRC := $(wildcard src/mailsoak/*/*.c)
SERVER_SRC := $(filter-out src/server/main.c,$(wildcard src/server/*.c src/server/store/*.c))
UNIT_SRC   := $(wildcard tests/unit/test_*.c)
BENCH_SRC  := $(wildcard bench/*.c)

obj = $(patsubst %.c,$(BUILD)/%.o,$(1))
Q := $(if $(V),,@)

LIB_A    := $(BUILD)/libmscommon.a
CLIENT_A := $(BUILD)/libmsclient.a
SERVER_A := $(BUILD)/libmsserver.a
BINS     := $(BUILD)/mailsoak $(BUILD)/mailsoak-server
UNITS    := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRC))
BENCHES  := $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRC))
FUZZERS  := $(patsubst fuzz/%.c,$(BUILD)/fuzz/%,$(wildcard fuzz/fuzz_*.c))
FUZZ_SECONDS ?= 60

.PHONY: replay all check unit integration asan tsan tsan-run fuzz fuzz-run bench mutate soak-long demo install clean docs uninstall deb
# Keep intermediate objects: make would otherwise delete them after the run and
# print that after the test summary, which must be the last line.
.SECONDARY:
all: $(BINS)

$(BUILD)/%.o: %.c $(SETTINGS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<
$(BUILD)/src/lib/version.o: $(VERSION_STAMP)
$(BUILD)/src/lib/version.o: ALL_CFLAGS += -DMAILSOAK_VERSION='"$(VERSION)"'

# Archives are made afresh, and again whenever the list of sources changes: `ar r`
# only adds members, so a source that moved to another folder would otherwise stay
# behind as a duplicate definition.
SOURCES := $(BUILD)/.sources
$(shell echo '$(LIB_SRC) $(CLIENT_SRC) $(SERVER_SRC)' | cmp -s - $(SOURCES) || echo '$(LIB_SRC) $(CLIENT_SRC) $(SERVER_SRC)' > $(SOURCES))
$(LIB_A): $(call obj,$(LIB_SRC)) $(SOURCES)
	$(Q)rm -f $@ && $(AR) rcs $@ $(filter %.o,$^)
$(CLIENT_A): $(call obj,$(CLIENT_SRC)) $(SOURCES)
	$(Q)rm -f $@ && $(AR) rcs $@ $(filter %.o,$^)
$(SERVER_A): $(call obj,$(SERVER_SRC)) $(SOURCES)
	$(Q)rm -f $@ && $(AR) rcs $@ $(filter %.o,$^)

$(BUILD)/mailsoak: $(BUILD)/src/mailsoak/main.o $(CLIENT_A) $(LIB_A)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
$(BUILD)/mailsoak-server: $(BUILD)/src/server/main.o $(SERVER_A) $(LIB_A)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/%: $(BUILD)/tests/unit/%.o $(CLIENT_A) $(SERVER_A) $(LIB_A)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lcmocka
$(BUILD)/bench/%: $(BUILD)/bench/%.o $(CLIENT_A) $(LIB_A)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
$(BUILD)/fuzz/%: $(BUILD)/fuzz/%.o $(CLIENT_A) $(SERVER_A) $(LIB_A)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(LDFLAGS) -fsanitize=fuzzer -o $@ $^ $(LDLIBS)

# The one test command (README and CI): unit tests, then integration tests against
# real Postfix + Dovecot and the reference server; ends with "N passed, N failed".
# The longest first, so that with TEST_JOBS > 1 the others fill in beside them
# (t_package's dpkg-buildpackage alone took 314 s at a load of 20).
SLOW := $(addprefix tests/integration/,t_package.sh t_ledger_backlog.sh t_testbed_sql.sh t_compare_sql.sh t_capacity.sh t_hostile.sh)
INTEGRATION := $(SLOW) $(filter-out $(SLOW),$(sort $(wildcard tests/integration/t_*.sh)))
check: $(BINS) $(UNITS)
	BUILD=$(BUILD) tests/run $(UNITS) $(INTEGRATION)

unit: $(UNITS)
	BUILD=$(BUILD) tests/run $(UNITS)

integration: $(BINS)
	BUILD=$(BUILD) tests/run $(INTEGRATION)

# make check under ASan + UBSan, but for the tests that run no program of the build
# tree: scripts (t_commits, t_deps, t_layers, t_mutate, t_runner, t_testbed, t_testbed_sql, t_tree) and the
# .deb (t_package: what its installed programs run is the demo of t_run_cli.sh, which
# does run here). Under the sanitizers they would only repeat make check.
UNSANITIZED := t_commits.sh t_deps.sh t_layers.sh t_mutate.sh t_package.sh t_runner.sh t_scripts_help.sh t_testbed.sh t_testbed_sql.sh t_tree.sh
# Nor the testbed's tests whose code under the sanitizers others already run: their
# time is Postfix's, Dovecot's and their own waits (about 370 s of CI's). What runs
# only against the testbed stays: Postfix's queue (t_queue_testbed), Dovecot's stores
# (t_collector_stores), the databases' counters (t_db_*), the trails from real logs
# (t_trail_testbed), the probe across a link (t_probe_netns), TLS with SASL
# (t_tls_auth_testbed), MIME and corpus replay (t_content_testbed) and the fill
# (t_fill_testbed). The engine, the ledger, the verdict and the reports run under
# them against the reference server, whose faults reach more of their paths.
REPEATS := t_compare_sql.sh t_duplicates_testbed.sh t_ladder_testbed.sh \
	t_ledger_backlog.sh t_office_profile.sh t_queue_rcpts_testbed.sh t_readme.sh t_soak_testbed.sh t_workload_testbed.sh
# Nor the long soaks of the reference server whose paths shorter tests cover there:
# the steps' search (its orchestration runs in t_capacity_stair, its decisions in
# test_capacity), the staircase judged on the server's queue (its series in
# test_stair and test_stage_end, the spool directory in t_server_rate), kept up at 80
# and 140 % of a ceiling (test_keptup, every run's verdict) and the spike's recovery
# (test_recovery, the staircase's stages). They are about a fifth of the phase's
# time, which doubles at the load CI budgets for.
REPEATS += t_capacity.sh t_capacity_queue.sh t_keptup.sh t_recovery.sh
asan:
	$(MAKE) BUILD=build-asan CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
	        LDFLAGS="-fsanitize=address,undefined" \
	        INTEGRATION="$(filter-out $(addprefix tests/integration/,$(UNSANITIZED) $(REPEATS)),$(INTEGRATION))" check

# ThreadSanitizer, in a tree of its own, over the tests that run threads: the ledger
# appended to and marked from several threads, the collector's thread, and a soak
# with several workers, the collector and the metrics server (t_threads.sh), the ledger
# compacted by the controller while a worker reads (t_ledger_compact.sh), a probe
# pulled by its own thread while the run asks it for fresh walks (t_probe.sh).
TSAN_TESTS := $(BUILD)/tests/test_ledger $(BUILD)/tests/test_procset $(BUILD)/tests/test_collector tests/integration/t_threads.sh \
              tests/integration/t_ledger_compact.sh \
              tests/integration/t_probe.sh
tsan:
	$(MAKE) BUILD=build-tsan CFLAGS="-O1 -g -fsanitize=thread" LDFLAGS="-fsanitize=thread" tsan-run
tsan-run: $(BINS) $(UNITS)
	BUILD=$(BUILD) tests/run $(TSAN_TESTS)

# libFuzzer (clang) with ASan and UBSan, in a tree of its own: each target of fuzz/
# runs FUZZ_SECONDS from its checked-in seeds (scripts/fuzz), e.g. make fuzz FUZZ_SECONDS=15.
fuzz:
	$(MAKE) BUILD=build-fuzz CC=clang \
	        CFLAGS="-O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
	        LDFLAGS="-fsanitize=address,undefined" fuzz-run
fuzz-run: $(FUZZERS)
	BUILD=$(BUILD) FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/fuzz $(FUZZERS)

# The replay of the kept-up statistics on the recorded runs, its tables printed.
replay: $(BUILD)/tests/test_drift
	TOP=$(CURDIR) $(BUILD)/tests/test_drift

bench: $(BINS) $(BENCHES)
	BUILD=$(BUILD) scripts/bench

# Mutation testing: each plausible bug of tests/mutations.txt applied alone to a scratch
# copy of the tree, the tests that cover it run; every one must be killed.
mutate: $(BINS)
	scripts/mutate

# A benchmark, not a test: an hour's soak against the reference server, the tester's
# RSS, descriptors and memory per message sampled (docs/performance.md).
soak-long: $(BINS)
	BUILD=$(BUILD) scripts/soak-long

demo:            # scripts/demo installs what is missing, then builds
	scripts/demo

# The manuals and the bash completion: scripts/gen-doc fills the templates of doc/
# with what the programs print of their command and settings tables (`mailsoak doc
# ...`, `mailsoak-server --doc ...`), so they follow every command and key.
DOCS := $(patsubst doc/%.in,$(BUILD)/doc/%,$(wildcard doc/*.in))
DOC_SETTINGS := $(BUILD)/.doc-settings
$(shell mkdir -p $(BUILD) && echo '$(PREFIX) $(VERSION)' | cmp -s - $(DOC_SETTINGS) || echo '$(PREFIX) $(VERSION)' > $(DOC_SETTINGS))

# make builds them too, so `man -l build/doc/mailsoak.1` and `source
# build/doc/completion.bash` work from the tree (mailsoak --help points there).
all: $(DOCS)
docs: $(DOCS)
$(BUILD)/doc/%: doc/%.in scripts/gen-doc $(BINS) $(DOC_SETTINGS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  GEN     $@")
	$(Q)BUILD=$(BUILD) VERSION='$(VERSION)' PREFIX='$(PREFIX)' scripts/gen-doc $< >$@.tmp && mv $@.tmp $@

# Where make install puts each file, as MODE:SOURCE:DESTINATION (Debian's layout
# under PREFIX); uninstall removes exactly these, then the directories that are
# mailsoak's alone once empty. The reference server's files are apart (a package
# of its own in debian/).
DATADIR     := $(PREFIX)/share
COMPLETIONS := $(DATADIR)/bash-completion/completions
CLIENT_CONF := $(filter-out conf/server-faults.conf,$(wildcard conf/*.conf))
INSTALLS := \
    755:$(BUILD)/mailsoak:$(PREFIX)/bin/mailsoak \
    644:$(BUILD)/doc/mailsoak.1:$(DATADIR)/man/man1/mailsoak.1 \
    644:$(BUILD)/doc/mailsoak.conf.5:$(DATADIR)/man/man5/mailsoak.conf.5 \
    644:$(BUILD)/doc/completion.bash:$(COMPLETIONS)/mailsoak \
    $(foreach f,$(CLIENT_CONF),644:$(f):$(DATADIR)/doc/mailsoak/examples/$(notdir $(f))) \
    755:scripts/testbed:$(DATADIR)/mailsoak/scripts/testbed \
    644:scripts/testbed-files:$(DATADIR)/mailsoak/scripts/testbed-files \
    644:scripts/testbed-sql:$(DATADIR)/mailsoak/scripts/testbed-sql \
    755:$(BUILD)/mailsoak-server:$(PREFIX)/bin/mailsoak-server \
    644:$(BUILD)/doc/mailsoak-server.8:$(DATADIR)/man/man8/mailsoak-server.8 \
    644:$(BUILD)/doc/completion.bash:$(COMPLETIONS)/mailsoak-server \
    644:conf/server-faults.conf:$(DATADIR)/doc/mailsoak-server/examples/server-faults.conf
OWN_DIRS := $(DATADIR)/doc/mailsoak/examples $(DATADIR)/doc/mailsoak \
            $(DATADIR)/doc/mailsoak-server/examples $(DATADIR)/doc/mailsoak-server \
            $(DATADIR)/mailsoak/scripts $(DATADIR)/mailsoak

install: $(BINS) $(DOCS)
	$(Q)for e in $(INSTALLS); do \
	    mode=$${e%%:*}; rest=$${e#*:}; \
	    install -D -m $$mode "$${rest%%:*}" "$(DESTDIR)$${rest#*:}" || exit 1; \
	done

uninstall:
	$(Q)for e in $(INSTALLS); do rest=$${e#*:}; rm -f "$(DESTDIR)$${rest#*:}"; done
	$(Q)for d in $(OWN_DIRS); do [ ! -d "$(DESTDIR)$$d" ] || rmdir "$(DESTDIR)$$d"; done

# The Debian packages (debian/), built in a scratch copy of the tree so that
# dpkg-buildpackage leaves nothing beside it; the .debs land in $(BUILD)/deb.
deb:
	scripts/build-deb $(BUILD)/deb

clean:
	rm -rf build build-asan build-tsan build-fuzz

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
