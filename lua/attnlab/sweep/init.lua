-- attnlab.sweep -- seed sweeps of the normalizer study: every (dataset, normalizer, seed) of
-- an experiment runs as its own process (`bin/attnlab <entry> --dataset ...`, the entry being
-- the library's run/train_main.lua or the program the caller names in opts.entry --
-- scripts/sweep.lua names scripts/train.lua), N at a time on this machine, or as a Slurm job
-- array past it. Each run writes one JSON record atomically to
--   DIR/<dataset>__<normalizer>__seed<k>.json        (':' and other odd characters -> '-')
-- so a sweep is resumable by construction: a rerun skips every finished record, retries
-- error records, and a run that was stopped mid-way resumes from DIR/ckpt/<name>.ckpt (the
-- checkpoint train.lua writes after each epoch). Nothing is ever appended to a record, so
-- nothing can be duplicated. "Finished" means a valid record by report/record.lua, the check
-- the report applies: a file there that is not one (truncated, an accuracy outside [0, 1], an
-- empty epochs list, epochs that do not match the config, an unknown normalizer) is said in
-- one line and its run runs again.
--
--   local exp  = al.sweep.load("experiments/normalizers/demo.lua")
--   local summ = al.sweep.run(exp, { out = "results/demo", workers = 2 })
--   al.sweep.write_slurm(exp, { out = "results/demo", cpus_per_task = 1 })  -- DIR/sweep.sbatch
--
-- An experiment is a Lua file returning a table:
--   name        = "normalizers-main"                      (used for default folders and jobs)
--   description = "..."                                   (copied to experiment.json)
--   datasets    = { "cifar10", "fashion_mnist", { name = "newsgroups20_masked",
--                   dataset = "newsgroups20", padding = "masked", study = false }, ... }
--                 a string is a dataset of al.data.by_name; a table names a variant (its
--                 other keys override the schedule; study = false keeps it out of the
--                 default families)
--   normalizers = { "softmax", "entmax15", "topk:0.25", ... }
--   seeds       = { 1, 2, 3 }
--   baseline    = "softmax"                               (default; one of the normalizers)
--   schedule    = { epochs = 10, batch_size = 128, lr = 1e-3, train_limit = ..., ... }
--                 any key of al.train.DEFAULTS
--   overrides   = { cifar10 = { epochs = 20 } }           per-dataset schedule keys
--   families    = { { name =, baseline =, normalizers = {...}, datasets = {...} }, ... }
--                 the Holm families of the report (attnlab.report); default: every other
--                 normalizer vs the baseline over every study dataset. Also title =;
--                 normalizers = "all" and datasets = "study" are the defaults spelt out
--   quick       = { seeds =, schedule =, overrides =, datasets =, normalizers =, families =, baseline = }
--                 what --quick changes (tables merge key by key, lists replace)
--   slurm       = { time = "02:00:00", mem = "4G", partition = "...", extra = { "--qos=..." } }
-- sweep.load refuses, in one line naming the file and the field, before any run starts: a key
-- not listed here (at the top, in quick, a family or slurm), a value of the wrong type, a
-- baseline or a family naming a normalizer or dataset the experiment does not run, and two
-- entries that run the same thing ("topk:0.5" and "topk:.5"; "fashion_mnist" and "fmnist").
-- The quick preset is checked then too, applied to the experiment, with or without --quick.
--
-- Runs are ordered seed-major (all runs of seed 1, then seed 2, ...), so a sweep stopped at
-- any point leaves complete seed sets, which is what the paired tests need.
--
-- Files in DIR besides the records: experiment.json (the resolved experiment and what each
-- record name stands for; the report reads it), commands.txt (every command line started,
-- appended per invocation), ckpt/ (per-run checkpoints, removed when a run finishes),
-- logs/<name>.out|.err, .state/ (pid and exit-status files of running workers, and the sweep
-- lock), and for Slurm manifest.txt + sweep.sbatch.
-- Stopping: Ctrl-C stops the workers too (their checkpoints stay); a SIGKILL/SIGTERM of the
-- sweep alone leaves its workers running to the end, and a rerun meanwhile skips them.
-- One sweep at a time per folder: sweep.run holds the lock file DIR/.state/sweep.lock
-- (attnlab.lockfile) from before it looks at the records until it returns or raises, and a
-- second sweep is refused in one line naming the holder's pid. A lock left by a killed sweep
-- is taken over (the holder is checked by pid and start time), and that sweep's runs still
-- going are adopted as below. sweep.write_slurm takes the lock only while it writes the
-- manifest (not while a local sweep runs them); the array's tasks take none, being the runs
-- of one sweep. A local sweep started next to a running Slurm array is not excluded: records
-- stay whole (atomic writes) but a run may be done twice.
local al = require "attnlab"
local util = require "attnlab.util"
local RECORD = require "attnlab.report.record"
local lockfile = require "attnlab.lockfile"
local fit = require "attnlab.run.fit"

local sweep = {}

-- ---- small helpers ------------------------------------------------------------------------
local copy, merge, file_exists, read_all = util.copy, util.merge, util.file_exists, util.read_file
local sh_ok, abspath = util.sh_ok, util.abspath

-- Single-quote s for sh unless it is made only of characters sh leaves alone (util.shquote).
sweep.shquote = util.shquote
local q = sweep.shquote

-- A folder and its parents, or one line saying why not (mkdir's own message, not its stderr).
local function mkdir_p(dir)
  local f = io.open(dir .. "/.", "rb")          -- opens only when dir is a folder already
  if f then f:close() return end
  local p = io.popen("mkdir -p " .. q(dir) .. " 2>&1")
  local msg = p:read("a") or ""
  if not p:close() then
    local why = msg:gsub("%s+$", ""):match(": ([^:]*)$") or msg:gsub("%s+$", "")
    error(("sweep: cannot create folder %s: %s"):format(dir, why ~= "" and why or "mkdir failed"), 0)
  end
end

-- The results folder of opts.out as an absolute path; an empty path (it would put the records in
-- the current folder) or something that is not a folder is refused in one line.
local function out_dir(out, who)
  if type(out) ~= "string" or out == "" then
    error(("%s: the results folder (--out) must be a non-empty path, got %s"):format(who, out == "" and "''"
      or util.show(out)), 0)
  end
  local dir = abspath(out)
  local f = io.open(dir .. "/.", "rb")   -- a folder already (never opens dir itself: a FIFO would block)
  if f then f:close() return dir end
  if os.rename(dir, dir) then error(("%s: --out %s exists and is not a folder"):format(who, out), 0) end
  return dir
end

-- Absolute path, with "." and ".." parts resolved lexically (util.abspath).
sweep.abspath = abspath

local function fmt_duration(s)
  if s == nil or s ~= s or s == math.huge then return "?" end
  s = math.floor(s + 0.5)
  if s < 60 then return ("%ds"):format(s) end
  if s < 3600 then return ("%dm%02ds"):format(s // 60, s % 60) end
  return ("%dh%02dm"):format(s // 3600, (s % 3600) // 60)
end
sweep.fmt_duration = fmt_duration

-- The checkout (the folder holding lua/attnlab/), or in an installed tree
-- <prefix>/share/attnlab (al.root()), and the host that runs scripts.
function sweep.root()
  local r = al.root()
  if not r or r == "" then r = "." end
  return abspath(r)
end

-- The programs a sweep launches unless its caller names others (opts.entry, opts.task_entry):
-- the library's own, found on package.path like any module, so the library needs nothing of
-- scripts/ (run/train_main.lua: one training run; sweep/task_main.lua: one Slurm array task).
local function program(name)
  local p = package.searchpath(name, package.path)
  if not p then error(("sweep: cannot find %s on package.path"):format(name), 0) end
  return abspath(p)
end
function sweep.entry() return program("attnlab.run.train_main") end
function sweep.task_entry() return program("attnlab.sweep.task_main") end

function sweep.host()
  local h = os.getenv("ATTNLAB_HOST")
  if h and h ~= "" then return abspath(h) end
  local root = sweep.root()
  local b = root .. "/bin/attnlab"
  if file_exists(b) then return b end
  local prefix = root:match("^(.*)/share/attnlab$")   -- installed: <prefix>/bin/attnlab
  if prefix and file_exists(prefix .. "/bin/attnlab") then return prefix .. "/bin/attnlab" end
  return abspath(arg and arg[-1] or "bin/attnlab")
end

-- Names in file names: anything but letters, digits, '.', '_' and '-' becomes '-'.
function sweep.sanitize(s)
  return (tostring(s):gsub("[^%w%._%-]", "-"))
end

function sweep.record_name(label, normalizer, seed)
  return ("%s__%s__seed%d"):format(sweep.sanitize(label), sweep.sanitize(normalizer), seed)
end

-- ---- the parts in their own files ----------------------------------------------------------------
-- Helpers the parts share; the parts add their functions to `sweep`.
local H = { copy = copy, merge = merge, file_exists = file_exists, abspath = abspath, q = q, mkdir_p = mkdir_p,
            read_all = read_all, out_dir = out_dir }
require("attnlab.sweep.experiment")(sweep, H)     -- load, validate, resolve, runs
require("attnlab.sweep.command")(sweep, H)        -- command, split_words, parse_command, run_from_command
local dataset_entries = H.dataset_entries

-- ---- records and run states -------------------------------------------------------------------
-- rec for a valid record (a finished run or an error record); nil, why and kind otherwise:
-- "missing" (no file), "unreadable" (cannot be opened, empty, not JSON) or "invalid" (JSON that
-- is no valid record: wrong types, an accuracy outside [0, 1], an empty epochs list, epochs that
-- do not match config.epochs, an unknown normalizer). The check is report/record.lua's, the
-- one every reader of records applies: what a report would refuse never counts as finished.
sweep.read_record = RECORD.read

-- Recipe keys added after records were first written (report/record.lua, which also holds
-- the comparison: the report makes the same check before it counts a record).
sweep.LEGACY_KEYS = RECORD.LEGACY_KEYS

-- The first config key on which a finished record differs from what the run would use.
local function config_change(rec, run) return RECORD.config_change(rec, run.config) end

-- "done" | "error" | "partial" (a checkpoint exists) | "pending" | "changed" | "invalid" (a file
-- is there but is no valid record: the run is not finished and runs again, resuming from its
-- checkpoint if it has one), and the record; "changed" and "invalid" also say why.
function sweep.state(run)
  local rec, why, kind = sweep.read_record(run.out)
  if rec and not rec.error then
    local change = config_change(rec, run)
    if change then return "changed", rec, change end
    return "done", rec
  end
  if rec and rec.error then return "error", rec end
  if kind ~= "missing" then return "invalid", nil, why end
  if run.checkpoint and file_exists(run.checkpoint) then return "partial" end
  return "pending"
end

-- The one line a sweep says about a run whose record file is no valid record.
function sweep.invalid_line(run, why, dry)
  return ("%s: record %s is not a valid record (%s); %s"):format(run.name, run.out, why,
    dry and "a real run would run it again" or "the run runs again")
end

local function tail_lines(path, n, max_chars)
  local s = read_all(path)
  if not s then return "" end
  local lines = {}
  for l in s:gmatch("[^\n]*") do lines[#lines + 1] = l end
  while #lines > 0 and lines[#lines]:match("^%s*$") do lines[#lines] = nil end
  local first = math.max(1, #lines - n + 1)
  local t = table.concat(lines, "\n", first, #lines)
  if #t > max_chars then t = "..." .. t:sub(-max_chars) end
  return t
end

-- The most telling line of a failed run's stderr: train.lua's own message if there is one.
local function error_message(stderr, rc)
  local best
  for l in stderr:gmatch("[^\n]+") do
    if l:match("^train%.lua: ") then best = l:gsub("^train%.lua: ", "") end
  end
  if not best then
    for l in stderr:gmatch("[^\n]+") do
      if not l:match("^%s") and not l:match("^stack traceback") then best = l end
    end
  end
  if best then best = util.error_text(best) end   -- the Lua position adds nothing for users
  return best or ("exited with status " .. tostring(rc) .. " and no message")
end

-- After a run's process ended with status rc: keep its record (and drop its checkpoint),
-- or write an error record in its place. Returns "done" | "error", the record.
function sweep.finish(run, rc)
  local rec, why, kind = sweep.read_record(run.out)
  if rec and not rec.error then
    if run.checkpoint then os.remove(run.checkpoint) end
    return "done", rec
  end
  local stderr = tail_lines(run.log_err, 30, 4000)
  local msg
  if rc == 0 and kind ~= nil and kind ~= "missing" then
    msg = ("train.lua exited with status 0 but its record %s is not a valid record (%s)"):format(run.out, why)
  elseif rc == 0 then
    msg = "train.lua exited with status 0 but wrote no record at " .. run.out
  elseif rc > 128 and not stderr:find("train%.lua: ") then
    msg = ("killed by signal %d (exit status %d)%s"):format(rc - 128, rc,
      rc == 137 and "; out of memory, or stopped by hand?" or "")
  else
    msg = error_message(stderr, rc)
  end
  local prev = rec and rec.error and rec or nil
  local err = {
    error = msg, exit_status = rc, stderr_tail = stderr, command = run.command, config = run.config,
    run = { name = run.name, dataset = run.label, normalizer = run.normalizer, seed = run.seed },
    attempts = (prev and prev.attempts or 0) + 1, finished = os.date("!%Y-%m-%dT%H:%M:%SZ"),
    log = { stdout = run.log_out, stderr = run.log_err },
  }
  local ok, werr = al.write_atomic(run.out, al.json.encode(err, true) .. "\n")
  if not ok then error(("sweep: cannot write the error record %s: %s"):format(run.out, werr), 0) end
  return "error", err
end

-- ---- bookkeeping files --------------------------------------------------------------------------
-- DIR/experiment.json: the resolved experiment and which dataset/normalizer/seed each record
-- name stands for (the report reads it for dataset variants and families). Merged with what
-- an earlier invocation wrote, so sweeps with --only add up.
-- Returns the path, and a line to show when the file there was not a JSON object (written anew:
-- the runs it listed from earlier --only invocations are lost).
function sweep.write_experiment(exp, runs, dir)
  local path = dir .. "/experiment.json"
  local prev, note = {}, nil
  local s = read_all(path)
  if s then
    local v, why = util.decode_json(s)
    if RECORD.is_object(v) then prev = v
    else
      note = ("%s was %s; written anew from this experiment (the runs it listed are forgotten)"):format(path,
        v == nil and ("not JSON (" .. tostring(why) .. ")") or "no JSON object")
    end
  end
  local entries = dataset_entries(exp.datasets)
  local ds = {}
  for _, e in ipairs(entries) do
    -- the dataset's own settings too: the report checks each record's config against them
    ds[#ds + 1] = { name = e.label, dataset = e.dataset, study = e.study, description = e.description,
                    overrides = e.overrides }
  end
  local rmap = type(prev.runs) == "table" and prev.runs or {}
  for _, r in ipairs(runs) do
    rmap[r.name] = { dataset = r.label, normalizer = r.normalizer, seed = r.seed }
  end
  local doc = {
    name = exp.name, file = exp.file, quick = exp.quick_applied or false, description = exp.description,
    datasets = ds, normalizers = exp.normalizers, seeds = exp.seeds, baseline = exp.baseline,
    families = exp.families, schedule = exp.schedule, overrides = exp.overrides, runs = rmap,
  }
  local ok, err = al.write_atomic(path, al.json.encode(doc, true) .. "\n")
  if not ok then error("sweep: cannot write " .. path .. ": " .. err, 0) end
  return path, note
end

local function append_commands(dir, header, lines)
  local f = io.open(dir .. "/commands.txt", "a")
  if not f then error("sweep: cannot write " .. dir .. "/commands.txt", 0) end
  f:write("# ", header, "\n")
  for _, l in ipairs(lines) do f:write(l, "\n") end
  f:close()
end

-- Remove temporaries of atomic writes that a killed process left next to the records.
local function remove_stale_temps(dir, runs)
  local mine = {}
  for _, r in ipairs(runs) do mine[r.name] = true end
  local p = io.popen("ls -1 " .. q(dir) .. " 2>/dev/null")
  for f in p:lines() do
    local name = f:match("^(.+)%.json%.tmp%.%w+$")
    if name and mine[name] then os.remove(dir .. "/" .. f) end
  end
  p:close()
end

-- ---- local execution ------------------------------------------------------------------------------
-- A process that exists and is not a zombie (attnlab.lockfile says why zombies occur).
local pid_alive = require("attnlab.lockfile").pid_alive

-- Remove what killed sweeps left in DIR/.state: the pid and status files of workers that are
-- gone. Files of a worker that is still alive stay (a run adopted from an earlier sweep), and so
-- does the sweep lock (this sweep's; attnlab.lockfile takes over a dead holder's itself).
local function remove_stale_state(state_dir)
  local p = io.popen("ls -1A " .. q(state_dir) .. " 2>/dev/null")
  local files = {}
  for f in p:lines() do if not f:match("^sweep%.lock") then files[#files + 1] = f end end
  p:close()
  for _, f in ipairs(files) do
    local name = f:match("^(.+)%.pid$") or f:match("^(.+)%.rc%.w$") or f:match("^(.+)%.rc$")
    local s = name and read_all(state_dir .. "/" .. name .. ".pid")
    local pid = s and tonumber(s:match("%d+"))
    local cmd = pid and pid_alive(pid) and read_all("/proc/" .. pid .. "/cmdline")
    if not (cmd and cmd:find(name, 1, true)) then os.remove(state_dir .. "/" .. f) end
  end
end


-- Start one run in the background, in its own session (so that it can be stopped as a
-- group), its exit status landing in DIR/.state/<name>.rc when it ends.
local function spawn(run, state_dir)
  local rc = state_dir .. "/" .. run.name .. ".rc"
  local pidf = state_dir .. "/" .. run.name .. ".pid"
  os.remove(rc)
  local inner = ("%s >%s 2>%s </dev/null; echo $? >%s; mv %s %s"):format(run.command, q(run.log_out), q(run.log_err),
    q(rc .. ".w"), q(rc .. ".w"), q(rc))
  local cmd = ("setsid sh -c %s >/dev/null 2>&1 </dev/null & echo $! >%s"):format(q(inner), q(pidf))
  if not sh_ok(cmd) then error("sweep: cannot start " .. run.name, 0) end
  local s = read_all(pidf)
  run.pid = s and tonumber(s:match("%d+"))
  run.rcfile, run.pidfile = rc, pidf
end

local function stop(run)
  if run.pid and pid_alive(run.pid) then
    -- "kill -TERM -PID" (not "kill -- -PID", which dash's kill rejects) signals the group
    os.execute(("kill -TERM -%d 2>/dev/null || kill -TERM %d 2>/dev/null"):format(run.pid, run.pid))
  end
end

-- The exit status of a started run, or nil while it runs. A worker that is gone without
-- leaving its status (killed by hand, or its folder removed) counts as killed (status 137);
-- the status file is read again after the liveness check, since the worker writes it last.
local function poll_rc(run)
  local s = read_all(run.rcfile)
  if not s then
    if not run.pid or pid_alive(run.pid) then return nil end
    s = read_all(run.rcfile)
    if not s then return 137 end
  end
  return tonumber(s:match("%-?%d+")) or -1
end

-- Sleep; returns false when the sleep was interrupted (Ctrl-C reaches the sleep process).
local function sleep(s)
  local ok, how, code = os.execute(("sleep %.3f"):format(s))
  if ok then return true end
  if how == "signal" then return false, code end
  return true
end

local function describe_result(state, rec)
  if state == "done" then
    local extra = ""
    if rec.alphas and rec.alphas[1] then
      local lo, hi = math.huge, -math.huge
      for _, layer in ipairs(rec.alphas) do
        for _, a in ipairs(layer) do lo, hi = math.min(lo, a), math.max(hi, a) end
      end
      extra = (", alpha %.2f..%.2f"):format(lo, hi)
    end
    if rec.resumed_from_epoch then extra = extra .. (", resumed after epoch %d"):format(rec.resumed_from_epoch) end
    return ("acc %.4f, density %.3f%s"):format(rec.test_accuracy, rec.support_density or 0 / 0, extra)
  end
  return "FAILED: " .. tostring(rec.error)
end

-- The folder's sweep lock (DIR/.state/sweep.lock), released when the variable holding it
-- goes out of scope (`local lock <close> = lock_folder(dir)`: on return and on error alike).
-- Held by a live process: refused in one line saying whose it is and what to do.
local function lock_folder(dir)
  local path = dir .. "/.state/sweep.lock"
  local lock, h = lockfile.acquire(path)
  if lock then return setmetatable(lock, { __close = function(l) l:release() end }) end
  if h and h.pid then
    local here = h.host == lockfile.self().host
    error(("sweep: another sweep is running on %s (pid %d%s holds %s); wait for it to end, or stop it " ..
      "(kill %d%s) and run this command again"):format(dir, h.pid, here and "" or (" on " .. h.host), path, h.pid,
      here and "" or (" on " .. h.host .. ", or remove the lock file if that process is gone")), 0)
  end
  error(("sweep: %s is held by %s; remove it if no sweep is running on %s"):format(path, lockfile.describe(h), dir), 0)
end
H.lock_folder = lock_folder

-- The key run/train.lua gives the checkpoint of `run`: train.config_key of the config the worker
-- resolves (its command line read back as train.lua reads it, then train.config), so that a
-- checkpoint made under another config is known before the run fails on it. nil when that
-- cannot be said here (a config train refuses: the run fails on that, and says it).
local function checkpoint_key(run)
  local key_of = al.train.config_key
  if not key_of or not run.command then return nil end
  local ok, c = pcall(function() return al.train.config((sweep.parse_command(run.command))) end)
  if ok then return key_of(c) end
end

-- Set aside a checkpoint its run cannot resume from (renamed to <ckpt>.<tag>-<UTC time>, kept for
-- inspection); the run then starts over. `why` is said in the log line.
local function set_aside_checkpoint(r, tag, why, dry, log)
  if dry then
    log(("%s: checkpoint %s: %s; a real run sets it aside and starts over"):format(r.name, r.checkpoint, why))
    return
  end
  local aside = r.checkpoint .. "." .. tag .. "-" .. os.date("!%Y%m%dT%H%M%SZ")
  local okr, rerr = os.rename(r.checkpoint, aside)
  if not okr then error(("sweep: cannot set aside the checkpoint %s: %s"):format(r.checkpoint, rerr), 0) end
  log(("%s: checkpoint %s; set aside as %s, the run starts over"):format(r.name, why, aside))
end

-- ---- what a sweep does with a changed record or a left checkpoint ----------------------------------
-- sweep.run (before it starts a run) and sweep.write_slurm (before it lists one in the manifest)
-- make the same examination, so that a local and a Slurm sweep agree; a stale or unreadable
-- checkpoint would otherwise be found only when the run fails on it (on the cluster: after
-- queueing). One examination per sweep:
--   local ex = new_examination(opts.redo_changed, dry, log)
--   for each run r not finished (st, why = sweep.state(r); st ~= "done"):
--     st = examine_run(ex, r, st, why)    -- nil: not to run (changed, and no --redo-changed)
--   refuse_changed(ex, dir)               -- if any were refused: raises the one line naming the first
-- ex = { changed = { "<name> (<why>)", ... }, changed_ckpt = how many of them are checkpoints,
--        set_aside = unreadable checkpoints set aside }.
local function new_examination(redo_changed, dry, log)
  return { redo = redo_changed, dry = dry, log = log, changed = {}, changed_ckpt = 0, set_aside = 0 }
end

-- The state the run of state `st` (not "done") is started with: st, or "pending" for a "partial"
-- run whose checkpoint was set aside; nil when it is refused (a changed record or checkpoint
-- without --redo-changed; refuse_changed then names it). A changed record under --redo-changed
-- drops its run's checkpoint (if any). Otherwise a checkpoint that cannot be read (as fit.run
-- reads it), or that was made under another config (the experiment was edited after a run was
-- killed), would fail the run identically on every retry. An unreadable one is set aside
-- (renamed, logged) and the run starts over; one of another config counts as a changed record:
-- refused, set aside under --redo-changed.
local function examine_run(ex, r, st, why)
  local dry, log = ex.dry, ex.log
  if st == "changed" then
    ex.changed[#ex.changed + 1] = r.name .. " (" .. why .. ")"
    if not ex.redo then return nil end
    if not dry then os.remove(r.checkpoint) end
    return st
  end
  if r.checkpoint and file_exists(r.checkpoint) then
    local ok, ck = pcall(fit.read_checkpoint, r.checkpoint)
    local key = ok and ck and type(ck.state.key) == "string" and checkpoint_key(r)
    if not ok then
      set_aside_checkpoint(r, "corrupt", ("unreadable (%s)"):format(util.error_text(ck)), dry, log)
      ex.set_aside = ex.set_aside + 1
      if st == "partial" then st = "pending" end
    elseif key and ck.state.key ~= key then
      ex.changed[#ex.changed + 1] = r.name .. " (its checkpoint " .. r.checkpoint .. " was made with another config)"
      ex.changed_ckpt = ex.changed_ckpt + 1
      if not ex.redo then return nil end
      set_aside_checkpoint(r, "changed", "made with a different config than the experiment now gives", dry, log)
      if st == "partial" then st = "pending" end
    else
      -- a checkpoint the run refuses as corrupt fails every retry the same way: one whose history
      -- could not start a valid record (epoch numbers, lr or seconds < 0: report/record.lua), or
      -- one the run's last attempt refused ("checkpoint <path> is corrupt": a hand-edited weight
      -- shows only when the resumed run re-evaluates it) is set aside like an unreadable one
      local bad = ok and ck and RECORD.history_problem(ck.state.history)
      if not bad and st == "error" then
        local prev = sweep.read_record(r.out)
        local msg = prev and type(prev.error) == "string" and prev.error
        if msg and msg:find("checkpoint " .. r.checkpoint .. " is corrupt", 1, true) then
          bad = "the run's last attempt refused it: " .. (msg:match(" is corrupt %((.*)%); delete it") or msg)
        end
      end
      if bad then
        set_aside_checkpoint(r, "corrupt", ("corrupt (%s)"):format(bad), dry, log)
        ex.set_aside = ex.set_aside + 1
        if st == "partial" then st = "pending" end
      end
    end
  end
  return st
end

-- The one-line refusal of a sweep over changed records or checkpoints (without --redo-changed).
local function refuse_changed(ex, dir)
  local changed, changed_ckpt = ex.changed, ex.changed_ckpt
  if #changed == 0 or ex.redo then return end
  local n_rec = #changed - changed_ckpt
  local what = (n_rec > 0 and ("%d finished record(s)"):format(n_rec) or "") .. (n_rec > 0 and changed_ckpt > 0 and " and " or "") ..
    (changed_ckpt > 0 and ("%d checkpoint(s)"):format(changed_ckpt) or "")
  error(("sweep: %s in %s were made with a different config than the experiment now gives, e.g. %s; " ..
    "use a new --out folder, or pass --redo-changed to rerun them%s"):format(what, dir, changed[1],
    changed_ckpt > 0 and " (a checkpoint is then set aside and its run starts over)" or ""), 0)
end
H.new_examination, H.examine_run, H.refuse_changed = new_examination, examine_run, refuse_changed

-- Run every pending run of `exp` (resolved) on this machine. opts:
--   out (folder, required), workers (default: cores), threads (per run; default
--   sweep.default_threads: max(1, cores // workers), at most ATTNLAB_NUM_THREADS), only (pattern), redo_changed (rerun records whose config
--   differs from the experiment), log (function(line); default print), poll (seconds),
--   dry_run (list what would run), entry (the program each run executes; default sweep.entry()),
--   host (default sweep.host()).
-- Returns { total =, done_before =, done =, failed =, ran =, seconds =, failures = {...} }.
-- Threads per run unless --threads says: the cores shared among the workers, at most
-- ATTNLAB_NUM_THREADS when the environment sets it (a user who set it to 1 got runs of 2 threads).
-- A value that is not a positive integer was reported by the host at startup and is ignored.
function sweep.default_threads(cores, workers)
  local t = math.max(1, cores // workers)
  local env = math.tointeger(tonumber(os.getenv("ATTNLAB_NUM_THREADS") or ""))
  if env and env >= 1 and env < t then t = env end
  return t
end

sweep.RUN_OPTIONS = { "out", "workers", "threads", "only", "redo_changed", "log", "poll", "dry_run", "no_wait", "entry",
                      "host" }
function sweep.run(exp, opts)
  if opts ~= nil and type(opts) ~= "table" then
    error(("sweep.run: options must be a table {out = ..., ...}, got %s"):format(type(opts)), 0)
  end
  opts = opts or {}
  -- a misspelt option (wokers = 2, dryrun = true) would be ignored: the sweep would start every
  -- run with the defaults instead of listing them
  local bad = util.unknown_keys(opts, sweep.RUN_OPTIONS)
  if bad then error("sweep.run: " .. bad, 0) end
  local log = opts.log or function(s) print(s) io.stdout:flush() end
  local cores = al.config().cores or 1
  local workers = opts.workers or cores
  if math.type(workers) ~= "integer" or workers < 1 then error("sweep: workers must be a positive integer", 0) end
  local threads = opts.threads or sweep.default_threads(cores, workers)
  local dir = out_dir(opts.out, "sweep")
  local runs = sweep.runs(exp, { out = dir, threads = threads, only = opts.only })
  if #runs == 0 then error(("sweep: no run of '%s' matches --only %s"):format(exp.name, tostring(opts.only)), 0) end
  local host = opts.host or sweep.host()
  for _, r in ipairs(runs) do r.command = sweep.command(r, host, opts.entry) end

  local state_dir = dir .. "/.state"
  local dry = opts.dry_run
  if not dry then mkdir_p(dir); mkdir_p(state_dir) end   -- (the lock's folder; ckpt/ and logs/ once the sweep is not refused)
  -- before the records are looked at: what this sweep sets aside, removes and starts is its own
  -- (a dry run writes nothing and takes no lock)
  local lock <close> = not dry and lock_folder(dir) or nil

  local todo, orphans, done_before, retry, resume, invalid = {}, {}, 0, 0, 0, 0
  -- changed records and left checkpoints: examined as sweep.write_slurm does (examine_run)
  local ex = new_examination(opts.redo_changed, dry, log)
  for _, r in ipairs(runs) do
    local st, _, why = sweep.state(r)
    if st == "done" then
      done_before = done_before + 1
    elseif st == "changed" then
      if examine_run(ex, r, st, why) then todo[#todo + 1] = r end
    else
      -- a run still going from an earlier, killed sweep: not started twice; this sweep waits
      -- for it (adopts it) and then keeps its record or retries it like any other run
      local s = read_all(state_dir .. "/" .. r.name .. ".pid")
      local pid = s and tonumber(s:match("%d+"))
      local cmdline = pid and pid_alive(pid) and read_all("/proc/" .. pid .. "/cmdline")
      if cmdline and cmdline:find(r.out, 1, true) and not file_exists(state_dir .. "/" .. r.name .. ".rc") then
        r.pid, r.rcfile, r.pidfile, r.orphan = pid, state_dir .. "/" .. r.name .. ".rc", state_dir .. "/" .. r.name .. ".pid", true
        orphans[#orphans + 1] = r
      else
        st = examine_run(ex, r, st, why)
        if st then   -- (nil: a refused run, which stops the sweep below, naming it)
          if st == "error" then retry = retry + 1 elseif st == "partial" then resume = resume + 1 end
          if st == "invalid" then   -- a record a report would refuse is no finished run: said, and run again
            invalid = invalid + 1
            log(sweep.invalid_line(r, why, dry))
          end
          todo[#todo + 1] = r
        end
      end
    end
  end
  refuse_changed(ex, dir)
  local changed, set_aside = ex.changed, ex.set_aside
  if not dry then
    -- made only now: a sweep refused over changed records left them empty behind
    mkdir_p(dir .. "/ckpt"); mkdir_p(dir .. "/logs")
    remove_stale_temps(dir, todo)
    remove_stale_state(state_dir)
    local _, note = sweep.write_experiment(exp, runs, dir)
    if note then log(note) end
  end

  log(("sweep %s: %d runs, %d finished before, %d to run (%d retried after an error, %d resumed from a checkpoint%s%s%s), " ..
       "%d worker%s x %d thread%s -> %s"):format(exp.name, #runs, done_before, #todo, retry, resume,
       #changed > 0 and (", %d rerun after a config change"):format(#changed) or "",
       invalid > 0 and (", %d rerun after an invalid record"):format(invalid) or "",
       set_aside > 0 and (", %d started over after an unreadable or corrupt checkpoint"):format(set_aside) or "", workers,
       workers == 1 and "" or "s", threads, threads == 1 and "" or "s", dir))
  local summary = { total = #runs, done_before = done_before, done = 0, failed = 0, ran = 0, failures = {},
                    out = dir, workers = workers, threads = threads, orphaned = {} }
  for _, r in ipairs(orphans) do
    log(("%s: still running from an earlier sweep (pid %d); %s"):format(r.name, r.pid,
      dry and "not started again" or opts.no_wait and "not started again (it takes a worker slot while it runs)"
      or "waiting for it"))
  end
  if dry then
    for _, r in ipairs(todo) do log(r.command) end
    for _, r in ipairs(orphans) do summary.orphaned[#summary.orphaned + 1] = r.name end
    return summary
  end
  local busy = {}
  if opts.no_wait then
    -- exit 0 means every run has a record: runs of an earlier sweep that are still going have
    -- none yet, so the caller reports them (scripts/sweep.lua exits 3). Not waited for, they
    -- still train on this machine: each takes a worker slot until its process ends (polled
    -- below; its record is not read nor reported as this sweep's), so that at most `workers`
    -- runs train at once.
    busy, orphans = orphans, {}
  end
  -- (--no-wait) the earlier sweep's runs that have no finished record when this sweep ends:
  -- read then, not when it began, since one may finish meanwhile (it was reported as still
  -- going, exit 3, with its record written)
  local no_wait_runs = busy
  local function list_orphaned()
    summary.orphaned = {}
    for _, r in ipairs(no_wait_runs) do
      local rec = sweep.read_record(r.out)
      if not (rec and not rec.error) then summary.orphaned[#summary.orphaned + 1] = r.name end
    end
  end
  if #todo == 0 and #orphans == 0 then summary.seconds = 0 list_orphaned() return summary end
  local cmds = {}
  for _, r in ipairs(todo) do cmds[#cmds + 1] = r.command end
  if #cmds > 0 then
    append_commands(dir, ("%s  %s: %d runs, %d worker%s x %d thread%s"):format(os.date("!%Y-%m-%dT%H:%M:%SZ"),
      exp.name, #todo, workers, workers == 1 and "" or "s", threads, threads == 1 and "" or "s"), cmds)
  end
  local t0 = al.clock()
  local active, next_i, finished, sum_dur = {}, 1, 0, 0
  for _, r in ipairs(orphans) do r.t0 = al.clock(); active[#active + 1] = r end
  local n_work = #todo + #orphans
  local poll = opts.poll or 0.25
  local function loop()
    while next_i <= #todo or #active > 0 do
      if #busy > 0 then   -- (--no-wait) an earlier sweep's run that has ended frees its slot
        local going = {}
        for _, o in ipairs(busy) do if not poll_rc(o) then going[#going + 1] = o end end
        busy = going
      end
      while #active + #busy < workers and next_i <= #todo do
        local r = todo[next_i]
        next_i = next_i + 1
        r.t0 = al.clock()
        spawn(r, state_dir)
        active[#active + 1] = r
      end
      local still = {}
      for _, r in ipairs(active) do
        local rc = poll_rc(r)
        local rec0 = rc and r.orphan and sweep.read_record(r.out)
        if rc and r.orphan and not (rec0 and not rec0.error) then
          -- a run of the earlier sweep that ended without a record (killed, or failed): this
          -- sweep runs it again itself, from its checkpoint if it left one
          os.remove(r.rcfile); os.remove(r.pidfile)
          log(("%s: the earlier sweep's run ended without a record (status %d); running it again"):format(r.name, rc))
          r.orphan, r.pid = false, nil
          todo[#todo + 1] = r
        elseif rc then
          local st, rec = sweep.finish(r, rc)
          os.remove(r.rcfile); os.remove(r.pidfile)
          finished = finished + 1
          summary.ran = summary.ran + 1
          if st == "done" then summary.done = summary.done + 1
          else
            summary.failed = summary.failed + 1
            summary.failures[#summary.failures + 1] = { name = r.name, error = rec.error }
          end
          -- ETA: the work left (runs not started, at the mean duration so far, plus what the
          -- running ones still need) shared by the workers
          local el = al.clock() - t0
          r.seconds = al.clock() - r.t0
          sum_dur = sum_dur + r.seconds
          local avg = sum_dur / finished
          local left = (#todo - next_i + 1) * avg
          for _, o in ipairs(active) do
            if o ~= r and not o.seconds then left = left + math.max(0, avg - (al.clock() - o.t0)) end
          end
          local eta = left / math.max(1, math.min(workers, n_work - finished))
          log(("[%d/%d] %s %s seed %d: %s (%.1f s) | elapsed %s, ETA %s"):format(done_before + finished, #runs,
            r.label, r.normalizer, r.seed, describe_result(st, rec) .. (r.orphan and " (run of an earlier sweep)" or ""),
            r.seconds, fmt_duration(el), finished == n_work and "0s" or fmt_duration(eta)))
        else
          still[#still + 1] = r
        end
      end
      active = still
      if #active > 0 or next_i <= #todo then
        local ok = sleep(poll)
        if not ok then error("interrupted", 0) end
      end
    end
  end
  local ok, err = pcall(loop)
  if not ok then
    for _, r in ipairs(active) do if not r.orphan then stop(r) end end
    log(("sweep stopped (%s): %d run(s) interrupted; their checkpoints stay in %s/ckpt. Rerun the same command to resume.")
      :format(tostring(err), #active, dir))
    error(err, 0)
  end
  summary.seconds = al.clock() - t0
  list_orphaned()
  log(("sweep %s: %d finished, %d failed in %s; records in %s"):format(exp.name, summary.done, summary.failed,
    fmt_duration(summary.seconds), dir))
  return summary
end

H.append_commands, H.describe_result = append_commands, describe_result
require("attnlab.sweep.slurm")(sweep, H)          -- write_slurm, submit, task

return sweep
