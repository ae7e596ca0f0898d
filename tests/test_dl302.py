"""DL302 (numpy-on-device): `.numpy()`, `np.asarray(t)`, `np.array(t)` on a tensor that may be on an accelerator."""

from __future__ import annotations

import pytest

from linting import dataflow_findings as findings
from linting import dataflow_messages as messages
from linting import lint

from devlint.config import Settings


# -- positives -------------------------------------------------------------------
PREDICT = """
import numpy as np
import torch


def predict(model, x, device):
    model.to(device)
    logits = model(x.to(device))
    probs = torch.softmax(logits, dim=1)
    arr = probs.numpy()
    arr2 = np.asarray(probs)
    arr3 = np.array(logits.detach())
    return arr, arr2, arr3
"""


def test_numpy_asarray_and_array_on_model_outputs() -> None:
    assert findings(PREDICT) == [("DL302", 9, 11), ("DL302", 10, 12), ("DL302", 11, 12)]


def test_full_messages() -> None:
    assert messages(PREDICT) == [
        "`.numpy()` on `probs`, which is on `device` (moved by `.to()`, line 6): numpy cannot read accelerator "
        "memory; convert with `probs.cpu()` first (or `.item()` for a number)",
        "`np.asarray` on `probs`, which is on `device` (moved by `.to()`, line 6): numpy cannot read accelerator "
        "memory; convert with `probs.cpu()` first (or `.item()` for a number)",
        "`np.array` on `logits.detach()`, which is on `device` (moved by `.to()`, line 6): numpy cannot read "
        "accelerator memory; convert with `logits.detach().cpu()` first (or `.item()` for a number)",
    ]


def test_detach_without_cpu_on_a_device_factory() -> None:
    source = """
    import numpy as np
    import torch

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    emb = torch.randn(10, 4, device=device)
    np.save("emb.npy", emb.detach().numpy())
    """
    assert findings(source) == [("DL302", 6, 20)]


def test_a_device_tensor_handed_to_a_local_function_that_calls_numpy() -> None:
    # huggingface/setfit#339: compute_metrics(y_pred) calls y_pred.numpy() on the GPU predictions.
    source = """
    import torch


    def compute_metrics(y_pred):
        return y_pred.numpy()


    def evaluate(head, emb, device):
        head.to(device)
        logits = head(emb.to(device))
        y_pred = (torch.sigmoid(logits) > 0.5).int()
        return compute_metrics(y_pred)
    """
    assert findings(source) == [("DL302", 5, 12)]


def test_a_list_of_device_losses_reduced_with_numpy() -> None:
    source = """
    import numpy as np
    import torch


    def evaluate(model, loader, device):
        losses = []
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            losses.append(torch.nn.functional.mse_loss(model(x), y))
        return np.mean(losses)
    """
    assert findings(source) == [("DL302", 10, 12)]
    assert messages(source) == [
        "`np.mean` on `losses`, which holds tensors on `device` (moved by `.to()`, line 8): numpy cannot read "
        "accelerator memory; convert each tensor with `.item()` (or `.cpu()`) before collecting it"
    ]


def test_moved_back_to_the_device_after_cpu() -> None:
    source = """
    import numpy as np
    import torch


    def f(device):
        t = torch.randn(3, device=device)
        c = t.cpu()
        t2 = c.to(device)
        return t2.numpy(), np.concatenate([t, t])
    """
    assert findings(source) == [("DL302", 9, 12), ("DL302", 9, 24)]


def test_method_results_and_branches_that_agree() -> None:
    source = """
    import torch


    def f(model, x, device):
        model.to(device)
        out = model(x.to(device))
        if isinstance(out, tuple):
            out = out[0]
        pred = out.argmax(-1).numpy()
        return pred
    """
    assert findings(source) == [("DL302", 9, 12)]


def test_only_the_branch_a_test_puts_on_the_cpu_is_spared() -> None:
    source = """
    import torch


    def convert(x, device):
        x = x.to(device)
        if device.type == "cpu":
            return x.numpy()
        return x.numpy()
    """
    assert findings(source) == [("DL302", 8, 12)]


def test_a_cuda_tensor() -> None:
    source = """
    import torch


    def f(x):
        y = torch.zeros(3).to("cuda")
        return y.numpy()
    """
    assert findings(source) == [("DL302", 6, 12)]


# -- negatives ---------------------------------------------------------------------
NEGATIVES = {
    "detach-cpu-numpy": """
        import numpy as np
        import torch


        def predict(model, x, device):
            model.to(device)
            logits = model(x.to(device))
            a = logits.detach().cpu().numpy()
            b = np.asarray(logits.cpu())
            c = logits.argmax(1).cpu().numpy()
            d = np.array(logits.tolist())
            e = logits.max().item()
            return a, b, c, d, e
        """,
    "item-losses-into-np-mean": """
        import numpy as np
        import torch


        def train(model, loader, optimizer, device):
            losses = []
            for x, y in loader:
                x, y = x.to(device), y.to(device)
                loss = torch.nn.functional.mse_loss(model(x), y)
                loss.backward()
                losses.append(loss.item())
            return np.mean(losses), np.std(np.array(losses))
        """,
    "cpu-tensors": """
        import numpy as np
        import torch

        x = torch.randn(3, 4)
        y = x.numpy()
        z = np.asarray(x * 2)
        w = torch.from_numpy(np.zeros(3)).numpy()
        v = np.array(torch.zeros(3, device="cpu"))
        """,
    "a-parameter-its-callers-pass-on-the-cpu": """
        import torch


        def f(t):
            return t.numpy()


        def g():
            return f(torch.zeros(3))
        """,
    "rebound-to-the-cpu": """
        import numpy as np
        import torch


        def predict(model, x, device):
            model.to(device)
            with torch.no_grad():
                out = model(x.to(device))
            out = out.cpu()
            return out.numpy(), np.asarray(out)
        """,
    "plot-idiom": """
        import matplotlib.pyplot as plt
        import torch
        import torch.nn as nn

        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        X = torch.linspace(-3, 3, 200, device=device).unsqueeze(1)
        y = torch.sin(X) + 0.1 * torch.randn_like(X)
        model = nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 1)).to(device)
        y_pred = model(X)
        plt.scatter(X.cpu().numpy(), y.cpu().numpy(), s=4)
        plt.plot(X.detach().cpu().numpy(), y_pred.detach().cpu().numpy())
        """,
    "axes-plot-host-tensors": """
        import matplotlib.pyplot as plt
        import torch


        def show(model, x, device, history):
            model.to(device)
            with torch.no_grad():
                out = model(x.to(device)).cpu()
            fig, axs = plt.subplots(1, 2)
            axs[0].imshow(out[0])
            axs[1].plot(torch.linspace(0, 1, 10), history)
            ax = fig.add_subplot(2, 2, 1)
            ax.set_title(str(model(x.to(device)).shape))
            ax.imshow(x[0])
        """,
    "cpu-only-model-weights": """
        import numpy as np
        import torch
        import torch.nn as nn

        restored = nn.Linear(4, 1)
        restored.load_state_dict(torch.load("linear_cpu.pth", map_location="cpu"))
        with torch.no_grad():
            weights = restored.weight.numpy().ravel()
        print(np.round(weights, 2))
        """,
    "cpu-predictions-collected": """
        import numpy as np
        import torch


        def predict(model, loader, device):
            model.to(device)
            preds = []
            for x, y in loader:
                preds.append(model(x.to(device)).cpu())
            return np.concatenate([p.numpy() for p in preds]), torch.cat(preds).numpy()
        """,
    "numpy-values-and-python-lists": """
        import numpy as np
        import torch


        def f(device, values):
            t = torch.tensor(values, device=device)
            arr = np.asarray(values)
            total = np.sum([1.0, 2.0])
            return t * 2, arr, total, np.array(t.shape)
        """,
    "a-size-pair-kept-on-a-module": """
        # fairseq quantization/pq/modules/qconv.py: _pair() makes a tuple of ints.
        import numpy as np
        import torch.nn as nn
        from torch.nn.modules.utils import _pair


        class PQConv2d(nn.Module):
            def __init__(self, in_channels, kernel_size, block_size):
                super().__init__()
                self.kernel_size = _pair(kernel_size)
                if in_channels * np.prod(self.kernel_size) % block_size != 0:
                    raise ValueError("Wrong PQ sizes")
        """,
    "moved-to-a-device-named-for-the-cpu": """
        # detectron2 CityscapesSemSegEvaluator: the CPU device kept on a base class.
        import torch


        class Evaluator:
            def __init__(self):
                self._cpu_device = torch.device("cpu")


        class SemSeg(Evaluator):
            def process(self, output, device):
                output = output.to(device)
                return output.argmax(dim=0).to(self._cpu_device).numpy()
        """,
    "an-opaque-object-converting-itself": """
        # kornia's Image: `.to(device)` moves it, but its own `to_numpy()` copies to the
        # host; `.cpu()` on what it returns (the fix) would raise.
        import numpy as np
        from kornia.image import Image


        def test_numpy(device):
            data = np.ones((4, 5, 3), dtype=np.uint8)
            img = Image.from_numpy(data).to(device)
            np.testing.assert_array_equal(data, np.asarray(img.to_numpy()))
        """,
    "a-branch-taken-only-on-the-cpu": """
        # dinov2 log_regression: `.numpy()` under `if self.device == _CPU_DEVICE:`.
        import torch

        _CPU_DEVICE = torch.device("cpu")


        class LogReg:
            def __init__(self, device=_CPU_DEVICE):
                self.device = device

            def fit(self, feats):
                feats = feats.to(dtype=torch.float64, device=self.device)
                if self.device == _CPU_DEVICE:
                    return feats.numpy()
                return feats


        def convert(x, device):
            x = x.to(device)
            if device.type == "cpu":
                return x.numpy()
            if str(device) != "cpu":
                return x
            else:
                return x.numpy() + torch.zeros(3).numpy() * (x + torch.ones(3)).numpy()
        """,
}


@pytest.mark.parametrize("source", NEGATIVES.values(), ids=NEGATIVES.keys())
def test_host_side_conversions_are_not_reported(source: str) -> None:
    assert findings(source) == []


def test_a_tensor_parameter_lives_where_the_caller_put_it() -> None:
    # opacus's filter_dilated_rows, ignite's metrics: library code gets GPU tensors too.
    source = """
    import torch


    def to_array(t):
        return t.detach().numpy()
    """
    assert findings(source) == [("DL302", 5, 12)]
    assert messages(source) == [
        "`.numpy()` on `t.detach()`, which is on `t`'s device, which the caller chooses: numpy cannot read "
        "accelerator memory; convert with `t.detach().cpu()` first (or `.item()` for a number)"
    ]


def test_array_libraries_convert_what_they_are_given() -> None:
    # coqui TTS: `np.isinf(grad_norm)` after `clip_grad_norm_` (a tensor where the parameters are);
    # han's `metrics.confusion_matrix(y, pred)`; matplotlib's `plt.imshow`.
    source = """
    import matplotlib.pyplot as plt
    import numpy as np
    import torch
    from sklearn import metrics


    def train(model, loader, device):
        model.to(device)
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            out = model(x)
            norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            if np.isinf(norm) or np.ndim(out) > 2:
                continue
            pred = out.max(1)[1]
            print(metrics.f1_score(y.cpu(), pred))
            plt.imshow(out[0], cmap="gray")
    """
    assert findings(source) == [("DL302", 13, 12), ("DL302", 16, 15), ("DL302", 17, 9)]
    assert messages(source)[1] == (
        "`sklearn.metrics.f1_score` on `pred`, which is on `device` (moved by `.to()`, line 8): numpy cannot read "
        "accelerator memory; convert with `pred.cpu()` first (or `.item()` for a number)"
    )


def test_a_modules_own_parameters_are_on_its_device() -> None:
    # stable-baselines3's TD3 policy: `parameters_to_vector(self.parameters()).detach().numpy()`.
    source = """
    import torch.nn as nn
    from torch.nn.utils import parameters_to_vector


    class Policy(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Linear(4, 4)

        def flat(self):
            return parameters_to_vector(self.parameters()).detach().numpy()

        def named(self):
            return {name: p.numpy() for name, p in self.named_parameters()}
    """
    assert findings(source) == [("DL302", 11, 16), ("DL302", 14, 23)]


def test_numpy_on_sizes_that_forward_receives_is_silent() -> None:
    # Swin's `np.ceil(H / self.window_size)`: H and W are ints that forward() takes beside x.
    source = """
    import numpy as np
    import torch.nn as nn

    class Layer(nn.Module):
        def __init__(self, window_size):
            super().__init__()
            self.window_size = window_size

        def forward(self, x, H, W):
            Hp = int(np.ceil(H / self.window_size)) * self.window_size
            m = np.asarray(x.view(-1))
            return Hp, m
    """
    assert [(code, line) for code, line, _ in findings(source)] == [("DL302", 11)]


def test_a_file_that_reads_tensors_through_scipy_alone_is_checked() -> None:
    # pytorch-forecasting: `torch.tensor(scipy.stats.poisson(predictions).ppf(q))` in a file
    # that never names numpy.
    source = """
    import scipy.stats
    import torch

    def to_quantiles(out: torch.Tensor, q):
        predictions = out.mean(-1)
        return torch.tensor(scipy.stats.poisson(predictions).ppf(q))
    """
    assert [(code, line) for code, line, _ in findings(source)] == [("DL302", 6)]


def test_numpy_of_an_unknown_value_in_a_file_that_imports_tensorflow() -> None:
    # transformers' GLUE processor: `tensor_dict["idx"].numpy()` on a tf.Tensor from tfds.
    source = """
    import tensorflow as tf
    import torch

    class Processor:
        def get_example_from_tensor_dict(self, tensor_dict):
            return tensor_dict["idx"].numpy()

        def logits(self, model, x):
            return model(x.to("cuda")).numpy()
    """
    assert [(code, line) for code, line, _ in findings(source)] == [("DL302", 9)]
    assert [(code, line) for code, line, _ in findings(source.replace("import tensorflow as tf", "import os"))] == [("DL302", 6), ("DL302", 9)]


def test_a_call_inside_yield_from_passes_its_arguments() -> None:
    # dinov2's data/samplers.py: the only call of the private helper is `yield from _slice(perm, ...)`
    # with `perm = torch.randperm(n)`, a CPU tensor: `.numpy()` is right there.
    source = """
    import torch


    def _slice(tensor, step):
        return tensor[::step].numpy()


    def it(n, step):
        perm = torch.randperm(n)
        yield from _slice(perm, step)
    """
    assert findings(source) == []
    assert findings(source.replace("torch.randperm(n)", "torch.randperm(n).cuda()")) == [("DL302", 5, 12)]


def test_a_list_annotated_to_hold_tensors_is_read_by_numpy_but_a_mapping_is_not() -> None:
    # pytorch-forecasting's `plot_prediction_actual_by_variable(data: Dict[str, Dict[str,
    # torch.Tensor]])` hands `data["std"]` to `np.linspace`: numpy iterates a mapping's keys,
    # so its tensors are not what it reads (here the annotation is loose: it is a number).
    source = """
    from typing import Dict, List

    import numpy as np
    import torch


    def plot(data: Dict[str, Dict[str, torch.Tensor]], bins: int):
        return np.linspace(-data["std"], data["std"], bins)

    def table(rows: List[torch.Tensor]):
        return np.array(rows)
    """
    assert findings(source) == [("DL302", 11, 12)]


def test_matplotlib_axes_read_their_data_through_numpy() -> None:
    # SA-ConvLSTM's evaluator: `axs = subfig.subplots(1, n)` for each of `fig.subfigures(...)`, then
    # `ax.imshow(frame_data[0, 0, fidx])` on the model's output; fastai's course notebook:
    # `_, axs = plt.subplots(n // 2, 4)`, `axs.flatten()[i].imshow(fakes[i])` on a generator's output.
    source = """
    import matplotlib.pyplot as plt
    import torch


    def visualize(label_frames: torch.Tensor, pred_frames: torch.Tensor):
        num_frames = label_frames.size(2)
        fig = plt.figure(figsize=(16, 6))
        subfigs = fig.subfigures(nrows=2, ncols=1)
        for rowidx, subfig in enumerate(subfigs):
            axs = subfig.subplots(1, num_frames)
            frame_data = pred_frames if rowidx == 1 else label_frames
            for fidx in range(num_frames):
                ax = axs[fidx]
                ax.imshow(frame_data[0, 0, fidx], cmap="gray")
                ax.set_xlabel(f"frame{fidx}")


    def show(gen, xb, device, n=8):
        with torch.no_grad():
            fakes = gen(xb.to(device))
        _, axs = plt.subplots(n // 2, 4, figsize=(12, 2 * n))
        for i in range(n):
            axs.flatten()[i].imshow(fakes[i].permute(1, 2, 0))
            axs.flatten()[i].imshow(fakes[i].cpu().permute(1, 2, 0))
        fig, ax = plt.subplots()
        ax.plot(fakes.mean(0).cpu(), label="mean")
        fig.add_subplot(1, 2, 1).plot(xb)
    """
    assert findings(source) == [("DL302", 14, 13), ("DL302", 23, 9)]
    assert messages(source) == [
        "`ax.imshow` on `frame_data[0, 0, fidx]`, which is on the device the caller chooses: numpy cannot read "
        "accelerator memory; convert with `frame_data[0, 0, fidx].cpu()` first (or `.item()` for a number)",
        "`axs.flatten()[i].imshow` on `fakes[i].permute(1, 2, 0)`, which is on `device` (moved by `.to()`, line 20): "
        "numpy cannot read accelerator memory; convert with `fakes[i].permute(1, 2, 0).cpu()` first (or `.item()` for a number)",
    ]


def test_the_axes_an_array_of_axes_and_a_figure_hold() -> None:
    # The idioms that walk a grid of axes: `axs.flat` and `fig.axes`.
    source = """
    import matplotlib.pyplot as plt
    import torch


    def show(gen, xb, device):
        fakes = gen(xb.to(device)).detach()
        fig, axs = plt.subplots(2, 2)
        for i, ax in enumerate(axs.flat):
            ax.imshow(fakes[i].permute(1, 2, 0))
        for ax in fig.axes:
            ax.hist(fakes.flatten(), bins=50)
            ax.set_title(fig.suptitle)
    """
    assert findings(source) == [("DL302", 9, 9), ("DL302", 11, 9)]


# -- isinstance tests: a name is no tensor where `isinstance(x, <non-tensor class>)` holds ----------
def test_a_pil_image_converted_under_isinstance_is_no_tensor() -> None:
    # shap-e util/image_util.py `resize`: `img` is a tensor by its later `.permute`, but on the
    # `np.array(img)` line it is a PIL image.
    source = """
    from typing import Union

    import numpy as np
    import torch
    from PIL import Image


    def resize(img: Union[Image.Image, torch.Tensor, np.ndarray]):
        if isinstance(img, Image.Image):
            img = np.array(img)
        dtype = img.dtype
        if isinstance(img, np.ndarray):
            img = torch.from_numpy(img)
        return img.permute(2, 0, 1), dtype
    """
    assert findings(source) == []


def test_a_list_under_isinstance_and_a_tensor_under_the_next_test() -> None:
    # open3d-ml's Visualizer._convert_to_numpy: the list branch is fine, the tensor branch is not.
    source = """
    import numpy as np
    import torch


    class Visualizer:
        def _convert_to_numpy(self, ary):
            if isinstance(ary, list):
                return np.array(ary, dtype='float32')
            elif isinstance(ary, torch.Tensor):
                return ary.numpy()
            return None
    """
    assert findings(source) == [("DL302", 10, 20)]


def test_isinstance_narrows_only_inside_its_branch() -> None:
    source = """
    import numpy as np


    def to_numpy(x):
        if isinstance(x, (np.ndarray, list)) and len(x) > 0:
            print(np.asarray(x).shape)
        return x.detach().numpy()
    """
    assert findings(source) == [("DL302", 7, 12)]


def test_isinstance_with_a_tensor_class_among_the_classes_narrows_nothing() -> None:
    source = """
    import numpy as np
    import torch


    def to_numpy(x):
        if isinstance(x, (np.ndarray, torch.Tensor)):
            return np.asarray(x)
        return x.detach()
    """
    assert findings(source) == [("DL302", 7, 16)]


def test_where_isinstance_of_torch_tensor_is_false_the_name_is_no_tensor() -> None:
    # YOLOv5's xyxy2xywh as CodeFormer's facelib carries it: numpy copies what is not a tensor.
    source = """
    import numpy as np
    import torch


    def xyxy2xywh(x):
        y = x.clone() if isinstance(x, torch.Tensor) else np.copy(x)
        return y


    def early(x):
        if isinstance(x, torch.Tensor):
            return x.clone()
        return np.copy(x)


    def chain(x):
        if torch.is_tensor(x):
            y = x.clone()
        elif isinstance(x, list):
            y = np.array(x)
        else:
            y = np.copy(x)
        return y


    def negated(x):
        y = np.copy(x) if not isinstance(x, torch.Tensor) else x.clone()
        return y


    def tensor_branch(x):
        if isinstance(x, torch.Tensor):
            y = x.clone()
            return y.numpy()
        return x


    def falls_through(x: torch.Tensor):
        if isinstance(x, torch.Tensor):
            x = x.float()
        return np.copy(x)
    """
    assert findings(source) == [("DL302", 34, 16), ("DL302", 41, 12)]


def test_a_rebound_builtin_name_is_not_the_builtin() -> None:
    source = """
    import numpy as np
    from mylib import Tensor as list


    def to_numpy(x):
        print(x.grad_fn)
        if isinstance(x, list):
            return np.asarray(x)
        return x
    """
    assert findings(source) == [("DL302", 8, 16)]


# -- usage shows a parameter is a tensor only before a new value replaces it -----------------------
def test_a_tensor_method_on_a_new_value_bound_to_the_parameter_name() -> None:
    # taming-transformers scripts/sample_conditional.py: the upload (numpy/PIL) is converted
    # *into* a tensor; `.permute` is on that tensor, not on the parameter.
    source = """
    import numpy as np
    import torch


    def single_image_to_torch(x, permute=True):
        x = np.array(x)
        x = torch.FloatTensor(x / 255. * 2. - 1.)[None, ...]
        if permute:
            x = x.permute(0, 3, 1, 2)
        return x
    """
    assert findings(source) == []


def test_a_tensor_method_after_a_replacement_in_one_branch_only() -> None:
    source = """
    import numpy as np


    def to_numpy(x, convert):
        if convert:
            x = np.array(x)
        print(np.array(x))
        return x.detach()
    """
    assert findings(source) == [("DL302", 6, 13)]


def test_a_tensor_method_after_moving_the_parameter_itself() -> None:
    source = """
    import numpy as np


    def to_numpy(x, device):
        print(np.array(x))
        x = x.to(device)
        return x.unsqueeze(0)
    """
    assert findings(source) == [("DL302", 5, 11)]


def test_a_device_string_tested_with_isinstance_stays_a_device() -> None:
    # `if isinstance(device, str): device = torch.device(device)` (transformers' BatchEncoding.to
    # tests `isinstance(device, str)` the same way): the test says nothing new of a device.
    source = """
    import torch


    def f(x):
        device = "cuda"
        if isinstance(device, str):
            device = torch.device(device)
        y = x.to(device)
        return torch.zeros(3) + y
    """
    assert findings(source) == [("DL303", 9, 12)]


# -- `is_cuda` tells CUDA from the rest, not accelerators from the CPU ----------------------------
def test_a_tensor_moved_to_the_cpu_only_when_it_is_on_cuda() -> None:
    # skorch's to_numpy (fixed for Apple silicon): an MPS tensor skips the branch and reaches
    # `.numpy()` where it is. The same fact broke snntorch (`"cuda" if data.is_cuda else "cpu"`)
    # and mmaction2 (a layer moved with `.cuda()` only when its sibling's weights are on CUDA).
    source = """
    import torch


    def to_numpy(X: torch.Tensor):
        if X.is_cuda:
            X = X.cpu()
        return X.numpy()


    def to_array(X: torch.Tensor):
        X = X.detach().cpu() if X.device.type == "cuda" else X
        return X.numpy()
    """
    assert findings(source) == [("DL302", 7, 12), ("DL302", 12, 12)]
    assert messages(source)[0] == (
        "`.numpy()` on `X`, which is on `X`'s device, which the caller chooses (moved to the CPU only when `X.is_cuda`: "
        "an MPS or XPU tensor stays where it is, line 5): numpy cannot read accelerator memory; convert with `X.cpu()` "
        "first (or `.item()` for a number)"
    )


def test_a_tensor_moved_to_the_cpu_whenever_it_is_elsewhere() -> None:
    source = """
    import torch


    def to_numpy(X: torch.Tensor):
        if X.device.type != "cpu":
            X = X.cpu()
        return X.numpy()


    def on_both_paths(X: torch.Tensor):
        if X.is_cuda:
            X = X.cpu()
        else:
            X = X.to("cpu")
        return X.numpy()


    def moved_by_a_flag(X: torch.Tensor, use_cpu: bool):
        if use_cpu:
            X = X.cpu()
        return X.numpy()
    """
    assert findings(source) == []


def test_a_recursive_call_says_nothing_of_where_the_callers_put_their_tensors() -> None:
    # skorch's to_numpy and Open3D-ML's _convert_to_numpy call themselves on the values of a dict
    # (or on a converted array): the parameter is still what the outside callers pass.
    source = """
    import torch


    def to_numpy(X):
        if isinstance(X, dict):
            return {key: to_numpy(val) for key, val in X.items()}
        if X.requires_grad:
            X = X.detach()
        return X.numpy()
    """
    assert findings(source) == [("DL302", 9, 12)]


def test_a_recursive_call_on_tensors_the_body_made_is_a_call() -> None:
    # taming-transformers' custom_collate (torch's default_collate): numpy arrays become CPU
    # tensors and the function recurses on them; numbers are batched on the CPU on another path.
    source = """
    import collections

    import numpy as np
    import torch


    def collate(batch):
        elem = batch[0]
        if isinstance(elem, torch.Tensor):
            return torch.stack(batch, 0)
        elif isinstance(elem, np.ndarray):
            return collate([torch.as_tensor(b) for b in batch])
        elif isinstance(elem, float):
            return torch.tensor(batch, dtype=torch.float64)
        elif isinstance(elem, collections.abc.Mapping):
            return {key: collate([d[key] for d in batch]) for key in elem}
        return [collate(samples) for samples in zip(*batch)]
    """
    assert findings(source) == []


def test_a_branch_that_returns_before_the_uses_that_show_a_tensor_learns_nothing_from_them() -> None:
    # skorch's to_numpy: a SliceDataset is returned through numpy before `X.is_cuda` shows a tensor.
    source = """
    import numpy as np
    from skorch.dataset import _is_slicedataset


    def to_numpy(X):
        if _is_slicedataset(X):
            return np.asarray(X)
        if X.requires_grad:
            X = X.detach()
        return X.numpy()


    def shown_before(X):
        if X.requires_grad:
            X = X.detach()
        if _is_slicedataset(X):
            return np.asarray(X)
        return X


    def shown_in_the_branch(X):
        if X.dim() == 0:
            return np.asarray(X)
        return X.numpy()


    def falls_through(X):
        if _is_slicedataset(X):
            print(np.asarray(X))
        return X.numpy()
    """
    assert findings(source) == [("DL302", 10, 12), ("DL302", 17, 16), ("DL302", 23, 16), ("DL302", 24, 12), ("DL302", 29, 15), ("DL302", 30, 12)]


def test_numbers_a_torch_helper_returns_are_no_tensor() -> None:
    # RITM's `XavierGluon` initialiser as XMem and Cutie vendor it: the fans are Python ints (the
    # torch.nn.init table is generated by calling each function), so the scale is a float, and
    # `.cpu()` on it would raise AttributeError.
    source = """
import numpy as np
import torch.nn as nn


class XavierGluon:
    def __init__(self, magnitude=3):
        self.magnitude = float(magnitude)

    def _init_weight(self, arr):
        fan_in, fan_out = nn.init._calculate_fan_in_and_fan_out(arr)
        factor = (fan_in + fan_out) / 2.0
        scale = np.sqrt(self.magnitude / factor)
        nn.init.uniform_(arr, -scale, scale)
        return np.sqrt(arr.detach())
"""
    assert findings(source) == [("DL302", 14, 16)]


def test_no_cpu_fix_for_a_module_input_only_assumed_to_be_a_tensor() -> None:
    # ALBEF's VQA: forward's `k` (an int, the answers to rank) reaches `np.arange` through two
    # calls. Appending `.cpu()` would raise AttributeError on the int: no fix is offered.
    source = """
import numpy as np
import torch
import torch.nn as nn


class VQA(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(8, 16)

    def forward(self, question, k=None):
        return tile(self.head(question), 0, k)


def tile(x, dim, n_tile):
    order = torch.LongTensor(np.concatenate([np.arange(n_tile) + i for i in range(x.size(dim))]))
    return torch.index_select(x, dim, order.to(x.device))
"""
    [finding] = lint(source, Settings(select=("DL302",)))
    assert (finding.code, finding.start.line, finding.fix) == ("DL302", 16, None)


def test_numpy_of_module_state_while_init_builds_it() -> None:
    # torch-ngp's FreqEncoder: `self.freq_bands.numpy().tolist()` in `__init__`, before anything
    # can have moved the module, as DL303 already holds for construction.
    source = """
import torch
import torch.nn as nn


class FreqEncoder(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.freq_bands = 2.0 ** torch.linspace(0.0, n - 1, n)
        self.freq_bands = self.freq_bands.numpy().tolist()

    def forward(self, x):
        return torch.cat([torch.sin(x * f) for f in self.freq_bands], -1)
"""
    assert findings(source) == []


def test_the_cpu_fix_stays_for_a_parameter_shown_to_be_a_tensor() -> None:
    # A parameter the body uses as a tensor (`x.detach()`) is one: `.cpu()` is safe on it.
    source = """
import numpy as np


def to_array(x):
    x = x.detach()
    return np.asarray(x)
"""
    [finding] = lint(source, Settings(select=("DL302",)))
    assert finding.fix is not None and [edit.replacement for edit in finding.fix.edits] == [".cpu()"]


def test_the_advice_parenthesises_an_expression_as_the_fix_does() -> None:
    # ByteTrack's CTracker tutorial: `np.where(scores > 0.1)` on a model output that followed a
    # `.cuda()` input; `.cpu()` goes on the whole comparison, in the message as in the fix.
    source = """
    import numpy as np
    import torch


    def run(net, img):
        scores = net(img.cuda())
        return np.where(scores > 0.1)
    """
    assert messages(source) == [
        "`np.where` on `scores > 0.1`, which is on `cuda` (moved by `.cuda()`, line 6): numpy cannot read "
        "accelerator memory; convert with `(scores > 0.1).cpu()` first (or `.item()` for a number)"
    ]



def test_a_stateless_module_of_the_file_computes_where_its_inputs_are() -> None:
    # LLMs-from-scratch's chapter 4 plots `GELU()(torch.linspace(-3, 3, 100))` on the CPU; the
    # same module given a CUDA tensor returns one, which numpy cannot read.
    source = """
    import matplotlib.pyplot as plt
    import torch
    import torch.nn as nn


    class GELU(nn.Module):
        def forward(self, x):
            return 0.5 * x * (1 + torch.tanh(torch.sqrt(torch.tensor(2.0 / torch.pi)) * x))


    gelu = GELU()
    x = torch.linspace(-3, 3, 100)
    plt.plot(x, gelu(x))
    z = torch.linspace(-3, 3, 100, device="cuda")
    plt.plot(z.cpu(), gelu(z))
    """
    assert findings(source) == [("DL302", 15, 1)]
