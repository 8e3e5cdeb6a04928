-- attnlab.checkpoint: the name users require; the module is lua/attnlab/nn/checkpoint.lua (attnlab.nn.checkpoint).
return require "attnlab.nn.checkpoint"
