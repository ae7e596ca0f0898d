"""DL301 (mixed-devices): one operation combines a CPU tensor with an accelerator / run-time device tensor."""

from __future__ import annotations

import pytest

from linting import dataflow_findings as findings
from linting import dataflow_messages as messages


# -- positives -------------------------------------------------------------------
MATMUL = """
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
x = torch.randn(4, 3, device=device)
w = torch.randn(3, 2)
y = x @ w
"""


def test_a_binary_operator() -> None:
    assert findings(MATMUL) == [("DL303", 5, 5)]
    assert messages(MATMUL) == [
        "`torch.randn(3, 2)` creates a CPU tensor (no `device=`) that meets `x` on `device` (created by "
        "`torch.randn`, line 4) at line 6: create it with `device=device`"
    ]


def test_one_cpu_tensor_is_reported_once_however_often_it_meets_the_device() -> None:
    source = MATMUL + "z = torch.matmul(x, w)\n"
    assert findings(source) == [("DL303", 5, 5)]


def test_a_moved_tensor_and_a_fresh_factory() -> None:
    source = """
    import torch


    def f(device):
        a = torch.ones(3).to(device)
        b = torch.arange(3)
        return a + b
    """
    assert findings(source) == [("DL303", 6, 9)]


def test_a_torch_function_with_a_tuple_of_tensors() -> None:
    source = """
    import torch


    def f(device):
        a = torch.ones(3, device=device)
        b = torch.arange(3)
        return torch.cat((a, b), dim=0)
    """
    assert findings(source) == [("DL303", 6, 9)]


def test_a_torch_function_with_several_tensor_arguments() -> None:
    source = """
    import torch


    def f(device):
        h = torch.randn(4, device=device)
        w = torch.ones(4)
        return torch.where(h > 0, h, w)
    """
    assert findings(source) == [("DL303", 6, 9)]


def test_a_tensor_method() -> None:
    source = """
    import torch


    def f(device):
        h = torch.randn(4, device=device)
        mask = torch.ones(4)
        return h.mul(mask)
    """
    assert findings(source) == [("DL303", 6, 12)]


def test_an_augmented_assignment_onto_a_cuda_tensor() -> None:
    source = """
    import torch


    def f():
        h = torch.randn(4).to("cuda:0")
        w = torch.ones(4)
        h += w
        return h
    """
    assert findings(source) == [("DL303", 6, 9)]
    assert messages(source) == [
        "`torch.ones(4)` creates a CPU tensor (no `device=`) that meets `h` on `cuda:0` (moved by `.to()`, line 5) "
        "at line 7: create it with `device=h.device`"
    ]


def test_a_cpu_tensor_indexed_with_device_indices() -> None:
    source = """
    import torch


    def f(device):
        table = torch.zeros(10, 3)
        dev_idx = torch.tensor([1, 2], device=device)
        return table[dev_idx]
    """
    assert findings(source) == [("DL303", 5, 13)]


def test_a_list_built_in_a_loop_concatenated_then_indexed_with_a_device_mask() -> None:
    source = """
    import torch


    def f(device, n):
        parts = []
        for i in range(n):
            parts.append(torch.ones(2) * i)
        stacked = torch.cat(parts)
        keep = torch.rand(2 * n, device=device) > 0.5
        return stacked[keep]
    """
    assert findings(source) == [("DL303", 7, 22)]


def test_a_stack_of_a_list_built_in_a_loop_meets_a_device_tensor() -> None:
    source = """
    import torch


    def f(device, n):
        rows = []
        for i in range(n):
            rows.append(torch.full((2,), i))
        stacked = torch.stack(rows)
        w = torch.randn(2, 2, device=device)
        return stacked @ w
    """
    assert findings(source) == [("DL303", 7, 21)]


def test_a_cpu_tensor_through_tuple_unpacking() -> None:
    source = """
    import torch


    def f(device):
        a = torch.ones(3, device=device)
        b = torch.zeros(3)
        a2, b2 = a, b
        return a2 * b2
    """
    assert findings(source) == [("DL303", 6, 9)]


def test_a_dtype_only_conversion_stays_on_the_cpu() -> None:
    source = """
    import torch


    def f(device):
        a = torch.ones(3, device=device)
        b = torch.zeros(3).to(torch.float16)
        c = torch.zeros(3).to(dtype=torch.float16)
        return a + b, a - c
    """
    assert findings(source) == [("DL303", 6, 9), ("DL303", 7, 9)]


def test_a_cpu_input_to_a_module_moved_to_the_device() -> None:
    source = """
    import torch
    import torch.nn as nn


    def f(device):
        model = nn.Linear(3, 3).to(device)
        x = torch.randn(2, 3)
        return model(x)
    """
    assert findings(source) == [("DL303", 7, 9)]
    assert messages(source) == [
        "`torch.randn(2, 3)` creates a CPU tensor (no `device=`) that meets `model` on `device` (moved by `.to()`, "
        "line 6) at line 8: create it with `device=device`"
    ]


# A model that builds its layers on the device it is given.
NET_TAKING_A_DEVICE = """
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, n, device=None):
        super().__init__()
        self.fc = nn.Linear(n, n, device=device)

    def forward(self, x):
        return self.fc(x)
"""


def test_a_local_model_built_without_a_device_and_never_moved() -> None:
    source = NET_TAKING_A_DEVICE + """

def f(x, device):
    model = Net(3)
    return model(x.to(device))
"""
    assert findings(source) == [("DL301", 15, 12)]
    assert messages(source)[0].startswith("`model(x.to(device))` mixes devices: `model` is on the CPU (built by `Net(...)` on the CPU, line 14)")


def test_a_layer_built_on_the_cpu_by_its_device_keyword() -> None:
    source = """
    import torch.nn as nn


    def f(x, device):
        layer = nn.Linear(3, 4, device="cpu")
        return layer(x.to(device))
    """
    assert findings(source) == [("DL301", 6, 12)]
    assert messages(source)[0].startswith("`layer(x.to(device))` mixes devices: `layer` is on the CPU (built by `Linear(...)`, line 5)")


def test_a_test_that_expects_the_mix_to_fail_is_not_reported_but_what_follows_is() -> None:
    source = """
    import pytest
    import torch
    import torch.nn as nn


    def test_mixed(device):
        model = nn.Linear(3, 3).to(device)
        x = torch.randn(2, 3)
        with pytest.raises(RuntimeError, match="same device"):
            model(x)
        return model(x)


    class T:
        def test_mixed(self, device):
            model = nn.Linear(3, 3).to(device)
            with self.assertRaises(RuntimeError):
                model(torch.randn(2, 3))
    """
    assert findings(source) == [("DL303", 8, 9)]


def test_a_helper_called_without_its_device_still_mixes_inside() -> None:
    source = """
    import torch


    def make(n, device=None):
        a = torch.zeros(n, device=device)
        b = torch.ones(n)
        return a + b


    total = make(3)
    """
    assert findings(source) == [("DL303", 6, 9)]


def test_what_the_precision_fixes_must_still_report() -> None:
    # Found in review: each of these was lost by a first version of the fixes.
    source = """
    import copy
    import logging
    import torch
    import torch.nn as nn


    def joined(model, use_gpu):
        device = None
        if use_gpu:
            device = torch.device("cuda")
        w = torch.ones(3)
        z = torch.zeros(3, device=device)
        return w + z


    def star_and_none(x, device):
        layers = [nn.Linear(3, 3), nn.ReLU()]
        model = nn.Sequential(*layers)
        lin = nn.Linear(3, 3, device=None)
        x = x.to(device)
        return model(x), lin(x)


    def a_shape_is_a_tuple(x, device):
        x = x.to(device)
        return x * torch.tensor(x.shape)


    def read_only_calls(x, device):
        model = nn.Linear(3, 3)
        print(model)
        logging.info("%s", model)
        backup = copy.deepcopy(model)
        return model(x.to(device))


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)
            self.mean, self.std = torch.tensor([0.5]), torch.tensor([0.2])

        def forward(self, x):
            return (self.lin(x) - self.mean) / self.std
    """
    assert findings(source) == [
        ("DL303", 11, 9),
        ("DL301", 21, 12),
        ("DL301", 21, 22),
        ("DL303", 26, 16),
        ("DL301", 34, 12),
        ("DL303", 41, 31),
    ]


def test_what_the_second_round_of_fixes_must_still_report() -> None:
    # Found in a second review: each of these was lost by a first version of the fixes.
    source = """
    import torch
    import torch.nn as nn
    from somelib import BaseTrainer
    from weights import init_weights


    class Trainer(BaseTrainer):
        def __init__(self):
            self.model = nn.Linear(4, 4)
            self.scale = torch.ones(4)

        def step(self, x, device):
            return self.model(x.to(device))


    class Masked(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x, mask=None):
            return self.fc(x) * mask


    def run(device):
        model = Masked().to(device)
        init_weights(model)
        x = torch.randn(2, 4).to(device)
        mask = torch.ones(2, 4)
        return model(x, mask)


    class Boxes(nn.Module):
        def forward(self, x, boxes):
            return torch.tensor(x.shape[1:]) + boxes
    """
    assert findings(source) == [("DL301", 13, 16), ("DL303", 29, 12), ("DL303", 35, 16)]


def test_what_the_third_round_of_fixes_must_still_report() -> None:
    # Found in a third review: each of these was lost by a second version of the fixes.
    source = """
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x, device=None):
            if device is None:
                device = torch.device("cpu")
            pos = torch.arange(4, device=device)
            return self.fc(x) + pos


    def sizes(x, device):
        x = x.to(device)
        return x * torch.tensor(x.size()[1:]), x * torch.tensor(x.size())


    def like_with_no_device(device):
        a = torch.zeros(3)
        return torch.ones_like(a, device=None) + torch.ones(3, device=device)
    """
    assert findings(source) == [("DL301", 14, 16), ("DL303", 19, 16), ("DL303", 19, 48), ("DL303", 23, 9)]


def test_a_loss_built_with_cpu_class_weights() -> None:
    # pytorch/pytorch#122757: the weights stay on the CPU inside the never-moved loss.
    source = """
    import torch
    import torch.nn as nn

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 5)).to(device)
    class_counts = torch.tensor([500.0, 120.0, 60.0, 300.0, 20.0])
    weights = class_counts.sum() / (len(class_counts) * class_counts)
    loss_fn = torch.nn.CrossEntropyLoss(weight=weights)


    def train_epoch(loader):
        for features, labels in loader:
            features, labels = features.to(device), labels.to(device)
            loss = loss_fn(input=model(features), target=labels)
    """
    assert findings(source) == [("DL301", 14, 16)]
    assert "`loss_fn` is on the CPU (built with the tensor `weights`, line 8)" in messages(source)[0]


def test_a_module_without_state_runs_on_the_cpu_whatever_its_owner_is_moved_to() -> None:
    # An unweighted loss holds no tensor: `.to(device)` and registration leave it
    # nowhere, so a loss taken on the CPU for a report is correct (PyG glem).
    source = """
    import torch
    from torch import nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)
            self.crit = nn.CrossEntropyLoss(reduction="mean")
            self.act = nn.ReLU()

        def evaluate(self, x, y):
            out = self.fc(x)
            return self.crit(out.cpu(), y.cpu()) + self.act(y.cpu()).sum()


    def metrics(model, loader, device):
        crit = nn.CrossEntropyLoss().to(device)
        for xb, yb in loader:
            pred = model(xb.to(device))
            print(crit(pred.cpu(), yb).item())
    """
    assert findings(source) == []


def test_a_module_without_state_still_joins_what_it_is_given() -> None:
    source = """
    import torch
    from torch import nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)
            self.crit = nn.CrossEntropyLoss()

        def evaluate(self, x, y):
            return self.crit(self.fc(x), y.cpu())
    """
    assert findings(source) == [("DL301", 12, 16)]
    assert messages(source) == [
        "`self.crit(self.fc(x), y.cpu())` mixes devices: `y.cpu()` is on the CPU (moved to the CPU by `.cpu()`, line 12), "
        "but `self.fc(x)` is on the module's device; put both on one device (`.to(device)`, or create it with `device=device`)"
    ]


def test_a_weighted_loss_keeps_its_weights_on_the_module() -> None:
    source = """
    import torch
    from torch import nn


    class Net(nn.Module):
        def __init__(self, weights):
            super().__init__()
            self.fc = nn.Linear(3, 3)
            self.crit = nn.CrossEntropyLoss(weight=torch.tensor(weights))

        def evaluate(self, x, y):
            out = self.fc(x)
            return self.crit(out.cpu(), y.cpu())
    """
    assert findings(source) == [("DL301", 13, 16)]


def test_a_tensor_of_one_number_built_from_a_number_parameter() -> None:
    # timm-style drop path: `torch.tensor(1 - drop_prob)` is 0-dim; the full `torch.rand` is not.
    source = """
    import torch
    import torch.nn as nn


    def drop_path(x, drop_prob=0.1):
        keep_prob = torch.tensor(1 - drop_prob)
        random_tensor = keep_prob + torch.rand(x.shape)
        return x.divide(keep_prob) * random_tensor


    class DropPath(nn.Module):
        def __init__(self, p):
            super().__init__()
            self.p = p
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            return drop_path(self.fc(x), self.p)
    """
    assert messages(source) == [
        "`torch.rand(x.shape)` creates a CPU tensor (no `device=`) that meets `x.divide(keep_prob)` on the module's "
        "device at line 8: create it with `device=x.device`"
    ]


def test_a_module_whose_constructor_moves_its_state_is_not_on_the_cpu() -> None:
    # pSp's, e4e's and restyle-encoder's MocoLoss and IDLoss call `self.model.cuda()` in
    # `__init__`: an instance is where that put it. One that leaves its layer alone is built on
    # the CPU, and meets the device's tensors there.
    source = """
    import torch
    from torch import nn


    class MocoLoss(nn.Module):
        def __init__(self):
            super().__init__()
            self.model = nn.Linear(3, 3)
            self.model.cuda()

        def forward(self, x):
            return self.model(x)


    class Plain(nn.Module):
        def __init__(self):
            super().__init__()
            self.model = nn.Linear(3, 3)

        def forward(self, x):
            return self.model(x)


    def train(device):
        x = torch.randn(2, 3, device=device)
        return MocoLoss()(x), Plain()(x)
    """
    assert findings(source) == [("DL301", 26, 27)]


def test_a_chain_of_module_moves_moves_the_module() -> None:
    # BackgroundMattingV2's export_onnx.py: `model.eval().to(precision).to(args.device)` moves
    # `model` in place (`nn.Module.to` returns the module itself, as each of its overloads is
    # annotated), also when the chain ends in a dtype (LLMs-from-scratch's
    # `model.to(device).to(torch.bfloat16)`); the same chain on a tensor returns a copy, which is
    # thrown away.
    source = """
    import torch
    from torch import nn


    def run(device, precision):
        model = nn.Linear(3, 3)
        model.eval().to(precision).to(device)
        src = torch.randn(2, 3).to(precision).to(device)
        return model(src)


    def run_tensor(device, precision):
        model = nn.Linear(3, 3).to(device)
        src = torch.randn(2, 3)
        src.to(precision).to(device)
        return model(src)


    def run_half(device):
        model = nn.Linear(3, 3)
        model.to(device).to(torch.bfloat16)
        return model(torch.randn(2, 3, device=device, dtype=torch.bfloat16))
    """
    assert findings(source) == [("DL303", 14, 11), ("DL202", 15, 5)]


def test_a_module_that_keeps_only_its_inputs_sizes_owns_no_state() -> None:
    # TSM's SegmentConsensus records `self.shape = input_tensor.size()` in forward and is built
    # and called inside its owner's forward: sizes are the same on every device. One that keeps
    # a tensor computed from its input is no stateless module either.
    source = """
    import torch


    class SegmentConsensus(torch.nn.Module):
        def __init__(self, consensus_type, dim=1):
            super().__init__()
            self.consensus_type = consensus_type
            self.dim = dim
            self.shape = None

        def forward(self, input_tensor):
            self.shape = input_tensor.size()
            return input_tensor.mean(dim=self.dim, keepdim=True)


    class Running(torch.nn.Module):
        def __init__(self, dim=1):
            super().__init__()
            self.dim = dim
            self.last = None

        def forward(self, input_tensor):
            self.last = input_tensor.mean(dim=self.dim)
            return input_tensor - self.last


    class ConsensusModule(torch.nn.Module):
        def __init__(self, consensus_type, dim=1):
            super().__init__()
            self.consensus_type = consensus_type
            self.dim = dim

        def forward(self, input):
            return SegmentConsensus(self.consensus_type, self.dim)(input) + Running(self.dim)(input)
    """
    assert findings(source) == [("DL301", 34, 73)]


def test_modules_of_this_file_with_state_or_wrapping_a_cpu_model_are_still_on_the_cpu() -> None:
    source = """
    import torch
    import torch.nn as nn


    class Head(nn.Module):
        def __init__(self, body):
            super().__init__()
            self.body = body
            self.fc = nn.Linear(4, 2)

        def forward(self, x):
            return self.fc(self.body(x))


    def run(device):
        x = torch.randn(3, 4, device=device)
        layers = [nn.Linear(4, 4), nn.ReLU()]
        return Head(nn.Linear(4, 4))(x), nn.Sequential(*layers)(x)
    """
    assert findings(source) == [("DL301", 18, 12), ("DL301", 18, 38)]


def test_a_global_model_moved_in_one_function_used_in_another() -> None:
    source = """
    import torch
    import torch.nn as nn

    model = nn.Linear(4, 4)


    def train(device):
        model.to(device)


    def test():
        x = torch.randn(2, 4)
        return model(x)
    """
    assert findings(source) == [("DL303", 12, 9)]


def test_a_device_tensor_returned_by_a_local_function() -> None:
    source = """
    import torch


    def make(device):
        return torch.zeros(3, device=device)


    def use(device):
        a = make(device)
        b = torch.ones(3)
        return a + b
    """
    assert findings(source) == [("DL303", 10, 9)]


def test_self_attributes_set_in_init() -> None:
    source = """
    import torch
    import torch.nn as nn


    class Runner:
        def __init__(self, device):
            self.device = device
            self.model = nn.Linear(4, 4).to(device)
            self.offset = torch.zeros(4)

        def step(self, x):
            x = x.to(self.device)
            return self.model(x) + self.offset
    """
    assert findings(source) == [("DL303", 9, 23)]


def test_a_dataset_tensor_indexed_with_a_device_index() -> None:
    # hugoycj/NeuralBaker#1: dataset.all_images stays on the CPU.
    source = """
    import torch
    import torch.nn as nn


    class ImageDataset:
        def __init__(self, images):
            self.all_images = torch.stack(images, dim=0)
            self.n_images = len(images)


    class Baker(nn.Module):
        def __init__(self, dataset, device):
            super().__init__()
            self.dataset = dataset
            self.device = device

        def validation_step(self):
            index = torch.randint(0, self.dataset.n_images, size=(1,), device=self.device)
            return self.dataset.all_images[index]
    """
    assert findings(source) == [("DL301", 19, 16)]


def test_factories_after_a_with_torch_device_block_are_on_the_cpu_again() -> None:
    source = """
    import torch

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    with torch.device(device):
        a = torch.ones(3)
    b = torch.zeros(3)
    c = a + b
    """
    assert findings(source) == [("DL303", 6, 5)]


# -- known misses and false alarms (the analysis is being fixed) --------------------
def test_torch_cat_of_a_list_literal() -> None:
    source = """
    import torch


    def f(device):
        a = torch.ones(3, device=device)
        b = torch.arange(3)
        return torch.cat([a, b])
    """
    assert findings(source) == [("DL303", 6, 9)]


def test_torch_stack_of_a_list_built_in_a_loop_with_both_devices() -> None:
    source = """
    import torch


    def f(model, xs, device):
        model.to(device)
        outputs = [torch.zeros(4)]
        for x in xs:
            outputs.append(model(x.to(device)))
        return torch.stack(outputs)
    """
    assert findings(source) == [("DL303", 6, 16)]


def test_torch_stack_of_a_starred_cpu_list_and_a_device_tensor() -> None:
    source = """
    import torch


    def f(device, n):
        parts = []
        for i in range(n):
            parts.append(torch.ones(2) * i)
        feats = torch.rand(2, device=device)
        return torch.stack([*parts, feats])
    """
    assert findings(source) == [("DL303", 7, 22)]


def test_pack_padded_sequence_with_cpu_lengths() -> None:
    source = """
    import torch
    import torch.nn as nn
    from torch.nn.utils.rnn import pack_padded_sequence


    class Tagger(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(100, 8)
            self.rnn = nn.LSTM(8, 8, batch_first=True)

        def forward(self, tokens, lengths):
            packed = pack_padded_sequence(self.emb(tokens), lengths.cpu(), batch_first=True, enforce_sorted=False)
            out, _ = self.rnn(packed)
            return out
    """
    assert findings(source) == []


def test_a_cpu_accumulator_updated_with_device_tensors_in_a_loop() -> None:
    source = """
    import torch


    def class_totals(model, loader, device):
        model.to(device)
        totals = torch.zeros(10)
        for x, y in loader:
            x = x.to(device)
            totals += model(x).sum(0)
        return totals
    """
    assert findings(source) == [("DL303", 6, 14)]


# -- negatives ---------------------------------------------------------------------
NEGATIVES = {
    "a-sequential-of-layers-from-elsewhere": """
        # kornia: augmentations handed in by pytest; where they are is not known here.
        import torch


        def check(augmentations, device):
            seq = torch.nn.Sequential(*augmentations)
            x = torch.randn(2, 3, 5, 6, device=device)
            return seq(x) + torch.nn.Sequential(torch.nn.ReLU(), torch.nn.Dropout())(x)
        """,
    "modules-of-this-file-without-state": """
        # kornia's DummyNNModule, ultralytics' BCEDiceLoss: nothing to move, so no device.
        import torch
        import torch.nn as nn
        import torch.nn.functional as F


        class Warp(nn.Module):
            def __init__(self, h: int, w: int):
                super().__init__()
                self.h = h
                self.w = w

            def forward(self, x, theta):
                grid = F.affine_grid(theta, [x.shape[0], x.shape[1], self.h, self.w], align_corners=False)
                return F.grid_sample(x, grid, align_corners=False)


        class BCEDiceLoss(nn.Module):
            def __init__(self, weight_bce=0.5):
                super().__init__()
                self.weight_bce = weight_bce
                self.bce = nn.BCEWithLogitsLoss()

            def forward(self, pred, target):
                return self.weight_bce * self.bce(pred, target)


        def test_warp(device):
            theta = torch.eye(2, 3, device=device)[None]
            img = torch.arange(36.0, device=device).view(1, 3, 3, 4)
            pred = Warp(3, 4)(img, theta)
            return BCEDiceLoss()(pred, torch.zeros(1, 3, 3, 4, device=device))
        """,
    "a-wrapper-around-a-moved-model": """
        # ultralytics exporter: NMSModel holds nothing but the model it is given.
        import torch
        import torch.nn as nn


        class NMSModel(nn.Module):
            def __init__(self, model, args):
                super().__init__()
                self.model = model
                self.args = args

            def forward(self, x):
                return self.model(x).max(dim=-1)


        def export(model, args, device):
            model = model.to(device)
            im = torch.zeros(1, 3, 8, 8).to(device)
            return NMSModel(model, args)(im) if args.nms else model(im)
        """,
    "a-class-that-places-what-it-holds": """
        # diffusers' consistency distillation: DDIMSolver has its own `to()`.
        import numpy as np
        import torch
        import torch.nn as nn


        class DDIMSolver:
            def __init__(self, n=50):
                self.ddim_timesteps = torch.from_numpy(np.arange(n)).long()

            def to(self, device):
                self.ddim_timesteps = self.ddim_timesteps.to(device)
                return self


        def main(loader, n=50):
            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            solver = DDIMSolver(n).to(device)
            vae = nn.Linear(8, 4).to(device)
            for x in loader:
                latents = vae(x.to(device))
                index = torch.randint(0, n, (latents.shape[0],), device=latents.device)
                print(solver.ddim_timesteps[index])
        """,
    "python-and-0-dim-scalars": """
        import torch


        def f(device):
            a = torch.ones(3, device=device)
            scale = torch.tensor(0.5)
            return a * scale, a + 1.0, a * torch.tensor(2.0), a / len(a)
        """,
    "device-tensor-indexed-with-cpu-indices": """
        import torch


        def f(device, n):
            a = torch.ones(n, 3, device=device)
            idx = torch.tensor([0, 2])
            perm = torch.randperm(n)
            mask = torch.tensor([True, False] * (n // 2))
            return a[idx], a[perm], a[mask], a[torch.arange(2)]
        """,
    "like-new-to-tensor-type-as": """
        import torch


        def f(device):
            e = torch.ones(3, device=device)
            a = torch.zeros_like(e)
            b = e.new_zeros(3)
            c = torch.empty(3).to(e)
            d = torch.empty(3).to(e.device)
            g = torch.empty(3).type_as(e)
            h = torch.full_like(e, 2.0)
            return e + a + b + c + d + g + h
        """,
    "with-torch-device-block": """
        import torch

        device = "cuda" if torch.cuda.is_available() else "cpu"
        with torch.device(device):
            a = torch.ones(3)
            b = torch.zeros(3)
        c = torch.ones(3, device=device)
        d = a + b + c
        """,
    "set-default-device": """
        import torch

        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        torch.set_default_device(device)
        a = torch.ones(3)
        b = torch.randn(3, device=device)
        c = a + b
        """,
    # ssd.pytorch's demo and test.py: where CUDA is, the default tensor type puts the modules
    # built after it and the legacy `torch.Tensor(...)` on CUDA, beside the batch moved there.
    "cuda-default-tensor-type-builds-the-model": """
        import torch
        import torch.nn as nn

        if torch.cuda.is_available():
            torch.set_default_tensor_type("torch.cuda.FloatTensor")

        net = nn.Conv2d(3, 4, 3)
        x = torch.from_numpy(img).unsqueeze(0)
        if torch.cuda.is_available():
            x = x.cuda()
        y = net(x)
        scale = torch.Tensor([8.0, 8.0, 8.0, 8.0])
        out = y[0, 0, 0, :4] * scale
        """,
    "cuda-default-tensor-type-in-one-branch-cpu-in-the-other": """
        import torch

        if args.cuda and torch.cuda.is_available():
            torch.set_default_tensor_type(torch.cuda.FloatTensor)
        else:
            torch.set_default_tensor_type(torch.FloatTensor)

        def test_net(net, cuda, img):
            x = torch.from_numpy(img).permute(2, 0, 1).unsqueeze(0)
            if cuda:
                x = x.cuda()
            detections = net(x).data
            scale = torch.Tensor([img.shape[1], img.shape[0], img.shape[1], img.shape[0]])
            return (detections[0, 0, 0, :4] * scale).cpu().numpy()

        def main():
            net = torch.nn.Conv2d(3, 4, 3)
            if args.cuda:
                net = net.cuda()
            test_net(net, args.cuda, img)
        """,
    # apex's amp tests (vendored by jukebox): `setUp` sets the CUDA default type; a test resets
    # it around `pack_padded_sequence` and sets it again, in a loop, after building the RNN.
    "cuda-default-tensor-type-set-again-in-a-function": """
        import torch
        import torch.nn as nn

        def test_rnn_packed_sequence(self):
            rnn = nn.RNN(input_size=4, hidden_size=4, num_layers=2)
            for typ in [torch.float, torch.half]:
                x = torch.randn((3, 2, 4), dtype=typ)
                torch.set_default_tensor_type(torch.FloatTensor)
                packed = nn.utils.rnn.pack_padded_sequence(x, torch.tensor([3, 2]))
                torch.set_default_tensor_type(torch.cuda.FloatTensor)
                hidden = torch.zeros((2, 2, 4), dtype=typ)
                output, _ = rnn(x, hidden)
        """,
    "pure-cpu-code": """
        import torch

        a = torch.ones(3)
        b = torch.zeros(3)
        w = torch.randn(3, 3)
        c = (a + b) @ w
        model = torch.nn.Linear(3, 3)
        out = model(c)
        """,
    "explicit-cpu-device": """
        import torch

        device = torch.device("cpu")
        X = torch.randn(256, 4, device=device)
        true_w = torch.tensor([[1.5], [-2.0], [0.5], [3.0]], device=device)
        y = X @ true_w + 0.1 * torch.randn(256, 1)
        model = torch.nn.Linear(4, 1).to(device)
        loss = torch.nn.functional.mse_loss(model(X), y)
        """,
    "compared-after-cpu": """
        import torch


        def compare(device):
            a_dev = torch.randn(3, device=device)
            b_cpu = torch.randn(3)
            return torch.allclose(a_dev.cpu(), b_cpu), (a_dev.cpu() - b_cpu).abs().max().item()
        """,
    "class-weights-moved-before-the-loss": """
        import torch
        import torch.nn as nn


        def weighted(device, class_counts):
            weights = torch.tensor(class_counts, dtype=torch.float).to(device)
            criterion = nn.CrossEntropyLoss(weight=weights)
            logits = torch.randn(4, 3, device=device)
            target = torch.randint(0, 3, (4,), device=device)
            return criterion(logits, target)
        """,
    "loss-module-moved-in-place": """
        import torch
        import torch.nn as nn


        def train(model, loader, device, class_counts):
            weights = torch.tensor(class_counts, dtype=torch.float)
            criterion = nn.CrossEntropyLoss(weight=weights)
            criterion.to(device)
            model.to(device)
            for x, y in loader:
                x, y = x.to(device), y.to(device)
                loss = criterion(model(x), y)
        """,
    "metrics-collected-on-the-cpu": """
        import torch


        def predict(model, loader, device):
            model.to(device)
            preds, targets = [], []
            for x, y in loader:
                logits = model(x.to(device))
                preds.append(logits.argmax(1).cpu())
                targets.append(y)
            return (torch.cat(preds) == torch.cat(targets)).float().mean().item()
        """,
    "device-from-targets": """
        import torch


        def build_targets_tail(indices, targets, matching_matrix, nl):
            device = targets.device
            all_b, from_which_layer = [], []
            for i in range(nl):
                b, a = indices[i]
                all_b.append(b)
                from_which_layer.append(torch.ones(size=(len(b),), device=device) * i)
            all_b = torch.cat(all_b, dim=0)
            from_which_layer = torch.cat(from_which_layer, dim=0)
            fg_mask = matching_matrix.sum(0) > 0.0
            return all_b[fg_mask], from_which_layer[fg_mask]
        """,
    "word-lm-batchify": """
        import torch


        def batchify(data, bsz, device):
            nbatch = data.size(0) // bsz
            data = data.narrow(0, 0, nbatch * bsz)
            return data.view(bsz, -1).t().contiguous().to(device)


        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        train_data = batchify(torch.randint(0, 1000, (10000,)), 20, device)
        for i in range(0, train_data.size(0) - 1, 35):
            data, targets = train_data[i:i + 35], train_data[i + 1:i + 36]
            loss = (data - targets).float().mean()
        """,
    "device-shape-and-dtype-arguments": """
        import torch


        def f(device):
            a = torch.ones(3, 4, device=device)
            b = torch.zeros(a.shape, dtype=a.dtype, device=a.device)
            c = torch.zeros(a.size(0), 4).to(device)
            return a + b + c
        """,
    "mixup-with-a-cpu-permutation": """
        import numpy as np
        import torch
        import torch.nn.functional as F


        def mixup(model, loader, device):
            model.to(device)
            for x, y in loader:
                x = x.view(x.size(0), -1).to(device)
                y = y.to(device)
                lam = np.random.beta(1.0, 1.0)
                index = torch.randperm(x.size(0))
                mixed = lam * x + (1 - lam) * x[index]
                out = model(mixed)
                loss = lam * F.cross_entropy(out, y) + (1 - lam) * F.cross_entropy(out, y[index])
                reg = sum(p.pow(2).sum() for p in model.parameters())
                loss = loss + 0.01 * reg
        """,
    "gan-step": """
        import torch
        import torch.nn.functional as F


        def train_gan(netD, netG, loader, device, nz=100):
            netD.to(device)
            netG.to(device)
            for i, data in enumerate(loader, 0):
                real = data[0].to(device)
                b = real.size(0)
                label = torch.full((b,), 1.0, dtype=torch.float, device=device)
                fake = netG(torch.randn(b, nz, 1, 1, device=device))
                err = F.binary_cross_entropy(netD(real).view(-1), label)
                alpha = torch.rand(b, 1, 1, 1, device=device)
                interp = alpha * real + (1 - alpha) * fake
        """,
    "cpu-scalar-best-and-running-total": """
        import torch
        import torch.nn.functional as F


        def train(model, loader, device):
            model.to(device)
            best = torch.tensor(float("inf"))
            total = 0
            for x, y in loader:
                x, y = x.to(device), y.to(device)
                loss = F.mse_loss(model(x), y)
                total += loss.detach()
                if loss < best:
                    best = loss.detach()
            return total / len(loader), best
        """,
    "tensors-made-from-sizes-are-0-dim": """
        # huggingface/peft oft/layer.py: eps / torch.sqrt(torch.tensor(oft_R.shape[0])).
        import torch


        def f(x, device, eps=1e-5):
            x = x.to(device)
            a = torch.tensor(x.shape[0])
            b = torch.tensor(x.size(0))
            scale = eps * 1 / torch.sqrt(torch.tensor(x.shape[-1] ** 0.5))
            return x * a, x * b, x <= scale
        """,
    "a-helper-only-ever-called-without-its-device": """
        # pytorch/ignite tests/ignite/metrics/test_loss.py
        import torch
        from torch.nn.functional import nll_loss


        def y_test_1(requires_grad=False, device=None):
            return (
                torch.tensor([[0.1, 0.4, 0.5], [0.1, 0.7, 0.2]], device=device, requires_grad=requires_grad).log(),
                torch.tensor([2, 2], device=device).long(),
                1.1512925625,
            )


        def test_kwargs_loss():
            y_pred, y, _ = y_test_1()
            kwargs = {"weight": torch.tensor([0.1, 0.1, 0.1])}
            return nll_loss(y_pred, y, **kwargs)
        """,
    "a-model-whose-base-class-is-defined-elsewhere": """
        # fairseq wav2vec2.py: BaseFairseqModel is an nn.Module from another file.
        import torch
        import torch.nn as nn
        from fairseq.models import BaseFairseqModel


        class Wav2Vec2Model(BaseFairseqModel):
            def __init__(self, dim):
                super().__init__()
                self.project_q = nn.Linear(dim, dim)

            def forward(self, source, mask_indices):
                x = self.feature_extractor(source)
                mask_indices = torch.from_numpy(mask_indices).to(x.device)
                y = self.project_q(x)
                return y[mask_indices]
        """,
    "a-forward-called-with-cpu-inputs-and-an-optional-mask": """
        # torchtune compare_fused_attention.py: CPU inputs, a mask made from them, a model seen by a helper.
        import torch
        import torch.nn as nn
        from tests.test_utils import fixed_init_model


        class Attention(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.output_proj = nn.Linear(dim, dim)

            def forward(self, x, mask=None):
                q = self.pos_embeddings(x)
                out = nn.functional.scaled_dot_product_attention(q, q, q, attn_mask=mask)
                return self.output_proj(out)


        def _get_mask(inpt):
            mask = torch.full((1, 1, 4, 4), float("-inf"), device=inpt.device)
            return torch.triu(mask, diagonal=1).type_as(inpt)


        def compare(inputs):
            attn = Attention(8)
            fixed_init_model(attn)
            mask = _get_mask(inputs)
            return attn(inputs, mask)


        compare(torch.randn(1, 4, 8))
        """,
    "layers-built-under-with-torch-device": """
        # torchtune test_activation_offloading.py
        import torch
        import torch.nn as nn


        def test_offloading():
            with torch.device("cuda"):
                model = nn.Sequential(nn.Linear(10, 10), nn.ReLU())
            inp = torch.randn((2, 10), device="cuda")
            return model(inp)
        """,
    "a-shape-as-a-tensor-is-on-the-cpu": """
        # fairseq sinusoidal_positional_embedding.py, its ONNX path.
        import torch
        import torch.nn as nn


        class Embedding(nn.Module):
            def forward(self, input):
                bspair = torch.onnx.operators.shape_as_tensor(input)
                bsz, seq_len = bspair[0], bspair[1]
                return torch.cat((bsz.view(1), seq_len.view(1), torch.tensor([-1], dtype=torch.long)))
        """,
    "an-imported-helper-given-the-model-and-a-batch": """
        # It may move the batch itself (torchinfo.summary does).
        import torch
        import torch.nn as nn
        from engine import evaluate
        from torchinfo import summary


        def main(train_loader):
            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            model = nn.Linear(3, 3).to(device)
            images, labels = next(iter(train_loader))
            summary(model, input_data=images)
            return evaluate(model, images)
        """,
    "a-model-built-on-the-meta-device-then-loaded": """
        # torchtune / torchtitan: shapes on "meta", weights assigned by load_state_dict.
        import torch
        import torch.nn as nn


        def load(sd):
            with torch.device("meta"):
                model = nn.Linear(4, 4)
            model.load_state_dict(sd, assign=True)
            return model(torch.randn(2, 4))
        """,
    "a-parameter-of-a-model-whose-base-is-defined-elsewhere": """
        # fairseq examples/data2vec/models/mae.py: BaseFairseqModel, a conditional Parameter.
        import torch
        import torch.nn as nn
        from fairseq.models import BaseFairseqModel


        class MaeModel(BaseFairseqModel):
            def __init__(self, dim, learn):
                super().__init__()
                self.decoder_embed = nn.Linear(dim, dim)
                self.mask_token = nn.Parameter(torch.zeros(1, 1, dim)) if learn else None

            def forward(self, x, ids_restore):
                x = self.decoder_embed(x)
                mask_tokens = self.mask_token.repeat(x.shape[0], 1, 1)
                x_ = torch.cat([x, mask_tokens], dim=1)
                index = torch.rand(x.shape[0], 4, device=x.device).argsort(dim=1)
                return torch.gather(x_, dim=1, index=index.unsqueeze(-1).repeat(1, 1, x.shape[2]))
        """,
    "submodule-from-a-helper-unpacked-in-init": """
        import torch.nn as nn


        def make_stem(chs):
            stem = nn.Sequential()
            stem.add_module("conv", nn.Conv2d(3, chs, 3))
            return stem, [chs]


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.stem, self.info = make_stem(8)

            def forward(self, x):
                return self.stem(x)
        """,
    "layers-and-tensors-built-with-the-factory-keywords": """
        import torch
        import torch.nn as nn


        def f(x, device, n):
            dd = dict(device=device, dtype=torch.float32)
            first = nn.Linear(n, n, device=device)
            second = nn.Linear(n, n, **dd)
            eye = torch.eye(n, **dd)
            ones = torch.zeros_like(x, **dd)
            x = x.to(device)
            return second(first(x)) @ eye + ones
        """,
    "local-model-given-its-device": NET_TAKING_A_DEVICE
    + """

def f(x, device, cfg):
    a = Net(3, device)
    b = Net(3, device=device)
    c = Net(**cfg)
    x = x.to(device)
    return a(x) + b(x) + c(x)
""",
    "model-handed-to-an-imported-hook-that-places-it": """
        import torch
        import torch.nn as nn
        from accelerate.hooks import CpuOffload, add_hook_to_module


        def f(device):
            model = nn.Linear(3, 3)
            add_hook_to_module(model, CpuOffload(execution_device=device))
            x = torch.randn(2, 3).to(device)
            return model(x)
        """,
}


@pytest.mark.parametrize("source", NEGATIVES.values(), ids=NEGATIVES.keys())
def test_single_device_operations_are_not_reported(source: str) -> None:
    assert findings(source) == []


def test_lengths_computed_on_the_device_for_pack_padded_sequence() -> None:
    # ParlAI's RNNEncoder (`x_lens` from the CUDA token ids) and sentence-transformers' LSTM
    # (`torch.clamp(features["sentence_lengths"])`): PyTorch >= 1.7 wants CPU lengths.
    source = """
    import torch
    import torch.nn as nn
    from torch.nn.utils.rnn import pack_padded_sequence


    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(10, 4)

        def forward(self, xs, lengths):
            x_lens = (xs != 0).int().sum(dim=1)
            packed = pack_padded_sequence(self.emb(xs), x_lens, batch_first=True)
            given = pack_padded_sequence(self.emb(xs), lengths, batch_first=True)
            moved = pack_padded_sequence(self.emb(xs), x_lens.cpu(), batch_first=True)
            return packed, given, moved


    def encode(batch, device):
        lengths = torch.clamp(batch["lengths"].to(device), min=1)
        return nn.utils.rnn.pack_padded_sequence(batch["tokens"].to(device), lengths=lengths)
    """
    assert findings(source) == [("DL301", 13, 18), ("DL301", 21, 12)]
    assert messages(source) == [
        "`pack_padded_sequence()` requires `lengths` on the CPU, but `x_lens` is on the device of the module's inputs; "
        "pass `x_lens.cpu()`",
        "`pack_padded_sequence()` requires `lengths` on the CPU, but `lengths` is on `device` (moved by `.to()`, line 20); "
        "pass `lengths.cpu()`",
    ]


def test_a_module_whose_only_tensor_is_a_plain_attribute_has_no_device_of_its_own() -> None:
    # GroundingDINO's PostProcessCocoGrounding keeps `self.positive_map = new_pos_map` (made by
    # torch.zeros) and moves it to the inputs' device in forward: calling the CPU-built module
    # with device outputs mixes nothing.
    source = """
    import torch
    import torch.nn as nn

    class PostProcess(nn.Module):
        def __init__(self, num_select=300):
            super().__init__()
            self.num_select = num_select
            new_pos_map = torch.zeros((91, 256))
            self.positive_map = new_pos_map

        def forward(self, logits):
            return logits.sigmoid() @ self.positive_map.to(logits.device).T

    def evaluate(device):
        post = PostProcess()
        outputs = torch.rand(2, 256, device=device)
        return post(outputs)
    """
    assert findings(source) == []


def test_a_class_whose_ancestry_is_not_known_may_be_a_module() -> None:
    # transformers' AlbertModel(AlbertPreTrainedModel(PreTrainedModel)) where the run cannot
    # resolve PreTrainedModel: its submodules may move with it, so forward's tensors made on
    # the inputs' device do not meet "CPU" layers.
    source = """
    import torch
    import torch.nn as nn
    from ...modeling_utils import PreTrainedModel


    class Embeddings(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.word = nn.Embedding(10, 4)

        def forward(self, input_ids=None, token_type_ids=None):
            return self.word(input_ids) + token_type_ids


    class AlbertPreTrainedModel(PreTrainedModel):
        base_model_prefix = "albert"

        def _init_weights(self, module):
            module.weight.data.normal_(mean=0.0, std=0.02)


    class AlbertModel(AlbertPreTrainedModel):
        def __init__(self, config):
            super().__init__(config)
            self.embeddings = Embeddings(config)

        def forward(self, input_ids=None, token_type_ids=None):
            device = input_ids.device
            if token_type_ids is None:
                token_type_ids = torch.zeros(input_ids.size(), dtype=torch.long, device=device)
            return self.embeddings(input_ids, token_type_ids=token_type_ids)
    """
    assert findings(source) == []


def test_a_module_moved_through_eval_is_moved() -> None:
    # stable-dreamfusion's depth estimator: `self.model.eval().to(device)`; eval() returns the module.
    source = """
    import torch
    import torch.nn as nn

    class Estimator:
        def __init__(self, device):
            self.device = device
            self.model = nn.Linear(4, 4)
            self.model.eval().to(device)

        def __call__(self, image):
            return self.model(image.to(self.device))
    """
    assert findings(source) == []


def test_a_module_moved_through_any_method_returning_it_is_moved() -> None:
    # stylegan2-ada-pytorch's metrics/perceptual_path_length.py: `sampler.eval().requires_grad_(False).to(opts.device)`.
    # torch annotates every such nn.Module method `-> Self` (the generated MODULE_METHODS_RETURNING_SELF).
    source = """
    import torch

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = torch.nn.Linear(4, 4)
    model.eval().requires_grad_(False).to(device)
    other = torch.nn.Linear(4, 4)
    other.half().to(device)
    x = torch.randn(2, 4).to(device)
    y = model(x) + other(x)
    """
    assert findings(source) == []


def test_a_tensor_method_of_the_same_name_returns_another_tensor() -> None:
    # `half()` of a module returns the module; of a tensor, a new tensor: `w` is not moved.
    source = """
    import torch

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    w = torch.randn(4)
    w.half().to(device)
    x = torch.randn(2, 4).to(device)
    z = w + x
    """
    assert findings(source) == [("DL303", 4, 5), ("DL202", 5, 1)]


WRAPPER = """
import torch


class Wrapper(torch.nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        return self.inner(x)


def run(model, batch):
    wrapped = Wrapper({model})
    batch = batch.cuda()
    return wrapped(batch)
"""


def test_a_module_wrapping_a_model_it_is_given_is_where_that_model_is() -> None:
    # dinov2's eval/linear.py: `ModelWithIntermediateLayers(model, ...)` keeps and calls a backbone
    # the caller moved with `model.cuda()`; building the wrapper moved nothing to the CPU.
    assert findings(WRAPPER.format(model="model")) == []


def test_a_module_wrapping_a_model_built_on_the_cpu_is_on_the_cpu() -> None:
    assert findings(WRAPPER.format(model="torch.nn.Linear(4, 4)")) == [("DL301", 16, 12)]


# stylegan2-pytorch's ppl.py/projector.py: LPIPS places its own network by the flag it is given.
FLAG_FROM_THE_DEVICE = """
import torch
import torch.nn as nn


class Inner:
    def initialize(self, use_gpu=True):
        self.net = nn.Linear(4, 4)
        if use_gpu:
            self.net.to(0)


class PerceptualLoss(nn.Module):
    def __init__(self, model="net-lin", use_gpu=True):
        super().__init__()
        self.model = Inner()
        self.model.initialize(use_gpu=use_gpu)

    def forward(self, a):
        return self.model.net(a)


device = "cuda" if torch.cuda.is_available() else "cpu"
x = torch.zeros(2, 4).to(device)
percept = PerceptualLoss(model="net-lin", use_gpu=device.startswith("cuda"))
loss = percept(x)
"""


def test_a_module_given_a_flag_computed_from_the_device_is_of_unknown_place() -> None:
    assert findings(FLAG_FROM_THE_DEVICE) == []
    # Built with nothing read from the device, it is on the CPU.
    unflagged = FLAG_FROM_THE_DEVICE.replace('use_gpu=device.startswith("cuda")', "use_gpu=False")
    assert findings(unflagged) == [("DL301", 25, 8)]
    assert messages(unflagged) == [
        "`percept(x)` mixes devices: `percept` is on the CPU (built by `PerceptualLoss(...)` on the CPU, line 24), but `x` "
        "is on `device` (moved by `.to()`, line 23); put both on one device (`.to(device)`, or create it with `device=device`)"
    ]


def test_a_module_built_on_the_device_its_constructor_is_given_or_the_cpu() -> None:
    # YOLOv7's End2End(model, max_obj, device=None): built without a device, the wrapped model
    # and its inputs are on the CPU; with one, both are on it. Either way they agree.
    source = """
    import torch
    import torch.nn as nn


    class End2End(nn.Module):
        def __init__(self, model, device=None):
            super().__init__()
            device = device if device else torch.device("cpu")
            self.model = model.to(device)

        def forward(self, x):
            return self.model(x)


    class Either(nn.Module):
        def __init__(self, model, device=None):
            super().__init__()
            self.model = model.to(device or "cpu")

        def forward(self, x):
            return self.model(x)


    class Defaulted(nn.Module):
        def __init__(self, model, device=None):
            super().__init__()
            if device is None:
                device = torch.device("cpu")
            self.model = model.to(device)

        def forward(self, x):
            return self.model(x)

    """
    # `forward(x, device=None)` falling back to the CPU beside `x` is still reported: see
    # test_what_the_third_round_of_fixes_must_still_report.
    assert findings(source) == []


def test_a_module_keeping_a_configuration_entry_and_renamed_arguments_is_not_on_the_cpu() -> None:
    # ssd.pytorch's MultiBoxLoss keeps `self.variance = cfg['variance']` (a table of data/config.py)
    # and `self.threshold = overlap_thresh`: data it indexes or passes on, no parameter or buffer. An
    # entry of a table the class calls (`self.proj(x)`) may be a layer, which `__setattr__` registers.
    source = """
import torch
import torch.nn as nn

CFG = {"variance": [0.1, 0.2], "proj": nn.Linear(4, 4)}
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class MultiBoxLoss(nn.Module):
    def __init__(self, num_classes, overlap_thresh):
        super().__init__()
        self.num_classes = num_classes
        self.threshold = overlap_thresh
        self.variance = CFG["variance"]

    def forward(self, loc, conf):
        return (loc * self.variance[0]).sum() + conf[:, : self.num_classes].sum() * self.threshold


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = CFG["proj"]

    def forward(self, x):
        return self.proj(x)


def step(loc, conf, x):
    loc, conf, x = loc.to(device), conf.to(device), x.to(device)
    return MultiBoxLoss(6, 0.5)(loc, conf) + Head()(x).sum()
"""
    assert findings(source) == [("DL301", 30, 46)]
    assert messages(source) == [
        "`Head()(x)` mixes devices: `Head()` is on the CPU (built by `Head(...)` on the CPU, line 30), but `x` is on "
        "`device` (moved by `.to()`, line 29); put both on one device (`.to(device)`, or create it with `device=device`)"
    ]


def test_a_module_holding_only_data_and_placed_tensors_is_not_on_the_cpu() -> None:
    # face-parsing's OhemCELoss (`-torch.log(torch.tensor(t)).cuda()`, a count kept as data) and
    # RIFE's Ternary (a numpy array made a tensor on `device`): no parameter, buffer or stateful
    # layer, so calling one with device tensors mixes nothing. A module keeping a parameter it
    # calls (a wrapped backbone) stays where it was built.
    source = """
import numpy as np
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class OhemCELoss(nn.Module):
    def __init__(self, thresh, n_min, ignore_lb=255):
        super().__init__()
        self.thresh = -torch.log(torch.tensor(thresh, dtype=torch.float)).to(device)
        self.n_min = n_min
        self.criteria = nn.CrossEntropyLoss(ignore_index=ignore_lb, reduction="none")

    def forward(self, logits, labels):
        loss = torch.sort(self.criteria(logits, labels).view(-1), descending=True)[0]
        return loss[: self.n_min].mean()


class Ternary(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = np.eye(49).reshape((7, 7, 1, 49))
        self.w = torch.tensor(np.transpose(self.w, (3, 2, 0, 1))).float().to(device)

    def forward(self, img):
        return nn.functional.conv2d(img, self.w, padding=3)


class Head(nn.Module):
    def __init__(self, backbone):
        super().__init__()
        self.backbone = backbone
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(self.backbone(x))


def step(logits, labels, img, x):
    logits, labels, img, x = logits.to(device), labels.to(device), img.to(device), x.to(device)
    loss = OhemCELoss(0.7, 16)(logits, labels)
    loss = loss + Ternary()(img).mean()
    return loss + Head(nn.Identity())(x).sum()
"""
    assert findings(source) == [("DL301", 44, 19)]


def test_a_module_keeping_a_list_of_numbers_is_not_on_the_cpu() -> None:
    # FaceBoxes.PyTorch's MultiBoxLoss (ssd.pytorch's, with `self.variance = [0.1, 0.2]`). A list
    # holding a layer with parameters keeps the class reported.
    source = """
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class MultiBoxLoss(nn.Module):
    def __init__(self, overlap_thresh):
        super().__init__()
        self.threshold = overlap_thresh
        self.variance = [0.1, (0.2, 0.3)]

    def forward(self, loc):
        return (loc * self.variance[0]).sum() * self.threshold


class Heads(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = [nn.ReLU(), nn.Linear(4, 4)]

    def forward(self, x):
        return self.heads[1](x)


def step(loc, x):
    loc, x = loc.to(device), x.to(device)
    return MultiBoxLoss(0.5)(loc) + Heads()(x).sum()
"""
    assert findings(source) == [("DL301", 28, 37)]
