-- attnlab.report.cells -- the runs of a loaded results folder (al.report.load) indexed as
-- cells[label][normalizer][seed] = run, the shape in which selection.lua and robustness.lua
-- pair runs seed by seed. A duplicate (label, normalizer, seed) cannot occur: report.load keeps
-- the first and lists the others in data.duplicates.
return function(data)
  local cells = {}
  for _, r in ipairs(data.runs) do
    local by_norm = cells[r.label] or {}
    cells[r.label] = by_norm
    by_norm[r.normalizer] = by_norm[r.normalizer] or {}
    by_norm[r.normalizer][r.seed] = r
  end
  return cells
end
