-- attnlab.data -- datasets from their canonical files, and a seeded batch loader.
--
--   local train = al.data.fashion_mnist{split = "train"}     -- finds the files itself
--   local loader = al.data.Loader(train, {batch_size = 128, shuffle = true, seed = 1})
--   for x, y in loader:iter(epoch) do ... end                -- x (B,1,28,28), y (B) 1..10
--   (loader:iter() without an epoch takes the next one: each pass is shuffled anew)
--
-- Files are looked up in ATTNLAB_DATA (folders separated by ':'), then in the
-- checkout's ../shared/data (only when running from a checkout, not from an installed
-- tree), /usr/share/datasets and ~/.cache/attnlab/data. Decoding
-- is C (IDX and CIFAR binary, gzip'd or not); pixels stay uint8 until a batch is made.
local al = require "attnlab"
local util = require "attnlab.util"

local data = {}

-- ---- locating files --------------------------------------------------------------------

local function shq(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

-- An absolute folder: a relative one (ATTNLAB_DATA=data, a checkout found as ".") is taken from
-- the current directory, so run records name the files they read by absolute paths. "." parts
-- go; ".." parts stay (removing them lexically would be wrong across a symlinked folder).
local cwd_cache
local function absdir(d)
  if d:sub(1, 1) ~= "/" then
    if not cwd_cache then
      local f = io.popen("pwd 2>/dev/null")
      cwd_cache = f and f:read("l") or nil
      if f then f:close() end
      if not cwd_cache or cwd_cache:sub(1, 1) ~= "/" then cwd_cache = os.getenv("PWD") or "" end
    end
    if cwd_cache ~= "" then d = cwd_cache .. "/" .. d end
  end
  local parts = {}
  for part in d:gmatch("[^/]+") do
    if part ~= "." then parts[#parts + 1] = part end
  end
  return "/" .. table.concat(parts, "/")
end

-- ATTNLAB_DATA folders that do not exist are named once per process on stderr (one line each):
-- they were skipped silently, and the data came from a later folder of the search path.
local warned_missing = {}
local function warn_if_missing(d)
  if warned_missing[d] ~= nil then return end
  local ok = os.execute("test -d " .. shq(d))
  warned_missing[d] = not ok
  if not ok then
    io.stderr:write(("attnlab: warning: ATTNLAB_DATA names %s, which does not exist (or is not a folder); skipping it " ..
      "(see README, Data)\n"):format(d))
  end
end

-- The folders of the search path, each as { dir =, from = "ATTNLAB_DATA" | nil }; env: whether
-- ATTNLAB_DATA is set ("unset", "empty" or nil).
local function search_dirs()
  local dirs = {}
  local env = os.getenv("ATTNLAB_DATA")
  local env_state = env == nil and "unset" or not env:find("[^:]") and "empty" or nil
  if env then
    for d in env:gmatch("[^:]+") do
      d = absdir(d)
      warn_if_missing(d)
      dirs[#dirs + 1] = { dir = d, from = "ATTNLAB_DATA" }
    end
  end
  local checkout = al.checkout()
  if checkout then dirs[#dirs + 1] = { dir = absdir(checkout .. "/../shared/data") } end
  dirs[#dirs + 1] = { dir = "/usr/share/datasets" }
  local home = os.getenv("HOME")
  if home then dirs[#dirs + 1] = { dir = absdir(home .. "/.cache/attnlab/data") } end
  return dirs, env_state
end

function data.search_path()
  local dirs = {}
  for i, d in ipairs((search_dirs())) do dirs[i] = d.dir end
  return dirs
end

-- "ATTNLAB_DATA (unset), /b, /c" or "ATTNLAB_DATA (/a1, /a2), /b, /c": the folders searched,
-- on one line.
local function where(dirs, env_state)
  local env, parts = {}, {}
  for _, d in ipairs(dirs) do
    if d.from then env[#env + 1] = d.dir else parts[#parts + 1] = d.dir end
  end
  table.insert(parts, 1, ("ATTNLAB_DATA (%s)"):format(env_state or table.concat(env, ", ")))
  return table.concat(parts, ", ")
end

-- What is at path when it is there but is not a regular file ("a FIFO", "a directory", ...),
-- else nil. Never opens it: io.open on a FIFO waits for a writer forever (util.not_regular).
local not_regular = require("attnlab.util").not_regular
data.not_regular = not_regular

local function exists(path)
  if not_regular(path) then return false end
  local f = io.open(path, "rb")
  if f then f:close() return true end
  return false
end

-- The names in a folder (nil if it is not one or is empty), from one `ls`: io.open cannot tell a
-- missing file from a dangling symlink; the listing can.
local listing_cache = {}
local function listing(dir)
  local l = listing_cache[dir]
  if l == nil then
    l = false
    local p = io.popen("ls -1A " .. shq(dir) .. " 2>/dev/null")
    if p then
      local names, any = {}, false
      for f in p:lines() do names[f] = true any = true end
      p:close()
      if any then l = names end
    end
    listing_cache[dir] = l
  end
  return l or nil
end

-- Why an entry that is listed cannot be opened (a dangling symlink, no permission), or nil.
local function broken(path)
  local dir, name = path:match("^(.*)/([^/]+)$")
  local l = dir and listing(dir)
  if not (l and l[name]) or exists(path) then return nil end
  local pipe = io.popen("readlink " .. shq(path) .. " 2>/dev/null")
  local t = pipe and pipe:read("l")
  if pipe then pipe:close() end
  return t and ("a symlink to %s, which does not exist"):format(t) or "present but cannot be read (permissions?)"
end

-- First existing file among candidate relative names, in the search path; else an
-- error that lists every place looked at. An entry that exists but cannot be opened (a
-- dangling symlink) is an error naming it, not skipped.
function data.find(what, candidates)
  local dirs, env_state = search_dirs()
  for _, d in ipairs(dirs) do
    for _, c in ipairs(candidates) do
      local p = d.dir .. "/" .. c
      local kind = not_regular(p)
      if kind then error(("%s: %s is %s, not a regular file"):format(what, p, kind), 0) end
      if exists(p) then return p end
      local why = broken(p)
      if why then error(("%s: %s is %s"):format(what, p, why), 0) end
    end
  end
  error(("%s: file not found in %s: want %s; put it in one of those folders or set ATTNLAB_DATA " ..
    "(folders separated by ':') to the folder that holds it (see README, Data)")
    :format(what, where(dirs, env_state), table.concat(candidates, " or ")), 0)
end

-- The files of one dataset, all from ONE folder: the first folder of the search path (with the
-- dataset's subfolder) that holds any of them must hold every required one (each as NAME.gz or
-- NAME), so a dataset is never assembled from several copies. optional: files used when
-- present in that same folder (KMNIST's training images). Returns { name = path }, folder.
function data.find_set(what, subfolder, names, optional)
  local dirs, env_state = search_dirs()
  for _, d in ipairs(dirs) do
    local dir = d.dir .. "/" .. subfolder
    local l = listing(dir)
    if l then
      local found, missing, any = {}, {}, false
      local function look(name)
        for _, c in ipairs({ name .. ".gz", name }) do
          if l[c] then
            local p = dir .. "/" .. c
            local kind = not_regular(p)   -- a FIFO would make the reader wait forever
            if kind then error(("%s: %s is %s, not a regular file"):format(what, p, kind), 0) end
            local why = broken(p)
            if why then error(("%s: %s is %s"):format(what, p, why), 0) end
            return p
          end
        end
      end
      for _, n in ipairs(names) do
        local p = look(n)
        if p then found[n] = p any = true else missing[#missing + 1] = n end
      end
      for _, n in ipairs(optional or {}) do
        local p = look(n)
        if p then found[n] = p any = true end
      end
      if any then
        if #missing > 0 then
          error(("%s: %s holds only part of the dataset (%s missing, as .gz or plain); a dataset must come " ..
            "whole from one folder: complete it, or take it out of ATTNLAB_DATA"):format(what, dir,
            table.concat(missing, ", ")), 0)
        end
        return found, dir
      end
    end
  end
  error(("%s: file not found in %s: want %s/ holding %s (.gz or plain, all in that one folder); set " ..
    "ATTNLAB_DATA (folders separated by ':') to a folder that holds %s/ (see README, Data)"):format(what,
    where(dirs, env_state), subfolder, table.concat(names, ", "), subfolder), 0)
end

-- Record counts of the canonical files (shared/data/README.md, the datasets' pages). A file with
-- another count is a truncated or different copy and is refused; the only exception is the
-- documented KMNIST re-split of the test file (data.kmnist).
data.CANONICAL = {
  ["fashion-mnist"] = { train = 60000, test = 10000, size = 28 },
  kmnist = { train = 60000, test = 10000, size = 28 },
  cifar10 = { batch = 10000 },
  newsgroups20 = { train = 11314, test = 7532 },
}

-- Size and SHA-256 of each file a run read, computed once per (path, size, mtime, ctime, inode)
-- and cached in $XDG_CACHE_HOME/attnlab/sha256.json (default ~/.cache/attnlab), so a sweep
-- hashes each once. The times are to the nanosecond and the inode is in the key, because a
-- model file is rewritten within a second at the same size (a study's teacher replaced by
-- hand, or a saved model: write_atomic renames a new file in), and a copy that keeps the
-- mtime (cp -p, rsync -t) still changes the ctime: a key of seconds would answer the old hash.
local function cache_path()
  local base = os.getenv("XDG_CACHE_HOME")
  if not base or base == "" then
    local home = os.getenv("HOME")
    if not home or home == "" then return nil end
    base = home .. "/.cache"
  end
  return base .. "/attnlab/sha256.json"
end
data.fingerprint_cache = cache_path

-- The cache's entries, or nil when the file is not what fingerprints writes: a JSON object of
-- "<path>|<size>|<stamp>" keys to 64-digit hex digests. Anything else there (not JSON, a list,
-- a number for a digest, a FIFO that io.open would wait on forever) is ignored, and the cache
-- written anew: a bad cache only costs a rehash, never a run (a list made every run that
-- records fingerprints fail at k:sub).
local function read_cache(cp)
  if not_regular(cp) then return nil end
  local f = io.open(cp, "rb")
  if not f then return nil end
  local ok, c = pcall(al.json.decode, f:read("a") or "")
  f:close()
  if not ok or type(c) ~= "table" then return nil end
  for k, v in pairs(c) do
    if type(k) ~= "string" or type(v) ~= "string" or #v ~= 64 or v:find("[^0-9a-f]") then return nil end
  end
  return c
end

-- { {path =, size =, sha256 =}, ... } for a list of paths.
function data.fingerprints(paths)
  if #paths == 0 then return {} end
  local quoted = {}
  for i, p in ipairs(paths) do quoted[i] = shq(p) end
  local st = {}
  local pipe = io.popen("stat -L -c '%s %.9Y %.9Z %i %n' " .. table.concat(quoted, " ") .. " 2>/dev/null")
  if pipe then
    for l in pipe:lines() do
      local size, stamp, name = l:match("^(%d+) ([%d.]+ [%d.]+ %d+) (.*)$")
      if name then st[name] = { size = math.tointeger(tonumber(size)), stamp = stamp } end
    end
    pipe:close()
  end
  local cp = cache_path()
  local cache = cp and read_cache(cp)
  -- a cache file that is there but unusable is rewritten (not left to fail the next run too)
  local out, dirty = {}, cache == nil and cp ~= nil and util.file_exists(cp)
  cache = cache or {}
  for _, p in ipairs(paths) do
    local s = st[p] or {}
    local key = ("%s|%s|%s"):format(p, tostring(s.size), tostring(s.stamp))
    local hex, size = cache[key], s.size
    if type(hex) ~= "string" or not size then
      local h, sz = al.sha256_file(p)
      if not h then error("data: cannot fingerprint " .. tostring(sz), 0) end
      hex, size = h, sz
      if s.size then
        -- the file's older entries go (another content, or an older attnlab's key): keys
        -- "<p>|<size>|<stamp>", so one "|" after the prefix (not a path "<p>|x" of its own)
        local prefix = p .. "|"
        for k in pairs(cache) do
          local rest = k:sub(1, #prefix) == prefix and k:sub(#prefix + 1)
          if rest and select(2, rest:gsub("|", "")) == 1 then cache[k] = nil end
        end
        cache[key], dirty = hex, true
      end
    end
    out[#out + 1] = { path = p, size = size, sha256 = hex }
  end
  if dirty and cp then
    os.execute("mkdir -p " .. shq(cp:match("^(.*)/[^/]*$")) .. " 2>/dev/null")
    al.write_atomic(cp, al.json.encode(cache) .. "\n")   -- best effort: a failure only costs a rehash
  end
  return out
end

-- An IDX file of the MNIST family, checked: images (N, size, size), labels (N) in
-- 0..classes-1, N the canonical count (count = nil: any). Every error names the file.
local function read_idx_checked(what, path, kind, count, size, classes)
  local b, err = al.read_idx(path)
  if not b then error(what .. ": " .. err, 0) end
  local sh = b:shape()
  local dims = table.concat(sh, " x ")
  if kind == "images" then
    if #sh ~= 3 or sh[2] ~= size or sh[3] ~= size then
      error(("%s: %s holds %s, want N x %d x %d images"):format(what, path, dims, size, size), 0)
    end
  elseif #sh ~= 1 then
    error(("%s: %s holds %s, want a list of N labels"):format(what, path, dims), 0)
  end
  if count and sh[1] ~= count then
    error(("%s: %s has %d records, the canonical file has %d: a truncated or different copy?"):format(what, path,
      sh[1], count), 0)
  end
  if kind == "labels" then
    local t = b:to_tensor("int64")
    if t:numel() > 0 and (al.max(t):item() >= classes or al.max(-t):item() > 0) then
      for i, v in ipairs(t:totable()) do
        if v < 0 or v >= classes then
          error(("%s: %s: record %d has label %d, outside 0..%d"):format(what, path, i, v, classes - 1), 0)
        end
      end
    end
    return b, t
  end
  return b
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

-- The indices of subset, checked when it is called: each an integer in 1..n. A 0-based index
-- (or one past the end) was accepted here and failed only when a batch was drawn, naming the
-- record of the base dataset instead of the index given.
local function check_subset_indices(ds, indices)
  local n = ds.n
  local function bad(i, v, why)   -- (level 4: the caller of subset)
    error(("Dataset:subset: entry %d is %s, %s 1..%d (indices are 1-based; the dataset has %d examples)")
      :format(i, v, why, n, n), 4)
  end
  if type(indices) == "table" and not al.is_tensor(indices) then
    for i = 1, #indices do
      local v = indices[i]
      if type(v) ~= "number" or math.tointeger(v) == nil then
        bad(i, al.cli.show(v), "not an integer in")
      elseif v < 1 or v > n then
        bad(i, tostring(math.tointeger(v)), "outside")
      end
    end
    for k in pairs(indices) do   -- a key that is not 1..#indices would be ignored
      if math.type(k) ~= "integer" or k < 1 or k > #indices then
        error(("Dataset:subset: indices must be a list, got a table with key %s"):format(al.cli.show(k)), 3)
      end
    end
    return al.tensor(indices, { dtype = "int64" })
  end
  if not al.is_tensor(indices) then
    error(("Dataset:subset: indices must be a list or an int64 tensor of 1-based example numbers, got %s")
      :format(al.cli.show(indices)), 3)
  end
  local s = indices:shape()
  if #s ~= 1 or indices:dtype() ~= "int64" then
    error(("Dataset:subset: indices must be a 1-D int64 tensor (or a list), got %s (%s)"):format(indices:dtype(),
      table.concat(s, ",")), 3)
  end
  if s[1] > 0 and (al.min(indices):item() < 1 or al.max(indices):item() > n) then
    for i, v in ipairs(indices:totable()) do
      if v < 1 or v > n then bad(i, tostring(v), "outside") end
    end
  end
  return indices
end

-- A view of some examples (1-based numbers, a Lua list or an int64 tensor, each in 1..n).
function Dataset:subset(indices, name)
  indices = check_subset_indices(self, indices)
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

local function show(v) return al.cli.show(v) end   -- a value in a message: "nan", never "-nan"

-- The dataset argument of train_val_split and Loader, checked when they are called: a wrong
-- one would otherwise fail only when the loader is iterated, as "attempt to index a number
-- value". A dataset is duck-typed (text.lua and tests make their own): n and the method used.
local function check_dataset(who, ds, method)
  local ok = type(ds) == "table" and math.type(ds.n) == "integer" and ds.n >= 0 and type(ds[method]) == "function"
  if not ok then
    local got = type(ds) ~= "table" and (al.is_tensor(ds) and "a tensor" or type(ds))
      or math.type(ds.n) ~= "integer" and ("a table whose n is %s"):format(show(ds.n))
      or ("a table without a %s method"):format(method)
    error(("%s: ds must be a dataset (n examples and a %s method, e.g. al.data.fashion_mnist{}), got %s")
      :format(who, method, got), 3)
  end
end

-- Carve a validation set from a training set: returns train_part, val_part, both
-- subsets chosen by a seeded permutation (stratification is not attempted).
function data.train_val_split(ds, opts)
  check_dataset("train_val_split", ds, "subset")
  if opts ~= nil and type(opts) ~= "table" then
    error(("train_val_split: options must be a table {val =, fraction =, seed =}, got %s"):format(type(opts)), 2)
  end
  opts = opts or {}
  -- a misspelt key (vall = 100) was ignored: the split fell back to fraction 0.1, or failed
  -- saying "val ... got 0"; a seed of 1.5 failed inside al.Generator, naming neither
  local badk = util.unknown_keys(opts, { "val", "fraction", "seed" })
  if badk then error("train_val_split: " .. badk, 2) end
  if opts.seed ~= nil and math.tointeger(opts.seed) == nil then
    error(("train_val_split: seed must be an integer, got %s"):format(show(opts.seed)), 2)
  end
  local f = opts.fraction
  if f ~= nil and (type(f) ~= "number" or not (f > 0 and f < 1)) then
    error(("train_val_split: fraction must be a number in (0, 1), got %s"):format(show(f)), 2)
  end
  local nval = opts.val or math.floor(ds.n * (f or 0.1))
  if math.type(nval) ~= "integer" or nval < 1 or nval >= ds.n then
    error(("train_val_split: val must be an integer between 1 and n-1 = %d, got %s%s"):format(ds.n - 1, show(nval),
      opts.val == nil and (" (from fraction %g of %d)"):format(f or 0.1, ds.n) or ""), 2)
  end
  local perm = al.randperm(ds.n, al.Generator(opts.seed or 0))
  local val = perm:narrow(1, 1, nval):contiguous()
  local tr = perm:narrow(1, nval + 1, ds.n - nval):contiguous()
  -- (both parts keep ds's normalisation statistics, computed over all of ds: see train_stats)
  return ds:subset(tr, ds.split .. "-train"), ds:subset(val, ds.split .. "-val")
end

local FASHION_CLASSES = { "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot" }
local KMNIST_CLASSES = { "o", "ki", "su", "tsu", "na", "ha", "ma", "ya", "re", "wo" }
local CIFAR_CLASSES = { "airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck" }

local stats_cache = {}

-- Per-channel mean/std of the train split (computed once per process, from the bytes).
-- Over the WHOLE train split: a run with a validation set (scripts/train.lua --val, i.e.
-- data.train_val_split, whose subsets keep their base dataset's mean/std) normalizes with
-- statistics that include the held-out images (they reach training only through one mean and
-- one std per channel, never through their labels). It is kept on purpose because committed run
-- records (experiments/normalizers/full/records/val_topk, val > 0) were produced this way and
-- other statistics would change every input, so those records could no longer be reproduced.
local function train_stats(key, loader)
  if not stats_cache[key] then
    local tr = loader()
    local m, s = tr:channel_stats(1 / 255)
    stats_cache[key] = { m, s }
  end
  return stats_cache[key][1], stats_cache[key][2]
end

-- The options of the image loaders, checked (as the text loaders' are) before any file is
-- looked for: a misspelt key (splt = "test") was ignored and the TRAIN split loaded. A string
-- is taken as the split (fashion_mnist("test") = fashion_mnist{split = "test"}).
local function fail(fn, fmt, ...) error(("attnlab.data.%s: " .. fmt):format(fn, ...), 0) end

local function image_opts(fn, opts, known)
  if type(opts) == "string" then opts = { split = opts } end
  if opts == nil then opts = {} end
  if type(opts) ~= "table" then
    fail(fn, "options must be a table {split = 'train' | 'test', ...} (or the split as a string), got %s",
      al.is_tensor(opts) and "a tensor" or type(opts))
  end
  local bad = util.unknown_keys(opts, known)
  if bad then fail(fn, "%s", bad) end
  local split = opts.split
  if split ~= nil and split ~= "train" and split ~= "test" then
    fail(fn, "split must be 'train' or 'test', got %s", type(split) == "string" and ("'" .. split .. "'") or show(split))
  end
  for k, want in pairs(known) do
    if want == "boolean" and opts[k] ~= nil and type(opts[k]) ~= "boolean" then
      fail(fn, "%s must be true or false, got %s", k, show(opts[k]))
    end
  end
  return opts
end

local IDX = { train_images = "train-images-idx3-ubyte", train_labels = "train-labels-idx1-ubyte",
              test_images = "t10k-images-idx3-ubyte", test_labels = "t10k-labels-idx1-ubyte" }

-- files: { idx name = path } from data.find_set (one folder). Counts and geometry are checked
-- against the canonical ones (data.CANONICAL[name]); resplit = true: the test file is used whole
-- by the KMNIST re-split (its count is still checked).
local function idx_dataset(name, files, classes, opts)
  opts = opts or {}
  local split = opts.split or "train"
  if split ~= "train" and split ~= "test" then error(name .. ": split must be 'train' or 'test', got " .. tostring(split), 3) end
  local canon = data.CANONICAL[name]
  local ipath, lpath = files[IDX[split .. "_images"]], files[IDX[split .. "_labels"]]
  local what = name .. " " .. split
  local images = read_idx_checked(what .. " images", ipath, "images", canon[split], canon.size)
  local _, lab = read_idx_checked(what .. " labels", lpath, "labels", canon[split], nil, #classes)
  local labels = lab + 1
  local n = images:shape()[1]
  if labels:numel() ~= n then error(("%s: %s has %d images but %s has %d labels"):format(name, ipath, n, lpath, labels:numel()), 0) end
  local mean, std
  local used = { ipath, lpath }
  if opts.normalize == false then mean, std = { 0 }, { 1 }
  else
    if split ~= "train" then used[#used + 1] = files[IDX.train_images] end   -- the normalisation statistics
    mean, std = train_stats(name .. "\0" .. files[IDX.train_images], function()
      if split == "train" then return images end
      return (read_idx_checked(name .. " train images", files[IDX.train_images], "images", canon.train, canon.size))
    end)
  end
  return setmetatable({ name = name, split = split, images = images, labels = labels, n = n, num_classes = #classes,
                        classes = classes, channels = 1, size = images:shape()[2], mean = mean, std = std,
                        files = used }, Dataset)
end

function data.fashion_mnist(opts)
  opts = image_opts("fashion_mnist", opts, { split = "string", normalize = "boolean" })
  local files = data.find_set("fashion-mnist", "fashion-mnist",
    { IDX.train_images, IDX.train_labels, IDX.test_images, IDX.test_labels })
  return idx_dataset("fashion-mnist", files, FASHION_CLASSES, opts)
end

-- KMNIST. This copy lacks the canonical training images (shared/data/README.md), so the
-- default protocol "auto" uses the canonical split when train-images is present (in the same
-- folder as the test files) and otherwise the README's re-split of the test split: records
-- 1-8,000 for training and 8,001-10,000 for testing. protocol = "canonical" or "resplit"
-- forces one.
function data.kmnist(opts)
  opts = image_opts("kmnist", opts, { split = "string", normalize = "boolean", protocol = "string" })
  local split = opts.split or "train"
  local protocol = opts.protocol or "auto"
  if protocol ~= "auto" and protocol ~= "canonical" and protocol ~= "resplit" then
    -- worded as image_opts words the other option errors (prefix attnlab.data.<fn>:, value quoted)
    fail("kmnist", "protocol must be 'auto', 'canonical' or 'resplit', got %s", show(protocol))
  end
  local files, dir = data.find_set("kmnist", "kmnist", { IDX.test_images, IDX.test_labels },
    { IDX.train_images, IDX.train_labels })
  if protocol == "auto" then protocol = files[IDX.train_images] and "canonical" or "resplit" end
  if protocol == "canonical" then
    for _, k in ipairs({ IDX.train_images, IDX.train_labels }) do
      if not files[k] then
        error(("kmnist: the canonical split needs %s in %s (the re-split protocol does not)"):format(k, dir), 0)
      end
    end
    local ds = idx_dataset("kmnist", files, KMNIST_CLASSES, opts)
    ds.protocol = "canonical"
    return ds
  end
  local full = idx_dataset("kmnist", files, KMNIST_CLASSES, { split = "test", normalize = false })
  local tr_idx = al.arange(8000)
  if opts.normalize ~= false then
    -- train statistics = records 1-8,000 of the test file (all of them, a --val part
    -- included, as train_stats does for the other image datasets)
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
  opts = image_opts("cifar10", opts, { split = "string", normalize = "boolean", exact_test = "boolean" })
  local split = opts.split or "train"
  -- exact_test picks records of the test file; on the train split it was ignored and the caller
  -- got all 50,000 training images believing it had asked for something else. (scripts/train.lua
  -- never passes it: its cifar_exact_test sets the test split's exact_records instead.)
  if opts.exact_test and split ~= "test" then
    fail("cifar10", "exact_test = true applies to the test split only (its 1,000 bit-exact records), got split '%s'%s",
      split, opts.split == nil and " (the default)" or "")
  end
  local names = split == "train" and { "data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin", "data_batch_5.bin" }
    or split == "test" and { "test_batch.bin" } or error("cifar10: split must be 'train' or 'test'", 2)
  local parts, labels, files = {}, {}, {}
  -- all six files from one folder (the statistics of the test split come from its train files)
  local found = data.find_set("cifar10", "cifar-10-batches-bin", { "data_batch_1.bin", "data_batch_2.bin",
    "data_batch_3.bin", "data_batch_4.bin", "data_batch_5.bin", "test_batch.bin" })
  for i, f in ipairs(names) do
    local path = found[f]
    local b, l = al.read_cifar(path)
    if not b then error("cifar10: " .. l, 0) end
    if l:numel() ~= data.CANONICAL.cifar10.batch then
      error(("cifar10: %s has %d records, the canonical file has %d: a truncated or different copy?"):format(path,
        l:numel(), data.CANONICAL.cifar10.batch), 0)
    end
    parts[i], labels[i], files[i] = b, l, path
  end
  local images = parts[1]
  if #parts > 1 then images = al.bytes_cat(parts) end
  local lab = #labels > 1 and al.cat(labels, 1) or labels[1]
  local mean, std
  if opts.normalize == false then mean, std = { 0, 0, 0 }, { 1, 1, 1 }
  else
    if split ~= "train" then for i = 1, 5 do files[#files + 1] = found["data_batch_" .. i .. ".bin"] end end
    mean, std = train_stats("cifar10\0" .. found["data_batch_1.bin"], function()
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

-- ---- text datasets (lua/attnlab/data/text.lua) ------------------------------------------
function data.newsgroups20(opts) return require("attnlab.data.text").newsgroups20(opts) end
function data.marker(opts) return require("attnlab.data.text").marker(opts) end
-- a dataset of your own tensors x (N, ...) and int64 labels y (N): data/tensors.lua
function data.from_tensors(x, y, opts) return require("attnlab.data.tensors").from_tensors(x, y, opts) end

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

local LOADER_OPTS = { "batch_size", "shuffle", "seed", "drop_last", "limit" }

function Loader.new(ds, opts)
  check_dataset("Loader", ds, "batch")
  if opts ~= nil and type(opts) ~= "table" then
    error(("Loader: options must be a table {batch_size =, shuffle =, ...}, got %s"):format(type(opts)), 2)
  end
  opts = opts or {}
  -- a misspelt key (batchsize = 2) was ignored: the loader ran with the default
  local bad = util.unknown_keys(opts, LOADER_OPTS)
  if bad then error("Loader: " .. bad, 2) end
  local bs = opts.batch_size or 128
  if math.type(bs) ~= "integer" or bs < 1 then
    error(("Loader: batch_size must be a positive integer, got %s"):format(show(bs)), 2)
  end
  -- (a batch of 2^63 - 1 made the batch count overflow to 0: an epoch of no step, reported as a result)
  if bs >= 1 << 31 then error(("Loader: batch_size must be below 2^31, got %s"):format(show(bs)), 2) end
  -- booleans must be booleans: shuffle = "no" (a true value) turned shuffling on
  for _, k in ipairs({ "shuffle", "drop_last" }) do
    if opts[k] ~= nil and type(opts[k]) ~= "boolean" then
      error(("Loader: %s must be true or false, got %s"):format(k, show(opts[k])), 2)
    end
  end
  if opts.seed ~= nil and math.tointeger(opts.seed) == nil then
    error(("Loader: seed must be an integer, got %s"):format(show(opts.seed)), 2)
  end
  -- a limit of 0 or less would give an empty or negative epoch, silently
  if opts.limit ~= nil and (math.type(opts.limit) ~= "integer" or opts.limit < 1) then
    error(("Loader: limit must be a positive integer, got %s"):format(show(opts.limit)), 2)
  end
  return setmetatable({ ds = ds, batch_size = bs, shuffle = opts.shuffle ~= false and opts.shuffle ~= nil,
                        seed = opts.seed or 0, drop_last = opts.drop_last or false, limit = opts.limit }, Loader)
end

function Loader:num_batches()
  local n = self.limit and math.min(self.limit, self.ds.n) or self.ds.n
  -- (not (n + batch_size - 1) // batch_size: the sum overflows for a huge batch_size)
  return n // self.batch_size + ((not self.drop_last and n % self.batch_size > 0) and 1 or 0)
end

-- The epoch an order is drawn for: the one given (an integer >= 1), else the one after the
-- last this loader iterated (1 first). A shuffled loader iterated as loader:iter() on every pass
-- gave epoch 1's order every time, where PyTorch's DataLoader draws a new one per pass.
local function epoch_of(self, epoch, who)
  if epoch == nil then return (self.last_epoch or 0) + 1 end
  if math.type(epoch) ~= "integer" or epoch < 1 then
    error(("Loader:%s: epoch must be an integer >= 1 (or nil: the next epoch), got %s"):format(who, show(epoch)), 3)
  end
  return epoch
end

local function order_of(self, epoch)
  local n = self.ds.n
  if self.shuffle then
    return al.randperm(n, al.Generator(self.seed * 1000003 + epoch))
  end
  return al.arange(n)
end

function Loader:order(epoch) return order_of(self, epoch_of(self, epoch, "order")) end

-- for x, y, b, extra in loader:iter(epoch) do ... end  (b = batch number, 1-based;
-- extra = {key_mask = ...} for masked text, else nil). Without an epoch: the next one, so that
-- calling loader:iter() on every pass shuffles every pass anew (and as reproducibly).
function Loader:iter(epoch)
  epoch = epoch_of(self, epoch, "iter")
  self.last_epoch = epoch
  local order = order_of(self, epoch)
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
