# mk/install.mk -- installing attnlab, included by the Makefile.
#   make shared          lib/libattnlab.so.X.Y.Z (+ .so.X and .so links): the C core as a shared library
#   make install         everything below PREFIX (default /usr/local), staged under DESTDIR if set
#   make uninstall       removes exactly what install put there (same PREFIX/DESTDIR)
#   make install-lua     only the Lua package: INSTALL_LMOD/attnlab/{*.lua,*/*.lua,torch/*.py}, INSTALL_CMOD/attnlab/core.so
#                        (what the luarocks rockspec calls, with luarocks' own folders)
#   make embed-test      tests/embed/run.sh: install into a temporary prefix, build the embedding
#                        examples with pkg-config, run them, luarocks make into a temporary tree
# Layout (PREFIX=/usr/local):
#   bin/attnlab                              the host (REPL / script runner)
#   lib/libattnlab.so.X.Y.Z, .so.X, .so      the C core, soname libattnlab.so.X
#   lib/libattnlab.a                         the same, static
#   lib/pkgconfig/attnlab.pc                 pkg-config --cflags --libs attnlab
#   include/attnlab/*.h                      the C API (no Lua)
#   share/lua/5.4/attnlab/{*,*/*}.lua, torch/*.py the Lua half        } on Debian's default lua5.4
#   lib/lua/5.4/attnlab/core.so              the Lua C module    } paths for /usr/local and /usr
#   share/attnlab/scripts, experiments       what bin/attnlab runs by relative name
#   share/doc/attnlab/                       README.md, CHANGELOG.md
# The version comes from include/attnlab/version.h (one place for C, Lua, the host, the .pc
# and the soname).

VERSION_H     := include/attnlab/version.h
VERSION_MAJOR := $(shell sed -n 's/^\#define ATTNLAB_VERSION_MAJOR  *\([0-9]*\).*/\1/p' $(VERSION_H))
VERSION_MINOR := $(shell sed -n 's/^\#define ATTNLAB_VERSION_MINOR  *\([0-9]*\).*/\1/p' $(VERSION_H))
VERSION_PATCH := $(shell sed -n 's/^\#define ATTNLAB_VERSION_PATCH  *\([0-9]*\).*/\1/p' $(VERSION_H))
VERSION       := $(VERSION_MAJOR).$(VERSION_MINOR).$(VERSION_PATCH)

PREFIX       ?= /usr/local
DESTDIR      ?=
BINDIR       ?= $(PREFIX)/bin
LIBDIR       ?= $(PREFIX)/lib
INCLUDEDIR   ?= $(PREFIX)/include
DATAROOTDIR  ?= $(PREFIX)/share
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
SHAREDIR     ?= $(DATAROOTDIR)/attnlab
DOCDIR       ?= $(DATAROOTDIR)/doc/attnlab
LUA_ABI      ?= 5.4
INSTALL_LMOD ?= $(DATAROOTDIR)/lua/$(LUA_ABI)
INSTALL_CMOD ?= $(LIBDIR)/lua/$(LUA_ABI)

SO_NAME := libattnlab.so.$(VERSION_MAJOR)
SO_FILE := libattnlab.so.$(VERSION)
# The core needs cJSON, zlib, libgomp, libdl and libm -- never Lua or readline.
SO_LIBS := $(filter-out -llua5.4 -lreadline,$(DEPS_LIBS)) -ldl -lm -fopenmp

LUA_MODULES := $(sort $(wildcard lua/attnlab/*.lua lua/attnlab/*/*.lua lua/attnlab/torch/*.py))
PUBLIC_HEADERS := $(sort $(wildcard include/attnlab/*.h))

.PHONY: shared install install-lua uninstall uninstall-lua embed-test

# The Lua module keeps its own copy of the core and exports nothing of it (only
# luaopen_attnlab_core): a program that links libattnlab.so -- even of another version --
# can load it without the two copies' symbols getting mixed up. -z nodelete: closing a
# lua_State dlcloses its C modules, but OpenMP worker threads and the loaded OpenBLAS keep
# pointers into this one (a host that opens a second state later crashed without it).
$(BUILD)/core.so: LDLIBS += -Wl,--exclude-libs,ALL -Wl,-z,nodelete
$(BUILD)/core.so: mk/install.mk

# From the archive, whatever the object list is; exports al_* only (mk/attnlab.map).
$(BUILD)/$(SO_FILE): $(BUILD)/libattnlab.a mk/attnlab.map
	$(CC) -shared -o $@ -Wl,-soname,$(SO_NAME) -Wl,--version-script,mk/attnlab.map \
	  -Wl,--whole-archive $(BUILD)/libattnlab.a -Wl,--no-whole-archive -Wl,--no-undefined \
	  $(SO_LIBS) $(SAN)

lib/$(SO_FILE): $(BUILD)/$(SO_FILE)
	@mkdir -p lib; cp $< $@.tmp && mv -f $@.tmp $@
	@ln -sf $(SO_FILE) lib/$(SO_NAME); ln -sf $(SO_NAME) lib/libattnlab.so

shared: lib/$(SO_FILE)

# attnlab.pc for this PREFIX/LIBDIR/INCLUDEDIR (rebuilt every time: they are make variables).
$(BUILD)/attnlab.pc: mk/attnlab.pc.in $(VERSION_H) FORCE_PC
	@mkdir -p $(BUILD)
	@sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' \
	  -e 's|@INSTALL_LMOD@|$(INSTALL_LMOD)|g' -e 's|@INSTALL_CMOD@|$(INSTALL_CMOD)|g' \
	  -e 's|@SHAREDIR@|$(SHAREDIR)|g' -e 's|@VERSION@|$(VERSION)|g' $< > $@.tmp && mv -f $@.tmp $@
.PHONY: FORCE_PC
FORCE_PC:

install: all shared $(BUILD)/attnlab.pc install-lua
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PKGCONFIGDIR) \
	  $(DESTDIR)$(INCLUDEDIR)/attnlab $(DESTDIR)$(SHAREDIR) $(DESTDIR)$(DOCDIR)
	install -m 755 bin/attnlab $(DESTDIR)$(BINDIR)/attnlab
	install -m 755 lib/$(SO_FILE) $(DESTDIR)$(LIBDIR)/$(SO_FILE)
	ln -sf $(SO_FILE) $(DESTDIR)$(LIBDIR)/$(SO_NAME)
	ln -sf $(SO_NAME) $(DESTDIR)$(LIBDIR)/libattnlab.so
	install -m 644 lib/libattnlab.a $(DESTDIR)$(LIBDIR)/libattnlab.a
	install -m 644 $(PUBLIC_HEADERS) $(DESTDIR)$(INCLUDEDIR)/attnlab/
	install -m 644 $(BUILD)/attnlab.pc $(DESTDIR)$(PKGCONFIGDIR)/attnlab.pc
	rm -rf $(DESTDIR)$(SHAREDIR)/scripts $(DESTDIR)$(SHAREDIR)/experiments
	cp -R scripts experiments $(DESTDIR)$(SHAREDIR)/
	rm -rf $(DESTDIR)$(SHAREDIR)/experiments/*/results
	install -m 644 README.md CHANGELOG.md $(DESTDIR)$(DOCDIR)/
	@# the dynamic loader's cache knows /usr/local/lib and /usr/lib only after ldconfig
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && command -v ldconfig >/dev/null; then \
	  case "$(LIBDIR)" in /usr/local/lib|/usr/lib|/usr/local/lib64|/usr/lib64) ldconfig ;; esac; fi

install-lua: lib/attnlab/core.so
	install -d $(DESTDIR)$(INSTALL_LMOD)/attnlab $(DESTDIR)$(INSTALL_CMOD)/attnlab
	@set -e; for f in $(LUA_MODULES:lua/%=%); do \
	  install -d $(DESTDIR)$(INSTALL_LMOD)/$$(dirname $$f); \
	  echo "install -m 644 lua/$$f $(DESTDIR)$(INSTALL_LMOD)/$$f"; \
	  install -m 644 lua/$$f $(DESTDIR)$(INSTALL_LMOD)/$$f; done
	install -m 755 lib/attnlab/core.so $(DESTDIR)$(INSTALL_CMOD)/attnlab/core.so

uninstall: uninstall-lua
	rm -f $(DESTDIR)$(BINDIR)/attnlab $(DESTDIR)$(LIBDIR)/$(SO_FILE) $(DESTDIR)$(LIBDIR)/$(SO_NAME) \
	  $(DESTDIR)$(LIBDIR)/libattnlab.so $(DESTDIR)$(LIBDIR)/libattnlab.a \
	  $(DESTDIR)$(PKGCONFIGDIR)/attnlab.pc
	rm -f $(PUBLIC_HEADERS:include/%=$(DESTDIR)$(INCLUDEDIR)/%)
	-rmdir $(DESTDIR)$(INCLUDEDIR)/attnlab 2>/dev/null
	rm -rf $(DESTDIR)$(SHAREDIR) $(DESTDIR)$(DOCDIR)
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && command -v ldconfig >/dev/null; then \
	  case "$(LIBDIR)" in /usr/local/lib|/usr/lib|/usr/local/lib64|/usr/lib64) ldconfig ;; esac; fi

uninstall-lua:
	rm -f $(LUA_MODULES:lua/%=$(DESTDIR)$(INSTALL_LMOD)/%) $(DESTDIR)$(INSTALL_CMOD)/attnlab/core.so
	-rmdir $(patsubst lua/%,$(DESTDIR)$(INSTALL_LMOD)/%,$(sort $(dir $(wildcard lua/attnlab/*/*.lua)))) 2>/dev/null
	-rmdir $(DESTDIR)$(INSTALL_LMOD)/attnlab $(DESTDIR)$(INSTALL_CMOD)/attnlab 2>/dev/null

embed-test:
	bash tests/embed/run.sh
