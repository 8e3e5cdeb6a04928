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

return cases
