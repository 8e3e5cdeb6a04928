#!/usr/bin/env bash
# tests/embed/run.sh -- CI stage "install and embed" (also `make embed-test`).
#
# Runs the README's recipes as written: every ```sh block of the sections "## Install" and
# "## Embedding attnlab", in order, each in a fresh `bash -eu -o pipefail`, with
#   PREFIX  a temporary install prefix      TREE  a temporary luarocks tree
#   OUT     a temporary folder for the embedding examples' binaries
# set in the environment (the blocks read ${PREFIX:-/usr/local} and so on). Blocks run from
# the top of this checkout, except blocks that call luarocks: those run in a clean copy of it
# (the files git knows, no build outputs), so `luarocks make` is shown to build from scratch.
# Then it checks what the recipes left behind: the installed layout, the soname, the .pc
# file, bin/attnlab and stock lua5.4 away from the checkout, the data search, versions, a
# DESTDIR staged install, and that `make uninstall` removes every file it installed.
# Ends non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
work=$(mktemp -d /tmp/attnlab-embed.XXXXXX)
trap 'rm -rf "$work"' EXIT
export PREFIX="$work/prefix" TREE="$work/rocks" OUT="$work/out"
mkdir -p "$OUT"
# the recipes must not lean on the caller's environment
unset LUA_PATH LUA_CPATH LUA_PATH_5_4 LUA_CPATH_5_4 LUA_INIT LUA_INIT_5_4 PKG_CONFIG_PATH
export MAKEFLAGS=${MAKEFLAGS:--j2}

step() { printf '\n== embed: %s\n' "$*"; }
fail() { echo "embed: FAIL: $*" >&2; exit 1; }

# ---- the README's blocks --------------------------------------------------------------------
step "clean copy of the checkout for luarocks"
mkdir -p "$work/src"
git ls-files -z --cached --others --exclude-standard |
  while IFS= read -r -d '' f; do [ -f "$f" ] && printf '%s\0' "$f"; done |
  tar --null -T - -cf - | tar -xf - -C "$work/src"

# blocks: section name, then the text of each ```sh block, separated by NUL
extract() {
  awk -v want="$1" '
    /^## / { insec = (substr($0, 4) == want); next }
    insec && /^```sh[ \t]*$/ { inblk = 1; blk = ""; next }
    inblk && /^```[ \t]*$/ { inblk = 0; printf "%s%c", blk, 0; next }
    inblk { blk = blk $0 "\n" }' README.md
}
nblocks=0
for section in "Install" "Embedding attnlab"; do
  while IFS= read -r -d '' block; do
    nblocks=$((nblocks + 1))
    dir=$root
    case $block in *luarocks*) dir=$work/src ;; esac
    step "README \"$section\", block $nblocks (in ${dir/#$work/<tmp>})"
    printf '%s' "$block" | sed 's/^/  | /'
    (cd "$dir" && bash -eu -o pipefail -c "$block") || fail "README \"$section\" block $nblocks"
  done < <(extract "$section")
done
[ "$nblocks" -ge 4 ] || fail "expected at least 4 sh blocks in README's Install and Embedding sections, found $nblocks"

# ---- what the recipes left behind -----------------------------------------------------------
step "installed layout under PREFIX"
ver=$(sed -n 's/^#define ATTNLAB_VERSION_\(MAJOR\|MINOR\|PATCH\) *\([0-9]*\).*/\2/p' include/attnlab/version.h | paste -sd.)
major=${ver%%.*}
for f in bin/attnlab lib/libattnlab.so.$ver lib/libattnlab.so.$major lib/libattnlab.so lib/libattnlab.a \
         lib/pkgconfig/attnlab.pc include/attnlab/version.h include/attnlab/normalizers.h \
         share/lua/5.4/attnlab/init.lua share/lua/5.4/attnlab/nn/init.lua lib/lua/5.4/attnlab/core.so \
         share/attnlab/scripts/train.lua share/attnlab/experiments/normalizers/demo.lua \
         share/doc/attnlab/CHANGELOG.md; do
  [ -e "$PREFIX/$f" ] || fail "missing $PREFIX/$f"
done
soname=$(readelf -d "$PREFIX/lib/libattnlab.so.$ver" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "libattnlab.so.$major" ] || fail "soname is '$soname', want libattnlab.so.$major"
if nm -D --defined-only "$PREFIX/lib/libattnlab.so" | awk '{print $3}' | grep -v '^al_' | grep -q .; then
  fail "libattnlab.so exports symbols other than al_*"
fi
if nm -D --defined-only "$PREFIX/lib/lua/5.4/attnlab/core.so" | awk '{print $3}' | grep -q '^al_'; then
  fail "core.so exports the core's al_* symbols"
fi
export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig"
[ "$(pkg-config --modversion attnlab)" = "$ver" ] || fail "attnlab.pc version is not $ver"
[ "$(pkg-config --variable=INSTALL_LMOD attnlab)" = "$PREFIX/share/lua/5.4" ] || fail "INSTALL_LMOD in attnlab.pc"
echo "ok: layout, soname libattnlab.so.$major, exports, attnlab.pc $ver"

step "the C API from C++ (the headers' extern \"C\")"
# capi.c compiled as C++ against the installed headers and library: without extern "C" in the
# headers every call is a C++-mangled name and the link fails (28 undefined references)
if command -v g++ >/dev/null; then
  g++ -std=c++17 -O2 -x c++ tests/embed/capi.c -x none $(pkg-config --cflags --libs attnlab) -lm \
      -Wl,-rpath,"$PREFIX/lib" -o "$OUT/capi-cxx" || fail "capi.c as C++ does not build against the installed headers"
  "$OUT/capi-cxx" | tail -n 1 | grep -qx "capi: ok" || fail "capi.c built as C++ does not pass"
  echo "ok: capi.c built as C++ links and passes"
else
  echo "embed: SKIPPED: the C API from C++: no g++ on this machine (apt-get install g++)"
fi

step "versions agree"
hv=$(cd / && "$PREFIX/bin/attnlab" --version)
[[ $hv == "attnlab $ver (Lua 5.4."* ]] || fail "attnlab --version says '$hv'"
grep -q "^version = \"$ver-" rockspecs/attnlab-$ver-1.rockspec || fail "rockspecs/attnlab-$ver-1.rockspec"
grep -q "^## \[\?$ver\]\?" CHANGELOG.md || fail "CHANGELOG.md has no section for $ver"
echo "ok: $hv; rockspec and CHANGELOG name $ver"

step "bin/attnlab and stock lua5.4 use the installed tree, away from the checkout"
lp="$PREFIX/share/lua/5.4/?.lua;$PREFIX/share/lua/5.4/?/init.lua;;"
found=$(cd / && "$PREFIX/bin/attnlab" -e 'io.write(package.searchpath("attnlab", package.path))')
[ "$found" = "$PREFIX/share/lua/5.4/attnlab/init.lua" ] || fail "installed attnlab loads $found"
got=$(cd / && "$PREFIX/bin/attnlab" -e 'io.write(al.root(), " ", tostring(al.checkout()), " ", al.sweep.host())')
[ "$got" = "$PREFIX/share/attnlab nil $PREFIX/bin/attnlab" ] || fail "al.root/checkout/sweep.host: $got"
got=$(cd / && P="$PREFIX" LUA_PATH="$lp" LUA_CPATH="$PREFIX/lib/lua/5.4/?.so;;" lua5.4 -e '
  local al = require "attnlab"
  assert(package.searchpath("attnlab.core", package.cpath) == os.getenv("P") .. "/lib/lua/5.4/attnlab/core.so")
  io.write(al.version)')
[ "$got" = "$ver" ] || fail "lua5.4 require attnlab from PREFIX: $got"
echo "ok: modules from $PREFIX, al.root() = $PREFIX/share/attnlab"

step "data search in the installed tree (no checkout)"
got=$(cd / && ATTNLAB_DATA="$work/d1:$work/d2" "$PREFIX/bin/attnlab" -e 'io.write(table.concat(al.data.search_path(), " "))')
want="$work/d1 $work/d2 /usr/share/datasets $HOME/.cache/attnlab/data"
[ "$got" = "$want" ] || fail "data search path: '$got', want '$want'"
echo "ok: $got"
if [ -e /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]; then
  step "an installed script by relative name, on Fashion-MNIST from /usr/share/datasets"
  (cd "$work" && "$PREFIX/bin/attnlab" scripts/train.lua --dataset fashion_mnist --epochs 1 \
     --train_limit 256 --test_limit 200 --eval_batch 200 --dim 16 --depth 1 --heads 2 \
     --progress false --threads 1) || fail "installed scripts/train.lua"
else
  echo "SKIP: Fashion-MNIST not in /usr/share/datasets (apt-get install dataset-fashion-mnist)"
fi

step "luarocks tree"
rockmod=$(cd / && eval "$(luarocks --lua-version 5.4 path --tree "$TREE")" &&
  lua5.4 -e 'local al = require "attnlab"; io.write(package.searchpath("attnlab.core", package.cpath), " ", al.version)')
[ "$rockmod" = "$TREE/lib/lua/5.4/attnlab/core.so $ver" ] || fail "luarocks tree: $rockmod"
echo "ok: $rockmod"

step "DESTDIR staged install and uninstall"
make --no-print-directory install DESTDIR="$work/stage" PREFIX=/opt/attnlab >/dev/null
[ -x "$work/stage/opt/attnlab/bin/attnlab" ] || fail "DESTDIR install: no bin/attnlab"
grep -q '^prefix=/opt/attnlab$' "$work/stage/opt/attnlab/lib/pkgconfig/attnlab.pc" || fail "DESTDIR leaked into attnlab.pc"
make --no-print-directory uninstall DESTDIR="$work/stage" PREFIX=/opt/attnlab >/dev/null
left=$(find "$work/stage" \( -type f -o -type l \) | head -5)
[ -z "$left" ] || fail "make uninstall (DESTDIR) left files: $left"
make --no-print-directory uninstall PREFIX="$PREFIX" >/dev/null
left=$(find "$PREFIX" \( -type f -o -type l \) | head -5)
[ -z "$left" ] || fail "make uninstall left files: $left"
echo "ok: staged under DESTDIR with prefix=/opt/attnlab in the .pc; uninstall removed every file"

echo
echo "embed: all passed ($nblocks README blocks, install layout, luarocks, uninstall)"
