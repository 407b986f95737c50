"""The original Soft-DTW implementations and ours, measured one way: `python3 -m baselines.originals`
(README.md beside this file)."""
