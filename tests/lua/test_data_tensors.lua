-- tests/lua/test_data_tensors.lua -- al.data.from_tensors (lua/attnlab/data/tensors.lua): a
-- dataset of the user's own tensors gives back exactly its rows through batch, subset,
-- train_val_split, Loader and the fit loop, and a wrong pair of tensors or a bad option is one
-- line naming it when the dataset is made. Also the Loader's epochs: iter() without one takes
-- the next, so each pass is shuffled anew.
local al = require "attnlab"
local T = require "harness"

local cases, case = T.suite()

local function err(name, fn, ...)
  cases[#cases + 1] = T.error_case(name, fn, { ... }, { "attempt to", "-nan", "\n" })
end

-- x row i holds the number i in every entry, so a batch shows which examples it holds
local function numbered(n, ...)
  local ones, shape = { n }, { n, ... }
  for i = 2, #shape do ones[i] = 1 end
  local x = al.arange(n):float():reshape(ones):expand(shape):contiguous()
  local y = al.tensor((function() local t = {} for i = 1, n do t[i] = (i - 1) % 3 + 1 end return t end)(),
    { dtype = "int64" })
  return x, y
end

case("batch gives the rows asked for, in their order, with their labels", function()
  local x, y = numbered(10, 2, 3)
  local ds = al.data.from_tensors(x, y)
  T.eq(ds.n, 10)
  T.eq(ds.num_classes, 3, nil, "num_classes = max(y)")
  T.eq(ds.classes, { "1", "2", "3" })
  T.eq(tostring(ds), "Dataset(tensors all: 10 examples, 3 classes)")
  local xb, yb = ds:batch(al.tensor({ 7, 2, 7 }, { dtype = "int64" }))
  T.eq(xb:shape(), { 3, 2, 3 })
  T.eq(al.max(xb, 3):max(2):totable(), { 7, 2, 7 })
  T.eq(al.min(xb, 3):min(2):totable(), { 7, 2, 7 })
  T.eq(yb:totable(), { 1, 2, 1 })
  T.eq(ds:all_labels():totable(), y:totable())
end)

case("int64 inputs (token ids) and options: num_classes above max(y), class names, name and split", function()
  local x = al.tensor({ { 1, 2 }, { 3, 4 }, { 5, 6 } }, { dtype = "int64" })
  local y = al.tensor({ 2, 1, 2 }, { dtype = "int64" })
  local ds = al.data.from_tensors(x, y, { num_classes = 4, classes = { "a", "b", "c", "d" }, name = "mine", split = "train" })
  T.eq(tostring(ds), "Dataset(mine train: 3 examples, 4 classes)")
  local xb, yb = ds:batch(al.tensor({ 3, 1 }, { dtype = "int64" }))
  T.eq(xb:dtype(), "int64")
  T.eq(xb:totable(), { { 5, 6 }, { 1, 2 } })
  T.eq(yb:totable(), { 2, 2 })
end)

case("subset, train_val_split and a shuffled Loader cover every example once, with its own label", function()
  local x, y = numbered(50, 4)
  local ds = al.data.from_tensors(x, y)
  local tr, val = al.data.train_val_split(ds, { val = 10, seed = 3 })
  T.eq({ tr.n, val.n }, { 40, 10 })
  local seen = {}
  for _, part in ipairs({ tr, val }) do
    for xb, yb in al.data.Loader(part, { batch_size = 7, shuffle = true, seed = 1 }):iter(2) do
      local ids, labels = al.max(xb, 2):totable(), yb:totable()
      for i, id in ipairs(ids) do
        id = math.tointeger(id)
        T.truthy(not seen[id], "example " .. id .. " twice")
        seen[id] = true
        T.eq(labels[i], (id - 1) % 3 + 1, nil, "the label of example " .. id)
      end
    end
  end
  for i = 1, 50 do T.truthy(seen[i], "example " .. i .. " missing") end
  local sub = ds:subset({ 5, 1 })
  T.eq(al.max(sub:batch(al.tensor({ 1, 2 }, { dtype = "int64" })), 2):totable(), { 5, 1 })
end)

-- the example numbers of one pass, in order
local function pass(it)
  local ids = {}
  for xb in it do for _, v in ipairs(al.max(xb, 2):totable()) do ids[#ids + 1] = math.tointeger(v) end end
  return table.concat(ids, ",")
end

case("Loader:iter() without an epoch shuffles every pass anew: passes 1, 2, 3 as iter(1), iter(2), iter(3)", function()
  local ds = al.data.from_tensors(numbered(20, 2))
  local opts = { batch_size = 6, shuffle = true, seed = 4 }
  local a, b = al.data.Loader(ds, opts), al.data.Loader(ds, opts)
  local p1, p2, p3 = pass(a:iter()), pass(a:iter()), pass(a:iter())
  T.truthy(p1 ~= p2 and p2 ~= p3, "three passes, three orders")
  T.eq({ p1, p2, p3 }, { pass(b:iter(1)), pass(b:iter(2)), pass(b:iter(3)) })
  T.eq(pass(a:iter(2)), p2, nil, "an explicit epoch is that epoch's order")
  T.eq(pass(a:iter()), p3, nil, "and the next pass follows it")
  local plain = al.data.Loader(ds, { batch_size = 6 })
  T.eq(pass(plain:iter()), pass(plain:iter()), nil, "no shuffle: one order")
end)
case("Loader limit: the first `limit` examples of the pass, in ceil(limit / batch_size) batches", function()
  local ds = al.data.from_tensors(numbered(10, 2))
  local l = al.data.Loader(ds, { batch_size = 4, limit = 6 })
  T.eq(l:num_batches(), 2)
  T.eq(pass(l:iter()), "1,2,3,4,5,6")
  T.eq(al.data.Loader(ds, { batch_size = 4, limit = 6, drop_last = true }):num_batches(), 1, nil, "drop_last ")
  local big = al.data.Loader(ds, { batch_size = 4, limit = 50 })
  T.eq({ big:num_batches(), pass(big:iter()) }, { 3, "1,2,3,4,5,6,7,8,9,10" }, nil, "a limit above n is n ")
  -- shuffled: the first 6 of that epoch's order
  local sh = al.data.Loader(ds, { batch_size = 4, limit = 6, shuffle = true, seed = 2 })
  local order = sh:order(1):totable()
  T.eq(pass(sh:iter(1)), table.concat({ table.unpack(order, 1, 6) }, ","))
end)
for _, e in ipairs({ 0, 1.5, "2", -1 }) do
  err(("Loader:iter(%s)"):format(tostring(e)), function()
    return al.data.Loader(al.data.from_tensors(numbered(4, 1)), { shuffle = true }):iter(e)
  end, "Loader:iter: epoch must be an integer >= 1 (or nil: the next epoch)")
end

case("the fit loop trains a model on it (the loss goes down on a learnable task)", function()
  -- two classes told apart by the sign of the first feature
  local g = al.Generator(7)
  local x = al.randn({ 256, 4 }, { generator = g })
  local y = al.add(al.gt(x:narrow(2, 1, 1):reshape({ 256 }), 0):long(), 1)
  local ds = al.data.from_tensors(x, y)
  local model = al.nn.Linear(4, 2, { generator = al.Generator(1) })
  local fit = require "attnlab.run.fit"
  local history = fit.run(model, { { name = "train", epochs = 3, lr = 0.05,
    step = function(xb, yb) local loss = al.cross_entropy(model(xb), yb) return loss, { loss = loss:item() } end } },
    { train = ds, batch_size = 32, seed = 1, weight_decay = 0 })
  T.truthy(history[3].loss < 0.7 * history[1].loss, ("loss %g -> %g"):format(history[1].loss, history[3].loss))
end)

case("the fit loop's schedule: floor(warmup_epochs * steps) warmup steps, then cosine to min_lr over the stage", function()
  -- 12 examples in batches of 4: 3 steps per epoch, 2 epochs, total 6. warmup_epochs = 0.5 is
  -- floor(1.5) = 1 step, so after epoch 1 (t = 3) lr = 0.5 (1 + cos(pi (3 - 1) / (6 - 1))),
  -- after epoch 2 (t = 6) min_lr = 0
  local ds = al.data.from_tensors(al.randn({ 12, 4 }, { generator = al.Generator(3) }),
    al.tensor({ 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2 }, { dtype = "int64" }))
  local model = al.nn.Linear(4, 2, { generator = al.Generator(1) })
  local fit = require "attnlab.run.fit"
  local history = fit.run(model, { { name = "train", epochs = 2, lr = 1.0, warmup_epochs = 0.5,
    step = function(xb, yb) local loss = al.cross_entropy(model(xb), yb) return loss, { loss = loss:item() } end } },
    { train = ds, batch_size = 4, seed = 1, weight_decay = 0, min_lr = 0 })
  T.close(history[1].lr, 0.5 * (1 + math.cos(math.pi * 2 / 5)), 1e-12)
  T.close(history[2].lr, 0, 1e-12)
end)

-- what a subset of a subset, its labels, and the documented defaults give, by example number
case("a subset of a subset picks from its parent's examples; all_labels of a subset are its examples' labels", function()
  local ds = al.data.from_tensors(numbered(12, 2))              -- labels (i - 1) % 3 + 1
  local sub = ds:subset({ 11, 4, 7, 2 })                        -- examples 11, 4, 7, 2
  local subsub = sub:subset({ 4, 1 })                           -- entries 4 and 1 of sub: examples 2, 11
  local xb, yb = subsub:batch(al.tensor({ 1, 2 }, { dtype = "int64" }))
  T.eq(al.max(xb, 2):totable(), { 2, 11 })
  T.eq(yb:totable(), { 2, 2 })
  T.eq(sub:all_labels():totable(), { 2, 1, 1, 2 })
  T.eq(subsub:all_labels():totable(), { 2, 2 })
  T.eq(subsub.n, 2)
  -- a train_val_split of a subset (train.lua --val on KMNIST's re-split) stays within it
  local a, b = al.data.train_val_split(sub, { val = 1, seed = 5 })
  local got = {}
  for _, part in ipairs({ a, b }) do
    for _, v in ipairs(al.max(part:batch(al.arange(part.n)), 2):totable()) do got[#got + 1] = math.tointeger(v) end
  end
  table.sort(got)
  T.eq(got, { 2, 4, 7, 11 })
end)
case("train_val_split refuses val = n (an empty training part) and val = 0", function()
  local ds = al.data.from_tensors(numbered(10, 1))
  T.raises(function() al.data.train_val_split(ds, { val = 10 }) end, "val must be an integer between 1 and n-1 = 9, got 10")
  T.raises(function() al.data.train_val_split(ds, { val = 0 }) end, "val must be an integer between 1 and n-1 = 9, got 0")
  local tr, val = al.data.train_val_split(ds, { val = 9 })
  T.eq({ tr.n, val.n }, { 1, 9 })
end)
case("subset refuses an index of 0 or n + 1, in a list or a tensor", function()
  local ds = al.data.from_tensors(numbered(5, 1))
  T.raises(function() ds:subset({ 1, 6 }) end, "entry 2 is 6, outside 1..5")
  T.raises(function() ds:subset(al.tensor({ 0, 1 }, { dtype = "int64" })) end, "entry 1 is 0, outside 1..5")
  T.raises(function() ds:subset(al.tensor({ 2, 6 }, { dtype = "int64" })) end, "entry 2 is 6, outside 1..5")
  T.eq(ds:subset({ 5, 1 }).n, 2)
end)
case("defaults: train_val_split holds out floor(n / 10) with seed 0; a Loader is unshuffled, batches of 128, seed 0", function()
  local ds = al.data.from_tensors(numbered(300, 1))
  local tr, val = al.data.train_val_split(al.data.from_tensors(numbered(15, 1)))
  T.eq({ tr.n, val.n }, { 14, 1 }, nil, "floor(1.5) = 1 ")
  -- seed 0: the val part is the first nval of randperm(n) under al.Generator(0) (the documented draw)
  local perm = al.randperm(300, al.Generator(0)):totable()
  local _, v30 = al.data.train_val_split(ds)
  T.eq(al.max(v30:batch(al.arange(30)), 2):totable(), { table.unpack(perm, 1, 30) })
  local plain = al.data.Loader(ds)
  T.eq(plain:num_batches(), 3, nil, "ceil(300 / 128) ")
  local sizes = {}
  for xb in plain:iter() do sizes[#sizes + 1] = xb:shape()[1] end
  T.eq(sizes, { 128, 128, 44 })
  T.eq(plain:order(1):totable(), al.arange(300):totable(), nil, "no shuffle by default ")
  -- shuffled, epoch e of seed s draws randperm(n) from al.Generator(s * 1000003 + e); no seed is seed 0
  T.eq(al.data.Loader(ds, { shuffle = true }):order(2):totable(), al.randperm(300, al.Generator(2)):totable())
  T.eq(al.data.Loader(ds, { shuffle = true, seed = 3 }):order(5):totable(),
    al.randperm(300, al.Generator(3 * 1000003 + 5)):totable())
end)

local x10, y10 = numbered(10, 2)
err("x not a tensor", function() return al.data.from_tensors({ 1, 2 }, y10) end,
  "al.data.from_tensors: x must be a tensor (N, ...), got a table")
err("y float32", function() return al.data.from_tensors(x10, y10:float()) end,
  "y must be an int64 tensor (N) of labels 1..num_classes, got float32 (10)")
err("y of two dims", function() return al.data.from_tensors(x10, y10:reshape({ 5, 2 })) end, "got int64 (5,2)")
err("x and y of different lengths", function() return al.data.from_tensors(x10:narrow(1, 1, 4), y10) end,
  "x is float32 (4,2), y is int64 (10) (4 vs 10 examples)")
err("0-based labels", function() return al.data.from_tensors(x10, y10 - 1) end,
  "labels are 1..num_classes (1-based), got a label 0", "pass y + 1")
err("a label above num_classes", function() return al.data.from_tensors(x10, y10, { num_classes = 2 }) end,
  "a label 3 is above num_classes = 2")
err("num_classes not an integer", function() return al.data.from_tensors(x10, y10, { num_classes = 3.5 }) end,
  "num_classes must be a positive integer, got 3.5")
err("a misspelt option", function() return al.data.from_tensors(x10, y10, { nclasses = 3 }) end,
  "unknown option 'nclasses'", "num_classes")
err("classes of the wrong count", function() return al.data.from_tensors(x10, y10, { classes = { "a", "b" } }) end,
  "classes must be a list of 3 names")
err("no examples", function()
  return al.data.from_tensors(al.zeros({ 0, 2 }), al.zeros({ 0 }, { dtype = "int64" }))
end, "hold no examples")
err("options not a table", function() return al.data.from_tensors(x10, y10, 3) end, "options must be a table")
-- the other direction of each check: more rows of x than labels, more class names than classes
err("x longer than y", function() return al.data.from_tensors(x10, y10:narrow(1, 1, 4)) end,
  "x is float32 (10,2), y is int64 (4) (10 vs 4 examples)")
err("classes of one name too many", function() return al.data.from_tensors(x10, y10, { classes = { "a", "b", "c", "d" } }) end,
  "classes must be a list of 3 names")
-- a batch of 2^31 is refused as 2^63 - 1 is (the bound train.config has), 2^31 - 1 is not
err("Loader with a batch_size of 2^31", function() return al.data.Loader(al.data.from_tensors(x10, y10), { batch_size = 1 << 31 }) end,
  "Loader: batch_size must be below 2^31, got 2147483648")
case("Loader takes a batch_size of 2^31 - 1 (one batch); train_val_split refuses fraction 0 and 1 by name", function()
  local ds = al.data.from_tensors(x10, y10)
  T.eq(al.data.Loader(ds, { batch_size = (1 << 31) - 1 }):num_batches(), 1)
  T.raises(function() al.data.train_val_split(ds, { fraction = 1 }) end, "fraction must be a number in (0, 1), got 1")
  T.raises(function() al.data.train_val_split(ds, { fraction = 0 }) end, "fraction must be a number in (0, 1), got 0")
end)

return cases
