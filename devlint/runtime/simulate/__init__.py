"""Simulated CUDA: catch device bugs on a CPU-only machine (issue 6).

``simulate_cuda`` is imported lazily: this package is loaded by the pytest
plugin in every pytest run, which must not import torch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .session import simulate_cuda

__all__ = ["simulate_cuda"]


def __getattr__(name: str) -> Any:
    if name == "simulate_cuda":
        from .session import simulate_cuda

        return simulate_cuda
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
