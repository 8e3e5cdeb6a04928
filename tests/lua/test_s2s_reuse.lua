-- tests/lua/test_s2s_reuse.lua -- the S2S study reuses a step's record only when it was made
-- with the settings the command would use (lua/attnlab/s2s/study.lua, cached_step): a record
-- of other settings (distill lr and epochs, train_limit) is refused in one line naming the
-- record, the key and both values; paths, progress and threads do not count (a folder moved
-- under another --out is reused); --redo-changed sets the record, model and checkpoint aside
-- and redoes the step; a record whose model file (by the SHA-256 the record stores: the one it
-- started from, or the one it saved) was replaced since is refused too, and one that names no
-- file is refused when it was made before its model was remade. Also
-- scripts/s2s_strategies.lua's --redo-changed flag and a derived preset's own out under
-- --quick. Tiny synthetic runs (16x16 images, 96 training images, one epoch per stage).
local al = require "attnlab"
local T = require "harness"
local s2s = require "attnlab.s2s"
local study = require "attnlab.s2s.study"

local q, read = T.shquote, T.read_file

-- a tiny preset table whose teacher is fine-tuned from t0.safetensors in the folder d
local function preset(d)
  return {
    name = "s2s-reuse", out = d .. "/out", dataset = "synthetic", train_limit = 96, test_limit = 48,
    teacher = { init = d .. "/t0.safetensors", dataset = "synthetic", image_size = 16, epochs = 1, batch_size = 32, lr = 1e-3,
                train_limit = 96, test_limit = 48, seed = 1 },
    avit = { keep_rates = { 0.8 }, main_keep_rate = 0.8, epochs = 1, lr = 1e-3, batch_size = 32, eval_limit = 48,
             halting = { gate_scale = 5, gate_center = 1, ponder_weight = 5e-3, distr_weight = 0.1 } },
    distill = { mixer = "bimamba", lr = 1e-3, batch_size = 32, eval_limit = 48,
                stage1 = { epochs = 1, weights = { mse = 1.0, halt = 0.1, ce = 1.0 } },
                stage2 = { epochs = 1, weights = { ce = 1.0, mse = 0.0 } } },
  }
end

local function fixture()
  local d = T.tmpdir("s2s-reuse")
  local t = al.nn.ViT({ image_size = 16, patch_size = 4, channels = 3, num_classes = 5, dim = 16, depth = 3, heads = 2, seed = 3 })
  s2s.save_model(d .. "/t0.safetensors", t)
  return d
end

local function die(m) error(m, 0) end
local function ctx(p, out, redo) return study.context(p, out, { preset = "p.lua", redo_changed = redo }, die) end

-- f() with s2s.distill / s2s.avit replaced by a stub that fails the test: the step must be read
local function no_training(f)
  local d0, a0 = s2s.distill, s2s.avit
  s2s.distill = function() error("trained a student again", 0) end
  s2s.avit = function() error("trained an A-ViT again", 0) end
  local ok, r = pcall(f)
  s2s.distill, s2s.avit = d0, a0
  if not ok then error(r, 0) end
  return r
end

local function one_line(msg) T.eq(msg:find("\n"), nil, 0, "one line: " .. msg) T.eq(msg:find("traceback"), nil, 0, msg) end

return {
  { name = "s2s reuse: a student record of other settings is refused (record, key, both values); another --out with the same settings reuses it; --redo-changed sets it aside and redoes it", fn = function()
    local d = fixture()
    local p = preset(d)
    local out = d .. "/out"
    local C = ctx(p, out)
    local tp = d .. "/t0.safetensors"
    local rec, name = C.student(tp, "dense", { 3 })
    T.eq(name, "L3_dense_bimamba")
    T.close(rec.config.lr, 1e-3, 1e-15)
    -- the same settings: read, not trained (threads and progress are no setting of a result)
    al.set_num_threads(1)
    no_training(function() return ctx(preset(d), out).student(tp, "dense", { 3 }) end)
    -- the records moved to another folder (every path in them differs): still the same runs
    os.execute(("cp -r %s %s"):format(q(out), q(d .. "/moved")))
    no_training(function() return ctx(preset(d), d .. "/moved").student(tp, "dense", { 3 }) end)
    -- other settings: refused in one line naming the record, the first differing key, both values
    local p2 = preset(d)
    p2.distill.lr, p2.distill.stage2.epochs = 0.01, 3
    local msg = T.raises(function() no_training(function() return ctx(p2, out).student(tp, "dense", { 3 }) end) end,
      "s2s: record " .. out .. "/students/L3_dense_bimamba.json was made with distill.lr = 0.001, this command gives 0.01; " ..
      "use a new --out folder, or --redo-changed to set it aside and redo the step")
    one_line(msg)
    local p3 = preset(d)
    p3.distill.stage2.epochs = 3
    T.raises(function() ctx(p3, out).student(tp, "dense", { 3 }) end, "was made with distill.stage2.epochs = 1, this command gives 3")
    local p4 = preset(d)
    p4.train_limit = 64
    T.raises(function() ctx(p4, out).student(tp, "dense", { 3 }) end, "was made with train_limit = 96, this command gives 64")
    local p5 = preset(d)
    p5.distill.stage1.weights = { mse = 1.0, halt = 0.1 }
    T.raises(function() ctx(p5, out).student(tp, "dense", { 3 }) end, "was made with distill.stage1.weights.ce = 1.0, this command gives unset")
    -- --redo-changed: the old record, model and checkpoint set aside, the student trained again
    local rec2 = ctx(p3, out, true).student(tp, "dense", { 3 })
    T.eq(rec2.config.stage2.epochs, 3)
    T.eq(al.json.decode(read(out .. "/students/L3_dense_bimamba.json")).config.stage2.epochs, 3)
    local p = io.popen("cd " .. q(out) .. " && find set_aside -type f | sort")
    local moved = p:read("a")
    p:close()
    for _, ext in ipairs({ "json", "safetensors", "ckpt" }) do
      T.truthy(moved:find("students/L3_dense_bimamba." .. ext, 1, true), "set aside ." .. ext .. ":\n" .. moved)
    end
    -- and the redone record stands for those settings now
    no_training(function() return ctx(p3, out).student(tp, "dense", { 3 }) end)
    T.rm_rf(d)
  end },

  { name = "s2s reuse: an A-ViT of another train_limit is refused; a student made before its A-ViT was remade is refused when it names no file (else its file decides)", fn = function()
    local d = fixture()
    local out = d .. "/out"
    local C = ctx(preset(d), out)
    local ap = C.avit_path(0.8)
    C.student(ap, 0.8, { 3 })
    no_training(function() return ctx(preset(d), out).avit_path(0.8) end)
    local p2 = preset(d)
    p2.train_limit = 64
    one_line(T.raises(function() ctx(p2, out).avit_path(0.8) end,
      "s2s: record " .. out .. "/avit_k0.8.json was made with train_limit = 96, this command gives 64"))
    p2 = preset(d)
    p2.avit.epochs = 2
    T.raises(function() ctx(p2, out).avit_path(0.8) end, "avit_k0.8.json was made with avit.epochs = 1, this command gives 2")
    p2 = preset(d)
    p2.teacher.lr = 5e-3
    T.raises(function() ctx(p2, out).teacher_path() end, "teacher.json was made with teacher.lr = 0.001, this command gives 0.005")
    -- the A-ViT's record finishes later than the student started (it was remade): a student
    -- record that names its A-ViT file by SHA-256 is judged by the file, which is the same here
    local a = al.json.decode(read(out .. "/avit_k0.8.json"))
    a.finished = "2999-01-01T00:00:00Z"
    s2s.write_json(out .. "/avit_k0.8.json", a)
    no_training(function() return ctx(preset(d), out).student(ap, 0.8, { 3 }) end)
    -- one made before records named their files is judged by the clock: refused
    local spath = out .. "/students/L3_k0.8_bimamba.json"
    local srec = al.json.decode(read(spath))
    srec.teacher_file = nil
    s2s.write_json(spath, srec)
    T.raises(function() ctx(preset(d), out).student(ap, 0.8, { 3 }) end,
      "students/L3_k0.8_bimamba.json was made before " .. out .. "/avit_k0.8.json")
    T.rm_rf(d)
  end },

  { name = "s2s reuse: records name the model files they started from by SHA-256 (and their data files, machine, revision); a model file replaced by hand since is refused, and redone under --redo-changed", fn = function()
    local d = fixture()
    local out = d .. "/out"
    local C = ctx(preset(d), out)
    local tp = C.teacher_path()
    local ap = C.avit_path(0.8)
    C.student(ap, 0.8, { 3 })
    C.profile_of(tp, "profile", nil)
    local function rec_of(name) return al.json.decode(read(out .. "/" .. name .. ".json")) end
    local function sha(path) return (al.sha256_file(path)) end
    -- each record's source file, by path, size and SHA-256 of the file as it was read
    local teacher, avit = rec_of("teacher"), rec_of("avit_k0.8")
    local student, prof = rec_of("students/L3_k0.8_bimamba"), rec_of("profile/profile")
    T.eq(teacher.init_file.sha256, sha(d .. "/t0.safetensors"))
    T.eq(teacher.init_file.path, d .. "/t0.safetensors")
    T.eq(avit.teacher_file.sha256, sha(tp))
    T.eq(avit.teacher_file.size, #read(tp))
    T.eq(student.teacher_file.sha256, sha(ap))
    T.eq(prof.model_file.sha256, sha(tp))
    for name, r in pairs({ teacher = teacher, avit = avit, student = student, profile = prof }) do
      T.eq(type(r.git_revision), "string", 0, name)
      T.eq(type(r.machine), "table", 0, name)
      T.truthy(r.machine.cpu ~= nil and r.machine.blas ~= nil, name .. ": the machine")
    end
    T.eq(type(avit.dataset.files), "table", 0, "the data files it read (none for the synthetic set)")
    T.eq(type(prof.data_files), "table")
    -- the teacher file replaced by hand with another model: the A-ViT and the profile made
    -- from the old one are refused (one line: record, file, both hashes), and the teacher's
    -- own record (it saved another model)
    local old = sha(tp)
    s2s.save_model(tp, al.nn.ViT({ image_size = 16, patch_size = 4, channels = 3, num_classes = 5, dim = 16, depth = 3,
                                   heads = 2, seed = 9 }))
    local now = sha(tp)
    T.truthy(now ~= old, "the file changed")
    local msg = T.raises(function() no_training(function() return ctx(preset(d), out).avit_path(0.8) end) end,
      ("s2s: record %s/avit_k0.8.json was made from %s with SHA-256 %s..., the file is now %s...: it was replaced since; " ..
       "use a new --out folder, or --redo-changed to set it aside and redo the step"):format(out, tp, old:sub(1, 12), now:sub(1, 12)))
    one_line(msg)
    T.raises(function() ctx(preset(d), out).profile_of(tp, "profile", nil) end,
      ("profile/profile.json was made from %s with SHA-256 %s"):format(tp, old:sub(1, 12)))
    -- a record made before records named their files (the committed ones) is not compared
    local legacy = rec_of("avit_k0.8")
    legacy.teacher_file = nil
    s2s.write_json(out .. "/avit_k0.8.json", legacy)
    no_training(function() return ctx(preset(d), out).avit_path(0.8) end)
    s2s.write_json(out .. "/avit_k0.8.json", avit)
    -- the teacher's own record no longer stands for its file either (it names the model it saved)
    T.eq(teacher.saved_file.sha256, old, 0, "the teacher record names the model it saved")
    one_line(T.raises(function() ctx(preset(d), out).teacher_path() end,
      ("s2s: record %s/teacher.json saved the model %s with SHA-256 %s..., the file is now %s...: it was replaced since")
        :format(out, tp, old:sub(1, 12), now:sub(1, 12))))
    -- --redo-changed: the A-ViT is set aside, and so is the hand-made teacher file (with the
    -- teacher's record); the teacher is made again (the same seed: the same bytes as before the
    -- replacement) and the A-ViT from it
    local _, redone = ctx(preset(d), out, true).avit_path(0.8)
    T.eq(redone.teacher_file.sha256, old, 0, "the A-ViT redone from the remade teacher")
    T.eq({ sha(tp), rec_of("teacher").saved_file.sha256 }, { old, old }, 0, "the remade teacher")
    local p = io.popen("cd " .. q(out) .. " && find set_aside -name teacher.safetensors")
    local aside = p:read("a"):match("^(%S+)")
    p:close()
    T.truthy(aside, "the hand-made teacher file is set aside")
    T.eq(sha(out .. "/" .. aside), now, 0, "the set-aside teacher is the hand-made one")
    no_training(function() return ctx(preset(d), out).avit_path(0.8) end)
    -- the A-ViT was remade bit for bit (the same teacher bytes, seed and settings): the student
    -- made from it still stands for the file there (its SHA-256 matches; the clock is not asked)
    T.eq(sha(ap), student.teacher_file.sha256, 0, "the remade A-ViT is the same file")
    no_training(function() return ctx(preset(d), out).student(ap, 0.8, { 3 }) end)
    -- a step's own model replaced by hand: its record (whose saved_file names the model it saved)
    -- no longer stands for the file, and the steps made from the file would use the other model
    T.eq(rec_of("avit_k0.8").saved_file.sha256, sha(ap))
    local before = sha(ap)
    s2s.save_model(ap, al.nn.ViT({ image_size = 16, patch_size = 4, channels = 3, num_classes = 5, dim = 16, depth = 3,
                                   heads = 2, seed = 11 }))
    one_line(T.raises(function() no_training(function() return ctx(preset(d), out).avit_path(0.8) end) end,
      ("s2s: record %s/avit_k0.8.json saved the model %s with SHA-256 %s..., the file is now %s...: it was replaced since")
        :format(out, ap, before:sub(1, 12), sha(ap):sub(1, 12))))
    T.rm_rf(d)
  end },

  { name = "s2s reuse: s2s_strategies.lua takes --redo-changed; under --quick a preset built on another writes to its own <out>_quick", fn = function()
    local d = fixture()
    -- a parent preset (its quick folder <out>_quick) and a child that dofile's it with its own out
    local parent = ([[
return { name = "parent", out = %q, dataset = "synthetic", train_limit = 96, test_limit = 48,
  quick = { out = %q, train_limit = 64 } }
]]):format(d .. "/parent", d .. "/parent_quick")
    T.write_file(d .. "/parent.lua", parent)
    T.write_file(d .. "/child.lua", ("local p = dofile(%q)\np.out = %q\nreturn p\n"):format(d .. "/parent.lua", d .. "/child"))
    -- (summary refuses a folder without records: each gets a teacher record to summarise)
    for _, f in ipairs({ "child_quick", "parent_quick", "elsewhere" }) do
      os.execute("mkdir -p " .. q(d .. "/" .. f))
      T.write_file(d .. "/" .. f .. "/teacher.json", "{}")
    end
    local o, _, code = T.run_host(("scripts/s2s_strategies.lua summary --preset %s --quick --redo-changed --threads 1")
      :format(q(d .. "/child.lua")), { timeout = 120, merge = true })
    T.eq(code, 0, 0, o)
    T.truthy(o:find("writing to " .. d .. "/child_quick", 1, true), o)
    T.truthy(read(d .. "/child_quick/summary.md"), "the child's quick folder")
    T.eq(read(d .. "/parent_quick/summary.md"), nil, 0, "nothing in the parent's quick folder")
    -- the parent itself keeps its quick folder; --out still chooses
    o, _, code = T.run_host(("scripts/s2s_strategies.lua summary --preset %s --quick --threads 1"):format(q(d .. "/parent.lua")),
      { timeout = 120, merge = true })
    T.eq(code, 0, 0, o)
    T.truthy(read(d .. "/parent_quick/summary.md"), "the parent's quick folder")
    o, _, code = T.run_host(("scripts/s2s_strategies.lua summary --preset %s --quick --out %s --threads 1")
      :format(q(d .. "/child.lua"), q(d .. "/elsewhere")), { timeout = 120, merge = true })
    T.eq(code, 0, 0, o)
    T.truthy(read(d .. "/elsewhere/summary.md"), "--out wins")
    -- --redo-changed takes no value
    o, _, code = T.run_host(("scripts/s2s_strategies.lua summary --preset %s --redo_changed 3"):format(q(d .. "/child.lua")),
      { timeout = 120, merge = true })
    T.eq(code, 2, 0, o)
    T.truthy(o:find("--redo-changed takes no value, got '3'", 1, true), o)
    T.rm_rf(d)
  end },
}
