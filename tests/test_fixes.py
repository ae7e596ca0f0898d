"""The fix builders in devlint.fixes, each pinned to its exact output text."""

from __future__ import annotations

import textwrap
from collections.abc import Callable

import libcst as cst
import pytest

from devlint.config import Settings
from devlint.context import FileContext
from devlint.finding import Fix
from devlint.fixer import apply_edits
from devlint import fixes


def _context(source: str, settings: Settings | None = None) -> FileContext:
    text = textwrap.dedent(source)
    return FileContext("m.py", text, cst.parse_module(text), settings or Settings())


def _find(ctx: FileContext, predicate: Callable[[cst.CSTNode], bool]) -> cst.CSTNode:
    found: list[cst.CSTNode] = []

    class _Visitor(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if predicate(node):
                found.append(node)
            return True

    ctx.module.visit(_Visitor())
    assert found, "node not found"
    return found[0]


def _method_call(ctx: FileContext, method: str) -> cst.Call:
    node = _find(
        ctx, lambda n: isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value == method
    )
    assert isinstance(node, cst.Call)
    return node


def _call_named(ctx: FileContext, dotted: str) -> cst.Call:
    node = _find(ctx, lambda n: isinstance(n, cst.Call) and ctx.module.code_for_node(n.func) == dotted)
    assert isinstance(node, cst.Call)
    return node


def _applied(ctx: FileContext, fix: Fix | None) -> str:
    assert fix is not None
    return apply_edits(ctx.text, [fix])


# -- assign_result (DL202) -------------------------------------------------------
def test_assign_result_rebinds_a_plain_name() -> None:
    ctx = _context("def f(x, device):\n    x.to(device)\n")
    fix = fixes.assign_result(ctx, _method_call(ctx, "to"))
    assert fix is not None and fix.safe
    assert _applied(ctx, fix) == "def f(x, device):\n    x = x.to(device)\n"


def test_assign_result_keeps_parentheses_valid() -> None:
    ctx = _context("def f(x, device):\n    (x.to(device))\n")
    assert _applied(ctx, fixes.assign_result(ctx, _method_call(ctx, "to"))) == "def f(x, device):\n    x = (x.to(device))\n"


def test_assign_result_is_unsafe_when_it_converts_a_dtype() -> None:
    ctx = _context("import torch\ndef f(x):\n    x.to(torch.float16)\n")
    fix = fixes.assign_result(ctx, _method_call(ctx, "to"))
    assert fix is not None and not fix.safe
    assert _applied(ctx, fix).endswith("    x = x.to(torch.float16)\n")


def test_assign_result_refuses_attribute_receivers() -> None:
    ctx = _context("def f(self, device):\n    self.x.to(device)\n")
    assert fixes.assign_result(ctx, _method_call(ctx, "to")) is None


# -- cpu_before_numpy / append_cpu (DL302) ---------------------------------------------
@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("y = t.numpy()\n", "y = t.cpu().numpy()\n"),
        ("y = t.detach().numpy()\n", "y = t.detach().cpu().numpy()\n"),
        ("y = (a + b).numpy()\n", "y = (a + b).cpu().numpy()\n"),
        ("y = model(x)[0].numpy()\n", "y = model(x)[0].cpu().numpy()\n"),
    ],
)
def test_cpu_before_numpy(before: str, after: str) -> None:
    ctx = _context(before)
    fix = fixes.cpu_before_numpy(ctx, _method_call(ctx, "numpy"))
    assert fix is not None and fix.safe
    assert _applied(ctx, fix) == after


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("np.asarray(t)\n", "np.asarray(t.cpu())\n"),
        ("np.asarray(a + b)\n", "np.asarray((a + b).cpu())\n"),
        ("np.asarray(out.logits)\n", "np.asarray(out.logits.cpu())\n"),
    ],
)
def test_append_cpu(before: str, after: str) -> None:
    ctx = _context(before)
    call = _call_named(ctx, "np.asarray")
    assert _applied(ctx, fixes.append_cpu(ctx, call.args[0].value)) == after


# -- add_device_keyword (DL303) ---------------------------------------------------------
@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("h = torch.zeros(n)\n", "h = torch.zeros(n, device=x.device)\n"),
        ("h = torch.zeros(2, n, dtype=torch.long)\n", "h = torch.zeros(2, n, dtype=torch.long, device=x.device)\n"),
        ("h = torch.zeros(n,)\n", "h = torch.zeros(n, device=x.device,)\n"),
        ("h = torch.zeros(*shape)\n", "h = torch.zeros(*shape, device=x.device)\n"),
        ("h = torch.randn()\n", "h = torch.randn(device=x.device)\n"),
        (
            "h = torch.zeros(\n    n,  # rows\n    m,\n)\n",
            "h = torch.zeros(\n    n,  # rows\n    m, device=x.device,\n)\n",
        ),
    ],
)
def test_add_device_keyword(before: str, after: str) -> None:
    ctx = _context("import torch\n" + before)
    call = _find(ctx, lambda n: isinstance(n, cst.Call) and ctx.module.code_for_node(n.func).startswith("torch."))
    assert isinstance(call, cst.Call)
    fix = fixes.add_device_keyword(ctx, call, "x.device")
    assert fix is not None and fix.safe
    assert _applied(ctx, fix) == "import torch\n" + after


@pytest.mark.parametrize(
    "source",
    ["h = torch.zeros(n, device=d)\n", "h = torch.zeros(n, **kw)\n", "h = torch.from_numpy(a)\n"],
)
def test_add_device_keyword_refuses(source: str) -> None:
    ctx = _context("import torch\n" + source)
    call = _find(ctx, lambda n: isinstance(n, cst.Call))
    assert isinstance(call, cst.Call)
    assert fixes.add_device_keyword(ctx, call, "x.device") is None


# -- add_map_location (DL501) -----------------------------------------------------------
def test_map_location_uses_the_device_in_scope() -> None:
    ctx = _context("import torch\ndef load(path, device):\n    return torch.load(path)\n")
    fix = fixes.add_map_location(ctx, _call_named(ctx, "torch.load"))
    assert fix is not None and not fix.safe
    assert _applied(ctx, fix).endswith("    return torch.load(path, map_location=device)\n")


def test_map_location_falls_back_to_the_cpu() -> None:
    ctx = _context("import torch\nstate = torch.load('ckpt.pt')\n")
    assert _applied(ctx, fixes.add_map_location(ctx, _call_named(ctx, "torch.load"))) == (
        "import torch\nstate = torch.load('ckpt.pt', map_location=\"cpu\")\n"
    )


def test_a_device_variable_holding_the_projects_own_words_is_no_location() -> None:
    # YOLOX's demo: `Predictor(..., device="cpu")` and `if self.device == "gpu":`; the user passes
    # "gpu", which `map_location` and `.to()` reject.
    source = (
        "import torch\n"
        "class Predictor:\n"
        "    def __init__(self, path, device='cpu'):\n"
        "        self.device = device\n"
        "        self.state = torch.load(path)\n"
        "    def run(self, x):\n"
        "        return x.cuda() if self.device == 'gpu' else x\n"
    )
    ctx = _context(source)
    assert fixes.device_in_scope(ctx, _call_named(ctx, "torch.load")) is None
    assert _applied(ctx, fixes.add_map_location(ctx, _call_named(ctx, "torch.load"))).endswith(
        "        self.state = torch.load(path, map_location=\"cpu\")\n"
        "    def run(self, x):\n"
        "        return x.cuda() if self.device == 'gpu' else x\n"
    )
    ctx = _context(source.replace("'gpu'", "'cuda'"))
    assert fixes.device_in_scope(ctx, _call_named(ctx, "torch.load")) == "device"


# -- cuda_to_device (DL101) -------------------------------------------------------------
def test_cuda_to_device_keeps_non_blocking() -> None:
    ctx = _context("a, b = x.cuda(), y.cuda(non_blocking=True)\n")
    calls = [
        node
        for node in (ctx.module.body[0].body[0].value.elements[i].value for i in (0, 1))  # type: ignore[attr-defined]
    ]
    fix = fixes.cuda_to_device(ctx, calls, "device")
    assert fix is not None and fix.safe
    assert _applied(ctx, fix) == "a, b = x.to(device), y.to(device, non_blocking=True)\n"


def test_cuda_to_device_refuses_a_device_index() -> None:
    ctx = _context("x = x.cuda(1)\n")
    assert fixes.cuda_to_device(ctx, [_method_call(ctx, "cuda")], "device") is None


# -- device_in_scope --------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("def f(x, device):\n    x.cuda()\n", "device"),
        ("def f(x):\n    device = pick()\n    x.cuda()\n", "device"),
        ("def f(x):\n    x.cuda()\n    device = pick()\n", None),  # assigned after: unbound there
        ("def f(x):\n    if a:\n        device = pick()\n    x.cuda()\n", None),  # maybe unbound
        ("device = pick()\ndef f(x):\n    x.cuda()\n", "device"),
        ("x.cuda()\ndevice = pick()\n", None),
        ("device = torch.device('cpu')\nx.cuda()\n", None),  # moving there changes machine
        ("device = 'cpu'\ndef f(x):\n    x.cuda()\n", None),
        ("def f(x):\n    x.cuda()\n", None),
        ("def outer(device):\n    def inner(x):\n        x.cuda()\n", "device"),
    ],
)
def test_device_in_scope(source: str, expected: str | None) -> None:
    ctx = _context("import torch\n" + source)
    assert fixes.device_in_scope(ctx, _method_call(ctx, "cuda")) == expected


def test_device_in_scope_knows_configured_device_variables() -> None:
    ctx = _context("def f(x, dev):\n    x.cuda()\n", Settings(device_variables=("dev",)))
    assert fixes.device_in_scope(ctx, _method_call(ctx, "cuda")) == "dev"


# -- wrapping and replacing -------------------------------------------------------------------
def test_wrap_in_call_includes_parentheses() -> None:
    ctx = _context("layers = ([a, b])\n")
    value = ctx.module.body[0].body[0].value  # type: ignore[attr-defined]
    fix = fixes.wrap_in_call(ctx, value, "nn.ModuleList", safe=False)
    assert not fix.safe
    assert _applied(ctx, fix) == "layers = nn.ModuleList(([a, b]))\n"


def test_outer_span_counts_own_parentheses() -> None:
    ctx = _context("y = ( (a + b) )\n")
    value = ctx.module.body[0].body[0].value  # type: ignore[attr-defined]
    start, end = fixes.outer_span(ctx, value)
    assert ctx.text[start:end] == "( (a + b) )"
    assert fixes.source_of(ctx, value) == "( (a + b) )"


def test_map_location_uses_a_device_bound_on_both_branches_of_an_if() -> None:
    source = (
        "import torch\n"
        "if torch.cuda.is_available():\n"
        '    device = torch.device("cuda")\n'
        "else:\n"
        '    device = torch.device("cpu")\n'
        "state = torch.load('ckpt.pt')\n"
    )
    ctx = _context(source)
    assert _applied(ctx, fixes.add_map_location(ctx, _call_named(ctx, "torch.load"))).endswith(
        "state = torch.load('ckpt.pt', map_location=device)\n"
    )


@pytest.mark.parametrize(
    "branches",
    [
        'if torch.cuda.is_available():\n    device = "cuda"\n',  # no else: unbound on one path
        'if fast:\n    device = "cpu"\nelse:\n    device = "cpu"\n',  # the CPU on every path
        'if a:\n    device = "cuda"\nelif b:\n    device = "mps"\n',  # elif without else
    ],
)
def test_map_location_falls_back_when_a_branch_leaves_the_device_unbound(branches: str) -> None:
    ctx = _context("import torch\n" + branches + "state = torch.load('ckpt.pt')\n")
    assert _applied(ctx, fixes.add_map_location(ctx, _call_named(ctx, "torch.load"))).endswith(
        "state = torch.load('ckpt.pt', map_location=\"cpu\")\n"
    )


def test_map_location_in_a_function_with_an_elif_chain() -> None:
    source = (
        "import torch\n"
        "def load(path, kind):\n"
        "    if kind == 'gpu':\n"
        "        device = 'cuda'\n"
        "    elif kind == 'mac':\n"
        "        device = 'mps'\n"
        "    else:\n"
        "        device = 'cpu'\n"
        "    return torch.load(path)\n"
    )
    ctx = _context(source)
    assert _applied(ctx, fixes.add_map_location(ctx, _call_named(ctx, "torch.load"))).endswith(
        "    return torch.load(path, map_location=device)\n"
    )


def test_device_in_scope_reads_each_statement_once_per_file(monkeypatch: pytest.MonkeyPatch) -> None:
    """A file of many small functions, each with a `.cuda()` fix, costs time linear in its size:
    the statements that may bind the device are read once, not once per fix."""
    from collections import Counter
    from pathlib import Path

    from devlint.engine import check_bytes

    functions = 200
    # The device is chosen after the functions, as in a script whose main code comes last.
    source = "import torch\n" + "".join(f"def f{i}(x):\n    y = x + 1\n    return y.cuda()\n" for i in range(functions))
    source += "device = pick()\n"
    read: Counter[tuple[int, str]] = Counter()
    original = fixes._assigned_value

    def counting(statement: cst.BaseStatement, name: str) -> cst.BaseExpression | None:
        read[id(statement), name] += 1
        return original(statement, name)

    monkeypatch.setattr(fixes, "_assigned_value", counting)
    result = check_bytes(source.encode(), Path("m.py"), "m.py", Settings(), keep_source=True)
    assert [(f.code, f.start.line) for f in result.findings] == [("DL101", 4 + 3 * i) for i in range(functions)]
    assert apply_edits(source, [f.fix for f in result.findings if f.fix is not None]) == source.replace(".cuda()", ".to(device)")
    assert max(read.values()) == 1
