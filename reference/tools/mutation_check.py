#!/usr/bin/env python3
"""Mutation check of the reference tests (reference/tests/MUTATIONS.md holds the last result).

Breaks reference/src on purpose, one mutation at a time, rebuilds BUILD_DIR, runs its cpu ctest
label and records which tests fail; every file is restored after each mutation, even on error.
Usage: reference/tools/mutation_check.py BUILD_DIR [results.json]
"""
import json, os, re, subprocess, sys
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
build = sys.argv[1]
M = [
 ("M1 in_band ignores the band", "src/problem.cpp", "return !bandwidth || std::labs(i - j) <= *bandwidth;", "(void)i; (void)j; (void)bandwidth; return true;"),
 ("M2 sign flipped in the backward weight exponent", "src/soft_dtw.cpp", "std::exp((m - a) / gamma)", "std::exp((a - m) / gamma)"),
 ("M3 softmin shifts by max instead of min", "src/soft_dtw.cpp", "return kNaN;\n  const double m = std::min({a, b, c});", "return kNaN;\n  const double m = std::max({a, b, c});"),
 ("M4 factor 2 dropped in jacobian_product (both gradients)", "src/sqeuclidean.cpp", "return {2.0 * (rowsum.asDiagonal() * x_ - E * y_), 2.0 * (colsum", "return {1.0 * (rowsum.asDiagonal() * x_ - E * y_), 1.0 * (colsum"),
 ("M5 factor 2 dropped in grad_y only", "src/sqeuclidean.cpp", "2.0 * (colsum", "1.0 * (colsum"),
 ("M6 E(N,M) = 1 forgotten", "src/soft_dtw.cpp", "  E(N, M) = 1.0;\n", ""),
 ("M7 softmin sign: m + gamma log s", "src/soft_dtw.cpp", "return m - gamma * std::log(s);", "return m + gamma * std::log(s);"),
 ("M8 check_band accepts every band", "src/problem.cpp", "  if (!bandwidth) return;\n", "  return;\n"),
 ("M9 check_gamma accepts 0 and NaN", "src/problem.cpp", "if (!(gamma > 0.0) || !std::isfinite(gamma)) {", "if (gamma < 0.0 || std::isinf(gamma)) {"),
 ("M10 hard_dtw forward ignores the left predecessor", "src/hard_dtw.cpp", "std::min({R(i - 1, j - 1), R(i - 1, j), R(i, j - 1)})", "std::min({R(i - 1, j - 1), R(i - 1, j), R(i - 1, j)})"),
 ("M11 hard_dtw walk-back: diagonal step moves only i", "src/hard_dtw.cpp", "      --i;\n      --j;\n", "      --i;\n"),
 ("M12 batch reads pair b at an unpadded offset", "src/batch.cpp", "take(D + b * s.n * s.m, n, m, s.m)", "take(D + b * n * m, n, m, m)"),
 ("M13 divergence chains sdtw(x,x) through one argument only", "src/sqeuclidean.cpp", "xy.grad.x - 0.5 * (xx.grad.x + xx.grad.y)", "xy.grad.x - 0.5 * xx.grad.x"),
 ("M14 backward skips the diagonal predecessor", "src/soft_dtw.cpp", "      E(i - 1, j - 1) += E(i, j) * w[0];\n", ""),
 ("M16 backward weights not normalised", "src/soft_dtw.cpp", "return {wa / s, wb / s, wc / s};", "return {wa, wb, wc};"),
 ("M15 batch gradient padding not cleared (grad_x written past x_len)", "src/batch.cpp", "out.grad_x.assign(s.batch * s.n * s.dim, 0.0);", "out.grad_x.assign(s.batch * s.n * s.dim, 1.0);"),
 ("S1 second order: sign of one weight derivative", "src/second_order.cpp", "e * w[0] / g * (mean - rdot[0])", "e * w[0] / g * (rdot[0] - mean)"),
 ("S2 second order: product rule drops E_dot(s) w for the up predecessor", "src/second_order.cpp", "edot * w[1] + e * w[1]", "e * w[1]"),
 ("S3 second order: weight derivative without 1 / gamma", "src/second_order.cpp", "e * w[2] / g * (mean", "e * w[2] * (mean"),
 ("S4 second order: Rdot skips the diagonal predecessor", "src/second_order.cpp", "w[0] * Rdot(i - 1, j - 1) + ", ""),
 ("S5 second order: Rdot forgets Z", "src/second_order.cpp", "Z(i - 1, j - 1) + w[0]", "w[0]"),
 ("S6 second order: weighted mean of Rdot skips the left predecessor", "src/second_order.cpp", " + w[2] * rdot[2];", ";"),
 ("S7 DILATE: gradient drops the (1 - alpha) of the temporal term", "src/dilate.cpp", "(1.0 - alpha) * h.E_dot", "h.E_dot"),
 ("S8 DILATE: Omega divided by N M instead of N^2", "src/dilate.cpp", "static_cast<double>(n) * static_cast<double>(n)", "static_cast<double>(n) * static_cast<double>(m)"),
 ("S9 DILATE: alpha weights the temporal term", "src/dilate.cpp", "alpha * h.value + (1.0 - alpha) * temporal", "(1.0 - alpha) * h.value + alpha * temporal"),
 ("S10 batch second order writes E_dot at the pair's own stride", "src/batch.cpp", "put(h.E_dot, out.E_dot.data() + offset, s.m)", "put(h.E_dot, out.E_dot.data() + offset, m)"),
 ("V1 subsequence: a vertical move out of row 0 counts a start twice", "src/variants.cpp", "options.subsequence && i == 1 ? kInf", "false ? kInf"),
 ("V2 warp also paid by the diagonal (forward only)", "src/variants.cpp", "move_min(R(i - 1, j - 1),", "move_min(R(i - 1, j - 1) + options.warp,"),
 ("V3 subsequence end skips the first column", "src/variants.cpp", "first = options.subsequence ? 1 : M", "first = options.subsequence ? 2 : M"),
 ("V4 expected_end counts columns from 1", "src/variants.cpp", "static_cast<double>(j) * result.end(j)", "static_cast<double>(j + 1) * result.end(j)"),
 ("V5 gamma = 0: diagonal loses its ties", "src/variants.cpp", "if (diag <= up && diag <= left)", "if (diag < up && diag < left)"),
 ("V6 gamma = 0: (i-1, j) loses its ties to (i, j-1)", "src/variants.cpp", "if (up <= left) return", "if (up < left) return"),
 ("C1 itakura_mask without tslearn's two-decimal rounding", "src/constraints.cpp", "return std::nearbyint(x * 100.0) / 100.0;", "return x;"),
 ("C2 sakoe_chiba_mask not widened by |N - M|", "src/constraints.cpp", "std::min(longer - 1, k + width)", "std::min(longer - 1, k + radius)"),
 ("C3 itakura_mask upper bound floor(b + 0.5) instead of floor(b + 1)", "src/constraints.cpp", "shallow * jd)) + 1.0);", "shallow * jd)) + 0.5);"),
 ("K1 cosine keeps the radial term below eps", "src/costs.cpp", "const double cx = ux.radial[i] ? c : 0.0", "const double cx = c"),
 ("K2 L1 takes sign(0) = 1", "src/costs.cpp", "return v > 0 ? 1.0 : v < 0 ? -1.0 : 0.0;", "return v >= 0 ? 1.0 : -1.0;"),
 ("K3 cosine takes the eps branch at norm = eps", "src/costs.cpp", "u.radial[i] = n >= kCosineEps;", "u.radial[i] = n > kCosineEps;"),
 ("K4 L1 grad_y with the sign of grad_x", "src/costs.cpp", "g.y(j, k) -= s;", "g.y(j, k) += s;"),
]
results = []
for name, f, old, new in M:
    path = os.path.join(root, f)
    orig = open(path).read()
    assert orig.count(old) == 1, (name, orig.count(old))
    open(path, 'w').write(orig.replace(old, new))
    try:
        b = subprocess.run(['cmake', '--build', build], capture_output=True, text=True)
        if b.returncode:
            failed = ['BUILD FAILED']
        else:
            r = subprocess.run(['ctest', '--test-dir', build, '-L', 'cpu', '-j2', '--timeout', '120'],
                               capture_output=True, text=True, timeout=900)
            tail = r.stdout.split('The following tests FAILED:')[1] if 'The following tests FAILED:' in r.stdout else ''
            # "  12 - Suite.Name (Failed)" or "(SEGFAULT)"
            failed = sorted(m.group(1) + ('' if m.group(2) == 'Failed' else ' [' + m.group(2) + ']')
                            for m in re.finditer(r'^\s*\d+ - (\S+).*\((.+)\)\s*$', tail, re.M))
    finally:
        open(path, 'w').write(orig)
    results.append((name, failed))
    print(name, len(failed), failed, flush=True)
json.dump(results, open(sys.argv[2] if len(sys.argv) > 2 else 'mutation_results.json', 'w'), indent=1)
subprocess.run(['cmake', '--build', build], capture_output=True)
