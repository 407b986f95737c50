"""minimize_lbfgs and its Moré-Thuente line search against scipy's L-BFGS-B (no bounds) on the
Rosenbrock function, whose curved valley makes the line search backtrack and interpolate: the same
iterations, evaluations, stopping reason and point. scipy is a test oracle only, not a dependency:
without it the comparisons are skipped by name and the rest runs."""
import numpy as np
import pytest
import torch

from sdtw_torch.lbfgs import minimize_lbfgs
from sdtw_torch.line_search import MoreThuente

REASONS = {"CONVERGENCE: REL_REDUCTION_OF_F_<=_FACTR*EPSMCH": "reduction",
           "CONVERGENCE: NORM_OF_PROJECTED_GRADIENT_<=_PGTOL": "gradient",
           "STOP: TOTAL NO. of ITERATIONS REACHED LIMIT": "max_iter"}


def rosen(z):
    return float(np.sum(100.0 * (z[1:] - z[:-1] ** 2) ** 2 + (1.0 - z[:-1]) ** 2))


def rosen_der(z):
    g = np.zeros_like(z)
    g[:-1] = -400.0 * z[:-1] * (z[1:] - z[:-1] ** 2) - 2.0 * (1.0 - z[:-1])
    g[1:] += 200.0 * (z[1:] - z[:-1] ** 2)
    return g


def rosenbrock(x):
    return float(rosen(x.numpy())), torch.from_numpy(rosen_der(x.numpy()))


def start(size, seed):
    return [-1.2, 1.0] if size == 2 else np.random.default_rng(seed).normal(size=size).tolist()


@pytest.mark.parametrize("size,seed", [(2, 0), (5, 1), (10, 2)])
@pytest.mark.parametrize("tol,max_iter", [(1e-3, 500), (1e-6, 500), (1e-10, 500), (1e-3, 12)])
def test_same_iterates_as_scipys_lbfgsb(size, seed, tol, max_iter):
    minimize = pytest.importorskip("scipy.optimize").minimize
    x0 = start(size, seed)
    expected = minimize(lambda z: (rosen(z), rosen_der(z)), np.array(x0), jac=True, method="L-BFGS-B", tol=tol,
                        options=dict(maxiter=max_iter))
    x, iterations, evaluations, reason = minimize_lbfgs(rosenbrock, torch.tensor(x0, dtype=torch.float64), max_iter,
                                                        tol)
    message = expected.message if isinstance(expected.message, str) else expected.message.decode()
    assert (iterations, evaluations, reason) == (expected.nit, expected.nfev, REASONS[message])
    # Rounding differs (L-BFGS-B's compact matrices, our two loops) and Rosenbrock amplifies it.
    np.testing.assert_allclose(x.numpy(), expected.x, rtol=0, atol=1e-4)
    assert abs(rosen(x.numpy()) - expected.fun) <= 1e-6 * max(1.0, abs(expected.fun))


def test_stops_at_once_on_a_small_gradient_or_max_iter_zero():
    x0 = torch.ones(3, dtype=torch.float64)  # Rosenbrock's minimum: gradient 0
    assert minimize_lbfgs(rosenbrock, x0, 10, 1e-5)[1:] == (0, 1, "gradient")
    assert minimize_lbfgs(rosenbrock, x0 + 1, 0, 1e-5)[1:] == (0, 0, "max_iter")


def test_a_gradient_that_does_not_match_f_ends_in_line_search():
    """f never decreases along -g: the search fails with no memory, scipy's ABNORMAL_TERMINATION."""
    x, iterations, _, reason = minimize_lbfgs(lambda x: (float(x.dot(x)), -x), torch.ones(2, dtype=torch.float64),
                                              50, 1e-8)
    assert (iterations, reason) == (0, "line search")
    torch.testing.assert_close(x, torch.ones(2, dtype=torch.float64))


def test_line_search_accepts_a_wolfe_step_and_refuses_an_ascent():
    # f(t) = (t - 2)^2 from t = 0: f'(0) = -4; t = 2 satisfies both conditions at the first trial.
    search = MoreThuente(4.0, -4.0, 2.0, 1e-3, 0.9, 0.1, 0.0, 1e10)
    assert search.next(0.0, 0.0) == "convergence" and search.stp == 2.0
    # t = 10 overshoots (f = 64, f' = 16): the cubic through both ends of a parabola is the parabola,
    # so the next trial is its minimiser.
    search = MoreThuente(4.0, -4.0, 10.0, 1e-3, 0.9, 0.1, 0.0, 1e10)
    assert search.next(64.0, 16.0) is None and abs(search.stp - 2.0) < 1e-12
    with pytest.raises(ValueError, match=r"descent direction \(got f'\(0\) = 1.0\)"):
        MoreThuente(0.0, 1.0, 1.0, 1e-3, 0.9, 0.1, 0.0, 1e10)
