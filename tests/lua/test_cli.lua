-- tests/lua/test_cli.lua -- the scripts as a newcomer meets them (issue 21): every script answers
-- --help (usage, options, an example; exit 0), an unknown option gets one line + the usage (exit
-- 2), and typical mistakes are ONE line naming the problem -- never a traceback, never a record.
-- Also the option parser itself (lua/attnlab/run/cli.lua) and ATTNLAB_NUM_THREADS / set_num_threads.
local al = require "attnlab"
local T = require "harness"
local cli = require "attnlab.cli"

local q = T.shquote

-- stdout, stderr, exit status of `HOST args` (env: a prefix like "ATTNLAB_NUM_THREADS=abc")
local function run(args, env) return T.run_host(args, { env = env }) end

local function lines(s) local n = 0 for _ in s:gmatch("[^\n]+") do n = n + 1 end return n end

-- one user error: status `code`, stderr starts with "<script>: " and contains every pattern,
-- no traceback, no Lua source position; `one_line`: the message is exactly one line
local function user_error(out, err, code, want_code, script, pats, one_line)
  T.eq(code, want_code, 0, "exit status (stderr: " .. err .. ")")
  assert(err:sub(1, #script + 2) == script .. ": ", "stderr does not start with '" .. script .. ": ': " .. err)
  assert(not err:find("traceback", 1, true), "a traceback: " .. err)
  assert(not err:find("scripts/[%w_]+%.lua:%d+:") and not err:find("attnlab/[%w_]+%.lua:%d+:"),
    "a Lua source position of our code: " .. err)
  assert(not err:find("-nan", 1, true), "-nan in: " .. err)
  for _, p in ipairs(pats) do assert(err:find(p, 1, true), ("stderr lacks %q: %s"):format(p, err)) end
  if one_line then T.eq(lines(err), 1, 0, "lines of: " .. err) end
  print("#   " .. err:gsub("\n", "\n#   "):gsub("#   $", ""))
end

local cases, case = T.suite()

-- ---- the parser -------------------------------------------------------------------------------
local SPEC = {
  name = "x.lua", usage = "bin/attnlab scripts/x.lua [--n N]",
  options = { { "n", "N", "a count", type = "posint", default = 3 }, { "dry-run", nil, "a flag" },
              { "names", "A,B", "names", type = "names" }, { "opt", "O", "raw", ["repeat"] = true, raw = true } },
  positional = { { "FILE", "a file" } },
  on_error = function(msg) error({ usage = msg }) end,
}
local function perr(argv, spec)
  local ok, e = pcall(cli.parse, spec or SPEC, argv)
  assert(not ok and type(e) == "table" and e.usage, "no usage error for " .. table.concat(argv, " ") .. ": " .. tostring(e))
  return e.usage
end
cases[#cases + 1] = { "cli.parse: defaults, --k v, --k=v, flags, lists, repeats, positionals", function()
  local o, rest = cli.parse(SPEC, { "f.lua", "--n", "5", "--dry-run", "--names=a,b", "--opt", "--p=1", "--opt", "x" })
  return { o.n, o.dry_run, o.names, o.opt, rest }
end, {}, { 5, true, { "a", "b" }, { "--p=1", "x" }, { "f.lua" } } }
cases[#cases + 1] = { "cli.parse: default when absent", function() return cli.parse(SPEC, {}).n end, {}, 3 }
case("cli.parse: usage errors name the option", function()
  T.eq(perr({ "--m", "1" }), "unknown option --m")
  T.eq(perr({ "--n" }), "--n needs a value (N)")
  T.eq(perr({ "--n", "0" }), "--n needs a positive integer, got '0'")
  T.eq(perr({ "--n", "2.5" }), "--n needs a positive integer, got '2.5'")
  T.eq(perr({ "--n", "--dry-run" }), "--n needs a value (N)")
  T.eq(perr({ "--dry-run=maybe" }), "--dry-run takes no value (got 'maybe')")
  T.eq(perr({ "a", "b" }), "unexpected argument 'b'")
  T.eq(perr({ "-x" }), "bad option '-x' (options are --name value)")
end)
case("cli.parse: \"count\" is a positive integer below 2^31; a name list has no empty or repeated entry", function()
  local spec = { name = "y.lua", options = { { "b", "B", "a batch", type = "count" }, { "names", "A,B", "names", type = "names" } },
                 on_error = SPEC.on_error }
  local function e(argv) return perr(argv, spec) end
  T.eq(cli.parse(spec, { "--b", "2147483647" }).b, 2147483647)
  T.eq(e({ "--b", "2147483648" }), "--b needs a positive integer below 2^31, got '2147483648'")
  T.eq(e({ "--b", "9223372036854775807" }), "--b needs a positive integer below 2^31, got '9223372036854775807'")
  T.eq(e({ "--b", "0" }), "--b needs a positive integer, got '0'")
  T.eq(cli.parse(spec, { "--names", "a,b" }).names, { "a", "b" })
  T.eq(e({ "--names", "a,,b" }), "--names needs a comma-separated list of names (no empty one), got 'a,,b'")
  T.eq(e({ "--names", "a," }), "--names needs a comma-separated list of names (no empty one), got 'a,'")
  T.eq(e({ "--names", "a,b,a" }), "--names needs a comma-separated list of names, each once ('a' is given twice), got 'a,b,a'")
end)
-- every value type of the parser, at the values a user types: each is read as train.lua and the
-- scripts need it (1e-3 is the float 0.001, -2 an integer, 2.0 the integer 2), and each bad one
-- is a usage error naming the option, never a NaN, an infinity or a silently dropped entry
case("cli.parse: each value type reads what a user types and refuses the rest", function()
  local spec = { name = "z.lua", positional = { { "A", "a" }, { "B", "b" } }, positional_required = 1,
    options = { { "i", "I", "int", type = "int" }, { "nn", "N", "nonneg", type = "nonneg" },
      { "x", "X", "number", type = "number" }, { "p", "P", "posnum", type = "posnum" }, { "b", "B", "bool", type = "bool" },
      { "l", "L", "ints", type = "ints" }, { "a", "A", "auto", type = "auto" }, { "dry-run", nil, "a flag" } },
    on_error = SPEC.on_error }
  local function p(argv) return (cli.parse(spec, argv)) end
  local function e(argv) return perr(argv, spec) end
  T.eq(p({ "f", "--i", "-3", "--nn", "0", "--x", "-2.5", "--p", "1e-3", "--l", "3,1,2" }),
    { i = -3, nn = 0, x = -2.5, p = 0.001, l = { 3, 1, 2 } })
  for _, c in ipairs({ { "1", true }, { "yes", true }, { "true", true }, { "0", false }, { "no", false }, { "false", false } }) do
    T.eq(p({ "f", "--b", c[1] }).b, c[2], nil, "--b " .. c[1] .. ": ")
  end
  -- auto (every train.lua key): booleans, integers (2.0 and 2e3 too), floats, else the string
  for _, c in ipairs({ { "true", true }, { "false", false }, { "3", 3, "integer" }, { "-2", -2, "integer" },
                       { "2.0", 2, "integer" }, { "2e3", 2000, "integer" }, { "1e-3", 0.001, "float" },
                       { "0.5", 0.5, "float" }, { "-0.25", -0.25, "float" }, { "entmax:1.5", "entmax:1.5" } }) do
    local v = p({ "f", "--a", c[1] }).a
    T.eq(v, c[2], nil, "--a " .. c[1] .. ": ")
    if c[3] then T.eq(math.type(v), c[3], nil, "--a " .. c[1] .. " type: ") end
  end
  -- a flag given a value takes it as a bool; its name with '_' for '-' is the same option
  T.eq({ p({ "f", "--dry-run=false" }).dry_run, p({ "f", "--dry-run=1" }).dry_run, p({ "f", "--dry_run" }).dry_run },
    { false, true, true })
  -- a negative number is a value, or a positional argument, never an option
  T.eq({ cli.parse(spec, { "-5", "--x", "-1e-2" }) }, { { x = -0.01 }, { "-5" } })
  T.eq(e({ "f", "--x", "nan" }), "--x needs a finite number, got 'nan'")
  T.eq(e({ "f", "--x", "1e999" }), "--x needs a finite number, got '1e999'")   -- inf
  T.eq(e({ "f", "--x", "-inf" }), "--x needs a finite number, got '-inf'")
  T.eq(e({ "f", "--p", "0" }), "--p needs a number > 0, got '0'")
  T.eq(e({ "f", "--p", "1e999" }), "--p needs a number > 0, got '1e999'")   -- tonumber gives inf
  T.eq(e({ "f", "--p", "-1" }), "--p needs a number > 0, got '-1'")
  T.eq(e({ "f", "--nn", "-1" }), "--nn needs an integer >= 0, got '-1'")
  T.eq(e({ "f", "--i", "1.5" }), "--i needs an integer, got '1.5'")
  T.eq(e({ "f", "--b", "maybe" }), "--b needs true or false, got 'maybe'")
  T.eq(e({ "f", "--l", "1,0" }), "--l needs a comma-separated list of positive integers, got '1,0'")
  T.eq(e({ "f", "--l", "1,,2" }), "--l needs a comma-separated list of positive integers, got '1,,2'")
  T.eq(e({}), "missing A")
  T.eq(e({ "f", "g", "h" }), "unexpected argument 'h'")
end)
-- parse_pairs (the S2S scripts' --a.b value form): nested keys add up, negative numbers are values
case("cli.parse_pairs: nested keys merge, negative numbers and lists are values, false is false", function()
  local o, words = cli.parse_pairs({ "run", "--a.b", "1", "--a.c", "-2", "--lr", "-0.5", "--l", "-1,2.5", "--f", "false",
    "--t", "--s", "x", "--h", ".5", "--last" }, 1)
  T.eq(o, { a = { b = 1, c = -2 }, lr = -0.5, l = { -1, 2.5 }, f = false, t = true, s = "x", h = 0.5, last = true })
  T.eq(words, { "run" })
  T.eq({ math.type(o.a.b), math.type(o.l[1]), math.type(o.l[2]) }, { "integer", "integer", "float" })
end)
case("cli.help lists usage, options and --help", function()
  local h = cli.help(SPEC)
  for _, w in ipairs({ "usage: bin/attnlab scripts/x.lua", "--n N", "a count", "--dry-run", "--help, -h", "FILE" }) do
    assert(h:find(w, 1, true), "help lacks " .. w .. ":\n" .. h)
  end
end)
case("cli.clean: no Lua position, nan not -nan", function()
  T.eq(cli.clean("scripts/train.lua:12: lua/attnlab/x.lua:3: bad -nan"), "bad nan")
end)

-- ---- every script: --help, an unknown option ------------------------------------------------------
-- every scripts/*.lua, listed from the folder so that a new script is covered the day it lands
local SCRIPTS = {}
for f in io.popen("ls scripts/*.lua"):lines() do SCRIPTS[#SCRIPTS + 1] = f:match("^scripts/([%w_]+)%.lua$") end
assert(#SCRIPTS >= 15, "scripts/*.lua not found from " .. os.getenv("PWD"))
for _, s in ipairs(SCRIPTS) do
  case(("%s.lua --help: usage, options, example; exit 0"):format(s), function()
    local out, err, code = run("scripts/" .. s .. ".lua --help")
    T.eq(code, 0, 0, "exit status: " .. err)
    T.eq(err, "", 0, "stderr")
    for _, w in ipairs({ "usage: bin/attnlab scripts/" .. s .. ".lua", "options:", "--help", "example" }) do
      assert(out:find(w, 1, true), ("--help lacks %q:\n%s"):format(w, out))
    end
  end)
  case(("%s.lua --no-such-option: one line + usage, exit 2"):format(s), function()
    local pre = (s == "distill") and "run " or (s == "s2s_strategies") and "summary --preset experiments/s2s/cifar_small.lua " or ""
    local out, err, code = run("scripts/" .. s .. ".lua " .. pre .. "--no-such-option 1")
    user_error(out, err, code, 2, s .. ".lua", { "unknown option --no-such-option", "usage: bin/attnlab scripts/" .. s .. ".lua" })
  end)
end

-- the runnable scripts of experiments/ (the other files there describe experiments; see below)
for _, s in ipairs({ "classifier/parity_topk_ties", "classifier/parity_table", "classifier/summarize" }) do
  local path, name = "experiments/" .. s .. ".lua", s:match("([%w_]+)$") .. ".lua"
  case(("%s --help exits 0; an unknown option is a usage error pointing at its own --help"):format(path), function()
    local out, err, code = run(path .. " --help")
    T.eq(code, 0, 0, "exit status: " .. err)
    assert(out:find("usage: bin/attnlab " .. path, 1, true), "--help lacks the usage line:\n" .. out)
    out, err, code = run(path .. " --no-such-option 1")
    user_error(out, err, code, 2, name, { "unknown option --no-such-option", "(bin/attnlab " .. path .. " --help lists" })
  end)
end
case("parity_topk_ties.lua STEPS_BEFORE abc / 0, parity_table.lua on a folder without records: one line", function()
  local _, err, code = run("experiments/classifier/parity_topk_ties.lua abc")
  user_error(nil, err, code, 2, "parity_topk_ties.lua", { "STEPS_BEFORE needs an integer >= 1, got 'abc'" })
  _, err, code = run("experiments/classifier/parity_topk_ties.lua 0")
  user_error(nil, err, code, 2, "parity_topk_ties.lua", { "got '0'" })
  _, err, code = run("experiments/classifier/parity_table.lua /proc/self")
  user_error(nil, err, code, 1, "parity_table.lua", { "no records", "/proc/self" }, true)
end)

case("bench_train.lua ends with one goal line per thread count, naming the slowest sparse normalizer", function()
  local out, err, code = run("scripts/bench_train.lua --threads 1,2 --names softmax,sparsemax --rounds 1 --no-torch")
  T.eq(code, 0, 0, "exit status: " .. err)
  for t = 1, 2 do
    local line = out:match("\n  " .. t .. " thread%(s%), N = 17: ([^\n]*)")
    assert(line, "no goal line for " .. t .. " thread(s):\n" .. out)
    assert(line:find("softmax vs PyTorch not measured", 1, true), line)
    local r, verdict = line:match("slowest sparse normalizer sparsemax ([%d.]+)x softmax %(goal >= 0.80: (%a+)%)")
    assert(r, line)
    if math.abs(tonumber(r) - 0.80) > 0.001 then   -- printed to 3 digits: at the line either verdict is right
      T.eq(verdict, tonumber(r) >= 0.80 and "met" or "MISSED", 0, line)
    end
  end
end)

case("bench_train.lua --names without softmax still times softmax, the baseline of every ratio", function()
  local out, err, code = run("scripts/bench_train.lua --threads 1 --patch 32 --names topk:0.5 --rounds 1 --no-torch")
  T.eq(code, 0, 0, "exit status: " .. err)
  assert(out:find("\n| softmax    |", 1, true), "no softmax row:\n" .. out)
  local ratio = out:match("\n| topk:0.5   | +[%d]+ | +([%d.]+)x |")
  assert(ratio and tonumber(ratio) > 0, "no top-k row with a ratio to softmax:\n" .. out)
  assert(out:find("slowest sparse normalizer topk:0.5", 1, true), out)
end)

case("scripts/bench/ab.sh: pair-by-pair A/B of two commands; a failing command or bad -n is an error", function()
  local out, code = T.sh("sh scripts/bench/ab.sh -n 3 -w 0 'sleep 0.3' 'sleep 0.1'")
  T.eq(code, 0, 0, "exit status: " .. out)
  local ratio = tonumber(out:match("A/B pair by pair: median ([%d.]+)"))
  assert(ratio and ratio > 1.8 and ratio < 4, "A/B of sleep 0.3 against sleep 0.1: " .. out)
  local _, n = out:gsub("\npair %d", "")
  T.eq(n + (out:match("^pair 1") and 1 or 0), 3, 0, "pairs printed: " .. out)
  out, code = T.sh("sh scripts/bench/ab.sh -n 2 -w 0 false true")
  T.eq(code, 1, 0, "exit status of a failing command")
  assert(out:find("the command failed", 1, true) and out:find(": false", 1, true), out)
  out, code = T.sh("sh scripts/bench/ab.sh -n 0 true true")
  T.eq(code, 2, 0, "exit status of -n 0")
  assert(out:find("-n needs an integer >= 1, got '0'", 1, true), out)
end)

-- A file that only describes an experiment (a sweep grid, an S2S preset) returns a table; run as
-- a script it would do nothing and exit 0, which a batch job takes for success.
case("bin/attnlab on a sweep experiment, an S2S preset or the S2S study file: one line naming the command that runs it, exit 1", function()
  local out, err, code = run("experiments/normalizers/full.lua")
  T.eq(code, 1, 0, "exit status")
  T.eq(out, "", 0, "stdout")
  T.eq(lines(err), 1, 0, "lines of: " .. err)
  -- the host by its absolute path (the build under test: bin/attnlab, or the sanitizer build)
  local host = err:match("run it with: (/%S+) scripts/sweep%.lua experiments/normalizers/full%.lua %(")
  assert(err:find("describes a sweep experiment", 1, true) and host, err)
  T.eq(T.sh(("test -x %s && echo x"):format(q(host))), "x\n", 0, "the named host is an executable: " .. host)
  out, err, code = run("experiments/s2s/cifar_small.lua")
  T.eq(code, 1, 0, "exit status")
  assert(err:find("is an S2S preset", 1, true) and
         err:find("s2s_strategies.lua EXPERIMENT --preset experiments/s2s/cifar_small.lua", 1, true), err)
  out, err, code = run("experiments/s2s/study.lua")   -- returns a function: says so itself
  T.eq(code, 1, 0, "exit status")
  assert(err:find("holds the S2S study's experiments and runs nothing by itself", 1, true), err)
  -- any other returned value is the script's business, as with lua
  local f = os.tmpname()
  T.write_file(f, "return { datasets = 1 }, 2\n")
  out, err, code = run(q(f))
  os.remove(f)
  T.eq(code, 0, 0, "exit status of a script returning another table: " .. err)
end)

-- ---- train_steps.lua: the profilers' workload computes the same at 1 and 2 threads -----------------
case("train_steps.lua --steps 2: a finite loss, the same digits at 1 and 2 threads", function()
  T.need_cores(2)
  local losses = {}
  for _, t in ipairs({ 1, 2 }) do
    local out, err, code = run("scripts/train_steps.lua --steps 2 --threads " .. t)
    T.eq(code, 0, 0, "exit status: " .. err)
    local l = out:match("last loss (%S+)")
    assert(l and tonumber(l) and tonumber(l) > 0 and tonumber(l) < 10, "no finite loss in: " .. out)
    losses[t] = l
  end
  T.eq(losses[2], losses[1], 0, "loss at 2 threads vs 1")
end)

case("train_steps.lua --threads 100000 prints the threads it used (the cores), not the number asked for", function()
  local out, err, code = run("scripts/train_steps.lua --steps 1 --threads 100000")
  T.eq(code, 0, 0, "exit status: " .. err)
  T.eq(tonumber(out:match(", (%d+) thread%(s%)")), al.config().cores, 0, out)
end)

-- ---- train.lua: typical mistakes ----------------------------------------------------------------
local function train_err(args, pats, code)
  local tmp = T.tmpname()
  local out, err, rc = run("scripts/train.lua " .. args .. " --out " .. tmp)
  user_error(out, err, rc, code or 2, "train.lua", pats, true)
  T.eq(T.read_file(tmp), nil, 0, "a record was written")
end
case("train.lua with no arguments: usage, exit 2 (no 10-epoch run)", function()
  local out, err, code = run("scripts/train.lua")
  user_error(out, err, code, 2, "train.lua", { "no options given", "usage:" })
end)
case("train.lua: an option of the other kind of dataset, a crop wider than the image, an overflowing batch: refused up front", function()
  train_err("--dataset fashion_mnist --padding masked", { "padding applies to text datasets only, not fashion_mnist" })
  train_err("--dataset fashion_mnist --vocab_size 50", { "vocab_size applies to text datasets only" })
  train_err("--dataset marker --patch 4", { "patch applies to image datasets only, not marker" })
  train_err("--dataset marker --hflip true", { "hflip applies to image datasets only" })
  train_err("--dataset fashion_mnist --crop_pad 1000", { "crop_pad must be below the image side (28 for fashion_mnist), got 1000" })
  train_err("--dataset fashion_mnist --eval_batch 9223372036854775807", { "eval_batch must be below 2^31, got 9223372036854775807" })
  train_err("--normalizer entmax:1e300", { "the alpha of entmax:<alpha> must be a number from 1.0001 (nearer 1, float32 cannot compute it accurately: use softmax) to 3.4e38 (what a float32 holds), got '1e300'" })
end)
-- these were refused only when the data was read or the model built, as failed runs (exit 1)
case("train.lua: an MLP of width 0, a vocabulary of 2, a val split as large as the training set: usage errors, no record", function()
  train_err("--dataset fashion_mnist --mlp_ratio 0.001", { "mlp_ratio must be at least 1/dim = 0.015625", "got 0.001" })
  train_err("--dataset newsgroups20 --vocab_size 2", { "vocab_size must be an integer >= 3", "got 2" })
  -- (Fashion-MNIST is installed with the dependencies; 20 Newsgroups may be absent)
  train_err("--dataset fashion_mnist --val 60000 --epochs 1", { "val = 60000 leaves no training examples: fashion_mnist has 60000; give at most 59999" })
  local tmp = T.tmpname()
  local out, err, rc = run("scripts/train.lua --dataset newsgroups20 --vocab_size 99999999 --epochs 1 --out " .. tmp)
  if err:find("file not found", 1, true) then T.skip("20 Newsgroups not found") end
  user_error(out, err, rc, 2, "train.lua", { "vocab_size = 99999999 is more than the", "ids newsgroups20's training split has" }, true)
  T.eq(T.read_file(tmp), nil, 0, "a record was written")
end)
case("train.lua --test_limit 0: refused up front, no record", function()
  train_err("--dataset kmnist --test_limit 0", { "test_limit must be a positive integer", "got 0" })
end)
case("train.lua --train_limit 0 / -5: refused up front", function()
  train_err("--dataset kmnist --train_limit 0", { "train_limit must be a positive integer" })
  train_err("--dataset kmnist --train_limit -5", { "train_limit must be a positive integer", "got -5" })
end)
case("train.lua --seed 0 and other bad values: one line each", function()
  train_err("--dataset kmnist --seed 0", { "seed must be a positive integer, got 0" })
  train_err("--dataset kmnist --epochs 1.5", { "epochs must be a positive integer" })
  train_err("--dataset kmnist --lr nan", { "lr must be", "got 'nan'" })
  train_err("--dataset kmnist --progress maybe", { "progress must be true or false", "'maybe'" })
  train_err("--dataset mnist", { "unknown dataset 'mnist'", "known:" })
  train_err("--dataset kmnist --normalizer topk:0", { "'topk:0'", "ratio", "(0, 1]", "got '0'" })
end)
case("train.lua --config: missing, not a table, raising, unknown key, syntax error: one line, exit 2", function()
  local d = os.tmpname()
  T.write_file(d .. "a.lua", "return 5")
  T.write_file(d .. "b.lua", "error('boom')")
  T.write_file(d .. "c.lua", "return { epochz = 1 }")
  T.write_file(d .. "e.lua", "return {")
  train_err("--config /nonexistent/cfg.lua", { "--config /nonexistent/cfg.lua: no such file" })
  train_err("--config " .. d .. "a.lua", { "returned a number, want a table" })
  train_err("--config " .. d .. "b.lua", { "raised an error: boom" })
  train_err("--config " .. d .. "c.lua", { "unknown key 'epochz'" })
  train_err("--config " .. d .. "e.lua", { "--config " .. d .. "e.lua: ", "near <eof>" })
  for _, x in ipairs({ "", "a.lua", "b.lua", "c.lua", "e.lua" }) do os.remove(d .. x) end
end)
-- "command-line keys win" over the --config file's: the file's seed 0 (refused) is replaced by
-- --seed 3, so the run gets as far as --out (also refused, before any data is read); a key only
-- the file gives is taken (its epochs 0 is refused by name)
case("train.lua --config: a key given on the command line wins over the file's; the file's other keys apply", function()
  local d = T.tmpdir("cli")
  T.write_file(d .. "/cfg.lua", "return { seed = 0, dataset = 'kmnist', progress = false }")
  local out, err, code = run(("scripts/train.lua --config %s --seed 3 --out %s/missing/r.json"):format(d .. "/cfg.lua", d))
  user_error(out, err, code, 2, "train.lua", { "--out " .. d .. "/missing/r.json" }, true)
  T.write_file(d .. "/cfg2.lua", "return { seed = 2, epochs = 0 }")
  out, err, code = run(("scripts/train.lua --config %s --dataset kmnist --out %s/missing/r.json"):format(d .. "/cfg2.lua", d))
  user_error(out, err, code, 2, "train.lua", { "epochs must be a positive integer, got 0" }, true)
  T.rm_rf(d)
end)
case("train.lua --config raising a table / giving normalizer = {}, --embed_std on images, --adam_eps 0: one line, exit 2, no record", function()
  local d = T.tmpdir("cli")
  T.write_file(d .. "/t.lua", "error({})")
  T.write_file(d .. "/n.lua", "return { normalizer = {} }")
  train_err("--config " .. q(d .. "/t.lua"), { "--config " .. d .. "/t.lua raised a non-string error (a table)" })
  train_err("--config " .. q(d .. "/n.lua"), { "normalizer must be a string (a name such as 'softmax' or 'entmax15'), got a table" })
  -- (recorded, never applied: an image model has no token embedding)
  train_err("--dataset kmnist --embed_std 1e300", { "embed_std applies to text datasets only, not kmnist" })
  -- (refused by AdamW as "eps" once the data was read)
  train_err("--dataset kmnist --adam_eps 0", { "adam_eps must be a finite number > 0, got 0" })
  T.eq(al.train.config({ dataset = "kmnist", embed_std = 0.02 }).embed_std, 0.02, 0, "the default is no choice")
  T.rm_rf(d)
end)
case("train.lua --out / --checkpoint where nothing can be written: refused before training, one line", function()
  local d = T.tmpdir("cli")   -- a folder of our own: d/missing surely does not exist
  local args = " --dataset kmnist --epochs 1 --train_limit 64 --test_limit 32 --progress false"
  local out, err, code = run("scripts/train.lua --out " .. d .. "/missing/run.json" .. args)
  user_error(out, err, code, 2, "train.lua", { "--out " .. d .. "/missing/run.json", "cannot create a file in " .. d .. "/missing" }, true)
  out, err, code = run("scripts/train.lua --out " .. d .. args)
  user_error(out, err, code, 2, "train.lua", { "--out " .. d .. ": it is a folder" }, true)
  out, err, code = run("scripts/train.lua --checkpoint " .. d .. "/missing/c.ckpt" .. args)
  user_error(out, err, code, 2, "train.lua", { "--checkpoint " .. d .. "/missing/c.ckpt" }, true)
  assert(not out:find("epoch", 1, true), "it trained: " .. out)
  -- the library checks too (a REPL user's al.train.run), and leaves no probe file behind
  local okr, msg = pcall(al.train.run, { dataset = "kmnist", epochs = 1, out = d .. "/missing/run.json" })
  assert(not okr and tostring(msg):find("cannot write the record to " .. d .. "/missing/run.json", 1, true), tostring(msg))
  T.eq(require("attnlab.util").writable_path(d .. "/r.json"), true, 0, "a writable folder")
  local p = io.popen("ls -A " .. q(d))
  T.eq(p:read("a"), "", 0, "probe files left")
  p:close()
  T.rm_rf(d)
end)
case("train.lua: a tiny run prints a measured speed, never '0.0 img/s'", function()
  T.need_data(al.data.kmnist, { split = "test", normalize = false }, "KMNIST")
  local out, err, code = run("scripts/train.lua --dataset kmnist --epochs 1 --train_limit 64 --test_limit 32 --batch_size 64 --progress false")
  T.eq(code, 0, 0, err)
  assert(not out:find(" 0.0 img/s", 1, true) and out:find("img/s train", 1, true), out)
end)

case("train.lua resumed from an edited final checkpoint: exit 1, one line naming what is wrong, no record", function()
  T.need_data(al.data.fashion_mnist, { split = "test", normalize = false }, "Fashion-MNIST")
  local d = T.tmpdir("cli")
  local ck, rec = d .. "/c.ckpt", d .. "/r.json"
  local args = ("scripts/train.lua --dataset fashion_mnist --epochs 2 --train_limit 256 --test_limit 128 --threads 1 " ..
    "--progress false --checkpoint %s --out %s"):format(q(ck), q(rec))
  local out, err, code = run(args)
  T.eq(code, 0, 0, err)
  local good = T.read_file(ck)
  -- a checkpoint rewritten as fit.lua writes them (tensors + metadata), edit(sd, state) changing it
  local function edited(edit)
    T.write_file(ck, good)
    local sd, meta = al.load(ck)
    local st = al.json.decode(meta.state)
    edit(sd, st)
    meta.state = al.json.encode(st)
    local fit = require "attnlab.run.fit"   -- (a checkpoint's tensor checksum, where fit writes one: made anew)
    if meta.tensors_sha256 ~= nil and fit.tensors_digest then meta.tensors_sha256 = fit.tensors_digest(sd) end
    al.save(ck, sd, meta)
    os.remove(rec)
  end
  local function refused(edit, pats)
    edited(edit)
    out, err, code = run(args)
    user_error(out, err, code, 1, "train.lua", pats, true)
    T.eq(T.read_file(rec), nil, 0, "a record was written")
  end
  -- one weight 3e38 (the loss stays finite): the re-evaluated final accuracy is not the last epoch's
  refused(function(sd)
    local w = sd["model.head.weight"]:clone()
    w:view(-1)[1] = 3e38
    sd["model.head.weight"] = w
  end, { "checkpoint " .. ck .. " is corrupt", "differs from the last epoch's", "delete it", "no record written" })
  -- histories no valid record can hold: refused on resume, naming the entry
  refused(function(_, st) st.history[1].epoch = 2 end, { "checkpoint " .. ck .. " is corrupt (history[1].epoch is 2, want 1)" })
  refused(function(_, st) st.history[1].lr = -1 end, { "history[1].lr is -1, want a finite number >= 0" })
  refused(function(_, st) st.history[2].seconds = -5 end, { "history[2].seconds is -5, want a finite number >= 0" })
  -- the untouched checkpoint still resumes to a valid record
  edited(function() end)
  out, err, code = run(args)
  T.eq(code, 0, 0, err)
  local r, why = require("attnlab.report.record").read(rec)
  assert(r, why)
  T.rm_rf(d)
end)

-- ---- S2S scripts ---------------------------------------------------------------------------------
case("profile.lua --model missing / garbage / absent: one line", function()
  local out, err, code = run("scripts/profile.lua --model /nonexistent/m.safetensors")
  user_error(out, err, code, 1, "profile.lua", { "/nonexistent/m.safetensors", "No such file" }, true)
  local g = os.tmpname()
  T.write_file(g, "this is not a model file at all")
  out, err, code = run("scripts/profile.lua --model " .. g)
  os.remove(g)
  user_error(out, err, code, 1, "profile.lua", { g, "not a safetensors file?" }, true)
  out, err, code = run("scripts/profile.lua")
  user_error(out, err, code, 2, "profile.lua", { "--model FILE (or --preset FILE) is required" })
end)
case("distill.lua run --preset nonexistent.lua: one line", function()
  local out, err, code = run("scripts/distill.lua run --preset nonexistent.lua")
  user_error(out, err, code, 1, "distill.lua", { "preset nonexistent.lua: no such file" }, true)
  out, err, code = run("scripts/distill.lua")
  user_error(out, err, code, 2, "distill.lua", { "no subcommand given", "usage:" })
  out, err, code = run("scripts/distill.lua train")
  user_error(out, err, code, 2, "distill.lua", { "unknown subcommand 'train'" })
end)
case("distill.lua run --strategy layer_aware:9 (a 2-layer teacher): one line", function()
  local d = T.tmpname()
  local out, err, code = run(("scripts/distill.lua run --teacher tests/ref/vit_fixture.safetensors --heads 2 --strategy layer_aware:9 " ..
    "--dataset cifar10 --train_limit 20 --test_limit 20 --out %s"):format(d))
  T.rm_rf(d)
  if err:find("file not found", 1, true) then T.skip("CIFAR-10 not found") end
  user_error(out, err, code, 1, "distill.lua", { "layer_aware", "k must be in 1..2, got 9" }, true)
end)

case("distill.lua teacher --save / --record where nothing can be written: refused before training", function()
  local d = T.tmpname()
  local args = " --preset experiments/s2s/cifar_small.lua --dataset cifar10 --epochs 1 --train_limit 20 --test_limit 20 --progress false --out " .. q(d)
  local out, err, code = run("scripts/distill.lua teacher --save " .. d .. "/missing/t.safetensors" .. args)
  user_error(out, err, code, 2, "distill.lua", { "cannot write the model to " .. d .. "/missing/t.safetensors", "cannot create a file" }, true)
  out, err, code = run("scripts/distill.lua teacher --record " .. d .. "/missing/t.json" .. args)
  T.rm_rf(d)
  user_error(out, err, code, 2, "distill.lua", { "cannot write the record to " .. d .. "/missing/t.json" }, true)
end)
case("distill.lua run with a timm teacher that records no heads, and no --heads: one line naming the file", function()
  local d = T.tmpname()   -- distill.lua makes its --out folder: a temporary one, removed after
  local out, err, code = run("scripts/distill.lua run --teacher tests/ref/vit_fixture.safetensors --strategy layer_aware:1 " ..
    "--dataset cifar10 --train_limit 20 --test_limit 20 --out " .. q(d))
  T.rm_rf(d)
  if err:find("file not found", 1, true) then T.skip("CIFAR-10 not found") end
  user_error(out, err, code, 1, "distill.lua", { "tests/ref/vit_fixture.safetensors does not record its head count" }, true)
end)

case("distill.lua bench --sizes abc: a usage error, no measurement over nothing recorded", function()
  local d = T.tmpname()
  local out, err, code = run("scripts/distill.lua bench --sizes abc --out " .. d)
  user_error(out, err, code, 2, "distill.lua", { "--sizes needs positive integers", "'abc'" })
  T.eq(T.read_file(d .. "/resolution.json"), nil, 0, "a record was written")
end)
case("sweep.lua: options that go with others say so", function()
  local out, err, code = run("scripts/sweep.lua normalizers/demo --slurm --wait")
  user_error(out, err, code, 2, "sweep.lua", { "--wait goes with --submit" })
  out, err, code = run("scripts/sweep.lua normalizers/demo --max-parallel 3")
  user_error(out, err, code, 2, "sweep.lua", { "--max-parallel goes with --slurm" })
  out, err, code = run("scripts/sweep.lua --task")
  user_error(out, err, code, 2, "sweep.lua", { "--task needs MANIFEST and a positive integer INDEX" })
end)

-- ---- input validation of the S2S, report and bench scripts ------------------------------------------
-- each case below works in a fresh folder of its own under /tmp (T.tmpdir), removed with T.rm_rf

case("s2s_strategies.lua summary --out unwritable / a file / --threads 0: one line before any work, exit 2", function()
  local d = T.tmpdir("cli")
  T.write_file(d .. "/file", "x")
  local pre = "scripts/s2s_strategies.lua summary --preset experiments/s2s/cifar_small.lua --quick "
  local out, err, code = run(pre .. "--out /proc/attnlab-no/x")
  user_error(out, err, code, 2, "s2s_strategies.lua", { "cannot create the output folder /proc/attnlab-no/x" })
  assert(not out:find("wrote", 1, true), "claims a write: " .. out)
  out, err, code = run(pre .. "--out " .. q(d .. "/file"))
  user_error(out, err, code, 2, "s2s_strategies.lua", { d .. "/file" })
  assert(not out:find("wrote", 1, true), "claims a write: " .. out)
  out, err, code = run(pre .. "--threads 0 --out " .. q(d .. "/o"))
  user_error(out, err, code, 2, "s2s_strategies.lua", { "--threads needs a positive integer, got '0'" })
  T.rm_rf(d)
end)
case("S2S scripts: a --key value that is not JSON, or a list with a non-number: a usage error naming the option", function()
  local out, err, code = run("scripts/distill.lua eval --model M --halting '{bad json'")
  user_error(out, err, code, 2, "distill.lua", { "--halting: '{bad json' is not valid JSON" })
  out, err, code = run("scripts/profile.lua --model M --limit '[1,'")
  user_error(out, err, code, 2, "profile.lua", { "--limit: '[1,' is not valid JSON", "end of input" })
  out, err, code = run("scripts/distill.lua bench --sizes '['")
  user_error(out, err, code, 2, "distill.lua", { "--sizes: '[' is not valid JSON" })
  out, err, code = run("scripts/distill.lua bench --sizes 224,.,32")
  user_error(out, err, code, 2, "distill.lua", { "--sizes: '224,.,32' is not a comma list of numbers", "'.'" })
  -- the library form (no spec): an error without a Lua position
  local ok, e = pcall(cli.parse_pairs, { "--a", "{x" }, 1)
  assert(not ok and tostring(e):find("^%-%-a: '{x' is not valid JSON"), tostring(e))
  T.eq(cli.parse_pairs({ "--a", '{"b":1}', "--c", "1,2" }, 1), { a = { b = 1 }, c = { 1, 2 } })
end)
case("mlp_fashion.lua --batch 2^63 - 1: refused up front (it ran no step and reported an accuracy)", function()
  local out, err, code = run("scripts/mlp_fashion.lua --limit 100 --batch 9223372036854775807")
  user_error(out, err, code, 2, "mlp_fashion.lua", { "--batch needs a positive integer below 2^31, got '9223372036854775807'" })
  T.eq(out, "", 0, "stdout")
end)
case("bench_train.lua --names with an empty or a repeated name: a usage error (dropped silently / timed twice)", function()
  local out, err, code = run("scripts/bench_train.lua --no-torch --rounds 1 --names softmax,,entmax15")
  user_error(out, err, code, 2, "bench_train.lua", { "--names needs a comma-separated list of names (no empty one), got 'softmax,,entmax15'" })
  out, err, code = run("scripts/bench_train.lua --no-torch --rounds 1 --names softmax,softmax")
  user_error(out, err, code, 2, "bench_train.lua", { "('softmax' is given twice)" })
end)
case("analyze.lua on a regular file / --plots '': one line saying so", function()
  local d = T.tmpdir("cli")
  T.write_file(d .. "/afile", "x")
  local out, err, code = run("scripts/analyze.lua " .. q(d .. "/afile"))
  user_error(out, err, code, 1, "analyze.lua", { d .. "/afile is not a folder" }, true)
  out, err, code = run("scripts/analyze.lua " .. q(d .. "/nothere"))
  user_error(out, err, code, 1, "analyze.lua", { "no such folder: " .. d .. "/nothere" }, true)
  out, err, code = run("scripts/analyze.lua " .. q(d) .. " --plots ''")
  user_error(out, err, code, 2, "analyze.lua", { "--plots needs a folder path, got ''" }, true)
  T.eq(T.sh("ls -A " .. q(d)), "afile\n", 0, "files written")
  T.rm_rf(d)
end)
case("profile.lua / distill.lua --quick without --preset: a usage error (it did nothing)", function()
  local out, err, code = run("scripts/profile.lua --model tests/ref/vit_fixture.safetensors --heads 2 --quick")
  user_error(out, err, code, 2, "profile.lua", { "--quick goes with --preset FILE" })
  out, err, code = run("scripts/distill.lua eval --model tests/ref/vit_fixture.safetensors --quick")
  user_error(out, err, code, 2, "distill.lua", { "eval: --quick goes with --preset FILE" })
end)
case("bench_mixers.lua --heads 5: a usage error, not an assertion from the model", function()
  local out, err, code = run("scripts/bench_mixers.lua --no-torch --heads 5")
  user_error(out, err, code, 2, "bench_mixers.lua", { "--heads needs a divisor of the width 192", "'5'" })
end)
case("distill.lua bench: impossible keep rates, counts and sizes refused up front, no record", function()
  local d = T.tmpdir("cli")
  local function bench_err(args, pats)
    local out, err, code = run("scripts/distill.lua bench " .. args .. " --out " .. q(d))
    user_error(out, err, code, 2, "distill.lua", pats)
  end
  bench_err("--keep_rates 1.5,0.7", { "--keep_rates needs one keep rate in (0, 1]", "'1.5,0.7'" })
  bench_err("--keep_rates -1,-3", { "--keep_rates needs one keep rate in (0, 1]" })
  bench_err("--keep_rates '[1e999,0.5]'", { "--keep_rates: '[1e999,0.5]' is not valid JSON: number 1e999 is out of the double range" })
  bench_err("--keep_rates 0/0,1", { "--keep_rates needs", "'0/0,1'" })
  bench_err("--keep_rates 0.5", { "--keep_rates needs one keep rate per layer (12), got 1" })
  bench_err("--keep_rate 5", { "--keep_rate needs a keep rate in (0, 1], got '5'" })
  bench_err("--keep_rate -2", { "--keep_rate needs a keep rate in (0, 1], got '-2'" })
  bench_err("--iters 0", { "--iters needs a positive integer, got '0'" })
  bench_err("--iters -1", { "--iters needs a positive integer, got '-1'" })
  bench_err("--batch 0", { "--batch needs a positive integer, got '0'" })
  bench_err("--record /proc/attnlab-no/x.json", { "cannot write the record to /proc/attnlab-no/x.json" })
  T.eq(T.read_file(d .. "/resolution.json"), nil, 0, "a record was written")
  T.rm_rf(d)
end)
case("distill.lua run/eval: bad strategy, name, halting, mode, limit, profile: one line each", function()
  local d = T.tmpdir("cli")
  local function err_of(args, code, pats)
    local out, err, rc = run("scripts/distill.lua " .. args .. " --out " .. q(d))
    user_error(out, err, rc, code, "distill.lua", pats, code == 1)
  end
  err_of("run --teacher x --strategy layer_aware:abc", 2, { "--strategy needs", "'layer_aware:abc'" })
  err_of("run --teacher x --name ../../etc", 2, { "--name needs a plain file name", "'../../etc'" })
  err_of("run --teacher x --name a/b", 2, { "--name needs a plain file name" })
  err_of("run --teacher x --teacher_halting maybe", 2, { "--teacher_halting needs true, false or a JSON object", "'maybe'" })
  err_of("eval --model x --mode foo", 2, { "--mode needs gather or masked, got 'foo'" })
  err_of("eval --model x --halting 5", 2, { "--halting needs true, false or a JSON object, got '5'" })
  err_of("eval --model x --limit 0", 2, { "--limit needs a positive integer, got '0'" })
  -- a tiny model file and crafted copies of its metadata
  local m = al.nn.ViT { image_size = 32, patch_size = 16, channels = 3, num_classes = 10, dim = 8, depth = 2, heads = 2 }
  require("attnlab.s2s").distilling.save_model(d .. "/ok.safetensors", m, { kind = "teacher" })
  local sd, meta = al.load(d .. "/ok.safetensors")
  local function variant(name, f)
    local mm = {}
    for k, v in pairs(meta) do mm[k] = v end
    f(mm)
    al.save(d .. "/" .. name .. ".safetensors", sd, mm)
    return d .. "/" .. name .. ".safetensors"
  end
  local cases_ = {
    { variant("depth", function(mm) mm.attnlab_vit = mm.attnlab_vit:gsub('"depth":2', '"depth":"x"') end), 'attnlab_vit.depth must be a positive integer, got "x"' },
    { variant("imsize", function(mm) mm.attnlab_vit = mm.attnlab_vit:gsub('"image_size":32', '"image_size":-32') end), "attnlab_vit.image_size must be a positive integer, got -32" },
    { variant("mix5", function(mm) mm.s2s_mixers = "5" end), "s2s_mixers must be a JSON object, got 5" },
    { variant("vitjson", function(mm) mm.attnlab_vit = "{oops" end), "attnlab_vit is not valid JSON" },
    { variant("mixjson", function(mm) mm.s2s_mixers = "{oops" end), "s2s_mixers is not valid JSON" },
    { variant("nodim", function(mm) mm.attnlab_vit = mm.attnlab_vit:gsub('"dim":8,?', "") end), "attnlab_vit.dim is missing" },
  }
  for _, c in ipairs(cases_) do err_of("eval --model " .. q(c[1]), 1, { c[1], c[2] }) end
  T.write_file(d .. "/notprof.json", '{"a":1}')
  err_of("run --strategy sparsest:2 --profile " .. q(d .. "/notprof.json") .. " --teacher " .. q(d .. "/ok.safetensors"), 1,
    { d .. "/notprof.json is not a sparsity profile" })
  T.rm_rf(d)
end)
case("analyze.lua: impossible accuracy skipped loudly, unknown --baseline and malformed families refused", function()
  local d = T.tmpdir("cli")
  local function rec(name, acc, cfg)
    cfg = cfg or { dataset = "synth", normalizer = name:match("__(.-)__"), seed = tonumber(name:match("seed(%d+)")) }
    cfg.epochs = 1   -- a finished record's learning curve: one epoch (report/record.lua's rule)
    T.write_file(d .. "/" .. name .. ".json", al.json.encode({ config = cfg, test_accuracy = acc,
      epochs = { { epoch = 1, loss = 1.0, test_accuracy = acc } } }))
  end
  rec("synth__softmax__seed1", 0.5); rec("synth__softmax__seed2", 0.6)
  rec("synth__sparsemax__seed1", 2.5); rec("synth__sparsemax__seed2", 0.6)
  rec("synth__hae__seed1", 0.5, { dataset = "synth", seed = 1 })
  local args = q(d) .. " --no-plots --out " .. q(d .. "/R.md")
  local out, err, code = run("scripts/analyze.lua " .. args)
  T.eq(code, 0, 0, err)
  assert(not out:find("250", 1, true), "an impossible accuracy was reported: " .. out)
  assert(err:find("synth__sparsemax__seed1.json: test_accuracy 2.5 is not in [0, 1]", 1, true), err)
  assert(err:find("synth__hae__seed1.json: config.normalizer is missing", 1, true), err)
  out, err, code = run("scripts/analyze.lua " .. args .. " --baseline foo")
  T.eq(code, 1, 0, err)
  assert(err:find("baseline 'foo' has no records", 1, true) and not err:find("traceback", 1, true), err)
  T.write_file(d .. "/experiment.json", '{"families":[{"name":"x","normalizers":5}]}')
  out, err, code = run("scripts/analyze.lua " .. args)
  T.eq(code, 1, 0, err)
  assert(err:find("experiment.json: families[1].normalizers must be", 1, true) and not err:find("attempt to", 1, true), err)
  T.rm_rf(d)
end)
case("record_hash.lua: JSON that is not a record, a folder, a non-finite number: one line naming the file", function()
  local d = T.tmpdir("cli")
  local bad = { a = "[1,2]", b = '"str"', c = "{}", e = '{"config":5}', f = '{"a":1e999}',
                g = '{"config":{"seed":1},"test_accuracy":1e999}' }
  for k, v in pairs(bad) do
    T.write_file(d .. "/" .. k .. ".json", v)
    local out, err, code = run("scripts/record_hash.lua " .. q(d .. "/" .. k .. ".json"))
    user_error(out, err, code, 1, "record_hash.lua", { d .. "/" .. k .. ".json: " }, true)
    T.eq(out, "", 0, "hashed " .. v)
  end
  local _, err = run("scripts/record_hash.lua " .. q(d .. "/g.json"))
  assert(err:find("not JSON: number 1e999 is out of the double range", 1, true), err)   -- (the decoder refuses it: it was inf)
  local out, err2, code = run("scripts/record_hash.lua " .. q(d))
  user_error(out, err2, code, 1, "record_hash.lua", { d .. ": cannot be read" }, true)
  T.rm_rf(d)
end)
case("parity_torch.lua: bad normalizer, threads, dir, tol, values of the wrong kind: a usage error without a Lua position", function()
  for _, c in ipairs({ { "--normalizer foo", "unknown normalizer 'foo'" }, { "--threads 0", "threads must be a positive integer" },
                       { "--dir /proc/attnlab-no/x", "cannot create the folder /proc/attnlab-no/x" },
                       { "--tol -1", "--tol needs a number >= 0" },
                       { "--decay_all 0", "decay_all must be true or false, got 0" },   -- 0 would be true in Lua
                       { "--clip_grad abc", "clip_grad must be a finite number >= 0 (0: no clipping), got 'abc'" },
                       { "--seed 1.5", "seed must be an integer >= 0, got 1.5" }, { "--lr nan", "lr must be a finite number > 0" },
                       { "--min_lr 0.1", "min_lr 0.1 is above lr 0.001" } }) do
    local out, err, code = run("scripts/parity_torch.lua --steps 1 --quiet true " .. c[1])
    user_error(out, err, code, 2, "parity_torch.lua", { c[2] })
    assert(not err:find("parity%.lua:%d+:"), err)
  end
end)
case("profile.lua --png maybe / --out unwritable, bench_linear.lua --gemm --crossover: refused up front", function()
  local out, err, code = run("scripts/profile.lua --model x --png maybe")
  user_error(out, err, code, 2, "profile.lua", { "--png needs true or false, got 'maybe'" })
  out, err, code = run("scripts/profile.lua --model tests/ref/vit_fixture.safetensors --heads 2 --out /proc/attnlab-no/prof")
  user_error(out, err, code, 2, "profile.lua", { "cannot write the profile to /proc/attnlab-no/prof" })
  out, err, code = run("scripts/bench_linear.lua --gemm --crossover")
  user_error(out, err, code, 2, "bench_linear.lua", { "--gemm and --crossover exclude each other" })
end)

-- ---- threads -------------------------------------------------------------------------------------
case("an output folder that cannot be made (/proc/x): one line before any work, no mkdir complaint", function()
  local out, err, rc = run("scripts/demo.lua --out /proc/x")   -- before gnuplot's install or any training
  user_error(out, err, rc, 2, "demo.lua", { "--out /proc/x: cannot create the folder" })
  assert(not err:find("mkdir", 1, true) and out == "", "output before the check: " .. out .. err)
  out, err, rc = run("scripts/distill.lua teacher --preset experiments/s2s/cifar_small.lua --out /proc/x")
  user_error(out, err, rc, 1, "distill.lua", { "teacher: cannot create the folder /proc/x" }, true)
  out, err, rc = run("scripts/analyze.lua experiments/normalizers/full/records/kmnist --out /proc/r.md")
  assert(rc ~= 0 and not err:find("mkdir", 1, true), "analyze: " .. err)
end)

case("demo.lua over a changed record: one line advising --redo-changed, which demo.lua takes; no 'sweep: ', no empty ckpt/ or logs/", function()
  T.need_data(al.data.fashion_mnist, { split = "test", normalize = false }, "Fashion-MNIST")
  if T.sh("command -v gnuplot") == "" then T.skip("gnuplot not installed (demo.lua would try to install it)") end
  local d = T.tmpdir("cli")
  -- a finished record of the quick demo's first run, made with another batch size
  local exp = al.sweep.resolve(al.sweep.load("experiments/normalizers/demo.lua"), { quick = true })
  local r = al.sweep.runs(exp, { out = d, threads = 1 })[1]
  local c = al.train.config(r.config)
  c.batch_size = c.batch_size // 2
  local eps = {}
  for e = 1, c.epochs do eps[e] = { epoch = e, loss = 1.0, test_accuracy = 0.3 } end
  T.write_file(r.out, al.json.encode({ config = c, epochs = eps, test_accuracy = 0.3, support_density = 1.0, params = 1000, tokens = 17 }))
  local out, err, code = run("scripts/demo.lua --quick --out " .. q(d))
  user_error(out, err, code, 1, "demo.lua", { "1 finished record(s) in " .. d .. " were made with a different config",
    "pass --redo-changed to rerun them" }, true)
  assert(not err:find("sweep: ", 1, true), err)
  T.eq(T.sh("ls " .. q(d)), r.name .. ".json\n", 0, "files after the refusal")
  -- the option the message names: taken (an unwritable --out is then the first thing refused)
  out, err, code = run("scripts/demo.lua --quick --redo-changed --out /proc/x")
  user_error(out, err, code, 2, "demo.lua", { "--out /proc/x: cannot create the folder" })
  T.rm_rf(d)
end)
case("ATTNLAB_NUM_THREADS=abc / 0 / -4: said on stderr, the default is used", function()
  for _, v in ipairs({ "abc", "0", "-4", "2x" }) do
    local out, err, code = run([[-e "print(al.get_num_threads())"]], "ATTNLAB_NUM_THREADS=" .. v)
    T.eq(code, 0, 0, err)
    assert(err:find(("ATTNLAB_NUM_THREADS='%s' is not a positive integer"):format(v), 1, true), "stderr: " .. err)
    assert(math.tointeger(tonumber(out)) >= 1, out)
  end
end)
case("ATTNLAB_NUM_THREADS=1000 and al.set_num_threads(1000): clamped to the cores, with a warning", function()
  local cores = al.config().cores
  local out, err = run([[-e "print(al.get_num_threads())"]], "ATTNLAB_NUM_THREADS=1000")
  T.eq(tonumber(out), cores)
  assert(err:find("ATTNLAB_NUM_THREADS=1000 but this machine has", 1, true), err)
  out, err = run([[-e "al.set_num_threads(1000) print(al.get_num_threads())"]])
  T.eq(tonumber(out), cores)
  assert(err:find("set_num_threads(1000): this machine has", 1, true), err)
  local prev = al.get_num_threads()
  T.raises(function() al.set_num_threads(0) end, "need at least 1 thread")
  T.raises(function() al.set_num_threads(1.5) end, "positive integer number of threads, got 1.5")
  T.raises(function() al.set_num_threads("abc") end, "got abc")
  T.eq(al.get_num_threads(), prev)
end)
-- at the edge: the core count itself is taken as it is, one more is clamped; ATTNLAB_NUM_THREADS=1
-- and =cores are those counts (a valid count went in as count - 1 without a test noticing)
case("ATTNLAB_NUM_THREADS and al.set_num_threads at the core count: taken; one more: clamped with a warning", function()
  local cores = al.config().cores
  for _, n in ipairs({ 1, cores }) do
    local out, err = run([[-e "print(al.get_num_threads())"]], "ATTNLAB_NUM_THREADS=" .. n)
    T.eq(tonumber(out), n, 0, "ATTNLAB_NUM_THREADS=" .. n)
    T.eq(err, "", "no warning for " .. n)
  end
  -- trailing blanks (a value read from a file) are not part of the number
  local out, err = run([[-e "print(al.get_num_threads())"]], "ATTNLAB_NUM_THREADS='1 '")
  T.eq({ tonumber(out), err }, { 1, "" }, "ATTNLAB_NUM_THREADS='1 '")
  out, err = run([[-e "print(al.get_num_threads())"]], "ATTNLAB_NUM_THREADS=" .. (cores + 1))
  T.eq(tonumber(out), cores)
  assert(err:find(("ATTNLAB_NUM_THREADS=%d but this machine has"):format(cores + 1), 1, true), err)
  out, err = run(("-e %s"):format(T.shquote(("al.set_num_threads(%d) print(al.get_num_threads())"):format(cores + 1))))
  T.eq(tonumber(out), cores)
  assert(err:find(("set_num_threads(%d): this machine has"):format(cores + 1), 1, true), err)
end)
case("al.set_grad_enabled returns the previous mode", function()
  local was = al.set_grad_enabled(false)
  T.eq(was, true)
  T.eq(al.set_grad_enabled(false), false)
  T.eq(al.set_grad_enabled(true), false)
  T.eq(al.is_grad_enabled(), true)
end)
case("al.set_num_threads: a float with an integer value is that count; strings and huge negatives named as they are", function()
  -- 2.0 (n / 2) was refused as not "a positive integer", though al.zeros{2.0} takes it; "2"
  -- was refused as "got 2"; -3e9 was reported as -1000000
  local prev = al.get_num_threads()
  al.set_num_threads(1.0)
  T.eq(al.get_num_threads(), 1)
  al.set_num_threads(prev)
  T.raises(function() al.set_num_threads("2") end, "number of threads, got 2 (a string)")
  T.raises(function() al.set_num_threads(-3000000000) end, "need at least 1 thread, got -3000000000)")
  T.raises(function() al.set_num_threads(0/0) end, "positive integer number of threads, got")
  T.raises(function() al.set_num_threads(1e300) end, "positive integer number of threads, got 1e+300")
  T.eq(al.get_num_threads(), prev)
end)

-- record_hash.lua over <dir>/<name>.json for each name: the hashes, in order (one per file, exit 0)
local function record_hashes(dir, names)
  local args = {}
  for i, n in ipairs(names) do args[i] = q(dir .. "/" .. n .. ".json") end
  local out, err, code = run("scripts/record_hash.lua " .. table.concat(args, " "))
  T.eq(code, 0, 0, err)
  local h = {}
  for hash in out:gmatch("(%x+)  ") do h[#h + 1] = hash end
  T.eq(#h, #names, 0, out)
  return h
end
case("record_hash.lua: two checkouts' runs hash the same; one ulp of one loss does not", function()
  local dir = T.tmpdir("cli")
  local function record(root, loss, secs)
    return ('{"config":{"seed":1,"out":"%s/run.json"},"dataset":{"files":[{"path":"%s/../shared/data/test_batch.bin.gz",'
      .. '"sha256":"ec28","size":28905542}]},"epochs":[{"epoch":1,"loss":%s,"seconds":%s}],"machine":{"host":"%s"},'
      .. '"started":"%s","test_accuracy":0.5972}'):format(root, root, loss, secs, root, secs)
  end
  T.write_file(dir .. "/a.json", record("/work/main", "0.90006464641571049", "11.2"))
  T.write_file(dir .. "/b.json", record("/work/wt-head", "0.90006464641571049", "15.1"))
  T.write_file(dir .. "/c.json", record("/work/main", "0.90006464641571060", "11.2"))   -- the next double up
  local h = record_hashes(dir, { "a", "b", "c" })
  T.eq(h[1], h[2], 0, "checkout folder, timing and machine are not results")
  assert(h[1] ~= h[3], "a one-ulp loss difference must change the hash")
  local canon = run("scripts/record_hash.lua --canon " .. q(dir .. "/b.json"))
  assert(canon:find('"path":"test_batch.bin.gz"', 1, true) and canon:find('"sha256":"ec28"', 1, true), canon)
  T.rm_rf(dir)
end)
case("record_hash.lua: S2S experiments and profiles hash without their timings and folders; a keep rate one ulp off does not", function()
  local dir = T.tmpdir("cli")
  -- an experiment 3 row (timings per repeat, a model path under the results folder, a load average)
  local function exp(root, ms, keep)
    return ('{"images":500,"loadavg_before":"%s","rows":[{"accuracy":0.524,"keep_rate":%s,"mode":"gather",' ..
      '"model":"%s/avit_k0.6.safetensors","ms":%s,"ms_repeats":[%s,1.2],"records":["%s/students/a.json"]}],"threads":1}')
      :format(ms, keep, root, ms, ms, root)
  end
  -- a profile (layers, tokens, the model it measured, its model file by SHA-256)
  local function prof(root, k90)
    return ('{"layers":[{"heads":2,"k90":[%s,3.5]}],"model":"%s/teacher.safetensors","tokens":17,' ..
      '"model_file":{"path":"%s/teacher.safetensors","sha256":"ab12","size":9},"machine":{"host":"%s"}}'):format(k90, root, root, root)
  end
  T.write_file(dir .. "/e1.json", exp("results/s2s/a", "1.31", "0.61141176470588243"))
  T.write_file(dir .. "/e2.json", exp("/work/x/results/s2s/b", "1.52", "0.61141176470588243"))
  T.write_file(dir .. "/e3.json", exp("results/s2s/a", "1.31", "0.61141176470588254"))   -- the next double up
  T.write_file(dir .. "/p1.json", prof("/work/main/out", "14.422882352941176"))
  T.write_file(dir .. "/p2.json", prof("/tmp/elsewhere", "14.422882352941176"))
  T.write_file(dir .. "/p3.json", prof("/work/main/out", "14.422882352941178"))
  local h = record_hashes(dir, { "e1", "e2", "e3", "p1", "p2", "p3" })
  T.eq(h[1], h[2], 0, "ms, load average and the results folder are not results")
  assert(h[1] ~= h[3], "a one-ulp keep rate must change the hash")
  T.eq(h[4], h[5], 0, "the profile's folders and machine are not results")
  assert(h[4] ~= h[6], "a one-ulp k90 must change the hash")
  local canon = run("scripts/record_hash.lua --canon " .. q(dir .. "/e2.json"))
  assert(canon:find('"model":"avit_k0.6.safetensors"', 1, true) and canon:find('"records":["a.json"]', 1, true)
         and not canon:find('"ms', 1, true) and not canon:find("loadavg", 1, true), canon)
  T.rm_rf(dir)
end)

return cases
