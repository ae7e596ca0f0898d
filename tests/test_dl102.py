"""DL102 (accelerator-literal): literals where a device is chosen, never the selection idiom."""

from __future__ import annotations

import pytest

from devlint.config import Settings
from linting import lint, positions

TAIL = (
    " hardcodes an accelerator and fails on machines without one; select the device at run time "
    "(`\"cuda\" if torch.cuda.is_available() else \"cpu\"`) and pass it in"
)


def test_positions_and_messages() -> None:
    source = """
    import argparse
    import torch

    device = torch.device("cuda")
    gpu = "cuda:1"
    x = torch.zeros(3).to("cuda")
    y = torch.ones(2, device="mps")

    def build(device="cuda"):
        return torch.zeros(3, device=device)

    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cuda")
    state = torch.load("a.pt", map_location="cuda")
    t = torch.cuda.FloatTensor(3)
    torch.set_default_device("cuda")
    print(torch.device("cuda:0"))
    """
    found = lint(source)
    assert [(f.code, f.start.line, f.start.column, f.end.column, f.message) for f in found] == [
        ("DL102", 4, 23, 29, '`"cuda"` assigned as the device' + TAIL),
        ("DL102", 5, 7, 15, '`"cuda:1"` assigned as the device' + TAIL),
        ("DL102", 6, 23, 29, '`"cuda"` in `.to()`' + TAIL),
        ("DL102", 7, 26, 31, '`"mps"` as `device=`' + TAIL),
        ("DL102", 9, 18, 24, '`"cuda"` as the default of `device`' + TAIL),
        ("DL102", 13, 41, 47, '`"cuda"` as the command-line default' + TAIL),
        ("DL102", 14, 41, 47, '`"cuda"` as `map_location=`' + TAIL),
        ("DL102", 15, 5, 27, "`torch.cuda.FloatTensor` (a legacy CUDA tensor type)" + TAIL),
        ("DL102", 16, 26, 32, '`"cuda"` as the default device' + TAIL),
        ("DL102", 17, 20, 28, '`"cuda:0"` in `torch.device()`' + TAIL),
    ]


def test_set_default_tensor_type_cuda_is_reported_guarded_where_a_sampler_draws_indices() -> None:
    # ssd.pytorch's train.py: the CUDA default under `if args.cuda` breaks its shuffling DataLoader
    # (ssd.pytorch #578, #561). Its eval.py and test.py, and ECCV2022-RIFE's inference_video.py,
    # set it the same way and draw no indices: nothing fails there.
    found = lint(
        """
        import torch
        if torch.cuda.is_available():
            torch.set_default_tensor_type(torch.cuda.FloatTensor)
        loader = torch.utils.data.DataLoader(dataset, batch_size=4, shuffle=True)
        """
    )
    assert [(f.code, f.start.line, f.start.column) for f in found] == [("DL102", 3, 5)]
    assert "Expected a 'cuda' device type for generator" in found[0].message
    for draws in ("sampler = DistributedSampler(dataset)", "g = torch.Generator()", "a, b = random_split(dataset, [8, 2])"):
        assert [f.code for f in lint(f"import torch\nif torch.cuda.is_available():\n    torch.set_default_tensor_type('torch.cuda.FloatTensor')\n{draws}\n")] == ["DL102"]


def test_set_default_tensor_type_cuda_guarded_in_a_program_drawing_no_indices_is_silent() -> None:
    assert lint(
        """
        import torch
        if args.cuda and torch.cuda.is_available():
            torch.set_default_tensor_type("torch.cuda.FloatTensor")
        else:
            torch.set_default_tensor_type("torch.FloatTensor")
        net = build_net()
        """
    ) == []
    # Unguarded, it raises on every machine without CUDA, and the message says so (LLaMA-Adapter's
    # multimodal model, which resets the default type on the next line: no sampler is involved).
    found = lint("import torch\ntorch.set_default_tensor_type(torch.cuda.HalfTensor)\n")
    assert [(f.code, f.start.line, f.message) for f in found] == [
        (
            "DL102",
            2,
            "`torch.set_default_tensor_type` with a CUDA type raises on machines without CUDA (\"type ... not available\"); "
            "choose the type at run time, or create tensors with `device=` instead",
        )
    ]


IDIOMS = {
    "torch.device ternary": 'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")',
    "string ternary": 'device = "cuda" if torch.cuda.is_available() else "cpu"',
    "indexed string ternary": 'device = "cuda:0" if torch.cuda.is_available() else "cpu"',
    "ternary of torch.device calls": (
        'device = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")'
    ),
    "use_cuda flag": (
        "use_cuda = not args.no_cuda and torch.cuda.is_available()\n"
        'device = torch.device("cuda" if use_cuda else "cpu")\n'
        'kwargs = {"num_workers": 1, "pin_memory": True} if use_cuda else {}'
    ),
    "cuda/mps/cpu chain": (
        'device = "cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available() else "cpu"'
    ),
    "if/elif/else chain": (
        "if torch.cuda.is_available():\n"
        '    device = "cuda"\n'
        "elif torch.backends.mps.is_available():\n"
        '    device = torch.device("mps")\n'
        "else:\n"
        '    device = "cpu"'
    ),
    "argparse default from is_available": (
        "parser = argparse.ArgumentParser()\n"
        'parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")'
    ),
    "device.type comparison": 'if device.type == "cuda":\n    torch.cuda.synchronize()',
    "string in str(device)": 'on_gpu = "cuda" in str(device)',
    "device comparison with torch.device": 'moved = x.device != torch.device("cuda:0")',
    "membership of torch.device": 'if torch.device("cuda") in devices:\n    pass',
    "manual_seed_all": "torch.cuda.manual_seed_all(0)",
    "device_count": "n = torch.cuda.device_count()",
    "cudnn flags": "torch.backends.cudnn.benchmark = True\ntorch.backends.cudnn.deterministic = False",
    "multi-GPU rank": 'device = torch.device("cuda", local_rank)',
    "autocast device_type": 'with torch.autocast(device_type="cuda"):\n    pass',
    "device_type variable": 'device_type = "cuda"',
    "cpu literals": 'device = torch.device("cpu")\nx = torch.zeros(3, device="cpu").to("cpu")',
    "string in a message": 'print("training on cuda")\nlogger.info("cuda")',
    "a default never read": "def build(n, device='cuda'):\n    return torch.zeros(n)",
    "a default that only picks the autocast backend": (
        "def autocast(enabled, device='cuda'):\n"
        "    if device == 'mps':\n"
        "        return torch.autocast('cpu', enabled=False)\n"
        "    return torch.amp.autocast(device, enabled=enabled)"
    ),
    "command-line default with a fallback after parsing": (
        "parser = argparse.ArgumentParser()\n"
        "parser.add_argument('--device', default='cuda')\n"
        "parser.add_argument('--cache-device', default='cuda')\n"
        "parser.add_argument('-d', '--gpu', dest='accel_device', default='cuda:0')\n"
        "args = parser.parse_args()\n"
        "if args.device == 'cuda' and not torch.cuda.is_available():\n"
        "    args.device = 'cpu'\n"
        "cache = torch.device(args.cache_device if torch.cuda.is_available() else 'cpu')\n"
        "opts.accel_device = torch.device('cpu')"
    ),
}


@pytest.mark.parametrize("body", IDIOMS.values(), ids=IDIOMS.keys())
def test_idioms_are_never_reported(body: str) -> None:
    assert positions("import argparse\nimport torch\n" + body + "\n") == []


def test_defaults_used_as_devices_are_still_reported() -> None:
    source = """
    import argparse
    import torch

    def autocast_and_place(x, device="cuda"):
        with torch.amp.autocast(device):
            return x.to(device)

    def cycles_per_ms(device="cuda"):
        if device == "cpu":
            return 1.0
        return torch.cuda._sleep(1000)

    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--eval-device", default="cuda")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        args.eval_device = "cpu"
    x = torch.zeros(3, device=args.device)
    """
    assert positions(source) == [("DL102", 4, 34), ("DL102", 8, 26), ("DL102", 14, 41)]


def test_literal_under_availability_guard_is_not_reported() -> None:
    assert positions(
        """
        import torch
        if torch.cuda.is_available():
            x = torch.zeros(3, device="cuda")
        """
    ) == []


def test_get_device_as_a_target() -> None:
    found = lint(
        """
        import torch
        def f(a, b):
            return a.to(b.get_device())
        """
    )
    assert [(f.code, f.start.line, f.start.column) for f in found] == [("DL102", 3, 17)]
    assert found[0].message.startswith("`.to(b.get_device())` assumes a GPU")


def test_other_accelerators_availability_checks_guard_their_literals() -> None:
    # huggingface/accelerate state.py: the device ladder over vendor helpers.
    assert positions(
        """
        import torch
        from accelerate.utils import is_hpu_available, is_npu_available


        def default_device():
            if is_npu_available():
                return torch.device("npu")
            elif is_hpu_available():
                return torch.device("hpu")
            elif torch.cuda.is_available():
                return torch.device("cuda")
            return torch.device("cpu")
        """
    ) == []


def test_a_short_accelerator_name_inside_a_word_is_no_guard() -> None:
    # "input" holds "npu" and "output" holds "tpu": neither checks for an accelerator.
    assert positions(
        """
        import torch


        def f(input_ids, output):
            if input_ids is not None and output:
                return torch.device("npu")
        """
    ) == [("DL102", 6, 29)]


@pytest.mark.parametrize("literal", ['"npu"', "'hpu:0'", '"xla"', "'mtia'"])
def test_a_file_that_names_no_cuda_is_still_checked_for_other_accelerators(literal: str) -> None:
    found = lint(f"import torch\nrank = 0\ndevice = torch.device({literal})\n")
    assert [(f.code, f.start.line, f.start.column) for f in found] == [("DL102", 3, 23)]


def test_legacy_cuda_tensor_types_outside_the_idiom() -> None:
    # PyTorch-GAN-style scripts: the alias is fine as a ternary with the CPU type, not alone.
    source = """
    import torch

    cuda = torch.cuda.is_available()
    Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor
    Always = torch.cuda.FloatTensor
    x = torch.zeros(3).type(torch.cuda.LongTensor)
    y = torch.zeros(3).type("torch.cuda.FloatTensor")
    z = torch.zeros(3).type(torch.float16)
    """
    assert positions(source, Settings(select=("DL102",))) == [("DL102", 5, 10), ("DL102", 6, 25), ("DL102", 7, 25)]


def test_a_default_every_call_in_the_file_overrides_never_takes_effect() -> None:
    # gpt-fast's encode_tokens and score_sde's samplers: every caller passes the device.
    source = """
    import torch

    def encode(tokens, device="cuda"):
        return torch.tensor(tokens, device=device)

    def decode(tokens, device="cuda"):
        return torch.tensor(tokens, device=device)

    def public(tokens, device="cuda"):
        return torch.tensor(tokens, device=device)

    class Sampler:
        def step(self, x, device="cuda"):
            return x.to(device)

        def run(self, x, dev):
            return self.step(x, dev)

    def main(dev, options):
        encode([1], device=dev)
        encode([2], dev)
        decode([1], device=dev)
        decode([3])

    if __name__ == "__main__":
        main("cpu", None)
    """
    assert [(f.code, f.start.line) for f in lint(source)] == [("DL102", 6), ("DL102", 9)]
    # A module's public function is for users too (GroundingDINO's predict(), called
    # without a device in its README); a private one only for its file.
    library = source.replace('if __name__ == "__main__":', "if False:")
    assert [(f.code, f.start.line) for f in lint(library)] == [("DL102", 3), ("DL102", 6), ("DL102", 9), ("DL102", 13)]
    private = library.replace("encode", "_encode")
    assert [(f.code, f.start.line) for f in lint(private)] == [("DL102", 6), ("DL102", 9), ("DL102", 13)]


def test_get_device_of_an_imported_module_is_no_tensor_ordinal() -> None:
    # VAR's own `dist.get_device()` returns "cuda" or "cpu"; a tensor's returns a CUDA ordinal.
    source = """
    import dist

    def step(x, t):
        x = x.to(dist.get_device())
        return x.to(t.get_device())
    """
    assert [(f.code, f.start.line) for f in lint(source)] == [("DL102", 5)]


def test_code_that_only_a_multi_process_job_reaches_is_gpu_only() -> None:
    # DETR's all_gather and reduce helpers (copied into GroundingDINO, Deformable DETR, DINO):
    # single-process runs, the CPU ones among them, return first.
    source = """
    import torch
    import torch.distributed as dist

    def is_dist_avail_and_initialized():
        if not dist.is_available():
            return False
        if not dist.is_initialized():
            return False
        return True

    def synchronize(count):
        if not is_dist_avail_and_initialized():
            return
        t = torch.tensor([count], device="cuda")
        dist.all_reduce(t)

    def all_gather(data):
        world_size = get_world_size()
        if world_size == 1:
            return [data]
        return torch.tensor([1], device="cuda")

    def reduce(t):
        if dist.get_world_size() > 1:
            t = t.to("cuda")
        return t

    def available_only(t):
        if dist.is_available():
            t = t.to("cuda")
        return t

    def get_world_size():
        if not is_dist_avail_and_initialized():
            return 1
        return dist.get_world_size()
    """
    assert [(f.code, f.start.line) for f in lint(source)] == [("DL102", 30)]


def test_a_default_no_read_of_the_parameter_can_see_is_not_reported() -> None:
    # shap-e's `RayRenderer.render_views(..., device=torch.device("cuda"))` passes
    # `device=self.device` on and mmf's `MMFTrainerMock.__init__(..., device="cuda")` moves the
    # model with `self.device`: neither reads its parameter. shap-e's `render_views_from_stf`
    # runs `device = camera.origin.device` before any read. Whatever a caller passes or
    # omits, the default reaches nothing. A default read first (line 22, also in the new
    # value), one rebound in a branch only (line 27) or read through `locals()` (line 33) stays.
    source = """
    import torch


    class RayRenderer(torch.nn.Module):
        def render_views(self, batch, device: torch.device = torch.device("cuda")):
            return render_views_from_rays(batch, device=self.device)


    class TrainerMock(Base):
        def __init__(self, n, device="cuda", fp16=False):
            super().__init__(n)
            model = torch.nn.Linear(1, 1)
            model.to(self.device)


    def render_views_from_stf(camera, device: torch.device = torch.device("cuda")):
        device = camera.origin.device
        device_type = device.type
        return torch.zeros(3, device=device)


    def read_in_the_new_value(camera, device="cuda"):
        device = torch.device(device)
        return torch.zeros(3, device=device)


    def rebound_in_a_branch(camera, device="cuda"):
        if camera is not None:
            device = camera.origin.device
        return torch.zeros(3, device=device)


    def read_through_locals(n, device="cuda"):
        return make(**locals())
    """
    assert positions(source) == [("DL102", 22, 42), ("DL102", 27, 40), ("DL102", 33, 35)]
