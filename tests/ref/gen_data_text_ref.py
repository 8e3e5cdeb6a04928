#!/usr/bin/python3
"""Reference values for lua/attnlab/data/text.lua (20 Newsgroups loader), from an
independent Python implementation of the documented rules (tarfile + a regular expression).

Run once (by hand) from the checkout root:
    /usr/bin/python3 tests/ref/gen_data_text_ref.py [path/to/20news-bydate.tar.gz]
Writes tests/ref/data_text.json; tests/lua/test_data_text.lua reads it (no Python at test
time). Default archive: ../shared/data/20news-bydate.tar.gz. Deterministic.

Rules re-implemented here (see the header of lua/attnlab/data/text.lua):
  documents   regular files 20news-bydate-{train,test}/<group>/<id>, archive order
  labels      index of <group> in the sorted list of group names, 1-based
  lowercase   bytes.lower() (ASCII only)
  words       re.findall(rb"[A-Za-z0-9]+(?:'[A-Za-z0-9]+)*")
  strip       drop through the first empty line (b"\\n\\n" or b"\\n\\r\\n"; an empty first
              line counts); no empty line -> empty document
  vocab       1 <pad>, 2 <unk>, then train words with count >= min_count sorted by
              (-count, word bytes), cut at vocab_size ids in total
  rows        first seq_len ids, then 1 (<pad>)
"""
import hashlib
import json
import os
import re
import sys
import tarfile
from collections import Counter

ARCHIVE = sys.argv[1] if len(sys.argv) > 1 else os.path.join("..", "shared", "data", "20news-bydate.tar.gz")
OUT = os.path.join("tests", "ref", "data_text.json")
WORD = re.compile(rb"[A-Za-z0-9]+(?:'[A-Za-z0-9]+)*")
NAME = re.compile(r"^20news-bydate-(train|test)/([^/]+)/([^/]+)$")
P = 1000000007


def strip_header(doc):
    m = re.match(rb"\r?\n", doc)
    if m:
        return doc[doc.index(b"\n") + 1:]
    m = re.search(rb"\n\r?\n", doc)
    return doc[m.end():] if m else b""


def tokenize(doc, lowercase=True, strip=False):
    if strip:
        doc = strip_header(doc)
    if lowercase:
        doc = doc.lower()
    return WORD.findall(doc)


def load():
    docs = {"train": [], "test": []}
    with tarfile.open(ARCHIVE, "r:gz") as tf:
        for m in tf:
            if not m.isreg():
                continue
            k = NAME.match(m.name)
            if not k:
                continue
            docs[k.group(1)].append((k.group(2), k.group(3), tf.extractfile(m).read()))
    return docs


def build_vocab(counts, vocab_size, min_count=1):
    items = sorted(((-c, w) for w, c in counts.items() if c >= min_count))
    words = [w for _, w in items[: vocab_size - 2]]
    return ["<pad>", "<unk>"] + [w.decode("ascii") for w in words], [counts[w] for w in words]


def rows(docs, index, seq_len, lowercase=True, strip=False):
    out = []
    for _, _, d in docs:
        ids = [index.get(w, 2) for w in tokenize(d, lowercase, strip)[:seq_len]]
        out.append(ids + [1] * (seq_len - len(ids)))
    return out


def checksum(rs):
    # s1 = sum of ids; s2 = sum over rows r, positions t (1-based) of id * (r*131 + t) mod P
    s1 = s2 = 0
    for r, row in enumerate(rs, 1):
        for t, v in enumerate(row, 1):
            s1 += v
            s2 = (s2 + v * (r * 131 + t)) % P
    return [s1, s2]


def main():
    docs = load()
    groups = sorted({g for s in docs.values() for g, _, _ in s})
    ref = {"archive_sha256": hashlib.sha256(open(ARCHIVE, "rb").read()).hexdigest(), "classes": groups}
    for split, ds in docs.items():
        per = Counter(g for g, _, _ in ds)
        ref[split] = {
            "n": len(ds),
            "per_group": [per[g] for g in groups],
            "first": ds[0][0] + "/" + ds[0][1],
            "last": ds[-1][0] + "/" + ds[-1][1],
            "labels_first_last": [groups.index(ds[0][0]) + 1, groups.index(ds[-1][0]) + 1],
        }

    # default setting: lowercase, headers kept, vocab 20000, seq_len 96
    tok = {s: [tokenize(d) for _, _, d in ds] for s, ds in docs.items()}
    counts = Counter(w for t in tok["train"] for w in t)
    words, wc = build_vocab(counts, 20000)
    index = {w.encode("ascii"): i + 1 for i, w in enumerate(words)}
    ref["train_tokens"] = sum(len(t) for t in tok["train"])
    ref["train_unique_words"] = len(counts)
    ref["vocab_head"] = words[:202]
    ref["vocab_head_counts"] = [0, 0] + wc[:200]
    ref["vocab_tail"] = words[-10:]
    ref["vocab_tail_counts"] = wc[-10:]
    ref["unk_count_train"] = ref["train_tokens"] - sum(wc)
    ref["min_count_5_size"] = 2 + sum(1 for c in counts.values() if c >= 5)
    pick = {"train": [1, 2, 500, 5000, 11314], "test": [1, 3000, 7532]}
    ref["rows"] = {}
    for s, ds in docs.items():
        rs = rows(ds, index, 96)
        ref["rows"][s] = {"index": pick[s], "ids": [rs[i - 1] for i in pick[s]],
                          "ntokens": [len(tok[s][i - 1]) for i in pick[s]], "checksum": checksum(rs)}
    # a word that occurs in test documents and never in train, with one place it occurs in a row
    for i, t in enumerate(tok["test"], 1):
        hit = next(((p, w) for p, w in enumerate(t[:96], 1) if w not in counts), None)
        if hit:
            ref["test_only_word"] = {"word": hit[1].decode("ascii"), "doc": i, "pos": hit[0]}
            break
    # short rows: seq_len 8 checksum (truncation)
    ref["seq8_checksum_train"] = checksum(rows(docs["train"], index, 8))

    # strip_headers = true
    stok = {s: [tokenize(d, True, True) for _, _, d in ds] for s, ds in docs.items()}
    scounts = Counter(w for t in stok["train"] for w in t)
    swords, _ = build_vocab(scounts, 20000)
    sindex = {w.encode("ascii"): i + 1 for i, w in enumerate(swords)}
    ref["strip"] = {
        "vocab_head": swords[:52],
        "first_words": {str(i): [w.decode("ascii") for w in stok["train"][i - 1][:20]] for i in (1, 2, 5000)},
        "empty_docs": {s: sum(1 for t in stok[s] if not t) for s in stok},
        "short_rows": {s: sum(1 for t in stok[s] if len(t) < 96) for s in stok},
        "checksum": {s: checksum(rows(docs[s], sindex, 96, True, True)) for s in docs},
    }

    # lowercase = false, vocab 1000
    ctok = [tokenize(d, False) for _, _, d in docs["train"]]
    ccounts = Counter(w for t in ctok for w in t)
    cwords, _ = build_vocab(ccounts, 1000)
    cindex = {w.encode("ascii"): i + 1 for i, w in enumerate(cwords)}
    ref["mixed_case"] = {"vocab_head": cwords[:52], "vocab_tail": cwords[-5:],
                         "checksum_train": checksum(rows(docs["train"], cindex, 96, False))}

    with open(OUT, "w") as f:
        json.dump(ref, f, indent=1, sort_keys=True)
        f.write("\n")
    print("wrote", OUT)


if __name__ == "__main__":
    main()
