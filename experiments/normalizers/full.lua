-- experiments/normalizers/full.lua -- the normalizer study's main benchmark at its full schedule
-- (issue 18): the compact classifier (2 pre-LN blocks, 4 heads, width 64, N = 17 for the
-- images) with PyTorch's module initialisation (init = "torch", the default since the parity
-- work; experiments/classifier/RESULTS.md "Parity with PyTorch"), seven normalizers, seeds
-- 1..10, 10 epochs on the full training sets. main.lua is the same grid with the old recipe;
-- main_2core.lua the short schedule the first results came from.
--
--   sh experiments/normalizers/full/run.sh      (headline cells first; resumable)
--   bin/attnlab scripts/analyze.lua experiments/normalizers/full/records/main \
--       --out experiments/normalizers/full/REPORT.md
--
-- Cost: an image run of 10 epochs takes ~2-3 min on one core of this 2-core machine, a text or
-- marker run (97 tokens) ~5 min: 350 runs ~ 20 core-hours, spread over sessions (the sweep
-- resumes; finished records are committed at the end of each session).
-- Derived from main.lua (the same grid, families and overrides); only what differs is here.
-- A sweep resumes by run name and config, so every resolved value must stay as it was.
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local exp = dofile(here .. "main.lua")
exp.name = "normalizers-full"
exp.description = "full schedule: compact classifier, 7 attention normalizers, 4 tasks (+ masked 20 Newsgroups), 10 seeds, init torch"
exp.schedule.init = "torch"
exp.quick.seeds = { 1, 2 }
return exp
