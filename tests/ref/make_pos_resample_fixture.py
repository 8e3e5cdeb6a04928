#!/usr/bin/python3
"""tests/ref/make_pos_resample_fixture.py -- position-embedding resizing as timm does it,
for lua/attnlab/nn/checkpoint.lua's resample_pos_embed (bicubic, the default, and bilinear).

Run ONCE from the repository root with Debian's PyTorch (timm is not needed; its rule is
restated below):
    /usr/bin/python3 tests/ref/make_pos_resample_fixture.py
writes tests/ref/pos_resample.json (~30 KB). tests/lua/test_checkpoint.lua only reads it.

The rule (timm's resample_abs_pos_embed, and DeiT's fine-tuning at 384): pos_embed
(1, prefix + g*g, D); the first `prefix` entries (class token) are kept as they are; the
grid part is viewed as a (1, D, g, g) image, cast to float32 and resized with
F.interpolate(size=(G, G), mode=..., align_corners=False, antialias=False), then flattened
back row-major and appended after the prefix.

Each case stores (all arrays flattened row-major):
  g, G, D, prefix
  src                 (1, prefix+g*g, D) float32 values (randn, std 1, so a 1e-6
                      tolerance is meaningful)
  bicubic, bilinear   (1, prefix+G*G, D): PyTorch's float32 result (what timm computes)
  bicubic64, bilinear64  the same in float64 on the float32 inputs (the exact answer)
  bicubic_aa          for information only: F.interpolate(..., antialias=True) in
                      float32, the default of timm >= 0.9's resample_abs_pos_embed; it
                      uses PIL's kernel (a = -0.5, renormalised at the borders) and is NOT
                      what attnlab implements. max |bicubic_aa - bicubic| is printed.
"""
import json
import os

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(20261201)

# (g, G, D, prefix): up by a non-integer ratio, up a lot, down, an even ratio with no
# prefix token, and two prefix tokens.
CASES = [(4, 6, 3, 1), (3, 7, 2, 1), (6, 4, 3, 1), (2, 4, 2, 0), (5, 8, 2, 2)]


def resample(pe, G, prefix, mode, dtype=torch.float32, antialias=False):
    D = pe.shape[-1]
    g = int(round((pe.shape[1] - prefix) ** 0.5))
    head, grid = pe[:, :prefix], pe[:, prefix:]
    grid = grid.to(dtype).reshape(1, g, g, D).permute(0, 3, 1, 2)
    grid = F.interpolate(grid, size=(G, G), mode=mode, align_corners=False, antialias=antialias)
    grid = grid.permute(0, 2, 3, 1).reshape(1, G * G, D)
    return torch.cat([head.to(dtype), grid], dim=1)


def flat(t):
    return [float(v) for v in t.detach().reshape(-1).tolist()]


def main():
    cases = []
    for g, G, D, prefix in CASES:
        src = torch.randn(1, prefix + g * g, D, dtype=torch.float32)
        c = {"g": g, "G": G, "D": D, "prefix": prefix, "src": {"shape": list(src.shape), "data": flat(src)}}
        for mode in ("bicubic", "bilinear"):
            out = resample(src, G, prefix, mode)
            out64 = resample(src, G, prefix, mode, dtype=torch.float64)
            c[mode] = {"shape": list(out.shape), "data": flat(out)}
            c[mode + "64"] = {"shape": list(out64.shape), "data": flat(out64)}
            print(f"g {g} -> G {G}, {mode}: max |float32 - float64| = {(out.double() - out64).abs().max().item():.3g}")
        aa = resample(src, G, prefix, "bicubic", antialias=True)
        c["bicubic_aa"] = {"shape": list(aa.shape), "data": flat(aa)}
        print(f"g {g} -> G {G}: max |antialias=True - antialias=False| (bicubic) = "
              f"{(aa - resample(src, G, prefix, 'bicubic')).abs().max().item():.3g}")
        cases.append(c)
    out = {"made_by": "tests/ref/make_pos_resample_fixture.py", "torch_version": torch.__version__,
           "rule": "timm resample_abs_pos_embed / DeiT: F.interpolate(align_corners=False, antialias=False) "
                   "on the grid part in float32, prefix tokens kept",
           "cases": cases}
    with open(os.path.join(HERE, "pos_resample.json"), "w") as f:
        json.dump(out, f, indent=None, separators=(",", ":"))
        f.write("\n")
    print("wrote tests/ref/pos_resample.json")


if __name__ == "__main__":
    main()
