"""minimize_lbfgs: L-BFGS with the stopping rule of scipy's L-BFGS-B (no bounds), which tslearn's and
mblondel's soft-DTW barycenters run through scipy.optimize.minimize(method="L-BFGS-B", tol=tol).

Same as L-BFGS-B without bounds: the quasi-Newton direction of the last MEMORY pairs (s, y), scaled
by s'y / y'y (L-BFGS-B's theta); a pair with s'y <= eps * |g's| is skipped; the first step is
1 / ||d|| and every later one 1; the line search asks for the strong Wolfe conditions with
L-BFGS-B's constants; when it fails the memory is dropped and the step retried from the steepest
descent, and a failure with no memory stops. It stops, as minimize(tol=tol) sets ftol = gtol = tol,
after the iteration at which
  - max_i |g_i| <= tol (checked at the start too),
  - (f_old - f) <= tol * max(|f_old|, |f|, 1),
  - max_iter iterations or more than MAX_EVALUATIONS evaluations were made.
The line search is Moré and Thuente's (line_search.py), as L-BFGS-B's.
"""
import torch

from .line_search import MoreThuente

MEMORY = 10  # L-BFGS-B's maxcor, scipy's default
MAX_LINE_SEARCH = 20  # scipy's maxls
MAX_EVALUATIONS = 15000  # scipy's maxfun
SUFFICIENT_DECREASE, CURVATURE, STEP_TOLERANCE = 1e-3, 0.9, 0.1  # what L-BFGS-B hands dcsrch
MAX_STEP = 1e10  # L-BFGS-B's largest step without bounds
EPS = torch.finfo(torch.float64).eps  # L-BFGS-B's epsmch for the skip test


def _direction(g, pairs):
    """-H g by the two-loop recursion, H0 = (s'y / y'y) I of the newest pair (I without pairs)."""
    q = -g
    alphas = []
    for s, y, rho in reversed(pairs):
        alpha = rho * float(s.dot(q))
        q = q - alpha * y
        alphas.append(alpha)
    if pairs:
        s, y, _ = pairs[-1]
        q = q * (float(s.dot(y)) / float(y.dot(y)))
    for (s, y, rho), alpha in zip(pairs, reversed(alphas)):
        q = q + (alpha - rho * float(y.dot(q))) * s
    return q


def minimize_lbfgs(f_and_grad, x, max_iter, tol):
    """Minimise f from x (a 1-D tensor); f_and_grad(x) -> (f as a float, gradient like x).

    Returns (x, iterations, evaluations, reason): reason is 'gradient', 'reduction', 'max_iter',
    'evaluations' or 'line search' (scipy's PGTOL, REL_REDUCTION_OF_F, the two limits and
    ABNORMAL_TERMINATION_IN_LNSRCH).
    """
    x = x.detach().clone()
    if max_iter == 0:  # tslearn returns its init without a call to scipy
        return x, 0, 0, "max_iter"
    f, g = f_and_grad(x)
    evaluations, iterations = 1, 0
    if float(g.abs().max()) <= tol:
        return x, 0, evaluations, "gradient"

    pairs = []
    while True:
        d = _direction(g, pairs)
        found, used = _line_search(f_and_grad, x, f, g, d, iterations == 0)
        evaluations += used
        if found is None:
            if not pairs:
                return x, iterations, evaluations, "line search"
            pairs = []
            continue
        step, x_new, f_new, g_new = found
        s = x_new - x
        y = g_new - g
        gtd = float(g.dot(d))
        x, f_old, f, g = x_new, f, f_new, g_new
        iterations += 1
        if iterations >= max_iter:
            return x, iterations, evaluations, "max_iter"
        if evaluations > MAX_EVALUATIONS:
            return x, iterations, evaluations, "evaluations"
        if float(g.abs().max()) <= tol:
            return x, iterations, evaluations, "gradient"
        if f_old - f <= tol * max(abs(f_old), abs(f), 1.0):
            return x, iterations, evaluations, "reduction"
        sy = float(s.dot(y))
        if sy > EPS * (-gtd * step):
            pairs = (pairs + [(s, y, 1.0 / sy)])[-MEMORY:]


def _line_search(f_and_grad, x, f, g, d, first):
    """((step, x + step d, f and gradient there) or None where L-BFGS-B's search fails (not a descent
    direction, or no acceptable step within MAX_LINE_SEARCH evaluations), evaluations made)."""
    gtd = float(g.dot(d))
    if not gtd < 0:
        return None, 0
    step = min(1.0 / float(d.norm()), MAX_STEP) if first else 1.0
    search = MoreThuente(f, gtd, step, SUFFICIENT_DECREASE, CURVATURE, STEP_TOLERANCE, 0.0, MAX_STEP)
    for used in range(1, MAX_LINE_SEARCH + 1):
        x_new = x + search.stp * d
        f_new, g_new = f_and_grad(x_new)
        if search.next(f_new, float(g_new.dot(d))) is not None:
            return (search.stp, x_new, f_new, g_new), used
    return None, MAX_LINE_SEARCH
