"""Imports decide what `torch` means: aliases, from-imports, and local names that only look alike."""

from __future__ import annotations

from linting import positions


def test_import_torch_as_alias() -> None:
    assert positions(
        """
        import torch as th
        x = th.zeros(3).cuda()
        y = th.load("a.pt")
        z = th.device("cuda")
        """
    ) == [("DL101", 2, 5), ("DL501", 3, 5), ("DL102", 4, 15)]


def test_from_torch_import_cuda_and_load() -> None:
    assert positions(
        """
        from torch import cuda, load
        import torch.nn as nn

        model = nn.Linear(2, 2)
        if cuda.is_available():
            model.cuda()
        state = load("weights.pt")
        """
    ) == [("DL501", 7, 9)]


def test_load_imported_under_another_name() -> None:
    assert positions(
        """
        from torch import load as torch_load
        device = "cuda"
        state = torch_load("w.pt")
        """
    ) == [("DL102", 2, 10), ("DL501", 3, 9)]


def test_torch_nn_module_imports() -> None:
    assert positions(
        """
        import torch.nn as nn
        from torch.nn import Module

        class Net(Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(2, 2).cuda()
        """
    ) == [("DL101", 7, 19)]


def test_local_variable_named_torch_is_not_the_module() -> None:
    assert positions(
        """
        import torch

        def restore(torch, path):
            return torch.load(path)

        def other():
            torch = FakeTorch()
            torch.device("cuda")
            return torch.load("x.pt")

        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        """
    ) == []


def test_parameter_named_load_is_not_torch_load() -> None:
    assert positions(
        """
        from torch import load
        import torch

        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

        def restore(load, path):
            return load(path)
        """
    ) == []


def test_no_torch_import_means_no_torch() -> None:
    # `load` and `device` here are some other library's.
    assert positions(
        """
        from pickle import load
        import mylib as torch2

        state = load(open("x.pkl", "rb"))
        device = torch2.device("cuda")
        """
    ) == []


def test_torch_cuda_module_is_not_a_cuda_call() -> None:
    # `torch.cuda` and an alias of it are the module: no DL101 (a raising call is DL103's).
    assert positions(
        """
        import torch
        from torch import cuda
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        cuda.manual_seed_all(0)
        """
    ) == [("DL103", 3, 1)]


def test_local_bindings_without_walrus_skip_expressions_but_bind_the_same() -> None:
    from pathlib import Path

    import libcst as cst

    from devlint.names import LocalBindings
    from devlint.tree import descendants

    body = '''
def f(a, *args, b=1, **kw):
    x = y = 1
    (p, [q, *r]) = a
    s: int = 2
    t: int
    u += 1
    for i, j in a:
        with open(a) as (fh, gh):
            pass
    try:
        pass
    except E as err:
        pass
    def inner(z): w = 1
    class K: v = 1
    global g
    g = 1
    import torch
    lam = lambda m: m
    comp = [n for n in a]
'''
    functions = [cst.parse_module(body)]
    functions += [cst.parse_module(p.read_text()) for p in sorted((Path(__file__).parent.parent / "fixtures").glob("*.py"))]
    checked = 0
    for module in functions:
        for node in descendants(module):
            if isinstance(node, cst.FunctionDef):
                assert LocalBindings.of(node, walrus=False) == LocalBindings.of(node)
                checked += 1
    assert checked > 20
    first = next(n for n in descendants(functions[0]) if isinstance(n, cst.FunctionDef))
    assert LocalBindings.of(first, walrus=False) == {
        "a", "args", "b", "kw", "x", "y", "p", "q", "r", "s", "u", "i", "j", "fh", "gh", "err", "inner", "K", "lam", "comp",
    }


def test_walrus_binds_in_the_enclosing_function() -> None:
    import libcst as cst

    from devlint.names import LocalBindings

    func = cst.parse_module("def f(a):\n    if (n := len(a)) > 1:\n        print([m := x for x in a])\n").body[0]
    assert isinstance(func, cst.FunctionDef)
    assert LocalBindings.of(func) == {"a", "n", "m"}
