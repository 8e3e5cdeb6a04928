-- attnlab.data.text -- the text datasets: 20 Newsgroups (bydate) read straight from its
-- tar.gz, and "marker", a seeded synthetic task whose label sits at one position.
-- Pure Lua on top of the binding (al.tar_foreach streams the archive through zlib);
-- exposed by attnlab.data as al.data.newsgroups20(opts) and al.data.marker(opts).
--
-- ==== Batches ================================================================================
--   local train = al.data.newsgroups20{split = "train"}                 -- builds the vocab
--   local test  = al.data.newsgroups20{split = "test", vocab = train.vocab}
--   local x, y, extra = train:batch(al.tensor({1, 2, 3}, {dtype = "int64"}))
--   -- x     int64 (B, L) token ids, L = seq_len (96); 1 = <pad>, 2 = <unk>
--   -- y     int64 (B) class labels 1..num_classes
--   -- extra nil, or {key_mask = float32 (B, L + 1)} when padding = "masked"
--   local model = al.nn.ViT{vocab_size = train.vocab_size, seq_len = train.seq_len,
--                           num_classes = train.num_classes, ...}   -- adds the class token
-- key_mask[b][1] is the class token the model prepends (always 1); key_mask[b][1 + t] is 1
-- when x[b][t] is a real token (an <unk> is a real token) and 0 when it is <pad>.
-- padding = "positions" (the study's setting) returns no mask: pads are ordinary tokens at
-- ordinary positions that the model attends to like any other.
--
-- Both loaders return an attnlab.data.Dataset (fields name, split, n, num_classes, classes,
-- labels int64 (n) 1-based, seq_len, vocab_size, padding, pad_id = 1, unk_id = 2, tokens
-- int64 (n, L) = every x at once, lengths int64 (n) = real tokens per row), so ds:batch(idx),
-- ds:subset(idx), ds:all_labels(), al.data.train_val_split and al.data.Loader work on them.
-- idx is an int64 tensor of 1-based example numbers. Per-example fields (tokens, labels,
-- lengths, doc_names, marker_pos, ...) are indexed by the base dataset's example numbers.
-- Unknown option names are an error (a misspelt option must not be silently ignored).
--
-- ==== newsgroups20{...} ======================================================================
--   split         "train" (default) | "test"
--   seq_len       96      tokens per row (the model adds the class token: 97 positions)
--   vocab_size    20000   ids in total, <pad> and <unk> included
--   min_count     1       a word needs this many train occurrences to get an id
--   lowercase     true    (with vocab: the vocab's setting; a contradicting one is an error)
--   strip_headers false   drop the RFC-822 header block (see below); with vocab: the vocab's
--                         setting, and a contradicting one is an error (rows must be cut as
--                         the vocab's words were, or the test split keeps the headers the
--                         train split's vocab never saw)
--   padding       "positions" | "masked"
--   vocab         nil     a vocab object to reuse (ds.vocab of another newsgroups20 call)
--   path          nil     the archive; default: 20news-bydate.tar.gz found by al.data.find
--                         in ATTNLAB_DATA, ../shared/data, /usr/share/datasets, ~/.cache
-- Archive. Documents are the regular files 20news-bydate-train/<group>/<id> and
-- 20news-bydate-test/<group>/<id>; anything else in the archive is ignored. The label is
-- the index of <group> in the sorted (byte order) list of the group names found in the
-- archive, 1..20: 1 alt.atheism ... 20 talk.religion.misc (ds.classes). Documents keep the
-- archive's order; in shared/data's copy that is group by group in sorted order and, within
-- a group, file names in byte order (so .../10042 before .../8514). Example 1 of train is
-- alt.atheism/49960; ds.doc_names[i] is "<group>/<id>". Counts: 11,314 train and 7,532
-- test documents (ds.n); the archive found by the search must have these counts (else an error
-- naming it); an archive given as `path` may hold others (test fixtures).
-- Header stripping (strip_headers = true): everything up to and including the first blank
-- line (an empty line, or one holding only "\r") is removed; a document with no blank line
-- is all header and becomes empty (a row of <pad>). Default false: the study keeps headers.
-- Tokenizer (require("attnlab.data.text").tokenize(text [, {lowercase = false}]) returns
-- the list of words; the loader applies the same rule): with lowercase, string.lower the
-- text first (ASCII A-Z only; bytes >= 0x80 are untouched).
-- A word is a maximal match of the regular expression  [A-Za-z0-9]+('[A-Za-z0-9]+)*
-- i.e. a run of ASCII letters and digits, possibly joined by single apostrophes that have
-- a letter or digit on both sides. Everything else separates words: punctuation, spaces,
-- '-', '_', '@', '.', all bytes >= 0x80 (Latin-1 letters included), and an apostrophe
-- at either end of a word or doubled. Examples: "Don't panic!" -> don't panic;
-- "'quoted' rock'n'roll ''x''" -> quoted rock'n'roll x; "e-mail: a.b@c.com" -> e mail a b
-- c com; "3.14" -> 3 14; "na\xEFve" -> na ve.
-- Vocabulary, built on the TRAIN split only (the test split reuses it): id 1 = <pad>, id
-- 2 = <unk>, then the words with at least min_count occurrences in the train documents
-- (whole documents, not only their first seq_len tokens), most frequent first, ties in byte
-- order of the word, until vocab_size ids in total. ds.vocab_size = vocab.size (less than
-- the request only when fewer words qualify). A word outside it (e.g. one seen only in
-- test) becomes 2 = <unk>. Vocab object: size, words[id], index[word] -> id, counts[id]
-- (train occurrences; counts[2] = train tokens mapped to <unk>), lowercase, strip_headers
-- (the settings its train rows were read with), pad_id, unk_id,
-- vocab:encode(text) -> {ids}, vocab:decode(ids) -> "w1 w2 ..." (pads dropped),
-- requested_size (the vocab_size it was built for; with vocab=, vocab_size may be either).
-- Sequence: the first seq_len tokens of the document (truncation), then <pad> up to
-- seq_len. ds.lengths[i] = min(#tokens, seq_len).
-- Cache: the archive is read and tokenized once per process for both splits and each
-- (path, lowercase, strip_headers) (again only if a longer seq_len is asked for), and
-- vocabularies are kept per (vocab_size, min_count): the test split of a run costs little
-- after its train split, and two calls with the same options share one vocab object.
-- attnlab.data.text.clear_cache() frees it. One pass over the 14 MB archive (50 MB of tar, 36 MB
-- of text, 5.9 M words) takes about 2 s of CPU on the development machine (2-4 s wall on
-- its 2 shared cores); the test split then takes 0.02 s, a batch of 128 rows 0.02 ms.
--
-- ==== marker{...} ============================================================================
--   split "train" | "test"; n 10000 (train) / 2000 (test); seq_len 96; vocab_size 1000;
--   num_classes 10; distractor_rate 0.1; noise 0.05; seed 0; gap 1; min_len = seq_len;
--   padding "positions" | "masked"
-- Ids: 1 <pad>, 2 <unk> (reserved, never used), 3 = the cue, 4 .. 3+C = the markers
-- m_1..m_C of the C = num_classes classes, 4+C .. vocab_size = filler words (vocab_size
-- must leave at least one filler id).
-- Example i, drawn from al.Generator(2*seed + 1) for train and (2*seed + 2) for test
-- (disjoint streams; the same options give bit-identical data, on any machine):
--   len  uniform in [min_len, seq_len]                     (= seq_len by default)
--   c    uniform class in 1..C
--   p    uniform cue position in 1..len-gap; x[p] = cue, x[p+gap] = m_c (marker_pos = p+gap)
--   every other position t <= len: with probability distractor_rate a distractor, the
--        marker of a uniform class in 1..C (the true one included), else a uniform filler
--   positions len+1 .. seq_len: <pad>
--   y = c, except with probability noise y = a uniform class in 1..C (possibly c again)
-- So the sequence holds several markers and exactly one cue; the label is the marker
-- that stands gap positions after the cue. A model has to find the cue and read the token
-- at a fixed offset from it (e.g. layer 1: each token looks gap positions back for the
-- cue; layer 2: the class token attends to the flagged token); counting markers does not
-- suffice. Perfect attender (reads x[p+gap]): accuracy = 1 - noise + noise/C =
-- 1 - noise*(C-1)/C; with the defaults 1 - 0.05*9/10 = 0.955. The bag-of-markers baseline
-- (predict the most frequent marker, ties to the lowest class) gets about 0.27 with the
-- defaults (measured by the test) and chance 1/C = 0.1 is the floor. Dial: distractor_rate
-- 0 makes counting perfect (trivial); rate 1 with larger C makes counting ~chance; noise
-- 1 makes it impossible (chance); seq_len/min_len/gap/vocab_size change the search.
-- Extra fields: clean_labels int64 (n) (c before noise), marker_pos / cue_pos int64 (n)
-- (token positions 1..L; in the model's (L+1) sequence add 1 for the class token),
-- cue_id, marker_ids {C}, filler = {first, last}, perfect_accuracy.
-- Draw order (part of the format): len (n), c (n), p (n), distractor coin (n*L),
-- distractor class (n*L), filler (n*L), noise coin (n), noise class (n); all are drawn
-- whatever the knobs, so distractor_rate and noise change only what they control (same
-- cue positions and classes); n and seq_len change the array sizes, hence all draws.
local al = require "attnlab"
local util = require "attnlab.util"

local M = {}

local PAD, UNK = 1, 2
local byte, find, gmatch, lower, sub = string.byte, string.find, string.gmatch, string.lower, string.sub

-- ---- options ---------------------------------------------------------------------------------
local function fail(fn, fmt, ...) error(("attnlab.data.%s: " .. fmt):format(fn, ...), 0) end

local function describe(v)
  if type(v) == "string" then return ("'%s' (a string)"):format(v) end
  return tostring(v)
end

local function check_keys(fn, opts, known)
  local bad = util.unknown_keys(opts, known)
  if bad then fail(fn, "%s", bad) end
end

local function opt_int(fn, opts, key, default, lo, hi)
  local v = opts[key]
  if v == nil then return default end
  if math.type(v) ~= "integer" and not (type(v) == "number" and v == math.floor(v) and v == v and math.abs(v) < 2^53) then
    fail(fn, "%s must be an integer, got %s", key, describe(v))
  end
  v = math.tointeger(v)
  if v < lo or (hi and v > hi) then
    fail(fn, "%s must be %s, got %d", key, hi and ("in " .. lo .. ".." .. hi) or (">= " .. lo), v)
  end
  return v
end

local function opt_num(fn, opts, key, default, lo, hi)
  local v = opts[key]
  if v == nil then return default end
  if type(v) ~= "number" or v ~= v or v < lo or v > hi then
    fail(fn, "%s must be a number in [%g, %g], got %s", key, lo, hi, describe(v))
  end
  return v
end

local function opt_bool(fn, opts, key, default)
  local v = opts[key]
  if v == nil then return default end
  if type(v) ~= "boolean" then fail(fn, "%s must be true or false, got %s", key, describe(v)) end
  return v
end

local function opt_choice(fn, opts, key, default, choices)
  local v = opts[key]
  if v == nil then return default end
  for _, c in ipairs(choices) do if v == c then return v end end
  fail(fn, "%s must be '%s', got %s", key, table.concat(choices, "' or '"),
       type(v) == "string" and ("'" .. v .. "'") or tostring(v))
end

-- ---- dataset object ----------------------------------------------------------------------------
-- x (B,L) int64, y (B) int64 [, {key_mask = (B,L+1) float32}] for base example numbers idx.
local function make_batch(self, idx)
  local x = al.index_select(self.tokens, 1, idx)
  local y = al.index_select(self.labels, 1, idx)
  if self.padding == "masked" then
    local real = al.ne(x, PAD):float()                       -- (B, L): 1 = token, 0 = <pad>
    return x, y, { key_mask = al.cat({ al.ones({ x:shape()[1], 1 }), real }, 2) }
  end
  return x, y
end

local function new_dataset(fields)
  fields.make_batch = make_batch
  fields.pad_id, fields.unk_id = PAD, UNK
  return setmetatable(fields, require("attnlab.data").Dataset)
end

-- ---- tokenizer ---------------------------------------------------------------------------------
-- A run matched by the pattern is [A-Za-z0-9][A-Za-z0-9']*: it can only differ from the
-- word rule by doubled apostrophes inside or apostrophes at its end. Those (rare) runs are
-- split here: pieces between runs of 2+ apostrophes, trailing apostrophes dropped.
local WORD_LOWER, WORD_MIXED = "[a-z0-9][a-z0-9']*", "[A-Za-z0-9][A-Za-z0-9']*"

local function split_apostrophes(run)
  local out = {}
  for piece in gmatch((run:gsub("''+", " ")), "%S+") do
    piece = piece:match("^(.-)'*$")
    if piece ~= "" then out[#out + 1] = piece end
  end
  return out
end

local function needs_split(w) return byte(w, -1) == 39 or find(w, "''", 1, true) ~= nil end

-- List of the words of text (rule in the header comment).
function M.tokenize(text, opts)
  if type(text) ~= "string" then error("attnlab.data.text.tokenize: text must be a string, got " .. type(text), 2) end
  local lc = not (opts and opts.lowercase == false)
  if lc then text = lower(text) end
  local out = {}
  for w in gmatch(text, lc and WORD_LOWER or WORD_MIXED) do
    if find(w, "'", 1, true) and needs_split(w) then
      for _, p in ipairs(split_apostrophes(w)) do out[#out + 1] = p end
    else
      out[#out + 1] = w
    end
  end
  return out
end

-- Remove the RFC-822 header: everything through the first empty line ("\n\n" or "\n\r\n",
-- or an empty first line). No empty line: the document is all header.
local function strip_header(doc)
  if find(doc, "^\r?\n") then return sub(doc, (find(doc, "\n", 1, true)) + 1) end
  local _, e = find(doc, "\n\r?\n")
  if not e then return "" end
  return sub(doc, e + 1)
end
M.strip_header = strip_header

-- ---- 20 Newsgroups: one pass over the archive ------------------------------------------------
-- Returns the tokenized corpus of both splits: words[gid], counts[gid] (train occurrences),
-- per split: n, gids (int64 (n, cap): gid+1 of the first cap tokens, 1 past the end of a
-- document), lengths, doc_names. Rows are collected in a flat Lua table CHUNK documents at
-- a time and turned into tensors, so a long seq_len does not need a huge Lua table.
local CHUNK = 1024

local function flush(s, cap)
  local rows = #s.ids // cap
  if rows > 0 then s.chunks[#s.chunks + 1] = al.tensor(s.ids, { dtype = "int64" }):reshape({ rows, cap }) end
  s.ids = {}
end

local function read_corpus(path, lowercase, strip, cap)
  local pat = lowercase and WORD_LOWER or WORD_MIXED
  local gid, words, counts, nwords = {}, {}, {}, 0
  local splits = {}
  for _, s in ipairs({ "train", "test" }) do
    splits[s] = { n = 0, ids = {}, chunks = {}, lengths = {}, groups = {}, doc_names = {} }
  end
  local t0 = al.clock()
  local ok, err = al.tar_foreach(path, function(name, doc)
    local top, group, id = name:match("^20news%-bydate%-(%a+)/([^/]+)/([^/]+)$")
    local s = top and splits[top]
    if not s then return end
    if strip then doc = strip_header(doc) end
    if lowercase then doc = lower(doc) end
    local n = s.n + 1
    s.n = n
    s.groups[n], s.doc_names[n] = group, group .. "/" .. id
    local ids, k, train = s.ids, 0, top == "train"
    local base = #ids                                  -- this document's row starts after it
    for w in gmatch(doc, pat) do
      local more, j = nil, 0
      if find(w, "'", 1, true) and needs_split(w) then
        more = split_apostrophes(w)
        w = more[1]
        j = 1
      end
      while w do
        k = k + 1
        local g = gid[w]
        if not g then nwords = nwords + 1; g = nwords; gid[w] = g; words[g] = w; counts[g] = 0 end
        if train then counts[g] = counts[g] + 1 end
        if k <= cap then ids[base + k] = g + 1 end
        if more then j = j + 1; w = more[j] else w = nil end
      end
      -- only train counts feed the vocabulary: a test document is done after cap tokens
      if not train and k >= cap then break end
    end
    s.lengths[n] = k < cap and k or cap
    for t = k + 1, cap do ids[base + t] = 1 end
    if n % CHUNK == 0 then flush(s, cap) end
  end)
  if not ok then error("attnlab.data.newsgroups20: cannot read the archive " .. tostring(err), 0) end
  if splits.train.n == 0 or splits.test.n == 0 then
    error(("attnlab.data.newsgroups20: %s holds %d 20news-bydate-train/<group>/<id> and %d 20news-bydate-test/<group>/<id> documents; want both (is it 20news-bydate.tar.gz?)")
      :format(path, splits.train.n, splits.test.n), 0)
  end
  -- labels: group index in the sorted list of all group names
  local seen, classes = {}, {}
  for _, s in pairs(splits) do
    for _, g in ipairs(s.groups) do if not seen[g] then seen[g] = true; classes[#classes + 1] = g end end
  end
  table.sort(classes)
  local label_of = {}
  for i, g in ipairs(classes) do label_of[g] = i end
  for _, s in pairs(splits) do
    local lab = {}
    for i, g in ipairs(s.groups) do lab[i] = label_of[g] end
    s.labels = al.tensor(lab, { dtype = "int64" })
    flush(s, cap)
    s.gids = #s.chunks == 1 and s.chunks[1] or al.cat(s.chunks, 1)
    s.ids, s.chunks, s.groups = nil, nil, nil
  end
  return { path = path, cap = cap, words = words, counts = counts, nwords = nwords, classes = classes,
           splits = splits, seconds = al.clock() - t0, vocabs = {} }
end

-- ---- vocabulary -----------------------------------------------------------------------------
local Vocab = {}
Vocab.__index = Vocab
M.Vocab = Vocab

function Vocab:__tostring()
  return ("Vocab(%d ids: 1 <pad>, 2 <unk>, %d words%s%s)"):format(self.size, self.size - 2,
    self.lowercase and ", lowercase" or "", self.strip_headers and ", headers stripped" or "")
end

function Vocab:encode(text)
  local out = {}
  for i, w in ipairs(M.tokenize(text, { lowercase = self.lowercase })) do out[i] = self.index[w] or UNK end
  return out
end

-- ids: a Lua list or an int64 tensor (L) of ids; pads are dropped.
function Vocab:decode(ids)
  if type(ids) ~= "table" then ids = ids:totable() end
  local out = {}
  for _, id in ipairs(ids) do
    if id ~= PAD then out[#out + 1] = self.words[id] or ("<?" .. tostring(id) .. ">") end
  end
  return table.concat(out, " ")
end

-- Most frequent train words: ids 3.. by count descending, ties in byte order of the word.
-- Only the tie group at the cut-off count needs sorting beyond the (<= K) words above it.
local function build_vocab(corpus, vocab_size, min_count, lowercase, strip)
  local K = vocab_size - 2
  local counts, words = corpus.counts, corpus.words
  local by_count = {}                                 -- count -> number of eligible words
  for g = 1, corpus.nwords do
    local c = counts[g]
    if c >= min_count then by_count[c] = (by_count[c] or 0) + 1 end
  end
  local distinct = {}
  for c in pairs(by_count) do distinct[#distinct + 1] = c end
  table.sort(distinct, function(a, b) return a > b end)
  -- cut: the count of the K-th word; words above it all fit. Fewer than K words: take all.
  local cut, above = 0, 0
  for _, c in ipairs(distinct) do
    if above + by_count[c] >= K then cut = c break end
    above = above + by_count[c]
  end
  local high, ties = {}, {}
  for g = 1, corpus.nwords do
    local c = counts[g]
    if c >= min_count then
      if c > cut then high[#high + 1] = g elseif c == cut then ties[#ties + 1] = words[g] end
    end
  end
  table.sort(high, function(a, b)
    local ca, cb = counts[a], counts[b]
    if ca ~= cb then return ca > cb end
    return words[a] < words[b]
  end)
  table.sort(ties)
  local v = setmetatable({ size = 2, words = { "<pad>", "<unk>" }, index = {}, counts = { 0, 0 },
                           lowercase = lowercase, strip_headers = strip, pad_id = PAD, unk_id = UNK, min_count = min_count,
                           requested_size = vocab_size }, Vocab)
  local total = 0
  for g = 1, corpus.nwords do total = total + counts[g] end
  local function add(w, c)
    local id = v.size + 1
    v.size = id
    v.words[id], v.index[w], v.counts[id] = w, id, c
    total = total - c
  end
  for _, g in ipairs(high) do if v.size < vocab_size then add(words[g], counts[g]) end end
  local i = 1
  while v.size < vocab_size and ties[i] do add(ties[i], cut) i = i + 1 end
  v.counts[UNK] = total                                -- train tokens that map to <unk>
  return v
end

local corpus_cache = {}
function M.clear_cache() corpus_cache = {} end

local function get_corpus(path, lowercase, strip, seq_len)
  local key = ("%s|%s|%s"):format(path, lowercase, strip)
  local c = corpus_cache[key]
  if not c or c.cap < seq_len then
    c = read_corpus(path, lowercase, strip, math.max(seq_len, c and c.cap or 0))
    corpus_cache[key] = c
  end
  return c
end

local NG_KEYS = { split = true, seq_len = true, vocab_size = true, min_count = true, lowercase = true,
                  strip_headers = true, padding = true, vocab = true, path = true }

function M.newsgroups20(opts)
  local fn = "newsgroups20"
  opts = opts or {}
  if type(opts) ~= "table" then fail(fn, "options must be a table, got %s", type(opts)) end
  check_keys(fn, opts, NG_KEYS)
  local split = opt_choice(fn, opts, "split", "train", { "train", "test" })
  local seq_len = opt_int(fn, opts, "seq_len", 96, 1)
  local padding = opt_choice(fn, opts, "padding", "positions", { "positions", "masked" })
  local vocab = opts.vocab
  local lowercase, strip, vocab_size, min_count
  if vocab ~= nil then
    if getmetatable(vocab) ~= Vocab then fail(fn, "vocab must be the vocab of another newsgroups20 dataset (ds.vocab), got %s", tostring(vocab)) end
    lowercase = opt_bool(fn, opts, "lowercase", vocab.lowercase)
    if lowercase ~= vocab.lowercase then fail(fn, "lowercase=%s contradicts the given vocab (built with lowercase=%s)", lowercase, vocab.lowercase) end
    -- the vocab's header setting, as for lowercase: a test split read with its headers against
    -- a vocab built without them was silently a different input. A vocab without the field
    -- (made by hand with setmetatable(t, Vocab); no vocab is saved to disk or cached across
    -- processes) was read as strip_headers = false, the loader's default: it stays so.
    local vstrip = vocab.strip_headers
    if vstrip == nil then vstrip = false end
    if type(vstrip) ~= "boolean" then fail(fn, "the given vocab's strip_headers must be true or false, got %s", describe(vstrip)) end
    strip = opt_bool(fn, opts, "strip_headers", vstrip)
    if strip ~= vstrip then fail(fn, "strip_headers=%s contradicts the given vocab (built with strip_headers=%s)", strip, vstrip) end
    vocab_size = opt_int(fn, opts, "vocab_size", vocab.size, 3)
    if vocab_size ~= vocab.size and vocab_size ~= vocab.requested_size then
      fail(fn, "vocab_size=%d contradicts the given vocab, which has %d ids (built for vocab_size=%d)", vocab_size, vocab.size, vocab.requested_size)
    end
    if opts.min_count ~= nil then fail(fn, "min_count has no effect with a given vocab (it was built with min_count=%d)", vocab.min_count) end
  else
    lowercase = opt_bool(fn, opts, "lowercase", true)
    strip = opt_bool(fn, opts, "strip_headers", false)
    vocab_size = opt_int(fn, opts, "vocab_size", 20000, 3)
    min_count = opt_int(fn, opts, "min_count", 1, 1)
  end
  local path = opts.path
  if path ~= nil and type(path) ~= "string" then fail(fn, "path must be a string, got %s", type(path)) end
  if path then
    -- never io.open a FIFO (it waits for a writer forever) or a device: name it instead
    local kind = require("attnlab.data").not_regular(path)
    if kind then fail(fn, "the 20 Newsgroups archive %s is %s, not a regular file", path, kind) end
    local f, err = io.open(path, "rb")
    if not f then fail(fn, "cannot open the 20 Newsgroups archive %s (%s)", path, err) end
    f:close()
  else
    path = require("attnlab.data").find("20news-bydate.tar.gz (20 Newsgroups)",
      { "20news-bydate.tar.gz", "20news/20news-bydate.tar.gz", "20newsgroups/20news-bydate.tar.gz" })
  end

  local corpus = get_corpus(path, lowercase, strip, seq_len)
  if not opts.path then   -- the archive the search found must be the canonical one (an explicit path may be a fixture)
    local want = require("attnlab.data").CANONICAL.newsgroups20
    for _, sp in ipairs({ "train", "test" }) do
      local got = corpus.splits[sp] and corpus.splits[sp].n or 0
      if got ~= want[sp] then
        fail(fn, "%s has %d %s documents, the canonical archive has %d: a truncated or different copy? (pass it as " ..
          "path = ... to use it anyway)", path, got, sp, want[sp])
      end
    end
  end
  if not vocab then
    local vkey = vocab_size .. ":" .. min_count
    vocab = corpus.vocabs[vkey]
    if not vocab then vocab = build_vocab(corpus, vocab_size, min_count, lowercase, strip); corpus.vocabs[vkey] = vocab end
  end
  -- gid -> vocab id, as an int64 table indexed by gid+1 (index 1 = past the end -> <pad>)
  local map = { PAD }
  local index, words = vocab.index, corpus.words
  for g = 1, corpus.nwords do map[g + 1] = index[words[g]] or UNK end
  local s = corpus.splits[split]
  local tokens = al.index_select(al.tensor(map, { dtype = "int64" }), 1, s.gids:reshape({ -1 }))
  tokens = tokens:reshape({ s.n, corpus.cap })
  if corpus.cap ~= seq_len then tokens = tokens:narrow(2, 1, seq_len):contiguous() end
  local lengths = {}
  for i, l in ipairs(s.lengths) do lengths[i] = l < seq_len and l or seq_len end
  return new_dataset({
    name = "newsgroups20", split = split, n = s.n, num_classes = #corpus.classes, classes = corpus.classes,
    labels = s.labels, tokens = tokens, lengths = al.tensor(lengths, { dtype = "int64" }),
    doc_names = s.doc_names, seq_len = seq_len, vocab_size = vocab.size, vocab = vocab, padding = padding,
    lowercase = lowercase, strip_headers = strip, files = { path }, load_seconds = corpus.seconds,
  })
end

-- ---- marker: the synthetic task --------------------------------------------------------------
local MK_KEYS = { split = true, n = true, seq_len = true, vocab_size = true, num_classes = true,
                  distractor_rate = true, noise = true, seed = true, gap = true, min_len = true, padding = true }
local CUE = 3

function M.marker(opts)
  local fn = "marker"
  opts = opts or {}
  if type(opts) ~= "table" then fail(fn, "options must be a table, got %s", type(opts)) end
  check_keys(fn, opts, MK_KEYS)
  local split = opt_choice(fn, opts, "split", "train", { "train", "test" })
  local n = opt_int(fn, opts, "n", split == "train" and 10000 or 2000, 1)
  local L = opt_int(fn, opts, "seq_len", 96, 1)
  local C = opt_int(fn, opts, "num_classes", 10, 2)
  local gap = opt_int(fn, opts, "gap", 1, 1)
  if L < gap + 1 then fail(fn, "seq_len=%d leaves no room for a cue and its marker %d position(s) later: need seq_len >= gap+1 = %d", L, gap, gap + 1) end
  local min_len = opt_int(fn, opts, "min_len", L, gap + 1, L)
  local V = opt_int(fn, opts, "vocab_size", 1000, 1)
  if V < C + 4 then fail(fn, "vocab_size=%d is too small for %d classes: ids 1 <pad>, 2 <unk>, 3 cue, 4..%d markers and at least one filler need vocab_size >= %d", V, C, C + 3, C + 4) end
  local rate = opt_num(fn, opts, "distractor_rate", 0.1, 0, 1)
  local noise = opt_num(fn, opts, "noise", 0.05, 0, 1)
  local seed = opt_int(fn, opts, "seed", 0, math.mininteger // 4, math.maxinteger // 4)
  local padding = opt_choice(fn, opts, "padding", "positions", { "positions", "masked" })

  local g = al.Generator(2 * seed + (split == "train" and 1 or 2))
  local first_filler = C + 4
  local lens = al.randint(min_len, L, { n }, g):totable()
  local cls = al.randint(1, C, { n }, g):totable()
  local upos = al.rand({ n }, { generator = g }):totable()
  local ud = al.rand({ n * L }, { generator = g }):totable()
  local dcls = al.randint(1, C, { n * L }, g):totable()
  local fill = al.randint(first_filler, V, { n * L }, g):totable()
  local unoise = al.rand({ n }, { generator = g }):totable()
  local ncls = al.randint(1, C, { n }, g):totable()

  local x, labels, cue_pos, marker_pos = {}, {}, {}, {}
  for i = 1, n do
    local len, base = lens[i], (i - 1) * L
    local p = 1 + math.floor(upos[i] * (len - gap))
    if p > len - gap then p = len - gap end
    for t = 1, L do
      local k = base + t
      if t > len then x[k] = PAD
      elseif ud[k] < rate then x[k] = CUE + dcls[k]
      else x[k] = fill[k] end
    end
    x[base + p], x[base + p + gap] = CUE, CUE + cls[i]
    cue_pos[i], marker_pos[i] = p, p + gap
    labels[i] = unoise[i] < noise and ncls[i] or cls[i]
  end
  local marker_ids = {}
  for c = 1, C do marker_ids[c] = CUE + c end
  local classes = {}
  for c = 1, C do classes[c] = "marker " .. c end
  local I64 = { dtype = "int64" }
  return new_dataset({
    name = "marker", split = split, n = n, num_classes = C, classes = classes,
    labels = al.tensor(labels, I64), clean_labels = al.tensor(cls, I64),
    tokens = al.tensor(x, I64):reshape({ n, L }), lengths = al.tensor(lens, I64),
    cue_pos = al.tensor(cue_pos, I64), marker_pos = al.tensor(marker_pos, I64),
    seq_len = L, vocab_size = V, padding = padding, cue_id = CUE, marker_ids = marker_ids,
    filler = { first_filler, V }, gap = gap, min_len = min_len, distractor_rate = rate, noise = noise, seed = seed,
    perfect_accuracy = 1 - noise * (C - 1) / C,
  })
end

return M
