-- tests/lua/minijson.lua -- a small JSON decoder for the Lua tests, so that they can read
-- tests/ref/*.json without the C binding. Pure Lua 5.4.
--
-- decode(s) -> value. Objects become tables with string keys, arrays become sequences
-- (1-based), null becomes minijson.null (a sentinel, so arrays keep their length), numbers
-- go through tonumber (correctly rounded). Python's json writes NaN, Infinity and
-- -Infinity for non-finite floats; those are accepted too. Errors name the byte offset.
local M = {}

M.null = setmetatable({}, { __tostring = function() return "null" end })

local ESC = { ['"'] = '"', ["\\"] = "\\", ["/"] = "/", b = "\b", f = "\f", n = "\n",
              r = "\r", t = "\t" }

local function fail(s, i, what)
  error(("minijson: %s at byte %d near '%s'"):format(what, i, s:sub(i, i + 20)), 0)
end

local function skip(s, i)
  return s:find("[^ \t\r\n]", i) or #s + 1
end

local parse

local function parse_string(s, i)            -- s:sub(i, i) == '"'
  local out, j = {}, i + 1
  while true do
    local k = s:find('["\\]', j)
    if not k then fail(s, i, "unterminated string") end
    out[#out + 1] = s:sub(j, k - 1)
    if s:sub(k, k) == '"' then return table.concat(out), k + 1 end
    local c = s:sub(k + 1, k + 1)
    if ESC[c] then
      out[#out + 1] = ESC[c]
      j = k + 2
    elseif c == "u" then
      local hex = s:match("^%x%x%x%x", k + 2)
      if not hex then fail(s, k, "bad \\u escape") end
      local cp = tonumber(hex, 16)
      j = k + 6
      if cp >= 0xD800 and cp <= 0xDBFF then   -- surrogate pair
        local lo = s:match("^\\u(%x%x%x%x)", j)
        if lo then
          cp = 0x10000 + (cp - 0xD800) * 0x400 + (tonumber(lo, 16) - 0xDC00)
          j = j + 6
        end
      end
      out[#out + 1] = utf8.char(cp)
    else
      fail(s, k, "bad escape")
    end
  end
end

local LITERALS = { ["true"] = true, ["false"] = false, NaN = -(0.0 / 0.0),
                   Infinity = math.huge, ["-Infinity"] = -math.huge }

parse = function(s, i)
  i = skip(s, i)
  local c = s:sub(i, i)
  if c == "{" then
    local obj = {}
    i = skip(s, i + 1)
    if s:sub(i, i) == "}" then return obj, i + 1 end
    while true do
      if s:sub(i, i) ~= '"' then fail(s, i, "expected a string key") end
      local key
      key, i = parse_string(s, i)
      i = skip(s, i)
      if s:sub(i, i) ~= ":" then fail(s, i, "expected ':'") end
      obj[key], i = parse(s, i + 1)
      i = skip(s, i)
      local d = s:sub(i, i)
      if d == "}" then return obj, i + 1 end
      if d ~= "," then fail(s, i, "expected ',' or '}'") end
      i = skip(s, i + 1)
    end
  elseif c == "[" then
    local arr, n = {}, 0
    i = skip(s, i + 1)
    if s:sub(i, i) == "]" then return arr, i + 1 end
    while true do
      n = n + 1
      arr[n], i = parse(s, i)
      i = skip(s, i)
      local d = s:sub(i, i)
      if d == "]" then return arr, i + 1 end
      if d ~= "," then fail(s, i, "expected ',' or ']'") end
      i = i + 1
    end
  elseif c == '"' then
    return parse_string(s, i)
  elseif c == "n" and s:sub(i, i + 3) == "null" then
    return M.null, i + 4
  end
  for lit, v in pairs(LITERALS) do
    if s:sub(i, i + #lit - 1) == lit then return v, i + #lit end
  end
  local num = s:match("^-?%d+%.?%d*[eE]?[-+]?%d*", i)
  local v = num and tonumber(num)
  if not v then fail(s, i, "unexpected character") end
  return v, i + #num
end

function M.decode(s)
  if type(s) ~= "string" then error("minijson.decode: want a string, got " .. type(s), 2) end
  local v, i = parse(s, 1)
  i = skip(s, i)
  if i <= #s then fail(s, i, "trailing characters") end
  return v
end

function M.read_file(path)
  local fh, err = io.open(path, "rb")
  if not fh then error("minijson.read_file: " .. tostring(err), 2) end
  local s = fh:read("a")
  fh:close()
  return M.decode(s)
end

return M
