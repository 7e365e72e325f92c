# mailsoak build: two programs (the load tester and the reference server) over one
# shared library of event loop, transport and parsing code; cmocka unit tests; shell
# integration tests against real servers; benchmarks.

PREFIX  ?= /usr/local
DESTDIR ?=
CC      ?= cc
BUILD   ?= build

PKGS     := openssl inih jansson libcurl sqlite3 libmicrohttpd
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

.PHONY: all check unit integration asan bench demo install clean
# Keep intermediate objects: make would otherwise delete them after the run and
# print that after the test summary, which must be the last line.
.SECONDARY:
all: $(BINS)

$(BUILD)/%.o: %.c $(SETTINGS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<

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

# The one test command (README and CI): unit tests, then integration tests against
# real Postfix + Dovecot and the reference server; ends with "N passed, N failed".
check: $(BINS) $(UNITS)
	BUILD=$(BUILD) tests/run $(UNITS) $(sort $(wildcard tests/integration/t_*.sh))

unit: $(UNITS)
	BUILD=$(BUILD) tests/run $(UNITS)

integration: $(BINS)
	BUILD=$(BUILD) tests/run $(sort $(wildcard tests/integration/t_*.sh))

asan:
	$(MAKE) BUILD=build-asan CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
	        LDFLAGS="-fsanitize=address,undefined" check

bench: $(BINS) $(BENCHES)
	BUILD=$(BUILD) scripts/bench

demo:            # scripts/demo installs what is missing, then builds
	scripts/demo

install: $(BINS)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/mailsoak/conf $(DESTDIR)$(PREFIX)/share/mailsoak/scripts
	install -m 755 $(BINS) $(DESTDIR)$(PREFIX)/bin/
	install -m 644 conf/*.conf $(DESTDIR)$(PREFIX)/share/mailsoak/conf/
	install -m 755 scripts/testbed $(DESTDIR)$(PREFIX)/share/mailsoak/scripts/

clean:
	rm -rf build build-asan

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
