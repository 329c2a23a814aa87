# nastune - build, test, run. See README.md.
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR ?= $(PREFIX)/sbin
DATADIR ?= $(PREFIX)/share/nastune
MANDIR ?= $(PREFIX)/share/man
SYSCONFDIR ?= /etc
LIBEXECDIR ?= $(PREFIX)/lib/nastune
UNITDIR ?= $(PREFIX)/lib/systemd/system
COMPLETIONSDIR ?= $(PREFIX)/share/bash-completion/completions
VERSION := $(shell cat VERSION 2>/dev/null || echo 0.0.0)

CC ?= cc
PKGS := libconfig libnl-route-3.0 avahi-client smbclient libnfs sqlite3 jansson libcrypto
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# libsmbclient is dlopen()ed by the SMB driver (src/bench/drv_smb.c): headers only.
PKG_LIBS := $(shell pkg-config --libs $(filter-out smbclient,$(PKGS)) 2>/dev/null)
WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 \
	-Wno-format-nonliteral
CFLAGS ?= -O2 -g
ALL_CFLAGS = $(CPPFLAGS) $(CFLAGS) -std=gnu11 -D_GNU_SOURCE $(WARN) -Iinclude $(PKG_CFLAGS) -MMD -MP \
	-DNASTUNE_VERSION='"$(VERSION)"' -DNASTUNE_DATADIR='"$(DATADIR)"'
LDLIBS += $(PKG_LIBS) -lm

B ?= build
ifeq ($(V),1)
Q :=
else
Q := @
endif

# Two layers, as git keeps builtin/ out of libgit.a: the command layer (src/cmd/: options in,
# text and JSON out) is linked only into the binary; every other folder of src/ is the core
# library, which unit tests, drvtool and the fuzzers link alone. A core file that calls up
# into a command fails to link there (tests/cli/t_layers.sh checks libnastune.a).
CMD_SRC := $(wildcard src/cmd/*.c)
CMD_OBJ := $(patsubst src/%.c,$(B)/obj/%.o,$(CMD_SRC))
LIB_SRC := $(filter-out $(CMD_SRC),$(wildcard src/*.c src/*/*.c))
LIB_OBJ := $(patsubst src/%.c,$(B)/obj/%.o,$(LIB_SRC))
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(patsubst tests/unit/%.c,$(B)/tests/%,$(UNIT_SRC))
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
# The drivers' exerciser for the lab tests and benchmarks (not a unit test: needs a server).
DRVTOOL := $(B)/tests/drvtool
DRVTOOLS := $(B)/tests/drvtool-nfs $(B)/tests/drvtool-smb $(B)/tests/drvtool-afp

.PHONY: all deps check check-fast check-unit check-golden check-cli check-lab demo demo-down bench fuzz asan install uninstall deb clean format format-check FORCE

all: $(B)/nastune $(DRVTOOL) $(DRVTOOLS)

# The binary embeds VERSION and DATADIR: rebuild when either changes, so that
# `make install PREFIX=/usr` after a plain `make` does not install a binary looking for its
# data under /usr/local.
$(B)/.build-flags: FORCE
	@mkdir -p $(B)
	@echo '$(VERSION) $(DATADIR)' | cmp -s - $@ || echo '$(VERSION) $(DATADIR)' >$@

$(B)/obj/%.o: src/%.c $(B)/.build-flags
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  CC      $<"
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(B)/libnastune.a: $(LIB_OBJ)
	$(Q)rm -f $@ && ar rcs $@ $^

$(B)/nastune: $(CMD_OBJ) $(B)/libnastune.a
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# include/ holds what crosses folders; a header used by one folder sits beside its code, and a
# unit test that reaches one names its folder: #include "bench/scratch.h".
# test_bench_posix puts a directory in place of the one the driver has just made, between
# the driver's mkdirat and its next call: it wraps mkdirat.
$(B)/tests/test_bench_posix: UNIT_LDFLAGS := -Wl,--wrap=mkdirat
$(B)/tests/%: tests/unit/%.c $(B)/libnastune.a
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  CC      $<"
	$(Q)$(CC) $(ALL_CFLAGS) -Isrc $(LDFLAGS) $(UNIT_LDFLAGS) -o $@ $< $(B)/libnastune.a $(LDLIBS) -lcmocka

$(DRVTOOL): tests/lab/drvtool.c $(B)/libnastune.a
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  CC      $<"
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(B)/libnastune.a $(LDLIBS)

# One driver each, linked with only its protocol's library, like the reference clients
# (smbclient, nfs-cp) the driver benchmark times as whole processes (drvtool-smb loads
# libsmbclient when it connects, as the SMB driver always does).
$(B)/tests/drvtool-nfs: DRV_ONLY := bench_drv_nfs
$(B)/tests/drvtool-nfs: DRV_LIBS := $(shell pkg-config --libs libnfs 2>/dev/null)
$(B)/tests/drvtool-smb: DRV_ONLY := bench_drv_smb
$(B)/tests/drvtool-smb: DRV_LIBS :=
$(B)/tests/drvtool-afp: DRV_ONLY := bench_drv_afp
$(B)/tests/drvtool-afp: DRV_LIBS := $(shell pkg-config --libs libcrypto 2>/dev/null)
$(B)/tests/drvtool-%: tests/lab/drvtool.c $(B)/libnastune.a
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  CC      $< ($(DRV_ONLY))"
	$(Q)$(CC) $(ALL_CFLAGS) -DDRVTOOL_ONLY=$(DRV_ONLY) $(LDFLAGS) -Wl,--as-needed -o $@ $< \
		$(B)/libnastune.a $(DRV_LIBS) -lpthread

deps:
	bash tests/deps.sh
	@mkdir -p $(B) && touch $(B)/.deps-stamp

# check and demo install what is missing (root needed) every time: tests/deps.sh asks dpkg
# first and returns at once when every package is there, so a package removed since the
# last run (samba-vfs-modules, which samba only recommends) comes back.
$(B)/.deps-stamp: FORCE
	bash tests/deps.sh
	@mkdir -p $(B) && touch $@

check: $(B)/.deps-stamp
	$(MAKE) $(B)/nastune $(DRVTOOL) $(DRVTOOLS) $(UNIT_BIN)
	bash tests/run --build $(B)

# Before every commit: the suites that need no root and no lab (HACKING.md's test map).
check-fast: $(B)/nastune $(UNIT_BIN)
	bash tests/run --build $(B) unit golden cli

check-unit: $(UNIT_BIN)
	bash tests/run --build $(B) unit

check-golden: $(B)/nastune
	bash tests/run --build $(B) golden

# t_layers reads the unit tests' binaries too.
check-cli: $(B)/nastune $(UNIT_BIN)
	bash tests/run --build $(B) cli

check-lab: $(B)/nastune $(DRVTOOL) $(DRVTOOLS)
	bash tests/run --build $(B) lab

asan:
	$(MAKE) B=build/asan CC=clang \
		CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
		LDFLAGS="-fsanitize=address,undefined" check-fast

fuzz:
	bash tests/fuzz/run

demo: $(B)/.deps-stamp
	$(MAKE) $(B)/nastune
	bash tests/lab/demo

demo-down:
	bash tests/lab/lab down

bench: $(B)/nastune $(DRVTOOL) $(DRVTOOLS)
	bash tests/bench/run

FORMAT_FILES = $(wildcard src/*.c src/*/*.[ch] include/*.h tests/unit/*.c tests/fuzz/*.c)
format:
	clang-format -i $(FORMAT_FILES)

# Fails naming each file clang-format would change (tests/cli/t_format.sh runs it in make check).
format-check:
	clang-format --dry-run -Werror $(FORMAT_FILES)

# Paths the installed hook and units name.
SUBST = sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@DATADIR@|$(DATADIR)|g' \
	-e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' -e 's|@LIBEXECDIR@|$(LIBEXECDIR)|g'
UNITS := $(notdir $(wildcard packaging/systemd/*.service))

install: $(B)/nastune
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(DATADIR)/profiles $(DESTDIR)$(DATADIR)/templates \
		$(DESTDIR)$(LIBEXECDIR) $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man7 \
		$(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(UNITDIR) $(DESTDIR)$(COMPLETIONSDIR) $(DESTDIR)$(SYSCONFDIR)/nastune
	install -m 0755 $(B)/nastune $(DESTDIR)$(BINDIR)/nastune
	install -m 0644 profiles/*.conf $(DESTDIR)$(DATADIR)/profiles/
	install -m 0644 templates/*.mustache $(DESTDIR)$(DATADIR)/templates/
	install -m 0644 packaging/nastune.conf.example $(DESTDIR)$(DATADIR)/nastune.conf.example
	$(SUBST) packaging/apply-hook >$(DESTDIR)$(LIBEXECDIR)/apply-hook
	chmod 0755 $(DESTDIR)$(LIBEXECDIR)/apply-hook
	install -m 0644 packaging/man/nastune.8 $(DESTDIR)$(MANDIR)/man8/nastune.8
	install -m 0644 packaging/man/nastune.conf.5 $(DESTDIR)$(MANDIR)/man5/nastune.conf.5
	install -m 0644 packaging/man/nastune-tune.7 $(DESTDIR)$(MANDIR)/man7/nastune-tune.7
	for u in $(UNITS); do \
		$(SUBST) packaging/systemd/$$u >$(DESTDIR)$(UNITDIR)/$$u && \
		chmod 0644 $(DESTDIR)$(UNITDIR)/$$u || exit 1; \
	done
	install -m 0644 packaging/bash-completion/nastune $(DESTDIR)$(COMPLETIONSDIR)/nastune
	@# The configuration is the site's: the example goes in only where there is none.
	[ -e $(DESTDIR)$(SYSCONFDIR)/nastune/nastune.conf ] || \
		install -m 0644 packaging/nastune.conf.example $(DESTDIR)$(SYSCONFDIR)/nastune/nastune.conf

# Removes what install wrote; the configuration only while it is still the example.
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/nastune $(DESTDIR)$(MANDIR)/man8/nastune.8 \
		$(DESTDIR)$(MANDIR)/man5/nastune.conf.5 $(DESTDIR)$(MANDIR)/man7/nastune-tune.7 \
		$(DESTDIR)$(COMPLETIONSDIR)/nastune \
		$(addprefix $(DESTDIR)$(UNITDIR)/,$(UNITS))
	rm -rf $(DESTDIR)$(DATADIR) $(DESTDIR)$(LIBEXECDIR)
	if cmp -s packaging/nastune.conf.example $(DESTDIR)$(SYSCONFDIR)/nastune/nastune.conf; then \
		rm -f $(DESTDIR)$(SYSCONFDIR)/nastune/nastune.conf; \
		rmdir $(DESTDIR)$(SYSCONFDIR)/nastune 2>/dev/null || true; \
	fi

# The Debian package, built from a copy of the tree with packaging/debian as debian/ (the
# tools want it at the top; the tree keeps it under packaging/). Output in $(B)/deb/.
DEB_SRC = $(B)/deb/nastune-$(VERSION)
deb:
	@v=$$(dpkg-parsechangelog -l packaging/debian/changelog -S Version) && \
		[ "$$v" = "$(VERSION)" ] || { echo "packaging/debian/changelog is at $$v," \
		"VERSION at $(VERSION): add a changelog entry (dch -v $(VERSION))"; exit 1; }
	rm -rf $(B)/deb
	mkdir -p $(DEB_SRC)
	tar -c --exclude=./build --exclude=./.git --exclude='./tests/fuzz/corpus-*' -f - . | \
		tar -x -C $(DEB_SRC)
	cp -R packaging/debian $(DEB_SRC)/debian
	@# make exports its command-line variables (B=...), also through MAKEFLAGS: they must
	@# not reach the package build's own make.
	cd $(DEB_SRC) && env -u MAKEFLAGS -u MFLAGS -u MAKEOVERRIDES -u MAKELEVEL -u B \
		dpkg-buildpackage -b -us -uc
	lintian --fail-on error --info $(B)/deb/nastune_$(VERSION)_*.changes
	@echo "built $$(ls $(B)/deb/*.deb)"

clean:
	rm -rf build

-include $(LIB_OBJ:.o=.d) $(CMD_OBJ:.o=.d) $(DRVTOOL).d
