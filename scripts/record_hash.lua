-- scripts/record_hash.lua -- a SHA-256 of a JSON record's results, for "this change is
-- behaviour-neutral" evidence: two runs of the same fixed-seed command hash the same
-- when every number they computed is bitwise the same.
--
--   bin/attnlab scripts/record_hash.lua RECORD.json [...]      one "<sha256>  <file>" line each
--   bin/attnlab scripts/record_hash.lua --canon RECORD.json    the canonical text that is hashed
--
-- What a rerun legitimately changes is dropped first, at any depth: wall-clock times
-- (started, finished, seconds, step times, throughput), the machine and git revision, and
-- output paths (out, checkpoint, save, saved, record, teacher/profile file names), and the
-- folders of input files (a dataset file's path is its name; its sha256 and size stay), so
-- runs made from two checkouts into two folders compare. Everything else -- config values,
-- losses, accuracies, keep rates, support densities, learned alphas, data-file hashes --
-- is written with sorted keys and every number at 17 significant digits, so a one-ulp
-- difference changes the hash.
local al = require "attnlab"
local cli = al.cli

local DROP = {
  started = true, finished = true, seconds = true, git_revision = true, machine = true,
  step_times = true, train_s_per_step = true, train_img_per_s = true, infer_s_per_example = true,
  s_per_example = true, s_per_example_masked = true, dense_s_per_example = true,
  teacher_s_per_example = true, out = true, checkpoint = true, save = true, saved = true, record = true,
}
-- string values that are file paths of inputs: the file's name is kept, its folder (which
-- follows the checkout, e.g. dataset.files[i].path = "<root>/../shared/data/...") is not
local PATH_KEYS = { teacher = true, profile = true, init = true, path = true }

local function canon(v, out)
  local t = type(v)
  if t == "table" then
    if #v > 0 or next(v) == nil then
      out[#out + 1] = "["
      for i, x in ipairs(v) do
        if i > 1 then out[#out + 1] = "," end
        canon(x, out)
      end
      out[#out + 1] = "]"
      return
    end
    local keys = {}
    for k, x in pairs(v) do
      if not DROP[k] then keys[#keys + 1] = k end
    end
    table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
    out[#out + 1] = "{"
    for i, k in ipairs(keys) do
      if i > 1 then out[#out + 1] = "," end
      out[#out + 1] = ("%q:"):format(tostring(k))
      local x = v[k]
      if PATH_KEYS[k] and type(x) == "string" and x:find("/") then x = x:match("[^/]+$") end
      canon(x, out)
    end
    out[#out + 1] = "}"
  elseif t == "number" then
    out[#out + 1] = math.type(v) == "integer" and tostring(v) or ("%.17g"):format(v)
  elseif t == "string" then
    out[#out + 1] = ("%q"):format(v)
  elseif v == al.json.null then
    out[#out + 1] = "null"
  else
    out[#out + 1] = tostring(v)
  end
end

local function canonical(path)
  local f = io.open(path, "rb")
  if not f then error(("no such file: %s"):format(path), 0) end
  local s = f:read("a")
  f:close()
  local out = {}
  canon(al.json.decode(s), out)
  return table.concat(out)
end

local SPEC = {
  name = "record_hash.lua",
  usage = "bin/attnlab scripts/record_hash.lua [--canon] RECORD.json [...]",
  about = "A SHA-256 of each JSON record with timings, machine, git revision and output paths left out.",
  options = { { "canon", nil, "print the canonical text that is hashed instead of its hash" } },
  positional = { { "RECORD", "a JSON record (train.lua, sweep.lua, distill.lua)" } },
  positional_required = 1,
  rest = true,
  examples = { "bin/attnlab scripts/record_hash.lua results/run.json" },
}

cli.run(SPEC, arg, function(opts, files)
  for _, path in ipairs(files) do
    local text = canonical(path)
    if opts.canon then
      print(text)
    else
      local tmp = os.tmpname()
      local f = assert(io.open(tmp, "wb"))
      f:write(text)
      f:close()
      local p = assert(io.popen("sha256sum < '" .. tmp .. "'"))
      local h = p:read("a"):match("^(%x+)")
      p:close()
      os.remove(tmp)
      print(("%s  %s"):format(h, path))
    end
  end
end)
