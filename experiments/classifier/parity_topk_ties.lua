-- experiments/classifier/parity_topk_ties.lua -- why topk:0.25's losses leave PyTorch's at
-- step 67 of the harness run in RESULTS.md ("Parity with PyTorch"): both sides' weights
-- before that step, the attention scores of that step's batch in each layer, and every row
-- whose top-k set differs, with attnlab's k-th and (k+1)-th scores.
--   bin/attnlab experiments/classifier/parity_topk_ties.lua [STEPS_BEFORE=66]
-- Output of the run for RESULTS.md: experiments/classifier/parity/topk_ties.txt
local al = require "attnlab"
al.set_num_threads(1)
local S = tonumber(arg[1] or "66")
local dir = "/tmp/attnlab_parity_ties"
os.execute("rm -rf " .. dir)
local base = { normalizer = "topk:0.25", dataset = "fashion_mnist", train_limit = 12800, steps = S + 1, batch_size = 128,
  dim = 64, depth = 2, heads = 4, warmup = 5, total = 100, lr = 1e-3, weight_decay = 0.05, decay_all = true, min_lr = 0, clip_grad = 0, perturb = 0, dir = dir }
local r = al.parity.run(base)
print(("steps 1..%d: max rel loss diff %.3e at step %d"):format(S + 1, r.max_rel_loss_diff, r.max_rel_loss_step))
-- rerun PyTorch for S steps only -> its weights before step S+1
local cfg = al.json.decode(io.open(dir .. "/config.json"):read("a"))
cfg.steps = S
io.open(dir .. "/config.json", "w"):write(al.json.encode(cfg)):close()
assert(os.execute("OMP_NUM_THREADS=1 /usr/bin/python3 " .. al.parity.script() .. " parity " .. dir .. " > /dev/null"))
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
