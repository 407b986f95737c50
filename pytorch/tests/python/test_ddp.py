"""The soft-DTW loss under DistributedDataParallel: two CPU processes with the gloo
backend (torch.multiprocessing) train a few steps of a small model, each on half of the batch, and
end with the parameters of one process trained on the whole batch. Fused and unfused modes."""
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

import sdtw_torch

WORLD = 2
STEPS = 4
BATCH, N, M, CHANNELS = 4, 12, 10, 3
MODES = (True, False)  # fused, unfused


def make_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(CHANNELS, 8), torch.nn.Tanh(), torch.nn.Linear(8, CHANNELS)).double()


def make_batches():
    g = torch.Generator().manual_seed(1)
    return [(torch.randn(BATCH, N, CHANNELS, generator=g, dtype=torch.float64),
             torch.randn(BATCH, M, CHANNELS, generator=g, dtype=torch.float64)) for _ in range(STEPS)]


def train(model, batches, fused, rows=slice(None)):
    """SGD on the batches' rows; the loss is the mean over those rows (DDP averages across ranks)."""
    loss_fn = sdtw_torch.SoftDTW(gamma=0.1, fused=fused, reduction="mean")
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for x, y in batches:
        loss = loss_fn(model(x[rows]), y[rows])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return [p.detach().clone() for p in model.parameters()]


def ddp_worker(rank, init_file, out_dir):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=WORLD)
    try:
        share = BATCH // WORLD
        for fused in MODES:
            model = torch.nn.parallel.DistributedDataParallel(make_model())
            params = train(model, make_batches(), fused, slice(rank * share, (rank + 1) * share))
            torch.save(params, os.path.join(out_dir, f"rank{rank}_fused{fused}.pt"))
    finally:
        dist.destroy_process_group()


def test_ddp_gloo_matches_one_process_on_the_whole_batch(tmp_path):
    mp.spawn(ddp_worker, args=(str(tmp_path / "init"), str(tmp_path)), nprocs=WORLD, join=True)
    for fused in MODES:
        single = train(make_model(), make_batches(), fused)
        start = list(make_model().parameters())
        for rank in range(WORLD):
            ddp = torch.load(tmp_path / f"rank{rank}_fused{fused}.pt")
            for p_ddp, p_one, p0 in zip(ddp, single, start):
                assert (p_one - p0).abs().max() > 1e-3  # training moved the parameters
                assert torch.allclose(p_ddp, p_one, rtol=0, atol=1e-12), (fused, rank, (p_ddp - p_one).abs().max())
