#!/usr/bin/env python3
"""examples/train.py under DistributedDataParallel: one process per GPU (nccl) or per CPU worker
(gloo), started by torchrun. Each process draws its own batches (seed + rank) and DDP averages the
gradients, so a step sees nproc_per_node x --batch sequences. Rank 0 prints the loss curve and a
summary (eval loss of the same held-out batch as train.py).

    PYTHONPATH=pytorch/python torchrun --nproc_per_node 2 examples/train_ddp.py --device cpu
    PYTHONPATH=pytorch/python torchrun --nproc_per_node 8 examples/train_ddp.py --device cuda

--split-global-batch draws one batch of nproc_per_node x --batch sequences on every rank (same seed)
and gives each rank its rows, so a run matches one process with the whole batch. --warmup steps are
left out of the timing; --report PATH (rank 0) writes the per-step times and the final parameters.
"""
import json
import os
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

import sdtw_torch
from train import Denoiser, make_batch, parse_arguments


def main():
    args, fused = parse_arguments(__doc__, batch_help="sequences per process and step", ddp_options=True)

    # torchrun sets RANK, LOCAL_RANK and WORLD_SIZE, and the rendezvous (env://).
    local_rank = int(os.environ["LOCAL_RANK"])
    on_gpu = args.device.startswith("cuda")  # every rank takes cuda:LOCAL_RANK, whatever index is given
    if on_gpu:
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
    else:
        device = torch.device("cpu")
    dist.init_process_group("nccl" if on_gpu else "gloo")
    rank, world = dist.get_rank(), dist.get_world_size()

    torch.manual_seed(args.seed)  # the same initial model everywhere (DDP also broadcasts rank 0's)
    data_gen = torch.Generator().manual_seed(args.seed if args.split_global_batch else args.seed + rank)
    rows = slice(rank * args.batch, (rank + 1) * args.batch) if args.split_global_batch else slice(None)
    drawn = world * args.batch if args.split_global_batch else args.batch
    model = DistributedDataParallel(Denoiser(args.channels).to(device),
                                    device_ids=[local_rank] if on_gpu else None)
    optimizer = (torch.optim.SGD if args.optimizer == "sgd" else torch.optim.Adam)(model.parameters(), lr=args.lr)
    loss_fn = sdtw_torch.SoftDTW(gamma=args.gamma, fused=fused, normalize=True, reduction="mean")
    eval_x, eval_y = make_batch(64, args.length, args.channels, torch.Generator().manual_seed(12345), device)

    def evaluate():
        with torch.no_grad():
            return loss_fn(model.module(eval_x), eval_y).item()

    def mean_over_ranks(value):
        t = torch.tensor([value], dtype=torch.float64, device=device)
        dist.all_reduce(t)
        return t.item() / world

    losses, step_seconds = [], []
    start_eval = evaluate()
    begin = time.perf_counter()
    for step in range(args.warmup + args.steps):
        if step == args.warmup:
            begin = time.perf_counter()
        step_begin = time.perf_counter()
        x, y = make_batch(drawn, args.length, args.channels, data_gen, device)
        loss = loss_fn(model(x[rows]), y[rows])
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())  # synchronises: the step's time below is the whole step
        if step >= args.warmup:
            step_seconds.append(time.perf_counter() - step_begin)
        if rank == 0 and (step % 25 == 0 or step == args.warmup + args.steps - 1):
            print(f"step {step:4d}  loss (rank 0) {losses[-1]:.5f}", flush=True)
    if on_gpu:
        torch.cuda.synchronize()
    elapsed = time.perf_counter() - begin
    end_eval = evaluate()
    first = mean_over_ranks(sum(losses[:10]) / min(10, len(losses)))
    last = mean_over_ranks(sum(losses[-10:]) / min(10, len(losses)))
    if rank == 0:
        print(f"summary: device={args.device} processes={world} fused={args.fused} steps={args.steps} "
              f"batch={world}x{args.batch} train_loss first10={first:.5f} last10={last:.5f} "
              f"eval_loss start={start_eval:.5f} end={end_eval:.5f} time={elapsed:.2f}s", flush=True)
        if args.report:
            with open(args.report, "w") as f:
                json.dump({"world": world, "batch_per_process": args.batch, "step_seconds": step_seconds,
                           "elapsed_s": elapsed, "eval_loss_start": start_eval, "eval_loss_end": end_eval,
                           "parameters": [p.detach().double().cpu().flatten().tolist()
                                          for p in model.module.parameters()]}, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
