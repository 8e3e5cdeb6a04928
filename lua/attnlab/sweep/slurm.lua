-- attnlab.sweep.slurm -- the Slurm path: a manifest and a job-array script, submitting it, and one array task.
-- Part of attnlab.sweep: sweep/init.lua installs these functions into its table, so callers
-- keep using al.sweep.<name>; H holds the helpers init.lua shares with its parts.
local al = require "attnlab"

return function(sweep, H)
  local append_commands, describe_result = H.append_commands, H.describe_result
  local mkdir_p, q, read_all, out_dir = H.mkdir_p, H.q, H.read_all, H.out_dir

  -- ---- Slurm ----------------------------------------------------------------------------------------
  -- Write DIR/manifest.txt (one command line per pending run; array task i runs line i) and
  -- DIR/sweep.sbatch (a job array over it). opts: out, cpus_per_task (threads per run, default
  -- 1), max_parallel (the %N throttle of --array), only, sbatch = { "--partition=x", ... },
  -- entry (each run's program, default sweep.entry()), task_entry (the program a task runs with
  -- --task MANIFEST INDEX, default sweep.task_entry()).
  -- redo_changed (list runs whose record or checkpoint was made under another config, their
  -- checkpoints set aside; without it such runs are refused in one line, as by sweep.run),
  -- dry_run (write nothing, set nothing aside: res.commands lists the manifest's lines and the
  -- notes say what a real call would set aside).
  -- Returns { sbatch =, manifest =, n =, total =, notes = {...}, commands = {...} } (n = 0: nothing
  -- pending, no script written); notes: the lines to show, one per run whose record file is no
  -- valid record (it is pending again), one per checkpoint set aside (unreadable, or changed
  -- under redo_changed; the run starts over) and one if experiment.json had to be written anew.
  sweep.SLURM_OPTIONS = { "out", "cpus_per_task", "max_parallel", "only", "sbatch", "entry", "task_entry", "host",
                          "redo_changed", "dry_run" }
  function sweep.write_slurm(exp, opts)
    if opts ~= nil and type(opts) ~= "table" then
      error(("sweep.write_slurm: options must be a table {out = ..., ...}, got %s"):format(type(opts)), 0)
    end
    opts = opts or {}
    -- a misspelt option (cpus_per_tsk = 4, dryrun = true) would be ignored: the array would be
    -- written with the defaults
    local bad = require("attnlab.util").unknown_keys(opts, sweep.SLURM_OPTIONS)
    if bad then error("sweep.write_slurm: " .. bad, 0) end
    local dry = opts.dry_run
    local dir = out_dir(opts.out, "sweep")
    local cpus = opts.cpus_per_task or 1
    local runs = sweep.runs(exp, { out = dir, threads = cpus, only = opts.only })
    local host = opts.host or sweep.host()
    if not dry then mkdir_p(dir); mkdir_p(dir .. "/ckpt"); mkdir_p(dir .. "/logs"); mkdir_p(dir .. "/.state") end
    -- a sweep running here on the same folder would have its runs listed as pending: refused.
    -- The lock is held while the files are written only; the array's tasks take none (they are
    -- the runs of this one sweep, and sweep.task never locks). A dry run takes none.
    local lock <close> = not dry and H.lock_folder(dir) or nil
    local pending, notes = {}, {}
    -- Changed records and left checkpoints are examined as a local sweep does (init.lua's
    -- examine_run, with its messages), before the manifest is written, so that no run is queued
    -- to fail on an unreadable checkpoint or one made under another config. A set-aside's line
    -- is one of the notes (a dry run's says what a real call would do). A refusal changes
    -- nothing: the runs are first examined as a dry run (the probe), so that an unreadable
    -- checkpoint is not renamed by a call that then refuses another run (the note would be lost).
    local states = {}
    local probe = H.new_examination(opts.redo_changed, true, function() end)
    for i, r in ipairs(runs) do
      r.command = sweep.command(r, host, opts.entry)   -- (a checkpoint's key is its command's config's)
      local st, _, why = sweep.state(r)
      states[i] = { st, why }
      if st ~= "done" then H.examine_run(probe, r, st, why) end
    end
    H.refuse_changed(probe, dir)
    local ex = H.new_examination(opts.redo_changed, dry, function(l) notes[#notes + 1] = l end)
    for i, r in ipairs(runs) do
      local st, why = states[i][1], states[i][2]
      if st ~= "done" and H.examine_run(ex, r, st, why) then
        if st == "invalid" then notes[#notes + 1] = sweep.invalid_line(r, why, dry) end
        pending[#pending + 1] = r
      end
    end
    local lines = {}
    for i, r in ipairs(pending) do lines[i] = r.command end
    local res = { manifest = dir .. "/manifest.txt", sbatch = dir .. "/sweep.sbatch", n = #pending, total = #runs,
                  notes = notes, commands = lines, dry_run = dry or nil }
    if dry then return res end
    local _, note = sweep.write_experiment(exp, runs, dir)
    if note then notes[#notes + 1] = note end
    if #pending == 0 then return res end
    local ok, err = al.write_atomic(res.manifest, table.concat(lines, "\n") .. "\n")
    if not ok then error("sweep: cannot write " .. res.manifest .. ": " .. err, 0) end
    append_commands(dir, ("%s  %s: %d runs as Slurm array tasks (%s)"):format(os.date("!%Y-%m-%dT%H:%M:%SZ"), exp.name,
      #pending, res.sbatch), lines)

    local sl = exp.slurm or {}
    local sb = {
      "#!/bin/sh",
      ("# %s -- Slurm job array for the attnlab sweep '%s': %d of %d runs pending."):format(res.sbatch, exp.name,
        #pending, #runs),
      ("# Written by scripts/sweep.lua on %s. Submit: sbatch %s"):format(os.date("!%Y-%m-%dT%H:%M:%SZ"), q(res.sbatch)),
      "# Array task i runs line i of manifest.txt through `sweep.lua --task`: a run whose record",
      "# exists is skipped, a failure leaves an error record, a stopped run resumes from its",
      "# checkpoint in ckpt/. To resume or retry, rerun `sweep.lua ... --slurm` (it rewrites the",
      "# manifest with what is still pending) and submit again; do not rewrite it while tasks wait.",
      ("#SBATCH --job-name=%s"):format(sweep.sanitize("attnlab-" .. exp.name)),
      ("#SBATCH --array=1-%d%s"):format(#pending, opts.max_parallel and ("%" .. opts.max_parallel) or ""),
      "#SBATCH --ntasks=1",
      ("#SBATCH --cpus-per-task=%d"):format(cpus),
      ("#SBATCH --output=%s/logs/slurm-%%A_%%a.out"):format(dir),
      ("#SBATCH --chdir=%s"):format(sweep.root()),
    }
    if sl.time then sb[#sb + 1] = "#SBATCH --time=" .. sl.time end
    if sl.mem then sb[#sb + 1] = "#SBATCH --mem=" .. sl.mem end
    if sl.partition then sb[#sb + 1] = "#SBATCH --partition=" .. sl.partition end
    for _, x in ipairs(sl.extra or {}) do sb[#sb + 1] = "#SBATCH " .. x end
    for _, x in ipairs(opts.sbatch or {}) do sb[#sb + 1] = "#SBATCH " .. x end
    sb[#sb + 1] = ("exec %s %s --task %s \"$SLURM_ARRAY_TASK_ID\""):format(q(host), q(opts.task_entry or sweep.task_entry()),
      q(res.manifest))
    ok, err = al.write_atomic(res.sbatch, table.concat(sb, "\n") .. "\n")
    if not ok then error("sweep: cannot write " .. res.sbatch .. ": " .. err, 0) end
    os.execute("chmod +x " .. q(res.sbatch))
    return res
  end

  -- Submit a written sbatch script; returns the job id. opts.wait: block until the array ends.
  function sweep.submit(sbatch_path, opts)
    opts = opts or {}
    local cmd = ("sbatch --parsable %s%s 2>&1"):format(opts.wait and "--wait " or "", q(sbatch_path))
    local p = io.popen(cmd)
    local out = p:read("a")
    local ok, _, code = p:close()
    local id = out:match("^(%d+)")
    if not id then
      error(("sweep: sbatch failed (status %s): %s"):format(tostring(code), out:gsub("%s+$", "")), 0)
    end
    return id, ok, out
  end

  -- One Slurm array task: run line `index` of the manifest, then keep its record or write an
  -- error record. Returns the run's state ("done", "error", "skipped").
  -- Its checkpoint is not examined here: write_slurm did that before queueing, and one that is
  -- stale or unreadable by now (a local sweep of an edited experiment ran on the folder since) is
  -- refused by train.lua itself (fit.run compares the config keys before its first step), so
  -- the run is never resumed from another config's checkpoint; it ends as an error record saying
  -- so, the checkpoint untouched, and the next `sweep.lua --slurm` refuses the run in one line or,
  -- with --redo-changed, sets the checkpoint aside. An unattended task does not set it aside itself.
  function sweep.task(manifest, index)
    local s = read_all(manifest)
    if not s then error("sweep: cannot read the manifest " .. manifest, 0) end
    local i, line = 0, nil
    for l in s:gmatch("[^\n]+") do
      i = i + 1
      if i == index then line = l break end
    end
    if not line then error(("sweep: manifest %s has %d lines, no line %s"):format(manifest, i, tostring(index)), 0) end
    local okr, run = pcall(sweep.run_from_command, line)
    if not okr then   -- say which file and line: the usual cause is the wrong file given as MANIFEST
      error(("sweep: %s is not a sweep manifest (the DIR/manifest.txt sweep.lua --slurm writes, one run per line): " ..
        "line %d is %s"):format(manifest, index, (tostring(run):gsub("^sweep: ", ""))), 0)
    end
    local st, _, why = sweep.state(run)
    if st == "done" then
      print(("%s: record already there; skipped"):format(run.name))
      return "skipped"
    end
    if st == "invalid" then print(sweep.invalid_line(run, why)) end
    mkdir_p(run.dir .. "/logs"); mkdir_p(run.dir .. "/ckpt")
    print(("%s: %s"):format(run.name, line))
    io.stdout:flush()
    local t0 = al.clock()
    local ok, how, code = os.execute(("%s >%s 2>%s </dev/null"):format(line, q(run.log_out), q(run.log_err)))
    local rc = ok and 0 or (how == "exit" and code or 128 + (code or 0))
    local st, rec = sweep.finish(run, rc)
    print(("%s: %s (%.1f s)"):format(run.name, describe_result(st, rec), al.clock() - t0))
    return st
  end
end
