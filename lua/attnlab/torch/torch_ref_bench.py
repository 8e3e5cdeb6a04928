"""torch_ref_bench.py -- time the PyTorch reference models of ../shared/anchors/torch_ref.py
so attnlab's benchmark scripts can print ratios measured in the same run.

usage: /usr/bin/python3 torch_ref_bench.py PART [--threads T] [--shape ...] [--names a,b]
  PART = norms   --shape B,H,N,N [--scale S]   normalizer forward+backward (ms), scores ~ N(0, S^2)
       | attn    --batch B --tokens N     attention layer (dim 64, 4 heads) forward+backward (ms)
       | train   --batch B --patch P --image C,H,W   compact classifier train step (img/s)
       | infer   --batch B --patch P --image C,H,W   inference (img/s)
       | mixers  --batch B --tokens N     token mixers at dim 192 (ms fwd, fwd+bwd)
Prints one JSON object per line: {"name": ..., "ms": ..., ...}. The caller sets
OPENBLAS_CORETYPE / OMP_NUM_THREADS / OPENBLAS_NUM_THREADS in the environment (OpenBLAS
reads them when it loads) so PyTorch runs with the same BLAS kernels as attnlab.
Medians over repeats after warm-up.

PyTorch at its best (what a PyTorch user would tune; the anchors' RESULTS.md did the same):
  * opt.zero_grad(set_to_none=True) (1.13's default zero-fills every .grad), no anomaly mode;
  * OpenMP wait policy and OpenBLAS threads: a policy in the caller's environment would be
    inherited. libgomp reads it at start-up, so the script re-executes itself with the
    environment it chose. At 1 thread it
    drops the inherited policy (PyTorch's default). At T > 1 threads (--config auto, the
    default) it first times the softmax model of the requested part, briefly, under
    {libgomp's default spin policy, passive} x {OpenBLAS T threads, 1 thread} -- on a quiet
    machine spinning and OMP T + OpenBLAS 1 win, on a busy one spinning threads are
    descheduled mid-barrier and passive wins by up to 10x -- and runs everything with the
    fastest (parts train, infer, attn, norms; the mixers part keeps the environment as
    given at T > 1). --config inherit keeps the environment as given. The info line says
    what ran.
  * glibc's allocator keeps large blocks in the heap, as attnlab's own process does
    (mallopt in lua/bind/module.c's process_init): MALLOC_MMAP_THRESHOLD_ 256 MiB and
    MALLOC_TRIM_THRESHOLD_ 512 MiB, unless the caller's environment sets them (glibc reads
    them at start-up, so they go into the re-executed environment, every --config included).
    With glibc's defaults every step hands its activations back to the kernel and faults them
    in again, a cost attnlab does not pay (experiments/classifier/THROUGHPUT.md measures it),
    so a ratio measured so would not compare the libraries. Likewise transparent huge pages:
    attnlab advises its heap for them (core/tensor/huge_pages.c; M_TOP_PAD 64 MiB), PyTorch
    gets glibc's equivalent, GLIBC_TUNABLES=glibc.malloc.hugetlb=1 and MALLOC_TOP_PAD_ 64 MiB,
    unless the caller sets GLIBC_TUNABLES. PyTorch's step was measured not to change with it
    (experiments/classifier/THROUGHPUT.md, "Huge pages"); it is given for the same policy.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def _argval(flag, default=None):
    return sys.argv[sys.argv.index(flag) + 1] if flag in sys.argv else default


# The allocator policy of attnlab's process (lua/bind/module.c, process_init), for PyTorch's.
_MALLOC_ENV = {"MALLOC_MMAP_THRESHOLD_": str(256 << 20), "MALLOC_TRIM_THRESHOLD_": str(512 << 20),
               "MALLOC_TOP_PAD_": str(64 << 20), "GLIBC_TUNABLES": "glibc.malloc.hugetlb=1"}


def _with_allocator(env):
    """env with attnlab's allocator policy where the caller set none; the config names it."""
    for k, v in _MALLOC_ENV.items():
        env.setdefault(k, v)
    env["ATTNLAB_TORCH_CONFIG"] = env.get("ATTNLAB_TORCH_CONFIG", "") + " malloc_mmap_threshold=%s glibc_tunables=%s" % (
        env["MALLOC_MMAP_THRESHOLD_"], env["GLIBC_TUNABLES"])
    return env


def _env_for(policy, blas_threads):
    env = dict(os.environ)
    env["ATTNLAB_TORCH_ENV"] = "1"
    env.pop("OMP_WAIT_POLICY", None)
    env.pop("ATTNLAB_TORCH_PROBE_BEST", None)
    if policy != "default":
        env["OMP_WAIT_POLICY"] = policy
    env["OPENBLAS_NUM_THREADS"] = str(blas_threads)
    env["ATTNLAB_TORCH_CONFIG"] = "omp_wait_policy=%s openblas_threads=%s" % (policy, blas_threads)
    return _with_allocator(env)


def _probe(env):
    """img/s (or 1/ms) of the softmax model under env, quickly; 0 on failure."""
    argv = list(sys.argv[1:])
    if "--names" in argv:
        argv[argv.index("--names") + 1] = "softmax"
    else:
        argv += ["--names", "softmax"]
    env = dict(env, ATTNLAB_TORCH_PROBE="1")
    try:
        out = subprocess.run([sys.executable, os.path.abspath(__file__)] + argv, env=env, capture_output=True,
                             text=True, timeout=60).stdout
    except subprocess.TimeoutExpired:
        return 0.0
    for line in reversed(out.splitlines()):
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if r.get("img_per_s"):
            return float(r["img_per_s"])
        if r.get("ms"):
            return 1e3 / float(r["ms"])
    return 0.0


def _reexec_with_torch_env():
    if os.environ.get("ATTNLAB_TORCH_ENV") == "1":
        return
    threads = int(_argval("--threads", "1"))
    config = _argval("--config", "auto")
    probed = sys.argv[1] in ("train", "infer", "attn", "norms")
    if config == "inherit" or (threads > 1 and not probed):
        env = _with_allocator(dict(os.environ, ATTNLAB_TORCH_ENV="1", ATTNLAB_TORCH_CONFIG="inherited"))
        env.pop("ATTNLAB_TORCH_PROBE_BEST", None)
    elif threads <= 1:
        env = _env_for("default", _argval("--blas-threads", threads))
    else:
        cands = [(p, b) for p in ("default", "passive") for b in (threads, 1)]
        scores = [(_probe(_env_for(p, b)), p, b) for p, b in cands]
        best = max(scores)
        env = _env_for(best[1], best[2])
        env["ATTNLAB_TORCH_CONFIG"] += " (probed, softmax: %s)" % ", ".join(
            "%s/%d: %.0f" % (p, b, v) for v, p, b in scores)
        # The winner's probe figure: PyTorch at 2 threads swings by 2x from one minute to the
        # next on a shared VM, so a goal against PyTorch is checked against the better of this
        # and the timed figure (scripts/bench_train.lua), never against an unlucky run alone.
        env["ATTNLAB_TORCH_PROBE_BEST"] = "%.6g" % best[0]
    os.execve(sys.executable, [sys.executable] + sys.argv, env)


_reexec_with_torch_env()
import torch  # noqa: E402

ANCHORS = os.environ.get("ATTNLAB_ANCHORS") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "shared", "anchors")
sys.path.insert(0, ANCHORS)
import torch_ref as R  # noqa: E402


_last_cpu = [0.0]


def median_time(fn, warmup=2, repeats=7, min_time=0.2):
    """Median wall seconds per call; the median CPU seconds per call (all threads of this
    process: a load-robust figure at 1 thread) is left in _last_cpu[0]."""
    if os.environ.get("ATTNLAB_TORCH_PROBE") == "1":   # a configuration probe: rough is enough
        warmup, repeats, min_time = 1, 3, 0.05
    for _ in range(warmup):
        fn()
    t0 = time.perf_counter(); fn(); t1 = time.perf_counter() - t0
    inner = max(1, min(50, int(min_time / max(t1, 1e-6))))
    times, cpus = [], []
    for _ in range(repeats if t1 < 2 else 3):
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(inner):
            fn()
        times.append((time.perf_counter() - t0) / inner)
        cpus.append((time.process_time() - c0) / inner)
    _last_cpu[0] = statistics.median(cpus)
    return statistics.median(times)


def emit(**kw):
    print(json.dumps(kw), flush=True)


def part_norms(a):
    B, H, N, M = (int(v) for v in a.shape.split(","))
    torch.manual_seed(0)
    s = torch.randn(B, H, N, M) * a.scale
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
                opt.zero_grad(set_to_none=True)   # 1.13 defaults to zero-filling every .grad
                torch.nn.functional.cross_entropy(model(x), y).backward()
                opt.step()
        t = median_time(step, repeats=5)
        emit(name=name, ms=1e3 * t, img_per_s=a.batch / t, cpu_img_per_s=a.batch / _last_cpu[0])


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
    p.add_argument("--scale", type=float, default=1.0, help="norms: scores ~ N(0, scale^2)")
    p.add_argument("--names", default="softmax,sparsemax,entmax15,hae,topk0.125,topk0.25,topk0.5")
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--tokens", type=int, default=65)
    p.add_argument("--patch", type=int, default=8)
    p.add_argument("--image", default="3,32,32")
    p.add_argument("--blas-threads", type=int, default=0, help="OpenBLAS threads (default: --threads)")
    p.add_argument("--config", default="auto", choices=["auto", "inherit"])
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    emit(info="torch", version=torch.__version__, threads=torch.get_num_threads(),
         coretype=os.environ.get("OPENBLAS_CORETYPE", ""), config=os.environ.get("ATTNLAB_TORCH_CONFIG", ""),
         grad_anomaly=torch.is_anomaly_enabled(),
         probe_best=float(os.environ.get("ATTNLAB_TORCH_PROBE_BEST", "0")))
    {"norms": part_norms, "attn": part_attn, "train": part_train,
     "infer": lambda a: part_train(a, infer=True), "mixers": part_mixers}[a.part](a)


if __name__ == "__main__":
    main()
