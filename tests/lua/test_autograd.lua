-- tests/lua/test_autograd.lua -- the reverse pass itself: graphs with shared subexpressions
-- and views, broadcasting and expansion in backward, gradient accumulation, no_grad,
-- detach, retain_graph and the errors of misuse. Expected gradients are closed forms.
local al = require "attnlab"
local T = require "harness"

local cases, case = T.suite()

local function P(t) return al.tensor(t, { requires_grad = true }) end

case("x*x + 3x: gradient 2x + 3", function()
  local x = P { 1, -2, 0.5 }
  local y = (x * x + x * 3):sum()
  T.eq(y:item(), 1 + 4 + 0.25 + 3 * (1 - 2 + 0.5), 1e-6)
  y:backward()
  T.eq(x.grad:totable(), { 5, -1, 4 }, 1e-6)
end)

case("diamond: y = 2x used twice, z = y*y + y -> dz/dx = 2(2y + 1)", function()
  local x = P { 1, 2, 3 }
  local y = x * 2
  local z = (y * y + y):sum()
  z:backward()
  T.eq(x.grad:totable(), { 2 * (4 + 1), 2 * (8 + 1), 2 * (12 + 1) }, 1e-5)
end)

case("add hands one gradient to both inputs: a node's accumulator is never summed into in place while shared", function()
  -- s = u + v, y = sum((s + u) * w) with u = 2x, v = 3x, x and w of shape (2): the outer add
  -- gives the same tensor to s and to u, and s's add gives it on to u and v. dy/du = 2w,
  -- dy/dv = w, so dx = 2*2w + 3*w = 7w. Adding s's share into u's accumulator in place
  -- also changed what v received (dx = 10w).
  local x = P { 1, 2 }
  local u, v = x * 2, x * 3
  local w = al.tensor { 1, 10 }
  local y = (((u + v) + u) * w):sum()
  y:backward()
  T.eq(x.grad:totable(), { 7, 70 }, 1e-6)
end)

case("a node's accumulator that is a view of another's gradient is copied before a second share is added", function()
  -- z = (q + p:reshape{6}) + p:reshape{6}, y = sum(z * w), p = 2 u with u (2,3), q = 3 v with
  -- v (6): both adds and both reshapes pass on the same gradient g = w, reshape's backward as a
  -- view of it. p's accumulator starts as such a view; adding the second share into it in place
  -- would double g itself before q's backward reads it (v.grad = 6w instead of 3w).
  local u, v = P { { 1, 2, 3 }, { 4, 5, 6 } }, P { 1, 2, 3, 4, 5, 6 }
  local p, q = u * 2, v * 3
  local w = al.tensor { 1, 2, 3, 4, 5, 6 }
  local z = (q + p:reshape { 6 }) + p:reshape { 6 }
  al.sum(z * w):backward()
  T.eq(u.grad:totable(), { { 4, 8, 12 }, { 16, 20, 24 } })
  T.eq(v.grad:totable(), { 3, 6, 9, 12, 15, 18 })
end)

case("leaf gradients never share memory: a later backward into one leaves the other as it was", function()
  -- sum((a + b) * w): mul's backward makes one fresh contiguous gradient g = w, add hands that
  -- same tensor to a and b, and reshape's backward a view of it; each .grad must be its own
  -- copy, or the second backward's a += 5 shows up in b.grad too. Shapes (2), and (6) -> (2,3).
  local a, b = P { 1, 2 }, P { 3, 4 }
  local w = al.tensor { 1, 2 }
  al.sum((a + b) * w):backward()
  al.sum(a * 5):backward()
  T.eq(a.grad:totable(), { 6, 7 })
  T.eq(b.grad:totable(), { 1, 2 })
  local c, d = P { 1, 2, 3, 4, 5, 6 }, P { 1, 2, 3, 4, 5, 6 }
  local w23 = al.tensor { { 1, 2, 3 }, { 4, 5, 6 } }
  al.sum((c:reshape { 2, 3 } + d:reshape { 2, 3 }) * w23):backward()
  al.sum(c * 5):backward()
  T.eq(c.grad:totable(), { 6, 7, 8, 9, 10, 11 })
  T.eq(d.grad:totable(), { 1, 2, 3, 4, 5, 6 })
end)

case("a view used twice (narrow and select of the same tensor)", function()
  local x = P { { 1, 2, 3 }, { 4, 5, 6 } }
  local v = x:narrow(2, 2, 2)          -- {{2,3},{5,6}}
  local y = (v * v):sum() + v:select(1, 2):sum() * 10
  y:backward()
  T.eq(x.grad:totable(), { { 0, 4, 6 }, { 0, 20, 22 } }, 1e-5)
end)

case("a transposed view in two paths accumulates (non-contiguous gradients)", function()
  local x = P { { 1, 2 }, { 3, 4 }, { 5, 6 } }
  local t = x:transpose(1, 2)          -- (2,3), strided
  local w = al.tensor { { 1, 2, 3 }, { 4, 5, 6 } }
  local y = (t * w):sum() + (t:contiguous() * 2):sum()
  y:backward()
  T.eq(x.grad:totable(), { { 3, 6 }, { 4, 7 }, { 5, 8 } }, 1e-6)
end)

case("expanded tensor: gradient sums over the expanded dims", function()
  local x = P { { 1 }, { 2 }, { 3 } }      -- (3,1)
  local e = x:expand(3, 4)
  local w = al.tensor { { 1, 2, 3, 4 }, { 1, 1, 1, 1 }, { 0, 0, 0, 1 } }
  al.sum(e * w):backward()
  T.eq(x.grad:totable(), { { 10 }, { 4 }, { 1 } }, 1e-6)
  local s = P { 2 }
  local e2 = s:expand { 2, 3 }
  al.sum(e2 * e2):backward()           -- d/ds sum(s^2 over 6 copies) = 12 s
  T.eq(s.grad:totable(), { 24 }, 1e-5)
end)

case("broadcast in both directions: grads reduce to each operand's shape", function()
  local a = P { { 1 }, { 2 } }          -- (2,1)
  local b = P { 10, 20, 30 }            -- (3)
  local y = a * b                       -- (2,3)
  T.eq(y:shape(), { 2, 3 })
  al.sum(y):backward()
  T.eq(a.grad:totable(), { { 60 }, { 60 } }, 1e-5)
  T.eq(b.grad:totable(), { 3, 3, 3 }, 1e-6)
  T.eq(a.grad:shape(), { 2, 1 })
end)

case("a 0-dim scalar expanded and reused in another path", function()
  local x = P { 1, 2, 3 }
  local s = al.sum(x)                   -- 0-dim
  local w = al.tensor { 1, 2, 3, 4 }
  local y = (s:expand { 4 } * w):sum() + s * 3
  y:backward()
  T.eq(x.grad:totable(), { 13, 13, 13 }, 1e-5)
end)

case("gradients accumulate across two backward calls", function()
  local x = P { 1, 2 }
  al.sum(x * x):backward()
  T.eq(x.grad:totable(), { 2, 4 })
  local y = (x * 3):sum()
  y:backward()
  T.eq(x.grad:totable(), { 5, 7 })
  x.grad = nil                          -- zero_grad
  T.eq(x.grad, nil)
  al.sum(x * x):backward()
  T.eq(x.grad:totable(), { 2, 4 })
end)

case("x.grad is the accumulated tensor (in-place accumulation, like PyTorch)", function()
  local x = P { 1, 1 }
  x:sum():backward()
  local g = x.grad
  x:sum():backward()
  T.eq(g:totable(), { 2, 2 })
  T.eq(x.grad:storage_id(), g:storage_id())
end)

case("retain_graph: a second backward through the same graph works and accumulates", function()
  local x = P { 1, 2, 3 }
  local y = (al.exp(x) * x):sum()
  y:backward({ retain_graph = true })
  local g1 = x.grad:totable()
  y:backward()
  for i, v in ipairs(x.grad:totable()) do T.eq(v, 2 * g1[i], 1e-4 * math.abs(v)) end
  for i, xi in ipairs { 1, 2, 3 } do T.eq(g1[i], math.exp(xi) * (1 + xi), 1e-4 * math.exp(xi)) end
end)

case("retain_graph passed after an explicit gradient", function()
  local x = P { 1, 2 }
  local y = x * x
  y:backward(al.tensor { 1, 1 }, { retain_graph = true })
  y:backward(al.tensor { 0.5, 2 })
  T.eq(x.grad:totable(), { 2 + 1, 4 + 8 })
end)

case("backward twice without retain_graph: a clear error", function()
  local x = P { 1, 2 }
  local y = (al.exp(x) * x):sum()
  y:backward()
  T.raises(function() y:backward() end, "retain_graph")
  local err = T.raises(function() y:backward() end, "second time")
  T.truthy(err:find("backward"), err)
end)

-- In-place changes after use: the backward of x*x needs x as it was. Without the storage's
-- version check it ran on the changed x and returned a wrong gradient ([4, 8] below for the
-- true [2, 4]), silently.
case("changing a saved tensor in place after its use: backward refuses, names the op, accumulates nothing", function()
  local changes = {
    ["mul_"] = function(x) x:mul_(2) end,
    ["add_"] = function(x) x:add_(1) end,
    ["fill_"] = function(x) x:fill_(3) end,
    ["zero_"] = function(x) x:zero_() end,
    ["copy_"] = function(x) x:copy_(al.tensor { 5, 6 }) end,
    ["normal_"] = function(x) x:normal_(0, 1) end,
    ["t[i] = v"] = function(x) x[1] = 7 end,
    ["through a detached alias"] = function(x) x:detach()[2] = 7 end,
    -- (a view made with grad on has a grad_fn: changing it is refused at once, see below)
    ["through a view"] = function(x) al.no_grad(function() x:narrow(1, 2, 1):fill_(7) end) end,
    ["an optimizer step"] = function(x) x.grad = al.ones { 2 }; al.optim.SGD({ x }, { lr = 0.1 }):step(); x.grad = nil end,
    ["an AdamW step"] = function(x) x.grad = al.ones { 2 }; al.optim.AdamW({ x }, { lr = 0.1 }):step(); x.grad = nil end,
  }
  for what, change in pairs(changes) do
    local x, w = P { 1, 2 }, P { 3, 4 }
    local y = (x * x):sum() + (w * 2):sum()
    change(x)
    local ok, err = pcall(y.backward, y)
    err = tostring(err)
    assert(not ok and err:find("changed in place", 1, true) and err:find("backward of mul", 1, true), what .. ": " .. err)
    T.eq(x.grad, nil, 0, what .. ": x.grad after the refusal")
    T.eq(w.grad, nil, 0, what .. ": w.grad after the refusal (checked before any backward ran)")
  end
end)

case("the root op's own saved tensor is checked too (the backward starts at the op that saved it)", function()
  -- y = x * c with x, c of shape (1): mul is the root and saved c = 3. Changed to 5 after the
  -- mul, a backward that skipped the root's check returned dy/dx = 5 instead of refusing.
  local x, c = P { 2 }, al.tensor { 3 }
  local y = x * c
  c:fill_(5)
  T.raises(function() y:backward() end, "changed in place")
  T.eq(x.grad, nil, 0, "x.grad after the refusal")
end)

case("in-place changes that leave what a backward needs intact are allowed", function()
  local x = P { 1, 2 }
  x:mul_(2)                             -- before its use: the graph sees [2, 4]
  local y = (x * 3):sum()               -- a scalar multiple saves nothing of x
  x:add_(1)
  y:backward()
  T.eq(x.grad:totable(), { 3, 3 })
  local a = P { 1, 2 }
  local z = (a * a):sum()
  z:backward()
  a:mul_(10)                            -- after the backward: nothing is pending
  T.eq(a.grad:totable(), { 2, 4 })
  local o = al.softmax(P { 0, 1 })      -- softmax saves its output: a clone may change
  local c = o:clone()
  al.no_grad(function() c:fill_(0) end)
  local s = (o * o):sum()
  s:backward()
end)

-- In-place ops are not recorded. Writing into the result of a recorded op, or from a source that
-- requires grad, left the backward blind to the write: y = a * 2; y:mul_(3) gave a.grad = 2, not
-- 6 (PyTorch records the op), and k:add_(w) gave w no gradient at all. Refused at the write
-- while grad mode is on; a leaf may be written (initialisers, loaders, optimizers).
case("in-place writes autograd would not see are refused; leaves and no_grad writes are allowed", function()
  local function fresh() local a = P { 1, 2 }; return a, a * 2 end
  local writes = {
    mul_ = function(y) y:mul_(3) end, add_ = function(y) y:add_(1) end, fill_ = function(y) y:fill_(0) end,
    zero_ = function(y) y:zero_() end, copy_ = function(y) y:copy_(al.ones { 2 }) end,
    normal_ = function(y) y:normal_(0, 1) end, uniform_ = function(y) y:uniform_(0, 1) end,
    index = function(y) y[1] = 5 end,
    ["a view's"] = function(y) y:narrow(1, 1, 1):fill_(0) end,
  }
  for what, write in pairs(writes) do
    local _, y = fresh()
    local err = T.raises(function() write(y) end, "in-place changes are not recorded")
    T.truthy(err:find("grad_fn=<", 1, true), what .. ": " .. err)
  end
  -- a leaf's view made with grad on is an op's result too (PyTorch refuses it as well)
  T.raises(function() P { 1, 2 }:narrow(1, 1, 1):fill_(0) end, "grad_fn=<narrow>")
  -- a source that requires grad: its gradient would be lost
  local w = P { 1, 1 }
  for what, write in pairs({ add_ = function(t) t:add_(w) end, copy_ = function(t) t:copy_(w) end,
                             index = function(t) t[1] = w[1] end }) do
    local err = T.raises(function() write(al.zeros { 2 }) end, "the source requires grad")
    T.truthy(err:find("attnlab." .. what, 1, true), err)
  end
  -- allowed: a leaf (as an initialiser writes a parameter), a detached source, and anything
  -- under no_grad (the backward then ignores the write, as PyTorch's does)
  local leaf = P { 1, 2 }
  leaf:mul_(3); leaf:copy_(al.ones { 2 }); leaf[1] = 4; leaf:add_(al.ones { 2 })
  T.eq(leaf:totable(), { 5, 2 })
  local t = al.zeros { 2 }
  t:add_(w:detach()); t:copy_(w:detach())
  local a, y = fresh()
  al.no_grad(function() y:mul_(3) end)
  al.sum(y):backward()
  T.eq(a.grad:totable(), { 2, 2 })
  T.eq(y:totable(), { 6, 12 })
end)

case("retain_graph: a change between two backward passes is refused on the second", function()
  local x = P { 1, 2 }
  local y = (x * x):sum()
  y:backward({ retain_graph = true })
  x:mul_(2)
  T.raises(function() y:backward() end, "changed in place")
  T.eq(x.grad:totable(), { 2, 4 })      -- only the first pass's gradient
end)

case("backward of a non-scalar without a gradient: a clear error with the shape", function()
  local x = P { 1, 2, 3 }
  local y = x * 2
  local err = T.raises(function() y:backward() end, "one-element")
  T.truthy(err:find("(3)", 1, true), err)
  T.raises(function() y:backward(al.ones { 2 }) end, "does not match")
  T.raises(function() y:backward(al.tensor({ 1, 2, 3 }, { dtype = "int64" })) end, "float32")
  y:backward(al.tensor { 1, 0, -1 })
  T.eq(x.grad:totable(), { 2, 0, -2 })
end)

case("backward of a one-element non-scalar (shape {1,1}) needs no gradient", function()
  local x = P { 3 }
  local y = (x * x):reshape { 1, 1 }
  y:backward()
  T.eq(x.grad:totable(), { 6 })
end)

case("backward of a tensor that does not require grad: a clear error", function()
  local x = al.tensor { 1, 2 }
  T.raises(function() x:sum():backward() end, "does not require grad")
end)

case("backward on a leaf seeds its own gradient", function()
  local x = P { 5 }
  x:backward()
  T.eq(x.grad:totable(), { 1 })
end)

case("no_grad: nothing is recorded; the results do not require grad", function()
  local x = P { 1, 2 }
  local y = al.no_grad(function() return (x * x):sum() end)
  T.eq(y.requires_grad, false)
  T.eq(y.grad_fn, nil)
  T.raises(function() y:backward() end, "does not require grad")
  T.eq(al.is_grad_enabled(), true)
  -- the mode is restored after an error inside no_grad
  pcall(al.no_grad, function() error("boom") end)
  T.eq(al.is_grad_enabled(), true)
  -- views made under no_grad are not connected either
  local v = al.no_grad(function() return x:narrow(1, 1, 1) end)
  T.eq(v.requires_grad, false)
end)

case("no_grad returns all results; enable_grad inside no_grad records", function()
  local x = P { 2 }
  local a, b = al.no_grad(function() return x * 2, x * 3 end)
  T.eq({ a:item(), b:item() }, { 4, 6 })
  local z = al.no_grad(function() return al.enable_grad(function() return x * x end) end)
  T.eq(z.requires_grad, true)
  z:sum():backward()
  T.eq(x.grad:totable(), { 4 })
end)

case("detach: shares storage, stops the gradient", function()
  local x = P { 1, 2 }
  local d = x:detach()
  T.eq(d.requires_grad, false)
  T.eq(d:storage_id(), x:storage_id())
  local y = (x * d):sum()               -- d/dx = d (d is a constant)
  y:backward()
  T.eq(x.grad:totable(), { 1, 2 })
  -- detaching a non-leaf cuts the graph there
  local x2 = P { 3 }
  local h = x2 * x2
  local z = (h:detach() * x2):sum()
  z:backward()
  T.eq(x2.grad:totable(), { 9 })
end)

case("leaves, non-leaves, grad_fn names, requires_grad_", function()
  local x = P { 1, 2 }
  T.eq(x.is_leaf, true)
  local y = al.exp(x)
  T.eq(y.is_leaf, false)
  T.eq(y.grad_fn, "exp")
  T.eq((x + x).grad_fn, "add")
  T.eq(al.matmul(x, x).grad_fn, "matmul")   -- 1-D @ 1-D: no extra reshape node
  y:sum():backward()
  T.eq(y.grad, nil)                     -- non-leaves keep no .grad (as PyTorch)
  T.raises(function() y:requires_grad_(false) end, "non-leaf")
  local i = al.tensor({ 1, 2 }, { dtype = "int64" })
  T.raises(function() i:requires_grad_() end, "float32")
  T.raises(function() al.tensor({ 1 }, { dtype = "int64", requires_grad = true }) end, "float32")
  local z = al.zeros { 2 }
  T.eq(z.requires_grad, false)
  z.requires_grad = true
  T.eq(z.requires_grad, true)
  z:requires_grad_(false)
  T.eq(z.requires_grad, false)
end)

case("only inputs that require grad get gradients", function()
  local a, b = P { 1, 2 }, al.tensor { 3, 4 }
  al.sum(a * b):backward()
  T.eq(a.grad:totable(), { 3, 4 })
  T.eq(b.grad, nil)
end)

case("int64 inputs of differentiable ops are constants (embedding ids, gather index)", function()
  local w = P { { 1, 2 }, { 3, 4 } }
  local ids = al.tensor({ 2, 2, 1 }, { dtype = "int64" })
  local y = al.embedding(w, ids):sum()
  y:backward()
  T.eq(w.grad:totable(), { { 1, 1 }, { 2, 2 } })
end)

case("assigning .grad: shape and dtype checked, value copied", function()
  local x = P { 1, 2 }
  local g = al.tensor { 5, 6 }
  x.grad = g
  g:fill_(0)
  T.eq(x.grad:totable(), { 5, 6 })
  T.raises(function() x.grad = al.tensor { 1, 2, 3 } end, "does not match")
  T.raises(function() x.grad = al.tensor({ 1, 2 }, { dtype = "int64" }) end, "float32")
end)

case("a deep chain (20,000 ops) backpropagates and frees without recursion", function()
  local x = P { 1 }
  local y = x
  for _ = 1, 20000 do y = y * 1.0001 end
  y:sum():backward()
  T.eq(x.grad:item(), 1.0001 ^ 20000, 1e-3 * 1.0001 ^ 20000)
  y = nil
  collectgarbage()
end)

case("graph memory is released when the outputs are collected", function()
  collectgarbage(); collectgarbage()
  local before = al.mem().live
  do
    local x = al.randn({ 64, 64 }, { requires_grad = true })
    local w = al.randn({ 64, 64 }, { requires_grad = true })
    for _ = 1, 5 do
      local h = al.layer_norm(al.gelu(al.matmul(x, w)))
      local loss = al.cross_entropy(h, al.randint(1, 64, { 64 }))
      loss:backward()
    end
    x.grad, w.grad = nil, nil
  end
  collectgarbage(); collectgarbage()
  T.eq(al.mem().live, before)
end)

case("in-place updates under no_grad keep the leaf a leaf (an optimizer step)", function()
  local w = P { 1, 2 }
  al.sum(w * w):backward()
  al.no_grad(function() w:add_(w.grad, -0.5) end)
  T.eq(w:totable(), { 0, 0 })
  T.eq(w.is_leaf, true)
  T.eq(w.requires_grad, true)
end)

case("gradients flow through every output of max (values) but not indices", function()
  local x = P { { 1, 5, 2 }, { 7, 0, 3 } }
  local v, i = al.max(x, 2)
  T.eq(i.requires_grad, false)
  T.eq(i:dtype(), "int64")
  al.sum(v * al.tensor { 2, 3 }):backward()
  T.eq(x.grad:totable(), { { 0, 2, 0 }, { 3, 0, 0 } })
end)

case("gradcheck catches a wrong gradient (a fake op with a 10% error)", function()
  -- x*1.1 through a detached path pretends to be x: its gradient is missing
  local fake = function(x) return x * x + (x * 0.1):detach() * x end
  local ok = al.gradcheck(fake, { al.tensor({ 0.5, 1.5, -1 }, { requires_grad = true }) })
  T.eq(ok, false)
  T.eq(al.gradcheck(function(x) return x * x end, { al.tensor({ 0.5, 1.5, -1 }, { requires_grad = true }) }), true)
end)

-- linear took its rows as numel / IN, and for IN = 0 that was 0 rows: the (3,2) output was
-- uninitialised memory instead of the bias, and the bias gradient 0 instead of 3. A weight of
-- 0 outputs made the bias backward divide by a panel of 0 columns (SIGFPE).
case("linear with 0 input features gives the bias; with 0 outputs its backward runs", function()
  local x, w, b = al.zeros({ 3, 0 }, { requires_grad = true }), al.zeros({ 2, 0 }, { requires_grad = true }), P { 0.5, -2 }
  local y = al.linear(x, w, b)
  T.eq(y:totable(), { { 0.5, -2 }, { 0.5, -2 }, { 0.5, -2 } })
  al.sum(y * al.tensor { 1, 10 }):backward()
  T.eq(b.grad:totable(), { 3, 30 })
  T.eq(x.grad:shape(), { 3, 0 })
  T.eq(w.grad:shape(), { 2, 0 })
  local x2, w2, b2 = P { { 1, 2, 3 }, { 4, 5, 6 } }, al.zeros({ 0, 3 }, { requires_grad = true }), al.zeros({ 0 }, { requires_grad = true })
  local y2 = al.linear(x2, w2, b2)
  T.eq(y2:shape(), { 2, 0 })
  al.sum(y2):backward()
  T.eq(x2.grad:totable(), { { 0, 0, 0 }, { 0, 0, 0 } })
  T.eq(b2.grad:shape(), { 0 })
end)

-- linear's backward reads the incoming gradient as a contiguous (R, OUT) block: a gradient
-- that arrives as a strided view (here through a transpose of y) must be made contiguous first.
-- y = x W^T + b, x (3,2), W (4,2); loss = sum(y^T .* c), c (4,3), so dL/dy = G = c^T (3,4):
-- gx = G W, gW = G^T x = c x, gb = row sums of c.
case("linear backward of a transposed (non-contiguous) gradient", function()
  local x = P { { 1, 2 }, { 3, 4 }, { 5, 6 } }
  local w = P { { 1, 0 }, { 0, 1 }, { 1, 1 }, { 2, -1 } }
  local b = P { 0, 0, 0, 0 }
  local c = al.tensor { { 1, 2, 3 }, { 4, 5, 6 }, { 7, 8, 9 }, { 10, 11, 12 } }
  local y = al.linear(x, w, b)
  al.sum(y:transpose(1, 2) * c):backward()
  T.eq(x.grad:totable(), { { 28, 1 }, { 32, 2 }, { 36, 3 } }, 1e-5)
  T.eq(w.grad:totable(), { { 22, 28 }, { 49, 64 }, { 76, 100 }, { 103, 136 } }, 1e-4)
  T.eq(b.grad:totable(), { 6, 15, 24, 33 }, 1e-5)
end)

-- The backward of a batch (..., M, K) @ a matrix (K, N) folds the batch into rows with a
-- reshape to (-1, K), which cannot be inferred when K or N is 0: a valid product's backward
-- failed with "cannot view float32 (2,1,0) as (-1,0)".
case("matmul backward of a batch times a matrix with an inner or outer size of 0", function()
  for _, s in ipairs { { { 2, 3, 0 }, { 0, 4 } }, { { 2, 0, 3 }, { 3, 0 } }, { { 2, 1, 0 }, { 0 } }, { { 2, 3, 2 }, { 2, 0 } } } do
    local a, b = al.zeros(s[1], { requires_grad = true }), al.zeros(s[2], { requires_grad = true })
    al.sum(al.matmul(a, b)):backward()
    T.eq(a.grad:shape(), s[1])
    T.eq(b.grad:shape(), s[2])
    T.eq(al.sum(al.abs(a.grad)):item() + al.sum(al.abs(b.grad)):item(), 0)
  end
end)

-- The gradient of x^p is p x^(p-1), and for p = 0 that was 0 * 0^-1 = NaN at x = 0.
case("pow(x, 0) has gradient 0 everywhere, x = 0 included (as PyTorch)", function()
  local x = P { 0, 2, -1 }
  al.sum(al.pow(x, 0) * al.tensor { 1, 2, 3 }):backward()
  T.eq(x.grad:totable(), { 0, 0, 0 })
  local z = P { 0, 3 }
  al.sum(z ^ 2 + z ^ 1):backward()
  T.eq(z.grad:totable(), { 1, 7 })
end)

-- gather of a 0-dim tensor refused every index as "out of range 1..0" (it read a size the
-- tensor does not have); PyTorch's gather(x, 0, index) of a scalar gives it back.
case("gather of a 0-dim tensor by a 0-dim index, and its gradient", function()
  local z = P(5)
  local y = al.gather(z, 1, al.tensor(1, { dtype = "int64" }))
  T.eq(y:shape(), {})
  T.eq(y:item(), 5)
  local l = y * 3
  l:backward()
  T.eq(z.grad:item(), 3)
  T.raises(function() al.gather(z, 1, al.tensor(2, { dtype = "int64" })) end, "gather: index 2 (element 1) out of range 1..1")
end)

-- gather's backward scatters the incoming gradient element by element in the index's order; a
-- gradient arriving as a strided view (a transpose of the result) must be read by its strides.
-- x (2,3), index (2,2) along dim 2 picks x[1][3], x[1][1], x[2][2], x[2][2]; loss =
-- sum(y^T .* c), so dL/dy = c^T = {{1,3},{2,4}}: x[1][3] gets 1, x[1][1] 3, x[2][2] 2 + 4.
case("gather backward of a transposed (non-contiguous) gradient", function()
  local x = P { { 1, 2, 3 }, { 4, 5, 6 } }
  local y = al.gather(x, 2, al.tensor({ { 3, 1 }, { 2, 2 } }, { dtype = "int64" }))
  T.eq(y:totable(), { { 3, 1 }, { 5, 5 } })
  al.sum(y:transpose(1, 2) * al.tensor { { 1, 2 }, { 3, 4 } }):backward()
  T.eq(x.grad:totable(), { { 3, 0, 1 }, { 0, 6, 0 } })
end)

-- max(x) and min(x) over all elements gave all of the gradient to the first of tied extremes;
-- PyTorch's max() without a dim shares it evenly among them (NaNs, when the max is NaN).
case("max and min over all elements share the gradient among tied extremes", function()
  local x = P { { 1, 5, 2 }, { 5, 0, 5 } }
  local l = al.max(x) * 3
  l:backward()
  T.eq(x.grad:totable(), { { 0, 1, 0 }, { 1, 0, 1 } })
  local y = P { { 1, 5 }, { 5, 1 } }
  l = al.min(y:transpose()) * 2
  l:backward()
  T.eq(y.grad:totable(), { { 1, 0 }, { 0, 1 } })
  local z = P { 1, 0 / 0, 3, 0 / 0 }
  l = al.max(z) * 3
  l:backward()
  T.eq(z.grad:totable(), { 0, 1.5, 0, 1.5 })
  local w = P { { 2, 2 } }
  l = al.sum(al.max(w, nil, true))
  l:backward()
  T.eq(w.grad:totable(), { { 0.5, 0.5 } })
  local v = P { { 2, 2 }, { 1, 3 } }   -- along a dim: to the index max returns, as PyTorch
  l = al.sum((al.max(v, 1)))
  l:backward()
  T.eq(v.grad:totable(), { { 1, 0 }, { 0, 1 } })
end)

return cases
