-- attnlab.s2s.profile -- layer-wise sparsity profile of a ViT's attention over a dataset
-- split, and token-interaction heatmaps (SVG written directly; PNG through gnuplot when
-- it is installed).
--
-- Per layer and head, averaged over the real query rows (a query of a halted token, or
-- a padding position, is not a real row; keys outside the keep mask are not real keys):
--   entropy       -sum_j p_ij log p_ij (nats; 0 log 0 = 0)
--   entropy_norm  entropy / log(real keys)  (1 = uniform, 0 = one key)
--   k90           effective support: the fewest keys whose weights sum to >= 90% of the
--                 row's mass (exact, ties included: computed by bisection on a threshold
--                 and then counting the tied group, see k_at_mass)
--   k90_frac      k90 / real keys
--   nonzero       fraction of real keys with p_ij > 0 (1 under softmax; the support
--                 size under sparsemax/entmax/top-k)
--   topk_mass[k]  the mass held by the k largest weights of the row
-- The study's observation to test: shallow layers mix densely (high entropy, large
-- k90), deep layers are sparse. profile() reports the Spearman correlation of layer
-- depth with k90_frac and entropy_norm (negative = sparser with depth).
local al = require "attnlab"
local H = require "attnlab.s2s.halting"

local P = {}

-- Number of largest entries needed to reach `mass` of each row. p (..., n) >= 0 with
-- rows summing to ~1; returns (..., 1) float counts. Bisection keeps the invariant
-- S(lo) >= mass > S(hi), S(t) = sum of p_ij >= t; then t = the largest value below hi
-- is the value at which the sorted cumulative sum crosses `mass`, and the answer is
-- #{p > t} + ceil((mass - S(>t)) / t) (only as many of the tied values at t as needed).
-- The final loop steps hi down one distinct value at a time for rows not yet resolved.
function P.k_at_mass(p, mass, iters)
  mass = mass or 0.9
  iters = iters or 24
  local s = p:shape()
  local shp = {}
  for i = 1, #s - 1 do shp[i] = s[i] end
  shp[#s] = 1
  local n = s[#s]
  return al.no_grad(function()
    local lo = al.zeros(shp)
    local hi = al.full(shp, 1.5)
    local function S(t) return al.sum(p * al.ge(p, t), -1, true) end
    for _ = 1, iters do
      local mid = (lo + hi) * 0.5
      local ok = al.ge(S(mid), mass)
      lo = al.where(ok, mid, lo)
      hi = al.where(ok, hi, mid)
    end
    local t, above, cnt_above
    for _ = 1, n + 1 do
      t = al.max(al.where(al.lt(p, hi), p, al.full_like(p, -1)), -1, true)
      local done = al.ge(S(t), mass * (1 - 1e-6))
      if al.min(done):item() > 0 then break end
      hi = al.where(done, hi, t)
    end
    above = S(hi)
    cnt_above = al.sum(al.ge(p, hi), -1, true)
    local tt = al.clamp(t, 1e-30, 2)
    local need = -al.floor(-((mass - above) / tt - 1e-5))     -- ceil, forgiving rounding
    local tied = al.sum(al.eq(p, t), -1, true)
    need = al.minimum(al.maximum(need, al.zeros_like(need)), tied)
    return cnt_above + need
  end)
end

-- Statistics of one attention tensor p (B,H,N,N) with keep mask (B,N) or nil.
-- Returns per-head sums over real query rows (Lua lists) and the row count per head.
local function row_stats(p, keep, topk)
  local s = p:shape()
  local B, Hh, N = s[1], s[2], s[3]
  local qm = keep and keep:reshape({ B, 1, N }) or al.ones({ B, 1, N })
  local km = keep and keep:reshape({ B, 1, 1, N }) or nil
  local nkeys = keep and al.sum(keep, 2, true):reshape({ B, 1, 1 }) or al.full({ B, 1, 1 }, N)
  local ent = -al.sum(p * al.log(p + al.eq(p, 0)), 4)                          -- (B,H,N)
  local lognk = al.log(al.maximum(nkeys, al.full_like(nkeys, 1)))
  local entn = ent / al.maximum(lognk, al.full_like(lognk, 1e-12)) * al.gt(nkeys, 1)
  local nzm = al.gt(p, 0)
  if km then nzm = nzm * km end
  local nz = al.sum(nzm, 4) / nkeys
  local k90 = P.k_at_mass(p, 0.9):reshape({ B, Hh, N })
  local k90f = k90 / nkeys
  local function per_head(t)   -- sum over (B, N) of t * qm -> list of H
    return al.sum(al.sum(t * qm, 3), 1):totable()
  end
  local out = { entropy = per_head(ent), entropy_norm = per_head(entn), nonzero = per_head(nz), k90 = per_head(k90),
                k90_frac = per_head(k90f), topk_mass = {} }
  for _, k in ipairs(topk) do
    local m
    if k >= N then m = al.sum(p, 4)
    else
      local sel = al.gt(al.topk_softmax(p, (k - 0.5) / N), 0)
      m = al.sum(p * sel, 4)
    end
    out.topk_mass[k] = per_head(m)
  end
  out.rows = al.sum(qm):item()
  -- head-averaged map over real query rows: sum_b sum_h p * qm  (N,N), and row counts (N)
  local qm4 = qm:reshape({ B, 1, N, 1 })
  out.map = al.sum(al.sum(p * qm4, 2), 1)                                          -- (N,N)
  out.map_rows = al.sum(qm:reshape({ B, N }), 1)                                    -- (N)
  return out
end

local function spearman(xs, ys)
  local n = #xs
  if n < 3 then return nil end
  local function ranks(v)
    local idx = {}
    for i = 1, n do idx[i] = i end
    table.sort(idx, function(a, b) return v[a] < v[b] end)
    local r = {}
    local i = 1
    while i <= n do
      local j = i
      while j < n and v[idx[j + 1]] == v[idx[i]] do j = j + 1 end
      for k = i, j do r[idx[k]] = (i + j) / 2 end
      i = j + 1
    end
    return r
  end
  local rx, ry = ranks(xs), ranks(ys)
  local mx, my = 0, 0
  for i = 1, n do mx, my = mx + rx[i], my + ry[i] end
  mx, my = mx / n, my / n
  local sxy, sxx, syy = 0, 0, 0
  for i = 1, n do
    sxy = sxy + (rx[i] - mx) * (ry[i] - my)
    sxx = sxx + (rx[i] - mx) ^ 2
    syy = syy + (ry[i] - my) ^ 2
  end
  if sxx == 0 or syy == 0 then return 0 end
  return sxy / math.sqrt(sxx * syy)
end
P.spearman = spearman

-- Profile `model` (an al.nn.ViT, possibly with replaced blocks) over dataset `ds`.
-- opts: batch_size (100), limit (examples, default all), topk ({1, 5}), halting (a
-- config: profile under the model's own halting masks, only running tokens count),
-- progress (print per batch). Returns
--   { layers = { [l] = { mixer = "attention"|name, heads = H, entropy = {per head}, ..., mean = {...} } },
--     maps = { [l] = Lua N x N table (head- and row-averaged) }, n = examples, tokens = N,
--     trend = { k90_frac = rho, entropy_norm = rho, nonzero = rho }, keep_rate = {per layer} }
function P.profile(model, ds, opts)
  opts = opts or {}
  -- the profile section's keys (s2s/check.lua); topk k also at most the tokens, checked below
  local K = require "attnlab.s2s.check"
  local p, why = K.check("profile", { limit = opts.limit, batch_size = opts.batch_size, topk = opts.topk }, { partial = true })
  if p or why then error("s2s.profile: " .. K.phrase(p, why), 0) end
  -- (no example: Loader refused the limit of 0 computed here, naming an option never given)
  if type(ds) == "table" and ds.n == 0 then error("s2s.profile: the dataset has no examples", 0) end
  local topk = opts.topk or { 1, 5 }
  if type(topk) == "number" then topk = { topk } end
  for _, k in ipairs(topk) do
    if model.num_tokens and k > model.num_tokens then
      error(("s2s.profile: topk %d is more than the model's %d tokens"):format(k, model.num_tokens), 0)
    end
  end
  local bs = opts.batch_size or 100
  local limit = opts.limit and math.min(opts.limit, ds.n) or ds.n
  local L = model.depth
  local attn = {}
  for l = 1, L do
    local a = model:block(l).attn
    if getmetatable(a) == al.nn.MultiHeadAttention then
      attn[l] = a
      a.keep_attention = true
    end
  end
  local acc = {}
  local seen, active, tot_tokens = 0, {}, 0
  local N
  model:eval()
  local loader = al.data.Loader(ds, { batch_size = bs, limit = limit })
  local ok, err = pcall(al.no_grad, function()
    for x, _, b, extra in loader:iter(1) do
      local _, info = H.forward(model, x, { halting = opts.halting, key_mask = extra and extra.key_mask })
      N = info.tokens
      tot_tokens = tot_tokens + info.batch * N
      for l = 1, L do
        active[l] = (active[l] or 0) + info.active[l]
        local a = attn[l]
        if a then
          local keep = info.keep[l]
          if extra and extra.key_mask then keep = keep * extra.key_mask end
          local st = row_stats(a.last_attention, keep, topk)
          local A = acc[l]
          if not A then
            A = { rows = 0, map = st.map, map_rows = st.map_rows, topk_mass = {} }
            for _, k in ipairs({ "entropy", "entropy_norm", "nonzero", "k90", "k90_frac" }) do A[k] = st[k] end
            for _, k in ipairs(topk) do A.topk_mass[k] = st.topk_mass[k] end
            A.rows = st.rows
            acc[l] = A
          else
            A.rows = A.rows + st.rows
            A.map = A.map + st.map
            A.map_rows = A.map_rows + st.map_rows
            for _, k in ipairs({ "entropy", "entropy_norm", "nonzero", "k90", "k90_frac" }) do
              for h = 1, #A[k] do A[k][h] = A[k][h] + st[k][h] end
            end
            for _, k in ipairs(topk) do
              for h = 1, #A.topk_mass[k] do A.topk_mass[k][h] = A.topk_mass[k][h] + st.topk_mass[k][h] end
            end
          end
          a.last_attention = nil
        end
      end
      seen = seen + x:shape()[1]
      if opts.progress then io.stdout:write(("\rprofile: %d / %d examples"):format(seen, limit)); io.stdout:flush() end
    end
  end)
  for _, a in pairs(attn) do a.keep_attention = false; a.last_attention = nil end
  if opts.progress then io.stdout:write("\n") end
  if not ok then error(err, 0) end
  local res = { layers = {}, maps = {}, n = seen, tokens = N, keep_rate = {}, topk = topk, halting = opts.halting and true or false }
  local depth_x, ys = {}, { k90_frac = {}, entropy_norm = {}, nonzero = {} }
  for l = 1, L do
    res.keep_rate[l] = active[l] / tot_tokens
    local A = acc[l]
    if not A then
      local m = model:block(l).attn
      res.layers[l] = { mixer = m.__name or "?" }
    else
      local r = { mixer = "attention", normalizer = attn[l].normalizer.name, heads = #A.entropy, rows = A.rows,
                  mean = {}, topk_mass = {} }
      local rows_per_head = A.rows   -- each head sees the same rows
      for _, k in ipairs({ "entropy", "entropy_norm", "nonzero", "k90", "k90_frac" }) do
        r[k] = {}
        local s = 0
        for h = 1, #A[k] do r[k][h] = A[k][h] / rows_per_head; s = s + r[k][h] end
        r.mean[k] = s / #A[k]
      end
      for _, k in ipairs(topk) do
        local v, s = {}, 0
        for h = 1, #A.topk_mass[k] do v[h] = A.topk_mass[k][h] / rows_per_head; s = s + v[h] end
        r.topk_mass[tostring(k)] = v
        r.mean["top" .. k .. "_mass"] = s / #v
      end
      res.layers[l] = r
      -- map: average over heads and real query rows
      local rows = A.map_rows:totable()
      local mt = A.map:totable()
      local Hh = #A.entropy
      for i = 1, #mt do
        local d = rows[i] * Hh
        for j = 1, #mt[i] do mt[i][j] = d > 0 and mt[i][j] / d or 0 end
      end
      res.maps[l] = mt
      depth_x[#depth_x + 1] = l
      for k in pairs(ys) do ys[k][#ys[k] + 1] = r.mean[k] end
    end
  end
  res.trend = {}
  for k, v in pairs(ys) do res.trend[k] = spearman(depth_x, v) end
  return res
end

-- ---- heatmaps ----------------------------------------------------------------------------------
local function color(v)      -- v in [0,1] -> white .. #6fa8dc .. #08306b (light to dark blue)
  v = math.max(0, math.min(1, v))
  local a, b, t
  if v < 0.5 then a, b, t = { 255, 255, 255 }, { 111, 168, 220 }, v / 0.5
  else a, b, t = { 111, 168, 220 }, { 8, 48, 107 }, (v - 0.5) / 0.5 end
  local c = {}
  for i = 1, 3 do c[i] = math.floor(a[i] + (b[i] - a[i]) * t + 0.5) end
  return ("#%02x%02x%02x"):format(c[1], c[2], c[3])
end

local function xml(s) return (tostring(s):gsub("&", "&amp;"):gsub("<", "&lt;"):gsub(">", "&gt;")) end

-- Write an N x N matrix (Lua rows) as an SVG heatmap. Colours follow sqrt(value / vmax)
-- (vmax default: the largest value) so that small weights stay visible next to the
-- class token's column; the colour bar gives the scale. Returns the path.
function P.svg_heatmap(path, m, opts)
  opts = opts or {}
  local n = #m
  local cell = opts.cell or math.max(2, math.floor(520 / n))
  local vmax = opts.vmax or 0
  if vmax <= 0 then for i = 1, n do for j = 1, n do if m[i][j] > vmax then vmax = m[i][j] end end end end
  if vmax <= 0 then vmax = 1 end
  local left, top = 60, 40
  local W, Hh = left + n * cell + 90, top + n * cell + 50
  local s = { ('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12" shape-rendering="crispEdges">'):format(W, Hh),
              ('<rect width="%d" height="%d" fill="white"/>'):format(W, Hh),
              ('<text x="%d" y="20" font-size="14">%s</text>'):format(left, xml(opts.title or "")) }
  for i = 1, n do
    local row = m[i]
    for j = 1, n do
      local v = math.sqrt(row[j] / vmax)
      if v > 0.004 then
        s[#s + 1] = ('<rect x="%d" y="%d" width="%d" height="%d" fill="%s"/>'):format(left + (j - 1) * cell,
          top + (i - 1) * cell, cell, cell, color(v))
      end
    end
  end
  s[#s + 1] = ('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#444"/>'):format(left, top, n * cell, n * cell)
  s[#s + 1] = ('<text x="%d" y="%d" text-anchor="middle">key token (1 = class)</text>'):format(left + n * cell // 2, top + n * cell + 30)
  s[#s + 1] = ('<text x="15" y="%d" transform="rotate(-90 15 %d)" text-anchor="middle">query token</text>'):format(top + n * cell // 2, top + n * cell // 2)
  -- colour bar
  local bx, bh = left + n * cell + 20, n * cell
  for k = 0, 49 do
    local v = 1 - k / 49
    s[#s + 1] = ('<rect x="%d" y="%.1f" width="16" height="%.1f" fill="%s"/>'):format(bx, top + k * bh / 50, bh / 50 + 0.5, color(v))
  end
  s[#s + 1] = ('<text x="%d" y="%d">%.3g</text>'):format(bx + 20, top + 10, vmax)
  s[#s + 1] = ('<text x="%d" y="%d">%.3g</text>'):format(bx + 20, top + bh // 4 + 4, vmax * 0.5625)
  s[#s + 1] = ('<text x="%d" y="%d">%.3g</text>'):format(bx + 20, top + bh // 2 + 4, vmax * 0.25)
  s[#s + 1] = ('<text x="%d" y="%d">0</text>'):format(bx + 20, top + bh)
  s[#s + 1] = ('<text x="%d" y="%d" font-size="10">(sqrt scale)</text>'):format(bx - 4, top + bh + 16)
  s[#s + 1] = "</svg>"
  local ok, err = al.write_atomic(path, table.concat(s, "\n") .. "\n")
  if not ok then error("svg_heatmap: cannot write " .. path .. ": " .. tostring(err), 2) end
  return path
end

local function have_gnuplot()
  local ok, _, code = os.execute("command -v gnuplot >/dev/null 2>&1")
  return ok == true or code == 0
end
P.have_gnuplot = have_gnuplot

-- PNG of the same matrix through gnuplot ("matrix with image"), if gnuplot is installed.
function P.png_heatmap(path, m, opts)
  opts = opts or {}
  if not have_gnuplot() then return nil, "gnuplot is not installed" end
  local n = #m
  local dat = os.tmpname()
  local f = assert(io.open(dat, "w"))
  for i = 1, n do
    local row = {}
    for j = 1, n do row[j] = ("%.6g"):format(math.sqrt(math.max(0, m[i][j]))) end
    f:write(table.concat(row, " "), "\n")
  end
  f:close()
  local gp = os.tmpname()
  local g = assert(io.open(gp, "w"))
  -- a gnuplot single-quoted string writes a quote as two: stripping it (as before) sent the PNG
  -- of an output folder named "it's" to "its", where nobody looked
  local function gq(s) return "'" .. s:gsub("'", "''") .. "'" end
  g:write(table.concat({
    "set terminal pngcairo size 640,600 noenhanced font 'Sans,10' background rgb 'white'",
    "set output " .. gq(path),
    "set title " .. gq((opts.title or "") .. " (sqrt of weight)"),
    "set xlabel 'key token (0 = class)'", "set ylabel 'query token'",
    "set cbrange [0:*]", "set size ratio -1", "set palette defined (0 'white', 0.5 '#6fa8dc', 1 '#08306b')",
    ("set xrange [-0.5:%g]"):format(n - 0.5), ("set yrange [%g:-0.5]"):format(n - 0.5),
    "plot " .. gq(dat) .. " matrix with image notitle", "unset output" }, "\n"), "\n")
  g:close()
  local util = require "attnlab.util"
  local ok = os.execute("gnuplot " .. util.shquote(gp) .. " 2>/dev/null")
  os.remove(dat); os.remove(gp)
  if ok ~= true and ok ~= 0 then return nil, "gnuplot failed" end
  -- reported only where it is: the caller lists the files written
  if not util.file_exists(path) then return nil, "gnuplot wrote no " .. path end
  return path
end

-- Heatmaps for every attention layer of a profile: <dir>/<prefix>layer<l>.svg (+ .png
-- with gnuplot). Returns the list of files written.
function P.write_heatmaps(prof, dir, opts)
  opts = opts or {}
  if not require("attnlab.util").mkdir_p(dir) then error(("s2s: cannot create the heatmap folder %s"):format(dir), 0) end
  local files = {}
  local prefix = opts.prefix or ""
  for l = 1, #prof.layers do
    local m = prof.maps[l]
    if m then
      local r = prof.layers[l]
      local title = ("layer %d: mean attention (%d examples, %s); k90 %.1f of %d keys, entropy %.2f"):format(l, prof.n,
        r.normalizer or "", r.mean.k90, prof.tokens, r.mean.entropy)
      local base = ("%s/%slayer%d"):format(dir, prefix, l)
      files[#files + 1] = P.svg_heatmap(base .. ".svg", m, { title = title })
      if opts.png ~= false then
        local p = P.png_heatmap(base .. ".png", m, { title = ("layer %d"):format(l) })
        if p then files[#files + 1] = p end
      end
    end
  end
  return files
end

-- A plain-text table of a profile (one line per layer, head means).
function P.format(prof)
  local lines = { ("sparsity profile over %d examples, %d tokens%s"):format(prof.n, prof.tokens,
    prof.halting and " (under halting masks: running tokens only)" or "") }
  local hdr = "layer  mixer       keep   entropy  ent/logN   k90    k90/N  nonzero"
  for _, k in ipairs(prof.topk) do hdr = hdr .. ("  top%d"):format(k) end
  lines[#lines + 1] = hdr
  for l, r in ipairs(prof.layers) do
    if r.mean then
      local s = ("%5d  %-10s  %.3f  %7.3f  %8.3f  %6.2f  %6.3f  %7.3f"):format(l, r.normalizer or "attention",
        prof.keep_rate[l], r.mean.entropy, r.mean.entropy_norm, r.mean.k90, r.mean.k90_frac, r.mean.nonzero)
      for _, k in ipairs(prof.topk) do s = s .. ("  %.3f"):format(r.mean["top" .. k .. "_mass"]) end
      lines[#lines + 1] = s
    else
      lines[#lines + 1] = ("%5d  %-10s  %.3f  (no attention)"):format(l, r.mixer, prof.keep_rate[l])
    end
  end
  local t = prof.trend
  lines[#lines + 1] = ("trend with depth (Spearman): k90/N %s, entropy/logN %s, nonzero %s  (negative = sparser deeper)")
    :format(t.k90_frac and ("%.2f"):format(t.k90_frac) or "n/a", t.entropy_norm and ("%.2f"):format(t.entropy_norm) or "n/a",
      t.nonzero and ("%.2f"):format(t.nonzero) or "n/a")
  return table.concat(lines, "\n")
end

return P
