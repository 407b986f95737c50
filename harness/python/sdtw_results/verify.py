"""Verification against the float64 reference (sdtw_torch on the CPU in float64, which runs the
project's Eigen reference), with the errors sdtw-bench defines (harness/src/torch/verify.cpp):
value_err = max |v - r| / max |r|; grad_err = the larger relative L2 error of the two gradients."""
import math

import torch

REFERENCE = "sdtw_torch on the CPU in float64 (the Eigen reference of reference/), same inputs cast to float64"
# sdtw-bench's float32 tolerance for ours (harness/src/torch/impl_ours.cpp), the one every judged row states.
FLOAT32_TOLERANCE = {"value_tol": 1e-5, "grad_tol": 1e-4}


def verified_pairs(b, n, m, max_cells):
    """Indices of the pairs to verify, evenly spread, as sdtw-bench picks them: k = min(B, max_cells //
    (N M)) pairs, i * B // k; none when one pair is larger than max_cells."""
    k = min(b, max_cells // max(n * m, 1))
    return [i * b // k for i in range(k)] if k >= 1 else []


def verified_text(pairs, b):
    """The `verified` column: "k/B", with " (subsample)" when fewer than all pairs were checked, and
    sdtw-bench's text when no pair was (one pair is larger than verify_max_cells)."""
    if not pairs:
        return "skipped (N*M > verify_max_cells)"
    return f"{len(pairs)}/{b}" + (" (subsample)" if len(pairs) < b else "")


def reference(x, y, pairs, gamma, bandwidth=None, normalize=False):
    """(values, grad_x, grad_y) in float64 for the given pairs."""
    import sdtw_torch
    idx = torch.tensor(pairs, dtype=torch.long)
    xr = x.detach().cpu().index_select(0, idx).double().requires_grad_(True)
    yr = y.detach().cpu().index_select(0, idx).double().requires_grad_(True)
    values = sdtw_torch.soft_dtw(xr, yr, gamma=gamma, bandwidth=bandwidth, normalize=normalize, fused=False)
    values.sum().backward()
    return values.detach(), xr.grad, yr.grad


def value_error(values, ref):
    diff = (values.detach().cpu().double() - ref).abs().max().item()
    scale = ref.abs().max().item()
    return math.inf if not math.isfinite(diff) else (diff / scale if scale > 0 else diff)


def rel_l2_error(grad, ref):
    diff = (grad.detach().cpu().double() - ref).norm().item()
    scale = ref.norm().item()
    return math.inf if not math.isfinite(diff) else (diff / scale if scale > 0 else diff)


def errors(outputs, ref):
    """(value_err, grad_err) of (values, grad_x, grad_y) on the verified pairs against the reference's."""
    values, gx, gy = outputs
    rv, rgx, rgy = ref
    if values.shape != rv.shape or gx is None or gy is None or gx.shape != rgx.shape or gy.shape != rgy.shape:
        raise ValueError(f"outputs of shapes {tuple(values.shape)}, {None if gx is None else tuple(gx.shape)}, "
                         f"{None if gy is None else tuple(gy.shape)}; expected {tuple(rv.shape)}, {tuple(rgx.shape)}")
    return value_error(values, rv), max(rel_l2_error(gx, rgx), rel_l2_error(gy, rgy))


def judge(value_err, grad_err, value_tol, grad_tol):
    """(disposition, message): "passed" only within both tolerances, else "failed" with the reason
    (a missing error, as for a values-only check, is not judged)."""
    why = [f"{name} {err:.3g} > {tol:.3g}" for name, err, tol in
           (("value error", value_err, value_tol), ("gradient rel-L2 error", grad_err, grad_tol))
           if err is not None and not err <= tol]
    return ("failed", "; ".join(why)) if why else ("passed", "")
