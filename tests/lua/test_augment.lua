-- tests/lua/test_augment.lua -- training-image augmentation (issue 20): al.crop_flip against a
-- hand-computed case, its identities (centre crop without flip; flip twice), bad options as
-- one clear error, al.random_crop_flip's independence of the thread count, and fit.run's use
-- of it: training batches only, the same draws when a run resumes from its checkpoint.
local al = require "attnlab"
local T = require "harness"
local fit = require "attnlab.run.fit"

local cases, case = T.suite()
local function flat(t) return t:contiguous():reshape({ -1 }):totable() end

-- x (1, 1, 3, 3) = 1..9 row-major
local function nine() return al.tensor({ 1, 2, 3, 4, 5, 6, 7, 8, 9 }):reshape({ 1, 1, 3, 3 }) end

case("crop_flip: hand-computed values", function()
  -- pad 1, top 0, left 2: out[i,j] = x[i-1, j+1] (0 outside)
  T.eq(flat(al.crop_flip(nine(), 1, { 0 }, { 2 })), { 0, 0, 0, 2, 3, 0, 5, 6, 0 })
  -- the same crop, then mirrored: out[i,j] = x[i-1, (2-j)+1]
  T.eq(flat(al.crop_flip(nine(), 1, { 0 }, { 2 }, { true })), { 0, 0, 0, 0, 3, 2, 0, 6, 5 })
  -- pad 2, corner (4, 0): out[i,j] = x[i+2, j-2]
  T.eq(flat(al.crop_flip(nine(), 2, { 4 }, { 0 })), { 0, 0, 7, 0, 0, 0, 0, 0, 0 })
  -- two images, two channels: each image follows its own draws
  local v = {}
  for i = 1, 16 do v[i] = i end
  local x = al.tensor(v):reshape({ 2, 2, 2, 2 })
  T.eq(flat(al.crop_flip(x, 1, { 1, 2 }, { 1, 1 }, { 1, 0 })), { 2, 1, 4, 3, 6, 5, 8, 7, 11, 12, 0, 0, 15, 16, 0, 0 })
end)

case("crop_flip: identities", function()
  al.manual_seed(3)
  local x = al.randn({ 3, 3, 8, 8 })
  T.eq(flat(al.crop_flip(x, 4, { 4, 4, 4 }, { 4, 4, 4 })), flat(x))
  T.eq(flat(al.crop_flip(x, 0, { 0, 0, 0 }, { 0, 0, 0 })), flat(x))
  local f = { true, true, true }
  T.eq(flat(al.crop_flip(al.crop_flip(x, 0, { 0, 0, 0 }, { 0, 0, 0 }, f), 0, { 0, 0, 0 }, { 0, 0, 0 }, f)), flat(x))
  -- a non-contiguous input reads through its strides
  local xt = x:transpose(3, 4)
  T.eq(flat(al.crop_flip(xt, 2, { 2, 2, 2 }, { 2, 2, 2 })), flat(xt))
end)

case("crop_flip: bad options are one clear error", function()
  T.raises(function() al.crop_flip(nine(), 1, { 3 }, { 0 }) end, "offset (3, 0) is outside")
  T.raises(function() al.crop_flip(nine(), 1, { 0, 0 }, { 0 }) end, "top has 2 entries for a batch of 1")
  T.raises(function() al.crop_flip(al.zeros({ 3, 3 }), 1, { 0 }, { 0 }) end, "(B, C, H, W)")
  T.raises(function() al.random_crop_flip(nine(), { pad = -1 }) end, "attnlab.random_crop_flip: pad must be >= 0")
  T.raises(function() al.crop_flip(al.zeros({ 1, 3, 3 }), 1, { 0 }, { 0 }) end, "attnlab.crop_flip: expected a (B, C, H, W) tensor, got 3 dims")
  T.raises(function() al.random_crop_flip(al.zeros({ 1, 3, 3 }), {}) end, "attnlab.random_crop_flip: expected a (B, C, H, W) tensor, got 3 dims")
  T.raises(function() al.crop_flip(nine(), 1, { 1.5 }, { 0 }) end, "attnlab.crop_flip: top[1] is not an integer")
  T.raises(function() al.random_crop_flip(nine(), { pad = 1, hlfip = true }) end, "unknown option 'hlfip' (known: pad, hflip, generator)")
  T.raises(function() al.random_crop_flip(nine(), { hflip = "no" }) end, "option hflip must be true or false")
  -- no pad given: pad 0, the only crop is the image itself
  local y, draws = al.random_crop_flip(nine(), { hflip = false })
  T.eq(flat(y), { 1, 2, 3, 4, 5, 6, 7, 8, 9 })
  T.eq(draws, { top = { 0 }, left = { 0 }, flip = { false } })
  T.raises(function() fit.check_augment({ crop_pad = 4, flip = true }) end, "unknown key 'flip'")
  T.raises(function() fit.check_augment({ crop_pad = 1.5 }) end, "crop_pad must be an integer >= 0")
  T.raises(function() fit.check_augment({ hflip = 1 }) end, "hflip must be true or false")
  T.raises(function() fit.check_augment("crop_flip") end, "augment must be a table")
  T.eq(fit.check_augment({ crop_pad = 0, hflip = false }), nil)
end)

case("random_crop_flip: draws from its generator, independent of the thread count", function()
  al.manual_seed(5)
  local x = al.randn({ 64, 3, 32, 32 })   -- above the threading threshold
  T.need_cores(2)
  local before = al.get_num_threads()
  local outs = {}
  for i, nt in ipairs({ 1, 2 }) do
    al.set_num_threads(nt)
    local y, d = al.random_crop_flip(x, { pad = 4, hflip = true, generator = al.Generator(11) })
    outs[i] = { flat(y), d }
  end
  al.set_num_threads(before)
  T.eq(outs[1][1], outs[2][1])
  T.eq(outs[1][2].top, outs[2][2].top)
  -- the output is the explicit crop of its own draws
  local d = outs[1][2]
  T.eq(outs[1][1], flat(al.crop_flip(x, 4, d.top, d.left, d.flip)))
  local lo, hi, nflip = 99, -1, 0
  for b = 1, 64 do
    lo, hi = math.min(lo, d.top[b], d.left[b]), math.max(hi, d.top[b], d.left[b])
    if d.flip[b] then nflip = nflip + 1 end
  end
  T.truthy(lo >= 0 and hi <= 8 and hi > lo, "offsets in [0, 8]")
  T.truthy(nflip > 10 and nflip < 54, "about half the images flipped")
end)

case("random_crop_flip: the offsets take every value of 0..2*pad, and both flips", function()
  -- pad 1: top and left uniform on {0, 1, 2} (2 * pad + 1 values); 300 draws miss one of them
  -- with probability 3 (2/3)^300, and the generator is seeded
  local _, d = al.random_crop_flip(al.zeros({ 300, 1, 2, 2 }), { pad = 1, hflip = true, generator = al.Generator(3) })
  for _, key in ipairs({ "top", "left" }) do
    local seen = {}
    for b = 1, 300 do seen[d[key][b]] = true end
    T.eq({ seen[0], seen[1], seen[2], seen[-1], seen[3] }, { true, true, true, nil, nil }, 0, key .. " covers 0..2 and no more")
  end
  local nflip = 0
  for b = 1, 300 do if d.flip[b] then nflip = nflip + 1 end end
  T.truthy(nflip > 100 and nflip < 200, "about half flipped: " .. nflip)
end)

case("crop_flip pads with the normalized zero (the channel-mean colour, not black), and augment.h says so", function()
  -- fit.run passes the loader's NORMALIZED batch: the padded border is 0 there, i.e. the
  -- training split's mean colour, while a black pixel of the image is -mean/std. torchvision's
  -- usual RandomCrop(32, padding=4) before Normalize pads black. The behaviour is kept (a
  -- committed record was trained with it); the header described it as torchvision's.
  local ds = T.need_data(al.data.fashion_mnist, { split = "test" }, "Fashion-MNIST")
  local x = ds:batch(al.tensor({ 1 }, { dtype = "int64" }))           -- (1, 1, 28, 28), normalized
  local black = -ds.mean[1] / ds.std[1]
  T.close(x:contiguous():reshape({ -1 }):totable()[1], black, 1e-6, 0, "pixel (1,1) of image 1 is black")
  local y = al.crop_flip(x, 2, { 0 }, { 0 })                           -- corner (0, 0): 2 rows, 2 columns of padding
  local v = flat(y)
  for j = 1, 28 do T.eq(v[j], 0, 0, "padded row, column " .. j) end   -- 0 = the mean, not black
  T.eq(v[28 * 2 + 3], flat(x)[1], 0, "image pixel (1,1) lands at (3,3)")
  local root = al.root and al.root() or "."
  local h = T.read_file(root .. "/include/attnlab/augment.h") or T.read_file("include/attnlab/augment.h")
  assert(h, "include/attnlab/augment.h not found")
  for _, want in ipairs({ "NORMALIZED batch", "channel-mean colour of the training split, not black",
                          "applied AFTER Normalize" }) do
    T.truthy(h:find(want, 1, true), "augment.h does not say: " .. want)
  end
end)

-- A synthetic image set (the loader calls make_batch) and a linear model.
local function synth(n, seed)
  local g = al.Generator(seed)
  local x = al.randn({ n, 2, 6, 6 }, g)
  local y = al.tensor((function() local t = {} for i = 1, n do t[i] = (i % 3) + 1 end return t end)(), { dtype = "int64" })
  return setmetatable({ name = "synth", n = n, num_classes = 3, make_batch = function(_, idx)
    return al.index_select(x, 1, idx), al.index_select(y, 1, idx)
  end }, al.data.Dataset)
end

local function run_fit(opts)
  al.manual_seed(1)
  local model = al.nn.Linear(72, 3)
  local train, test = synth(40, 1), synth(12, 2)
  local seen, test_ok = {}, true
  local stage = { name = "s", epochs = 3, lr = 1e-2,
    step = function(x, y)
      seen[#seen + 1] = flat(x)
      return al.cross_entropy(model(x:reshape({ x:shape()[1], 72 })), y)
    end,
    eval = function()
      -- evaluation reads the test set as it is: the loop's augmentation is not global state
      for x, _, _ in al.data.Loader(test, { batch_size = 12 }):iter(1) do
        local idx = {}
        for i = 1, 12 do idx[i] = i end
        local raw = test:batch(al.tensor(idx, { dtype = "int64" }))
        if T.fmt(flat(x)) ~= T.fmt(flat(raw)) then test_ok = false end
      end
      return {}
    end }
  local hist, stopped = fit.run(model, { stage }, { train = train, batch_size = 16, seed = 7, augment = opts.augment,
    checkpoint = opts.checkpoint, key = "k", stop_after = opts.stop_after, on_step = function() end, on_epoch = function() end })
  return { seen = seen, hist = hist, stopped = stopped, test_ok = test_ok, w = flat(model.weight) }
end

case("fit.run: training batches only, and the same draws after a resume", function()
  local plain = run_fit({})
  local aug = run_fit({ augment = { crop_pad = 2, hflip = true } })
  T.truthy(aug.test_ok and plain.test_ok, "test batches are never augmented")
  T.truthy(T.fmt(aug.seen[1]) ~= T.fmt(plain.seen[1]), "training batches are augmented")
  local again = run_fit({ augment = { crop_pad = 2, hflip = true } })
  T.eq(again.w, aug.w)
  local ck = T.tmpname()
  local part = run_fit({ augment = { crop_pad = 2, hflip = true }, checkpoint = ck, stop_after = 1 })
  T.truthy(part.stopped, "stopped after one epoch")
  local rest = run_fit({ augment = { crop_pad = 2, hflip = true }, checkpoint = ck })
  os.remove(ck)
  T.eq(rest.w, aug.w)
  -- the resumed run saw epochs 2-3's batches exactly as the uninterrupted one did
  local n = #rest.seen
  for i = 1, n do T.eq(rest.seen[i], aug.seen[#aug.seen - n + i]) end
end)

return cases
