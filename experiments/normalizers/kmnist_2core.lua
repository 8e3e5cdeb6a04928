-- experiments/normalizers/kmnist_2core.lua -- the KMNIST follow-up (kmnist.lua) with the
-- schedule halved to fit next to the main benchmark on one 2-core machine: 7 normalizers x
-- 10 seeds, 10 epochs (instead of 20) on the 8,000 re-split training images, the 2,000-image
-- re-split test set. ~40 s per run at 1 thread on a quiet machine.
--
--   bin/attnlab scripts/sweep.lua experiments/normalizers/kmnist_2core.lua --workers 2
--   bin/attnlab scripts/analyze.lua results/normalizers-kmnist-2core --out experiments/normalizers/kmnist_2core/REPORT.md
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "."
local exp = dofile(here .. "/kmnist.lua")

exp.name = "normalizers-kmnist-2core"
exp.description = "KMNIST follow-up, 10 seeds, 10 epochs (half the schedule of kmnist.lua)"
exp.schedule.epochs = 10
exp.quick = nil
return exp
