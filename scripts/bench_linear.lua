-- scripts/bench_linear.lua -- the linear layer's forward+backward against raw sgemm.
--
--   bin/attnlab scripts/bench_linear.lua [--threads N] [--reps R]
-- At x (8320,64), W (256,64) (a compact-classifier MLP up-projection over a batch of
-- 128 x 65 tokens), a Linear forward+backward runs three GEMMs: y = x W^T (NT),
-- gx = gy W (NN), gW = gy^T x (TN). The baseline is raw cblas_sgemm for those three
-- products on the same machine in the same run; the ratio is sgemm time / our time
-- (1.0 = no overhead at all). Medians of repeated timings.
local al = require "attnlab"
local args = al.cli.parse({
  name = "bench_linear.lua",
  usage = "bin/attnlab scripts/bench_linear.lua [--threads N] [--reps R]",
  about = "The linear layer's forward+backward against raw sgemm at x (8320,64), W (256,64).",
  options = {
    { "threads", "N", "threads (default: all cores)", type = "posint" },
    { "reps", "R", "timed repetitions (default 30)", type = "posint", default = 30 },
  },
  examples = { "bin/attnlab scripts/bench_linear.lua --threads 1 --reps 10" },
}, arg)
if args.threads then al.set_num_threads(args.threads) end

local function median(t) table.sort(t) return t[(#t + 1) // 2] end
local R, IN, OUT = 8320, 64, 256

local function time_sgemm()
  local s = {}
  for r = 1, args.reps do
    s[r] = al.bench_sgemm(R, OUT, IN, false, true, 1) + al.bench_sgemm(R, IN, OUT, false, false, 1)
      + al.bench_sgemm(OUT, IN, R, true, false, 1)
  end
  return median(s)
end

local function time_linear(bias)
  al.manual_seed(0)
  local x = al.randn({ R, IN }, { requires_grad = true })
  local w = al.randn({ OUT, IN }, { requires_grad = true })
  local b = bias and al.randn({ OUT }, { requires_grad = true }) or nil
  local g = al.randn({ R, OUT })
  local s = {}
  for r = 1, args.reps + 3 do
    x.grad, w.grad = nil, nil
    if b then b.grad = nil end
    local t0 = al.clock()
    local y = al.linear(x, w, b)
    y:backward(g)
    s[r] = al.clock() - t0
  end
  for _ = 1, 3 do table.remove(s, 1) end   -- warm-up
  return median(s)
end

local cfg = al.config()
print(("machine: %s; BLAS %s (%s); threads %d"):format(io.popen("uname -m"):read("l"), cfg.blas, cfg.blas_coretype_source, al.get_num_threads()))
local base = time_sgemm()
local flops = 3 * 2 * R * IN * OUT
print(("raw sgemm, 3 products:      %8.3f ms  (%.1f GFLOP/s)"):format(base * 1e3, flops / base / 1e9))
for _, bias in ipairs({ false, true }) do
  local t = time_linear(bias)
  print(("al.linear fwd+bwd%-11s %8.3f ms  ratio sgemm/ours = %.2f (goal >= 0.70)"):format(bias and " (+bias):" or ":", t * 1e3, base / t))
end
