-- tests/lua/test_lockfile.lua -- attnlab.lockfile: one holder at a time, a live holder blocks,
-- a dead one (or a new process that reuses its pid) is taken over, another host's counts as
-- alive, and wait() ends when the work is done or the holder goes.
local T = require "harness"
local lockfile = require "attnlab.lockfile"

local DIR = T.tmpdir("lock")
local write = T.write_file

-- A background `sleep secs`: its pid (the sleep itself, exec'd by sh).
local function spawn_sleep(secs)
  local p = io.popen(("sh -c 'exec sleep %s' >/dev/null 2>&1 & echo $!"):format(secs))
  local pid = tonumber(p:read("l"))
  p:close()
  return pid
end

local function start_of(pid)
  local s = T.read_file("/proc/" .. pid .. "/stat")
  local f = {}
  for x in s:sub(s:match("^.*()%)") + 2):gmatch("%S+") do f[#f + 1] = x end   -- after the name's last ")"
  return f[20]
end

local HOST = ((T.read_file("/proc/sys/kernel/hostname") or "localhost"):gsub("%s+", ""))

return {
  { name = "release removes only its own lock: one taken over meanwhile (judged dead) stays", fn = function()
    local path = DIR .. "/over.lock"
    local lock = lockfile.acquire(path)
    T.truthy(lock, "acquire")
    write(path, "otherhost 4242 99\n")            -- another process's lock in its place
    lock:release()
    T.eq((lockfile.holder(path) or {}).host, "otherhost", nil, "the new holder's lock is left ")
    -- so is one of a process on another host that happens to have this pid
    os.remove(path)
    lock = lockfile.acquire(path)
    write(path, ("otherhost %d 99\n"):format(lockfile.self().pid))
    lock:release()
    T.eq((lockfile.holder(path) or {}).host, "otherhost", nil, "same pid, other host ")
    os.remove(path)
  end },
  { name = "acquire: one holder at a time; the file names it; release removes it", fn = function()
    local path = DIR .. "/a.lock"
    local me = lockfile.self()
    T.truthy(me.pid and me.start, "this process has a pid and a start time")
    local lock = lockfile.acquire(path)
    T.truthy(lock, "first acquire")
    local h = lockfile.holder(path)
    T.eq({ h.host, h.pid, h.start }, { me.host, me.pid, me.start })
    -- this process is alive: a second acquire (as if by another driver) is refused
    local again, holder = lockfile.acquire(path)
    T.eq(again, nil)
    T.eq(holder.pid, me.pid)
    lock:release()
    T.eq(T.read_file(path), nil, 0, "released")
    T.eq(#T.sh("ls " .. DIR .. " | grep tmp || true"), 0, 0, "no temporary file left")
  end },
  { name = "a live holder blocks; a dead one, a reused pid and an exited process are taken over", fn = function()
    local path = DIR .. "/b.lock"
    local pid = spawn_sleep(30)
    write(path, ("%s %d %s\n"):format(HOST, pid, start_of(pid)))
    local lock, h = lockfile.acquire(path)
    T.eq(lock, nil, 0, "live holder")
    T.eq(h.pid, pid)
    -- the same pid with another start time is another process: the holder is gone
    write(path, ("%s %d %s\n"):format(HOST, pid, tostring(tonumber(start_of(pid)) + 1)))
    lock = lockfile.acquire(path)
    T.truthy(lock, "a reused pid does not keep the lock")
    lock:release()
    -- a holder that exited
    write(path, ("%s %d %s\n"):format(HOST, pid, start_of(pid)))
    os.execute("kill " .. pid .. "; sleep 0.2")
    lock = lockfile.acquire(path)
    T.truthy(lock, "an exited holder's lock is taken over")
    T.eq(lockfile.holder(path).pid, lockfile.self().pid)
    lock:release()
  end },
  { name = "another host's holder counts as alive; the message names it", fn = function()
    local path = DIR .. "/c.lock"
    write(path, "node-elsewhere 1 1\n")
    local lock, h = lockfile.acquire(path)
    T.eq(lock, nil)
    T.eq(lockfile.describe(h), "pid 1 on node-elsewhere")
    local said = {}
    -- wait() returns nil as soon as the work is found done
    local n = 0
    T.eq(lockfile.wait(path, { poll_s = 0.05, log = function(m) said[#said + 1] = m end,
                               done = function() n = n + 1 return n > 2 end }), nil)
    T.eq(#said, 1, 0, "told once")
    T.truthy(said[1]:find("pid 1 on node-elsewhere holds " .. path, 1, true), said[1])
    T.eq(lockfile.holder(path).host, "node-elsewhere", 0, "not taken over")
  end },
  { name = "wait: gets the lock once the live holder exits", fn = function()
    local path = DIR .. "/d.lock"
    local pid = spawn_sleep(0.5)
    write(path, ("%s %d %s\n"):format(HOST, pid, start_of(pid)))
    local lock = lockfile.wait(path, { poll_s = 0.1 })
    T.truthy(lock, "acquired after the holder exited")
    T.eq(lockfile.holder(path).pid, lockfile.self().pid)
    lock:release()
  end },
  -- `ln tmp folder` linked inside the folder and succeeded: two processes both held the lock
  { name = "a lock path that is a folder or a FIFO is refused in one line, nothing left behind", fn = function()
    local path = DIR .. "/e.lock"
    os.execute("mkdir " .. T.shquote(path))
    for _ = 1, 2 do
      local e = T.raises(function() lockfile.acquire(path) end,
        "lockfile: " .. path .. " is a directory, not a lock file; remove it or give another lock path")
      T.truthy(not e:find("\n"), "one line")
    end
    T.eq(T.sh("ls -A " .. T.shquote(path)), "", 0, "nothing linked into the folder")
    T.eq(T.sh("ls " .. DIR .. " | grep tmp || true"), "", 0, "no temporary file left")
    os.execute("rmdir " .. T.shquote(path) .. " && mkfifo " .. T.shquote(path))
    T.raises(function() lockfile.acquire(path) end, path .. " is a FIFO, not a lock file")
    os.remove(path)
  end },
  { name = "(cleanup)", fn = function()
    T.rm_rf(DIR)
  end },
}
