"""Small modules for the runtime tests. The meta device plays the second device."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(8, 8) for _ in range(2)])

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return x


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.encoder = Encoder()
        self.head = nn.Linear(8, 2)

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        return self.head(self.encoder(batch["x"], mask=batch["mask"]))


class Holder(nn.Module):
    """Has a parameter, computes nothing: a mismatch only shows if devlint looks."""

    def __init__(self, device: str = "cpu") -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(3, device=device))

    def forward(self, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        return args


class Pair(nn.Module):
    """No parameters, computes nothing."""

    def forward(self, a: Any, b: Any) -> tuple[Any, Any]:
        return a, b


def batch() -> dict[str, torch.Tensor]:
    return {"x": torch.randn(4, 8), "mask": torch.ones(4, dtype=torch.bool)}


class Chain(nn.Module):
    """Holders in a row: every call runs, whatever the devices."""

    def __init__(self, *devices: str) -> None:
        super().__init__()
        self.blocks = nn.ModuleList([Holder(d) for d in devices])
        self.head = Holder()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x)[0]
        return self.head(x)[0]
