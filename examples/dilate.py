#!/usr/bin/env python3
"""Train a small forecaster with the DILATE loss (Le Guen & Thome, NeurIPS 2019) on synthetic data.

Each series, after the paper's synthetic set, holds two bumps in its past (time steps t1 < t2) and
one in its future, at its time step (t2 - t1) + 2: when the next bump comes depends on the past,
and how high it is too. A multilayer perceptron maps the past (N_input steps) to the future (N_output
steps); sdtw_torch.dilate weighs the shape (soft-DTW) against the timing (the alignment's distance
from the diagonal). Prints the loss now and then and a summary with the evaluation loss before and
after training. The temporal term's gradient is a Hessian-vector product (CPU or CUDA).

    PYTHONPATH=pytorch/python python3 examples/dilate.py --steps 300
"""
import argparse
import time

import torch

import sdtw_torch

N_INPUT, N_OUTPUT = 20, 20


def bump(steps, centre, height):
    """A triangular bump of half-width 2 per series: (batch, steps)."""
    t = torch.arange(steps, dtype=torch.float32).view(1, steps)
    return height.view(-1, 1) * (1 - (t - centre.view(-1, 1)).abs() / 2).clamp_min(0)


def make_batch(batch, generator, device, noise=0.01):
    t1 = torch.randint(2, 9, (batch,), generator=generator).float()
    t2 = torch.randint(11, 18, (batch,), generator=generator).float()
    height = 0.5 + torch.rand(batch, generator=generator)
    past = bump(N_INPUT, t1, height) + bump(N_INPUT, t2, height)
    future = bump(N_OUTPUT, t2 - t1 + 2, height)
    past = past + noise * torch.randn(batch, N_INPUT, generator=generator)
    return past.unsqueeze(-1).to(device), future.unsqueeze(-1).to(device)  # (B, N, 1) series


class Forecaster(torch.nn.Module):
    def __init__(self, hidden=64):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(N_INPUT, hidden), torch.nn.ReLU(),
                                       torch.nn.Linear(hidden, hidden), torch.nn.ReLU(),
                                       torch.nn.Linear(hidden, N_OUTPUT))

    def forward(self, past):  # (B, N_INPUT, 1) -> (B, N_OUTPUT, 1)
        return self.net(past.squeeze(-1)).unsqueeze(-1)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cpu", help="cpu or cuda")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--alpha", type=float, default=0.5, help="weight of the shape term (the paper's 0.5)")
    parser.add_argument("--gamma", type=float, default=0.01, help="soft-DTW smoothing (the paper's 0.01)")
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.steps < 1 or args.batch < 1:
        parser.error(f"--steps and --batch must be >= 1 (got {args.steps}, {args.batch})")

    torch.manual_seed(args.seed)
    data = torch.Generator().manual_seed(args.seed)
    model = Forecaster().to(args.device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    eval_past, eval_future = make_batch(256, torch.Generator().manual_seed(12345), args.device)

    def loss_of(past, future):
        return sdtw_torch.dilate(model(past), future, alpha=args.alpha, gamma=args.gamma)

    def evaluate():
        with torch.no_grad():
            return loss_of(eval_past, eval_future)

    start = evaluate()
    losses = []
    begin = time.perf_counter()
    for step in range(args.steps):
        past, future = make_batch(args.batch, data, args.device)
        loss = loss_of(past, future).loss
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        if step % 50 == 0 or step == args.steps - 1:
            print(f"step {step:4d}  loss {losses[-1]:.5f}")
    elapsed = time.perf_counter() - begin
    end = evaluate()
    print(f"summary: device={args.device} steps={args.steps} alpha={args.alpha} gamma={args.gamma} "
          f"eval_loss start={start.loss.item():.5f} end={end.loss.item():.5f} "
          f"(shape {start.shape.item():.5f} -> {end.shape.item():.5f}, "
          f"temporal {start.temporal.item():.5f} -> {end.temporal.item():.5f}) time={elapsed:.2f}s")


if __name__ == "__main__":
    main()
