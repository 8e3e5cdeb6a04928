-- experiments/normalizers/full/init_sign.lua -- the init-robustness family (issue 18, item 3):
-- does each sparse normalizer's Δ vs softmax keep its sign when the initialisation changes
-- from PyTorch's module defaults (init = "torch", records/main) to timm's (records/init_timm)?
--   bin/attnlab experiments/normalizers/full/init_sign.lua experiments/normalizers/full/records/main \
--       experiments/normalizers/full/records/init_timm [--out FILE]
-- The rules (Δ on matched seeds, the paired change Δ_timm - Δ_torch, the sign verdict) live in
-- attnlab.report.robustness. The family's own Holm-corrected tests under timm's init are in
-- the analyze.lua report of records/init_timm.
local al = require "attnlab"
local cli = al.cli
local SPEC = {
  name = "init_sign.lua",
  usage = "bin/attnlab experiments/normalizers/full/init_sign.lua TORCH_DIR TIMM_DIR [--out FILE]",
  about = "Compare each normalizer's Δ vs softmax under init torch and init timm, seed by seed.",
  options = { { "out", "FILE", "write the Markdown table there (atomically) instead of printing it" } },
  positional = { { "TORCH_DIR", "records under init = torch (records/main)" },
                 { "TIMM_DIR", "records under init = timm (records/init_timm)" } },
  examples = { "bin/attnlab experiments/normalizers/full/init_sign.lua experiments/normalizers/full/records/main experiments/normalizers/full/records/init_timm" },
}

cli.run(SPEC, arg, function(opts, rest)
  if #rest ~= 2 then cli.die(SPEC, "TORCH_DIR and TIMM_DIR are required", 2) end
  local A, B = al.report.load(rest[1]), al.report.load(rest[2])
  -- an invalid record or a folder without finished records is one line; failed runs are named
  for _, d in ipairs({ A, B }) do
    for _, note in ipairs(al.report.check_loaded(d)) do io.stderr:write("init_sign.lua: ", note, "\n") end
  end
  local R = al.report.robustness.compare(A, B, { baseline = "softmax", a_name = "torch", b_name = "timm" })
  local md = al.report.robustness.markdown(R)
  cli.emit(opts.out, md)
end)
