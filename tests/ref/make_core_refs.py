#!/usr/bin/python3
"""tests/ref/make_core_refs.py -- reference vectors for the core ops, from PyTorch.

Writes tests/ref/core_ops.json, read by tests/lua/test_ops_grad.lua (the tests themselves
never need Python). Run once, from the repository root:

    /usr/bin/python3 tests/ref/make_core_refs.py

Inputs are random float32 values (numpy, fixed seed); the expected outputs and gradients
are computed by PyTorch in float64 from those exact float32 values, so they are the true
values that attnlab's float32 kernels must approach to float32 rounding. Gradients are
those of sum(output * grad_output) for a random float32 grad_output.

Conventions of attnlab carried into the file: class labels are 1-based (PyTorch's 0-based
label + 1), dims in the Lua calls are 1-based (the Lua side knows which op uses which dim;
see ref_ops in test_ops_grad.lua). layer_norm uses eps 1e-6 (timm's ViT); gelu is the exact
erf form; var is unbiased.
"""
import json
import os

import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(20240601)


def f32(shape, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


def tensor_spec(a, grad=None, dtype="float32"):
    a = np.asarray(a)
    spec = {"shape": list(a.shape), "data": [float(v) if dtype == "float32" else int(v) for v in a.reshape(-1)]}
    if dtype != "float32":
        spec["dtype"] = dtype
    if grad is not None:
        spec["grad"] = [float(v) for v in grad.reshape(-1)]
    return spec


def run(fn, inputs, needs_grad, int_inputs=()):
    """inputs: numpy arrays; needs_grad: indices with gradients. Returns a case dict."""
    ts = []
    for i, a in enumerate(inputs):
        if i in int_inputs:
            ts.append(torch.from_numpy(np.asarray(a, dtype=np.int64)))
        else:
            t = torch.from_numpy(np.asarray(a, dtype=np.float32)).double()
            t.requires_grad_(i in needs_grad)
            ts.append(t)
    out = fn(*ts)
    go = rng.uniform(-1, 1, size=tuple(out.shape)).astype(np.float32)
    case = {"output": tensor_spec(out.detach().numpy())}
    if needs_grad:
        (out * torch.from_numpy(go).double()).sum().backward()
        case["grad_output"] = tensor_spec(go)
    specs = []
    for i, (a, t) in enumerate(zip(inputs, ts)):
        if i in int_inputs:
            specs.append(tensor_spec(np.asarray(a) + 1, dtype="int64"))   # 1-based labels
        else:
            specs.append(tensor_spec(a, t.grad.numpy() if i in needs_grad else None))
    case["inputs"] = specs
    return case


cases = {}
x_act = f32((4, 8), -5, 5)
cases["gelu"] = run(lambda x: F.gelu(x), [x_act], {0})
cases["erf"] = run(torch.erf, [f32((4, 8), -3, 3)], {0})
cases["exp"] = run(torch.exp, [f32((4, 8), -10, 10)], {0})
cases["sigmoid"] = run(torch.sigmoid, [x_act], {0})
cases["silu"] = run(F.silu, [x_act], {0})
cases["softplus"] = run(F.softplus, [f32((4, 8), -25, 25)], {0})
cases["tanh"] = run(torch.tanh, [x_act], {0})

cases["layer_norm"] = run(lambda x, w, b: F.layer_norm(x, (16,), w, b, eps=1e-6),
                          [f32((3, 16), -3, 3), f32((16,), 0.5, 1.5), f32((16,), -0.5, 0.5)], {0, 1, 2})
cases["layer_norm_plain"] = run(lambda x: F.layer_norm(x, (12,), eps=1e-6), [f32((2, 2, 12), 0, 4)], {0})
cases["log_softmax_last"] = run(lambda x: F.log_softmax(x, dim=-1), [f32((3, 7), -4, 4)], {0})
cases["log_softmax_dim1"] = run(lambda x: F.log_softmax(x, dim=0), [f32((4, 5), -4, 4)], {0})
cases["softmax_dim1"] = run(lambda x: F.softmax(x, dim=0), [f32((4, 5), -4, 4)], {0})

logits = f32((5, 6), -3, 3)
labels = np.array([0, 5, 2, 2, 4])
cases["cross_entropy"] = run(lambda x, y: F.cross_entropy(x, y), [logits, labels], {0}, int_inputs={1})
cases["cross_entropy_smooth"] = run(lambda x, y: F.cross_entropy(x, y, label_smoothing=0.1),
                                    [f32((5, 6), -3, 3), labels], {0}, int_inputs={1})
# ignore_index 3 (1-based) = 2 (0-based): rows 3 and 4 are skipped
cases["cross_entropy_ignore"] = run(lambda x, y: F.cross_entropy(x, y, label_smoothing=0.05, ignore_index=2),
                                    [f32((5, 6), -3, 3), labels], {0}, int_inputs={1})

cases["matmul_batched"] = run(torch.matmul, [f32((2, 3, 4)), f32((2, 4, 5))], {0, 1})
cases["matmul_broadcast"] = run(torch.matmul, [f32((2, 1, 3, 4)), f32((3, 4, 2))], {0, 1})
cases["linear"] = run(F.linear, [f32((2, 3, 4)), f32((5, 4)), f32((5,))], {0, 1, 2})
cases["var_unbiased"] = run(lambda x: torch.var(x, dim=1), [f32((3, 6), -3, 3)], {0})
cases["var_all"] = run(lambda x: torch.var(x), [f32((4, 5), -3, 3)], {0})
cases["mean_dim"] = run(lambda x: torch.mean(x, dim=0), [f32((4, 5))], {0})
cases["mse"] = run(F.mse_loss, [f32((3, 4)), f32((3, 4))], {0, 1})
cases["div_broadcast"] = run(lambda a, b: a / b, [f32((3, 4)), f32((4,), 0.5, 2)], {0, 1})
cases["pow"] = run(lambda x: x ** 1.5, [f32((6,), 0.1, 3)], {0})

out = {
    "generator": "tests/ref/make_core_refs.py",
    "torch_version": torch.__version__,
    "note": "expected values in float64 from float32 inputs; labels 1-based",
    "cases": cases,
}
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "core_ops.json")
with open(path, "w") as f:
    json.dump(out, f, indent=1, sort_keys=True)
    f.write("\n")
print("wrote", path, "with", len(cases), "cases")
