-- attnlab.cli: the name users require; the module is lua/attnlab/run/cli.lua (attnlab.run.cli).
return require "attnlab.run.cli"
