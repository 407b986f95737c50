"""The user's training step: NaN/Inf stay in their pair, check_inputs names the bad value, and on
CUDA the launch count, step memory and AMP + GradScaler. CUDA tests are skipped by name without a GPU."""
import math
from types import SimpleNamespace

import pytest
import torch

import sdtw_results
import sdtw_torch
from conftest import requires_cuda

DEVICES = ["cpu", pytest.param("cuda", marks=requires_cuda)]
skip_without_cuda = requires_cuda[1]


def leaves(*tensors):
    return [t.detach().clone().requires_grad_(True) for t in tensors]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("fused", [True, False])
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_value_stays_in_its_pair(device, fused, bad):
    g = torch.Generator().manual_seed(7)
    x0 = torch.randn(4, 37, 3, generator=g, dtype=torch.float64).to(device)
    y0 = torch.randn(4, 29, 3, generator=g, dtype=torch.float64).to(device)
    clean_x, clean_y = leaves(x0, y0)
    clean = sdtw_torch.soft_dtw(clean_x, clean_y, gamma=0.5, fused=fused)
    clean.sum().backward()
    x0_bad = x0.clone()
    x0_bad[2, 11, 1] = bad
    x, y = leaves(x0_bad, y0)
    values = sdtw_torch.soft_dtw(x, y, gamma=0.5, fused=fused)
    values.sum().backward()
    assert not torch.isfinite(values[2])
    assert not torch.isfinite(x.grad[2]).all()
    others = [0, 1, 3]
    torch.testing.assert_close(values[others], clean.detach()[others], rtol=1e-12, atol=0)
    torch.testing.assert_close(x.grad[others], clean_x.grad[others], rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(y.grad[others], clean_y.grad[others], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
def test_finite_inputs_give_finite_results(device):
    g = torch.Generator().manual_seed(3)
    x, y = leaves(torch.randn(3, 65, 4, generator=g).to(device), torch.randn(3, 40, 4, generator=g).to(device))
    for fused in (True, False):
        values = sdtw_torch.soft_dtw(x, y, gamma=0.01, fused=fused)
        values.sum().backward()
        assert torch.isfinite(values).all() and torch.isfinite(x.grad).all() and torch.isfinite(y.grad).all()
        x.grad = y.grad = None


@pytest.mark.parametrize("device", DEVICES)
def test_check_inputs_names_argument_batch_and_position(device):
    x = torch.randn(3, 10, 2, device=device)
    y = torch.randn(3, 12, 2, device=device)
    y[1, 7, 0] = math.nan
    with pytest.raises(ValueError, match=r"y has a non-finite value \(nan\) at batch index 1, time step 7, feature 0"):
        sdtw_torch.soft_dtw(x, y, check_inputs=True)
    with pytest.raises(ValueError, match=r"y has a non-finite value"):
        sdtw_torch.SoftDTW(check_inputs=True)(x, y)
    D = torch.rand(2, 5, 6, device=device)
    D[1, 4, 2] = math.inf
    with pytest.raises(ValueError, match=r"D has a non-finite value \(inf\) at batch index 1, row 4, column 2"):
        sdtw_torch.soft_dtw_cost(D, check_inputs=True)
    # Outside the lengths a non-finite value is padding: no error, and the result is finite.
    values = sdtw_torch.soft_dtw_cost(D, x_lengths=[5, 4], check_inputs=True)
    assert torch.isfinite(values).all()
    unbatched = torch.randn(6, 2, device=device)
    unbatched[3, 1] = -math.inf
    with pytest.raises(ValueError, match=r"x has a non-finite value \(-inf\) at time step 3, feature 1"):
        sdtw_torch.soft_dtw(unbatched, torch.randn(4, 2, device=device), check_inputs=True)


@pytest.mark.parametrize("device", DEVICES)
def test_check_inputs_checks_lengths(device):
    x, y = torch.randn(2, 6, 2, device=device), torch.randn(2, 5, 2, device=device)
    with pytest.raises(ValueError, match=r"x_lengths\[1\] = 9 is out of range \[1, 6\]"):
        sdtw_torch.soft_dtw(x, y, x_lengths=torch.tensor([6, 9], device=device), check_inputs=True)


def test_no_state_is_kept_without_gradient():
    x, y = torch.randn(2, 9, 3), torch.randn(2, 8, 3)
    values = sdtw_torch.soft_dtw(x, y)
    assert values.grad_fn is None
    xg, yg = leaves(x, y)
    with torch.no_grad():
        assert sdtw_torch.soft_dtw(xg, yg).grad_fn is None


def _kernel_launches(fn):
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    names = [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CPU]
    return sum("LaunchKernel" in n for n in names), sum("Memset" in n for n in names)


@pytest.mark.cuda
@skip_without_cuda
@pytest.mark.parametrize("fused,most", [(True, 4), (False, 6)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
def test_launches_per_step(fused, most, dtype):
    """Kernel launches of one step's loss forward + backward (gradients set to None first, as
    zero_grad does): fused: forward, .sum(), the seed of backward, backward with its gradient (the
    expanded upstream gradient is read in place); unfused: the cost, forward, .sum(), the seed,
    backward (E), the cost's backward. One memset: the forward's new scratch (the backward's is
    left zero by the forward). bfloat16 / float16 leaves under autocast: the same, as the kernels
    read and write those dtypes (no casts)."""
    x, y = leaves(torch.randn(16, 128, 64, device="cuda", dtype=dtype), torch.randn(16, 128, 64, device="cuda", dtype=dtype))
    loss_fn = sdtw_torch.SoftDTW(fused=fused)

    def step():
        x.grad = y.grad = None
        with torch.autocast("cuda", dtype=dtype, enabled=dtype != torch.float32):
            loss = loss_fn(x, y).sum()
        loss.backward()

    step()

    launches, memsets = _kernel_launches(step)
    assert launches <= most and memsets <= 1, (launches, memsets)


@pytest.mark.cuda
@skip_without_cuda
@pytest.mark.parametrize("fused,bound", [(True, 4.3), (False, 8.4)])
def test_step_memory_per_cell(fused, bound):
    """Fused: the state (4 B/cell, strips overlapping by their skew) and the ring of borders (0.24
    B/cell at N = 1024). Unfused: the state and E (4 B/cell); the cost D (4 B/cell more) is freed
    after the forward, as its backward keeps only D's shape."""
    b, n, d = 16, 1024, 32
    x0, y0 = torch.randn(b, n, d, device="cuda"), torch.randn(b, n, d, device="cuda")
    loss_fn = sdtw_torch.SoftDTW(fused=fused)
    x, y = leaves(x0, y0)
    loss_fn(x, y).sum().backward()
    x, y = leaves(x0, y0)
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    loss_fn(x, y).sum().backward()
    torch.cuda.synchronize()
    grads = 2 * x.numel() * 4
    per_cell = (torch.cuda.max_memory_allocated() - before - grads) / (b * n * n)
    assert per_cell <= bound


@pytest.mark.cuda
@skip_without_cuda
def test_amp_grad_scaler_skips_an_inf_step_and_training_goes_on():
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 8).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    # A small initial scale, so that only the injected inf (not the scale's calibration) skips a step.
    scaler_class = torch.amp.GradScaler if hasattr(torch, "amp") and hasattr(torch.amp, "GradScaler") \
        else torch.cuda.amp.GradScaler
    scaler = scaler_class(init_scale=16.0, growth_interval=1000)
    loss_fn = sdtw_torch.SoftDTW(gamma=0.1, reduction="mean")
    x, y = torch.randn(4, 30, 8, device="cuda"), torch.randn(4, 25, 8, device="cuda")
    losses = []
    for step in range(6):
        inputs = x.clone()
        if step == 2:
            inputs[1, 3, 0] = math.inf
        before = [p.detach().clone() for p in model.parameters()]
        with torch.autocast("cuda", dtype=torch.float16):
            loss = loss_fn(model(inputs), y)
        scaler.scale(loss).backward()
        scale = scaler.get_scale()
        scaler.step(opt)
        scaler.update()
        assert scaler.get_scale() == (scale / 2 if step == 2 else scale)
        opt.zero_grad()
        changed = any(not torch.equal(b, p) for b, p in zip(before, model.parameters()))
        assert changed == (step != 2), f"step {step}: parameters changed={changed}"
        if step != 2:
            losses.append(loss.item())
    assert all(math.isfinite(v) for v in losses) and losses[-1] < losses[0]
    assert torch.isfinite(torch.cat([p.flatten() for p in model.parameters()])).all()


def _bench(name):
    import importlib
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    return importlib.import_module(name)


def _report():
    return _bench("step_report")


META = {"gpu": "g", "commit": "c", "dirty": "true", "date": "d"}


def _row(**values):
    row = dict(B="16", N="128", M="128", D="64", api="module", mode="fused",
               precision="float32", time_ms_median="0.2", graph_ms="0.15", eager_over_graph="1.2", compile_ms="0.18",
               compile_over_graph="1.2", launches="4", memsets="1", bytes_per_cell="4.6",
               peak_state_bpc="4.5", peak_cost_bpc="0", peak_alignment_bpc="0", peak_other_bpc="0.05",
               peak_rounding_bpc="0.01", disposition="passed", message="")
    row.update({k: str(v) for k, v in values.items()})
    return row


def test_step_report_verdicts_name_each_broken_bound():
    report = _report()
    assert report.verdicts(_row()) == "ok"
    assert report.verdicts(_row(launches=5)) == "launches > 4"
    assert report.verdicts(_row(mode="unfused", launches=6)) == "ok"
    assert report.verdicts(_row(eager_over_graph=1.31)) == "eager/graph > 1.3"
    assert report.verdicts(_row(compile_over_graph=7)) == "compile/graph > 1.3"
    assert report.verdicts(_row(N=512, bytes_per_cell=4.4, compile_over_graph=7)) == "ok (no time bound here)"
    assert report.verdicts(_row(N=512, bytes_per_cell=4.51)) == "B/cell > 4.5"
    assert report.verdicts(_row(N=512, mode="unfused", launches=6, bytes_per_cell=12.49)) == "ok (no time bound here)"
    # 36 MiB + 1 KiB over 32 x 512 x 512 cells is 4.50012 B/cell, which the column rounds to 4.5
    over = _row(B=32, N=512, M=512, bytes_per_cell="4.5", step_bytes=46138368, xy_bytes=8388608)
    assert report.verdicts(over) == "B/cell > 4.5"


def test_step_report_states_double_backward_rows_without_first_order_bounds():
    report = _report()
    row = _row(api=report.SECOND_ORDER_API, N=512, launches=12, bytes_per_cell=40, eager_over_graph=2)
    assert report.verdicts(row) == "stated, no bound (second order)"
    assert report.verdicts(dict(row, disposition="error")) == "error"
    text = report.markdown([_row(), row], META)
    assert "| module-double-backward |" in text and "create_graph=True" in text


def test_double_backward_step_is_a_hessian_vector_product():
    """step.py's second-order step leaves in x.grad the product of the loss's Hessian in x with v (the
    same as autograd's double backward written out), on the CPU."""
    step = _bench("step")
    torch.manual_seed(0)
    x0, y0, v = torch.randn(2, 7, 3, dtype=torch.float64), torch.randn(2, 5, 3, dtype=torch.float64), \
        torch.randn(2, 7, 3, dtype=torch.float64)
    loss_fn = lambda x, y: sdtw_torch.soft_dtw(x, y, gamma=0.7, fused=False)  # noqa: E731
    x, y = step.leaves(x0, y0)
    step.make_double_backward_step(loss_fn, v)(x, y)
    flat = lambda z: torch.autograd.grad(loss_fn(z, y0).sum(), z, create_graph=True)[0]  # noqa: E731
    hessian = torch.autograd.functional.jacobian(flat, x0.clone())
    expected = (hessian * v[..., None, None, None]).sum((0, 1, 2))
    assert torch.allclose(x.grad, expected, rtol=1e-9, atol=1e-12)
    assert y.grad is not None and torch.isfinite(y.grad).all()


def test_step_report_accounts_for_the_traced_bytes():
    report = _report()
    state, cost, alignment, other, rounding, over_model = report.account(_row(state_bytes_per_cell="4.4"))
    assert (state, cost, alignment, other, rounding) == (4.5, 0.0, 0.0, 0.05, 0.01)
    assert over_model == pytest.approx(0.1)  # traced state less the workspace model
    old = _row(mode="unfused", bytes_per_cell=12.6, peak_state_bpc="", state_bytes_per_cell="4.5")
    assert report.account(old)[:3] == [4.5, 4.0, 4.0] and math.isnan(report.account(old)[-1])
    failed = _row(mode="unfused", disposition="error", peak_state_bpc="", bytes_per_cell="")
    assert all(math.isnan(v) for v in report.account(failed))  # no model numbers for a row that measured nothing
    text = report.markdown([_row(state_bytes_per_cell="4.4")], META)
    assert "| eager − graph ms |" in text and "| state − model | check |" in text and "unexplained" not in text
    assert "| 0.15 | 0.05 | 0.18 |" in text  # graph, eager − graph, compile


def test_step_report_states_warmup_and_timed_steps():
    report = _report()
    text = report.markdown([_row(warmup=7, reps=40)], META)
    assert "7 untimed warm-up steps" in text and "then 40 timed steps" in text
    assert "outside the compiled region" in text
    assert "counts are not recorded in this file" in report.markdown([_row()], META)
    assert text.startswith("# The user's training step") and "GPU g, commit c (modified tree), d." in text


def test_step_fmt_keeps_ten_digits():
    step = _bench("step")
    assert step.fmt(4.500120163) == "4.500120163" and step.fmt(None) == "" and step.fmt(float("nan")) == ""
    assert step.COLUMNS[:len(sdtw_results.COLUMNS)] == sdtw_results.COLUMNS
    assert "precision" in step.EXTRA_COLUMNS and "eager_ms" not in step.COLUMNS


def test_peak_parts_sorts_the_bytes_live_at_the_traced_peak():
    """A synthetic allocation trace: the peak is the most bytes live at once; each live block goes to
    the first PEAK_PARTS entry its frames name, else 'other', and an 'xy' match larger than an x- or
    y-shaped tensor goes on to the next entry; rounding is the measured peak less it."""
    step = _bench("step")

    def alloc(addr, size, *names):
        return {"action": "alloc", "addr": addr, "size": size, "frames": [{"name": n} for n in names]}

    trace = [
        alloc(1, 100, "at::native::_to_copy"),
        alloc(2, 400, "python", "sdtw::sqeuclidean_forward_cuda"),
        alloc(3, 300, "sdtw::sqeuclidean_cost_cuda"),
        alloc(6, 10, "sdtw::sqeuclidean_cost_backward_cuda"),  # xy before alignment: first match wins
        alloc(4, 50),
        alloc(7, 120, "at::native::_to_copy", "sdtw::cost_backward_cuda"),  # too large for xy: alignment
        alloc(8, 130, "at::native::_to_copy"),  # too large for xy, no other match: other
        {"action": "free_requested", "addr": 3, "size": 300},
        {"action": "free_requested", "addr": 99, "size": 7},  # not traced: ignored
        alloc(5, 200, "sdtw::cost_backward_cuda"),  # after the peak: not in it
    ]
    parts = step.peak_parts(trace, 1200, xy_limit=100)
    assert parts == {"xy": 110, "alignment": 120, "cost": 300, "state": 400, "other": 180, "rounding": 90}
    assert step.peak_parts([], 64, xy_limit=100) == {"xy": 0, "alignment": 0, "cost": 0, "state": 0, "other": 0, "rounding": 64}


def test_step_report_puts_torchs_own_loss_in_its_own_table():
    report = _report()
    text = report.markdown([_row(), _row(api="torch-mse", mode="", time_ms_median="0.31", launches="5")], META)
    main, reference = text.split("## The same step with torch's own loss")
    assert "torch-mse" not in main and "| 16 | 128 | 64 | 0.31" in reference
    assert "| eager − graph ms |" in reference and "| 0.15 | 0.16 |" in reference  # 0.31 - 0.15
    assert "from below" not in reference and "not ratios" in reference


def test_step_row_is_a_row_of_the_schema(monkeypatch, tmp_path):
    """run_point's plumbing on the CPU, its GPU measurements stood in for: every key it writes is a
    column of step.csv, the inputs are the one seed scheme's, and the time columns are the eager step's
    nearest-rank spread."""
    step = _bench("step")
    seen = {}
    make_inputs = sdtw_results.make_inputs

    def cpu_inputs(seed, b, n, m, d, dtype, device):
        seen["seed"], seen["device"] = seed, device
        return make_inputs(seed, b, n, m, d, dtype=dtype)
    monkeypatch.setattr(step.sdtw_results, "make_inputs", cpu_inputs)
    for name in ("current_device", "empty_cache", "reset_peak_memory_stats"):
        monkeypatch.setattr(step.torch.cuda, name, lambda: 0)
    monkeypatch.setattr(step, "eager_times", lambda *a: [float(v) for v in range(30, 0, -1)])
    monkeypatch.setattr(step, "graph_times", lambda *a: [2.0] * 30)
    monkeypatch.setattr(step, "profile_loss", lambda *a: (1.5, 4, 1))
    parts = {"xy": 1 << 20, "state": 3 << 20, "cost": 0, "alignment": 0, "other": 0, "rounding": 0}
    monkeypatch.setattr(step, "step_memory", lambda *a: (4 << 20, 6 << 20, 1 << 20, parts))
    monkeypatch.setattr(step.sdtw_torch._library, "cuda_state_bytes", lambda *a: 3 << 20, raising=False)
    args = SimpleNamespace(grid="default", warmup=5, steps=30, compile_points=())
    row = step.run_point(args, 2, 16, 3, "module", "fused", "float32")
    assert row["disposition"] == "passed", row.get("message")
    assert seen == {"seed": sdtw_results.point_seed(0, 2, 16, 16, 3), "device": "cuda"} and row["seed"] == seen["seed"]
    assert (row["time_ms_median"], row["time_ms_p10"], row["time_ms_p90"], row["reps"]) == (15.0, 3.0, 27.0, 30)
    assert (row["step_peak_mb"], row["abs_peak_mb"], row["eager_over_graph"]) == (4.0, 6.0, 7.5)
    assert (row["impl"], row["api"], row["mode"], row["dtype"], row["gpu"]) == ("ours_fused", "module", "fused",
                                                                                 "float32", "0")
    with sdtw_results.ResultsWriter(tmp_path / "step.csv", "step", {}, step.EXTRA_COLUMNS) as writer:
        writer.append(row)  # refuses a key outside the columns
    assert sdtw_results.read_results(tmp_path / "step.csv")[0][0]["bytes_per_cell"] == "6144"  # (4 - 1) MiB / 512 cells


def test_no_compile_runs_no_point_through_torch_compile(monkeypatch, tmp_path):
    """--no-compile leaves torch.compile (and torch's own loss beside it) out of every point; with
    --compile-points as well it is refused by name."""
    step = _bench("step")
    seen = []
    monkeypatch.setattr(step.torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(step.sdtw_results, "collect", lambda *a, **k: {})
    monkeypatch.setattr(step, "run_point", lambda args, *point: seen.append((args.compile_points, point)))
    monkeypatch.setattr(step, "record", lambda *a: None)
    assert step.main(["--out", str(tmp_path), "--points", "16,128,64", "--no-compile", "--apis", "module",
                      "--modes", "fused", "--precisions", "float32"]) == 0
    assert seen == [((), (16, 128, 64, "module", "fused", "float32"))]  # no torch-mse point either
    seen.clear()
    step.main(["--out", str(tmp_path), "--points", "16,128,64", "--apis", "module", "--modes", "fused",
               "--precisions", "float32"])
    assert [p[3] for _, p in seen] == ["module", "torch-mse"]  # the default compiles this point
    with pytest.raises(SystemExit):
        step.main(["--out", str(tmp_path), "--no-compile", "--compile-points", "16,128,64"])


def _grid(monkeypatch):
    """step.py's main with run_point recording the points it is given in place of running them."""
    step = _bench("step")
    seen = []
    monkeypatch.setattr(step.torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(step.sdtw_results, "collect", lambda *a, **k: {})
    monkeypatch.setattr(step, "run_point", lambda args, *point: seen.append(point))
    monkeypatch.setattr(step, "record", lambda *a: None)
    return step, seen


def test_default_grid_times_the_double_backward_step_at_its_point(monkeypatch, tmp_path):
    step, seen = _grid(monkeypatch)
    assert step.main(["--out", str(tmp_path), "--no-compile"]) == 0
    second = [p for p in seen if p[3] == step.SECOND_ORDER_API]
    assert second == [(32, 512, 64, step.SECOND_ORDER_API, "fused", "float32")]
    seen.clear()
    step.main(["--out", str(tmp_path), "--no-compile", "--points", "16,128,64", "--second-order-points", "8,64,2"])
    assert [p for p in seen if p[3] == step.SECOND_ORDER_API][0][:3] == (8, 64, 2)


def test_default_grid_times_each_named_dist_at_its_points(monkeypatch, tmp_path):
    step, seen = _grid(monkeypatch)
    assert step.main(["--out", str(tmp_path), "--no-compile"]) == 0
    named = [p for p in seen if p[3] == step.DIST_API]
    assert named == [(b, n, d, step.DIST_API, "fused", "float32", dist)
                     for b, n, d in ((32, 512, 64), (16, 2048, 64))
                     for dist in ("sqeuclidean", "l1", "euclidean", "cosine", "negative_dot")]
    seen.clear()
    step.main(["--out", str(tmp_path), "--no-compile", "--points", "16,128,64"])
    assert not [p for p in seen if p[3] == step.DIST_API]  # given points replace the default grid
    seen.clear()
    step.main(["--out", str(tmp_path), "--no-compile", "--points", "16,128,64", "--dist-points", "4,33,5"])
    assert [p[:3] for p in seen if p[3] == step.DIST_API] == [(4, 33, 5)] * 5


@pytest.mark.parametrize("dist", ["l1", "euclidean", "cosine", "negative_dot"])
def test_named_dist_step_is_the_module_with_that_dist(dist):
    """The loss that a module-dist row times is SoftDTW with that dist, fused: the same values and
    gradients as the functional form with the same keywords (CPU, float64)."""
    step = _bench("step")
    g = torch.Generator().manual_seed(5)
    x0, y0 = torch.randn(3, 9, 4, generator=g, dtype=torch.float64), torch.randn(3, 7, 4, generator=g,
                                                                                 dtype=torch.float64)
    loss_fn = step.loss_function(step.DIST_API, "fused", 0.6, dist)
    assert isinstance(loss_fn, sdtw_torch.SoftDTW)
    x, y = step.leaves(x0, y0)
    step.make_step(loss_fn, "float32")(x, y)
    x_ref, y_ref = step.leaves(x0, y0)
    expected = sdtw_torch.soft_dtw(x_ref, y_ref, gamma=0.6, dist=dist, fused=True)
    expected.sum().backward()
    torch.testing.assert_close(loss_fn(x0, y0), expected.detach(), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(x.grad, x_ref.grad, rtol=1e-12, atol=1e-12)
    plain = sdtw_torch.soft_dtw(x0, y0, gamma=0.6)
    assert not torch.allclose(loss_fn(x0, y0), plain)  # another cost than squared Euclidean


def test_step_report_divides_each_named_dist_by_sqeuclidean():
    report = _report()
    rows = [_row(api=report.DIST_API, B=32, N=512, M=512, dist=d, time_ms_median=t, graph_ms=gr)
            for d, t, gr in (("sqeuclidean", "0.6", "0.5"), ("l1", "0.66", "0.6"), ("cosine", "0.9", "0.55"))]
    rows.append(_row(api=report.DIST_API, B=16, N=2048, M=2048, dist="l1", time_ms_median="3"))
    text = report.markdown([_row()] + rows, META)
    main, named = text.split("## Named costs: the module's step for each dist")
    assert "module-dist" not in main
    assert "| 32 | 512 | 64 | l1 | 0.66 (" in named and "| 0.6 | 1.1 | 1.2 |" in named  # 0.66/0.6, 0.6/0.5
    assert "| 0.55 | 1.5 | 1.1 |" in named  # cosine: 0.9/0.6, 0.55/0.5
    assert "| 16 | 2048 | 64 | l1 | 3 (" in named and "| - | - |" in named  # no sqeuclidean row at that point
    assert "Named costs" not in report.markdown([_row()], META)
