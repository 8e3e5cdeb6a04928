-- tests/lua/test_readme.lua -- the README's own Lua, run as a newcomer would run it: the REPL
-- tour (its inputs fed to `bin/attnlab -i`, every printed value compared with the README's
-- transcript) and the experiment script of "Writing an experiment script" (extracted from the
-- README and run as a file). The shell blocks of "Install" and "Embedding attnlab" are run by
-- CI (tests/embed/run.sh); these two were checked by nobody, so an API change could leave the
-- README showing output that attnlab no longer prints, or a script that no longer runs.
local al = require "attnlab"
local T = require "harness"

local cases, case = T.suite()

local README = T.read_file((al.root and al.root() or ".") .. "/README.md") or T.read_file("README.md")

-- the text of the first ``` block whose first line matches `first` (a Lua pattern)
local function block(first)
  for body in README:gmatch("```%w*\n(.-)```") do
    if body:match("^[^\n]*") :match(first) then return body end
  end
  error("README has no ``` block starting with " .. first, 0)
end

case("README tour of the REPL: every value it prints is what bin/attnlab -i prints", function()
  assert(README, "README.md not found")
  local tour = block("^%$ bin/attnlab$")
  -- the transcript: "> input" lines, each followed by what it printed (up to the next prompt);
  -- the first lines are the banner (machine-specific), the tour stops before al.config()
  -- (machine-specific, abridged with "...")
  local inputs, want = {}, {}
  for line in tour:gmatch("[^\n]*") do
    local input = line:match("^> (.*)$")
    if input then
      if input:match("^al%.config%(%)") then break end
      inputs[#inputs + 1] = input
      want[#inputs] = {}
    elseif #inputs > 0 and line ~= "" then
      table.insert(want[#inputs], line)
    end
  end
  T.truthy(#inputs >= 8, ("the tour has %d inputs"):format(#inputs))
  local out, err, code = T.run_host("-i", { input = table.concat(inputs, "\n") .. "\n", env = "ATTNLAB_NUM_THREADS=1" })
  T.eq(code, 0, 0, err)
  -- stdout: the banner line, then for each input a "> " prompt followed by what it printed
  local body = out:gsub("^[^\n]*\n", "")
  local pieces = {}
  local start = 1
  while true do
    local s = body:find("> ", start, true)
    if not s then break end
    local e = body:find("> ", s + 2, true)
    pieces[#pieces + 1] = body:sub(s + 2, (e or #body + 1) - 1)
    if not e then break end
    start = e
  end
  for i, input in ipairs(inputs) do
    local got = {}
    for line in (pieces[i] or ""):gmatch("[^\n]+") do got[#got + 1] = line end
    T.eq(got, want[i], 0, ("README tour, after '> %s'"):format(input))
  end
end)

case("README's experiment script (my_run.lua) runs as written and learns Fashion-MNIST", function()
  assert(README, "README.md not found")
  local src = block("^%-%- my_run%.lua")
  if os.getenv("ATTNLAB_SANITIZED") == "1" then
    T.skip("two epochs of Fashion-MNIST are too slow under sanitizers; the release run covers it")
  end
  local ok = pcall(al.data.fashion_mnist, { split = "test" })
  if not ok then T.skip("Fashion-MNIST not found (apt-get install dataset-fashion-mnist)") end
  local path = T.tmpscript(src)
  local out, err, code = T.run_host(T.shquote(path), { env = "ATTNLAB_NUM_THREADS=1", timeout = 300 })
  os.remove(path)
  T.eq(code, 0, 0, err)
  local acc = tonumber(out:match("test accuracy\t([%d%.]+)"))
  T.truthy(acc, "no 'test accuracy' line: " .. out)
  print(("#   README's my_run.lua: test accuracy %.4f (2 epochs, 1 thread)"):format(acc))
  -- 2 epochs of the compact ViT reach 0.853 (seed 1); chance is 0.1
  T.truthy(acc > 0.8, ("test accuracy %s"):format(acc))
end)

return cases
