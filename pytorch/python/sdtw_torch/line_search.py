"""MoreThuente: the line search of Moré and Thuente (ACM TOMS 20(3), 1994) as MINPACK-2's dcsrch
states it, the one scipy's L-BFGS-B runs; plain floats, one trial step at a time."""
import math

XTRAPL, XTRAPU = 1.1, 4.0  # how far an unbracketed trial may extrapolate
P5, P66 = 0.5, 0.66  # bisect when the bracket has not shrunk to P66 of its width in two steps


class MoreThuente:
    """Finds a step stp > 0 with f(stp) <= f(0) + ftol stp f'(0) and |f'(stp)| <= gtol |f'(0)|.

    MoreThuente(f0, g0, stp, ftol, gtol, xtol, stpmin, stpmax) takes f and its derivative along the
    direction at 0 and the first trial step; .stp is the step to evaluate, and .next(f, g) with f
    and the derivative there returns None (evaluate the new .stp) or why it stops: 'convergence'
    or one of dcsrch's warnings ('rounding', 'xtol', 'stpmax', 'stpmin'), after which .stp is the
    step last evaluated, the one to accept.
    """

    def __init__(self, f0, g0, stp, ftol, gtol, xtol, stpmin, stpmax):
        if not (g0 < 0 and stpmin <= stp <= stpmax):
            raise ValueError(f"line search: needs a descent direction (got f'(0) = {g0}) and a first step in "
                             f"[{stpmin}, {stpmax}] (got {stp})")
        self.stp, self.ftol, self.gtol, self.xtol, self.stpmin, self.stpmax = stp, ftol, gtol, xtol, stpmin, stpmax
        self.finit, self.ginit, self.gtest = f0, g0, ftol * g0
        self.brackt, self.stage = False, 1
        self.width = stpmax - stpmin
        self.width1 = self.width / P5
        self.stx, self.fx, self.gx = 0.0, f0, g0
        self.sty, self.fy, self.gy = 0.0, f0, g0
        self.stmin, self.stmax = 0.0, stp + XTRAPU * stp

    def next(self, f, g):
        stp = self.stp
        ftest = self.finit + stp * self.gtest
        if self.stage == 1 and f <= ftest and g >= 0:
            self.stage = 2
        stop = None
        if self.brackt and (stp <= self.stmin or stp >= self.stmax):
            stop = "rounding"
        if self.brackt and self.stmax - self.stmin <= self.xtol * self.stmax:
            stop = "xtol"
        if stp == self.stpmax and f <= ftest and g <= self.gtest:
            stop = "stpmax"
        if stp == self.stpmin and (f > ftest or g >= self.gtest):
            stop = "stpmin"
        if f <= ftest and abs(g) <= self.gtol * -self.ginit:
            stop = "convergence"
        if stop is not None:
            return stop
        if self.stage == 1 and f <= self.fx and f > ftest:
            # The modified function psi(stp) = f(stp) - f(0) - ftol stp f'(0) until a step decreases it enough.
            gt = self.gtest
            stx, fxm, gxm, sty, fym, gym, stp = _step(self.stx, self.fx - self.stx * gt, self.gx - gt, self.sty,
                                                      self.fy - self.sty * gt, self.gy - gt, stp, f - stp * gt, g - gt,
                                                      self)
            self.stx, self.fx, self.gx = stx, fxm + stx * gt, gxm + gt
            self.sty, self.fy, self.gy = sty, fym + sty * gt, gym + gt
        else:
            (self.stx, self.fx, self.gx, self.sty, self.fy, self.gy,
             stp) = _step(self.stx, self.fx, self.gx, self.sty, self.fy, self.gy, stp, f, g, self)
        if self.brackt:
            if abs(self.sty - self.stx) >= P66 * self.width1:
                stp = self.stx + P5 * (self.sty - self.stx)
            self.width1 = self.width
            self.width = abs(self.sty - self.stx)
            self.stmin, self.stmax = min(self.stx, self.sty), max(self.stx, self.sty)
        else:
            self.stmin = stp + XTRAPL * (stp - self.stx)
            self.stmax = stp + XTRAPU * (stp - self.stx)
        stp = min(max(stp, self.stpmin), self.stpmax)
        if self.brackt and (stp <= self.stmin or stp >= self.stmax or self.stmax - self.stmin <= self.xtol * self.stmax):
            stp = self.stx  # no progress possible: the best step so far
        self.stp = stp
        return None


def _cubic_gamma(theta, a, b, clip=False):
    s = max(abs(theta), abs(a), abs(b))
    inside = (theta / s) ** 2 - (a / s) * (b / s)
    return s * math.sqrt(max(0.0, inside) if clip else inside)


def _cubic_towards(stp, fp, dp, other, f_other, d_other):
    """The minimiser of the cubic through (stp, fp, dp) and (other, f_other, d_other)."""
    theta = 3 * (f_other - fp) / (stp - other) + d_other + dp
    gamma = _cubic_gamma(theta, d_other, dp)
    if stp > other:
        gamma = -gamma
    r = ((gamma - dp) + theta) / (((gamma - dp) + gamma) + d_other)
    return stp + r * (other - stp)


def _step(stx, fx, dx, sty, fy, dy, stp, fp, dp, search):
    """dcstep: the safeguarded next trial step and the updated interval (stx the best step so far,
    sty the other end); sets search.brackt once a minimiser is bracketed."""
    sgnd = dp * math.copysign(1.0, dx)
    stpmin, stpmax = search.stmin, search.stmax
    if fp > fx:  # higher value: the minimum is bracketed
        theta = 3 * (fx - fp) / (stp - stx) + dx + dp
        gamma = _cubic_gamma(theta, dx, dp)
        if stp < stx:
            gamma = -gamma
        r = ((gamma - dx) + theta) / (((gamma - dx) + gamma) + dp)
        stpc = stx + r * (stp - stx)
        stpq = stx + ((dx / ((fx - fp) / (stp - stx) + dx)) / 2) * (stp - stx)
        stpf = stpc if abs(stpc - stx) < abs(stpq - stx) else stpc + (stpq - stpc) / 2
        search.brackt = True
    elif sgnd < 0:  # lower value, derivatives of opposite signs: bracketed
        stpc = _cubic_towards(stp, fp, dp, stx, fx, dx)
        stpq = stp + (dp / (dp - dx)) * (stx - stp)
        stpf = stpc if abs(stpc - stp) > abs(stpq - stp) else stpq
        search.brackt = True
    elif abs(dp) < abs(dx):  # lower value, same signs, the derivative's magnitude decreases
        theta = 3 * (fx - fp) / (stp - stx) + dx + dp
        gamma = _cubic_gamma(theta, dx, dp, clip=True)
        if stp > stx:
            gamma = -gamma
        r = ((gamma - dp) + theta) / ((gamma + (dx - dp)) + gamma)
        if r < 0 and gamma != 0:
            stpc = stp + r * (stx - stp)
        elif stp > stx:
            stpc = stpmax
        else:
            stpc = stpmin
        stpq = stp + (dp / (dp - dx)) * (stx - stp)
        if search.brackt:
            stpf = stpc if abs(stpc - stp) < abs(stpq - stp) else stpq
            bound = stp + P66 * (sty - stp)
            stpf = min(bound, stpf) if stp > stx else max(bound, stpf)
        else:
            stpf = stpc if abs(stpc - stp) > abs(stpq - stp) else stpq
            stpf = max(stpmin, min(stpmax, stpf))
    else:  # lower value, same signs, the derivative's magnitude does not decrease
        if search.brackt:
            stpf = _cubic_towards(stp, fp, dp, sty, fy, dy)
        elif stp > stx:
            stpf = stpmax
        else:
            stpf = stpmin
    if fp > fx:
        sty, fy, dy = stp, fp, dp
    else:
        if sgnd < 0:
            sty, fy, dy = stx, fx, dx
        stx, fx, dx = stp, fp, dp
    return stx, fx, dx, sty, fy, dy, stpf
