# nastune - build, test, run. See README.md.
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR ?= $(PREFIX)/sbin
DATADIR ?= $(PREFIX)/share/nastune
MANDIR ?= $(PREFIX)/share/man
SYSCONFDIR ?= /etc
VERSION := $(shell cat VERSION 2>/dev/null || echo 0.0.0)

CC ?= cc
PKGS := libconfig libnl-route-3.0 avahi-client smbclient libnfs sqlite3 jansson libcrypto
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 \
	-Wno-format-nonliteral
CFLAGS ?= -O2 -g
ALL_CFLAGS = $(CFLAGS) -std=gnu11 -D_GNU_SOURCE $(WARN) -Iinclude $(PKG_CFLAGS) -MMD -MP \
	-DNASTUNE_VERSION='"$(VERSION)"' -DNASTUNE_DATADIR='"$(DATADIR)"'
LDLIBS += $(PKG_LIBS) -lm

B ?= build
ifeq ($(V),1)
Q :=
else
Q := @
endif

LIB_SRC := $(filter-out src/main.c,$(wildcard src/*.c src/bench/*.c))
LIB_OBJ := $(patsubst src/%.c,$(B)/obj/%.o,$(LIB_SRC))
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(patsubst tests/unit/%.c,$(B)/tests/%,$(UNIT_SRC))
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
# The drivers' exerciser for the lab tests and benchmarks (not a unit test: needs a server).
DRVTOOL := $(B)/tests/drvtool

.PHONY: all deps check check-unit check-lab demo demo-down bench fuzz asan install uninstall deb clean format

all: $(B)/nastune $(DRVTOOL)

$(B)/obj/%.o: src/%.c
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  CC      $<"
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(B)/libnastune.a: $(LIB_OBJ)
	$(Q)rm -f $@ && ar rcs $@ $^

$(B)/nastune: $(B)/obj/main.o $(B)/libnastune.a
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(B)/tests/%: tests/unit/%.c $(B)/libnastune.a
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  CC      $<"
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(B)/libnastune.a $(LDLIBS) -lcmocka

$(DRVTOOL): tests/lab/drvtool.c $(B)/libnastune.a
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  CC      $<"
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(B)/libnastune.a $(LDLIBS)

deps:
	bash tests/deps.sh
	@mkdir -p $(B) && touch $(B)/.deps-stamp

# check and demo install the packages once on a fresh machine (root needed), then never again.
$(B)/.deps-stamp: tests/deps.sh
	bash tests/deps.sh
	@mkdir -p $(B) && touch $@

check: $(B)/.deps-stamp
	$(MAKE) $(B)/nastune $(DRVTOOL) $(UNIT_BIN)
	bash tests/run --build $(B)

check-unit: $(B)/nastune $(UNIT_BIN)
	bash tests/run --build $(B) unit golden cli

check-lab: $(B)/nastune $(DRVTOOL)
	bash tests/run --build $(B) lab

asan:
	$(MAKE) B=build/asan CC=clang \
		CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
		LDFLAGS="-fsanitize=address,undefined" check-unit

fuzz:
	bash tests/fuzz/run

demo: $(B)/.deps-stamp
	$(MAKE) $(B)/nastune
	bash tests/lab/demo

demo-down:
	bash tests/lab/lab down

bench: $(B)/nastune $(DRVTOOL)
	bash tests/bench/run

format:
	clang-format -i src/*.c src/bench/*.c include/*.h tests/unit/*.c tests/fuzz/*.c

install: $(B)/nastune $(DRVTOOL)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(DATADIR)/profiles $(DESTDIR)$(DATADIR)/templates
	install -m 0755 $(B)/nastune $(DESTDIR)$(BINDIR)/nastune
	install -m 0644 profiles/*.conf $(DESTDIR)$(DATADIR)/profiles/
	install -m 0644 templates/*.mustache $(DESTDIR)$(DATADIR)/templates/

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/nastune
	rm -rf $(DESTDIR)$(DATADIR)

clean:
	rm -rf build

-include $(LIB_OBJ:.o=.d) $(B)/obj/main.d $(DRVTOOL).d
