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

from .nets import AddsWeight, Chain, Holder, MovesLabels, Net, Pair, Scaled, Stack, batch  # noqa: E402

HERE = os.path.relpath(__file__)
NETS = os.path.relpath(sys.modules[Net.__module__].__file__)
ORIGINAL_CALL = nn.Module.__call__
ORIGINAL_CODE = nn.Module.__call__.__code__


def line_of(obj: object, text: str) -> int:
    """The line of ``obj``'s source that contains ``text``."""
    import inspect

    lines, start = inspect.getsourcelines(obj)
    return start + next(i for i, line in enumerate(lines) if text in line)


def line_after() -> int:
    """The line number just after the caller's line."""
    return sys._getframe(1).f_lineno + 1


@pytest.fixture(autouse=True)
def nothing_left_behind():
    yield
    assert nn.Module.__call__ is ORIGINAL_CALL
    assert nn.Module.__call__.__code__ is ORIGINAL_CODE
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


def test_the_outermost_call_names_the_input_the_user_passed():
    model = Net()
    model.encoder.layers[0].to("meta")
    with dlr.check_devices(), pytest.raises(dlr.DeviceMismatchError) as caught:
        line = line_after()
        model(batch())
    assert caught.value.module_path == "model.encoder.layers.0"
    assert f'  model called from {HERE}:{line} with args[0]["x"]: model(batch())' in str(caught.value).splitlines()


def test_keyword_nested_and_dataclass_inputs_are_named():
    @dataclasses.dataclass
    class Batch:
        pixels: torch.Tensor
        extra: list

    scaled = Scaled("meta")
    meta = torch.zeros(2, device="meta")
    with dlr.check_devices(), pytest.raises(dlr.DeviceMismatchError) as caught:
        line = line_after()
        scaled(meta, {"input_ids": torch.zeros(2, 3, dtype=torch.long)}, Batch(meta, [meta, torch.ones(1)]), mask=torch.zeros(2, 5))
    error = caught.value
    assert [(m.where, m.device, m.shape, m.dtype) for m in error.offenders] == [
        ('args[1]["input_ids"]', "cpu", "(2, 3)", "torch.int64"),
        ("args[2].extra[1]", "cpu", "(1,)", "torch.float32"),
        ('kwargs["mask"]', "cpu", "(2, 5)", "torch.float32"),
    ]
    assert error.call_site == f"{HERE}:{line}"
    assert str(error).splitlines()[:6] == [
        "device mismatch in scaled (Scaled)",
        "  its parameters are on meta, but these inputs are not:",
        '    args[1]["input_ids"]  cpu  shape (2, 3)  torch.int64',
        "    args[2].extra[1]      cpu  shape (1,)    torch.float32",
        '    kwargs["mask"]        cpu  shape (2, 5)  torch.float32',
        "  PyTorch raised: Tensor on device meta is not on the expected device cpu!",
    ]


def test_cpu_scalars_pass_in_any_position():
    scaled = Scaled("meta")
    with dlr.check_devices():
        scaled(torch.tensor(2.0), torch.zeros(2, device="meta"), scale=torch.tensor(0.5))
        nn.MSELoss()(torch.zeros((), device="meta"), torch.tensor(1.0))
    with dlr.check_devices(), pytest.raises(dlr.DeviceMismatchError) as caught:
        scaled(torch.tensor([2.0]))  # one element, but not 0-dim
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


def test_torch_layer_without_parameters_checks_its_inputs_agree():
    loss = nn.MSELoss()
    with dlr.check_devices(), pytest.raises(dlr.DeviceMismatchError) as caught:
        loss(torch.zeros(2, device="meta"), torch.zeros(2))
    assert str(caught.value).splitlines()[:3] == [
        "device mismatch in loss (MSELoss)",
        "  it has no parameters or buffers, and its inputs are on more than one device: args[0] is on meta, but",
        "    args[1]  cpu  shape (2,)  torch.float32",
    ]
    # not judged before the call: PyTorch's own refusal is named instead
    with dlr.check_devices(check_parameterless=False), pytest.raises(dlr.DeviceMismatchError) as caught:
        loss(torch.zeros(2, device="meta"), torch.zeros(2))
    assert str(caught.value).splitlines()[3] == "  PyTorch raised: Tensor on device cpu is not on the expected device meta!"


def test_inputs_that_meet_nothing_are_not_reported():
    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = Holder("meta")

        def forward(self, x, mask):
            return self.inner(x, mask)

    with dlr.check_devices():
        # a module of the user's that never combines its inputs with its tensors
        Holder("meta")(torch.zeros(2), mask=torch.zeros(2, 5))
        Pair()(torch.zeros(2, device="meta"), [torch.zeros(1)])
        Block()(torch.zeros(2, device="meta"), torch.ones(2, dtype=torch.bool))


def test_a_model_that_moves_its_inputs_itself_is_not_reported():
    x, labels = torch.randn(4, 8), torch.tensor([0, 1, 2, 0])
    with dlr.check_devices():
        logits, loss = MovesLabels("meta")(x.to("meta"), labels=labels)  # the labels stay on the CPU
    assert logits.device.type == "meta" and loss.device.type == "meta"


def test_a_hand_written_layer_that_adds_a_cpu_tensor_to_its_weight_is_named():
    layer = AddsWeight("meta")
    with dlr.check_devices(), pytest.raises(dlr.DeviceMismatchError) as caught:
        line = line_after()
        layer(torch.zeros(4, 8))
    error = caught.value
    assert isinstance(error.__context__, RuntimeError)  # PyTorch's own error
    assert (error.module_path, error.module_type, error.expected) == ("layer", "AddsWeight", "meta")
    assert error.offenders == (Misplaced("args[0]", "cpu", "(4, 8)", "torch.float32"),)
    assert str(error).splitlines()[:6] == [
        "device mismatch in layer (AddsWeight)",
        "  its parameters are on meta, but these inputs are not:",
        "    args[0]  cpu  shape (4, 8)  torch.float32",
        "  PyTorch raised: Tensor on device meta is not on the expected device cpu!",
        f"  at {NETS}:{line_of(AddsWeight.forward, 'x + self.weight')} in forward: return x + self.weight",
        f"  called from {HERE}:{line} in test_a_hand_written_layer_that_adds_a_cpu_tensor_to_its_weight_is_named: "
        "layer(torch.zeros(4, 8))",
    ]


def test_a_mismatch_deep_inside_names_the_layer_and_the_users_input():
    model = Stack("meta")
    with dlr.check_devices(), pytest.raises(dlr.DeviceMismatchError) as caught:
        line = line_after()
        model(torch.zeros(4, 8, device="meta"), labels=torch.zeros(32))
    error = caught.value
    assert (error.module_path, error.module_type) == ("model.scorer", "AddsWeight")
    lines = str(error).splitlines()
    assert lines[2] == "    args[0]  cpu  shape (4, 8)  torch.float32"
    assert lines[5] == f"  called from {NETS}:{line_of(Stack.forward, 'self.scorer(')} in forward: " + (
        "return self.body(x) + self.scorer(labels.view(-1, 8))"
    )
    assert lines[6] == (
        f"  model called from {HERE}:{line} with kwargs[\"labels\"]: "
        'model(torch.zeros(4, 8, device="meta"), labels=torch.zeros(32))'
    )


def test_an_error_that_is_not_about_devices_passes_unchanged():
    layer = AddsWeight()
    with dlr.check_devices(), pytest.raises(RuntimeError) as caught:
        layer(torch.zeros(4, 3))
    assert type(caught.value) is RuntimeError
    assert "must match the size" in str(caught.value)


def quiet_linear(n: int = 3) -> nn.Linear:
    """A layer on meta that PyTorch runs on a CPU input without complaint: only devlint sees it."""
    return nn.Linear(n, n, bias=False, device="meta")


def test_warn_mode_points_at_the_user_line_and_lets_the_call_run():
    linear = quiet_linear()
    with dlr.check_devices(mode="warn"), warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        line = line_after()
        out = linear(torch.zeros(1, 3))
    assert out.shape == (1, 3)
    assert len(seen) == 1
    assert seen[0].category is dlr.DeviceMismatchWarning
    assert (os.path.relpath(seen[0].filename), seen[0].lineno) == (HERE, line)
    assert str(seen[0].message).startswith("device mismatch in linear (Linear)\n")


def test_warn_mode_warns_once_and_lets_pytorchs_error_through():
    loss = nn.MSELoss()
    with dlr.check_devices(mode="warn"), warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match="not on the expected device") as caught:
            loss(torch.zeros(2, device="meta"), torch.zeros(2))
        with pytest.raises(RuntimeError, match="not on the expected device") as caught_inside:
            AddsWeight("meta")(torch.zeros(8))
    assert type(caught.value) is RuntimeError and type(caught_inside.value) is RuntimeError
    assert [str(w.message).splitlines()[0] for w in seen] == [
        "device mismatch in loss (MSELoss)",
        "device mismatch in AddsWeight (AddsWeight)",
    ]


def test_watching_one_model_leaves_others_alone():
    watched, other = Chain("meta"), Chain("meta")
    x = torch.zeros(1, 3)
    with dlr.check_devices(watched):
        with pytest.raises(dlr.DeviceMismatchError):
            watched(x)
        with pytest.raises(dlr.DeviceMismatchError) as caught:
            watched.blocks[0](x)  # a submodule called on its own
        assert caught.value.module_path == "watched.blocks.0"
        quiet_linear()(x)
        other(x)


def test_exempt_by_type_and_by_path_pattern():
    model = Chain("cpu", "meta")
    model.head.to("meta")
    x = torch.zeros(1, 3)
    for exempt in ([nn.Linear], ["blocks.*", "head"], ["model.blocks.1", "model.h*"]):
        with dlr.check_devices(exempt=exempt):
            model(x)
    with dlr.check_devices(exempt="blocks.*"), pytest.raises(dlr.DeviceMismatchError) as caught:
        model(x)
    assert caught.value.module_path == "model.head"


def test_exempt_modules_pytorchs_errors_are_not_renamed():
    layer = AddsWeight("meta")
    with dlr.check_devices(exempt=[AddsWeight]), pytest.raises(RuntimeError) as caught:
        layer(torch.zeros(8))
    assert type(caught.value) is RuntimeError


def test_accelerate_dispatched_modules_are_left_to_accelerate():
    linear = quiet_linear()
    linear._hf_hook = object()  # what accelerate.hooks.add_hook_to_module sets
    with dlr.check_devices():
        linear(torch.zeros(1, 3))


def test_module_called_but_not_registered_in_the_outer_model():
    stray = quiet_linear(1)

    class Outer(nn.Module):
        def forward(self, x):
            return stray(x)

    outer = Outer()
    with dlr.check_devices(), pytest.raises(dlr.DeviceMismatchError) as caught:
        outer(torch.zeros(1))
    assert caught.value.module_path == "Linear (called inside outer, not one of its submodules)"


def test_block_that_raises_restores_module_call():
    with pytest.raises(ZeroDivisionError):
        with dlr.check_devices():
            assert interception.is_installed()
            1 / 0
    assert not interception.is_installed()


def test_entering_a_block_replaces_no_attribute_of_nn_module():
    # Setting an attribute of nn.Module would invalidate the method caches of
    # every Module subclass in the process, on every block entered and left.
    before = dict(vars(nn.Module))
    with dlr.check_devices():
        assert interception.is_installed()
        assert dict(vars(nn.Module)) == before
        assert nn.Module.__call__ is ORIGINAL_CALL
    assert not interception.is_installed()


def test_nested_blocks_innermost_wins_then_outer_resumes():
    pair = quiet_linear(1)
    args = (torch.zeros(1, 1),)
    with dlr.check_devices():
        with dlr.check_devices(mode="warn"), pytest.warns(dlr.DeviceMismatchWarning):
            pair(*args)
        with pytest.raises(dlr.DeviceMismatchError):
            pair(*args)
        assert len(interception.active_watches()) == 1
    pair(*args)


def test_decorator_with_and_without_parentheses():
    pair = quiet_linear(1)
    args = (torch.zeros(1, 1),)

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
    pair = quiet_linear(1)
    args = (torch.zeros(1, 1),)
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
    pair = quiet_linear(1)
    bad = (torch.zeros(1, 1),)
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


def test_a_devlint_bug_does_not_stop_the_model(monkeypatch):
    def broken(*args, **kwargs):
        raise OSError("no")

    monkeypatch.setattr(interception, "_said_once", set())
    monkeypatch.setattr(interception, "call_is_consistent", broken)
    linear = nn.Linear(1, 1)
    with dlr.check_devices(), pytest.warns(dlr.DeviceCheckSkippedWarning, match="could not check a call of Linear"):
        assert linear(torch.zeros(1, 1)).shape == (1, 1)


def test_tensors_pytorch_keeps_on_the_cpu_by_design_are_not_reported():
    from torch.nn.utils.rnn import pack_padded_sequence

    with dlr.simulate_cuda(), dlr.check_devices():
        lstm = nn.LSTM(4, 8, batch_first=True).to("cuda")
        x = torch.randn(3, 5, 4, device="cuda")
        packed = pack_padded_sequence(x, torch.tensor([5, 3, 2]), batch_first=True)  # lengths on the CPU
        assert packed.batch_sizes.device.type == "cpu"
        assert lstm(packed)[0].data.is_cuda
        ctc = nn.CTCLoss()
        log_probs = torch.randn(10, 3, 6, device="cuda").log_softmax(2)
        targets = torch.randint(1, 6, (3, 4))
        lengths = (torch.full((3,), 10), torch.full((3,), 4))
        ctc(log_probs, targets, *lengths)
        ctc(log_probs, targets=targets, input_lengths=lengths[0], target_lengths=lengths[1])
        # the data of a packed sequence is still checked
        on_cpu = pack_padded_sequence(torch.randn(3, 5, 4), torch.tensor([5, 3, 2]), batch_first=True)
        with pytest.raises(dlr.DeviceMismatchError) as caught:
            lstm(on_cpu)
    assert [m.where for m in caught.value.offenders] == ["args[0].data"]
