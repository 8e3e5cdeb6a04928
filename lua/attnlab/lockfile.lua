-- attnlab.lockfile -- one process at a time on a long step: a lock file that names its holder,
-- so that two processes working through the same cached steps (two S2S drivers on one results
-- folder, say) never train the same model at once, and a lock left by a killed process is
-- taken over instead of blocking forever.
--
--   local lockfile = require "attnlab.lockfile"
--   local lock = lockfile.acquire(path .. ".lock")          -- nil, holder when someone else holds it
--   ... lock:release()
--   local lock = lockfile.wait(path .. ".lock", { done = function() return exists(path .. ".json") end })
--
-- The lock is the file itself, created with link(2) from a private temporary file: the
-- creation is atomic (it fails when the file exists) and the file is whole when it appears.
-- It holds "host pid start-time"; the start time (field 22 of /proc/<pid>/stat) tells a live
-- holder from a new process that reuses a dead one's pid. A holder on another host (a shared
-- folder on a cluster) cannot be checked from here and counts as alive: remove the file by hand
-- if that host's process is gone (the message names it).
local util = require "attnlab.util"

local lockfile = {}

local function proc_stat(pid)
  local s = util.read_file("/proc/" .. tostring(pid) .. "/stat")
  if not s then return nil end
  -- the fields after the command name: it is in parentheses and may hold spaces and
  -- parentheses of its own, so it ends at the line's last ")"
  local close = s:match("^.*()%)")
  if not close then return nil end
  local rest = s:sub(close + 2)
  local f = {}
  for x in rest:gmatch("%S+") do f[#f + 1] = x end
  return { state = f[1], start = f[20] }        -- fields 3 and 22 of stat(5)
end

-- A process that exists and is not a zombie (a killed worker whose parent is gone can stay a
-- zombie when the machine's init does not reap it); with `start`, also the same process that
-- started then (not a later one that reuses its pid).
function lockfile.pid_alive(pid, start)
  if not pid then return false end
  local st = proc_stat(pid)
  if not st or st.state == "Z" or st.state == "X" then return false end
  return start == nil or st.start == tostring(start)
end

local function hostname()
  local h = util.read_file("/proc/sys/kernel/hostname") or os.getenv("HOSTNAME") or "localhost"
  return (h:gsub("%s+", ""))
end

-- This process: { host, pid, start }. /proc/self is the process that opens it, attnlab's host.
function lockfile.self()
  local s = util.read_file("/proc/self/stat") or ""
  local pid = tonumber(s:match("^(%d+)"))
  local st = pid and proc_stat(pid)
  return { host = hostname(), pid = pid, start = st and st.start }
end

-- The holder written in a lock file, or nil when it is absent or unreadable.
function lockfile.holder(path)
  local s = util.read_file(path)
  if not s then return nil end
  local host, pid, start = s:match("^(%S+) (%d+) (%d+)")
  if not host then return { text = s } end
  return { host = host, pid = tonumber(pid), start = start }
end

-- Is the lock's holder still running? Unknowable for another host: yes.
function lockfile.holder_alive(h)
  if not h or not h.pid then return false end
  if h.host ~= hostname() then return true end
  return lockfile.pid_alive(h.pid, h.start)
end

local function describe(h)
  if not h then return "nobody" end
  if not h.pid then return ("an unreadable holder (%q)"):format(h.text or "") end
  return ("pid %d on %s"):format(h.pid, h.host)
end
lockfile.describe = describe

-- Try once. Returns the lock (with :release()) or nil and the current holder. A lock whose
-- holder is gone is removed and taken over.
function lockfile.acquire(path)
  local me = lockfile.self()
  if not me.pid then error("lockfile: cannot read /proc/self/stat to name this process", 2) end
  -- a lock is a regular file: `ln tmp folder` linked into the folder and succeeded, so every
  -- process got the lock; a FIFO would block the holder's read
  local function refuse(kind)
    error(("lockfile: %s is %s, not a lock file; remove it or give another lock path"):format(path, kind), 3)
  end
  local kind = util.not_regular(path)
  if kind then refuse(kind) end
  local tmp = ("%s.%s.%d.tmp"):format(path, me.host, me.pid)
  local f, err = io.open(tmp, "wb")
  if not f then error(("lockfile: cannot create %s: %s"):format(tmp, tostring(err)), 2) end
  f:write(("%s %d %s\n"):format(me.host, me.pid, tostring(me.start or 0)))
  f:close()
  -- -T: the lock path is the link's name, never a folder to link into (one made after the
  -- check above makes the link fail, as any file there does)
  local link = "ln -T " .. util.shquote(tmp) .. " " .. util.shquote(path) .. " 2>/dev/null"
  local ok = util.sh_ok(link)
  kind = not ok and util.not_regular(path)
  if kind then
    os.remove(tmp)
    refuse(kind)
  end
  if not ok then
    local h = lockfile.holder(path)
    if h and h.pid and not lockfile.holder_alive(h) then
      -- a dead holder: take the lock over (remove only the file we judged; a racing taker that
      -- already replaced it keeps it, because the link below then fails)
      if lockfile.holder(path) and lockfile.holder(path).pid == h.pid then os.remove(path) end
      ok = util.sh_ok(link)
    end
  end
  os.remove(tmp)
  if not ok then return nil, lockfile.holder(path) end
  return {
    path = path,
    release = function(self)
      local h = lockfile.holder(self.path)
      if h and h.pid == me.pid and h.host == me.host then os.remove(self.path) end
    end,
  }
end

-- Acquire, waiting while a live holder has it. opts.done(): checked before each try; when it
-- returns true the wait ends without the lock (the holder finished the work) and wait returns
-- nil. opts.poll_s: seconds between tries (default 15). opts.log(msg): told once per holder.
function lockfile.wait(path, opts)
  opts = opts or {}
  local told
  while true do
    if opts.done and opts.done() then return nil end
    local lock, h = lockfile.acquire(path)
    if lock then return lock end
    local who = describe(h)
    if opts.log and who ~= told then
      opts.log(("waiting: %s holds %s (remove the file if that process is gone)"):format(who, path))
      told = who
    end
    local ok, how = os.execute(("sleep %.3f"):format(opts.poll_s or 15))
    if not ok and how == "signal" then error("lockfile: interrupted while waiting for " .. path, 0) end
  end
end

return lockfile
