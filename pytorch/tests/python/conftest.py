import pytest
import torch


def pytest_configure(config):
    config.addinivalue_line("markers", "cuda: needs a CUDA device (skipped, by name, without one)")


requires_cuda = [
    pytest.mark.cuda,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device (torch.cuda.is_available() is False)"),
]


@pytest.fixture(autouse=True)
def fixed_torch_seed():
    """Every test starts from the same global RNG state, whatever ran before it or was deselected."""
    torch.manual_seed(0)
