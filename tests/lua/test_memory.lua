-- Memory stays flat over a long training loop: 10,000 forward/backward/AdamW steps of a
-- small MLP (measured between step 3,000, once the collector has reached its
-- working threshold, and step 10,000). Tensor bytes live in C (invisible to Lua's GC unless the binding paces the
-- collector); this checks both the core's live-byte counter and the process RSS.
local al = require "attnlab"
local T = require "harness"

local function rss_kb()
  local f = io.open("/proc/self/statm")
  if not f then return nil end
  local pages = f:read("n") and f:read("n")
  f:close()
  return pages and pages * 4 or nil
end

-- Runs a Lua script in a fresh attnlab process (the heap's and the collector's history then
-- known) and returns the two integers it prints. Skips when the host is not built.
local function two_numbers_from_child(source)
  T.need_host()
  local script = T.tmpscript(source)
  local out = T.sh(T.HOST .. " " .. script)
  os.remove(script)
  local a, b = out:match("^(%d+)%s+(%d+)")
  assert(a, "the child printed: " .. out)
  return tonumber(a), tonumber(b)
end

-- The tail of a child script: 300 x 1 MB of garbage, and in `worst` the most tensor bytes above
-- the live bytes at its start (`start`) alive at once.
local GARBAGE_LOOP = [[
local start, worst = al.mem().live, 0
for _ = 1, 300 do
  local g = al.zeros({ 256, 1024 })     -- 1 MB, garbage at the next iteration
  local over = al.mem().live - start
  if over > worst then worst = over end
end
]]

return {
  { name = "10k MLP steps keep tensor memory and RSS flat", fn = function()
    al.manual_seed(T.seed)
    local nn = al.nn
    local model = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 10))
    local opt = al.optim.AdamW(model:parameters(), { lr = 1e-3 })
    local x = al.randn({ 64, 32 })
    local y = al.randint(1, 10, { 64 })
    -- under sanitizers RSS means nothing (ASan's quarantine) and steps are 20x slower:
    -- check the live tensor bytes over fewer steps there
    local sanitized = os.getenv("ATTNLAB_SANITIZED") == "1"
    local first, last = 3000, 10000
    if sanitized then first, last = 500, 1500 end
    local live, rss = {}, {}
    for step = 1, last do
      opt:zero_grad()
      local loss = al.cross_entropy(model(x), y)
      loss:backward()
      opt:step()
      if step == first or step == last then
        collectgarbage("collect")
        live[#live + 1] = al.mem().live
        rss[#rss + 1] = rss_kb()
      end
    end
    print(("# live tensor bytes after step %d: %d, after step %d: %d; RSS kB: %s -> %s%s")
      :format(first, live[1], last, live[2], tostring(rss[1]), tostring(rss[2]), sanitized and " (sanitized build: RSS not checked)" or ""))
    assert(live[2] <= live[1] + 4096, "tensor bytes grew over 7,000 steps: " .. live[1] .. " -> " .. live[2])
    if rss[1] and not sanitized then assert(rss[2] - rss[1] < 8 * 1024, ("RSS grew by %d kB over 7,000 steps"):format(rss[2] - rss[1])) end
  end },
  { name = "garbage tensors are collected without explicit collectgarbage", fn = function()
    -- 2,000 x 4 MB of garbage: without GC pacing this would hold ~8 GB
    local start, peak_live = al.mem().live, 0
    for _ = 1, 2000 do
      local t = al.zeros({ 1024, 1024 })
      peak_live = math.max(peak_live, al.mem().live - start)   -- the peak, not what is left at the end
    end
    assert(peak_live < 512 * 1024 * 1024, ("%d bytes of garbage still alive"):format(peak_live))
  end },
  { name = "the garbage of a loop is collected young: a few MB, not twice the live set", fn = function()
    -- A loop that drops its tensors (no <close>) leaves them to the collector. Between full
    -- collections (at twice the live bytes, >= 32 MB) the binding runs a young collection after
    -- every max(8 MB, live/4) of new tensor bytes, so a freed buffer goes back to malloc while it
    -- is still in cache. In a fresh process, so that the live set is known to be small.
    local start, worst = two_numbers_from_child([[
local al = require "attnlab"
local keep = al.zeros({ 1024, 1024 })   -- 4 MB live throughout
]] .. GARBAGE_LOOP .. "print(start, worst)\n")
    print(("# fresh process, 300 x 1 MB of garbage over %d kB live: at most %d kB of it alive at once")
      :format(start // 1024, worst // 1024))
    -- a young collection at 8 MB past the live bytes, plus the tensor being made
    assert(worst <= 10 * 1024 * 1024, ("%d kB of garbage alive at once"):format(worst // 1024))
  end },
  { name = "al.mem() shows the kept large blocks; al.empty_cache and al.set_cache_limit", fn = function()
    -- in a fresh process: the cache is process-wide and other tests leave blocks in it
    T.need_host()
    local script = T.tmpscript([[
local al = require "attnlab"
local m0 = al.mem()
local t = al.zeros({ 2048, 1024 })       -- 8 MB: from 4 MB on, a freed block is kept
t:release()
local m1 = al.mem()
al.empty_cache()
local m2 = al.mem()
local old = al.set_cache_limit(0)
local u = al.zeros({ 2048, 1024 }); u:release()
local m3 = al.mem()
local ok, err = pcall(al.set_cache_limit, -1)
local ok2, err2 = pcall(al.set_cache_limit, 1.5)
local ok3, err3 = pcall(al.empty_cache, true)
print(m0.cache_limit, m1.cached - m0.cached, m1.live - m0.live, m2.cached, old, m3.cached, m3.cache_limit)
print(err); print(err2); print(err3)
]])
    local out = T.sh(T.HOST .. " " .. script)
    os.remove(script)
    local lines = {}
    for l in out:gmatch("[^\n]+") do lines[#lines + 1] = l end
    local nums = {}
    for n in lines[1]:gmatch("%d+") do nums[#nums + 1] = tonumber(n) end
    local sanitized = os.getenv("ATTNLAB_SANITIZED") == "1"
    if sanitized then
      T.eq(nums[1], 0, "an ASan build keeps no blocks")
    else
      T.eq(nums[1], 2 << 30, "default limit")
      assert(nums[2] >= 8 << 20 and nums[2] < (8 << 20) + 4096, "a released 8 MB tensor is kept: " .. lines[1])
      T.eq(nums[5], 2 << 30, "set_cache_limit returns the old limit")
    end
    T.eq(nums[3], 0, "kept bytes are not live")
    T.eq(nums[4], 0, "al.empty_cache gives them back")
    T.eq(nums[6], 0, "limit 0 keeps nothing")
    T.eq(nums[7], 0, "the limit reads back")
    T.eq(lines[2], "attnlab.set_cache_limit: expects one whole number of bytes >= 0, got -1")
    T.eq(lines[3], "attnlab.set_cache_limit: expects one whole number of bytes >= 0, got 1.5")
    T.eq(lines[4], "attnlab.empty_cache takes no argument")
  end },
  { name = "after a phase with a large live set, garbage is still collected young", fn = function()
    -- The young collection waits for a quarter of the live bytes. When a large live set is
    -- freed (the buffers of a long sequence, a model dropped) the wait must shrink with it:
    -- it stayed at the old size, so the smaller phase after it piled up that quarter in
    -- garbage first (BiMamba after attention at N = 2304: 490 MB, every buffer faulted in
    -- again). In a fresh process, so that the live set is known.
    local big, worst = two_numbers_from_child([[
local al = require "attnlab"
local big = {}
for i = 1, 64 do big[i] = al.zeros({ 1024, 1024 }) end   -- 256 MB live
local t = al.zeros({ 256, 1024 })                         -- a young collection at this size
big = nil; t = nil
collectgarbage(); collectgarbage()
]] .. GARBAGE_LOOP .. "print(256 * 1024 * 1024, worst)\n")
    print(("# fresh process, 300 x 1 MB of garbage after a %d MB live set was freed: at most %d kB of it alive at once")
      :format(big >> 20, worst // 1024))
    assert(worst <= 10 * 1024 * 1024, ("%d kB of garbage alive at once"):format(worst // 1024))
  end },
  { name = "a training step's ebb does not bring the next young collection forward", fn = function()
    -- The backward frees the forward's activations, so the live bytes fall within every step.
    -- Following that fall down with the young collection's wait ran two young collections a
    -- step instead of one at N = 17 (224 against 126 in 60 steps at N = 65), for no less
    -- garbage alive: the wait comes down only when the live bytes fall below half of it (a
    -- phase ended; the test above). Counted over 30 steps of the compact classifier at N = 17,
    -- batch 128, in a fresh process (the counters are the binding's, per OS thread).
    local young, full = two_numbers_from_child([[
local al = require "attnlab"
al.set_num_threads(1)
al.manual_seed(0)
local x, y = al.randn({ 128, 3, 32, 32 }), al.randint(1, 10, { 128 })
local m = al.nn.ViT { image_size = 32, patch_size = 8, channels = 3, num_classes = 10, seed = 0 }
local opt = al.optim.AdamW(m:parameters(), { lr = 1e-3 })
local function step()
  local l = al.cross_entropy(m(x), y)
  opt:zero_grad(); l:backward(); opt:step()
end
for _ = 1, 10 do step() end
local m0 = al.mem()
for _ = 1, 30 do step() end
local m1 = al.mem()
print(m1.young_collections - m0.young_collections, m1.full_collections - m0.full_collections)
]])
    print(("# 30 training steps at N = 17: %d young and %d full collections"):format(young, full))
    assert(young >= 20, ("%d young collections in 30 steps: the step's garbage is not collected young"):format(young))
    assert(young <= 36, ("%d young collections in 30 steps: more than about one a step"):format(young))
  end },
  { name = "tensors released promptly (<close>, release) reuse their memory: RSS flat", fn = function()
    -- A training step whose outputs are closed as soon as they are used frees each buffer
    -- before the next step asks for one of the same size; the allocator must hand it back
    -- (64-byte alignment through glibc's aligned_alloc did not: RSS grew by a buffer a step
    -- here, 185 MB over this loop).
    if os.getenv("ATTNLAB_SANITIZED") == "1" then
      print("# sanitized build: RSS not meaningful (ASan quarantine); skipped"); return T.skip("sanitized build")
    end
    -- in a fresh process: the heap's history decides where a freed block lands
    local rss0, rss1 = two_numbers_from_child([[
local al = require "attnlab"
local function rss_kb() local f = io.open("/proc/self/statm"); f:read("n"); local p = f:read("n"); f:close(); return p * 4 end
local s = al.randn({ 8, 4, 65, 65 })
local g = al.randn({ 8, 4, 65, 65 })
local x = s:detach():requires_grad_(true)
local rss0
for step = 1, 400 do
  do
    local y <close> = al.softmax(x)
    y:backward(g)
    x.grad = nil
  end
  if step == 50 then rss0 = rss_kb() end
end
print(rss0, rss_kb())
]])
    print(("# fresh process, softmax fwd+bwd with <close>, buffers of %d kB: RSS kB after step 50: %d, after step 400: %d")
      :format(8 * 4 * 65 * 65 * 4 // 1024, rss0, rss1))
    assert(rss1 - rss0 < 8 * 1024, ("RSS grew by %d kB over 350 steps"):format(rss1 - rss0))
  end },
  { name = "training-loop variants keep live tensor bytes constant from step 10 to step 40", fn = function()
    -- What a sweep or a REPL session runs again and again: attention weights kept and support
    -- tracked, sequential mixers, A-ViT halting losses, gradient accumulation with clipping and
    -- a schedule, and a checkpoint written and read back every step. Any tensor or graph
    -- carried from one step to the next would show as live bytes that grow.
    local nn, s2s = al.nn, al.s2s
    local function vit(o)
      local c = { image_size = 8, patch_size = 4, channels = 1, num_classes = 3, dim = 8, depth = 2, heads = 2, seed = 1 }
      for k, v in pairs(o or {}) do c[k] = v end
      return nn.ViT(c)
    end
    local x, y = al.randn({ 2, 1, 8, 8 }), al.randint(1, 3, { 2 })
    local path = T.tmpname(".safetensors")
    local variants = {
      { "keep_attention + track_support (hae)", function()
        local m = vit({ normalizer = "hae" })
        m:track_support(true)
        for _, a in ipairs(m:attention_layers()) do a.keep_attention = true end
        return m, function() return al.cross_entropy(m(x), y) end
      end },
      { "BiMamba and BiLSTM mixers", function()
        local m = vit()
        m:block(1):set_mixer(nn.BiMamba { dim = 8, heads = 2 })
        m:block(2):set_mixer(nn.BiLSTM { dim = 8, heads = 2 })
        return m, function() return al.cross_entropy(m(x), y) end
      end },
      { "A-ViT halting loss, gather mode", function()
        local m = vit()
        return m, function() return (s2s.distilling.halting_loss(m, x, y, { halting = true, mode = "gather" })) end
      end },
    }
    for _, v in ipairs(variants) do
      local m, loss_of = v[2]()
      local opt = al.optim.AdamW(m:parameters())
      local sched = al.optim.CosineWarmup(opt, { warmup = 5, total = 1000 })
      local live = {}
      for step = 1, 40 do
        loss_of():backward()
        if step % 2 == 0 then   -- two micro-batches per update
          al.optim.clip_grad_norm(m:parameters(), 0.5)
          opt:step(); sched:step(); opt:zero_grad()
          al.save(path, m:state_dict())
          m:load_state_dict((al.load(path)))
          opt:load_state_dict(opt:state_dict())
          al.no_grad(function() return m(x) end)
        end
        if step == 10 or step == 40 then collectgarbage(); collectgarbage(); live[#live + 1] = al.mem().live end
      end
      print(("# %s: live bytes %d at step 10, %d at step 40"):format(v[1], live[1], live[2]))
      T.eq(live[2], live[1], 0, v[1])
    end
    os.remove(path)
  end },
  { name = "al.mem().live returns to its baseline after bytes_cat of empty datasets", fn = function()
    -- a dataset file of 0 records (an IDX header with dim 0) gives an empty Bytes; bytes_cat of
    -- such parts allocated 1 byte and its __gc freed 0 (the Bytes' size), so every call left
    -- the live count one byte high for good, and the collector's pacing drifted with it
    local path = T.tmpname(".idx")
    T.write_file(path, string.char(0, 0, 8, 1) .. string.pack(">I4", 0))
    local empty = assert(al.read_idx(path))
    os.remove(path)
    collectgarbage(); collectgarbage()
    local before = al.mem().live
    for _ = 1, 10 do
      local b <close> = al.bytes_cat({ empty, empty })
      T.eq(b:shape(), { 0 })
    end
    collectgarbage(); collectgarbage()
    T.eq(al.mem().live - before, 0, 0, "live bytes left behind by 10 empty bytes_cat")
    -- a part that is not dataset bytes is named by its place (it said "bad argument #-1")
    T.raises(function() al.bytes_cat({ empty, 5 }) end, "attnlab.bytes_cat: part 2 is a number, not dataset bytes")
  end },
}
