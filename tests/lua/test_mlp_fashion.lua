-- End-to-end: the MLP of scripts/mlp_fashion.lua on the real Fashion-MNIST, at a
-- smaller scale (12,800 training images, one epoch): it must clearly learn. The full
-- epoch reaches ~85.7% (experiments/core/RESULTS.md).
local al = require "attnlab"
local T = require "harness"

local function have_fmnist()
  return pcall(al.data.find, "fashion-mnist", { "fashion-mnist/train-images-idx3-ubyte.gz", "fashion-mnist/train-images-idx3-ubyte" })
end

return {
  { name = "MLP on real Fashion-MNIST: 12.8k images, 1 epoch -> test accuracy >= 0.78", fn = function()
    if not have_fmnist() then T.skip("Fashion-MNIST not found (apt-get install dataset-fashion-mnist)") end
    local run = assert(loadfile("scripts/mlp_fashion.lua"))("mlp_fashion")
    local acc = run { epochs = 1, hidden = 128, batch = 64, lr = 2e-3, seed = 1, limit = 12800 }
    print(("# test accuracy %.4f"):format(acc))
    assert(acc >= 0.78, ("accuracy %.4f below 0.78"):format(acc))
  end },
  { name = "same seed, same accuracy (reproducible run)", fn = function()
    if not have_fmnist() then T.skip("Fashion-MNIST not found") end
    local run = assert(loadfile("scripts/mlp_fashion.lua"))("mlp_fashion")
    local a = run { epochs = 1, hidden = 32, batch = 128, lr = 2e-3, seed = 3, limit = 2560 }
    local b = run { epochs = 1, hidden = 32, batch = 128, lr = 2e-3, seed = 3, limit = 2560 }
    assert(a == b, ("two runs with seed 3 differ: %.6f vs %.6f"):format(a, b))
  end },
}
