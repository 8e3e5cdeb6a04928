-- attnlab.run.train (also attnlab.train) -- one training run of the compact classifier: one dataset, one
-- normalizer, one seed. Used by scripts/train.lua and by sweeps.
--
--   local rec = al.train.run{dataset = "fashion_mnist", normalizer = "entmax15", seed = 1, epochs = 3}
--
-- The run writes one JSON record atomically (config, git revision, machine, per-epoch
-- loss/accuracy, final test accuracy, attention support per layer and head, learned
-- alphas, train time per step, inference time per example, parameter count), and a
-- checkpoint after every epoch from which an interrupted run resumes. With `save`, the trained
-- model itself is written at the end (checkpoint.save_vit: timm names and its config, so that
-- checkpoint.vit_from_file gives the same model back).
local al = require "attnlab"
local fit = require "attnlab.run.fit"

local train = {}

-- Defaults. image_patch: the study's preset gives every image dataset a 4x4 grid of
-- patches + the class token (N = 17): patch 8 on 32x32 CIFAR-10, 7 on 28x28 images.
-- The recipe, key by key, as a PyTorch user would write it:
--   init          "torch" (PyTorch's module defaults) or "timm" (timm's ViT init); see nn/vit.lua
--   embed_std     std of the text model's token embedding (1 = nn.Embedding's default)
--   lr, weight_decay, beta1, beta2, adam_eps   torch.optim.AdamW's arguments
--   decay_all     false: no weight decay on biases, norms, pos_embed, cls_token and hae's
--                 alphas (timm's groups); true: weight_decay on every parameter, as
--                 torch.optim.AdamW(model.parameters(), lr, weight_decay=wd)
--   warmup_epochs linear warmup over floor(warmup_epochs * steps_per_epoch) steps: step t
--                 (0-based) uses lr * (t + 1) / warmup; then cosine from lr to min_lr at
--                 the last step (optim.CosineWarmup)
--   clip_grad     global gradient-norm clipping (0: none); label_smoothing of the loss
train.DEFAULTS = {
  dataset = "fashion_mnist", normalizer = "softmax", seed = 1, epochs = 10, batch_size = 128,
  lr = 1e-3, weight_decay = 0.05, warmup_epochs = 1, min_lr = 1e-5, label_smoothing = 0.0,
  beta1 = 0.9, beta2 = 0.999, adam_eps = 1e-8, decay_all = false, init = "torch", embed_std = 0.02,
  clip_grad = 1.0, dim = 64, depth = 2, heads = 4, mlp_ratio = 4, patch = nil, iters = 50,
  train_limit = nil, test_limit = nil, val = 0, eval_batch = 500, threads = nil,
  padding = "positions", vocab_size = nil, seq_len = 96, out = nil, checkpoint = nil,
  progress = true, cifar_exact_test = true,
}

-- keys whose default is nil (the dataset's own default, or off)
local OPTIONAL_KEYS = { patch = true, train_limit = true, test_limit = true, threads = true, out = true,
                        checkpoint = true, vocab_size = true, crop_pad = true, hflip = true, save = true }
train.OPTIONAL_KEYS = OPTIONAL_KEYS

-- One line per key for scripts/train.lua --help (a key without a line is still listed).
train.HELP = {
  dataset = "cifar10 | fashion_mnist | kmnist | newsgroups20 | marker",
  normalizer = table.concat(al.nn.Normalizer.NAMES, " | "),   -- from the normalizer table
  seed = "positive integer (model init and data order)",
  epochs = "positive integer", batch_size = "examples per step", lr = "peak learning rate (AdamW)",
  weight_decay = "AdamW weight decay", warmup_epochs = "linear warm-up, in epochs (may be fractional)",
  min_lr = "final learning rate of the cosine schedule", label_smoothing = "0 .. <1", clip_grad = "max gradient " ..
  "norm (0: off)", dim = "embedding width", depth = "encoder blocks", heads = "attention heads",
  mlp_ratio = "MLP width / dim", patch = "patch size (default: a 4x4 grid of patches)", iters = "bisection " ..
  "iterations (hae, entmax:<alpha>)", train_limit = "use N training examples (a fixed random subset)",
  test_limit = "evaluate on N test examples (a fixed random subset)", val = "hold out N training examples as " ..
  "a validation set (0: none)", eval_batch = "batch size for evaluation", threads = "threads (default: all cores)",
  padding = "text: positions | masked", vocab_size = "text: vocabulary size", seq_len = "text: tokens per example",
  out = "write the JSON record here (atomically)", checkpoint = "checkpoint file: written after every epoch, a " ..
  "rerun resumes from it", save = "write the trained model here (safetensors with its config: " ..
  "require('attnlab.checkpoint').vit_from_file(FILE) gives it back)", progress = "true | false: progress lines",
  cifar_exact_test = "also report accuracy on " ..
  "CIFAR-10's 1,000 bit-exact test records",
  crop_pad = "images: random crop of the normalized training image padded by N zeros, i.e. the channel-mean colour, not torchvision's black (unset: off; test/val never)",
  hflip = "images: true flips training images horizontally with probability 1/2 (unset: off)",
}

local IMAGE_PATCH = { cifar10 = 8, fashion_mnist = 7, fmnist = 7, kmnist = 7 }
-- their image sides (train.patch_problem)
local IMAGE_SIZE = { cifar10 = 32, fashion_mnist = 28, fmnist = 28, kmnist = 28 }

-- What the number keys with integer defaults take ("nan" arrives as a string, a wrong type):
-- not "a positive integer", as their defaults suggest, but fractions and (warmup) 0 too.
local NUMBER_WANT = {
  warmup_epochs = "a finite number >= 0 (in epochs; fractions such as 0.5, and 0, allowed)",
  mlp_ratio = "a finite number > 0",
}

local copy = require("attnlab.util").copy
local error_text = require("attnlab.util").error_text
local writable_path = require("attnlab.util").writable_path
local abspath = require("attnlab.util").abspath

function train.config(user)
  local c = copy(train.DEFAULTS)
  for k, v in pairs(user or {}) do
    if train.DEFAULTS[k] == nil and not OPTIONAL_KEYS[k] then
      error(("train: unknown config key '%s'"):format(tostring(k)), 3)
    end
    c[k] = v
  end
  if not al.data.by_name[c.dataset] then
    local names = {}
    for k in pairs(al.data.by_name) do names[#names + 1] = k end
    table.sort(names)
    error(("train: unknown dataset '%s'; known: %s"):format(tostring(c.dataset), table.concat(names, ", ")), 3)
  end
  -- (a table got "unknown normalizer 'table: 0x...'" from the parser, as if misspelt)
  if type(c.normalizer) ~= "string" then
    error(("train: normalizer must be a string (a name such as 'softmax' or 'entmax15'), got %s")
      :format(al.cli.show(c.normalizer)), 3)
  end
  local okn, nerr = pcall(al.nn.Normalizer.parse, c.normalizer)   -- raises with the list of valid names
  if not okn then error("train: " .. error_text(nerr), 3) end
  -- every key up front: a bad value is one message here, not a failure deep inside a run
  local function bad(k, want) error(("train: %s must be %s, got %s"):format(k, want, al.cli.show(c[k])), 3) end
  for k, d in pairs(train.DEFAULTS) do   -- the type of each key's default
    if c[k] ~= nil and type(c[k]) ~= type(d) then
      bad(k, type(d) == "boolean" and "true or false" or NUMBER_WANT[k] or math.type(d) == "integer" and
        "a positive integer" or type(d) == "number" and "a number" or "a " .. type(d))
    end
  end
  -- sizes and counts below 2^31: a batch of 2^63 - 1 overflows the loader's batch count (no
  -- batches, a NaN loss) and the schedule's step count
  local BIG = 2 ^ 31
  if math.type(c.seed) ~= "integer" or c.seed < 1 then bad("seed", "a positive integer") end
  for _, k in ipairs({ "epochs", "batch_size", "dim", "depth", "heads", "iters", "eval_batch", "seq_len" }) do
    if math.type(c[k]) ~= "integer" or c[k] < 1 then bad(k, "a positive integer") end
    if c[k] >= BIG then bad(k, "below 2^31") end
  end
  for _, k in ipairs({ "patch", "train_limit", "test_limit", "threads", "vocab_size" }) do
    -- (false: explicitly off, e.g. a quick preset's limit switched off for one dataset)
    if c[k] ~= nil and c[k] ~= false and (math.type(c[k]) ~= "integer" or c[k] < 1) then
      bad(k, "a positive integer (or unset)")
    end
    if math.type(c[k]) == "integer" and c[k] >= BIG then bad(k, "below 2^31") end
  end
  if math.type(c.val) ~= "integer" or c.val < 0 then bad("val", "an integer >= 0") end
  if c.crop_pad ~= nil and (math.type(c.crop_pad) ~= "integer" or c.crop_pad < 0) then bad("crop_pad", "an integer >= 0 (or unset)") end
  if c.hflip ~= nil and type(c.hflip) ~= "boolean" then bad("hflip", "true or false (or unset)") end
  for _, k in ipairs({ "lr", "weight_decay", "label_smoothing", "min_lr", "warmup_epochs", "clip_grad", "mlp_ratio", "adam_eps" }) do
    if type(c[k]) ~= "number" or c[k] ~= c[k] or c[k] < 0 or c[k] == math.huge then
      bad(k, k == "warmup_epochs" and NUMBER_WANT.warmup_epochs or "a finite number >= 0")
    end
  end
  if c.lr <= 0 then bad("lr", "a number > 0") end
  -- the schedule CosineWarmup would refuse at the first step: said before any data is read (a
  -- warmup longer than the run is allowed there: a smoke test's --epochs 1 on a preset)
  if c.min_lr > c.lr then bad("min_lr", ("at most lr (%s): the cosine would rise instead of decay"):format(al.cli.show(c.lr))) end
  if c.mlp_ratio <= 0 then bad("mlp_ratio", "a number > 0") end
  -- (AdamW divides by sqrt(v) + eps: 0 was refused by the optimizer, as "eps", once the data was read)
  if c.adam_eps <= 0 then bad("adam_eps", "a finite number > 0") end
  -- (the MLP's width is floor(dim * mlp_ratio): 0 failed only when the model was built, after
  -- the data was read)
  if math.floor(c.dim * c.mlp_ratio) < 1 then
    bad("mlp_ratio", ("at least 1/dim = %s: the MLP width floor(dim * mlp_ratio) must be >= 1 (dim %d)")
      :format(al.cli.show(1 / c.dim), c.dim))
  end
  if c.label_smoothing >= 1 then bad("label_smoothing", "a number in [0, 1)") end
  if c.dim % c.heads ~= 0 then error(("train: dim (%d) must be a multiple of heads (%d)"):format(c.dim, c.heads), 3) end
  if c.padding ~= "positions" and c.padding ~= "masked" then bad("padding", "'positions' or 'masked'") end
  for _, k in ipairs({ "beta1", "beta2" }) do
    if type(c[k]) ~= "number" or not (c[k] >= 0 and c[k] < 1) then bad(k, "a number in [0, 1)") end
  end
  if type(c.embed_std) ~= "number" or not (c.embed_std > 0) or c.embed_std == math.huge then
    bad("embed_std", "a number > 0 (finite)")
  end
  if type(c.decay_all) ~= "boolean" then bad("decay_all", "true or false") end
  al.nn.ViT.check_init(c.init, "train")
  for _, k in ipairs({ "out", "checkpoint", "save" }) do
    if c[k] ~= nil and (type(c[k]) ~= "string" or c[k] == "") then bad(k, "a file path") end
  end
  -- the record is written over the checkpoint's path otherwise, and every rerun then fails to
  -- read it as a checkpoint (compared as absolute paths: ./a and a are one file; symlinks are not followed)
  if c.out and c.checkpoint and abspath(c.out) == abspath(c.checkpoint) then
    error(("train: out and checkpoint are the same file (%s); the record would overwrite the checkpoint, " ..
      "give them different paths"):format(c.out), 3)
  end
  -- the saved model would overwrite the record or the checkpoint (or they it)
  for _, k in ipairs({ "out", "checkpoint" }) do
    if c.save and c[k] and abspath(c.save) == abspath(c[k]) then
      error(("train: save and %s are the same file (%s); the model would overwrite the %s, give them different paths")
        :format(k, c.save, k == "out" and "record" or "checkpoint"), 3)
    end
  end
  -- Options of the other kind of dataset would be recorded as if they had shaped the run, and
  -- augmenting token ids is meaningless: refused, naming the kind each belongs to.
  local text = c.dataset:match("^newsgroups") or c.dataset == "marker"
  local function other_kind(k, kind)
    error(("train: %s applies to %s datasets only, not %s"):format(k, kind, c.dataset), 3)
  end
  if text then
    -- ids 1 <pad> and 2 <unk> come first: a vocabulary needs a word besides them (the marker
    -- task needs more, said by its loader)
    if c.vocab_size and c.vocab_size < 3 then bad("vocab_size", "an integer >= 3 (<pad>, <unk> and at least one word)") end
    for _, k in ipairs({ "patch", "crop_pad", "hflip" }) do if c[k] ~= nil and c[k] ~= false then other_kind(k, "image") end end
  else
    if c.vocab_size then other_kind("vocab_size", "text") end
    if c.padding ~= train.DEFAULTS.padding then other_kind("padding", "text") end
    if c.seq_len ~= train.DEFAULTS.seq_len then other_kind("seq_len", "text") end
    -- (the token embedding's spread: an image model has none, yet the record carried the value)
    if c.embed_std ~= train.DEFAULTS.embed_std then other_kind("embed_std", "text") end
  end
  -- a crop padding as wide as the image would crop mostly zeros (and a huge one overflows)
  local side = IMAGE_SIZE[c.dataset]
  if side and c.crop_pad and c.crop_pad >= side then
    bad("crop_pad", ("below the image side (%d for %s)"):format(side, c.dataset))
  end
  c.patch = c.patch or IMAGE_PATCH[c.dataset]
  return c
end

-- Why a resolved config's patch cannot cut its dataset's images, or nil: the command line refuses
-- it before any data is read (a usage error). Not in train.config: a sweep keeps such a run as
-- one failing run (its error record) rather than refusing the whole experiment.
function train.patch_problem(c)
  local side = IMAGE_SIZE[c.dataset]
  if not side or math.type(c.patch) ~= "integer" or side % c.patch == 0 then return nil end
  local divisors = {}
  for p = 2, side // 2 do if side % p == 0 then divisors[#divisors + 1] = p end end
  return ("patch = %d does not fit %s: image_size %d is not a multiple of patch_size %d (use one of %s)")
    :format(c.patch, c.dataset, side, c.patch, table.concat(divisors, ", "))
end

-- ---- environment facts for the record -----------------------------------------------------
local function sh(cmd)
  local f = io.popen(cmd .. " 2>/dev/null")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  s = s and s:gsub("%s+$", "")
  return s ~= "" and s or nil
end

function train.machine()
  local cpu = sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2")
  local cfg = al.config()
  return { host = sh("hostname"), kernel = sh("uname -sr"), cpu = cpu and cpu:gsub("^%s+", ""),
           cores = cfg.cores, threads = al.get_num_threads(), blas = cfg.blas, blas_backend = cfg.blas_backend,
           blas_coretype_source = cfg.blas_coretype_source, gemm = cfg.gemm, gemm_rule = cfg.gemm_rule,
           attnlab = cfg.version }
end

function train.git_revision()
  local root = al.root()
  -- (quoted for sh: a checkout folder named "it's" broke the single quotes, and the revision read "unknown")
  local q = require("attnlab.util").shquote(root)
  local rev = sh("git -C " .. q .. " rev-parse HEAD")
  local dirty = sh("git -C " .. q .. " status --porcelain --untracked-files=no")
  return rev and (rev .. (dirty and "-dirty" or "")) or "unknown"
end

-- ---- data and model -------------------------------------------------------------------------
-- A bad value that shows only once the data is read (a limit above a split's size): raised as
-- this object, which the command line reports as a usage error (exit 2); tostring gives the message.
local UsageError = { __tostring = function(e) return e.message end }
function train.usage_error(msg) return setmetatable({ message = msg, usage = true }, UsageError) end

function train.datasets(c)
  local make = al.data.by_name[c.dataset]
  local opts = { split = "train" }
  if c.dataset:match("^newsgroups") or c.dataset == "marker" then
    -- vocab_size nil: the dataset's default (20,000 for 20 Newsgroups, 1,000 for the marker task)
    opts.vocab_size, opts.seq_len, opts.padding = c.vocab_size, c.seq_len, c.padding
  end
  local tr = make(opts)
  -- fewer words than asked for qualify (min_count): the model gets tr.vocab_size ids, and the
  -- record would carry a vocab_size the run never had
  if c.vocab_size and tr.vocab_size and tr.vocab_size < c.vocab_size then
    error(train.usage_error(("train: vocab_size = %d is more than the %d ids %s's training split has (<pad>, <unk> " ..
      "and the words frequent enough); give at most %d"):format(c.vocab_size, tr.vocab_size, c.dataset, tr.vocab_size)), 0)
  end
  opts = copy(opts); opts.split = "test"
  if tr.vocab then opts.vocab = tr.vocab end
  local te = make(opts)
  if c.dataset == "cifar10" and c.cifar_exact_test then te.exact_records = 1000 end
  local val
  -- (train_val_split would refuse it too, as a failed run: a usage error like the limits below)
  if c.val and c.val >= tr.n then
    error(train.usage_error(("train: val = %d leaves no training examples: %s has %d; give at most %d")
      :format(c.val, c.dataset, tr.n, tr.n - 1)), 0)
  end
  if c.val and c.val > 0 then tr, val = al.data.train_val_split(tr, { val = c.val, seed = c.seed }) end
  -- limits take a seeded random subset (not the first N: 20 Newsgroups is stored class by
  -- class); the subset depends on the limit only, not on the run's seed, so every seed and
  -- normalizer of a sweep sees the same examples. CIFAR's bit-exact first 1,000 test records
  -- are only reported on the full test set.
  local function limited(ds, limit, salt)
    local idx = al.randperm(ds.n, al.Generator(1000003 * salt + limit)):narrow(1, 1, limit)
    local sorted = al.tensor((function() local t = idx:totable() table.sort(t) return t end)(), { dtype = "int64" })
    return ds:subset(sorted, ds.split)
  end
  if val and tr.n < 1 then error(("train: val = %d leaves no training examples (%s has %d)"):format(c.val, c.dataset, tr.n + val.n), 0) end
  -- a limit above the split's size is refused, not ignored: the record would carry a limit the
  -- run never applied (a preset's limit meant for other datasets is switched off with false)
  local function over(k, limit, n, what)
    error(train.usage_error(("train: %s = %d is more than the %d %s examples of %s%s; give at most %d, or leave it unset for all")
      :format(k, limit, n, what, c.dataset, (what == "training" and val) and (" left after val = %d"):format(c.val) or "", n)), 0)
  end
  if c.train_limit and c.train_limit > tr.n then over("train_limit", c.train_limit, tr.n, "training") end
  if c.test_limit and c.test_limit > te.n then over("test_limit", c.test_limit, te.n, "test") end
  if c.train_limit and c.train_limit < tr.n then tr = limited(tr, c.train_limit, 1) end
  if c.test_limit and c.test_limit < te.n then te = limited(te, c.test_limit, 2); te.exact_records = nil end
  return tr, te, val
end

-- The files the run's data came from, each with its size and SHA-256 (cached across runs).
function train.data_files(...)
  local paths, seen = {}, {}
  for i = 1, select("#", ...) do
    local ds = select(i, ...)
    for _, p in ipairs(ds and ds.files or {}) do
      if not seen[p] then seen[p] = true paths[#paths + 1] = p end
    end
  end
  return al.data.fingerprints(paths)
end

function train.model(c, ds)
  local common = { dim = c.dim, depth = c.depth, heads = c.heads, mlp_ratio = c.mlp_ratio, normalizer = c.normalizer,
                   num_classes = ds.num_classes, seed = c.seed, iters = c.iters, init = c.init, embed_std = c.embed_std }
  if ds.vocab_size then
    common.vocab_size, common.seq_len = ds.vocab_size, ds.seq_len
  else
    common.image_size, common.patch_size, common.channels = ds.size, c.patch, ds.channels
  end
  return al.nn.ViT(common)
end

-- The optimizer groups of a run (run/fit.lua's rule: no weight decay on biases, norms,
-- position embedding, class token, alphas, Mamba's A_log and D); with decay_all, one group:
-- weight decay on every parameter (torch.optim.AdamW(model.parameters())).
function train.param_groups(model, wd, decay_all) return fit.param_groups(model, wd, decay_all) end

-- ---- evaluation ------------------------------------------------------------------------------
-- accuracy and mean cross-entropy loss over a dataset; with support tracking on, support stats are
-- collected too. The loss is the divergence guard's (weights finite but huge give inf/NaN logits).
-- The model is left in the mode it came in (PyTorch users call it on a model in eval mode; it
-- used to come back in train mode, dropout on), on an error too.
function train.evaluate(model, ds, c, opts)
  opts = opts or {}
  local was_training = model.training
  model:eval()
  if opts.support then model:track_support(true) end
  local correct, n, t, loss_sum = 0, 0, 0, 0
  local exact_correct, exact_n = 0, 0
  local ok, err = pcall(al.no_grad, function()
    for x, y, _, extra in al.data.Loader(ds, { batch_size = c.eval_batch }):iter() do
      local t0 = al.clock()
      local logits = model(x, extra)
      t = t + (al.clock() - t0)
      local hit = al.eq(al.argmax(logits, 2), y)
      correct = correct + al.sum(hit):item()
      loss_sum = loss_sum + al.cross_entropy(logits, y):item() * y:numel()
      if ds.exact_records and n < ds.exact_records then
        local k = math.min(ds.exact_records - n, hit:numel())
        exact_correct = exact_correct + al.sum(hit:narrow(1, 1, k)):item()
        exact_n = exact_n + k
      end
      n = n + y:numel()
    end
  end)
  if not ok then
    if opts.support then model:track_support(false) end
    model:train(was_training)
    error(err, 0)
  end
  local r = { accuracy = correct / n, n = n, infer_s_per_example = t / n, loss = loss_sum / n }
  if exact_n > 0 then r.accuracy_exact = exact_correct / exact_n; r.n_exact = exact_n end
  if opts.support then
    r.support = model:support_stats()
    model:track_support(false)
  end
  model:train(was_training)
  return r
end

-- ---- progress --------------------------------------------------------------------------------
local Progress = {}
Progress.__index = Progress
local function isatty()
  local ok, r = pcall(function() return os.execute("test -t 1") end)
  return ok and r == true
end
function Progress.new(total, enabled)
  return setmetatable({ total = total, tty = enabled and isatty(), enabled = enabled, t0 = al.clock(), last = 0 }, Progress)
end
function Progress:update(epoch, step, loss, imgs_per_s)
  if not self.enabled then return end
  local now = al.clock()
  local done = step / self.total
  local eta = done > 0 and (now - self.t0) * (1 - done) / done or 0
  local line = ("epoch %d  step %d/%d  loss %.4f  %.0f img/s  ETA %ds"):format(epoch, step, self.total, loss, imgs_per_s, math.floor(eta))
  if self.tty then
    io.stdout:write("\r" .. line .. "   ")
    io.stdout:flush()
  elseif now - self.last > 10 or step == self.total then
    print(line)
    self.last = now
  end
end
function Progress:finish() if self.tty then io.stdout:write("\n") end end

-- The key a checkpoint is made with: every config key but where output goes and how fast.
local function config_key(c)
  local k = {}
  for name, v in pairs(c) do
    if name ~= "out" and name ~= "checkpoint" and name ~= "save" and name ~= "progress" and name ~= "threads" then
      k[name] = v
    end
  end
  return fit.config_key(k, { flat = true })
end
train.config_key = config_key   -- the sweep compares a left checkpoint's key with its run's

local function median(t)
  if #t == 0 then return nil end
  local s = copy(t)
  table.sort(s)
  return s[(#s + 1) // 2]
end

local finite = fit.finite

-- Why the classifier's own checkpoint fields cannot be resumed from (fit.run's check_state), or
-- nil: step_times, the timed steps so far, and step_examples, the examples of each (absent in
-- checkpoints written before they were kept: every step then counts as a full batch).
local function check_timing_state(st)
  -- every epoch done holds its test accuracy (the record's learning curve; fit checks the range)
  for i, ep in ipairs(st.history) do
    if ep.test_accuracy == nil then return ("history[%d] has no test_accuracy"):format(i) end
  end
  -- the epochs done go into the record as they are: each must be what a valid record's epoch
  -- is (report/record.lua: entry i of epoch i, lr and seconds >= 0), or the resumed run would
  -- end in a record the checker refuses
  local hwhy = require("attnlab.report.record").history_problem(st.history)
  if hwhy then return hwhy end
  local t, e = st.step_times, st.step_examples
  if t == nil then return nil end
  if type(t) ~= "table" then return "step_times = " .. al.cli.show(t) .. ", want a list of step times in seconds" end
  for i, v in ipairs(t) do
    if not finite(v) or v < 0 then return ("step_times[%d] = %s, want a time in seconds >= 0"):format(i, al.cli.show(v)) end
  end
  if next(t) ~= nil and #t == 0 then return "step_times is not a list of step times in seconds" end
  if e == nil then return nil end
  if type(e) ~= "table" or #e ~= #t then
    return ("step_examples = %s, want a list of %d example counts (one per step time)"):format(
      type(e) == "table" and ("a list of " .. #e) or al.cli.show(e), #t)
  end
  for i, v in ipairs(e) do
    if math.type(v) ~= "integer" or v < 1 then return ("step_examples[%d] = %s, want a positive integer"):format(i, al.cli.show(v)) end
  end
end

-- The median over steps of examples per second (each step's own examples: a last, smaller
-- batch, or a batch_size above the training set, is not counted as a full batch_size).
local function median_rate(times, examples)
  local r = {}
  for i, dt in ipairs(times) do if dt > 0 then r[#r + 1] = examples[i] / dt end end
  return median(r)
end

-- A diverged model: its test loss is NaN or inf (weights finite but huge overflow the logits).
local function check_diverged(ev, when)
  if not finite(ev.loss) then
    error(("train: the test loss is %s %s (the run diverged); no record written"):format(
      ev.loss ~= ev.loss and "NaN" or tostring(ev.loss), when), 0)
  end
end

-- ---- the run -------------------------------------------------------------------------------------
-- The first of a resolved config's output files (out, checkpoint, save) that cannot be written,
-- as key, path, why; nil when all can. Checked before a run starts: a mistyped --out used to fail
-- only when the finished run wrote its record.
local OUTPUT_WHAT = { out = "record", checkpoint = "checkpoint", save = "model" }
function train.unwritable_output(c)
  for _, k in ipairs({ "out", "checkpoint", "save" }) do
    if c[k] ~= nil then
      local ok, why = writable_path(c[k])
      if not ok then return k, c[k], why end
    end
  end
end

function train.run(user)
  local c = train.config(user)
  local key, path, why = train.unwritable_output(c)
  if key then error(("train: cannot write the %s to %s: %s"):format(OUTPUT_WHAT[key], path, why), 2) end
  if c.threads then al.set_num_threads(c.threads) end
  local tr, te, val = train.datasets(c)
  local model = train.model(c, tr)
  local steps_per_epoch = (tr.n + c.batch_size - 1) // c.batch_size
  local rec = {
    config = c, git_revision = train.git_revision(), machine = train.machine(), params = model:num_parameters(),
    tokens = model.num_tokens, dataset = { name = tr.name, train = tr.n, test = te.n, val = val and val.n or 0,
    protocol = tr.protocol, files = train.data_files(tr, te, val) }, epochs = {},
    started = os.date("!%Y-%m-%dT%H:%M:%SZ"),
  }
  -- the time and the examples of each step (past the warm-up; of the warm-up steps)
  local step_times, step_examples, warm_times, warm_examples = {}, {}, {}, {}
  local epoch_now = 0
  local progress = Progress.new(steps_per_epoch * c.epochs, c.progress)
  local stage = {
    epochs = c.epochs, lr = c.lr, shuffle_seed = c.seed,
    step = function(x, y, extra, tally)
      local logits = model(x, extra)
      tally.correct = (tally.correct or 0) + al.sum(al.eq(al.argmax(logits:detach(), 2), y)):item()
      tally.seen = (tally.seen or 0) + y:numel()
      return al.cross_entropy(logits, y, { label_smoothing = c.label_smoothing })
    end,
    eval = function(tally)
      local ev = train.evaluate(model, te, c)
      check_diverged(ev, ("after epoch %d"):format(epoch_now))
      local e = { train_accuracy = tally.correct / tally.seen, test_accuracy = ev.accuracy,
                  test_accuracy_exact = ev.accuracy_exact }
      if val then e.val_accuracy = train.evaluate(model, val, c).accuracy end
      return e
    end,
  }
  rec.epochs = fit.run(model, { stage }, {
    name = "train", train = tr, batch_size = c.batch_size, seed = c.seed, weight_decay = c.weight_decay,
    decay_all = c.decay_all, betas = { c.beta1, c.beta2 }, eps = c.adam_eps, warmup_epochs = c.warmup_epochs,
    min_lr = c.min_lr, clip_grad = c.clip_grad, clip_order = "model", checkpoint = c.checkpoint, key = config_key(c),
    augment = (c.crop_pad or c.hflip) and { crop_pad = c.crop_pad, hflip = c.hflip } or nil,
    -- a run too short to have steps past the warm-up is timed on those (flagged below)
    on_step = function(i)
      epoch_now = i.epoch
      if i.step > 2 then
        step_times[#step_times + 1], step_examples[#step_examples + 1] = i.dt, i.batch
      else
        warm_times[#warm_times + 1], warm_examples[#warm_examples + 1] = i.dt, i.batch
      end
      progress:update(i.epoch, (i.epoch - 1) * steps_per_epoch + i.step, i.loss, i.batch / i.dt)
    end,
    on_epoch = function(e)
      if not c.progress then return end
      progress:finish()
      print(("epoch %d: loss %.4f  train acc %.4f  test acc %.4f%s  (%.1f s)"):format(e.epoch, e.loss, e.train_accuracy,
        e.test_accuracy, e.val_accuracy and ("  val acc %.4f"):format(e.val_accuracy) or "", e.seconds))
    end,
    extra_state = function() return { step_times = step_times, step_examples = step_examples } end,
    check_state = check_timing_state,
    on_resume = function(st)
      step_times = st.step_times or {}
      step_examples = st.step_examples
      if not step_examples then   -- a checkpoint from before they were kept: full batches
        step_examples = {}
        for k = 1, #step_times do step_examples[k] = math.min(c.batch_size, tr.n) end
      end
      rec.resumed_from_epoch = st.epoch
    end,
  })
  local final = train.evaluate(model, te, c, { support = true })
  check_diverged(final, "in the final evaluation")
  rec.test_accuracy = final.accuracy
  rec.test_accuracy_exact = final.accuracy_exact
  rec.support = final.support
  local dens, dens_real = 0, 0
  for _, s in ipairs(final.support) do dens, dens_real = dens + s.mean_all, dens_real + s.mean_real end
  rec.support_density = dens / #final.support
  rec.support_density_real = dens_real / #final.support
  if c.normalizer == "hae" then rec.alphas = model:alphas() end
  -- a run too short to have steps past the warm-up is timed on those (flagged), never "0 img/s"
  rec.train_s_per_step, rec.train_img_per_s = median(step_times), median_rate(step_times, step_examples)
  if not rec.train_s_per_step and #warm_times > 0 then
    rec.train_s_per_step, rec.train_timing_includes_warmup = median(warm_times), true
    rec.train_img_per_s = median_rate(warm_times, warm_examples)
  end
  -- nothing degenerate becomes a result: a record's accuracy is a finite number in [0, 1]
  if type(rec.test_accuracy) ~= "number" or rec.test_accuracy ~= rec.test_accuracy or final.n < 1 then
    error(("train: no test accuracy (evaluated %d examples); no record written"):format(final.n or 0), 2)
  end
  rec.infer_s_per_example = final.infer_s_per_example
  -- the record as every reader will read it (its JSON, through report/record.lua's check) before
  -- anything is written: a run resumed from a checkpoint that does not hold its state (an edited
  -- weight re-evaluates to another accuracy than the last epoch's) fails here, not in a report
  local why = require("attnlab.report.record").check(al.json.decode(al.json.encode(rec)))
  if why then
    if rec.resumed_from_epoch and c.checkpoint then
      error(("train: checkpoint %s is corrupt (the run resumed from it after epoch %d would record: %s); " ..
        "delete it (or move it away) to start this run over; no record written"):format(c.checkpoint,
        rec.resumed_from_epoch, why), 0)
    end
    error(("train: the run's record would be invalid (%s); no record written"):format(why), 0)
  end
  -- the model before the record: a record is written only for a run whose outputs all exist
  if c.save then
    local ok, err = pcall(require("attnlab.nn.checkpoint").save_vit, c.save, model,
      { train_config = c, test_accuracy = tostring(rec.test_accuracy) })
    if not ok then error("train: cannot write the model: " .. tostring(err):gsub("^checkpoint%.save_vit: ", ""), 2) end
  end
  rec.finished = os.date("!%Y-%m-%dT%H:%M:%SZ")
  if c.out then
    local ok, err = al.write_atomic(c.out, al.json.encode(rec, true) .. "\n")
    if not ok then error("train: cannot write " .. c.out .. ": " .. err, 2) end
  end
  return rec, model
end

return train
