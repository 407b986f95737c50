"""Inputs and verification: every implementation gets the same float32 inputs of a point (normal,
seeded by the point, as sdtw-bench makes them), and its values and gradients on a subset of the pairs
are compared with the float64 reference: sdtw_torch on the CPU with float64 inputs, which runs the
project's Eigen reference (reference/). Errors are defined as in sdtw-bench (harness/src/torch/verify.cpp)."""
import math
import zlib

import torch

REFERENCE = "sdtw_torch on the CPU in float64 (the Eigen reference of reference/), same inputs cast to float64"
# Ours in float32 is held to the project's accuracy target (sdtw-bench's tolerance); the originals'
# errors are recorded, not judged (docs/DESIGN.md §3.1): they fail only on a non-finite result.
OURS_TOLERANCE = {"value_tol": 1e-5, "grad_tol": 1e-4}


def point_seed(seed, b, n, d):
    return (int(seed) * 1_000_003 + zlib.crc32(f"{b},{n},{d}".encode())) % (1 << 63)


def make_inputs(b, n, d, seed):
    """x, y: float32 (B, N, D) on the CPU, from a float64 normal draw (as sdtw-bench)."""
    gen = torch.Generator().manual_seed(point_seed(seed, b, n, d))
    x = torch.randn(b, n, d, generator=gen, dtype=torch.float64)
    y = torch.randn(b, n, d, generator=gen, dtype=torch.float64)
    return x.float(), y.float()


def verified_pairs(b, n, max_cells):
    """Indices of the pairs to verify: evenly spread, N*N*k <= max_cells, one pair at least."""
    k = max(1, min(b, max_cells // (n * n)))
    return [i * b // k for i in range(k)]


def reference(x, y, pairs, gamma):
    """(values, grad_x, grad_y) in float64 for the given pairs."""
    import sdtw_torch
    idx = torch.tensor(pairs, dtype=torch.long)
    xr = x.index_select(0, idx).double().requires_grad_(True)
    yr = y.index_select(0, idx).double().requires_grad_(True)
    values = sdtw_torch.SoftDTW(gamma=gamma, fused=False)(xr, yr)
    values.sum().backward()
    return values.detach(), xr.grad, yr.grad


def _value_error(v, r):
    diff = (v.double() - r).abs().max().item()
    scale = r.abs().max().item()
    return math.inf if not math.isfinite(diff) else (diff / scale if scale > 0 else diff)


def _rel_l2(g, r):
    diff = (g.double() - r).norm().item()
    scale = r.norm().item()
    return math.inf if not math.isfinite(diff) else (diff / scale if scale > 0 else diff)


def errors(outputs, ref):
    """(value_err, grad_err) of an implementation's (values, grad_x, grad_y) on the verified pairs:
    max |v - r| / max |r|, and the larger relative L2 error of the two gradients."""
    values, gx, gy = outputs
    rv, rgx, rgy = ref
    if values.shape != rv.shape or gx is None or gy is None or gx.shape != rgx.shape or gy.shape != rgy.shape:
        raise ValueError(f"outputs of shapes {tuple(values.shape)}, {None if gx is None else tuple(gx.shape)}, "
                         f"{None if gy is None else tuple(gy.shape)}; expected {tuple(rv.shape)}, {tuple(rgx.shape)}")
    return _value_error(values, rv), max(_rel_l2(gx, rgx), _rel_l2(gy, rgy))


def judge(judged, value_err, grad_err):
    """(disposition, tolerances, message) of a measured point."""
    if not (math.isfinite(value_err) and math.isfinite(grad_err)):
        return "failed", {}, "non-finite value or gradient"
    if not judged:
        return "passed", {}, ""
    why = [f"{name} {err:.3g} > {OURS_TOLERANCE[tol]:.3g}" for name, err, tol in
           [("value error", value_err, "value_tol"), ("gradient rel-L2 error", grad_err, "grad_tol")]
           if err > OURS_TOLERANCE[tol]]
    return ("failed" if why else "passed"), OURS_TOLERANCE, "; ".join(why)
