-- tests/lua/test_s2s_cli.lua -- bad input to the S2S scripts (scripts/distill.lua, profile.lua,
-- s2s_strategies.lua) and to the library configs behind them (lua/attnlab/s2s/check.lua): a wrong
-- type, an option without its value, an unknown or unused option, NaN/inf, a value out of range,
-- a corrupt model. Each is ONE line naming the option or file (exit 2 for a usage error, 1 for a
-- failed run), never a traceback or Lua's own text, checked before any training or data loading,
-- and nothing is written. Tiny synthetic models and data: runs in seconds.
local al = require "attnlab"
local T = require "harness"
local s2s = require "attnlab.s2s"
local K = s2s.check

local q = T.shquote

-- the first line of a message, and the message's line count
local function first_line(s) return s:match("^[^\n]*") end
local function nlines(s) local n = 0 for _ in s:gmatch("[^\n]+") do n = n + 1 end return n end

-- `HOST scripts/<script> args` must fail with status `code`: stderr's first line starts with
-- "<script>: " and holds every text of `pats`; a failed run (1) is exactly one line, a usage
-- error (2) that line alone (a preset's bad value) or followed by the usage and a pointer to
-- --help; never a traceback, Lua's own wording, a source position or "-nan"; nothing on
-- stdout. Returns the first line.
local function refused(script, args, code, pats)
  local out, err, rc = T.run_host("scripts/" .. script .. " " .. args, { timeout = 120 })
  local what = script .. " " .. args .. ":\n" .. err
  T.eq(rc, code, 0, "exit status of " .. what)
  local line = first_line(err)
  T.truthy(line:sub(1, #script + 2) == script .. ": ", "stderr does not start with the script's name: " .. what)
  for _, bad in ipairs({ "traceback", "attempt to", "bad argument #", "-nan", "table: 0x" }) do
    T.truthy(not err:find(bad, 1, true), ("'%s' in %s"):format(bad, what))
  end
  T.truthy(not err:find("%.lua:%d+:"), "a Lua source position in " .. what)
  for _, p in ipairs(pats) do T.truthy(line:find(p, 1, true), ("the message lacks '%s': %s"):format(p, what)) end
  local n = nlines(err)
  T.truthy(n == 1 or (code == 2 and err:find("^[^\n]*\nusage: ")), "lines of " .. what)
  T.eq(out, "", 0, "stdout of " .. what)
  return line
end

-- a tiny ViT (16x16 images, 17 tokens, depth 2) as s2s.save_model writes it
local function vit(o)
  local c = { image_size = 16, patch_size = 4, channels = 3, num_classes = 5, dim = 16, depth = 2, heads = 2, seed = 3 }
  for k, v in pairs(o or {}) do c[k] = v end
  return al.nn.ViT(c)
end

-- the files under dir (find's list, sorted), "" when there are none
local function files_in(dir)
  local p = io.popen("find " .. q(dir) .. " -type f 2>/dev/null | sort")
  local s = p:read("a")
  p:close()
  return s
end

-- a tiny preset (cifar10 is named but never read: every case here is refused first)
local PRESET = [[
return {
  name = "tiny", out = "OUT", dataset = "cifar10", train_limit = 64, test_limit = 32,
  teacher = { init = "timm", dataset = "cifar10", dim = 16, depth = 2, heads = 2, patch = 8, mlp_ratio = 2, epochs = 1,
              batch_size = 32, lr = 1e-3, seed = 1 },
  profile = { split = "test", limit = 32, batch_size = 32, topk = { 1 } },
  avit = { keep_rates = { 0.6 }, main_keep_rate = 0.6, epochs = 1, lr = 5e-4, batch_size = 32,
           halting = { gate_scale = 10, gate_center = 10 } },
  distill = { mixer = "bimamba", lr = 5e-4, batch_size = 32, stage1 = { epochs = 1 }, stage2 = { epochs = 1 } },
  resolution = { sizes = { 32 }, patch = 8, dim = 16, depth = 2, heads = 2, batch = 1, iters = 1, keep_rate = 0.6,
                 mixer = "bimamba", threads = 1 },
}
]]
local function preset_dir()
  local d = T.tmpdir("s2s-cli")
  T.write_file(d .. "/p.lua", (PRESET:gsub("OUT", d .. "/out")))
  return d, d .. "/p.lua"
end

local cases, case = T.suite()

case("s2s_strategies.lua: a table where a name or folder is wanted, an unknown key: one line, no traceback, nothing written", function()
  local d, p = preset_dir()
  local pre = "summary --preset " .. q(p) .. " "
  refused("s2s_strategies.lua", pre .. "--name '{}'", 2, { "--name needs a name, got an empty table" })
  refused("s2s_strategies.lua", pre .. [[--out '{"a":1}']], 2, { "--out needs a folder, got a JSON object" })
  refused("s2s_strategies.lua", pre .. "--dataset '[1]'", 2, { "--dataset needs a dataset name", "got '[1]'" })
  refused("s2s_strategies.lua", pre .. "--out", 2, { "--out needs a value (a folder)" })
  refused("s2s_strategies.lua", pre .. "--distill.bogus 1", 2, { "--distill.bogus is not a key of the distill section" })
  refused("s2s_strategies.lua", pre .. "--bogus 1", 2, { "unknown option --bogus" })
  T.eq(files_in(d .. "/out"), "", 0, "files written")
  T.rm_rf(d)
end)

case("s2s_strategies.lua resolution: sizes, keep rate, iters, batch out of range: refused before any work, no record", function()
  local d, p = preset_dir()
  local pre = "resolution --preset " .. q(p) .. " "
  for _, c in ipairs({
    { "--resolution.sizes abc", "--resolution.sizes needs positive integers like 224,384, got 'abc'" },
    { "--resolution.sizes 0", "--resolution.sizes needs positive integers like 224,384, got '0'" },
    { "--resolution.sizes 33", "--resolution.sizes[1] = 33 is not a multiple of the patch size 8" },
    { "--resolution.keep_rate 5", "--resolution.keep_rate needs a keep rate in (0, 1], got '5'" },
    { "--resolution.keep_rate 0", "--resolution.keep_rate needs a keep rate in (0, 1], got '0'" },
    { "--resolution.keep_rates 1,0.5,0.3", "--resolution.keep_rates needs one keep rate per layer (2), got 3" },
    { "--resolution.iters 0", "--resolution.iters needs a positive integer, got '0'" },
    { "--resolution.batch 0", "--resolution.batch needs a positive integer, got '0'" },
    { "--resolution.mixer gru", "--resolution.mixer needs bimamba, bilstm or a spec" },
  }) do
    refused("s2s_strategies.lua", pre .. c[1], 2, { c[2] })
  end
  -- the same rule in distill.lua bench (one check: s2s/check.lua) and in the library
  refused("distill.lua", "bench --preset " .. q(p) .. " --resolution.keep_rate 5", 2,
    { "bench: --resolution.keep_rate needs a keep rate in (0, 1], got '5'" })
  T.raises(function() s2s.resolution_bench({ sizes = { 32 }, patch = 8, dim = 16, depth = 2, heads = 2, keep_rate = 5 }) end,
    "resolution_bench: keep_rate needs a keep rate in (0, 1], got '5'")
  T.raises(function() s2s.resolution_bench({ sizes = { 0 }, dim = 16, depth = 2, heads = 2 }) end,
    "resolution_bench: sizes[1] needs a positive integer, got '0'")
  T.eq(files_in(d .. "/out"), "", 0, "files written")
  T.rm_rf(d)
end)

case("a batch of 2^63 - 1 (it overflowed the loader's batch count: no step, yet a record): refused up front by every S2S script", function()
  local d, p = preset_dir()
  s2s.save_model(d .. "/t.safetensors", vit())
  local t, B = q(d .. "/t.safetensors"), "9223372036854775807"
  local want = "needs a positive integer below 2^31, got '" .. B .. "'"
  refused("distill.lua", "avit --preset " .. q(p) .. " --teacher " .. t .. " --batch_size " .. B, 2, { "avit: --batch_size " .. want })
  refused("distill.lua", "run --preset " .. q(p) .. " --teacher " .. t .. " --layers 1 --distill.batch_size " .. B, 2,
    { "run: --distill.batch_size " .. want })
  refused("distill.lua", "run --preset " .. q(p) .. " --teacher " .. t .. " --layers 1 --batch_size " .. B, 2, { "run: --batch_size " .. want })
  refused("profile.lua", "--model " .. t .. " --dataset synthetic --batch_size " .. B .. " --out " .. q(d .. "/prof"), 2, { "--batch_size " .. want })
  refused("s2s_strategies.lua", "summary --preset " .. q(p) .. " --distill.batch_size " .. B, 2, { "--distill.batch_size " .. want })
  T.eq({ K.check("distill", { batch_size = 1 << 31 }, { partial = true }) }, { "batch_size", "needs a positive integer below 2^31, got '2147483648'" })
  T.eq(K.check("distill", { batch_size = (1 << 31) - 1 }, { partial = true }), nil)
  T.eq({ K.check("distill", { batch_size = 0 }, { partial = true }) }, { "batch_size", "needs a positive integer, got '0'" })
  T.eq(files_in(d .. "/out") .. files_in(d .. "/prof"), "", 0, "files written")
  T.rm_rf(d)
end)

case("--quick on a preset without a quick table (it ran the full preset): one line, as sweep.lua says it", function()
  local d = T.tmpdir("s2s-cli")
  T.write_file(d .. "/p.lua", (PRESET:gsub("OUT", d .. "/out")))   -- (PRESET has no quick table)
  for _, c in ipairs({ { "distill.lua", "teacher" }, { "profile.lua", "" }, { "s2s_strategies.lua", "summary" } }) do
    refused(c[1], c[2] .. " --preset " .. q(d .. "/p.lua") .. " --quick", 1, { "preset " .. d .. "/p.lua has no quick preset" })
  end
  T.eq(files_in(d .. "/out"), "", 0, "files written")
  T.rm_rf(d)
end)

case("profile.lua --out with a quote and shell words: no command runs, the PNGs are where it says (gnuplot's quoting)", function()
  local d = T.tmpdir("s2s-cli")
  s2s.save_model(d .. "/t.safetensors", vit())
  local o = d .. "/a'b; touch PWNED; echo '"   -- (sh's current folder: d)
  local out, err, rc = T.run_host("scripts/profile.lua --model " .. q(d .. "/t.safetensors") .. " --dataset synthetic --limit 4 " ..
    "--batch_size 4 --threads 1 --out " .. q(o), { timeout = 120, dir = d, host = require("attnlab.util").abspath(T.HOST) })
  T.eq(rc, 0, 0, err)
  T.eq(T.read_file(d .. "/PWNED"), nil, 0, "the shell ran a word of --out")
  T.truthy(T.read_file(o .. "/profile.json"), "no profile.json in " .. o)
  local n = tonumber(out:match("and (%d+) heatmap files"))
  local want = "layer1.svg\nlayer2.svg\n"
  if require("attnlab.s2s.profile").have_gnuplot() then want = "layer1.png\nlayer1.svg\nlayer2.png\nlayer2.svg\n" end
  local listed = T.sh("cd " .. q(o) .. " && ls layer*")
  T.eq(listed, want, 0, "heatmaps in " .. o)
  T.eq(n, select(2, listed:gsub("\n", "")), 0, "heatmap files reported: " .. out)
  T.eq(T.sh("ls " .. q(d)), "a'b; touch PWNED; echo '\nt.safetensors\n", 0, "files next to --out")
  T.rm_rf(d)
end)

case("a model with a NaN weight or damaged halting metadata is refused as it is read (file and tensor named), no result", function()
  local d = T.tmpdir("s2s-cli")
  local m = vit()
  local sd = m:state_dict()
  s2s.save_model(d .. "/ok.safetensors", m, { kind = "teacher" })
  local sdd, meta = al.load(d .. "/ok.safetensors")
  local b = sdd["blocks.0.attn.proj.bias"]:clone()
  b[1] = 0 / 0
  sdd["blocks.0.attn.proj.bias"] = b
  al.save(d .. "/nan.safetensors", sdd, meta)
  local want = d .. "/nan.safetensors: tensor blocks.0.attn.proj.bias holds NaN or inf"
  refused("distill.lua", "eval --model " .. q(d .. "/nan.safetensors") .. " --limit 10", 1, { want })
  refused("distill.lua", "eval --model " .. q(d .. "/nan.safetensors") .. " --limit 10 --mode masked", 1, { want })
  refused("profile.lua", "--model " .. q(d .. "/nan.safetensors") .. " --limit 10 --png false --out " .. q(d .. "/prof"), 1, { want })
  refused("distill.lua", "bench --model " .. q(d .. "/nan.safetensors") .. " --sizes 16 --iters 1 --batch 1 --out " .. q(d .. "/b"),
    1, { want })
  T.raises(function() s2s.load_model(d .. "/nan.safetensors") end, want)
  -- the halting config an A-ViT file records: damaged JSON names the file
  local _, meta2 = al.load(d .. "/ok.safetensors")
  meta2.halting = "{not json"
  al.save(d .. "/halt.safetensors", sd, meta2)
  refused("distill.lua", "eval --model " .. q(d .. "/halt.safetensors") .. " --halting true", 1,
    { d .. "/halt.safetensors: metadata halting is not valid JSON" })
  meta2.halting = '{"gate_scale":"x"}'
  al.save(d .. "/halt2.safetensors", sd, meta2)
  refused("profile.lua", "--model " .. q(d .. "/halt2.safetensors") .. " --halting true --out " .. q(d .. "/prof"), 1,
    { d .. "/halt2.safetensors: metadata halting: gate_scale must be a finite number, got 'x'" })
  T.eq(files_in(d .. "/prof") .. files_in(d .. "/b"), "", 0, "results written")
  -- and the evaluation itself never counts an accuracy from NaN logits
  local ds = s2s.synthetic_dataset({ n = 4, size = 16 })
  local bad = vit()
  bad:state_dict()["head.bias"]:fill_(0 / 0)
  T.raises(function() s2s.evaluate(bad, ds) end, "s2s.evaluate: the model's logits hold NaN or inf")
  T.rm_rf(d)
end)

case("distill.lua: an option its subcommand does not read is refused, naming both; values are checked (NaN, inf, range)", function()
  local d, p = preset_dir()
  local pre = " --preset " .. q(p) .. " --out " .. q(d .. "/out")
  refused("distill.lua", "eval --model x --epochs 5", 2, { "eval: --epochs is not an option of eval (it takes" })
  refused("distill.lua", "eval --model x --save /x/y", 2, { "--save is not an option of eval" })
  refused("distill.lua", "bench --layers 99" .. pre, 2, { "bench: --layers is not an option of bench" })
  refused("distill.lua", "run --teacher T --epochs 3" .. pre, 2, { "run: --epochs is not an option of run" })
  refused("distill.lua", "run --teacher T --distill.bogus 1" .. pre, 2, { "run: --distill.bogus is not a key of the distill section" })
  refused("distill.lua", "avit --avit.bogus 1" .. pre, 2, { "avit: --avit.bogus is not a key of the avit section" })
  refused("distill.lua", "teacher --progress maybe" .. pre, 2, { "teacher: --progress needs true or false, got 'maybe'" })
  refused("distill.lua", "teacher --teacher.bogus 1" .. pre, 2, { "teacher: --teacher.bogus is not a key of the teacher section" })
  -- the teacher reads --lr and --batch_size now; their values are checked like every other
  for _, v in ipairs({ { "nan", "'nan'" }, { "inf", "'inf'" }, { "-1", "'-1'" }, { "1e999", "'inf'" } }) do
    refused("distill.lua", "teacher --lr " .. v[1] .. pre, 2, { "teacher: --lr needs a finite number > 0, got " .. v[2] })
  end
  refused("distill.lua", "teacher --batch_size 0" .. pre, 2, { "teacher: --batch_size needs a positive integer, got '0'" })
  refused("distill.lua", "teacher --teacher.lr nan" .. pre, 2, { "teacher: --teacher.lr needs a finite number > 0, got 'nan'" })
  refused("distill.lua", "eval --model x --halting '{\"gate_scale\":1e999}'", 2,
    { "--halting: '{\"gate_scale\":1e999}' is not valid JSON: number 1e999 is out of the double range" })
  T.eq(files_in(d .. "/out"), "", 0, "files written")
  T.rm_rf(d)
end)

case("an option given without its value, or a table where a path is wanted: one line naming it", function()
  local d, p = preset_dir()
  local pre = " --preset " .. q(p)
  for _, c in ipairs({
    { "teacher" .. pre .. " --out", "teacher: --out needs a value (a folder)" },
    { "teacher" .. pre .. " --save", "teacher: --save needs a value (a file path)" },
    { "teacher" .. pre .. " --record", "teacher: --record needs a value (a file path)" },
    { "teacher" .. pre .. " --out '{}'", "teacher: --out needs a folder, got an empty table" },
    { "teacher" .. pre .. " --save 1,2", "teacher: --save needs a file path, got '1,2'" },
    { "avit" .. pre .. " --teacher", "avit: --teacher needs a value (a model file)" },
    { "avit" .. pre .. " --teacher '{}'", "avit: --teacher needs the teacher's model file" },
    { "run" .. pre .. " --teacher", "run: --teacher needs a value (a model file)" },
    { "run" .. pre .. " --teacher T --mixer", "run: --mixer needs a value (bimamba, bilstm" },
    { "bench" .. pre .. " --model", "bench: --model needs a value (a file path)" },
    { "bench" .. pre .. " --record", "bench: --record needs a value (a file path)" },
    { "eval --model", "eval: --model needs a value (a file path)" },
    { "eval --model x --dataset", "eval: --dataset needs a value (a dataset name: cifar10" },
  }) do
    refused("distill.lua", c[1], 2, { c[2] })     -- (the preset's out: d/out)
  end
  refused("profile.lua", "--model --out " .. q(d .. "/prof"), 2, { "--model needs a value (a file path)" })
  refused("profile.lua", "--model x --halting '[1]'", 2, { "--halting needs true or a JSON object" })
  T.eq(files_in(d), files_in(p), 0, "files written")
  T.rm_rf(d)
end)

case("distill.lua avit/run: a bad section key, NaN weight or lr is refused before the teacher is read or anything trains", function()
  local d, p = preset_dir()
  local pre = " --preset " .. q(p) .. " --out " .. q(d .. "/out")
  -- the teacher file does not exist: a check that waited for training would say so instead
  local t = " --teacher " .. q(d .. "/missing.safetensors")
  refused("distill.lua", "avit" .. pre .. t .. " --avit.epochs abc", 2, { "avit: --avit.epochs needs a positive integer, got 'abc'" })
  refused("distill.lua", "avit" .. pre .. t .. " --lr nan", 2, { "avit: --lr needs a finite number > 0, got 'nan'" })
  refused("distill.lua", "avit" .. pre .. t .. " --avit.halting.gate_scale x", 2, { "avit: --avit.halting: gate_scale must be" })
  refused("distill.lua", "run" .. pre .. t .. " --distill.stage2.epochs abc", 2,
    { "run: --distill.stage2.epochs needs a positive integer, got 'abc'" })
  refused("distill.lua", "run" .. pre .. t .. " --distill.stage1.weights.mse nan", 2,
    { "run: --distill.stage1.weights.mse needs a finite number >= 0, got 'nan'" })
  refused("distill.lua", "run" .. pre .. t .. " --lr nan", 2, { "run: --lr needs a finite number > 0, got 'nan'" })
  refused("distill.lua", "run" .. pre .. t .. " --distill.stage2.lr 1e-9", 2,
    { "run: --distill.stage2.lr is 1e-09, below min_lr 1e-06" })
  -- a preset's own bad value names the preset and its key
  T.write_file(d .. "/bad.lua", (PRESET:gsub("OUT", d .. "/out"):gsub("stage2 = { epochs = 1 }", "stage2 = { epochs = 0 }")))
  refused("distill.lua", "run --preset " .. q(d .. "/bad.lua") .. t, 2,
    { "run: preset " .. d .. "/bad.lua: distill.stage2.epochs needs a positive integer, got '0'" })
  T.eq(files_in(d .. "/out"), "", 0, "files written")
  T.rm_rf(d)
end)

case("distill.lua run --strategy with --layers: the conflict is refused; the library refuses it too", function()
  local d, p = preset_dir()
  local pre = " --preset " .. q(p) .. " --out " .. q(d .. "/out") .. " --teacher T"
  refused("distill.lua", "run" .. pre .. " --strategy uniform --layers 1", 2,
    { "run: --strategy and --layers both choose the layers to replace: give one" })
  refused("distill.lua", "run" .. pre .. " --distill.strategy uniform --layers 1", 2, { "both choose the replaced layers" })
  refused("distill.lua", "run" .. pre .. " --strategy sparsest:2", 2, { "run: --profile is needed by strategy 'sparsest:2'" })
  T.raises(function() s2s.distill({ teacher = vit(), dataset = "synthetic", layers = { 1 }, strategy = "uniform" }) end,
    "s2s.distill: layers and strategy 'uniform' both choose the replaced layers")
  T.eq(files_in(d .. "/out"), "", 0, "files written")
  T.rm_rf(d)
end)

case("distill.lua run end to end on synthetic data; a rerun of another config names --name / --out, not --checkpoint", function()
  local d = T.tmpdir("s2s-cli")
  s2s.save_model(d .. "/t.safetensors", vit())
  local args = "run --teacher " .. q(d .. "/t.safetensors") .. " --dataset synthetic --train_limit 32 --test_limit 16 " ..
    "--batch_size 16 --eval_limit 16 --layers 2 --distill.stage1.epochs 1 --distill.stage2.epochs 1 --name s " ..
    "--progress false --threads 1 --out " .. q(d .. "/out")
  local o, err, rc = T.run_host("scripts/distill.lua " .. args)
  T.eq(rc, 0, 0, err)
  T.truthy(o:find("S2S student s (layers 2 -> bimamba)", 1, true), o)
  os.remove(d .. "/out/students/s.json")                          -- as if killed after its last epoch
  refused("distill.lua", args .. " --lr 1e-3", 1,
    { "s.ckpt was made with a different configuration; remove it or choose another --name or --out" })
  T.eq(T.read_file(d .. "/out/students/s.json"), nil, 0, "a record was written")
  T.rm_rf(d)
end)

case("distill.lua avit --out NEWDIR: the folder is made before training and a run writes its files; an unwritable one is refused first", function()
  local d = T.tmpdir("s2s-cli")
  s2s.save_model(d .. "/t.safetensors", vit())
  local o = d .. "/new/deeper"
  local args = "avit --teacher " .. q(d .. "/t.safetensors") .. " --dataset synthetic --train_limit 16 --test_limit 8 " ..
    "--batch_size 8 --epochs 1 --keep_rate 0.7 --name a1 --progress false --threads 1 --out " .. q(o)
  local out, err, rc = T.run_host("scripts/distill.lua " .. args)
  T.eq(rc, 0, 0, err)
  T.truthy(out:find("A-ViT (target keep rate 0.70)", 1, true), out)
  for _, f in ipairs({ "a1.safetensors", "a1.json" }) do T.truthy(T.read_file(o .. "/" .. f), f .. " not written") end
  -- a folder that cannot be made: said before the teacher is read (it does not exist)
  refused("distill.lua", "avit --teacher " .. q(d .. "/missing.safetensors") .. " --dataset synthetic --out /proc/attnlab-no/x",
    1, { "avit: cannot create the folder /proc/attnlab-no/x" })
  refused("distill.lua", "run --teacher " .. q(d .. "/missing.safetensors") .. " --dataset synthetic --layers 1 " ..
    "--out /proc/attnlab-no/x", 1, { "run: cannot create the folder /proc/attnlab-no/x/students" })
  T.rm_rf(d)
end)

case("distill.lua and profile.lua --preset experiments/s2s/... work from outside the checkout", function()
  local d = T.tmpdir("s2s-cli")
  local host = { host = require("attnlab.util").abspath(T.HOST), dir = d, timeout = 120 }
  local _, err, rc = T.run_host("scripts/distill.lua teacher --preset experiments/s2s/cifar_2core.lua --quick --teacher.bogus 1", host)
  T.eq(rc, 2, 0, err)
  T.truthy(err:find("teacher: --teacher.bogus is not a key of the teacher section", 1, true), err)   -- the preset was read
  _, err, rc = T.run_host("scripts/profile.lua --preset experiments/s2s/cifar_2core.lua --quick --model missing.safetensors", host)
  T.eq(rc, 1, 0, err)
  T.truthy(err:find("cannot read model missing.safetensors", 1, true), err)
  _, err, rc = T.run_host("scripts/distill.lua teacher --preset experiments/s2s/nope.lua", host)
  T.eq(rc, 1, 0, err)
  local where = err:match("no such file %(the presets are in (/[^%s]*)/experiments/s2s/%)")   -- the real folder
  T.truthy(where and T.read_file(where .. "/experiments/s2s/cifar_2core.lua"), err)
  T.eq(files_in(d), "", 0, "files written")
  T.rm_rf(d)
end)

case("distill.lua run --profile of another model is refused in one line, nothing trained", function()
  local d = T.tmpdir("s2s-cli")
  s2s.save_model(d .. "/t.safetensors", vit({ depth = 3 }))
  local prof = s2s.profile(vit({ dim = 32 }), s2s.synthetic_dataset({ n = 8, size = 16 }), { limit = 8, batch_size = 8, topk = { 1 } })
  prof.maps, prof.model = nil, "other.safetensors"
  s2s.write_json(d .. "/profile.json", prof)
  refused("distill.lua", "run --teacher " .. q(d .. "/t.safetensors") .. " --dataset synthetic --strategy sparsest:1 --profile " ..
    q(d .. "/profile.json") .. " --out " .. q(d .. "/out"), 1,
    { "profile " .. d .. "/profile.json (of other.safetensors) is of another model: it has 2 layers, teacher " ..
      d .. "/t.safetensors has 3" })
  T.eq(files_in(d .. "/out"), "", 0, "files written")
  T.rm_rf(d)
end)

case("a teacher or model trained on another dataset (channels; a recorded dataset) is refused before any data, in one line", function()
  local d, p = preset_dir()
  local fm = d .. "/fm.safetensors"
  s2s.save_model(fm, vit({ channels = 1 }), { train_config = '{"dataset":"fashion_mnist"}' })
  local pre = " --preset " .. q(p) .. " --out " .. q(d .. "/out")
  local want = "s2s: teacher " .. fm .. " was trained on fashion_mnist (1 channel); "
  refused("distill.lua", "run --teacher " .. q(fm) .. " --layers 1" .. pre, 1, { want .. "the preset's dataset cifar10 has 3 channels" })
  refused("distill.lua", "run --teacher " .. q(fm) .. " --layers 1 --dataset synthetic" .. pre, 1,
    { want .. "--dataset synthetic has 3 channels" })
  refused("distill.lua", "avit --teacher " .. q(fm) .. " --dataset cifar10" .. pre, 1, { want .. "--dataset cifar10 has 3 channels" })
  refused("distill.lua", "eval --model " .. q(fm) .. " --dataset cifar10", 1,
    { "s2s: model " .. fm .. " was trained on fashion_mnist (1 channel); --dataset cifar10 has 3 channels" })
  refused("profile.lua", "--model " .. q(fm) .. " --dataset synthetic --out " .. q(d .. "/prof"), 1,
    { "s2s: model " .. fm .. " was trained on fashion_mnist (1 channel); --dataset synthetic has 3 channels" })
  -- the same images, another recorded dataset: refused when the dataset came from the preset, the user's
  -- choice when --dataset names it
  local c10 = d .. "/c10.safetensors"
  s2s.save_model(c10, vit(), { train_config = '{"dataset":"cifar10"}' })
  T.write_file(d .. "/syn.lua", (PRESET:gsub("OUT", d .. "/out"):gsub('dataset = "cifar10", train_limit', 'dataset = "synthetic", train_limit')))
  local spre = " --preset " .. q(d .. "/syn.lua")
  refused("distill.lua", "run --teacher " .. q(c10) .. " --layers 1" .. spre, 1,
    { "s2s: teacher " .. c10 .. " was trained on cifar10, not synthetic (the preset's dataset synthetic): pass --dataset synthetic" })
  refused("distill.lua", "eval --model " .. q(c10) .. spre, 1, { "s2s: model " .. c10 .. " was trained on cifar10, not synthetic" })
  local out, err, rc = T.run_host("scripts/distill.lua eval --model " .. q(c10) .. spre .. " --dataset synthetic --limit 8 --threads 1")
  T.eq(rc, 0, 0, err)
  T.truthy(out:find("on synthetic (8 examples)", 1, true), out)
  T.eq(files_in(d .. "/out") .. files_in(d .. "/prof"), "", 0, "files written")
  T.rm_rf(d)
end)

case("distill.lua eval --halting true on a file without a halting config is refused, as profile.lua does", function()
  local d = T.tmpdir("s2s-cli")
  s2s.save_model(d .. "/t.safetensors", vit())
  refused("distill.lua", "eval --model " .. q(d .. "/t.safetensors") .. " --dataset synthetic --limit 8 --halting true", 1,
    { "eval: " .. d .. "/t.safetensors has no halting config (not an A-ViT file): pass --halting '{...}'" })
  refused("profile.lua", "--model " .. q(d .. "/t.safetensors") .. " --dataset synthetic --limit 8 --halting true --out " ..
    q(d .. "/prof"), 1, { d .. "/t.safetensors has no halting config (not an A-ViT file)" })
  T.rm_rf(d)
end)

-- whether a folder exists
local function is_dir(dir) return os.execute("test -d " .. q(dir)) == true end

case("every script that reads a preset checks all of it first: a misspelt key or a sweep's table is refused, nothing run", function()
  local d, p = preset_dir()
  local typo = d .. "/typo.lua"
  T.write_file(typo, (T.read_file(p):gsub("teacher = {", "teachr = {")))
  local sweep = d .. "/sweep.lua"
  T.write_file(sweep, 'return { name = "x", datasets = { "cifar10" }, normalizers = { "softmax" }, seeds = { 1 }, ' ..
    'schedule = { epochs = 1 } }\n')
  local o = " --out " .. q(d .. "/o")
  for _, f in ipairs({ { typo, "teachr is not a key of a preset" }, { sweep, "datasets is not a key of a preset" } }) do
    local pre = " --preset " .. q(f[1])
    for _, sub in ipairs({ "teacher", "avit", "run --layers 1", "bench" }) do
      refused("distill.lua", sub .. pre .. o, 2, { sub:match("^%a+") .. ": preset " .. f[1] .. ": " .. f[2] })
    end
    refused("profile.lua", pre .. o, 2, { "preset " .. f[1] .. ": " .. f[2] })
    refused("s2s_strategies.lua", "summary" .. pre .. o, 2, { f[2] })
  end
  T.truthy(not is_dir(d .. "/o") and not is_dir(d .. "/out"), "a folder was made")
  T.rm_rf(d)
end)

case("distill.lua teacher needs --preset; run with an impossible strategy and summary of an empty folder create nothing", function()
  local d, p = preset_dir()
  -- no default preset is documented: teacher alone would train al.train's defaults
  refused("distill.lua", "teacher --out " .. q(d .. "/o"), 2, { "teacher: --preset FILE is required" })
  -- the strategy is checked against the teacher's depth before the output folder is made
  s2s.save_model(d .. "/t.safetensors", vit())
  refused("distill.lua", "run --teacher " .. q(d .. "/t.safetensors") .. " --dataset synthetic --strategy layer_aware:99 --out " ..
    q(d .. "/o"), 1, { "layer_aware: k must be in 1..2, got 99" })
  T.truthy(not is_dir(d .. "/o"), "run made its output folder")
  -- summary of a folder without records: refused (a title alone is no summary), nothing created
  T.truthy(os.execute("mkdir -p " .. q(d .. "/empty")), "mkdir")
  refused("s2s_strategies.lua", "summary --preset " .. q(p) .. " --out " .. q(d .. "/empty"), 1,
    { "summary: no S2S records in " .. d .. "/empty" })
  refused("s2s_strategies.lua", "summary --preset " .. q(p), 1, { "summary: no S2S records in " .. d .. "/out" })
  T.eq(files_in(d .. "/empty"), "", 0, "files written")
  T.truthy(not is_dir(d .. "/empty/students") and not is_dir(d .. "/out"), "summary made a folder")
  -- with a record it writes the summary
  T.write_file(d .. "/empty/teacher.json", '{"test_accuracy": 0.5}')
  local out, err, rc = T.run_host("scripts/s2s_strategies.lua summary --preset " .. q(p) .. " --out " .. q(d .. "/empty"))
  T.eq(rc, 0, 0, err)
  T.truthy(T.read_file(d .. "/empty/summary.md"):find("Dense teacher: test accuracy 50.00%", 1, true), out)
  T.rm_rf(d)
end)

case("s2s.check: kinds, nested keys, partial checks, lists of one; the committed presets pass", function()
  T.eq({ K.check("distill", { stage1 = { weights = { mse = "nan" } } }) },
       { "stage1.weights.mse", "needs a finite number >= 0, got 'nan'" })
  local p, why = K.check("avit", { halting = { bogus = 1 } })
  T.eq(p, "halting")
  T.truthy(why:find("unknown option 'bogus'", 1, true), why)
  T.eq({ K.check("resolution", { keep_rates = { 1, 0 / 0 } }) }, { "keep_rates[2]", "must be in (0, 1], got nan" })
  T.eq({ K.check("preset", { seeds = { 1, 0 } }) }, { "seeds[2]", "needs a positive integer, got '0'" })
  -- partial: only the keys given, no rule joining them
  T.eq(K.check("distill", { lr = 1e-7 }, { partial = true }), nil)
  T.eq((K.check("distill", { lr = 1e-7 })), "lr")
  T.eq(K.lists("preset", { seeds = 3, resolution = { sizes = 224 } }), { seeds = { 3 }, resolution = { sizes = { 224 } } })
  T.eq(K.show(0 / 0), "'nan'")
  T.eq(K.option_message("--out", "needs a folder, got 'true'", true), "--out needs a value (a folder)")
  for _, f in ipairs({ "cifar65", "cifar_2core", "cifar_small", "deit_tiny" }) do
    for _, quick in ipairs({ false, true }) do
      local pr = K.lists("preset", s2s.load_preset("experiments/s2s/" .. f .. ".lua", quick))
      T.eq(K.check("preset", pr), nil, 0, f .. (quick and " --quick" or ""))
    end
  end
end)

case("s2s.check: each kind's refusal by hand (strategy k, own keep control, mixer keys and sizes, keep rates, limits, a resolution's shape)", function()
  local part = { partial = true }
  T.eq({ K.check("distill", { strategy = "layer_aware:0" }, part) }, { "strategy",
    "needs uniform | groupwise:shallow|middle|deep | layer_aware[:k] | sparsest[:k] (k a positive integer), got 'layer_aware:0'" })
  T.eq(K.check("distill", { strategy = "sparsest:1", profile = "p.json" }), nil)
  T.eq({ K.check("keeprate", { own_keep_control = 0 }) }, { "own_keep_control", "needs true, false or a keep rate in (0, 1], got '0'" })
  T.eq(K.check("keeprate", { own_keep_control = 1 }), nil)
  T.eq({ K.check("distill", { mixer = { name = "bimamba", expnd = 2 } }, part) }, { "mixer",
    "has an unknown key 'expnd' (a bimamba takes d_conv, d_state, dt_max, dt_min, dt_rank, expand, heads, name, seed)" })
  T.eq({ K.check("distill", { mixer = { name = "bilstm", heads = 0 } }, part) }, { "mixer.heads", "needs a positive integer, got '0'" })
  -- min_lr at most lr (equal is fine)
  T.eq({ K.check("distill", { lr = 1e-4, min_lr = 1.5e-4 }) }, { "lr", "is 0.0001, below min_lr 0.00015: the cosine schedule would rise instead of decay" })
  T.eq(K.check("distill", { lr = 1e-4, min_lr = 1e-4 }), nil)
  T.eq({ K.check("avit", { keep_rates = { 0.5, 0 } }) }, { "keep_rates[2]", "must be in (0, 1], got 0" })
  T.eq(K.check("avit", { keep_rates = { 0.5, 1 } }), nil)
  -- a limit is a positive integer or false (all examples)
  T.eq(K.check("preset", { train_limit = false }, part), nil)
  T.eq({ K.check("preset", { train_limit = 0 }, part) }, { "train_limit", "needs a positive integer (false: all), got '0'" })
  T.eq({ K.check("distill", { batch_size = 1 << 31 }, part) }, { "batch_size", "needs a positive integer below 2^31, got '2147483648'" })
  -- resolution_bench's own model (no file): heads divide dim, replaced layers exist
  T.eq({ K.check("resolution", { dim = 16, heads = 3 }) }, { "heads", "3 does not divide dim 16" })
  T.eq({ K.check("resolution", { depth = 2, layers = { 3 } }) }, { "layers", "[1] = 3 is not a layer of a depth-2 model" })
  T.eq(K.check("resolution", { depth = 2, layers = { 2 }, dim = 16, heads = 2, sizes = { 32 } }), nil)
end)

return cases
