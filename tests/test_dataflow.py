"""The device analysis itself: the facts and events it records, independent of the rules' wording."""

from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst
import pytest

from devlint.analysis.correlated import repeated_switch
from devlint.analysis.dataflow import DeviceAnalysis, returns_a_value
from devlint.analysis.facts import CPU, UNKNOWN_PLACE, Place, PlaceKind, conflicting, join_places
from devlint.config import Settings
from devlint.engine import check_bytes
from devlint.names import ImportTable

DATAFLOW_CODES = frozenset({"DL201", "DL202", "DL301", "DL302", "DL303"})


def analyse(source: str, settings: Settings | None = None) -> tuple[cst.Module, DeviceAnalysis]:
    module = cst.parse_module(textwrap.dedent(source).lstrip("\n"))
    return module, DeviceAnalysis(module, ImportTable.of(module), settings or Settings()).run()


def findings(source: str, settings: Settings | None = None) -> list[tuple[str, int, int]]:
    text = textwrap.dedent(source).lstrip("\n")
    result = check_bytes(text.encode(), Path("snippet.py"), "snippet.py", settings or Settings())
    return [(f.code, f.start.line, f.start.column) for f in result.findings if f.code in DATAFLOW_CODES or f.code in ("DL000", "DL999")]


# -- places ---------------------------------------------------------------------
DEVICE = Place(PlaceKind.DEVICE, "device")
CUDA = Place(PlaceKind.ACCEL, "cuda")


def test_only_the_cpu_against_an_accelerator_or_the_device_conflicts() -> None:
    assert conflicting(CPU, DEVICE) and conflicting(CUDA, CPU)
    assert not conflicting(DEVICE, CUDA)
    assert not conflicting(CPU, CPU)
    assert not conflicting(CPU, UNKNOWN_PLACE)
    assert not conflicting(UNKNOWN_PLACE, DEVICE)


def test_paths_that_disagree_join_to_unknown() -> None:
    assert join_places(CPU, CPU) == CPU
    # Moved on one path only (`if args.cuda: x = x.cuda()`): on the device chosen at run time.
    assert join_places(CPU, DEVICE) == Place(PlaceKind.DEVICE)
    assert join_places(CUDA, CPU) == Place(PlaceKind.DEVICE)
    assert join_places(UNKNOWN_PLACE, DEVICE) == UNKNOWN_PLACE
    assert join_places(DEVICE, Place(PlaceKind.DEVICE, "other")) == Place(PlaceKind.DEVICE)
    assert join_places(Place(PlaceKind.NOWHERE), CUDA) == CUDA


def test_places_describe_themselves() -> None:
    assert CPU.describe() == "the CPU"
    assert DEVICE.describe() == "`device`"
    assert CUDA.describe() == "`cuda`"
    assert Place(PlaceKind.DEVICE, "<the module's device>").describe() == "the module's device"
    assert UNKNOWN_PLACE.describe() == "an unknown device"


# -- events -----------------------------------------------------------------------
TWO_CONFLICTS = """
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Net(nn.Module):
    def forward(self, x):
        h = torch.zeros(3)
        return x + h


def train(model, train_loader):
    model.to(device)
    for x, y in train_loader:
        out = model(x)
"""


def test_a_conflict_records_both_operands_and_where_it_happened() -> None:
    module, analysis = analyse(TWO_CONFLICTS)
    forward, batch = analysis.conflicts
    assert module.code_for_node(forward.node) == "x + h"
    assert module.code_for_node(forward.cpu.expr) == "h"
    assert forward.cpu.value.place == CPU
    assert forward.cpu.value.origin is not None and forward.cpu.value.origin.factory
    assert forward.cpu.value.in_module == "Net"
    assert forward.device.value.place.kind is PlaceKind.DEVICE
    assert (forward.function, forward.in_forward) == ("Net.forward", True)

    assert module.code_for_node(batch.node) == "model(x)"
    assert batch.cpu.value.batch is not None and batch.cpu.value.batch.what == "comes from `train_loader`"
    assert batch.device.role == "module"
    assert batch.device.value.place == DEVICE
    assert (batch.function, batch.in_forward) == ("train", False)


def test_run_is_computed_once() -> None:
    module = cst.parse_module(textwrap.dedent(TWO_CONFLICTS))
    analysis = DeviceAnalysis(module, ImportTable.of(module), Settings())
    first = analysis.run()
    conflicts = list(first.conflicts)
    assert analysis.run() is first
    assert analysis.run().conflicts == conflicts


def test_discarded_moves_numpy_and_split_returns_are_recorded() -> None:
    module, analysis = analyse(
        """
        import torch


        def f(device):
            t = torch.zeros(3)
            t.cuda()
            d = torch.ones(3, device=device)
            return d.numpy()


        def g(x):
            if x.shape[0] == 0:
                return torch.zeros(x.shape[1])
            return x * 2
        """
    )
    (discarded,) = analysis.discarded
    assert (discarded.method, module.code_for_node(discarded.target)) == ("cuda", "t")
    (numpy,) = analysis.numpy
    assert (numpy.via, module.code_for_node(numpy.tensor.expr)) == (".numpy()", "d")
    (split,) = analysis.split_returns
    assert split.function == "g"
    assert module.code_for_node(split.factory.expr) == "torch.zeros(x.shape[1])"
    assert split.other.value.place == Place(PlaceKind.FOLLOWS, "x")


def test_pure_cpu_code_records_nothing() -> None:
    _, analysis = analyse(
        """
        import numpy as np
        import torch
        import torch.nn as nn

        model = nn.Linear(4, 2)
        for x, y in loader:
            out = model(x)
            loss = nn.functional.cross_entropy(out, y)
            np.asarray(out.detach())
        a = torch.ones(3)
        a.to(torch.float16)
        """
    )
    assert analysis.conflicts == []
    assert analysis.numpy == []
    # A dtype conversion keeps the device: its lost result moves nothing.
    assert analysis.discarded == []


# -- what flows where (through the rules, which is what users see) -----------------
FLOWS = {
    "device-selection-idiom-names-the-device": (
        """
        import torch

        dev = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
        a = torch.zeros(3, device=dev)
        b = torch.zeros(3)
        c = a + b
        """,
        [("DL303", 5, 5)],
    ),
    "attribute-device-variable": (
        """
        import argparse

        import torch

        args = argparse.ArgumentParser().parse_args()


        def f():
            a = torch.zeros(3).to(args.device)
            return a + torch.ones(3)
        """,
        [("DL303", 10, 16)],
    ),
    "to-a-string": (
        """
        import torch

        a = torch.zeros(3).to("mps")
        c = a * torch.ones(3)
        """,
        [("DL303", 4, 9)],
    ),
    "to-another-tensor": (
        """
        import torch


        def f(device):
            ref = torch.zeros(3, device=device)
            a = torch.ones(3).to(ref)
            return a * torch.ones(3)
        """,
        [("DL303", 7, 16)],
    ),
    "type-as-another-tensor": (
        """
        import torch


        def f(device):
            ref = torch.zeros(3, device=device)
            a = torch.ones(3).type_as(ref)
            return a * torch.ones(3)
        """,
        [("DL303", 7, 16)],
    ),
    "like-follows-its-argument": (
        """
        import torch


        def f(device):
            a = torch.zeros_like(torch.zeros(3, device=device))
            return a * torch.ones(3)
        """,
        [("DL303", 6, 16)],
    ),
    "new-follows-its-receiver": (
        """
        import torch


        def f(device):
            a = torch.zeros(3, device=device).new_ones(3)
            return a * torch.ones(3)
        """,
        [("DL303", 6, 16)],
    ),
    "arithmetic-keeps-the-place": (
        """
        import torch


        def f(device):
            a = torch.zeros(3, device=device)
            b = (a * 2 + 1).sigmoid()
            c = torch.relu(b)
            return c - torch.ones(3)
        """,
        [("DL303", 8, 16)],
    ),
    "cpu-then-back-to-the-device": (
        """
        import torch


        def f(device):
            a = torch.zeros(3, device=device)
            b = a.cpu()
            c = b * torch.ones(3)
            return b.to(device) * c
        """,
        [("DL301", 8, 12)],
    ),
    "module-moved-with-cuda": (
        """
        import torch

        net = torch.nn.Linear(3, 3)
        net.cuda()
        y = net(torch.zeros(3))
        """,
        [("DL303", 5, 9)],
    ),
    "a-tensor-moved-on-one-path-only-is-on-the-device": (
        """
        import torch


        def f(device, flag):
            if flag:
                a = torch.zeros(3, device=device)
            else:
                a = torch.zeros(3)
            return a + torch.ones(3)
        """,
        [("DL303", 9, 16)],
    ),
    "branches-that-disagree-on-an-unknown-are-silent": (
        """
        import torch


        def f(device, flag, b):
            if flag:
                a = torch.zeros(3, device=device)
            else:
                a = b
            return a + torch.ones(3)
        """,
        [],
    ),
    "branches-that-agree-keep-the-place": (
        """
        import torch


        def f(device, flag):
            if flag:
                a = torch.zeros(3, device=device)
            else:
                a = torch.ones(3, device=device)
            return a + torch.ones(3)
        """,
        [("DL303", 9, 16)],
    ),
    "dict-comprehension-values": (
        """
        import torch


        def f(batch, device):
            moved = {k: torch.zeros(2, device=device) for k in batch}
            return moved["a"] + torch.ones(2)
        """,
        [("DL303", 6, 25)],
    ),
    "set-default-device-changes-factories": (
        """
        import torch

        torch.set_default_device("cuda")
        a = torch.ones(3)
        b = a.cpu()
        c = a + b
        """,
        [("DL301", 6, 5)],
    ),
    "with-torch-device-changes-factories-inside-only": (
        """
        import torch


        def f(device):
            with torch.device(device):
                a = torch.ones(3)
                b = torch.zeros(3)
            return a + b, a + torch.zeros(3)
        """,
        [("DL303", 8, 23)],
    ),
    "configured-device-variable": (
        """
        import torch


        def f(accel):
            a = torch.zeros(3).to(accel)
            return a + torch.ones(3)
        """,
        [],
    ),
}


@pytest.mark.parametrize(("source", "expected"), FLOWS.values(), ids=FLOWS.keys())
def test_facts_flow(source: str, expected: list[tuple[str, int, int]]) -> None:
    assert findings(source) == expected


def test_a_configured_device_variable_name() -> None:
    source = FLOWS["configured-device-variable"][0]
    assert findings(source, Settings(device_variables=("accel",))) == [("DL303", 6, 16)]


def test_a_configured_move_helper_places_its_result_on_the_device_it_is_given() -> None:
    source = """
    import torch
    from mylib import ship


    def f(batch, device):
        x = ship(batch, device)
        return x * torch.ones(3)
    """
    assert findings(source) == []
    assert findings(source, Settings(move_helpers=("ship",))) == [("DL303", 7, 16)]


def test_unusual_syntax_never_crashes_the_analysis() -> None:
    source = """
    import torch


    async def run(model, loader, device, *args, **kwargs):
        model.to(device)
        async for x, y in loader:
            out = await model(x.to(device))
        match args:
            case [first, *rest]:
                first.to(device)
            case _:
                pass
        if (n := len(args)) > 1:
            t = torch.zeros(n, device=device)
        f = lambda z: z.to(device)
        g = [w.cpu() for w in args if w is not None]
        h = {**kwargs}
        del h
        global TOTAL
        try:
            raise ValueError
        except* ValueError:
            pass
        return f, g
    """
    assert findings(source) == []


# -- rounds re-run only what changed --------------------------------------------------
CHAIN = """
import torch

def make():
    return torch.zeros(3)

def unrelated(a):
    return a + 1

def use(device):
    x = make()
    return x + torch.ones(3, device=device)
"""


def _runs(source: str, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    import devlint.analysis.dataflow as dataflow

    started: list[str] = []
    original = dataflow.FunctionRun.start

    def start(self: dataflow.FunctionRun) -> None:
        started.append(self.key)
        original(self)

    monkeypatch.setattr(dataflow.FunctionRun, "start", start)
    analyse(source)
    return started


def test_a_function_whose_inputs_did_not_change_is_not_run_again(monkeypatch: pytest.MonkeyPatch) -> None:
    # Round 1 runs all three. `use` sees `make`'s summary fresh in round 1 (make ran
    # first), so nothing it read changes and round 2 replays every function.
    assert _runs(CHAIN, monkeypatch) == ["make", "unrelated", "use"]


def test_a_function_whose_parameter_facts_change_runs_again(monkeypatch: pytest.MonkeyPatch) -> None:
    source = CHAIN + "\ndef caller(device):\n    return unrelated(torch.zeros(2, device=device))\n"
    # `unrelated` learns its argument from `caller` in round 1, so round 2 runs it again,
    # and `caller` after it, since `unrelated` now returns a tensor on the device. `make`
    # and `use` replay; round 3 replays everything and the facts have settled.
    assert _runs(source, monkeypatch) == ["make", "unrelated", "use", "caller", "unrelated", "caller"]


def test_parameter_facts_complete_in_a_round_are_read_in_that_round(monkeypatch: pytest.MonkeyPatch) -> None:
    # Callers before callees: once every function that called `b` last round has had its turn,
    # `b` reads this round's facts instead of waiting a round per level of the chain: round 2
    # tells all five what the top level passes. Waiting a round per level, `d` and `e` were never
    # told within the rounds allowed, and the CPU tensor meeting CUDA in `e` went unreported.
    source = """
import torch

def a(x):
    return b(x)

def b(x):
    return c(x)

def c(x):
    return d(x)

def d(x):
    return e(x)

def e(x):
    return x + torch.ones(3, device="cuda")

a(torch.zeros(3))
"""
    assert _runs(source, monkeypatch)[:10] == ["a", "b", "c", "d", "e"] * 2
    assert findings(source) == [("DL303", 18, 3)]


def test_replayed_rounds_find_what_full_rounds_find() -> None:
    module, analysis = analyse(CHAIN)
    assert [(type(c.node).__name__, c.cpu.value.place, c.device.value.place.kind) for c in analysis.conflicts] == [
        ("BinaryOperation", CPU, PlaceKind.DEVICE)
    ]


def test_a_function_defined_twice_is_known_only_by_both_definitions() -> None:
    # `use` runs between the two `make`s: halfway through a round only the CPU one has
    # reported, but `make` may be either: on the device, or (with FAST) a fresh CPU tensor,
    # which then meets the device. Reported at that factory, once both are known.
    source = """
    import torch

    if FAST:
        def make(device):
            return torch.zeros(2)

    def use(device):
        return make(device) + torch.ones(2, device=device)

    if not FAST:
        def make(device):
            return torch.zeros(2, device=device)
    """
    assert findings(source) == [("DL303", 5, 16)]


def test_a_call_chain_four_deep_settles_within_the_rounds() -> None:
    # Summaries read fresh within a round carry `.cuda()` up the whole chain at once;
    # with one level per round the fourth caller was never reached.
    source = """
    import torch

    def f1():
        return torch.zeros(3).cuda()

    def f2():
        return f1()

    def f3():
        return f2()

    def f4():
        return f3()

    def main():
        x = f4()
        y = torch.zeros(3)
        return x + y
    """
    assert findings(source) == [("DL303", 17, 9)]


# -- jumps out of a loop's body -------------------------------------------------------------
def test_what_a_path_holds_at_continue_reaches_the_loop_exit() -> None:
    # Open3D-ML's PointPillars target assignment: a sample without boxes appends CPU
    # placeholders and `continue`s; the other samples append tensors on the anchors' device.
    source = """
    import torch


    def assign(targets, anchors):
        assigned = []
        for target in targets:
            if target.shape[0] == 0:
                assigned.append(torch.zeros(0, 7))
                continue
            assigned.append(anchors[0].new_ones(3, 7))
        return torch.cat(assigned, axis=0)


    def first_empty(targets, device):
        found = torch.ones(3, device=device)
        for target in targets:
            if target.shape[0] == 0:
                found = torch.zeros(3)
                break
        return found + torch.ones(3, device=device)
    """
    assert findings(source) == [("DL303", 8, 29), ("DL303", 18, 21)]


def test_a_raise_in_a_loop_leaves_the_function_not_the_loop() -> None:
    source = """
    import torch


    def assign(targets, device):
        assigned = []
        for target in targets:
            if target.shape[0] == 0:
                assigned.append(torch.zeros(0, 7))
                raise ValueError("empty")
            assigned.append(torch.ones(3, 7, device=device))
        return torch.cat(assigned, axis=0)
    """
    assert findings(source) == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("def f():\n    return 1\n", True),
        ("def f():\n    return\n", False),
        ("def f(): return x\n", True),
        ("def f():\n    if a: return x\n", True),
        ("def f():\n    if a:\n        pass\n    elif b:\n        pass\n    else:\n        return 3\n", True),
        ("def f():\n    try:\n        pass\n    except E:\n        return 1\n", True),
        ("def f():\n    try:\n        pass\n    finally:\n        return 1\n", True),
        ("def f():\n    for a in b:\n        pass\n    else:\n        return 2\n", True),
        ("async def f():\n    async with a:\n        async for b in c:\n            return 1\n", True),
        ("def f():\n    match a:\n        case 1:\n            return 2\n", True),
        ("def f():\n    def g():\n        return 1\n    x = lambda: 3\n", False),
        ("def f():\n    class A:\n        def g(self): return 1\n", False),
    ],
)
def test_returns_a_value_reads_every_suite_of_the_function_but_no_nested_scope(source: str, expected: bool) -> None:
    # A function that returns no value is not run again for callers in other files.
    function = cst.parse_module(source).body[0]
    assert isinstance(function, cst.FunctionDef)
    assert returns_a_value(function) is expected


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("if args.cuda > 0:\n    a()\nif args.cuda > 0:\n    b()\nelse:\n    c()\n", "args.cuda GreaterThan 0"),
        ("if use_gpu:\n    a()\nfor x in xs:\n    if not use_gpu:\n        b()\n", "use_gpu"),
        ("if x.is_cuda:\n    a()\nif x.is_cuda:\n    b()\n", "x.is_cuda"),
        # Bound again after the first test: two switches that merely share a name.
        ("if args.cuda:\n    a()\nargs = parse()\nif args.cuda:\n    b()\n", None),
        ("if x.is_cuda:\n    x = x.cpu()\nif x.is_cuda:\n    b()\n", None),
        ("if args.cuda:\n    a()\nif args.cuda and big:\n    b()\n", None),
        # Compared with another name, not a constant: what it holds may change between the tests.
        ("if args.ngpu > limit:\n    a()\nif args.ngpu > limit:\n    b()\n", None),
        ('if args.device == "cuda":\n    a()\nif args.device == "cuda":\n    b()\n', "args.device Equal 'cuda'"),
        ("if args.cuda:\n    a()\ndef f():\n    if args.cuda:\n        b()\n", None),
    ],
)
def test_the_switch_a_body_tests_twice(body: str, expected: str | None) -> None:
    assert repeated_switch(list(cst.parse_module(body).body)) == expected
