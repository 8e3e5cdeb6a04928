-- experiments/classifier/parity_topk_ties.lua -- why topk:0.25's losses leave PyTorch's at
-- step STEPS_BEFORE + 1 of the harness run in RESULTS.md ("Parity with PyTorch"; step 38 with
-- today's kernels, so STEPS_BEFORE = 37): both sides' weights
-- before that step, the attention scores of that step's batch in each layer, and every row
-- whose top-k set differs, with attnlab's k-th and (k+1)-th scores.
--   bin/attnlab experiments/classifier/parity_topk_ties.lua [STEPS_BEFORE=37]
-- Scratch: /tmp/attnlab_parity_ties and /tmp/attnlab_parity_ties_a, emptied first (fixed paths:
-- the script removes them, so it takes no folder from the command line).
-- Output of the run for RESULTS.md: experiments/classifier/parity/topk_ties.txt
-- Needs PyTorch in /usr/bin/python3 (apt-get install python3-torch) and Fashion-MNIST.
local al = require "attnlab"
local cli = al.cli
local util = require "attnlab.util"

local SPEC = {
  name = "parity_topk_ties.lua",
  usage = "bin/attnlab experiments/classifier/parity_topk_ties.lua [STEPS_BEFORE]",
  about = "Where topk:0.25 training leaves PyTorch's: the rows of step STEPS_BEFORE+1 whose top-k sets\n" ..
          "differ between attnlab's and PyTorch's weights, with the k-th and (k+1)-th scores.",
  options = {},
  positional = { { "STEPS_BEFORE", "steps trained before the step looked at (default 37)" } },
  examples = { "bin/attnlab experiments/classifier/parity_topk_ties.lua 37" },
}
cli.run(SPEC, arg, function(opts, rest)
  local S = tonumber(rest[1] or "37")
  if not (S and S >= 1 and S == math.floor(S) and S < 1e6) then
    cli.usage_error(SPEC, ("STEPS_BEFORE needs an integer >= 1, got %s"):format(cli.show(rest[1])))
  end
  local dir = "/tmp/attnlab_parity_ties"
  local okt, why = al.parity.torch_available()
  if not okt then cli.die(SPEC, why, 3) end
  al.set_num_threads(1)
  util.sh_ok("rm -rf " .. util.shquote(dir) .. " " .. util.shquote(dir .. "_a"))
  local base = { normalizer = "topk:0.25", dataset = "fashion_mnist", train_limit = 12800, steps = S + 1, batch_size = 128,
    dim = 64, depth = 2, heads = 4, warmup = 5, total = 100, lr = 1e-3, weight_decay = 0.05, decay_all = true, min_lr = 0, clip_grad = 0, perturb = 0, dir = dir }
  local r = al.parity.run(base)
  print(("steps 1..%d: max rel loss diff %.3e at step %d"):format(S + 1, r.max_rel_loss_diff, r.max_rel_loss_step))
  -- rerun PyTorch for S steps only -> its weights before step S+1
  local cfg = util.decode_json(util.read_file(dir .. "/config.json") or "")
  if type(cfg) ~= "table" then error("no readable config.json in " .. dir, 0) end
  cfg.steps = S
  cli.emit(dir .. "/config.json", al.json.encode(cfg))
  if not util.sh_ok("OMP_NUM_THREADS=1 " .. util.shquote(al.parity.DEFAULTS.python) .. " " .. util.shquote(al.parity.script()) ..
      " parity " .. util.shquote(dir) .. " > /dev/null") then
    cli.die(SPEC, "the PyTorch side failed on " .. dir)
  end
  local tw = al.load(dir .. "/torch_final.safetensors")
  -- attnlab's weights before step S+1: replay S steps
  local r2 = al.parity.run((function() local o = {} for k, v in pairs(base) do o[k] = v end o.steps = S o.dir = dir .. "_a" return o end)())
  local am = r2.model
  local tm = al.nn.ViT(am.cfg)
  tm:load_state_dict(tw)
  local batches = al.load(dir .. "/batches.safetensors")
  local x = batches["x." .. (S + 1)]
  local k = math.max(1, math.ceil(0.25 * 17))
  local function scores_per_layer(m)
    local out = {}
    al.no_grad(function()
      local h = m:embed(x)
      for i = 1, m.depth do
        local blk = m:block(i)
        local xn = blk.norm1(h)
        local qkv = blk.attn.qkv(xn)
        local s = qkv:shape()
        local B, N, D = s[1], s[2], s[3] // 3
        local H = blk.attn.heads
        local t = qkv:reshape({ B, N, 3, H, D // H }):permute({ 3, 1, 4, 2, 5 })
        out[i] = (al.matmul(t[1], t[2]:transpose(3, 4)) * blk.attn.scale):contiguous():reshape({ B * H * N, N }):totable()
        h = blk(h)
      end
    end)
    return out
  end
  local sa, st = scores_per_layer(am), scores_per_layer(tm)
  for l = 1, #sa do
    local differ, mingap, maxdiff = 0, math.huge, 0
    for r_ = 1, #sa[l] do
      local a, b = sa[l][r_], st[l][r_]
      local ia, ib = {}, {}
      for j = 1, #a do ia[j] = j; ib[j] = j; maxdiff = math.max(maxdiff, math.abs(a[j] - b[j])) end
      table.sort(ia, function(u, v) if a[u] ~= a[v] then return a[u] > a[v] end return u < v end)
      table.sort(ib, function(u, v) if b[u] ~= b[v] then return b[u] > b[v] end return u < v end)
      local seta = {}
      for j = 1, k do seta[ia[j]] = true end
      local same = true
      for j = 1, k do if not seta[ib[j]] then same = false end end
      local gap = a[ia[k]] - a[ia[k + 1]]
      if gap < mingap then mingap = gap end
      if not same then
        differ = differ + 1
        print(("  layer %d row %d: top-%d sets differ; attnlab k-th/k+1-th %.9g / %.9g (gap %.3g), pytorch weights %.9g / %.9g"):format(
          l, r_, k, a[ia[k]], a[ia[k + 1]], gap, b[ib[k]], b[ib[k + 1]]))
      end
    end
    print(("layer %d: %d rows, %d with different top-%d sets; smallest k-th gap %.3g; max |score diff| %.3g"):format(l, #sa[l], differ, k, mingap, maxdiff))
  end
end)
