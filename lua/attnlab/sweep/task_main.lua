-- lua/attnlab/sweep/task_main.lua -- one Slurm array task as a program:
-- bin/attnlab <this file> --task MANIFEST INDEX runs line INDEX of the manifest (al.sweep.task),
-- what a job array written by al.sweep.write_slurm executes when its caller names no other
-- entry (scripts/sweep.lua --task does the same). Exit 1 when the run failed, 2 on bad arguments.
local al = require "attnlab"
local index = math.tointeger(tonumber(arg[3] or ""))
if arg[1] ~= "--task" or not arg[2] or not index or index < 1 or arg[4] then
  io.stderr:write("task_main.lua: usage: bin/attnlab task_main.lua --task MANIFEST INDEX\n")
  os.exit(2)
end
-- a bad manifest is one line on stderr (as scripts/sweep.lua --task says it), not a traceback
local ok, st = pcall(al.sweep.task, arg[2], index)
if not ok then
  io.stderr:write("task_main.lua: ", (tostring(st):gsub("^sweep: ", "")), "\n")
  os.exit(1)
end
os.exit(st == "error" and 1 or 0)
