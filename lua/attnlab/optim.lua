-- attnlab.optim: the name users require; the module is lua/attnlab/run/optim.lua (attnlab.run.optim).
return require "attnlab.run.optim"
