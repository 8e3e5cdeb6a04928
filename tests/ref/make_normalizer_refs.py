#!/usr/bin/python3
"""make_normalizer_refs.py -- reference vectors for tests/c/test_norm_reference.c.

Run ONCE (needs python3-torch); the C test only reads the JSON this writes:
    /usr/bin/python3 tests/ref/make_normalizer_refs.py [path/to/torch_ref.py]
It imports the PyTorch definitions of the five normalizers from the shared anchors file
(/work/shared/anchors/torch_ref.py by default: softmax, sort-based sparsemax and entmax15,
entmax_bisect with its closed-form backward incl. d/dalpha, top-k softmax) and evaluates them
in float64 on float32-representable inputs, so the C kernels (float32) can be compared at
float32 tolerance. Masked cases are computed on the truncated row (masked entries dropped)
and scattered back with exact zeros, which is the contract of the C API.
Output: tests/ref/normalizers.json
"""
import importlib.util
import json
import math
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
REF = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "../../../shared/anchors/torch_ref.py")


def load_ref(path):
    spec = importlib.util.spec_from_file_location("torch_ref", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


tr = load_ref(os.path.abspath(REF))
torch.set_default_dtype(torch.float64)
gen = torch.Generator().manual_seed(20240611)


def f32(t):
    """Round to float32 and back: the exact values the C kernel sees."""
    return t.to(torch.float32).to(torch.float64)


def randn(*shape, scale=1.0):
    return f32(torch.randn(*shape, generator=gen) * scale)


def apply(op, x, alpha=None, ratio=None):
    if op == "softmax":
        return tr.softmax(x)
    if op == "sparsemax":
        return tr.sparsemax(x)
    if op == "entmax15":
        return tr.entmax15(x)
    if op == "entmax_bisect":
        return tr.entmax_bisect(x, alpha, n_iter=200)
    if op == "topk_softmax":
        return tr.topk_softmax(x, ratio)
    raise ValueError(op)


def run_row(op, xrow, grow, alpha=None, ratio=None):
    """One row (1-D): returns out, gin, galpha (float64 lists / float)."""
    x = xrow.clone().view(1, -1).requires_grad_(True)
    a = None
    if alpha is not None:
        a = torch.tensor([[alpha]], dtype=torch.float64, requires_grad=True)
    y = apply(op, x, a, ratio)
    (y * grow.view(1, -1)).sum().backward()
    ga = float(a.grad.item()) if a is not None else None
    return y.detach().view(-1), x.grad.view(-1), ga


def make_case(name, op, x, keep=None, alpha=None, ratio=None, gout=None):
    rows, n = x.shape
    if gout is None:
        gout = randn(rows, n)
    out = torch.zeros(rows, n)
    gin = torch.zeros(rows, n)
    galpha = []
    for r in range(rows):
        idx = torch.arange(n) if keep is None else torch.nonzero(keep[r]).view(-1)
        if idx.numel() == 0:
            galpha.append(0.0)
            continue
        a = None if alpha is None else float(alpha[r])
        o, g, ga = run_row(op, x[r, idx], gout[r, idx], a, ratio)
        out[r, idx] = o
        gin[r, idx] = g
        galpha.append(ga if ga is not None else 0.0)
    case = {"name": name, "op": op, "rows": rows, "n": n,
            "x": [float(v) for v in x.reshape(-1)],
            "gout": [float(v) for v in gout.reshape(-1)],
            "out": [float(v) for v in out.reshape(-1)],
            "gin": [float(v) for v in gin.reshape(-1)]}
    if keep is not None:
        case["keep"] = [int(v) for v in keep.reshape(-1)]
    if alpha is not None:
        case["alpha"] = [float(v) for v in alpha]
        case["galpha"] = galpha
    if ratio is not None:
        case["ratio"] = ratio
    return case


def main():
    cases = []
    small = randn(4, 7, scale=2.0)
    wide = randn(3, 65, scale=2.0)
    peaked = randn(2, 65, scale=8.0)
    flat = randn(2, 33, scale=0.3)
    keep = (torch.rand(3, 65, generator=gen) > 0.3).to(torch.int64)
    keep[1, :] = 0                       # an all-masked row
    keep[2, 5] = 1
    for op in ("softmax", "sparsemax", "entmax15"):
        cases.append(make_case(f"{op}_small", op, small))
        cases.append(make_case(f"{op}_wide", op, wide))
        cases.append(make_case(f"{op}_peaked", op, peaked))
        cases.append(make_case(f"{op}_flat", op, flat))
        cases.append(make_case(f"{op}_masked", op, wide, keep=keep))
    alphas = [1.05, 1.25, 1.5, 1.75, 2.0, 2.5, 1.1]
    xa = randn(len(alphas), 65, scale=1.0)
    cases.append(make_case("entmax_bisect_wide", "entmax_bisect", xa, alpha=alphas))
    xs = randn(4, 7, scale=2.0)
    cases.append(make_case("entmax_bisect_small", "entmax_bisect", xs, alpha=[1.3, 1.5, 1.9, 1.01]))
    cases.append(make_case("entmax_bisect_masked", "entmax_bisect", wide, keep=keep,
                           alpha=[1.5, 1.2, 1.8]))
    for ratio in (0.125, 0.25, 0.5):
        cases.append(make_case(f"topk_{ratio}_wide", "topk_softmax", wide, ratio=ratio))
    cases.append(make_case("topk_0.3_n10", "topk_softmax", randn(5, 10, scale=2.0), ratio=0.3))
    cases.append(make_case("topk_0.25_masked", "topk_softmax", wide, keep=keep, ratio=0.25))
    doc = {"generator": "tests/ref/make_normalizer_refs.py",
           "source": "torch_ref.py normalizers (shared anchors), float64 on float32 inputs",
           "torch": torch.__version__, "cases": cases}
    path = os.path.join(HERE, "normalizers.json")
    with open(path, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {path}: {len(cases)} cases")


if __name__ == "__main__":
    main()
