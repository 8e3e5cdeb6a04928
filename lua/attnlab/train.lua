-- attnlab.train: the name users require; the module is lua/attnlab/run/train.lua (attnlab.run.train).
return require "attnlab.run.train"
