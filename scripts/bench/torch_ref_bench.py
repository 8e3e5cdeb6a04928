"""torch_ref_bench.py -- time the PyTorch reference models of ../shared/anchors/torch_ref.py
so attnlab's benchmark scripts can print ratios measured in the same run.

usage: /usr/bin/python3 torch_ref_bench.py PART [--threads T] [--shape ...] [--names a,b]
  PART = norms   --shape B,H,N,N          normalizer forward+backward (ms)
       | attn    --batch B --tokens N     attention layer (dim 64, 4 heads) forward+backward (ms)
       | train   --batch B --patch P --image C,H,W   compact classifier train step (img/s)
       | infer   --batch B --patch P --image C,H,W   inference (img/s)
       | mixers  --batch B --tokens N     token mixers at dim 192 (ms fwd, fwd+bwd)
Prints one JSON object per line: {"name": ..., "ms": ..., ...}. The caller sets
OPENBLAS_CORETYPE / OMP_NUM_THREADS / OPENBLAS_NUM_THREADS in the environment (OpenBLAS
reads them when it loads) so PyTorch runs with the same BLAS kernels as attnlab.
Medians over repeats after warm-up.
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch

ANCHORS = os.environ.get("ATTNLAB_ANCHORS") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "shared", "anchors")
sys.path.insert(0, ANCHORS)
import torch_ref as R  # noqa: E402


def median_time(fn, warmup=2, repeats=7, min_time=0.2):
    for _ in range(warmup):
        fn()
    t0 = time.perf_counter(); fn(); t1 = time.perf_counter() - t0
    inner = max(1, min(50, int(min_time / max(t1, 1e-6))))
    times = []
    for _ in range(repeats if t1 < 2 else 3):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        times.append((time.perf_counter() - t0) / inner)
    return statistics.median(times)


def emit(**kw):
    print(json.dumps(kw), flush=True)


def part_norms(a):
    B, H, N, M = (int(v) for v in a.shape.split(","))
    torch.manual_seed(0)
    s = torch.randn(B, H, N, M)
    g = torch.randn(B, H, N, M)
    for name in a.names.split(","):
        mod = R.Normalizer(name, H)
        x = s.clone().requires_grad_(True)

        def step():
            y = mod(x)
            y.backward(g)
            x.grad = None
            if name == "hae":
                mod.a.grad = None
        emit(name=name, ms=1e3 * median_time(step))


def part_attn(a):
    torch.manual_seed(0)
    x = torch.randn(a.batch, a.tokens, 64, requires_grad=True)
    for name in a.names.split(","):
        layer = R.Attention(64, 4, name)

        def step():
            y = layer(x)
            y.sum().backward()
        emit(name=name, ms=1e3 * median_time(step))


def part_train(a, infer=False):
    c, h, w = (int(v) for v in a.image.split(","))
    torch.manual_seed(0)
    x = torch.randn(a.batch, c, h, w)
    y = torch.randint(0, 10, (a.batch,))
    for name in a.names.split(","):
        model = R.CompactTransformer(name, in_shape=(c, h, w), patch=a.patch, n_classes=10)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        if infer:
            model.eval()

            def step():
                with torch.no_grad():
                    model(x)
        else:
            def step():
                opt.zero_grad()
                torch.nn.functional.cross_entropy(model(x), y).backward()
                opt.step()
        t = median_time(step, repeats=5)
        emit(name=name, ms=1e3 * t, img_per_s=a.batch / t)


def part_mixers(a):
    torch.manual_seed(0)
    x = torch.randn(a.batch, a.tokens, 192, requires_grad=True)
    mods = {"attention": R.MHSA(192, 3), "bilstm": R.BiLSTM(192), "bimamba": R.BiMamba(192)}
    for name in a.names.split(","):
        m = mods[name]

        def fwd():
            with torch.no_grad():
                m(x)

        def fwdbwd():
            m(x).sum().backward()
        emit(name=name, tokens=a.tokens, fwd_ms=1e3 * median_time(fwd, repeats=3),
             fwdbwd_ms=1e3 * median_time(fwdbwd, repeats=3), params=sum(p.numel() for p in m.parameters()))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("part")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--shape", default="128,4,65,65")
    p.add_argument("--names", default="softmax,sparsemax,entmax15,hae,topk0.125,topk0.25,topk0.5")
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--tokens", type=int, default=65)
    p.add_argument("--patch", type=int, default=8)
    p.add_argument("--image", default="3,32,32")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    emit(info="torch", version=torch.__version__, threads=torch.get_num_threads(),
         coretype=os.environ.get("OPENBLAS_CORETYPE", ""))
    {"norms": part_norms, "attn": part_attn, "train": part_train,
     "infer": lambda a: part_train(a, infer=True), "mixers": part_mixers}[a.part](a)


if __name__ == "__main__":
    main()
