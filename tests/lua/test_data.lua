-- tests/lua/test_data.lua -- the data search and the loaders' checks (issue 21): a dataset comes
-- whole from ONE folder of the search path, record counts match the canonical files (the KMNIST
-- re-split aside), labels outside the classes and a wrong image geometry are refused at load
-- naming the file, a dangling symlink is named (not skipped), and a run record lists the files it
-- read with size and SHA-256. Each case builds a folder under /tmp and runs bin/attnlab with
-- ATTNLAB_DATA pointing at it (the search path is read from the environment).
local al = require "attnlab"
local T = require "harness"

local HOST, q = T.HOST, T.shquote

local TMP = {}   -- the folders made, removed by the last case
local function tmpdir() return T.tmpdir("data", TMP) end

-- run a Lua snippet in a fresh host with ATTNLAB_DATA=dir; returns stdout, stderr, status
local function host(dir, code)
  return T.run_host("-e " .. q(code), { env = "ATTNLAB_DATA=" .. q(dir), unset = { "LUA_INIT" }, timeout = 60 })
end

-- the snippet must fail with a message containing every pattern
local function load_fails(dir, call, pats)
  local out, err, rc = host(dir, ("local ok, e = pcall(%s) if ok then print('LOADED') else io.stderr:write(tostring(e)) os.exit(3) end"):format(call))
  T.eq(rc, 3, 0, "loaded although it should not: " .. out .. err)
  for _, p in ipairs(pats) do assert(err:find(p, 1, true), ("message lacks %q: %s"):format(p, err)) end
  print("#   " .. err:gsub("\n", "\n#   "))
end

local function find_real(sub, name)   -- an absolute path (symlinks to it must not dangle)
  local ok, p = pcall(al.data.find, sub, { sub .. "/" .. name .. ".gz", sub .. "/" .. name })
  if not ok then return nil end
  return (T.sh("realpath " .. q(p)):gsub("%s+$", ""))
end

local function gunzip_to(src, dst, nbytes)   -- the first nbytes of the decompressed file (all: nil)
  local cmd = ("gzip -dc %s %s > %s"):format(q(src), nbytes and ("| head -c " .. nbytes) or "", q(dst))
  if not src:match("%.gz$") then cmd = ("head -c %s %s > %s"):format(nbytes or "-0", q(src), q(dst)) end
  assert(os.execute(cmd), cmd)
end

local function I(t) return al.tensor(t, { dtype = "int64" }) end   -- 1-based record numbers
local function idx_header(dims)   -- big-endian IDX header of uint8 data
  local h = string.char(0, 0, 8, #dims)
  for _, d in ipairs(dims) do h = h .. string.pack(">I4", d) end
  return h
end

local FMNIST = { "train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte" }
local function fmnist_copy(dir, except)   -- symlinks to the real files, except the named one
  os.execute("mkdir -p " .. q(dir .. "/fashion-mnist"))
  for _, n in ipairs(FMNIST) do
    if n ~= except then
      local p = assert(find_real("fashion-mnist", n))
      os.execute(("ln -s %s %s"):format(q(p), q(dir .. "/fashion-mnist/" .. p:match("[^/]+$"))))
    end
  end
end

local cases, case = T.suite()

case("CIFAR-10: one partial batch in ATTNLAB_DATA is refused, not completed from ../shared/data", function()
  local b2 = find_real("cifar-10-batches-bin", "data_batch_2.bin")
  if not b2 then T.skip("CIFAR-10 not found") end
  local d = tmpdir()
  os.execute("mkdir -p " .. q(d .. "/cifar-10-batches-bin"))
  gunzip_to(b2, d .. "/cifar-10-batches-bin/data_batch_2.bin", 1000 * 3073)
  load_fails(d, "al.data.cifar10, {split = 'train'}", { d .. "/cifar-10-batches-bin holds only part of the dataset",
    "data_batch_1.bin", "whole from one folder" })
end)
case("CIFAR-10: a complete folder with a batch cut to 1,000 records: the count is refused naming the file", function()
  local b2 = find_real("cifar-10-batches-bin", "data_batch_2.bin")
  if not b2 then T.skip("CIFAR-10 not found") end
  local d = tmpdir()
  local sub = d .. "/cifar-10-batches-bin"
  os.execute("mkdir -p " .. q(sub))
  for _, n in ipairs({ "data_batch_1.bin", "data_batch_3.bin", "data_batch_4.bin", "data_batch_5.bin", "test_batch.bin" }) do
    local p = find_real("cifar-10-batches-bin", n)
    os.execute(("ln -s %s %s/"):format(q(p), q(sub)))
  end
  gunzip_to(b2, sub .. "/data_batch_2.bin", 1000 * 3073)
  load_fails(d, "al.data.cifar10, {split = 'train'}", { sub .. "/data_batch_2.bin has 1000 records, the canonical file has 10000" })
end)
case("Fashion-MNIST: a label of 200 is refused at load, naming the file and the record", function()
  local lab = find_real("fashion-mnist", "t10k-labels-idx1-ubyte")
  if not lab then T.skip("Fashion-MNIST not found") end
  local d = tmpdir()
  fmnist_copy(d, "t10k-labels-idx1-ubyte")
  local path = d .. "/fashion-mnist/t10k-labels-idx1-ubyte"
  gunzip_to(lab, path)
  local s = T.read_file(path)
  T.write_file(path, s:sub(1, 8 + 41) .. string.char(200) .. s:sub(8 + 43))   -- record 42
  load_fails(d, "al.data.fashion_mnist, {split = 'test'}", { path, "record 42 has label 200, outside 0..9" })
  -- one past the last class (10 of 0..9) is outside too: as a 1-based label 11 of 10 classes
  T.write_file(path, s:sub(1, 8 + 6) .. string.char(10) .. s:sub(8 + 8))   -- record 7
  load_fails(d, "al.data.fashion_mnist, {split = 'test'}", { path, "record 7 has label 10, outside 0..9" })
end)
case("Fashion-MNIST: 27x28 images are refused at load, naming the file", function()
  if not find_real("fashion-mnist", "t10k-images-idx3-ubyte") then T.skip("Fashion-MNIST not found") end
  local d = tmpdir()
  fmnist_copy(d, "t10k-images-idx3-ubyte")
  local path = d .. "/fashion-mnist/t10k-images-idx3-ubyte"
  T.write_file(path, idx_header({ 10000, 27, 28 }) .. string.rep("\0", 10000 * 27 * 28))
  load_fails(d, "al.data.fashion_mnist, {split = 'test'}", { path, "holds 10000 x 27 x 28, want N x 28 x 28 images" })
end)
case("Fashion-MNIST: a dangling symlink is named, not skipped", function()
  if not find_real("fashion-mnist", "t10k-images-idx3-ubyte") then T.skip("Fashion-MNIST not found") end
  local d = tmpdir()
  fmnist_copy(d, "train-images-idx3-ubyte")
  os.execute(("ln -s /nonexistent/train-images.gz %s"):format(q(d .. "/fashion-mnist/train-images-idx3-ubyte.gz")))
  load_fails(d, "al.data.fashion_mnist, {split = 'train'}", { "train-images-idx3-ubyte.gz is a symlink to /nonexistent/train-images.gz" })
end)
case("KMNIST: the documented re-split of the test file still loads (8,000 / 2,000)", function()
  if not find_real("kmnist", "t10k-images-idx3-ubyte") then T.skip("KMNIST not found") end
  local tr, te = al.data.kmnist { split = "train" }, al.data.kmnist { split = "test" }
  T.eq({ tr.n, te.n, tr.protocol }, { 8000, 2000, "resplit" })
end)
case("a run record lists the files read, with size and SHA-256 (computed once, cached)", function()
  if not find_real("kmnist", "t10k-images-idx3-ubyte") then T.skip("KMNIST not found") end
  local d = tmpdir()
  local rec = d .. "/r.json"
  local errf = os.tmpname()
  local cmd = ("env XDG_CACHE_HOME=%s %s scripts/train.lua --dataset kmnist --epochs 1 --train_limit 64 --test_limit 64 " ..
    "--batch_size 64 --progress false --out %s >/dev/null 2>%s"):format(q(d .. "/cache"), q(HOST), q(rec), errf)
  assert(os.execute(cmd), T.read_file(errf))
  os.remove(errf)
  local r = al.json.decode(T.read_file(rec))
  local files = r.dataset.files
  T.eq(#files, 2, 0, "files (KMNIST re-split: the test images and labels)")
  for _, f in ipairs(files) do
    local hex, size = al.sha256_file(f.path)
    T.eq({ f.sha256, f.size }, { hex, size }, 0, f.path)
  end
  local cache = al.json.decode(T.read_file(d .. "/cache/attnlab/sha256.json"))
  local n = 0
  for _, v in pairs(cache) do n = n + 1; assert(#v == 64, v) end
  T.eq(n, 2, 0, "cached digests")
  print(("#   %s %d bytes sha256 %s"):format(files[1].path, files[1].size, files[1].sha256))
end)
case("a fingerprint follows the file: rewritten at the same size within the second, or with its mtime put back, it is hashed again", function()
  local d = tmpdir()
  local f = d .. "/model.bin"
  -- one host, so that the rewrites fall within one second; the cache in the folder
  local code = ([[
    local al = require "attnlab"
    local f = %q
    local function put(s) local h = assert(io.open(f, "wb")) h:write(s) h:close() end
    local function fp() return al.data.fingerprints({ f })[1].sha256 end
    put(("a"):rep(4096)); local a = fp()
    assert(fp() == a)                                    -- cached: the same answer
    put(("b"):rep(4096)); local b = fp()                 -- in place, same size, same second
    local t = io.popen("stat -c %%Y " .. f):read("l")
    os.execute("sleep 0.05")
    put(("c"):rep(4096)); os.execute("touch -m -d @" .. t .. " " .. f)   -- cp -p / rsync -t keep the mtime
    local c = fp()
    assert(al.write_atomic(f, ("d"):rep(4096)))          -- a new file renamed in (save_model's way)
    local e = fp()
    print(a, b, c, e)
  ]]):format(f)
  local out, err, rc = T.run_host("-e " .. q(code), { env = "XDG_CACHE_HOME=" .. q(d .. "/cache"), unset = { "LUA_INIT" } })
  T.eq(rc, 0, 0, out .. err)
  local got = {}
  for h in out:gmatch("%x+") do got[#got + 1] = h end
  T.eq(got, { al.sha256(("a"):rep(4096)), al.sha256(("b"):rep(4096)), al.sha256(("c"):rep(4096)),
              al.sha256(("d"):rep(4096)) })
  -- one cache entry per file: the older keys of the rewritten file are gone
  local cache = al.json.decode(T.read_file(d .. "/cache/attnlab/sha256.json"))
  local n = 0
  for k in pairs(cache) do n = n + 1; T.truthy(k:sub(1, #f + 1) == f .. "|", k) end
  T.eq(n, 1, 0, "entries")
end)
-- a cache holding [1,2,3] made every run that records fingerprints fail ("attempt to index a
-- number value (local 'k')"): a cache that is not an object of keys to digests is ignored and
-- written anew
case("a damaged sha256 cache (a list, a number, wrong entries, not JSON) is ignored and rewritten", function()
  local d = tmpdir()
  local f = d .. "/model.bin"
  T.write_file(f, "abc")
  os.execute("mkdir -p " .. q(d .. "/cache/attnlab"))
  local cp = d .. "/cache/attnlab/sha256.json"
  for _, bad in ipairs({ "[1,2,3]", "7", '"x"', '{"a":1}', '{"a":"zz"}', '{"a":{"b":1}}', "{bad" }) do
    T.write_file(cp, bad)
    local out, err, rc = T.run_host("-e " .. q(("print(al.data.fingerprints({ %q })[1].sha256)"):format(f)),
      { env = "XDG_CACHE_HOME=" .. q(d .. "/cache"), unset = { "LUA_INIT" } })
    T.eq({ rc, out }, { 0, al.sha256("abc") .. "\n" }, 0, bad .. ": " .. err)
    local c, n = al.json.decode(T.read_file(cp)), 0
    for k, v in pairs(c) do
      n = n + 1
      T.eq({ k:sub(1, #f + 1), v }, { f .. "|", al.sha256("abc") }, 0, bad .. ": rewritten")
    end
    T.eq(n, 1, 0, bad .. ": entries")
  end
end)
-- ---- robustness: non-regular files, the not-found message, the ATTNLAB_DATA folders -------------

case("a FIFO named like a dataset file is refused in one line naming it (no hang)", function()
  local d = tmpdir()
  local sub = d .. "/kmnist"
  os.execute("mkdir -p " .. q(sub))
  T.write_file(sub .. "/t10k-labels-idx1-ubyte.gz", "")
  local fifo = sub .. "/t10k-images-idx3-ubyte.gz"
  assert(os.execute("mkfifo " .. q(fifo)), "mkfifo")
  -- the loader used to wait forever in fopen: the host runs under a timeout of 60 s
  load_fails(d, "al.data.kmnist, {split = 'test'}", { fifo .. " is a FIFO, not a regular file" })
  -- the C readers refuse it themselves (a FIFO swapped in after the search)
  local out, err, rc = T.run_host("-e " .. q(("local b, e = al.read_idx(%q) io.write(tostring(b), ' ', e)"):format(fifo)),
    { timeout = 60 })
  T.eq(rc, 0, 0, err)
  T.truthy(out:find("nil " .. fifo .. ": is a FIFO, not a regular file", 1, true), out)
  -- a character device behind a symlink: named too
  os.remove(fifo)
  os.execute(("ln -s /dev/zero %s"):format(q(fifo)))
  load_fails(d, "al.data.kmnist, {split = 'test'}", { fifo .. " is a character device, not a regular file" })
end)
case("a missing dataset is one line naming the folders and the files wanted", function()
  local d = tmpdir()
  local out, err, rc = host(d, [[
    local ok, e = pcall(al.data.find_set, "cifar10", "no-such-cifar", { "data_batch_1.bin", "test_batch.bin" })
    io.write(tostring(e))]])
  T.eq(rc, 0, 0, err)
  T.truthy(not out:find("\n"), "more than one line: " .. out)
  for _, want in ipairs({ "cifar10: file not found in ATTNLAB_DATA (" .. d .. ")", "/usr/share/datasets",
                          "want no-such-cifar/ holding data_batch_1.bin, test_batch.bin", "(see README, Data)" }) do
    T.truthy(out:find(want, 1, true), ("message lacks %q: %s"):format(want, out))
  end
  out, err, rc = T.run_host("-e " .. q("local ok, e = pcall(al.data.find, 'x', { 'a.bin', 'b/a.bin' }) io.write(e)"),
    { env = "ATTNLAB_DATA=", unset = { "LUA_INIT" } })
  T.eq(rc, 0, 0, err)
  T.truthy(not out:find("\n") and out:find("x: file not found in ATTNLAB_DATA (empty), ", 1, true) and
    out:find("want a.bin or b/a.bin", 1, true), out)
  print("#   " .. out)
end)
case("ATTNLAB_DATA: a folder that does not exist is named once on stderr; relative folders are made absolute", function()
  local d = tmpdir()
  local gone = d .. "/no-such-folder"
  local out, err, rc = host(gone .. ":" .. d, "al.data.search_path() al.data.search_path() " ..
    "io.write(table.concat(al.data.search_path(), '\\n'))")
  T.eq(rc, 0, 0, err)
  local lines = {}
  for l in err:gmatch("[^\n]+") do lines[#lines + 1] = l end
  T.eq(#lines, 1, 0, "stderr: " .. err)
  T.truthy(lines[1]:find("ATTNLAB_DATA names " .. gone .. ", which does not exist", 1, true), err)
  T.truthy(out:find(gone .. "\n" .. d .. "\n", 1, true), out)
  -- relative: taken from the current directory, so records name absolute paths
  local parent, base = d:match("^(.*)/([^/]+)$")
  local abs_host = require("attnlab.util").abspath(HOST)   -- run from another folder
  out, err, rc = T.run_host("-e " .. q("io.write(table.concat(al.data.search_path(), '\\n'))"),
    { env = "ATTNLAB_DATA=" .. q("./" .. base .. "/"), unset = { "LUA_INIT" }, dir = parent, host = abs_host })
  T.eq(rc, 0, 0, err)
  T.eq(out:match("^[^\n]*"), d, 0, "first folder of the search path")
  for l in out:gmatch("[^\n]+") do T.truthy(l:sub(1, 1) == "/", "relative entry: " .. l) end
  -- and a dataset loaded from it lists absolute files
  local imgs = find_real("kmnist", "t10k-images-idx3-ubyte")
  local labs = find_real("kmnist", "t10k-labels-idx1-ubyte")
  if not (imgs and labs) then T.skip("KMNIST not found") end
  os.execute("mkdir -p " .. q(d .. "/kmnist"))
  for _, p in ipairs({ imgs, labs }) do os.execute(("ln -s %s %s/"):format(q(p), q(d .. "/kmnist"))) end
  out, err, rc = T.run_host("-e " .. q("io.write(table.concat(al.data.kmnist{split = 'test', normalize = false}.files, '\\n'))"),
    { env = "ATTNLAB_DATA=" .. q(base), unset = { "LUA_INIT" }, dir = parent, host = abs_host })
  T.eq(rc, 0, 0, err)
  T.eq(out, d .. "/kmnist/" .. imgs:match("[^/]+$") .. "\n" .. d .. "/kmnist/" .. labs:match("[^/]+$"))
end)
-- option errors of the image loaders: checked before any file is looked for (no data needed for them)
case("cifar10: exact_test = true on the train split is refused in one line (it was ignored: 50,000 images)", function()
  local want = "attnlab.data.cifar10: exact_test = true applies to the test split only (its 1,000 bit-exact records), got split 'train'"
  local e = T.raises(function() return al.data.cifar10 { split = "train", exact_test = true } end, want)
  T.truthy(e:sub(1, #want) == want and not e:find("\n"), "not the one line wanted: " .. e)
  -- the split left to its default (train) says so
  T.raises(function() return al.data.cifar10 { exact_test = true } end, "got split 'train' (the default)")
  -- the test split still takes it (normalize = false: only test_batch.bin is read)
  local ok, e2 = pcall(al.data.cifar10, { split = "test", exact_test = true, normalize = false })
  if not ok and tostring(e2):find("not found", 1, true) then T.skip("CIFAR-10 not found") end
  T.truthy(ok, tostring(e2))
  T.eq({ e2.split, e2.n }, { "test-exact", 1000 })
end)
case("kmnist: a bad protocol is worded as the sibling loaders' option errors (attnlab.data.kmnist:, value quoted)", function()
  local want = "attnlab.data.kmnist: protocol must be 'auto', 'canonical' or 'resplit', got 'bogus'"
  local e = T.raises(function() return al.data.kmnist { protocol = "bogus" } end, want)
  -- the whole message, without a position prefix (it was "<file>:<line>: kmnist: ..., got bogus")
  T.eq(e, want)
  T.eq(T.capture_error(al.data.kmnist, { protocol = 3 }),
    "attnlab.data.kmnist: protocol must be 'auto', 'canonical' or 'resplit', got 3")
end)
-- The pixels of a batch are (byte / 255 - mean) / std with the train split's mean and population
-- std over every pixel; the expected statistics were computed once with numpy from the IDX files
-- (float64: mean of byte/255, sqrt of the mean squared deviation) and are written here as numbers.
case("Fashion-MNIST: a test batch is (byte/255 - train mean) / train std; normalize = false is byte/255", function()
  local ds = T.need_data(al.data.fashion_mnist, { split = "test" }, "Fashion-MNIST")
  local M, S = 0.28604059698879553, 0.35302424451492237
  T.eq({ #ds.mean, #ds.std }, { 1, 1 })
  T.close(ds.mean[1], M, 1e-12, 0, "train mean")
  T.close(ds.std[1], S, 1e-12, 0, "train std")
  -- test image 1 (x (1,1,28,28)): byte 0 at (1,1), 110 at (15,15), 255 at (21,18) (read with numpy)
  local x = ds:batch(I { 1 })
  T.eq(x:shape(), { 1, 1, 28, 28 })
  local img = x:totable()[1][1]
  T.close({ img[1][1], img[15][15], img[21][18] }, { (0 - M) / S, (110 / 255 - M) / S, (1 - M) / S }, 1e-6, 0, "pixels")
  local raw = al.data.fashion_mnist { split = "test", normalize = false }
  T.eq({ raw.mean, raw.std }, { { 0 }, { 1 } })
  local r = raw:batch(I { 1 }):totable()[1][1]
  T.close({ r[1][1], r[15][15], r[21][18] }, { 0, 110 / 255, 1 }, 1e-7, 0, "raw pixels")
end)
-- KMNIST's re-split trains on records 1-8,000 of the test file: its statistics are those of
-- these records alone (numpy: mean 0.184351230492, population std 0.341514835082; over all
-- 10,000 they would be 0.18455702531 and 0.341611773299), and the two parts do not overlap
case("KMNIST re-split: statistics of records 1-8,000 only; train and test parts are records 1-8,000 and 8,001-10,000", function()
  if not find_real("kmnist", "t10k-images-idx3-ubyte") then T.skip("KMNIST not found") end
  local tr, te = al.data.kmnist { split = "train" }, al.data.kmnist { split = "test" }
  T.close({ tr.mean[1], tr.std[1] }, { 0.184351230492, 0.341514835082 }, 2e-7, 0, "train statistics")
  T.eq({ te.mean[1], te.std[1] }, { tr.mean[1], tr.std[1] }, 0, "the test part uses the train part's statistics")
  local full = al.data.kmnist { split = "test", protocol = "resplit", normalize = false }
  T.eq({ full.n, full.index:totable()[1], full.index:totable()[2000] }, { 2000, 8001, 10000 })
  T.eq({ tr.index:totable()[1], tr.index:totable()[8000] }, { 1, 8000 })
end)

-- The Bytes of a dataset file, through the binding itself (lua/bind/io_bind.c): a 4-D IDX file
-- (N, C, H, W) = (2, 2, 1, 2) made here, record 1 = bytes 10 20 30 40, record 2 = 50 60 70 80.
local function bytes_fixture(dir, name, dims, data)
  local path = dir .. "/" .. name
  T.write_file(path, idx_header(dims) .. string.char(table.unpack(data)))
  return assert(al.read_idx(path))
end

case("Bytes:batch: records by 1-based number, per-channel mean and std, scale 1 by default; bad indices and std refused", function()
  local b = bytes_fixture(tmpdir(), "x-idx4-ubyte", { 2, 2, 1, 2 }, { 10, 20, 30, 40, 50, 60, 70, 80 })
  T.eq(b:shape(), { 2, 2, 1, 2 })
  T.eq(b:batch(I { 2, 1 }):totable(), { { { { 50, 60 } }, { { 70, 80 } } }, { { { 10, 20 } }, { { 30, 40 } } } })
  -- channel 1: (v - 10) / 2, channel 2: (v - 30) / 5, of record 1
  T.eq(b:batch(I { 1 }, { mean = { 10, 30 }, std = { 2, 5 } }):totable(), { { { { 0, 5 } }, { { 0, 2 } } } })
  T.eq(b:batch(I { 1 }, { scale = 0.5, mean = 5, std = 5 }):totable(), { { { { 0, 1 } }, { { 2, 3 } } } })
  T.raises(function() b:batch(I { 0 }) end, "attnlab.batch: record 0 out of range 1..2")
  T.raises(function() b:batch(I { 3 }) end, "attnlab.batch: record 3 out of range 1..2")
  T.raises(function() b:batch(I { { 1 } }) end, "expected a 1-D int64 tensor")
  T.raises(function() b:batch(I { 1 }, { std = 0 }) end, "attnlab.batch: std must be > 0")
end)

-- Options that would leave a batch silently unnormalised or NaN are refused by name: a misspelt
-- key, a mean or std of another type, non-finite values, options that are not a table; and
-- to_tensor names a dtype it does not make instead of giving float32.
case("Bytes:batch refuses a misspelt option, a mean of another type, non-finite values; to_tensor an unknown dtype", function()
  local b = bytes_fixture(tmpdir(), "x-idx4-ubyte", { 2, 2, 1, 2 }, { 10, 20, 30, 40, 50, 60, 70, 80 })
  local function refused(opts, want) T.eq(T.capture_error(b.batch, b, I { 1 }, opts), want) end
  refused({ mena = 10 }, "attnlab.batch: unknown option 'mena' (known: scale, mean, std)")
  refused({ mean = true }, "attnlab.batch: mean must be a number or a table of one per channel, got a boolean")
  refused({ std = "x" }, "attnlab.batch: std must be a number or a table of one per channel, got a string")
  refused({ mean = { 1, 0 / 0 } }, "attnlab.batch: mean must be finite, got NaN")
  refused({ mean = -(0 / 0) }, "attnlab.batch: mean must be finite, got NaN")
  refused({ std = { 1, 1 / 0 } }, "attnlab.batch: std must be finite, got inf")
  refused({ scale = -1 / 0 }, "attnlab.batch: scale must be finite, got -inf")
  refused(5, "attnlab.batch: options must be a table, got a number")
  T.eq(T.capture_error(b.to_tensor, b, "int32"), "attnlab.to_tensor: unknown dtype 'int32' (float32 or int64)")
  -- what is accepted still computes: (10 - 10) / 2 and (20 - 10) / 2; nil options are none
  T.eq(b:batch(I { 1 }, { mean = 10, std = 2 }):totable()[1][1], { { 0, 5 } })
  T.eq(b:batch(I { 1 }, nil):totable()[1][1], { { 10, 20 } })
end)

-- channel_stats(0.5): channel 1 holds 10 20 50 60 -> 5 10 25 30 (mean 17.5, deviations +-7.5,
-- +-12.5: std sqrt(106.25)); channel 2 holds 30 40 70 80 -> 15 20 35 40 (mean 27.5, same std)
case("Bytes:channel_stats scales the bytes; bytes_cat counts the records and refuses other record shapes", function()
  local d = tmpdir()
  local b = bytes_fixture(d, "x-idx4-ubyte", { 2, 2, 1, 2 }, { 10, 20, 30, 40, 50, 60, 70, 80 })
  local m, s = b:channel_stats(0.5)
  T.close(m, { 17.5, 27.5 }, 1e-12)
  T.close(s, { math.sqrt(106.25), math.sqrt(106.25) }, 1e-12)
  local one = bytes_fixture(d, "y-idx4-ubyte", { 1, 2, 1, 2 }, { 1, 2, 3, 4 })
  local c = al.bytes_cat({ b, one })
  T.eq(c:shape(), { 3, 2, 1, 2 })
  T.eq(c:batch(I { 3, 1 }):totable(), { { { { 1, 2 } }, { { 3, 4 } } }, { { { 10, 20 } }, { { 30, 40 } } } })
  local wide = bytes_fixture(d, "z-idx4-ubyte", { 1, 2, 1, 3 }, { 1, 2, 3, 4, 5, 6 })
  T.raises(function() al.bytes_cat({ b, wide }) end, "attnlab.bytes_cat: part 2 records differ in shape from part 1")
end)

-- a CIFAR-10 binary batch: per record a label byte (0..9) and 3072 pixel bytes
case("read_cifar: labels are 1-based, pixels in (N, 3, 32, 32)", function()
  local path = tmpdir() .. "/batch.bin"
  T.write_file(path, string.char(3) .. string.rep("\7", 3072) .. string.char(9) .. string.rep("\200", 3072))
  local b, labels = al.read_cifar(path)
  T.eq(b:shape(), { 2, 3, 32, 32 })
  T.eq(labels:totable(), { 4, 10 })
  T.eq(al.max(b:batch(I { 2 })):item(), 200)
end)

case("save writes a view's own elements (a transpose); read_file gunzips only when asked", function()
  local d = tmpdir()
  local x = al.tensor { { 1, 2, 3 }, { 4, 5, 6 } }
  al.save(d .. "/t.safetensors", { w = x:transpose() })
  T.eq(al.load(d .. "/t.safetensors").w:totable(), { { 1, 4 }, { 2, 5 }, { 3, 6 } })
  T.write_file(d .. "/s.txt", "hello attnlab\n")
  assert(os.execute("gzip -k " .. q(d .. "/s.txt")))
  local raw = al.read_file(d .. "/s.txt.gz")
  T.eq(raw:sub(1, 2), "\31\139", "the gzip magic: not decompressed")
  T.eq(al.read_file(d .. "/s.txt.gz", true), "hello attnlab\n")
end)
case("(cleanup of the temporary folders)", function()
  for _, d in ipairs(TMP) do T.rm_rf(d) end
end)

return cases
