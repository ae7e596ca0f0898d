"""devlint.runtime.check_devices: what it reports, and what it leaves alone."""

from __future__ import annotations

import copy
import dataclasses
import os
import sys
import threading
import warnings

import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402

import devlint.runtime as dlr  # noqa: E402
from devlint.runtime import interception  # noqa: E402
from devlint.runtime.errors import Misplaced  # noqa: E402

from .nets import Chain, Holder, Net, Pair, batch  # noqa: E402

HERE = os.path.relpath(__file__)
ORIGINAL_CALL = nn.Module.__call__


def line_after() -> int:
    """The line number just after the caller's line."""
    return sys._getframe(1).f_lineno + 1


@pytest.fixture(autouse=True)
def nothing_left_behind():
    yield
    assert nn.Module.__call__ is ORIGINAL_CALL
    assert interception.active_watches() == ()


def test_input_on_another_device_names_module_input_and_lines():
    model = Net()
    model.encoder.layers[1].to("meta")
    with dlr.check_devices(), pytest.raises(dlr.DeviceMismatchError) as caught:
        line = line_after()
        model(batch())
    error = caught.value
    assert isinstance(error, RuntimeError)
    assert error.module_path == "model.encoder.layers.1"
    assert error.module_type == "Linear"
    assert error.expected == "meta"
    assert error.offenders == (Misplaced("args[0]", "cpu", "(4, 8)", "torch.float32"),)
    nets = os.path.relpath(sys.modules[Net.__module__].__file__)
    assert error.call_site.startswith(f"{nets}:")
    assert str(error).splitlines()[:6] == [
        "device mismatch in model.encoder.layers.1 (Linear)",
        "  its parameters are on meta, but these inputs are not:",
        "    args[0]  cpu  shape (4, 8)  torch.float32",
        f"  called from {error.call_site} in forward: x = layer(x)",
        f"  model called from {HERE}:{line}: model(batch())",
        'fix: move each input listed above to meta before the call (`tensor.to("meta")`); '
        "or, if the module is the one on the wrong device, move the model: `model.to(device)`.",
    ]


def test_keyword_nested_and_dataclass_inputs_are_named():
    @dataclasses.dataclass
    class Batch:
        pixels: torch.Tensor
        extra: list

    holder = Holder("meta")
    meta = torch.zeros(2, device="meta")
    with dlr.check_devices(), pytest.raises(dlr.DeviceMismatchError) as caught:
        line = line_after()
        holder(meta, {"input_ids": torch.zeros(2, 3, dtype=torch.long)}, Batch(meta, [meta, torch.ones(1)]), mask=torch.zeros(2, 5))
    error = caught.value
    assert [(m.where, m.device, m.shape, m.dtype) for m in error.offenders] == [
        ('args[1]["input_ids"]', "cpu", "(2, 3)", "torch.int64"),
        ("args[2].extra[1]", "cpu", "(1,)", "torch.float32"),
        ('kwargs["mask"]', "cpu", "(2, 5)", "torch.float32"),
    ]
    assert error.call_site == f"{HERE}:{line}"
    assert str(error).splitlines()[0] == "device mismatch in holder (Holder)"


def test_cpu_scalars_pass_in_any_position():
    holder = Holder("meta")
    with dlr.check_devices():
        holder(torch.tensor(2.0), torch.zeros(2, device="meta"), scale=torch.tensor(0.5))
        Pair()(torch.tensor(1), torch.zeros(3, device="meta"))
    with dlr.check_devices(), pytest.raises(dlr.DeviceMismatchError) as caught:
        holder(torch.tensor([2.0]))  # one element, but not 0-dim
    assert [m.where for m in caught.value.offenders] == ["args[0]"]


def test_module_whose_own_tensors_are_split():
    linear = nn.Linear(4, 3)
    linear.bias = nn.Parameter(torch.zeros(3, device="meta"))
    with dlr.check_devices(), pytest.raises(dlr.DeviceMismatchError) as caught:
        linear(torch.zeros(2, 4))
    lines = str(caught.value).splitlines()
    assert lines[:4] == [
        "device mismatch in linear (Linear)",
        "  its own parameters and buffers are on more than one device:",
        "    weight (parameter)  cpu   shape (3, 4)  torch.float32",
        "    bias (parameter)    meta  shape (3,)    torch.float32",
    ]
    assert lines[5].startswith("fix: move the whole model after changing its tensors: `linear.to(device)`")


def test_buffer_counts_as_the_module_device():
    norm = nn.BatchNorm1d(4).to("meta")
    with dlr.check_devices(), pytest.raises(dlr.DeviceMismatchError) as caught:
        norm(torch.zeros(2, 4))
    assert caught.value.expected == "meta"
    norm.weight = None  # affine off: only buffers are left
    norm.bias = None
    with dlr.check_devices(), pytest.raises(dlr.DeviceMismatchError) as caught:
        norm(torch.zeros(2, 4))
    assert str(caught.value).splitlines()[1] == "  its buffers are on meta, but these inputs are not:"


def test_module_without_parameters_checks_its_inputs_agree():
    pair = Pair()
    with dlr.check_devices(), pytest.raises(dlr.DeviceMismatchError) as caught:
        pair(torch.zeros(2, device="meta"), [torch.zeros(1)])
    assert str(caught.value).splitlines()[:3] == [
        "device mismatch in pair (Pair)",
        "  it has no parameters or buffers, and its inputs are on more than one device: args[0] is on meta, but",
        "    args[1][0]  cpu  shape (1,)  torch.float32",
    ]
    with dlr.check_devices(check_parameterless=False):
        pair(torch.zeros(2, device="meta"), [torch.zeros(1)])


def test_container_is_judged_by_its_submodules_parameters():
    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = Holder("meta")

        def forward(self, x, mask):
            return self.inner(x, mask)

    block = Block()
    with dlr.check_devices(), pytest.raises(dlr.DeviceMismatchError) as caught:
        block(torch.zeros(2, device="meta"), torch.ones(2, dtype=torch.bool))
    assert str(caught.value).splitlines()[:3] == [
        "device mismatch in block (Block)",
        "  its submodules' parameters are on meta, but these inputs are not:",
        "    args[1]  cpu  shape (2,)  torch.bool",
    ]


def test_warn_mode_points_at_the_user_line_and_lets_the_call_run():
    pair = Pair()
    meta = torch.zeros(1, device="meta")
    with dlr.check_devices(mode="warn"), warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        line = line_after()
        out = pair(meta, torch.zeros(1))
    assert out[0] is meta
    assert len(seen) == 1
    assert seen[0].category is dlr.DeviceMismatchWarning
    assert (os.path.relpath(seen[0].filename), seen[0].lineno) == (HERE, line)
    assert str(seen[0].message).startswith("device mismatch in pair (Pair)\n")


def test_watching_one_model_leaves_others_alone():
    watched, other = Chain("meta"), Chain("meta")
    x = torch.zeros(1)
    with dlr.check_devices(watched):
        with pytest.raises(dlr.DeviceMismatchError):
            watched(x)
        with pytest.raises(dlr.DeviceMismatchError) as caught:
            watched.blocks[0](x)  # a submodule called on its own
        assert caught.value.module_path == "watched.blocks.0"
        Pair()(torch.zeros(1, device="meta"), x)
        other(x)


def test_exempt_by_type_and_by_path_pattern():
    model = Chain("cpu", "meta")
    model.head.to("meta")
    x = torch.zeros(1)
    for exempt in ([Holder], ["blocks.*", "head"], ["model.blocks.1", "model.h*"]):
        with dlr.check_devices(exempt=exempt):
            model(x)
    with dlr.check_devices(exempt="blocks.*"), pytest.raises(dlr.DeviceMismatchError) as caught:
        model(x)
    assert caught.value.module_path == "model.head"


def test_accelerate_dispatched_modules_are_left_to_accelerate():
    holder = Holder("meta")
    holder._hf_hook = object()  # what accelerate.hooks.add_hook_to_module sets
    with dlr.check_devices():
        holder(torch.zeros(1))


def test_module_called_but_not_registered_in_the_outer_model():
    stray = Holder("meta")

    class Outer(nn.Module):
        def forward(self, x):
            return stray(x)

    outer = Outer()
    with dlr.check_devices(), pytest.raises(dlr.DeviceMismatchError) as caught:
        outer(torch.zeros(1))
    assert caught.value.module_path == "Holder (called inside outer, not one of its submodules)"


def test_block_that_raises_restores_module_call():
    with pytest.raises(ZeroDivisionError):
        with dlr.check_devices():
            assert nn.Module.__call__ is not ORIGINAL_CALL
            1 / 0
    assert nn.Module.__call__ is ORIGINAL_CALL


def test_nested_blocks_innermost_wins_then_outer_resumes():
    pair = Pair()
    args = (torch.zeros(1, device="meta"), torch.zeros(1))
    with dlr.check_devices():
        with dlr.check_devices(mode="warn"), pytest.warns(dlr.DeviceMismatchWarning):
            pair(*args)
        with pytest.raises(dlr.DeviceMismatchError):
            pair(*args)
        assert len(interception.active_watches()) == 1
    pair(*args)


def test_decorator_with_and_without_parentheses():
    pair = Pair()
    args = (torch.zeros(1, device="meta"), torch.zeros(1))

    @dlr.check_devices()
    def checked(depth: int) -> None:
        if depth:
            checked(depth - 1)  # each call enters on its own
        assert len(interception.active_watches()) == 3 - depth
        if depth == 0:
            pair(*args)

    @dlr.check_devices
    def bare() -> None:
        pair(*args)

    with pytest.raises(dlr.DeviceMismatchError):
        checked(2)
    with pytest.raises(dlr.DeviceMismatchError):
        bare()
    assert bare.__name__ == "bare"


def test_enable_and_disable_for_a_session():
    pair = Pair()
    args = (torch.zeros(1, device="meta"), torch.zeros(1))
    assert not dlr.is_enabled()
    dlr.enable()
    try:
        dlr.enable(mode="warn")  # replaces, does not stack
        assert dlr.is_enabled()
        with pytest.warns(dlr.DeviceMismatchWarning):
            pair(*args)
    finally:
        dlr.disable()
    dlr.disable()  # already off: nothing happens
    assert not dlr.is_enabled()
    pair(*args)


def test_two_threads_each_under_the_mode_do_not_disturb_each_other():
    """Thread B enters and leaves its block while A is inside its own; a third thread has none."""
    pair = Pair()
    bad = (torch.zeros(1, device="meta"), torch.zeros(1))
    a_inside, b_done, c_done = threading.Event(), threading.Event(), threading.Event()
    results: dict[str, object] = {}

    def thread_a() -> None:
        try:
            with dlr.check_devices(mode="warn"):
                a_inside.set()
                b_done.wait(10)
                c_done.wait(10)
                with warnings.catch_warnings(record=True) as seen:
                    warnings.simplefilter("always")
                    pair(*bad)  # A's own setting (warn), still on after B left
                results["a"] = [w.category for w in seen]
        except Exception as error:  # pragma: no cover - reported below
            results["a"] = error

    def thread_b() -> None:
        a_inside.wait(10)
        try:
            with dlr.check_devices():
                pair(*bad)
        except dlr.DeviceMismatchError:
            results["b"] = "raised"
        b_done.set()

    def thread_c() -> None:
        a_inside.wait(10)
        b_done.wait(10)
        pair(*bad)  # no block in this thread
        results["c"] = "ran"
        c_done.set()

    threads = [threading.Thread(target=t) for t in (thread_a, thread_b, thread_c)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert results == {"a": [dlr.DeviceMismatchWarning], "b": "raised", "c": "ran"}


def _train_step(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
    torch.manual_seed(1)
    model.zero_grad()
    out = model(x)
    nn.functional.cross_entropy(out, y).backward()
    return out.detach(), [p.grad.clone() for p in model.parameters()]


def test_outputs_and_gradients_are_bit_identical():
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1),
        nn.BatchNorm2d(8),
        nn.ReLU(),
        nn.Dropout(0.3),
        nn.Flatten(),
        nn.Linear(8 * 6 * 6, 5),
    )
    attention = nn.MultiheadAttention(16, 4, batch_first=True)
    x, y = torch.randn(4, 3, 6, 6), torch.tensor([0, 1, 2, 3])
    q = torch.randn(2, 5, 16)
    mask = torch.triu(torch.ones(5, 5, dtype=torch.bool), 1)

    state = copy.deepcopy(model.state_dict())
    out_plain, grads_plain = _train_step(model, x, y)
    attn_plain = attention(q, q, q, attn_mask=mask)
    model.load_state_dict(state)  # BatchNorm's running stats moved
    with dlr.check_devices():
        out_checked, grads_checked = _train_step(model, x, y)
        attn_checked = attention(q, q, q, attn_mask=mask)
    assert torch.equal(out_plain, out_checked)
    assert all(torch.equal(a, b) for a, b in zip(grads_plain, grads_checked, strict=True))
    assert torch.equal(attn_plain[0], attn_checked[0]) and torch.equal(attn_plain[1], attn_checked[1])


def test_no_grad_and_inference_mode_still_check():
    model = Net()
    model.head.to("meta")
    for context in (torch.no_grad, torch.inference_mode):
        with dlr.check_devices(), context(), pytest.raises(dlr.DeviceMismatchError):
            model(batch())


def test_deepcopy_and_pickle_inside_a_block_carry_nothing_of_devlint():
    import pickle

    model = Net()
    with dlr.check_devices():
        copied = copy.deepcopy(model)
        data = pickle.dumps(model)
    assert b"devlint" not in data
    assert "devlint" not in repr(copied.__dict__)


def test_bad_arguments_are_clear_errors():
    with pytest.raises(ValueError, match="mode must be 'raise' or 'warn', not 'loud'"):
        dlr.check_devices(mode="loud")
    with pytest.raises(TypeError, match="exempt takes module types and path patterns"):
        dlr.check_devices(exempt=[3])
    with pytest.raises(TypeError, match="watches an nn.Module, not str"):
        dlr.check_devices("model")
    with pytest.raises(AttributeError):
        dlr.no_such_name  # noqa: B018


def test_an_input_devlint_cannot_read_does_not_stop_the_model(monkeypatch):
    class Hostile(dict):
        def values(self):
            raise OSError("no")

    monkeypatch.setattr(interception, "_said_once", set())
    holder = Holder()
    with dlr.check_devices(), pytest.warns(dlr.DeviceCheckSkippedWarning, match="could not check a call of Holder"):
        assert holder(torch.zeros(1), Hostile(a=1))[1]["a"] == 1
