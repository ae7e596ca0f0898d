"""DL101 (cuda-call): exact findings, guards, strict mode."""

from __future__ import annotations

from dataclasses import replace

import pytest

from devlint.config import Settings
from linting import ISSUE2, lint, positions

MESSAGE = "`{target}.cuda()` hardcodes a CUDA GPU and fails on machines without one; use `.to(device)` with a selected device"


def test_module_and_tensor_cuda_calls() -> None:
    source = """
    import torch
    import torch.nn as nn

    model = nn.Linear(10, 2)
    model.cuda()
    x = torch.randn(4, 10).cuda(non_blocking=True)
    """
    found = lint(source)
    assert [(f.code, f.start.line, f.start.column, f.end.line, f.end.column) for f in found] == [
        ("DL101", 5, 1, 5, 13),
        ("DL101", 6, 5, 6, 47),
    ]
    assert found[0].message == MESSAGE.format(target="model")
    assert found[1].message == MESSAGE.format(target="torch.randn(4, 10)")


def test_several_calls_in_one_statement_are_one_finding() -> None:
    found = lint(
        """
        import torch
        def step(x, y):
            x, y = x.cuda(), y.cuda()
            return x, y
        """
    )
    assert [(f.code, f.start.line, f.start.column) for f in found] == [("DL101", 3, 12)]
    assert found[0].message == (
        "2 `.cuda()` calls (`x.cuda()`, `y.cuda()`) hardcode a CUDA GPU and fail on machines without one; "
        "use `.to(device)` with a selected device"
    )


def test_multiline_receiver_is_quoted_on_one_line() -> None:
    found = lint(
        """
        import torch.nn as nn
        net = nn.Sequential(
            nn.Linear(2, 2),
        ).cuda()
        """
    )
    assert len(found) == 1
    assert "\n" not in found[0].message
    assert found[0].message.startswith("`nn.Sequential(nn.Linear(2, 2)).cuda()`")


GUARDED = {
    "if is_available": """
        import torch
        model = torch.nn.Linear(2, 2)
        if torch.cuda.is_available():
            model.cuda()
        """,
    "flag derived from is_available": """
        import torch
        use_cuda = not args.no_cuda and torch.cuda.is_available()
        x = torch.zeros(3)
        if use_cuda:
            x = x.cuda()
        """,
    "ternary": """
        import torch
        x = torch.zeros(3)
        x = x.cuda() if torch.cuda.is_available() else x
        """,
    "device.type comparison": """
        import torch
        def place(t, device):
            if device.type == "cuda":
                return t.cuda()
            return t
        """,
    "early exit": """
        import sys
        import torch
        if not torch.cuda.is_available():
            sys.exit("needs a GPU")
        model = torch.nn.Linear(2, 2).cuda()
        """,
    "flag from an aliased availability call": """
        import torch
        from torch.cuda import is_available as avail
        ok = avail()
        x = torch.zeros(3)
        if ok:
            x = x.cuda()
        """,
    "flag from an attribute of a device object": """
        import torch
        ready = cfg.device.type.startswith("cu")
        x = torch.zeros(3)
        if ready:
            x = x.cuda()
        """,
    "a flag's attribute in a larger test": """
        import torch
        cfg.use = torch.cuda.is_available()
        x = torch.zeros(3)
        if cfg.use.now and verbose:
            x = x.cuda()
        """,
    "a flag as an attribute name in a larger test": """
        import torch
        ok = torch.cuda.is_available()
        x = torch.zeros(3)
        if cfg.ok and verbose:
            x = x.cuda()
        """,
    "the project's own word for the GPU": """
        import torch
        def main(args):
            x = torch.zeros(3)
            if args.device == "gpu":
                x = x.cuda()
        """,
    "else of a cpu check": """
        import torch
        def place(t, device):
            if device == "cpu":
                return t
            else:
                return t.cuda()
        """,
}


@pytest.mark.parametrize("source", GUARDED.values(), ids=GUARDED.keys())
def test_guarded_cuda_is_not_reported(source: str) -> None:
    assert positions(source) == []


@pytest.mark.parametrize("source", GUARDED.values(), ids=GUARDED.keys())
def test_strict_reports_guarded_cuda(source: str) -> None:
    codes = [code for code, _, _ in positions(source, replace(ISSUE2, strict=True))]
    assert codes == ["DL101"]


def test_unguarded_after_guarded_block_is_reported() -> None:
    assert positions(
        """
        import torch
        m = torch.nn.Linear(2, 2)
        if torch.cuda.is_available():
            m.cuda()
        m.cuda()
        """
    ) == [("DL101", 5, 1)]


def test_not_a_cuda_call() -> None:
    assert positions(
        """
        import torch
        torch.cuda.synchronize()
        torch.cuda.manual_seed_all(0)
        ok = torch.cuda.is_available()
        n = torch.cuda.device_count()
        torch.backends.cudnn.benchmark = True
        cuda = x.cuda
        is_gpu = t.is_cuda
        """,
        Settings(select=("DL101",)),
    ) == []


def test_file_without_cuda_is_not_parsed() -> None:
    assert positions("import torch\nx = torch.zeros(3)\n") == []


def test_quoted_code_keeps_its_spacing_also_when_truncated() -> None:
    found = lint(
        """
        import torch
        a = torch.tensor(table["two  spaces"]).cuda()
        b = torch.tensor(table["two  spaces"], dtype=torch.float32, requires_grad=False).cuda()
        """
    )
    assert [f.message.split("` hardcodes")[0] for f in found] == [
        '`torch.tensor(table["two  spaces"]).cuda()',
        '`torch.tensor(table["two  spaces"], dtype=torch.float32, r....cuda()',
    ]


def test_a_flag_set_true_only_past_a_cuda_check_guards() -> None:
    # VAR's dist.py: `__initialized = True` only after `if not torch.cuda.is_available(): return`.
    source = """
    import torch

    initialized = False
    ready = False

    def initialize():
        global initialized, ready
        ready = True
        if not torch.cuda.is_available():
            return
        initialized = True

    def allreduce(t):
        if initialized:
            t = t.cuda()
        if ready:
            t = t.cuda()
        return t
    """
    assert [(f.code, f.start.line) for f in lint(source)] == [("DL101", 17)]


def test_a_cuda_call_after_a_multi_line_receiver_is_reported_where_it_is() -> None:
    # Real-Time-Voice-Cloning's `WaveRNN(<12 lines of arguments>).cuda()`.
    source = """
    import torch.nn as nn

    model = nn.Linear(
        4,
        4,
    ).cuda()
    other = nn.Linear(4, 4).cuda()
    """
    assert [(f.code, f.start.line, f.start.column, f.end.column) for f in lint(source)] == [("DL101", 6, 3, 7), ("DL101", 7, 9, 31)]


def test_a_cuda_method_does_what_its_caller_asked_for() -> None:
    # gpt-fast's GPTQ MultiInput.cuda() moves what it holds: the caller asked for CUDA.
    source = """
    import torch

    class MultiInput:
        def __init__(self, values):
            self.values = values

        def cuda(self):
            self.values = [v.cuda() for v in self.values]
            return self

        def gpu(self):
            self.values = [v.cuda() for v in self.values]
            return self
    """
    assert [(f.code, f.start.line) for f in lint(source)] == [("DL101", 12)]


def test_self_cuda_in_a_class_with_its_own_cuda_method_is_that_method() -> None:
    # FLUX's TensorRT engine: `to()` calls the class's own `cuda()` for a non-CPU device only
    # (the fix `self.to(device)` would recurse for ever). A base of the file counts too.
    assert positions(
        """
        import torch

        class BaseEngine:
            def cuda(self):
                return self

        class Engine(BaseEngine):
            def to(self, device):
                if device == torch.device("cpu"):
                    return self.cpu()
                return self.cuda()

        class Plain:
            def to(self, device):
                return self.cuda()
        """
    ) == [("DL101", 15, 16)]


def test_no_fix_turns_self_cuda_inside_to_into_a_call_of_itself() -> None:
    found = lint(
        """
        import torch

        class Net(torch.nn.Module):
            def to(self, *args, **kwargs):
                device = torch.device("cuda")
                return self.cuda()
        """
    )
    assert [(f.code, f.fix) for f in found if f.code == "DL101"] == [("DL101", None)]


def test_a_gpu_flag_compared_with_none_guards_only_where_it_is_set() -> None:
    # MoCo v3's linear evaluation: `if args.gpu is None: torch.load(args.resume)` runs where no
    # GPU was chosen; `is not None` is the check.
    assert positions(
        """
        import torch

        def f(args):
            if args.gpu is None:
                a = torch.zeros(1).cuda()
            if args.gpu is not None:
                b = torch.zeros(1).cuda()
        """
    ) == [("DL101", 5, 13)]


def test_a_name_bound_to_a_moved_object_is_no_flag() -> None:
    # MoCo v3's linear evaluation: `model = model.cuda(args.gpu)`, then `parameters =
    # list(model.parameters())`, `assert len(parameters) == 2` asserts nothing about CUDA.
    assert positions(
        """
        import torch

        def main_worker(args, model):
            model = model.cuda()
            parameters = list(model.parameters())
            assert len(parameters) == 2
            x = torch.zeros(1).cuda()
        """
    ) == [("DL101", 4, 13), ("DL101", 7, 9)]


def test_a_local_function_nothing_calls_never_runs() -> None:
    # DeepSDF's `empirical_stat`, defined in `main_function` and in the `__main__` block, its
    # one call commented out: a local function no code reads cannot be called.
    source = """
import torch


def main():
    def unused(x):
        return x.cuda()

    @torch.no_grad()
    def registered(x):
        return x.cuda()

    def used(x):
        return x.cuda()

    return used(torch.zeros(3))


if __name__ == "__main__":
    def stat(x):
        return x.cuda()

    main()
"""
    assert [(f.code, f.start.line) for f in lint(source)] == [("DL101", 10), ("DL101", 13)]


def test_a_flag_asking_for_the_cpu_guards_its_else() -> None:
    # Pointnet++'s `if not args.use_cpu: classifier.cuda()`, the PyTorch examples' `--no-cuda`:
    # the user's own switch, read with its polarity. `if args.no_cuda:` is the CPU path.
    found = lint(
        """
        import torch
        model = torch.nn.Linear(2, 2)
        if not args.use_cpu:
            model = model.cuda()
        if not args.no_cuda:
            model.cuda()
        if args.cpu:
            pass
        else:
            model.cuda()
        use_cuda = not args.disable_gpu
        if use_cuda:
            model.cuda()
        if args.no_cuda:
            model.cuda()
        """
    )
    assert [(f.code, f.start.line) for f in found] == [("DL101", 15)]


def test_a_setting_read_by_key_is_the_flag_read_by_attribute() -> None:
    # FaceBoxes' and Pytorch_Retinaface's `GPU = cfg["gpu_train"]` (vendored by KAIR and GPEN):
    # `cfg["gpu_train"]` is the setting `cfg.gpu_train` would be, with the same polarity rules.
    found = lint(
        """
        import torch
        from data import cfg
        GPU = cfg["gpu_train"]
        def loss(x, opt):
            if GPU:
                x = x.cuda()
            if cfg["gpu_train"]:
                x = x.cuda()
            if cfg["batch"]:
                x = x.cuda()
            if cfg[0]:
                x = x.cuda()
            if opt["no_cuda"]:
                return x
            return x.cuda()
        """
    )
    assert [(f.code, f.start.line) for f in found] == [("DL101", 10), ("DL101", 12)]


def test_a_flag_set_to_one_only_under_a_check() -> None:
    # pytorch-YOLOv4's evaluate_on_coco: `use_cuda = 1` under the check, `0` in its else.
    found = lint(
        """
        import torch
        def main(model):
            if torch.cuda.is_available():
                use_cuda = 1
            else:
                use_cuda = 0
            if use_cuda:
                model.cuda()
            on = 2
            if on:
                model.cuda()
        """
    )
    assert [(f.code, f.start.line) for f in found] == [("DL101", 11)]


def test_where_something_is_kept_is_no_cpu_switch_and_an_exit_guards_only_what_follows() -> None:
    # KAIR's RVRT: `if self.cpu_cache:` offloads features and brings them back with `.cuda()`;
    # `cpu_cache` names where features are kept, not where the model runs. The body of
    # `if not torch.cuda.is_available(): ... return` is the CPU path; only what follows has CUDA.
    found = lint(
        """
        import torch
        class M(torch.nn.Module):
            def up(self, feats):
                if self.cpu_cache:
                    return [f.cuda() for f in feats]
                return feats
        def main(x):
            if not torch.cuda.is_available():
                x = x.cuda()
                return x
            return x.cuda()
        """
    )
    assert [(f.code, f.start.line) for f in found] == [("DL101", 5), ("DL101", 9)]


def test_an_availability_exit_on_one_line_guards_what_follows() -> None:
    assert positions(
        """
        import torch

        def to_gpu(model):
            if not torch.cuda.is_available(): return model
            return model.cuda()

        def to_gpu_twice(model):
            if torch.cuda.is_available(): return model.cuda()
            return model.cuda()
        """
    ) == [("DL101", 9, 12)]


def test_an_isinstance_test_of_a_cuda_tensor_type_is_a_check() -> None:
    # 3D-ResNets-PyTorch's `downsample_basic_block`: `isinstance(out.data, torch.cuda.FloatTensor)`
    # is true only for a CUDA tensor, as `out.is_cuda` is. A CPU type checks nothing.
    assert positions(
        """
        import torch

        def pad(out, zero_pads):
            if isinstance(out.data, torch.cuda.FloatTensor):
                zero_pads = zero_pads.cuda()
            if isinstance(out.data, torch.FloatTensor):
                zero_pads = zero_pads.cuda()
            return zero_pads
        """
    ) == [("DL101", 7, 21)]


def test_a_switch_every_call_of_a_script_passes_a_check_is_that_check() -> None:
    # loss-landscape's cifar10/main.py: `def train(..., use_cuda=True)`, called only with
    # `use_cuda = torch.cuda.is_available()`. A call passing a constant, or leaving the
    # default, keeps the switch reported.
    source = """
        import torch

        def train(loader, net, use_cuda=True):
            net.train()
            for inputs in loader:
                if use_cuda:
                    inputs = inputs.cuda()
                net(inputs)

        if __name__ == "__main__":
            use_cuda = torch.cuda.is_available()
            train([], None, use_cuda)
            train([], None, use_cuda=torch.cuda.is_available())
        """
    assert positions(source) == []
    assert positions(source + "    train([], None)\n") == [("DL101", 7, 22)]
    assert positions(source + "    train([], None, True)\n") == [("DL101", 7, 22)]
    # taming-transformers' `gpu = True` in `__main__`, passed on: a name says nothing of its value.
    assert positions(source.replace("use_cuda = torch.cuda.is_available()", "use_cuda = True")) == [("DL101", 7, 22)]
