"""DL402: submodules in plain lists, tuples and dicts, and the ModuleList/ModuleDict fix."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from devlint.config import Settings
from devlint.engine import check_bytes
from devlint.finding import Finding
from devlint.fixer import apply_fixes

SETTINGS = Settings(select=("DL402",))
HEADER = "import torch\nimport torch.nn as nn\n\n\nclass M(nn.Module):\n    def __init__(self, n=3):\n        super().__init__()\n"


def check(source: str) -> list[Finding]:
    return check_bytes(textwrap.dedent(source).encode(), Path("m.py"), "m.py", SETTINGS).findings


def in_init(body: str) -> list[int]:
    """Lines of findings for statements placed in M.__init__ (line 1 = the first body line)."""
    source = HEADER + textwrap.indent(textwrap.dedent(body), " " * 8)
    return [finding.start.line - HEADER.count("\n") for finding in check(source)]


def fixed(source: str, unsafe: bool = True) -> str:
    result = check_bytes(source.encode(), Path("m.py"), "m.py", SETTINGS, keep_source=True)
    outcome = apply_fixes([result], SETTINGS, unsafe=unsafe, write=False, stdin=True)
    assert not outcome.errors
    return outcome.stdin_text


def fixed_in_init(body: str) -> str:
    source = HEADER + textwrap.indent(textwrap.dedent(body), " " * 8)
    out = fixed(source)
    assert out.startswith(HEADER)
    return textwrap.dedent(out[len(HEADER) :])


def test_comprehension_is_reported_at_the_assignment() -> None:
    [finding] = check(
        HEADER + "        self.convs1 = [nn.Conv2d(1, 8, (k, 4)) for k in (3, 4, 5)]\n"
    )
    assert (finding.code, finding.start.line, finding.start.column) == ("DL402", 8, 9)
    assert finding.message == (
        "`self.convs1` holds submodules in a plain list: `model.to(device)`, `parameters()` and `state_dict()` "
        "do not see them, so they stay on the CPU and are not trained; use `nn.ModuleList`"
    )
    assert finding.fix is not None and not finding.fix.safe
    assert not finding.fixable  # only with --unsafe-fixes


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("self.layers = [nn.Linear(4, 4), nn.ReLU()]\n", [1]),
        ("self.heads = (nn.Linear(4, 2), nn.Linear(4, 3))\n", [1]),
        ('self.heads = {"a": nn.Linear(4, 2)}\n', [1]),
        ("self.heads = {k: nn.Linear(4, 2) for k in 'ab'}\n", [1]),
        ("self.conv = []\nfor i in range(n):\n    self.conv.append(nn.Conv2d(1, 1, 3))\n", [1]),
        ("self.heads = {}\nfor k in 'ab':\n    self.heads[k] = nn.Linear(4, 2)\n", [1]),
        ("self.blocks = []\nself.blocks += [nn.Linear(4, 4)]\n", [1]),
        ("layers = []\nfor i in range(n):\n    layers.append(nn.Linear(4, 4))\nself.layers = layers\n", [4]),
        ("self.losses = [nn.CrossEntropyLoss(weight=torch.ones(3)), nn.MSELoss()]\n", [1]),
        ("self.losses = [nn.BCEWithLogitsLoss(pos_weight=w)]\n", [1]),
        ("self.stages = [[nn.Linear(4, 4)] for _ in range(n)]\n", [1]),
        ("self.blocks = [nn.Linear(4, 4)] * n\n", [1]),
    ],
)
def test_plain_containers_of_submodules(body: str, expected: list[int]) -> None:
    assert in_init(body) == expected


def test_local_module_classes_count() -> None:
    assert [f.start.line for f in check(
        """\
        import torch.nn as nn

        class Block(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.lin = nn.Linear(d, d)

        class Swish(nn.Module):
            def forward(self, x):
                return x * x.sigmoid()

        def make_block(d):
            return Block(d)

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.blocks = [Block(4) for _ in range(3)]
                self.more = [make_block(4)]
                self.acts = [Swish(), Swish()]
        """
    )] == [18, 19]


@pytest.mark.parametrize(
    "body",
    [
        "self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(n)])\n",
        "self.net = nn.Sequential(nn.Linear(4, 4), nn.ReLU())\n",
        "self.heads = nn.ModuleDict({'a': nn.Linear(4, 2)})\n",
        "self.sizes = [3, 4, 5]\n",
        "self.shapes = [torch.Size([2, 3]), (4, 4)]\n",
        "self.acts = [nn.ReLU(), nn.Tanh(), nn.Dropout(0.1)]\n",
        "self.losses = [nn.MSELoss(), nn.L1Loss(), nn.CrossEntropyLoss()]\n",
        "self.conv1 = nn.Linear(4, 4)\nself.conv2 = nn.Linear(4, 4)\nself.convs = [self.conv1, self.conv2]\n",
        "layers = [nn.Linear(4, 4) for _ in range(n)]\nself.net = nn.Sequential(*layers)\nself.layers = layers\n",
        "self.layers = []\nfor i in range(n):\n    self.layers.append(nn.Linear(4, 4))\nself.layers = nn.ModuleList(self.layers)\n",
        "self.layers = []\nfor i in range(n):\n    self.layers.append(nn.Linear(4, 4))\nself.net = nn.Sequential(*self.layers)\n",
        "self.convs = []\nfor i in range(n):\n    conv = nn.Conv2d(1, 1, 3)\n    setattr(self, f'conv{i}', conv)\n    self.convs.append(conv)\n",
        "self.convs = []\nfor i in range(n):\n    conv = nn.Conv2d(1, 1, 3)\n    self.add_module(f'conv{i}', conv)\n    self.convs.append(conv)\n",
        "self.blocks = [nn.Linear(4, 4) for _ in range(n)]\nfor i, b in enumerate(self.blocks):\n    self.add_module(str(i), b)\n",
        # detectron2 SemSegFPNHead: each head registered as it is appended.
        "self.heads = []\nfor i in range(n):\n    self.heads.append(nn.Sequential(nn.Conv2d(1, 1, 3)))\n    self.add_module(f'h{i}', self.heads[-1])\n",
        # monodepth2's PoseCNN: the dict's modules registered through its values.
        "self.convs = {}\nself.convs[0] = nn.Conv2d(6, 16, 7)\nself.convs[1] = nn.Conv2d(16, 32, 5)\nself.net = nn.ModuleList(list(self.convs.values()))\n",
        "self.blocks = {'a': nn.Linear(4, 4), 'b': nn.Linear(4, 4)}\nself.seq = nn.Sequential(*self.blocks.values())\n",
        "self.params = [nn.Parameter(torch.zeros(2))]\n",
        "self.names = {'a': 'conv', 'b': 'fc'}\n",
    ],
)
def test_not_findings(body: str) -> None:
    assert in_init(body) == []


def test_not_a_module_class() -> None:
    assert check(
        """\
        import torch.nn as nn

        class Trainer:
            def __init__(self):
                self.models = [nn.Linear(2, 2), nn.Linear(2, 2)]
        """
    ) == []


# -- fixes --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("before", "after"),
    [
        (
            "self.convs = [nn.Conv2d(1, 8, k) for k in (3, 4)]  # note\n",
            "self.convs = nn.ModuleList([nn.Conv2d(1, 8, k) for k in (3, 4)])  # note\n",
        ),
        (
            "self.conv = []\nfor i in range(n):\n    self.conv.append(nn.Conv2d(1, 1, 3))\n",
            "self.conv = nn.ModuleList()\nfor i in range(n):\n    self.conv.append(nn.Conv2d(1, 1, 3))\n",
        ),
        (
            "self.heads = (nn.Linear(4, 2), nn.Linear(4, 3))\n",
            "self.heads = nn.ModuleList([nn.Linear(4, 2), nn.Linear(4, 3)])\n",
        ),
        (
            "self.heads = nn.Linear(4, 2), nn.Linear(4, 3)\n",
            "self.heads = nn.ModuleList([nn.Linear(4, 2), nn.Linear(4, 3)])\n",
        ),
        (
            'self.heads = {\n    "a": nn.Linear(4, 2),\n    "b": nn.Linear(4, 3),\n}\n',
            'self.heads = nn.ModuleDict({\n    "a": nn.Linear(4, 2),\n    "b": nn.Linear(4, 3),\n})\n',
        ),
        (
            "self.heads = {f'h{k}': nn.Linear(4, 2) for k in range(n)}\n",
            "self.heads = nn.ModuleDict({f'h{k}': nn.Linear(4, 2) for k in range(n)})\n",
        ),
        (
            "self.heads = {}\nfor k in range(n):\n    self.heads[str(k)] = nn.Linear(4, 2)\n",
            "self.heads = nn.ModuleDict()\nfor k in range(n):\n    self.heads[str(k)] = nn.Linear(4, 2)\n",
        ),
        (
            "layers = []\nfor i in range(n):\n    layers.append(nn.Linear(4, 4))\nself.layers = layers\n",
            "layers = []\nfor i in range(n):\n    layers.append(nn.Linear(4, 4))\nself.layers = nn.ModuleList(layers)\n",
        ),
    ],
)
def test_fix_output(before: str, after: str) -> None:
    assert fixed_in_init(before) == after


@pytest.mark.parametrize(
    "body",
    [
        "self.heads = {0: nn.Linear(4, 2), 1: nn.Linear(4, 3)}\n",  # ModuleDict keys must be strings
        "self.heads = {'enc.a': nn.Linear(4, 2)}\n",  # ... without dots
        "self.heads = {}\nfor k in range(n):\n    self.heads[k] = nn.Linear(4, 2)\n",
        "self.heads = {nn.Linear(4, 2)}\n",  # a set has no order
    ],
)
def test_no_fix_where_modules_cannot_hold_it(body: str) -> None:
    source = HEADER + textwrap.indent(body, " " * 8)
    [finding] = check(source)
    assert finding.fix is None


def test_fix_is_only_applied_with_unsafe_fixes() -> None:
    source = HEADER + "        self.layers = [nn.Linear(4, 4)]\n"
    assert fixed(source, unsafe=False) == source


def test_fix_spells_torch_nn_as_the_file_does() -> None:
    source = "import torch\n\nclass M(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.l = [torch.nn.Linear(2, 2)]\n"
    assert fixed(source).endswith("        self.l = torch.nn.ModuleList([torch.nn.Linear(2, 2)])\n")
    # No way to name ModuleList without a new import: no fix.
    bare = "from torch.nn import Module, Linear\n\nclass M(Module):\n    def __init__(self):\n        super().__init__()\n        self.l = [Linear(2, 2)]\n"
    [finding] = check(bare)
    assert finding.fix is None


def test_a_dict_of_loss_modules_that_register_nothing_is_not_reported() -> None:
    # BiRefNet's PixLoss: a BCE loss and an SSIM loss whose only tensor is a plain window it moves
    # itself; `nn.ModuleDict` would register nothing `model.to()` or `state_dict()` could see.
    source = """
import torch
import torch.nn as nn
import torch.nn.functional as F


def create_window(size):
    return torch.ones(1, 1, size, size) / size**2


class SSIMLoss(nn.Module):
    def __init__(self, window_size=11):
        super().__init__()
        self.window_size = window_size
        self.window = create_window(window_size)

    def forward(self, img1, img2):
        self.window = self.window.to(img1.device)
        return F.conv2d(img1 - img2, self.window).abs().mean()


class PixLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.criterions_last = {}
        self.criterions_last["bce"] = nn.BCELoss()
        self.criterions_last["ssim"] = SSIMLoss()
"""
    assert [f.start.line for f in check(source)] == []
    weighted = source.replace("self.window_size = window_size", "self.proj = nn.Conv2d(1, 1, 1)")
    assert [f.start.line for f in check(weighted)] == [25]
