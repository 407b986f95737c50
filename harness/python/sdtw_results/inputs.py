"""The one seed scheme: a point's inputs depend on B, N, M, D and the base seed only, so every
implementation, device and tool at a point sees the same x and y (harness/src/torch/inputs.cpp
draws the same)."""
import torch

FNV_OFFSET, FNV_PRIME, MASK = 0xCBF29CE484222325, 0x100000001B3, (1 << 64) - 1


def fnv1a64(data):
    h = FNV_OFFSET
    for byte in data:
        h = ((h ^ byte) * FNV_PRIME) & MASK
    return h


def point_seed(base_seed, b, n, m, d):
    """base_seed XOR FNV-1a 64 of "B|N|M|D|"."""
    for name, v in (("base_seed", base_seed), ("B", b), ("N", n), ("M", m), ("D", d)):
        if not isinstance(v, int) or isinstance(v, bool) or v < 0 or (name != "base_seed" and v < 1):
            raise ValueError(f"point_seed: {name} must be a {'non-negative' if name == 'base_seed' else 'positive'} "
                             f"integer, got {v!r}")
    return (base_seed & MASK) ^ fnv1a64(f"{b}|{n}|{m}|{d}|".encode())


def make_inputs(seed, b, n, m, d, dtype=torch.float32, device="cpu"):
    """x (B, N, D) then y (B, M, D): standard normal, drawn in float64 on the CPU from one generator
    seeded with `seed`, then cast to dtype and moved to the device."""
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(b, n, d, generator=gen, dtype=torch.float64)
    y = torch.randn(b, m, d, generator=gen, dtype=torch.float64)
    return x.to(dtype).to(device), y.to(dtype).to(device)
