"""Patterns found by running devlint on real projects: each a false alarm or a miss once."""

from __future__ import annotations

from devlint.config import Settings

from linting import positions

ALL = Settings()


def test_cuda_with_a_device_index_variable_is_multi_gpu_code() -> None:
    source = """
    import torch

    def run(model, rank):
        model.cuda(rank)
        return torch.ones(2).cuda(device=rank)
    """
    assert positions(source, ALL) == []


def test_cuda_with_a_literal_index_is_still_hardcoded() -> None:
    source = """
    import torch

    x = torch.ones(2).cuda(0)
    """
    assert positions(source, ALL) == [("DL101", 3, 5)]


def test_code_inside_a_cuda_device_or_stream_block_runs_only_on_a_gpu() -> None:
    # Entering the block is what fails without CUDA (DL103); what runs inside is not reported again.
    source = """
    import torch

    def copy(x):
        with torch.cuda.device(0):
            y = x.cuda()
        with torch.cuda.stream(torch.cuda.Stream()):
            z = torch.zeros(2, device="cuda")
        return y, z
    """
    assert positions(source, ALL) == [("DL103", 4, 10), ("DL103", 6, 28)]


def test_a_test_class_skipped_on_a_condition_states_its_hardware() -> None:
    source = """
    import pytest
    import torch
    from mylib import HAS_FA3

    @pytest.mark.skipif(not HAS_FA3, reason="FA3 required")
    class TestFlash:
        DEVICE = "cuda"

        def test_it(self):
            assert torch.ones(2, device=self.DEVICE).sum() == 2
    """
    assert positions(source, ALL) == []


def test_a_module_level_pytestmark_without_cuda_guards_the_file() -> None:
    source = """
    import pytest
    import torch

    pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
    DEVICE = "cuda"
    """
    assert positions(source, ALL) == []


def test_an_early_return_without_cuda_guards_what_follows() -> None:
    source = """
    import torch

    def props(flash=True):
        if not torch.cuda.is_available() or not flash:
            return None
        return torch.cuda.get_device_properties(torch.device("cuda"))
    """
    assert positions(source, ALL) == []


def test_a_checkpoint_saved_and_reloaded_by_the_same_script() -> None:
    source = """
    import torch

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = torch.nn.Linear(4, 2).to(device)
    with open("model.pt", "wb") as f:
        torch.save(model, f)
    with open("model.pt", "rb") as f:
        model = torch.load(f)
    """
    assert positions(source, ALL) == []


def test_copy_and_fill_take_values_from_another_device() -> None:
    source = """
    import torch

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    staging = torch.empty(16)
    target = torch.empty(16, device=device)
    target.copy_(staging, non_blocking=True)
    target.fill_(torch.tensor(3.0))
    """
    assert positions(source, ALL) == []


def test_ddp_wraps_a_model_where_it_is() -> None:
    source = """
    import torch
    from torch.nn.parallel import DistributedDataParallel as DDP

    def train(model, loader, rank):
        device = torch.device("cuda", rank)
        model = model.to(device)
        ddp = DDP(model, device_ids=[rank])
        compiled = torch.compile(ddp)
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            loss = torch.nn.functional.cross_entropy(compiled(x), y)
    """
    assert positions(source, ALL) == []


def test_calling_self_inside_a_module_runs_its_forward() -> None:
    source = """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Lit(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Linear(4, 4)

        def forward(self, x):
            return self.net(x)

        def training_step(self, batch, batch_idx):
            x, y = batch
            out = self(x)
            target = torch.full((out.size(1),), 0.1)
            return F.mse_loss(out, target.expand_as(out))
    """
    assert positions(source, ALL) == [("DL303", 16, 18)]


def test_outputs_of_an_opaque_model_fed_device_tensors_may_be_on_the_device() -> None:
    source = """
    import torch

    def evaluate(model, batch, device):
        labels = batch["labels"].to(device)
        outputs = model(batch["input_ids"].to(device), labels=labels)
        return outputs.logits.detach().numpy()
    """
    assert positions(source, ALL) == [("DL302", 6, 12)]


def test_a_module_of_unknown_placement_called_with_cpu_inputs_is_not_a_mix() -> None:
    # DDP(device_ids=[rank]) moves its inputs itself; and `.to(rank)` says nothing we can read.
    source = """
    import torch
    import torch.nn as nn
    from torch.nn.parallel import DistributedDataParallel as DDP

    class Toy(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Linear(10, 5)

        def forward(self, x):
            return self.net(x)

    def demo(rank):
        model = Toy().to(rank)
        ddp = DDP(model, device_ids=[rank])
        return ddp(torch.randn(20, 10))
    """
    assert positions(source, ALL) == []


def test_ddp_moves_its_inputs_itself() -> None:
    source = """
    import torch
    import torch.nn as nn

    def run(rank):
        net = nn.parallel.DistributedDataParallel(nn.Linear(4, 4).cuda(rank), device_ids=[rank])
        return net(torch.randn(8, 4))
    """
    assert positions(source, ALL) == []


def test_classes_of_one_name_keep_their_own_attributes() -> None:
    source = """
    import torch
    import torch.nn as nn

    def make_plain():
        class Net:
            def __init__(self):
                self.fc = nn.Linear(4, 4)
        return Net()

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            return self.fc(x)
    """
    assert positions(source, ALL) == []


def test_modules_passed_to_a_torch_function_are_not_operands() -> None:
    source = """
    import torch.nn as nn
    from torch.nn.utils import parametrize

    class L2Norm(nn.Module):
        def forward(self, t):
            return t / t.norm(dim=-1, keepdim=True)

    class NormLinear(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.linear = nn.Linear(dim, dim)
            parametrize.register_parametrization(self.linear, "weight", L2Norm())
    """
    assert positions(source, ALL) == []


def test_a_tensor_attribute_the_class_moves_itself_is_not_dl401() -> None:
    # openai/CLIP's ResidualAttentionBlock moves its mask to the input's device on every call.
    source = """
    import torch
    import torch.nn as nn

    class Block(nn.Module):
        def __init__(self, d, attn_mask: torch.Tensor = None):
            super().__init__()
            self.attn = nn.MultiheadAttention(d, 1)
            self.attn_mask = torch.ones(4, 4) if attn_mask is None else attn_mask

        def forward(self, x):
            self.attn_mask = self.attn_mask.to(dtype=x.dtype, device=x.device)
            return self.attn(x, x, x, attn_mask=self.attn_mask)[0]
    """
    assert positions(source, ALL) == []
