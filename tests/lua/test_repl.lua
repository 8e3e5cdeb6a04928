-- tests/lua/test_repl.lua -- the bin/attnlab REPL, spawned with io.popen: piped input
-- (prompts on stdout, continuation lines, results, errors, tensors printed by
-- attnlab.format, -i after a script or -e), Ctrl-C while a script or a statement runs, and
-- readline behaviour (banner, completion, Ctrl-C at the prompt, history) through tmux when
-- it is installed.
-- Run: lua5.4 tests/lua/runner.lua tests/lua/test_repl.lua   (or via bin/attnlab, as run.sh does)
-- The host under test is $ATTNLAB_HOST or bin/attnlab; cases SKIP when it is missing. Needs
-- no terminal.
local T = require "harness"
local F = require "host_fixtures"
local cases, case = F.host_suite()   -- every case skips while the host is not built

local HOST, q, tmpscript = T.HOST, T.shquote, T.tmpscript
local run, host, has = F.run, F.host, F.has

-- The REPL with piped input (no readline): prompts go to stdout, as lua.c does.
case("host: piped REPL: multi-line function, expressions, =, results, errors keep it alive", function()
  local fake = os.tmpname()
  T.write_file(fake, F.FAKE_SRC)
  local input = table.concat({
    "function f(x)",
    "  return x * 2",
    "end",
    "f(21)",
    "error('oops')",
    "print('after error')",
    "1, 'a', nil",
    "=3+4",
    "Fake = dofile(" .. ("%q"):format(fake) .. ")",
    "Fake.new({1.5, 2}, {2})",
    "_PROMPT = 'PX> '",
    "return 'last'",
    "" }, "\n")
  local out, err, code = host("-i", input)
  os.remove(fake)
  T.eq(code, 0, nil, "exit status")
  T.truthy(out:match("^attnlab %S+ %(Lua 5%.4"), "version line first (-i implies -v): " .. out)
  has(out, "> >> >> > 42\n", "continuation prompts and f(21)")
  has(out, "after error\n", "the REPL survives an error")
  has(out, "1\ta\tnil\n", "several results, tab-separated")
  has(out, "> 7\n", "= prefix")
  has(out, "tensor([1.5000, 2.0000])\n[float32 tensor of shape (2,)]\n", "tensors print via attnlab.format")
  has(out, "PX> last\n", "_PROMPT")
  has(err, "stdin:1: oops\nstack traceback:\n", "error message with traceback")
end)

case("host: piped REPL: too many results to print is an error, not the end of the session", function()
  -- the printer's luaL_checkstack raised out of the loop: the REPL quit with status 1
  local out, err, code = host("-i", "table.unpack({}, 1, 999985)\n40 + 2\n")
  T.eq(code, 0, nil, "exit status (stderr: " .. err .. ")")
  has(err, "too many results to print (999985)", "stderr")
  has(out, "> 42\n", "the next line runs")
end)

case("host: piped REPL: an unfinished statement at end of input reports the syntax error", function()
  local out, err, code = host("-i", "function g(\n")
  T.eq(code, 0, nil, "exit status")
  has(out, "> >> ", "continuation prompt")
  has(err, "near <eof>", "syntax error")
end)

case("host: -i after a script keeps its globals; -e then -i", function()
  local script = tmpscript("y = 21\n")
  local out = host("-i " .. q(script), "print(y * 2)\n")
  has(out, "> 42\n", "global from the script")
  out = host([[-e "z = 5" -i]], "z + 1\n")
  has(out, "> 6\n", "global from -e")
  os.remove(script)
end)

case("host: Ctrl-C (SIGINT) stops a running script with 'interrupted!'", function()
  local t0 = os.time()
  -- --foreground: without it timeout signals the child and then its whole process group,
  -- and a second SIGINT that lands after the first was handled ends the process (as with
  -- lua.c), so the test would race timeout itself.
  local _, err, code = run("timeout --foreground --preserve-status -s INT 1 " .. q(HOST) .. [[ -e "while true do end"]])
  T.eq(code, 1, nil, "exit status")
  has(err, "interrupted!", "stderr")
  T.truthy(os.time() - t0 < 20, "took too long")
end)

case("host: Ctrl-C in the REPL stops the statement and the REPL goes on", function()
  local dir = T.tmpname()
  local sh = ([[
d=%s; mkdir -p "$d"
( printf 'io.write("LOOPING\\n") io.stdout:flush() while true do end\n'
  i=0; while [ ! -e "$d/sent" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done
  printf 'print("alive")\n' ) | %s -i >"$d/out" 2>"$d/err" &
pid=$!
i=0; while ! grep -q LOOPING "$d/out" 2>/dev/null && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done
sleep 0.3; kill -INT $pid; touch "$d/sent"
wait $pid; echo "rc=$?"; cat "$d/out"; echo "=====";  cat "$d/err"; rm -rf "$d"
]]):format(q(dir), q(HOST))
  local out = run("sh -c " .. q(sh))
  has(out, "rc=0\n", "exit status")
  has(out, "interrupted!", "stderr")
  has(out, "alive\n", "REPL alive after the interrupt")
end)

case("host: Tab completion offers al's lazy submodules before they are loaded", function()
  -- al.nn, al.data, al.stats ... come from al's __index function: al.da<Tab> offered nothing
  -- and al.n<Tab> no al.nn until the module had been used once
  local out, err, code = host([[-e "local c = debug.getregistry()['attnlab.host'].complete; ]]
    .. [[print(table.concat(c('al.da'), ' ')); print(table.concat(c('al.n'), ' ')); ]]
    .. [[print(rawget(al, 'data'), rawget(al, 'nn')); print(#c('al.nn.Lin') > 0)"]])
  T.eq(code, 0, nil, "exit status (stderr: " .. err .. ")")
  local da, n, raw, nn = out:match("^(.-)\n(.-)\n(.-)\n(.-)\n$")
  T.eq(da, "al.data", nil, "al.da<Tab>")
  T.truthy((" " .. n .. " "):find(" al.nn ", 1, true), "al.n<Tab> lacks al.nn: " .. tostring(n))
  T.eq(raw, "nil\tnil", nil, "completing does not load the modules")
  T.eq(nn, "true", nil, "al.nn.Lin<Tab> still completes (loading al.nn)")
end)

case("host: Tab completion offers a tensor's fields (x.grad, x.requires_grad) beside its methods", function()
  -- x.gr<Tab> offered only x.gather( x.ge( x.gelu( x.gt(: the fields mt_index answers were unknown
  local out, err, code = host([[-e "local c = debug.getregistry()['attnlab.host'].complete; x = al.zeros{2}; ]]
    .. [[print(table.concat(c('x.gr'), ' ')); print(table.concat(c('x.requires'), ' ')); ]]
    .. [[print(table.concat(c('x.is_l'), ' '), table.concat(c('x:gr'), ' '))"]])
  T.eq(code, 0, nil, "exit status (stderr: " .. err .. ")")
  T.eq(out, "x.grad x.grad_fn\nx.requires_grad x.requires_grad_(\nx.is_leaf\t\n")
end)

-- after ':' only functions are offered (t:n( is no method call); names starting "__" only when
-- the typed part does (t.<Tab> listed metamethod-like keys)
case("host: Tab completion after ':' offers functions only; '__' names only for a typed '_'", function()
  local out, err, code = host([[-e "local c = debug.getregistry()['attnlab.host'].complete; t = {n = 1, f = print, __x = 2}; ]]
    .. [[print(table.concat(c('t:'), ' ')); print(table.concat(c('t.'), ' ')); print(table.concat(c('t.__'), ' '))"]])
  T.eq(code, 0, nil, "exit status (stderr: " .. err .. ")")
  T.eq(out, "t:f(\nt.f( t.n\nt.__x\n")
end)

-- readline behaviour needs a terminal: tmux provides one when installed.
case("host: terminal REPL (tmux): banner, completion, Ctrl-C at the prompt and while running, history", function()
  if os.execute("command -v tmux >/dev/null 2>&1") ~= true then T.skip("tmux not installed") end
  local with_al = host([[-e "io.write(tostring(type(al) == 'table' and al.zeros ~= nil))"]]) == "true"
  local sock = ("attnlab_test_%d_%d"):format(os.time(), math.random(1 << 30))
  local hist = os.tmpname()
  local function tm(args) return os.execute("tmux -L " .. sock .. " " .. args .. " >/dev/null 2>&1") end
  local function screen()
    local p = io.popen("tmux -L " .. sock .. " capture-pane -p 2>/dev/null")
    local s = p:read("a"); p:close()
    return s
  end
  local function wait_for(pat, what)
    for _ = 1, 150 do
      local s = screen()
      if s:find(pat, 1, true) then return s end
      os.execute("sleep 0.1")
    end
    error(("%s: %q did not appear; screen:\n%s"):format(what, pat, screen()), 0)
  end
  local function keys(...)
    local a = {}
    for i, k in ipairs({ ... }) do a[i] = q(k) end
    tm("send-keys -t " .. sock .. " " .. table.concat(a, " "))
  end
  local function literal(s) tm("send-keys -t " .. sock .. " -l " .. q(s)) end
  local ok, e = pcall(function()
    assert(tm(("new-session -d -s %s -x 120 -y 40 %s"):format(sock,
      q("env ATTNLAB_HISTORY=" .. q(hist) .. " " .. q(HOST) .. "; echo HOST-EXIT=$?; sleep 30"))),
      "tmux new-session failed")
    wait_for("al.<tab> completes; help: al.help()", "banner")
    local s = screen()
    T.truthy(s:match("attnlab %S+ %(Lua 5%.4%.%d+%)"), "banner first line: " .. s)
    literal("string.fo"); keys("Tab")
    wait_for("> string.format(", "completion of string.fo")
    literal('"%d", 6 * 7)'); keys("Enter")
    wait_for("\n42\n", "completed call ran")
    literal("abc = {value = 1}"); keys("Enter")
    literal("abc.va"); keys("Tab")
    wait_for("> abc.value", "field completion")
    keys("Enter")
    wait_for("\n1\n", "field value")
    literal("half typed"); os.execute("sleep 0.3"); keys("C-c")
    wait_for("> half typed^C\n>", "Ctrl-C at the prompt")
    literal("while true do end"); keys("Enter")
    os.execute("sleep 0.5"); keys("C-c")
    wait_for("interrupted!", "Ctrl-C while running")
    literal("print('still here')"); keys("Enter")
    wait_for("\nstill here\n", "REPL alive")
    if with_al then  -- methods of a tensor userdata after ':'
      literal("t = al.zeros({2})"); keys("Enter")
      literal("t:nume"); keys("Tab")
      wait_for("> t:numel(", "tensor method completion")
      literal(")"); keys("Enter")
      wait_for("\n2\n", "t:numel()")
    end
    keys("C-d")
    wait_for("HOST-EXIT=0", "Ctrl-D exits with status 0")
  end)
  tm("kill-server")
  local h = T.read_file(hist) or ""
  os.remove(hist)
  if not ok then error(e, 0) end
  has(h, "abc = {value = 1}\n", "history file")
  has(h, "print('still here')\n", "history file")
end)

return cases
