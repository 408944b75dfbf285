-- The LuaRocks package of moonflow: the module moonflow.so (require
-- "moonflow") and the moonflow shell, built by the project's Makefile.
-- From a source tree, offline: luarocks --lua-version=5.4 make
-- (Debian: apt-get install luarocks liblua5.4-dev libopenblas-dev
-- libcjson-dev zlib1g-dev libreadline-dev; tools/configure.sh names the rest).
rockspec_format = "3.0"
package = "moonflow"
version = "0.1.0-1"
-- (luarocks make builds the tree it runs in; the url is where this
-- repository lives here)
source = {
  url = "git+file:///work/main",
  tag = "v0.1.0",
}
description = {
  summary = "A tensor engine with automatic differentiation, for Lua 5.4",
  detailed = [[
    Tensors, automatic differentiation (tapes and graphs), layers, training
    and checkpoints, after TensorFlow's ideas and Torch7's Lua feel. The
    engine is C over OpenBLAS; require "moonflow" returns its mf table.]],
}
dependencies = {
  "lua >= 5.4, < 5.5",
}
-- the C libraries the module links (their headers: tools/configure.sh)
external_dependencies = {
  OPENBLAS = {library = "openblas"},
  CJSON = {header = "cjson/cJSON.h", library = "cjson"},
  ZLIB = {header = "zlib.h", library = "z"},
  READLINE = {header = "readline/readline.h", library = "readline"},
}
build = {
  type = "make",
  build_target = "module",
  build_variables = {},
  install_target = "install",
  install_variables = {
    PREFIX = "$(PREFIX)",
    LUA_CMOD = "$(LIBDIR)",
  },
}
