-- tests/lua/test_halting_control.lua -- the A-ViT keep-rate controller (issue 20,
-- s2s/halting.lua's header): its update rules by hand, its options' checks, that an A-ViT
-- fine-tuning stopped after one epoch resumes with the same controller state and the same
-- numbers, and that the gate-centre controller makes a small A-ViT meet its targets.
local al = require "attnlab"
local T = require "harness"
local s2s = require "attnlab.s2s"
local H = s2s.halting

local cases, case = T.suite()

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

case("controller: gate_center <- clamp(gate_center - center_eta * (keep - target))", function()
  local ctl = H.controller(H.config({ keep_rate = 0.5, center_eta = 2, gate_scale = 5, gate_center = 1 }, 4))
  T.eq(ctl.lambda, H.DEFAULTS.ponder_weight)
  T.eq(ctl.center, 1)
  T.eq(ctl:update(0.9), H.DEFAULTS.ponder_weight, 0, "lambda stays without keep_eta")
  T.close(ctl.center, 1 - 2 * 0.4, 1e-15)                -- too many tokens kept: the centre drops
  ctl:update(0.3)
  T.close(ctl.center, 0.2 + 2 * 0.2, 1e-15)              -- too few: it rises
  T.eq(ctl:config({ gate_center = 9, eps = 0.01 }), { gate_center = ctl.center, eps = 0.01 })
  for _ = 1, 100 do ctl:update(0) end
  T.eq(ctl.center, 1 + 3 * 5, 0, "clamped at gate_center + 3 * gate_scale")
  for _ = 1, 100 do ctl:update(1) end
  T.eq(ctl.center, 1 - 3 * 5, 0, "and at gate_center - 3 * gate_scale")
  local c2 = H.controller(H.config({ keep_rate = 0.5, center_eta = 2, center_range = 0.5, gate_center = 1 }, 4))
  c2:update(0)
  T.eq(c2.center, 1.5, 0, "center_range")
  c2:load({ lambda = 0.25, center = -3 })
  T.eq(c2:state(), { lambda = 0.25, center = -3 })
  T.eq(H.controller(H.config({ keep_rate = 0.5, center_eta = 0 }, 4)), nil)
  T.raises(function() H.config({ center_eta = -1 }, 4) end, "center_eta must be a finite number >= 0")
  T.raises(function() H.config({ center_range = 1 / 0 }, 4) end, "center_range must be a finite number >= 0")
end)

-- The tracking check: a small A-ViT on the synthetic task fine-tuned at three targets, the
-- keep rate measured on its test images afterwards. Without a controller (or with one that
-- stops acting) the measured rates do not follow the targets.
case("controller: the gate centre makes a small A-ViT meet targets 0.5 / 0.65 / 0.8 within 0.05", function()
  local d = T.tmpdir("halting")
  local t = al.nn.ViT({ image_size = 16, patch_size = 4, channels = 3, num_classes = 5, dim = 16, depth = 4, heads = 2, seed = 3 })
  s2s.save_model(d .. "/t.safetensors", t)
  local got = {}
  for _, target in ipairs({ 0.5, 0.65, 0.8 }) do
    local rec = s2s.avit({ teacher = d .. "/t.safetensors", dataset = "synthetic", train_limit = 256, test_limit = 128,
                           image_size = 16, batch_size = 32, epochs = 3, eval_limit = 32, eval_mode = "masked", lr = 1e-3,
                           halting = { gate_scale = 5, gate_center = 1, ponder_weight = 5e-3, distr_weight = 0.1,
                                       keep_rate = target, center_eta = 2 } })
    got[#got + 1] = ("%.2f -> %.3f"):format(target, rec.mean_keep_rate)
    T.truthy(math.abs(rec.mean_keep_rate - target) <= 0.05, ("target %.2f, measured %.3f"):format(target, rec.mean_keep_rate))
    T.eq(rec.halting.gate_center, rec.gate_center, 0, "the saved halting config carries the final centre")
  end
  T.rm_rf(d)
end)

case("controller: A-ViT fine-tuning resumes with the same lambda and numbers", function()
  local d = T.tmpdir("halting")
  local t = al.nn.ViT({ image_size = 16, patch_size = 4, channels = 3, num_classes = 5, dim = 16, depth = 3, heads = 2, seed = 3 })
  s2s.save_model(d .. "/t.safetensors", t)
  local function cfg(extra)
    local c = { teacher = d .. "/t.safetensors", dataset = "synthetic", train_limit = 48, test_limit = 16, image_size = 16,
                batch_size = 16, epochs = 2, eval_limit = 16, eval_mode = "masked", lr = 1e-3,
                halting = { gate_scale = 5, gate_center = 1, keep_rate = 0.4, keep_eta = 0.5, center_eta = 1 } }
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
  T.truthy(full.gate_center ~= 1, "the centre moved")
  T.eq(again.gate_center, full.gate_center)
  for i = 1, 2 do
    T.eq(again.history[i].loss, full.history[i].loss, 0, "epoch " .. i .. " loss")
    T.eq(again.history[i].ponder_lambda, full.history[i].ponder_lambda, 0, "epoch " .. i .. " lambda")
    T.eq(again.history[i].gate_center, full.history[i].gate_center, 0, "epoch " .. i .. " centre")
  end
  T.eq(again.test_accuracy, full.test_accuracy)
  T.rm_rf(d)
end)

return cases
