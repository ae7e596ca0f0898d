"""Cost of devlint.runtime: time with the mode / time without, measured side by side.

    .venv/bin/python benchmarks/bench_runtime.py [--batch 8] [--rounds 100] [--threads 1]

For each model (a ResNet-20-class CNN on 32x32 images, a small GPT-like
transformer built from torch.nn layers, and, when transformers is installed,
GPT-2 and BERT from tiny configs) and each workload (forward under no_grad, a
training step: forward, backward and for the first two an SGD step), the
script runs many short rounds, each timing every side back to back, and
prints the median of the rounds' ratios:

- "with": `check_devices()` around the round (every module);
- "with(model)": `check_devices(model)` around the round (that model's modules);
- "per step": `with check_devices():` entered and left around every step;
- "us/call": what the check adds to one module call, in microseconds
  ("with" less "without", over the module calls of one step);
- "enter": the cost of entering and leaving one block, in microseconds.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from contextlib import nullcontext
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

import devlint.runtime as dlr

try:
    import transformers
except ImportError:  # the transformers rows are left out
    transformers = None


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU()
        self.shortcut = nn.Sequential()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return self.relu(y + self.shortcut(x))


def resnet20(num_classes: int = 10) -> nn.Module:
    layers: list[nn.Module] = [nn.Conv2d(3, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU()]
    cin = 16
    for cout, stride in ((16, 1), (32, 2), (64, 2)):
        for i in range(3):
            layers.append(BasicBlock(cin, cout, stride if i == 0 else 1))
            cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, num_classes)]
    return nn.Sequential(*layers)


class Block(nn.Module):
    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        h = self.ln1(x)
        x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class TinyGPT(nn.Module):
    def __init__(self, vocab: int = 1000, dim: int = 128, heads: int = 4, depth: int = 4, seq: int = 64) -> None:
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(seq, dim)
        self.blocks = nn.ModuleList([Block(dim, heads) for _ in range(depth)])
        self.ln = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab)
        self.register_buffer("mask", torch.triu(torch.ones(seq, seq, dtype=torch.bool), 1))

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        n = input_ids.shape[1]
        x = self.tok(input_ids) + self.pos(torch.arange(n, device=input_ids.device))
        for block in self.blocks:
            x = block(x, mask=self.mask[:n, :n])
        return self.head(self.ln(x))


Workload = Callable[[], Any]


def workloads(batch: int) -> dict[str, tuple[nn.Module, Workload, Workload]]:
    torch.manual_seed(0)
    cnn = resnet20()
    images = torch.randn(batch, 3, 32, 32)
    labels = torch.randint(0, 10, (batch,))
    cnn_opt = torch.optim.SGD(cnn.parameters(), lr=0.01)

    gpt = TinyGPT()
    ids = torch.randint(0, 1000, (batch, 64))
    gpt_opt = torch.optim.SGD(gpt.parameters(), lr=0.01)

    def cnn_forward() -> Any:
        cnn.eval()
        with torch.no_grad():
            return cnn(images)

    def cnn_step() -> Any:
        cnn.train()
        cnn_opt.zero_grad()
        F.cross_entropy(cnn(images), labels).backward()
        cnn_opt.step()

    def gpt_forward() -> Any:
        gpt.eval()
        with torch.no_grad():
            return gpt(ids)

    def gpt_step() -> Any:
        gpt.train()
        gpt_opt.zero_grad()
        logits = gpt(ids)
        F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids.reshape(-1)).backward()
        gpt_opt.step()

    models = {
        "resnet20": (cnn, cnn_forward, cnn_step),
        "tinygpt": (gpt, gpt_forward, gpt_step),
    }
    if transformers is not None:
        models.update(_transformers_workloads(batch))
    return models


def _transformers_workloads(batch: int) -> dict[str, tuple[nn.Module, Workload, Workload]]:
    """GPT-2 and BERT from tiny configs (issue 19's models): forward, and forward with backward."""
    transformers.utils.logging.set_verbosity_error()
    torch.manual_seed(0)
    gpt2 = transformers.GPT2LMHeadModel(
        transformers.GPT2Config(vocab_size=100, n_embd=32, n_layer=2, n_head=2, n_positions=64, bos_token_id=0, eos_token_id=0)
    )
    bert = transformers.BertForMaskedLM(
        transformers.BertConfig(
            vocab_size=100,
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=64,
            max_position_embeddings=64,
        )
    )
    ids = torch.randint(0, 100, (max(batch // 2, 1), 16))
    models: dict[str, tuple[nn.Module, Workload, Workload]] = {}
    for name, model in (("gpt2-tiny", gpt2), ("bert-tiny", bert)):

        def forward(model: nn.Module = model) -> Any:
            model.eval()
            with torch.no_grad():
                return model(input_ids=ids)

        def step(model: nn.Module = model) -> Any:
            model.train()
            model.zero_grad()
            model(input_ids=ids, labels=ids).loss.backward()

        models[name] = (model, forward, step)
    return models


# With one intra-op thread, torch runs forward and CPU backward in the calling
# thread, so this thread's CPU time is the cost, and time other processes take
# from the machine does not count.
clock = time.thread_time


def timed(work: Workload, context: Callable[[], Any], iters: int) -> float:
    with context():
        # Entering or leaving the mode replaces nn.Module.__call__, which resets
        # Python's specialised bytecode at every module call site; one untimed
        # call lets both sides start warm, as a long run would.
        work()
        start = clock()
        for _ in range(iters):
            work()
        return (clock() - start) / iters


def per_step(work: Workload) -> Workload:
    def entered() -> Any:
        with dlr.check_devices():
            return work()

    return entered


def module_calls(work: Workload) -> int:
    """How many nn.Module calls one run of ``work`` makes."""
    calls = 0

    def count(module: nn.Module, args: Any) -> None:
        nonlocal calls
        calls += 1

    handle = nn.modules.module.register_module_forward_pre_hook(count)
    try:
        work()
    finally:
        handle.remove()
    return calls


def entry_cost(rounds: int = 2000) -> float:
    """Seconds to enter and leave one check_devices() block."""
    check = dlr.check_devices()
    for _ in range(50):
        with check:
            pass
    start = time.perf_counter()
    for _ in range(rounds):
        with check:
            pass
    return (time.perf_counter() - start) / rounds


def compare(model: nn.Module, work: Workload, rounds: int) -> tuple[float, float, float, float]:
    """Seconds per call without the mode; ratios for every module, this model only, and entered per step."""
    for _ in range(3):
        work()
    once = timed(work, nullcontext, 3)
    iters = max(2, int(0.01 / max(once, 1e-6)))  # ~10 ms a round: many short rounds
    entered = per_step(work)
    sides: list[tuple[list[float], Workload, Callable[[], Any]]] = [
        ([], work, nullcontext),
        ([], work, dlr.check_devices),
        ([], work, lambda: dlr.check_devices(model)),
        ([], entered, nullcontext),
    ]
    for i in range(rounds):
        # Alternate the order, so that no side always runs right after another.
        for times, job, context in sides if i % 2 else reversed(sides):
            times.append(timed(job, context, iters))
    base, every, watched, stepped = (times for times, _, _ in sides)
    # Each round's sides ran back to back, so their ratio cancels slow drift in
    # the machine's speed; the median of those ratios ignores the rounds that
    # other work on a shared machine disturbed.
    return (
        statistics.median(base),
        statistics.median(w / b for w, b in zip(every, base, strict=True)),
        statistics.median(w / b for w, b in zip(watched, base, strict=True)),
        statistics.median(w / b for w, b in zip(stepped, base, strict=True)),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads (1: steadier figures)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    global clock
    if args.threads != 1:
        clock = time.perf_counter
    print(
        f"torch {torch.__version__}, batch {args.batch}, {args.threads} thread(s), {args.rounds} rounds, "
        f"clock {clock.__name__}"
    )
    print(
        f"{'model':<10} {'workload':<22} {'without':>10} {'with':>7} {'with(model)':>12} {'per step':>9} "
        f"{'calls':>6} {'us/call':>8}"
    )
    for name, (model, forward, step) in workloads(args.batch).items():
        for label, work in (("forward (no_grad)", forward), ("training step", step)):
            base, every, watched, stepped = compare(model, work, args.rounds)
            calls = module_calls(work)
            cost = (every - 1) * base / calls * 1e6
            print(
                f"{name:<10} {label:<22} {base * 1e3:>8.2f}ms {every:>7.3f} {watched:>12.3f} {stepped:>9.3f} "
                f"{calls:>6} {cost:>8.2f}"
            )
    loaded = sum(1 for _ in _subclasses(nn.Module))
    print(f"entering and leaving a block: {entry_cost() * 1e6:.1f} us ({loaded} nn.Module classes loaded)")


def _subclasses(cls: type) -> Any:
    seen: set[type] = set()
    todo = [cls]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub not in seen:
                seen.add(sub)
                todo.append(sub)
                yield sub


if __name__ == "__main__":
    main()
