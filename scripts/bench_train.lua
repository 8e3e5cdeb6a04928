-- scripts/bench_train.lua -- training and inference throughput (images/s) of the
-- compact classifier for every normalizer, at 1 and 2 threads, against the PyTorch
-- reference (../shared/anchors/torch_ref.py) given the same BLAS kernels, same run.
--
--   bin/attnlab scripts/bench_train.lua [--patch 8] [--threads 1,2] [--names softmax,hae] [--no-torch]
--                                       [--rounds 9]
-- CIFAR-10 shapes (3x32x32), batch 128 for training (AdamW step included), batch 256
-- for inference. patch 8 -> N = 17 tokens (the study's preset), patch 4 -> N = 65.
-- Ours: the normalizers are timed interleaved (one step of each per round, median over
-- rounds). PyTorch: lua/attnlab/torch/torch_ref_bench.py, which picks PyTorch's fastest
-- OpenMP/OpenBLAS configuration at 2 threads (printed with the table).
-- The last four columns divide by CPU seconds (all threads) instead of wall seconds: on a
-- shared machine that is the load-robust figure at 1 thread; at 2 threads it measures the
-- work done, not the speed.
local al = require "attnlab"
local bench = al.bench

local SPEC = {
  name = "bench_train.lua",
  usage = "bin/attnlab scripts/bench_train.lua [--patch 8] [--threads 1,2] [--names softmax,hae] [--no-torch] [--rounds 9]",
  about = "Training and inference throughput (images/s) of the compact classifier for every normalizer,\n" ..
          "at each thread count, against the PyTorch reference (CIFAR-10 shapes).",
  options = {
    { "patch", "P", "patch size: 32 must be a multiple (default 8: 17 tokens)", type = "posint", default = 8 },
    { "threads", "N,N", "thread counts (default 1,2)", type = "ints", default = { 1, 2 } },
    { "names", "A,B,...", "normalizers (default all seven; softmax, the ratios' baseline, is always timed)", type = "names",
      default = { "softmax", "sparsemax", "entmax15", "hae", "topk:0.125", "topk:0.25", "topk:0.5" } },
    { "no-torch", nil, "skip the PyTorch reference" },
    { "rounds", "R", "timed rounds (default 9)", type = "posint", default = 9 },
  },
  examples = { "bin/attnlab scripts/bench_train.lua --threads 1 --names softmax,entmax15 --rounds 3 --no-torch" },
}
local o = al.cli.parse(SPEC, arg)
-- (any error from here on is one line naming the script, not a traceback: an allocation the
-- machine cannot make at a large --tokens, say; ATTNLAB_TRACEBACK=1 shows the traceback)
al.cli.protect({ name = "bench_train.lua" }, function()
  local patch, thread_list, use_torch, rounds, NAMES = o.patch, o.threads, not o.no_torch, o.rounds, o.names
  if 32 % patch ~= 0 then al.cli.usage_error(SPEC, ("--patch %d does not divide the 32x32 image"):format(patch)) end
  local has_softmax = false
  for _, n in ipairs(NAMES) do
    local ok, e = pcall(al.nn.Normalizer.parse, n)
    if not ok then al.cli.usage_error(SPEC, "--names: " .. al.cli.clean(e)) end
    has_softmax = has_softmax or n == "softmax"
  end
  -- Every ratio in the table is against softmax timed in the same rounds, so it is always timed.
  if not has_softmax then table.insert(NAMES, 1, "softmax") end
  local N = (32 // patch) ^ 2 + 1
  bench.header(("compact classifier throughput, CIFAR-10 shapes, patch %d (N = %d tokens)"):format(patch, N))

  local function torch_name(n) return (n:gsub(":", "")) end

  -- Our models, timed interleaved: every round runs one training step (and one inference
  -- batch) of each normalizer in turn, and the median over rounds is reported, so a burst of
  -- load from other processes hits all normalizers alike instead of one row of the table.
  local function ours_all(threads)
    al.set_num_threads(threads)
    local x, y = al.randn({ 128, 3, 32, 32 }), al.randint(1, 10, { 128 })
    local xi = al.randn({ 256, 3, 32, 32 })
    local runs = {}
    for i, name in ipairs(NAMES) do
      local m = al.nn.ViT { image_size = 32, patch_size = patch, channels = 3, num_classes = 10, normalizer = name, seed = 0 }
      local mi = al.nn.ViT { image_size = 32, patch_size = patch, channels = 3, num_classes = 10, normalizer = name, seed = 0 }
      mi:eval()
      local opt = al.optim.AdamW(m:parameters(), { lr = 1e-3 })
      runs[i] = {
        train = function()
          local l = al.cross_entropy(m(x), y)
          opt:zero_grad(); l:backward(); opt:step()
        end,
        infer = function() al.no_grad(function() mi(xi) end) end,
        tt = {}, ti = {}, ct = {},
      }
    end
    for _, r in ipairs(runs) do for _ = 1, 2 do r.train(); r.infer() end end   -- warm-up
    for _ = 1, rounds do
      for _, r in ipairs(runs) do
        local t0, c0 = al.clock(), os.clock(); r.train(); r.tt[#r.tt + 1] = al.clock() - t0; r.ct[#r.ct + 1] = os.clock() - c0
        t0 = al.clock(); r.infer(); r.ti[#r.ti + 1] = al.clock() - t0
      end
    end
    local function median(t) table.sort(t) return t[(#t + 1) // 2] end
    local tr, inf, cpu = {}, {}, {}
    for i, name in ipairs(NAMES) do
      tr[name], inf[name], cpu[name] = 128 / median(runs[i].tt), 256 / median(runs[i].ti), 128 / median(runs[i].ct)
    end
    return tr, inf, cpu
  end

  local function loadavg()
    local f = io.open("/proc/loadavg")
    local s = f and f:read("l") or "?"
    if f then f:close() end
    return s:match("^(%S+ %S+ %S+)") or s
  end

  -- The issue's goals, checked on this run's own figures: one line per thread count.
  -- Against PyTorch the goal uses its best softmax training figure of the run: the timed one or,
  -- at 2 threads, the configuration probe's for the setting it chose, if that was higher (the
  -- two can differ by 2x on a shared VM, and a goal must not be met on PyTorch's bad minute).
  local TORCH_GOAL, SPARSE_GOAL = { 3, 2.5 }, 0.80
  local function goal_check(threads, tr, torch_softmax, torch_probe)
    local parts = {}
    local want = TORCH_GOAL[threads]
    if tr.softmax and torch_softmax and want then
      local ref, note = torch_softmax, ""
      if torch_probe and torch_probe > torch_softmax then
        ref, note = torch_probe, ("against its probe's %.0f img/s, above the timed %.0f; "):format(torch_probe, torch_softmax)
      end
      local r = tr.softmax / ref
      parts[#parts + 1] = ("softmax %.2fx PyTorch (%sgoal %gx: %s)"):format(r, note, want, r >= want and "met" or "MISSED")
    elseif tr.softmax and want then
      parts[#parts + 1] = "softmax vs PyTorch not measured"
    end
    local slowest, ratio
    for _, n in ipairs(NAMES) do
      if n ~= "softmax" and tr.softmax and (ratio == nil or tr[n] / tr.softmax < ratio) then slowest, ratio = n, tr[n] / tr.softmax end
    end
    if slowest then
      parts[#parts + 1] = ("slowest sparse normalizer %s %.3fx softmax (goal >= %.2f: %s)"):format(slowest, ratio, SPARSE_GOAL,
        ratio >= SPARSE_GOAL and "met" or "MISSED")
    end
    if #parts == 0 then parts[1] = "no goal applies at this thread count" end
    return ("  %d thread(s), N = %d: %s"):format(threads, N, table.concat(parts, "; "))
  end

  local verdicts = {}
  for _, threads in ipairs(thread_list) do
    local rows = {}
    local load0 = loadavg()
    local tr, inf, cpu = ours_all(threads)
    local pt, pi, pc, torch_cfg, torch_probe = {}, {}, {}, nil, nil
    if use_torch then
      local names = {}
      for _, n in ipairs(NAMES) do names[#names + 1] = torch_name(n) end
      local r, err = bench.torch("train", ("--batch 128 --patch %d --image 3,32,32 --names %s"):format(patch, table.concat(names, ",")), threads)
      if r then
        for _, e in ipairs(r) do
          if e.name then pt[e.name], pc[e.name] = e.img_per_s, e.cpu_img_per_s
          elseif e.config then
            torch_cfg = "train: " .. e.config
            if (tonumber(e.probe_best) or 0) > 0 then torch_probe = e.probe_best end
          end
        end
      else print("(no PyTorch: " .. err .. ")") end
      r = bench.torch("infer", ("--batch 256 --patch %d --image 3,32,32 --names %s"):format(patch, table.concat(names, ",")), threads)
      if r then for _, e in ipairs(r) do if e.name then pi[e.name] = e.img_per_s end end end
    end
    for _, n in ipairs(NAMES) do
      local p, q, pcu = pt[torch_name(n)], pi[torch_name(n)], pc[torch_name(n)]
      rows[#rows + 1] = { n, ("%.0f"):format(tr[n]), ("%.2fx"):format(tr[n] / tr.softmax), p and ("%.0f"):format(p) or "-",
        p and ("%.2fx"):format(tr[n] / p) or "-", ("%.0f"):format(inf[n]), q and ("%.0f"):format(q) or "-",
        q and ("%.2fx"):format(inf[n] / q) or "-",
        ("%.0f"):format(cpu[n]), ("%.2fx"):format(cpu[n] / cpu.softmax), pcu and ("%.0f"):format(pcu) or "-",
        pcu and ("%.2fx"):format(cpu[n] / pcu) or "-" }
    end
    print(("\n%d thread(s): load average before %s, after %s (1, 5, 15 min)%s"):format(threads, load0, loadavg(),
      torch_cfg and ("; PyTorch " .. torch_cfg) or ""))
    bench.print_table({ "normalizer", "train img/s", "vs our softmax", "PyTorch train", "ours/PyTorch", "infer img/s",
      "PyTorch infer", "ours/PyTorch", "train img/CPU-s", "vs softmax", "PyTorch img/CPU-s", "ours/PyTorch" }, rows)
    verdicts[#verdicts + 1] = goal_check(threads, tr, pt.softmax, torch_probe)
  end
  print("\ngoals (issue 23): softmax training >= " .. TORCH_GOAL[1] .. "x PyTorch at 1 thread and >= " .. TORCH_GOAL[2] ..
        "x at 2 threads; every sparse normalizer's step within 1.25x of softmax's (img/s ratio >= " .. SPARSE_GOAL .. ")")
  for _, v in ipairs(verdicts) do print(v) end
end)
