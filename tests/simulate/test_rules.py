"""Every entry of the per-op device rule table, against what CUDA does.

The expected behaviour is PyTorch's documented CUDA behaviour (and its
kernels' device checks); no GPU was available to confirm it here.
Each example runs under simulation and either returns a tensor on the
expected simulated device or raises DeviceMismatchError.
"""

from dataclasses import dataclass
from typing import Any, Callable

import pytest

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence  # noqa: E402

from devlint.runtime.errors import DeviceMismatchError  # noqa: E402
from devlint.runtime.simulate import simulate_cuda  # noqa: E402
from devlint.runtime.simulate.rules import RULES  # noqa: E402

RAISES = "raises"


@dataclass
class Example:
    op: str
    what: str
    run: Callable[[], Any]
    expect: str  # "raises", or the device of the result ("cuda:0", "cpu")


def gpu(*shape, dtype=torch.float32):
    return torch.ones(shape, dtype=dtype, device="cuda")


def cpu(*shape, dtype=torch.float32):
    return torch.ones(shape, dtype=dtype)


def _set_data():
    p = cpu(2)
    p.data = gpu(2)
    return p


def _aliasing_cpu_copy():
    source = gpu(2)
    out = source.to("cpu")
    out.add_(1)
    assert source.sum().item() == 2.0
    return out


def _setitem(target, index, value):
    target[index] = value
    return target


def _rnn(cell, packed=True, **kwargs):
    torch.manual_seed(0)
    rnn = cell(3, 4, batch_first=True, **kwargs).to("cuda")
    x = gpu(2, 5, 3)
    if packed:
        return rnn(pack_padded_sequence(x, torch.tensor([5, 3]), batch_first=True))[0].data
    return rnn(x, cpu(1, 2, 4))[0]


EXAMPLES = [
    Example("*", "cuda + cpu tensor", lambda: gpu(3) + cpu(3), RAISES),
    Example("*", "cuda + cpu 0-dim tensor", lambda: gpu(3) + torch.tensor(2.0), "cuda:0"),
    Example("*", "cpu tensor + cuda 0-dim tensor", lambda: cpu(3) * gpu(), RAISES),
    Example("*", "cpu 0-dim output += cuda", lambda: torch.tensor(0.0).add_(gpu()), RAISES),
    Example("*", "out= on the other device", lambda: torch.add(gpu(2), gpu(2), out=cpu(2)), RAISES),
    Example("*", "matmul across devices", lambda: gpu(2, 2) @ cpu(2, 2), RAISES),
    Example("*", "all on cuda", lambda: torch.where(gpu(2) > 0, gpu(2), torch.tensor(0.0)), "cuda:0"),
    Example("torch._has_compatible_shallow_copy_type", "types only",
            lambda: torch._has_compatible_shallow_copy_type(cpu(2), gpu(2)) and gpu(1), "cuda:0"),
    Example("torch.is_same_size", "shapes only", lambda: torch.is_same_size(cpu(2), gpu(2)) and cpu(1), "cpu"),
    Example("torch.result_type", "dtypes only", lambda: torch.result_type(cpu(2), gpu(2)) and cpu(1), "cpu"),
    Example("Tensor.is_set_to", "storages only", lambda: gpu(2).is_set_to(cpu(2)) or cpu(1), "cpu"),
    Example("Tensor.expand_as", "cpu other", lambda: gpu(1, 3).expand_as(cpu(2, 3)), "cuda:0"),
    Example("Tensor.view_as", "cpu other", lambda: gpu(6).view_as(cpu(2, 3)), "cuda:0"),
    Example("Tensor.reshape_as", "cpu other", lambda: gpu(6).reshape_as(cpu(3, 2)), "cuda:0"),
    Example("Tensor.new_tensor", "cpu data", lambda: gpu(2).new_tensor(cpu(3)), "cuda:0"),
    Example("Tensor.new_tensor", "cuda data", lambda: cpu(2).new_tensor(gpu(3)), "cpu"),
    Example("Tensor.new_empty", "self's device", lambda: gpu(2).new_empty(3), "cuda:0"),
    Example("Tensor.new_zeros", "device= wins", lambda: gpu(2).new_zeros(3, device="cpu"), "cpu"),
    Example("Tensor.new_ones", "self's device", lambda: gpu(2).new_ones(3), "cuda:0"),
    Example("Tensor.new_full", "self's device", lambda: gpu(2).new_full((3,), 7.0), "cuda:0"),
    Example("Tensor.data.__set__", "p.data = cuda tensor", _set_data, "cuda:0"),
    Example("Tensor.to", "cpu -> cuda", lambda: cpu(2).to("cuda"), "cuda:0"),
    Example("Tensor.to", "cuda -> cpu is a copy", _aliasing_cpu_copy, "cpu"),
    Example("Tensor.to", "dtype only keeps the device", lambda: gpu(2).to(torch.float64), "cuda:0"),
    Example("Tensor.to", "like another tensor", lambda: cpu(2).to(gpu(1, dtype=torch.float64)), "cuda:0"),
    Example("Tensor.to", "device index", lambda: cpu(2).to(0), "cuda:0"),
    Example("Tensor.cuda", "cpu -> cuda", lambda: cpu(2).cuda(), "cuda:0"),
    Example("Tensor.cpu", "cuda -> cpu", lambda: gpu(2).cpu(), "cpu"),
    Example("Tensor.type_as", "takes other's device", lambda: cpu(2).type_as(gpu(1, dtype=torch.float16)), "cuda:0"),
    Example("Tensor.type", "legacy cuda type", lambda: cpu(2).type(torch.cuda.DoubleTensor), "cuda:0"),
    Example("Tensor.type", "type name", lambda: gpu(2).type() == "torch.cuda.FloatTensor" and cpu(1), "cpu"),
    Example("Tensor.copy_", "cpu into cuda", lambda: gpu(2).copy_(cpu(2)), "cuda:0"),
    Example("Tensor.copy_", "cuda into cpu", lambda: cpu(2).copy_(gpu(2)), "cpu"),
    Example("Tensor.__getitem__", "cpu indices into cuda", lambda: gpu(4)[torch.tensor([0, 2])], "cuda:0"),
    Example("Tensor.__getitem__", "cpu mask into cuda", lambda: gpu(4)[torch.tensor([True, False] * 2)], "cuda:0"),
    Example("Tensor.__getitem__", "cuda indices into cpu", lambda: cpu(4)[gpu(2, dtype=torch.long)], RAISES),
    Example("Tensor.__setitem__", "cpu indices, cuda values",
            lambda: _setitem(gpu(4), torch.tensor([1]), gpu(1)), "cuda:0"),
    Example("Tensor.__setitem__", "slice from cpu values (a copy)", lambda: _setitem(gpu(4), slice(0, 2), cpu(2)), "cuda:0"),
    Example("Tensor.__setitem__", "advanced, cpu values", lambda: _setitem(gpu(4), torch.tensor([0, 1]), cpu(2)), RAISES),
    Example("Tensor.__setitem__", "advanced, cpu 0-dim value",
            lambda: _setitem(gpu(4), torch.tensor([0, 1]), torch.tensor(3.0)), "cuda:0"),
    Example("Tensor.index_put_", "cpu indices", lambda: gpu(4).index_put_((torch.tensor([1]),), gpu(1)), "cuda:0"),
    Example("Tensor.index_put_", "cpu values", lambda: gpu(4).index_put_((torch.tensor([1, 2]),), cpu(2)), RAISES),
    Example("Tensor.index_put", "cpu indices", lambda: gpu(4).index_put((torch.tensor([1]),), gpu(1)), "cuda:0"),
    Example("torch.index_put_", "cpu indices", lambda: torch.index_put_(gpu(4), (torch.tensor([1]),), gpu(1)), "cuda:0"),
    Example("torch.index_put", "cuda indices into cpu",
            lambda: torch.index_put(cpu(4), (gpu(1, dtype=torch.long),), cpu(1)), RAISES),
    Example("torch.cat", "mixed", lambda: torch.cat([gpu(2), cpu(2)]), RAISES),
    Example("torch.cat", "all cuda", lambda: torch.cat([gpu(2), gpu(2)]), "cuda:0"),
    Example("torch.concat", "mixed", lambda: torch.concat([gpu(2), cpu(2)]), RAISES),
    Example("torch.concatenate", "mixed", lambda: torch.concatenate([gpu(2), cpu(2)]), RAISES),
    Example("torch.stack", "cpu 0-dim among cuda 0-dim", lambda: torch.stack([gpu(), torch.tensor(1.0)]), RAISES),
    Example("torch.hstack", "mixed", lambda: torch.hstack([gpu(2), cpu(2)]), RAISES),
    Example("torch.vstack", "mixed", lambda: torch.vstack([gpu(2), cpu(2)]), RAISES),
    Example("torch.index_select", "cpu index", lambda: torch.index_select(gpu(4), 0, torch.tensor([1])), RAISES),
    Example("Tensor.index_select", "cpu 0-dim index", lambda: gpu(4).index_select(0, torch.tensor(1)), RAISES),
    Example("torch.embedding", "cpu token ids", lambda: F.embedding(torch.tensor([1, 2]), gpu(5, 3)), RAISES),
    Example("torch.embedding", "cuda token ids", lambda: F.embedding(gpu(2, dtype=torch.long), gpu(5, 3)), "cuda:0"),
    Example("torch.tensor", "device=cuda", lambda: torch.tensor([1.0, 2.0], device="cuda"), "cuda:0"),
    Example("torch.tensor", "from a cuda tensor", lambda: torch.tensor(gpu(2)), "cuda:0"),
    Example("torch.as_tensor", "cuda data to cpu", lambda: torch.as_tensor(gpu(2), device="cpu"), "cpu"),
    Example("torch.as_tensor", "cpu data to cuda", lambda: torch.as_tensor(cpu(2), device="cuda"), "cuda:0"),
    Example("torch.asarray", "cuda data to cpu", lambda: torch.asarray(gpu(2), device="cpu"), "cpu"),
    Example("Tensor.numpy", "cuda tensor", lambda: gpu(2).numpy(), RAISES),
    Example("Tensor.numpy", "after .cpu()", lambda: torch.from_numpy(gpu(2).cpu().numpy()), "cpu"),
    Example("Tensor.__array__", "np.asarray on cuda", lambda: np.asarray(gpu(2)), RAISES),
    Example("Tensor.pin_memory", "cpu tensor", lambda: cpu(2).pin_memory(), "cpu"),
    Example("Tensor.pin_memory", "cuda tensor", lambda: gpu(2).pin_memory(), RAISES),
    Example("torch._pack_padded_sequence", "cpu lengths",
            lambda: pack_padded_sequence(gpu(2, 3, 1), torch.tensor([3, 2]), batch_first=True).data, "cuda:0"),
    Example("torch._pack_padded_sequence", "batch_sizes stay on cpu",
            lambda: pack_padded_sequence(gpu(2, 3, 1), torch.tensor([3, 2]), batch_first=True).batch_sizes, "cpu"),
    Example("torch._pad_packed_sequence", "lengths come back on cpu",
            lambda: pad_packed_sequence(pack_padded_sequence(gpu(2, 3, 1), torch.tensor([3, 2]), batch_first=True))[1],
            "cpu"),
    Example("torch.lstm", "packed, cpu batch_sizes", lambda: _rnn(nn.LSTM), "cuda:0"),
    Example("torch.gru", "packed, cpu batch_sizes", lambda: _rnn(nn.GRU), "cuda:0"),
    Example("torch.gru", "hidden state on cpu", lambda: _rnn(nn.GRU, packed=False), RAISES),
    Example("torch.rnn_tanh", "packed, cpu batch_sizes", lambda: _rnn(nn.RNN), "cuda:0"),
    Example("torch.rnn_relu", "packed, cpu batch_sizes", lambda: _rnn(nn.RNN, nonlinearity="relu"), "cuda:0"),
    Example("torch.nn.functional.ctc_loss", "cpu targets and lengths",
            lambda: F.ctc_loss(gpu(5, 2, 4).log_softmax(2), torch.tensor([[1, 2], [1, 1]]),
                               torch.tensor([5, 5]), torch.tensor([2, 2])), "cuda:0"),
    Example("torch.nn.functional.ctc_loss", "log_probs on cpu",
            lambda: F.ctc_loss(cpu(5, 2, 4).log_softmax(2), gpu(2, 2, dtype=torch.long) + 1,
                               torch.tensor([5, 5]), torch.tensor([2, 2])), RAISES),
]


def test_every_rule_has_an_example():
    covered = {example.op for example in EXAMPLES}
    assert {rule.op for rule in RULES} | {"*"} <= covered


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: f"{e.op}: {e.what}")
def test_rule_matches_cuda(example):
    with simulate_cuda():
        if example.expect == RAISES:
            with pytest.raises(DeviceMismatchError):
                example.run()
            return
        result = example.run()
        assert isinstance(result, torch.Tensor)
        assert str(result.device) == example.expect
        assert result.is_cuda == (example.expect != "cpu")
