-- experiments/normalizers/full/val_topk.lua -- the confirmatory test of validation-selected top-k
-- (issue 18, item 4) from the records of experiments/normalizers/full_val_topk.lua.
--   bin/attnlab experiments/normalizers/full/val_topk.lua experiments/normalizers/full/records/val_topk [--out FILE]
-- Per dataset, the top-k ratio with the highest mean validation accuracy (last epoch, over the
-- seeds every ratio has) is chosen without looking at the test set; then that ratio's test
-- accuracy is compared with softmax's over the matched seeds by one paired t-test, unadjusted
-- (one pre-registered comparison per dataset). The rules live in attnlab.report.selection.
local al = require "attnlab"
local cli = al.cli
local SPEC = {
  name = "val_topk.lua",
  usage = "bin/attnlab experiments/normalizers/full/val_topk.lua RECORDS_DIR [--out FILE]",
  about = "Choose the top-k ratio on validation accuracy, then test that one ratio against softmax.",
  options = { { "out", "FILE", "write the Markdown table there (atomically) instead of printing it" } },
  positional = { { "RECORDS_DIR", "the folder the sweep of full_val_topk.lua wrote" } },
  examples = { "bin/attnlab experiments/normalizers/full/val_topk.lua experiments/normalizers/full/records/val_topk" },
}

cli.run(SPEC, arg, function(opts, rest)
  local dir = rest[1] or cli.die(SPEC, "RECORDS_DIR is required", 2)
  local data = al.report.load(dir)
  -- an invalid record (say a validation accuracy of 7.0, which would win the choice) or a folder
  -- without finished records is one line; failed runs are named on stderr
  for _, note in ipairs(al.report.check_loaded(data)) do io.stderr:write("val_topk.lua: ", note, "\n") end
  local S = al.report.selection.select(data, { baseline = "softmax", candidates = { "topk:0.125", "topk:0.25", "topk:0.5" } })
  local md = al.report.selection.markdown(S)
  cli.emit(opts.out, md)
end)
