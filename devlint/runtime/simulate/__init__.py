"""Simulated CUDA on a CPU-only machine (issue 6)."""
