"""DL401: tensors kept as plain nn.Module attributes, and the register_buffer fix."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from devlint.config import Settings
from devlint.engine import check_bytes
from devlint.finding import Finding
from devlint.fixer import apply_fixes

SETTINGS = Settings(select=("DL401",))


def check(source: str) -> list[Finding]:
    return check_bytes(textwrap.dedent(source).encode(), Path("m.py"), "m.py", SETTINGS).findings


def lines(source: str) -> list[int]:
    return [finding.start.line for finding in check(source)]


def fixed(source: str, unsafe: bool = False) -> str:
    result = check_bytes(textwrap.dedent(source).encode(), Path("m.py"), "m.py", SETTINGS, keep_source=True)
    outcome = apply_fixes([result], SETTINGS, unsafe=unsafe, write=False, stdin=True)
    assert not outcome.errors
    return outcome.stdin_text


def test_factory_in_init_is_reported_at_the_assignment() -> None:
    [finding] = check(
        """\
        import torch
        import torch.nn as nn


        class Detector(nn.Module):
            def __init__(self):
                super().__init__()
                self.anchors = torch.tensor([[0.5, 0.5, 1.0, 1.0]])
        """
    )
    assert (finding.code, finding.start.line, finding.start.column) == ("DL401", 8, 9)
    assert finding.message == (
        "`self.anchors` keeps a tensor as a plain attribute of `Detector`: `model.to(device)` moves only parameters, "
        "buffers and submodules, so it stays on the CPU; use `self.register_buffer(\"anchors\", ...)` "
        "(or `nn.Parameter` if it is trained)"
    )
    assert finding.fixable


def test_a_tensor_created_on_a_chosen_device_stays_where_it_was_created() -> None:
    # RIFE's losses, stargan-v2's LPIPS, CodeFormer's RetinaFace: built with `.cuda()` or on the
    # module's `device`, the attribute is not on the CPU; it stays there when the model moves.
    found = check(
        """\
        import torch
        import torch.nn as nn

        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


        class Loss(nn.Module):
            def __init__(self):
                super().__init__()
                self.w = torch.ones(3).cuda()
                self.k = torch.zeros(2, device=device)
                self.b = torch.zeros(2)
        """
    )
    assert [(f.start.line, f.message.split("so it stays ")[1].split(";")[0]) for f in found] == [
        (10, "where it was created"),
        (11, "where it was created"),
        (12, "on the CPU"),
    ]


@pytest.mark.parametrize(
    "header",
    [
        "import torch\nimport torch.nn as nn\nBase = None\nclass M(nn.Module):",
        "import torch\nclass M(torch.nn.Module):",
        "import torch\nfrom torch.nn import Module\nclass M(Module):",
        "import torch\nfrom torch import nn\nclass Base(nn.Module):\n    pass\nclass M(Base):",
        "import torch\nimport torch.nn as nn\nclass M(nn.Linear):",
        "import torch\nimport pytorch_lightning as pl\nclass M(pl.LightningModule):",
    ],
)
def test_module_classes_through_any_alias(header: str) -> None:
    source = header + "\n    def __init__(self):\n        super().__init__()\n        self.mask = torch.ones(3, 3).tril()\n"
    assert lines(source) == [source.count("\n", 0, source.index("self.mask")) + 1]


def test_not_a_module_class() -> None:
    assert lines(
        """\
        import torch

        class PriorBox(object):
            def __init__(self):
                self.boxes = torch.zeros(4)

        class Plain:
            def __init__(self):
                self.t = torch.ones(2)
        """
    ) == []


def test_helper_method_called_from_init_and_setattr() -> None:
    assert lines(
        """\
        import torch
        import torch.nn as nn

        class M(nn.Module):
            def __init__(self, n):
                super().__init__()
                self._build(n)
                for i in range(n):
                    setattr(self, f"scale_{i}", torch.full((1,), float(i)))

            def _build(self, n):
                self.table = torch.arange(n).float() / n

            def reset(self):
                self.cache = torch.zeros(1)  # not on the constructor path
        """
    ) == [9, 12]


def test_local_function_and_method_results() -> None:
    # The SSD prior boxes: a local helper class whose forward() returns a tensor.
    assert lines(
        """\
        import torch
        import torch.nn as nn

        def make_grid(n):
            g = torch.linspace(0, 1, n)
            return g.unsqueeze(0)

        class PriorBox(object):
            def forward(self):
                mean = []
                for i in range(3):
                    mean += [i / 3, 0.1]
                return torch.tensor(mean).view(-1, 2).clamp_(max=1, min=0)

        class SSD(nn.Module):
            def __init__(self):
                super().__init__()
                self.priorbox = PriorBox()
                self.priors = self.priorbox.forward()
                self.grid = make_grid(4)
                n = self.priors.size(0)
                self.n = n
        """
    ) == [19, 20]


def test_local_variables_and_operations() -> None:
    assert lines(
        """\
        import math
        import torch
        import torch.nn as nn

        class PositionalEncoding(nn.Module):
            def __init__(self, d_model: int, max_len: int = 50, weight: torch.Tensor = None):
                super().__init__()
                position = torch.arange(max_len).unsqueeze(1)
                div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
                pe = torch.zeros(max_len, d_model)
                pe[:, 0::2] = torch.sin(position * div_term)
                self.pe = pe
                self.scaled = -pe * 2
                self.weight = weight
                self.first = pe[0]
        """
    ) == [12, 13, 14, 15]


def test_parameter_to_device_is_reported_with_its_own_message() -> None:
    [finding] = check(
        """\
        import torch
        import torch.nn as nn

        class Linear(nn.Module):
            def __init__(self, n, device="cpu"):
                super(Linear, self).__init__()
                self.weight = nn.Parameter(torch.Tensor(n, 1)).to(device)
                torch.nn.init.normal_(self.weight, mean=0, std=1e-4)
        """
    )
    assert finding.start.line == 7
    assert finding.message.startswith("`nn.Parameter(...).to(...)` returns a plain tensor, not a Parameter: `self.weight`")


def test_a_float32_parameter_converted_to_float32_is_still_the_parameter() -> None:
    # gpt-neox Mamba: `.to(torch.float32)` of float32 data returns the Parameter itself.
    assert lines(
        """\
        import torch
        import torch.nn as nn

        class Mamba(nn.Module):
            def __init__(self, d=16):
                super().__init__()
                self.D = nn.Parameter(torch.ones(d, dtype=torch.float32)).to(torch.float32)
                self.E = nn.Parameter(torch.randn(d)).float()
                self.F = nn.Parameter(torch.tensor([1, 2])).float()
                self.G = nn.Parameter(torch.ones(d, dtype=torch.float16)).float()
                self.H = nn.Parameter(torch.ones(d)).half()

            def forward(self, x):
                return x * self.D * self.E * self.F * self.G * self.H
        """
    ) == [9, 10, 11]


def test_an_attribute_an_apply_override_converts_is_moved() -> None:
    # ultralytics: DetectionModel._apply runs `m.stride = fn(m.stride)` on its Detect head.
    assert lines(
        """\
        import torch
        import torch.nn as nn

        class Detect(nn.Module):
            def __init__(self, nl=3):
                super().__init__()
                self.stride = torch.zeros(nl)
                self.anchors = torch.zeros(nl)
                self.conv = nn.Conv2d(4, 4, 1)

            def forward(self, x):
                return self.conv(x) * self.stride[0] + self.anchors[0]

        class DetectionModel(nn.Module):
            def __init__(self):
                super().__init__()
                self.model = nn.Sequential(nn.Conv2d(3, 4, 1), Detect())

            def _apply(self, fn):
                super()._apply(fn)
                m = self.model[-1]
                m.stride = fn(m.stride)
                return self
        """
    ) == [8]


def test_full_reductions_and_replaced_placeholders() -> None:
    # speechbrain's `fea_dim = torch.prod(torch.tensor(shape))` is 0-dim; MONAI's
    # `att_mat = torch.Tensor()` is only ever replaced by forward.
    assert lines(
        """\
        import torch
        import torch.nn as nn

        class Attn(nn.Module):
            def __init__(self, dim, shape):
                super().__init__()
                self.qkv = nn.Linear(dim, 3 * dim)
                self.fea_dim = torch.prod(torch.tensor(shape[2:]))
                self.total = torch.tensor(shape).sum()
                self.rows = torch.tensor(shape).sum(0)
                self.att_mat = torch.Tensor()
                self.last = torch.zeros(dim)

            def forward(self, x):
                q, k, v = self.qkv(x).chunk(3, dim=-1)
                att = (q @ k.transpose(-1, -2)).softmax(-1)
                self.att_mat = att.detach()
                self.last = att.mean(0)
                return att @ v * self.rows
        """
    ) == [10, 12]


def test_registered_and_non_tensor_values_are_fine() -> None:
    assert lines(
        """\
        import torch
        import torch.nn as nn

        class M(nn.Module):
            def __init__(self, n, device):
                super().__init__()
                self.register_buffer("pe", torch.zeros(n))
                self.pe = torch.ones(n)  # assigning a tensor to a buffer's name keeps it a buffer
                self.w = nn.Parameter(torch.randn(n))
                self.b = nn.Parameter(torch.zeros(n)).uniform_()
                self.v = torch.zeros(n)
                self.v = nn.Parameter(self.v)
                self.lin = nn.Linear(n, n)
                self.scale = 2.0
                self.name = "encoder"
                self.sizes = [1, 2, 3]
                self.shape = torch.zeros(n).shape
                self.count = torch.zeros(n).numel()
                self.device = torch.device("cpu")
                self.total = torch.ones(3).sum().item()
                self.unknown = build(n)
                self.buf = nn.Buffer(torch.zeros(2))

            def forward(self, x):
                self.last = torch.zeros(1)
                return self.lin(x) + self.pe
        """
    ) == []


def test_a_tensor_of_one_number_meets_any_device() -> None:
    # kornia Rescale, diffusers' latent scale: 0-dim CPU tensors mix with CUDA ones.
    assert lines(
        """\
        import torch
        import torch.nn as nn

        class Rescale(nn.Module):
            def __init__(self, factor: float, scaling=0.18215, shift=-1) -> None:
                super().__init__()
                self.factor = torch.tensor(factor)
                self.scale = torch.tensor(scaling)
                self.shift = torch.as_tensor(1 - shift)
                self.one = torch.tensor(1.0)
                self.table = torch.tensor([factor, scaling])
                self.window = torch.tensor(window)

            def forward(self, x):
                return (x - self.shift) * self.factor / self.scale * self.one + self.table
        """
    ) == [11, 12]


def test_attributes_read_only_where_the_cpu_copy_does_no_harm() -> None:
    # ultralytics' relative_coords (an index), kornia's NMS kernel (moved on the way),
    # rgb_to_grayscale and normalize (helpers that place what they are given).
    assert lines(
        """\
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        def rgb_to_gray(image, rgb_weights):
            rgb_weights = rgb_weights.to(image)
            return (image * rgb_weights[:, None, None]).sum(0)

        def normalize(data, mean, std):
            mean = torch.as_tensor(mean, device=data.device)
            return (data - mean) / std

        class Block(nn.Module):
            def __init__(self, size=8):
                super().__init__()
                self.table = nn.Parameter(torch.zeros(2 * size - 1, 4))
                self.coords = torch.arange(size)[:, None] - torch.arange(size)[None, :] + size - 1
                self.kernel = torch.ones(4, 1, 3, 3)
                self.weights = torch.tensor([0.299, 0.587, 0.114])
                self.mean = torch.tensor([0.5, 0.5, 0.5])
                self.std = torch.tensor([0.2, 0.2, 0.2])
                self.n = self.std.numel()

            def forward(self, x):
                w = self.kernel.repeat(1, 1, 1, 1).to(x.device, x.dtype)
                y = F.conv2d(x, w, groups=4) + self.table[self.coords].sum()
                return normalize(rgb_to_gray(y, self.weights), self.mean, self.std)

            def __repr__(self):
                return f"Block(mean={self.mean}, std={self.std})"
        """
    ) == [21]


# -- fixes -----------------------------------------------------------------------------
def test_fix_registers_a_non_persistent_buffer() -> None:
    assert fixed(
        """\
        import torch
        import torch.nn as nn

        class Detector(nn.Module):
            def __init__(self):
                super().__init__()
                self.anchors = torch.tensor(
                    [[0.5, 0.5, 1.0, 1.0]],  # one anchor
                )  # trailing
        """
    ) == textwrap.dedent(
        """\
        import torch
        import torch.nn as nn

        class Detector(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("anchors", torch.tensor(
                    [[0.5, 0.5, 1.0, 1.0]],  # one anchor
                ), persistent=False)  # trailing
        """
    )


def test_fix_moves_the_conversion_inside_the_parameter() -> None:
    assert fixed(
        """\
        import torch
        import torch.nn as nn

        class Linear(nn.Module):
            def __init__(self, n, device="cpu"):
                super().__init__()
                self.weight = nn.Parameter(torch.Tensor(n, 1)).to(device)
                self.bias = nn.Parameter(torch.zeros(1) + 1, requires_grad=True).to(device, non_blocking=True)
        """
    ) == textwrap.dedent(
        """\
        import torch
        import torch.nn as nn

        class Linear(nn.Module):
            def __init__(self, n, device="cpu"):
                super().__init__()
                self.weight = nn.Parameter(torch.Tensor(n, 1).to(device))
                self.bias = nn.Parameter((torch.zeros(1) + 1).to(device, non_blocking=True), requires_grad=True)
        """
    )


def test_fix_for_setattr() -> None:
    source = """\
        import torch
        import torch.nn as nn

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                setattr(self, "table", torch.eye(3))
                for i in range(2):
                    setattr(self, f"s{i}", torch.ones(1))
        """
    assert fixed(source) == textwrap.dedent(
        """\
        import torch
        import torch.nn as nn

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("table", torch.eye(3), persistent=False)
                for i in range(2):
                    setattr(self, f"s{i}", torch.ones(1))
        """
    )
    assert fixed(source, unsafe=True).endswith('        self.register_buffer(f"s{i}", torch.ones(1), persistent=False)\n')


@pytest.mark.parametrize(
    "body",
    [
        # before Module.__init__: register_buffer would raise
        "        self.t = torch.zeros(3)\n        super().__init__()\n",
        # wants gradients: a Parameter, a person's decision
        "        super().__init__()\n        self.t = torch.zeros(3, requires_grad=True)\n",
        # first a plain None: register_buffer would find the name taken
        "        super().__init__()\n        self.t = None\n        self.t = torch.zeros(3)\n",
        # another method stores a non-tensor there: a buffer would refuse it
        "        super().__init__()\n        self.t = torch.zeros(3)\n\n    def reset(self):\n        self.t = [0, 0, 0]\n",
    ],
)
def test_no_fix_where_the_rewrite_could_raise(body: str) -> None:
    source = "import torch\nimport torch.nn as nn\n\nclass M(nn.Module):\n    def __init__(self):\n" + body
    [finding] = check(source)
    assert finding.fix is None
    assert fixed(source, unsafe=True) == source


def test_no_fix_when_a_class_attribute_has_the_name() -> None:
    source = (
        "import torch\nimport torch.nn as nn\n\nclass M(nn.Module):\n    t = None\n\n    def __init__(self):\n"
        "        super().__init__()\n        self.t = torch.zeros(3)\n"
    )
    [finding] = check(source)
    assert finding.fix is None


def test_fix_allows_tensor_updates_in_other_methods() -> None:
    source = (
        "import torch\nimport torch.nn as nn\n\nclass M(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.t = torch.zeros(3)\n\n    def reset(self):\n"
        "        self.t = torch.ones(3)\n        self.t = None\n"
    )
    assert fixed(source).count('self.register_buffer("t", torch.zeros(3), persistent=False)') == 1


def test_no_fix_when_the_name_is_a_parameter_in_another_branch() -> None:
    source = (
        "import torch\nimport torch.nn as nn\n\nclass M(nn.Module):\n    def __init__(self, bias=True):\n"
        "        super().__init__()\n        if bias:\n            self.bias = torch.randn(4).to(dtype=torch.float)\n"
        "        else:\n            self.register_parameter(\"bias\", None)\n"
    )
    [finding] = check(source)
    assert finding.start.line == 8 and finding.fix is None


def test_classes_that_move_their_own_state_are_skipped() -> None:
    # YOLOv5's Detect keeps `stride` as a plain tensor and moves it in `_apply`.
    assert lines(
        """\
        import torch
        import torch.nn as nn

        class Detect(nn.Module):
            def __init__(self):
                super().__init__()
                self.stride = torch.tensor([8.0, 16.0, 32.0])

            def _apply(self, fn):
                self = super()._apply(fn)
                self.stride = fn(self.stride)
                return self
        """
    ) == []


def test_a_cache_the_forward_rebuilds_on_the_inputs_device_is_not_reported() -> None:
    # fairseq rotary_positional_embedding.py: an empty cache grown on x.device before use.
    assert lines(
        """\
        import torch
        import torch.nn as nn

        class RotaryPositionalEmbedding(nn.Module):
            def __init__(self, dim, base=10000):
                super().__init__()
                inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
                self.register_buffer("inv_freq", inv_freq)
                self.seq_len_cached = 0
                self.cos_cached = torch.empty(self.seq_len_cached, 1, 1, dim)

            def forward(self, x, seq_len: int = 0):
                if seq_len > self.seq_len_cached:
                    self.seq_len_cached = seq_len
                    t = torch.arange(seq_len, device=x.device).type_as(self.inv_freq)
                    emb = torch.cat((t, t), dim=-1).to(x.device)
                    self.cos_cached = emb.cos().view(emb.size(0), 1, 1, -1)
                return self.cos_cached
        """
    ) == []


def test_a_constructor_helper_that_takes_a_device_still_keeps_a_plain_tensor() -> None:
    assert lines(
        """\
        import torch
        import torch.nn as nn

        class Rotary(nn.Module):
            def __init__(self, n):
                super().__init__()
                self._build(n)

            def _build(self, n, device=None):
                self.cos_cached = torch.arange(n, device=device).cos()

            def forward(self, x):
                return x * self.cos_cached
        """
    ) == [10]


def test_a_state_updated_in_a_forward_that_reads_the_device_is_still_reported() -> None:
    assert lines(
        """\
        import torch
        import torch.nn as nn

        class Norm(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.running_mean = torch.zeros(dim)

            def forward(self, x):
                pos = torch.arange(x.size(0), device=x.device)
                self.running_mean = 0.9 * self.running_mean + 0.1 * x.mean(0)
                return x - self.running_mean + pos[:, None]
        """
    ) == [7]


def test_an_update_or_a_dtype_conversion_is_no_rebuild_on_the_device() -> None:
    assert lines(
        """\
        import torch
        import torch.nn as nn

        class Stats(nn.Module):
            def __init__(self, dim, n):
                super().__init__()
                self.decay = 0.9
                self.avg = torch.zeros(dim)
                self.seen = torch.zeros(n)

            def forward(self, x, labels):
                w = torch.full((x.size(0),), 1.0 / x.size(0), device=x.device)
                self.avg = self.decay * self.avg + (1 - self.decay) * (w @ x)
                counts = labels.to(torch.float32)
                self.seen = counts.sum(0)
                return x
        """
    ) == [8, 9]


def test_a_tensor_of_one_number_computed_from_constants_is_not_kept_state() -> None:
    source = """
    import math
    import torch
    import torch.nn as nn

    class GELU(nn.Module):
        def __init__(self):
            super().__init__()
            self.c = torch.tensor(2.0 / math.pi)
            self.v = torch.tensor([2.0 / math.pi, 1.0])
    """
    assert lines(source) == [10]


def test_an_attribute_looped_over_through_zip_is_read_item_by_item() -> None:
    # threestudio's ProgressiveBandFrequency: `for freq, mask in zip(self.freq_bands, self.mask)`
    # reads 0-dim items of a 1-D table, which meet a tensor on any device; a table read whole
    # beside it stays reported.
    source = """
    import torch
    import torch.nn as nn

    class Bands(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.freq_bands = 2 ** torch.linspace(0, n - 1, n)
            self.weights = torch.linspace(0, 1, n)
            self.funcs = [torch.sin, torch.cos]

        def forward(self, x):
            out = []
            for i, freq in enumerate(zip(self.freq_bands, reversed(self.weights))):
                out += [f(freq[0] * x) * freq[1] for f in self.funcs]
            return torch.cat(out, -1) * self.weights.sum()
    """
    assert lines(source) == [9]


def test_a_like_factory_is_where_its_argument_is_not_on_the_cpu() -> None:
    # insightface's PartialFC (vendored by SadTalker): the momentum is `torch.zeros_like` of a
    # weight made on the process's GPU; the message says where it stays, not "the CPU".
    source = """
    import torch
    import torch.nn as nn

    class PartialFC(nn.Module):
        def __init__(self, device, n, d):
            super().__init__()
            self.weight = torch.normal(0, 0.01, (n, d), device=device)
            self.weight_mom = torch.zeros_like(self.weight)
            self.table = torch.zeros(n, d)
    """
    assert [(f.start.line, f.message.split("so it stays ")[1].split(";")[0]) for f in check(source)] == [
        (9, "where it was created"),
        (10, "on the CPU"),
    ]


def test_a_helper_that_forward_calls_too_places_the_attribute_after_construction() -> None:
    # ESPnet's RelPositionalEncoding (copied into chatterbox): `__init__` builds the table through
    # `extend_pe`, which `forward` calls again with its input, moving the table there or
    # rebuilding it on `x.device`. A helper only `__init__` calls moves it before `model.to()`.
    source = """
    import torch
    import torch.nn as nn

    class RelPositionalEncoding(nn.Module):
        def __init__(self, d_model, max_len=5000):
            super().__init__()
            self.d_model = d_model
            self.pe = None
            self.extend_pe(torch.tensor(0.0).expand(1, max_len))

        def extend_pe(self, x):
            if self.pe is not None:
                if self.pe.size(1) >= x.size(1) * 2 - 1:
                    if self.pe.device != x.device:
                        self.pe = self.pe.to(device=x.device)
                    return
            pe = torch.zeros(x.size(1), self.d_model)
            self.pe = pe.to(device=x.device)

        def forward(self, x):
            self.extend_pe(x)
            return x + self.pe[:, : x.size(1)]

    class FixedEncoding(nn.Module):
        def __init__(self, d_model, max_len=5000):
            super().__init__()
            self.pe = None
            self.build(torch.zeros(1, max_len))

        def build(self, x):
            if self.pe is not None:
                self.pe = self.pe.to(device=x.device)
            self.pe = torch.zeros(x.size(1), 4).to(device=x.device)

        def forward(self, x):
            return x + self.pe[:, : x.size(1)]
    """
    assert lines(source) == [34]


def test_only_a_move_that_rebinds_the_attribute_outside_construction_places_it() -> None:
    # auraloss: `self.fb = self.fb.to(self.device)` in __init__ runs before `model.to()`.
    # mmaction2: the class weight is moved in one branch and multiplied unmoved in another.
    # CLIP: `self.mask = self.mask.to(x.device)` in forward keeps it with the inputs.
    source = """
    import torch
    import torch.nn as nn

    class STFTLoss(nn.Module):
        def __init__(self, fb, device=None):
            super().__init__()
            self.fb = torch.tensor(fb)
            if device is not None:
                self.fb = self.fb.to(device)

        def forward(self, x):
            return torch.matmul(self.fb, x)

    class CrossEntropy(nn.Module):
        def __init__(self, weight=None):
            super().__init__()
            self.weight = None
            if weight is not None:
                self.weight = torch.Tensor(weight)

        def forward(self, score, label, soft):
            if soft:
                return score * self.weight.unsqueeze(0)
            return nn.functional.cross_entropy(score, label, weight=self.weight.to(score.device))

    class WeightedBCE(nn.Module):
        def __init__(self, weight=None):
            super().__init__()
            self.weight = None
            if weight is not None:
                self.weight = torch.Tensor(weight)

        def forward(self, score, label):
            if self.weight is not None:
                return nn.functional.binary_cross_entropy(score, label, weight=self.weight.to(score.device))
            return nn.functional.binary_cross_entropy(score, label)

    class Attention(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.mask = torch.ones(n, n)

        def forward(self, x):
            self.mask = self.mask.to(x.device)
            return x * self.mask
    """
    assert lines(source) == [8, 20]


def test_an_attribute_read_through_a_type_name_is_placed_by_it() -> None:
    # pixel2style2pixel's BicubicDownSample: `self.k1.type("torch{}.FloatTensor".format(self.cuda))`
    # puts the kernel where the type name says on every read; a dtype (`.type(torch.half)`) does not.
    source = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Down(nn.Module):
    def __init__(self, cuda=True):
        super().__init__()
        self.k1 = torch.ones(3, 1, 4, 1)
        self.cuda_name = ".cuda" if cuda else ""

    def forward(self, x):
        return F.conv2d(x, self.k1.type("torch{}.FloatTensor".format(self.cuda_name)), groups=3)
"""
    assert lines(source) == []
    assert lines(source.replace('"torch{}.FloatTensor".format(self.cuda_name)', "torch.half")) == [10]


def test_a_one_dimensional_attribute_only_looped_over_gives_0_dim_items() -> None:
    # nerf_pl's Embedding (NeRF's positional encoding): `for freq in self.freq_bands:
    # out += [func(freq * x)]`. Each item is a 0-dim CPU tensor, which meets CUDA `x` freely.
    source = """
import torch
import torch.nn as nn


class Embedding(nn.Module):
    def __init__(self, n, logscale=True):
        super().__init__()
        if logscale:
            self.freq_bands = 2 ** torch.linspace(0, n - 1, n)
        else:
            self.freq_bands = torch.linspace(1, 2 ** (n - 1), n)

    def forward(self, x):
        out = [x]
        for freq in self.freq_bands:
            out += [torch.sin(freq * x)]
        return torch.cat(out + [torch.cos(f * x) for f in self.freq_bands], -1)
"""
    assert lines(source) == []
    # A 2-D table looped over yields rows, which are no numbers: the attribute is reported.
    assert lines(source.replace("torch.linspace(1, 2 ** (n - 1), n)", "torch.ones(n, 3)")) == [10, 12]
    # Nor is a 1-D tensor used whole.
    assert lines(source.replace("out = [x]", "out = [x * self.freq_bands]")) == [10, 12]


def test_an_item_of_a_one_dimensional_attribute_read_by_an_integer_is_0_dim() -> None:
    # flownet2-pytorch's MultiScale loss: `self.loss_weights[i] * EPE(...)` with `i` from
    # `enumerate(outputs)`, and `self.loss_weights = torch.FloatTensor([w / 2 ** s for s in
    # range(n)])`: one 0-dim item, which meets a tensor on any device. A slice, a tensor index
    # or a 2-D table keeps the attribute reported.
    source = """
import torch
import torch.nn as nn


class MultiScale(nn.Module):
    def __init__(self, num_scales=3, l_weight=0.32):
        super().__init__()
        self.loss_weights = torch.FloatTensor([l_weight / 2 ** s for s in range(num_scales)])

    def forward(self, outputs, target):
        loss = 0
        for i, out in enumerate(outputs):
            loss += self.loss_weights[i] * (out - target).abs().mean()
        return loss + self.loss_weights[0] * target.mean()
"""
    assert lines(source) == []
    assert lines(source.replace("self.loss_weights[i]", "self.loss_weights[:i]")) == [9]
    assert lines(source.replace("for i, out in enumerate(outputs):", "for out, i in zip(outputs, target):")) == [9]
    assert lines(source.replace("[l_weight / 2 ** s for s in range(num_scales)]", "[[l_weight, 1.0]] * num_scales")) == [9]


def test_an_attribute_only_sized_or_copied_into_a_slot_meets_no_device() -> None:
    # faster-rcnn.pytorch's AffineGridGen: `batchgrid[i] = self.grid` copies the CPU grid into a
    # tensor made on the input's device (PyTorch copies across devices), and `.size()` is the
    # same everywhere. The fresh tensor is the one that has to be placed, and it is.
    source = """
import numpy as np
import torch
from torch.nn import Module


class AffineGridGen(Module):
    def __init__(self, height, width):
        super().__init__()
        self.grid = torch.from_numpy(np.ones([height, width, 3], dtype=np.float32))

    def forward(self, input1):
        batchgrid = torch.zeros(torch.Size([input1.size(0)]) + self.grid.size(), device=input1.device)
        for i in range(input1.size(0)):
            batchgrid[i] = self.grid
        return batchgrid
"""
    assert lines(source) == []
    # Combined with the input, the CPU grid is a mix.
    assert lines(source.replace("return batchgrid", "return batchgrid * self.grid")) == [10]


def test_an_attribute_rebound_to_a_value_before_init_returns_is_not_kept() -> None:
    # torch-ngp's FreqEncoder: the tensor is a step towards the list the module keeps.
    # A rebinding under a condition leaves the tensor kept on the other path.
    assert lines(
        """\
        import torch
        import torch.nn as nn

        class FreqEncoder(nn.Module):
            def __init__(self, n, log_sampling=True):
                super().__init__()
                if log_sampling:
                    self.freq_bands = 2.0 ** torch.linspace(0.0, 8.0, n)
                else:
                    self.freq_bands = torch.linspace(1.0, 256.0, n)
                self.freq_bands = self.freq_bands.numpy().tolist()

            def forward(self, x):
                return torch.cat([torch.sin(x * self.freq_bands[i]) for i in range(len(self.freq_bands))], -1)

        class Kept(nn.Module):
            def __init__(self, n, as_list=False):
                super().__init__()
                self.table = torch.arange(n)
                if as_list:
                    self.table = self.table.tolist()

            def forward(self, x):
                return x + self.table
        """
    ) == [19]


def test_an_attribute_the_constructor_only_computes_from_is_not_kept() -> None:
    # faster-rcnn.pytorch's gridgen: `self.theta` and `self.phi` build `self.grid`, and
    # nothing after `__init__` reads them. Only measured (`.size(0)`), or read anywhere
    # else in the file, the attribute stays reported.
    assert lines(
        """\
        import torch
        import torch.nn as nn

        class Grid(nn.Module):
            def __init__(self, h, w):
                super().__init__()
                self.theta = torch.linspace(0, 1, h)
                self.phi = torch.linspace(0, 1, w)
                self.grid = torch.sin(self.theta)[:, None] * torch.cos(self.phi)[None, :]

            def forward(self, x):
                return x * self.grid

        class Measured(nn.Module):
            def __init__(self, n):
                super().__init__()
                self.priors = torch.rand(n, 4)
                self.count = self.priors.size(0)

        class ReadOutside(nn.Module):
            def __init__(self, n):
                super().__init__()
                self.anchors = torch.rand(n, 4)
                self.scale = self.anchors.max()

        def decode(model, loc):
            return loc + model.anchors
        """
    ) == [9, 17, 23]


def test_an_attribute_the_constructor_only_fills_stays_reported() -> None:
    # ReAgent's DQNTrainer: `self.reward_boosts[0, i] = ...` fills the tensor in `__init__`, and
    # `nn.init.normal_(self.w)` fills another: neither builds something else from it.
    assert lines(
        """\
        import torch
        import torch.nn as nn

        class Boosted(nn.Module):
            def __init__(self, n, boosts):
                super().__init__()
                self.reward_boosts = torch.zeros(1, n)
                for i, b in enumerate(boosts):
                    self.reward_boosts[0, i] = b
                self.w = torch.empty(n)
                nn.init.normal_(self.w)
        """
    ) == [7, 10]


def test_a_tensor_rebuilt_from_itself_is_reported_once_where_the_kept_value_is_made() -> None:
    # RIFE's SOBEL: `self.kernelX = torch.tensor(...)`, then `self.kernelX = self.kernelX.unsqueeze(0)...`.
    # The module keeps the second value. A `register_buffer` rewrite of the second alone would
    # meet the plain attribute the first left ("attribute already exists"): no fix there.
    source = """\
        import torch
        import torch.nn as nn

        class Sobel(nn.Module):
            def __init__(self):
                super().__init__()
                self.kernel = torch.tensor([[1.0, 0.0, -1.0]])
                self.kernel = self.kernel.unsqueeze(0).unsqueeze(0)

            def forward(self, x):
                return x * self.kernel
        """
    [finding] = check(source)
    assert finding.start.line == 8
    assert finding.fix is None
