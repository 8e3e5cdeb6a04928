-- scripts/bench_mixers.lua -- token-mixer layers at DeiT-Tiny width (dim 192, batch 8):
-- softmax attention (3 heads), BiMamba and BiLSTM, forward and forward+backward ms
-- against token count, where the curves cross, and the PyTorch reference
-- (../shared/anchors/torch_ref.py: explicit attention, torch.nn.LSTM, sequential-loop
-- Vision-Mamba-style BiMamba) in the same run.
--
--   bin/attnlab scripts/bench_mixers.lua [--threads 2] [--tokens 64,196,576,1024,2304]
--                                        [--heads 1] [--no-torch] [--torch-max 576]
-- PyTorch's sequential-loop BiMamba takes seconds per call at large N: --torch-max caps
-- the token counts it is timed at (default 1024).
local al = require "attnlab"
local bench = al.bench

local D, B = 192, 8
-- BiLSTM splits the width D among its heads and BiMamba its inner width 2D: a head count that
-- does not divide D is a usage error here, not an assertion from inside the model
local function heads_of(s)
  local n = math.tointeger(tonumber(s))
  if n and n >= 1 and D % n == 0 then return n end
  return nil, ("a divisor of the width %d (1, 2, 3, 4, 6, 8, 12, ...)"):format(D)
end

local o = al.cli.parse({
  name = "bench_mixers.lua",
  usage = "bin/attnlab scripts/bench_mixers.lua [--threads 2] [--tokens 64,196,576,1024,2304] [--heads 1] [--no-torch] [--torch-max 1024]",
  about = "Token mixers at DeiT-Tiny width (dim 192, batch 8): attention, BiMamba, BiLSTM, forward and\n" ..
          "forward+backward ms against token count, and the PyTorch reference in the same run.",
  options = {
    { "threads", "N", "threads (default 2)", type = "posint", default = 2 },
    { "tokens", "N,N,...", "token counts (default 64,196,576,1024,2304)", type = "ints", default = { 64, 196, 576, 1024, 2304 } },
    { "heads", "H", "BiMamba/BiLSTM heads, a divisor of 192 (default 1)", type = heads_of, default = 1 },
    { "torch-max", "N", "largest token count PyTorch's BiMamba is timed at (default 1024)", type = "posint", default = 1024 },
    { "no-torch", nil, "skip the PyTorch reference" },
  },
  examples = { "bin/attnlab scripts/bench_mixers.lua --tokens 64,196 --no-torch" },
}, arg)
-- (any error from here on is one line naming the script, not a traceback: an allocation the
-- machine cannot make at a large --tokens, say; ATTNLAB_TRACEBACK=1 shows the traceback)
al.cli.protect({ name = "bench_mixers.lua" }, function()
  local threads, tokens, use_torch, torch_max, heads = o.threads, o.tokens, not o.no_torch, o.torch_max, o.heads
  al.set_num_threads(threads)
  bench.header("token mixers, dim 192, batch 8")

  local mixers = {
    attention = al.nn.MultiHeadAttention { dim = D, heads = 3 },
    bimamba = al.nn.BiMamba { dim = D, heads = heads },
    bilstm = al.nn.BiLSTM { dim = D, heads = heads },
  }
  local ORDER = { "attention", "bimamba", "bilstm" }
  print(("parameters: attention %d, BiMamba %d, BiLSTM %d (heads %d)"):format(mixers.attention:num_parameters(),
    mixers.bimamba:num_parameters(), mixers.bilstm:num_parameters(), heads))

  local res = {}
  for _, n in ipairs(tokens) do
    al.manual_seed(0)
    local x = al.randn({ B, n, D }, { requires_grad = true })
    res[n] = {}
    for _, name in ipairs(ORDER) do
      local m = mixers[name]
      local reps = n >= 1024 and 3 or 5
      local fwd = bench.time(function() al.no_grad(function() m(x) end) end, { repeats = reps, min_time = 0.1 })
      local fb = bench.time(function()
        al.sum(m(x)):backward()
        x.grad = nil
        m:zero_grad()
      end, { repeats = reps, min_time = 0.1 })
      res[n][name] = { fwd = fwd, fb = fb }
    end
    if use_torch then
      local names = n <= torch_max and "attention,bilstm,bimamba" or "attention,bilstm"
      local r, err = bench.torch("mixers", ("--batch %d --tokens %d --names %s"):format(B, n, names), threads)
      if r then
        for _, e in ipairs(r) do if e.name then res[n]["torch_" .. e.name] = { fwd = e.fwd_ms / 1e3, fb = e.fwdbwd_ms / 1e3 } end end
      else print("(no PyTorch: " .. err .. ")"); use_torch = false end
    end
    io.stdout:write(("N = %d done\n"):format(n)); io.stdout:flush()
  end

  local rows = {}
  local function ms(v) return v and ("%.1f"):format(v * 1e3) or "-" end
  local function ratio(a, b) return (a and b) and ("%.1fx"):format(a / b) or "-" end
  for _, n in ipairs(tokens) do
    local r = res[n]
    rows[#rows + 1] = { tostring(n), ms(r.attention.fwd), ms(r.attention.fb), ms(r.bimamba.fwd), ms(r.bimamba.fb),
      ms(r.bilstm.fwd), ms(r.bilstm.fb),
      ratio(r.torch_bimamba and r.torch_bimamba.fb, r.bimamba.fb), ratio(r.torch_bilstm and r.torch_bilstm.fb, r.bilstm.fb),
      ratio(r.torch_attention and r.torch_attention.fb, r.attention.fb) }
  end
  bench.print_table({ "N", "attn fwd", "attn f+b", "BiMamba fwd", "BiMamba f+b", "BiLSTM fwd", "BiLSTM f+b",
    "PyTorch/ours BiMamba f+b", "PyTorch/ours BiLSTM f+b", "PyTorch/ours attn f+b" }, rows)

  -- where the curves cross: first N at which a mixer beats attention (log-linear interpolation)
  local function crossing(name, key)
    for k = 2, #tokens do
      local a0, a1 = res[tokens[k - 1]], res[tokens[k]]
      local d0 = a0[name][key] - a0.attention[key]
      local d1 = a1[name][key] - a1.attention[key]
      if d0 > 0 and d1 <= 0 then
        local f = d0 / (d0 - d1)
        return math.floor(math.exp(math.log(tokens[k - 1]) + f * (math.log(tokens[k]) - math.log(tokens[k - 1]))) + 0.5)
      end
    end
  end
  for _, name in ipairs({ "bimamba", "bilstm" }) do
    for _, key in ipairs({ "fwd", "fb" }) do
      local c = crossing(name, key)
      print(("%s vs attention (%s): %s"):format(name, key == "fb" and "fwd+bwd" or "fwd",
        c and ("curves cross at N ~ %d (%.0f px at patch 16)"):format(c, 16 * math.sqrt(c - 1)) or "no crossing in the measured range"))
    end
  end
  -- scaling exponent between the smallest and largest N: attention ~2, scans ~1
  local n0, n1 = tokens[1], tokens[#tokens]
  for _, name in ipairs(n0 ~= n1 and ORDER or {}) do   -- (one N: no exponent to fit)
    local e = math.log(res[n1][name].fb / res[n0][name].fb) / math.log(n1 / n0)
    print(("%s fwd+bwd time grows as N^%.2f between N = %d and %d"):format(name, e, n0, n1))
  end
  print("goals: each mixer >= 5x faster than the PyTorch reference (BiLSTM: at least match torch.nn.LSTM)")
end)
