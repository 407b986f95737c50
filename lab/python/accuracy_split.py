#!/usr/bin/env python3
"""Where a float32 gradient's error against the float64 reference comes from, over many seeds at
one (N, gamma), D = 8, CUDA: the float32 cost (fused float32 against the float64 reference), the
DP alone (E on the GPU against E on the CPU from the same float32 cost tensor), the float64 path
(float64 inputs on the GPU against the reference) and fused against unfused (same cost bits).

    accuracy_split.py N GAMMA SEEDS
"""
import sys

import torch

import sdtw_torch


def rel(a, b):
    a, b = a.double().cpu(), b.double().cpu()
    return ((a - b).norm() / b.norm()).item()


def grad_x(fn, x, y):
    x, y = x.clone().requires_grad_(), y.clone().requires_grad_()
    fn(x, y).sum().backward()
    return x.grad


def main(n, gamma, seeds):
    fused = lambda a, b: sdtw_torch.soft_dtw(a, b, gamma=gamma)  # noqa: E731
    unfused = lambda a, b: sdtw_torch.soft_dtw(a, b, gamma=gamma, fused=False)  # noqa: E731
    rows = []
    for seed in range(seeds):
        g = torch.Generator().manual_seed(seed)
        x, y = torch.randn(1, n, 8, generator=g), torch.randn(1, n, 8, generator=g)
        ref = grad_x(fused, x.double(), y.double())
        g32 = grad_x(fused, x.cuda(), y.cuda())
        D32 = sdtw_torch.pairwise_cost(x.cuda(), y.cuda()).detach()
        dp = rel(sdtw_torch.alignment_from_cost(D32, gamma=gamma),
                 sdtw_torch.alignment_from_cost(D32.double().cpu(), gamma=gamma))
        rows.append((rel(g32, ref), dp, rel(grad_x(fused, x.double().cuda(), y.double().cuda()), ref),
                     rel(g32, grad_x(unfused, x.cuda(), y.cuda()))))
    names = ["fused float32 vs float64 reference", "E from the same float32 cost, GPU vs CPU",
             "float64 inputs on the GPU vs reference", "fused vs unfused float32"]
    for k, name in enumerate(names):
        errs = [r[k] for r in rows]
        worst = max(range(seeds), key=lambda i: errs[i])
        print(f"N={n} gamma={gamma} {name}: median {sorted(errs)[seeds // 2]:.3g} worst {errs[worst]:.3g} "
              f"(seed {worst}), above 1e-5: {sum(e > 1e-5 for e in errs)}/{seeds}")


if __name__ == "__main__":
    if len(sys.argv) != 4 or not torch.cuda.is_available():
        sys.exit(__doc__)
    main(int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]))
