-- experiments/normalizers/full/masking.lua -- what masking the padding changes on 20 Newsgroups
-- (issue 18, beyond the study). The study feeds each document as 96 tokens + the class token
-- with padding as ordinary positions (label newsgroups20); attnlab also trains the same cells
-- with the padding masked out of every attention row (label newsgroups20_masked). Both live in
-- one records folder and share seeds, so each normalizer's Δ vs softmax is compared seed by
-- seed under the two conditions:
--   bin/attnlab experiments/normalizers/full/masking.lua experiments/normalizers/full/records/main \
--       [--out experiments/normalizers/full/MASKING.md]
-- The rules (Δ on matched seeds, the paired change Δ_masked - Δ_unmasked, the sign verdict)
-- live in attnlab.report.robustness; each condition's own Holm-corrected tests are in
-- the analyze.lua report of the same folder.
local al = require "attnlab"
local cli = al.cli
local UNMASKED, MASKED = "newsgroups20", "newsgroups20_masked"
local SPEC = {
  name = "masking.lua",
  usage = "bin/attnlab experiments/normalizers/full/masking.lua RECORDS_DIR [--out FILE]",
  about = ("Compare each normalizer's Δ vs softmax on %s (padding as positions) and %s (padding masked), seed by seed.")
    :format(UNMASKED, MASKED),
  options = { { "out", "FILE", "write the Markdown table there (atomically) instead of printing it" } },
  positional = { { "RECORDS_DIR", ("records with both labels, %s and %s (records/main)"):format(UNMASKED, MASKED) } },
  examples = { "bin/attnlab experiments/normalizers/full/masking.lua experiments/normalizers/full/records/main" },
}

cli.run(SPEC, arg, function(opts, rest)
  if #rest ~= 1 then cli.die(SPEC, "RECORDS_DIR is required (and only one)", 2) end
  local D = al.report.load(rest[1])
  -- an invalid record (a truncated one, say) is one line, never a seed left out unsaid
  for _, note in ipairs(al.report.check_loaded(D)) do io.stderr:write("masking.lua: ", note, "\n") end
  local R = al.report.robustness.compare(D, D, { baseline = "softmax", a_name = "unmasked", b_name = "masked",
                                                 labels = { [MASKED] = UNMASKED } })
  cli.emit(opts.out, al.report.robustness.markdown(R))
end)
