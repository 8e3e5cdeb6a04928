-- The attnlab Lua package for luarocks: the Lua modules and the C module attnlab/core.so
-- (which carries its own copy of the C core). Built by the project's Makefile:
--   luarocks --lua-version 5.4 make rockspecs/attnlab-0.1.0-1.rockspec [--tree DIR | --local]
-- from the top of a checkout. It needs Debian's liblua5.4-dev, libcjson-dev, zlib1g-dev and
-- pkg-config (sh scripts/install_deps.sh installs them); OpenBLAS is loaded at run time if
-- present. bin/attnlab, the scripts and the C library are not part of the rock: use
-- `make install` for them (README, "Install").
-- luarocks warns that CFLAGS is not passed: on purpose, the Makefile sets its own (the
-- flags luarocks would pass on the command line would replace them).
rockspec_format = "3.0"
package = "attnlab"
version = "0.1.0-1"
source = {
  -- no public release archive yet: `luarocks make` builds from the current folder and
  -- never fetches this
  url = "file://.",
}
description = {
  summary = "Tensors, autograd, attention normalizers (entmax, sparsemax, top-k) and a compact ViT",
  detailed = [[
A C11 core (tensors with reverse-mode autograd, fused attention normalizers: softmax,
sparsemax, entmax-1.5, alpha-entmax with learned alpha, top-k softmax; BiMamba and BiLSTM
mixers) with a Lua 5.4 front end: nn modules, a compact ViT, optimizers, data loaders,
sweeps and statistics. require "attnlab".]],
  license = "unspecified",
  labels = { "machine-learning", "tensor", "autograd", "attention" },
}
dependencies = {
  "lua >= 5.4, < 5.5",
}
build = {
  type = "make",
  build_target = "lib/attnlab/core.so",
  install_target = "install-lua",
  install_variables = {
    INSTALL_LMOD = "$(LUADIR)",
    INSTALL_CMOD = "$(LIBDIR)",
  },
}
