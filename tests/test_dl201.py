"""DL201 (unmoved-batch): exact findings on loops over CPU loaders, and silence on correct loops."""

from __future__ import annotations

import pytest

from devlint.config import Settings

from linting import dataflow_findings as findings
from linting import dataflow_messages as messages


# -- positives -------------------------------------------------------------------
GLOBAL_MODEL_LOOP = """
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Linear(4, 2).to(device)
loss_fn = nn.CrossEntropyLoss()


def train(loader, optimizer):
    for x, y in loader:
        out = model(x)
        loss = loss_fn(out, y)
        loss.backward()
"""


def test_both_batch_elements_are_reported_where_they_are_consumed() -> None:
    # x reaches the model on the device; y reaches the loss together with the device output.
    assert findings(GLOBAL_MODEL_LOOP) == [("DL201", 11, 15), ("DL201", 12, 16)]


def test_full_messages_name_the_loader_the_device_and_the_fix() -> None:
    assert messages(GLOBAL_MODEL_LOOP) == [
        "`x` comes from `loader` (line 10) on the CPU, but `model` lives on `device` (moved by `.to()`, line 5): "
        "move it first with `x = x.to(device)`",
        "`y` comes from `loader` (line 10) on the CPU, but `out` is on `device` (moved by `.to()`, line 5): "
        "move it first with `y = y.to(device)`",
    ]


def test_only_the_unmoved_element_of_a_pair_is_reported() -> None:
    source = """
    import torch.nn as nn


    def train(model, train_loader, device):
        model.to(device)
        for images, labels in train_loader:
            images = images.to(device)
            outputs = model(images)
            loss = nn.functional.cross_entropy(outputs, labels)
    """
    assert findings(source) == [("DL201", 9, 16)]


def test_enumerate_of_tqdm_of_a_loader_with_a_nested_tuple_target() -> None:
    source = """
    import torch.nn as nn
    from tqdm import tqdm


    def train(model, train_loader, device):
        model.to(device)
        for i, (images, labels) in enumerate(tqdm(train_loader)):
            images = images.to(device)
            outputs = model(images)
            loss = nn.functional.cross_entropy(outputs, labels)
    """
    assert findings(source) == [("DL201", 10, 16)]
    assert messages(source)[0].startswith("`labels` comes from `train_loader` (line 7) on the CPU, but `outputs` is on `device`")


def test_tqdm_of_a_loader() -> None:
    source = """
    import torch
    from tqdm import tqdm


    def run(model, loader, device):
        model.to(device)
        for x, y in tqdm(loader):
            out = model(x)
    """
    assert findings(source) == [("DL201", 8, 15)]


def test_a_sample_taken_with_next_iter() -> None:
    source = """
    import torch


    def main(model, loader, device):
        model = model.to(device)
        images, labels = next(iter(loader))
        pred = model(images)
    """
    assert findings(source) == [("DL201", 7, 12)]


def test_next_of_a_named_iterator() -> None:
    source = """
    import torch


    def main(model, loader, device):
        model.to(device)
        it = iter(loader)
        batch = next(it)
        out = model(batch[0])
    """
    assert findings(source) == [("DL201", 8, 11)]


def test_a_dataloader_built_in_the_function() -> None:
    source = """
    import torch


    def predict(model, dataset, device):
        model.to(device)
        pred_loader = torch.utils.data.DataLoader(dataset, batch_size=4)
        for sample in pred_loader:
            out = model(sample["image"])
    """
    assert findings(source) == [("DL201", 8, 15)]


def test_indexing_a_batch_tuple_keeps_it_unmoved() -> None:
    # unit8co/darts#388: batch_tuple[0] handed to self.model without .to(self.device).
    source = """
    from torch.utils.data import DataLoader


    class Forecaster:
        def __init__(self, model, device):
            self.model = model.to(device)
            self.device = device

        def predict(self, dataset):
            loader = DataLoader(dataset, batch_size=32)
            for batch_tuple in loader:
                series = batch_tuple[0]
                out = self.model(series)
    """
    assert findings(source) == [("DL201", 13, 19)]


def test_an_unmoved_batch_handed_to_an_opaque_call_with_a_device_model() -> None:
    # microsoft/AI-System#116: writer.add_graph(model, images) with the model on the device.
    source = """
    import torch


    def main(writer, train_loader, model):
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        images, labels = next(iter(train_loader))
        model = model.to(device)
        writer.add_graph(model, images)
    """
    assert findings(source) == [("DL201", 8, 5)]


def test_a_batch_mixed_with_a_device_tensor_in_an_operation() -> None:
    source = """
    import torch


    def normalise(loader, device):
        mean = torch.zeros(3, device=device)
        for images, labels in loader:
            centered = images - mean
    """
    assert findings(source) == [("DL201", 7, 20)]


def test_a_model_moved_with_cuda() -> None:
    source = """
    import torch


    def train(model, loader):
        model.cuda()
        for x, y in loader:
            pred = model(x)
    """
    assert findings(source) == [("DL201", 7, 16)]
    assert messages(source) == [
        '`x` comes from `loader` (line 6) on the CPU, but `model` lives on `cuda` (moved by `.cuda()`, line 5): '
        'move it first with `x = x.to("cuda")`'
    ]


def test_a_global_model_moved_in_train_and_used_in_test() -> None:
    source = """
    import torch
    import torch.nn as nn

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = nn.Linear(4, 2)


    def train(loader):
        model.to(device)
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            model(x)


    def test(test_loader):
        for x, y in test_loader:
            pred = model(x)
    """
    assert findings(source) == [("DL201", 17, 16)]
    assert "(moved in `train()`, line 9)" in messages(source)[0]


def test_self_model_set_in_init_and_a_half_moved_pair() -> None:
    source = """
    import torch.nn as nn


    class Trainer:
        def __init__(self, model, device):
            self.device = device
            self.model = model.to(device)

        def fit(self, loader):
            for x, y in loader:
                x = x.to(self.device)
                loss = nn.functional.cross_entropy(self.model(x), y)
    """
    assert findings(source) == [("DL201", 12, 20)]


def test_a_dict_batch_key_used_without_moving() -> None:
    source = """
    import torch


    def evaluate(model, loader, device):
        model = model.to(device)
        for batch in loader:
            out = model(batch["input_ids"])
    """
    assert findings(source) == [("DL201", 7, 15)]


def test_configured_loader_names() -> None:
    # A project's own loader vocabulary: a constructor it imports and a parameter name.
    source = """
    import torch
    from mydata import make_stream


    def train(model, stream, device):
        model.to(device)
        for x in stream:
            model(x)
        for x in make_stream("train"):
            model(x)
    """
    assert findings(source) == []
    assert findings(source, Settings(loaders=("make_stream", "stream"))) == [("DL201", 8, 9), ("DL201", 10, 9)]


# -- negatives: correct code that looks like the bug ------------------------------
NEGATIVES = {
    "a-loader-wrapped-with-the-device": """
        # torch_xla's MpDeviceLoader (diffusers' XLA example) and the tutorials'
        # DeviceDataLoader(dl, device) yield batches already on the device.
        import torch
        import torch.nn as nn
        import torch_xla.core.xla_model as xm
        import torch_xla.distributed.parallel_loader as pl
        from helpers import DeviceDataLoader


        class Trainer:
            def __init__(self, encoder, dataloader):
                self.encoder = encoder
                self.dataloader = iter(dataloader)

            def step(self):
                batch = next(self.dataloader)
                return self.encoder(batch["input_ids"])


        def main(dataset):
            device = xm.xla_device()
            encoder = nn.Embedding(100, 8).to(device)
            loader = torch.utils.data.DataLoader(dataset, batch_size=4)
            Trainer(encoder, pl.MpDeviceLoader(loader, device)).step()
            for x, y in DeviceDataLoader(loader, device):
                encoder(x).sum().backward()
        """,
    "tuple-unpacking-move": """
        import torch


        def train(model, loader, optimizer, device):
            model.to(device)
            for x, y in loader:
                x, y = x.to(device), y.to(device)
                loss = torch.nn.functional.mse_loss(model(x), y)
                optimizer.zero_grad()
                loss.backward()
        """,
    "separate-moves-non-blocking": """
        import torch
        from torch.utils.data import DataLoader

        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        loader = DataLoader(dataset, batch_size=32, pin_memory=True)
        model = torch.nn.Linear(8, 2).to(device)
        for images, labels in loader:
            images = images.to(device, non_blocking=True)
            labels = labels.to(device, non_blocking=True)
            loss = torch.nn.functional.cross_entropy(model(images), labels)
        """,
    "dict-comprehension-move": """
        def evaluate(model, loader, device):
            model = model.to(device)
            for batch in loader:
                batch = {k: v.to(device) for k, v in batch.items()}
                out = model(**batch)
                loss = out.loss
        """,
    "per-key-moves": """
        def train(model, loader, device):
            model.to(device)
            for batch in loader:
                input_ids = batch["input_ids"].to(device)
                attention_mask = batch["attention_mask"].to(device)
                labels = batch["labels"].to(device)
                outputs = model(input_ids=input_ids, attention_mask=attention_mask, labels=labels)
                outputs.loss.backward()
        """,
    "tuple-generator-move": """
        import torch


        def train(model, loader, device):
            model.to(device)
            for batch in loader:
                batch = tuple(t.to(device) for t in batch)
                b_input_ids, b_labels = batch
                loss = torch.nn.functional.cross_entropy(model(b_input_ids), b_labels)
        """,
    "list-comprehension-move": """
        def train(model, loader, device):
            model.to(device)
            for batch in loader:
                batch = [t.to(device) for t in batch]
                out = model(batch[0])
        """,
    "index-and-move": """
        def train(net, trainloader, criterion, device):
            net.to(device)
            for i, data in enumerate(trainloader, 0):
                inputs, labels = data[0].to(device), data[1].to(device)
                loss = criterion(net(inputs), labels)
        """,
    "inline-moves": """
        def evaluate(model, loader, criterion, device):
            model.to(device)
            for x, y in loader:
                loss = criterion(model(x.to(device)), y.to(device))
        """,
    "whole-batch-object-move": """
        import torch


        def train(model, loader, device):
            model.to(device)
            for batch in loader:
                batch = batch.to(device)
                out = model(batch.x, batch.edge_index)
                loss = torch.nn.functional.mse_loss(out, batch.y)
        """,
    "helper-that-takes-the-device": """
        def move_to_device(obj, device):
            if isinstance(obj, dict):
                return {key: move_to_device(value, device) for key, value in obj.items()}
            return obj.to(device)


        def train_epoch(model, loader, optimizer, device):
            model.train()
            for batch in loader:
                batch = move_to_device(batch, device)
                loss = model(**batch)
                loss.backward()
        """,
    "local-helper-with-another-name": """
        def send(batch, dev):
            return {k: v.to(dev) for k, v in batch.items()}


        def train(model, loader, device):
            model.to(device)
            for batch in loader:
                batch = send(batch, device)
                out = model(batch["x"])
        """,
    "imported-to-device-helper": """
        from mylib.utils import to_device


        def train(model, loader, device):
            model.to(device)
            for batch in loader:
                x, y = to_device(batch, device)
                out = model(x)
        """,
    "lightning-training-step": """
        import pytorch_lightning as pl
        import torch.nn as nn
        import torch.nn.functional as F


        class Classifier(pl.LightningModule):
            def __init__(self):
                super().__init__()
                self.net = nn.Linear(32, 4)

            def training_step(self, batch, batch_idx):
                x, y = batch
                return F.cross_entropy(self.net(x), y)

            def validation_step(self, batch, batch_idx):
                x, y = batch
                self.log("val_loss", F.cross_entropy(self(x), y))

            def forward(self, x):
                return self.net(x)
        """,
    "accelerate-prepare-loop": """
        import torch
        import torch.nn as nn
        from accelerate import Accelerator
        from torch.utils.data import DataLoader

        accelerator = Accelerator()
        device = accelerator.device
        model = nn.Linear(32, 4).to(device)
        optimizer = torch.optim.AdamW(model.parameters())
        train_loader = DataLoader(dataset, batch_size=32)
        model, optimizer, train_loader = accelerator.prepare(model, optimizer, train_loader)
        for x, y in train_loader:
            loss = nn.functional.cross_entropy(model(x), y)
            accelerator.backward(loss)
        """,
    "pure-cpu-script": """
        import torch
        import torch.nn as nn
        from torch.utils.data import DataLoader

        model = nn.Linear(4, 2)
        loader = DataLoader(dataset, batch_size=8)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
        """,
    "explicit-cpu-device": """
        import torch
        import torch.nn as nn
        from torch.utils.data import DataLoader

        device = torch.device("cpu")
        model = nn.Linear(4, 2).to(device)
        loader = DataLoader(dataset, batch_size=8)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x), y)
        """,
    "batch-used-for-shapes-and-logging": """
        def train(model, loader, device):
            model.to(device)
            for x, y in loader:
                x = x.to(device)
                print(x.shape, y.shape, len(y))
                stats = y.float().mean()
                out = model(x)
        """,
    "metrics-after-moving": """
        import torch


        def evaluate(model, loader, device, epochs):
            model.to(device)
            for epoch in range(epochs):
                for batch_idx, (data, target) in enumerate(loader):
                    data, target = data.to(device), target.to(device)
                    output = model(data)
                    _, predicted = torch.max(output, 1)
                    correct = (predicted == target).sum().item()
                    if batch_idx % 10 == 0:
                        print(correct, len(data), len(loader.dataset))
        """,
    "cpu-only-collection": """
        import torch


        def collect(loader):
            xs = []
            for x, y in loader:
                xs.append(x)
            return torch.cat(xs)
        """,
    "guarded-cuda-moves-on-both-sides": """
        import torch.nn as nn


        def legacy(model, loader, use_cuda):
            if use_cuda:
                model.cuda()
            for x, y in loader:
                if use_cuda:
                    x, y = x.cuda(), y.cuda()
                loss = nn.functional.cross_entropy(model(x), y)
        """,
    "with-torch-device-block": """
        import torch

        device = "cuda" if torch.cuda.is_available() else "cpu"


        def train(model, loader):
            model = model.to(device)
            with torch.device(device):
                for x, y in loader:
                    x, y = x.to(device), y.to(device)
                    out = model(x)
                    mask = torch.ones(x.shape[0])
                    loss = ((out - y) ** 2 * mask).mean()
        """,
    "self-device-moves": """
        import torch.nn as nn


        class Trainer:
            def __init__(self, model, device):
                self.device = device
                self.model = model.to(device)

            def fit(self, loader):
                for x, y in loader:
                    x, y = x.to(self.device), y.to(self.device)
                    loss = nn.functional.cross_entropy(self.model(x), y)
        """,
    "torchrun-local-rank": """
        import os

        import torch.nn.functional as F


        class Trainer:
            def __init__(self, model, train_data):
                self.gpu_id = int(os.environ["LOCAL_RANK"])
                self.model = model.to(self.gpu_id)
                self.train_data = train_data

            def _run_epoch(self):
                for source, targets in self.train_data:
                    source = source.to(self.gpu_id)
                    targets = targets.to(self.gpu_id)
                    loss = F.cross_entropy(self.model(source), targets)
        """,
}


@pytest.mark.parametrize("source", NEGATIVES.values(), ids=NEGATIVES.keys())
def test_correct_loops_are_not_reported(source: str) -> None:
    assert findings(source) == []


def test_the_suggested_move_is_valid_python() -> None:
    source = """
    import torch
    import torch.nn as nn

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = nn.Linear(4, 2).to(device)


    def train(loader):
        for example_data, target in loader:
            out = model(example_data.reshape(-1, 4))
            third = model(target["x"])
    """
    found = messages(source)
    assert [message.split("move it first with ")[1] for message in found] == [
        "`example_data.reshape(-1, 4).to(device)`",
        '`target["x"] = target["x"].to(device)`',
    ]
    for message in found:
        compile(message.split("`")[-2], "<suggestion>", "exec")


def test_options_handed_on_through_double_star_are_not_known_to_reach_the_model() -> None:
    # ZoeDepth's evaluate.py: `infer(model, image, dataset=..., focal=focal)` then
    # `model(images, **kwargs)`; the model never reads `focal`. A batch expanded into the
    # model (`model(**batch)`) is still checked.
    source = """
    import torch

    def infer(model, images, **kwargs):
        return model(images, **kwargs)

    def evaluate(model, test_loader, device):
        for sample in test_loader:
            image = sample["image"].to(device)
            focal = sample.get("focal", torch.Tensor([715.0873]).to(device))
            infer(model, image, dataset=sample["dataset"][0], focal=focal)
        for batch in test_loader:
            model(**batch)

    def main(model, test_loader, device):
        model = model.to(device)
        evaluate(model, test_loader, device)
    """
    assert [(code, line) for code, line, _ in findings(source)] == [("DL201", 12)]


DATA_PARALLEL = """
import torch
import torch.nn as nn
from torch.nn.parallel.data_parallel import DataParallel
from torch.utils import data


class DataParallelCriterion(DataParallel):
    def forward(self, inputs, *targets):
        if not self.device_ids:
            return self.module(inputs, *targets)
        targets, _ = self.scatter(targets, {}, self.device_ids)
        return self.module(inputs[0], *targets[0])


class Trainer:
    def __init__(self, cuda):
        self.loader = data.DataLoader(data.TensorDataset(torch.zeros(4, 4), torch.ones(4, 4)), batch_size=2)
        self.model, self.criterion, self.head = nn.Linear(4, 4), nn.MSELoss(), nn.Linear(4, 4)
        if cuda:
            self.model = nn.DataParallel(self.model).cuda()
            self.criterion = DataParallelCriterion(self.criterion).cuda()
            self.head = self.head.cuda()

    def training(self):
        for image, target in self.loader:
            outputs = self.model(image)
            loss = self.criterion(outputs, target)
            loss.backward()
            self.head(image)
"""


def test_a_data_parallel_wrapper_takes_cpu_batches() -> None:
    # PyTorch-Encoding's train.py: DataParallel (and its subclasses) copy their tensor arguments
    # onto their GPUs themselves. The head moved without a wrapper still needs the batch moved.
    assert findings(DATA_PARALLEL) == [("DL201", 29, 13)]


def test_a_distributed_wrapper_of_a_model_the_analysis_cannot_see_takes_cpu_batches() -> None:
    # PyTorch-Encoding's train_dist.py: the model comes from a factory of another package, so
    # only the wrapper is known; DistributedDataParallel still scatters the CPU batch.
    source = """
import torch
from torch.nn.parallel import DistributedDataParallel
from models import get_segmentation_model


def main_worker(gpu, args, loader):
    model = get_segmentation_model(args.model)
    model.cuda(gpu)
    model = DistributedDataParallel(model, device_ids=[gpu])
    for image, target in loader:
        outputs = model(image)
        target = target.cuda(gpu)
"""
    assert findings(source) == []
