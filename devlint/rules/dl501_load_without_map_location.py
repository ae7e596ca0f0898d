"""DL501: `torch.load` without `map_location`."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from devlint.analysis.checkpoints import read_as_cpu_format, restores_module_state, writes_cpu_state
from devlint.analysis.guards import string_value
from devlint.analysis.load_uses import read_only_as_data
from devlint.analysis.torchapi import DOWNLOAD_LOADS, LOAD_FUNCTIONS, SAVE_FUNCTIONS
from devlint.analysis.torchapi.frameworks import DATASET_BASES, GRAD_SCALERS, LR_SCHEDULER_FACTORIES, LR_SCHEDULER_MODULE, TENSORRT_MODULES
from devlint.names import dotted_name, with_local_bases
from devlint.tree import descendants
from devlint.fixes import add_map_location
from devlint.rule import Rule


# pytest's temporary-directory fixtures and the names tests give `TemporaryDirectory()`.
_TEMPORARY_NAMES = frozenset({"tmp_path", "tmpdir", "tmp_path_factory", "tmpdirname", "tmp_dir", "temp_dir"})
# A fresh directory of this run's own (not `gettempdir()`, where downloads are cached too).
_TEMPORARY_CALLS = frozenset(
    {"tempfile.TemporaryDirectory", "tempfile.mkdtemp", "tempfile.NamedTemporaryFile", "tempfile.TemporaryFile", "tempfile.SpooledTemporaryFile"}
)
_PATH_BUILDERS = frozenset(
    {"os.path.join", "os.fspath", "os.path.abspath", "pathlib.Path", "pathlib.PurePath", "str", "Path"}
)


# PyTorch's own published weights (torchvision's `model_urls`) are saved from CPU tensors:
# torchvision itself loads them without `map_location`. Torchvision's first releases served the
# same files from `s3.amazonaws.com/pytorch/models/`, still named in code copied from them.
_CPU_PUBLISHED = tuple(
    f"{scheme}://{host}/"
    for scheme in ("https", "http")
    for host in ("download.pytorch.org/models", "s3.amazonaws.com/pytorch/models")
)

# Where `map_location` stands among the positional arguments: `torch.load(f, map_location)`,
# `load_state_dict_from_url(url, model_dir, map_location)`.
_MAP_LOCATION_POSITION = {**{name: 1 for name in LOAD_FUNCTIONS}, **{name: 2 for name in DOWNLOAD_LOADS}}


def _parameter_frame(params: cst.Parameters) -> dict[str, bool]:
    """A function's parameters shadow outer names; pytest's `tmp_path` fixture is a temporary path."""
    every = [*params.posonly_params, *params.params, *params.kwonly_params]
    every += [p for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)]
    return {p.name.value: p.name.value in _TEMPORARY_NAMES for p in every}


class LoadWithoutMapLocation(Rule):
    """A checkpoint saved from GPU tensors restores them onto the GPU: on a
    CPU-only machine `torch.load` raises "Attempting to deserialize object on
    a CUDA device". `map_location` makes the load portable.

    `torch.hub.load_state_dict_from_url` and `torch.utils.model_zoo.load_url`
    call `torch.load` on the downloaded file; they are reported only under
    `--strict`: a published file is the same for every user, and whether it
    holds CUDA tensors depends on how it was uploaded, which the code does not
    show (in review, 35 of 36 such findings judged were false). Whether the file names an accelerator says nothing here: the checkpoint
    was saved elsewhere (released weights, a run resumed on another machine).
    Under `--strict`, PyTorch's own published weights (a `https://download.pytorch.org/models/`
    URL, or the `https://s3.amazonaws.com/pytorch/models/` of torchvision's first
    releases, or a module-level table of them such as torchvision's `model_urls`,
    also reaching a helper's parameter through every call of the helper in its
    file) are not reported: they are saved from CPU tensors. A load of a checkpoint the same script saved (same path expression, also
    through `with open(path) as f`), and a load from a temporary directory
    (pytest's `tmp_path`, `tempfile.TemporaryDirectory()`) are not reported:
    that file was written on the machine reading it. Nor is a cache: a load in one branch of an
    `if` whose other branch builds the same name and saves it, nor a Dataset's data (read for
    the loader's CPU workers), nor a load whose result is converted at once with `.numpy()`
    (which works on CPU tensors only, wherever the code runs). A value the function only reads as data (statistics, logs, a
    converter's input: analysis/load_uses.py) is reported under `--strict` only. A learning-rate
    scheduler's state holds numbers only and is not reported either, nor is a torch2trt
    `TRTModule`'s (the serialized engine, which needs an NVIDIA GPU to load anyway), nor is
    module state restored in a project whose own
    `torch.save` writes module state copied to the CPU (analysis/checkpoints.py). Nor is a load
    in a file no line of which runs without CUDA (one importing Triton or an NVIDIA runtime at
    its top level, one whose Lightning runners are all built with `accelerator="cuda"`): a GPU
    checkpoint loads there. A file that starts NCCL in a branch may load on the CPU in another.
    """

    code = "DL501"
    name = "load-without-map-location"
    summary = "`torch.load(...)` without `map_location` fails on CPU-only machines for GPU checkpoints"
    needles = ("load",)
    # Unsafe: the tensors then load where map_location says, not where they were saved.
    fix = "unsafe"
    # A file no line of which runs without CUDA (analysis/gpu_only.py's `requires_cuda`: not one
    # that only starts NCCL in a branch) loads a GPU checkpoint wherever it runs.
    silent_on_gpu_only = True

    def __init__(self, ctx) -> None:  # noqa: ANN001
        super().__init__(ctx)
        self._opened: dict[str, str] = {}  # `f` -> `args.save` for `with open(args.save) as f`
        # torch.save's paths, by function (None: module level), and the loads decided once the
        # walk has seen them all (a script often loads before the function that saves).
        self._saved: set[tuple[int | None, str]] = set()
        self._pending: list[tuple[cst.Call, int | None, str | None, bool, cst.CSTNode, str | None, str | None]] = []
        self._stateless_receivers: set[str] = set()  # names bound to a scheduler, a gradient scaler or a TensorRT engine: no tensors in their state
        self._loaded_into: dict[int, str] = {}  # id(load) -> `sched` for `sched.load_state_dict(torch.load(...))`
        self._scopes: list[int] = []  # the functions the walk is in, innermost last
        self._in_dataset: list[bool] = []  # per class the walk is in: does it derive from a Dataset?
        self._units: list[str] = []  # the classes and functions the walk is in, outermost first
        self._functions: list[cst.FunctionDef] = []  # the same functions' nodes
        self._fed_published: dict[tuple[int, str], bool] = {}  # (function, parameter) -> every call passes PyTorch's weights
        self._cached: set[int] = set()  # id(load) of `v = torch.load(p)` whose other branch builds and saves `v`
        self._numpy_read: set[int] = set()  # id(call) of `call.numpy()`
        self._fixtures: frozenset[str] | None = None  # pytest fixtures of the file returning temporary paths
        self._savers: frozenset[str] | None = None  # this file's functions that call torch.save
        # Per function, innermost last: does a name hold a temporary path (False: it shadows one)?
        self._frames: list[dict[str, bool]] = [{}]

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._in_dataset.append(self._derives_from_dataset(node))
        self._units.append(node.name.value)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._in_dataset.pop()
        self._units.pop()

    def _used_only_by_datasets(self) -> frozenset[str]:
        """The file's top-level functions and classes that only its Dataset subclasses use (or
        functions and classes only those use): every name of them outside their own definition
        is in such a class or function, and one is (Pytorch-UNet's `load_image`, read by its
        Dataset's `__getitem__`; ImageCaptioning's `HybridLoader`, which its Dataset builds)."""
        units: set[str] = set()
        uses: dict[str, set[str]] = {}  # name -> the top-level units naming it ("" for other statements)
        datasets: set[str] = set()
        for statement in self.ctx.module.body:
            if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
                name = statement.name.value
                units.add(name)
                if isinstance(statement, cst.ClassDef) and self._derives_from_dataset(statement):
                    datasets.add(name)
            else:
                name = ""
            for used in _names_used(statement):
                if used != name:
                    uses.setdefault(used, set()).add(name)
        only = set(datasets)
        changed = True
        while changed:
            changed = False
            for name in units:
                if name not in only and uses.get(name) and uses[name] <= only:
                    only.add(name)
                    changed = True
        return frozenset(only - datasets)

    def _derives_from_dataset(self, node: cst.ClassDef) -> bool:
        """A subclass of `torch.utils.data.Dataset`, directly, through a class of this file, or
        through a project class another file defines."""
        qualified = (self.ctx.qualify(base.value) or "" for cls in with_local_bases(self.ctx.module, node) for base in cls.bases)
        return any(name in DATASET_BASES or self.ctx.imported.is_dataset(name) for name in qualified)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        frame = _parameter_frame(node.params)
        for name in frame.keys() & self._temporary_fixtures():
            frame[name] = True  # a test given the file's fixture that returns a temporary path
        self._frames.append(frame)
        self._scopes.append(id(node))
        self._functions.append(node)
        self._units.append(node.name.value)

    def _temporary_fixtures(self) -> frozenset[str]:
        """The file's pytest fixtures whose every `return` gives a path under a temporary
        directory (LLMs-from-scratch's `qwen3_weights_path`, which saves a model under
        `tmp_path_factory.mktemp("models")`): a test taking one by name reads what this run wrote."""
        if self._fixtures is None:
            found = set()
            for statement in self.ctx.module.body:
                if isinstance(statement, cst.FunctionDef) and any(self._is_fixture(d.decorator) for d in statement.decorators):
                    self._frames.append(_parameter_frame(statement.params))
                    returns = []
                    for node in _in_source_order(statement.body):
                        if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
                            self._frames[-1][node.targets[0].target.value] = self._temporary_path(node.value)
                        elif isinstance(node, cst.Return) and node.value is not None:
                            returns.append(node.value)
                    if returns and all(self._temporary_path(value) for value in returns):
                        found.add(statement.name.value)
                    self._frames.pop()
            self._fixtures = frozenset(found)
        return self._fixtures

    def _is_fixture(self, decorator: cst.BaseExpression) -> bool:
        target = decorator.func if isinstance(decorator, cst.Call) else decorator
        return self.ctx.qualify(target) in ("pytest.fixture", "_pytest.fixtures.fixture")

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._frames.pop()
        self._scopes.pop()
        self._functions.pop()
        self._units.pop()

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self._frames.append(_parameter_frame(node.params))

    def leave_Lambda(self, original_node: cst.Lambda) -> None:
        self._frames.pop()

    def visit_WithItem(self, node: cst.WithItem) -> None:
        call = node.item
        if node.asname is not None and isinstance(call, cst.Call) and dotted_name(call.func) == "open" and call.args:
            target = dotted_name(node.asname.name)  # type: ignore[arg-type]
            if target is not None:
                self._opened[target] = self._text(call.args[0].value)
        if node.asname is not None and isinstance(node.asname.name, cst.Name):
            self._frames[-1][node.asname.name.value] = self._temporary_path(call)

    def visit_If(self, node: cst.If) -> None:
        # A cache: one branch loads `v`, the other computes `v` and saves it (itself, or through
        # this file's function that returns what it saves). The file is this code's own output.
        other = node.orelse.body if isinstance(node.orelse, cst.Else) else None
        if other is None:
            return
        for loading, building in ((node.body, other), (other, node.body)):
            if not isinstance(loading, cst.IndentedBlock) or not isinstance(building, cst.IndentedBlock):
                continue
            for name, load in self._loads_bound(loading):
                if self._builds_and_saves(building, name):
                    self._cached.add(id(load))

    def _loads_bound(self, block: cst.IndentedBlock) -> list[tuple[str, cst.Call]]:
        """`v = torch.load(p)` and `v, hit = torch.load(p), True` directly in the block."""
        found = []
        for line in block.body:
            if not isinstance(line, cst.SimpleStatementLine):
                continue
            for small in line.body:
                if not isinstance(small, cst.Assign) or len(small.targets) != 1:
                    continue
                for bound, expr in _bound_pairs(small):
                    if isinstance(bound, cst.Name) and isinstance(expr, cst.Call) and self.ctx.qualify(expr.func) in LOAD_FUNCTIONS:
                        found.append((bound.value, expr))
        return found

    def _builds_and_saves(self, block: cst.IndentedBlock, name: str) -> bool:
        """Does the block save `name` (`torch.save(name, ...)`), or bind it from this file's function
        that calls `torch.save`?"""
        for node in descendants(block):
            if not isinstance(node, cst.Call):
                continue
            if self.ctx.qualify(node.func) in SAVE_FUNCTIONS and node.args and isinstance(node.args[0].value, cst.Name):
                if node.args[0].value.value == name:
                    return True
        for node in descendants(block):
            if not isinstance(node, cst.Assign) or len(node.targets) != 1:
                continue
            for bound, expr in _bound_pairs(node):
                if isinstance(bound, cst.Name) and bound.value == name and isinstance(expr, cst.Call):
                    func = expr.func
                    method = isinstance(func, cst.Attribute) and dotted_name(func.value) in ("self", "cls")
                    called = func.attr.value if method else dotted_name(func)  # type: ignore[union-attr]
                    if called in self._saving_functions():
                        return True
        return False

    def _saving_functions(self) -> frozenset[str]:
        if self._savers is None:
            self._savers = frozenset(
                node.name.value
                for node in descendants(self.ctx.module)
                if isinstance(node, cst.FunctionDef)
                and any(isinstance(c, cst.Call) and self.ctx.qualify(c.func) in SAVE_FUNCTIONS for c in descendants(node.body))
            )
        return self._savers

    def visit_Assign(self, node: cst.Assign) -> None:
        if isinstance(node.value, cst.Call):
            built = self.ctx.qualify(node.value.func) or ""
            if built.startswith(LR_SCHEDULER_MODULE) or built in LR_SCHEDULER_FACTORIES or built in GRAD_SCALERS or built in TENSORRT_MODULES:
                self._stateless_receivers.update(name for t in node.targets if (name := dotted_name(t.target)) is not None)
        temporary = self._temporary_path(node.value)
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                self._frames[-1][target.target.value] = temporary

    def _temporary_path(self, expr: cst.BaseExpression) -> bool:
        """`tmp_path / "model.pt"`, `os.path.join(tempfile.mkdtemp(), name)`, a name bound to one."""
        if isinstance(expr, cst.Name):
            for frame in reversed(self._frames):
                if expr.value in frame:
                    return frame[expr.value]
            return expr.value in _TEMPORARY_NAMES
        if isinstance(expr, cst.Attribute):  # `self.tmpdirname`, `folder.name`
            return expr.attr.value in _TEMPORARY_NAMES or self._temporary_path(expr.value)
        if isinstance(expr, cst.BinaryOperation):
            return self._temporary_path(expr.left) or self._temporary_path(expr.right)
        if isinstance(expr, cst.FormattedString):
            return any(isinstance(part, cst.FormattedStringExpression) and self._temporary_path(part.expression) for part in expr.parts)
        if isinstance(expr, cst.Call):
            qualified = self.ctx.qualify(expr.func) or dotted_name(expr.func)
            if qualified in _TEMPORARY_CALLS:
                return True
            if qualified in _PATH_BUILDERS:
                return any(arg.keyword is None and not arg.star and self._temporary_path(arg.value) for arg in expr.args)
            if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in ("joinpath", "with_suffix", "with_name", "format", "mktemp", "getbasetemp"):
                return self._temporary_path(expr.func.value)
        return False

    def _published_by_pytorch(self, expr: cst.BaseExpression) -> bool:
        """`"https://download.pytorch.org/models/resnet50-....pth"`, or `model_urls["resnet50"]`
        from a module-level table of such URLs."""
        text = string_value(expr)
        if text is not None:
            return text.startswith(_CPU_PUBLISHED)
        if isinstance(expr, cst.Name) and not any(
            expr.value in {p.name.value for p in function.params.params} or _rebinds(function, expr.value) for function in self._functions
        ):
            # `resnet18_url = "https://download.pytorch.org/..."` at module level (face-parsing)
            constant = _module_constant(self.ctx.module, expr.value)
            return constant is not None and constant.startswith(_CPU_PUBLISHED)
        if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Name):
            table = _module_table(self.ctx.module, expr.value.value)
            urls = [url for url in table or () if url is not None]  # a `None` entry names no file
            return bool(urls) and all(url.startswith(_CPU_PUBLISHED) for url in urls)
        return False

    def _parameter_fed_published(self, expr: cst.BaseExpression) -> bool:
        """A parameter holds what the calls pass: torchvision's `_load_state_dict(model, model_url)`
        and torchreid's `init_pretrained_weights(model, model_url)` are called in their own file
        only, each call with an entry of the file's `model_urls` table."""
        if not isinstance(expr, cst.Name) or len(self._functions) != 1 or len(self._frames) != 2:
            return False  # not directly in a function's body (a lambda's, a nested function's)
        function, parameter = self._functions[0], expr.value
        key = (id(function), parameter)
        if key not in self._fed_published:
            arguments = _arguments_of_every_call(self.ctx.module, function, parameter)
            self._fed_published[key] = arguments is not None and all(self._published_by_pytorch(arg) for arg in arguments)
        return self._fed_published[key]

    def _text(self, expr: cst.BaseExpression) -> str:
        name = dotted_name(expr)
        if name is not None and name in self._opened:
            return self._opened[name]
        return " ".join(self.ctx.module.code_for_node(expr).split())

    def _is_local(self, path: cst.BaseExpression) -> bool:
        """Does the path name a local of this function? `self.ckpt` is the instance's in every
        method; `path` and `join(path, "m.pt")` are this call's."""
        if not self._scopes:
            return False
        attributes = [n for n in descendants(path) if type(n) is cst.Attribute]
        owners = {id(n.value) for n in attributes} | {id(n.attr) for n in attributes}  # type: ignore[attr-defined]
        bare = {n.value for n in descendants(path) if type(n) is cst.Name and id(n) not in owners}  # type: ignore[attr-defined]
        return any(name in self._frames[-1] for name in bare)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value == "numpy" and isinstance(node.value, cst.Call):
            self._numpy_read.add(id(node.value))  # `torch.load(f).numpy()`: only a CPU tensor has `.numpy()`

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "load_state_dict" and node.args and isinstance(node.args[0].value, cst.Call):
            receiver = dotted_name(func.value)
            if receiver is not None:
                self._loaded_into[id(node.args[0].value)] = receiver
        qualified = self.ctx.qualify(node.func)
        scope = self._scopes[-1] if self._scopes else None
        if qualified in SAVE_FUNCTIONS and len(node.args) >= 2:
            self._saved.add((scope, self._text(node.args[1].value)))
            return
        position = _MAP_LOCATION_POSITION.get(qualified or "")
        if position is None:
            return
        if self.ctx.guards.guarded and not self.ctx.settings.strict:
            return  # only where CUDA is, where a GPU checkpoint loads (stargan-v2's loaders)
        positional = [arg for arg in node.args if arg.keyword is None and not arg.star]
        if len(positional) > position or any(arg.star for arg in node.args):
            return
        if any(arg.keyword is not None and arg.keyword.value == "map_location" for arg in node.args):
            return
        path = node.args[0].value if node.args and not node.args[0].keyword else None
        if path is not None and self._temporary_path(path):
            return
        if qualified in DOWNLOAD_LOADS and not self.ctx.settings.strict:
            return  # published weights: what the uploaded file holds is not in the code
        if qualified in DOWNLOAD_LOADS and node.args:
            url = node.args[0].value
            if self._published_by_pytorch(url) or self._parameter_fed_published(url):
                return
        if self._in_dataset and self._in_dataset[-1]:
            return  # a Dataset's data, read for CPU loader workers
        function = self._functions[-1] if self._functions else self.ctx.module
        within = self.guarded_callable()
        unit = self._units[0] if self._units else None
        self._pending.append((node, scope, self._text(path) if path is not None else None, path is not None and self._is_local(path), function, within, unit))

    def _saved_on(self, load: cst.Call) -> tuple[str, ...] | None:
        """Where the tensors of the project's file that `load` reads by a literal path were saved
        (project/saved_tensors.py); None where no such file was read."""
        literal = _literal_path(load)
        return self.ctx.imported.saved.get(literal) if literal is not None else None

    def leave_Module(self, original_node: cst.Module) -> None:
        if self._pending and self.exempt_as_gpu_only and self.ctx.requires_cuda:
            return  # no line of the file runs without CUDA: a GPU checkpoint loads wherever it does
        anywhere = {text for _, text in self._saved}
        # The project's weights are CPU tensors where its own writer copies them there.
        cpu_weights = bool(self.ctx.imported.state_writers) or bool(self._pending) and writes_cpu_state(self.ctx.module, self.ctx.names.qualify, self.ctx.text)
        used_by_datasets = self._used_only_by_datasets() if any(unit is not None for *_, unit in self._pending) else frozenset()
        for node, scope, text, local, function, within, unit in self._pending:
            if unit in used_by_datasets:
                continue  # a reader only the file's Datasets use: their data, as a Dataset's own load
            # A load of the very path this file saved, in this function, or anywhere for a
            # path that is no local of this function: written on the machine reading it.
            if text is not None and ((scope, text) in self._saved or not local and text in anywhere):
                continue
            if id(node) in self._cached:
                continue  # this code's own cache, written where it is read
            if id(node) in self._numpy_read:
                continue  # `.numpy()` of what it loaded works for a CPU tensor only: the file holds one
            if self._loaded_into.get(id(node)) in self._stateless_receivers:
                continue  # a scheduler's state (numbers) or a TensorRT engine's (bytes): no tensors to restore
            if cpu_weights and restores_module_state(node, function):
                continue
            if read_as_cpu_format(node, function):
                continue  # BasicSR's format (`params_ema`): saved from CPU copies, wherever it was trained
            saved = self._saved_on(node)
            if saved is not None and all(location == "cpu" for location in saved):
                continue  # the project's own file, its tensors saved on the CPU: it loads anywhere
            if saved is None and not self.ctx.settings.strict and read_only_as_data(node, function, self.ctx.names.qualify):
                continue  # numbers read here (logs, statistics, a converter's input): whatever wrote them
            call = self.ctx.module.code_for_node(node.func)
            held = f" (this file's tensors were saved on `{next(l for l in saved if l != 'cpu')}`)" if saved else ""
            self.report(
                node,
                f"`{call}(...)` without `map_location`: a checkpoint saved on a GPU fails to load on a machine without one{held}; "
                "pass `map_location=device` (or `map_location=\"cpu\"`)",
                add_map_location(self.ctx, node),
                within=within,
            )


def _in_source_order(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The nodes below `node` as the source has them (a later binding of a name wins)."""
    yield node
    for child in node.children:
        yield from _in_source_order(child)


def _literal_path(load: cst.Call) -> str | None:
    first = load.args[0].value if load.args and load.args[0].keyword is None else None
    value = first.evaluated_value if isinstance(first, cst.SimpleString) else None
    return value if isinstance(value, str) else None


def _names_used(node: cst.CSTNode) -> set[str]:
    return {n.value for n in descendants(node) if isinstance(n, cst.Name)}


def _bound_pairs(node: cst.Assign) -> list[tuple[cst.BaseExpression, cst.BaseExpression]]:
    """What each target of a one-target assignment takes: `v, hit = load(p), True` pairs them up."""
    target, value = node.targets[0].target, node.value
    if isinstance(target, cst.Tuple) and isinstance(value, cst.Tuple) and len(target.elements) == len(value.elements):
        return [(t.value, v.value) for t, v in zip(target.elements, value.elements)]
    return [(target, value)]


def _module_constant(module: cst.Module, name: str) -> str | None:
    """The string a module-level name is bound to, once and to a literal (None: anything else)."""
    if _defined_twice(module, name):
        return None
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign) and any(isinstance(t.target, cst.Name) and t.target.value == name for t in small.targets):
                    return string_value(small.value)
    return None


def _module_table(module: cst.Module, name: str) -> list[str | None] | None:
    """The values of a module-level `name = {...}` dict literal of strings and `None`s (None: not one)."""
    for stmt in module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.Assign) and any(isinstance(t.target, cst.Name) and t.target.value == name for t in small.targets):
                if not isinstance(small.value, cst.Dict):
                    return None
                values: list[str | None] = []
                for element in small.value.elements:
                    if not isinstance(element, cst.DictElement):
                        return None  # `**other`: entries this file does not show
                    text = string_value(element.value)
                    if text is None and not (isinstance(element.value, cst.Name) and element.value.value == "None"):
                        return None
                    values.append(text)
                return values
    return None


def _arguments_of_every_call(module: cst.Module, function: cst.FunctionDef, parameter: str) -> list[cst.BaseExpression] | None:
    """What each call of a module-level function passes for `parameter`, where the file shows
    every use of the function as a plain call (None: it is used otherwise, never called, or
    the parameter is rebound in its body). Calls from other files are not seen."""
    params = [*function.params.posonly_params, *function.params.params]
    every = [*params, *function.params.kwonly_params]
    if function not in module.body or parameter not in {p.name.value for p in every} or _rebinds(function, parameter):
        return None
    name = function.name.value
    position = next((i for i, p in enumerate(params) if p.name.value == parameter), None)
    default = next((p.default for p in every if p.name.value == parameter), None)
    uses = [n for n in descendants(module) if type(n) is cst.Name and n.value == name and n is not function.name]  # type: ignore[attr-defined]
    calls = [n for n in descendants(module) if type(n) is cst.Call and type(n.func) is cst.Name and n.func.value == name]  # type: ignore[attr-defined]
    if not calls or len(uses) != len(calls) or _defined_twice(module, name):
        return None
    arguments = []
    for call in calls:
        argument = _argument_for(call, position, parameter, default)  # type: ignore[arg-type]
        if argument is None:
            return None
        arguments.append(argument)
    return arguments


def _argument_for(call: cst.Call, position: int | None, parameter: str, default: cst.BaseExpression | None) -> cst.BaseExpression | None:
    if any(arg.star for arg in call.args):
        return None  # `f(*args)`: which argument lands where is not shown
    keyword = next((arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value == parameter), None)
    if keyword is not None:
        return keyword
    positional = [arg.value for arg in call.args if arg.keyword is None]
    if position is not None and position < len(positional):
        return positional[position]
    return default


def _rebinds(function: cst.FunctionDef, name: str) -> bool:
    """Does the body assign the name (`model_url = args.url`), anywhere in it?"""
    for node in descendants(function.body):
        targets: list[cst.CSTNode] = []
        if isinstance(node, cst.AssignTarget):
            targets = [node.target]
        elif isinstance(node, (cst.AnnAssign, cst.AugAssign)):
            targets = [node.target]
        elif isinstance(node, (cst.For, cst.CompFor)):
            targets = [node.target]
        elif isinstance(node, cst.AsName):
            targets = [node.name]
        elif isinstance(node, cst.NamedExpr):
            targets = [node.target]
        elif isinstance(node, (cst.Global, cst.Nonlocal)):
            targets = [item.name for item in node.names]
        if any(type(n) is cst.Name and n.value == name for t in targets for n in descendants(t)):  # type: ignore[attr-defined]
            return True
    return False


def _defined_twice(module: cst.Module, name: str) -> bool:
    """Another module-level binding of the function's name: calls may reach either."""
    bound = 0
    for stmt in module.body:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) and stmt.name.value == name:
            bound += 1
        elif isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign) and any(type(t.target) is cst.Name and t.target.value == name for t in small.targets):  # type: ignore[attr-defined]
                    bound += 1
    return bound > 1
