-- tests/lua/test_halting_control.lua -- the A-ViT keep-rate controller (issue 20,
-- s2s/halting.lua's header): its update rule by hand, its options' checks, and that an A-ViT
-- fine-tuning stopped after one epoch resumes with the same lambda and the same numbers.
local al = require "attnlab"
local T = require "harness"
local s2s = require "attnlab.s2s"
local H = s2s.halting

local cases = {}
local function case(name, fn) cases[#cases + 1] = { name = name, fn = fn } end

case("controller: lambda <- max(0, lambda + eta * (keep - target))", function()
  T.eq(H.controller(H.config({ keep_rate = 0.5 }, 4)), nil)   -- off by default: A-ViT as published
  T.eq(H.controller(H.config({ keep_rate = 0.5, keep_eta = 0 }, 4)), nil)
  local ctl = H.controller(H.config({ keep_rate = 0.5, keep_eta = 0.1, ponder_weight = 0.01 }, 4))
  T.eq(ctl.lambda, 0.01)
  T.eq(ctl.target, 0.5)
  T.close(ctl:update(0.9), 0.01 + 0.1 * 0.4, 1e-15)      -- too many tokens kept: lambda grows
  T.close(ctl:update(0.7), 0.05 + 0.1 * 0.2, 1e-15)
  T.close(ctl:update(0.2), 0.07 - 0.1 * 0.3, 1e-15)      -- too few: it shrinks
  T.eq(ctl:update(0.0), 0)                                -- and stops at 0
  T.eq(ctl:update(0.5), 0)
  local c2 = H.controller(H.config({ keep_rate = 0.5, keep_eta = 0.1 }, 4))
  c2:load(ctl:state())
  T.eq(c2.lambda, ctl.lambda)
  -- a negative floor: the equality constraint, lambda may reward depth
  local c3 = H.controller(H.config({ keep_rate = 0.5, keep_eta = 0.1, ponder_weight = 0, keep_lambda_min = -0.05 }, 4))
  T.close(c3:update(0.2), -0.03, 1e-15)
  T.eq(c3:update(0.0), -0.05)
  T.raises(function() H.config({ keep_lambda_min = 0.1 }, 4) end, "keep_lambda_min must be a number <= 0")
  T.raises(function() H.config({ keep_eta = -1 }, 4) end, "keep_eta must be a finite number >= 0")
  T.raises(function() H.config({ keep_eta = "fast" }, 4) end, "keep_eta must be a finite number >= 0")
end)

case("controller: A-ViT fine-tuning resumes with the same lambda and numbers", function()
  local d = os.tmpname()
  os.remove(d)
  os.execute("mkdir -p " .. d)
  local t = al.nn.ViT({ image_size = 16, patch_size = 4, channels = 3, num_classes = 5, dim = 16, depth = 3, heads = 2, seed = 3 })
  s2s.save_model(d .. "/t.safetensors", t)
  local function cfg(extra)
    local c = { teacher = d .. "/t.safetensors", dataset = "synthetic", train_limit = 48, test_limit = 16, image_size = 16,
                batch_size = 16, epochs = 2, eval_limit = 16, eval_mode = "masked", lr = 1e-3,
                halting = { gate_scale = 5, gate_center = 1, keep_rate = 0.4, keep_eta = 0.5 } }
    for k, v in pairs(extra) do c[k] = v end
    return c
  end
  local full = s2s.avit(cfg({ checkpoint = d .. "/a.ckpt" }))
  local part = s2s.avit(cfg({ checkpoint = d .. "/b.ckpt", stop_after = 1 }))
  T.eq(#part.history, 1)
  local again = s2s.avit(cfg({ checkpoint = d .. "/b.ckpt" }))
  T.eq(#again.history, 2)
  T.truthy(full.ponder_lambda ~= 5e-4, "lambda moved from ponder_weight")
  T.eq(again.ponder_lambda, full.ponder_lambda)
  for i = 1, 2 do
    T.eq(again.history[i].loss, full.history[i].loss, 0, "epoch " .. i .. " loss")
    T.eq(again.history[i].ponder_lambda, full.history[i].ponder_lambda, 0, "epoch " .. i .. " lambda")
  end
  T.eq(again.test_accuracy, full.test_accuracy)
  os.execute("rm -rf " .. d)
end)

return cases
