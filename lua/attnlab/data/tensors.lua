-- attnlab.data.tensors -- a dataset of your own tensors (PyTorch's TensorDataset), exposed by
-- attnlab.data as al.data.from_tensors(x, y [, opts]):
--
--   local x = al.randn{1000, 3, 16, 16}                       -- images, features or token ids
--   local y = al.randint(1, 4, {1000})                        -- int64 labels 1..num_classes
--   local ds = al.data.from_tensors(x, y, {num_classes = 4})
--   local train, val = al.data.train_val_split(ds, {val = 100, seed = 1})
--   for xb, yb in al.data.Loader(train, {batch_size = 64, shuffle = true, seed = 1}):iter(1) do ... end
--
-- x (N, ...): float32 or int64 (token ids for a text ViT), any trailing shape; it is used as it
-- is (no normalisation) and not copied, so later writes into x show in the batches.
-- y (N): int64 class labels 1..num_classes (1-based, as everywhere in attnlab: a 0-based label
-- is refused here, not when cross_entropy meets it).
-- opts: num_classes (default max(y)), classes (a list of num_classes names), name ("tensors"),
-- split ("all"). The result is an attnlab.data.Dataset: ds:batch(idx) gives x (B, ...) and
-- y (B) for 1-based example numbers idx, and subset, all_labels, train_val_split and Loader work
-- on it as on the file datasets.
local al = require "attnlab"
local util = require "attnlab.util"

local M = {}

local OPTS = { "num_classes", "classes", "name", "split" }
local function shape_str(t) return ("%s (%s)"):format(t:dtype(), table.concat(t:shape(), ",")) end
local function show(v) return al.is_tensor(v) and "a tensor " .. shape_str(v) or util.show(v) end

local function fail(fmt, ...) error("al.data.from_tensors: " .. fmt:format(...), 0) end

-- x (B, ...), y (B) for base example numbers idx.
local function make_batch(self, idx)
  return al.index_select(self.inputs, 1, idx), al.index_select(self.labels, 1, idx)
end

local function check(x, y, opts)
  if not al.is_tensor(x) then fail("x must be a tensor (N, ...), got %s", show(x)) end
  if not al.is_tensor(y) then fail("y must be an int64 tensor (N) of labels, got %s", show(y)) end
  local xs, ys = x:shape(), y:shape()
  if #xs < 1 then fail("x must have a first dim of examples, got a 0-dim %s tensor", x:dtype()) end
  if #ys ~= 1 or y:dtype() ~= "int64" then
    fail("y must be an int64 tensor (N) of labels 1..num_classes, got %s", shape_str(y))
  end
  if xs[1] ~= ys[1] then
    fail("x and y must have one entry per example: x is %s, y is %s (%d vs %d examples)", shape_str(x), shape_str(y),
      xs[1], ys[1])
  end
  if xs[1] < 1 then fail("x and y hold no examples") end
  if opts ~= nil and type(opts) ~= "table" then
    fail("options must be a table {num_classes =, classes =, name =, split =}, got %s", show(opts))
  end
  opts = opts or {}
  local bad = util.unknown_keys(opts, OPTS)
  if bad then fail("%s", bad) end
  for _, k in ipairs({ "name", "split" }) do
    if opts[k] ~= nil and (type(opts[k]) ~= "string" or opts[k] == "") then
      fail("%s must be a non-empty string, got %s", k, show(opts[k]))
    end
  end
  return opts
end

function M.from_tensors(x, y, opts)
  opts = check(x, y, opts)
  local lo, hi = al.min(y):item(), al.max(y):item()
  local k = opts.num_classes
  if k ~= nil and (math.type(k) ~= "integer" or k < 1) then
    fail("num_classes must be a positive integer, got %s", show(k))
  end
  if lo < 1 then
    fail("labels are 1..num_classes (1-based), got a label %d%s", lo, lo == 0 and " (0-based labels: pass y + 1)" or "")
  end
  if k and hi > k then fail("a label %d is above num_classes = %d", hi, k) end
  k = k or hi
  local classes = opts.classes
  if classes ~= nil then
    if not util.is_list(classes) or #classes ~= k then
      fail("classes must be a list of %d names (one per class), got %s", k, show(classes))
    end
    for i, c in ipairs(classes) do
      if type(c) ~= "string" then fail("classes[%d] must be a string, got %s", i, show(c)) end
    end
  else
    classes = {}
    for i = 1, k do classes[i] = tostring(i) end
  end
  return setmetatable({ name = opts.name or "tensors", split = opts.split or "all", n = x:shape()[1],
                        num_classes = k, classes = classes, inputs = x, labels = y, make_batch = make_batch },
                      require("attnlab.data").Dataset)
end

return M
