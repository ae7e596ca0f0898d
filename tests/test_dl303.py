"""DL303 (factory-without-device): a CPU factory inside a module's forward meets the inputs or parameters."""

from __future__ import annotations

from pathlib import Path

import pytest

from linting import dataflow_findings as findings
from linting import dataflow_messages as messages
from linting import lint
from devlint.config import Settings
from devlint.engine import check_bytes
from devlint.fixer import apply_fixes


# -- positives -------------------------------------------------------------------
GRU_HIDDEN = """
import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, hidden=16):
        super().__init__()
        self.hidden = hidden
        self.rnn = nn.GRU(8, hidden, batch_first=True)

    def forward(self, x):
        h0 = torch.zeros(1, x.size(0), self.hidden)
        out, h = self.rnn(x, h0)
        return out
"""


def test_an_rnn_hidden_state_is_reported_at_the_factory() -> None:
    assert findings(GRU_HIDDEN) == [("DL303", 12, 14)]
    assert messages(GRU_HIDDEN) == [
        "`torch.zeros(1, x.size(0), self.hidden)` creates a CPU tensor (no `device=`) that meets `self.rnn` on "
        "the module's device at line 13: create it with `device=x.device`"
    ]


def test_an_arange_mask_compared_with_input_lengths() -> None:
    source = """
    import torch
    import torch.nn as nn


    class Attn(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(8, 8)

        def forward(self, x, lengths):
            positions = torch.arange(x.shape[1])
            mask = positions[None, :] < lengths[:, None]
            return self.proj(x) * mask.unsqueeze(-1)
    """
    assert findings(source) == [("DL303", 11, 21)]


def test_noise_added_to_the_input_is_reported_once() -> None:
    source = """
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            eps = torch.randn(x.shape)
            a = x + eps
            b = x * eps
            return self.fc(a + b)
    """
    assert findings(source) == [("DL303", 11, 15)]
    assert messages(source)[0].endswith("meets `x` on the device of the module's inputs at line 12: create it with `device=x.device`")


def test_a_factory_meeting_a_submodule_output() -> None:
    source = """
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            eye = torch.eye(4)
            return self.fc(x) @ eye
    """
    assert findings(source) == [("DL303", 11, 15)]


def test_a_non_scalar_tensor_literal() -> None:
    source = """
    import torch
    import torch.nn as nn


    class Scale(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            bias = torch.tensor([0.1, 0.2, 0.3, 0.4])
            return self.fc(x) + bias
    """
    assert findings(source) == [("DL303", 11, 16)]


def test_a_factory_in_a_helper_method_that_forward_calls() -> None:
    source = """
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            h = self.init_hidden(x.size(0))
            return self.fc(x) + h

        def init_hidden(self, n):
            return torch.zeros(n, 4)
    """
    assert findings(source) == [("DL303", 15, 16)]


def test_a_hidden_state_helper_with_the_input_passed_in() -> None:
    # benedekrozemberczki/pytorch_geometric_temporal#18: H = torch.zeros(X.shape[0], out) in _set_hidden_state.
    source = """
    import torch
    import torch.nn as nn


    class DCRNN(nn.Module):
        def __init__(self, in_channels, out_channels):
            super().__init__()
            self.out_channels = out_channels
            self.conv_z = nn.Linear(in_channels + out_channels, out_channels)

        def _set_hidden_state(self, X, H):
            if H is None:
                H = torch.zeros(X.shape[0], self.out_channels)
            return H

        def forward(self, X, H=None):
            H = self._set_hidden_state(X, H)
            Z = torch.sigmoid(self.conv_z(torch.cat([X, H], dim=1)))
            return Z * H
    """
    assert findings(source) == [("DL303", 13, 17)]
    assert "create it with `device=X.device`" in messages(source)[0]


def test_a_function_returning_a_fresh_cpu_tensor_on_one_path() -> None:
    # rwightman/efficientdet-pytorch#105: the empty-rows branch returns a CPU tensor.
    source = """
    import torch


    def match(similarity_matrix):
        if similarity_matrix.shape[0] == 0:
            return -1 * torch.ones(similarity_matrix.shape[1], dtype=torch.long)
        return torch.argmax(similarity_matrix, 0)
    """
    assert findings(source) == [("DL303", 6, 21)]
    assert messages(source) == [
        "`torch.ones(similarity_matrix.shape[1]...` creates a CPU tensor (no `device=`) that `match()` returns "
        "where its other path returns `torch.argmax(similarity_matrix, 0)` on `similarity_matrix`'s device, which the "
        "caller chooses: create it with `device=similarity_matrix.device`"
    ]


def test_a_converter_split_by_its_inputs_type_returns_where_the_input_is() -> None:
    # simple-faster-rcnn's `totensor`: a numpy input becomes a tensor in host memory, where a
    # numpy array always is; a tensor input stays where it is. A tensor made anew on one path
    # (the empty-batch `torch.tensor([])`) is still reported.
    source = """
    import numpy as np
    import torch


    def totensor(data):
        if isinstance(data, np.ndarray):
            tensor = torch.from_numpy(data)
        if isinstance(data, torch.Tensor):
            tensor = data.detach()
        return tensor


    def as_batch(data):
        if isinstance(data, list):
            return torch.tensor(data)
        if data.numel() == 0:
            return torch.tensor([])
        return data * 2
    """
    assert findings(source) == [("DL303", 17, 16)]


def test_a_converter_that_hands_its_result_on_returns_where_the_input_is() -> None:
    # face-alignment's `flip` (copied into Wav2Lip): a numpy input becomes a host tensor, a
    # tensor input stays where it is, and either goes through `shuffle_lr`, which returns what it
    # was given. A tensor made anew on one path of the helper is still reported.
    source = """
    import torch


    def shuffle_lr(parts, pairs=None):
        if pairs is None:
            pairs = [1, 0]
        if parts.ndimension() == 3:
            return parts[pairs, ...]
        if parts.numel() == 0:
            return torch.zeros(2)
        return parts[:, pairs, ...]


    def flip(tensor, is_label=False):
        if not torch.is_tensor(tensor):
            tensor = torch.from_numpy(tensor)
        if is_label:
            tensor = shuffle_lr(tensor)
        return tensor.flip(tensor.ndimension() - 1)
    """
    assert findings(source) == [("DL303", 10, 16)]


def test_a_tensor_a_cpu_only_method_ran_on_is_on_the_cpu() -> None:
    # face-alignment's `get_preds_fromhm`: `Tensor.apply_` raises on any device but the CPU, so
    # past it `preds` is a CPU tensor and a CPU tensor made beside it meets no other device. Before
    # it, and in a function without it, the same mix is reported.
    source = """
    import torch


    def peaks(hm):
        _, idx = torch.max(hm.view(hm.size(0), -1), 1)
        preds = idx.view(-1, 1).repeat(1, 2).float()
        preds[..., 0].apply_(lambda x: x % hm.size(1))
        preds.add_(torch.FloatTensor([0.5, 0.5]))
        return preds


    def peaks_on_any_device(hm):
        _, idx = torch.max(hm.view(hm.size(0), -1), 1)
        preds = idx.view(-1, 1).repeat(1, 2).float()
        preds.add_(torch.FloatTensor([0.5, 0.5]))
        return preds
    """
    assert findings(source) == [("DL303", 15, 16)]


def test_a_tensor_tested_for_its_device_and_moved_if_elsewhere_is_on_that_device() -> None:
    # chatterbox's S3Gen.embed_ref: `if ref_wav.device != device: ref_wav = ref_wav.to(device)`
    # leaves it on `device` on both paths; where the branch does not move it, the path that
    # skips the branch keeps the CPU tensor.
    source = """
    from functools import lru_cache

    import numpy as np
    import torch
    import torchaudio as ta
    from torch import nn


    @lru_cache(100)
    def get_resampler(src_sr, dst_sr, device):
        return ta.transforms.Resample(src_sr, dst_sr).to(device)


    class S3Gen(nn.Module):
        def embed_ref(self, ref_wav: torch.Tensor, ref_sr: int, device="auto"):
            device = self.device if device == "auto" else device
            if isinstance(ref_wav, np.ndarray):
                ref_wav = torch.from_numpy(ref_wav).float()
            if ref_wav.device != device:
                ref_wav = ref_wav.to(device)
            return get_resampler(ref_sr, 24000, device)(ref_wav)

        def embed_unmoved(self, ref_wav: torch.Tensor, ref_sr: int, device="auto"):
            device = self.device if device == "auto" else device
            if isinstance(ref_wav, np.ndarray):
                ref_wav = torch.from_numpy(ref_wav).float()
            if ref_wav.device == device:
                ref_wav = ref_wav * 2
            return get_resampler(ref_sr, 24000, device)(ref_wav)
    """
    assert findings(source) == [("DL303", 26, 23)]


def test_writing_into_a_forward_input_annotated_as_a_plain_container_meets_no_device() -> None:
    # chatterbox's S3Gen.inference(..., ref_dict: Optional[dict] = None) turns numpy entries into
    # tensors in place. An input no annotation declares a container stays a tensor on the
    # module's device, which a CPU tensor written into meets; what a container input holds is
    # input, on the module's device.
    source = """
    from typing import Optional

    import numpy as np
    import torch
    from torch import nn


    class S3Gen(nn.Module):
        def forward(self, tokens, ref_dict: Optional[dict] = None):
            for key in list(ref_dict):
                if isinstance(ref_dict[key], np.ndarray):
                    ref_dict[key] = torch.from_numpy(ref_dict[key])
            return tokens


    class Scatter(nn.Module):
        def forward(self, tokens, ref_dict=None):
            for key in list(ref_dict):
                if isinstance(ref_dict[key], np.ndarray):
                    ref_dict[key] = torch.from_numpy(ref_dict[key])
            return tokens


    class Head(nn.Module):
        def forward(self, batch: dict):
            return batch["img"] + torch.zeros(3, 3)
    """
    assert findings(source) == [("DL303", 20, 33), ("DL303", 26, 31)]


def test_a_tensor_of_one_number_computed_from_constants_is_0_dim() -> None:
    # LLMs-from-scratch's GELU (copied into 24 files): `torch.tensor(2.0 / torch.pi)` holds one
    # number, which meets a tensor on any device; a list of such numbers is 1-D and does not.
    source = """
    import math

    import torch
    import torch.nn as nn


    class GELU(nn.Module):
        def forward(self, x):
            return 0.5 * x * (1 + torch.tanh(torch.sqrt(torch.tensor(2.0 / torch.pi)) * (x + 0.044715 * torch.pow(x, 3))))


    class Scale(nn.Module):
        def forward(self, x):
            return x * torch.tensor([2.0 / math.pi, 1.0])
    """
    assert findings(source) == [("DL303", 14, 20)]


def test_the_same_factory_outside_a_module_is_dl301() -> None:
    source = """
    import torch


    def f(device):
        x = torch.randn(3, device=device)
        zeros = torch.zeros(3)
        return x + zeros
    """
    assert findings(source) == [("DL303", 6, 13)]


def test_a_factory_combined_with_a_parameter() -> None:
    source = """
    import torch
    import torch.nn as nn


    class Prior(nn.Module):
        def __init__(self):
            super().__init__()
            self.mu = nn.Parameter(torch.zeros(4))

        def forward(self, n):
            eps = torch.randn(n, 4)
            return self.mu + eps
    """
    assert findings(source) == [("DL303", 11, 15)]


def test_init_still_reports_a_factory_meeting_a_moved_tensor() -> None:
    # In `__init__` only the module's own state is where it was built; a tensor moved there is not.
    source = """
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self, device):
            super().__init__()
            self.fc = nn.Linear(3, 3)
            table = torch.randn(3, device=device)
            self.register_buffer("w", table + torch.ones(3))
    """
    assert findings(source) == [("DL303", 10, 43)]


def test_a_buffer_replaced_by_a_cpu_tensor_after_construction() -> None:
    # speechbrain's complex RNNs resample their dropout masks on a batch-size change.
    source = """
    import torch
    import torch.nn as nn


    class CLSTMLayer(nn.Module):
        def __init__(self, input_size, hidden_size, batch_size):
            super().__init__()
            self.hidden_size = hidden_size
            self.batch_size = batch_size
            self.w = nn.Linear(input_size, hidden_size)
            self.drop = nn.Dropout(p=0.1)
            self._init_drop()

        def _init_drop(self):
            self.register_buffer("drop_masks", self.drop(torch.ones(16000, self.hidden_size)).data)
            self.drop_masks = self.drop(torch.ones(16000, self.hidden_size)).data

        def _change_batch_size(self, x):
            if self.batch_size != x.shape[0]:
                self.batch_size = x.shape[0]
                self.drop_masks = self.drop(torch.ones(16000, self.hidden_size)).data
                self.drop_masks = self.drop(torch.ones(16000, self.hidden_size, device=x.device)).data

        def reset(self):
            # torch's observers reset to an empty placeholder; MONAI rebuilds from the buffer's own data.
            self.drop_masks = torch.rand(0)
            self.drop_masks = torch.as_tensor([self.drop_masks[0]] * 3)

        def forward(self, x):
            self._change_batch_size(x)
            return self.w(x) * self.drop_masks[: x.shape[0]]
    """
    assert messages(source) == [
        "`torch.ones(16000, self.hidden_size)` creates a CPU tensor (no `device=`) that meets `self.drop_masks` on "
        "the module's device at line 21: create it on the device of the tensors it meets (`device=x.device` for a tensor `x`)"
    ]


def test_a_helper_only_init_calls_runs_before_any_move() -> None:
    # kornia's ViT `_compute_feats_dims`: a dummy pass from `__init__`. `reset` is also
    # called from forward, so its factory meets the moved layer.
    source = """
    import torch
    import torch.nn as nn


    class PatchEmbedding(nn.Module):
        def __init__(self, image_size=32):
            super().__init__()
            self.backbone = nn.Conv2d(3, 8, kernel_size=4, stride=4)
            self.proj = nn.Linear(8, 8)
            channels, size = self._compute_feats_dims((3, image_size, image_size))
            self.positions = nn.Parameter(torch.randn(size, channels))
            self.reset()

        def _compute_feats_dims(self, image_size):
            out = self.backbone(torch.zeros(1, *image_size)).detach()
            return out.shape[-3], out.shape[-2] * out.shape[-1]

        def reset(self):
            return self.proj(torch.zeros(1, 8))

        def forward(self, x):
            self.reset()
            return self.backbone(x).flatten(2).transpose(1, 2) + self.positions
    """
    assert findings(source) == [("DL303", 19, 26)]


def test_the_suggested_device_exists_when_the_factory_meets_a_submodule() -> None:
    source = """
    import torch
    import torch.nn as nn


    class Prior(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(4, 4)

        def forward(self, n):
            eps = torch.randn(n, 4)
            return self.proj(eps)
    """
    assert findings(source) == [("DL303", 11, 15)]
    assert "`device=self.proj.device`" not in messages(source)[0]


# -- negatives ---------------------------------------------------------------------
NEGATIVES = {
    "device-kwarg-new-like-buffer-scalar": """
        import torch
        import torch.nn as nn


        class Encoder(nn.Module):
            def __init__(self, hidden=16):
                super().__init__()
                self.hidden = hidden
                self.rnn = nn.GRU(8, hidden, batch_first=True)
                self.register_buffer("scale", torch.ones(hidden))

            def forward(self, x):
                h0 = torch.zeros(1, x.size(0), self.hidden, device=x.device)
                c = x.new_zeros(x.size(0), self.hidden)
                noise = torch.randn_like(x)
                pos = torch.arange(x.shape[1], device=x.device)
                steps = torch.tensor(0.5)
                out, h = self.rnn(x + noise * steps, h0)
                return out * self.scale + c.unsqueeze(1) + pos[None, :, None]
        """,
    "lstm-h0-c0-device-of-input": """
        import torch
        import torch.nn as nn


        class LSTMClassifier(nn.Module):
            def __init__(self, input_dim=28, hidden_dim=128, layer_dim=2, output_dim=10):
                super().__init__()
                self.hidden_dim = hidden_dim
                self.layer_dim = layer_dim
                self.lstm = nn.LSTM(input_dim, hidden_dim, layer_dim, batch_first=True)
                self.fc = nn.Linear(hidden_dim, output_dim)

            def forward(self, x):
                h0 = torch.zeros(self.layer_dim, x.size(0), self.hidden_dim, device=x.device)
                c0 = torch.zeros(self.layer_dim, x.size(0), self.hidden_dim, device=x.device)
                out, (hn, cn) = self.lstm(x, (h0, c0))
                return self.fc(out[:, -1, :])
        """,
    "register-buffer-positional-table": """
        import math

        import torch
        import torch.nn as nn


        class PositionalEncoding(nn.Module):
            def __init__(self, d_model=16, max_len=100):
                super().__init__()
                position = torch.arange(max_len).unsqueeze(1)
                div = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
                pe = torch.zeros(max_len, d_model)
                pe[:, 0::2] = torch.sin(position * div)
                pe[:, 1::2] = torch.cos(position * div)
                self.register_buffer("pe", pe)

            def forward(self, x):
                return x + self.pe[: x.size(1)]
        """,
    "causal-mask-buffer-and-moved-factories": """
        import torch
        import torch.nn as nn


        class Attention(nn.Module):
            def __init__(self, dim=8, max_len=64):
                super().__init__()
                self.qkv = nn.Linear(dim, 3 * dim)
                self.register_buffer("causal", torch.tril(torch.ones(max_len, max_len)).bool())

            def forward(self, x):
                q, k, v = self.qkv(x).chunk(3, dim=-1)
                scores = q @ k.transpose(-2, -1)
                n = x.size(1)
                scores = scores.masked_fill(~self.causal[:n, :n], float("-inf"))
                scores = scores.masked_fill(scores == 0, torch.finfo(scores.dtype).min)
                tri = torch.ones(n, n).tril().to(x.device)
                idx = torch.arange(n).to(x)
                return torch.softmax(scores * tri, dim=-1) @ v + idx[None, :, None]
        """,
    "weight-new-zeros": """
        import torch
        import torch.nn as nn


        class RNNModel(nn.Module):
            def __init__(self, ntoken, nhid=200, nlayers=2):
                super().__init__()
                self.encoder = nn.Embedding(ntoken, nhid)
                self.rnn = nn.LSTM(nhid, nhid, nlayers)
                self.nhid = nhid
                self.nlayers = nlayers

            def forward(self, input, hidden):
                output, hidden = self.rnn(self.encoder(input), hidden)
                return output, hidden

            def init_hidden(self, bsz):
                weight = next(self.parameters())
                return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                        weight.new_zeros(self.nlayers, bsz, self.nhid))
        """,
    "with-torch-device-of-the-input": """
        import torch
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)

            def forward(self, x):
                with torch.device(x.device):
                    bias = torch.zeros(4)
                return self.fc(x) + bias
        """,
    "lightning-self-device": """
        import pytorch_lightning as pl
        import torch


        class Lit(pl.LightningModule):
            def __init__(self):
                super().__init__()
                self.layer = torch.nn.Linear(4, 4)

            def forward(self, x):
                noise = torch.randn(x.shape, device=self.device)
                return self.layer(x + noise)
        """,
    "factories-used-for-host-side-work": """
        import torch
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)

            def forward(self, x):
                idx = torch.arange(5) * 2
                print(idx.tolist(), torch.zeros(3).sum().item())
                shape = torch.Size([x.shape[0], 4])
                return self.fc(x).view(shape)
        """,
    "factories-in-init-registered-as-parameters": """
        import torch
        import torch.nn as nn


        class FeatureLinear(nn.Module):
            def __init__(self, dense_dim, num_fields):
                super().__init__()
                self.weight = nn.Parameter(torch.zeros(dense_dim, 1))
                self.field_scales = nn.ParameterList([nn.Parameter(torch.ones(1)) for _ in range(num_fields)])
                self.threshold = nn.Parameter(torch.randn(1))

            def forward(self, dense_values, field_logits):
                out = dense_values.matmul(self.weight)
                for scale, logit in zip(self.field_scales, field_logits):
                    out = out + scale * logit
                return torch.relu(out - self.threshold)
        """,
    "scalar-tensors-in-forward": """
        import torch
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)

            def forward(self, x):
                temperature = torch.tensor(2.0)
                return self.fc(x) / temperature + torch.tensor(1)
        """,
    "seq2seq-outputs-moved-to-self-device": """
        import random

        import torch
        import torch.nn as nn


        class Seq2Seq(nn.Module):
            def __init__(self, encoder, decoder, device):
                super().__init__()
                self.encoder = encoder
                self.decoder = decoder
                self.device = device

            def forward(self, src, trg, teacher_forcing_ratio=0.5):
                batch_size, trg_len = trg.shape[1], trg.shape[0]
                outputs = torch.zeros(trg_len, batch_size, 100).to(self.device)
                hidden, cell = self.encoder(src)
                input = trg[0, :]
                for t in range(1, trg_len):
                    output, hidden, cell = self.decoder(input, hidden, cell)
                    outputs[t] = output
                    teacher_force = random.random() < teacher_forcing_ratio
                    coin = torch.rand(1).item() < 0.5
                    input = trg[t] if teacher_force else output.argmax(1)
                return outputs
        """,
    "gpt-positions-on-the-input-device": """
        import torch
        import torch.nn as nn


        class GPT(nn.Module):
            def __init__(self):
                super().__init__()
                self.tok = nn.Embedding(100, 16)
                self.pos = nn.Embedding(64, 16)

            def forward(self, idx):
                B, T = idx.size()
                pos = torch.arange(0, T, dtype=torch.long, device=idx.device)
                x = self.tok(idx) + self.pos(pos)
                return torch.cat([x, torch.zeros_like(x)], dim=-1)
        """,
    "as-tensor-of-a-tensor-keeps-its-device": """
        # MONAI HighResNet: `torch.as_tensor(t)` returns t, wherever it is.
        import torch
        import torch.nn as nn


        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 6, 3, padding=1)
                self.pad = nn.Conv2d(3, 6, 1)

            def forward(self, x):
                return self.conv(x) + torch.as_tensor(self.pad(x)) + torch.tensor(self.pad(x))
        """,
    "a-dummy-pass-in-init-sizes-the-head": """
        import torch
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 8, 3)
                n = self.conv(torch.zeros(1, 3, 32, 32)).numel()
                self.fc = nn.Linear(n, 10)
                self.register_buffer("w", torch.randn(10) * self.fc.bias)

            def forward(self, x):
                return self.fc(self.conv(x).flatten(1)) * self.w
        """,
}


@pytest.mark.parametrize("source", NEGATIVES.values(), ids=NEGATIVES.keys())
def test_factories_on_the_right_device_are_not_reported(source: str) -> None:
    assert findings(source) == []


def test_parameters_unpacked_into_self_attributes_are_registered() -> None:
    # VAR's attention: `self.q_bias, self.v_bias = nn.Parameter(...), nn.Parameter(...)`.
    source = """
    import torch
    import torch.nn as nn

    class Attention(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.q_bias, self.v_bias = nn.Parameter(torch.zeros(d)), nn.Parameter(torch.zeros(d))
            self.register_buffer("k_bias", torch.zeros(d))

        def forward(self, x):
            return x + torch.cat((self.q_bias, self.k_bias, self.v_bias))
    """
    assert findings(source) == []


def test_a_static_method_called_through_its_class_gets_its_callers_facts() -> None:
    # GroundingDINO's `Model.post_process_result(boxes=boxes)`, boxes moved to the CPU first.
    source = """
    import torch

    class Model:
        @staticmethod
        def post_process(boxes: torch.Tensor, w: int):
            return boxes * torch.Tensor([w, w])

        def predict(self, x):
            boxes = self.net(x).cpu()
            return Model.post_process(boxes, 3)
    """
    assert findings(source) == []


def test_a_cpu_tensor_indexed_with_tensors_from_elsewhere() -> None:
    # torch_sparse's get_diag (`value[row == col]`), DGL's `pred[nid]` with `nid` moved to the
    # device, metric-learning's `mask[rows, :c] = True`: PyTorch takes CPU indices into a device
    # tensor, never device indices into a CPU one.
    source = """
    import torch
    from torch import Tensor

    def get_diag(row: Tensor, col: Tensor) -> Tensor:
        value = torch.ones(row.size(0))
        return value[row == col]

    def mark(labels: Tensor, n: int):
        mask = torch.zeros((n, n), dtype=torch.bool)
        rows = torch.where(labels == 1)[0]
        mask[rows, :2] = True
        return mask

    def lookup(pred_size, ids, device):
        pred = torch.empty(pred_size, 3)
        nid = ids.to(device)
        return pred[nid]

    def fine(x: Tensor, n: int):
        return x[torch.arange(n)]
    """
    assert [(code, line) for code, line, _ in findings(source)] == [("DL303", 5), ("DL303", 9), ("DL303", 15)]


def test_a_factory_moved_to_a_device_variable_is_placed_even_where_that_looks_like_the_cpu() -> None:
    # co-tracker's evaluator: `sc_pt = torch.from_numpy(sc_py).float().to(device)` with
    # `device = sample.video.device`; that the sample is on the CPU is only the analysis's guess.
    source = """
    import numpy as np
    import torch

    def metrics(sample, pred: torch.Tensor, W):
        device = sample.video.device
        sc = torch.from_numpy(np.array([W, W])).float().to(device)
        return pred / sc

    def evaluate(test_loader, model, W):
        for sample in test_loader:
            pred = model(sample.video)
            metrics(sample, pred, W)
    """
    assert findings(source) == []


def test_a_helper_returns_on_the_device_of_the_callers_own_input() -> None:
    # piq's BRISQUE: `x = _adjust_dimensions(x)` (a copy of its argument), then
    # `x * torch.tensor([0.299, 0.587, 0.114])` with `x` the caller's input.
    source = """
    import torch

    def adjust(t):
        return t.clone()

    def brisque(x: torch.Tensor) -> torch.Tensor:
        y = adjust(x)
        rgb_to_grey = torch.tensor([0.299, 0.587, 0.114])
        return y * rgb_to_grey
    """
    assert findings(source) == [("DL303", 8, 19)]
    assert messages(source) == [
        "`torch.tensor([0.299, 0.587, 0.114])` creates a CPU tensor (no `device=`) that meets `y` on `x`'s device, "
        "which the caller chooses at line 9: create it with `device=y.device`"
    ]


def test_a_method_builds_a_distribution_from_the_callers_input() -> None:
    # pytorch-forecasting's DistributionLoss: `distribution = self.map_x_to_distribution(y_pred)`,
    # then `distribution.icdf(torch.tensor(quantiles)[:, None, None])`.
    source = """
    import torch
    from torch import distributions

    class DistributionLoss:
        def map_x_to_distribution(self, x: torch.Tensor) -> distributions.Distribution:
            return distributions.Normal(loc=x[..., 0], scale=x[..., 1])

        def to_quantiles(self, y_pred: torch.Tensor, quantiles):
            distribution = self.map_x_to_distribution(y_pred)
            return distribution.icdf(torch.tensor(quantiles)[:, None, None])
    """
    assert findings(source) == [("DL303", 10, 34)]


def test_a_helper_that_moves_its_argument_to_the_cpu_keeps_its_cpu_result() -> None:
    source = """
    import torch

    def host(t):
        return t.detach().cpu()

    def stats(x: torch.Tensor):
        y = host(x)
        return y * torch.tensor([0.5, 0.5])
    """
    assert findings(source) == []


def test_a_factory_held_in_a_variable_or_an_attribute() -> None:
    # nii-yamagishilab's NSF loss: `self.win = torch.hann_window`, then
    # `torch.stft(output, ..., window=self.win(frame_len))`.
    source = """
    import torch

    class Loss:
        def __init__(self):
            self.win = torch.hann_window

        def compute(self, output: torch.Tensor, frame_len):
            return torch.stft(output, 512, 80, frame_len, window=self.win(frame_len), return_complex=True)

    def compute(output: torch.Tensor, frame_len):
        win = torch.hann_window
        return torch.stft(output, 512, 80, frame_len, window=win(frame_len), return_complex=True)

    def placed(output: torch.Tensor, frame_len):
        win = torch.hann_window
        return torch.stft(output, 512, 80, frame_len, window=win(frame_len, device=output.device), return_complex=True)
    """
    assert findings(source) == [("DL303", 8, 62), ("DL303", 12, 58)]
    assert messages(source)[0].startswith("`self.win(frame_len)` creates a CPU tensor (no `device=`) that meets `output`")


# Coqui TTS's TorchSTFT: a window built in `__init__` meets `__call__`'s input in `torch.stft`.
TORCH_STFT = """
    import torch

    class TorchSTFT:
        def __init__(self, n_fft, win_length, window='hann_window'):
            self.n_fft = n_fft
            self.window = {window}

        def __call__(self, x: torch.Tensor):
            return torch.stft(x, self.n_fft, window=self.window, return_complex=True)
"""


def test_a_factory_named_by_a_string_to_getattr() -> None:
    # `self.window = getattr(torch, window)(win_length)` with `window='hann_window'` as the default.
    source = TORCH_STFT.format(window="getattr(torch, window)(win_length)") + """
    def stft(x: torch.Tensor, n):
        return torch.stft(x, n, window=getattr(torch, "hamming_window")(n), return_complex=True)
    """
    assert findings(source) == [("DL303", 6, 23), ("DL303", 12, 36)]


def test_getattr_of_a_name_the_file_does_not_know_is_not_guessed() -> None:
    source = TORCH_STFT.format(window="getattr(torch, window)(win_length)") + """
    def build(config):
        return TorchSTFT(512, 400, window=config.window)

    def act(x: torch.Tensor, name):
        return getattr(torch, name)(x) * x
    """
    assert findings(source) == []


def test_no_fix_names_a_tensor_of_another_method() -> None:
    # `device=x.device` in `__init__` would be a NameError: `x` is `__call__`'s.
    found = [f for f in lint(TORCH_STFT.format(window="torch.hann_window(win_length)"), Settings()) if f.code == "DL303"]
    assert [(f.start.line, f.fix) for f in found] == [(6, None)]
    assert found[0].message.endswith("at line 9: move it there where they meet, with `.to(x.device)`")


# -- tensors the code declares, reached from a parameter -------------------------------------
def test_an_annotated_local_read_from_a_parameters_attribute_is_the_callers() -> None:
    # ParlAI's RAG query rewriting: `query_vec: torch.LongTensor = batch.query_vec`, then
    # `torch.cat([query_vec[i], torch.LongTensor(tokens)])`.
    source = """
    from typing import List

    import torch


    def rewrite(batch, pred_vecs, tokenize):
        new_queries: List[torch.LongTensor] = []
        query_vec: torch.LongTensor = batch.query_vec
        for i in range(batch.batchsize):
            query_i = torch.LongTensor(tokenize(pred_vecs[i]))
            new_queries.append(torch.cat([query_vec[i], query_i], dim=0))
        return new_queries
    """
    assert findings(source) == [("DL303", 10, 19)]
    assert messages(source) == [
        "`torch.LongTensor(tokenize(pred_vecs[i]))` creates a CPU tensor (no `device=`) that meets `query_vec[i]` on "
        "`batch`'s device, which the caller chooses at line 11: create it on the device of the tensors it meets "
        "(`device=x.device` for a tensor `x`)"
    ]


def test_the_items_of_a_parameter_annotated_a_mapping_of_tensors_are_the_callers() -> None:
    # pytorch-forecasting's `step(self, x: Dict[str, torch.Tensor], ...)`: the monotonicity
    # weights come from `torch.tensor([...])` and multiply the gradient of `x["decoder_cont"]`;
    # the step is called with `x, y = batch` from the Lightning hooks.
    source = """
    from typing import Dict

    import torch


    class Model:
        def training_step(self, batch, batch_idx):
            x, y = batch
            return self.step(x, y)

        def step(self, x: Dict[str, torch.Tensor], y: torch.Tensor):
            gradient = x["decoder_cont"] * 2
            monotonicity = torch.tensor([1.0, -1.0], dtype=gradient.dtype)
            return gradient * monotonicity[None, None]
    """
    assert findings(source) == [("DL303", 13, 24)]
    assert messages(source) == [
        "`torch.tensor([1.0, -1.0], dtype=gradi...` creates a CPU tensor (no `device=`) that meets "
        "`gradient` on `x`'s device, which the caller chooses at line 14: create it with `device=gradient.device`"
    ]


def test_the_elements_of_parameters_annotated_sequences_of_tensors_are_the_callers() -> None:
    source = """
    from typing import List, Optional, Tuple

    import torch


    def stack(xs: List[torch.Tensor]):
        return torch.stack(xs) + torch.ones(3)

    def first(pair: Tuple[torch.Tensor, ...]):
        return pair[0] - torch.zeros(3)

    def values(feats: Optional[dict[str, torch.Tensor]]):
        for name, feat in feats.items():
            return feat * torch.rand(3)
    """
    assert [(code, line) for code, line, _ in findings(source)] == [("DL303", 7), ("DL303", 10), ("DL303", 14)]


def test_the_tensor_fields_of_a_dataclass_are_its_callers() -> None:
    # RTMDet's RTMDetOutput: `@dataclass` fields `reg_preds: tuple[torch.Tensor, ...]` hold the
    # model's outputs; a method builds `torch.arange` grid points and combines the two.
    source = """
    from dataclasses import dataclass

    import torch


    @dataclass
    class Output:
        reg_preds: tuple[torch.Tensor, torch.Tensor, torch.Tensor]
        scores: torch.Tensor

        def grid(self, i: int) -> torch.Tensor:
            _, _, height, width = self.reg_preds[i].shape
            points = torch.arange(0, width, dtype=torch.float)
            return self.reg_preds[i] - points

        def ranked(self):
            return self.scores[torch.arange(3)], self.scores + torch.ones(3)
    """
    assert findings(source) == [("DL303", 13, 18), ("DL303", 17, 60)]
    assert messages(source)[0] == (
        "`torch.arange(0, width, dtype=torch.fl...` creates a CPU tensor (no `device=`) that meets "
        "`self.reg_preds[i]` on `reg_preds`'s device, which the caller chooses at line 14: create it on the device "
        "of the tensors it meets (`device=x.device` for a tensor `x`)"
    )


def test_what_the_declarations_do_not_show_to_be_the_callers_stays_unplaced() -> None:
    source = """
    from dataclasses import dataclass, field
    from typing import Dict

    import torch


    def put(x: Dict[str, torch.Tensor]):
        # Once the code writes an item or updates it, what it reads may be what it wrote.
        x["mask"] = torch.ones(3)
        a = x["mask"] * torch.zeros(3)
        x.update(extra=torch.ones(3))
        return a, x["extra"] * torch.zeros(3)

    def keys(x: Dict[str, torch.Tensor]):
        # Iterating a mapping yields its keys.
        for name in x:
            return torch.zeros(3)[name]

    def built(batch, make):
        # Annotated, but not reached from a parameter: the analysis does not know where it is.
        q: torch.Tensor = make(batch)
        return q + torch.ones(3)


    @dataclass
    class Defaults:
        kept: torch.Tensor = field(default_factory=lambda: torch.zeros(3))
        moved: torch.Tensor

        def __post_init__(self):
            self.moved = self.moved.cpu()

        def use(self):
            return self.kept + torch.ones(3), self.moved + torch.ones(3)


    @dataclass(init=False)
    class Own:
        t: torch.Tensor

        def use(self):
            return self.t + torch.ones(3)
    """
    assert findings(source) == []


# -- modules the code declares ---------------------------------------------------------------
CAPTUM_LLM_ATTRIBUTION = """
from typing import cast

import torch
from torch import nn


class LLMAttribution:
    def __init__(self, forward_func, tokenizer):
        self.model = cast({declared}, forward_func)
        self.tokenizer = tokenizer
        self.device = next(self.model.parameters()).device

    def _format_model_input(self, model_input):
        if isinstance(model_input, str):
            return self.tokenizer.encode(model_input, return_tensors="pt").to(self.device)
        return model_input.to(self.device)

    def _forward_func(self, inp):
        model_inp = self._format_model_input(inp)
        outputs = self.model.forward(model_inp, attention_mask=torch.tensor([[1] * model_inp.shape[1]]))
        return outputs.logits
"""


def test_a_value_cast_to_a_module_is_called_as_one() -> None:
    # Captum's LLMAttribution: `self.model = cast(nn.Module, self.forward_func)`; the input ids
    # are moved to the model's device, the attention mask is built on the CPU, both go to
    # `self.model.forward(...)`.
    source = CAPTUM_LLM_ATTRIBUTION.format(declared="nn.Module")
    assert findings(source) == [("DL303", 20, 64)]
    assert messages(source) == [
        "`torch.tensor([[1] * model_inp.shape[1]])` creates a CPU tensor (no `device=`) that meets `model_inp` on "
        "`self.device` (moved by `.to()`, line 15) at line 20: create it with `device=model_inp.device`"
    ]


def test_a_cast_to_anything_else_declares_no_module() -> None:
    assert findings(CAPTUM_LLM_ATTRIBUTION.format(declared="object")) == []
    assert findings(CAPTUM_LLM_ATTRIBUTION.format(declared='"Callable"')) == []


# deep-text-recognition-benchmark test.py/train.py: `preds_size = torch.IntTensor(...)` (CPU) is the
# `input_lengths` of `nn.CTCLoss`; torch's ctc_loss copies the lengths to the CPU itself (and
# cuDNN wants them there), as transformers' wav2vec2 relies on with `F.ctc_loss(log_probs, ...,
# input_lengths, target_lengths)`.
CTC_VALIDATION = """
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def validation(model, criterion, loader):
    for image_tensors, text, length in loader:
        image = image_tensors.to(device)
        preds = model(image)
        preds_size = torch.IntTensor([preds.size(1)] * image.size(0))
        cost = criterion(preds.log_softmax(2).permute(1, 0, 2), text.to(device), preds_size, length)
        yield cost


def main(model, loader, ctc):
    criterion = torch.nn.{loss}.to(device)
    return list(validation(model.to(device), criterion, loader))
"""


def test_cpu_lengths_passed_to_a_ctc_loss_module() -> None:
    assert findings(CTC_VALIDATION.replace("{loss}", "CTCLoss(zero_infinity=True)")) == []


def test_cpu_lengths_passed_to_a_module_that_may_be_a_ctc_loss() -> None:
    # test.py: `criterion` is a CTCLoss or a CrossEntropyLoss, by `opt.Prediction`.
    source = CTC_VALIDATION.replace("torch.nn.{loss}", "(torch.nn.CTCLoss() if ctc else torch.nn.CrossEntropyLoss())")
    assert findings(source) == []


def test_a_cpu_tensor_passed_to_another_loss_with_device_predictions() -> None:
    source = CTC_VALIDATION.replace("{loss}", "CrossEntropyLoss()").replace("length)", "length.to(device))")
    assert findings(source) == [("DL303", 10, 22)]
    assert messages(source) == [
        "`torch.IntTensor([preds.size(1)] * ima...` creates a CPU tensor (no `device=`) that meets "
        "`preds.log_softmax(2).permute(1, 0, 2)` on `device` (moved by `.to()`, line 17) at line 11: move it there with `.to(preds.device)`"
    ]


def test_cpu_lengths_passed_to_functional_ctc_loss() -> None:
    # transformers' Wav2Vec2ForCTC (microsoft/LoRA's copy): lengths computed from the mask.
    source = """
    import torch
    import torch.nn.functional as F


    def ctc(logits, labels, device):
        log_probs = F.log_softmax(logits.to(device), dim=-1).transpose(0, 1)
        input_lengths = torch.full((logits.size(0),), logits.size(1), dtype=torch.long)
        target_lengths = torch.tensor([len(labels)])
        return F.ctc_loss(log_probs, labels, input_lengths, target_lengths=target_lengths)
    """
    assert findings(source) == []


def test_a_parameter_converted_with_as_tensor_then_used_as_a_tensor() -> None:
    # torchdrug data/graph.py `_standarize_index` (a real bug, fixed with `device=self.device`):
    # `index.ndim`/`.long()` are uses of the CPU tensor `torch.as_tensor` made, so they do not
    # make the parameter a tensor that `as_tensor` would leave where the caller put it.
    source = """
    import torch


    class Graph:
        def __init__(self, num_node, device):
            self.num_node = num_node
            self.device = device

        def _standarize_index(self, index, count):
            if isinstance(index, slice):
                index = torch.arange(index.start, index.stop, device=self.device)
            else:
                index = torch.as_tensor(index)
                if index.ndim == 0:
                    index = index.unsqueeze(0)
                if index.dtype == torch.bool:
                    index = index.nonzero().squeeze(-1)
                else:
                    index = index.long()
            return index

        def node_mask(self, index):
            index = self._standarize_index(index, self.num_node)
            mapping = -torch.ones(self.num_node, dtype=torch.long, device=self.device)
            mapping[index] = index
            return mapping
    """
    assert findings(source) == [("DL303", 13, 21)]
    assert messages(source) == [
        "`torch.as_tensor(index)` creates a CPU tensor (no `device=`) that meets `mapping` on `self.device` "
        "(created by `torch.ones`, line 24) at line 25: create it with `device=self.device`"
    ]


def test_a_list_of_inputs_given_to_forward_holds_inputs_on_the_module_device() -> None:
    # `isinstance(feats, (list, tuple))` says `feats` is no tensor, not that its items left the
    # device of the module's inputs (feature maps handed to a head as a list).
    source = """
    import torch
    import torch.nn as nn


    class Head(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(4, 4)

        def forward(self, feats):
            if isinstance(feats, (list, tuple)):
                feats = torch.cat(feats, dim=0)
            pos = torch.arange(feats.size(0))
            return feats + pos[:, None]
    """
    assert findings(source) == [("DL303", 13, 15)]


# `f(x, **options)`: an unpacked mapping can give only what nothing explicit gave (a second value
# for `x` is a TypeError), so `x` is the argument written; pytorch-forecasting's
# `CompositeMetric.to_quantiles(y_pred, **kwargs)` hands its `y_pred` on so.
KEYWORDS_UNPACKED = """
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def scale(x, weights=None, **options):
    return x * torch.tensor([1.0, 2.0])


def run(xs, **options):
    x = torch.ones(2, device=device)
    return scale(x, **options)
"""


def test_an_argument_written_beside_unpacked_ones_is_known() -> None:
    assert findings(KEYWORDS_UNPACKED) == [("DL303", 7, 16)]
    assert messages(KEYWORDS_UNPACKED) == [
        "`torch.tensor([1.0, 2.0])` creates a CPU tensor (no `device=`) that meets `x` on `device` (created by `torch.ones`, line 11) at line 7: create it with `device=device`"
    ]


def test_a_positional_argument_after_an_unpacked_sequence_lands_nowhere_known() -> None:
    source = KEYWORDS_UNPACKED.replace("scale(x, **options)", "scale(*xs, x)")
    assert findings(source) == []


# `t.type(y.type())` converts to `y`'s type name, device included ("torch.cuda.FloatTensor"):
# YOLOX's and YOLOv3's grids. `t.type(y.dtype)` converts the dtype only and keeps `t`'s device.
TYPE_OF_ANOTHER = """
import torch
from torch import nn


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 1)

    def forward(self, x):
        grid = torch.zeros(1, 2, 3, 3).type(x.type())
        return self.conv(x) + grid
"""


def test_a_tensor_converted_to_anothers_type_name_is_on_its_device() -> None:
    assert findings(TYPE_OF_ANOTHER) == []
    assert findings(TYPE_OF_ANOTHER.replace(".type(x.type())", ".type(x.dtype)")) == [("DL303", 11, 16)]



def test_a_type_name_passed_to_a_method_carries_the_device() -> None:
    # YOLOX's `decode_outputs(outputs, dtype=xin[0].type())`, then `.type(dtype)` on its grids.
    source = """
import torch
from torch import nn


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 1)

    def forward(self, x):
        return self.decode(self.conv(x), dtype=x.type())

    def decode(self, outputs, dtype):
        grid = torch.arange(3).type(dtype)
        return outputs + grid
"""
    assert findings(source) == []
    assert findings(source.replace("dtype=x.type()", "dtype=x.dtype")) == [("DL303", 14, 16)]


def test_a_function_that_gives_a_bool_still_takes_its_tensors_on_one_device() -> None:
    # ReAgent's sampler: `torch.allclose` answers with a bool, and raises for tensors on two devices.
    source = """
import torch


def check(p: torch.Tensor):
    assert torch.allclose(p.sum(1), torch.ones(p.shape[0]))
"""
    assert findings(source) == [("DL303", 5, 37)]


def test_a_submodules_plain_attribute_is_what_its_class_binds() -> None:
    # MiniGPT-4's EVA ViT: `self.patch_embed.patch_shape` is a tuple of ints the class binds in
    # `__init__`, not a parameter on the module's device.
    source = """
import torch
import torch.nn as nn


class PatchEmbed(nn.Module):
    def __init__(self, img_size=224, patch_size=16):
        super().__init__()
        self.patch_shape = (img_size // patch_size, img_size // patch_size)
        self.proj = nn.Conv2d(3, 8, 3)


class Bias(nn.Module):
    def __init__(self, window_size):
        super().__init__()
        coords = torch.arange(window_size[0])
        coords += window_size[0] - 1
        self.register_buffer("idx", coords)


class VT(nn.Module):
    def __init__(self):
        super().__init__()
        self.patch_embed = PatchEmbed()
        self.bias = Bias(window_size=self.patch_embed.patch_shape)
"""
    assert findings(source) == []
    # A submodule's parameter is still where the module is.
    forward = "\n    def forward(self, x):\n        return torch.ones(3) * self.patch_embed.proj.weight\n"
    assert findings(source + forward) == [("DL303", 27, 16)]


def test_an_attribute_set_after_construction_is_the_cpu_tensor_it_was_given() -> None:
    # OpenNMT's rotary cache rebuilt in `forward`: `module.to()` never saw it, so it is not on the
    # module's device until the code moves it.
    source = """
import torch
import torch.nn as nn


class A(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.rope = None

    def forward(self, x):
        if self.rope is None or x.shape[1] > self.rope.shape[0]:
            self.rope = torch.arange(x.shape[1])
        rope = self.rope[: x.shape[1]]
        return self.lin(x) * rope

    def chosen(self, x):
        self.last = self.lin(x).cpu()
        return self.last.numpy()
"""
    assert findings(source) == [("DL303", 13, 25)]
    # Moved where it is made, it is where the code put it.
    assert findings(source.replace("torch.arange(x.shape[1])", "torch.arange(x.shape[1]).to(x.device)")) == []


def test_calling_an_object_runs_its_classes_call_method() -> None:
    # BLIP's ImageNorm: an object of a plain class, called in a Dataset's `__getitem__` on frames
    # an opaque reader decoded. Python runs `type(obj).__call__`, so the caller is a caller of
    # `__call__`, and what it passes (which the analysis cannot place) is what `img` is.
    source = """
import torch
from torch.utils.data import Dataset


class ImageNorm(object):
    def __init__(self, mean):
        self.mean = torch.tensor(mean).view(1, 3, 1, 1)

    def __call__(self, img):
        return img.sub_(self.mean)


class VideoDataset(Dataset):
    def __init__(self, mean):
        self.img_norm = ImageNorm(mean=mean)

    def __getitem__(self, index):
        return self.img_norm(self.load(index).float())

    def load(self, index):
        return decode(index)
"""
    assert findings(source) == []
    # Called with a tensor on the chosen device, the CPU mean meets it.
    moved = source.replace("self.img_norm(self.load(index).float())", "self.img_norm(self.load(index).to(DEVICE))")
    moved = moved.replace("from torch.utils.data import Dataset\n", "from torch.utils.data import Dataset\n\nDEVICE = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n")
    assert findings(moved) == [("DL303", 9, 21)]


def test_a_module_method_called_with_cpu_inputs_runs_the_model_on_the_cpu() -> None:
    # GroundingDINO's Swin backbone: the file's smoke test builds the model, never moves it, and
    # calls `forward_raw` on a CPU tensor, as a caller of forward() does.
    source = """
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward_raw(self, x):
        return self.proj(x)


def build(**kw):
    return Net(**kw)


if __name__ == "__main__":
    model = build()
    y = model.forward_raw(torch.rand(2, 4))
"""
    assert findings(source) == []
    # A tensor the method makes itself still meets the weights wherever the model is.
    made = source.replace("return self.proj(x)", "return self.proj(x) + torch.ones(4)")
    assert findings(made) == [("DL303", 11, 31)]


def test_what_a_held_callable_makes_of_the_inputs_is_on_their_device() -> None:
    # NeuralProphet's PinballLoss: `self.loss_func` is a loss module the constructor was given;
    # its output lives where `outputs` and `target` are, and the CPU quantiles meet it.
    source = """
import torch
from torch.nn.modules.loss import _Loss


class PinballLoss(_Loss):
    def __init__(self, loss_func, quantiles):
        super().__init__()
        self.loss_func = loss_func
        self.quantiles = quantiles

    def forward(self, outputs, target):
        base_losses = self.loss_func(outputs, target)
        return torch.tensor(self.quantiles).unsqueeze(0) * base_losses
"""
    assert findings(source) == [("DL303", 13, 16)]
    # Created where the inputs are, it meets them there.
    assert findings(source.replace("torch.tensor(self.quantiles)", "torch.tensor(self.quantiles, device=outputs.device)")) == []


def test_a_tensor_hook_gets_the_gradient_on_the_tensors_device() -> None:
    # snntorch's LeakyParallel: `self.rnn.weight_hh_l0.register_hook(self.grad_hook)`, and the
    # hook multiplies the gradient by a CPU `torch.eye`. Autograd calls a tensor hook with the
    # tensor's gradient (FishLeg's zero-grad hook failed the same way on a GPU).
    source = """
import torch
import torch.nn as nn


class LeakyParallel(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.hidden_size = hidden_size
        self.rnn = nn.RNN(hidden_size, hidden_size)
        self.rnn.weight_hh_l0.register_hook(self.grad_hook)

    def grad_hook(self, grad):
        mask = torch.eye(self.hidden_size, self.hidden_size)
        return grad * mask


def zero_hook(grad):
    return grad * torch.tensor([1.0, 0.0])


def attach(w):
    w.register_hook(zero_hook)
"""
    assert findings(source) == [("DL303", 13, 16), ("DL303", 18, 19)]
    # Not registered, the parameter may be anything: nothing is known of it.
    assert findings(source.replace("register_hook", "keep")) == []


def test_each_meshgrid_output_is_its_own_inputs_doing() -> None:
    # DETR's masks_to_boxes (copied by YOLOS, Deformable-DETR): `y, x = torch.meshgrid(y, x)`.
    # Both CPU aranges reach `masks`, so both are reported and both fixes apply in one run:
    # fixing only one would leave meshgrid with inputs on two devices.
    source = """
import torch


def masks_to_boxes(masks):
    if masks.numel() == 0:
        return torch.zeros((0, 4), device=masks.device)
    h, w = masks.shape[-2:]
    y = torch.arange(0, h, dtype=torch.float)
    x = torch.arange(0, w, dtype=torch.float)
    y, x = torch.meshgrid(y, x)
    x_mask = masks * x.unsqueeze(0)
    y_mask = masks * y.unsqueeze(0)
    return torch.stack([x_mask.max(), y_mask.max()])
"""
    assert findings(source) == [("DL303", 8, 9), ("DL303", 9, 9)]
    settings = Settings(select=("DL303",))
    result = check_bytes(source.encode(), Path("m.py"), "m.py", settings, keep_source=True)
    fixed = apply_fixes([result], settings, unsafe=False, write=False, stdin=True).stdin_text
    assert "torch.arange(0, h, dtype=torch.float, device=masks.device)" in fixed
    assert "torch.arange(0, w, dtype=torch.float, device=masks.device)" in fixed
    assert findings(fixed) == []


CORRELATED = """
import torch
import torch.nn as nn


def main(args):
    model = nn.Linear(3, 3)
    x = torch.zeros(2, 3)
    if args.cuda:
        model.cuda()
        x = x.cuda()
    y = model(x)
    if args.cuda:
        z = y * torch.ones(3).cuda()
    else:
        z = y * torch.ones(3)
    return z


def rebound(args, parse):
    model = nn.Linear(3, 3)
    x = torch.zeros(2, 3)
    if args.cuda:
        model.cuda()
        x = x.cuda()
    y = model(x)
    args = parse()
    if args.cuda:
        z = y * torch.ones(3).cuda()
    else:
        z = y * torch.ones(3)
    return z


def unmoved(args):
    model = nn.Linear(3, 3)
    if args.cuda:
        model.cuda()
    x = torch.zeros(2, 3)
    if args.cuda:
        print("on the GPU")
    return model(x)
"""


def test_a_switch_tested_twice_keeps_its_branches_apart() -> None:
    # faster-rcnn.pytorch's demo.py: `if args.cuda > 0: fasterRCNN.cuda()`, and later the CPU
    # constants in the `else:` of `if args.cuda > 0:`, where nothing was moved. A switch bound
    # again between the tests (`args = parse()`) is another switch: there both paths still meet.
    assert findings(CORRELATED) == [("DL303", 30, 17), ("DL303", 38, 9)]
    assert "meets `model` on `cuda` (moved by `.cuda()`, line 37)" in messages(CORRELATED)[1]


CLASS_SWITCH = """
import torch
import torch.nn as nn


class Disc(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        y = self.fc(x)
        return torch.sigmoid(y[:, :1]), y[:, 1:]


class Trainer:
    def __init__(self, args):
        self.gpu_mode = args.gpu_mode
        self.D = Disc()
        if self.gpu_mode:
            self.D.cuda()

    def train(self):
        y_real = torch.ones(8, 1)
        if self.gpu_mode:
            y_real = y_real.cuda()
        x = torch.rand(8, 4)
        if self.gpu_mode:
            x = x.cuda()
        d_real, c_real = self.D(x)
        return nn.BCELoss()(d_real, y_real)
"""


def test_a_switch_its_class_sets_once_keeps_the_branches_of_every_method_apart() -> None:
    # pytorch-generative-model-collections' GANs: `self.gpu_mode` is set once in `__init__`,
    # which moves the networks under it; `train()` moves its tensors under the same switch.
    # Whichever way it goes, both sides are on one device. A tensor `train()` leaves unmoved
    # still meets the moved network; a switch the file sets again elsewhere is not fixed.
    assert findings(CLASS_SWITCH) == []
    unmoved = CLASS_SWITCH.replace("        if self.gpu_mode:\n            y_real = y_real.cuda()\n", "")
    assert findings(unmoved) == [("DL303", 23, 18)]
    reset = CLASS_SWITCH + "\n\ntrainer = Trainer(None)\ntrainer.gpu_mode = False\n"
    assert findings(reset) == [("DL303", 23, 18), ("DL303", 26, 13)]


def test_a_tensor_passed_where_a_method_takes_numbers_meets_no_device() -> None:
    # wavenet_vocoder's sequence_mask: `seq_range.unsqueeze(0).expand(batch_size, max_len)` with
    # `max_len = sequence_length.data.max()`, a 0-dim tensor on the input's device. `expand`'s
    # sizes are ints in every overload of its schema: the tensor is read as a number (torch's
    # own schemas say which methods take no tensor, tools/gen_torch_api.py). The range's real
    # meeting follows `if sequence_length.is_cuda: ....cuda()`; unmoved, it is reported.
    source = """
import torch


def sequence_mask(sequence_length, max_len=None):
    if max_len is None:
        max_len = sequence_length.data.max()
    batch_size = sequence_length.size(0)
    seq_range = torch.arange(0, max_len).long()
    seq_range_expand = seq_range.unsqueeze(0).expand(batch_size, max_len)
    if sequence_length.is_cuda:
        seq_range_expand = seq_range_expand.cuda()
    seq_length_expand = sequence_length.unsqueeze(1).expand_as(seq_range_expand)
    return (seq_range_expand < seq_length_expand).float()


def unmoved(sequence_length, max_len=None):
    if max_len is None:
        max_len = sequence_length.data.max()
    seq_range = torch.arange(0, max_len).long()
    return seq_range.unsqueeze(0) < sequence_length.unsqueeze(1)
"""
    assert findings(source) == [("DL303", 19, 17)]


def test_a_parameter_with_a_member_no_tensor_has_is_no_tensor() -> None:
    # FastSpeech2's griffin_lim: `stft_fn.inverse(...)` beside `stft_fn.transform(...)`. Tensors
    # have `inverse`, not `transform`: `stft_fn` is an STFT object, and the advice
    # `.to(stft_fn.device)` would raise. A parameter used only as a tensor stays one.
    source = """
import numpy as np
import torch


def griffin_lim(magnitudes, stft_fn, n_iters=30):
    angles = torch.from_numpy(np.random.rand(*magnitudes.size()).astype(np.float32))
    signal = stft_fn.inverse(magnitudes, angles)
    for i in range(n_iters):
        _, angles = stft_fn.transform(signal)
        signal = stft_fn.inverse(magnitudes, angles)
    return signal


def solve(a, b):
    eye = torch.eye(3)
    return a.inverse() @ (b + eye)
"""
    assert findings(source) == [("DL303", 15, 11)]


def test_returns_on_both_sides_of_an_availability_check_never_meet() -> None:
    # DeepPrivacy's `to_cuda`: `return elements` runs only where CUDA is not, where no other
    # device is; a caller on a CUDA machine always gets `.cuda()`'s result. A split on any other
    # test (an empty batch) still hands a GPU caller a CPU tensor.
    source = """
import numpy as np
import torch


def to_cuda(elements):
    if torch.cuda.is_available():
        return elements.cuda(non_blocking=True)
    return elements


def image_to_torch(image):
    return to_cuda(torch.from_numpy(image).contiguous())


def first(x):
    if x.numel() == 0:
        return torch.zeros(1)
    return x.sum(0)
"""
    assert findings(source) == [("DL303", 17, 16)]


def test_a_length_does_not_make_its_object_the_fix_s_device() -> None:
    # ImageCaptioning's train_pl.py: `torch.arange(0, len(data["gts"]))` sizes a tensor from a
    # list, whose `.device` does not exist: the fix `device=gts.device` raised AttributeError.
    found = [
        f
        for f in lint(
            """
            import torch

            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            gts = [["a"], ["b"]]
            feats = torch.randn(2, 4).to(device)
            out = feats + torch.arange(0, len(gts))
            """,
            Settings(),
        )
        if f.code == "DL303"
    ]
    assert [(f.start.line, f.fix) for f in found] == [(6, None)]
    assert found[0].message.endswith("at line 6: create it with `device=device`")


# torchreid's CrossEntropyLabelSmooth, as Person_reID_baseline_pytorch copies it.
LABEL_SMOOTH = """
import torch
import torch.nn as nn


class Smooth(nn.Module):
    def __init__(self, use_gpu=True):
        super().__init__()
        self.logsoftmax = nn.LogSoftmax(dim=1)
        self.use_gpu = use_gpu

    def forward(self, inputs, targets):
        log_probs = self.logsoftmax(inputs)
"""


def test_no_fix_where_a_method_of_the_new_tensor_takes_other_values() -> None:
    # The scatter index is kept on the CPU on purpose; with `device=` on the zeros, CUDA
    # `scatter_` rejects it.
    source = LABEL_SMOOTH + (
        "        ones = torch.zeros(log_probs.size()).fill_(1)\n"
        "        targets = torch.zeros(log_probs.size()).scatter_(1, targets.unsqueeze(1).data.cpu(), 1)\n"
        "        return (-targets * log_probs).mean(0).sum() + (ones * log_probs).sum()\n"
    )
    found = [f for f in lint(source, Settings()) if f.code == "DL303"]
    assert [(f.start.line, f.fix is None) for f in found] == [(13, False), (14, True)]


@pytest.mark.parametrize("one_line", [True, False])
def test_a_one_line_if_body_runs_as_a_block_does(one_line: bool) -> None:
    # The target is moved with `if self.use_gpu: targets = targets.cuda()` on one line: the
    # body was skipped.
    move = "if self.use_gpu: targets = targets.cuda()" if one_line else "if self.use_gpu:\n            targets = targets.cuda()"
    source = LABEL_SMOOTH + (
        "        targets = torch.zeros(log_probs.size()).scatter_(1, targets.unsqueeze(1).data.cpu(), 1)\n"
        f"        {move}\n"
        "        return (-targets * log_probs).mean(0).sum()\n"
    )
    assert [f.code for f in lint(source, Settings())] == []


def test_a_place_following_a_helpers_parameter_is_not_this_functions_callers() -> None:
    # face-alignment's BlazeFace: `_weighted_non_max_suppression(detections[i])` returns a list
    # of its argument's rows; the argument is a `.to("cpu")` copy, so both paths of
    # `torch.stack(faces) if len(faces) > 0 else torch.zeros((0, 17))` are CPU tensors. The
    # offered fix read `.device` off a list (`device=detections.device`).
    source = """
    import torch
    import torch.nn as nn


    class BlazeFace(nn.Module):
        def predict_on_image(self, img):
            return self.predict_on_batch(img.unsqueeze(0))[0]

        def predict_on_batch(self, x):
            detections = self._tensors_to_detections(x)
            filtered = []
            for i in range(len(detections)):
                faces = self._suppress(detections[i])
                faces = torch.stack(faces) if len(faces) > 0 else torch.zeros((0, 17))
                filtered.append(faces)
            return filtered

        def _tensors_to_detections(self, raw):
            return [raw[i].to("cpu") for i in range(raw.shape[0])]

        def _suppress(self, detections):
            if len(detections) == 0:
                return []
            return [detections[0].clone()]
    """
    assert findings(source) == []
