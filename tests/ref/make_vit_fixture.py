#!/usr/bin/env python3
"""tests/ref/make_vit_fixture.py -- a tiny timm-layout ViT trained briefly in PyTorch,
saved as safetensors with timm's parameter names, and its logits on fixed inputs.
Read by tests/lua/test_checkpoint.lua (lua/attnlab/nn/checkpoint.lua must reproduce the
logits within 1e-5).

Run ONCE from the repository root with Debian's PyTorch (timm is not needed: the model
is written below with timm's module names and layout); the tests never need Python:
    /usr/bin/python3 tests/ref/make_vit_fixture.py
writes tests/ref/vit_fixture.safetensors (~110 KB) and tests/ref/vit_fixture.json.

The model is timm's VisionTransformer (class token, global_pool='token') at a toy size:
16x16x3 images, patch 4 (a 4x4 grid + the class token: N = 17 tokens), dim 32, depth 2,
2 heads (head_dim 16), mlp_ratio 4, 5 classes. Layout facts the loader
relies on, as in timm:
  patch_embed.proj.weight (D, C, P, P) Conv2d with stride P, cls_token (1,1,D),
  pos_embed (1, 1+g*g, D) added to [cls; patches], blocks.<i>.attn.qkv.weight (3D, D)
  whose rows are (3, heads, head_dim), pre-LN blocks with LayerNorm eps 1e-6 and the
  exact (erf) GELU, final norm, head on the class token.
It is trained for 300 Adam steps on a synthetic task (the class is the argmax of the
correlation with 5 fixed random templates) so the weights are not at their init.

JSON contents (all arrays flattened row-major):
  config                      the model config
  inputs {shape, data}        3 images (3,3,16,16), float32 values
  logits {shape, data}        (3,5): the model evaluated in float64 on the float32
                              weights and inputs (the exact answer for float32 data)
  logits_f32                  the same model run in float32 by PyTorch (for reference)
  resample: a 24x24 variant -- pos_embed grid 4x4 -> 6x6 by bilinear interpolation
    (F.interpolate, align_corners=False, no antialias), class token kept:
    inputs (2,3,24,24), logits (2,5) in float64, pos_embed (1,37,32) after resampling
  grid_resample: a small known case -- src (1, 1+3*3, 2) -> dst (1, 1+5*5, 2)
"""
import json
import math
import os
import struct

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(20240701)
torch.set_num_threads(1)

CFG = dict(image_size=16, patch_size=4, channels=3, dim=32, depth=2, heads=2, mlp_ratio=4, num_classes=5,
           qkv_bias=True, eps=1e-6)


class Attention(nn.Module):
    def __init__(self, dim, heads, qkv_bias):
        super().__init__()
        self.heads = heads
        self.scale = (dim // heads) ** -0.5
        self.qkv = nn.Linear(dim, 3 * dim, bias=qkv_bias)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, D = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.heads, D // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        a = ((q @ k.transpose(-2, -1)) * self.scale).softmax(dim=-1)
        return self.proj((a @ v).transpose(1, 2).reshape(B, N, D))


class Mlp(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU()          # exact erf GELU, as timm's default
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class Block(nn.Module):
    def __init__(self, dim, heads, mlp_ratio, qkv_bias, eps):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, eps=eps)
        self.attn = Attention(dim, heads, qkv_bias)
        self.norm2 = nn.LayerNorm(dim, eps=eps)
        self.mlp = Mlp(dim, int(dim * mlp_ratio))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class PatchEmbed(nn.Module):
    def __init__(self, channels, dim, patch):
        super().__init__()
        self.proj = nn.Conv2d(channels, dim, kernel_size=patch, stride=patch)

    def forward(self, x):
        return self.proj(x).flatten(2).transpose(1, 2)      # (B, g*g, D), row-major grid


class ViT(nn.Module):
    def __init__(self, image_size, patch_size, channels, dim, depth, heads, mlp_ratio, num_classes, qkv_bias, eps):
        super().__init__()
        g = image_size // patch_size
        self.patch_embed = PatchEmbed(channels, dim, patch_size)
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.pos_embed = nn.Parameter(torch.randn(1, 1 + g * g, dim) * 0.02)
        self.blocks = nn.Sequential(*[Block(dim, heads, mlp_ratio, qkv_bias, eps) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim, eps=eps)
        self.head = nn.Linear(dim, num_classes)

    def forward(self, x):
        t = self.patch_embed(x)
        t = torch.cat([self.cls_token.expand(t.shape[0], -1, -1), t], dim=1) + self.pos_embed
        t = self.norm(self.blocks(t))
        return self.head(t[:, 0])


def resample_pos_embed(pe, new_grid):
    """(1, 1+g*g, D) -> (1, 1+G*G, D): bilinear over the grid, class token kept."""
    D = pe.shape[-1]
    g = int(round(math.sqrt(pe.shape[1] - 1)))
    grid = pe[:, 1:].reshape(1, g, g, D).permute(0, 3, 1, 2)
    grid = F.interpolate(grid, size=(new_grid, new_grid), mode="bilinear", align_corners=False)
    return torch.cat([pe[:, :1], grid.permute(0, 2, 3, 1).reshape(1, new_grid * new_grid, D)], dim=1)


def write_safetensors(path, tensors, meta):
    header, blobs, off = {"__metadata__": meta}, [], 0
    for name in sorted(tensors):
        t = tensors[name].detach().contiguous().to(torch.float32)
        b = t.numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def flat(t):
    return [float(v) for v in t.detach().reshape(-1).tolist()]


def main():
    model = ViT(**CFG)
    # synthetic task: 5 random templates, label = argmax of the correlation
    templates = torch.randn(CFG["num_classes"], 3 * 16 * 16)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    for step in range(300):
        x = torch.randn(64, 3, 16, 16)
        y = (x.reshape(64, -1) @ templates.t()).argmax(1)
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 100 == 0 or step == 299:
            print(f"step {step}: loss {loss.item():.4f}")
    model.eval()

    sd = model.state_dict()
    write_safetensors(os.path.join(HERE, "vit_fixture.safetensors"), sd,
                      {"format": "pt", "made_by": "tests/ref/make_vit_fixture.py", "config": json.dumps(CFG)})

    gen = torch.Generator().manual_seed(7)
    x16 = torch.randn(3, 3, 16, 16, generator=gen)
    x24 = torch.randn(2, 3, 24, 24, generator=gen)
    with torch.no_grad():
        logits_f32 = model(x16)
        m64 = ViT(**CFG).double()
        m64.load_state_dict({k: v.double() for k, v in sd.items()})
        logits = m64(x16.double())
        # the 24x24 variant: same weights, pos_embed resampled 4x4 -> 6x6
        cfg24 = dict(CFG, image_size=24)
        m24 = ViT(**cfg24).double()
        sd24 = {k: v.double() for k, v in sd.items()}
        sd24["pos_embed"] = resample_pos_embed(sd["pos_embed"].double(), 6)
        m24.load_state_dict(sd24)
        logits24 = m24(x24.double())
        # a small known grid case
        src = torch.arange(1 + 9 * 2, dtype=torch.float64)[:18].reshape(1, 9, 2)
        src = torch.cat([torch.tensor([[[-1.0, -2.0]]], dtype=torch.float64), src], dim=1)   # class token (-1,-2)
        dst = resample_pos_embed(src, 5)
    print("max |float32 torch - float64| logits:", (logits_f32.double() - logits).abs().max().item())
    out = {
        "made_by": "tests/ref/make_vit_fixture.py",
        "torch_version": torch.__version__,
        "config": CFG,
        "inputs": {"shape": list(x16.shape), "data": flat(x16)},
        "logits": {"shape": list(logits.shape), "data": flat(logits)},
        "logits_f32": {"shape": list(logits_f32.shape), "data": flat(logits_f32)},
        "resample": {"image_size": 24, "inputs": {"shape": list(x24.shape), "data": flat(x24)},
                     "logits": {"shape": list(logits24.shape), "data": flat(logits24)},
                     "pos_embed": {"shape": list(sd24["pos_embed"].shape), "data": flat(sd24["pos_embed"])}},
        "grid_resample": {"src": {"shape": list(src.shape), "data": flat(src)},
                          "dst": {"shape": list(dst.shape), "data": flat(dst)}},
    }
    with open(os.path.join(HERE, "vit_fixture.json"), "w") as f:
        json.dump(out, f, indent=None, separators=(",", ":"))
        f.write("\n")
    print("wrote tests/ref/vit_fixture.safetensors and tests/ref/vit_fixture.json")


if __name__ == "__main__":
    main()
