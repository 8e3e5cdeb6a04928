-- attnlab.report.plots -- the report's figures: accuracy vs support density, accuracy and
-- timing bars per dataset, learning curves; drawn with gnuplot when it is installed (PNG and
-- SVG), else as plain SVG written here. Called through report.plots (report/init.lua).
local al = require "attnlab"
local util = require "attnlab.util"

local P = {}

local NAN = -(0.0 / 0.0)
local q = util.shquote
local function mean(xs)
  if #xs == 0 then return nil end
  return al.stats.mean(xs)
end
local function isnum(v) return type(v) == "number" and v == v end

-- ---- plots --------------------------------------------------------------------------------------------
local PALETTE = { "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf",
                  "#7f7f7f", "#bcbd22" }
-- The study's normalizers keep their colour (and point type) from one report to the next;
-- others take the remaining palette entries in order.
local FIXED = { softmax = 1, sparsemax = 2, entmax15 = 3, hae = 4, ["topk:0.125"] = 5, ["topk:0.25"] = 6, ["topk:0.5"] = 7 }

local function style_index(A, n)
  if FIXED[n] then return FIXED[n] end
  local k = 7
  for _, m in ipairs(A.normalizers) do
    if not FIXED[m] then
      k = k + 1
      if m == n then break end
    end
  end
  return k
end

local function color_of(A, n) return PALETTE[(style_index(A, n) - 1) % #PALETTE + 1] end

local function have_gnuplot()
  return os.execute("command -v gnuplot >/dev/null 2>&1") == true
end

local function gp_str(s) return "'" .. tostring(s):gsub("'", "''") .. "'" end

-- Axis ticks: about n "nice" values covering [lo, hi].
local function nice_ticks(lo, hi, n)
  if not (hi > lo) then lo, hi = lo - 0.5, hi + 0.5 end
  local raw = (hi - lo) / (n or 5)
  local mag = 10 ^ math.floor(math.log(raw, 10))
  local step = mag
  for _, m in ipairs({ 1, 2, 2.5, 5, 10 }) do
    if m * mag >= raw then step = m * mag break end
  end
  local t0 = math.floor(lo / step) * step
  local ticks = {}
  local v = t0
  while v <= hi + step * 1e-9 do ticks[#ticks + 1] = v; v = v + step end
  if ticks[#ticks] < hi then ticks[#ticks + 1] = v end
  return ticks, step
end

local function xml(s) return (tostring(s):gsub("&", "&amp;"):gsub("<", "&lt;"):gsub(">", "&gt;")) end

-- A minimal SVG canvas with a plot area, axes, ticks and a legend on the right.
local function svg_frame(W, H, title, xlabel, ylabel, xr, yr, xticks, yticks, xtick_labels)
  local L, R, T, B = 70, 170, 40, 60
  local pw, ph = W - L - R, H - T - B
  local function X(v) return L + (v - xr[1]) / (xr[2] - xr[1]) * pw end
  local function Y(v) return T + ph - (v - yr[1]) / (yr[2] - yr[1]) * ph end
  local s = { ('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">')
    :format(W, H, W, H), ('<rect width="%d" height="%d" fill="white"/>'):format(W, H),
    ('<text x="%d" y="22" text-anchor="middle" font-size="14">%s</text>'):format(L + pw // 2, xml(title)) }
  for _, v in ipairs(yticks) do
    s[#s + 1] = ('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>'):format(L, Y(v), L + pw, Y(v))
    s[#s + 1] = ('<text x="%d" y="%.1f" text-anchor="end">%s</text>'):format(L - 6, Y(v) + 4, ("%g"):format(v))
  end
  for i, v in ipairs(xticks) do
    if not xtick_labels then
      s[#s + 1] = ('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>'):format(X(v), T, X(v), T + ph)
    end
    s[#s + 1] = ('<text x="%.1f" y="%d" text-anchor="middle">%s</text>'):format(X(v), T + ph + 18,
      xml(xtick_labels and xtick_labels[i] or ("%g"):format(v)))
  end
  s[#s + 1] = ('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="black"/>'):format(L, T, pw, ph)
  s[#s + 1] = ('<text x="%d" y="%d" text-anchor="middle">%s</text>'):format(L + pw // 2, H - 15, xml(xlabel))
  s[#s + 1] = ('<g transform="translate(18,%d) rotate(270)"><text x="0" y="0" text-anchor="middle">%s</text></g>'):format(T + ph // 2,
    xml(ylabel))
  return s, X, Y, { L = L, T = T, pw = pw, ph = ph, R = R }
end

local function svg_legend(s, box, entries)
  for i, e in ipairs(entries) do
    local y = box.T + 10 + (i - 1) * 18
    local x = box.L + box.pw + 15
    s[#s + 1] = ('<rect x="%d" y="%d" width="12" height="12" fill="%s"/>'):format(x, y - 10, e.color)
    s[#s + 1] = ('<text x="%d" y="%d">%s</text>'):format(x + 18, y, xml(e.name))
  end
end

local function write_file(path, s)
  local ok, err = al.write_atomic(path, s)
  if not ok then error("report: cannot write " .. path .. ": " .. err, 0) end
end

local function svg_scatter(path, p)
  local xs, ys = {}, {}
  for _, se in ipairs(p.series) do
    for _, pt in ipairs(se.points) do xs[#xs + 1] = pt[1]; ys[#ys + 1] = pt[2] end
  end
  local ylo, yhi = math.min(table.unpack(ys)), math.max(table.unpack(ys))
  local pad = math.max((yhi - ylo) * 0.1, 0.5)
  local yt = nice_ticks(ylo - pad, yhi + pad, 6)
  local xt = { 0, 0.2, 0.4, 0.6, 0.8, 1.0 }
  local s, X, Y, box = svg_frame(820, 540, p.title, p.xlabel, p.ylabel, { 0, 1.05 }, { yt[1], yt[#yt] }, xt, yt)
  for _, se in ipairs(p.series) do
    for _, pt in ipairs(se.points) do
      s[#s + 1] = ('<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s" fill-opacity="0.7"/>'):format(X(pt[1]), Y(pt[2]), se.color)
    end
    if se.mean then
      local m = se.mean
      local sd = m[3] == m[3] and m[3] or 0
      s[#s + 1] = ('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="1.5"/>'):format(X(m[1]),
        Y(m[2] - sd), X(m[1]), Y(m[2] + sd), se.color)
      s[#s + 1] = ('<rect x="%.1f" y="%.1f" width="10" height="10" fill="none" stroke="%s" stroke-width="2"/>')
        :format(X(m[1]) - 5, Y(m[2]) - 5, se.color)
    end
  end
  svg_legend(s, box, p.series)
  s[#s + 1] = "</svg>"
  write_file(path, table.concat(s, "\n") .. "\n")
end

local function svg_bars(path, p)
  -- two panels side by side would need two frames; stack them vertically in one file
  local parts = { ('<svg xmlns="http://www.w3.org/2000/svg" width="900" height="%d" font-family="sans-serif" font-size="12">')
    :format(420 * #p.panels) }
  for k, panel in ipairs(p.panels) do
    local vmax = 1
    for _, se in ipairs(p.series) do
      for _, v in ipairs(panel.values[se.name] or {}) do if isnum(v) then vmax = math.max(vmax, v) end end
    end
    local yt = nice_ticks(0, vmax * 1.1, 5)
    local ng, ns = #p.groups, #p.series
    local xt, labels = {}, {}
    for g = 1, ng do xt[g] = g; labels[g] = p.groups[g] end
    local s, X, Y, box = svg_frame(900, 420, panel.title, "", panel.ylabel, { 0.5, ng + 0.5 }, { 0, yt[#yt] }, xt, yt, labels)
    local bw = 0.8 / ns
    for si, se in ipairs(p.series) do
      for g = 1, ng do
        local v = (panel.values[se.name] or {})[g]
        if isnum(v) then
          local x0 = g - 0.4 + (si - 1) * bw
          s[#s + 1] = ('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>'):format(X(x0), Y(v),
            X(x0 + bw) - X(x0) - 1, Y(0) - Y(v), se.color)
        end
      end
    end
    s[#s + 1] = ('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black" stroke-dasharray="4 3"/>'):format(box.L,
      Y(1), box.L + box.pw, Y(1))
    svg_legend(s, box, p.series)
    s[#s + 1] = "</svg>"
    parts[#parts + 1] = ('<g transform="translate(0 %d)">'):format((k - 1) * 420)
    -- drop the inner <svg> wrapper's first line (kept the rest)
    table.remove(s, 1)
    s[#s] = nil
    parts[#parts + 1] = table.concat(s, "\n")
    parts[#parts + 1] = "</g>"
  end
  parts[#parts + 1] = "</svg>"
  write_file(path, table.concat(parts, "\n") .. "\n")
end

-- The script is kept next to its plots (edit and rerun it: `gnuplot base.gp` writes base.svg and
-- base.png). Here gnuplot writes to temporary names, given as svg_out and png_out, which are
-- renamed once it has succeeded: a failed or killed run leaves the previous plots whole, never
-- a half-written file.
local function run_gnuplot(base, script)
  local script_path, tmp = base .. ".gp", { svg = base .. ".svg.tmp", png = base .. ".png.tmp" }
  write_file(script_path, script)
  local vars = ("svg_out = %s; png_out = %s"):format(gp_str(tmp.svg), gp_str(tmp.png))
  local p = io.popen("gnuplot -e " .. q(vars) .. " " .. q(script_path) .. " 2>&1")
  local out = p:read("a")
  local ok = p:close()
  if not ok then
    os.remove(tmp.svg); os.remove(tmp.png)
    error("report: gnuplot failed on " .. script_path .. ": " .. out, 0)
  end
  for ext, t in pairs(tmp) do
    local moved, err = os.rename(t, base .. "." .. ext)
    if not moved then error("report: cannot write " .. base .. "." .. ext .. ": " .. tostring(err), 0) end
  end
  return out
end

local function gp_terminals(base, body)
  return table.concat({
    "if (!exists('svg_out')) svg_out = " .. gp_str(base .. ".svg"),
    "if (!exists('png_out')) png_out = " .. gp_str(base .. ".png"),
    "set terminal svg size 880,560 dynamic noenhanced font 'Sans,12' background rgb 'white'",
    "set output svg_out", body, "unset output",
    "set terminal pngcairo size 880,560 noenhanced font 'Sans,10' background rgb 'white'",
    "set output png_out", body, "unset output" }, "\n")
end

-- Points of normalizers with the same density (every dense one sits at 1.0) would hide
-- each other: each normalizer's points are shifted by a fixed JITTER step (said on the axis).
local JITTER = 0.006

local function scatter_data(A, d)
  local series = {}
  local present = {}
  for _, n in ipairs(A.normalizers) do if A.groups[d][n] then present[#present + 1] = n end end
  for _, n in ipairs(A.normalizers) do
    local g = A.groups[d][n]
    if g then
      local k
      for j, m in ipairs(present) do if m == n then k = j end end
      local off = (k - (#present + 1) / 2) * JITTER
      local se = { name = n, color = color_of(A, n), points = {}, pt = (style_index(A, n) - 1) % 7 + 1 }
      local dens = {}
      for _, r in ipairs(g.runs) do
        if isnum(r.density) then
          se.points[#se.points + 1] = { r.density + off, 100 * r.acc, r.seed }
          dens[#dens + 1] = r.density
        end
      end
      if #dens > 0 then se.mean = { mean(dens) + off, 100 * g.acc.mean, 100 * (g.acc.sd or 0) } end
      if #se.points > 0 then series[#series + 1] = se end
    end
  end
  return series, (#present - 1) / 2 * JITTER
end

-- Draw the plots into folder `dir`: per dataset accuracy vs support density and learning
-- curves (mean ± sd per epoch), and runtime bars. opts.tool = "gnuplot" | "svg" (default: gnuplot when installed). Returns
-- { by_dataset = { [label] = {svg=, png=} }, runtime = {svg=, png=}, files = {...}, tool = }.
function P.plots(A, dir, opts)
  opts = opts or {}
  if not require("attnlab.util").mkdir_p(dir) then error(("report: cannot create the plots folder %s"):format(dir), 0) end
  local tool = opts.tool or (have_gnuplot() and "gnuplot" or "svg")
  local res = { by_dataset = {}, files = {}, tool = tool == "gnuplot" and "gnuplot (SVG and PNG; the .gp scripts are kept)" or "attnlab's SVG writer (gnuplot not found)" }
  for _, d in ipairs(A.datasets) do
    local series, max_off = scatter_data(A, d)
    if #series > 0 then
      local base = dir .. "/acc_vs_density_" .. al.sweep.sanitize(d)
      local nseeds = 0
      for _, se in ipairs(series) do nseeds = math.max(nseeds, #se.points) end
      local title = ("%s: test accuracy vs attention support density (%d seed%s; squares: mean ± sd)"):format(d, nseeds,
        nseeds == 1 and "" or "s")
      local xlabel = ("support density (share of keys with nonzero weight; 1 = dense); normalizers offset by up to ±%.3f")
        :format(max_off)
      if tool == "gnuplot" then
        local g = {}
        for i, se in ipairs(series) do
          g[#g + 1] = ("$s%d << EOD"):format(i)
          for _, pt in ipairs(se.points) do g[#g + 1] = ("%.9g %.9g %d"):format(pt[1], pt[2], pt[3]) end
          g[#g + 1] = "EOD"
          g[#g + 1] = ("$m%d << EOD"):format(i)
          g[#g + 1] = ("%.9g %.9g %.9g"):format(se.mean[1], se.mean[2], se.mean[3] == se.mean[3] and se.mean[3] or 0)
          g[#g + 1] = "EOD"
        end
        local body = { "set title " .. gp_str(title), "set xlabel " .. gp_str(xlabel),
                       "set ylabel 'test accuracy (%)'", "set key outside right top", "set grid",
                       "set xrange [0:1.05]", "set offsets 0, 0, graph 0.08, graph 0.08" }
        local pl = {}
        for i, se in ipairs(series) do
          pl[#pl + 1] = ("$s%d using 1:2 with points pt %d ps 0.8 lc rgb '%s' title %s"):format(i, ({ 7, 9, 5, 11, 13, 15, 3 })[se.pt],
            se.color, gp_str(se.name))
          pl[#pl + 1] = ("$m%d using 1:2:3 with yerrorbars pt 4 ps 2 lw 2 lc rgb '%s' notitle"):format(i, se.color)
        end
        body[#body + 1] = "plot " .. table.concat(pl, ", \\\n     ")
        run_gnuplot(base, table.concat(g, "\n") .. "\n" .. gp_terminals(base, table.concat(body, "\n")) .. "\n")
        res.by_dataset[d] = { svg = base .. ".svg", png = base .. ".png", gp = base .. ".gp" }
        res.files[#res.files + 1] = base .. ".png"
        res.files[#res.files + 1] = base .. ".svg"
      else
        svg_scatter(base .. ".svg", { title = title, xlabel = xlabel, ylabel = "test accuracy (%)", series = series })
        res.by_dataset[d] = { svg = base .. ".svg" }
        res.files[#res.files + 1] = base .. ".svg"
      end
    end
  end

  -- learning curves: per dataset, test accuracy per epoch, mean line and ±sd band per normalizer
  res.curves = {}
  for _, d in ipairs(A.datasets) do
    local cv = A.curves and A.curves[d]
    if cv and cv.epochs > 1 then
      local series = {}
      for _, n in ipairs(A.normalizers) do
        local cn = cv[n]
        if cn then
          local pts = {}
          for ep = 1, cv.epochs do
            if cn.n[ep] > 0 then
              local sd = cn.sd[ep] == cn.sd[ep] and cn.sd[ep] or 0
              pts[#pts + 1] = { ep, cn.mean[ep], cn.mean[ep] - sd, cn.mean[ep] + sd }
            end
          end
          if #pts > 0 then series[#series + 1] = { name = n, color = color_of(A, n), points = pts, seeds = cn.n[1] } end
        end
      end
      local base = dir .. "/curve_" .. al.sweep.sanitize(d)
      local title = ("%s: test accuracy per epoch (mean, band ± sd over seeds)"):format(d)
      if tool == "gnuplot" then
        local g = {}
        for i, se in ipairs(series) do
          g[#g + 1] = ("$c%d << EOD"):format(i)
          for _, pt in ipairs(se.points) do g[#g + 1] = ("%d %.9g %.9g %.9g"):format(pt[1], pt[2], pt[3], pt[4]) end
          g[#g + 1] = "EOD"
        end
        local body = { "set title " .. gp_str(title), "set xlabel 'epoch'", "set ylabel 'test accuracy (%)'",
                       "set key outside right top", "set grid", ("set xrange [1:%d]"):format(cv.epochs), "set xtics 1" }
        local pl = {}
        for i, se in ipairs(series) do
          pl[#pl + 1] = ("$c%d using 1:3:4 with filledcurves fs transparent solid 0.12 noborder lc rgb '%s' notitle"):format(i, se.color)
          pl[#pl + 1] = ("$c%d using 1:2 with linespoints pt 7 ps 0.6 lw 2 lc rgb '%s' title %s"):format(i, se.color,
            gp_str(("%s (%d seed%s)"):format(se.name, se.seeds, se.seeds == 1 and "" or "s")))
        end
        body[#body + 1] = "plot " .. table.concat(pl, ", \\\n     ")
        run_gnuplot(base, table.concat(g, "\n") .. "\n" .. gp_terminals(base, table.concat(body, "\n")) .. "\n")
        res.curves[d] = { svg = base .. ".svg", png = base .. ".png", gp = base .. ".gp" }
        res.files[#res.files + 1] = base .. ".png"
        res.files[#res.files + 1] = base .. ".svg"
      else
        local lo, hi = math.huge, -math.huge
        for _, se in ipairs(series) do
          for _, pt in ipairs(se.points) do lo, hi = math.min(lo, pt[3]), math.max(hi, pt[4]) end
        end
        local yt = nice_ticks(lo, hi, 6)
        local xt = {}
        for ep = 1, cv.epochs do xt[#xt + 1] = ep end
        local sv, X, Y, box = svg_frame(820, 540, title, "epoch", "test accuracy (%)", { 1, math.max(cv.epochs, 2) },
          { yt[1], yt[#yt] }, xt, yt)
        for _, se in ipairs(series) do
          local band, line = {}, {}
          for _, pt in ipairs(se.points) do band[#band + 1] = ("%.1f,%.1f"):format(X(pt[1]), Y(pt[4])) end
          for k = #se.points, 1, -1 do band[#band + 1] = ("%.1f,%.1f"):format(X(se.points[k][1]), Y(se.points[k][3])) end
          for _, pt in ipairs(se.points) do line[#line + 1] = ("%.1f,%.1f"):format(X(pt[1]), Y(pt[2])) end
          sv[#sv + 1] = ('<polygon points="%s" fill="%s" fill-opacity="0.12" stroke="none"/>'):format(table.concat(band, " "), se.color)
          sv[#sv + 1] = ('<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>'):format(table.concat(line, " "), se.color)
        end
        svg_legend(sv, box, series)
        sv[#sv + 1] = "</svg>"
        write_file(base .. ".svg", table.concat(sv, "\n") .. "\n")
        res.curves[d] = { svg = base .. ".svg" }
        res.files[#res.files + 1] = base .. ".svg"
      end
    end
  end

  -- runtime bars: clusters = datasets, bars = normalizers, relative to the baseline
  local norms, groups = {}, {}
  for _, d in ipairs(A.datasets) do
    local any = false
    for _, n in ipairs(A.normalizers) do if A.runtime[d][n] and A.runtime[d][n].train_rel then any = true end end
    if any then groups[#groups + 1] = d end
  end
  for _, n in ipairs(A.normalizers) do
    for _, d in ipairs(groups) do
      if A.runtime[d][n] and A.runtime[d][n].train_rel then norms[#norms + 1] = { name = n, color = color_of(A, n) } break end
    end
  end
  if #groups > 0 and #norms > 0 then
    local base = dir .. "/runtime"
    local panels = {
      { key = "train_rel", title = "training step time relative to " .. A.baseline .. " (median over seeds)", ylabel = "× " .. A.baseline },
      { key = "infer_rel", title = "inference time per example relative to " .. A.baseline, ylabel = "× " .. A.baseline },
    }
    if tool == "gnuplot" then
      local g = { "set datafile missing '?'" }
      for k, panel in ipairs(panels) do
        g[#g + 1] = ("$rt%d << EOD"):format(k)
        local hdr = { "dataset" }
        for _, n in ipairs(norms) do hdr[#hdr + 1] = '"' .. n.name .. '"' end
        g[#g + 1] = table.concat(hdr, " ")
        for _, d in ipairs(groups) do
          local row = { '"' .. d .. '"' }
          for _, n in ipairs(norms) do
            local rt = A.runtime[d][n.name]
            local v = rt and rt[panel.key]
            row[#row + 1] = isnum(v) and ("%.6g"):format(v) or "?"
          end
          g[#g + 1] = table.concat(row, " ")
        end
        g[#g + 1] = "EOD"
      end
      local body = { "set multiplot layout 2,1", "set style data histograms", "set style histogram clustered gap 1",
                     "set style fill solid 0.85 border -1", "set boxwidth 0.9", "set key outside right top",
                     "set grid ytics" }
      for k, panel in ipairs(panels) do
        local vmax = 1
        for _, d in ipairs(groups) do
          for _, n in ipairs(norms) do
            local v = A.runtime[d][n.name] and A.runtime[d][n.name][panel.key]
            if isnum(v) and v > vmax then vmax = v end
          end
        end
        body[#body + 1] = ("set yrange [0:%.4g]"):format(vmax * 1.15)
        body[#body + 1] = "set title " .. gp_str(panel.title)
        body[#body + 1] = "set ylabel " .. gp_str(panel.ylabel)
        local pl = {}
        for j, n in ipairs(norms) do
          pl[#pl + 1] = ("$rt%d using %d%s lc rgb '%s' title columnheader(%d)"):format(k, j + 1, j == 1 and ":xtic(1)" or "",
            n.color, j + 1)
        end
        pl[#pl + 1] = "1 with lines dt 2 lc rgb 'black' notitle"
        body[#body + 1] = "plot " .. table.concat(pl, ", \\\n     ")
      end
      body[#body + 1] = "unset multiplot"
      run_gnuplot(base, table.concat(g, "\n") .. "\n" .. gp_terminals(base, table.concat(body, "\n")) .. "\n")
      res.runtime = { svg = base .. ".svg", png = base .. ".png", gp = base .. ".gp" }
      res.files[#res.files + 1] = base .. ".png"
      res.files[#res.files + 1] = base .. ".svg"
    else
      local ps = {}
      for _, panel in ipairs(panels) do
        local values = {}
        for _, n in ipairs(norms) do
          values[n.name] = {}
          for gi, d in ipairs(groups) do
            local rt = A.runtime[d][n.name]
            values[n.name][gi] = rt and rt[panel.key] or NAN
          end
        end
        ps[#ps + 1] = { title = panel.title, ylabel = panel.ylabel, values = values }
      end
      svg_bars(base .. ".svg", { groups = groups, series = norms, panels = ps })
      res.runtime = { svg = base .. ".svg" }
      res.files[#res.files + 1] = base .. ".svg"
    end
  end
  return res
end

P.write_file = write_file

return P
