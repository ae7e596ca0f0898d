"""check_devices() on real library code paths: transformers models built from tiny configs.

No weights are downloaded: each model is built from a config with random
weights, under simulated CUDA so that the model really sits on "cuda:0".
"""

from __future__ import annotations

import os
import sys

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from torch import nn  # noqa: E402
from transformers import (  # noqa: E402
    BertConfig,
    BertForSequenceClassification,
    GPT2Config,
    GPT2LMHeadModel,
)

import devlint.runtime as dlr  # noqa: E402

HERE = os.path.relpath(__file__)


@pytest.fixture(autouse=True, scope="module")
def quiet_transformers():
    transformers.utils.logging.set_verbosity_error()
    yield
    transformers.utils.logging.set_verbosity_warning()


def line_after() -> int:
    return sys._getframe(1).f_lineno + 1


def tiny_gpt2() -> GPT2LMHeadModel:
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=100, n_embd=32, n_layer=2, n_head=2, n_positions=64, bos_token_id=0, eos_token_id=0)
    return GPT2LMHeadModel(config)


def tiny_bert() -> BertForSequenceClassification:
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=100,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
        num_labels=3,
    )
    return BertForSequenceClassification(config)


def batch() -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, 100, (4, 16), generator=g)
    mask = torch.ones(4, 16, dtype=torch.long)
    mask[1, 12:] = 0
    return ids, mask


def gpt2_step() -> list[float]:
    """The reproducer of issue 19: CPU labels and a CPU 2-D attention mask, which transformers moves itself."""
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = tiny_gpt2().to(device)
    ids, mask = batch()
    out = model(input_ids=ids.to(device), attention_mask=mask, labels=ids)
    out.loss.backward()
    return [out.loss.item(), out.logits.sum().item(), model.transformer.wte.weight.grad.sum().item()]


def test_labels_and_mask_that_transformers_moves_are_not_reported():
    plain = gpt2_step()
    with dlr.simulate_cuda(), dlr.check_devices():
        checked = gpt2_step()
    assert checked == plain


def test_a_wrapper_passing_a_cpu_tensor_to_a_layer_of_the_model_is_named():
    class Wrapper(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.gpt = tiny_gpt2()

        def forward(self, ids: torch.Tensor) -> torch.Tensor:
            positions = torch.arange(ids.shape[1])  # made on the CPU
            return self.gpt.transformer.wte(ids) + self.gpt.transformer.wpe(positions)

    with dlr.simulate_cuda(), dlr.check_devices():
        model = Wrapper().to("cuda")
        ids, _ = batch()
        with pytest.raises(dlr.DeviceMismatchError) as caught:
            line = line_after()
            model(ids.to("cuda"))
    lines = str(caught.value).splitlines()
    assert lines[:3] == [
        "device mismatch in model.gpt.transformer.wpe (Embedding)",
        "  its parameters are on cuda:0, but these inputs are not:",
        "    args[0]  cpu  shape (16,)  torch.int64",
    ]
    assert lines[3].endswith("in forward: return self.gpt.transformer.wte(ids) + self.gpt.transformer.wpe(positions)")
    assert lines[4] == f"  model called from {HERE}:{line}: model(ids.to(\"cuda\"))"


def test_cpu_input_ids_are_named_at_the_embedding_with_the_users_input():
    with dlr.simulate_cuda(), dlr.check_devices():
        model = tiny_gpt2().to("cuda")
        ids, _ = batch()
        with pytest.raises(dlr.DeviceMismatchError) as caught:
            line = line_after()
            model(input_ids=ids, labels=ids)
    error = caught.value
    assert (error.module_path, error.module_type, error.expected) == ("model.transformer.wte", "Embedding", "cuda:0")
    assert f'  model called from {HERE}:{line} with kwargs["input_ids"], kwargs["labels"]: ' in str(error)


def test_cpu_labels_that_the_library_does_not_move_are_named_at_the_loss():
    # BertForSequenceClassification hands its labels to CrossEntropyLoss as they came
    with dlr.simulate_cuda(), dlr.check_devices():
        model = tiny_bert().to("cuda")
        ids, mask = batch()
        with pytest.raises(dlr.DeviceMismatchError) as caught:
            line = line_after()
            model(input_ids=ids.to("cuda"), attention_mask=mask.to("cuda"), labels=torch.tensor([0, 1, 2, 1]))
    lines = str(caught.value).splitlines()
    assert lines[:3] == [
        "device mismatch in CrossEntropyLoss (called inside model, not one of its submodules) (CrossEntropyLoss)",
        "  it has no parameters or buffers, and its inputs are on more than one device: args[0] is on cuda:0, but",
        "    args[1]  cpu  shape (4,)  torch.int64",
    ]
    assert lines[4].startswith(f'  model called from {HERE}:{line} with kwargs["labels"]: ')
