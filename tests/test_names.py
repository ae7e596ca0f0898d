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
    assert positions(
        """
        import torch
        from torch import cuda
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        cuda.manual_seed_all(0)
        """
    ) == []
