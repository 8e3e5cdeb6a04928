-- scripts/bench_normalizers.lua -- attention normalizers and the attention layer,
-- forward+backward, against our softmax and against the PyTorch reference
-- (../shared/anchors/torch_ref.py) in the same run.
--
--   bin/attnlab scripts/bench_normalizers.lua [--threads 1] [--tokens 65] [--scale 1] [--no-torch]
-- Scores {128,4,N,N} ~ N(0, scale^2) (--scale 0.1: the flat rows of a freshly initialised
-- model, where every score of a row is a candidate of the support); hae = alpha-entmax by bisection with a learned per-head
-- alpha {4,1,1} and its gradient. Attention layer: x (128, N, 64), 4 heads, qkv+proj.
-- Ours: medians of interleaved rounds (all normalizers and layers once per round), five before
-- and four after PyTorch, which runs in its own process (its script takes its own medians).
local al = require "attnlab"
local bench = al.bench

local SPEC = {
  name = "bench_normalizers.lua",
  usage = "bin/attnlab scripts/bench_normalizers.lua [--threads 1] [--tokens 65] [--scale 1] [--no-torch]",
  about = "Attention normalizers and the attention layer, forward+backward, on scores {128,4,N,N},\n" ..
          "against our softmax and the PyTorch reference in the same run.",
  options = {
    { "threads", "N", "threads (default 1)", type = "posint", default = 1 },
    { "tokens", "N", "tokens per row (default 65)", type = "posint", default = 65 },
    { "scale", "S", "scores ~ N(0, S^2) (default 1; 0.1: flat rows, as in a fresh model)", type = "number", default = 1 },
    { "no-torch", nil, "skip the PyTorch reference" },
  },
  examples = { "bin/attnlab scripts/bench_normalizers.lua --tokens 17 --no-torch",
               "bin/attnlab scripts/bench_normalizers.lua --scale 0.1 --no-torch" },
}
local o = al.cli.parse(SPEC, arg)
-- (any error from here on is one line naming the script, not a traceback: an allocation the
-- machine cannot make at a large --tokens, say; ATTNLAB_TRACEBACK=1 shows the traceback)
al.cli.protect({ name = "bench_normalizers.lua" }, function()
  local threads, N, scale, use_torch = o.threads, o.tokens, o.scale, not o.no_torch
  if not (scale > 0 and scale < math.huge) then al.cli.usage_error(SPEC, "--scale must be a finite number > 0, got " .. tostring(scale)) end
  al.set_num_threads(threads)
  bench.header(("normalizers on {128,4,%d,%d}, scores ~ N(0, %g^2), forward+backward"):format(N, N, scale))

  local NAMES = { "softmax", "sparsemax", "entmax15", "hae", "topk:0.125", "topk:0.25", "topk:0.5" }
  local TORCH = { softmax = "softmax", sparsemax = "sparsemax", entmax15 = "entmax15", hae = "hae",
                  ["topk:0.125"] = "topk0.125", ["topk:0.25"] = "topk0.25", ["topk:0.5"] = "topk0.5" }

  al.manual_seed(0)
  local s = al.randn({ 128, 4, N, N }) * scale
  local g = al.randn({ 128, 4, N, N })
  -- One closure per (normalizer, kernel-or-layer); timed in interleaved rounds (every closure
  -- once per round, `inner` calls each), medians over rounds: a slow phase of a shared machine
  -- then hits every entry alike instead of biasing the ratios.
  local jobs = {}
  for _, name in ipairs(NAMES) do
    local norm = al.nn.Normalizer { name = name, heads = 4 }
    local x = s:detach():requires_grad_(true)
    jobs[#jobs + 1] = { tab = "ours", name = name, fn = function()
      local y = norm(x)
      y:backward(g)
      x.grad = nil
      if norm.pre_alpha then norm.pre_alpha.grad = nil end
    end }
    local att = al.nn.MultiHeadAttention { dim = 64, heads = 4, normalizer = name }
    local xa = al.randn({ 128, N, 64 }, { requires_grad = true })
    jobs[#jobs + 1] = { tab = "layer", name = name, fn = function()
      local y = att(xa)
      al.sum(y):backward()
      xa.grad = nil
      for _, p in ipairs(att:parameters()) do p.grad = nil end
    end }
  end
  -- Ours are timed in rounds before and after the PyTorch run (5 + 4; medians over all 9): this
  -- VM's memory speed drifts over minutes, and a drift during the PyTorch run would otherwise
  -- move every ratio one way.
  local ROUNDS_BEFORE, ROUNDS = 5, 9
  local times = {}
  for _, j in ipairs(jobs) do
    j.fn(); j.fn()                                   -- warm-up
    local t0 = al.clock(); j.fn(); local t1 = al.clock() - t0
    j.inner = math.max(1, math.min(20, math.floor(0.1 / math.max(t1, 1e-6))))
    times[j] = {}
  end
  local function rounds(r0, r1)
    for r = r0, r1 do
      for _, j in ipairs(jobs) do
        local t0 = al.clock()
        for _ = 1, j.inner do j.fn() end
        times[j][r] = (al.clock() - t0) / j.inner
      end
    end
  end

  rounds(1, ROUNDS_BEFORE)
  local torch_norm, torch_layer, why = {}, {}, nil
  if use_torch then
    local names = {}
    for _, n in ipairs(NAMES) do names[#names + 1] = TORCH[n] end
    local r, err = bench.torch("norms", ("--shape 128,4,%d,%d --scale %.17g --names %s"):format(N, N, scale, table.concat(names, ",")), threads)
    if r then for _, e in ipairs(r) do if e.name then torch_norm[e.name] = e.ms / 1e3 end end else why = err end
    r = bench.torch("attn", ("--batch 128 --tokens %d --names %s"):format(N, table.concat(names, ",")), threads)
    if r then for _, e in ipairs(r) do if e.name then torch_layer[e.name] = e.ms / 1e3 end end end
  end
  rounds(ROUNDS_BEFORE + 1, ROUNDS)
  local ours, layer = {}, {}
  for _, j in ipairs(jobs) do
    table.sort(times[j])
    local med = times[j][(ROUNDS + 1) // 2];
    (j.tab == "ours" and ours or layer)[j.name] = med
  end

  local rows = {}
  for _, name in ipairs(NAMES) do
    local t, tt = ours[name], torch_norm[TORCH[name]]
    rows[#rows + 1] = { name, ("%.2f"):format(t * 1e3), ("%.2fx"):format(t / ours.softmax),
      tt and ("%.2f"):format(tt * 1e3) or "-", tt and ("%.1fx"):format(tt / t) or "-",
      ("%.2f"):format(layer[name] * 1e3), ("%.2fx"):format(layer[name] / layer.softmax),
      torch_layer[TORCH[name]] and ("%.1fx"):format(torch_layer[TORCH[name]] / layer[name]) or "-" }
  end
  bench.print_table({ "normalizer", "ours ms", "x our softmax", "PyTorch ms", "PyTorch/ours", "layer ms", "layer x softmax", "PyTorch layer/ours" }, rows)
  if why then print("(PyTorch column empty: " .. why .. ")") end
  -- softmax is memory-bound: forward reads x, writes y; backward reads y, g, writes gx
  local bytes = 128 * 4 * N * N * 4 * 5
  local tcopy = bench.time(function() local c = s:clone() end)
  print(("softmax fwd+bwd moves %.1f MB: %.1f GB/s; a plain copy of the scores (read+write %.1f MB) runs at %.1f GB/s")
    :format(bytes / 1e6, bytes / ours.softmax / 1e9, 2 * 128 * 4 * N * N * 4 / 1e6, 2 * 128 * 4 * N * N * 4 / tcopy / 1e9))
  print("goals: sparsemax, entmax15, topk <= 2x softmax; hae <= 4x; each sparse normalizer >= 10x faster than PyTorch")
end)
