-- tests/slurm/tiny_experiment.lua -- the sweep run_slurm_test.sh sends through Slurm and runs
-- locally for comparison: 2 normalizers x 2 seeds on a 400-image slice of Fashion-MNIST.
return {
  name = "slurm-test",
  datasets = { "fashion_mnist" },
  normalizers = { "softmax", "topk:0.25" },
  seeds = { 1, 2 },
  schedule = { epochs = 1, batch_size = 50, train_limit = 400, test_limit = 500 },
}
