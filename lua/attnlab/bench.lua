-- attnlab.bench -- timing helpers for the benchmark scripts: medians after warm-up,
-- and the PyTorch reference run in the same session for ratios.
local al = require "attnlab"

local bench = {}

-- Median seconds per call of fn over `repeats` timed repeats (after `warmup` calls),
-- each repeat running enough calls to last at least min_time seconds. A full collection
-- first: the garbage of whatever ran before (another model's phase, with a larger live set)
-- would otherwise be collected during fn's calls, and the collector's pacing after a phase
-- change (lua/bind/tensor.c, l_gc_pace) would be timed as fn's cost.
function bench.time(fn, opts)
  opts = opts or {}
  local warmup, repeats, min_time = opts.warmup or 2, opts.repeats or 7, opts.min_time or 0.2
  collectgarbage()
  for _ = 1, warmup do fn() end
  local t0 = al.clock(); fn(); local t1 = al.clock() - t0
  local inner = math.max(1, math.min(50, math.floor(min_time / math.max(t1, 1e-6))))
  local times = {}
  for r = 1, repeats do
    t0 = al.clock()
    for _ = 1, inner do fn() end
    times[r] = (al.clock() - t0) / inner
  end
  table.sort(times)
  return times[(#times + 1) // 2]
end

local root = al.root

-- Run torch/torch_ref_bench.py (beside this module) PART with the same BLAS kernels and threads as
-- attnlab; returns a list of decoded JSON lines, or nil and a reason.
function bench.torch(part, args, threads)
  local cfg = al.config()
  local core = cfg.blas_backend == "openblas" and cfg.blas or ""
  local env = ("OMP_NUM_THREADS=%d OPENBLAS_NUM_THREADS=%d"):format(threads, threads)
  if core ~= "" and core ~= "unknown" then env = env .. " OPENBLAS_CORETYPE=" .. core end
  local anchors = os.getenv("ATTNLAB_ANCHORS") or (root() .. "/../shared/anchors")
  local f = io.open(anchors .. "/torch_ref.py")
  if not f then return nil, "no PyTorch reference at " .. anchors .. "/torch_ref.py (set ATTNLAB_ANCHORS)" end
  f:close()
  -- (quoted for sh: a checkout or ATTNLAB_ANCHORS folder with a quote in its name broke the command)
  local q = require("attnlab.util").shquote
  local cmd = ("%s ATTNLAB_ANCHORS=%s /usr/bin/python3 %s %s --threads %d %s 2>&1")
    :format(env, q(anchors), q(al.torch_program("torch_ref_bench.py")), part, threads, args or "")
  local p = io.popen(cmd)
  local out, lines = {}, {}
  for line in p:lines() do
    lines[#lines + 1] = line
    if line:sub(1, 1) == "{" then out[#out + 1] = al.json.decode(line) end
  end
  p:close()
  if #out <= 1 then
    return nil, "PyTorch reference failed (apt-get install python3-torch): " .. (lines[#lines] or "no output")
  end
  return out
end

-- Print a table: header list and rows (lists of strings/numbers).
function bench.print_table(header, rows)
  local w = {}
  for i, h in ipairs(header) do w[i] = #h end
  for _, r in ipairs(rows) do for i, v in ipairs(r) do w[i] = math.max(w[i] or 0, #tostring(v)) end end
  local function line(r)
    local parts = {}
    for i, v in ipairs(r) do parts[i] = ("%" .. (i == 1 and "-" or "") .. w[i] .. "s"):format(tostring(v)) end
    return "| " .. table.concat(parts, " | ") .. " |"
  end
  print(line(header))
  local sep = {}
  for i = 1, #header do sep[i] = string.rep("-", w[i]) end
  print("|-" .. table.concat(sep, "-|-") .. "-|")
  for _, r in ipairs(rows) do print(line(r)) end
end

function bench.header(title)
  local cfg = al.config()
  local cpu = io.popen("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"):read("l") or "?"
  print(("# %s\nmachine: %s, %d cores; BLAS: %s (%s, %s); attnlab GEMM: %s; huge pages: %s; attnlab threads: %d; %s"):format(title,
    cpu:gsub("^%s+", ""), cfg.cores, cfg.blas, cfg.blas_backend, cfg.blas_coretype_source,
    (cfg.gemm or "-") .. ((cfg.gemm_rule or ""):find("ATTNLAB_SGEMM", 1, true) and " (" .. cfg.gemm_rule .. ")" or ""),
    (cfg.huge_pages or "-"):match("^%S+"), al.get_num_threads(),
    os.date("!%Y-%m-%d %H:%M UTC")))
end

return bench
