#!/usr/bin/env python3
"""torch_parity.py -- the compact classifier of lua/attnlab/nn/vit.lua written in plain PyTorch,
with attnlab's parameter names, for training-parity checks against attnlab.

usage (Debian's PyTorch: /usr/bin/python3; numpy is not needed):
  torch_parity.py parity DIR
      The PyTorch side of scripts/parity_torch.lua (lua/attnlab/parity.lua). Reads
      DIR/config.json (model, optimizer, schedule, steps), DIR/init.safetensors (attnlab's
      initial weights, loaded as they are) and DIR/batches.safetensors (x.<i>, y.<i>: the
      batches attnlab trained on, in its order; labels 1-based), trains the same steps with
      torch.optim.AdamW and the same schedule, and writes DIR/torch.json (loss per step) and
      DIR/torch_final.safetensors (the weights after the last step).
  torch_parity.py train --dataset cifar10|fashion_mnist --seed S [--epochs 3 --batch_size 128
      --lr 1e-3 --weight_decay 0.05 --decay_all true --warmup_epochs 0.15 --min_lr 0
      --clip_grad 0 --patch P --normalizer softmax --threads 1] --out RECORD.json
      A whole run of the PyTorch model from PyTorch's own initialisation (module defaults;
      position embedding and class token N(0, 0.02^2)), on the same data files and the same
      normalisation as al.data, with al.train's schedule; writes a JSON record shaped like
      al.train's (config, epochs[] with loss / train and test accuracy, test_accuracy,
      test_accuracy_exact on CIFAR's bit-exact first 1,000 test records, machine).

The model (same as attnlab's, layer for layer): Conv2d patch embedding (stride P), class
token, learned position embedding, `depth` pre-LN blocks (LayerNorm eps 1e-6, multi-head
attention with any of attnlab's normalizers, MLP with exact erf GELU), final LayerNorm, a
linear head on the class token. The normalizers (sparsemax, entmax15, alpha-entmax with a
learnable per-head alpha for "hae", top-k softmax) use the closed-form backwards of the
published definitions (Martins & Astudillo 2016; Peters et al. 2019; Correia et al. 2019),
as ../shared/anchors/torch_ref.py does; alpha-entmax's forward bisects in float64 (80
halvings: the exact float32 answer, which is what attnlab's Halley iteration computes).

The schedule is optim.CosineWarmup's: step t (0-based) uses lr * (t + 1) / warmup while
t < warmup, then min_lr + (lr - min_lr) (1 + cos(pi q)) / 2 with q = min(1, (t - warmup) /
max(1, total - warmup)).
"""
import argparse
import gzip
import json
import math
import os
import platform
import struct
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Function


# ---------------------------------------------------------------------------------------------
# normalizers over the last dim of scores (B, H, N, N)
# ---------------------------------------------------------------------------------------------

class SparsemaxFn(Function):
    """p = [z - tau]_+ (sort-based tau); dz = s * (g - <s, g>/|s|), s = [p > 0]."""

    @staticmethod
    def forward(ctx, z):
        z = z - z.amax(dim=-1, keepdim=True)
        zs, _ = torch.sort(z, dim=-1, descending=True)
        csum = zs.cumsum(dim=-1) - 1.0
        rho = torch.arange(1, z.shape[-1] + 1, dtype=z.dtype)
        k = (rho * zs > csum).sum(dim=-1, keepdim=True)
        tau = csum.gather(-1, k - 1) / k.to(z.dtype)
        p = torch.clamp(z - tau, min=0.0)
        ctx.save_for_backward(p)
        return p

    @staticmethod
    def backward(ctx, g):
        (p,) = ctx.saved_tensors
        s = (p > 0).to(g.dtype)
        gs = g * s
        return gs - s * (gs.sum(dim=-1, keepdim=True) / s.sum(dim=-1, keepdim=True))


class Entmax15Fn(Function):
    """p = [z/2 - tau]_+^2 (sort-based tau, Peters et al. 2019 alg. 2); with w = sqrt(p):
    dz = w g - w <w, g> / sum(w)."""

    @staticmethod
    def forward(ctx, z):
        u = (z - z.amax(dim=-1, keepdim=True)) / 2.0
        us, _ = torch.sort(u, dim=-1, descending=True)
        rho = torch.arange(1, z.shape[-1] + 1, dtype=z.dtype)
        mean = us.cumsum(dim=-1) / rho
        mean_sq = (us * us).cumsum(dim=-1) / rho
        delta = (1.0 - rho * (mean_sq - mean * mean)) / rho
        tau = mean - torch.sqrt(torch.clamp(delta, min=0.0))
        k = (tau <= us).sum(dim=-1, keepdim=True)
        p = torch.clamp(u - tau.gather(-1, k - 1), min=0.0) ** 2
        ctx.save_for_backward(p)
        return p

    @staticmethod
    def backward(ctx, g):
        (p,) = ctx.saved_tensors
        w = p.sqrt()
        gw = g * w
        return gw - w * (gw.sum(dim=-1, keepdim=True) / w.sum(dim=-1, keepdim=True))


class EntmaxBisectFn(Function):
    """alpha-entmax: p_j = [(alpha-1) z_j - tau]_+^(1/(alpha-1)), sum p = 1. tau by bisection in
    float64 on [max - 1, max - n^(1-alpha)] of (alpha-1) z, then p normalised. Backward (closed
    form): w = p^(2-alpha) on the support, dz = w g - w <w, g> / sum(w); d alpha as in Correia
    et al. 2019 (the entmax package's EntmaxBisect)."""

    @staticmethod
    def forward(ctx, z, alpha, n_iter=80):
        alpha_shape = alpha.shape
        a = alpha.detach().to(torch.float64).expand(*z.shape[:-1], 1)
        x = (a - 1.0) * z.detach().to(torch.float64)
        mx = x.amax(dim=-1, keepdim=True)
        lo = mx - 1.0
        hi = mx - (1.0 / z.shape[-1]) ** (a - 1.0)
        inv = 1.0 / (a - 1.0)
        for _ in range(n_iter):
            mid = (lo + hi) / 2
            f = torch.clamp(x - mid, min=0.0).pow(inv).sum(dim=-1, keepdim=True) - 1.0
            lo = torch.where(f >= 0, mid, lo)
            hi = torch.where(f >= 0, hi, mid)
        p = torch.clamp(x - lo, min=0.0).pow(inv)
        p = (p / p.sum(dim=-1, keepdim=True)).to(z.dtype)
        ctx.save_for_backward(p, alpha.detach().to(z.dtype).expand(*z.shape[:-1], 1))
        ctx.alpha_shape = alpha_shape
        return p

    @staticmethod
    def backward(ctx, g):
        p, a = ctx.saved_tensors
        pos = p > 0
        zero = p.new_zeros(())
        w = torch.where(pos, p.pow(2.0 - a), zero)
        wsum = w.sum(dim=-1, keepdim=True)
        gw = g * w
        dz = gw - w * (gw.sum(dim=-1, keepdim=True) / wsum)
        dalpha = None
        if ctx.needs_input_grad[1]:
            S = torch.where(pos, p * torch.log(torch.where(pos, p, p.new_ones(()))), zero)
            H = S.sum(dim=-1, keepdim=True)
            wt = w / wsum
            am1 = a - 1.0
            dp_da = (p - wt) / (am1 * am1) - (S - wt * H) / am1
            dalpha = (g * dp_da).sum(dim=-1, keepdim=True).sum_to_size(ctx.alpha_shape)
        return dz, dalpha, None


def topk_softmax(s, ratio):
    """softmax over the k = max(1, ceil(ratio n)) largest scores of a row, exact zeros elsewhere."""
    n = s.shape[-1]
    k = max(1, math.ceil(ratio * n))
    if k >= n:
        return torch.softmax(s, dim=-1)
    vals, idx = torch.topk(s, k, dim=-1)
    return torch.zeros_like(s).scatter(-1, idx, torch.softmax(vals, dim=-1))


class Normalizer(nn.Module):
    """attnlab's normalizer names: softmax, sparsemax, entmax15, hae (alpha_h = 1.05 +
    0.9 sigmoid(pre_alpha_h), pre_alpha = 0 at init), entmax:<alpha>, topk:<ratio>."""

    def __init__(self, name, heads):
        super().__init__()
        self.name = name
        self.kind = name.split(":")[0]
        if self.kind == "hae":
            self.pre_alpha = nn.Parameter(torch.zeros(heads))
        elif self.kind == "entmax":
            self.alpha = float(name.split(":")[1])
        elif self.kind == "topk":
            self.ratio = float(name.split(":")[1])
        elif self.kind not in ("softmax", "sparsemax", "entmax15"):
            raise ValueError("unknown normalizer '%s'" % name)

    def forward(self, s):
        if self.kind == "softmax":
            return torch.softmax(s, dim=-1)
        if self.kind == "sparsemax":
            return SparsemaxFn.apply(s)
        if self.kind == "entmax15":
            return Entmax15Fn.apply(s)
        if self.kind == "topk":
            return topk_softmax(s, self.ratio)
        if self.kind == "entmax":
            return EntmaxBisectFn.apply(s, torch.tensor(self.alpha, dtype=s.dtype), 80)
        alpha = 1.05 + 0.9 * torch.sigmoid(self.pre_alpha)
        return EntmaxBisectFn.apply(s, alpha.view(1, -1, 1, 1), 80)


# ---------------------------------------------------------------------------------------------
# the compact classifier, with attnlab's (timm's) parameter names
# ---------------------------------------------------------------------------------------------

class Attention(nn.Module):
    def __init__(self, dim, heads, normalizer, qkv_bias=True):
        super().__init__()
        self.heads, self.scale = heads, (dim // heads) ** -0.5
        self.qkv = nn.Linear(dim, 3 * dim, bias=qkv_bias)
        self.normalizer = Normalizer(normalizer, heads)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, D = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.heads, D // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]                                  # (B, H, N, dh)
        p = self.normalizer((q @ k.transpose(-2, -1)) * self.scale)         # (B, H, N, N)
        return self.proj((p @ v).transpose(1, 2).reshape(B, N, D))


class Mlp(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class Block(nn.Module):
    def __init__(self, dim, heads, mlp_ratio, normalizer, qkv_bias, eps):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, eps=eps)
        self.attn = Attention(dim, heads, normalizer, qkv_bias)
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
        return self.proj(x).flatten(2).transpose(1, 2)                    # (B, g*g, D), row-major


class ViT(nn.Module):
    """PyTorch's module defaults everywhere; position embedding and class token N(0, 0.02^2)."""

    def __init__(self, image_size, patch_size, channels, num_classes, dim=64, depth=2, heads=4, mlp_ratio=4,
                 normalizer="softmax", qkv_bias=True, eps=1e-6):
        super().__init__()
        g = image_size // patch_size
        self.patch_embed = PatchEmbed(channels, dim, patch_size)
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.pos_embed = nn.Parameter(torch.randn(1, 1 + g * g, dim) * 0.02)
        self.blocks = nn.Sequential(*[Block(dim, heads, mlp_ratio, normalizer, qkv_bias, eps) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim, eps=eps)
        self.head = nn.Linear(dim, num_classes)

    def forward(self, x):
        t = self.patch_embed(x)
        t = torch.cat([self.cls_token.expand(t.shape[0], -1, -1), t], dim=1) + self.pos_embed
        return self.head(self.norm(self.blocks(t))[:, 0])


# ---------------------------------------------------------------------------------------------
# optimizer and schedule, as al.train builds them
# ---------------------------------------------------------------------------------------------

def param_groups(model, wd, decay_all):
    """decay_all: one group (torch.optim.AdamW(model.parameters())); else timm's groups, as
    train.param_groups: no decay on 1-D parameters, pos_embed, cls_token, pre_alpha."""
    if decay_all:
        return [{"params": list(model.parameters()), "weight_decay": wd}]
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        if p.dim() <= 1 or "pos_embed" in name or "cls_token" in name or "pre_alpha" in name:
            no_decay.append(p)
        else:
            decay.append(p)
    return [{"params": decay, "weight_decay": wd}, {"params": no_decay, "weight_decay": 0.0}]


def lr_at(t, base, warmup, total, min_lr):
    if t < warmup:
        return base * (t + 1) / warmup
    span = max(1, total - warmup)
    q = min(1.0, (t - warmup) / span)
    return min_lr + 0.5 * (base - min_lr) * (1 + math.cos(math.pi * q))


def train_step(model, opt, x, y, lr, o):
    for g in opt.param_groups:
        g["lr"] = lr
    logits = model(x)
    loss = F.cross_entropy(logits, y, label_smoothing=o.get("label_smoothing", 0.0))
    opt.zero_grad(set_to_none=True)
    loss.backward()
    if o.get("clip_grad", 0) and o["clip_grad"] > 0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), o["clip_grad"])
    opt.step()
    return loss, logits


def make_optimizer(model, o):
    return torch.optim.AdamW(param_groups(model, o["weight_decay"], o["decay_all"]), lr=o["lr"],
                             betas=(o.get("beta1", 0.9), o.get("beta2", 0.999)), eps=o.get("adam_eps", 1e-8),
                             weight_decay=o["weight_decay"])


# ---------------------------------------------------------------------------------------------
# safetensors (F32, F64, I64), written as the repository's other reference scripts do
# ---------------------------------------------------------------------------------------------

_DT = {"F32": torch.float32, "F64": torch.float64, "I64": torch.int64}
_DT_NAME = {v: k for k, v in _DT.items()}


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    (hlen,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + hlen])
    base = 8 + hlen
    out = {}
    for name, d in header.items():
        if name == "__metadata__":
            continue
        a, b = d["data_offsets"]
        buf = bytearray(raw[base + a:base + b])
        t = torch.frombuffer(buf, dtype=_DT[d["dtype"]]) if b > a else torch.empty(0, dtype=_DT[d["dtype"]])
        out[name] = t.reshape(d["shape"]).clone()
    return out


def write_safetensors(path, tensors, meta=None):
    header, blobs, off = {"__metadata__": meta or {}}, [], 0
    for name in sorted(tensors):
        t = tensors[name].detach().contiguous()
        b = t.numpy().tobytes()
        header[name] = {"dtype": _DT_NAME[t.dtype], "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)
    os.replace(tmp, path)


def write_json_atomic(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)


# ---------------------------------------------------------------------------------------------
# parity: the PyTorch side of scripts/parity_torch.lua
# ---------------------------------------------------------------------------------------------

def run_parity(d):
    cfg = json.load(open(os.path.join(d, "config.json")))
    torch.set_num_threads(int(cfg.get("threads", 1)))
    m, o = cfg["model"], cfg["optim"]
    model = ViT(m["image_size"], m["patch_size"], m["channels"], m["num_classes"], m["dim"], m["depth"], m["heads"],
                m["mlp_ratio"], m["normalizer"], m.get("qkv_bias", True), 1e-6)
    sd = read_safetensors(os.path.join(d, "init.safetensors"))
    own = model.state_dict()
    missing = sorted(set(own) - set(sd))
    unexpected = sorted(set(sd) - set(own))
    if missing or unexpected:
        raise SystemExit("torch_parity: state dicts differ: missing %s, unexpected %s" % (missing, unexpected))
    model.load_state_dict({k: v.to(own[k].dtype) for k, v in sd.items()})
    batches = read_safetensors(os.path.join(d, "batches.safetensors"))
    opt = make_optimizer(model, o)
    losses = []
    model.train()
    for t in range(cfg["steps"]):
        x = batches["x.%d" % (t + 1)]
        y = batches["y.%d" % (t + 1)].long() - 1                          # attnlab's labels are 1-based
        loss, _ = train_step(model, opt, x, y, lr_at(t, o["lr"], o["warmup"], o["total"], o["min_lr"]), o)
        losses.append(loss.item())
    write_safetensors(os.path.join(d, "torch_final.safetensors"), model.state_dict())
    write_json_atomic(os.path.join(d, "torch.json"), {"losses": losses, "torch_version": torch.__version__,
                                                      "threads": torch.get_num_threads()})


# ---------------------------------------------------------------------------------------------
# train: a whole run on the real data, from PyTorch's own initialisation
# ---------------------------------------------------------------------------------------------

def _find(rel):
    here = os.path.dirname(os.path.abspath(__file__))
    dirs = [p for p in os.environ.get("ATTNLAB_DATA", "").split(":") if p]
    dirs += [os.path.join(here, "..", "..", "..", "shared", "data"), "/usr/share/datasets",
             os.path.join(os.path.expanduser("~"), ".cache", "attnlab", "data")]
    for dd in dirs:
        for cand in (rel + ".gz", rel):
            p = os.path.join(dd, cand)
            if os.path.exists(p):
                return p
    raise SystemExit("torch_parity: %s not found in %s" % (rel, dirs))


def _read(path):
    with (gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb")) as f:
        return f.read()


def _idx(path):
    raw = _read(path)
    ndim = raw[3]
    shape = struct.unpack(">" + "I" * ndim, raw[4:4 + 4 * ndim])
    return torch.frombuffer(bytearray(raw[4 + 4 * ndim:]), dtype=torch.uint8).reshape(shape)


def load_dataset(name):
    """(train_images uint8 (N,C,H,W), train_labels 0-based, test_images, test_labels)."""
    if name == "cifar10":
        def batch(f):
            raw = torch.frombuffer(bytearray(_read(_find("cifar-10-batches-bin/" + f))), dtype=torch.uint8)
            raw = raw.reshape(-1, 3073)
            return raw[:, 1:].reshape(-1, 3, 32, 32).clone(), raw[:, 0].long()
        tr = [batch("data_batch_%d.bin" % i) for i in range(1, 6)]
        te = batch("test_batch.bin")
        return torch.cat([a for a, _ in tr]), torch.cat([b for _, b in tr]), te[0], te[1]
    if name in ("fashion_mnist", "fmnist"):
        d = "fashion-mnist/"
        xtr = _idx(_find(d + "train-images-idx3-ubyte")).unsqueeze(1)
        ytr = _idx(_find(d + "train-labels-idx1-ubyte")).long()
        xte = _idx(_find(d + "t10k-images-idx3-ubyte")).unsqueeze(1)
        yte = _idx(_find(d + "t10k-labels-idx1-ubyte")).long()
        return xtr, ytr, xte, yte
    raise SystemExit("torch_parity: dataset must be cifar10 or fashion_mnist, got %s" % name)


def normaliser(xtr):
    """Per-channel byte -> float32 tables, as al.data: (v/255 - mean_c) / std_c in double, with the
    train split's mean and population std of v/255, rounded to float32."""
    C = xtr.shape[1]
    lut = torch.empty(C, 256, dtype=torch.float32)
    stats = []
    for c in range(C):
        hist = torch.bincount(xtr[:, c].reshape(-1).long(), minlength=256).double()
        v = torch.arange(256, dtype=torch.float64) * (1.0 / 255)
        n = hist.sum()
        mean = (hist * v).sum() / n
        std = torch.sqrt((hist * (v - mean) ** 2).sum() / n)
        lut[c] = ((v - mean) / std).float()
        stats.append((mean.item(), std.item()))
    return lut, stats


def make_batch(lut, images, idx):
    b = images[idx].long()                                             # (B, C, H, W)
    out = torch.empty(b.shape, dtype=torch.float32)
    for c in range(b.shape[1]):
        out[:, c] = lut[c][b[:, c]]
    return out


def evaluate(model, lut, images, labels, exact=None, bs=500):
    model.eval()
    hits = []
    with torch.no_grad():
        for s in range(0, images.shape[0], bs):
            idx = torch.arange(s, min(s + bs, images.shape[0]))
            hits.append(model(make_batch(lut, images, idx)).argmax(1) == labels[idx])
    model.train()
    h = torch.cat(hits).double()
    return h.mean().item(), (h[:exact].mean().item() if exact else None)


def machine():
    cpu = None
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"host": platform.node(), "kernel": platform.system() + " " + platform.release(), "cpu": cpu,
            "cores": os.cpu_count(), "threads": torch.get_num_threads(), "torch": torch.__version__,
            "python": platform.python_version()}


def git_revision():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    try:
        import subprocess
        rev = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                               text=True).stdout.strip()
        return (rev + ("-dirty" if dirty else "")) if rev else "unknown"
    except OSError:
        return "unknown"


def run_train(a):
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    xtr, ytr, xte, yte = load_dataset(a.dataset)
    lut, stats = normaliser(xtr)
    if a.limit:
        xtr, ytr, xte, yte = xtr[:a.limit], ytr[:a.limit], xte[:a.limit], yte[:a.limit]
    C, S = xtr.shape[1], xtr.shape[2]
    model = ViT(S, a.patch, C, 10, a.dim, a.depth, a.heads, a.mlp_ratio, a.normalizer, True, 1e-6)
    o = {"lr": a.lr, "weight_decay": a.weight_decay, "decay_all": a.decay_all, "beta1": a.beta1, "beta2": a.beta2,
         "adam_eps": a.adam_eps, "clip_grad": a.clip_grad, "label_smoothing": a.label_smoothing}
    opt = make_optimizer(model, o)
    n = xtr.shape[0]
    spe = (n + a.batch_size - 1) // a.batch_size
    total, warmup = spe * a.epochs, int(math.floor(a.warmup_epochs * spe))
    cfg = dict(vars(a))
    cfg.update(impl="pytorch", init="pytorch module defaults (pos_embed, cls_token N(0, 0.02^2))", image_size=S,
               channels=C, warmup_steps=warmup, total_steps=total, normalisation=stats)
    rec = {"config": cfg, "git_revision": git_revision(), "machine": machine(), "params": sum(p.numel() for p in model.parameters()),
           "tokens": (S // a.patch) ** 2 + 1, "dataset": {"name": a.dataset, "train": n, "test": xte.shape[0]},
           "epochs": [], "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    t = 0
    model.train()
    for epoch in range(1, a.epochs + 1):
        gen = torch.Generator().manual_seed(a.seed * 1000003 + epoch)
        order = torch.randperm(n, generator=gen)
        t0 = time.time()
        sum_loss, correct = 0.0, 0
        for b in range(spe):
            idx = order[b * a.batch_size:(b + 1) * a.batch_size]
            x, y = make_batch(lut, xtr, idx), ytr[idx]
            loss, logits = train_step(model, opt, x, y, lr_at(t, a.lr, warmup, total, a.min_lr), o)
            t += 1
            lv = loss.item()
            if lv != lv:
                raise SystemExit("torch_parity: loss became NaN at epoch %d step %d" % (epoch, b + 1))
            sum_loss += lv * y.numel()
            correct += (logits.detach().argmax(1) == y).sum().item()
        acc, acc_exact = evaluate(model, lut, xte, yte, 1000 if a.dataset == "cifar10" else None)
        e = {"epoch": epoch, "loss": sum_loss / n, "train_accuracy": correct / n, "test_accuracy": acc,
             "seconds": time.time() - t0, "lr": lr_at(t, a.lr, warmup, total, a.min_lr)}
        if acc_exact is not None:
            e["test_accuracy_exact"] = acc_exact
        rec["epochs"].append(e)
        print("epoch %d: loss %.4f  train acc %.4f  test acc %.4f  (%.1f s)" % (epoch, e["loss"], e["train_accuracy"],
                                                                            acc, e["seconds"]), flush=True)
    rec["test_accuracy"] = rec["epochs"][-1]["test_accuracy"]
    if a.dataset == "cifar10":
        rec["test_accuracy_exact"] = rec["epochs"][-1]["test_accuracy_exact"]
    rec["finished"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    if a.out:
        write_json_atomic(a.out, rec)
    print("%s %s seed %d (pytorch): test accuracy %.4f%s" % (a.dataset, a.normalizer, a.seed, rec["test_accuracy"],
          ", record " + a.out if a.out else ""))


def _bool(s):
    if s in ("true", "1"):
        return True
    if s in ("false", "0"):
        return False
    raise argparse.ArgumentTypeError("want true or false, got %s" % s)


def main(argv):
    if len(argv) >= 1 and argv[0] == "parity":
        if len(argv) != 2:
            raise SystemExit("usage: torch_parity.py parity DIR")
        return run_parity(argv[1])
    if len(argv) >= 1 and argv[0] == "train":
        p = argparse.ArgumentParser(prog="torch_parity.py train")
        p.add_argument("--dataset", required=True)
        p.add_argument("--normalizer", default="softmax")
        p.add_argument("--seed", type=int, default=1)
        p.add_argument("--epochs", type=int, default=3)
        p.add_argument("--batch_size", type=int, default=128)
        p.add_argument("--lr", type=float, default=1e-3)
        p.add_argument("--weight_decay", type=float, default=0.05)
        p.add_argument("--decay_all", type=_bool, default=True)
        p.add_argument("--beta1", type=float, default=0.9)
        p.add_argument("--beta2", type=float, default=0.999)
        p.add_argument("--adam_eps", type=float, default=1e-8)
        p.add_argument("--warmup_epochs", type=float, default=0.15)
        p.add_argument("--min_lr", type=float, default=0.0)
        p.add_argument("--clip_grad", type=float, default=0.0)
        p.add_argument("--label_smoothing", type=float, default=0.0)
        p.add_argument("--patch", type=int, required=True)
        p.add_argument("--dim", type=int, default=64)
        p.add_argument("--depth", type=int, default=2)
        p.add_argument("--heads", type=int, default=4)
        p.add_argument("--mlp_ratio", type=int, default=4)
        p.add_argument("--threads", type=int, default=1)
        p.add_argument("--limit", type=int, default=None, help="smoke runs: the first LIMIT train and test examples")
        p.add_argument("--out", default=None)
        return run_train(p.parse_args(argv[1:]))
    raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
