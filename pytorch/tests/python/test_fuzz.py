"""Fuzz test of the Python API: random argument combinations through soft_dtw,
SoftDTW(...)(x, y), soft_dtw_cost and alignment.

Each draw picks a function, shapes (batched or not, N != M, N = 1, B = 0, mismatched batch or
feature sizes, wrong ndim, empty, not a tensor), dtypes (float16/bfloat16/32/64, int, bool, mixed),
devices (one input or the lengths on the meta device beside real tensors), values (scaled,
sometimes one nan/inf), gamma (negative, 0, nan, inf, tiny, huge, numpy,
0-d tensor, string...), bandwidth (None, <= 0, small, floats, 2**63, nan...), dist, fused,
normalize, reduction, lengths (lists, tensors, out of range, floats, wrong count...) and
check_inputs. A small oracle says which arguments are invalid, and the call must then:

- with an invalid argument: raise ValueError, TypeError or RuntimeError (not NotImplementedError)
  whose message names one of the invalid arguments (never 'Unable to cast' or a bare internal error);
- otherwise: return a tensor of the right shape and dtype (per reduction), finite for finite inputs
  (a non-finite value inside pair b leaves the other pairs finite), an alignment in [0, 1] that is
  zero in padding and outside the band, and finite gradients shaped like the inputs, zero in padding.

Reproduce a failure with SDTW_FUZZ_SEED=<seed> SDTW_FUZZ_ONLY=<draw>; SDTW_FUZZ_DRAWS and
SDTW_FUZZ_SECONDS change the number of draws and the time guard. The cases it found are kept out
of the draws and pinned by the tests at the end.
"""
import math
import os
import re
import time

import numpy as np
import pytest
import torch

import sdtw_torch
from conftest import requires_cuda

skip_without_cuda = requires_cuda[1]

# A fixed seed unless SDTW_FRESH_SEEDS=1 (the fuzz ctest entry), which draws one; the failure message names it.
SEED = int(os.environ.get("SDTW_FUZZ_SEED", np.random.SeedSequence().entropy % 2**32
                          if os.environ.get("SDTW_FRESH_SEEDS") == "1" else 16))
DRAWS = int(os.environ.get("SDTW_FUZZ_DRAWS", "2000"))
SECONDS = float(os.environ.get("SDTW_FUZZ_SECONDS", "20"))
ONLY = os.environ.get("SDTW_FUZZ_ONLY")

FLOATS = [torch.float64, torch.float32, torch.float16, torch.bfloat16]
NOT_FLOATS = [torch.int64, torch.int32, torch.bool]
DISTS = ["sqeuclidean"] * 4 + ["sq_euclidean", "squared_euclidean", "euclidean", "cosine", "l1", "manhattan",
                               "cityblock", "L1"]
HUGE_GAMMA = 1e300
VALID_GAMMAS = [1.0, 0.1, 0.01, 2, 10.0, 1e-30, 1e-300, 5e-324, 1e6, 1e30, HUGE_GAMMA, np.float32(0.5), np.float64(2.0),
                np.int64(1), torch.tensor(0.5), torch.tensor(3), 0, 0.0, -0.0, torch.tensor(0.0)]
INVALID_GAMMAS = [-1.0, -1e-300, math.nan, math.inf, -math.inf, np.float64("nan"), "1.0", None, True,
                  [1.0], torch.tensor([0.5]), torch.tensor(math.nan), 1j]
VALID_BANDWIDTHS = [None, -5, -1, 0, 1, 2, 3, 10, 0.5, 1.5, 2.7, -0.5, 1e300, math.inf, -math.inf, 2**62 - 1,
                    2**63, 2**64, -2**63 - 1, np.int64(2), np.float64(1.5), torch.tensor(2)]
INVALID_BANDWIDTHS = [math.nan, "2", True, [2]]


def pick(rng, options):
    return options[int(rng.integers(len(options)))]


def band_of(bandwidth):
    """The documented meaning: None, <= 0, inf or >= 2**62 is no band, else floor(bandwidth)."""
    if bandwidth is None:
        return None
    value = float(bandwidth.item() if isinstance(bandwidth, torch.Tensor) else bandwidth)
    return None if value <= 0 or value >= 2**62 else int(math.floor(value))


def sq_cost(a, b):  # a user's callable dist
    return ((a.unsqueeze(-2) - b.unsqueeze(-3)) ** 2).sum(-1)


def wrong_shape_cost(a, b):  # a user's callable dist with a wrong output shape
    return sq_cost(a, b).sum(-1)


def integer_cost(a, b):  # a user's callable dist returning integers
    return sq_cost(a, b).to(torch.int64)


LENGTH_KINDS = ["list", "list", "tuple", "int64", "int32", "np_ints", "ndarray", "0d", "scalar"]
BAD_LENGTH_KINDS = ["too_small", "too_big", "float_in_list", "float_tensor", "bool_tensor", "count", "meta"]
TENSOR_KINDS = ("int64", "int32", "0d", "float_tensor", "bool_tensor", "meta")


def draw_lengths(rng, d, name, full, bad):
    """None, or valid / invalid lengths for a side of `full` steps; records invalid ones in bad."""
    if rng.random() < 0.65:
        return None
    count = d["B"] if d["batched"] else 1
    values = [int(rng.integers(1, full + 1)) if full >= 1 else 1 for _ in range(count)]
    kind = pick(rng, BAD_LENGTH_KINDS if rng.random() < 1.5 * d["bad_p"] else LENGTH_KINDS)
    if kind in ("too_small", "too_big", "float_in_list") and not count:
        kind = "count"
    if kind == "too_small" or kind == "too_big":
        values[int(rng.integers(count))] = pick(rng, [0, -1]) if kind == "too_small" else full + 1
    elif kind == "float_in_list":
        values[0] -= 0.5
    elif kind == "count":
        values.append(1)
        if d["batched"] and count >= 2:
            d["kwargs"]["check_inputs"] = False  # see test_known_check_inputs_before_shape_checks
    # A lengths tensor on the CPU or on the inputs' device (CUDA lengths with CPU inputs: test_known_cuda_*)
    device = pick(rng, d["devices"]) if kind in TENSOR_KINDS and d["device"] != "cpu" else "cpu"
    if kind == "meta":  # beside real inputs a fake kernel would run and return uninitialised memory
        device = "meta"
    # One int (or a 0-d tensor) is the lengths of one pair: wrong for a batch of another size.
    if kind in BAD_LENGTH_KINDS or (kind == "0d" and d["batched"]) or (kind == "scalar" and count != 1):
        bad.add(name)
    elif full >= 1:
        d["sizes"][name] = values
    if d["fault"]:
        bad.add(name)  # a shape fault may be reported through the lengths first
    if kind == "0d" or kind == "scalar":
        value = values[0] if values else 1
        return value if kind == "scalar" else torch.tensor(value, device=device)
    if kind in TENSOR_KINDS:
        dtype = {"int32": torch.int32, "float_tensor": torch.float32, "bool_tensor": torch.bool}.get(kind, torch.int64)
        return torch.tensor(values, device=device).to(dtype)
    return {"tuple": tuple, "np_ints": lambda v: [np.int64(i) for i in v], "ndarray": np.array}.get(kind, list)(values)


def draw(rng, devices):
    """A random call: its arguments, the invalid argument names ('bad') and what it must return.

    Half the draws are clean (every argument from its valid pool); in the others each argument is
    invalid with a probability around bad_p.
    """
    bad = set()
    bad_p = 0.0 if rng.random() < 0.5 else 0.3
    api = pick(rng, ["soft_dtw", "SoftDTW", "soft_dtw_cost", "alignment"])
    cost_api = api == "soft_dtw_cost"
    d = dict(api=api, devices=devices, bad_p=bad_p, batched=rng.random() < 0.75, B=pick(rng, [0, 1, 1, 2, 2, 3]),
             N=pick(rng, [1, 1, 2, 3, 5, 8]), M=pick(rng, [1, 1, 2, 3, 5, 8]), F=pick(rng, [1, 2, 3]),
             device=pick(rng, devices), sizes={}, nonfinite=None, grad=False, kwargs={})
    names = ("D",) if cost_api else ("x", "y")
    shapes = {"D": [d["N"], d["M"]]} if cost_api else {"x": [d["N"], d["F"]], "y": [d["M"], d["F"]]}
    if d["batched"]:
        shapes = {k: [d["B"]] + s for k, s in shapes.items()}
    faults = ["ndim", "empty", "not_tensor"] + (["batch", "features", "ndim_mix", "meta"] if not cost_api else [])
    fault = pick(rng, faults) if rng.random() < bad_p else None
    if fault in ("batch", "ndim_mix") and not d["batched"]:
        fault = None
    target = pick(rng, names)
    if fault == "ndim":
        shapes[target] = [1] + shapes[target] if d["batched"] else shapes[target][-1:]
        bad.add(target)
    elif fault == "empty":
        axis = pick(rng, [-1, -2])
        shapes[target][axis] = 0
        bad.update(names if axis == -1 and not cost_api else (target,))
    elif fault == "not_tensor":
        bad.add(target)
    elif fault == "batch":
        shapes["y"][0] += 1
    elif fault == "features":
        shapes["y"][-1] += 1
    elif fault == "ndim_mix":
        shapes["y"] = shapes["y"][1:]
    if fault in ("batch", "features", "ndim_mix", "meta"):
        bad.update(names)
    d.update(fault=fault, shapes=shapes, not_tensor_name=target,
             not_tensor=pick(rng, ["list", "ndarray"]) if fault == "not_tensor" else None)

    if rng.random() < bad_p / 2:
        dtype = pick(rng, NOT_FLOATS)
        if cost_api:  # integer x and y are promoted to torch's default dtype; an integer D is refused
            bad.add(names[0])
    else:
        dtype = pick(rng, [torch.float64] * 4 + [torch.float32] * 3 + FLOATS[2:])
    d["dtypes"] = {k: dtype for k in names}
    if not cost_api and rng.random() < bad_p / 4:
        d["dtypes"]["y"] = pick(rng, [t for t in FLOATS if t != dtype])
        if dtype in FLOATS:  # an integer x is promoted to y's dtype
            bad.update(names)
    d["devices_of"] = {k: d["device"] for k in names}
    if fault == "meta":
        d["devices_of"][target] = "meta"
    if not cost_api and d["device"] != "cpu" and rng.random() < bad_p:  # (x on the CPU: test_known_cuda_*)
        d["devices_of"]["y"] = "cpu"
        bad.update(names)
    d["scale"] = pick(rng, [1e-3, 1.0, 1e3] if dtype in (torch.float64, torch.float32) else [0.1, 1.0, 10.0])

    if rng.random() < bad_p * 0.7:
        gamma = pick(rng, INVALID_GAMMAS)
        bad.add("gamma")
    else:
        gamma = pick(rng, VALID_GAMMAS)
        if gamma is HUGE_GAMMA and dtype is not torch.float64:
            gamma = 1e30  # float32 values overflow: see test_known_float32_overflow_with_huge_gamma
    if rng.random() < bad_p / 2:
        bandwidth = pick(rng, INVALID_BANDWIDTHS)
        bad.add("bandwidth")
    else:
        bandwidth = pick(rng, VALID_BANDWIDTHS)
    d["kwargs"].update(gamma=gamma, bandwidth=bandwidth)

    if not cost_api:
        dist = pick(rng, DISTS)
        if rng.random() < bad_p / 2:
            dist = pick(rng, ["foo", None, 3])
            bad.add("dist")
        elif rng.random() < 0.1 and fault is None and dtype in FLOATS and not bad & set(names):
            dist = pick(rng, [wrong_shape_cost, integer_cost]) if rng.random() < bad_p * 2 else sq_cost
            if dist is not sq_cost:
                bad.add("dist")
        d["kwargs"]["dist"] = dist
    if api in ("soft_dtw", "SoftDTW"):
        fused = pick(rng, ["yes", 2] if rng.random() < bad_p / 2 else [None, None, True, False])
        if fused in ("yes", 2) or (fused is True and not (isinstance(dist, str) and dist.lower() in DISTS)):
            bad.add("fused")
        d["kwargs"].update(fused=fused, normalize=pick(rng, [False, False, True, 0, 1]))
    if api != "alignment":
        reduction = pick(rng, ["avg", None, "Mean"] if rng.random() < bad_p / 2 else ["none", "none", "mean", "sum"])
        if reduction not in ("none", "mean", "sum"):
            bad.add("reduction")
        d["kwargs"]["reduction"] = reduction
    # check_inputs with these faults fails before the shape checks: see test_known_check_inputs_before_shape_checks
    d["kwargs"]["check_inputs"] = bool(rng.random() < 0.3) and fault not in ("ndim", "batch")

    for name, axis in (("x_lengths", -2), ("y_lengths", -1 if cost_api else -2)):
        shape = shapes[names[0] if name == "x_lengths" or cost_api else "y"]
        full = shape[axis] if len(shape) >= -axis else 1
        d[name] = draw_lengths(rng, d, name, full, bad)

    d["band"] = band = None if "bandwidth" in bad else band_of(bandwidth)
    if band is not None:  # every pair (with its lengths; without, N and M) needs |n - m| <= band
        count = d["B"] if d["batched"] and d["sizes"] else 1
        xs = d["sizes"].get("x_lengths", [d["N"]] * count)
        ys = d["sizes"].get("y_lengths", [d["M"]] * count)
        if any(abs(n - m) > band for n, m in zip(xs, ys)):
            bad.add("bandwidth")
            if any(isinstance(d[k], torch.Tensor) and d[k].device.type != "cpu" for k in ("x_lengths", "y_lengths")):
                # Lengths on the device are not read back, so a band too narrow for them is not checked
                # (test_known_band_with_device_lengths): this draw goes without a band.
                d["kwargs"]["bandwidth"], d["band"] = None, None
                bad.discard("bandwidth")

    if fault is None and dtype in FLOATS and rng.random() < 0.15:  # one nan / inf inside the lengths
        which = pick(rng, names)
        shape = shapes[which]
        if all(shape):
            pos = [int(rng.integers(s)) for s in shape]
            b = pos[0] if d["batched"] else 0
            limits = {"x": [("x_lengths", -2)], "y": [("y_lengths", -2)],
                      "D": [("x_lengths", -2), ("y_lengths", -1)]}[which]
            for lname, axis in limits:
                if lname in d["sizes"]:
                    pos[axis] = int(rng.integers(d["sizes"][lname][b]))
            d["nonfinite"] = (which, tuple(pos), pick(rng, [math.nan, math.inf, -math.inf]))
            if d["kwargs"]["check_inputs"]:
                bad.add(which)
    d["grad"] = api != "alignment" and dtype in FLOATS and fault != "not_tensor" and rng.random() < 0.5
    d["bad"] = bad
    return d


def build_tensor(d, name, gen):
    dtype, shape = d["dtypes"][name], d["shapes"][name]
    t = torch.randn(shape, generator=gen, dtype=torch.float64) * d["scale"]
    if d["nonfinite"] and d["nonfinite"][0] == name:
        t[d["nonfinite"][1]] = d["nonfinite"][2]
    t = (t > 0) if dtype is torch.bool else t.round().to(dtype) if dtype in NOT_FLOATS else t.to(dtype)
    t = t.to(d["devices_of"][name])
    if d["not_tensor"] and d["not_tensor_name"] == name:
        return t.tolist() if d["not_tensor"] == "list" else t.cpu().double().numpy()
    return t.requires_grad_() if d["grad"] else t


def describe(d):
    def tensor(name):
        nf = f" {d['nonfinite'][2]} at {d['nonfinite'][1]}" if d["nonfinite"] and d["nonfinite"][0] == name else ""
        kind = f" as {d['not_tensor']}" if d["not_tensor"] and d["not_tensor_name"] == name else ""
        return (f"{name}={str(d['dtypes'][name])[6:]}{d['shapes'][name]}@{d['devices_of'][name]}"
                f"*{d['scale']:g}{nf}{kind}")
    args = [tensor(n) for n in d["shapes"]]
    args += [f"{k}={getattr(v, '__name__', None) or v!r}" for k, v in d["kwargs"].items()]
    args += [f"{k}={d[k]!r}" for k in ("x_lengths", "y_lengths") if d[k] is not None]
    return f"{d['api']}({', '.join(args)}) grad={d['grad']} invalid={sorted(d['bad']) or 'none'}"


def call(d, tensors):
    kw, lengths = dict(d["kwargs"]), {k: d[k] for k in ("x_lengths", "y_lengths") if d[k] is not None}
    if d["api"] == "soft_dtw":
        return sdtw_torch.soft_dtw(tensors["x"], tensors["y"], **kw, **lengths)
    if d["api"] == "SoftDTW":
        return sdtw_torch.SoftDTW(**kw)(tensors["x"], tensors["y"], **lengths)
    if d["api"] == "soft_dtw_cost":
        return sdtw_torch.soft_dtw_cost(tensors["D"], **kw, **lengths)
    return sdtw_torch.alignment(tensors["x"], tensors["y"], **kw, **lengths)


def check_error(d, err):
    """The message of an expected error must name one of the invalid arguments."""
    message = str(err)
    if isinstance(err, NotImplementedError) or not isinstance(err, (ValueError, TypeError, RuntimeError)):
        return f"raised {type(err).__name__}: {message[:300]}"
    if "Unable to cast" in message:
        return f"pybind cast error: {message[:300]}"
    names = set(d["bad"])
    if callable(d["kwargs"].get("dist")):
        names |= {"D"}  # the callable's output
    if not any(re.search(rf"(?<!\w){re.escape(n)}(?!\w)", message) for n in names):
        return f"{type(err).__name__} names none of {sorted(names)}: {message[:300]}"
    return None


def padding_and_band_mask(d, E):
    """True where a (B, N, M) / (N, M) alignment (or grad of D) must be zero: padding, outside the band."""
    rows, cols, device = E.shape[-2], E.shape[-1], E.device
    B = E.shape[0] if d["batched"] else 1
    xs = torch.tensor(d["sizes"].get("x_lengths", [rows] * B), device=device).view(-1, 1, 1)
    ys = torch.tensor(d["sizes"].get("y_lengths", [cols] * B), device=device).view(-1, 1, 1)
    i = torch.arange(rows, device=device).view(1, -1, 1)
    j = torch.arange(cols, device=device).view(1, 1, -1)
    mask = (i >= xs) | (j >= ys)
    if d["band"] is not None:
        mask = mask | ((i - j).abs() > d["band"])
    return mask if d["batched"] else mask[0]


def check_result(d, tensors, out):
    """A valid call's result: shape, dtype, finiteness, alignment range, gradients."""
    batched, reduction = d["batched"], d["kwargs"].get("reduction", "none")
    first = tensors["D"] if "D" in tensors else tensors["x"]
    if d["api"] == "alignment":
        expected = tuple(first.shape[:-1]) + (tensors["y"].shape[-2],)
    else:
        expected = (first.shape[0],) if batched and reduction == "none" else ()
    # Integer series compute in the other's dtype, or torch's default when neither is floating.
    dtype = next((t.dtype for t in tensors.values() if t.is_floating_point()), torch.get_default_dtype())
    value_dtype = torch.float64 if dtype is torch.float64 else torch.float32
    if d["api"] == "alignment" and callable(d["kwargs"]["dist"]):
        value_dtype = dtype  # E has the dtype of D, the callable's output
    if not isinstance(out, torch.Tensor) or tuple(out.shape) != expected or out.dtype != value_dtype:
        got = (tuple(out.shape), out.dtype) if isinstance(out, torch.Tensor) else type(out).__name__
        return f"returned {got}, expected shape {expected} and dtype {value_dtype}"
    finite = d["nonfinite"] is None and not (first.shape[0] == 0 and batched and reduction == "mean")
    if finite and not torch.isfinite(out).all():
        return f"non-finite result from finite inputs: {out}"
    if d["nonfinite"] and batched and reduction == "none" and d["api"] != "alignment":
        others = torch.ones_like(out, dtype=torch.bool)
        others[d["nonfinite"][1][0]] = False
        if not torch.isfinite(out[others]).all():
            return f"a non-finite input in pair {d['nonfinite'][1][0]} spoils other pairs: {out}"
    if d["api"] == "alignment":
        tol = 1e-9 if value_dtype is torch.float64 else 1e-3
        E = out.detach()
        if finite and not ((E >= -tol) & (E <= 1 + tol)).all():
            return f"alignment outside [0, 1]: min {E.min().item()}, max {E.max().item()}"
        if finite and (E[padding_and_band_mask(d, E)] != 0).any():
            return "alignment non-zero in padding or outside the band"
    if d["grad"]:
        out.sum().backward()
        for name, t in tensors.items():
            if t.grad is None or t.grad.shape != t.shape:
                return f"{name}.grad is {None if t.grad is None else tuple(t.grad.shape)}, expected {tuple(t.shape)}"
            if finite and not torch.isfinite(t.grad).all():
                return f"non-finite {name}.grad from finite inputs"
            if name == "D" and finite and (t.grad[padding_and_band_mask(d, t.grad)] != 0).any():
                return "D.grad non-zero in padding or outside the band"
            lengths = d["sizes"].get(f"{name}_lengths")
            if name != "D" and lengths is not None and finite:
                padding = torch.arange(t.shape[-2]).view(1, -1) >= torch.tensor(lengths).view(-1, 1)
                if ((t.grad if batched else t.grad.unsqueeze(0))[padding.to(t.device)] != 0).any():
                    return f"{name}.grad non-zero in padding"
    return None


def run_fuzz(devices, seed=SEED):
    failures, outcomes, start = [], {"raised": 0, "returned": 0}, time.monotonic()
    indices = [int(ONLY)] if ONLY is not None else range(DRAWS)
    for index in indices:
        if time.monotonic() - start > SECONDS:
            break
        rng = np.random.default_rng([seed, index])
        d = draw(rng, devices)
        gen = torch.Generator().manual_seed(int(rng.integers(2**31)))
        tensors = {name: build_tensor(d, name, gen) for name in d["shapes"]}
        try:
            out = call(d, tensors)
        except Exception as err:  # noqa: BLE001 - every exception is judged below
            outcomes["raised"] += 1
            problem = check_error(d, err) if d["bad"] else f"valid call raised {type(err).__name__}: {str(err)[:300]}"
        else:
            outcomes["returned"] += 1
            try:
                problem = f"invalid call returned {out!r:.200}" if d["bad"] else check_result(d, tensors, out)
            except Exception as err:  # noqa: BLE001 - e.g. backward failing
                problem = f"checking the result raised {type(err).__name__}: {str(err)[:300]}"
        if problem:
            failures.append(f"SDTW_FUZZ_SEED={seed} SDTW_FUZZ_ONLY={index}: {describe(d)}\n    -> {problem}")
    done = sum(outcomes.values())
    print(f"fuzz seed {seed}: {done} draws in {time.monotonic() - start:.1f} s, {outcomes}")
    assert not failures, f"{len(failures)} of {done} draws failed:\n" + "\n".join(failures[:20])
    if ONLY is None:
        assert done >= min(DRAWS, 50) and min(outcomes.values()) > 0, outcomes


def test_fuzz_cpu():
    run_fuzz(["cpu"])


@pytest.mark.cuda
@skip_without_cuda
def test_fuzz_cuda():
    run_fuzz(["cuda", "cuda", "cpu"])


# Cases the fuzz found, kept out of its draws, now plain tests.

X, Y = torch.randn(2, 5, 3, dtype=torch.float64), torch.randn(2, 4, 3, dtype=torch.float64)


def test_huge_length_names_argument():
    with pytest.raises((ValueError, TypeError), match="x_lengths"):
        sdtw_torch.soft_dtw(X, Y, x_lengths=[2**70, 3])


@pytest.mark.parametrize("case", ["x 1-D", "D 1-D", "x 4-D with a nan", "D 4-D with lengths", "3 lengths for B=2",
                                  "batch sizes 2 and 3 with lengths"])
def test_check_inputs_comes_after_the_shape_checks(case):
    name = case[0] if case[0] in "xD" else "x_lengths" if case[0] == "3" else "x|y"
    with pytest.raises((ValueError, TypeError), match=rf"(?<!\w)(?:{name})(?!\w)"):
        if case == "x 1-D":  # IndexError: tuple index out of range
            sdtw_torch.soft_dtw(X[0, 0], Y, check_inputs=True)
        elif case == "D 1-D":  # IndexError: tuple index out of range
            sdtw_torch.soft_dtw_cost(torch.rand(5), check_inputs=True)
        elif case == "x 4-D with a nan":  # ValueError: too many values to unpack (expected 3)
            sdtw_torch.soft_dtw(X[None] * math.nan, Y, check_inputs=True)
        elif case == "D 4-D with lengths":  # RuntimeError: The size of tensor a (4) must match ...
            sdtw_torch.soft_dtw_cost(torch.rand(1, 2, 5, 4), y_lengths=[4, 3], check_inputs=True)
        elif case == "3 lengths for B=2":  # RuntimeError: The size of tensor a (2) must match ... b (3) ...
            sdtw_torch.soft_dtw(X, Y, x_lengths=[5, 3, 1], check_inputs=True)
        else:  # RuntimeError: The size of tensor a (3) must match the size of tensor b (2) ...
            sdtw_torch.soft_dtw(X, torch.randn(3, 4, 3, dtype=torch.float64), y_lengths=[4, 3], check_inputs=True)


@pytest.mark.parametrize("dist,fused", [
    ("sqeuclidean", True), ("sqeuclidean", False), ("euclidean", False), ("cosine", False), ("l1", False),
])
def test_nonfinite_padding_leaves_gradient_finite(dist, fused):
    """Values past x_lengths / y_lengths are ignored (check_inputs skips them): so must the gradient be."""
    g = torch.Generator().manual_seed(16)
    x = torch.randn(2, 5, 3, generator=g, dtype=torch.float64)
    y = torch.randn(2, 4, 3, generator=g, dtype=torch.float64)
    x[1, 4, 0] = math.nan
    x.requires_grad_()
    value = sdtw_torch.soft_dtw(x, y, dist=dist, fused=fused, x_lengths=[5, 3])
    value.sum().backward()
    assert torch.isfinite(value).all()
    assert torch.isfinite(x.grad).all() and (x.grad[1, 3:] == 0).all()


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=requires_cuda)])
def test_nonfinite_cost_padding_leaves_values_gradient_and_alignment_finite(device):
    """D past the lengths is never read: a NaN there changes no value, no gradient and no E."""
    g = torch.Generator().manual_seed(17)
    clean = torch.rand(2, 5, 4, generator=g, dtype=torch.float64).to(device)
    D = clean.clone()
    D[1, 4] = math.nan
    D[1, :, 3] = math.inf
    D.requires_grad_()
    clean.requires_grad_()
    lengths = dict(x_lengths=[5, 4], y_lengths=[4, 3])
    value = sdtw_torch.soft_dtw_cost(D, **lengths)
    value.sum().backward()
    want = sdtw_torch.soft_dtw_cost(clean, **lengths)
    want.sum().backward()
    torch.testing.assert_close(value, want, rtol=0, atol=0)
    torch.testing.assert_close(D.grad, clean.grad, rtol=0, atol=0)
    assert (D.grad[1, 4] == 0).all() and (D.grad[1, :, 3] == 0).all()
    E = sdtw_torch.alignment_from_cost(D.detach(), **lengths)
    torch.testing.assert_close(E, sdtw_torch.alignment_from_cost(clean.detach(), **lengths), rtol=0, atol=0)


def test_float32_overflow_with_huge_gamma_is_documented_not_silent():
    """gamma * log(3) per step beyond float32's range: the value overflows to -inf (with NaN
    gradients), as a float32 cost that overflows gives +inf (README); in float64 it is finite."""
    x, y = torch.randn(2, 5, 3).requires_grad_(), torch.randn(2, 4, 3)
    value = sdtw_torch.soft_dtw(x, y, gamma=1e39)
    value.sum().backward()
    assert (value == -math.inf).all() and torch.isnan(x.grad).all()
    x64 = x.detach().double().requires_grad_()
    value64 = sdtw_torch.soft_dtw(x64, y.double(), gamma=1e39)
    value64.sum().backward()
    assert torch.isfinite(value64).all() and torch.isfinite(x64.grad).all()


@pytest.mark.cuda
@skip_without_cuda
@pytest.mark.parametrize("on_cuda,fused", [("y", True), ("x_lengths", True), ("x_lengths", False)])
def test_cuda_argument_with_x_on_cpu_is_named(on_cuda, fused):
    """x on the CPU and y (fused) or x_lengths on CUDA: the error must name them (unfused y, or x on CUDA, do)."""
    y = Y.cuda() if on_cuda == "y" else Y
    lengths = torch.tensor([5, 3], device="cuda" if on_cuda == "x_lengths" else "cpu")
    with pytest.raises((ValueError, TypeError, RuntimeError), match=rf"(?<!\w){on_cuda}(?!\w)"):
        sdtw_torch.soft_dtw(X, y, x_lengths=lengths, fused=fused)


@pytest.mark.cuda
@skip_without_cuda
def test_check_inputs_checks_the_band_against_device_lengths():
    """Pair 1 (1 step against 4) has no path in a band of 1: check_inputs names the band."""
    x = X.cuda().requires_grad_()
    with pytest.raises(ValueError, match="bandwidth"):
        sdtw_torch.soft_dtw(x, Y.cuda(), bandwidth=1, x_lengths=torch.tensor([5, 1], device="cuda"),
                            check_inputs=True)


# The set APIs (cdist_soft_dtw, softdtw_barycenter, SoftDTWKMeans): random sets, each draw valid
# or with one invalid argument of the families users hit (empty or mis-shaped weights, float16 on
# the CPU, a NaN in the data or the initial centres, the data, the centres or the lengths on the
# meta device, lengths out of range).
# An invalid draw must raise an error naming the argument; a valid one returns finite results.

SET_FAULTS = [None, None, None, "weights_empty", "weights_shape", "weights_negative", "float16", "nan_X", "nan_init",
              "meta_lengths", "lengths_range", "too_many_clusters", "meta_X", "meta_init"]


def draw_set_call(rng):
    api = pick(rng, ["cdist", "barycenter", "kmeans"])
    B, N, F = int(rng.integers(2, 5)), int(rng.integers(2, 6)), int(rng.integers(1, 3))
    fault = pick(rng, [f for f in SET_FAULTS if f not in {
        "cdist": ("weights_empty", "weights_shape", "weights_negative", "float16", "nan_X", "nan_init",
                  "too_many_clusters", "meta_X", "meta_init"),
        "barycenter": ("nan_X", "too_many_clusters"),
        "kmeans": ("weights_empty", "weights_shape", "weights_negative")}[api]])
    gen = torch.Generator().manual_seed(int(rng.integers(2**31)))
    X = torch.randn(B, N, F, generator=gen, dtype=pick(rng, [torch.float32, torch.float64]))
    lengths = torch.randint(1, N + 1, (B,), generator=gen) if rng.random() < 0.4 else None
    kwargs, bad = {}, None
    if fault == "float16":
        X, bad = X.half(), "X"
    elif fault == "nan_X":
        X[int(rng.integers(B)), 0, 0], bad = math.nan, "X"  # row 0 is inside any length
    elif fault in ("meta_lengths", "lengths_range"):
        lengths = torch.full((B,), N, dtype=torch.int64)
        if fault == "meta_lengths":
            lengths = lengths.to("meta")
        else:
            lengths[int(rng.integers(B))] = pick(rng, [0, N + 1])
        bad = "X_lengths"
    elif fault == "meta_X":
        X, bad = X.to("meta"), "X"
    if api == "barycenter":
        K = int(rng.integers(1, 3))
        kwargs["weights"] = torch.rand(K, B, generator=gen) + 0.1
        if fault == "weights_empty":
            kwargs["weights"], bad = torch.ones(0, B), "weights"
        elif fault == "weights_shape":
            kwargs["weights"], bad = torch.ones(K, B + 1), "weights"
        elif fault == "weights_negative":
            kwargs["weights"][0, 0], bad = -1.0, "weights"
        kwargs["init"] = torch.randn(K, N, F, generator=gen)
        if fault == "nan_init":
            kwargs["init"][0, 0, 0], bad = math.nan, "init"
        elif fault == "meta_init":
            kwargs["init"], bad = kwargs["init"].to("meta"), "init"
    if api == "kmeans":
        K = B + 1 if fault == "too_many_clusters" else int(rng.integers(1, B))
        bad = "n_clusters" if fault == "too_many_clusters" else bad
        if fault in ("nan_init", "meta_init"):
            init = torch.randn(K, N, F, generator=gen, dtype=X.dtype)
            init[-1, -1, -1], bad = math.nan, "init"
            kwargs["init"] = init.to("meta") if fault == "meta_init" else init
    return dict(api=api, X=X, lengths=lengths, kwargs=kwargs, K=kwargs.get("init", X).shape[0] if api != "kmeans"
                else K, bad=bad, fault=fault)


def call_set(d):
    if d["api"] == "cdist":
        return sdtw_torch.cdist_soft_dtw(d["X"], gamma=0.5, X_lengths=d["lengths"])
    if d["api"] == "barycenter":
        return sdtw_torch.softdtw_barycenter(d["X"], gamma=0.5, max_iter=2, X_lengths=d["lengths"], **d["kwargs"])
    model = sdtw_torch.SoftDTWKMeans(d["K"], gamma=0.5, max_iter=2, barycenter_iter=2, random_state=0,
                                     init=d["kwargs"].get("init", "k-means++"))
    return model.fit(d["X"], X_lengths=d["lengths"]).cluster_centers_


def test_fuzz_set_apis_cpu():
    failures, outcomes = [], {"raised": 0, "returned": 0}
    for index in range(300):
        d = draw_set_call(np.random.default_rng([SEED, 1, index]))
        where = f"SDTW_FUZZ_SEED={SEED} set draw {index}: {d['api']} fault={d['fault']} X={tuple(d['X'].shape)}" \
                f" {d['X'].dtype}"
        try:
            out = call_set(d)
        except Exception as err:  # noqa: BLE001 - every exception is judged below
            outcomes["raised"] += 1
            message = str(err)
            if d["bad"] is None and "left a cluster empty" in message:
                continue  # a documented outcome of k-means on some sets, not a bad argument
            if d["bad"] is None:
                failures.append(f"{where}: valid call raised {type(err).__name__}: {message[:300]}")
            elif not isinstance(err, (ValueError, TypeError)) or not re.search(rf"(?<!\w){d['bad']}(?!\w)", message):
                failures.append(f"{where}: {type(err).__name__} does not name {d['bad']}: {message[:300]}")
            continue
        outcomes["returned"] += 1
        if d["bad"] is not None:
            failures.append(f"{where}: invalid {d['bad']} returned {out!r:.200}")
        elif not torch.isfinite(out).all():
            failures.append(f"{where}: non-finite result from finite inputs")
    print(f"set fuzz: {outcomes}")
    assert not failures, f"{len(failures)} set draws failed:\n" + "\n".join(failures[:20])
    assert min(outcomes.values()) > 50, outcomes


def test_huge_cpu_problem_is_refused_naming_sizes_and_bytes():
    """Sizes whose float64 state cannot fit in the machine are refused before any allocation (at
    once), naming B, N, M and the bytes, also for a stride-0 batch that costs nothing to make."""
    start = time.monotonic()
    x = torch.randn(1, 4, 1).expand(10**12, 4, 1)
    with pytest.raises(RuntimeError, match=r"B = 1000000000000 pairs with N = 4, M = 4 needs at least [0-9.e+]+ GiB"):
        sdtw_torch.soft_dtw(x, x)
    long = torch.randn(10**7, 1, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"N = 10000000, M = 10000000 needs at least .* GiB .* of memory"):
        sdtw_torch.soft_dtw(long, long.detach())
    with pytest.raises(RuntimeError, match=r"N = 10000000, M = 10000000"):
        sdtw_torch.alignment(long.detach(), long.detach())
    assert time.monotonic() - start < 5


@pytest.mark.parametrize("where", ["x_lengths", "y_lengths", "y"])
@pytest.mark.parametrize("api", ["soft_dtw", "soft_dtw_cost", "alignment"])
def test_meta_argument_beside_cpu_inputs_is_named(api, where):
    """A meta tensor among CPU inputs routes the call to the fake kernels: an error naming it, not
    uninitialised memory as the result."""
    if api == "soft_dtw_cost" and where == "y":
        pytest.skip("soft_dtw_cost has no y")
    lengths = {where: torch.tensor([4, 3], device="meta")} if where != "y" else {}
    y = Y.to("meta") if where == "y" else Y
    with pytest.raises(RuntimeError, match=rf"(?<!\w){where}(?!\w).*meta"):
        if api == "soft_dtw_cost":
            sdtw_torch.soft_dtw_cost(torch.rand(2, 5, 4, dtype=torch.float64), **lengths)
        else:
            getattr(sdtw_torch, api)(X, y, **lengths)
    # All on the meta device (shape inference) still works.
    out = sdtw_torch.soft_dtw(X.to("meta"), Y.to("meta"))
    assert out.device.type == "meta" and out.shape == (2,)


def test_integer_cost_from_callable_dist_names_dist():
    with pytest.raises(TypeError, match="callable dist"):
        sdtw_torch.soft_dtw(X, Y, dist=integer_cost)
