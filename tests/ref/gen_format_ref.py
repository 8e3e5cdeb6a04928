#!/usr/bin/python3
"""Reference strings for lua/attnlab/format.lua: PyTorch's own str(tensor) for a set of tensors.

Run once (by hand) from the checkout root:  /usr/bin/python3 tests/ref/gen_format_ref.py
Writes tests/ref/format_ref.json; tests/lua/test_format.lua reads it (no Python at test time).

Each case: name, shape, dtype ("float32"|"int64"), data (row-major flat list; float32 values
written as the exact doubles they are, nan/inf as the strings "nan"/"inf"/"-inf"),
requires_grad, grad_fn_name (or null) and expected = str(tensor) with PyTorch's default
print options. Only "torch.int64" is rewritten to "int64" (attnlab's dtype name).
"""
import json
import math
import os

import torch

torch.set_printoptions(profile="default")
torch.manual_seed(20240607)

cases = []


def enc(v):
    if isinstance(v, float) and not math.isfinite(v):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    return v


def add(name, t, requires_grad=False, grad=False):
    if grad:
        x = t.clone().requires_grad_(True)
        t = x * 1  # grad_fn = MulBackward0, same values
    elif requires_grad:
        t = t.clone().requires_grad_(True)
    dtype = {torch.float32: "float32", torch.int64: "int64"}[t.dtype]
    flat = t.detach().reshape(-1).tolist()
    cases.append({
        "name": name,
        "shape": list(t.shape),
        "dtype": dtype,
        "data": [enc(v) for v in flat],
        "requires_grad": bool(t.requires_grad),
        "grad_fn_name": type(t.grad_fn).__name__ if t.grad_fn is not None else None,
        "expected": str(t).replace("torch.int64", "int64"),
    })


f32 = torch.float32
add("2x2 mixed signs (the task's example)", torch.tensor([[0.1234, -1.0], [2.5, 3.0]]))
add("0-dim float", torch.tensor(3.5))
add("0-dim negative small", torch.tensor(-0.000123))
add("0-dim int64", torch.tensor(42))
add("0-dim integral float", torch.tensor(7.0))
add("integral floats", torch.tensor([1.0, 2.0, 3.0]))
add("zeros", torch.zeros(2, 3))
add("negative integral floats", torch.tensor([-1.0, 20.0, -300.0]))
add("int64 vector", torch.tensor([1, -20, 300]))
add("int64 matrix", torch.tensor([[1, 2, 3], [-4, 500, 6]]))
add("sci: tiny and one", torch.tensor([1e-5, 1.0]))
add("sci: large ratio", torch.tensor([1234567.0, 0.5]))
add("sci: integral over 1e8", torch.tensor([1e9, 1.0]))
add("sci: integral ratio > 1000", torch.tensor([1.0, 2000.0, 3.0]))
add("fixed: integral ratio 1000", torch.tensor([1.0, 1000.0]))
add("nan inf mixed", torch.tensor([float("nan"), float("inf"), float("-inf"), 1.5]))
add("nan with integral", torch.tensor([float("nan"), 1.0, 2.0]))
add("all nan", torch.tensor([float("nan"), float("nan")]))
add("negative zero", torch.tensor([-0.0, 0.5]))
add("single element", torch.tensor([5.0]))
add("randn 30 wraps", torch.randn(30))
add("randn 2x3x4", torch.randn(2, 3, 4))
add("randn 2x2x2x3", torch.randn(2, 2, 2, 3))
add("1000*randn 4x5", 1000 * torch.randn(4, 5))
add("randn 8x12 (wide rows wrap)", torch.randn(8, 12))
add("requires_grad", torch.randn(2, 2), requires_grad=True)
add("grad_fn", torch.randn(3), grad=True)
add("requires_grad suffix wraps", torch.randn(8), requires_grad=True)
add("grad_fn suffix wraps (2-D)", torch.randn(3, 8), grad=True)
add("empty (0,)", torch.zeros(0))
add("empty (0, 3)", torch.zeros(0, 3))
add("empty int64 (2, 0)", torch.zeros(2, 0, dtype=torch.int64))
add("1001 elements summarised", torch.randn(1001))
add("exactly 1000 elements not summarised", torch.arange(1000, dtype=f32) / 7)
add("arange 2000 as (2, 1000)", torch.arange(2000, dtype=f32).reshape(2, 1000))
add("randn 40x40 summarised", torch.randn(40, 40))
add("randn 10x11x12 summarised", torch.randn(10, 11, 12))
add("(3, 400): only the last dim summarised", torch.randn(3, 400))
add("(400, 3): only the first dim summarised", torch.randn(400, 3))
add("int64 arange 1200", torch.arange(1200))
add("int64 (7, 2, 100) summarised", torch.arange(1400).reshape(7, 2, 100) - 700)
add("sci summarised (7, 200)", torch.randn(7, 200) * torch.logspace(-6, 6, 200))
add("(2,3,4,5,6) not summarised", torch.randn(2, 3, 4, 5, 6))
add("requires_grad summarised", torch.randn(30, 40), requires_grad=True)
# a 59-character line: the suffix wraps only with PyTorch's "+2" count of the last line
add("suffix wrap boundary", torch.ones(13), requires_grad=True)
add("suffix fits", torch.ones(12), requires_grad=True)
add("sci: all tiny (min < 1e-4, ratio < 1000)", torch.tensor([5e-5, 2e-5, -3e-5]))
add("fixed: smallest 1e-4", torch.tensor([1e-4, 0.05]))

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "format_ref.json")
with open(out, "w") as fh:
    # one case per line: diffs stay readable when a case is added
    fh.write('{"generator": "tests/ref/gen_format_ref.py", "torch": %s, "cases": [\n'
             % json.dumps(torch.__version__))
    fh.write(",\n".join(json.dumps(c, separators=(",", ":")) for c in cases))
    fh.write("\n]}\n")
print("wrote %d cases to %s" % (len(cases), out))
