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
    # torch.accelerator runs on MPS or XPU as well: a Mac with MPS does not raise, only a machine with no accelerator.
    assert [f.message for f in lint(source, DL103)][4] == (
        "`torch.accelerator.synchronize()` raises on a machine without an accelerator (CPU-only CI, a server or laptop "
        "without a GPU); run it only where one is (`if torch.accelerator.is_available():`) or only for an accelerator "
        "device (`if device.type != \"cpu\":`)"
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


def test_a_file_importing_an_nvidia_runtime_at_its_top_level_is_gpu_only() -> None:
    # ChatTTS's Transformer Engine model imports `transformer_engine` at its top level; YOLOX's
    # demo imports torch2trt only on its `--trt` path, and the rest of it runs anywhere.
    top = """
    import torch
    import transformer_engine as te

    def build(model):
        torch.cuda.synchronize()
        return model.cuda()
    """
    branch = """
    import torch

    def build(model, trt):
        if trt:
            from torch2trt import TRTModule
            return TRTModule()
        torch.cuda.synchronize()
        return model.cuda()
    """
    settings = Settings(select=("DL101", "DL103"))
    assert positions(top, settings) == []
    assert positions(top.replace("transformer_engine as te", "tinycudann as tcnn"), settings) == []
    assert positions(branch, settings) == [("DL103", 7, 5), ("DL101", 8, 12)]


def test_a_script_whose_lightning_runners_all_need_cuda_is_gpu_only() -> None:
    # lit-llama's fine-tuning scripts: `L.Fabric(accelerator="cuda")` raises without CUDA, so
    # the script's CUDA calls and its checkpoint loads run where CUDA is. A runner built for
    # "gpu" (CUDA or Apple's MPS), for an accelerator a variable holds, or beside one built for
    # the CPU leaves the file portable.
    def script(*accelerators: str) -> str:
        runners = "".join(f"    fabric = L.Fabric(accelerator={a}, devices=1)\n" for a in accelerators)
        return (
            "import lightning as L\nimport torch\n\n\ndef main(path, accelerator):\n"
            + runners
            + "    torch.cuda.synchronize()\n    return torch.load(path)\n"
        )

    settings = Settings(select=("DL103", "DL501"))
    assert positions(script('"cuda"'), settings) == []
    assert positions(script('"cuda"', '"cuda"'), settings) == []
    assert positions(script('"gpu"'), settings) == [("DL103", 7, 5), ("DL501", 8, 12)]
    assert positions(script("accelerator"), settings) == [("DL103", 7, 5), ("DL501", 8, 12)]
    assert positions(script('"cuda"', '"cpu"'), settings) == [("DL103", 8, 5), ("DL501", 9, 12)]
    assert positions(script(), settings) == [("DL103", 6, 5), ("DL501", 7, 12)]


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


def test_a_function_called_only_behind_a_device_check() -> None:
    # StyleGAN3's `_filtered_lrelu_cuda` and conv2d_gradfix: CUDA-only helpers, each reached only
    # where the input is on CUDA; a helper with one unguarded call stays reported.
    source = """
    import torch


    def _cuda_impl(x):
        torch.cuda.synchronize()
        return x


    def _should_use_custom_op(x):
        assert isinstance(x, torch.Tensor)
        if not ENABLED:
            return False
        if x.device.type != "cuda":
            return False
        return True


    def _conv_op(x):
        return torch.cuda.get_device_capability(x.device)


    def _timed(x):
        torch.cuda.synchronize()


    def run(x):
        if x.device.type == "cuda":
            x = _cuda_impl(x)
        if _should_use_custom_op(x):
            _conv_op(x)
        if x.is_cuda:
            _timed(x)
        _timed(x)
        return x
    """
    assert positions(source, DL103) == [("DL103", 23, 5)]


def test_the_callers_guards_carry_through_a_chain_of_helpers() -> None:
    source = """
    import torch


    def _name():
        return torch.cuda.get_device_name()


    def _build():
        return _name()


    def run(x):
        if torch.cuda.is_available():
            _build()
    """
    assert positions(source, DL103) == []


def test_past_a_check_that_returns_for_other_devices() -> None:
    source = """
    import torch


    def sync(x):
        if x.device.type != "cuda":
            return x
        torch.cuda.synchronize()
        return x


    def move(x):
        if x.device.type != "cuda":
            torch.cuda.synchronize()
        return x
    """
    assert positions(source, DL103) == [("DL103", 13, 9)]


def test_code_that_takes_one_gpu_per_rank() -> None:
    # StyleGAN3's training loop: `device = torch.device("cuda", rank)`, then CUDA events and streams.
    source = """
    import torch


    def training_loop(rank=0):
        start = torch.cuda.Event(enable_timing=True)
        device = torch.device("cuda", rank)
        torch.cuda.reset_peak_memory_stats()
        end = torch.cuda.Event(enable_timing=True)
    """
    assert positions(source, DL103) == [("DL103", 5, 13)]


def test_a_function_that_captures_a_cuda_graph() -> None:
    # mamba's and gpt-fast's decoding: warm-up streams, then `torch.cuda.graph` capture.
    source = """
    import torch


    def capture_graph(model, x):
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            y = model(x)
        return graph


    def decode(model, x):
        torch.cuda.synchronize()
    """
    assert positions(source, DL103) == [("DL103", 14, 5)]


def test_strict_reports_what_callers_guard() -> None:
    source = """
    import torch


    def _sync():
        torch.cuda.synchronize()


    def run():
        if torch.cuda.is_available():
            _sync()
    """
    assert positions(source, Settings(select=("DL103",), strict=True)) == [("DL103", 5, 5)]


def test_a_name_that_merely_contains_a_device_word_is_no_check() -> None:
    # tortoise-tts: `if voice_samples is not None:` is no MPS check ("sa-mps").
    source = """
    import torch


    def run(voice_samples, has_mps, use_xpu):
        if voice_samples is not None:
            torch.cuda.synchronize()
        if has_mps:
            torch.cuda.synchronize()
        if use_xpu:
            torch.cuda.synchronize()
    """
    assert positions(source, DL103) == [("DL103", 6, 9)]


def test_cuda_default_generators_is_empty_without_cuda() -> None:
    # transformers' Reformer seeds from `torch.cuda.default_generators` only when it has some:
    # the tuple is empty until CUDA is there and initialised.
    source = """
    import sys
    import torch

    def init_seed():
        if hasattr(torch.cuda, "default_generators") and len(torch.cuda.default_generators) > 0:
            device_idx = torch.cuda.current_device()
            return torch.cuda.default_generators[device_idx].seed()
        return int(torch.seed() % sys.maxsize)
    """
    assert lint(source) == []


def test_a_test_that_transformers_skips_without_gpus_states_its_hardware() -> None:
    source = """
    import unittest
    import torch
    from transformers.testing_utils import require_torch_multi_gpu, require_torch_non_multi_gpu

    class ModelTest(unittest.TestCase):
        @require_torch_multi_gpu
        def test_model_parallelization(self):
            torch.cuda.synchronize()

        @require_torch_non_multi_gpu
        def test_single(self):
            torch.cuda.synchronize()
    """
    assert [(f.code, f.start.line) for f in lint(source)] == [("DL103", 12)]


def test_a_switch_rechecked_in_its_function_and_a_loop_over_the_gpus_are_guards() -> None:
    # I-JEPA's gpu_timer(closure, log_timings=True) reassigns the switch from a check;
    # stable-dreamfusion's get_GPU_mem loops over range(torch.cuda.device_count()), 0 without CUDA.
    source = """
    import torch

    def gpu_timer(closure, log_timings=True):
        log_timings = log_timings and torch.cuda.is_available()
        if log_timings:
            start = torch.cuda.Event(enable_timing=True)
        return closure()

    def other(x, use_cuda=True):
        if use_cuda:
            torch.cuda.synchronize()
        return x

    def get_gpu_mem():
        num = torch.cuda.device_count()
        mems = []
        for i in range(num):
            mems.append(torch.cuda.mem_get_info(i))
        for i in range(max(1, num)):
            mems.append(torch.cuda.mem_get_info(i))
        return mems
    """
    assert [(f.code, f.start.line) for f in lint(source)] == [("DL103", 11), ("DL103", 20)]


def test_a_backend_the_file_can_only_set_to_nccl_makes_it_gpu_only() -> None:
    # DETR/DeiT/MAE `init_distributed_mode`: the backend goes through an attribute set just before.
    attribute = """
    import os
    import torch


    def init_distributed_mode(args):
        if 'RANK' in os.environ and 'WORLD_SIZE' in os.environ:
            args.gpu = int(os.environ['LOCAL_RANK'])
        else:
            args.distributed = False
            return
        torch.cuda.set_device(args.gpu)
        args.dist_backend = 'nccl'
        torch.distributed.init_process_group(backend=args.dist_backend, init_method=args.dist_url)
    """
    # Depth-Anything-V2's `setup_distributed`: a parameter default no call of the file overrides.
    default = """
    import torch
    import torch.distributed as dist


    def setup_distributed(backend="nccl", port=None):
        num_gpus = torch.cuda.device_count()
        rank = 0
        torch.cuda.set_device(rank % num_gpus)
        dist.init_process_group(backend=backend, rank=rank)
        return rank
    """
    # MoCo's launchers: a command-line default.
    option = """
    import argparse
    import torch
    import torch.distributed as dist

    parser = argparse.ArgumentParser()
    parser.add_argument("--dist-backend", default="nccl", type=str, help="distributed backend")
    args = parser.parse_args()
    dist.init_process_group(backend=args.dist_backend, init_method="env://")
    torch.cuda.synchronize()
    """
    assert positions(attribute, DL103) == []
    assert positions(default, DL103) == []
    assert positions(option, DL103) == []


def test_a_backend_the_file_may_set_otherwise_keeps_the_findings() -> None:
    # EDM's `dist.init()`: gloo on Windows.
    conditional = """
    import os
    import torch

    def init():
        backend = 'gloo' if os.name == 'nt' else 'nccl'
        torch.distributed.init_process_group(backend=backend, init_method='env://')
        torch.cuda.set_device(0)
    """
    overridden = """
    import torch
    import torch.distributed as dist

    def setup(backend="nccl"):
        dist.init_process_group(backend=backend)
        torch.cuda.synchronize()

    setup("gloo")
    """
    # Set to "nccl" only on one path: the object may arrive with any backend.
    maybe = """
    import torch

    def init(args):
        if args.dist_backend is None:
            args.dist_backend = "nccl"
        torch.distributed.init_process_group(backend=args.dist_backend)
        torch.cuda.synchronize()
    """
    choices = """
    import argparse
    import torch
    import torch.distributed as dist

    parser = argparse.ArgumentParser()
    parser.add_argument("--dist-backend", default="nccl", choices=["nccl", "gloo"])
    args = parser.parse_args()
    dist.init_process_group(backend=args.dist_backend)
    torch.cuda.synchronize()
    """
    assert positions(conditional, DL103) == [("DL103", 7, 5)]
    assert positions(overridden, DL103) == [("DL103", 6, 5)]
    assert positions(maybe, DL103) == [("DL103", 7, 5)]
    assert positions(choices, DL103) == [("DL103", 9, 1)]


def test_a_check_in_the_left_operand_of_and_or_guards_the_right_one() -> None:
    # `A and B` evaluates B only where A is true, `A or B` only where A is false. StyleGAN3's ops
    # build their plugin as `impl == 'cuda' and x.device.type == 'cuda' and _init()`; torchtune's
    # `torch.cuda.is_available() and torch.cuda.get_device_capability() >= (7, 5)`, dgl's
    # `if N.is_cuda and torch.cuda.get_device_capability()[0] < 7:`, HydraGNN's and litgpt's
    # capability checks have the same shape. A check on the other side of the operator, or no
    # check at all, guards nothing.
    source = """
    import torch


    def _device_name():
        return torch.cuda.get_device_name().lower()


    def _init():
        return bool(_device_name())


    def bias_act(x, b, impl="cuda"):
        if impl == "cuda" and x.device.type == "cuda" and _init():
            return x
        return x + b


    def supports_bf16():
        return torch.cuda.is_available() and torch.cuda.get_device_capability() >= (8, 0)


    def old_gpu(n):
        return n.is_cuda and torch.cuda.get_device_capability()[0] < 7


    def plain_or_capable():
        return not torch.cuda.is_available() or torch.cuda.get_device_capability()[0] >= 8


    def wrong_way(x):
        return x.is_cuda or torch.cuda.synchronize()


    def no_check(x):
        return x.ndim and torch.cuda.synchronize()


    def left_of_the_check(x):
        return torch.cuda.current_device() and x.is_cuda
    """
    assert positions(source, DL103) == [("DL103", 31, 25), ("DL103", 35, 23), ("DL103", 39, 12)]


def test_a_flag_list_filled_from_the_command_line_guards_like_its_name() -> None:
    # pix2pixHD's and SPADE's BaseOptions.parse: `--gpu_ids -1` selects the CPU.
    source = """
    import argparse

    import torch


    def parse():
        parser = argparse.ArgumentParser()
        parser.add_argument("--gpu_ids", type=str, default="0", help="use -1 for CPU")
        opt = parser.parse_args()
        str_ids = opt.gpu_ids.split(",")
        opt.gpu_ids = []
        for str_id in str_ids:
            if int(str_id) >= 0:
                opt.gpu_ids.append(int(str_id))
        if len(opt.gpu_ids) > 0:
            torch.cuda.set_device(opt.gpu_ids[0])
        return opt


    def switch():
        use_cuda = False
        if use_cuda:
            torch.cuda.synchronize()
    """
    assert positions(source, DL103) == [("DL103", 23, 9)]


def test_a_loop_over_at_most_the_gpu_count_runs_only_where_gpus_are() -> None:
    # FastChat's get_gpu_memory: `min(k, device_count())` is 0 without a GPU, so is either choice.
    assert positions(
        """
        import torch

        def memory(max_gpus=None):
            n = torch.cuda.device_count() if max_gpus is None else min(max_gpus, torch.cuda.device_count())
            for i in range(n):
                with torch.cuda.device(i):
                    torch.cuda.current_device()

        def capped(k):
            for i in range(max(k, torch.cuda.device_count())):
                torch.cuda.get_device_properties(i)
        """
    ) == [("DL103", 11, 9)]


def test_a_data_parallel_without_device_ids_has_no_gpu() -> None:
    # PyTorch-Encoding's DataParallelModel: DataParallel sets `device_ids = []` where no
    # accelerator is, so past `if not self.device_ids: return`, CUDA is there.
    found = lint(
        """
        import torch
        from torch.nn.parallel.data_parallel import DataParallel

        class DataParallelModel(DataParallel):
            def replicate(self, module, device_ids):
                if not self.device_ids:
                    return [module]
                with torch.cuda.device(self.device_ids[0]):
                    return super().replicate(module, device_ids)

        class Plain:
            def run(self):
                if not self.device_ids:
                    return None
                torch.cuda.synchronize()
        """
    )
    assert [(f.code, f.start.line) for f in found] == [("DL103", 15)]


def test_a_parameter_every_call_of_a_script_passes_the_cpu_flag_is_that_flag() -> None:
    # FaceBoxes' and Pytorch_Retinaface's test scripts: `load_model(net, path, load_to_cpu)`,
    # called only with the user's `args.cpu`, reads `torch.cuda.current_device()` in the `else`
    # of `if load_to_cpu:`. A call passing anything else (a constant, a recursive call passing
    # the parameter on) keeps it reported: `load_to_cpu` alone names where weights go.
    source = """
        import torch

        def load_model(model, path, load_to_cpu):
            if load_to_cpu:
                return torch.load(path, map_location="cpu")
            device = torch.cuda.current_device()
            return torch.load(path, map_location=lambda s, loc: s.cuda(device))

        if __name__ == "__main__":
            net = load_model(None, args.trained_model, args.cpu)
        """
    assert positions(source) == []
    assert positions(source + "    load_model(None, 'w.pth', False)\n") == [("DL103", 6, 14)]
    assert positions(source.replace('if __name__ == "__main__":', "if True:")) == [("DL103", 6, 14)]


def test_a_branch_only_a_launched_job_takes_is_gpu_only_by_design() -> None:
    # `torchrun` sets LOCAL_RANK, `torch.distributed.launch` passes `--local_rank`; a script
    # started alone reads -1 (transformers' examples, YOLOv3's and YOLOP's train.py, RIFE).
    # A default other than -1, an option the file does not declare so, or a test that the
    # lone process passes too (`in (-1, 0)`) is no such branch.
    assert positions(
        """
        import argparse
        import os
        import torch

        LOCAL_RANK = int(os.getenv("LOCAL_RANK", "-1"))
        ZERO = int(os.getenv("LOCAL_RANK", 0))
        parser = argparse.ArgumentParser()
        parser.add_argument("--local_rank", type=int, default=-1)
        parser.add_argument("--node_rank", type=int, default=-1)
        args = parser.parse_args()

        def main():
            if LOCAL_RANK != -1:
                torch.cuda.set_device(LOCAL_RANK)
            if args.local_rank == -1:
                device = torch.device("cpu")
            else:
                torch.cuda.set_device(args.local_rank)
            if ZERO != -1:
                torch.cuda.set_device(ZERO)
            if args.node_rank != -1:
                torch.cuda.set_device(args.node_rank)
            if args.local_rank in (-1, 0):
                torch.cuda.synchronize()
        """
    ) == [("DL103", 20, 9), ("DL103", 22, 9), ("DL103", 24, 9)]


def test_a_cuda_device_call_given_a_tensors_device_index_does_nothing_on_the_cpu() -> None:
    # TorchSeg's evaluator: `with torch.cuda.device(input_data.get_device()):`. `get_device()`
    # is -1 for a CPU tensor, and `torch.cuda.device(-1)` and `torch.cuda.set_device(-1)` do
    # nothing; without CUDA every tensor is on the CPU. Any other index still raises there.
    assert positions(
        """
        import torch

        def run(net, x, rank):
            with torch.cuda.device(x.get_device()):
                y = net(x)
            torch.cuda.set_device(x.get_device())
            torch.cuda.set_device(rank)
            return torch.cuda.get_device_name(x.get_device())
        """
    ) == [("DL103", 7, 5), ("DL103", 8, 12)]
