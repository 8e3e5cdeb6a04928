-- attnlab.s2s.strategies -- which blocks to replace: the study's strategies and one it
-- did not try.
--   uniform        every layer
--   groupwise      one of three equal groups: shallow / middle / deep (size floor(L/3);
--                  with L % 3 ~= 0 the middle group is centred and layers between groups
--                  are left out, so the three groups always have the same size)
--   layer_aware    the k deepest layers (default k = 3)
--   sparsest       the k layers with the sparsest attention in a measured profile
--                  (lowest mean effective support k90/N by default; ties: deeper first)
local S = {}
local show = require("attnlab.util").show   -- a NaN k shows as "nan", not "-nan"

function S.uniform(depth)
  local out = {}
  for l = 1, depth do out[l] = l end
  return out
end

S.GROUPS = { "shallow", "middle", "deep" }

function S.groupwise(depth, group)
  local g = math.floor(depth / 3)
  if g < 1 then error(("s2s strategy groupwise: depth %d is too shallow for three groups"):format(depth), 2) end
  local start
  if group == "shallow" or group == 1 then start = 1
  elseif group == "deep" or group == 3 then start = depth - g + 1
  elseif group == "middle" or group == 2 then start = (depth - g) // 2 + 1
  else error(("s2s strategy groupwise: group must be shallow, middle or deep, got %s"):format(tostring(group)), 2) end
  local out = {}
  for i = 0, g - 1 do out[#out + 1] = start + i end
  return out
end

function S.layer_aware(depth, k)
  k = k or 3
  if math.type(k) ~= "integer" or k < 1 or k > depth then
    error(("s2s strategy layer_aware: k must be in 1..%d, got %s"):format(depth, show(k)), 2)
  end
  local out = {}
  for l = depth - k + 1, depth do out[#out + 1] = l end
  return out
end

-- prof: a profile (s2s.profile, s2s/profile.lua) or its JSON decode; metric: a key of
-- layers[l].mean (default "k90_frac"; lower = sparser; for "top1_mass" higher = sparser).
function S.sparsest(prof, k, metric)
  k = k or 3
  metric = metric or "k90_frac"
  local higher_is_sparser = metric:match("^top%d+_mass$") ~= nil
  -- any JSON can be named as the profile: one that is not one says so
  if type(prof) ~= "table" or type(prof.layers) ~= "table" then
    error("s2s strategy sparsest: not a sparsity profile (no 'layers' list; scripts/profile.lua writes one)", 2)
  end
  local cand = {}
  for l, r in ipairs(prof.layers) do
    if type(r) == "table" and type(r.mean) == "table" and type(r.mean[metric]) == "number" and r.mean[metric] == r.mean[metric] then
      cand[#cand + 1] = { l = l, v = r.mean[metric] }
    end
  end
  if #cand == 0 then error(("s2s strategy sparsest: the profile has no layer with '%s'"):format(metric), 2) end
  if math.type(k) ~= "integer" or k < 1 or k > #cand then
    error(("s2s strategy sparsest: k must be in 1..%d (layers with attention), got %s"):format(#cand, show(k)), 2)
  end
  table.sort(cand, function(a, b)
    if a.v ~= b.v then
      if higher_is_sparser then return a.v > b.v end
      return a.v < b.v
    end
    return a.l > b.l
  end)
  local out = {}
  for i = 1, k do out[i] = cand[i].l end
  table.sort(out)
  return out
end

-- A strategy name read: its base and argument (the group, or k, 3 when not given; nil for
-- uniform), or nil and why. An argument that is not a number ("layer_aware:abc") is an error,
-- not the default k: the record would otherwise be named after it and hold another strategy.
-- The group's and k's ranges are checked where the depth is known (S.groupwise, S.layer_aware).
function S.parse(name)
  local base, argu = tostring(name):match("^([%w_]+):?(.*)$")
  if base == "uniform" then
    if argu ~= "" then return nil, ("s2s strategy uniform takes no argument, got '%s'"):format(tostring(name)) end
    return base
  end
  if base == "groupwise" then return base, argu ~= "" and argu or "deep" end
  if base == "layer_aware" or base == "sparsest" then
    if argu == "" then return base, 3 end
    local k = math.tointeger(tonumber(argu))
    if not k then return nil, ("s2s strategy %s: k must be a positive integer, got '%s'"):format(base, argu) end
    return base, k
  end
  return nil, ("s2s: unknown strategy '%s'; valid: uniform, groupwise:shallow|middle|deep, layer_aware[:k], sparsest[:k]")
    :format(tostring(name))
end

-- S.select("uniform" | "groupwise:<group>" | "layer_aware[:k]" | "sparsest[:k]", depth, profile)
function S.select(name, depth, prof)
  local base, arg_or_why = S.parse(name)
  if not base then error(arg_or_why, 2) end
  if base == "uniform" then return S.uniform(depth) end
  if base == "groupwise" then return S.groupwise(depth, arg_or_why) end
  if base == "layer_aware" then return S.layer_aware(depth, arg_or_why) end
  if not prof then error("s2s strategy sparsest: needs a sparsity profile (scripts/profile.lua --out ...)", 2) end
  return S.sparsest(prof, arg_or_why)
end

return S
