-- scripts/sweep.lua -- run every (dataset, normalizer, seed) of an experiment, each as its own
-- process writing one JSON record atomically; a rerun resumes (see lua/attnlab/sweep/init.lua).
--
--   bin/attnlab scripts/sweep.lua EXPERIMENT [--quick] [--workers N] [--threads T] [--out DIR]
--       [--only PATTERN] [--redo-changed] [--dry-run]
--   bin/attnlab scripts/sweep.lua EXPERIMENT --slurm [--submit [--wait]] [--cpus-per-task T]
--       [--max-parallel K] [--sbatch "--partition=gpu"]... [--out DIR] [--only PATTERN]
--   bin/attnlab scripts/sweep.lua --task DIR/manifest.txt INDEX     (what a Slurm task runs)
--
-- EXPERIMENT is a Lua file (experiments/normalizers/main.lua) or a name under experiments/
-- (normalizers/main). --out defaults to results/<name>[-quick] in the current folder.
-- --workers defaults to the core count, --threads to cores / workers (at most
-- ATTNLAB_NUM_THREADS when it is set). --only keeps the runs whose record name
-- (<dataset>__<normalizer>__seed<k>) matches one of the comma-separated Lua patterns (a
-- malformed pattern, or one that matches no run, is refused as such). A record file
-- that is not a valid record (lua/attnlab/report/record.lua) is no finished run: one line says
-- so, and the run runs again. One sweep at a time per --out folder: a second is refused, naming
-- the first one's pid (DIR/.state/sweep.lock; a killed sweep's lock does not count).
-- Exit status: 0 when every run has a record, 1 when some run failed, 2 on a usage error.
local al = require "attnlab"
local cli = al.cli

local SPEC = {
  name = "sweep.lua",
  usage = "bin/attnlab scripts/sweep.lua EXPERIMENT [--quick] [--workers N] [--threads T] [--out DIR] " ..
          "[--only PATTERN] [--redo-changed] [--dry-run] [--slurm [--submit [--wait]] ...]\n" ..
          "       bin/attnlab scripts/sweep.lua --task MANIFEST INDEX",
  about = "Run every (dataset, normalizer, seed) of an experiment, each as its own process writing one JSON\n" ..
          "record atomically; a rerun resumes. Exit status: 0 every run has a record, 1 some run failed,\n" ..
          "2 usage error, 3 (with --no-wait) runs of an earlier, killed sweep are still going, no record yet.\n" ..
          "A rerun after a killed sweep waits for that sweep's runs that are still going, then keeps their\n" ..
          "records (or retries them); an unreadable checkpoint is set aside and its run starts over, and one\n" ..
          "made under another config is refused like a changed record. A second sweep on the same --out\n" ..
          "folder is refused while the first runs.",
  positional = { { "EXPERIMENT", "a Lua file (experiments/normalizers/main.lua) or a name under experiments/" } },
  positional_required = 1,
  options = {
    { "quick", nil, "apply the experiment's quick preset (a smoke run)" },
    { "workers", "N", "runs at a time (default: the core count)", type = "posint" },
    { "threads", "T", "threads per run (default: cores / workers, at most ATTNLAB_NUM_THREADS if set)", type = "posint" },
    { "out", "DIR", "results folder (default results/<name>[-quick])" },
    { "only", "PATTERN", "only the runs whose record name (<dataset>__<normalizer>__seed<k>) matches (several Lua patterns: comma-separated, any matches; each must match some run)" },
    { "redo-changed", nil, "rerun finished records (and set aside checkpoints) whose config differs from the experiment" },
    { "dry-run", nil, "list what would run (with --slurm: what the manifest would list); writes nothing" },
    { "no-wait", nil, "do not wait for runs still going from an earlier, killed sweep: exit 3 instead (they keep their worker slots while they run)" },
    { "slurm", nil, "write a Slurm job array (DIR/sweep.sbatch) instead of running here" },
    { "submit", nil, "with --slurm: sbatch it" },
    { "wait", nil, "with --submit: wait for the array to finish" },
    { "cpus-per-task", "T", "with --slurm: threads per task", type = "posint" },
    { "max-parallel", "K", "with --slurm: at most K tasks at once", type = "posint" },
    { "sbatch", "OPTION", "with --slurm: an extra sbatch option (repeatable)", ["repeat"] = true, raw = true },
  },
  examples = { "bin/attnlab scripts/sweep.lua normalizers/demo --quick --dry-run",
               "bin/attnlab scripts/sweep.lua experiments/normalizers/main.lua --workers 2 --threads 1" },
}

local function usage(msg) cli.usage_error(SPEC, msg) end

local function main(argv)
  if argv[1] == "--task" then
    local index = math.tointeger(tonumber(argv[3] or ""))
    if not argv[2] or not index or index < 1 or argv[4] then usage("--task needs MANIFEST and a positive integer INDEX") end
    local st = al.sweep.task(argv[2], index)
    return st == "error" and 1 or 0
  end
  local opts, rest = cli.parse(SPEC, argv)
  local exp_path = rest[1]
  local sbatch = opts.sbatch or {}
  opts.sbatch = nil
  if not exp_path then usage("no EXPERIMENT given") end
  if (opts.submit or opts.wait) and not opts.slurm then usage("--submit and --wait go with --slurm") end
  if opts.wait and not opts.submit then usage("--wait goes with --submit (it waits for the submitted array)") end
  if opts.submit and opts.dry_run then usage("--dry-run writes no job array for --submit to submit") end
  for _, k in ipairs({ "cpus_per_task", "max_parallel" }) do
    if opts[k] and not opts.slurm then usage(("--%s goes with --slurm"):format(k:gsub("_", "-"))) end
  end
  if #sbatch > 0 and not opts.slurm then usage("--sbatch goes with --slurm") end
  -- the local sweep's own options would be ignored by a job array: refused, naming what to use
  local LOCAL_ONLY = { workers = "--max-parallel K limits the tasks at once", threads = "--cpus-per-task T sets each task's threads",
                       no_wait = "the array's tasks are Slurm's to wait for" }
  for _, k in ipairs({ "workers", "threads", "no_wait" }) do
    if opts[k] and opts.slurm then usage(("--%s does not go with --slurm (%s)"):format(k:gsub("_", "-"), LOCAL_ONLY[k])) end
  end
  opts.sbatch = sbatch

  local exp = al.sweep.resolve(al.sweep.load(exp_path), { quick = opts.quick })
  -- the runs execute scripts/train.lua and a Slurm task this script (both thin entries to the
  -- library): the command lines stay the ones earlier sweeps wrote, which reruns compare
  opts.entry = al.sweep.root() .. "/scripts/train.lua"
  opts.task_entry = al.sweep.root() .. "/scripts/sweep.lua"
  -- an empty --out would put the records into the current folder
  if opts.out == "" then usage("--out needs a folder path, got ''") end
  if opts.out then
    local f = io.open(opts.out .. "/.", "rb")   -- opens only a folder
    if f then f:close() elseif os.rename(opts.out, opts.out) then usage(("--out %s exists and is not a folder"):format(opts.out)) end
  end

  local out_given = opts.out ~= nil
  opts.out = opts.out or ("results/" .. al.sweep.sanitize(exp.name) .. (opts.quick and "-quick" or ""))
  -- a folder mkdir cannot make (a path under a file) was found by the real run only, after a dry
  -- run had listed its runs as invalid records: refused up front, for either
  if not require("attnlab.util").can_create_dir(opts.out) then
    usage((out_given and "--out %s: cannot create the folder" or "cannot create the results folder %s (give --out DIR)"):format(opts.out))
  end
  -- a malformed --only pattern is a usage error; Lua finds it only while matching, so it is
  -- matched here against the experiment's record names as the sweep will
  if opts.only then
    local okr, why = pcall(al.sweep.runs, exp, { out = opts.out, only = opts.only })
    -- (a pattern that matches no run, or none at all, is a usage error too: exit 2)
    if not okr and tostring(why):find("^sweep: %-%-only ") then usage((tostring(why):gsub("^sweep: ", ""))) end
  end

  if opts.slurm then
    -- write_slurm refuses options it does not read: only its own are passed
    local slurm_opts = {}
    for _, k in ipairs(al.sweep.SLURM_OPTIONS) do slurm_opts[k] = opts[k] end
    local res = al.sweep.write_slurm(exp, slurm_opts)
    for _, note in ipairs(res.notes) do print(note) end
    if res.dry_run then
      print(("sweep %s (dry run, nothing written): %d of %d runs pending; the manifest %s would list:"):format(exp.name,
        res.n, res.total, res.manifest))
      for _, l in ipairs(res.commands) do print("  " .. l) end
      return 0
    end
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

  -- sweep.run refuses options it does not read: only its own are passed (quick, sbatch and
  -- task_entry were used above, for resolving the experiment and for Slurm)
  local run_opts = {}
  for _, k in ipairs(al.sweep.RUN_OPTIONS) do run_opts[k] = opts[k] end
  local summary = al.sweep.run(exp, run_opts)
  if summary.failed > 0 then
    print(("%d run(s) failed; their error records are in %s (a rerun retries them):"):format(summary.failed, summary.out))
    for _, f in ipairs(summary.failures) do print(("  %s: %s"):format(f.name, f.error)) end
    return 1
  end
  if #summary.orphaned > 0 and not opts.dry_run then
    print(("%d run(s) of an earlier sweep are still going and have no record yet: %s. Rerun this command " ..
      "(without --no-wait) to wait for them."):format(#summary.orphaned, table.concat(summary.orphaned, ", ")))
    return 3
  end
  return 0
end

local ok, rc = pcall(main, arg)
if not ok then cli.die(SPEC, rc, tostring(rc):match("interrupted") and 130 or 1) end
os.exit(rc)
