#!/usr/bin/env python3
"""Write fixtures/notebook_train.ipynb and fixtures/notebook_train_buggy.ipynb.

A Colab-style MNIST notebook: markdown, IPython magics and shell escapes, a
`%%time` training cell, outputs (a stream and a PNG), as Jupyter saves them
(nbformat 4, one-space indent, non-ASCII as is, a final newline). Run it after
changing the cells below, then tests/update_fixtures.py, and review both diffs.
"""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# A 1x1 PNG: what matters is that outputs are kept byte for byte, not their size.
_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="

SETUP = """\
!pip install -q torchvision
%matplotlib inline
%load_ext autoreload
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, transforms
"""

DEVICE_GOOD = 'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\nprint(f"training on {device}")\n'
DEVICE_BUGGY = 'device = torch.device("cuda")  # the workstation had one\nprint(f"training on {device}")\n'

DATA = """\
transform = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))])
train_loader = DataLoader(datasets.MNIST("data", train=True, download=True, transform=transform), batch_size=64)
test_loader = DataLoader(datasets.MNIST("data", train=False, transform=transform), batch_size=1000)
"""

MODEL_CELL = """\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 32, 3, 1)
        self.fc = nn.Linear(5408, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv(x)), 2)
        return F.log_softmax(self.fc(torch.flatten(x, 1)), dim=1)
"""

MODEL_GOOD = "model = Net().to(device)\noptimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)\nnn.Linear?\n"
MODEL_BUGGY = MODEL_GOOD.replace(".to(device)", ".cuda()")

TRAIN_GOOD = """\
%%time
model.train()
for batch_idx, (data, target) in enumerate(train_loader):
    data, target = data.to(device), target.to(device)
    optimizer.zero_grad()
    loss = F.nll_loss(model(data), target)
    loss.backward()
    optimizer.step()
    if batch_idx % 100 == 0:
        print(f"[{batch_idx * len(data)}] loss {loss.item():.4f}")
"""

# The buggy twins differ from the correct cells by one line or one argument each.
TRAIN_BUGGY = TRAIN_GOOD.replace("    data, target = data.to(device), target.to(device)\n", "")

EVALUATE_GOOD = """\
model.eval()
predictions = []
with torch.no_grad():
    for data, target in test_loader:
        data = data.to(device)
        predictions.append(model(data).argmax(dim=1).cpu().numpy())
"""

EVALUATE_BUGGY = EVALUATE_GOOD.replace("        predictions", "        target.to(device)\n        predictions").replace(".cpu().numpy()", ".numpy()")

CHECKPOINT_GOOD = '!ls -lh checkpoints/\nstate = torch.load("checkpoints/mnist_cnn_pretrained.pt", map_location=device)\nmodel.load_state_dict(state)\n'
CHECKPOINT_BUGGY = CHECKPOINT_GOOD.replace(", map_location=device", "")


def _lines(text: str) -> list[str]:
    """A cell's source as Jupyter saves it: a list of lines, the last without its line break."""
    lines = text.splitlines(keepends=True)
    if lines:
        lines[-1] = lines[-1].rstrip("\n")
    return lines


def _markdown(text: str) -> dict[str, object]:
    return {"cell_type": "markdown", "metadata": {}, "source": _lines(text)}


def _code(text: str, count: int, outputs: list[dict[str, object]] | None = None) -> dict[str, object]:
    return {"cell_type": "code", "execution_count": count, "metadata": {}, "outputs": outputs or [], "source": _lines(text)}


def _stream(text: str) -> dict[str, object]:
    return {"name": "stdout", "output_type": "stream", "text": _lines(text)}


def notebook(buggy: bool) -> dict[str, object]:
    cells = [
        _markdown("# MNIST in a notebook\n\nTrain a small CNN — written on a workstation with a GPU.\n"),
        _code(SETUP, 1),
        _code(DEVICE_BUGGY if buggy else DEVICE_GOOD, 2, [_stream("training on cuda\n")]),
        _code(DATA, 3),
        _markdown("## The model"),
        _code(MODEL_CELL, 4),
        _code(MODEL_BUGGY if buggy else MODEL_GOOD, 5),
        _code(
            TRAIN_BUGGY if buggy else TRAIN_GOOD,
            6,
            [_stream("[0] loss 2.3026\n[6400] loss 0.2411\nCPU times: user 41.2 s, sys: 1.1 s, total: 42.3 s\n")],
        ),
        _code(EVALUATE_BUGGY if buggy else EVALUATE_GOOD, 7),
        _code(
            "import matplotlib.pyplot as plt\nplt.imshow(data[0, 0].cpu().numpy())\n",
            8,
            [{"data": {"image/png": _PNG, "text/plain": ["<Figure size 640x480 with 1 Axes>"]}, "metadata": {}, "output_type": "display_data"}],
        ),
        _code(CHECKPOINT_BUGGY if buggy else CHECKPOINT_GOOD, 9),
    ]
    metadata = {
        "accelerator": "GPU",
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python", "version": "3.11.7"},
    }
    return {"cells": cells, "metadata": metadata, "nbformat": 4, "nbformat_minor": 5}


def main() -> None:
    for name, buggy in (("notebook_train", False), ("notebook_train_buggy", True)):
        text = json.dumps(notebook(buggy), indent=1, ensure_ascii=False, sort_keys=True) + "\n"
        (ROOT / "fixtures" / f"{name}.ipynb").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
