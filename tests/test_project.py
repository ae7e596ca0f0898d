"""Project-wide knowledge: classes, helpers and device variables from other files of the project."""

from __future__ import annotations

import ast
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from devlint import engine
from devlint.analysis.summary import ModuleSummary, summarise_imports
from devlint.cache import Cache
from devlint.cli import main
from devlint.config import Settings
from devlint.file_result import FileResult

ROOT = Path(__file__).resolve().parent.parent
PROJECTS = ROOT / "fixtures" / "projects"


def run(*args: str) -> str:
    result = CliRunner().invoke(main, ["check", "--no-cache", *args], env={"NO_COLOR": "1"})
    assert result.exit_code in (0, 1), result.output
    return result.stdout


def _count_checks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files the engine analyses from now on, in order (a cached result is not one)."""
    checked: list[str] = []
    original = engine._check_one

    def counting(task):  # noqa: ANN001, ANN202
        checked.append(task[1])
        return original(task)

    monkeypatch.setattr(engine, "_check_one", counting)
    return checked


def _cached_project(
    root: Path, monkeypatch: pytest.MonkeyPatch, sources: dict[str, str]
) -> tuple[Callable[..., list[FileResult]], list[str]]:
    """Writes `sources` under `root`; a check of all of them (with the project's cache unless
    `cached=False`), and the files each check analyses, in order."""
    for name, text in sources.items():
        (root / name).write_text(text)
    monkeypatch.chdir(root)
    files = [(Path(name), name) for name in sources]
    checked = _count_checks(monkeypatch)
    settings = Settings(root=root)

    def check(cached: bool = True) -> list[FileResult]:
        return engine.check_files(files, settings, jobs=1, cache=Cache.for_root(root, settings) if cached else None)

    return check, checked


@pytest.mark.parametrize("name", ["shop", "flat"])
def test_project_fixtures_are_pinned(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    assert run(f"fixtures/projects/{name}") == (PROJECTS / f"{name}.expected").read_text(encoding="utf-8")


def test_what_other_files_tell_a_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(PROJECTS / "shop")
    lines = run("--quiet", "src").splitlines()
    assert [line.split(" ", 2)[:2] for line in lines] == [
        # a subclass of a project class deriving from nn.Module, through a relative import
        ["src/shop/models/quantile.py:9:9:", "DL401"],
        # the base re-exported by the package's `__init__.py`
        ["src/shop/train.py:11:9:", "DL402"],
        # the imported helper's CPU result meets the imported device variable
        ["src/shop/train.py:16:12:", "DL301"],
    ]
    assert "`make_mask` (src/shop/utils.py:4) returns a tensor created by `torch.ones` without `device=`" in lines[2]
    assert "is on `device` (moved by `.to()`, line 15)" in lines[2]


def test_a_file_named_alone_still_reads_the_files_it_imports(monkeypatch: pytest.MonkeyPatch) -> None:
    # pre-commit passes only the staged files.
    monkeypatch.chdir(PROJECTS / "shop")
    assert [line.split(" ", 2)[1] for line in run("--quiet", "src/shop/train.py").splitlines()] == ["DL402", "DL301"]


def test_without_the_other_files_nothing_is_guessed(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "train.py").write_text(
        "import torch\nfrom shop.utils import make_mask\nfrom shop.config import device\n\n\n"
        "def step(x):\n    return x.to(device) * make_mask(3)\n"
    )
    assert run("--quiet", str(tmp_path / "train.py")) == ""


def test_flat_layout_namespace_packages_and_imported_module_attributes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(PROJECTS / "flat")
    lines = run("--quiet", ".").splitlines()
    assert [line.split(" ", 2)[:2] for line in lines] == [["nets/heads.py:9:9:", "DL401"], ["train.py:12:26:", "DL301"]]
    assert "`build` (model.py:13) returns a module built by `Net(...)` on the CPU" in lines[1]


def test_the_output_does_not_depend_on_order_or_jobs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(PROJECTS / "shop")
    files = sorted(str(p.relative_to(PROJECTS / "shop")) for p in (PROJECTS / "shop" / "src").rglob("*.py"))
    first = run("--jobs", "1", *files)
    assert run("--jobs", "2", *reversed(files)) == first
    assert run("--jobs", "2", "src") == first


def test_editing_a_base_class_rechecks_exactly_its_importers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "shop"
    shutil.copytree(PROJECTS / "shop", project)
    monkeypatch.chdir(project)
    files = sorted((Path(p.relative_to(project)), str(p.relative_to(project))) for p in project.rglob("*.py"))
    checked = _count_checks(monkeypatch)
    settings = Settings(root=project)
    first = engine.check_files(files, settings, jobs=1, cache=Cache.for_root(project, settings))
    assert engine.check_files(files, settings, jobs=1, cache=Cache.for_root(project, settings)) == first
    checked.clear()
    warm = engine.check_files(files, settings, jobs=1, cache=Cache.for_root(project, settings))
    assert checked == [] and [r.findings for r in warm] == [r.findings for r in first]

    base = project / "src" / "shop" / "models" / "base.py"
    base.write_text(base.read_text().replace("class Aggregation(nn.Module):", "class Aggregation:"))
    edited = engine.check_files(files, settings, jobs=1, cache=Cache.for_root(project, settings))
    # base.py itself (changed), then the files whose imported facts changed: the package that
    # re-exports the class, and the two files that derive from it. config, utils, the cycle: not.
    assert sorted(set(checked)) == ["src/shop/__init__.py", "src/shop/models/base.py", "src/shop/models/quantile.py", "src/shop/train.py"]
    cold = engine.check_files(files, settings, jobs=1)
    assert [r.findings for r in edited] == [r.findings for r in cold]
    # No longer a Module: its tensor is a plain one, which meets the caller's input (DL303).
    assert [f.code for r in edited for f in r.findings] == ["DL303", "DL301"]


def test_a_gpu_only_import_is_not_checked_again_where_it_has_nothing_to_silence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # torch's own _dynamo files import from _inductor's Triton code: 31 of the 35 files checked
    # again in a run over torch had no DL101-DL103 finding for the GPU-only fact to silence.
    (tmp_path / "pyproject.toml").write_text("")
    check, checked = _cached_project(tmp_path, monkeypatch, {
        "kernels.py": "import torch\nimport triton\n\n\ndef launch(x):\n    print(x)\n",
        "loud.py": "import torch\nfrom kernels import launch\n\n\ndef f(x):\n    launch(x.cuda())\n",
        "quiet.py": "import torch\nfrom kernels import launch\n\n\ndef f(x):\n    launch(x + 1)\n",
    })
    first = check()
    # loud.py's `.cuda()` is silenced by the fact, so it is checked again; quiet.py is not.
    assert checked == ["kernels.py", "loud.py", "quiet.py", "loud.py"]
    assert [r.findings for r in first] == [[], [], []]
    checked.clear()
    warm = check()
    assert checked == [] and warm == first


def test_a_file_importing_a_triton_kernel_of_the_project_is_gpu_only(tmp_path: Path) -> None:
    # mamba's tests of its Triton kernels, Liger-Kernel's: `device = "cuda"` there is by design.
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "__init__.py").write_text("")
    (tmp_path / "kernels" / "norm.py").write_text("import torch\nimport triton\n\n\ndef rms_norm(x):\n    return x\n")
    (tmp_path / "kernels" / "ref.py").write_text("import torch\n\n\ndef rms_norm_ref(x):\n    return x\n")
    (tmp_path / "test_norm.py").write_text(
        "import torch\nfrom kernels.norm import rms_norm\n\n\ndef test_norm():\n"
        "    device = 'cuda'\n    assert rms_norm(torch.ones(3, device=device)) is not None\n"
    )
    (tmp_path / "test_ref.py").write_text(
        "import torch\nfrom kernels.ref import rms_norm_ref\n\n\ndef test_ref():\n"
        "    device = 'cuda'\n    assert rms_norm_ref(torch.ones(3, device=device)) is not None\n"
    )
    (tmp_path / "test_lazy.py").write_text(
        "import torch\n\n\ndef test_norm():\n    from kernels.norm import rms_norm\n"
        "    device = 'cuda'\n    assert rms_norm(torch.ones(3, device=device)) is not None\n"
    )
    lines = run("--quiet", str(tmp_path)).splitlines()
    assert [line.split(" ", 2)[:2] for line in lines] == [
        [f"{tmp_path / 'test_lazy.py'}:6:14:", "DL102"],
        [f"{tmp_path / 'test_ref.py'}:6:14:", "DL102"],
    ]


def test_a_file_calling_a_project_function_that_starts_nccl_is_gpu_only(tmp_path: Path) -> None:
    # dinov2: eval/linear.py -> eval/setup.py's `setup_and_build_model` -> utils/config.py's `setup`
    # -> `default_setup` -> distributed/__init__.py's `enable()`: `init_process_group(backend="nccl")`.
    # Depth-Anything-V2: train.py calls util/dist_helper.py's `setup_distributed(port=...)`, whose
    # backend defaults to "nccl".
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "distributed.py").write_text(
        "import torch\nimport torch.distributed as dist\n\n\ndef enable(*, overwrite=False):\n"
        "    if overwrite:\n        raise RuntimeError('enabled')\n    dist.init_process_group(backend='nccl')\n    dist.barrier()\n\n\n"
        "def maybe_enable(flag):\n    if not flag:\n        return\n    dist.init_process_group(backend='nccl')\n\n\n"
        "def setup_distributed(backend='nccl', port=None):\n    dist.init_process_group(backend=backend)\n    return 0, 1\n"
    )
    (tmp_path / "pkg" / "config.py").write_text(
        "import os\nimport pkg.distributed as distributed\n\n\ndef default_setup(args):\n    distributed.enable(overwrite=True)\n\n\n"
        "def setup(args):\n    os.makedirs(args.output_dir, exist_ok=True)\n    default_setup(args)\n    return args\n"
    )
    (tmp_path / "pkg" / "setup.py").write_text(
        "import torch\nfrom pkg.config import setup\n\n\ndef setup_and_build_model(args):\n    config = setup(args)\n"
        "    return torch.nn.Linear(2, 2), config\n"
    )
    main = "\n\ndef main(args):\n    model = {call}\n    x = torch.ones(2).cuda()\n    return model(x)\n"
    (tmp_path / "linear.py").write_text("import torch\nfrom pkg.setup import setup_and_build_model\n" + main.format(call="setup_and_build_model(args)"))
    (tmp_path / "train.py").write_text("import torch\nfrom pkg.distributed import setup_distributed\n" + main.format(call="setup_distributed(port=1)"))
    # Not on every run, or with a backend of the caller's: the findings stay.
    (tmp_path / "maybe.py").write_text("import torch\nfrom pkg.distributed import maybe_enable\n" + main.format(call="maybe_enable(args)"))
    (tmp_path / "gloo.py").write_text("import torch\nfrom pkg.distributed import setup_distributed\n" + main.format(call="setup_distributed('gloo')"))
    lines = run("--quiet", "--select", "DL101", str(tmp_path)).splitlines()
    assert [line.split(" ", 2)[:2] for line in lines] == [
        [f"{tmp_path / 'gloo.py'}:7:9:", "DL101"],
        [f"{tmp_path / 'maybe.py'}:7:9:", "DL101"],
    ]


def test_a_multi_process_check_imported_from_another_file_guards_as_a_local_one(tmp_path: Path) -> None:
    # MiniGPT-4's logger.py: `if not dist_utils.is_dist_avail_and_initialized(): return`, then
    # `torch.tensor(..., device="cuda")`; the helper (common/dist_utils.py) answers with
    # torch.distributed's answer only, as DETR's does in its own file. A helper that answers
    # anything else (a flag of its own) guards nothing.
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "dist_utils.py").write_text(
        "import torch.distributed as dist\n\n\ndef is_dist_avail_and_initialized():\n    if not dist.is_available():\n"
        "        return False\n    if not dist.is_initialized():\n        return False\n    return True\n\n\n"
        "def get_world_size():\n    if not dist.is_initialized():\n        return 1\n    return dist.get_world_size()\n\n\n"
        "def is_main(flag):\n    return flag and dist.is_initialized()\n"
    )
    body = (
        "import torch\nfrom pkg import dist_utils\nfrom pkg.dist_utils import get_world_size\n\n\n"
        "def synchronize(count):\n    if not {check}:\n        return\n"
        "    t = torch.tensor([count], dtype=torch.float64, device=\"cuda\")\n    return t\n"
    )
    for name, check in [("a", "dist_utils.is_dist_avail_and_initialized()"), ("b", "get_world_size() > 1"), ("c", "dist_utils.is_main(count)")]:
        (tmp_path / f"{name}.py").write_text(body.format(check=check))
    lines = run("--quiet", "--select", "DL102", str(tmp_path)).splitlines()
    assert [line.split(" ", 2)[:2] for line in lines] == [[f"{tmp_path / 'c.py'}:9:59:", "DL102"]]
    # The cache keeps the helper's summary as it was made.
    text = (tmp_path / "pkg" / "dist_utils.py").read_text()
    summary = summarise_imports("pkg/dist_utils.py", ast.parse(text), "pkg.dist_utils", False)
    assert summary.distributed_checks == {
        "is_dist_avail_and_initialized": "torch.distributed.is_initialized",
        "get_world_size": "torch.distributed.get_world_size",
    }
    assert ModuleSummary.from_json(summary.to_json()) == summary


@pytest.mark.parametrize("given", ["model", "torch.nn.Linear(4, 4)"])
def test_a_wrapper_module_of_another_file_is_where_the_model_it_is_given_is(tmp_path: Path, given: str) -> None:
    # dinov2: eval/utils.py's `ModelWithIntermediateLayers(feature_model, ...)` keeps the backbone,
    # calls `self.feature_model.eval()` and its methods; eval/linear.py wraps a model moved by `.cuda()`.
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "utils.py").write_text(
        "import torch\n\n\nclass Wrapper(torch.nn.Module):\n    def __init__(self, inner, n):\n"
        "        super().__init__()\n        self.inner = inner\n        self.inner.eval()\n        self.n = n\n\n"
        "    def forward(self, x):\n        return self.inner.get_layers(x, self.n)\n"
    )
    (tmp_path / "linear.py").write_text(
        "import torch\nfrom utils import Wrapper\n\n\ndef run(model, batch):\n"
        f"    wrapped = Wrapper({given}, 4)\n    return wrapped(batch.cuda())\n"
    )
    lines = run("--quiet", "--select", "DL301", str(tmp_path)).splitlines()
    assert [line.split(" ", 2)[:2] for line in lines] == ([] if given == "model" else [[f"{tmp_path / 'linear.py'}:7:12:", "DL301"]])


def test_a_helper_of_another_file_returns_on_its_arguments_device(tmp_path: Path) -> None:
    # IQA-PyTorch's GMSD: `x = to_y_channel(x)` (pyiqa/utils/color_util.py), then
    # `F.conv2d(x, torch.ones(channels, 1, 2, 2) / 4.)`.
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "pq").mkdir()
    (tmp_path / "pq" / "__init__.py").write_text("")
    (tmp_path / "pq" / "color.py").write_text(
        "import torch\n\n\ndef to_y_channel(img: torch.Tensor) -> torch.Tensor:\n    return img[:, [0], :, :] * 255.\n"
    )
    (tmp_path / "pq" / "gmsd.py").write_text(
        "import torch\nfrom torch.nn import functional as F\nfrom pq.color import to_y_channel\n\n\n"
        "def gmsd(x: torch.Tensor, channels=3):\n    x = to_y_channel(x)\n"
        "    return F.conv2d(x, torch.ones(channels, 1, 2, 2) / 4., groups=channels)\n"
    )
    lines = run("--quiet", str(tmp_path)).splitlines()
    assert [line.split(" ", 2)[1] for line in lines] == ["DL303"]
    assert lines[0].startswith(f"{tmp_path / 'pq' / 'gmsd.py'}:8:24: DL303 [*] `torch.ones(channels, 1, 2, 2)` creates a CPU tensor")
    assert "meets `x` on `x`'s device, which the caller chooses at line 8" in lines[0]


def test_a_conversion_to_the_type_of_a_tensor_of_another_files_helper_follows_that_tensor(tmp_path: Path) -> None:
    # SadTalker's (first-order-motion's) DenseMotionNetwork: `torch.zeros(...).type(heatmap.type())`
    # takes the type name of `heatmap`, which names its device ("torch.cuda.FloatTensor"): not the
    # CPU a dtype conversion would keep. A conversion to a dtype stays reported.
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "fm").mkdir()
    (tmp_path / "fm" / "__init__.py").write_text("")
    (tmp_path / "fm" / "util.py").write_text(
        "import torch\n\n\ndef make_grid(size, type):\n    h, w = size\n"
        "    x = torch.arange(w).type(type)\n    y = torch.arange(h).type(type)\n"
        "    return torch.cat([x.view(1, -1).repeat(h, 1).unsqueeze_(2), y.view(-1, 1).repeat(1, w).unsqueeze_(2)], 2)\n\n\n"
        "def kp2gaussian(kp, variance):\n    mean = kp['value']\n    grid = make_grid((4, 4), mean.type())\n"
        "    return torch.exp(-0.5 * ((grid - mean) ** 2).sum(-1) / variance)\n"
    )
    (tmp_path / "fm" / "dense.py").write_text(
        "import torch\nfrom torch import nn\nfrom fm.util import kp2gaussian\n\n\n"
        "class Dense(nn.Module):\n    def forward(self, kp_driving, kp_source):\n"
        "        heatmap = kp2gaussian(kp_driving, 0.01) - kp2gaussian(kp_source, 0.01)\n"
        "        zeros = torch.zeros(heatmap.shape[0], 1, 4).type(heatmap.type())\n"
        "        halves = torch.zeros(heatmap.shape[0], 1, 4).type(torch.float16)\n"
        "        return torch.cat([zeros, heatmap], dim=1), torch.cat([halves, heatmap], dim=1)\n"
    )
    lines = run("--quiet", str(tmp_path)).splitlines()
    assert [line.split(": ", 1)[0] + " " + line.split(" ", 2)[1] for line in lines] == [f"{tmp_path / 'fm' / 'dense.py'}:10:18 DL303"]


def test_a_module_of_another_file_that_moves_its_state_in_its_constructor_is_not_on_the_cpu(tmp_path: Path) -> None:
    # restyle-encoder's coaches build `moco_loss.MocoLoss()` (criteria/moco_loss.py), whose
    # `__init__` calls `self.model.cuda()`, and call it with inputs on `cuda:0`.
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "criteria").mkdir()
    (tmp_path / "criteria" / "__init__.py").write_text("")
    loss = (
        "from torch import nn\n\n\nclass MocoLoss(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.model = nn.Linear(3, 3)\n        self.model.cuda()\n\n    def forward(self, x):\n        return self.model(x)\n"
    )
    (tmp_path / "criteria" / "moco_loss.py").write_text(loss)
    (tmp_path / "coach.py").write_text(
        "import torch\nfrom criteria import moco_loss\n\n\ndef step(x):\n    loss = moco_loss.MocoLoss()\n"
        "    return loss(x.to('cuda:0'))\n"
    )
    assert [line.split(" ", 2)[1] for line in run("--quiet", "--select", "DL301", str(tmp_path)).splitlines()] == []
    (tmp_path / "criteria" / "moco_loss.py").write_text(loss.replace("        self.model.cuda()\n", ""))
    assert [line.split(" ", 2)[1] for line in run("--quiet", "--select", "DL301", str(tmp_path)).splitlines()] == ["DL301"]


def test_a_model_another_file_builds_after_a_cuda_default_tensor_type_is_not_on_the_cpu(tmp_path: Path) -> None:
    # ssd.pytorch's demo: `build_ssd` (ssd.py) builds the model where the notebook's default
    # tensor type puts it: on CUDA where CUDA is. Its summary was made on the CPU default.
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "ssd.py").write_text("import torch.nn as nn\n\n\ndef build_ssd():\n    return nn.Conv2d(3, 4, 3)\n")
    demo = (
        "import torch\nfrom ssd import build_ssd\n\n{default}"
        "net = build_ssd()\nx = torch.zeros(1, 3, 8, 8).cuda()\ny = net(x)\n"
    )
    (tmp_path / "demo.py").write_text(demo.format(default="if torch.cuda.is_available():\n    torch.set_default_tensor_type('torch.cuda.FloatTensor')\n"))
    assert run("--quiet", "--select", "DL301", str(tmp_path)) == ""
    (tmp_path / "demo.py").write_text(demo.format(default=""))
    lines = run("--quiet", "--select", "DL301", str(tmp_path)).splitlines()
    assert [line.split(" ", 2)[:2] for line in lines] == [[f"{tmp_path / 'demo.py'}:6:5:", "DL301"]]


def test_a_helper_called_in_its_own_file_tells_other_files_what_it_returns_for_any_caller(tmp_path: Path) -> None:
    # hifi-gan's meldataset.py: `mel_spectrogram(y, ...)` builds its filters with `.to(y.device)`; its own
    # file calls it from the Dataset with CPU audio, train.py with the generator's output on the device.
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "spec.py").write_text(
        "import torch\n\n\ndef spectrogram(y):\n    return torch.ones(4, 4).to(y.device) @ y\n\n\n"
        "class SpecDataset(torch.utils.data.Dataset):\n    def __getitem__(self, i):\n"
        "        return spectrogram(torch.FloatTensor([1.0, 2.0, 3.0, 4.0]))\n"
    )
    (tmp_path / "train.py").write_text(
        "import torch\n\nfrom spec import spectrogram\n\n"
        'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n'
        "y = torch.randn(4).to(device)\nloss = torch.nn.functional.l1_loss(y, spectrogram(y))\n"
        "cpu = torch.nn.functional.l1_loss(y, spectrogram(torch.randn(4)))\n"
    )
    lines = run("--quiet", str(tmp_path)).splitlines()
    # The result follows the argument at each call: a CPU argument still gives a CPU result.
    assert [line.split(" ", 2)[:2] for line in lines] == [[f"{tmp_path / 'train.py'}:8:50:", "DL303"]]


def test_a_place_a_helper_gave_for_this_files_calls_is_not_told_to_other_files(tmp_path: Path) -> None:
    # hifi-gan's `mel_spectrogram` ends with `spectral_normalize_torch(spec)`, a helper only it calls:
    # summarised from the Dataset's CPU calls, that helper says "CPU", which holds for no other caller.
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "spec.py").write_text(
        "import torch\n\n\ndef normalize(s):\n    return torch.log(torch.clamp(s, min=1e-5))\n\n\n"
        "def spectrogram(y):\n    return normalize(torch.ones(4, 4).to(y.device) @ y)\n\n\n"
        "class SpecDataset(torch.utils.data.Dataset):\n    def __getitem__(self, i):\n"
        "        return spectrogram(torch.FloatTensor([1.0, 2.0, 3.0, 4.0]))\n"
    )
    (tmp_path / "train.py").write_text(
        "import torch\n\nfrom spec import spectrogram\n\n"
        'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n'
        "y = torch.randn(4).to(device)\nloss = torch.nn.functional.l1_loss(y, spectrogram(y))\n"
    )
    assert run("--quiet", str(tmp_path)) == ""


# doctr's recognition models: `from ..transformer import Decoder`, where the package's
# `__init__.py` re-exports its backend's names with `from .pytorch import *`.
_DOCTR_MASTER = """import torch
from torch import nn

from ..transformer import Decoder


class MASTER(nn.Module):
    def __init__(self, vocab_size: int):
        super().__init__()
        self.vocab_size = vocab_size
        self.decoder = Decoder(vocab_size)

    def decode(self, encoded: torch.Tensor) -> torch.Tensor:
        b = encoded.size(0)
        ys = torch.full((b, 10), self.vocab_size + 2, dtype=torch.long)
        return self.decoder(ys, encoded)
"""
_DOCTR_DECODER = """import torch
from torch import nn

__all__ = ["Decoder"]


class Decoder(nn.Module):
    def __init__(self, vocab_size: int):
        super().__init__()
        self.embed = nn.Embedding(vocab_size + 3, 8)

    def forward(self, x, memory):
        return self.embed(x) + memory
"""
_TF_DECODER = """from tensorflow.keras import layers


class Decoder(layers.Layer):
    pass
"""


@pytest.mark.parametrize(
    "init",
    [
        "from .pytorch import *\n",
        # doctr's own: the backend the run-time check chooses; the last star import binds last.
        "from doctr.file_utils import is_tf_available, is_torch_available\n\n"
        "if is_tf_available():\n    from .tensorflow import *\nelif is_torch_available():\n    from .pytorch import *\n",
    ],
)
def test_a_class_re_exported_by_a_star_import_is_known(tmp_path: Path, init: str, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    package = tmp_path / "doctr"
    for folder in (package, package / "master", package / "transformer"):
        folder.mkdir()
        (folder / "__init__.py").write_text("")
    (package / "file_utils.py").write_text("def is_tf_available():\n    return False\n\n\ndef is_torch_available():\n    return True\n")
    (package / "master" / "pytorch.py").write_text(_DOCTR_MASTER)
    (package / "transformer" / "pytorch.py").write_text(_DOCTR_DECODER)
    (package / "transformer" / "tensorflow.py").write_text(_TF_DECODER)
    (package / "transformer" / "__init__.py").write_text(init)
    monkeypatch.chdir(tmp_path)
    lines = run("--quiet", "doctr").splitlines()
    assert [line.split(" ", 2)[:2] for line in lines] == [["doctr/master/pytorch.py:15:14:", "DL303"]]
    assert "meets `self.decoder` on the module's device at line 16" in lines[0]


def test_a_star_import_binds_no_private_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    package = tmp_path / "doctr"
    for folder in (package, package / "master", package / "transformer"):
        folder.mkdir()
        (folder / "__init__.py").write_text("")
    (package / "master" / "pytorch.py").write_text(_DOCTR_MASTER.replace("Decoder", "_Decoder"))
    (package / "transformer" / "pytorch.py").write_text(_DOCTR_DECODER.replace("Decoder", "_Decoder"))
    (package / "transformer" / "__init__.py").write_text("from .pytorch import *\n")
    monkeypatch.chdir(tmp_path)
    assert run("--quiet", "doctr") == ""


def test_a_base_reached_through_an_imported_submodule_and_its_packages_reexport(tmp_path: Path) -> None:
    # flair's SequenceTagger: `import flair.nn`, `class SequenceTagger(flair.nn.DefaultClassifier)`, the
    # class re-exported by flair/nn/__init__.py; its CRF submodule's `transitions` Parameter then
    # follows the tagger to the GPU, and `self.crf.transitions.detach().numpy()` raises there.
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "fl").mkdir()
    (tmp_path / "fl" / "__init__.py").write_text("")
    (tmp_path / "fl" / "nn").mkdir()
    (tmp_path / "fl" / "nn" / "__init__.py").write_text("from .model import Model, DefaultClassifier\n")
    (tmp_path / "fl" / "nn" / "model.py").write_text(
        "import torch.nn\n\n\nclass Model(torch.nn.Module):\n    pass\n\n\nclass DefaultClassifier(Model):\n    pass\n"
    )
    (tmp_path / "fl" / "crf.py").write_text(
        "import torch\n\n\nclass CRF(torch.nn.Module):\n    def __init__(self, n):\n        super().__init__()\n"
        "        self.transitions = torch.nn.Parameter(torch.randn(n, n))\n"
    )
    (tmp_path / "fl" / "tagger.py").write_text(
        "import torch\n\nimport fl.nn\nfrom fl.crf import CRF\n\n\nclass SequenceTagger(fl.nn.DefaultClassifier):\n"
        "    def __init__(self, n):\n        super().__init__()\n        self.crf = CRF(n)\n\n"
        "    def forward_pass(self, x):\n        features = self.crf(x)\n"
        "        return features, self.crf.transitions.detach().numpy()\n"
    )
    lines = run("--quiet", str(tmp_path)).splitlines()
    assert [line.split(" ", 2)[:2] for line in lines] == [[f"{tmp_path / 'fl' / 'tagger.py'}:14:26:", "DL302"]]
    assert "`.numpy()` on `self.crf.transitions.detach()`, which is on the module's device" in lines[0]


_WRITER = """\
import torch


class ModelBase:
    def save_network(self, network, path):
        state_dict = network.state_dict()
        for key, param in state_dict.items():
            state_dict[key] = param.cpu()
        torch.save(state_dict, path)
"""
_LOADER = """\
import torch
from torch import nn

model = nn.Linear(2, 2)
model.load_state_dict(torch.load("model_zoo/net.pth"), strict=True)
"""
_LOAD_MESSAGE = (
    "main_test.py:5:23: DL501 `torch.load(...)` without `map_location`: a checkpoint saved on a GPU fails to load on a machine "
    'without one; pass `map_location=device` (or `map_location="cpu"`)'
)


def test_weights_the_projects_writer_copies_to_the_cpu_load_anywhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # KAIR's test scripts load the model zoo that `ModelBase.save_network` (models/model_base.py)
    # writes; no import joins them, only the files on disk.
    (tmp_path / ".git").mkdir()
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "model_base.py").write_text(_WRITER)
    (tmp_path / "main_test.py").write_text(_LOADER)
    monkeypatch.chdir(tmp_path)
    assert run(".") == "All checks passed!\n"
    assert run("main_test.py") == "All checks passed!\n"  # named alone, as pre-commit does
    (tmp_path / "models" / "model_base.py").write_text(_WRITER.replace("param.cpu()", "param"))
    assert run("main_test.py").splitlines()[0] == _LOAD_MESSAGE


def _checkpoint(path: Path, *locations: str) -> None:
    """A checkpoint as `torch.save` writes it (a zip whose `data.pkl` names each storage's
    device in its persistent id), written without torch."""
    import io
    import pickle
    import zipfile

    class Storage:  # stands for `torch.FloatStorage`: only its persistent id is pickled
        pass

    class Pickler(pickle.Pickler):
        def persistent_id(self, obj: object) -> object:
            if isinstance(obj, Storage):
                return ("storage", "FloatStorage", str(id(obj)), obj.location, 2)  # type: ignore[attr-defined]
            return None

    storages = []
    for location in locations:
        storage = Storage()
        storage.location = location  # type: ignore[attr-defined]
        storages.append(storage)
    data = io.BytesIO()
    Pickler(data, protocol=2).dump({"w": storages})
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(f"{path.stem}/data.pkl", data.getvalue())


def test_a_checkpoint_file_of_the_project_saved_on_the_cpu_loads_anywhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # restyle-encoder's (and encoder4editing's) InterFaceGAN directions: `age.pt` and `smile.pt`
    # hold CPU tensors, `pose.pt` one saved on `cuda:0`. The path is read from the script's
    # folder or one above it; the cache re-checks the loader when a checkpoint changes.
    (tmp_path / ".git").mkdir()
    (tmp_path / "directions").mkdir()
    _checkpoint(tmp_path / "directions" / "age.pt", "cpu", "cpu")
    _checkpoint(tmp_path / "directions" / "pose.pt", "cpu", "cuda:0")
    check, checked = _cached_project(tmp_path, monkeypatch, {
        "editor.py": (
            "import torch\n\n"
            "age = torch.load('directions/age.pt')\n"
            "pose = torch.load('directions/pose.pt')\n"
            "other = torch.load('directions/missing.pt')\n"
        ),
    })
    found = [(f.code, f.start.line, f.message) for f in check()[0].findings]
    assert [(code, line) for code, line, _ in found] == [("DL501", 4), ("DL501", 5)]
    assert "(this file's tensors were saved on `cuda:0`)" in found[0][2]
    assert "saved on `" not in found[1][2]
    _checkpoint(tmp_path / "directions" / "age.pt", "cuda:1")
    checked.clear()
    assert [(f.code, f.start.line) for f in check()[0].findings] == [("DL501", 3), ("DL501", 4), ("DL501", 5)]
    assert checked == ["editor.py"]
    assert [(f.code, f.start.line) for f in check(cached=False)[0].findings] == [("DL501", 3), ("DL501", 4), ("DL501", 5)]


def test_editing_the_projects_writer_rechecks_only_the_files_that_restore_module_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".git").mkdir()
    check, checked = _cached_project(tmp_path, monkeypatch, {
        "main_test.py": _LOADER,
        "model_base.py": _WRITER,
        "resume.py": 'import torch\n\nstate = torch.load("resume.state")\n',
    })
    first = check()
    assert checked == ["main_test.py", "model_base.py", "resume.py", "main_test.py"]
    assert [[f.code for f in r.findings] for r in first] == [[], [], ["DL501"]]
    (tmp_path / "model_base.py").write_text(_WRITER.replace("param.cpu()", "param"))
    checked.clear()
    edited = check()
    assert checked == ["model_base.py", "main_test.py"]
    assert [[f.code for f in r.findings] for r in edited] == [["DL501"], [], ["DL501"]]
    assert [r.findings for r in edited] == [r.findings for r in check(cached=False)]


def test_without_a_root_marker_only_the_files_beside_it_are_its_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A script in a home or temporary folder: walking everything below it would read any
    # number of unrelated trees (and take minutes), so only its neighbours count.
    (tmp_path / "deep" / "models").mkdir(parents=True)
    (tmp_path / "deep" / "models" / "model_base.py").write_text(_WRITER)
    (tmp_path / "main_test.py").write_text(_LOADER)
    monkeypatch.chdir(tmp_path)
    assert run("main_test.py").splitlines()[0] == _LOAD_MESSAGE
    (tmp_path / "model_base.py").write_text(_WRITER)
    assert run("main_test.py") == "All checks passed!\n"


_LOSS = """\
import torch
from torch import nn


class WNormLoss(nn.Module):
    def __init__(self, start_from_latent_avg=True):
        super().__init__()
        self.start_from_latent_avg = start_from_latent_avg

    def forward(self, latent, latent_avg=None):
        return torch.sum((latent - latent_avg).norm(2, dim=(1, 2)))
"""
_COACH = """\
import torch
from criteria.w_norm import WNormLoss


class Coach:
    def __init__(self):
        self.net = torch.nn.Linear(3, 3).to("cuda:0")
        self.w_norm_loss = WNormLoss(start_from_latent_avg=True)

    def step(self, x):
        return self.w_norm_loss(self.net(x.to("cuda:0")), self.net.weight)
"""


def test_a_module_of_another_file_that_owns_no_state_takes_tensors_anywhere(tmp_path: Path) -> None:
    # pixel2style2pixel's WNormLoss (criteria/w_norm.py), never moved, called with CUDA latents:
    # without parameters or buffers it has nothing to be on another device.
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "criteria").mkdir()
    (tmp_path / "criteria" / "__init__.py").write_text("")
    (tmp_path / "criteria" / "w_norm.py").write_text(_LOSS)
    (tmp_path / "coach.py").write_text(_COACH)
    assert run("--quiet", "--select", "DL301", str(tmp_path)) == ""
    stateful = _LOSS.replace("self.start_from_latent_avg = start_from_latent_avg", "self.scale = nn.Linear(3, 3)")
    (tmp_path / "criteria" / "w_norm.py").write_text(stateful)
    assert [line.split(" ", 2)[1] for line in run("--quiet", "--select", "DL301", str(tmp_path)).splitlines()] == ["DL301"]


_BOX_OPS = """import torch


def masks_to_boxes(masks):
    if masks.numel() == 0:
        return torch.zeros((0, 4), device=masks.device)
    h, w = masks.shape[-2:]
    y = torch.arange(0, h, dtype=torch.float)
    return (masks * y.unsqueeze(-1)).flatten(1).max(-1)[0]
"""

_DATASET = """import numpy as np
import torch

from util.box_ops import masks_to_boxes


class CocoPanoptic:
    def __getitem__(self, idx):
        masks = torch.as_tensor(np.load(idx), dtype=torch.uint8)
        return masks_to_boxes(masks)
"""


def _box_project(root: Path, dataset: str) -> None:
    (root / "pyproject.toml").write_text("")
    (root / "util").mkdir()
    (root / "util" / "__init__.py").write_text("")
    (root / "util" / "box_ops.py").write_text(_BOX_OPS)
    (root / "datasets").mkdir()
    (root / "datasets" / "coco.py").write_text(dataset)


def test_a_helper_every_project_caller_hands_cpu_tensors_is_not_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # DETR's masks_to_boxes: its one caller, a dataset in another file, passes masks it made on
    # the CPU, so the CPU `arange` meets CPU masks. Alone, the helper's input is the caller's.
    _box_project(tmp_path, _DATASET)
    monkeypatch.chdir(tmp_path)
    assert run("--quiet", ".") == ""
    # A run over the helper alone (pre-commit's staged file) reads its callers as a full run does.
    assert run("--quiet", "util/box_ops.py") == ""
    (tmp_path / "datasets" / "coco.py").unlink()
    assert [line.split(" ", 2)[:2] for line in run("--quiet", ".").splitlines()] == [["util/box_ops.py:8:9:", "DL303"]]


def test_a_caller_on_the_device_or_in_a_test_file_does_not_silence_a_helper(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    moved = _DATASET.replace("dtype=torch.uint8)", "dtype=torch.uint8).cuda()")
    _box_project(tmp_path, moved)
    monkeypatch.chdir(tmp_path)
    lines = run("--quiet", "--select", "DL303", ".").splitlines()
    assert [line.split(" ", 2)[:2] for line in lines] == [["util/box_ops.py:8:9:", "DL303"]]
    assert "meets `masks` on `cuda` (passed from datasets/coco.py:10, line 4) at line 9" in lines[0]
    # Tests hand a helper CPU tensors because tests run on the CPU, not because its users do.
    (tmp_path / "datasets" / "coco.py").rename(tmp_path / "datasets" / "test_coco.py")
    (tmp_path / "datasets" / "test_coco.py").write_text(_DATASET)
    assert [line.split(" ", 2)[:2] for line in run("--quiet", ".").splitlines()] == [["util/box_ops.py:8:9:", "DL303"]]


def test_editing_a_caller_rechecks_the_helper_it_calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # What a caller passes is part of what the helper's result depends on: the cache keys the
    # helper by it, so a warm run after the caller changed equals a cold one.
    _box_project(tmp_path, _DATASET)
    monkeypatch.chdir(tmp_path)
    files = [(Path("datasets/coco.py"), "datasets/coco.py"), (Path("util/box_ops.py"), "util/box_ops.py")]
    settings = Settings(root=tmp_path)
    checked = _count_checks(monkeypatch)
    first = engine.check_files(files, settings, jobs=1, cache=Cache.for_root(tmp_path, settings))
    assert [f.code for r in first for f in r.findings] == []
    coco = tmp_path / "datasets" / "coco.py"
    coco.write_text(_DATASET.replace("dtype=torch.uint8)", "dtype=torch.uint8).cuda()"))
    checked.clear()
    edited = engine.check_files(files, settings, jobs=1, cache=Cache.for_root(tmp_path, settings))
    assert checked == ["datasets/coco.py", "util/box_ops.py"]
    assert [r.findings for r in edited] == [r.findings for r in engine.check_files(files, settings, jobs=1)]
    assert [(f.code, f.start.line) for r in edited for f in r.findings] == [("DL101", 9), ("DL303", 8)]


def test_an_attribute_a_base_class_of_another_file_may_read_is_kept(tmp_path: Path) -> None:
    # ReAgent's DQNTrainer computes `self.offset` from `self.scale` in `__init__`; the base in
    # base.py is a Module that reads `self.scale` in a file the class cannot see into: `self.scale` is kept.
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "rl").mkdir()
    (tmp_path / "rl" / "__init__.py").write_text("")
    (tmp_path / "rl" / "base.py").write_text(
        "import torch.nn as nn\n\n\nclass TrainerBase(nn.Module):\n    def boost(self, x):\n        return x * self.scale\n"
    )
    (tmp_path / "rl" / "dqn.py").write_text(
        "import torch\nimport torch.nn as nn\nfrom rl.base import TrainerBase\n\n\n"
        "class Trainer(TrainerBase):\n    def __init__(self, n):\n        super().__init__()\n"
        "        self.scale = torch.ones(n)\n        self.offset = self.scale * 2\n\n\n"
        "class Alone(nn.Module):\n    def __init__(self, n):\n        super().__init__()\n"
        "        self.scale = torch.ones(n)\n        self.offset = nn.Parameter(self.scale * 2)\n"
    )
    lines = run("--quiet", str(tmp_path)).splitlines()
    assert [line.split(" ", 2)[0] for line in lines] == [f"{tmp_path / 'rl' / 'dqn.py'}:9:9:", f"{tmp_path / 'rl' / 'dqn.py'}:10:9:"]


def test_a_helper_handing_its_parameter_to_numpy_takes_its_project_callers(tmp_path: Path) -> None:
    # pytorch-pose's `flip_back(flip_output.cpu())`: numpy reads the CPU copy its only caller
    # passes. A caller passing the device output is reported, naming the caller.
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "transforms.py").write_text(
        "import numpy as np\nimport torch\n\n\ndef flip_back(x):\n    return torch.from_numpy(np.flip(x.numpy(), 3).copy())\n"
    )
    caller = (
        "import torch\nfrom transforms import flip_back\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n\n\n"
        "def validate(model, x):\n    model.to(device)\n    out = model(x.to(device))\n    return flip_back(out.cpu())\n"
    )
    (tmp_path / "main.py").write_text(caller)
    assert run("--quiet", str(tmp_path)) == ""
    (tmp_path / "main.py").write_text(caller.replace("flip_back(out.cpu())", "flip_back(out)"))
    [line] = run("--quiet", str(tmp_path)).splitlines()
    assert line.startswith(f"{tmp_path / 'transforms.py'}:6:37: DL302 [*] `.numpy()` on `x`, which is on the device (passed from ")
    assert "main.py:10, line 5): numpy cannot read accelerator memory" in line


def test_a_data_parallel_subclass_of_another_file_takes_cpu_batches(tmp_path: Path) -> None:
    # PyTorch-Encoding: `DataParallelCriterion` (encoding/parallel.py) scatters the CPU target.
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "parallel.py").write_text(
        "from torch.nn.parallel.data_parallel import DataParallel\n\n\nclass DataParallelCriterion(DataParallel):\n"
        "    def forward(self, inputs, *targets):\n        targets, _ = self.scatter(targets, {}, self.device_ids)\n"
        "        return self.module(inputs, *targets[0])\n"
    )
    (tmp_path / "train.py").write_text(
        "import torch\nimport torch.nn as nn\nfrom parallel import DataParallelCriterion\n\n\n"
        "def train(loader):\n    model = nn.DataParallel(nn.Linear(4, 4)).cuda()\n"
        "    criterion = DataParallelCriterion(nn.MSELoss()).cuda()\n    head = nn.Linear(4, 4).cuda()\n"
        "    for image, target in loader:\n        loss = criterion(model(image), target)\n        head(target)\n"
    )
    lines = run("--quiet", "--select", "DL201", str(tmp_path)).splitlines()
    assert [line.split(": ", 1)[0] for line in lines] == [f"{tmp_path / 'train.py'}:12:9"]


_MULTIBOX = """\
import torch
from torch import nn
from data import coco as cfg


class MultiBoxLoss(nn.Module):
    def __init__(self, num_classes, overlap_thresh, use_gpu=True):
        super().__init__()
        self.use_gpu = use_gpu
        self.num_classes = num_classes
        self.threshold = overlap_thresh
        self.variance = cfg["variance"]

    def forward(self, predictions, targets):
        loc_t = torch.zeros(predictions.size(0), 4)
        if self.use_gpu:
            loc_t = loc_t.cuda()
        return ((predictions[:, :4] - loc_t) ** 2).mean() * self.variance[0] + self.threshold
"""
_SSD_TRAIN = """\
import torch
from layers.multibox_loss import MultiBoxLoss


def train(cuda: bool):
    net = torch.nn.Linear(8, 6)
    if cuda:
        net = net.cuda()
    criterion = MultiBoxLoss(6, 0.5, cuda)
    images = torch.randn(2, 8)
    if cuda:
        images = images.cuda()
    return criterion(net(images), None)
"""
_ON_THE_CPU = (
    "train.py:13:12: DL301 `criterion(net(images), None)` mixes devices: `criterion` is on the CPU (built by"
    " `MultiBoxLoss(...)` (layers/multibox_loss.py:6) on the CPU, line 9), but `net(images)` is on `cuda`"
    ' (moved by `.cuda()`, line 8); put both on one device (`.to("cuda")`, or create it with `device="cuda"`)'
)


@pytest.mark.parametrize(
    "keeps, reported",
    [
        ("", False),
        # A table entry it calls, a parameter it asks something of: objects, perhaps modules.
        ('self.variance = cfg["variance"]\n        self.variance.eval()', True),
        ("self.threshold = overlap_thresh\n        self.threshold.eval()", True),
        # A constructor-time call may build anything; a read of its own argument may be a module's.
        ('self.variance = cfg["variance"]\n        self.head = cfg["make"](3)', True),
        ("self.threshold = overlap_thresh\n        self.weight = overlap_thresh.weight", True),
    ],
)
def test_a_module_of_another_file_keeping_configuration_and_renamed_arguments_owns_no_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keeps: str, reported: bool
) -> None:
    # ssd.pytorch's MultiBoxLoss (layers/modules/multibox_loss.py), built in train.py with the `--cuda`
    # flag that moves the net and the batch: it keeps `cfg['variance']` (a table of data/config.py) and
    # its arguments under other names (`self.threshold = overlap_thresh`), and owns no parameter or buffer.
    (tmp_path / "pyproject.toml").write_text("")
    for package in ("data", "layers"):
        (tmp_path / package).mkdir()
    (tmp_path / "data" / "__init__.py").write_text("from .config import *\n")
    (tmp_path / "data" / "config.py").write_text('coco = {"variance": [0.1, 0.2]}\n')
    (tmp_path / "layers" / "__init__.py").write_text("")
    loss = _MULTIBOX if not keeps else _MULTIBOX.replace('self.variance = cfg["variance"]', keeps)
    if "self.threshold = overlap_thresh\n" in keeps:
        loss = loss.replace("        self.threshold = overlap_thresh\n", "", 1)
    (tmp_path / "layers" / "multibox_loss.py").write_text(loss)
    (tmp_path / "train.py").write_text(_SSD_TRAIN)
    monkeypatch.chdir(tmp_path)
    assert run("--quiet", "--select", "DL301", ".").splitlines() == ([_ON_THE_CPU] if reported else [])


def test_a_loss_edited_to_keep_only_configuration_rechecks_its_importer_from_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The fact travels in the loss file's summary and so in its importer's cache key: a warm run
    # after the edit says what a cold one says.
    (tmp_path / "pyproject.toml").write_text("")
    for package in ("data", "layers"):
        (tmp_path / package).mkdir()
    stateful = _MULTIBOX.replace('self.variance = cfg["variance"]', 'self.variance = cfg["variance"]\n        self.proj = nn.Linear(6, 6)')
    check, checked = _cached_project(
        tmp_path,
        monkeypatch,
        {
            "data/__init__.py": "from .config import *\n",
            "data/config.py": 'coco = {"variance": [0.1, 0.2]}\n',
            "layers/__init__.py": "",
            "layers/multibox_loss.py": stateful,
            "train.py": _SSD_TRAIN,
        },
    )
    assert [(f.path, f.code, f.start.line) for r in check() for f in r.findings if f.code == "DL301"] == [("train.py", "DL301", 13)]
    (tmp_path / "layers" / "multibox_loss.py").write_text(_MULTIBOX)
    checked.clear()
    warm = check()
    assert sorted(set(checked)) == ["layers/multibox_loss.py", "train.py"]
    assert [f.code for r in warm for f in r.findings if f.code == "DL301"] == []
    assert [r.findings for r in warm] == [r.findings for r in check(cached=False)]
