"""Cost of simulated CUDA: one ResNet-20 training step, simulated vs plain CPU.

    .venv/bin/python benchmarks/bench_simulate.py [--batch 64] [--rounds 10] [--steps 1] [--threads N]

Runs the same CIFAR-style ResNet-20 (3 stages x 3 basic blocks, 16/32/64
channels, 32x32 inputs) training step (forward, cross-entropy, backward,
SGD with momentum) on the plain CPU and under ``simulate_cuda()``,
alternating rounds so that load on the machine hits both alike, and prints
the median step times and their ratio (goal: <= 1.5x). Also prints the
intercepted-call count of one simulated step and the cost per call.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

from devlint.runtime.simulate import simulate_cuda


class BasicBlock(nn.Module):
    def __init__(self, inp: int, out: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(inp, out, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(out)
        self.conv2 = nn.Conv2d(out, out, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(out)
        self.shortcut = nn.Sequential()
        if stride != 1 or inp != out:
            self.shortcut = nn.Sequential(nn.Conv2d(inp, out, 1, stride, bias=False), nn.BatchNorm2d(out))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(y)) + self.shortcut(x))


class ResNet20(nn.Module):
    def __init__(self, classes: int = 10) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU())
        layers, inp = [], 16
        for out, stride in ((16, 1), (32, 2), (64, 2)):
            for i in range(3):
                layers.append(BasicBlock(inp, out, stride if i == 0 else 1))
                inp = out
        self.layers = nn.Sequential(*layers)
        self.head = nn.Linear(64, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.layers(self.stem(x))
        return self.head(F.adaptive_avg_pool2d(x, 1).flatten(1))


def tiny_mlp() -> nn.Module:
    return nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))


def setup(batch: int, kind: str = "resnet20"):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    model = (ResNet20() if kind == "resnet20" else tiny_mlp()).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(batch, 3, 32, 32, generator=g) if kind == "resnet20" else torch.randn(batch, 32, generator=g)
    y = torch.randint(0, 10, (batch,), generator=g)
    return model, optimizer, x, y, device


def step(model, optimizer, x, y, device) -> float:
    x, y = x.to(device), y.to(device)
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()


class CallCounter(TorchFunctionMode):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.calls += 1
        return func(*args, **(kwargs or {}))


def timed(run) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def compare(kind: str, batch: int, rounds: int, steps: int) -> tuple[float, float, int]:
    """Median plain and simulated step times, and intercepted calls per step."""
    plain = setup(batch, kind)
    with simulate_cuda():
        simulated = setup(batch, kind)
        assert simulated[4].type == "cuda"
        step(*simulated)  # warm-up: the first call of each op resolves its rule
    step(*plain)
    plain_times: list[float] = []
    simulated_times: list[float] = []
    # alternate (in blocks of `steps`) so that other load on the machine hits both alike
    for _ in range(rounds):
        for _ in range(steps):
            plain_times.append(timed(lambda: step(*plain)))
        with simulate_cuda():
            for _ in range(steps):
                simulated_times.append(timed(lambda: step(*simulated)))
    with simulate_cuda():
        counter = CallCounter()
        with counter:
            step(*simulated)
    return statistics.median(plain_times), statistics.median(simulated_times), counter.calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--steps", type=int, default=1)
    parser.add_argument("--threads", type=int, default=0, help="torch threads (default: torch's choice)")
    options = parser.parse_args()
    if options.threads:
        torch.set_num_threads(options.threads)

    p, s, calls = compare("resnet20", options.batch, options.rounds, options.steps)
    print(
        f"ResNet-20 training step, batch {options.batch}, {torch.get_num_threads()} threads, "
        f"{options.rounds * options.steps} steps each"
    )
    print(f"  plain CPU       median {p * 1000:8.1f} ms")
    print(f"  simulated CUDA  median {s * 1000:8.1f} ms")
    print(f"  ratio simulated/plain: {s / p:.2f}x (goal <= 1.5x); {calls} intercepted calls per step")
    p, s, calls = compare("mlp", 32, 5, 40)
    print("tiny MLP (32-64-10) training step, batch 32, 200 steps each")
    print(f"  plain CPU       median {p * 1e6:8.0f} us")
    print(f"  simulated CUDA  median {s * 1e6:8.0f} us")
    print(f"  ratio simulated/plain: {s / p:.2f}x; {calls} intercepted calls per step, "
          f"{(s - p) / calls * 1e6:.1f} us each")


if __name__ == "__main__":
    main()
