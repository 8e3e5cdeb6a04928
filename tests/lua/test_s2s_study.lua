-- tests/lua/test_s2s_study.lua -- the S2S study end to end (scripts/s2s_strategies.lua all
-- --quick) on a tiny synthetic preset in a temporary folder: seeds, experiment 1 under the
-- dense and the A-ViT teacher, experiment 2's own-keep-rate control, experiment 3's
-- parameter-matched mixer and control, experiment 4's trained-model latency; records named
-- per seed and a summary with mean +- sd and paired p-values. Then a rerun trains nothing.
local al = require "attnlab"
local T = require "harness"
local s2s = require "attnlab.s2s"

local HOST, q, read = T.HOST, T.shquote, T.read_file

-- exit status and output (stdout and stderr together) of `HOST scripts/s2s_strategies.lua args`
local function run(args)
  local o, _, code = T.run_host("scripts/s2s_strategies.lua " .. args, { timeout = 300, merge = true })
  return code, o
end

local PRESET = [[
return {
  name = "s2s-tiny", out = "OUT", dataset = "synthetic", train_limit = 96, test_limit = 48,
  teacher = { init = "TEACHER", dataset = "synthetic", image_size = 16, epochs = 1, batch_size = 32, lr = 1e-3,
              train_limit = 96, test_limit = 48, seed = 1 },
  profile = { limit = 32, batch_size = 32, topk = { 1 } },
  avit = { keep_rates = { 0.5, 0.8 }, main_keep_rate = 0.8, epochs = 2, lr = 1e-3, batch_size = 32, eval_limit = 48,
           eval_mode = "masked",
           halting = { gate_scale = 5, gate_center = 1, ponder_weight = 5e-3, distr_weight = 0.1, center_eta = 2 } },
  distill = { mixer = "bimamba", lr = 1e-3, batch_size = 32, eval_limit = 48,
              stage1 = { epochs = 1, weights = { mse = 1.0, halt = 0.1, ce = 1.0 } },
              stage2 = { epochs = 1, weights = { ce = 1.0, mse = 0.0 } } },
  seeds = { 1, 2 },
  groupwise = { groups = { "shallow", "middle", "deep" }, teachers = { "dense", "avit" } },
  keeprate = { strategy = "layer_aware:1", own_keep_control = true },
  layeraware = { k = { 1 }, sparsest = false, uniform = false, control = true,
                 mixers = { { name = "bimamba", expand = 1, d_state = 4 } } },
  latency = { images = 16, repeats = 1 },
  resolution = { sizes = { 32 }, patch = 16, dim = 16, depth = 3, heads = 2, batch = 1, iters = 1, keep_rate = 0.8,
                 mixer = "bimamba", threads = 1 },
  quick = { out = "OUT/quick", distill = { stage2 = { epochs = 1 } } },
}
]]

-- A temporary folder with the tiny preset (p.lua, results under out/) and its starting
-- teacher weights (t0.safetensors).
local function study_dir()
  local d = T.tmpdir("s2s-study")
  local t = al.nn.ViT({ image_size = 16, patch_size = 4, channels = 3, num_classes = 5, dim = 16, depth = 3, heads = 2, seed = 3 })
  s2s.save_model(d .. "/t0.safetensors", t)
  local preset = PRESET:gsub("OUT", d .. "/out"):gsub("TEACHER", d .. "/t0.safetensors")
  T.write_file(d .. "/p.lua", preset)
  return d
end

return {
  { name = "s2s study: --quick end to end, seeds, controls, mean +- sd and paired p-values; a rerun trains nothing", fn = function()
    local d = study_dir()
    local code, o = run(("all --preset %s --quick --threads 1"):format(q(d .. "/p.lua")))
    T.eq(code, 0, 0, "exit code; output:\n" .. o)
    local out = d .. "/out/quick"
    -- records per seed: the default seed keeps the old names, seed 2 adds _s2
    for _, n in ipairs({ "L1_dense_bimamba", "L1_dense_bimamba_s2", "control_dense", "control_dense_s2", "L3_k0.8_bimamba",
                         "L3_k0.8_bimamba_s2", "L3_k0.5_bimamba_own0.8", "L3_k0.5_bimamba_own0.8_s2",
                         "L3_k0.8_bimamba_e1_n4", "L3_k0.8_bimamba_e1_n4_s2", "control_k0.8_s2" }) do
      T.truthy(read(out .. "/students/" .. n .. ".json"), "record " .. n)
    end
    T.eq(read(out .. "/students/L3_k0.8_bimamba_own0.8.json"), nil, 0, "the control at its own keep rate is the student itself")
    -- the dense teacher's students run dense: no halting, keep rate 1
    local dense = al.json.decode(read(out .. "/students/L1_dense_bimamba.json"))
    T.eq(dense.mean_keep_rate, 1)
    T.eq(dense.teacher_halting, nil)
    -- the own-keep-rate control retargets the student's halting (the controller carries over)
    local ctl = al.json.decode(read(out .. "/students/L3_k0.5_bimamba_own0.8.json"))
    T.close(ctl.student_halting.target_depth, 0.8 * 3, 1e-12)
    T.truthy(ctl.gate_center, "the student's centre is controlled")
    local e1 = al.json.decode(read(out .. "/exp1_groupwise.json"))
    T.eq(#e1.tables, 2)
    T.eq(e1.tables[1].teacher, "dense")
    T.eq(#e1.tables[1].rows[1].accuracy_seeds, 2)
    T.eq(#e1.tables[2].control.accuracy_seeds, 2)
    local e2 = al.json.decode(read(out .. "/exp2_keeprate.json"))
    T.eq(e2.own_keep_control, 0.8)
    T.eq(e2.rows[2].control.same_run, true)
    T.eq(#e2.rows[1].control.gap_seeds, 2)
    local sm = read(out .. "/summary.md")
    T.truthy(sm, "summary.md")
    for _, w in ipairs({ "Under the dense teacher", "Under the A-ViT teacher", "seeds 1, 2", "own keep rate held at 0.8",
                         "same run", "bimamba expand 1, state 4", "control: nothing replaced", "A-ViT teachers",
                         "at their own token count", "Dense teacher: accuracy curve", "| 1 | ", "off target", "gate centre" }) do
      T.truthy(sm:find(w, 1, true), "summary has " .. w)
    end
    T.truthy(sm:find("| %d+%.%d%d ± %d+%.%d%d |"), "summary has mean ± sd")
    T.truthy(sm:find("| [%+%-]%d+%.%d%d %(p [%d%.e%-]+%) |"), "summary has paired differences with p-values")
    -- resumable: everything is cached, a rerun only rewrites the summary
    local code2, o2 = run(("all --preset %s --quick --threads 1"):format(q(d .. "/p.lua")))
    T.eq(code2, 0, 0, o2)
    T.eq(o2:find("students/"), nil, 0, "a rerun trains nothing:\n" .. o2)
    T.rm_rf(d)
  end },

  { name = "s2s study: `teachers` makes only the prerequisites; two drivers on one folder at once train each step once (lock files), then leave none", fn = function()
    local d = study_dir()
    -- `teachers`: only the prerequisites, no student
    local code, o = run(("teachers --preset %s --quick --threads 1 --out %s"):format(q(d .. "/p.lua"), q(d .. "/pre")))
    T.eq(code, 0, 0, o)
    for _, n in ipairs({ "teacher", "profile/profile", "avit_k0.5", "avit_k0.8" }) do
      T.truthy(read(d .. "/pre/" .. n .. ".json"), "teachers made " .. n)
    end
    T.eq(o:find("students/", 1, true), nil, 0, "teachers trains no student:\n" .. o)
    -- groupwise and keeprate share the teacher, its profile and the main A-ViT
    local cmd = "env -u LUA_INIT -u LUA_INIT_5_4 ATTNLAB_LOCK_POLL_S=0.2 timeout 300 %s scripts/s2s_strategies.lua %s "
      .. "--preset %s --quick --threads 1 >%s 2>&1; echo $? >%s"
    local function driver(exp)
      return cmd:format(q(HOST), exp, q(d .. "/p.lua"), q(d .. "/" .. exp .. ".out"), q(d .. "/" .. exp .. ".rc"))
    end
    os.execute(("(%s) & (%s) & wait"):format(driver("groupwise"), driver("keeprate")))
    local started = {}
    for _, exp in ipairs({ "groupwise", "keeprate" }) do
      local o = read(d .. "/" .. exp .. ".out") or ""
      T.eq(tonumber(read(d .. "/" .. exp .. ".rc")), 0, 0, exp .. ":\n" .. o)
      for step in o:gmatch("%[s2s%] (%S+) %-> ") do
        T.eq(started[step], nil, 0, step .. " started twice:\n" .. o)
        started[step] = exp
      end
    end
    T.truthy(started.teacher, "the teacher was trained by one of them")
    T.truthy(started["avit_k0.8"], "the shared A-ViT was trained by one of them")
    local out = d .. "/out/quick"
    for _, n in ipairs({ "students/L1_dense_bimamba_s2", "students/L3_k0.5_bimamba_own0.8_s2", "exp1_groupwise", "exp2_keeprate" }) do
      T.truthy(read(out .. "/" .. n .. ".json"), "record " .. n)
    end
    local p = io.popen("find " .. q(out) .. " -name '*.lock*'")
    T.eq(p:read("a"), "", 0, "lock files left")
    p:close()
    T.rm_rf(d)
  end },
  { name = "s2s study: a single-seed preset's records keep their names; the summary reads records made before seeds", fn = function()
    local d = T.tmpdir("s2s-study")
    os.execute("cp -r experiments/s2s/cifar_2core/. " .. q(d))
    local preset = s2s.load_preset("experiments/s2s/cifar_2core.lua")
    local C = require("attnlab.s2s.study").context(preset, d, { preset = "experiments/s2s/cifar_2core.lua" },
                                                  function(m) error(m) end)
    T.eq(C.seeds(), { 1 })
    for _, c in ipairs({ { 0.6, { 5, 6 }, nil, "L5-6_k0.6_bimamba" }, { 0.4, { 4, 5, 6 }, nil, "L4-5-6_k0.4_bimamba" },
                         { 0.6, { 4, 5, 6 }, { mixer = "bilstm" }, "L4-5-6_k0.6_bilstm" }, { 0.6, {}, nil, "control_k0.6" } }) do
      local rec, name = C.student("unused.safetensors", c[1], c[2], c[3])     -- read, never trained
      T.eq(name, c[4])
      T.truthy(rec.test_accuracy > 0.3, name)
    end
    T.eq(C.student_name(0.6, { 5, 6 }, { mixer = "bimamba" }, 2), "L5-6_k0.6_bimamba_s2")
    T.eq(C.student_name("dense", { 1, 2 }, { mixer = { name = "bimamba", expand = 1, d_state = 8 }, stage2 = { keep_rate = 0.65 } }, 3),
         "L1-2_dense_bimamba_e1_n8_own0.65_s3")
    C.summary()
    local sm = read(d .. "/summary.md")
    for _, w in ipairs({ "## 1. Group%-wise replacement %(one seed%)", "Under the A%-ViT teacher", "## 2. Teacher keep%-rate sweep",
                         "## 3. Layer%-aware", "at their own token count", "DeiT%-Tiny shape" }) do
      T.truthy(sm:find(w), "summary has " .. w)
    end
    T.rm_rf(d)
  end },
  { name = "s2s study: the context checks the preset first (one line naming the key); a lone number for a list key is a list of one", fn = function()
    local study = require "attnlab.s2s.study"
    local function die(m) error(m, 0) end
    local p = s2s.load_preset("experiments/s2s/cifar_2core.lua")
    p.seeds, p.avit.keep_rates, p.resolution.sizes = 2, 0.6, 224
    local C = study.context(p, "/tmp/unused", { preset = "p.lua" }, die)
    T.eq(C.seeds(), { 2 })
    T.eq({ p.avit.keep_rates, p.resolution.sizes }, { { 0.6 }, { 224 } })
    for _, c in ipairs({ { "resolution", "iters", 0, "s2s.study: resolution.iters needs a positive integer, got '0'" },
                         { "distill", "stage2", { epochs = "abc" }, "s2s.study: distill.stage2.epochs needs a positive integer, got 'abc'" },
                         { "avit", "halting", { gate_scale = 0 / 0 }, "s2s.study: avit.halting: gate_scale must be a finite number, got nan" },
                         { "groupwise", "teachers", { "dense", "avit", "zzz" }, "s2s.study: groupwise.teachers[3] needs one of dense, avit, got 'zzz'" } }) do
      local q = s2s.load_preset("experiments/s2s/cifar_2core.lua")
      q[c[1]][c[2]] = c[3]
      T.raises(function() study.context(q, "/tmp/unused", { preset = "p.lua" }, die) end, c[4])
    end
    local q = s2s.load_preset("experiments/s2s/cifar_2core.lua")
    q.name = {}
    T.raises(function() study.context(q, "/tmp/unused", { preset = "p.lua" }, die) end, "s2s.study: name needs a name, got an empty table")
  end },
  { name = "s2s summary: a trend over 3 points agrees only when monotone; one pair out of order is a lean, said so; |rho| < 0.5 is no trend", fn = function()
    local v = require("attnlab.s2s.summary").trend_verdict
    local sp = s2s.profiling.spearman
    -- drops of 3 groups whose sparsity orders them fully, partly, or the other way
    T.eq(v(sp({ 0.3, 0.2, 0.1 }, { 1, 2, 3 }), -1), "**agrees** (monotone)")
    T.eq(v(sp({ 0.376, 0.379, 0.326 }, { 3.45, 3.89, 5.50 }), -1), "**agrees in part** (leans that way, not monotone)")
    T.eq(v(sp({ 0.1, 0.2, 0.3 }, { 2, 1, 3 }), -1), "**does not agree** (leans the other way, not monotone)")
    T.eq(v(sp({ 0.1, 0.2, 0.3 }, { 1, 2, 3 }), -1), "**disagrees** (monotone the other way)")
    T.eq(v(sp({ 0.5, 0.65, 0.8 }, { 1.4, 4.9, 6.9 }), 1), "**agrees** (monotone)")
    -- over more points a weak rho of either sign is no lean at all
    T.eq(v(0, 1), "**no clear trend** (|rho| < 0.5)")
    T.eq(v(0.3, 1), "**no clear trend** (|rho| < 0.5)")
    T.eq(v(-0.3, -1), "**no clear trend** (|rho| < 0.5)")
    T.eq(v(-0.3, 1), "**no clear trend** (|rho| < 0.5)")
    T.eq(v(0.6, -1), "**does not agree** (leans the other way, not monotone)")
    T.eq(v(nil, 1), "n/a")
  end },
  { name = "s2s summary: mean ± sd and paired differences in points (x100), by hand", fn = function()
    local S = require "attnlab.s2s.summary"
    -- {0.5, 0.7}: mean 0.6, sd sqrt(0.02) = 0.141421
    T.eq(S.pm({ 0.5, 0.7 }, 100), "60.00 ± 14.14")
    T.eq(S.pm({ 0.5 }, 100), "50.00")
    -- d = {0.1, 0.15, 0.2}: mean 0.15, sd 0.05, t = 3 sqrt3 (df 2), p = 1 - t / sqrt(2 + t^2) = 0.0351
    T.eq(S.paired({ 0.5, 0.6, 0.8 }, { 0.4, 0.45, 0.6 }), "+15.00 (p 0.0351)")
  end },
  { name = "s2s summary: every table's numbers from hand-made records (off target, drops, control, paired p, Spearman verdicts, speedups)", fn = function()
    -- Two seeds with one degree of freedom: a paired t of t has p = 1 - 2 atan(|t|) / pi.
    local function p1(t) return ("%.3g"):format(1 - 2 * math.atan(math.abs(t)) / math.pi) end
    local recs = {
      ["teacher.json"] = { test_accuracy = 0.8125, epochs = { { epoch = 1, lr = 1e-3, loss = 1.5, train_accuracy = 0.5, test_accuracy = 0.625 } } },
      ["avit_k0.5.json"] = { mean_keep_rate = 0.55, test_accuracy = 0.75, keep_rate = { 1, 0.4, 0.25 }, history = { { mean_keep_rate = 0.6 } },
                             halting = { gate_center = -1.25 } },
      ["profile/profile.json"] = { trend = { k90_frac = -0.5, entropy_norm = -1 },
        layers = { { mean = { entropy_norm = 0.9, k90_frac = 0.8, nonzero = 1, top1_mass = 0.1 } }, { mixer = "BiMamba" },
                   { mean = { entropy_norm = 0.5, k90_frac = 0.4, nonzero = 0.75, top1_mass = 0.3 } } } },
      -- groups whose sparsity rises as their drop falls (Spearman -1, the study's expectation)
      ["exp1_groupwise.json"] = { seeds = { 1, 2 }, tables = { { teacher = "avit", keep_rate = 0.5,
        rows = {
          { group = "shallow", layers = { 1 }, token_sparsity = 0.1, sparsity = 0.1, dense_sparsity = 0.1, dense_entropy_sparsity = 0.1,
            accuracy_seeds = { 0.5, 0.5 }, teacher_accuracy_seeds = { 0.8, 0.8 }, drop_seeds = { 0.3, 0.3 }, drop = 0.3 },
          { group = "deep", layers = { 3 }, token_sparsity = 0.4, sparsity = 0.3, dense_sparsity = 0.2, dense_entropy_sparsity = 0.25,
            accuracy_seeds = { 0.6, 0.7 }, teacher_accuracy_seeds = { 0.8, 0.8 }, drop_seeds = { 0.2, 0.1 }, drop = 0.15 },
          { group = "middle", layers = { 2 }, token_sparsity = 0.2, sparsity = 0.2, dense_sparsity = 0.15, dense_entropy_sparsity = 0.2,
            accuracy_seeds = { 0.55, 0.6 }, teacher_accuracy_seeds = { 0.8, 0.8 }, drop_seeds = { 0.25, 0.2 }, drop = 0.225 } },
        control = { accuracy_seeds = { 0.5, 0.65 }, teacher_accuracy_seeds = { 0.8, 0.8 } } } } },
      -- gaps 0.1, 0.05, 0.08 against the MEASURED teacher keep 0.5, 0.78, 0.85: ranks (1, 2, 3) and (3, 1, 2),
      -- rho = 1 - 6 * 6 / 24 = -0.5 (against the targets 0.5, 0.8, 0.65 it would be -1)
      ["exp2_keeprate.json"] = { strategy = "layer_aware:1", rows = {
        { target_keep_rate = 0.5, teacher_keep_rate = 0.5, teacher_accuracy = 0.8, student_keep_rate = 0.55, student_accuracy = 0.7, gap = 0.1 },
        { target_keep_rate = 0.8, teacher_keep_rate = 0.78, teacher_accuracy = 0.85, student_keep_rate = 0.8, student_accuracy = 0.8, gap = 0.05 },
        { target_keep_rate = 0.65, teacher_keep_rate = 0.85, teacher_accuracy = 0.8, student_keep_rate = 0.7, student_accuracy = 0.72, gap = 0.08 } } },
      ["exp3_layeraware.json"] = { seeds = { 1, 2 }, rows = {
        { name = "A-ViT teacher (k0.5)", accuracy = 0.8, params = 100, ms = 1.6, keep_rate = 0.5 },
        { name = "layer-aware k=1", accuracy_seeds = { 0.7, 0.75 }, params = 90, ms_seeds = { 0.8, 0.9 }, keep_rate = 0.5 },
        { name = "control", control = true, accuracy_seeds = { 0.72, 0.74 }, params = 100, ms = 1.5, keep_rate = 0.5 } } },
      ["exp3_latency.json"] = { repeats = 3, images = 16, threads = 1, rows = {
        { name = "dense", mode = "dense", params = 100, ms = 2.0, accuracy = 0.8125 },
        { name = "A-ViT", mode = "gather", params = 100, ms = 1.6, keep_rate = 0.5, accuracy = 0.75 },
        { name = "S2S", mode = "gather", params = 90, ms = 0.8, keep_rate = 0.5, accuracy = 0.7 } } },
    }
    local d = T.tmpdir("s2s-summary")
    local C = { out = d, preset = { name = "hand", avit = { keep_rates = { 0.5 } } }, opts = { preset = "p.lua" }, log = function() end,
                read_json = function(p) return recs[p:sub(#d + 2)] end }
    local sm = read(require("attnlab.s2s.summary").write(C))
    T.rm_rf(d)
    for _, line in ipairs({
      "| 1 | 0.001 | 1.5000 | 50.00 | 62.50 |",
      "| 0.50 | 0.550 | +0.050 | 75.00 | 1.00 0.40 0.25 | 0.600 | -1.25 |",          -- measured - target
      "| 1 | 0.900 | 0.800 | 1.000 | 0.100 |", "| 3 | 0.500 | 0.400 | 0.750 | 0.300 |",
      "with k90/N: -0.50, with entropy/log N: -1.00. The study's observation (shallow layers mix densely, deep layers are sparse) predicts strongly negative values; here: **agrees** (sparser with depth).",
      -- deep vs control: d = (0.1, 0.05), t = 0.075 / (0.0354 / sqrt 2) = 3
      "| deep | 3 | 0.400 | 0.300 | 0.200 | 0.250 | 65.00 ± 7.07 | 80.00 ± 0.00 | 15.00 ± 7.07 | +7.50 (p " .. p1(3) .. ") |",
      -- the control's drop is teacher - student: (0.3, 0.15)
      "| control: nothing replaced | - | - | - | - | - | 57.50 ± 10.61 | 80.00 ± 0.00 | 22.50 ± 10.61 | - |",
      "Spearman(token_sparsity, mean drop) = -1.00; the study expects sparser groups to be replaced with a smaller drop (negative): **agrees** (monotone).",
      "Spearman(dense_entropy_sparsity, mean drop) = -1.00;",
      "| 0.50 | 0.500 | 80.00 | 0.550 | 70.00 | 10.00 |",
      "Spearman(teacher keep, mean gap) = -0.50; the study expects a sparser teacher (lower keep) to give a smaller gap (positive): **does not agree** (leans the other way, not monotone).",
      -- k=1 vs control: d = (-0.02, 0.01), t = -0.005 / (0.0212 / sqrt 2) = -1/3
      "| layer-aware k=1 | 72.50 ± 3.54 | 90 | 0.850 ± 0.071 | 0.500 | -0.50 (p " .. p1(1 / 3) .. ") |",
      "| A-ViT teacher (k0.5) | 80.00 | 100 | 1.600 | 0.500 | - |",
      "| S2S | gather | 90 | 0.800 | 0.500 | 70.00 |",
      "| S2S | gather | 0.800 | 2.50x | 2.00x | 70.00 |",                               -- dense 2.0 / 0.8, A-ViT 1.6 / 0.8
      "| A-ViT | gather | 1.600 | 1.25x | 1.00x | 75.00 |" }) do
      T.truthy(sm:find(line, 1, true), "summary lacks: " .. line .. "\n" .. sm)
    end
  end },
  { name = "s2s study: a group's sparsity is the mean over its attention layers of 1 - k90/N, 1 - entropy/log N and 1 - keep (by hand)", fn = function()
    local C = require("attnlab.s2s.study").context(s2s.load_preset("experiments/s2s/cifar_2core.lua"), "/tmp/unused",
                                                  { preset = "p.lua" }, function(m) error(m, 0) end)
    -- layer 2 is a BiMamba (no attention statistics): the group's mean is over layers 1 and 3
    local prof = { keep_rate = { 1, 0.5, 0.25 }, layers = { { mean = { k90_frac = 0.8, entropy_norm = 0.9 } }, { mixer = "BiMamba" },
                                                            { mean = { k90_frac = 0.4, entropy_norm = 0.5 } } } }
    local s, e, t = C.group_sparsity(prof, { 1, 2, 3 })
    T.close({ s, e, t }, { (0.2 + 0.6) / 2, (0.1 + 0.5) / 2, (0 + 0.75) / 2 }, 1e-15)
    T.eq(C.group_sparsity(prof, { 2 }), nil)
  end },

  { name = "s2s study: a record stands for a command with no limit where it says false (all), and for a default it predates; another value is refused", fn = function()
    local d = T.tmpdir("s2s-study")
    local C = require("attnlab.s2s.study").context(s2s.load_preset("experiments/s2s/cifar_2core.lua"), d, { preset = "p.lua" },
                                                  function(m) error(m, 0) end)
    T.write_file(d .. "/step.json", al.json.encode({ config = { lr = 1e-3, train_limit = false }, finished = "x" }))
    local ran = false
    -- the command's config also has seed 1, a library default the record (made before it) lacks
    local rec = C.cached_step("step", function() ran = true end,
                              { section = "distill", config = { lr = 1e-3, seed = 1 }, defaults = { seed = 1 } })
    T.eq({ ran, rec.config.lr }, { false, 1e-3 })
    -- another lr is another run: refused, naming the key and both values
    T.raises(function() C.cached_step("step", function() ran = true end, { section = "distill", config = { lr = 2e-3 }, defaults = {} }) end,
      "was made with distill.lr = 0.001, this command gives 0.002")
    T.eq(ran, false)
    T.rm_rf(d)
  end },

  { name = "s2s study: a dense teacher's student is dense in stage 2 too; the preset's distill seed is the default; the replaced layers are compared", fn = function()
    local d = T.tmpdir("s2s-study")
    local C = require("attnlab.s2s.study").context({ name = "p", out = d, dataset = "synthetic", distill = { seed = 7 } }, d,
                                                  { preset = "p.lua" }, function(m) error(m, 0) end)
    T.eq({ C.default_seed(), C.seeds() }, { 7, { 7 } })
    -- a record of a student whose stage 2 had its own halting: not the run this command makes
    os.execute("mkdir -p " .. T.shquote(d .. "/students"))
    T.write_file(d .. "/students/L1_dense_bimamba.json",
      al.json.encode({ config = { dataset = "synthetic", teacher_halting = false, seed = 7, stage2 = { halting = true } } }))
    T.raises(function() C.student(d .. "/t.safetensors", "dense", { 1 }) end,
      "students/L1_dense_bimamba.json was made with distill.stage2.halting = true, this command gives false")
    -- a record of other replaced layers is refused too
    T.write_file(d .. "/step.json", al.json.encode({ layers = { 3 }, config = { lr = 1e-3 } }))
    T.raises(function() C.cached_step("step", function() end, { section = "distill", config = { lr = 1e-3 }, layers = { 1, 2 } }) end,
      "replaced layers [3], this command replaces [1,2]")
    T.rm_rf(d)
  end },
  { name = "s2s seeds: a seed given twice is refused in one line (preset, --seeds); a paired difference with no spread is n/a (no variance), never p 0", fn = function()
    local study = require "attnlab.s2s.study"
    local p = s2s.load_preset("experiments/s2s/cifar_2core.lua")
    p.seeds = { 1, 2, 1 }
    T.raises(function() study.context(p, "/tmp/unused", { preset = "p.lua" }, function(m) error(m, 0) end) end,
      "s2s.study: seeds has 1 twice ('1,2,1'): each seed trains its students once, so a repeated one would count the same runs twice")
    T.eq(s2s.check.check("preset", { seeds = { 3, 1, 2 } }, { partial = true }), nil)
    local d = T.tmpdir("s2s-seeds")
    local code, o = run(("summary --preset experiments/s2s/cifar_2core.lua --seeds 1,1 --out %s"):format(q(d .. "/out")))
    T.eq(code, 2, 0, o)
    T.truthy(o:find("--seeds has 1 twice ('1,1')", 1, true), o)
    T.eq(o:find("traceback", 1, true), nil, 0, o)
    T.rm_rf(d)
    -- the summary's paired test (report/paired.lua's rule)
    local paired = require("attnlab.s2s.summary").paired
    T.eq(paired({ 0.52, 0.52 }, { 0.50, 0.50 }), "n/a (no variance)")          -- one run counted twice
    T.eq(paired({ 0.50, 0.61 }, { 0.48, 0.59 }), "n/a (no variance)")          -- both seeds moved by 2 points
    T.eq(paired({ 0.5 }, { 0.4 }), "n/a")
    T.eq(paired({ 0.5, 0.6 }, { 0.5, 0.6 }), "identical")
    T.eq(paired({ 0.5, 0.6 }, { 0.4, 0.5 }, true), "same run")
    T.eq(paired({ 0 / 0, 0.6 }, { 0.4, 0.5 }), "n/a (non-finite value)")
    T.truthy(paired({ 0.50, 0.70, 0.60 }, { 0.48, 0.60, 0.61 }):match("^%+%d+%.%d%d %(p [%d%.e%-]+%)$"))
  end },
  { name = "s2s teacher --init FILE over a preset that trains its teacher: the preset's heads is not passed as the user's; --heads is", fn = function()
    local K = s2s.check
    local base = K.teacher_base({ init = "timm", dataset = "cifar10", dim = 96, depth = 6, heads = 3, patch = 8, epochs = 6, lr = 1e-3 },
      "ckpt.safetensors")
    T.eq(base, { init = "timm", dataset = "cifar10", epochs = 6, lr = 1e-3 })   -- (init: the command line's replaces it)
    T.eq(K.teacher_base({ init = "timm", heads = 3 }, "timm").heads, 3, 0, "a scheme init keeps the preset's model")
    -- a checkpoint of 2 heads under a preset whose own teacher has 3
    local d = T.tmpdir("s2s-init")
    local t = al.nn.ViT({ image_size = 16, patch_size = 4, channels = 3, num_classes = 5, dim = 16, depth = 2, heads = 2, seed = 3 })
    s2s.save_model(d .. "/t0.safetensors", t)
    T.write_file(d .. "/p.lua", ([[return { name = "p", out = %q, dataset = "synthetic",
      teacher = { init = "timm", dataset = "synthetic", dim = 24, depth = 2, heads = 3, patch = 4, epochs = 1, batch_size = 32,
                  lr = 1e-3, image_size = 16 } }]]):format(d .. "/out"))
    local function teacher(extra)
      local o, _, code = T.run_host(("scripts/distill.lua teacher --preset %s --init %s --train_limit 32 --test_limit 16 --threads 1 %s")
        :format(q(d .. "/p.lua"), q(d .. "/t0.safetensors"), extra), { timeout = 120, merge = true })
      return code, o
    end
    local code, o = teacher("")
    T.eq(code, 0, 0, o)
    T.truthy(read(d .. "/out/teacher.safetensors"), "the fine-tuned teacher")
    code, o = teacher("--heads 3")        -- the user's own value is still compared with the file's
    T.truthy(code ~= 0 and o:find("heads = 3 was passed", 1, true), o)
    T.rm_rf(d)
  end },
}
