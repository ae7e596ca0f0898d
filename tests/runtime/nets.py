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
    """Has a parameter, and never combines its inputs with it."""

    def __init__(self, device: str = "cpu") -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(3, device=device))

    def forward(self, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        return args


class Scaled(nn.Module):
    """Combines every input tensor with its parameter, as a layer of the user's would."""

    def __init__(self, device: str = "cpu") -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(3, device=device))

    def forward(self, *args: Any, **kwargs: Any) -> list[torch.Tensor]:
        out = []
        for t in _tensors((args, kwargs)):
            part = t if t.dim() == 0 else t.flatten()[:1]
            out.append(part * self.weight[:1])
        return out


def _tensors(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    elif hasattr(value, "__dataclass_fields__"):
        value = list(vars(value).values())
    if isinstance(value, (list, tuple)):
        return [t for item in value for t in _tensors(item)]
    return []


class Pair(nn.Module):
    """No parameters, computes nothing."""

    def forward(self, a: Any, b: Any) -> tuple[Any, Any]:
        return a, b


def batch() -> dict[str, torch.Tensor]:
    return {"x": torch.randn(4, 8), "mask": torch.ones(4, dtype=torch.bool)}


class Chain(nn.Module):
    """Linear layers in a row, on the given devices, and a head on the CPU: every call runs."""

    def __init__(self, *devices: str) -> None:
        super().__init__()
        # no bias: F.linear runs a meta weight on a CPU input without complaint
        self.blocks = nn.ModuleList([nn.Linear(3, 3, bias=False, device=d) for d in devices])
        self.head = nn.Linear(3, 3, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x)
        return self.head(x)


class AddsWeight(nn.Module):
    """A hand-written layer: its input meets its weight in its own code."""

    def __init__(self, device: str = "cpu") -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(8, device=device))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.weight


class MovesLabels(nn.Module):
    """A model that moves its CPU labels to the logits' device itself, as transformers' losses do."""

    def __init__(self, device: str = "cpu") -> None:
        super().__init__()
        self.head = nn.Linear(8, 3, device=device)

    def forward(self, x: torch.Tensor, labels: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor | None]:
        logits = self.head(x)
        loss = None
        if labels is not None:
            loss = nn.functional.cross_entropy(logits, labels.to(logits.device))
        return logits, loss


class Stack(nn.Module):
    """A model whose inner layer meets the labels the user passed, without moving them."""

    def __init__(self, device: str = "cpu") -> None:
        super().__init__()
        self.body = nn.Linear(8, 8, device=device)
        self.scorer = AddsWeight(device)

    def forward(self, x: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        return self.body(x) + self.scorer(labels.view(-1, 8))
