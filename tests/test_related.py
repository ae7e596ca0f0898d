"""Findings carry the places their messages name by line, as structured related locations."""

from __future__ import annotations

import re
from pathlib import Path

from devlint.config import Settings
from devlint.engine import check_file
from devlint.finding import Position, Related

from linting import lint

ROOT = Path(__file__).resolve().parent.parent


def _related(path: str) -> list[tuple[str, int, tuple[Related, ...]]]:
    findings = check_file(ROOT / path, path, Settings()).findings
    return [(f.code, f.start.line, f.related) for f in findings if f.related]


def test_unmoved_batch_names_the_loader_line_and_the_move_of_the_model() -> None:
    moved = Related("moved by `.cuda()`", Position(62, 13), Position(62, 25))
    loader = Position(29, 38), Position(29, 55)
    assert _related("fixtures/mnist_train_buggy.py") == [
        ("DL201", 31, (Related("`data` comes from `loader`", *loader), moved)),
        ("DL201", 32, (Related("`target` comes from `loader`", *loader), moved)),
        ("DL302", 47, (moved,)),
    ]


def test_every_line_a_message_names_is_a_related_location() -> None:
    for path in ("fixtures/mnist_train_buggy.py", "fixtures/inference_buggy.py", "fixtures/transformer_buggy.py"):
        for finding in check_file(ROOT / path, path, Settings()).findings:
            named = {int(n) for n in re.findall(r"line (\d+)", finding.message)}
            assert named == {r.start.line for r in finding.related}, finding


def test_factory_without_device_points_at_where_the_tensor_meets_the_device() -> None:
    source = """
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(4, 4)

        def forward(self, x):
            noise = torch.randn(4, 4)
            return self.proj(x) + noise
    """
    [finding] = [f for f in lint(source, Settings()) if f.code == "DL303"]
    assert finding.related == (Related("meets `self.proj(x)`", Position(12, 16), Position(12, 36)),)


def test_mixed_devices_cites_both_origins() -> None:
    source = """
    import torch

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    x = torch.randn(4, device=device)
    a = x.cpu()
    y = a + x
    """
    [finding] = [f for f in lint(source, Settings()) if f.code == "DL301"]
    assert [(r.message, r.start.line, r.start.column) for r in finding.related] == [
        ("moved to the CPU by `.cpu()`", 5, 5),
        ("created by `torch.randn`", 4, 5),
    ]
