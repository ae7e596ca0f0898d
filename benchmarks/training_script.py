"""A 1,000-line PyTorch training script for the benchmarks, built from the parts such scripts have.

Shaped like the long single-file trainers people keep (timm's train.py,
nanoGPT's train.py and model.py in one file, the Hugging Face examples):
imports, a configuration dataclass, a dataset, a few model components in
variants, metrics, an optimizer and schedule, checkpointing, the training
and evaluation loops, and a long argument parser. It has the bugs such
scripts have (a `.cuda()` on the model, a batch target never moved, a
checkpoint loaded without `map_location`), so the checks report something
and positions must be resolved, as in real use.
"""

from __future__ import annotations

HEAD = '''"""Train a GPT-style language model on a character corpus, with evaluation, metrics and checkpoints."""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import random
import time
from collections import defaultdict
from dataclasses import asdict, dataclass, field

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

logger = logging.getLogger("train")


@dataclass
class TrainConfig:
    data_dir: str = "data"
    out_dir: str = "out"
    block_size: int = 256
    batch_size: int = 64
    n_layer: int = 6
    n_head: int = 6
    n_embd: int = 384
    dropout: float = 0.2
    learning_rate: float = 1e-3
    min_lr: float = 1e-4
    warmup_iters: int = 100
    max_iters: int = 5000
    eval_interval: int = 250
    eval_iters: int = 200
    log_interval: int = 10
    grad_clip: float = 1.0
    weight_decay: float = 0.1
    beta1: float = 0.9
    beta2: float = 0.95
    seed: int = 1337
    compile: bool = False
    label_smoothing: float = 0.0
    tags: list[str] = field(default_factory=list)


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


class CharDataset(Dataset):
    """Fixed-length windows over a token array; the target is the window shifted by one."""

    def __init__(self, tokens: np.ndarray, block_size: int):
        self.tokens = tokens
        self.block_size = block_size

    def __len__(self):
        return len(self.tokens) - self.block_size - 1

    def __getitem__(self, index):
        chunk = self.tokens[index : index + self.block_size + 1]
        x = torch.from_numpy(chunk[:-1].astype(np.int64))
        y = torch.from_numpy(chunk[1:].astype(np.int64))
        return x, y


def load_tokens(data_dir: str, split: str) -> np.ndarray:
    path = os.path.join(data_dir, f"{split}.bin")
    return np.memmap(path, dtype=np.uint16, mode="r")


def load_vocab(data_dir: str) -> dict:
    with open(os.path.join(data_dir, "meta.json")) as handle:
        return json.load(handle)

'''

COMPONENT = '''
class CausalSelfAttention{i}(nn.Module):
    """Multi-head self-attention with a causal mask (variant {i})."""

    def __init__(self, n_embd: int, n_head: int, block_size: int, dropout: float):
        super().__init__()
        assert n_embd % n_head == 0
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.attn_dropout = nn.Dropout(dropout)
        self.resid_dropout = nn.Dropout(dropout)
        self.n_head = n_head
        self.n_embd = n_embd
        mask = torch.tril(torch.ones(block_size, block_size))
        self.register_buffer("bias", mask.view(1, 1, block_size, block_size))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        att = self.attn_dropout(att)
        y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class MLP{i}(nn.Module):
    def __init__(self, n_embd: int, dropout: float):
        super().__init__()
        self.c_fc = nn.Linear(n_embd, 4 * n_embd)
        self.c_proj = nn.Linear(4 * n_embd, n_embd)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        x = F.gelu(self.c_fc(x))
        return self.dropout(self.c_proj(x))


class Block{i}(nn.Module):
    def __init__(self, n_embd: int, n_head: int, block_size: int, dropout: float):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention{i}(n_embd, n_head, block_size, dropout)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = MLP{i}(n_embd, dropout)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x

'''

METRIC = '''
class Meter{i}:
    """Running average of one scalar (the {name}), reset every log interval."""

    def __init__(self, name: str = "{name}"):
        self.name = name
        self.reset()

    def reset(self) -> None:
        self.total = 0.0
        self.count = 0
        self.history: list[float] = []

    def update(self, value: float, n: int = 1) -> None:
        self.total += value * n
        self.count += n
        self.history.append(value)

    @property
    def average(self) -> float:
        return self.total / max(self.count, 1)

    def summary(self) -> str:
        recent = self.history[-10:]
        spread = (max(recent) - min(recent)) if recent else 0.0
        return f"{{self.name}} {{self.average:.4f}} (last 10 within {{spread:.4f}})"


def write_{name}_report(meter: Meter{i}, step: int, out_dir: str) -> None:
    os.makedirs(out_dir, exist_ok=True)
    record = {{"step": step, "{name}": meter.average, "count": meter.count}}
    with open(os.path.join(out_dir, "{name}.jsonl"), "a") as handle:
        handle.write(json.dumps(record) + "\\n")

'''

TAIL = '''
class GPT(nn.Module):
    def __init__(self, config: TrainConfig, vocab_size: int):
        super().__init__()
        self.config = config
        self.wte = nn.Embedding(vocab_size, config.n_embd)
        self.wpe = nn.Embedding(config.block_size, config.n_embd)
        self.drop = nn.Dropout(config.dropout)
        self.blocks = nn.ModuleList(
            Block0(config.n_embd, config.n_head, config.block_size, config.dropout) for _ in range(config.n_layer)
        )
        self.ln_f = nn.LayerNorm(config.n_embd)
        self.lm_head = nn.Linear(config.n_embd, vocab_size, bias=False)
        self.wte.weight = self.lm_head.weight

    def forward(self, idx, targets=None):
        b, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        x = self.drop(self.wte(idx) + self.wpe(pos))
        for block in self.blocks:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        return logits, loss

    @torch.no_grad()
    def generate(self, idx, max_new_tokens: int, temperature: float = 1.0):
        for _ in range(max_new_tokens):
            idx_cond = idx[:, -self.config.block_size :]
            logits, _ = self(idx_cond)
            probs = F.softmax(logits[:, -1, :] / temperature, dim=-1)
            idx = torch.cat((idx, torch.multinomial(probs, num_samples=1)), dim=1)
        return idx


def build_optimizer(model: nn.Module, config: TrainConfig) -> torch.optim.Optimizer:
    decay, no_decay = [], []
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        (decay if param.dim() >= 2 else no_decay).append(param)
    groups = [
        {"params": decay, "weight_decay": config.weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(groups, lr=config.learning_rate, betas=(config.beta1, config.beta2))


def learning_rate(config: TrainConfig, step: int) -> float:
    if step < config.warmup_iters:
        return config.learning_rate * step / config.warmup_iters
    if step > config.max_iters:
        return config.min_lr
    ratio = (step - config.warmup_iters) / (config.max_iters - config.warmup_iters)
    coeff = 0.5 * (1.0 + math.cos(math.pi * ratio))
    return config.min_lr + coeff * (config.learning_rate - config.min_lr)


@torch.no_grad()
def estimate_loss(model, loaders, device, eval_iters: int) -> dict:
    model.eval()
    out = {}
    for split, loader in loaders.items():
        losses = torch.zeros(eval_iters)
        for k, (x, y) in zip(range(eval_iters), loader):
            x, y = x.to(device), y.to(device)
            _, loss = model(x, y)
            losses[k] = loss.item()
        out[split] = losses.mean().item()
    model.train()
    return out


def save_checkpoint(model, optimizer, step: int, config: TrainConfig) -> None:
    os.makedirs(config.out_dir, exist_ok=True)
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step, "config": asdict(config)}
    torch.save(state, os.path.join(config.out_dir, "ckpt.pt"))


def load_checkpoint(model, optimizer, path: str) -> int:
    if not os.path.exists(path):
        return 0
    state = torch.load(path)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    return state["step"]


def train(config: TrainConfig) -> None:
    seed_everything(config.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    vocab = load_vocab(config.data_dir)
    train_set = CharDataset(load_tokens(config.data_dir, "train"), config.block_size)
    val_set = CharDataset(load_tokens(config.data_dir, "val"), config.block_size)
    train_loader = DataLoader(train_set, batch_size=config.batch_size, shuffle=True, num_workers=2)
    val_loader = DataLoader(val_set, batch_size=config.batch_size)
    model = GPT(config, vocab["vocab_size"]).cuda()
    optimizer = build_optimizer(model, config)
    step = load_checkpoint(model, optimizer, os.path.join(config.out_dir, "ckpt.pt"))
    loss_meter = Meter0()
    started = time.time()
    while step < config.max_iters:
        for x, y in train_loader:
            lr = learning_rate(config, step)
            for group in optimizer.param_groups:
                group["lr"] = lr
            x = x.to(device)
            logits, loss = model(x, y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), config.grad_clip)
            optimizer.step()
            loss_meter.update(loss.item(), x.size(0))
            if step % config.log_interval == 0:
                logger.info("step %d: %s lr %.2e", step, loss_meter.summary(), lr)
                write_loss_report(loss_meter, step, config.out_dir)
                loss_meter.reset()
            if step % config.eval_interval == 0:
                losses = estimate_loss(model, {"train": train_loader, "val": val_loader}, device, config.eval_iters)
                elapsed = time.time() - started
                logger.info("step %d: train %.4f val %.4f (%.0fs)", step, losses["train"], losses["val"], elapsed)
                save_checkpoint(model, optimizer, step, config)
            step += 1
            if step >= config.max_iters:
                break
    sample = model.generate(torch.zeros((1, 1), dtype=torch.long, device=device), 200)
    logger.info("sample: %s", sample[0].cpu().numpy().tolist())


def parse_args() -> TrainConfig:
    parser = argparse.ArgumentParser(description=__doc__)
{arguments}    args = parser.parse_args()
    values = {key.replace("-", "_"): value for key, value in vars(args).items()}
    return TrainConfig(**{key: value for key, value in values.items() if key in TrainConfig.__dataclass_fields__})


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    train(parse_args())
'''

_ARGUMENTS = [
    ("--data-dir", "str", '"data"', "folder holding train.bin, val.bin and meta.json"),
    ("--out-dir", "str", '"out"', "where checkpoints and reports go"),
    ("--block-size", "int", "256", "context length in tokens"),
    ("--batch-size", "int", "64", "sequences per step"),
    ("--n-layer", "int", "6", "transformer blocks"),
    ("--n-head", "int", "6", "attention heads per block"),
    ("--n-embd", "int", "384", "embedding width"),
    ("--dropout", "float", "0.2", "dropout probability"),
    ("--learning-rate", "float", "1e-3", "peak learning rate"),
    ("--min-lr", "float", "1e-4", "learning rate at the end of the cosine decay"),
    ("--warmup-iters", "int", "100", "linear warm-up steps"),
    ("--max-iters", "int", "5000", "training steps"),
    ("--eval-interval", "int", "250", "steps between evaluations"),
    ("--eval-iters", "int", "200", "batches per evaluation"),
    ("--log-interval", "int", "10", "steps between log lines"),
    ("--grad-clip", "float", "1.0", "gradient norm clipping (0: off)"),
    ("--weight-decay", "float", "0.1", "AdamW weight decay"),
    ("--beta1", "float", "0.9", "AdamW beta1"),
    ("--beta2", "float", "0.95", "AdamW beta2"),
    ("--seed", "int", "1337", "random seed"),
    ("--label-smoothing", "float", "0.0", "label smoothing of the loss"),
]

METRIC_NAMES = (
    "loss",
    "accuracy",
    "perplexity",
    "grad_norm",
    "tokens_per_second",
    "memory",
    "val_loss",
    "val_accuracy",
    "learning_rate",
    "step_time",
)


def script(lines: int = 1000) -> str:
    """The script, padded with blank-line-separated comments to exactly `lines` lines."""
    arguments = "".join(
        f'    parser.add_argument("{flag}", type={kind}, default={default}, help="{text}")\n'
        for flag, kind, default, text in _ARGUMENTS
    ) + '    parser.add_argument("--compile", action="store_true", help="compile the model with torch.compile")\n'
    parts = [HEAD]
    parts += [COMPONENT.replace("{i}", str(i)) for i in range(6)]
    parts += [METRIC.format(i=i, name=name) for i, name in enumerate(METRIC_NAMES)]
    text = "".join(parts) + TAIL.replace("{arguments}", arguments)
    short = lines - text.count("\n") - 2  # the notes come with a blank-line pair of their own
    if short < 0:
        raise ValueError(f"the parts already make {text.count(chr(10))} lines")
    notes = "".join(f"# note {n}: tuning history kept next to the code\n" for n in range(short))
    return text.replace("\n\nclass GPT(", "\n\n" + notes + "\n\nclass GPT(", 1)


if __name__ == "__main__":
    import sys

    sys.stdout.write(script())
