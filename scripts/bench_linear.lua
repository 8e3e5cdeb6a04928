-- scripts/bench_linear.lua -- the linear layer's forward+backward against raw sgemm.
--
--   bin/attnlab scripts/bench_linear.lua [--threads N] [--reps R] [--gemm] [--crossover]
-- At x (8320,64), W (256,64) (a compact-classifier MLP up-projection over a batch of
-- 128 x 65 tokens), a Linear forward+backward runs three GEMMs: y = x W^T (NT),
-- gx = gy W (NN), gW = gy^T x (TN). The baseline is raw cblas_sgemm for those three
-- products on the same machine in the same run; the ratio is sgemm time / our time
-- (1.0 = no overhead at all). Medians of repeated timings.
--
-- --gemm: instead, GFLOP/s of attnlab's own sgemm and of OpenBLAS side by side, same run,
-- on the compact classifier's products at N = 17 (batch 128 x 17 tokens = 2176 rows, dim 64,
-- MLP 256): the forward's x W^T (NT), the backward's gy W (NN) and gy^T x (TN). Best of R
-- timings each (the machine is shared: the best is the least disturbed), interleaved.
-- --crossover: the same comparison on larger shapes, where al_sgemm hands over to OpenBLAS.
local al = require "attnlab"
local SPEC = {
  name = "bench_linear.lua",
  usage = "bin/attnlab scripts/bench_linear.lua [--threads N] [--reps R] [--gemm | --crossover]",
  about = "The linear layer's forward+backward against raw sgemm at x (8320,64), W (256,64).",
  options = {
    { "threads", "N", "threads (default: all cores)", type = "posint" },
    { "reps", "R", "timed repetitions (default 30)", type = "posint", default = 30 },
    { "gemm", nil, "GFLOP/s of attnlab's sgemm and OpenBLAS side by side on the model's products" },
    { "crossover", nil, "the same on larger shapes, where al_sgemm hands over to OpenBLAS" },
  },
  examples = { "bin/attnlab scripts/bench_linear.lua --threads 1 --reps 10",
               "bin/attnlab scripts/bench_linear.lua --gemm --threads 1" },
}
local args = al.cli.parse(SPEC, arg)
-- (any error from here on is one line naming the script, not a traceback: an allocation the
-- machine cannot make at a large --tokens, say; ATTNLAB_TRACEBACK=1 shows the traceback)
al.cli.protect({ name = "bench_linear.lua" }, function()
  -- the two are different shape sets: given both, one would be dropped without a word
  if args.gemm and args.crossover then al.cli.usage_error(SPEC, "--gemm and --crossover exclude each other: give one") end
  if args.threads then al.set_num_threads(args.threads) end

  if args.gemm or args.crossover then
    local cfg = al.config()
    local cpu = io.popen("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"):read("l") or "?"
    print(("machine: %s; OpenBLAS core %s (%s; OPENBLAS_CORETYPE=%s); attnlab kernel %s; threads %d")
      :format(cpu:gsub("^%s+", ""), cfg.blas, cfg.blas_coretype_source, os.getenv("OPENBLAS_CORETYPE") or "unset",
              cfg.gemm, al.get_num_threads()))
    print(("al_sgemm uses attnlab's kernel when %s"):format(cfg.gemm_rule))
    local shapes = args.gemm and {
      { 2176, 192, 64, "NT", "qkv forward" }, { 2176, 64, 64, "NT", "attention out forward" },
      { 2176, 256, 64, "NT", "MLP up forward" }, { 2176, 64, 256, "NT", "MLP down forward" },
      { 2048, 64, 192, "NT", "patch embedding forward" },
      { 2176, 64, 192, "NN", "qkv backward gx" }, { 2176, 64, 256, "NN", "MLP up backward gx" },
      { 2176, 256, 64, "NN", "MLP down backward gx" },
      { 192, 64, 2176, "TN", "qkv backward gW" }, { 64, 192, 2176, "TN", "(issue 23's shape)" },
      { 256, 64, 2176, "TN", "MLP up backward gW" }, { 64, 256, 2176, "TN", "MLP down backward gW" },
    } or {
      { 512, 512, 512, "NN" }, { 1024, 1024, 1024, "NN" }, { 1024, 1024, 1024, "NT" }, { 1024, 1024, 1024, "TN" },
      { 8192, 256, 2048, "NN" }, { 8192, 512, 512, "NN" }, { 8192, 768, 768, "NN" }, { 8192, 768, 768, "NT" },
      { 8192, 1024, 256, "NN" }, { 8192, 1024, 256, "NT" }, { 8192, 1024, 1024, "NN" }, { 8192, 2048, 256, "NN" },
      { 8192, 768, 3072, "NN" }, { 768, 768, 8192, "TN" }, { 2048, 2048, 2048, "NN" },
    }
    local reps = args.reps or 30
    print(("| shape M x N x K | op | attnlab GFLOP/s | OpenBLAS GFLOP/s | ratio | al_sgemm picks |%s"):format(args.gemm and " product |" or ""))
    print(("|---|---|---|---|---|---|%s"):format(args.gemm and "---|" or ""))
    for _, s in ipairs(shapes) do
      local M, N, K, ta, tb = s[1], s[2], s[3], s[4]:sub(1, 1) == "T", s[4]:sub(2, 2) == "T"
      local best = { attnlab = math.huge, openblas = math.huge }
      for _ = 1, reps do
        for _, p in ipairs({ "attnlab", "openblas" }) do
          best[p] = math.min(best[p], (al.bench_sgemm(M, N, K, ta, tb, 1, p)))
        end
      end
      local f = 2 * M * N * K / 1e9
      local picks = select(2, al.bench_sgemm(M, N, K, ta, tb, 1)) == "attnlab" and "attnlab" or "OpenBLAS"
      print(("| %d x %d x %d | %s | %.0f | %.0f | %.2f | %s |%s"):format(M, N, K, s[4], f / best.attnlab, f / best.openblas,
        best.openblas / best.attnlab, picks, s[5] and (" " .. s[5] .. " |") or ""))
    end
    os.exit(0)
  end

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
end)
