-- scripts/mlp_fashion.lua -- the core's end-to-end check: an MLP trained on the real
-- Fashion-MNIST (Debian's dataset-fashion-mnist, IDX .gz read through zlib).
--
--   bin/attnlab scripts/mlp_fashion.lua [--epochs 1] [--hidden 256] [--batch 64]
--                                       [--lr 1e-3] [--seed 1] [--limit N] [--threads T]
-- Prints the loss as it goes and the test accuracy at the end (one epoch reaches ~85%).
local al = require "attnlab"
local nn = al.nn

local as_library = (... == "mlp_fashion")   -- loadfile(path)("mlp_fashion") returns run()
local opts = { epochs = 1, hidden = 256, batch = 64, lr = 1e-3, seed = 1, limit = nil, threads = nil }
if not as_library then
  opts = al.cli.parse({
    name = "mlp_fashion.lua",
    usage = "bin/attnlab scripts/mlp_fashion.lua [--epochs 1] [--hidden 256] [--batch 64] [--lr 1e-3] [--seed 1] [--limit N] [--threads T]",
    about = "The core's end-to-end check: an MLP trained on Fashion-MNIST; prints the loss and the test accuracy.",
    -- sizes and counts below 2^31 ("count"): a --batch of 2^63 - 1 ran no step and reported an accuracy
    options = {
      { "epochs", "E", "epochs (default 1)", type = "count", default = 1 },
      { "hidden", "H", "hidden width (default 256)", type = "count", default = 256 },
      { "batch", "B", "batch size (default 64)", type = "count", default = 64 },
      { "lr", "LR", "learning rate (default 1e-3)", type = "posnum", default = 1e-3 },
      { "seed", "K", "seed (default 1)", type = "posint", default = 1 },
      { "limit", "N", "training examples per epoch (default all)", type = "count" },
      { "threads", "T", "threads (default: all cores)", type = "posint" },
    },
    examples = { "bin/attnlab scripts/mlp_fashion.lua --epochs 1 --limit 5000" },
  }, arg)
end
if opts.threads then al.set_num_threads(opts.threads) end

local function run(o)
  al.manual_seed(o.seed)
  local train = al.data.fashion_mnist { split = "train" }
  local test = al.data.fashion_mnist { split = "test" }
  if o.limit and o.limit > train.n then   -- a usage error (exit 2), found once the data is read
    error({ usage = true, message = ("--limit %d is above the training set's %d examples"):format(o.limit, train.n) }, 0)
  end
  local model = nn.Sequential(nn.Linear(784, o.hidden), nn.ReLU(), nn.Linear(o.hidden, o.hidden), nn.ReLU(),
                              nn.Linear(o.hidden, 10))
  local opt = al.optim.AdamW(model:parameters(), { lr = o.lr, weight_decay = 0 })
  local loader = al.data.Loader(train, { batch_size = o.batch, shuffle = true, seed = o.seed, limit = o.limit })
  local t0 = al.clock()
  for epoch = 1, o.epochs do
    local running, count = 0, 0
    for x, y, b in loader:iter(epoch) do
      local logits = model(x:reshape({ x:shape()[1], 784 }))
      local loss = al.cross_entropy(logits, y)
      opt:zero_grad()
      loss:backward()
      opt:step()
      local l = loss:item()
      -- a diverged run's accuracy (10%: chance) is not a result
      if not (l == l and math.abs(l) < math.huge) then
        error(("the loss is %s at epoch %d, step %d: the run diverged (try a smaller --lr); no accuracy reported")
          :format(al.cli.show(l), epoch, b), 0)
      end
      running, count = running + l, count + 1
      if o.verbose and b % 200 == 0 then
        print(("epoch %d step %d loss %.4f"):format(epoch, b, running / count))
        running, count = 0, 0
      end
    end
  end
  local train_time = al.clock() - t0
  model:eval()
  local correct = 0
  al.no_grad(function()
    for x, y in al.data.Loader(test, { batch_size = 1000 }):iter() do
      local pred = al.argmax(model(x:reshape({ x:shape()[1], 784 })), 2)
      correct = correct + al.sum(al.eq(pred, y)):item()
    end
  end)
  return correct / test.n, train_time
end

if as_library then return run end
local ok, acc, secs = pcall(run, { epochs = opts.epochs, hidden = opts.hidden, batch = opts.batch, lr = opts.lr,
                                   seed = opts.seed, limit = opts.limit, verbose = true })
if not ok then
  local usage = type(acc) == "table" and acc.usage
  io.stderr:write("mlp_fashion.lua: " .. al.cli.clean(usage and acc.message or acc) .. "\n")
  os.exit(usage and 2 or 1)
end
print(("test accuracy %.4f after %d epoch(s), %.1f s training, %d thread%s"):format(acc, opts.epochs, secs,
  al.get_num_threads(), al.get_num_threads() == 1 and "" or "s"))
