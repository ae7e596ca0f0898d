"""Correct code: silent under simulated CUDA, with the same numbers as a plain CPU run."""

import warnings

import pytest

torch = pytest.importorskip("torch")

from devlint.runtime.simulate import simulate_cuda  # noqa: E402

from . import ok_scripts  # noqa: E402


@pytest.mark.parametrize("script", ok_scripts.SCRIPTS, ids=lambda s: s.__name__)
def test_same_numbers_as_plain_cpu(script):
    with warnings.catch_warnings():
        # pin_memory=True warns on a plain CPU-only run ("no accelerator is found")
        warnings.simplefilter("ignore", UserWarning)
        plain = script()
    with simulate_cuda():
        torch.cuda.reset_peak_memory_stats()
        simulated = script()
        # the script did put its tensors on the (simulated) GPU
        assert torch.cuda.max_memory_allocated() > 0
    assert simulated == plain
    assert len(plain) > 1
