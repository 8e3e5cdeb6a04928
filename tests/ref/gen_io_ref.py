#!/usr/bin/python3
"""Generate the reference data for tests/c/test_io_tar.c and tests/c/test_io_safetensors.c,
and the fuzz seed corpus.

Run once from the repository root:  /usr/bin/python3 tests/ref/gen_io_ref.py
Writes tests/ref/io_ref.json and small files under tests/fuzz/corpus/<target>/.
Deterministic: re-running gives identical bytes.

Independence: the safetensors files are written here by a separate Python writer that
follows the format spec (huggingface/safetensors README + the reference serializer's
layout: dtype-descending then name order, compact JSON, space padding to 8); the
expected float32/int64 conversions come from torch; the tar archives come from Python's
tarfile module (USTAR prefix, GNU 'L' long names, PAX path records); gzip from zlib via
Python's gzip module.
"""
import gzip
import hashlib
import io
import json
import os
import struct
import tarfile

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(ROOT, "tests", "fuzz", "corpus")

# ---------------------------------------------------------------- safetensors
DTYPES = ["BOOL", "U8", "I8", "F8_E5M2", "F8_E4M3", "I16", "U16", "F16", "BF16", "I32",
          "U32", "F32", "F64", "I64", "U64"]   # the reference's order
SIZE = {"BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1, "I16": 2, "U16": 2,
        "F16": 2, "BF16": 2, "I32": 4, "U32": 4, "F32": 4, "F64": 8, "I64": 8, "U64": 8}


def st_serialize(tensors, metadata=None):
    """tensors: list of (name, dtype, shape, raw bytes)."""
    order = sorted(tensors, key=lambda t: (-DTYPES.index(t[1]), t[0].encode()))
    hdr = {}
    if metadata:
        hdr["__metadata__"] = dict(sorted(metadata.items()))
    off = 0
    for name, dt, shape, raw in order:
        n = 1
        for d in shape:
            n *= d
        assert len(raw) == n * SIZE[dt]
        hdr[name] = {"dtype": dt, "shape": list(shape), "data_offsets": [off, off + len(raw)]}
        off += len(raw)
    h = json.dumps(hdr, separators=(",", ":"), ensure_ascii=False).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    return struct.pack("<Q", len(h)) + h + b"".join(t[3] for t in order)


def bits16(t):
    return t.view(torch.int16).numpy().astype("<i2").tobytes()


def f32bits(t):
    return [int(x) & 0xFFFFFFFF for x in t.to(torch.float32).view(torch.int32).tolist()]


def make_safetensors():
    cases = []
    # Spec sanity: the layouts documented by the reference tests.
    a = st_serialize([("attn.0", "F32", [1, 2, 3], struct.pack("<6f", 0, 1, 2, 3, 4, 5))])
    assert struct.unpack("<Q", a[:8])[0] == 64
    b = st_serialize([("attn0", "F32", [1, 1, 2, 3], struct.pack("<6f", 0, 1, 2, 3, 4, 5))])
    assert struct.unpack("<Q", b[:8])[0] == 72 and b[8 + 65:8 + 72] == b" " * 7
    assert st_serialize([]) == bytes([8, 0, 0, 0, 0, 0, 0, 0]) + b"{}      "
    m = st_serialize([], {"framework": "pt"})
    assert m == struct.pack("<Q", 40) + b'{"__metadata__":{"framework":"pt"}}' + b" " * 5

    # Conversion edge cases.
    f16_bits = torch.tensor([0x0000, 0x8000, 0x0001, 0x03FF, 0x0400, 0x3C00, 0xBC00, 0x7BFF,
                             0x7C00, 0xFC00, 0x7E00, 0x3555, 0x8001, 0x5640, 0x0200, 0x3BFF],
                            dtype=torch.int32).to(torch.int16)
    bf16_bits = torch.tensor([0x0000, 0x8000, 0x0001, 0x007F, 0x0080, 0x3F80, 0xBF80, 0x7F7F,
                              0x7F80, 0xFF80, 0x7FC0, 0x3EAB, 0x4049, 0xC2F7],
                             dtype=torch.int32).to(torch.int16)
    f64 = torch.tensor([0.0, -0.0, 0.1, 1.0 + 2.0 ** -24, 1.0 + 3 * 2.0 ** -24, 1e300, -1e300,
                        1e-50, 1e-40, 3.4028235677973366e38, 3.4028235677973362e38,
                        float("inf"), float("-inf"), 2.0 ** -149, 2.0 ** -150, 1.5 * 2.0 ** -149,
                        -123456.789, 6.02214076e23], dtype=torch.float64)
    f32 = torch.tensor([[1.5, -2.25, 3.0e-39], [float("inf"), -0.0, 1e38]], dtype=torch.float32)
    i32 = torch.tensor([0, -1, 2147483647, -2147483648, 12345], dtype=torch.int32)
    i64 = torch.tensor([0, -1, 9223372036854775807, -9223372036854775808, 1 << 40],
                       dtype=torch.int64)
    u8 = torch.tensor([[0, 255], [7, 128]], dtype=torch.uint8)
    f16 = f16_bits.view(torch.float16)
    bf16 = bf16_bits.view(torch.bfloat16)
    tensors = [
        ("blocks.0.attn.qkv.weight", "F16", [4, 4], bits16(f16_bits)),
        ("blocks.0.norm1.bias", "BF16", [14], bits16(bf16_bits)),
        ("pos_embed", "F64", [len(f64)], f64.numpy().astype("<f8").tobytes()),
        ("head.weight", "F32", [2, 3], f32.numpy().astype("<f4").tobytes()),
        ("labels32", "I32", [5], i32.numpy().astype("<i4").tobytes()),
        ("labels64", "I64", [5], i64.numpy().astype("<i8").tobytes()),
        ("mask", "U8", [2, 2], u8.numpy().tobytes()),
        ("empty", "F32", [0, 3], b""),
        ("scalar", "F32", [], struct.pack("<f", 2.5)),
    ]
    meta = {"format": "pt", "attnlab": "test \"quoted\" \\ tab\t newline\n é"}
    blob = st_serialize(tensors, meta)
    expect = {
        "blocks.0.attn.qkv.weight": {"f32_bits": f32bits(f16)},
        "blocks.0.norm1.bias": {"f32_bits": f32bits(bf16)},
        "pos_embed": {"f32_bits": f32bits(f64)},
        "head.weight": {"f32_bits": f32bits(f32.flatten())},
        "labels32": {"i64": [str(v) for v in i32.tolist()]},
        "labels64": {"i64": [str(v) for v in i64.tolist()]},
        "mask": {"i64": [str(v) for v in u8.flatten().tolist()]},
        "empty": {"f32_bits": []},
        "scalar": {"f32_bits": f32bits(torch.tensor([2.5]))},
    }
    cases.append({
        "name": "mixed",
        "hex": blob.hex(),
        "metadata": meta,
        "tensors": [{"name": n, "dtype": d, "shape": s, "data_hex": r.hex(), **expect[n]}
                    for n, d, s, r in tensors],
    })
    cases.append({"name": "spec_attn.0", "hex": a.hex(), "metadata": {},
                  "tensors": [{"name": "attn.0", "dtype": "F32", "shape": [1, 2, 3],
                               "data_hex": struct.pack("<6f", 0, 1, 2, 3, 4, 5).hex(),
                               "f32_bits": f32bits(torch.arange(6.0))}]})
    cases.append({"name": "spec_attn0_padded", "hex": b.hex(), "metadata": {},
                  "tensors": [{"name": "attn0", "dtype": "F32", "shape": [1, 1, 2, 3],
                               "data_hex": struct.pack("<6f", 0, 1, 2, 3, 4, 5).hex(),
                               "f32_bits": f32bits(torch.arange(6.0))}]})
    cases.append({"name": "spec_empty_meta", "hex": m.hex(), "metadata": {"framework": "pt"},
                  "tensors": []})
    d = os.path.join(CORPUS, "safetensors")
    os.makedirs(d, exist_ok=True)
    for c in cases:
        with open(os.path.join(d, c["name"] + ".safetensors"), "wb") as fp:
            fp.write(bytes.fromhex(c["hex"]))
    return cases


# ---------------------------------------------------------------- tar
def tar_bytes(members, fmt, trim=True, pax_headers=None):
    """members: list of (TarInfo, data or None). Trim the record padding after the two
    end-of-archive blocks to keep the seeds small."""
    bio = io.BytesIO()
    with tarfile.open(fileobj=bio, mode="w", format=fmt, pax_headers=pax_headers) as tf:
        for ti, data in members:
            tf.addfile(ti, io.BytesIO(data) if data is not None else None)
    raw = bio.getvalue()
    if trim:
        end = len(raw)
        while end >= 512 and raw[end - 512:end] == bytes(512):
            end -= 512
        raw = raw[:end + 1024]
    return raw


def ti(name, data=None, type=tarfile.REGTYPE, linkname=""):
    t = tarfile.TarInfo(name)
    t.type = type
    t.mtime = 1041379200
    t.mode = 0o755 if type == tarfile.DIRTYPE else 0o644
    t.uid = t.gid = 0
    t.uname = t.gname = "root"
    t.linkname = linkname
    if data is not None:
        t.size = len(data)
    return t


def make_tars():
    long_dir = "20news-bydate-train/" + "x" * 60 + "/" + "y" * 50
    long_name = long_dir + "/doc-with-a-long-name-" + "z" * 40
    docs = [
        ("20news-bydate-train/alt.atheism/49960", b"From: mathew <mathew@mantis.co.uk>\nSubject: test\n\nbody\n"),
        ("20news-bydate-train/alt.atheism/empty", b""),
        ("20news-bydate-test/sci.space/1", bytes(range(256)) * 3 + b"tail"),
        ("exactly512", b"A" * 512),
    ]

    def members(longpath, extra_name):
        m = [(ti("20news-bydate-train", type=tarfile.DIRTYPE), None),
             (ti("20news-bydate-train/alt.atheism", type=tarfile.DIRTYPE), None)]
        m += [(ti(n, d), d) for n, d in docs]
        m.append((ti("link-to-doc", type=tarfile.SYMTYPE, linkname=docs[0][0]), None))
        m.append((ti("hardlink", type=tarfile.LNKTYPE, linkname=docs[0][0]), None))
        m.append((ti(longpath, b"long name body\n"), b"long name body\n"))
        if extra_name:
            m.append((ti(extra_name, b"pax name body\n"), b"pax name body\n"))
        return m

    archives = {}
    # USTAR: the long path (< 256, split at a '/') goes to prefix + name.
    ustar_path = long_dir + "/doc-ustar"
    assert len(ustar_path) > 100 and len(ustar_path) < 256
    archives["ustar_prefix.tar"] = (tar_bytes(members(ustar_path, None), tarfile.USTAR_FORMAT),
                                    members(ustar_path, None))
    archives["gnu_longname.tar"] = (tar_bytes(members(long_name, None), tarfile.GNU_FORMAT),
                                    members(long_name, None))
    pax_name = "caf\u00e9/na\u00efve-" + "w" * 120
    archives["pax.tar"] = (tar_bytes(members(long_name, pax_name), tarfile.PAX_FORMAT),
                           members(long_name, pax_name))
    # GNU 'K' (a symlink target over 100 bytes) and a pax global 'g' header: both skipped
    gk = members(long_name, None) + [(ti("long-link", type=tarfile.SYMTYPE, linkname="t" * 150), None)]
    archives["gnu_longlink.tar"] = (tar_bytes(gk, tarfile.GNU_FORMAT), gk)
    archives["pax_global.tar"] = (tar_bytes(members(long_name, pax_name), tarfile.PAX_FORMAT,
                                            pax_headers={"comment": "global header"}),
                                  members(long_name, pax_name))
    d = os.path.join(CORPUS, "tar")
    os.makedirs(d, exist_ok=True)
    ref = []
    for fname, (raw, mem) in archives.items():
        files = [{"name": t.name, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
                 for t, data in mem if t.type == tarfile.REGTYPE]
        with open(os.path.join(d, fname), "wb") as fp:
            fp.write(raw)
        ref.append({"file": fname, "files": files})
        # the same as .tar.gz, in two gzip members to exercise member concatenation
        half = len(raw) // 2
        gz = gzip.compress(raw[:half], mtime=0) + gzip.compress(raw[half:], mtime=0)
        with open(os.path.join(d, fname + ".gz"), "wb") as fp:
            fp.write(gz)
        ref.append({"file": fname + ".gz", "files": files})
    return ref


# ---------------------------------------------------------------- IDX, CIFAR, JSON seeds
def make_small_seeds():
    d = os.path.join(CORPUS, "idx")
    os.makedirs(d, exist_ok=True)
    labels = bytes([3, 1, 4, 1, 5, 9, 2, 6])
    idx1 = struct.pack(">BBBBI", 0, 0, 8, 1, len(labels)) + labels
    imgs = bytes((i * 37) % 256 for i in range(3 * 4 * 5))
    idx3 = struct.pack(">BBBBIII", 0, 0, 8, 3, 3, 4, 5) + imgs
    idx4 = struct.pack(">BBBBIIII", 0, 0, 8, 4, 2, 1, 2, 3) + bytes(range(12))
    idxf = struct.pack(">BBBBI", 0, 0, 0x0D, 1, 2) + struct.pack(">2f", 1.0, 2.0)
    for name, raw in [("labels.idx1", idx1), ("images.idx3", idx3), ("arr.idx4", idx4),
                      ("float.idx1", idxf)]:
        with open(os.path.join(d, name), "wb") as fp:
            fp.write(raw)
    with open(os.path.join(d, "images.idx3.gz"), "wb") as fp:
        fp.write(gzip.compress(idx3, mtime=0))
    d = os.path.join(CORPUS, "cifar")
    os.makedirs(d, exist_ok=True)
    recs = b""
    for r in range(2):
        recs += bytes([r * 7 % 10]) + bytes((r * 3 + i) % 256 for i in range(3072))
    with open(os.path.join(d, "two_records.bin"), "wb") as fp:
        fp.write(recs)
    with open(os.path.join(d, "two_records.bin.gz"), "wb") as fp:
        fp.write(gzip.compress(recs, mtime=0))
    d = os.path.join(CORPUS, "json")
    os.makedirs(d, exist_ok=True)
    cfgs = {
        "normalizers.json": {
            "name": "normalizers-fmnist", "dataset": "fashion_mnist",
            "normalizers": ["softmax", "sparsemax", "entmax15", "hae", "entmax:1.3", "topk:0.25"],
            "seeds": [1, 2, 3, 4, 5],
            "model": {"image_size": 28, "patch_size": 7, "dim": 64, "depth": 2, "heads": 4,
                      "mlp_ratio": 2, "qkv_bias": True},
            "optim": {"name": "adamw", "lr": 1e-3, "weight_decay": 0.05, "warmup": 100},
            "epochs": 10, "batch_size": 128, "parallel": 2},
        "s2s.json": {
            "name": "s2s-cifar", "dataset": "cifar10", "teacher": "results/teacher.safetensors",
            "replace": {"layers": [1], "mixer": "bimamba", "d_state": 16},
            "stages": [{"epochs": 5, "loss": {"mse": 1.0, "halting": 0.1, "ce": 1.0}},
                       {"epochs": 5, "loss": {"ce": 1.0}}],
            "notes": "unicode \u00e9\u4e2d and escapes \\ \" \n", "null_field": None,
            "numbers": [0, -0.0, 1e-300, 1.7976931348623157e308, -12345678901234567890]},
    }
    for name, cfg in cfgs.items():
        with open(os.path.join(d, name), "w") as fp:
            json.dump(cfg, fp, indent=1, ensure_ascii=False)


def main():
    ref = {"safetensors": make_safetensors(), "tar": make_tars()}
    make_small_seeds()
    out = os.path.join(ROOT, "tests", "ref", "io_ref.json")
    with open(out, "w") as fp:
        json.dump(ref, fp, indent=1, ensure_ascii=True)
        fp.write("\n")
    print("wrote", out)


if __name__ == "__main__":
    main()
