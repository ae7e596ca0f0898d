"""DL202 (discarded-move): `t.to(...)` / `t.cuda()` / `t.cpu()` statements on known tensors, never on modules."""

from __future__ import annotations

import pytest

from linting import dataflow_findings as findings
from linting import dataflow_messages as messages
from linting import lint

from devlint.config import Settings

DL202 = Settings(select=("DL202",))


# -- positives -------------------------------------------------------------------
def test_a_factory_tensor_moved_by_a_statement() -> None:
    source = """
    import torch


    def prepare(x, device):
        t = torch.zeros(3)
        t.to(device)
        return t
    """
    assert findings(source) == [("DL202", 6, 5)]
    assert messages(source) == [
        "`t.to(device)` returns a moved copy that is thrown away: tensors are not moved in place, "
        "so `t` stays where it was; assign it: `t = t.to(device)`"
    ]


def test_to_cuda_and_cpu_statements_at_module_level() -> None:
    source = """
    import torch

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    weights = torch.ones(5)
    weights.to(device)
    labels = torch.tensor([1, 2, 3])
    labels.cpu()
    emb = torch.randn(3, 4, device=device)
    emb.cpu()
    """
    # `labels.cpu()` of a CPU tensor moves nothing: `labels` is where the copy would be.
    assert findings(source) == [("DL202", 5, 1), ("DL202", 9, 1)]


def test_batch_elements_moved_by_statements() -> None:
    # pytorch/pytorch#43313: train_img.to(device) / target_img.to(device) without assignment.
    source = """
    import torch


    def train_step(encoder, train_loader, loss_fn, device):
        encoder.to(device)
        for batch_idx, (train_img, target_img) in enumerate(train_loader):
            train_img.to(device)
            target_img.to(device)
            loss = loss_fn(encoder(train_img), target_img)
    """
    # One root cause, one finding: the later uses of the unmoved batch are not DL201 findings too.
    assert findings(source) == [("DL202", 7, 9), ("DL202", 8, 9)]


def test_guarded_cuda_statements_on_dict_batch_values() -> None:
    # kitzeslab/opensoundscape#201: X.cuda() / y.cuda() as statements.
    source = """
    import torch


    def train(model, train_loader):
        cuda = torch.cuda.is_available()
        if cuda:
            model.cuda()
        for batch in train_loader:
            X, y = batch["X"], batch["y"]
            if cuda:
                X.cuda()
                y.cuda()
            outputs = model(X)
    """
    assert findings(source) == [("DL202", 11, 13), ("DL202", 12, 13)]
    assert messages(source)[0] == (
        "`X.cuda()` returns a moved copy that is thrown away: tensors are not moved in place, "
        "so `X` stays where it was; assign it: `X = X.cuda()`"
    )


def test_only_the_discarded_element_is_reported() -> None:
    source = """
    import torch


    def train(model, loader, device):
        model.to(device)
        for x, y in loader:
            x.to(device)
            y = y.to(device)
            out = model(x)
    """
    assert findings(source) == [("DL202", 7, 9)]


def test_a_whole_batch_with_no_sign_of_a_structure_is_taken_for_a_tensor() -> None:
    source = """
    import torch


    def train(model, loader, device):
        model.to(device)
        for batch in loader:
            batch.to(device)
            out = model(batch)
    """
    assert findings(source) == [("DL202", 7, 9)]


def test_a_field_read_in_another_loop_does_not_make_the_batch_a_structure() -> None:
    source = """
    import torch


    def train(model, loader, other, device):
        model.to(device)
        for batch in loader:
            batch.to(device)
            out = model(batch)
        for batch in other:
            print(batch.name)
    """
    assert findings(source) == [("DL202", 7, 9)]


def test_keyword_moves_are_discarded_too() -> None:
    # `a.to(torch.float16)` converts the dtype and keeps the device: no move is lost there.
    source = """
    import torch


    def f(a, device):
        a = torch.as_tensor(a)
        a.to(torch.float16)
        d = torch.stack([a, a])
        d.to(device=device, non_blocking=True)
        e = a * 2
        e.to(device)
    """
    assert findings(source) == [("DL202", 8, 5), ("DL202", 10, 5)]


def test_a_factory_moved_by_a_statement_inside_forward() -> None:
    source = """
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)

        def forward(self, x):
            mask = torch.ones(x.shape[0])
            mask.to(x.device)
            return self.fc(x) * mask.unsqueeze(1)
    """
    # The discarded move is the root cause: no DL303 at the factory as well.
    assert findings(source) == [("DL202", 12, 9)]


def test_a_method_chain_on_a_tensor() -> None:
    source = """
    import torch


    def f(device):
        a = torch.zeros(3)
        a.float().to(device)
    """
    assert findings(source) == [("DL202", 6, 5)]


def test_a_method_chain_message_suggests_valid_python() -> None:
    source = """
    import torch


    def f(device):
        a = torch.zeros(3)
        a.float().to(device)
    """
    (message,) = messages(source)
    assert "`a.float() = " not in message


# -- negatives ---------------------------------------------------------------------
NEGATIVES = {
    "model-to-device-statement": """
        import torch
        import torch.nn as nn

        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        model = nn.Linear(4, 2)
        model.to(device)
        encoder = nn.Sequential(nn.Linear(3, 3))
        encoder.to(device)
        loss_fn = nn.CrossEntropyLoss()
        loss_fn.to(device)
        layers = nn.ModuleList([nn.Linear(2, 2)])
        layers.to(device)
        """,
    "local-module-class": """
        import torch
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(3, 3)
                self.fc.to("cpu")

            def forward(self, x):
                self.fc.to(x.device)
                return self.fc(x)


        def main(device):
            net = Net()
            net.to(device)
            net.fc.to(device)
            net.cpu()
        """,
    "unknown-parameters-and-objects": """
        import torch


        def setup(m, x, device):
            m.to(device)
            m.cpu()
            x.to(device)
            obj = get_thing()
            obj.to(device)
            return m
        """,
    "local-class-with-its-own-to": """
        import torch


        class Wrapper:
            def __init__(self, model):
                self.model = model

            def to(self, device):
                self.model.to(device)
                return self


        def main(device):
            w = Wrapper(torch.nn.Linear(2, 2))
            w.to(device)
        """,
    "assigned-moves": """
        import torch


        def step(x, device):
            x = x.to(device)
            y = torch.zeros(3).to(device)
            z = y.cpu()
            return x + y, z
        """,
    "moves-used-in-expressions": """
        import torch


        def f(device, out):
            t = torch.zeros(3)
            out.append(t.to(device))
            print(t.cpu())
            return [t.to(device)]
        """,
    "tensor-rebound-from-a-move": """
        import torch


        def f(loader, device):
            for x, y in loader:
                x = x.to(device)
                y = y.to(device)
                yield x, y
        """,
    "a-pyg-batch-moved-in-place": """
        # pyg-team/pytorch_geometric graphgym: Batch.to() moves its tensors in place.
        import torch
        from torch_geometric.graphgym.config import cfg


        def train_epoch(loader, model, device):
            for batch in loader:
                batch.to(device)
                pred, true = model(batch)
        """,
    "a-batch-with-fields-no-tensor-has": """
        # pyg-team/pytorch_geometric examples/contrib/pgm_explainer_graph_classification.py
        import torch


        def explain(test_loader, explainer, device):
            for i, graph in enumerate(test_loader):
                graph.to(device)
                explainer(x=graph.x, edge_index=graph.edge_index)
        """,
    "a-mapping-batch-moved-in-place": """
        # huggingface/accelerate examples: BatchEncoding.to() moves its tensors in place.
        import torch


        def evaluate(model, eval_dataloader, accelerator):
            for step, batch in enumerate(eval_dataloader):
                batch.to(accelerator.device)
                with torch.no_grad():
                    outputs = model(**batch)
                yield outputs.logits, batch["labels"]
        """,
}


@pytest.mark.parametrize("source", NEGATIVES.values(), ids=NEGATIVES.keys())
def test_moves_that_take_effect_are_not_reported(source: str) -> None:
    assert findings(source) == []


def test_a_parameter_attribute_is_not_told_to_take_a_plain_tensor_back() -> None:
    # GLIDE's Text2ImUNet.convert_to_fp16: assigning `self.positional_embedding.to(...)` back
    # would raise TypeError (a Parameter's name takes no plain tensor).
    source = """
    import torch
    import torch.nn as nn


    class Text2Im(nn.Module):
        def __init__(self):
            super().__init__()
            self.positional_embedding = nn.Parameter(torch.empty(4, 8))
            self.register_buffer("table", torch.zeros(3))

        def move(self, device):
            self.positional_embedding.to(device)
            self.table.to(device)
    """
    assert [(f.code, f.start.line, f.message) for f in lint(source, DL202)] == [
        (
            "DL202",
            12,
            "`self.positional_embedding.to(device)` returns a moved copy that is thrown away: tensors are not moved "
            "in place, so `self.positional_embedding` stays where it was; `self.positional_embedding` is an "
            "`nn.Parameter`, which takes no plain tensor back: convert or move the module itself (its `.to()` "
            "changes its parameters in place)",
        ),
        (
            "DL202",
            13,
            "`self.table.to(device)` returns a moved copy that is thrown away: tensors are not moved in place, so "
            "`self.table` stays where it was; assign it: `self.table = self.table.to(device)`",
        ),
    ]


def test_a_discarded_dtype_conversion_moves_nothing() -> None:
    # GLIDE's convert_to_fp16: `Tensor.to(dtype)` keeps the device, so the lost result is a
    # dtype slip, not a tensor left on the wrong device.
    source = """
import torch as th


def convert(x, device):
    y = th.zeros(3)
    y.to(th.float16)
    y.to(x.dtype)
    y.to(dtype=th.half, non_blocking=True)
    y.to(th.float16, device=device)
    return y
"""
    assert findings(source) == [("DL202", 9, 5)]


def test_a_discarded_move_to_where_the_tensor_already_is_loses_nothing() -> None:
    # pytorch_GAN_zoo's inspirational generation and style-based-gan-pytorch's projector: the
    # tensor was made on `model.device` (or from tensors made on `device`), so `.to()` returns
    # it unchanged and nothing is left behind. A move anywhere else is still reported.
    source = """
import numpy as np
import torch


def step(model, inps, device):
    v = torch.tensor(np.array(inps), dtype=torch.float32, device=model.device)
    v.requires_grad = True
    v.to(model.device)
    w = torch.randn(4, device=device) * 2
    w.to(device)
    u = torch.randn(4)
    u.to(device)
    return model.netG(v), w, u
"""
    assert findings(source) == [("DL202", 12, 5)]


def test_a_dtype_parameter_converts_and_keeps_the_device() -> None:
    # lit-llama's `get_weight(self, dtype=torch.float)`: `Tensor.to(dtype)` left unused changes
    # nothing's device. A parameter defaulting to a device string stays a move.
    source = """
    import torch


    def cast(x: torch.Tensor, dtype=torch.float16):
        x.to(dtype)
        return x


    def cast_annotated(x: torch.Tensor, dtype: torch.dtype):
        x.to(dtype)
        return x


    def move(x: torch.Tensor, device="cpu"):
        x.to(device)
        return x
    """
    assert findings(source) == [("DL202", 15, 5)]

