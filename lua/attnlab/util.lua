-- attnlab.util -- small table helpers the library's modules share (plain Lua, no tensors).
local util = {}

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

return util
