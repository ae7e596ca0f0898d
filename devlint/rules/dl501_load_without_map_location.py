"""DL501: `torch.load` without `map_location`."""

from __future__ import annotations

import libcst as cst

from devlint.analysis.torchnames import LOAD_FUNCTIONS, SAVE_FUNCTIONS
from devlint.names import dotted_name
from devlint.tree import descendants
from devlint.fixes import add_map_location
from devlint.rule import Rule


# pytest's temporary-directory fixtures and the names tests give `TemporaryDirectory()`.
_TEMPORARY_NAMES = frozenset({"tmp_path", "tmpdir", "tmp_path_factory", "tmpdirname", "tmp_dir", "temp_dir"})
_TEMPORARY_CALLS = frozenset(
    {"tempfile.TemporaryDirectory", "tempfile.mkdtemp", "tempfile.NamedTemporaryFile", "tempfile.mkstemp", "tempfile.gettempdir"}
)


class LoadWithoutMapLocation(Rule):
    """A checkpoint saved from GPU tensors restores them onto the GPU: on a
    CPU-only machine `torch.load` raises "Attempting to deserialize object on
    a CUDA device". `map_location` makes the load portable.

    A file that never names an accelerator (pure CPU code), a load of a
    checkpoint the same script saved (same path expression, also through
    `with open(path) as f`), and a load from a temporary directory (pytest's
    `tmp_path`, `tempfile.TemporaryDirectory()`) are not reported: that file
    was written on the machine reading it.
    """

    code = "DL501"
    name = "load-without-map-location"
    summary = "`torch.load(...)` without `map_location` fails on CPU-only machines for GPU checkpoints"
    needles = ("load",)
    # Unsafe: the tensors then load where map_location says, not where they were saved.
    fix = "unsafe"

    def __init__(self, ctx) -> None:  # noqa: ANN001
        super().__init__(ctx)
        self._opened: dict[str, str] = {}  # `f` -> `args.save` for `with open(args.save) as f`
        self._saved: set[str] | None = None
        self._temporary: list[set[str]] = [set()]  # per function: names that hold a temporary path

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._temporary.append(set())

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._temporary.pop()

    def visit_WithItem(self, node: cst.WithItem) -> None:
        call = node.item
        if node.asname is not None and isinstance(call, cst.Call) and dotted_name(call.func) == "open" and call.args:
            target = dotted_name(node.asname.name)  # type: ignore[arg-type]
            if target is not None:
                self._opened[target] = self._text(call.args[0].value)
        if node.asname is not None and isinstance(node.asname.name, cst.Name) and self._temporary_path(call):
            self._temporary[-1].add(node.asname.name.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        if self._temporary_path(node.value):
            for target in node.targets:
                if isinstance(target.target, cst.Name):
                    self._temporary[-1].add(target.target.value)

    def _temporary_path(self, expr: cst.BaseExpression) -> bool:
        """`tmp_path / "model.pt"`, `tempfile.mkdtemp()`, or a name this function bound to one."""
        for node in descendants(expr):
            if type(node) is cst.Name and (node.value in _TEMPORARY_NAMES or any(node.value in names for names in self._temporary)):
                return True
            if type(node) is cst.Call and self.ctx.qualify(node.func) in _TEMPORARY_CALLS:  # type: ignore[attr-defined]
                return True
        return False

    def _text(self, expr: cst.BaseExpression) -> str:
        name = dotted_name(expr)
        if name is not None and name in self._opened:
            return self._opened[name]
        return " ".join(self.ctx.module.code_for_node(expr).split())

    def _saved_paths(self) -> set[str]:
        """Path expressions this file hands to torch.save (resolved through `with open`)."""
        if self._saved is None:
            self._saved = _saved_paths_in(self)
        return self._saved

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.qualify(node.func) not in LOAD_FUNCTIONS:
            return
        positional = [arg for arg in node.args if arg.keyword is None and not arg.star]
        if len(positional) >= 2 or any(arg.star == "**" for arg in node.args):
            return
        if any(arg.keyword is not None and arg.keyword.value == "map_location" for arg in node.args):
            return
        if not self.ctx.may_use_accelerator:
            return
        if node.args and not node.args[0].keyword and self._text(node.args[0].value) in self._saved_paths():
            return
        if node.args and not node.args[0].keyword and self._temporary_path(node.args[0].value):
            return
        call = self.ctx.module.code_for_node(node.func)
        self.report(
            node,
            f"`{call}(...)` without `map_location`: a checkpoint saved on a GPU fails to load on a machine without one; "
            "pass `map_location=device` (or `map_location=\"cpu\"`)",
            add_map_location(self.ctx, node),
        )


def _saved_paths_in(rule: LoadWithoutMapLocation) -> set[str]:
    opened: dict[str, str] = {}
    paths: set[str] = set()
    for node in descendants(rule.ctx.module):
        if type(node) is cst.WithItem:
            call = node.item
            if node.asname is not None and isinstance(call, cst.Call) and dotted_name(call.func) == "open" and call.args:
                target = dotted_name(node.asname.name)  # type: ignore[arg-type]
                if target is not None:
                    opened[target] = " ".join(rule.ctx.module.code_for_node(call.args[0].value).split())
        elif type(node) is cst.Call and len(node.args) >= 2 and rule.ctx.names.qualify(node.func) in SAVE_FUNCTIONS:
            expr = node.args[1].value
            name = dotted_name(expr)
            paths.add(opened.get(name, "") if name in opened else " ".join(rule.ctx.module.code_for_node(expr).split()))
    return paths
