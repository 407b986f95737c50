"""The C++ module sdtw::nn::SoftDTW and the Python module sdtw_torch.SoftDTW give the same values and
gradients on the same inputs: lengths, NaN in the padding, bands, normalize, every reduction and
dist. The C++ test FrontAgreement.CppModuleOnEveryOption (pytorch/tests/front_agreement_test.cpp)
computes the cases and writes them, with their inputs and options, to a file read here."""
import os
import subprocess
from pathlib import Path

import pytest
import torch

import sdtw_torch

CPP_TESTS = Path(sdtw_torch.LIBRARY_PATH).parent / "tests" / "sdtw_torch_tests"


@pytest.fixture(scope="module")
def cpp_cases(tmp_path_factory):
    if not CPP_TESTS.is_file():
        pytest.skip(f"the C++ tests are not built next to the library ({CPP_TESTS})")
    path = tmp_path_factory.mktemp("front") / "cases.pt"
    run = subprocess.run([str(CPP_TESTS), "--gtest_filter=FrontAgreement.*"], capture_output=True, text=True,
                         env={**os.environ, "SDTW_FRONT_CASES": str(path)})
    assert run.returncode == 0 and path.is_file(), run.stdout[-3000:] + run.stderr[-3000:]
    return torch.load(str(path), weights_only=False)  # our own file; its dicts carry C++ type tags


def test_python_module_agrees_with_the_cpp_module(cpp_cases):
    x, y = cpp_cases["x"], cpp_cases["y"]
    assert torch.isnan(x).any() and torch.isnan(y).any()  # NaN in the padding, which both must ignore
    x_lengths, y_lengths = cpp_cases["x_lengths"].tolist(), cpp_cases["y_lengths"].tolist()  # lists: converted
    cases = cpp_cases["cases"]
    assert len(cases) == 48
    for case in cases:
        options = {k: case[k] for k in ("gamma", "bandwidth", "normalize", "dist", "fused", "reduction")}
        xg, yg = x.clone().requires_grad_(), y.clone().requires_grad_()
        values = sdtw_torch.SoftDTW(**options)(xg, yg, x_lengths, y_lengths)
        values.sum().backward()
        for name, got, want in (("values", values.detach(), case["values"]), ("grad_x", xg.grad, case["grad_x"]),
                                ("grad_y", yg.grad, case["grad_y"])):
            torch.testing.assert_close(got, want, rtol=0, atol=0, msg=lambda m: f"{options} {name}: {m}")
