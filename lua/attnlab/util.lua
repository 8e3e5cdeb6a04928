-- attnlab.util -- the small table, file and shell helpers the library's modules share (fit
-- loop, sweeps, reports, parity runs, S2S records): plain Lua and POSIX sh, no tensors.
local util = {}

-- The keys of options table t that known does not list (known: a list of names, or a set
-- whose keys are the names), as one message fragment "unknown option 'x' (known: a, b)", or
-- nil when every key is known. Every options check of the library words it so: a misspelt
-- key (weigth_decay, splt) would otherwise be ignored and a default silently used.
function util.unknown_keys(t, known)
  local set, names = {}, {}
  if known[1] ~= nil then
    for _, k in ipairs(known) do set[k] = true end
  else
    for k in pairs(known) do set[k] = true end
  end
  for k in pairs(set) do names[#names + 1] = k end
  table.sort(names)
  local bad = {}
  for k in pairs(t) do if not set[k] then bad[#bad + 1] = "'" .. tostring(k) .. "'" end end
  if #bad == 0 then return nil end
  table.sort(bad)
  return ("unknown option%s %s (known: %s)"):format(#bad > 1 and "s" or "", table.concat(bad, ", "),
    table.concat(names, ", "))
end

-- A list of names for an error line: the first `max` (default 5) and "and N more", so a file
-- with thousands of missing or unexpected keys still gives one short line.
function util.key_list(list, sep, max)
  max = max or 5
  sep = sep or ", "
  if #list <= max then return table.concat(list, sep) end
  local t = {}
  for i = 1, max do t[i] = list[i] end
  return ("%s%sand %d more"):format(table.concat(t, sep), sep, #list - max)
end

-- A value as an error message shows it: strings quoted, NaN as "nan" (tostring gives "-nan" for
-- 0/0 on x86), tables by type, a tensor by dtype and shape ("a float32 tensor (2,5)": its
-- tostring is the whole printout, many lines in a one-line message). (al.cli.show is this
-- function.)
function util.show(v)
  if type(v) == "string" then return ("'%s'"):format(v) end
  if type(v) == "number" and v ~= v then return "nan" end
  if type(v) == "table" then return "a table" end
  local al = type(v) == "userdata" and package.loaded.attnlab
  if al and al.is_tensor(v) then
    return ("a %s tensor (%s)"):format(v:dtype(), table.concat(v:shape(), ","))
  end
  return tostring(v)
end

-- A method that takes no argument, given one: PyTorch's step(closure), zero_grad(False) and
-- scheduler.step(epoch) take theirs, and here it would be ignored without a word (the closure
-- never run, the gradients set to nil all the same). Raises "<who> takes no argument, got
-- <shown>: <why>" at `level` as error() counts it from the function that calls this one.
local NO_ARGUMENT_BECAUSE = {
  step = "a closure is not run (PyTorch's step(closure)): compute the loss and call loss:backward() before opt:step()",
  zero_grad = "it sets every gradient to nil, as PyTorch's zero_grad(set_to_none=True) does; there is no other mode",
  schedule_step = "it advances the schedule one step; CosineWarmup:lr_at(t) gives the lr at step t",
}
function util.no_argument(who, why, shown, level)
  error(("%s takes no argument, got %s: %s"):format(who, shown, NO_ARGUMENT_BECAUSE[why]), level + 1)
end

-- A finite number (not NaN, not +-inf).
function util.finite(x) return type(x) == "number" and x == x and x > -math.huge and x < math.huge end

-- A JSON list in the strict sense: keys 1..n and nothing else (ipairs would silently skip the
-- rest, or stop at a hole); an empty table is one. A JSON object: a table that is not a
-- non-empty list ({} is both).
function util.is_list(v)
  if type(v) ~= "table" then return false end
  local n = 0
  for k in pairs(v) do
    if math.type(k) ~= "integer" or k < 1 then return false end
    n = n + 1
  end
  return n == #v
end
function util.is_object(v) return type(v) == "table" and (next(v) == nil or not util.is_list(v)) end

-- A shallow copy of t (nil gives {}).
function util.copy(t)
  local o = {}
  for k, v in pairs(t or {}) do o[k] = v end
  return o
end

-- A shallow copy of a with b's keys over it.
function util.merge(a, b)
  local o = util.copy(a)
  for k, v in pairs(b or {}) do o[k] = v end
  return o
end

-- b over a, the one rule for an experiment's `quick` table (sweeps and S2S presets alike):
-- a table that is not a list merges key by key, recursively; a list, a scalar or an empty
-- table replaces.
function util.deep_merge(a, b)
  local o = {}
  for k, v in pairs(a or {}) do o[k] = v end
  for k, v in pairs(b or {}) do
    if type(v) == "table" and type(o[k]) == "table" and #v == 0 and next(v) ~= nil then o[k] = util.deep_merge(o[k], v)
    else o[k] = v end
  end
  return o
end

-- The keys of t, sorted by their text.
function util.sorted_keys(t)
  local k = {}
  for x in pairs(t) do k[#k + 1] = x end
  table.sort(k, function(a, b) return tostring(a) < tostring(b) end)
  return k
end

-- The median of a list of numbers (the mean of the middle two for an even count); nil for none.
function util.median(xs)
  if #xs == 0 then return nil end
  local s = {}
  for i, v in ipairs(xs) do s[i] = v end
  table.sort(s)
  local n = #s
  return n % 2 == 1 and s[(n + 1) // 2] or 0.5 * (s[n // 2] + s[n // 2 + 1])
end

-- What is at path when it is there but is not a regular file ("a FIFO", "a directory", "a
-- character device", ...), else nil (a regular file, a link to one, or nothing there). The one
-- way the Lua side asks: it stats (al.file_kind, the binding's) and never opens, as io.open on a
-- FIFO waits for a writer forever and a read of /dev/zero never ends.
function util.not_regular(path) return require("attnlab.core").file_kind(path) end

-- Is something there that can be opened? A folder counts (as io.open on Linux opens one); any
-- other non-regular file too, without opening it (a FIFO would block here).
function util.file_exists(path)
  if util.not_regular(path) then return true end
  local f = io.open(path, "rb")
  if f then f:close() return true end
  return false
end

-- Can a file be written at path (as write_atomic writes it: a temporary file next to it, then a
-- rename)? true, or nil and why: something other than a regular file is there (a folder, or a
-- device or FIFO the rename would replace: /dev/null given as an output), or its folder is
-- missing or not writable. Never opens path itself (a FIFO would block); creates and removes a
-- probe file in its folder. For checking an output path before hours of work, not after.
function util.writable_path(path)
  local ok, why = require("attnlab.core").atomic_replaceable(path)
  if not ok then
    if why:match(" is a folder, not a file$") then return nil, "it is a folder" end
    local what = why:match(" is (.-), not a regular file")
    return nil, ("it is %s, not a regular file (the result would be renamed over it)"):format(what or "something")
  end
  local dir, base = path:match("^(.*)/([^/]*)$")
  if not dir then dir, base = ".", path elseif dir == "" then dir = "/" end
  local probe = ("%s/.%s.write-probe-%s"):format(dir, base, tostring({}):match("0x(%x+)") or "0")
  local g, err = io.open(probe, "wb")
  if not g then
    return nil, ("cannot create a file in %s: %s"):format(dir, (tostring(err):gsub("^.-: ", "")))
  end
  g:close()
  os.remove(probe)
  return true
end

-- An error value as a one-line message: tostring'd, without the "file.lua:N: " position that
-- error() adds (it means nothing to a user) and, when given, without a leading "prefix: " (a
-- function name the caller's own message replaces, e.g. "train" or "attnlab.json.decode").
function util.error_text(err, prefix)
  local msg = tostring(err):gsub("^[^%s:]+%.lua:%d+: ", "")
  if prefix then
    local escaped = prefix:gsub("%p", "%%%0")
    msg = msg:gsub("^" .. escaped .. ": ", "")
  end
  return msg
end

-- JSON text decoded: the value, or nil and the decoder's reason without its Lua position or
-- function name ("expected ',' or '}' at ..."), for messages that name the file or option.
function util.decode_json(text)
  local ok, v = pcall(require("attnlab").json.decode, text)
  if ok then return v end
  return nil, util.error_text(v, "attnlab.json.decode")
end

-- The whole file, or nil when it cannot be opened (nothing there, no permission). Anything there
-- that is not a regular file raises "<path> is a FIFO, not a regular file" (one line): a FIFO
-- would block the read forever, a device never end it, and a folder is no file's contents.
function util.read_file(path)
  local kind = util.not_regular(path)
  if kind then error(("%s is %s, not a regular file"):format(path, kind), 0) end
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

-- s single-quoted for sh, unless it is made only of characters sh leaves alone.
function util.shquote(s)
  s = tostring(s)
  if s ~= "" and s:match("^[%w%._/:=+,@%-]+$") then return s end
  return "'" .. s:gsub("'", "'\\''") .. "'"
end

-- true when the sh command exits 0.
function util.sh_ok(cmd)
  return os.execute(cmd) == true
end

function util.is_dir(d) return util.sh_ok("test -d " .. util.shquote(d)) end

-- Whether mkdir -p dir would succeed, without creating anything: dir is a folder already, or
-- its nearest existing ancestor is a folder that takes files (a file there, as in
-- a-file/sub, makes mkdir fail: the walk used to step over it). A check before any work, so
-- that a run refused for its inputs leaves no folder behind. Runs that share an output start
-- together and create it at the same moment: "absent or a folder" is one test, absence first,
-- so a folder that appears between two checks is not taken for a file in the way (it was:
-- s2s_strategies.lua refused an output its twin had just created).
function util.can_create_dir(dir)
  local q = util.shquote(dir)
  if not util.sh_ok("test ! -e " .. q .. " || test -d " .. q) then return false end   -- a file is there
  if util.is_dir(dir) then return true end
  local up = dir
  repeat up = up:match("^(.*)/[^/]*$") until up == nil or up == "" or util.sh_ok("test -e " .. util.shquote(up))
  up = (up == nil) and "." or (up == "" and "/" or up)
  return util.is_dir(up) and util.writable_path(up .. "/.attnlab-mkdir-probe") and true or false
end

-- Create a folder and its parents; false when that failed.
function util.mkdir_p(dir)
  return util.sh_ok("mkdir -p " .. util.shquote(dir) .. " 2>/dev/null")
end

-- Absolute path, with "." and ".." parts resolved lexically (no symlinks followed).
function util.abspath(p)
  if p:sub(1, 1) ~= "/" then
    local f = io.popen("pwd")
    local cwd = f:read("l")
    f:close()
    p = cwd .. "/" .. p
  end
  local parts = {}
  for part in p:gmatch("[^/]+") do
    if part == ".." then
      if #parts > 0 then parts[#parts] = nil end
    elseif part ~= "." then
      parts[#parts + 1] = part
    end
  end
  return "/" .. table.concat(parts, "/")
end

return util
