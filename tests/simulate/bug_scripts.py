"""Training scripts with one device bug each (the line marked ``# BUG``).

Each runs silently on a CPU-only machine and must fail under simulated CUDA
at the marked line. Imported by test_catches.py; not collected itself.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def _device():
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def _loader():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(16, 4, generator=g)
    y = torch.randint(0, 3, (16,), generator=g)
    return DataLoader(TensorDataset(x, y), batch_size=8)


def batch_not_moved():
    device = _device()
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3)).to(device)
    for x, y in _loader():
        out = model(x)  # BUG
        F.cross_entropy(out, y.to(device)).backward()


def target_not_moved():
    device = _device()
    model = nn.Linear(4, 3).to(device)
    criterion = nn.CrossEntropyLoss()
    for x, y in _loader():
        x = x.to(device)
        loss = criterion(model(x), y)  # BUG
        loss.backward()


def discarded_to():
    device = _device()
    model = nn.Linear(4, 3).to(device)
    for x, y in _loader():
        x.to(device)
        out = model(x)  # BUG
        out.sum().backward()


class _HiddenState(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8)

    def forward(self, x):
        h = torch.zeros(x.shape[0], 8)
        return self.fc(x) + h  # BUG


def zeros_in_forward():
    device = _device()
    model = _HiddenState().to(device)
    for x, _ in _loader():
        model(x.to(device)).sum().backward()


class _Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8)
        self.scale = torch.ones(8)

    def forward(self, x):
        return self.fc(x) * self.scale  # BUG


def plain_tensor_attribute():
    device = _device()
    model = _Scaled().to(device)
    for x, _ in _loader():
        model(x.to(device)).sum().backward()


class _Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = [nn.Linear(4, 4), nn.Linear(4, 4)]

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)  # BUG
        return x


def submodules_in_list():
    device = _device()
    model = _Stack().to(device)
    for x, _ in _loader():
        model(x.to(device)).sum().backward()


def numpy_on_device():
    device = _device()
    model = nn.Linear(4, 3).to(device)
    with torch.no_grad():
        for x, _ in _loader():
            preds = model(x.to(device)).argmax(1).numpy()  # BUG
            assert preds.shape == (8,)


class _Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 8)

    def forward(self, x):
        return self.head(self.body(x))  # BUG


def layer_added_after_to():
    device = _device()
    model = _Backbone().to(device)
    model.head = nn.Linear(8, 3)
    for x, _ in _loader():
        model(x.to(device)).sum().backward()


def cpu_table_device_indices():
    device = _device()
    model = nn.Linear(4, 3).to(device)
    class_weights = torch.tensor([1.0, 2.0, 0.5])
    for x, y in _loader():
        x, y = x.to(device), y.to(device)
        w = class_weights[y]  # BUG
        (F.cross_entropy(model(x), y, reduction="none") * w).mean().backward()


def metric_in_cpu_tensor():
    device = _device()
    model = nn.Linear(4, 3).to(device)
    correct = torch.zeros(1)
    with torch.no_grad():
        for x, y in _loader():
            x, y = x.to(device), y.to(device)
            correct += (model(x).argmax(1) == y).sum()  # BUG
    return correct.item()


SCRIPTS = [
    batch_not_moved,
    target_not_moved,
    discarded_to,
    zeros_in_forward,
    plain_tensor_attribute,
    submodules_in_list,
    numpy_on_device,
    layer_added_after_to,
    cpu_table_device_indices,
    metric_in_cpu_tensor,
]
