"""The device analysis beyond the textbook shapes: library functions, kinds shown by use,
classes from elsewhere. Each case is the shape of a real fix (named in its comment)."""

from __future__ import annotations

from linting import dataflow_findings as findings
from linting import dataflow_messages as messages
from linting import positions

from devlint.config import Settings


def test_a_helper_mixing_a_fresh_tensor_with_its_tensor_parameter() -> None:
    # pyro ops/stats.py autocorrelation, gpytorch's hadamard likelihood: library code gets GPU inputs.
    source = """
    import torch


    def autocorrelation(input, dim=0):
        if not input.is_cuda and not torch.backends.mkl.is_available():
            raise NotImplementedError("needs MKL on the CPU")
        input = input.transpose(dim, -1)
        pad = torch.zeros(input.shape[:-1] + (4,), dtype=input.dtype)
        return torch.cat([input, pad], dim=-1)
    """
    assert findings(source) == [("DL303", 8, 11)]
    assert messages(source) == [
        "`torch.zeros(input.shape[:-1] + (4,), ...` creates a CPU tensor (no `device=`) that meets `input` on `input`'s "
        "device, which the caller chooses at line 9: create it with `device=input.device`"
    ]


def test_an_annotated_tensor_parameter() -> None:
    source = """
    import torch
    from torch import Tensor


    def select(output: Tensor, target: list) -> Tensor:
        return torch.gather(output, 1, torch.tensor(target).reshape(len(output), 1))
    """
    assert findings(source) == [("DL303", 6, 36)]


def test_a_parameter_of_unknown_kind_is_not_taken_for_a_tensor() -> None:
    # `values` could be a list or an array: nothing in the function says it is a tensor.
    source = """
    import torch


    def shift(values):
        return values + torch.ones(3)
    """
    assert findings(source) == []


def test_a_member_a_class_of_the_file_defines_proves_nothing() -> None:
    source = """
    import torch


    class Box:
        def detach(self):
            return self


    def shift(box):
        box = box.detach()
        return box + torch.ones(3)
    """
    assert findings(source) == []


def test_callers_in_the_file_decide_where_a_helper_s_inputs_are() -> None:
    source = """
    import torch


    def shift(x):
        return x.unsqueeze(0) + torch.ones(3)


    def main():
        return shift(torch.zeros(3))
    """
    assert findings(source) == []


def test_star_arguments_carry_their_callers_facts() -> None:
    # gpytorch's `_shaped_noise_covar(self, base_shape, *params)`: the task indices come in *params.
    source = """
    import torch


    def covar(num_tasks, *params):
        task_idcs = params[0].long()
        all_tasks = torch.arange(num_tasks).unsqueeze(-1)
        return torch.eq(all_tasks, task_idcs.mT)
    """
    assert findings(source) == [("DL303", 6, 17)]
    used = source + """

    def main():
        return covar(3, torch.zeros(3))
    """
    assert findings(used) == []


def test_two_inputs_joined_are_still_the_callers_choice() -> None:
    source = """
    import torch


    def pick(a, b, first):
        chosen = a.unsqueeze(0) if first else b.unsqueeze(0)
        return chosen * torch.ones(3)
    """
    assert findings(source) == [("DL303", 6, 21)]


def test_a_write_through_advanced_indexing_needs_values_on_the_device() -> None:
    # torchdrug graph.py: `mapping[index] = index` with a CPU index tensor into a device tensor.
    source = """
    import torch


    def remap(count, device):
        mapping = torch.zeros(count, dtype=torch.long, device=device)
        index = torch.as_tensor([0, 2])
        mapping[index] = index
        return mapping
    """
    assert findings(source) == [("DL303", 6, 13)]


def test_a_write_through_a_slice_copies_across_devices() -> None:
    source = """
    import torch


    def fill(values, device):
        values = values.to(device)
        table = torch.zeros(4, 3)
        table[:, 0] = values[:, 0]
        return table
    """
    assert findings(source) == []


def test_a_class_of_a_foreign_base_that_registers_a_parameter_is_a_module() -> None:
    # stable-baselines3's Actor(BaseNetwork): the base lives in another file.
    source = """
    import torch as th
    import torch.nn as nn
    from .base import BaseNetwork


    class Actor(BaseNetwork):
        def __init__(self, latent_dim, action_dim):
            super().__init__()
            self.latent_dim, self.action_dim = latent_dim, action_dim
            self.log_std = nn.Parameter(th.ones(latent_dim, 1))

        def get_log_std(self):
            return th.ones((self.latent_dim, self.action_dim)) * self.log_std
    """
    assert findings(source) == [("DL303", 13, 16)]


def test_a_parameter_a_builder_method_registers_moves_with_the_module() -> None:
    # stable-baselines3's PPO policy: `_build()` creates `self.log_std`.
    source = """
    import torch as th
    import torch.nn as nn


    class Policy(nn.Module):
        def __init__(self, action_dim):
            super().__init__()
            self.action_dim = action_dim
            self._build()

        def _build(self):
            self.actor_net = nn.Linear(8, self.action_dim)
            self.log_std = nn.Parameter(th.zeros(self.action_dim))

        def action_std(self, latent):
            mean_actions = self.actor_net(latent)
            return th.ones(mean_actions.size()) * self.log_std.exp()
    """
    assert findings(source) == [("DL303", 17, 16)]


def test_a_callable_kept_on_self_returns_tensors_where_its_input_is() -> None:
    # tabnet's `self.network(data)` on a device batch, then `.numpy()` without `.cpu()`.
    source = """
    import torch


    class TabModel:
        def __init__(self, network, device):
            self.network = network
            self.device = device

        def train_batch(self, data):
            data = data.to(self.device)
            output, importance = self.network(data)
            return importance.sum(dim=0).detach().numpy()
    """
    assert findings(source) == [("DL302", 12, 16)]


def test_a_function_named_for_the_gpu_is_not_a_guard() -> None:
    source = """
    import torch


    def train_on_gpu(model):
        return model.cuda()
    """
    assert positions(source, Settings(select=("DL101",))) == [("DL101", 5, 12)]


def test_the_legacy_tensor_type_idiom_chooses_the_device() -> None:
    # PyTorch-GAN-era scripts: `Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor`.
    source = """
    import torch
    from torch.autograd import Variable

    cuda = torch.cuda.is_available()
    Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor


    def sample(imgs, n):
        real = Variable(imgs.type(Tensor))
        valid = Variable(Tensor(n, 1).fill_(1.0), requires_grad=False)
        noise = torch.randn(n, 8)
        return real + noise, valid * torch.ones(n, 1)
    """
    assert findings(source) == [("DL303", 11, 13), ("DL303", 12, 34)]


def test_a_tensor_moved_under_a_flag_is_on_the_device_chosen_at_run_time() -> None:
    source = """
    import torch
    import torch.nn as nn


    def run(use_cuda):
        model = nn.Linear(3, 3)
        data = torch.randn(4, 3)
        if use_cuda:
            model = model.cuda()
            data = data.cuda()
        return model(data) * torch.ones(3)
    """
    assert findings(source) == [("DL303", 11, 26)]
    assert messages(source) == [
        "`torch.ones(3)` creates a CPU tensor (no `device=`) that meets `model(data)` on the device (moved by "
        "`.cuda()`, line 9) at line 11: create it on the device of the tensors it meets (`device=x.device` for a tensor `x`)"
    ]


def test_an_element_of_a_cpu_schedule_is_a_0_dim_tensor_that_mixes_freely() -> None:
    # Diffusion samplers: `alphas[t]` for an integer `t` is 0-dim, which PyTorch lets meet CUDA tensors;
    # indexed with a tensor of timesteps it stays 1-D and on the CPU.
    source = """
    import torch


    def step(x, t, device):
        alphas = torch.linspace(0.1, 0.9, 1000)
        x = x.to(device)
        alpha = alphas[t]
        first = alphas[[0]]
        return x * alpha, x * (1 - alpha), x * first
    """
    assert findings(source) == [("DL303", 5, 14)]
    assert messages(source)[0].endswith("at line 9: create it with `device=device`")


def test_dimensions_follow_literal_data_and_sizes() -> None:
    source = """
    import torch


    def f(x, device):
        x = x.to(device)
        a = torch.tensor(0.5) * x
        b = torch.tensor([[0.5]])[0, 0] * x
        c = torch.zeros(3, 4)[1].sum() * x
        d = torch.ones(2, 2).float()[0] * x
        return a + b + c + d
    """
    assert findings(source) == [("DL303", 9, 9)]


def test_a_cpu_accumulator_cannot_take_device_results_in_place() -> None:
    # lightly's VICRegL loss: `loss = torch.tensor(0.0)` then `loss += invariance_loss(z_a, z_b)`.
    source = """
    import torch


    def total(losses, device):
        loss = torch.tensor(0.0)
        count = torch.zeros(1)
        for z in losses:
            z = z.detach().to(device)
            loss += z.mean()
            count.add_(z.sum())
        return loss / count
    """
    assert findings(source) == [("DL303", 5, 12), ("DL303", 6, 13)]


def test_the_layers_of_a_module_list_live_where_it_lives() -> None:
    # asteroid's TDConvNet: `skip_connection = torch.tensor([0.0])` then `+ skip` of each TCN layer.
    source = """
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])

        def forward(self, x):
            skip = torch.tensor([0.0])
            for block in self.blocks:
                skip = skip + block(x)
            return skip + self.blocks[0](x)
    """
    assert findings(source) == [("DL303", 11, 16)]


def test_a_path_that_raised_has_no_say_where_paths_meet() -> None:
    # The loop's first iteration raises; the next ones would still start from the CPU tensor.
    source = """
    import torch


    def accumulate(parts, device):
        total = torch.zeros(4)
        for part in parts:
            total = total + part.to(device)
        return total.numpy()
    """
    assert findings(source) == [("DL303", 5, 13)]


def test_a_fresh_cpu_result_on_a_rare_path() -> None:
    # coqui TTS's SSIM loss clamps an out-of-range loss to `torch.tensor([1.0])`.
    source = """
    import torch


    def ssim_loss(y_hat: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        loss = 1 - (y_hat * y).mean(dim=0)
        if loss.max() > 1.0:
            loss = torch.tensor([1.0])
        return loss
    """
    assert findings(source) == [("DL303", 7, 16)]


def test_a_bool_parameter_makes_a_0_dim_tensor() -> None:
    # deepchem's noise layer: `torch.tensor(training or not self.training_only)`.
    source = """
    import torch


    def noisy(mean: torch.Tensor, std: torch.Tensor, training=True):
        scale = torch.tensor(training).float()
        noise = torch.normal(0.0, 1.0, mean.shape)
        return mean + scale * std * noise
    """
    assert findings(source) == [("DL303", 6, 13)]


def test_callers_on_different_devices_leave_a_helper_device_agnostic() -> None:
    # StyleGAN3's metrics: `sinc()` is called with a CPU grid in one place and the device's in
    # another; each call's result is where its argument is.
    source = """
    import numpy as np
    import torch


    def sinc(x):
        y = (x * np.pi).abs()
        z = torch.sin(y) / y.clamp(1e-30, float('inf'))
        return torch.where(y < 1e-30, torch.ones_like(x), z)


    def lanczos_window(x, a):
        x = x.abs() / a
        return torch.where(x < 1, sinc(x), torch.zeros_like(x))


    def on_device(device):
        return sinc(torch.arange(4, device=device))


    def on_cpu():
        return lanczos_window(torch.arange(4), 2)


    def mixed(device):
        return sinc(torch.arange(4)) + on_device(device)
    """
    assert findings(source) == [("DL301", 25, 12)]


def test_an_optional_input_of_forward_is_on_the_modules_device() -> None:
    # doctr's SAR decoder: the start symbol is made on the CPU, then each step's symbol comes from
    # `gt` (an optional input) or from the logits; the first step feeds the CPU one to `self.embed`.
    source = """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Linear(5, 4, bias=False)
            self.out = nn.Linear(4, 5)

        def forward(self, features, gt=None):
            symbol = torch.zeros((features.shape[0], 5))
            for t in range(3):
                logits = self.out(self.embed(symbol))
                if gt is not None:
                    step = gt[:, t]
                else:
                    step = logits.argmax(-1)
                symbol = F.one_hot(step, 5).to(dtype=torch.float32)
            return logits
    """
    assert findings(source) == [("DL303", 13, 18)]


def test_a_default_made_on_the_cpu_for_an_optional_input() -> None:
    # asteroid's PMSQE loss: `pad_mask = torch.ones(...)` when the caller gives none.
    source = """
    import torch
    import torch.nn as nn


    class Loss(nn.Module):
        def forward(self, est, target, pad_mask=None):
            if pad_mask is None:
                pad_mask = torch.ones(est.shape[0], est.shape[1], 1)
            return ((est - target) * pad_mask).mean()


    def helper(x, weights=None):
        # Outside forward() an optional argument is the callers' business: often CPU data only.
        return x if weights is None else weights.numpy()
    """
    assert findings(source) == [("DL303", 8, 24)]
