#!/usr/bin/env python3
"""tests/ref/make_mixer_refs.py -- reference vectors for the token-mixer cores
(core/mix/bilstm.c, core/mix/bimamba.c), read by tests/c/test_bilstm.c and test_bimamba.c.

Run ONCE from the repository root with Debian's PyTorch; the tests never need Python:
    /usr/bin/python3 tests/ref/make_mixer_refs.py
writes tests/ref/bilstm.json and tests/ref/bimamba.json.

Inputs and parameters are drawn in float32 (so the C test feeds exactly the same
numbers), the references are computed in float64 by PyTorch:
  bilstm.json : torch.nn.LSTM(hd, hd, bidirectional=True, batch_first=True), one per
                head on channels [h*hd, (h+1)*hd); output per head [forward | reverse]
                (H = 1 is exactly nn.LSTM(C, C, bidirectional=True)). Values: y and,
                for a fixed random upstream gradient gy, dL/dx and every parameter
                gradient of L = sum(y * gy).
  bimamba.json: the Vision-Mamba-v2 core out = 0.5*(y_fwd + flip(y_bwd(flip))) * silu(z),
                written below from the Mamba equations with torch ops (Conv1d causal
                depthwise, Linear x_proj / dt_proj, softplus, sequential scan), per-head
                x_proj/dt_proj for H > 1. For H = 1 it is cross-checked against the
                project's anchor torch_ref.py (MambaDirection, the timing reference)
                when that file is found (TORCH_REF env var or ../shared/anchors).
Arrays are flattened row-major in the C API's layouts (include/attnlab/mixers.h).
"""
import json
import math
import os
import sys

import torch
import torch.nn.functional as F

torch.manual_seed(20240611)
HERE = os.path.dirname(os.path.abspath(__file__))


def f32(*shape, scale=1.0, offset=0.0):
    """float32 random normal values, returned as float64 (exactly representable)."""
    return (torch.randn(*shape, dtype=torch.float32) * scale + offset).double()


def flat(t):
    return [float(v) for v in t.detach().reshape(-1).tolist()]


# ----------------------------------------------------------------------------------
# BiLSTM
# ----------------------------------------------------------------------------------
def bilstm_case(name, B, T, C, H):
    hd = C // H
    x = f32(B, T, C).requires_grad_()
    k = 1.0 / math.sqrt(hd)
    # per direction: (H, 4hd, hd) and (H, 4hd); uniform like torch's init
    def u(*shape):
        return ((torch.rand(*shape, dtype=torch.float32) * 2 - 1) * k).double()
    w_ih = [u(H, 4 * hd, hd) for _ in range(2)]
    w_hh = [u(H, 4 * hd, hd) for _ in range(2)]
    b_ih = [u(H, 4 * hd) for _ in range(2)]
    b_hh = [u(H, 4 * hd) for _ in range(2)]
    lstms = []
    for h in range(H):
        m = torch.nn.LSTM(hd, hd, bidirectional=True, batch_first=True).double()
        with torch.no_grad():
            m.weight_ih_l0.copy_(w_ih[0][h]); m.weight_ih_l0_reverse.copy_(w_ih[1][h])
            m.weight_hh_l0.copy_(w_hh[0][h]); m.weight_hh_l0_reverse.copy_(w_hh[1][h])
            m.bias_ih_l0.copy_(b_ih[0][h]); m.bias_ih_l0_reverse.copy_(b_ih[1][h])
            m.bias_hh_l0.copy_(b_hh[0][h]); m.bias_hh_l0_reverse.copy_(b_hh[1][h])
        lstms.append(m)
    y = torch.cat([lstms[h](x[..., h * hd:(h + 1) * hd])[0] for h in range(H)], dim=-1)
    gy = f32(B, T, 2 * C)
    (y * gy).sum().backward()
    g = {key: [torch.stack([getattr(lstms[h], attr + sfx).grad for h in range(H)])
               for sfx in ("_l0", "_l0_reverse")]
         for key, attr in (("w_ih", "weight_ih"), ("w_hh", "weight_hh"),
                           ("b_ih", "bias_ih"), ("b_hh", "bias_hh"))}
    case = {"name": name, "B": B, "T": T, "C": C, "H": H, "x": flat(x), "gy": flat(gy),
            "y": flat(y), "dx": flat(x.grad)}
    for key, val in (("w_ih", w_ih), ("w_hh", w_hh), ("b_ih", b_ih), ("b_hh", b_hh)):
        case[key] = [flat(val[0]), flat(val[1])]
        case["g_" + key] = [flat(g[key][0]), flat(g[key][1])]
    return case


# ----------------------------------------------------------------------------------
# BiMamba core (Mamba-1 selective SSM, Vision Mamba v2 bidirectional)
# ----------------------------------------------------------------------------------
def mamba_direction(x, prm, H, N, R, K):
    """One direction on x (B, T, E) -> y (B, T, E) before the silu(z) gate."""
    Bn, T, E = x.shape
    Eh = E // H
    v = F.conv1d(x.transpose(1, 2), prm["conv_w"].view(E, 1, K), prm["conv_b"],
                 padding=K - 1, groups=E)[..., :T].transpose(1, 2)
    u = F.silu(v)
    A = -torch.exp(prm["A_log"])                                   # (E, N)
    ys = []
    for h in range(H):
        uh = u[..., h * Eh:(h + 1) * Eh]
        dbc = uh @ prm["x_proj"][h].t()                            # (B, T, R+2N)
        dt_low, Bm, Cm = dbc.split([R, N, N], dim=-1)
        delta = F.softplus(dt_low @ prm["dt_w"][h * Eh:(h + 1) * Eh].t()
                           + prm["dt_b"][h * Eh:(h + 1) * Eh])     # (B, T, Eh)
        Ah = A[h * Eh:(h + 1) * Eh]
        s = x.new_zeros(Bn, Eh, N)
        yh = []
        for t in range(T):
            s = torch.exp(delta[:, t, :, None] * Ah) * s \
                + (delta[:, t] * uh[:, t])[..., None] * Bm[:, t, None, :]
            yh.append((s * Cm[:, t, None, :]).sum(-1))
        ys.append(torch.stack(yh, dim=1) + uh * prm["D"][h * Eh:(h + 1) * Eh])
    return torch.cat(ys, dim=-1)


def bimamba_core(x, z, prms, H, N, R, K):
    y_f = mamba_direction(x, prms[0], H, N, R, K)
    y_b = mamba_direction(x.flip(1), prms[1], H, N, R, K).flip(1)
    return 0.5 * (y_f + y_b) * F.silu(z)


def mamba_params(E, H, N, R, K):
    Eh = E // H
    prm = {
        "conv_w": f32(E, K, scale=0.5),
        "conv_b": f32(E, scale=0.2),
        "x_proj": f32(H, R + 2 * N, Eh, scale=1 / math.sqrt(Eh)),
        "dt_w": f32(E, R, scale=1 / math.sqrt(R)),
        # dt bias near Mamba's init range but larger so exp(dt*A) is not ~1
        "dt_b": f32(E, scale=0.5, offset=-1.0),
        "A_log": (torch.log(torch.arange(1, N + 1, dtype=torch.float32)).repeat(E, 1)
                  + torch.randn(E, N, dtype=torch.float32) * 0.1).double(),
        "D": f32(E, scale=0.5, offset=1.0),
    }
    return {k: v.requires_grad_() for k, v in prm.items()}


def bimamba_case(name, B, T, E, H, N, R, K):
    x = f32(B, T, E).requires_grad_()
    z = f32(B, T, E).requires_grad_()
    prms = [mamba_params(E, H, N, R, K) for _ in range(2)]
    out = bimamba_core(x, z, prms, H, N, R, K)
    gout = f32(B, T, E)
    (out * gout).sum().backward()
    case = {"name": name, "B": B, "T": T, "E": E, "H": H, "N": N, "R": R, "K": K,
            "xin": flat(x), "z": flat(z), "gout": flat(gout), "out": flat(out),
            "dxin": flat(x.grad), "dz": flat(z.grad)}
    for key in prms[0]:
        case[key] = [flat(prms[0][key]), flat(prms[1][key])]
        case["g_" + key] = [flat(prms[0][key].grad), flat(prms[1][key].grad)]
    if H == 1:
        case["torch_ref_crosscheck"] = crosscheck_torch_ref(x, z, prms, N, R, K, out)
    return case


def crosscheck_torch_ref(x, z, prms, N, R, K, out):
    path = os.environ.get("TORCH_REF", os.path.join(HERE, "..", "..", "..", "shared", "anchors"))
    sys.path.insert(0, path)
    try:
        import torch_ref
    except ImportError:
        return "torch_ref.py not found; not cross-checked"
    E = x.shape[-1]
    dirs = []
    for prm in prms:
        m = torch_ref.MambaDirection(E, N, R, K).double()
        with torch.no_grad():
            m.conv.weight.copy_(prm["conv_w"].view(E, 1, K)); m.conv.bias.copy_(prm["conv_b"])
            m.x_proj.weight.copy_(prm["x_proj"][0]); m.dt_proj.weight.copy_(prm["dt_w"])
            m.dt_proj.bias.copy_(prm["dt_b"]); m.A_log.copy_(prm["A_log"]); m.D.copy_(prm["D"])
        dirs.append(m)
    with torch.no_grad():
        ref = (dirs[0](x, z) + dirs[1](x.flip(1), z.flip(1)).flip(1)) / 2
    err = (ref - out).abs().max().item()
    assert err < 1e-12, f"torch_ref.py BiMamba disagrees with this script: {err}"
    return f"equals torch_ref.py MambaDirection pair (max |diff| {err:.1e})"


def main():
    lstm = {"generator": "tests/ref/make_mixer_refs.py", "torch": torch.__version__,
            "loss": "L = sum(y * gy); grads are dL/d*", "cases": [
                bilstm_case("H1", B=2, T=5, C=4, H=1),
                bilstm_case("H2", B=3, T=6, C=6, H=2),
                bilstm_case("H3_wide", B=2, T=9, C=24, H=3),
            ]}
    mamba = {"generator": "tests/ref/make_mixer_refs.py", "torch": torch.__version__,
             "loss": "L = sum(out * gout); grads are dL/d*", "cases": [
                 bimamba_case("H1", B=2, T=7, E=8, H=1, N=4, R=2, K=4),
                 bimamba_case("H2", B=2, T=6, E=12, H=2, N=3, R=2, K=3),
             ]}
    for fname, obj in (("bilstm.json", lstm), ("bimamba.json", mamba)):
        with open(os.path.join(HERE, fname), "w") as f:
            json.dump(obj, f, separators=(",", ":"))
        print("wrote", fname, [c["name"] for c in obj["cases"]])
    for c in mamba["cases"]:
        if "torch_ref_crosscheck" in c:
            print("bimamba", c["name"], ":", c["torch_ref_crosscheck"])


if __name__ == "__main__":
    main()
