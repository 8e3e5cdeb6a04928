-- tests/lua/test_format.lua -- lua/attnlab/format.lua against PyTorch's own output
-- (tests/ref/format_ref.json, from tests/ref/gen_format_ref.py): on a fake tensor class
-- (nested Lua tables) so that it does not depend on the binding, then through the real
-- binding's tensors when they are there; options, footer, summarised reads, bad arguments.
-- Run: lua5.4 tests/lua/runner.lua tests/lua/test_format.lua   (or via bin/attnlab, as run.sh does)
local T = require "harness"
local F = require "host_fixtures"
local format = require "attnlab.format"

local REF = "tests/ref/format_ref.json"
local readfile = T.read_file
local json_decode, Fake, NONFINITE = F.json_decode, F.Fake, F.NONFINITE
local fake_from_case, same_text = F.fake_from_case, F.same_text

local cases, case = T.suite()

------------------------------------------------------------------------------------------
-- format.lua against PyTorch (one case per reference tensor)

local ref_text = readfile(REF)
local ref = ref_text and json_decode(ref_text)
if not ref then
  case("format: reference file " .. REF, function() error("missing " .. REF) end)
else
  for _, c in ipairs(ref.cases) do
    case("format vs torch " .. ref.torch .. ": " .. c.name, function()
      local got = format(fake_from_case(c), { footer = false })
      same_text(got, c.expected, c.name)
    end)
  end
end

------------------------------------------------------------------------------------------
-- format.lua: footer, options, summarised reads, argument errors

case("format: footer line names dtype and shape (2-D, 1-D, 0-dim, int64, empty)", function()
  local s = format(Fake.new({ 0.1234, -1, 2.5, 3 }, { 2, 2 }))
  same_text(s, "tensor([[ 0.1234, -1.0000],\n        [ 2.5000,  3.0000]])\n" ..
               "[float32 tensor of shape (2, 2)]", "2x2")
  same_text(format(Fake.new({ 1, 2, 3 }, { 3 }, { dtype = "int64" })),
            "tensor([1, 2, 3])\n[int64 tensor of shape (3,)]", "int64")
  same_text(format(Fake.new({ 3.5 }, {})), "tensor(3.5000)\n[float32 tensor of shape ()]", "0-dim")
  same_text(format(Fake.new({}, { 0, 3 })),
            "tensor([], size=(0, 3))\n[float32 tensor of shape (0, 3)]", "empty")
end)

-- expected strings: torch.set_printoptions(...) with the same options, then print
case("format: options precision, linewidth, sci_mode, edgeitems, threshold", function()
  local t = Fake.new({ 0.123456, -1.5, 2.25 }, { 3 })
  same_text(format(t, { footer = false, precision = 2 }), "tensor([ 0.12, -1.50,  2.25])", "precision")
  same_text(format(t, { footer = false, sci_mode = true }),
            "tensor([1.2346e-01, -1.5000e+00, 2.2500e+00])", "sci_mode=true") -- width from fixed
  same_text(format(Fake.new({ 1e-5, 1 }, { 2 }), { footer = false, sci_mode = false }),
            "tensor([    0.0000,     1.0000])", "sci_mode=false") -- width from sci
  same_text(format(t, { footer = false, linewidth = 20 }),
            "tensor([ 0.1235,\n        -1.5000,\n         2.2500])", "linewidth=20")
  local flat = {}
  for i = 1, 10 do flat[i] = i end
  same_text(format(Fake.new(flat, { 10 }, { dtype = "int64" }), { footer = false, threshold = 5, edgeitems = 2 }),
            "tensor([ 1,  2,  ...,  9, 10])", "threshold=5 edgeitems=2")
end)

case("format: bad arguments are clear errors", function()
  T.raises(function() format(Fake.new({ 1 }, { 1 }), { precison = 3 }) end, "unknown option 'precison'")
  T.raises(function() format(Fake.new({ 1 }, { 1 }), 5) end, "expected an options table")
end)

-- expected: print((torch.arange(1000000, dtype=torch.float64) * 0.5).float().reshape(1000, 1000))
case("format: a summarised 1000x1000 tensor reads only its 36 corner entries", function()
  local lazy = setmetatable({}, { __index = function(_, i) return (i - 1) * 0.5 end })
  local t = Fake.new(lazy, { 1000, 1000 })
  Fake.reads = 0
  local s = format(t, { footer = false })
  T.truthy(Fake.reads == 36, "read " .. Fake.reads .. " entries, want 36")
  same_text(s, table.concat({
    "tensor([[0.0000e+00, 5.0000e-01, 1.0000e+00,  ..., 4.9850e+02, 4.9900e+02,",
    "         4.9950e+02],",
    "        [5.0000e+02, 5.0050e+02, 5.0100e+02,  ..., 9.9850e+02, 9.9900e+02,",
    "         9.9950e+02],",
    "        [1.0000e+03, 1.0005e+03, 1.0010e+03,  ..., 1.4985e+03, 1.4990e+03,",
    "         1.4995e+03],",
    "        ...,",
    "        [4.9850e+05, 4.9850e+05, 4.9850e+05,  ..., 4.9900e+05, 4.9900e+05,",
    "         4.9900e+05],",
    "        [4.9900e+05, 4.9900e+05, 4.9900e+05,  ..., 4.9950e+05, 4.9950e+05,",
    "         4.9950e+05],",
    "        [4.9950e+05, 4.9950e+05, 4.9950e+05,  ..., 5.0000e+05, 5.0000e+05,",
    "         5.0000e+05]])" }, "\n"), "1000x1000")
end)

-- The same reference cases through the real binding's tensors (its narrow/totable/fields).
-- Cases with a grad_fn are left out (attnlab names its nodes differently), and so are
-- 0-dim and empty ones (al.tensor takes nested tables).
case("format vs torch through the real binding (when al.tensor exists)", function()
  local ok, al = pcall(require, "attnlab")
  if not ok or type(al) ~= "table" or type(al.tensor) ~= "function" then
    T.skip("al.tensor not available")
  end
  local n = 0
  for _, c in ipairs(ref and ref.cases or {}) do
    local numel = 1
    for _, d in ipairs(c.shape) do numel = numel * d end
    if not c.grad_fn_name and #c.shape > 0 and numel > 0 then
      local flat = {}
      for i, v in ipairs(c.data) do flat[i] = NONFINITE[v] or v end
      local pos = 0
      local function nest(d)
        local t = {}
        for i = 1, c.shape[d] do
          if d == #c.shape then pos = pos + 1; t[i] = flat[pos] else t[i] = nest(d + 1) end
        end
        return t
      end
      local t = al.tensor(nest(1), { dtype = c.dtype, requires_grad = c.requires_grad or nil })
      same_text(format(t, { footer = false }), c.expected, "al.tensor: " .. c.name)
      n = n + 1
    end
  end
  T.truthy(n >= 30, "only " .. n .. " cases ran")
end)

-- The boundaries of PyTorch's rules, each one character or one value from the other side
-- (expected strings printed by torch 1.13 with the same print options; the dtype suffix is
-- attnlab's "dtype=float64" where torch prints "dtype=torch.float64"):
--  * _add_suffixes wraps a suffix when count + 2 + #suffix > linewidth (80), where count is the
--    body's length + 2 on one line, and the last line's length + 2 after a newline: at exactly 80
--    the suffix stays, at 81 it wraps;
--  * fixed notation while the smallest nonzero |x| is not below 1e-4 and the largest not above
--    1e8 (both limits themselves print fixed).
case("format: suffix wrapping and sci-mode limits at their exact boundaries", function()
  -- "tensor([...]" is 58 characters: 60 + 2 + 18 ("requires_grad=True") = 80, no wrap
  same_text(format(Fake.new({ -0.5, 0.25, 0.125 }, { 3 }, { requires_grad = true }), { footer = false, precision = 12 }),
    "tensor([-0.500000000000,  0.250000000000,  0.125000000000], requires_grad=True)", "suffix at exactly 80")
  -- (2,5): the last line "        [  0.2500, ...]]" is 59 characters: 61 + 2 + 18 = 81, wrapped
  local v = {}
  for i = 1, 5 do v[i], v[5 + i] = -10.5, 0.25 end
  same_text(format(Fake.new(v, { 2, 5 }, { requires_grad = true }), { footer = false }),
    "tensor([[-10.5000, -10.5000, -10.5000, -10.5000, -10.5000],\n" ..
    "        [  0.2500,   0.2500,   0.2500,   0.2500,   0.2500]],\n" ..
    "       requires_grad=True)", "suffix wraps at 81")
  same_text(format(Fake.new({ 1e-4, 0.05 }, { 2 }, { dtype = "float64" }), { footer = false }),
    "tensor([0.0001, 0.0500], dtype=float64)", "min |x| = 1e-4 is fixed")
  same_text(format(Fake.new({ 1e8, 5e7 + 0.5 }, { 2 }, { dtype = "float64" }), { footer = false }),
    "tensor([100000000.0000,  50000000.5000], dtype=float64)", "max |x| = 1e8 is fixed")
end)

return cases
