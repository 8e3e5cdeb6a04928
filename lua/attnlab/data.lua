-- attnlab.data -- datasets from their canonical files, and a seeded batch loader.
--
--   local train = al.data.fashion_mnist{split = "train"}     -- finds the files itself
--   local loader = al.data.Loader(train, {batch_size = 128, shuffle = true, seed = 1})
--   for x, y in loader:iter(epoch) do ... end                -- x (B,1,28,28), y (B) 1..10
--
-- Files are looked up in ATTNLAB_DATA (folders separated by ':'), then in the
-- checkout's ../shared/data (only when running from a checkout, not from an installed
-- tree), /usr/share/datasets and ~/.cache/attnlab/data. Decoding
-- is C (IDX and CIFAR binary, gzip'd or not); pixels stay uint8 until a batch is made.
local al = require "attnlab"

local data = {}

-- ---- locating files --------------------------------------------------------------------

function data.search_path()
  local dirs = {}
  local env = os.getenv("ATTNLAB_DATA")
  if env then for d in env:gmatch("[^:]+") do dirs[#dirs + 1] = d end end
  local checkout = al.checkout()
  if checkout then dirs[#dirs + 1] = checkout .. "/../shared/data" end
  dirs[#dirs + 1] = "/usr/share/datasets"
  local home = os.getenv("HOME")
  if home then dirs[#dirs + 1] = home .. "/.cache/attnlab/data" end
  return dirs
end

local function exists(path)
  local f = io.open(path, "rb")
  if f then f:close() return true end
  return false
end

-- First existing file among candidate relative names, in the search path; else an
-- error that lists every place looked at.
function data.find(what, candidates)
  local tried = {}
  for _, d in ipairs(data.search_path()) do
    for _, c in ipairs(candidates) do
      local p = d .. "/" .. c
      if exists(p) then return p end
      tried[#tried + 1] = p
    end
  end
  error(("%s: file not found; looked for:\n  %s\nSet ATTNLAB_DATA to the folder that holds it (scripts/fetch_data.lua downloads the canonical archives)")
    :format(what, table.concat(tried, "\n  ")), 0)
end

local function gz_candidates(folders, name)
  local out = {}
  for _, f in ipairs(folders) do
    out[#out + 1] = f .. "/" .. name .. ".gz"
    out[#out + 1] = f .. "/" .. name
  end
  return out
end

local function read_idx(what, folders, name)
  local path = data.find(what, gz_candidates(folders, name))
  local b, err = al.read_idx(path)
  if not b then error(what .. ": " .. err, 0) end
  return b, path
end

-- ---- datasets ----------------------------------------------------------------------------
-- A dataset: images (Bytes (N,C,H,W) or (N,H,W)), labels (int64 (N), 1-based), n,
-- num_classes, classes (names), channels, size, and normalisation stats.
local Dataset = {}
Dataset.__index = Dataset
data.Dataset = Dataset

function Dataset:__tostring()
  return ("Dataset(%s %s: %d examples, %d classes)"):format(self.name, self.split or "", self.n, self.num_classes)
end

-- x (B,C,H,W) float32 normalised, y (B) int64, for 1-based example numbers idx (int64 (B)).
function Dataset:batch(idx)
  if self.index then idx = al.index_select(self.index, 1, idx) end
  if self.make_batch then return self:make_batch(idx) end
  local x = self.images:batch(idx, { scale = 1 / 255, mean = self.mean, std = self.std })
  if #self.images:shape() == 3 then
    local s = x:shape()
    x = x:reshape({ s[1], 1, s[2], s[3] })
  end
  return x, al.index_select(self.labels, 1, idx)
end

-- A view of some examples (1-based numbers, a Lua list or an int64 tensor).
function Dataset:subset(indices, name)
  if type(indices) == "table" then indices = al.tensor(indices, { dtype = "int64" }) end
  local base_index = self.index and al.index_select(self.index, 1, indices) or indices
  local sub = setmetatable({}, Dataset)
  for k, v in pairs(self) do sub[k] = v end
  sub.index = base_index
  sub.n = indices:numel()
  sub.split = name or (self.split .. "-subset")
  sub.labels_view = nil
  return sub
end

-- Labels of the examples of this (sub)set, int64 (n).
function Dataset:all_labels()
  if self.index then return al.index_select(self.labels, 1, self.index) end
  return self.labels
end

-- Carve a validation set from a training set: returns train_part, val_part, both
-- subsets chosen by a seeded permutation (stratification is not attempted).
function data.train_val_split(ds, opts)
  local nval = opts.val or math.floor(ds.n * (opts.fraction or 0.1))
  assert(nval > 0 and nval < ds.n, "train_val_split: val must be between 1 and n-1")
  local perm = al.randperm(ds.n, al.Generator(opts.seed or 0))
  local val = perm:narrow(1, 1, nval):contiguous()
  local tr = perm:narrow(1, nval + 1, ds.n - nval):contiguous()
  return ds:subset(tr, ds.split .. "-train"), ds:subset(val, ds.split .. "-val")
end

local FASHION_CLASSES = { "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot" }
local KMNIST_CLASSES = { "o", "ki", "su", "tsu", "na", "ha", "ma", "ya", "re", "wo" }
local CIFAR_CLASSES = { "airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck" }

local stats_cache = {}

-- Per-channel mean/std of the train split (computed once per process, from the bytes).
local function train_stats(key, loader)
  if not stats_cache[key] then
    local tr = loader()
    local m, s = tr:channel_stats(1 / 255)
    stats_cache[key] = { m, s }
  end
  return stats_cache[key][1], stats_cache[key][2]
end

local function idx_dataset(name, folders, classes, opts)
  opts = opts or {}
  local split = opts.split or "train"
  local prefix = (split == "train") and "train" or (split == "test" and "t10k" or error(name .. ": split must be 'train' or 'test', got " .. tostring(split), 2))
  local images, ipath = read_idx(name .. " " .. split .. " images", folders, prefix .. "-images-idx3-ubyte")
  local lab_bytes, lpath = read_idx(name .. " " .. split .. " labels", folders, prefix .. "-labels-idx1-ubyte")
  local labels = lab_bytes:to_tensor("int64") + 1
  local n = images:shape()[1]
  if labels:numel() ~= n then error(("%s: %s has %d images but %s has %d labels"):format(name, ipath, n, lpath, labels:numel()), 0) end
  local mean, std
  if opts.normalize == false then mean, std = { 0 }, { 1 }
  else
    mean, std = train_stats(name, function()
      if split == "train" then return images end
      return (read_idx(name .. " train images", folders, "train-images-idx3-ubyte"))
    end)
  end
  return setmetatable({ name = name, split = split, images = images, labels = labels, n = n, num_classes = #classes,
                        classes = classes, channels = 1, size = images:shape()[2], mean = mean, std = std,
                        files = { ipath, lpath } }, Dataset)
end

function data.fashion_mnist(opts)
  return idx_dataset("fashion-mnist", { "fashion-mnist" }, FASHION_CLASSES, opts)
end

-- KMNIST. This copy lacks the canonical training images (shared/data/README.md), so the
-- default protocol "auto" uses the canonical split when train-images is present and
-- otherwise the README's re-split of the test split: records 1-8,000 for training and
-- 8,001-10,000 for testing. protocol = "canonical" or "resplit" forces one.
function data.kmnist(opts)
  opts = opts or {}
  local split = opts.split or "train"
  local protocol = opts.protocol or "auto"
  if protocol == "auto" then
    local ok = pcall(data.find, "kmnist train images", gz_candidates({ "kmnist" }, "train-images-idx3-ubyte"))
    protocol = ok and "canonical" or "resplit"
  end
  if protocol == "canonical" then
    local ds = idx_dataset("kmnist", { "kmnist" }, KMNIST_CLASSES, opts)
    ds.protocol = "canonical"
    return ds
  end
  if protocol ~= "resplit" then error("kmnist: protocol must be 'auto', 'canonical' or 'resplit', got " .. tostring(protocol), 2) end
  local full = idx_dataset("kmnist", { "kmnist" }, KMNIST_CLASSES, { split = "test", normalize = false })
  local tr_idx = al.arange(8000)
  if opts.normalize ~= false then
    -- train statistics = records 1-8,000 of the test file
    local x = full:batch(tr_idx)
    local m = al.mean(x):item()
    full.mean, full.std = { m }, { math.sqrt(al.mean((x - m) ^ 2):item()) }
  end
  local ds
  if split == "train" then ds = full:subset(tr_idx, "train")
  elseif split == "test" then ds = full:subset(al.arange(8001, 10000), "test")
  else error("kmnist: split must be 'train' or 'test', got " .. tostring(split), 2) end
  ds.protocol = "resplit"
  return ds
end

function data.cifar10(opts)
  opts = opts or {}
  local split = opts.split or "train"
  local names = split == "train" and { "data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin", "data_batch_5.bin" }
    or split == "test" and { "test_batch.bin" } or error("cifar10: split must be 'train' or 'test'", 2)
  local parts, labels, files = {}, {}, {}
  for i, f in ipairs(names) do
    local path = data.find("cifar10 " .. f, gz_candidates({ "cifar-10-batches-bin" }, f))
    local b, l = al.read_cifar(path)
    if not b then error("cifar10: " .. l, 0) end
    parts[i], labels[i], files[i] = b, l, path
  end
  local images = parts[1]
  if #parts > 1 then images = al.bytes_cat(parts) end
  local lab = #labels > 1 and al.cat(labels, 1) or labels[1]
  local mean, std
  if opts.normalize == false then mean, std = { 0, 0, 0 }, { 1, 1, 1 }
  else
    mean, std = train_stats("cifar10", function()
      if split == "train" then return images end
      return data.cifar10({ split = "train", normalize = false }).images
    end)
  end
  local ds = setmetatable({ name = "cifar10", split = split, images = images, labels = lab, n = lab:numel(),
                            num_classes = 10, classes = CIFAR_CLASSES, channels = 3, size = 32, mean = mean, std = std,
                            files = files }, Dataset)
  if opts.exact_test and split == "test" then
    -- records 1-1000 are the only bit-exact test images of this copy (shared/data/README.md)
    ds = ds:subset(al.arange(1000), "test-exact")
  end
  return ds
end

-- ---- text datasets (lua/attnlab/data_text.lua) ------------------------------------------
function data.newsgroups20(opts) return require("attnlab.data_text").newsgroups20(opts) end
function data.marker(opts) return require("attnlab.data_text").marker(opts) end

-- By name, for configs: "cifar10", "fashion_mnist", "kmnist", "newsgroups20", "marker".
data.by_name = { cifar10 = data.cifar10, fashion_mnist = data.fashion_mnist, fmnist = data.fashion_mnist,
                 kmnist = data.kmnist, newsgroups20 = data.newsgroups20, newsgroups = data.newsgroups20,
                 marker = data.marker }

-- ---- loader ------------------------------------------------------------------------------
-- Seeded shuffling: the order of epoch e is a permutation drawn from a generator seeded
-- with (seed, e), so it does not depend on anything else the run does.
local Loader = {}
Loader.__index = Loader
data.Loader = setmetatable(Loader, { __call = function(c, ...) return c.new(...) end })

function Loader.new(ds, opts)
  opts = opts or {}
  local bs = opts.batch_size or 128
  assert(math.type(bs) == "integer" and bs > 0, "Loader: batch_size must be a positive integer")
  return setmetatable({ ds = ds, batch_size = bs, shuffle = opts.shuffle ~= false and opts.shuffle ~= nil,
                        seed = opts.seed or 0, drop_last = opts.drop_last or false, limit = opts.limit }, Loader)
end

function Loader:num_batches()
  local n = self.limit and math.min(self.limit, self.ds.n) or self.ds.n
  return self.drop_last and n // self.batch_size or (n + self.batch_size - 1) // self.batch_size
end

function Loader:order(epoch)
  local n = self.ds.n
  if self.shuffle then
    return al.randperm(n, al.Generator(self.seed * 1000003 + (epoch or 1)))
  end
  return al.arange(n)
end

-- for x, y, b, extra in loader:iter(epoch) do ... end  (b = batch number, 1-based;
-- extra = {key_mask = ...} for masked text, else nil)
function Loader:iter(epoch)
  local order = self:order(epoch)
  local n = self.limit and math.min(self.limit, self.ds.n) or self.ds.n
  local nb = self:num_batches()
  local b = 0
  return function()
    b = b + 1
    if b > nb then return nil end
    local start = (b - 1) * self.batch_size + 1
    local len = math.min(self.batch_size, n - start + 1)
    local idx = order:narrow(1, start, len):contiguous()
    local x, y, extra = self.ds:batch(idx)
    return x, y, b, extra
  end
end

return data
