-- attnlab.sweep.command -- a run's command line: writing it (what a worker or a Slurm task runs) and reading it back.
-- Part of attnlab.sweep: sweep/init.lua installs these functions into its table, so callers
-- keep using al.sweep.<name>; H holds the helpers init.lua shares with its parts.

return function(sweep, H)
  local q = H.q

  -- ---- command lines ----------------------------------------------------------------------------
  local function fmt_value(v)
    if type(v) == "number" then
      if math.type(v) == "integer" then return ("%d"):format(v) end
      if v == math.floor(v) and math.abs(v) < 2 ^ 53 then return ("%.1f"):format(v) end
      for _, p in ipairs({ 15, 16, 17 }) do
        local s = ("%." .. p .. "g"):format(v)
        if tonumber(s) == v then return s end
      end
    end
    return tostring(v)
  end

  local FIRST = { "dataset", "normalizer", "seed" }
  local LAST = { "threads", "out", "checkpoint" }

  -- The exact command line of a run: thread environment, host, scripts/train.lua, --key value.
  -- entry: the program a run executes (default sweep.entry(), the library's own; scripts/sweep.lua
  -- names its sibling scripts/train.lua, the same program).
  function sweep.command(run, host, entry)
    local c = run.config
    local t = c.threads or 1
    local parts = { ("OMP_NUM_THREADS=%d OPENBLAS_NUM_THREADS=%d ATTNLAB_NUM_THREADS=%d"):format(t, t, t),
                    q(host or sweep.host()), q(entry or sweep.entry()) }
    local placed = {}
    local function add(k)
      if c[k] ~= nil and not placed[k] then
        parts[#parts + 1] = "--" .. k .. " " .. q(fmt_value(c[k]))
      end
      placed[k] = true
    end
    for _, k in ipairs(FIRST) do add(k) end
    local rest = {}
    for k in pairs(c) do
      local last = false
      for _, l in ipairs(LAST) do if l == k then last = true end end
      if not placed[k] and not last then rest[#rest + 1] = k end
    end
    table.sort(rest)
    for _, k in ipairs(rest) do add(k) end
    for _, k in ipairs(LAST) do add(k) end
    return table.concat(parts, " ")
  end

  -- Split a sh command line into words (single and double quotes, backslash escapes).
  function sweep.split_words(line)
    local words, cur, i, n, have = {}, {}, 1, #line, false
    while i <= n do
      local ch = line:sub(i, i)
      if ch == "'" then
        local j = line:find("'", i + 1, true)
        if not j then error("sweep: unbalanced ' in command line", 0) end
        cur[#cur + 1] = line:sub(i + 1, j - 1)
        have, i = true, j + 1
      elseif ch == '"' then
        i = i + 1
        while i <= n and line:sub(i, i) ~= '"' do
          local c2 = line:sub(i, i)
          if c2 == "\\" and i < n then i = i + 1; c2 = line:sub(i, i) end
          cur[#cur + 1] = c2
          i = i + 1
        end
        if i > n then error('sweep: unbalanced " in command line', 0) end
        have, i = true, i + 1
      elseif ch == "\\" and i < n then
        cur[#cur + 1] = line:sub(i + 1, i + 1)
        have, i = true, i + 2
      elseif ch:match("%s") then
        if have then words[#words + 1] = table.concat(cur); cur, have = {}, false end
        i = i + 1
      else
        cur[#cur + 1] = ch
        have, i = true, i + 1
      end
    end
    if have then words[#words + 1] = table.concat(cur) end
    return words
  end

  -- The train config of a command line made by sweep.command (values typed as train.lua does).
  function sweep.parse_command(line)
    local w = sweep.split_words(line)
    local env, i = {}, 1
    while w[i] and w[i]:match("^[%a_][%w_]*=") do
      local k, v = w[i]:match("^([%a_][%w_]*)=(.*)$")
      env[k] = v
      i = i + 1
    end
    local host, script = w[i], w[i + 1]
    i = i + 2
    local cfg = {}
    while i <= #w do
      local k = w[i]:match("^%-%-([%w_]+)$")
      if not k or w[i + 1] == nil then error(("sweep: cannot parse command line near '%s'"):format(tostring(w[i])), 0) end
      local v = w[i + 1]
      if v == "true" then v = true elseif v == "false" then v = false
      else v = math.tointeger(tonumber(v)) or tonumber(v) or v end
      cfg[k] = v
      i = i + 2
    end
    return cfg, env, host, script
  end

  -- A run description from a command line (what a Slurm task knows).
  -- A line that sweep.command did not write (a JSON file or a sbatch script given as the
  -- manifest) is refused as such, in the user's terms; the line is shortened to keep one line.
  function sweep.run_from_command(line)
    local shown = line:gsub("%s+", " ")
    if #shown > 60 then shown = shown:sub(1, 57) .. "..." end
    local function bad(why)
      error(("sweep: not the command line of a sweep run (%s): %s"):format(why, shown), 0)
    end
    local ok, cfg = pcall(sweep.parse_command, line)
    if not ok then bad((tostring(cfg):gsub("^sweep: ", ""))) end
    if type(cfg.out) ~= "string" then bad("no --out DIR/<run>.json") end
    for _, k in ipairs({ "dataset", "normalizer", "seed" }) do
      if cfg[k] == nil then bad("no --" .. k) end
    end
    local dir, name = cfg.out:match("^(.*)/([^/]+)%.json$")
    if not dir then bad("its --out is not a .json path") end
    local label = name:match("^(.-)__") or cfg.dataset
    return { name = name, label = label, dataset = cfg.dataset, normalizer = cfg.normalizer, seed = cfg.seed,
             config = cfg, dir = dir, out = cfg.out, checkpoint = cfg.checkpoint, command = line,
             log_out = dir .. "/logs/" .. name .. ".out", log_err = dir .. "/logs/" .. name .. ".err" }
  end
end
