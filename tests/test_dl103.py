"""DL103: CUDA runtime calls that raise without CUDA."""

from __future__ import annotations

from linting import lint, positions

from devlint.config import Settings

DL103 = Settings(select=("DL103",))


def test_runtime_calls_outside_a_guard() -> None:
    # dgl's GAT example timed each epoch with an unconditional synchronize; torchdrug's meter reset peak stats.
    source = """
    import torch
    from torch import cuda

    torch.cuda.synchronize()
    name = torch.cuda.get_device_name(0)
    cuda.reset_peak_memory_stats()
    start = torch.cuda.Event(enable_timing=True)
    torch.accelerator.synchronize()
    """
    assert positions(source, DL103) == [("DL103", 4, 1), ("DL103", 5, 8), ("DL103", 6, 1), ("DL103", 7, 9), ("DL103", 8, 1)]
    assert [f.message for f in lint(source, DL103)][0] == (
        "`torch.cuda.synchronize()` raises on a machine without CUDA (a laptop, a Mac, CPU-only CI); run it only "
        "where CUDA is (`if torch.cuda.is_available():`) or only for a CUDA device (`if device.type == \"cuda\":`)"
    )


def test_calls_that_return_without_cuda_are_not_reported() -> None:
    source = """
    import torch

    torch.cuda.manual_seed_all(0)
    torch.cuda.empty_cache()
    used = torch.cuda.memory_allocated()
    bf16 = torch.cuda.is_bf16_supported()
    n = torch.cuda.device_count()
    """
    assert positions(source, DL103) == []


def test_guarded_calls_are_reported_only_when_strict() -> None:
    source = """
    import torch


    def step(device):
        if device.type == "cuda":
            torch.cuda.synchronize()
        if torch.cuda.is_available():
            print(torch.cuda.get_device_properties(0))
    """
    assert positions(source, DL103) == []
    assert positions(source, Settings(select=("DL103",), strict=True)) == [("DL103", 6, 9), ("DL103", 8, 15)]


def test_gpu_only_scripts_are_not_reported() -> None:
    nccl = """
    import torch
    import torch.distributed as dist

    dist.init_process_group(backend="nccl")
    torch.cuda.synchronize()
    x = torch.zeros(3).cuda()
    """
    kernels = """
    import torch
    import triton


    def launch(x):
        with torch.cuda.device(x.device.index):
            return x
    """
    portable = """
    import torch
    import torch.distributed as dist

    dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
    torch.cuda.synchronize()
    """
    assert positions(nccl, Settings(select=("DL1",))) == []
    assert positions(kernels, DL103) == []
    assert positions(portable, DL103) == [("DL103", 5, 1)]


def test_device_ids_of_a_multi_gpu_wrapper_are_not_reported() -> None:
    source = """
    import torch
    from torch.nn.parallel import DistributedDataParallel as DDP


    def wrap(model):
        return DDP(model, device_ids=[torch.cuda.current_device()])
    """
    assert positions(source, DL103) == []


def test_legacy_typed_constructors_are_left_to_dl102() -> None:
    assert positions("import torch\nx = torch.cuda.FloatTensor(3)\n", DL103) == []


def test_what_counts_as_a_check() -> None:
    # PyTorch-YOLOv3 tested the function object; mmpose's `need_cuda=True` switch; SlowFast's
    # assert holds with no GPU at all; maskrcnn-benchmark's fix guarded with `not device == "cpu"`.
    source = """
    import torch

    cuda = True if torch.cuda.is_available else False
    if cuda:
        torch.cuda.synchronize()


    def make_input(t, need_cuda=True):
        if need_cuda:
            torch.cuda.synchronize()


    def build(cfg):
        assert cfg.NUM_GPUS <= torch.cuda.device_count()
        return torch.cuda.current_device()


    def build_on_a_gpu():
        assert torch.cuda.device_count() > 0
        return torch.cuda.current_device()


    def infer(cfg):
        if not cfg.MODEL.DEVICE == "cpu":
            torch.cuda.synchronize()
    """
    assert positions(source, DL103) == [("DL103", 5, 5), ("DL103", 10, 9), ("DL103", 15, 12)]
