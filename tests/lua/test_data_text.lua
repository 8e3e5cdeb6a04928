-- tests for lua/attnlab/data/text.lua: 20 Newsgroups from its tar.gz, and the marker task.
-- Run: bin/attnlab tests/lua/runner.lua tests/lua/test_data_text.lua
-- 20 Newsgroups cases compare with tests/ref/data_text.json, written once by an independent
-- Python implementation (tests/ref/gen_data_text_ref.py); they SKIP, saying what was looked
-- for, when 20news-bydate.tar.gz is not in the data search path.
local al = require "attnlab"
local T = require "harness"
local dt = require "attnlab.data.text"

local I64 = { dtype = "int64" }
local function tok(s, opts) return dt.tokenize(s, opts) end
local function rows(t) return t:contiguous():totable() end
-- A 20 Newsgroups-shaped tar.gz in folder d of docs = {{"20news-bydate-train/GROUP/N", text}, ...},
-- given to tar in that order (the rows keep the archive's order); returns its path.
local function news_fixture(d, docs)
  local names = {}
  for i, doc in ipairs(docs) do
    os.execute("mkdir -p " .. T.shquote(d .. "/" .. doc[1]:match("^(.*)/")))
    T.write_file(d .. "/" .. doc[1], doc[2])
    names[i] = T.shquote(doc[1])
  end
  local fx = d .. "/fixture.tar.gz"
  assert(os.execute(("tar -C %s -czf %s %s"):format(T.shquote(d), T.shquote(fx), table.concat(names, " "))), "tar")
  return fx
end

local REF = al.json.decode(assert(al.read_file("tests/ref/data_text.json")))

-- the archive, or a loud SKIP naming every place looked at. When the search path misses
-- it but the checkout's ../shared/data (cwd = checkout root, as in tests/run.sh) has it,
-- the cases pass it as path= and say so (see the note printed).
local FALLBACK = "../shared/data/20news-bydate.tar.gz"
local found, explicit
local function archive()
  if found then return found end
  local ok, path = pcall(function()
    return require("attnlab.data").find("20news-bydate.tar.gz", { "20news-bydate.tar.gz" })
  end)
  if ok then found = path return path end
  local f = io.open(FALLBACK, "rb")
  if f then
    f:close()
    print("# note: al.data.find did not find the archive (" .. tostring(path):gsub("\n%s*", " ") .. "); using " .. FALLBACK)
    found, explicit = FALLBACK, FALLBACK
    return found
  end
  T.skip("20 Newsgroups archive absent: " .. tostring(path):gsub("\n%s*", " ") .. "; and no " .. FALLBACK)
end

local loaded = {}
local function ng(opts)
  archive()
  if explicit then opts.path = explicit end
  local key = al.json.encode(opts)
  if not loaded[key] then
    local t0 = al.clock()
    loaded[key] = dt.newsgroups20(opts)
    print(("# newsgroups20 %s: %.2f s (archive pass %.2f s)"):format(key, al.clock() - t0, loaded[key].load_seconds))
  end
  return loaded[key]
end

-- same checksum as gen_data_text_ref.py: {sum of ids, sum id*(r*131+t) mod P}
local P = 1000000007
local function checksum(tokens)
  local s1, s2 = 0, 0
  for r, row in ipairs(rows(tokens)) do
    for t, v in ipairs(row) do s1 = s1 + v; s2 = (s2 + v * (r * 131 + t)) % P end
  end
  return { s1, s2 }
end

local function idx(list) return al.tensor(list, I64) end

-- first document of each split, raw bytes, straight from the archive
local function raw_firsts(path)
  local out = {}
  al.tar_foreach(path, function(name, data)
    local split = name:match("^20news%-bydate%-(%a+)/[^/]+/[^/]+$")
    if split and not out[split] then out[split] = data end
    return out.train ~= nil and out.test ~= nil
  end)
  return out
end

-- the key mask a batch must carry: column 1 (class token) = 1, column 1+t = [t <= length]
local function check_key_mask(km, lengths, L, what)
  T.eq(km:shape(), { #lengths, L + 1 }, nil, what .. " key_mask shape")
  T.eq(km:dtype(), "float32", nil, what .. " key_mask dtype")
  for b, row in ipairs(rows(km)) do
    for j = 1, L + 1 do
      local want = (j == 1 or j - 1 <= lengths[b]) and 1 or 0
      if row[j] ~= want then error(("%s: key_mask[%d][%d] = %g, want %d (length %d)"):format(what, b, j, row[j], want, lengths[b]), 0) end
    end
  end
end

-- the rule a perfect attender applies: find the cue, read the token gap positions later
local function oracle(ds)
  local pred = {}
  for i, row in ipairs(rows(ds.tokens)) do
    local cue
    for t, v in ipairs(row) do
      if v == ds.cue_id then assert(not cue, "two cues in row " .. i); cue = t end
    end
    pred[i] = row[cue + ds.gap] - ds.cue_id
  end
  return pred
end

-- bag-of-markers baseline: the most frequent marker (ties: lowest class)
local function bag(ds)
  local pred, C = {}, ds.num_classes
  for i, row in ipairs(rows(ds.tokens)) do
    local cnt = {}
    for c = 1, C do cnt[c] = 0 end
    for _, v in ipairs(row) do
      local c = v - ds.cue_id
      if c >= 1 and c <= C then cnt[c] = cnt[c] + 1 end
    end
    local best = 1
    for c = 2, C do if cnt[c] > cnt[best] then best = c end end
    pred[i] = best
  end
  return pred
end

local function accuracy(pred, labels)
  local y, hit = labels:totable(), 0
  for i = 1, #y do if pred[i] == y[i] then hit = hit + 1 end end
  return hit / #y
end

local cases = {
  -- ---- tokenizer on hand-written strings (data-driven) -----------------------------------
  { "tokenize: contraction, punctuation", tok, { "Don't panic!" }, { "don't", "panic" } },
  { "tokenize: quotes, inner apostrophes", tok, { "'quoted' rock'n'roll ''x''" }, { "quoted", "rock'n'roll", "x" } },
  { "tokenize: apostrophe edge cases", tok, { "dogs' o''clock X'Y' '' 'tis a'''b" }, { "dogs", "o", "clock", "x'y", "tis", "a", "b" } },
  { "tokenize: e-mail address", tok, { "e-mail: A.B@c.COM" }, { "e", "mail", "a", "b", "c", "com" } },
  { "tokenize: digits split at punctuation", tok, { "3.14 1,000 v2.0 2nd" }, { "3", "14", "1", "000", "v2", "0", "2nd" } },
  { "tokenize: Latin-1 bytes separate words", tok, { "na\xEFve caf\xE9 \xC9t\xE9" }, { "na", "ve", "caf", "t" } },
  { "tokenize: underscore, hyphen, CRLF, tab", tok, { "snake_case x-ray\r\nnext\tline" }, { "snake", "case", "x", "ray", "next", "line" } },
  { "tokenize: lowercase=false keeps case", tok, { "Hello WORLD It's", { lowercase = false } }, { "Hello", "WORLD", "It's" } },
  { "tokenize: nothing but separators", tok, { "!!! ''' --- \xFF" }, {} },
  { "tokenize: empty string", tok, { "" }, {} },
  { "strip_header: up to the first empty line", dt.strip_header, { "From: a\nSubject: b\n\nBody\n\nmore" }, "Body\n\nmore" },
  { "strip_header: CRLF empty line", dt.strip_header, { "From: a\r\n\r\nbody" }, "body" },
  { "strip_header: empty first line = empty header", dt.strip_header, { "\nno header\n\nx" }, "no header\n\nx" },
  { "strip_header: a first line holding only \\r is the blank line", dt.strip_header, { "\r\nbody\n\nx" }, "body\n\nx" },
  { "strip_header: a blank-looking line with a space is not empty", dt.strip_header, { "H: 1\n \nbody\n\nrest" }, "rest" },
  { "strip_header: no empty line -> all header", dt.strip_header, { "Only: header\nX: y\n" }, "" },

  -- ---- option errors (checked before any file is read) ------------------------------------
  { name = "newsgroups20: bad options give clear errors", fn = function()
    T.raises(function() dt.newsgroups20 { padding = "mask" } end, "padding must be 'positions' or 'masked', got 'mask'")
    T.raises(function() dt.newsgroups20 { seq_len = 0 } end, "seq_len must be >= 1, got 0")
    T.raises(function() dt.newsgroups20 { seq_len = 1.5 } end, "seq_len must be an integer, got 1.5")
    T.raises(function() dt.newsgroups20 { seq_len = "96" } end, "seq_len must be an integer, got '96' (a string)")
    T.raises(function() dt.newsgroups20 { vocab_size = 2 } end, "vocab_size must be >= 3, got 2")
    T.raises(function() dt.newsgroups20 { split = "val" } end, "split must be 'train' or 'test', got 'val'")
    T.raises(function() dt.newsgroups20 { seqlen = 96 } end, "unknown option 'seqlen'")
    T.raises(function() dt.newsgroups20 { strip_headers = "yes" } end, "strip_headers must be true or false")
    T.raises(function() dt.newsgroups20 { vocab = { words = {} } } end, "vocab must be the vocab of another newsgroups20 dataset")
    T.raises(function() dt.newsgroups20("train") end, "options must be a table")
  end },
  { name = "newsgroups20: a missing archive names the path looked for", fn = function()
    local missing = "/nonexistent-attnlab-dir/20news-bydate.tar.gz"
    local err = T.raises(function() dt.newsgroups20 { path = missing } end, missing)
    print("# error: " .. err)
    -- a file that is not a tar.gz: the error says which file and why
    err = T.raises(function() dt.newsgroups20 { path = "tests/ref/data_text.json" } end, "tests/ref/data_text.json")
    T.truthy(err:find("cannot read the archive", 1, true), err)
    -- the search-path lookup names every folder it tried, on one line
    err = T.raises(function() require("attnlab.data").find("20news-bydate.tar.gz", { "no-such-20news.tar.gz" }) end,
      "file not found in ATTNLAB_DATA")
    T.truthy(err:find("no-such-20news.tar.gz", 1, true), err)
    for _, d in ipairs(require("attnlab.data").search_path()) do T.truthy(err:find(d, 1, true), "lacks " .. d .. ": " .. err) end
    T.truthy(not err:find("\n"), "more than one line: " .. err)
  end },

  { name = "newsgroups20: a FIFO as the archive (given or found) is refused in one line, without waiting", fn = function()
    local d = T.tmpdir("data-text")
    local fifo = d .. "/20news-bydate.tar.gz"
    assert(os.execute("mkfifo " .. T.shquote(fifo)), "mkfifo")
    -- in a host under a timeout: io.open on a FIFO used to wait for a writer forever
    for _, call in ipairs({ ("al.data.newsgroups20{path = %q}"):format(fifo), "al.data.newsgroups20{}" }) do
      local out, err, rc = T.run_host("-e " .. T.shquote(("local ok, e = pcall(function() return %s end) io.write(tostring(e))")
        :format(call)), { env = "ATTNLAB_DATA=" .. T.shquote(d), timeout = 60 })
      T.eq(rc, 0, 0, call .. ": " .. err)
      T.truthy(out:find(fifo .. " is a FIFO, not a regular file", 1, true) and not out:find("\n"), call .. ": " .. out)
    end
    T.rm_rf(d)
  end },

  { name = "newsgroups20: a given vocab's strip_headers is inherited; a contradicting one is refused", fn = function()
    -- a four-document archive given as path (its counts need not be the canonical ones)
    local d = T.tmpdir("data-text")
    local docs = {   -- in archive order (tar is given the files in this order: rows keep it)
      { "20news-bydate-train/alpha/1", "From: hdrword\nSubject: Alpha\n\nbody alpha text\n" },
      { "20news-bydate-train/beta/2", "From: hdrword\nSubject: Beta\n\nbody beta\n" },
      { "20news-bydate-test/alpha/3", "From: hdrword\nSubject: Alpha\n\nalpha body\n" },
      { "20news-bydate-test/beta/4", "From: hdrword\nSubject: zeta\n\nbeta\n" },
    }
    local fx = news_fixture(d, docs)
    local function first_row(ds) return ds.vocab:decode(ds.tokens:select(1, 1)) end

    -- built with stripped headers: the test split given that vocab is stripped too (it kept its
    -- headers: rows began with <unk> <unk> ... for the header words the vocab never saw)
    local tr = dt.newsgroups20 { path = fx, strip_headers = true }
    T.eq(tr.vocab.strip_headers, true)
    T.eq(first_row(tr), "body alpha text")
    local te = dt.newsgroups20 { path = fx, split = "test", vocab = tr.vocab }
    T.eq(te.strip_headers, true, nil, "inherited from the vocab")
    T.eq(first_row(te), "alpha body")
    T.eq(dt.newsgroups20 { path = fx, split = "test", vocab = tr.vocab, strip_headers = true }.strip_headers, true)
    local e = T.raises(function() dt.newsgroups20 { path = fx, split = "test", vocab = tr.vocab, strip_headers = false } end,
      "attnlab.data.newsgroups20: strip_headers=false contradicts the given vocab (built with strip_headers=true)")
    T.truthy(not e:find("\n"), "more than one line: " .. e)

    -- the default (headers kept) is unchanged, and a stripped split cannot take its vocab
    local keep = dt.newsgroups20 { path = fx }
    T.eq(keep.vocab.strip_headers, false)
    local kte = dt.newsgroups20 { path = fx, split = "test", vocab = keep.vocab }
    T.eq(kte.strip_headers, false)
    T.eq(first_row(kte), "from hdrword subject alpha alpha body")
    T.raises(function() dt.newsgroups20 { path = fx, split = "test", vocab = keep.vocab, strip_headers = true } end,
      "strip_headers=true contradicts the given vocab (built with strip_headers=false)")

    -- a vocab without the field (made by hand; none is saved anywhere) behaves as before: headers kept
    local old = {}
    for k, v in pairs(keep.vocab) do if k ~= "strip_headers" then old[k] = v end end
    setmetatable(old, dt.Vocab)
    local ote = dt.newsgroups20 { path = fx, split = "test", vocab = old }
    T.eq(ote.strip_headers, false)
    T.eq(rows(ote.tokens), rows(kte.tokens))
    T.raises(function() dt.newsgroups20 { path = fx, split = "test", vocab = old, strip_headers = true } end,
      "strip_headers=true contradicts the given vocab (built with strip_headers=false)")
    old.strip_headers = "yes"
    T.raises(function() dt.newsgroups20 { path = fx, split = "test", vocab = old } end,
      "the given vocab's strip_headers must be true or false, got 'yes' (a string)")
    T.rm_rf(d)
  end },

  { name = "newsgroups20: labels index the byte-sorted group names of both splits, whatever the archive's order", fn = function()
    -- groups in the archive out of order (zeta before alpha), and one (mid) only in the test split:
    -- classes = sorted union {alpha, mid, zeta}, so zeta is 3 and alpha 1 in both splits
    local d = T.tmpdir("data-text")
    local docs = {
      { "20news-bydate-train/zeta/1", "zeta words here\n" },
      { "20news-bydate-train/alpha/2", "alpha words\n" },
      { "20news-bydate-train/zeta/5", "more zeta\n" },
      { "20news-bydate-test/mid/3", "mid words\n" },
      { "20news-bydate-test/alpha/4", "alpha again\n" },
    }
    local fx = news_fixture(d, docs)
    local tr = dt.newsgroups20 { path = fx, seq_len = 4 }
    local te = dt.newsgroups20 { path = fx, split = "test", vocab = tr.vocab, seq_len = 4 }
    T.eq(tr.classes, { "alpha", "mid", "zeta" })
    T.eq({ tr.num_classes, te.num_classes }, { 3, 3 })
    T.eq(tr.doc_names, { "zeta/1", "alpha/2", "zeta/5" }, nil, "archive order kept")
    T.eq(tr.labels:totable(), { 3, 1, 3 })
    T.eq(te.labels:totable(), { 2, 1 })
    -- rows: vocab by train count, ties in byte order (words 2, zeta 2; alpha, here, more 1 each);
    -- "mid" and "again" are test-only words: <unk> = 2
    T.eq(tr.vocab.words, { "<pad>", "<unk>", "words", "zeta", "alpha", "here", "more" })
    T.eq(rows(tr.tokens), { { 4, 3, 6, 1 }, { 5, 3, 1, 1 }, { 7, 4, 1, 1 } })
    T.eq(rows(te.tokens), { { 2, 3, 1, 1 }, { 5, 2, 1, 1 } })
    T.eq({ tr.lengths:totable(), te.lengths:totable() }, { { 3, 2, 2 }, { 2, 2 } })
    T.rm_rf(d)
  end },

  -- ---- 20 Newsgroups ----------------------------------------------------------------------
  { name = "newsgroups20: counts per split and per group, classes, order", fn = function()
    local README = { -- shared/data/README.md, train and test per group in sorted group order
      { "alt.atheism", 480, 319 }, { "comp.graphics", 584, 389 }, { "comp.os.ms-windows.misc", 591, 394 },
      { "comp.sys.ibm.pc.hardware", 590, 392 }, { "comp.sys.mac.hardware", 578, 385 }, { "comp.windows.x", 593, 395 },
      { "misc.forsale", 585, 390 }, { "rec.autos", 594, 396 }, { "rec.motorcycles", 598, 398 },
      { "rec.sport.baseball", 597, 397 }, { "rec.sport.hockey", 600, 399 }, { "sci.crypt", 595, 396 },
      { "sci.electronics", 591, 393 }, { "sci.med", 594, 396 }, { "sci.space", 593, 394 },
      { "soc.religion.christian", 599, 398 }, { "talk.politics.guns", 546, 364 }, { "talk.politics.mideast", 564, 376 },
      { "talk.politics.misc", 465, 310 }, { "talk.religion.misc", 377, 251 } }
    for col, split in ipairs({ "train", "test" }) do
      local ds = ng { split = split }
      T.eq(ds.n, split == "train" and 11314 or 7532, nil, split .. " n")
      T.eq(ds.num_classes, 20); T.eq(#ds.classes, 20)
      local per = {}
      for c = 1, 20 do per[c] = 0 end
      local prev = 1
      for i, y in ipairs(ds.labels:totable()) do
        per[y] = per[y] + 1
        -- archive order: groups one after another in sorted order
        assert(y >= prev, ("%s: label of doc %d is %d after %d"):format(split, i, y, prev))
        prev = y
        assert(ds.doc_names[i]:match("^[^/]+") == ds.classes[y], ds.doc_names[i])
      end
      for c, row in ipairs(README) do
        T.eq(ds.classes[c], row[1], nil, "class " .. c)
        T.eq(per[c], row[col + 1], nil, split .. " " .. row[1])
      end
      T.eq(per, REF[split].per_group, nil, split .. " per group vs ref")
      T.eq({ ds.doc_names[1], ds.doc_names[ds.n] }, { REF[split].first, REF[split].last }, nil, split .. " first/last")
      T.eq(ds.labels:dtype(), "int64")
      T.eq({ ds.seq_len, ds.vocab_size, ds.pad_id, ds.unk_id }, { 96, 20000, 1, 2 })
    end
    local tr = ng { split = "train" }
    T.eq(tr.doc_names[1], "alt.atheism/49960")
    T.eq(tr.classes[tr.labels:totable()[1]], "alt.atheism")
    print("# " .. tostring(tr) .. "; first doc: " .. tr.vocab:decode(tr.tokens:select(1, 1)):sub(1, 70) .. " ...")
  end },
  { name = "newsgroups20: rows equal the reference tokenizer+vocab (picked rows and whole-split checksums)", fn = function()
    for _, split in ipairs({ "train", "test" }) do
      local ds, ref = ng { split = split }, REF.rows[split]
      local x, y, extra = ds:batch(idx(ref.index))
      T.eq(x:shape(), { #ref.index, 96 }); T.eq(x:dtype(), "int64"); T.eq(extra, nil)
      T.eq(y:shape(), { #ref.index })
      local got = rows(x)
      for k, i in ipairs(ref.index) do
        T.eq(got[k], ref.ids[k], nil, ("%s doc %d"):format(split, i))
        T.eq(ds.lengths:totable()[i], math.min(ref.ntokens[k], 96), nil, "length")
      end
      print(("# %s doc %d first ids: %s"):format(split, ref.index[1], table.concat(got[1], " ", 1, 10)))
      local cs = checksum(ds.tokens)
      T.eq(cs, ref.checksum, nil, split .. " checksum")
      print(("# %s checksum %d %d (ref %d %d)"):format(split, cs[1], cs[2], ref.checksum[1], ref.checksum[2]))
    end
  end },
  { name = "newsgroups20: vocabulary (pad/unk ids, frequency order, ties in byte order, train counts)", fn = function()
    local v = ng { split = "train" }.vocab
    T.eq(v.size, 20000); T.eq(#v.words, 20000)
    T.eq({ v.words[1], v.words[2], v.pad_id, v.unk_id }, { "<pad>", "<unk>", 1, 2 })
    for i = 1, #REF.vocab_head do T.eq(v.words[i], REF.vocab_head[i], nil, "word " .. i) end
    for i = 3, #REF.vocab_head_counts do T.eq(v.counts[i], REF.vocab_head_counts[i], nil, "count " .. i) end
    for k = 1, 10 do
      T.eq(v.words[19990 + k], REF.vocab_tail[k], nil, "tail word"); T.eq(v.counts[19990 + k], REF.vocab_tail_counts[k])
    end
    T.eq(v.counts[2], REF.unk_count_train, nil, "train tokens mapped to <unk>")
    for id = 4, v.size do
      local c0, c1 = v.counts[id - 1], v.counts[id]
      assert(c1 <= c0 and (c1 < c0 or v.words[id - 1] < v.words[id]), ("ids %d,%d out of order: %s %d, %s %d"):format(id - 1, id, v.words[id - 1], c0, v.words[id], c1))
      T.eq(v.index[v.words[id]], id)
    end
    -- a smaller vocab is a prefix of the larger one; min_count cuts the tail
    local small = ng { split = "train", vocab_size = 5000 }.vocab
    T.eq(small.size, 5000)
    for id = 1, 5000 do if small.words[id] ~= v.words[id] then error("vocab_size=5000 differs at id " .. id) end end
    local mc = ng { split = "train", vocab_size = 1000000, min_count = 5 }
    T.eq(mc.vocab.size, REF.min_count_5_size, nil, "min_count=5 size")
    T.eq(mc.vocab_size, REF.min_count_5_size)
    print(("# vocab: %s; top words %s; last id %s (count %d); <unk> covers %d of %d train tokens")
      :format(tostring(v), table.concat(v.words, " ", 3, 12), v.words[20000], v.counts[20000], v.counts[2], REF.train_tokens))
  end },
  { name = "newsgroups20: vocab is built on train only (a test-only word maps to <unk>)", fn = function()
    local tr, te = ng { split = "train" }, ng { split = "test" }
    T.truthy(te.vocab == tr.vocab, "test reuses the train split's vocab")
    local w = REF.test_only_word
    T.eq(tr.vocab.index[w.word], nil, "test-only word in vocab")
    T.eq(rows(te.tokens:select(1, w.doc):narrow(1, w.pos, 1))[1], 2, nil, "test-only word id")
    -- even with room for every train word it stays out
    local big = ng { split = "test", vocab_size = 1000000 }
    T.eq(big.vocab.size, REF.train_unique_words + 2, nil, "all train words")
    T.eq(big.vocab.index[w.word], nil); T.eq(rows(big.tokens:select(1, w.doc))[w.pos], 2)
    for id = 3, big.vocab.size do if big.vocab.counts[id] < 1 then error("vocab word without train occurrence: " .. big.vocab.words[id]) end end
    -- passing the vocab explicitly gives the same rows; contradicting options are errors
    local te2 = dt.newsgroups20 { split = "test", vocab = tr.vocab, vocab_size = 20000, path = explicit }
    T.eq(checksum(te2.tokens), REF.rows.test.checksum)
    T.raises(function() dt.newsgroups20 { split = "test", vocab = tr.vocab, vocab_size = 100 } end, "vocab_size=100 contradicts the given vocab, which has 20000 ids")
    -- a vocab built for more ids than there are words accepts its requested size (train.lua passes it)
    local all = ng { split = "train", vocab_size = 1000000 }
    T.eq(all.vocab.requested_size, 1000000)
    local te3 = dt.newsgroups20 { split = "test", vocab = all.vocab, vocab_size = 1000000, path = explicit }
    T.eq(te3.vocab_size, REF.train_unique_words + 2)
    T.raises(function() dt.newsgroups20 { split = "test", vocab = tr.vocab, lowercase = false } end, "lowercase=false contradicts the given vocab")
    T.raises(function() dt.newsgroups20 { split = "test", vocab = tr.vocab, min_count = 3 } end, "min_count has no effect with a given vocab")
    print(("# test-only word '%s' at test doc %d position %d -> id 2"):format(w.word, w.doc, w.pos))
  end },
  { name = "newsgroups20: rows agree with tokenize()+encode() of the raw first documents; truncation", fn = function()
    local tr, te = ng { split = "train" }, ng { split = "test" }
    local raw = raw_firsts(archive())
    for split, ds in pairs({ train = tr, test = te }) do
      local ids = ds.vocab:encode(raw[split])
      local row = rows(ds.tokens:select(1, 1))
      T.truthy(#ids > 96, split .. " first doc longer than seq_len")
      for t = 1, 96 do if row[t] ~= ids[t] then error(("%s doc 1 position %d: %d vs encode %d"):format(split, t, row[t], ids[t])) end end
    end
    -- seq_len 8 keeps the first 8 tokens
    local s8 = ng { split = "train", seq_len = 8 }
    T.eq(s8.tokens:shape(), { 11314, 8 })
    T.eq(rows(s8.tokens), rows(tr.tokens:narrow(2, 1, 8)))
    T.eq(checksum(s8.tokens), REF.seq8_checksum_train)
    -- and its lengths are min(length, 8) (the cached corpus was read at 96)
    local l96, l8 = tr.lengths:totable(), s8.lengths:totable()
    for i = 1, #l96 do
      if l8[i] ~= math.min(l96[i], 8) then error(("seq_len 8: lengths[%d] = %d, want min(%d, 8)"):format(i, l8[i], l96[i])) end
    end
    T.truthy(s8.vocab == tr.vocab, "same vocab object for the same vocab options")
  end },
  { name = "newsgroups20: padding='masked' returns an exact key_mask; 'positions' none", fn = function()
    local pos, msk = ng { split = "test" }, ng { split = "test", padding = "masked" }
    local sel = { 1, 2, 7532, 100 }
    local x1, y1, e1 = pos:batch(idx(sel))
    local x2, y2, e2 = msk:batch(idx(sel))
    T.eq(e1, nil)
    T.eq(rows(x2), rows(x1)); T.eq(y2:totable(), y1:totable())
    local lens = {}
    for k, i in ipairs(sel) do lens[k] = msk.lengths:totable()[i] end
    check_key_mask(e2.key_mask, lens, 96, "masked")
  end },
  { name = "newsgroups20: strip_headers (reference words, empty docs, padding at the end, key_mask)", fn = function()
    local tr = ng { split = "train", strip_headers = true, padding = "masked" }
    local te = ng { split = "test", strip_headers = true }
    for i, words in pairs(REF.strip.first_words) do
      local row = rows(tr.tokens:select(1, tonumber(i)))
      local got, want = {}, {}
      for t = 1, #words do got[t], want[t] = row[t], tr.vocab.index[words[t]] or 2 end
      T.eq(got, want, nil, "stripped doc " .. i)
    end
    for k = 1, #REF.strip.vocab_head do T.eq(tr.vocab.words[k], REF.strip.vocab_head[k]) end
    T.eq(checksum(tr.tokens), REF.strip.checksum.train, nil, "strip train checksum")
    T.eq(checksum(te.tokens), REF.strip.checksum.test, nil, "strip test checksum")
    -- pads only after the real tokens; counts of empty and short rows
    local short, empty, sel, lens = 0, 0, {}, {}
    local L = tr.lengths:totable()
    for i, row in ipairs(rows(tr.tokens)) do
      for t = 1, 96 do
        if (row[t] == 1) ~= (t > L[i]) then error(("row %d position %d: id %d with length %d"):format(i, t, row[t], L[i])) end
      end
      if L[i] < 96 then short = short + 1; if #sel < 300 then sel[#sel + 1] = i; lens[#lens + 1] = L[i] end end
      if L[i] == 0 then empty = empty + 1; sel[#sel + 1] = i; lens[#lens + 1] = 0 end
    end
    T.eq(short, REF.strip.short_rows.train); T.eq(empty, REF.strip.empty_docs.train)
    sel[#sel + 1] = 1; lens[#lens + 1] = L[1]
    local _, _, e = tr:batch(idx(sel))
    check_key_mask(e.key_mask, lens, 96, "strip")
    print(("# strip_headers: %d of %d train rows shorter than 96, %d empty; first words %s"):format(short, tr.n, empty, table.concat(REF.strip.first_words["1"], " ", 1, 6)))
  end },
  { name = "newsgroups20: lowercase=false (reference vocab and rows)", fn = function()
    local ds = ng { split = "train", lowercase = false, vocab_size = 1000 }
    T.eq(ds.vocab.lowercase, false)
    for k = 1, #REF.mixed_case.vocab_head do T.eq(ds.vocab.words[k], REF.mixed_case.vocab_head[k]) end
    for k = 1, 5 do T.eq(ds.vocab.words[995 + k], REF.mixed_case.vocab_tail[k]) end
    T.eq(checksum(ds.tokens), REF.mixed_case.checksum_train)
  end },
  { name = "newsgroups20: longer seq_len re-reads the archive; same vocab words (determinism)", fn = function()
    local base = ng { split = "train" }
    local long = ng { split = "train", seq_len = 160 }
    T.eq(long.tokens:shape(), { 11314, 160 })
    T.eq(rows(long.tokens:narrow(2, 1, 96)), rows(base.tokens))
    T.truthy(long.vocab ~= base.vocab, "a new archive pass builds a new vocab object")
    T.eq(long.vocab.words, base.vocab.words)
    T.eq(long.vocab.counts, base.vocab.counts)
  end },
  { name = "newsgroups20: subset, train_val_split and Loader work on it", fn = function()
    local data = require "attnlab.data"
    local ds = ng { split = "test", padding = "masked" }
    local sub = ds:subset({ 5, 1 }, "pair")
    local x, y, e = sub:batch(idx({ 2, 1 }))
    T.eq(rows(x), rows(al.index_select(ds.tokens, 1, idx({ 1, 5 }))))
    T.eq(y:totable(), al.index_select(ds.labels, 1, idx({ 1, 5 })):totable())
    T.eq(e.key_mask:shape(), { 2, 97 })
    local a, b = data.train_val_split(ds, { val = 100, seed = 1 })
    T.eq({ a.n, b.n }, { 7432, 100 })
    local loader = data.Loader(ds, { batch_size = 32 })
    local lx, ly = loader:iter(1)()
    T.eq(lx:shape(), { 32, 96 }); T.eq(ly:totable(), al.index_select(ds.labels, 1, al.arange(32)):totable())
  end },
  { name = "al.data exposes newsgroups20 and marker", fn = function()
    local data = require "attnlab.data"
    T.truthy(data.newsgroups20 and data.marker, "al.data.newsgroups20 / al.data.marker missing")
    local a, b = data.marker { n = 50 }, dt.marker { n = 50 }
    T.eq(rows(a.tokens), rows(b.tokens))
  end },

  -- ---- marker -------------------------------------------------------------------------------
  { name = "marker: defaults, sizes and documented perfect accuracy", fn = function()
    local tr, te = dt.marker {}, dt.marker { split = "test" }
    T.eq({ tr.n, te.n, tr.seq_len, tr.vocab_size, tr.num_classes }, { 10000, 2000, 96, 1000, 10 })
    T.eq(tr.tokens:shape(), { 10000, 96 }); T.eq(tr.tokens:dtype(), "int64")
    T.eq(tr.perfect_accuracy, 1 - 0.05 * 9 / 10, 1e-15)
    T.eq({ tr.cue_id, tr.marker_ids[1], tr.marker_ids[10], tr.filler[1], tr.filler[2] }, { 3, 4, 13, 14, 1000 })
    local x, y, e = tr:batch(idx({ 1, 2 }))
    T.eq(x:shape(), { 2, 96 }); T.eq(y:shape(), { 2 }); T.eq(e, nil)
  end },
  { name = "marker: same seed -> identical data; other seed/split -> different; pinned values", fn = function()
    local a, b = dt.marker {}, dt.marker {}
    T.eq(rows(a.tokens), rows(b.tokens)); T.eq(a.labels:totable(), b.labels:totable())
    local c, d = dt.marker { seed = 1 }, dt.marker { split = "test", n = 10000 }
    local function same(p, q) return checksum(p.tokens)[2] == checksum(q.tokens)[2] end
    T.truthy(not same(a, c), "seed 1 equals seed 0"); T.truthy(not same(a, d), "test equals train")
    -- changing distractor_rate leaves the positions and classes (drawn first) unchanged
    local e = dt.marker { distractor_rate = 0.5, noise = 0.3 }
    T.eq(e.cue_pos:totable(), a.cue_pos:totable()); T.eq(e.clean_labels:totable(), a.clean_labels:totable())
    -- regression pin of the documented draw order (Philox, counter-based: any machine)
    local row = rows(a.tokens:select(1, 1))
    print("# marker seed 0 row 1: " .. table.concat(row, " ", 1, 16) .. " ...; checksum " .. table.concat(checksum(a.tokens), " "))
    T.eq({ row[1], row[2], row[3], row[4] }, { 725, 776, 4, 794 }, nil, "pinned first tokens")
  end },
  { name = "marker: structure (one cue, marker gap after it, distractor rate, id ranges)", fn = function()
    local ds = dt.marker { n = 4000, gap = 3, distractor_rate = 0.2, num_classes = 5, vocab_size = 50, seed = 7 }
    local cue, mpos, clean = ds.cue_pos:totable(), ds.marker_pos:totable(), ds.clean_labels:totable()
    local distract, others = 0, 0
    for i, row in ipairs(rows(ds.tokens)) do
      local ncue = 0
      for t, v in ipairs(row) do
        if v == 3 then ncue = ncue + 1; T.eq(t, cue[i], nil, "cue position") end
        assert(v >= 3 and v <= 50, "id out of range " .. v)
        if t ~= cue[i] and t ~= mpos[i] then
          others = others + 1
          if v >= 4 and v <= 8 then distract = distract + 1 end
        end
      end
      T.eq(ncue, 1, nil, "cues in row " .. i)
      T.eq(mpos[i], cue[i] + 3); T.eq(row[mpos[i]], 3 + clean[i], nil, "marker")
    end
    local rate, sd = distract / others, math.sqrt(0.2 * 0.8 / others)
    print(("# distractor rate %.4f (want 0.2 +- %.4f)"):format(rate, 4 * sd))
    assert(math.abs(rate - 0.2) < 4 * sd, "distractor rate " .. rate)
  end },
  { name = "marker: rule-based oracle reaches 1 - noise*(C-1)/C; counting markers does not", fn = function()
    local ds = dt.marker {}
    local acc, want = accuracy(oracle(ds), ds.labels), ds.perfect_accuracy
    local sd = math.sqrt(want * (1 - want) / ds.n)
    local base = accuracy(bag(ds), ds.labels)
    print(("# defaults: oracle %.4f (documented %.4f +- %.4f), bag-of-markers %.4f, chance 0.1"):format(acc, want, 4 * sd, base))
    assert(math.abs(acc - want) < 4 * sd, "oracle accuracy " .. acc)
    assert(base < acc - 0.3, "bag-of-markers baseline too good: " .. base)
    T.eq(accuracy(oracle(ds), ds.clean_labels), 1.0, nil, "oracle vs clean labels")
    local clean = dt.marker { n = 2000, noise = 0 }
    T.eq(accuracy(oracle(clean), clean.labels), 1.0, nil, "noise 0")
    local easy = dt.marker { n = 2000, noise = 0, distractor_rate = 0 }
    T.eq(accuracy(bag(easy), easy.labels), 1.0, nil, "no distractors: counting is perfect")
    local hard = dt.marker { n = 4000, noise = 0.6, num_classes = 4, vocab_size = 100 }
    local hw = 1 - 0.6 * 3 / 4
    local ha = accuracy(oracle(hard), hard.labels)
    print(("# noise 0.6, C=4: oracle %.4f (want %.4f)"):format(ha, hw))
    assert(math.abs(ha - hw) < 4 * math.sqrt(hw * (1 - hw) / 4000), "noisy oracle " .. ha)
  end },
  { name = "marker: variable length with padding='masked' (key_mask exact, pads at the end)", fn = function()
    local ds = dt.marker { n = 300, min_len = 10, seq_len = 40, padding = "masked", gap = 2 }
    local L = ds.lengths:totable()
    local minl, maxl = 99, 0
    for i, row in ipairs(rows(ds.tokens)) do
      minl, maxl = math.min(minl, L[i]), math.max(maxl, L[i])
      for t = 1, 40 do if (row[t] == 1) ~= (t > L[i]) then error(("row %d pos %d id %d length %d"):format(i, t, row[t], L[i])) end end
      assert(ds.marker_pos:totable()[i] <= L[i])
    end
    assert(minl >= 10 and maxl <= 40 and minl < 15 and maxl > 35, ("lengths %d..%d"):format(minl, maxl))
    local sel = {}
    for i = 1, 300 do sel[i] = i end
    local _, _, e = ds:batch(idx(sel))
    check_key_mask(e.key_mask, L, 40, "marker")
    T.eq(accuracy(oracle(ds), ds.clean_labels), 1.0)
  end },
  -- the ends of each documented range are allowed: min_len = seq_len (every row full), noise = 1
  -- and distractor_rate = 1 (the dial's far ends), num_classes = 2, seq_len = gap + 1
  { name = "marker: options at the ends of their ranges are accepted", fn = function()
    local full = dt.marker { n = 20, seq_len = 12, min_len = 12, vocab_size = 20 }
    T.eq(full.lengths:totable(), (function() local t = {} for i = 1, 20 do t[i] = 12 end return t end)())
    local loud = dt.marker { n = 50, noise = 1, distractor_rate = 1, num_classes = 2, vocab_size = 6 }
    T.eq(loud.perfect_accuracy, 0.5)                         -- 1 - 1 * (2 - 1) / 2
    for _, row in ipairs(rows(loud.tokens)) do               -- no filler left: every other token is a marker
      for _, v in ipairs(row) do T.truthy(v >= 3 and v <= 5, "id " .. v) end
    end
    local tight = dt.marker { n = 10, seq_len = 3, gap = 2, num_classes = 2, vocab_size = 6 }
    T.eq(tight.cue_pos:totable(), { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 })
    T.eq(tight.marker_pos:totable(), { 3, 3, 3, 3, 3, 3, 3, 3, 3, 3 })
    T.eq(dt.marker { n = 1, seq_len = 2, num_classes = 2, vocab_size = 6 }.tokens:shape(), { 1, 2 })
    -- lengths are uniform in [min_len, seq_len], both ends included (300 draws over 31 values: both occur)
    local v = dt.marker { n = 300, min_len = 10, seq_len = 40 }
    local lo, hi = math.huge, -math.huge
    for _, l in ipairs(v.lengths:totable()) do lo, hi = math.min(lo, l), math.max(hi, l) end
    T.eq({ lo, hi }, { 10, 40 })
  end },
  -- every default is the documented one: the defaults draw exactly what the spelt-out options draw
  { name = "marker: the defaults are the documented values", fn = function()
    local d = dt.marker { n = 200 }
    local spelt = dt.marker { n = 200, split = "train", seq_len = 96, vocab_size = 1000, num_classes = 10,
      distractor_rate = 0.1, noise = 0.05, seed = 0, gap = 1, min_len = 96, padding = "positions" }
    T.eq({ d.distractor_rate, d.noise, d.seed, d.gap, d.min_len, d.padding }, { 0.1, 0.05, 0, 1, 96, "positions" })
    T.eq(rows(d.tokens), rows(spelt.tokens))
    T.eq(d.labels:totable(), spelt.labels:totable())
  end },
  { name = "marker: bad options give clear errors", fn = function()
    T.raises(function() dt.marker { seq_len = 0 } end, "seq_len must be >= 1, got 0")
    T.raises(function() dt.marker { seq_len = 1 } end, "need seq_len >= gap+1 = 2")
    T.raises(function() dt.marker { vocab_size = 13 } end, "vocab_size=13 is too small for 10 classes")
    T.raises(function() dt.marker { num_classes = 1 } end, "num_classes must be >= 2, got 1")
    T.raises(function() dt.marker { distractor_rate = 1.5 } end, "distractor_rate must be a number in [0, 1], got 1.5")
    T.raises(function() dt.marker { noise = -0.1 } end, "noise must be a number in [0, 1]")
    T.raises(function() dt.marker { padding = "none" } end, "padding must be 'positions' or 'masked', got 'none'")
    T.raises(function() dt.marker { min_len = 97 } end, "min_len must be in 2..96, got 97")
    T.raises(function() dt.marker { classes = 10 } end, "unknown option 'classes'")
    T.raises(function() dt.marker { n = 0 } end, "n must be >= 1, got 0")
  end },
}

return cases
