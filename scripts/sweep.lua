-- scripts/sweep.lua -- run every (dataset, normalizer, seed) of an experiment, each as its own
-- process writing one JSON record atomically; a rerun resumes (see lua/attnlab/sweep.lua).
--
--   bin/attnlab scripts/sweep.lua EXPERIMENT [--quick] [--workers N] [--threads T] [--out DIR]
--       [--only PATTERN] [--redo-changed] [--dry-run]
--   bin/attnlab scripts/sweep.lua EXPERIMENT --slurm [--submit [--wait]] [--cpus-per-task T]
--       [--max-parallel K] [--sbatch "--partition=gpu"]... [--out DIR] [--only PATTERN]
--   bin/attnlab scripts/sweep.lua --task DIR/manifest.txt INDEX     (what a Slurm task runs)
--
-- EXPERIMENT is a Lua file (experiments/normalizers/main.lua) or a name under experiments/
-- (normalizers/main). --out defaults to results/<name>[-quick] in the current folder.
-- --workers defaults to the core count, --threads to cores / workers. --only keeps the runs
-- whose record name (<dataset>__<normalizer>__seed<k>) matches the Lua pattern.
-- Exit status: 0 when every run has a record, 1 when some run failed, 2 on a usage error.
local al = require "attnlab"

local function usage(msg)
  io.stderr:write("sweep.lua: ", msg, "\n",
    "usage: bin/attnlab scripts/sweep.lua EXPERIMENT [--quick] [--workers N] [--threads T] [--out DIR]\n",
    "         [--only PATTERN] [--redo-changed] [--dry-run] [--slurm [--submit [--wait]] [--cpus-per-task T]\n",
    "         [--max-parallel K] [--sbatch OPTION]...]\n",
    "       bin/attnlab scripts/sweep.lua --task MANIFEST INDEX\n")
  os.exit(2)
end

local function main(argv)
  if argv[1] == "--task" then
    local index = math.tointeger(tonumber(argv[3] or ""))
    if not argv[2] or not index then usage("--task needs MANIFEST and an integer INDEX") end
    local st = al.sweep.task(argv[2], index)
    return st == "error" and 1 or 0
  end
  local opts, exp_path, sbatch = {}, nil, {}
  local flags = { ["--quick"] = "quick", ["--slurm"] = "slurm", ["--submit"] = "submit", ["--wait"] = "wait",
                  ["--redo-changed"] = "redo_changed", ["--dry-run"] = "dry_run" }
  local valued = { ["--workers"] = "workers", ["--threads"] = "threads", ["--out"] = "out", ["--only"] = "only",
                   ["--cpus-per-task"] = "cpus_per_task", ["--max-parallel"] = "max_parallel" }
  local ints = { workers = true, threads = true, cpus_per_task = true, max_parallel = true }
  local i = 1
  while i <= #argv do
    local a = argv[i]
    local k, v = a:match("^(%-%-[%w%-]+)=(.*)$")
    if k then a = k end
    if flags[a] then
      opts[flags[a]] = true
      i = i + 1
    elseif valued[a] or a == "--sbatch" then
      if v == nil then v = argv[i + 1]; i = i + 1 end
      if v == nil then usage(a .. " needs a value") end
      if a == "--sbatch" then
        sbatch[#sbatch + 1] = v
      else
        local key = valued[a]
        if ints[key] then
          local n = math.tointeger(tonumber(v))
          if not n or n < 1 then usage(a .. " needs a positive integer, got '" .. v .. "'") end
          v = n
        end
        opts[key] = v
      end
      i = i + 1
    elseif a:sub(1, 2) == "--" then
      usage("unknown option " .. a)
    elseif exp_path == nil then
      exp_path = a
      i = i + 1
    else
      usage("unexpected argument '" .. a .. "'")
    end
  end
  if not exp_path then usage("no EXPERIMENT given") end
  if (opts.submit or opts.wait) and not opts.slurm then usage("--submit and --wait go with --slurm") end
  opts.sbatch = sbatch

  local exp = al.sweep.resolve(al.sweep.load(exp_path), { quick = opts.quick })
  opts.out = opts.out or ("results/" .. al.sweep.sanitize(exp.name) .. (opts.quick and "-quick" or ""))

  if opts.slurm then
    local res = al.sweep.write_slurm(exp, opts)
    if res.n == 0 then
      print(("sweep %s: all %d runs have records in %s; nothing to submit"):format(exp.name, res.total, al.sweep.abspath(opts.out)))
      return 0
    end
    print(("sweep %s: %d of %d runs pending\n  manifest %s\n  job array %s"):format(exp.name, res.n, res.total,
      res.manifest, res.sbatch))
    if opts.submit then
      local id = al.sweep.submit(res.sbatch, { wait = opts.wait })
      print(("submitted job array %s (%d tasks)%s"):format(id, res.n, opts.wait and "; finished" or
        ("; watch it with: squeue -j " .. id)))
    else
      print("submit it with: sbatch " .. res.sbatch)
    end
    return 0
  end

  local summary = al.sweep.run(exp, opts)
  if summary.failed > 0 then
    print(("%d run(s) failed; their error records are in %s (a rerun retries them):"):format(summary.failed, summary.out))
    for _, f in ipairs(summary.failures) do print(("  %s: %s"):format(f.name, f.error)) end
    return 1
  end
  return 0
end

local ok, rc = pcall(main, arg)
if not ok then
  io.stderr:write("sweep.lua: ", tostring(rc), "\n")
  os.exit(tostring(rc):match("interrupted") and 130 or 1)
end
os.exit(rc)
