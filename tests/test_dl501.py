"""DL501 (load-without-map-location)."""

from __future__ import annotations

from devlint.config import Settings
from linting import lint, positions

# Downloads are reported under `--strict` only: the tests of what stays silent there use it.
STRICT = Settings(select=("DL0", "DL1", "DL5", "DL9"), strict=True)

MESSAGE = (
    "`{call}(...)` without `map_location`: a checkpoint saved on a GPU fails to load on a machine without one; "
    'pass `map_location=device` (or `map_location="cpu"`)'
)


def test_load_without_map_location() -> None:
    found = lint(
        """
        import torch
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        state = torch.load("checkpoint.pt")
        model.load_state_dict(torch.load(args.weights, weights_only=True))
        """
    )
    assert [(f.code, f.start.line, f.start.column, f.end.line, f.end.column) for f in found] == [
        ("DL501", 3, 9, 3, 36),
        ("DL501", 4, 23, 4, 66),
    ]
    assert found[0].message == MESSAGE.format(call="torch.load")


def test_aliases() -> None:
    found = lint(
        """
        import torch as th
        from torch import load
        from torch.serialization import load as sload
        x = th.zeros(1).cuda()
        a = th.load("a.pt")
        b = load("b.pt")
        c = sload("c.pt")
        """
    )
    assert [(f.code, f.start.line) for f in found] == [("DL101", 4), ("DL501", 5), ("DL501", 6), ("DL501", 7)]
    assert [f.message.split("(")[0] for f in found[1:]] == ["`th.load", "`load", "`sload"]


def test_map_location_given_in_every_form() -> None:
    assert positions(
        """
        import torch
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        a = torch.load("a.pt", map_location=device)
        b = torch.load("b.pt", map_location="cpu", weights_only=True)
        c = torch.load("c.pt", lambda storage, loc: storage)
        d = torch.load("d.pt", **load_kwargs)
        e = torch.load(f, map_location=lambda storage, loc: storage.cuda(0) if use_gpu else storage)
        """
    ) == []


def test_a_file_that_never_names_an_accelerator_is_reported_too() -> None:
    # pytorch-a2c-ppo-acktr-gail's enjoy.py: the checkpoint was pickled on the GPU by main.py.
    assert positions(
        """
        import torch
        model = torch.nn.Linear(2, 2)
        state = torch.load("cpu_model.pt")
        """
    ) == [("DL501", 3, 9)]


def test_downloads_are_reported_under_strict_only() -> None:
    # A published file is the same for every user: whether it holds CUDA tensors depends on
    # how it was uploaded (torchSR's and pytorchvideo's were; Cadene's, ResNeSt's,
    # face-alignment's were not), which the code does not show.
    source = """
        import torch
        from torch.utils import model_zoo
        state = torch.hub.load_state_dict_from_url("https://example.com/w.pth")
        other = model_zoo.load_url("https://example.com/v.pth", "weights")
        placed = torch.hub.load_state_dict_from_url("https://example.com/w.pth", None, "cpu")
        named = model_zoo.load_url("https://example.com/v.pth", map_location="cpu")
        local = torch.load("w.pth")
        """
    assert positions(source) == [("DL501", 7, 9)]
    assert positions(source, STRICT) == [("DL501", 3, 9), ("DL501", 4, 9), ("DL501", 7, 9)]


def test_pytorch_published_weights_are_cpu_tensors() -> None:
    # ControlNet's MLSD and the many vendored copies of torchvision's resnet.py: torchvision
    # itself loads these files without map_location.
    assert positions(
        """
        import torch
        from torch.utils import model_zoo
        model_urls = {
            "resnet18": "https://download.pytorch.org/models/resnet18-5c106cde.pth",
            "resnet50": "https://download.pytorch.org/models/resnet50-19c8e357.pth",
        }
        mixed = {"mine": "https://example.com/w.pth", "resnet18": "https://download.pytorch.org/models/resnet18-5c106cde.pth"}
        a = model_zoo.load_url("https://download.pytorch.org/models/mobilenet_v2-b0353104.pth")
        b = model_zoo.load_url(model_urls["resnet18"])
        c = torch.hub.load_state_dict_from_url(mixed["mine"])
        d = torch.load("https://download.pytorch.org/models/x.pth")
        """,
        STRICT,
    ) == [("DL501", 10, 5), ("DL501", 11, 5)]


def test_torchvisions_first_host_serves_the_same_weights() -> None:
    # faster-rcnn.pytorch's resnet.py, copied from torchvision 0.1: the same files, on S3.
    assert positions(
        """
        from torch.utils import model_zoo
        model_urls = {"resnet18": "https://s3.amazonaws.com/pytorch/models/resnet18-5c106cde.pth"}
        a = model_zoo.load_url(model_urls["resnet18"])
        b = model_zoo.load_url("https://s3.amazonaws.com/other-bucket/resnet18.pth")
        """,
        STRICT,
    ) == [("DL501", 4, 5)]


def test_same_script_checkpoint_is_not_reported() -> None:
    assert positions(
        """
        import torch
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        torch.save(model.state_dict(), args.save)
        model.load_state_dict(torch.load(args.save))
        """
    ) == []


def test_other_load_functions_are_not_torch_load() -> None:
    assert positions(
        """
        import json
        import pickle
        import numpy as np
        import torch
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        a = json.load(f)
        b = pickle.load(f)
        c = np.load("x.npy")
        d = model.load("x")
        """
    ) == []


def test_a_checkpoint_in_a_temporary_directory_is_not_reported_but_one_from_elsewhere_is() -> None:
    # Lightning-AI/litgpt tests: saved by a helper into pytest's tmp_path, read back at once.
    assert positions(
        """
        import tempfile
        import torch


        def test_adapter_filter(tmp_path, fabric, model):
            save_path = tmp_path / "model.pth"
            fabric.save(save_path, {"model": model})
            saved = torch.load(save_path)["model"]
            final = torch.load(tmp_path / "final" / "lit_model.pth.adapter")
            fn = str(tmp_path / "test.pt")
            again = torch.load(fn)


        class T:
            def test_roundtrip(self, trainer):
                with tempfile.TemporaryDirectory() as folder:
                    trainer.save_model(folder)
                    state = torch.load(f"{folder}/model.bin")


        def load(save_path):
            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            return torch.load(save_path)
        """
    ) == [("DL501", 23, 12)]


def test_a_temporary_file_was_written_by_this_process() -> None:
    # sam2's broadcast_object: the bytes a peer rank sent, spooled to an anonymous temporary file.
    assert positions(
        """
        import tempfile
        import torch


        def receive(data):
            with tempfile.TemporaryFile("r+b") as f:
                f.write(data)
                f.seek(0)
                return torch.load(f)
        """
    ) == []


def test_only_a_path_built_from_a_temporary_directory_counts() -> None:
    assert positions(
        """
        import os
        import tempfile
        import torch
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


        def outer(tmp_dir):
            path = os.path.join(tmp_dir, "a.pt")
            fresh = torch.load(path)
            with tempfile.NamedTemporaryFile() as f:
                again = torch.load(f.name)

            def inner(path):
                return torch.load(path)

            path = args.checkpoint
            return torch.load(path), inner


        def download(url, cache):
            cached = os.path.join(tempfile.gettempdir(), "resnet.pth")
            urlretrieve(url, cached)
            first = torch.load(cached)
            return first, torch.load(fetch(url, tmp_dir=cache))
        """
    ) == [("DL501", 14, 16), ("DL501", 17, 12), ("DL501", 23, 13), ("DL501", 24, 19)]


def test_a_path_saved_in_another_function_is_another_variable() -> None:
    # ParlAI's save_candidates(vecs, path) / load_candidates(path), skorch's save_params(f) /
    # _get_state_dict(f): each `path` is its own function's parameter. A path that is no
    # local of the loading function (`self.ckpt`, a module constant) is the same everywhere.
    found = positions(
        """
        import torch

        CKPT = "model.pt"

        class Agent:
            def save_candidates(self, vecs, path):
                with open(path, "wb") as f:
                    torch.save(vecs, f)

            def load_candidates(self, path):
                return torch.load(path)

            def save(self):
                torch.save(self.state, self.ckpt)
                torch.save(self.state, CKPT)

            def load(self):
                return torch.load(self.ckpt), torch.load(CKPT)

        def roundtrip(state, path):
            torch.save(state, path)
            return torch.load(path)
        """
    )
    assert found == [("DL501", 11, 16)]


def test_a_learning_rate_schedulers_state_holds_no_tensors() -> None:
    # transformers' example scripts (copied into many projects, LoRA's among them) resume
    # `scheduler.pt` without map_location; the optimizer's state does hold tensors.
    found = positions(
        """
        import os
        import torch
        from transformers import get_linear_schedule_with_warmup

        def train(model, optimizer, args):
            scheduler = get_linear_schedule_with_warmup(optimizer, 10, 100)
            step = torch.optim.lr_scheduler.StepLR(optimizer, 30)
            if os.path.isfile(os.path.join(args.model_name_or_path, "scheduler.pt")):
                optimizer.load_state_dict(torch.load(os.path.join(args.model_name_or_path, "optimizer.pt")))
                scheduler.load_state_dict(torch.load(os.path.join(args.model_name_or_path, "scheduler.pt")))
                step.load_state_dict(torch.load("step.pt"))
        """
    )
    assert found == [("DL501", 9, 35)]


def test_a_gradient_scalers_state_holds_no_tensors() -> None:
    # transformers' Trainer (vendored by ChatGLM-6B's ptuning/trainer.py) saves the scaler's
    # state as a file of its own and resumes it without map_location: `GradScaler.state_dict()`
    # is numbers. A checkpoint that only holds the scaler among the model's state stays reported.
    found = positions(
        """
        import torch
        from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler

        class Trainer:
            def setup(self, sharded):
                if sharded:
                    self.scaler = ShardedGradScaler()
                else:
                    self.scaler = torch.cuda.amp.GradScaler()

            def resume(self, path):
                self.scaler.load_state_dict(torch.load(path + "/scaler.pt"))
                checkpoint = torch.load(path + "/checkpoint.pt")
                self.scaler.load_state_dict(checkpoint["scaler"])
        """
    )
    assert found == [("DL501", 13, 22)]


def test_a_tensorrt_engines_state_holds_no_tensors() -> None:
    # YOLOX's and ByteTrack's `--trt` evaluation: torch2trt's `TRTModule` state is the serialized
    # engine (bytes) and its binding names, and loading it needs an NVIDIA GPU anyway. The
    # PyTorch model's checkpoint beside it stays reported (torch2trt is imported on the `--trt`
    # path only: imported at the top, it would make the whole file CUDA-only).
    found = positions(
        """
        import torch

        def evaluate(model, trt_file, ckpt_file):
            if trt_file is not None:
                from torch2trt import TRTModule
                model_trt = TRTModule()
                model_trt.load_state_dict(torch.load(trt_file))
                return model_trt
            model.load_state_dict(torch.load(ckpt_file))
            return model
        """
    )
    assert found == [("DL501", 9, 27)]


def test_a_fixture_that_returns_a_temporary_path_gives_tests_a_file_this_run_wrote() -> None:
    # LLMs-from-scratch's `qwen3_weights_path` saves a model under `tmp_path_factory.mktemp(...)`
    # and returns the path; the tests that take it load what the session wrote. A fixture that
    # returns a path from elsewhere gives no such file.
    found = positions(
        """
        import pytest
        import torch

        @pytest.fixture(scope="session")
        def weights_path(tmp_path_factory):
            path = tmp_path_factory.mktemp("models") / "weights.pt"
            torch.save({"w": torch.zeros(2)}, path)
            return path

        @pytest.fixture
        def released(request):
            return request.config.getoption("--weights")

        def test_variants(weights_path, released):
            first = torch.load(weights_path)
            second = torch.load(released)
            return first, second
        """
    )
    assert found == [("DL501", 16, 14)]


def test_a_load_converted_to_numpy_at_once_holds_cpu_tensors() -> None:
    # LLaMA-Adapter's `show_point_cloud`: `torch.load(f).numpy()` works for a CPU tensor only, on
    # every machine. A load moved first stays reported.
    found = positions(
        """
        import torch

        def points(path):
            return torch.load(path).numpy()

        def points_moved(path):
            return torch.load(path).cpu().numpy()
        """
    )
    assert found == [("DL501", 7, 12)]


def test_a_file_that_starts_nccl_in_one_branch_may_load_on_the_cpu_in_another() -> None:
    # simpletransformers' LanguageModelingModel starts NCCL only for `local_rank != -1`, and a
    # real fix added `map_location` to its load; a file importing Triton or TensorRT at its top
    # level runs nowhere without CUDA, one importing Triton under `try:` may.
    branch = """
    import torch

    def build(model, path, local_rank):
        if local_rank != -1:
            torch.distributed.init_process_group(backend="nccl")
        model.load_state_dict(torch.load(path))
    """
    kernels = """
    import torch
    import triton

    def build(model, path):
        model.load_state_dict(torch.load(path))
    """
    assert positions(branch) == [("DL501", 6, 27)]
    assert positions(kernels) == []
    assert positions(kernels.replace("import triton", "import tensorrt as trt")) == []
    assert positions(kernels.replace("import triton", "try:\n        import triton\n    except ImportError:\n        triton = None")) == [("DL501", 8, 27)]


def test_a_url_parameter_fed_only_pytorch_published_weights() -> None:
    # torchreid's init_pretrained_weights(model, model_url) in densenet/resnet/pcb/shufflenetv2.py
    # and torchvision's densenet.py `_load_state_dict(model, model_urls[arch], progress)`: every
    # call in the file passes an entry of the file's table of download.pytorch.org weights (a
    # `None` entry names no file: torchreid returns early on it).
    assert positions(
        """
        from torch.hub import load_state_dict_from_url
        from torch.utils import model_zoo

        model_urls = {
            "densenet121": "https://download.pytorch.org/models/densenet121-a639ec97.pth",
            "shufflenetv2_x1.5": None,
        }

        def _load_state_dict(model, model_url, progress):
            state_dict = load_state_dict_from_url(model_url, progress=progress)
            model.load_state_dict(state_dict)

        def init_pretrained_weights(model, model_url):
            if model_url is None:
                return
            model.load_state_dict(model_zoo.load_url(model_url), strict=False)

        def _densenet(arch, model, pretrained, progress):
            if pretrained:
                _load_state_dict(model, model_urls[arch], progress)
            return model

        def shufflenet(model):
            init_pretrained_weights(model, model_urls["densenet121"])
            init_pretrained_weights(model, model_url=model_urls["shufflenetv2_x1.5"])
            return model
        """,
        STRICT,
    ) == []


def test_a_url_parameter_is_reported_where_a_call_may_pass_another_file() -> None:
    # Unknown stays reported: a call with another URL, a use other than a call (handed on, so
    # any caller), no call at all in the file, a rebound parameter, a method.
    assert positions(
        """
        from torch.utils import model_zoo

        model_urls = {"resnet50": "https://download.pytorch.org/models/resnet50-19c8e357.pth"}
        other = {"osnet": "https://drive.google.com/uc?id=1LaG1EJpHrxdAxKnSCJ_i0u-nbxSAeiFY"}

        def mixed(model, url):
            model.load_state_dict(model_zoo.load_url(url))

        def handed_on(model, url):
            model.load_state_dict(model_zoo.load_url(url))

        def uncalled(model, url):
            model.load_state_dict(model_zoo.load_url(url))

        def rebound(model, url):
            url = url.replace("https", "http")
            model.load_state_dict(model_zoo.load_url(url))

        class Net:
            def init(self, url):
                self.load_state_dict(model_zoo.load_url(url))

        def build(model, net):
            mixed(model, model_urls["resnet50"])
            mixed(model, other["osnet"])
            handed_on(model, model_urls["resnet50"])
            loaders = [handed_on]
            rebound(model, model_urls["resnet50"])
            net.init(model_urls["resnet50"])
        """,
        STRICT,
    ) == [("DL501", 7, 27), ("DL501", 10, 27), ("DL501", 13, 27), ("DL501", 17, 27), ("DL501", 21, 30)]


# A project whose own writer copies every tensor of a module's state to the CPU publishes and
# reloads CPU weights (BasicSR's and KAIR's `save_network`, pix2pixHD's and SPADE's).
def test_module_state_the_file_writes_as_cpu_copies_loads_anywhere() -> None:
    found = lint(
        """
        import torch

        class BaseModel:
            def save_network(self, network, path):
                torch.save(network.cpu().state_dict(), path)

            def load_network(self, network, path):
                network.load_state_dict(torch.load(path))

            def load_optimizer(self, optimizer, path):
                state = torch.load(path)
                self.epoch = state["epoch"]
        """
    )
    # The optimizer's state is no module state: a GPU run's resume file holds GPU tensors.
    assert [(f.code, f.start.line) for f in found] == [("DL501", 11)]


def test_a_state_dict_whose_entries_are_all_replaced_by_cpu_copies() -> None:
    found = lint(
        """
        import torch

        def save_network(net, path, param_key="params"):
            save_dict = {}
            state_dict = net.state_dict()
            for key, param in state_dict.items():
                if key.startswith("module."):
                    key = key[7:]
                state_dict[key] = param.cpu()
            save_dict[param_key] = state_dict
            torch.save(save_dict, path)

        def test(model, weights):
            checkpoint = torch.load(weights)
            model.load_state_dict(checkpoint["params"], strict=True)

        def test_either(model, weights):
            pretrained = torch.load(weights)
            model.load_state_dict(pretrained["params"] if "params" in pretrained.keys() else pretrained)
        """
    )
    assert [(f.code, f.start.line) for f in found] == []


def test_a_writer_that_leaves_some_tensor_where_it_was_proves_nothing() -> None:
    found = lint(
        """
        import torch

        def save(net, optimizer, path):
            state_dict = net.state_dict()
            for key, param in state_dict.items():
                state_dict[key] = param.cpu()
            torch.save({"params": state_dict, "optimizer": optimizer.state_dict()}, path)

        def save_half(net, path):
            state_dict = net.state_dict()
            for key, param in state_dict.items():
                print(key, param.cpu())
            torch.save(state_dict, path)

        def test(model, weights):
            model.load_state_dict(torch.load(weights)["params"])
        """
    )
    assert [(f.code, f.start.line) for f in found] == [("DL501", 16)]


def test_a_cache_that_the_other_branch_builds_and_saves() -> None:
    """Load-or-build: the file is this code's own output (FastChat's embeddings, yolov7's label
    cache), saved in the other branch itself or by this file's function that builds it."""
    found = lint(
        """
        import torch

        def embed(args):
            if args.embeddings_file is None:
                embeddings = compute(args.texts)
                if args.save:
                    torch.save(embeddings, "embeddings.pt")
            else:
                embeddings = torch.load(args.embeddings_file)
            return embeddings

        class Labels:
            def __init__(self, cache_path):
                if cache_path.is_file():
                    cache, exists = torch.load(cache_path), True
                else:
                    cache, exists = self.cache_labels(cache_path), False

            def cache_labels(self, path):
                x = {}
                torch.save(x, path)
                return x
        """
    )
    assert found == []


def test_a_branch_that_builds_without_saving_is_no_cache() -> None:
    assert positions(
        """
        import torch

        def either(p, fresh):
            if p:
                v = torch.load(p)
            else:
                v = fresh()
                torch.save(other, "o.pt")
            return v

        def unsaved(p):
            if p:
                v, hit = torch.load(p), True
            else:
                v, hit = build(p), False
            return v
        """
    ) == [("DL501", 5, 13), ("DL501", 13, 18)]


def test_a_datasets_data_is_not_reported() -> None:
    """A Dataset reads data for the loader's CPU workers (co-tracker's trajectories, GFPGAN's
    facial-component boxes); in 29 real load fixes none was a Dataset's."""
    assert positions(
        """
        import torch
        from torch.utils import data as data


        class Faces(data.Dataset):
            def __init__(self, opt):
                self.components = torch.load(opt["component_path"])

            def __getitem__(self, i):
                traj = torch.load(self.paths[i])
                return traj["img"].numpy()


        class Blind(Faces):
            def __init__(self, opt):
                super().__init__(opt)
                self.codes = torch.load(opt["codes"])


        class Model(torch.nn.Module):
            def __init__(self, path):
                super().__init__()
                self.load_state_dict(torch.load(path))
        """
    ) == [("DL501", 23, 30)]


def test_a_reader_only_the_files_datasets_use_reads_their_data() -> None:
    # Pytorch-UNet's `load_image` (read by its Dataset's `__getitem__`, and by a helper that
    # only the Dataset calls) and ImageCaptioning's `HybridLoader` (built only by its Dataset).
    # A reader the module's own code or a model also uses stays reported.
    assert positions(
        """
        import numpy as np
        import torch
        from functools import partial
        from torch.utils.data import Dataset


        def load_image(filename):
            return torch.load(filename).numpy()


        def unique_values(mask_file):
            return np.unique(load_image(mask_file))


        class HybridLoader:
            def __init__(self, db_path):
                self.feats = torch.load(db_path)


        def load_weights(path):
            return torch.load(path)


        class Basic(Dataset):
            def __init__(self, files):
                self.values = list(map(partial(unique_values), files))
                self.loader = HybridLoader(files[0])
                self.head = load_weights("head.pt")

            def __getitem__(self, i):
                return load_image(self.files[i])


        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.load_state_dict(load_weights("net.pt"))
        """
    ) == [("DL501", 21, 12)]


def test_a_load_that_runs_only_where_cuda_is_is_not_reported() -> None:
    # stargan-v2's checkpoint loaders: `if torch.cuda.is_available(): torch.load(f)`, else a CPU
    # map_location. A GPU checkpoint loads where CUDA is; `--strict` still reports it.
    source = """
        import torch

        def load_weights(fname):
            if torch.cuda.is_available():
                state = torch.load(fname)
            else:
                state = torch.load(fname, map_location=torch.device("cpu"))
            return state

        def unguarded(fname):
            return torch.load(fname)
        """
    assert positions(source) == [("DL501", 11, 12)]
    assert [p[:2] for p in positions(source, Settings(strict=True))] == [("DL501", 5), ("DL501", 11)]


def test_weights_read_by_an_entry_of_basicsr_s_cpu_format() -> None:
    # GPEN's Real-ESRGAN weights and GFPGAN's converter: `params_ema` names BasicSR's
    # `save_network` format, whose tensors are `param.cpu()` copies. `params` alone is no
    # writer's mark, and an entry of another load in the same function marks nothing here.
    found = lint(
        """
        import torch

        def load_sr(model, path):
            loadnet = torch.load(path)
            model.load_state_dict(loadnet["params_ema"], strict=True)

        def load_face(model, path):
            loadnet = torch.load(path)
            keyname = "params_ema" if "params_ema" in loadnet else "params"
            model.load_state_dict(loadnet[keyname])

        def convert(path):
            return torch.load(path)["params_ema"]

        def plain(model, path):
            model.load_state_dict(torch.load(path)["params"])

        def two(model, path, other):
            ema = torch.load(other)["params_ema"]
            state = torch.load(path)
            model.load_state_dict(state)
        """
    )
    assert [(f.code, f.start.line) for f in found] == [("DL501", 16), ("DL501", 20)]


def test_pytorch_s_weights_named_by_a_module_level_constant() -> None:
    # face-parsing's `resnet18_url = "https://download.pytorch.org/models/resnet18-5c106cde.pth"`,
    # loaded with `modelzoo.load_url(resnet18_url)`. A name bound twice, or shadowed by the
    # function's own parameter, is not known to hold it.
    found = lint(
        """
        import torch.utils.model_zoo as modelzoo

        resnet18_url = "https://download.pytorch.org/models/resnet18-5c106cde.pth"
        other_url = "https://example.com/weights.pth"
        twice_url = "https://download.pytorch.org/models/resnet34-333f7ec4.pth"
        twice_url = "https://example.com/resnet34.pth"

        def init_weight(model):
            model.load_state_dict(modelzoo.load_url(resnet18_url))

        def other(model):
            model.load_state_dict(modelzoo.load_url(other_url))

        def twice(model):
            model.load_state_dict(modelzoo.load_url(twice_url))

        def shadowed(model, resnet18_url):
            model.load_state_dict(modelzoo.load_url(resnet18_url))
        """,
        STRICT,
    )
    assert [(f.code, f.start.line) for f in found] == [("DL501", 12), ("DL501", 15), ("DL501", 18)]


def test_a_load_only_read_here_as_data_is_reported_under_strict_only() -> None:
    # What the value is used for says what the file is. Statistics, logs, predictions, a
    # converter's input (BasicSR's and EDVR's FID statistics and convert_models.py, DETR's
    # plot_utils, ChatGLM's RNG state, DeepSDF's logs): read here as numbers, written by
    # scripts that keep them on the CPU. Module state, a pickled model that is called, a value
    # returned or handed to the project's own code: a training run's output.
    source = """
        import numpy as np
        import torch

        def fid(path):
            stats = torch.load(path)
            mu, sigma = stats["mu"], stats["sigma"]
            return np.linalg.norm(mu - sigma)

        def convert(src, dst):
            ori = torch.load(src)
            new = {}
            for k, v in ori.items():
                new[k.replace("module.", "")] = v
            torch.save(new, dst)

        def plot(path):
            data = torch.load(path)
            print(f"{len(data['loss'])} epochs, best {min(data['loss'])}")

        def rng(path):
            torch.set_rng_state(torch.load(path)["cpu"])

        def restore(model, path):
            model.load_state_dict(torch.load(path)["model"])

        def resume(model, path):
            ckpt = torch.load(path)
            epoch = ckpt["epoch"]
            model.load_state_dict(ckpt["state_dict"])
            return epoch

        def pickled(path, x):
            net = torch.load(path)
            return net(x)

        def handed_on(path):
            return torch.load(path)

        def project(path):
            preds = torch.load(path)
            evaluate(preds)

        def unused(path):
            ckpt = torch.load(path)
        """
    assert [line for code, line, _ in positions(source)] == [24, 27, 33, 37, 40, 44]
    assert [line for code, line, _ in positions(source, STRICT)] == [5, 10, 17, 21, 24, 27, 33, 37, 40, 44]


def test_a_global_a_function_reads_is_not_followed() -> None:
    # A script's module-level load read inside a function: not followed, so still reported.
    assert positions(
        """
        import torch
        stats = torch.load("stats.pt")
        total = sum(stats["counts"])

        def main(model):
            model.load_state_dict(stats)
        """
    ) == [("DL501", 2, 9)]
