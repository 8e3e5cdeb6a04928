-- tests/lua/test_cli.lua -- the scripts as a newcomer meets them (issue 21): every script answers
-- --help (usage, options, an example; exit 0), an unknown option gets one line + the usage (exit
-- 2), and typical mistakes are ONE line naming the problem -- never a traceback, never a record.
-- Also the option parser itself (lua/attnlab/run/cli.lua) and ATTNLAB_NUM_THREADS / set_num_threads.
local al = require "attnlab"
local T = require "harness"
local cli = require "attnlab.cli"

local HOST = os.getenv("ATTNLAB_HOST") or "bin/attnlab"
local function q(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

-- stdout, stderr, exit status of `HOST args` (env: a prefix like "ATTNLAB_NUM_THREADS=abc")
local function run(args, env)
  local errf = os.tmpname()
  local p = io.popen(("env -u LUA_INIT -u LUA_INIT_5_4 %s timeout 120 %s %s </dev/null 2>%s"):format(env or "", q(HOST), args, errf))
  local out = p:read("a")
  local _, _, code = p:close()
  local err = T.read_file(errf) or ""
  os.remove(errf)
  return out, err, code
end

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

local cases = {}
local function case(name, fn) cases[#cases + 1] = { name = name, fn = fn } end

-- ---- the parser -------------------------------------------------------------------------------
local SPEC = {
  name = "x.lua", usage = "bin/attnlab scripts/x.lua [--n N]",
  options = { { "n", "N", "a count", type = "posint", default = 3 }, { "dry-run", nil, "a flag" },
              { "names", "A,B", "names", type = "names" }, { "opt", "O", "raw", ["repeat"] = true, raw = true } },
  positional = { { "FILE", "a file" } },
  on_error = function(msg) error({ usage = msg }) end,
}
local function perr(argv)
  local ok, e = pcall(cli.parse, SPEC, argv)
  assert(not ok and type(e) == "table" and e.usage, "no usage error for " .. table.concat(argv, " "))
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
local SCRIPTS = { "train", "sweep", "analyze", "profile", "distill", "s2s_strategies", "demo", "mlp_fashion",
                  "bench_linear", "bench_mixers", "bench_normalizers", "bench_train", "train_steps" }
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

-- ---- train_steps.lua: the profilers' workload computes the same at 1 and 2 threads -----------------
case("train_steps.lua --steps 2: a finite loss, the same digits at 1 and 2 threads", function()
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

-- ---- train.lua: typical mistakes ----------------------------------------------------------------
local function train_err(args, pats, code)
  local tmp = os.tmpname()
  os.remove(tmp)
  local out, err, rc = run("scripts/train.lua " .. args .. " --out " .. tmp)
  user_error(out, err, rc, code or 2, "train.lua", pats, true)
  T.eq(T.read_file(tmp), nil, 0, "a record was written")
end
case("train.lua with no arguments: usage, exit 2 (no 10-epoch run)", function()
  local out, err, code = run("scripts/train.lua")
  user_error(out, err, code, 2, "train.lua", { "no options given", "usage:" })
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
case("train.lua --out / --checkpoint where nothing can be written: refused before training, one line", function()
  local d = os.tmpname()   -- a folder of our own: d/missing surely does not exist
  os.remove(d)
  assert(os.execute("mkdir " .. q(d)))
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
  os.execute("rmdir " .. q(d))
end)
case("train.lua: a tiny run prints a measured speed, never '0.0 img/s'", function()
  if not pcall(al.data.kmnist, { split = "test", normalize = false }) then T.skip("KMNIST not found") end
  local out, err, code = run("scripts/train.lua --dataset kmnist --epochs 1 --train_limit 64 --test_limit 32 --batch_size 64 --progress false")
  T.eq(code, 0, 0, err)
  assert(not out:find(" 0.0 img/s", 1, true) and out:find("img/s train", 1, true), out)
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
  local d = os.tmpname()
  os.remove(d)
  local out, err, code = run(("scripts/distill.lua run --teacher tests/ref/vit_fixture.safetensors --heads 2 --strategy layer_aware:9 " ..
    "--dataset cifar10 --train_limit 20 --test_limit 20 --out %s"):format(d))
  os.execute("rm -rf " .. q(d))
  if err:find("file not found", 1, true) then T.skip("CIFAR-10 not found") end
  user_error(out, err, code, 1, "distill.lua", { "layer_aware", "k must be in 1..2, got 9" }, true)
end)

case("distill.lua teacher --save / --record where nothing can be written: refused before training", function()
  local d = os.tmpname()
  os.remove(d)
  local args = " --dataset cifar10 --epochs 1 --train_limit 20 --test_limit 20 --progress false --out " .. q(d)
  local out, err, code = run("scripts/distill.lua teacher --save " .. d .. "/missing/t.safetensors" .. args)
  user_error(out, err, code, 2, "distill.lua", { "cannot write the model to " .. d .. "/missing/t.safetensors", "cannot create a file" }, true)
  out, err, code = run("scripts/distill.lua teacher --record " .. d .. "/missing/t.json" .. args)
  os.execute("rm -rf " .. q(d))
  user_error(out, err, code, 2, "distill.lua", { "cannot write the record to " .. d .. "/missing/t.json" }, true)
end)
case("distill.lua run with a timm teacher that records no heads, and no --heads: one line naming the file", function()
  local d = os.tmpname()   -- distill.lua makes its --out folder: a temporary one, removed after
  os.remove(d)
  local out, err, code = run("scripts/distill.lua run --teacher tests/ref/vit_fixture.safetensors --strategy layer_aware:1 " ..
    "--dataset cifar10 --train_limit 20 --test_limit 20 --out " .. q(d))
  os.execute("rm -rf " .. q(d))
  if err:find("file not found", 1, true) then T.skip("CIFAR-10 not found") end
  user_error(out, err, code, 1, "distill.lua", { "tests/ref/vit_fixture.safetensors does not record its head count" }, true)
end)

case("distill.lua bench --sizes abc: a usage error, no measurement over nothing recorded", function()
  local d = os.tmpname()
  os.remove(d)
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

-- ---- threads -------------------------------------------------------------------------------------
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

case("record_hash.lua: two checkouts' runs hash the same; one ulp of one loss does not", function()
  local dir = os.tmpname()
  os.remove(dir)
  os.execute("mkdir -p " .. q(dir))
  local function record(root, loss, secs)
    return ('{"config":{"seed":1,"out":"%s/run.json"},"dataset":{"files":[{"path":"%s/../shared/data/test_batch.bin.gz",'
      .. '"sha256":"ec28","size":28905542}]},"epochs":[{"epoch":1,"loss":%s,"seconds":%s}],"machine":{"host":"%s"},'
      .. '"started":"%s","test_accuracy":0.5972}'):format(root, root, loss, secs, root, secs)
  end
  T.write_file(dir .. "/a.json", record("/work/main", "0.90006464641571049", "11.2"))
  T.write_file(dir .. "/b.json", record("/work/wt-head", "0.90006464641571049", "15.1"))
  T.write_file(dir .. "/c.json", record("/work/main", "0.90006464641571060", "11.2"))   -- the next double up
  local out, err, code = run("scripts/record_hash.lua " .. q(dir .. "/a.json") .. " " .. q(dir .. "/b.json") .. " " .. q(dir .. "/c.json"))
  T.eq(code, 0, 0, err)
  local h = {}
  for hash in out:gmatch("(%x+)  ") do h[#h + 1] = hash end
  T.eq(#h, 3, 0, out)
  T.eq(h[1], h[2], 0, "checkout folder, timing and machine are not results")
  assert(h[1] ~= h[3], "a one-ulp loss difference must change the hash")
  local canon = run("scripts/record_hash.lua --canon " .. q(dir .. "/b.json"))
  assert(canon:find('"path":"test_batch.bin.gz"', 1, true) and canon:find('"sha256":"ec28"', 1, true), canon)
  os.execute("rm -rf " .. q(dir))
end)

return cases
