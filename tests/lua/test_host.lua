-- tests/lua/test_host.lua -- the bin/attnlab host, spawned with io.popen: -v/--version,
-- options, the arg table and `...` as lua5.4 builds them, exit status and error messages,
-- -l/-W, LUA_INIT, package.path and the preloaded core, the global `al`. The REPL:
-- test_repl.lua.
-- Run: lua5.4 tests/lua/runner.lua tests/lua/test_host.lua   (or via bin/attnlab, as run.sh does)
-- The host under test is $ATTNLAB_HOST or bin/attnlab; host cases SKIP when it is missing.
local T = require "harness"
local F = require "host_fixtures"
local cases, case = F.host_suite()   -- every case skips while the host is not built

local HOST, q, tmpscript, readfile = T.HOST, T.shquote, T.tmpscript, T.read_file
local run, host, has, same_text = F.run, F.host, F.has, F.same_text

case("host: -v prints 'attnlab <version> (Lua 5.4.x)'", function()
  local out, err, code = host("-v")
  T.eq(code, 0, nil, "exit status")
  T.truthy(out:match("^attnlab %S+ %(Lua 5%.4%.%d+%)\n$"), "got: " .. out .. err)
end)

case("host: --version prints the -v line, with the version of include/attnlab/version.h", function()
  local out, err, code = host("--version")
  T.eq(code, 0, nil, "exit status")
  local v, _, vcode = host("-v")
  T.eq(vcode, 0, nil, "-v exit status")
  T.eq(out, v, nil, "--version vs -v (stderr: " .. err .. ")")
  local h = readfile("include/attnlab/version.h")
  local want = h:match("ATTNLAB_VERSION_MAJOR (%d+)") .. "." .. h:match("ATTNLAB_VERSION_MINOR (%d+)") .. "."
    .. h:match("ATTNLAB_VERSION_PATCH (%d+)")
  T.eq(out:match("^attnlab (%S+) "), want, nil, "version")
  local lv = host([[-e "io.write(al.version)"]])
  T.eq(lv, want, nil, "al.version")
end)

case("host: a relative script path missing from the current folder runs from the checkout (arg[0] too)", function()
  local abs = HOST:sub(1, 1) == "/" and HOST or (os.getenv("PWD") .. "/" .. HOST)
  local function from_root(args) return run("sh -c " .. q("cd / && exec " .. q(abs) .. " " .. args)) end
  local out, err, code = from_root("tests/lua/harness.lua_missing_on_purpose")
  T.truthy(code ~= 0, "a path missing everywhere still fails")
  has(err, "cannot open tests/lua/harness.lua_missing_on_purpose", "stderr")
  local script = "tests/lua/host_arg0_probe.lua"
  T.write_file(script, "io.write(arg[0], ' ', select('#', ...))")
  out, err, code = from_root(script .. " a b")
  os.remove(script)
  T.eq(code, 0, nil, "exit status (stderr: " .. err .. ")")
  T.truthy(out:match("^/.*/tests/lua/host_arg0_probe%.lua 2$"), "arg[0] is the resolved path: " .. out)
end)

-- the lookup in the checkout is for paths missing here only: a scripts/train.lua of the
-- current folder is the one that runs, not the checkout's file of that name
case("host: a relative script path present in the current folder runs that file, not the checkout's", function()
  local abs = HOST:sub(1, 1) == "/" and HOST or (os.getenv("PWD") .. "/" .. HOST)
  local d = T.tmpdir("host-local")
  os.execute("mkdir -p " .. q(d .. "/scripts"))
  T.write_file(d .. "/scripts/train.lua", "io.write('local copy ', arg[0])")
  local out, err, code = run("sh -c " .. q("cd " .. q(d) .. " && exec " .. q(abs) .. " scripts/train.lua"))
  T.rm_rf(d)
  T.eq(code, 0, nil, "exit status (stderr: " .. err .. ")")
  T.eq(out, "local copy scripts/train.lua")
end)

case("host: an installed tree inside a checkout runs its own modules, not the checkout's", function()
  -- make install PREFIX=$PWD/_install: the checkout is two levels above <prefix>/bin/attnlab;
  -- the installed host used to take the checkout's lua/ and scripts/ (al.root() = the checkout)
  local d = T.tmpdir("host-prefix")
  local pre = d .. "/prefix"
  T.eq(os.execute("mkdir -p " .. q(d .. "/lua/attnlab") .. " " .. q(d .. "/scripts") .. " "
    .. q(pre .. "/bin") .. " " .. q(pre .. "/share/lua/5.4") .. " " .. q(pre .. "/share/attnlab/scripts")
    .. " && cp " .. q(HOST) .. " " .. q(pre .. "/bin/attnlab")
    .. " && cp -R lua/attnlab " .. q(pre .. "/share/lua/5.4/")), true, nil, "setting up the trees")
  T.write_file(d .. "/lua/attnlab/init.lua", "error('the checkout\'s attnlab was loaded')\n")
  T.write_file(d .. "/scripts/where.lua", "print('checkout copy')\n")
  T.write_file(pre .. "/share/attnlab/scripts/where.lua", "print('installed copy')\n")
  T.write_file(pre .. "/share/attnlab/scripts/train.lua", "\n")
  local out, err, code = run("sh -c " .. q("cd / && exec " .. q(pre .. "/bin/attnlab")
    .. [[ -e "print(package.searchpath('attnlab', package.path)) print(al.root())" scripts/where.lua]]))
  T.rm_rf(d)
  T.eq(code, 0, nil, "exit status (stderr: " .. err .. ")")
  T.eq(err, "", nil, "stderr")
  same_text(out, ("%s/share/lua/5.4/attnlab/init.lua\n%s/share/attnlab\ninstalled copy\n"):format(pre, pre),
    "package, al.root() and the script run")
end)

case("host: -e runs statements in order; print output", function()
  local out, _, code = host([[-e "x = 20" -e "print(x + 22)"]])
  T.eq(code, 0, nil, "exit status")
  T.eq(out, "42\n")
end)

case("host: package.path starts with the checkout's lua/ and finds this format.lua", function()
  local out = host([[-e "print(package.path)" -e "print(package.searchpath('attnlab.format', package.path))"]])
  local path, found = out:match("^(.-)\n(.-)\n$")
  local root = path and path:match("^(/[^;]*)/lua/%?%.lua;")
  T.truthy(root, "package.path does not start with <abs root>/lua/?.lua: " .. tostring(path))
  local prefix = root .. "/lua/?.lua;" .. root .. "/lua/?/init.lua;"
  T.truthy(path:sub(1, #prefix) == prefix, "second entry is not <root>/lua/?/init.lua: " .. path)
  T.eq(found, root .. "/lua/attnlab/format.lua")
  T.truthy(readfile(found) == readfile("lua/attnlab/format.lua"), found .. " is not this checkout's format.lua")
end)

case("host: attnlab.core is preloaded (statically linked)", function()
  local out = host([[-e "print(type(package.preload['attnlab.core']))"]])
  T.eq(out, "function\n")
end)

case("al: every lazily loaded submodule name loads (al.debug, al.plot were listed without a file)", function()
  local out, err, code = host([[-e "local n = 0; for _, k in ipairs(al.submodules()) do assert(al[k] ~= nil, k); assert(al[k] == package.loaded['attnlab.' .. k], k); n = n + 1 end; print(n, al.debug, al.plot)"]])
  T.eq(code, 0, nil, "exit status (stderr: " .. err .. ")")
  T.eq(out, "13\tnil\tnil\n")
end)

case("host: tostring(tensor) uses the formatter the Lua library installs, a one-line summary without it", function()
  local out, err, code = host([[-e "local t = al.tensor{1, 2}; print(tostring(t) == require('attnlab.format')(t)); debug.getregistry()['attnlab.Tensor.formatter'] = nil; print(tostring(t))"]])
  T.eq(code, 0, nil, "exit status (stderr: " .. err .. ")")
  T.eq(out, "true\nTensor(float32 (2))\n")
end)

case("host: global al = require 'attnlab' (or a one-line warning while the package is missing)", function()
  local out, err, code = host([[-e "print(type(al), al == package.loaded.attnlab)"]])
  T.eq(code, 0, nil, "exit status")
  if readfile("lua/attnlab/init.lua") then
    T.eq(out, "table\ttrue\n", nil, "(stderr: " .. err .. ")")
  else
    T.eq(out, "nil\tfalse\n")
    has(err, "attnlab: warning: global 'al' not set", "stderr")
    T.truthy(not err:find("\n.", 1), "warning should be one line: " .. err)
  end
end)

-- arg table and ... exactly as lua5.4 builds them
local ARG_SCRIPT = [[
local t = {}
for i = -6, #arg do t[#t + 1] = i .. "=" .. tostring(arg[i]) end
print(table.concat(t, "|"))
print(select("#", ...), ...)
]]

case("host: script arg table (negative indices, --) and ... match lua5.4", function()
  local script = tmpscript(ARG_SCRIPT)
  local args = ([[-W -e "x=1" -- %s a "b c" ""]]):format(q(script))
  local out, err, code = host(args)
  T.eq(code, 0, nil, "exit status (" .. err .. ")")
  local want = ("-6=nil|-5=%s|-4=-W|-3=-e|-2=x=1|-1=--|0=%s|1=a|2=b c|3=\n3\ta\tb c\t\n"):format(HOST, script)
  same_text(out, want, "arg table")
  -- the stock interpreter, where installed, agrees except for its own name
  local lout = run("lua5.4 " .. args)
  if lout ~= "" then same_text(out, (lout:gsub("%-5=[^|]*", "-5=" .. HOST:gsub("%%", "%%%%"))), "vs lua5.4") end
  os.remove(script)
end)

case("host: no script: arg[0] is the interpreter, options are arg[1..]", function()
  local out = host([[-e "print(arg[0], arg[1], arg[2], arg[-1])"]])
  T.eq(out, HOST .. "\t-e\tprint(arg[0], arg[1], arg[2], arg[-1])\tnil\n")
end)

case("host: '-' runs stdin as the script with args; no args + piped stdin runs stdin", function()
  local out, _, code = host("- a b", "print(...) print(arg[0])")
  T.eq(code, 0, nil, "exit status")
  T.eq(out, "a\tb\n-\n")
  out = host("", "print(40 + 2)")
  T.eq(out, "42\n")
  -- an error in piped stdin is a failed script, exit 1 (lua5.4 exits 0 there: a batch job's
  -- `attnlab < run.lua` that failed looked like a success); '-' likewise
  local err
  out, err, code = host("", "print(1) error('boom')")
  T.eq({ out, code }, { "1\n", 1 }, 0, err)
  has(err, "attnlab: stdin:1: boom", "stderr")
  _, _, code = host("- a", "error('boom')")
  T.eq(code, 1, 0, "'-' with an error")
end)

case("host: script error -> exit 1, 'attnlab: <msg>' and traceback on stderr", function()
  local script = tmpscript("local function f()\n  error('boom')\nend\nf()\n")
  local out, err, code = host(q(script))
  T.eq(code, 1, nil, "exit status")
  T.eq(out, "")
  has(err, "attnlab: " .. script .. ":2: boom\nstack traceback:\n", "stderr")
  has(err, "in local 'f'", "stderr")
  os.remove(script)
end)

case("host: a method called with '.', or one attnlab does not have, is named as such on the error's own line", function()
  local script = tmpscript("local opt = al.optim.AdamW(al.nn.Linear(2, 2):parameters())\nopt.step()\n")
  local _, err, code = host(q(script))
  T.eq(code, 1, nil, "exit status")
  has(err, "attempt to index a nil value (local 'self') -- a method called with '.' instead of ':'? "
    .. "(write opt:step(), model:parameters(), not opt.step())\nstack traceback:\n", "dot call")
  has(err, script .. ":2: in main chunk", "the user's line in the traceback")
  os.remove(script)
  _, err = host([[-e "local y = al.ones{2}:sum() y.backward()"]])
  has(err, "bad argument #1 to 'backward' (attnlab tensor expected, got no value) -- a tensor method called with '.' "
    .. "instead of ':'?", "tensor method")
  -- a function attnlab does not have says where the API is listed
  _, err = host([[-e "al.ones{2}:numpy()"]])
  has(err, "attempt to call a nil value (method 'numpy') -- no function of that name (al.help() lists attnlab's API)\n",
    "unknown method")
  _, err = host([[-e "al.foo()"]])
  has(err, "(field 'foo') -- no function of that name", "unknown function")
  -- another error that names a local of another name keeps Lua's message as it is
  _, err = host([[-e "local t; t.x = 1"]])
  has(err, "attempt to index a nil value (local 't')\nstack traceback:", "no hint")
end)

case("host: syntax error, missing file, non-string error object, os.exit code", function()
  local script = tmpscript("x = = 1\n")
  local _, err, code = host(q(script))
  T.eq(code, 1, nil, "syntax error status")
  has(err, "attnlab: " .. script .. ":1:", "syntax error")
  os.remove(script)
  _, err, code = host("/nonexistent/nothing.lua")
  T.eq(code, 1, nil, "missing file status")
  has(err, "attnlab: cannot open /nonexistent/nothing.lua", "missing file")
  _, err, code = host([[-e "error({})"]])
  T.eq(code, 1, nil, "table error status")
  has(err, "attnlab: (error object is a table value)\nstack traceback:", "table error")
  _, err, code = host([[-e "error(setmetatable({}, {__tostring = function() return 'custom' end}))"]])
  T.eq(code, 1, nil, "__tostring error status")
  has(err, "attnlab: custom", "__tostring error")
  local _, _, c3 = host([[-e "os.exit(3)"]])
  T.eq(c3, 3, nil, "os.exit(3)")
end)

case("host: bad options print usage and exit 1; --help exits 0", function()
  local out, err, code = host("-x")
  T.eq(code, 1, nil, "-x status")
  has(err, "attnlab: unrecognized option '-x'\nusage: attnlab [options] [script [args]]", "-x")
  _, err, code = host("-e")
  T.eq(code, 1, nil, "-e status")
  has(err, "attnlab: '-e' needs argument", "-e")
  _, err, code = host("-l -e x=1")
  T.eq(code, 1, nil, "-l status")
  has(err, "attnlab: '-l' needs argument", "-l")
  _, err, code = host("-vx")
  has(err, "unrecognized option '-vx'", "-vx")
  _, err, code = host("--bogus")
  has(err, "unrecognized option '--bogus'", "--bogus")
  out, err, code = host("--help")
  T.eq(code, 0, nil, "--help status")
  has(out, "usage: attnlab [options] [script [args]]", "--help")
  has(out, "The global 'al'", "--help")
  T.eq(err, "")
end)

case("host: -l mod and -l g=mod", function()
  local out, err, code = host([[-l fmt=attnlab.format -l string -e "print(type(fmt), fmt == require('attnlab.format'))"]])
  T.eq(code, 0, nil, "exit status " .. err)
  T.eq(out, "function\ttrue\n")
  local _, err2, code2 = host([[-l no_such_module_xyz -e "print(1)"]])
  T.eq(code2, 1, nil, "missing module status")
  has(err2, "attnlab: module 'no_such_module_xyz' not found", "missing module")
end)

case("host: -W turns warnings on", function()
  local _, err = host([[-W -e "warn('hello')"]])
  has(err, "Lua warning: hello", "with -W")
  _, err = host([[-e "warn('hello')"]])
  T.truthy(not err:find("Lua warning"), "warning printed without -W: " .. err)
end)

case("host: LUA_INIT, @file, LUA_INIT_5_4 precedence, -E, errors", function()
  local out = run("env LUA_INIT='init_x = 42' " .. q(HOST) .. [[ -e "print(init_x)"]])
  T.eq(out, "42\n", nil, "LUA_INIT")
  local f = tmpscript("init_y = 'from file'\n")
  out = run("env LUA_INIT=@" .. q(f) .. " " .. q(HOST) .. [[ -e "print(init_y)"]])
  T.eq(out, "from file\n", nil, "LUA_INIT=@file")
  os.remove(f)
  out = run("env LUA_INIT='v = 1' LUA_INIT_5_4='v = 2' " .. q(HOST) .. [[ -e "print(v)"]])
  T.eq(out, "2\n", nil, "LUA_INIT_5_4 wins")
  out = run("env LUA_INIT='v = 1' " .. q(HOST) .. [[ -E -e "print(v)"]])
  T.eq(out, "nil\n", nil, "-E ignores LUA_INIT")
  local _, err, code = run("env LUA_INIT='error(\"in init\")' " .. q(HOST) .. [[ -e "print(1)"]])
  T.eq(code, 1, nil, "LUA_INIT error status")
  has(err, "attnlab: LUA_INIT:1: in init", "LUA_INIT error")
end)

return cases
