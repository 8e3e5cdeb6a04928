-- lua/attnlab/run/train_main.lua -- one classifier training run as a program: what a sweep
-- launches (bin/attnlab <this file> --dataset ... --out ...) when its caller names no other
-- entry. The command line is attnlab.run.train_cli; scripts/train.lua is the same program.
require("attnlab.run.train_cli").main(arg)
