-- attnlab.stats: the name users require; the module is lua/attnlab/report/stats.lua (attnlab.report.stats).
return require "attnlab.report.stats"
