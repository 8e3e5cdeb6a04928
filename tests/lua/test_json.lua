-- tests/lua/test_json.lua -- al.json: exact round trips (integers vs floats, 64-bit
-- integers, shortest float text), arrays vs objects, unicode, al.json.null, NaN -> null,
-- sorted keys, pretty printing, and decode errors with line/column.
local al = require "attnlab"
local T = require "harness"
local J = al.json

local cases, case = T.suite()

-- deep equality that also compares math.type of numbers and treats al.json.null as a value
local function same(a, b, path)
  path = path or "value"
  if type(a) ~= type(b) then error(("%s: %s vs %s"):format(path, type(a), type(b)), 0) end
  if type(a) == "number" then
    if math.type(a) ~= math.type(b) then error(("%s: %s %s vs %s %s"):format(path, math.type(a), a, math.type(b), b), 0) end
    if a ~= b and not (a ~= a and b ~= b) then error(("%s: %s vs %s"):format(path, a, b), 0) end
    if a == 0 and b == 0 and 1 / a ~= 1 / b then error(path .. ": signed zero differs", 0) end
  elseif type(a) == "table" then
    for k, v in pairs(a) do same(v, b[k], path .. "." .. tostring(k)) end
    for k in pairs(b) do if a[k] == nil then error(path .. ": extra key " .. tostring(k), 0) end end
  elseif a ~= b then
    error(("%s: %s vs %s"):format(path, tostring(a), tostring(b)), 0)
  end
end

case("round trip: nested tables, arrays and objects", function()
  local v = {
    name = "run-7", seeds = { 1, 2, 3 }, cfg = { lr = 0.001, wd = 0.05, nested = { deep = { true, false } } },
    matrix = { { 1, 2 }, { 3, 4 } }, empty_obj = {}, flag = false,
  }
  local s = J.encode(v)
  same(J.decode(s), v)
  same(J.decode(J.encode(J.decode(s))), v)
end)

case("integers stay integers, floats stay floats", function()
  local v = { 1, 1.0, -0.0, 0, 2 ^ 53, 2 ^ 53 + 1.0, math.maxinteger, math.mininteger, 123456789012345678, 0.1, 1e-300, 1e300, -2.5e-7 }
  local s = J.encode(v)
  T.eq(s, "[1,1.0,-0.0,0,9007199254740992.0,9007199254740992.0,9223372036854775807,-9223372036854775808,123456789012345678,0.1,1e-300,1e+300,-2.5e-07]")
  same(J.decode(s), v)
  T.eq(math.type(J.decode("3")), "integer")
  T.eq(math.type(J.decode("3.0")), "float")
  T.eq(math.type(J.decode("3e0")), "float")
  T.eq(J.decode("-0"), 0)
  T.eq(J.decode("9223372036854775807"), math.maxinteger)
  T.eq(math.type(J.decode("9223372036854775808")), "float")   -- beyond int64: a float
end)

case("floats use the shortest text that reads back bit-identically", function()
  for _, x in ipairs { 0.1, 1 / 3, 2 / 3, math.pi, 1e-310, 5e-324, 1.7976931348623157e308, 123.456, 0.30000000000000004 } do
    local s = J.encode(x)
    local y = J.decode(s)
    T.eq(string.format("%a", y), string.format("%a", x), 0, s .. ": ")
  end
  T.eq(J.encode(0.1), "0.1")
  T.eq(J.encode(1 / 3), "0.3333333333333333")
  T.eq(J.encode(0.30000000000000004), "0.30000000000000004")
end)

case("float32 values survive (tensor contents written as JSON)", function()
  local t = al.randn({ 50 }, al.Generator(3))
  local back = al.tensor(J.decode(J.encode(t:totable())))
  for i, v in ipairs(t:totable()) do T.eq(string.format("%a", back:totable()[i]), string.format("%a", v)) end
end)

case("NaN and infinities encode as null", function()
  T.eq(J.encode({ 0 / 0, 1 / 0, -1 / 0, 1 }), "[null,null,null,1]")
  T.eq(J.encode(0 / 0), "null")
  local d = J.decode("[null,1]")
  T.eq(d[1], J.null)
  T.eq(#d, 2)
end)

case("al.json.null round trips in arrays and objects", function()
  local v = { a = J.null, b = { 1, J.null, 3 } }
  local s = J.encode(v)
  T.eq(s, '{"a":null,"b":[1,null,3]}')
  local d = J.decode(s)
  T.eq(d.a, J.null)
  T.eq(d.b[2], J.null)
  T.eq(#d.b, 3)
  T.eq(J.decode("null"), J.null)
end)

case("object keys are sorted; number keys become strings", function()
  T.eq(J.encode({ b = 1, a = 2, c = { z = 1, y = 2 }, B = 0, ["10"] = 1, ["9"] = 2 }),
    '{"10":1,"9":2,"B":0,"a":2,"b":1,"c":{"y":2,"z":1}}')
  T.eq(J.encode({ [1] = "a", [3] = "c" }), '{"1":"a","3":"c"}')   -- a hole: an object
  T.eq(J.encode({ [2.5] = 1 }), '{"2.5":1}')
  T.eq(J.encode({ [-1] = 1, [0] = 2 }), '{"-1":1,"0":2}')
  -- the same table always gives the same text
  local big = {}
  for i = 1, 200 do big["k" .. i] = i end
  T.eq(J.encode(big), J.encode(big))
  T.raises(function() J.encode({ [1] = 1, ["1"] = 2, x = 3 }) end, "both encode")
end)

case("arrays vs objects: keys 1..n are arrays; {} is an object unless marked", function()
  T.eq(J.encode({ 1, 2, 3 }), "[1,2,3]")
  T.eq(J.encode({}), "{}")
  T.eq(J.encode(J.array()), "[]")
  T.eq(J.encode({ list = J.array({}) }), '{"list":[]}')
  T.eq(J.encode(J.array({ 1, 2 })), "[1,2]")
  T.eq(J.encode(J.decode("[]")), "[]")       -- decoded empty arrays stay arrays
  T.eq(J.encode(J.decode('{"a":[],"b":{}}')), '{"a":[],"b":{}}')
  T.eq(J.encode({ [1] = 1, [2] = 2, x = 3 }), '{"1":1,"2":2,"x":3}')
  T.raises(function() J.array(setmetatable({}, {})) end, "metatable")
end)

case("strings: escapes, control characters, unicode", function()
  local s = 'quote " backslash \\ slash / newline \n tab \t cr \r bell \a nul \0 end'
  local e = J.encode(s)
  T.eq(e, '"quote \\" backslash \\\\ slash / newline \\n tab \\t cr \\r bell \\u0007 nul \\u0000 end"')
  T.eq(J.decode(e), s)
  local u = "héllo wörld — 日本語 😀"
  T.eq(J.encode(u), '"' .. u .. '"')          -- UTF-8 passes through unescaped
  T.eq(J.decode(J.encode(u)), u)
  T.eq(J.decode('"\\u00e9\\u65e5\\ud83d\\ude00\\/"'), "é日😀/")
  T.eq(J.decode('"\\u0041\\n"'), "A\n")
  T.eq(J.encode({ ["ключ"] = "значение" }), '{"ключ":"значение"}')
end)

-- UTF-8 lengths switch at U+0080, U+0800 and U+10000; the bytes are RFC 3629's table, written
-- out by hand (U+0800 = 0000 1000 0000 0000 -> 1110 0000, 10 100000, 10 000000 = E0 A0 80)
case("\\u escapes at the UTF-8 length boundaries; upper-case hex; U+10FFFF from its surrogate pair", function()
  local want = {
    { "\\u007f", "\x7f" }, { "\\u0080", "\xc2\x80" }, { "\\u07ff", "\xdf\xbf" }, { "\\u0800", "\xe0\xa0\x80" },
    { "\\u0fff", "\xe0\xbf\xbf" }, { "\\uffff", "\xef\xbf\xbf" }, { "\\ud800\\udc00", "\xf0\x90\x80\x80" },
    { "\\udbff\\udfff", "\xf4\x8f\xbf\xbf" }, { "\\u00ff", "\xc3\xbf" }, { "\\u00C9\\u00c9", "\xc3\x89\xc3\x89" },
    { "\\uABCD", "\xea\xaf\x8d" },
  }
  for _, w in ipairs(want) do
    local got = J.decode('"' .. w[1] .. '"')
    T.eq(got:gsub(".", function(c) return ("%02x"):format(c:byte()) end), w[2]:gsub(".", function(c) return ("%02x"):format(c:byte()) end), w[1] .. ": ")
    T.eq(J.decode(J.encode(got)), got, w[1] .. " round trip: ")
  end
  -- a surrogate half on its own, or a high one followed by what is not a low one, names it
  T.raises(function() J.decode('"\\udfff"') end, "unpaired low surrogate")
  T.raises(function() J.decode('"\\ud83d\\ue000"') end, "unpaired high surrogate")
  T.raises(function() J.decode('"\\ud83d\\ud83d"') end, "unpaired high surrogate")
end)

-- what is not UTF-8 is refused both ways: a lone continuation byte, a code point above U+10FFFF
-- (F4 90 80 80 would be U+110000), a UTF-16 surrogate written in UTF-8 (ED A0 80 = U+D800)
case("invalid UTF-8 is refused in both directions: a lone 0x80, U+110000, an encoded surrogate", function()
  for _, b in ipairs({ "\x80", "a\x80b", "\xf4\x90\x80\x80", "\xed\xa0\x80", "\xed\xbf\xbf" }) do
    T.raises(function() J.decode('"' .. b .. '"') end, "invalid UTF-8")
    T.raises(function() J.encode(b) end, "not valid UTF-8")
  end
  -- their neighbours are valid: U+10FFFF (F4 8F BF BF), U+D7FF (ED 9F BF), U+E000 (EE 80 80)
  for _, b in ipairs({ "\xf4\x8f\xbf\xbf", "\xed\x9f\xbf", "\xee\x80\x80", "\xc2\x80" }) do
    T.eq(J.decode(J.encode(b)), b)
  end
end)

-- every byte below 0x20 is escaped (RFC 8259 section 7): 0x1f is the last of them, 0x20 is not
case("control characters up to 0x1f are escaped, 0x20 is a space", function()
  T.eq(J.encode("\x1f\x1e\x0b\x20"), '"\\u001f\\u001e\\u000b "')
  T.eq(J.encode("\x7f"), '"\x7f"')
end)

-- the shortest text: %.15g already reads back for these, where %.16g would not be the shortest
-- (1e23 is 9.999999999999999e+22 at 16 digits; the smallest subnormal reads back from 15)
case("floats: the 15-digit text when it reads back (1e23, the smallest subnormal)", function()
  T.eq(J.encode(1e23), "1e+23")
  T.eq(J.encode(5e-324), "4.94065645841247e-324")
  T.eq(J.encode(1e-310), "9.99999999999997e-311")
  T.eq(J.decode(J.encode(1e-310)), 1e-310)
end)

-- keys that are prefixes of one another: byte order puts the shorter first (a record's
-- test_accuracy before test_accuracy_exact), whatever the table's internal order
case("object keys that are prefixes of one another: the shorter first", function()
  T.eq(J.encode({ test_accuracy_exact = 1, test_accuracy = 2, test = 3, ["test_accuracy\0"] = 4 }),
    '{"test":3,"test_accuracy":2,"test_accuracy\\u0000":4,"test_accuracy_exact":1}')
  local t = {}
  for i = 12, 1, -1 do t[("k"):rep(i)] = i end
  local want = {}
  for i = 1, 12 do want[i] = ('"%s":%d'):format(("k"):rep(i), i) end
  T.eq(J.encode(t), "{" .. table.concat(want, ",") .. "}")
end)

case("literals and whitespace", function()
  T.eq(J.decode(" \n\t true \r\n"), true)
  T.eq(J.decode("false"), false)
  same(J.decode(' { "a" : [ 1 , 2 ] , "b" : { } } '), { a = { 1, 2 }, b = {} })
  T.eq(J.encode(true), "true")
  T.eq(J.encode(nil), "null")
  T.eq(J.encode("x"), '"x"')
  T.eq(J.encode(-7), "-7")
  T.eq(J.decode('""'), "")
  T.eq(J.decode('{"":1}')[""], 1)
  -- a repeated key was decoded with the last value kept, silently: refused, naming the key
  T.raises(function() J.decode('{"a":1,"a":2}') end, 'duplicate object key "a" at line 1, column 8')
  T.raises(function() J.decode('{"x":{"b":1,\n "b":[]}}') end, 'duplicate object key "b" at line 2, column 2')
  same(J.decode('{"a":{"a":1},"b":{"a":2}}'), { a = { a = 1 }, b = { a = 2 } })   -- one key per object
end)

case("pretty printing: two-space indentation, sorted keys", function()
  local s = J.encode({ b = { 1, 2 }, a = { x = true }, e = {} }, true)
  T.eq(s, '{\n  "a": {\n    "x": true\n  },\n  "b": [\n    1,\n    2\n  ],\n  "e": {}\n}')
  same(J.decode(s), { b = { 1, 2 }, a = { x = true }, e = {} })
end)

case("deep nesting: 400 levels round trip; far deeper is an error, not a crash", function()
  local v = 1
  for _ = 1, 400 do v = { v } end
  local s = J.encode(v)
  local d = J.decode(s)
  for _ = 1, 400 do d = d[1] end
  T.eq(d, 1)
  T.raises(function() J.decode(string.rep("[", 100000)) end, "too deep")
  local w = {}
  local cur = w
  for _ = 1, 1000 do cur[1] = {}; cur = cur[1] end
  T.raises(function() J.encode(w) end, "nested too deep")
end)

-- decode accepted 501 levels of arrays, encode refused more than 500: a file decode read could
-- not be written back
case("nesting limit: 500 objects and arrays both ways, 501 refused both ways", function()
  local function text(n) return string.rep("[", n) .. "1" .. string.rep("]", n) end
  local function value(n) local v = 1; for _ = 1, n do v = { v } end; return v end
  T.eq(J.encode(J.decode(text(500))), text(500))
  T.eq(J.encode(value(500)), text(500))
  T.raises(function() J.decode(text(501)) end, "nested too deep (more than 500 objects and arrays) at line 1, column 501")
  T.raises(function() J.decode(string.rep("[", 501) .. string.rep("]", 501)) end, "nested too deep")
  T.raises(function() J.decode(string.rep('{"a":', 501) .. "1" .. string.rep("}", 501)) end, "nested too deep")
  T.raises(function() J.encode(value(501)) end, "nested too deep (more than 500 objects and arrays)")
end)

-- 1e999 decoded to inf, which encode writes as null: the value was lost without a word
case("numbers beyond the double range are refused, naming them; an underflow rounds", function()
  T.raises(function() J.decode("1e999") end, "number 1e999 is out of the double range at line 1, column 1")
  T.raises(function() J.decode('{"lr": -2.5E+400}') end, "number -2.5E+400 is out of the double range at line 1, column 8")
  T.raises(function() J.decode(string.rep("9", 400)) end, "number " .. string.rep("9", 40) .. "... is out of the double range")
  T.eq(J.decode("1e-999"), 0.0)
  T.eq(J.decode("1.7976931348623157e308"), 1.7976931348623157e308)
  T.eq(J.decode(string.rep("9", 30)), 1e30)     -- beyond 64 bits, within the double range: a float
end)

case("a repeated (non-cyclic) subtable encodes twice", function()
  local shared = { 1, 2 }
  T.eq(J.encode({ a = shared, b = shared }), '{"a":[1,2],"b":[1,2]}')
end)

case("decode errors name the line and column", function()
  local bad = {
    { "", "line 1, column 1" },
    { "[1,]", "line 1, column 4" },
    { '{"a" 1}', "expected ':'" },
    { '{"a":1,}', "expected a string key" },
    { "[1 2]", "expected ',' or ']'" },
    { '{"a":1 "b":2}', "expected ',' or '}'" },
    { "01", "trailing" },
    { "1.", "digits must follow '.'" },
    { "1e", "exponent" },
    { "-", "invalid number" },
    { "+1", "unexpected character" },
    { "nul", "unexpected character" },
    { "NaN", "unexpected character" },
    { "'a'", "unexpected character" },
    { '"abc', "unterminated string" },
    { '"a\nb"', "control character" },
    { '"\\x"', "bad escape" },
    { '"\\u12"', "\\u escape" },
    { '"\\ud800"', "unpaired high surrogate" },
    { '"\\udc00"', "unpaired low surrogate" },
    { '"\xff"', "invalid UTF-8" },
    { '"\xc0\xaf"', "invalid UTF-8" },       -- overlong
    { "[1]\n\n   x", "line 3, column 4" },
  }
  for _, b in ipairs(bad) do T.raises(function() J.decode(b[1]) end, b[2]) end
end)

case("encode errors", function()
  T.raises(function() J.encode({ f = print }) end, "cannot encode a function")
  T.raises(function() J.encode(al.ones { 2 }) end, "cannot encode a userdata")
  local t = {}
  t.self = t
  T.raises(function() J.encode(t) end, "cycle")
  T.raises(function() J.encode({ [true] = 1 }) end, "keys must be strings or numbers")
  T.raises(function() J.encode("\xc3") end, "UTF-8")
end)

return cases
