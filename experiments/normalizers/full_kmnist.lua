-- experiments/normalizers/full_kmnist.lua -- kmnist.lua with init = "torch" (the default since
-- the parity work), run by experiments/normalizers/full/run.sh (issue 18). The KMNIST follow-up
-- of the normalizer study at its own schedule: the same compact classifier and seven
-- normalizers on KMNIST, 10 seeds, one family of 6 comparisons (every sparse normalizer vs
-- softmax, Holm-corrected together).
--
--   bin/attnlab scripts/analyze.lua experiments/normalizers/full/records/kmnist
--
-- Protocol of this copy (shared/data/README.md): the KMNIST training images are missing, so
-- al.data.kmnist re-splits the complete, bit-exact test file -- records 1-8,000 train,
-- 8,001-10,000 test. With the canonical train-images-idx3-ubyte.gz in ATTNLAB_DATA the same
-- table runs on the canonical 60k/10k split. 70 runs of 20 epochs on 8,000 images: ~1 min
-- each on one core, ~40 min with 2 workers.
-- Derived from kmnist.lua; only what differs is here (a sweep resumes by run name and
-- config, so every resolved value must stay as it was).
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local exp = dofile(here .. "kmnist.lua")
exp.name = "normalizers-full-kmnist"
exp.schedule.init = "torch"
return exp
