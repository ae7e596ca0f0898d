"""Correct training and evaluation code: simulated CUDA must stay silent.

Each function picks its device with the usual idiom, trains or evaluates a
little, and returns the numbers it produced; test_no_alarm.py runs each on
plain CPU and under simulation and compares.
"""

import io

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
from torch.utils.checkpoint import checkpoint
from torch.utils.data import DataLoader, TensorDataset


def _device():
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def _data(n=16, features=4, classes=3):
    g = torch.Generator().manual_seed(0)
    return TensorDataset(torch.randn(n, features, generator=g), torch.randint(0, classes, (n,), generator=g))


def _mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))


def _train(model, optimizer, device, *, loader=None, steps=2, clip=None, scheduler=None, scaler=None):
    losses = []
    loader = loader or DataLoader(_data(), batch_size=8)
    for _ in range(steps):
        for x, y in loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            if scaler is not None:
                scaler.scale(loss).backward()
                scaler.unscale_(optimizer)
            else:
                loss.backward()
            if clip == "norm":
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)
            elif clip == "value":
                torch.nn.utils.clip_grad_value_(model.parameters(), clip_value=0.01)
            if scaler is not None:
                scaler.step(optimizer)
                scaler.update()
            else:
                optimizer.step()
            if scheduler is not None:
                scheduler.step()
            losses.append(loss.item())
    return losses


def sgd_momentum():
    device = _device()
    model = _mlp().to(device)
    return _train(model, torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9), device)


def adam():
    device = _device()
    model = _mlp().to(device)
    return _train(model, torch.optim.Adam(model.parameters(), lr=0.01), device)


def adamw():
    device = _device()
    model = _mlp().to(device)
    return _train(model, torch.optim.AdamW(model.parameters(), lr=0.01, weight_decay=0.1), device)


def clipping():
    device = _device()
    model = _mlp().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    return _train(model, optimizer, device, clip="norm") + _train(model, optimizer, device, clip="value")


def schedulers():
    device = _device()
    model = _mlp().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    step = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    losses = _train(model, optimizer, device, scheduler=step)
    cycle = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.2, total_steps=12)
    return losses + _train(model, optimizer, device, scheduler=cycle)


def grad_scaler():
    device = _device()
    model = _mlp().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler(device.type)
    with torch.autocast(device.type, enabled=device.type == "cuda"):
        return _train(model, optimizer, device, scaler=scaler) + [scaler.get_scale()]


def _loader_run(**loader_args):
    device = _device()
    model = _mlp().to(device)
    loader = DataLoader(_data(), batch_size=8, **loader_args)
    return _train(model, torch.optim.SGD(model.parameters(), lr=0.1), device, loader=loader, steps=1)


def loader_in_process():
    return _loader_run(num_workers=0)


def loader_pinned():
    return _loader_run(num_workers=0, pin_memory=True)


def loader_workers_pinned():
    return _loader_run(num_workers=2, pin_memory=True)


def checkpoint_round_trip():
    device = _device()
    model = _mlp().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    losses = _train(model, optimizer, device, steps=1)
    buffer = io.BytesIO()
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, buffer)
    buffer.seek(0)
    state = torch.load(buffer, map_location=device)
    fresh = _mlp().to(device)
    fresh.load_state_dict(state["model"])
    fresh_optimizer = torch.optim.Adam(fresh.parameters(), lr=0.01)
    fresh_optimizer.load_state_dict(state["optimizer"])
    buffer.seek(0)
    on_cpu = torch.load(buffer, map_location="cpu")
    return losses + _train(fresh, fresh_optimizer, device, steps=1) + [on_cpu["model"]["0.bias"].sum().item()]


class _Conv(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 8, 3, padding=1), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        )
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        return self.head(self.body(x))


def conv_net():
    device = _device()
    torch.manual_seed(0)
    model = _Conv().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(8, 3, 8, 8, generator=g), torch.randint(0, 3, (8,), generator=g)
    losses = []
    for _ in range(3):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x.to(device)), y.to(device))
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


class _Tagger(nn.Module):
    def __init__(self, cell):
        super().__init__()
        self.embed = nn.Embedding(20, 8, padding_idx=0)
        self.rnn = cell(8, 16, batch_first=True, bidirectional=True)
        self.out = nn.Linear(32, 3)

    def forward(self, tokens, lengths):
        packed = pack_padded_sequence(self.embed(tokens), lengths, batch_first=True, enforce_sorted=False)
        output, _ = self.rnn(packed)
        padded, out_lengths = pad_packed_sequence(output, batch_first=True)
        assert out_lengths.device.type == "cpu"
        return self.out(padded)


def _sequences(cell):
    device = _device()
    torch.manual_seed(0)
    model = _Tagger(cell).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    g = torch.Generator().manual_seed(2)
    tokens = torch.randint(1, 20, (4, 6), generator=g)
    lengths = torch.tensor([6, 3, 5, 2])
    for row, length in enumerate(lengths.tolist()):
        tokens[row, length:] = 0
    tags = torch.randint(0, 3, (4, 6), generator=g)
    losses = []
    for _ in range(2):
        optimizer.zero_grad()
        logits = model(tokens.to(device), lengths)
        width = logits.shape[1]
        loss = F.cross_entropy(logits.reshape(-1, 3), tags[:, :width].reshape(-1).to(device))
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def lstm_packed():
    return _sequences(nn.LSTM)


def gru_packed():
    return _sequences(nn.GRU)


def transformer_masks():
    device = _device()
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(d_model=16, nhead=4, dim_feedforward=32, dropout=0.0, batch_first=True)
    model = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.01)
    g = torch.Generator().manual_seed(3)
    x = torch.randn(2, 5, 16, generator=g).to(device)
    causal = torch.triu(torch.ones(5, 5, dtype=torch.bool, device=device), diagonal=1)
    padding = torch.tensor([[False] * 5, [False, False, False, True, True]], device=device)
    losses = []
    for _ in range(2):
        optimizer.zero_grad()
        loss = model(x, mask=causal, src_key_padding_mask=padding).pow(2).mean()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        losses.append(model(x, src_key_padding_mask=padding).sum().item())
    return losses


def attention_fast_paths():
    # eval mode under no_grad: TransformerEncoder (nested tensors, the default)
    # and MultiheadAttention take torch's native kernels on a plain CPU run
    device = _device()
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(d_model=16, nhead=4, dim_feedforward=32, dropout=0.0, batch_first=True)
    encoder = nn.TransformerEncoder(layer, num_layers=2).to(device).eval()
    attention = nn.MultiheadAttention(16, 4, batch_first=True).to(device).eval()
    g = torch.Generator().manual_seed(3)
    x = torch.randn(2, 5, 16, generator=g).to(device)
    padding = torch.tensor([[False] * 5, [False, False, False, True, True]], device=device)
    with torch.no_grad():
        encoded = encoder(x, src_key_padding_mask=padding)
        attended, weights = attention(x, x, x, key_padding_mask=padding)
    return [encoded.sum().item(), attended.sum().item(), weights.sum().item(), *weights[1, 0].tolist()]


def evaluation():
    device = _device()
    model = _mlp().to(device)
    model.eval()
    correct, total, scores = 0, 0, []
    with torch.no_grad():
        for x, y in DataLoader(_data(), batch_size=8):
            x, y = x.to(device), y.to(device)
            logits = model(x)
            correct += (logits.argmax(1) == y).sum().item()
            total += y.numel()
            scores.extend(logits.softmax(1).cpu().numpy()[:, 0].tolist())
    return [correct / total] + scores


class _Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        ctx.save_for_backward(x, weight)
        return x * x * weight

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        scale = torch.full_like(weight, 2.0)
        return grad * scale * x * weight, grad * x * x


class _CustomOp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.weight = nn.Parameter(torch.ones(3))

    def forward(self, x):
        return _Square.apply(self.fc(x), self.weight)


def custom_function():
    device = _device()
    torch.manual_seed(0)
    model = _CustomOp().to(device)
    return _train(model, torch.optim.SGD(model.parameters(), lr=0.01), device, steps=2)


class _Deep(nn.Module):
    def __init__(self, reentrant):
        super().__init__()
        self.reentrant = reentrant
        self.blocks = nn.ModuleList(nn.Sequential(nn.Linear(8, 8), nn.Tanh()) for _ in range(3))
        self.inp = nn.Linear(4, 8)
        self.out = nn.Linear(8, 3)

    def forward(self, x):
        x = self.inp(x)
        for block in self.blocks:
            x = checkpoint(block, x, use_reentrant=self.reentrant)
        return self.out(x)


def _checkpointed(reentrant):
    device = _device()
    torch.manual_seed(0)
    model = _Deep(reentrant).to(device)
    return _train(model, torch.optim.SGD(model.parameters(), lr=0.1), device, steps=2)


def checkpointing():
    return _checkpointed(False)


def checkpointing_reentrant():
    return _checkpointed(True)


SCRIPTS = [
    sgd_momentum,
    adam,
    adamw,
    clipping,
    schedulers,
    grad_scaler,
    loader_in_process,
    loader_pinned,
    loader_workers_pinned,
    checkpoint_round_trip,
    conv_net,
    lstm_packed,
    gru_packed,
    transformer_masks,
    attention_fast_paths,
    evaluation,
    custom_function,
    checkpointing,
    checkpointing_reentrant,
]
