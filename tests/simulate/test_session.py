"""simulate_cuda() as a context: what it patches, restores, and answers."""

import gc
import io

import pytest

torch = pytest.importorskip("torch")

from torch.autograd.function import BackwardCFunction, Function  # noqa: E402
import torch.utils.data._utils.pin_memory as pin_memory_module  # noqa: E402

from devlint.runtime.errors import DeviceMismatchError  # noqa: E402
from devlint.runtime.simulate import simulate_cuda  # noqa: E402


def _snapshot():
    return {
        "is_available": torch.cuda.is_available,
        "device_count": torch.cuda.device_count,
        "device": torch.cuda.device,
        "accelerator": torch.accelerator.is_available,
        "load": torch.load,
        "pin": pin_memory_module.pin_memory,
        "apply": Function.__dict__["apply"],
        "backward_apply": BackwardCFunction.__dict__["apply"],
        "cudnn": torch.backends.cudnn.is_acceptable,
        "has_torch_function": torch.overrides.has_torch_function,
        "generator": torch.Generator,
        "storage_to": torch.storage._StorageBase.__dict__["to"],
        "location_tag": torch.serialization.location_tag,
        "modes": torch._C._len_torch_function_stack(),
    }


def test_restores_everything_on_normal_exit():
    before = _snapshot()
    with simulate_cuda():
        assert torch.cuda.is_available()
        assert torch._C._len_torch_function_stack() == before["modes"] + 1
    assert _snapshot() == before
    assert not torch.cuda.is_available()


def test_restores_everything_when_the_block_raises():
    before = _snapshot()
    with pytest.raises(DeviceMismatchError):
        with simulate_cuda():
            torch.ones(2, device="cuda") + torch.ones(2)
    assert _snapshot() == before
    with pytest.raises(KeyError):
        with simulate_cuda():
            raise KeyError("x")
    assert _snapshot() == before


def test_restores_with_a_default_device_mode_left_above():
    before = _snapshot()
    with simulate_cuda():
        context = torch.device("cuda")
        context.__enter__()
        assert torch.zeros(2).device == torch.device("cuda", 0)
    assert torch._C._len_torch_function_stack() == before["modes"] + 1
    context.__exit__(None, None, None)
    assert _snapshot() == before


def test_decorator_and_nesting():
    @simulate_cuda()
    def inner():
        with simulate_cuda():
            assert torch.cuda.is_available()
        return torch.cuda.is_available()

    assert inner() is True
    assert inner() is True
    assert not torch.cuda.is_available()


def test_nesting_cannot_change_the_device_count():
    with simulate_cuda(devices=1):
        with pytest.raises(ValueError, match="already simulating 1"):
            with simulate_cuda(devices=2):
                pass
        assert torch.cuda.is_available()
    assert not torch.cuda.is_available()


class _Wrapped(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return super().__torch_function__(func, types, args, kwargs or {})


class _OtherMode(torch.overrides.TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def test_fast_path_selectors_do_not_see_the_simulation():
    # TransformerEncoderLayer and MultiheadAttention take their native kernels
    # only when has_torch_function is False, as it is on a machine with a GPU
    plain = torch.ones(2)
    wrapped = torch.ones(2).as_subclass(_Wrapped)
    with simulate_cuda():
        on_device = torch.ones(2, device="cuda")
        assert torch.overrides.has_torch_function((plain, on_device)) is False
        assert torch.overrides.has_torch_function((plain, wrapped)) is True
        with _OtherMode():
            assert torch.overrides.has_torch_function((plain,)) is True
        assert torch._C._len_torch_function_stack() == 1
        # torch's own dispatch still reaches the simulation
        with pytest.raises(DeviceMismatchError):
            torch.nn.functional.linear(on_device, torch.ones(3, 2))


def test_bad_device_count():
    with pytest.raises(ValueError, match="positive int"):
        simulate_cuda(devices=0)


def test_device_queries():
    with simulate_cuda(devices=2) as machine:
        assert machine.devices == 2
        assert torch.cuda.device_count() == 2
        assert torch.cuda.current_device() == 0
        assert torch.cuda.get_device_name(0) == "devlint simulated CUDA device"
        assert torch.cuda.get_device_properties(0).total_memory == 80 * 1024**3
        assert torch.accelerator.current_accelerator() == torch.device("cuda")
        torch.cuda.synchronize()
        torch.cuda.manual_seed_all(3)
        assert torch.cuda.initial_seed() == 3
        with torch.cuda.device(1):
            assert torch.cuda.current_device() == 1
            assert torch.zeros(1, device="cuda").device == torch.device("cuda", 1)
        assert torch.cuda.current_device() == 0
        torch.cuda.set_device(1)
        assert torch.ones(1).cuda().device == torch.device("cuda", 1)


def test_two_devices_do_not_mix():
    with simulate_cuda(devices=2):
        a = torch.ones(2, device="cuda:0")
        b = torch.ones(2, device="cuda:1")
        with pytest.raises(DeviceMismatchError, match=r"cuda:0, cuda:1"):
            a + b
        assert (a + b.to("cuda:0")).device == torch.device("cuda", 0)


def test_device_that_does_not_exist():
    with simulate_cuda():
        with pytest.raises(RuntimeError, match="invalid device ordinal: cuda:1 does not exist"):
            torch.ones(1, device="cuda:1")


def test_memory_counters_follow_tensors():
    # simulated tensors of earlier tests caught in reference cycles would be
    # freed by a collection in the middle and move the counter
    gc.collect()
    gc.disable()
    try:
        with simulate_cuda():
            start = torch.cuda.memory_allocated()
            t = torch.zeros(1024, device="cuda")
            assert torch.cuda.memory_allocated() == start + 4096
            assert torch.cuda.max_memory_allocated() >= start + 4096
            del t
            assert torch.cuda.memory_allocated() == start
            free, total = torch.cuda.mem_get_info()
            assert free <= total
    finally:
        gc.enable()


def test_views_parameters_and_deepcopy_keep_the_device():
    import copy

    with simulate_cuda():
        t = torch.randn(4, 4).cuda()
        assert t[1:].device.type == "cuda"
        assert t.view(16).is_cuda
        p = torch.nn.Parameter(t)
        assert p.device.type == "cuda"
        assert copy.deepcopy(p).is_cuda
        model = torch.nn.Linear(2, 2).cuda()
        assert copy.deepcopy(model).weight.is_cuda
        assert not model.cpu().weight.is_cuda


def test_load_with_cuda_map_location():
    buffer = io.BytesIO()
    torch.save({"w": torch.ones(2)}, buffer)
    with simulate_cuda():
        buffer.seek(0)
        assert torch.load(buffer, map_location="cuda")["w"].device == torch.device("cuda", 0)
        buffer.seek(0)
        assert torch.load(buffer, map_location={"cpu": "cuda:0"})["w"].is_cuda
        buffer.seek(0)
        assert torch.load(buffer)["w"].device.type == "cpu"


def test_checkpoint_saved_inside_keeps_its_device_and_needs_a_map_location_outside():
    buffer = io.BytesIO()
    with simulate_cuda(devices=2):
        weights = torch.arange(4.0, device="cuda:1")
        torch.save({"w": weights, "step": 3}, buffer)
        buffer.seek(0)
        loaded = torch.load(buffer)
        assert loaded["w"].device == torch.device("cuda", 1)
        assert loaded["w"].tolist() == [0.0, 1.0, 2.0, 3.0] and loaded["step"] == 3
        buffer.seek(0)
        assert torch.load(buffer, map_location="cuda:0")["w"].device == torch.device("cuda", 0)
        buffer.seek(0)
        assert torch.load(buffer, map_location="cpu")["w"].device.type == "cpu"
    buffer.seek(0)
    # what a machine without a GPU says of a checkpoint saved on one
    with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA device"):
        torch.load(buffer)
    buffer.seek(0)
    assert torch.load(buffer, map_location="cpu")["w"].tolist() == [0.0, 1.0, 2.0, 3.0]


def test_load_with_a_callable_map_location():
    buffer = io.BytesIO()
    torch.save({"w": torch.ones(2)}, buffer)
    with simulate_cuda():
        buffer.seek(0)
        moved = torch.load(buffer, map_location=lambda storage, location: storage.cuda())["w"]
        assert moved.device == torch.device("cuda", 0) and moved.tolist() == [1.0, 1.0]
        buffer.seek(0)
        kept = torch.load(buffer, map_location=lambda storage, location: storage)["w"]
        assert kept.device.type == "cpu"


def test_cuda_generators():
    with simulate_cuda():
        generator = torch.Generator(device="cuda")
        assert generator.device == torch.device("cuda", 0)
        assert isinstance(generator, torch.Generator) and isinstance(torch.default_generator, torch.Generator)
        generator.manual_seed(7)
        drawn = torch.randn(3, device="cuda", generator=generator)
        assert drawn.is_cuda
        with pytest.raises(DeviceMismatchError, match="Expected a 'cpu' device type for generator but found 'cuda'"):
            torch.randperm(4, generator=generator)  # a DataLoader's shuffling runs on the CPU
        with pytest.raises(DeviceMismatchError, match="Expected a 'cuda' device type for generator but found 'cpu'"):
            torch.randn(3, device="cuda", generator=torch.Generator())
    # simulated CUDA draws the CPU's random numbers
    assert drawn.tolist() == torch.randn(3, generator=torch.Generator().manual_seed(7)).tolist()


def test_gradients_handed_to_hooks_are_on_the_device():
    seen = []
    with simulate_cuda():
        x = torch.ones(3, device="cuda", requires_grad=True)
        x.register_hook(lambda grad: seen.append((grad.device, torch.is_grad_enabled())))
        (x * 2).sum().backward()
        assert x.grad.device.type == "cuda"
        (grad,) = torch.autograd.grad((x * 3).sum(), x)
        assert grad.is_cuda
    assert seen[0][0] == torch.device("cuda", 0)


def test_custom_backward_that_forgets_the_device_is_caught():
    class Leaky(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * torch.full((3,), 2.0)  # a CPU tensor meeting a CUDA gradient

    with simulate_cuda():
        x = torch.ones(3, device="cuda", requires_grad=True)
        with pytest.raises(DeviceMismatchError, match="Tensor.mul"):
            Leaky.apply(x).sum().backward()


def test_autocast_and_grad_scaler_run():
    with simulate_cuda():
        scaler = torch.amp.GradScaler("cuda")
        assert scaler.is_enabled()
        w = torch.ones(2, device="cuda", requires_grad=True)
        with torch.autocast("cuda"):
            loss = (w * 2).sum()
        scaler.scale(loss).backward()
        assert w.grad.is_cuda
        assert w.grad.tolist() == [2.0 * 65536.0] * 2
