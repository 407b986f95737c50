#!/usr/bin/env python3
"""Train a small 1-D conv net to denoise and re-time sequences with the soft-DTW loss.

Targets are smooth multi-channel curves; inputs are the same curves, randomly time-warped and
noisy. The model maps input to output of the target length, and soft-DTW (sdtw_torch.SoftDTW)
compares output and target up to a warping. Prints the loss curve summary; with a fixed --seed,
--fused true and --fused false should converge the same (same data, same initialisation).

    PYTHONPATH=pytorch/python python3 examples/train.py --device cuda --fused true
"""
import argparse
import math
import time

import torch

import sdtw_torch


def make_batch(batch, length, channels, generator, device):
    t = torch.linspace(0, 1, length).view(1, length, 1)
    freq = 1 + 3 * torch.rand(batch, 1, channels, generator=generator)
    phase = 2 * math.pi * torch.rand(batch, 1, channels, generator=generator)
    target = torch.sin(2 * math.pi * freq * t + phase)
    # Smooth monotone time warp of the input, then noise.
    warp = t + 0.08 * torch.sin(2 * math.pi * torch.rand(batch, 1, 1, generator=generator) + 2 * math.pi * t)
    warp = warp.clamp(0, 1)
    noisy = torch.sin(2 * math.pi * freq * warp + phase) + 0.3 * torch.randn(batch, length, channels, generator=generator)
    return noisy.to(device), target.to(device)


class Denoiser(torch.nn.Module):
    def __init__(self, channels, hidden=64):
        super().__init__()
        self.net = torch.nn.Sequential(
            torch.nn.Conv1d(channels, hidden, 7, padding=3), torch.nn.GELU(),
            torch.nn.Conv1d(hidden, hidden, 7, padding=3), torch.nn.GELU(),
            torch.nn.Conv1d(hidden, channels, 7, padding=3),
        )

    def forward(self, x):  # (B, N, C) -> (B, N, C)
        return self.net(x.transpose(1, 2)).transpose(1, 2)


def parse_arguments(description, batch_help=None, ddp_options=False):
    """The training options (shared with train_ddp.py); returns them and `fused` (True/False/None)."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--fused", choices=["true", "false", "auto"], default="auto")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch", type=int, default=16, help=batch_help)
    parser.add_argument("--length", type=int, default=128)
    parser.add_argument("--channels", type=int, default=4)
    parser.add_argument("--gamma", type=float, default=0.1)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=0)
    if ddp_options:
        parser.add_argument("--warmup", type=int, default=0, help="untimed steps before the --steps timed ones")
        parser.add_argument("--split-global-batch", action="store_true",
                            help="every rank draws the whole batch and trains on its share of the rows")
        parser.add_argument("--report", help="rank 0 writes step times and final parameters here (JSON)")
        parser.add_argument("--optimizer", choices=["adam", "sgd"], default="adam",
                            help="sgd keeps rounding differences between runs at their size (Adam divides "
                                 "near-zero gradients by their own magnitude)")
    args = parser.parse_args()
    for name in ("steps", "batch", "length", "channels") + (("warmup",) if ddp_options else ()):
        value = getattr(args, name)
        if value < (0 if name == "warmup" else 1):
            parser.error(f"--{name} must be {'>= 0' if name == 'warmup' else '>= 1'} (got {value})")
    return args, {"true": True, "false": False, "auto": None}[args.fused]


def main():
    args, fused = parse_arguments(__doc__)

    torch.manual_seed(args.seed)
    data_gen = torch.Generator().manual_seed(args.seed)
    model = Denoiser(args.channels).to(args.device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    loss_fn = sdtw_torch.SoftDTW(gamma=args.gamma, fused=fused, normalize=True, reduction="mean")
    eval_x, eval_y = make_batch(64, args.length, args.channels, torch.Generator().manual_seed(12345), args.device)

    def evaluate():
        with torch.no_grad():
            return loss_fn(model(eval_x), eval_y).item()

    losses = []
    start_eval = evaluate()
    begin = time.perf_counter()
    for step in range(args.steps):
        x, y = make_batch(args.batch, args.length, args.channels, data_gen, args.device)
        loss = loss_fn(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        if step % 25 == 0 or step == args.steps - 1:
            print(f"step {step:4d}  loss {losses[-1]:.5f}")
    if args.device.startswith("cuda"):
        torch.cuda.synchronize()
    elapsed = time.perf_counter() - begin
    end_eval = evaluate()
    first, last = sum(losses[:10]) / min(10, len(losses)), sum(losses[-10:]) / min(10, len(losses))
    print(f"summary: device={args.device} fused={args.fused} steps={args.steps} "
          f"train_loss first10={first:.5f} last10={last:.5f} eval_loss start={start_eval:.5f} end={end_eval:.5f} "
          f"time={elapsed:.2f}s")


if __name__ == "__main__":
    main()
