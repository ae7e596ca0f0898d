"""DL102: an accelerator named literally where a device is chosen."""

from __future__ import annotations

import libcst as cst

from devlint.analysis.accelerator_use import is_cpu_device
from devlint.analysis.call_sites import calls_of_file, holds_every_call, passed
from devlint.analysis.guards import device_type_of_string, string_value
from devlint.analysis.parameter_reads import parameter_reads
from devlint.analysis.torchapi import ACCELERATOR_TYPES, CUDA_TENSOR_TYPES
from devlint.names import ImportTable, dotted_name
from devlint.rule import Rule
from devlint.snippet import snippet
from devlint.tree import descendants

_SET_DEFAULT_TYPE = frozenset({"torch.set_default_tensor_type"})
# What draws indices with a CPU `torch.Generator`: a loader, sampler or generator class (any
# `*Sampler`), or `random_split`, named anywhere in the file's code.
_RANDOM_INDEX_WORDS = frozenset({"DataLoader", "Generator", "random_split"})


def _is_device_name(name: str) -> bool:
    lowered = name.lower()
    # `device_type="cuda"` selects among kinds (autocast, test decorators,
    # per-backend tables); it places nothing and fails on no machine.
    if lowered.endswith("type") or lowered.endswith("types"):
        return False
    return "device" in lowered or lowered in {"dev", "gpu", "map_location"}


class AcceleratorLiteral(Rule):
    """`"cuda"`, `"cuda:1"`, `torch.device("cuda")`, `device="mps"` placed where a
    device is chosen pin the code to one kind of machine.

    The device-selection idiom is never reported: a ternary between an
    accelerator and the CPU (`"cuda" if torch.cuda.is_available() else "cpu"`,
    cuda/mps/cpu chains, `"cuda" if use_cuda else "cpu"`), literals under an
    availability check, comparisons (`device.type == "cuda"`), and
    `torch.device("cuda", local_rank)` in multi-GPU code, which is GPU-only by
    construction. Nor are a `device="cuda"` default that only picks the
    autocast backend, a default every call overrides (of a private function, or of a
    script, whose calls the file holds all of), a default no read of the parameter can
    see (never read, or bound anew before any read), and a command-line
    default the file falls back from (`args.device = "cpu"`, `args.device if <check> else "cpu"`).
    `torch.set_default_tensor_type(torch.cuda.FloatTensor)` is
    reported even under a guard where the file draws random indices: it also
    moves the `randperm` of DataLoader's shuffling to CUDA, where the CPU
    generator fails it.
    """

    code = "DL102"
    name = "accelerator-literal"
    summary = "an accelerator device literal (`\"cuda\"`, `torch.device(\"cuda\")`, `device=\"cuda\"`) outside the device-selection idiom"
    # The short device types occur inside common words ("input" holds "npu"), so
    # for them only a quoted literal is looked for: `"npu:0"`, `f'hpu:{i}'`.
    needles = (
        "cuda",
        "mps",
        "xpu",
        "get_device",
        *(f"{quote}{kind}" for kind in sorted(ACCELERATOR_TYPES - {"cuda", "mps", "xpu"}) for quote in "\"'"),
    )
    silent_on_gpu_only = True

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._idiom: set[int] = set()
        self._reported: set[int] = set()
        self._defaults: list[tuple[cst.CSTNode, str]] = []  # command-line defaults, by option name
        self._random_indices: bool | None = None

    # A branch of a device-choosing ternary is the idiom, never a finding.
    def visit_IfExp(self, node: cst.IfExp) -> None:
        branches = (node.body, node.orelse)
        if any(self._names_device(branch) for branch in branches):
            for branch in branches:
                for inner in _literal_parts(branch):
                    self._idiom.add(id(inner))

    # `x.device != torch.device("mps:0")`, `torch.device("cuda") in devices`:
    # asking where something is places nothing.
    def visit_Comparison(self, node: cst.Comparison) -> None:
        for operand in (node.left, *(target.comparator for target in node.comparisons)):
            for inner in _literal_parts(operand):
                self._idiom.add(id(inner))

    def _names_device(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.IfExp):
            return True
        value = string_value(expr)
        if value is not None:
            return device_type_of_string(value) is not None
        return self.ctx.qualify(expr) in CUDA_TENSOR_TYPES or (
            isinstance(expr, cst.Call) and self.ctx.qualify(expr.func) == "torch.device"
        )

    def _accelerator_literal(self, expr: cst.BaseExpression) -> cst.CSTNode | None:
        """The literal node if expr names an accelerator outright."""
        if id(expr) in self._idiom:
            return None
        value = string_value(expr)
        if value is not None:
            kind = device_type_of_string(value)
            return expr if kind in ACCELERATOR_TYPES else None
        if isinstance(expr, cst.Call) and self.ctx.qualify(expr.func) == "torch.device":
            positional = [arg for arg in expr.args if arg.keyword is None]
            if len(expr.args) >= 2 or not positional:
                return None  # torch.device("cuda", local_rank): multi-GPU code
            return self._accelerator_literal(positional[0].value)
        return None

    def _flag(self, node: cst.CSTNode, where: str) -> None:
        if self.ctx.guards.guarded or id(node) in self._reported or self.exempt_as_gpu_only:
            return
        self._reported.add(id(node))
        text = _snippet(self.ctx.module.code_for_node(node))
        self.report_unless_guarded(
            node,
            f"`{text}` {where} hardcodes an accelerator and fails on machines without one; "
            "select the device at run time (`\"cuda\" if torch.cuda.is_available() else \"cpu\"`) and pass it in",
        )

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.ctx.qualify(node.func)
        if qualified in _SET_DEFAULT_TYPE and node.args:
            arg = node.args[0].value
            value = string_value(arg)
            if self.ctx.qualify(arg) in CUDA_TENSOR_TYPES or (value is not None and value.startswith("torch.cuda.")):
                if self.ctx.guards.guarded and not self._draws_random_indices():
                    return
                if self.ctx.guards.guarded:
                    message = (
                        "`torch.set_default_tensor_type` with a CUDA type also makes CUDA the default for samplers and "
                        "generators (DataLoader shuffling then fails with \"Expected a 'cuda' device type for generator\"); "
                        "create tensors with `device=` instead"
                    )
                else:
                    # Where no check guards it, the call itself raises first ("type torch.cuda.HalfTensor not available").
                    message = (
                        "`torch.set_default_tensor_type` with a CUDA type raises on machines without CUDA (\"type ... not "
                        "available\"); choose the type at run time, or create tensors with `device=` instead"
                    )
                self.report(node, message)
            return
        if qualified in CUDA_TENSOR_TYPES:
            self._flag(node.func, "(a legacy CUDA tensor type)")
            return
        if qualified == "torch.device":
            literal = self._accelerator_literal(node)
            if literal is not None:
                self._flag(literal, "in `torch.device()`")
            return
        if qualified in {"torch.set_default_device"} and node.args:
            literal = self._accelerator_literal(node.args[0].value)
            if literal is not None:
                self._flag(literal, "as the default device")
            return
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "type" and len(node.args) == 1 and node.args[0].keyword is None:
            target = node.args[0].value
            text = string_value(target)
            if self.ctx.qualify(target) in CUDA_TENSOR_TYPES or text is not None and text.startswith("torch.cuda."):
                self._flag(target, "in `.type()`")
                return
        if isinstance(func, cst.Attribute) and func.attr.value == "to" and node.args and node.args[0].keyword is None:
            literal = self._accelerator_literal(node.args[0].value)
            if literal is not None:
                self._flag(literal, "in `.to()`")
        if isinstance(func, cst.Attribute) and func.attr.value == "to" and node.args:
            if self._get_device_call(node.args[0].value):
                self.report(
                    node.args[0].value,
                    f"`.to({self.ctx.module.code_for_node(node.args[0].value)})` assumes a GPU: `get_device()` is a CUDA "
                    "ordinal and -1 for CPU tensors; use `.to(t.device)`",
                )
        for arg in node.args:
            if arg.keyword is not None and _is_device_name(arg.keyword.value):
                literal = self._accelerator_literal(arg.value)
                if literal is not None:
                    self._flag(literal, f"as `{arg.keyword.value}=`")
        if isinstance(func, cst.Attribute) and func.attr.value == "add_argument":
            self._argparse_default(node)

    def _draws_random_indices(self) -> bool:
        """Whether the file names what draws indices with a CPU generator (a DataLoader's
        sampler, `random_split`, a `torch.Generator`): where CUDA is, the CUDA default type
        breaks these, and nothing else of a program that sets it there."""
        if self._random_indices is None:
            names = (
                node.value if isinstance(node, cst.Name) else node.attr.value
                for node in descendants(self.ctx.module)
                if isinstance(node, (cst.Name, cst.Attribute))
            )
            self._random_indices = any(name in _RANDOM_INDEX_WORDS or name.endswith("Sampler") for name in names)
        return self._random_indices

    def _get_device_call(self, expr: cst.BaseExpression) -> bool:
        return (
            isinstance(expr, cst.Call)
            and isinstance(expr.func, cst.Attribute)
            and expr.func.attr.value == "get_device"
            and not expr.args
            # `dist.get_device()` of an imported module is that module's function, no tensor's method.
            and not (isinstance(expr.func.value, cst.Name) and expr.func.value.value in self.ctx.names.bindings)
        )

    def _argparse_default(self, node: cst.Call) -> None:
        flags = [string_value(arg.value) or "" for arg in node.args if arg.keyword is None]
        if not any(_is_device_name(flag.lstrip("-")) for flag in flags):
            return
        keywords = {arg.keyword.value: arg.value for arg in node.args if arg.keyword is not None}
        literal = self._accelerator_literal(keywords["default"]) if "default" in keywords else None
        if literal is None or self.ctx.guards.guarded:
            return
        dest = string_value(keywords["dest"]) if "dest" in keywords else None
        if dest is None:
            long = [flag for flag in flags if flag.startswith("--")] or flags
            dest = long[0].lstrip("-").replace("-", "_")
        self._defaults.append((literal, dest))

    def leave_Module(self, original_node: cst.Module) -> None:
        # Decided at the end: the fallback comes after the parser in the file.
        fallbacks = _cpu_fallbacks(original_node, self.ctx.names) if self._defaults else frozenset()
        for literal, dest in self._defaults:
            if dest not in fallbacks:
                self._flag(literal, "as the command-line default")

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        params = node.params
        positional = [*params.posonly_params, *params.params]
        for param in (*positional, *params.kwonly_params):
            if (
                param.default is not None
                and _is_device_name(param.name.value)
                and self._accelerator_literal(param.default) is not None
                and (self._only_a_device_type(node, param.name.value) or self._always_passed(node, param, positional))
            ):
                self._idiom.add(id(param.default))

    def _always_passed(self, func: cst.FunctionDef, param: cst.Param, positional: list[cst.Param]) -> bool:
        """Every call of the function passes the parameter, so its default never takes effect
        (`encode_tokens(..., device=device)` wherever it is called). The file's calls are all
        the calls only for a private function (`_encode`) or one of a script (a file with an
        `if __name__ == "__main__":` block); the public functions of a module are also for other
        files and users to call (GroundingDINO's `predict(device="cuda")`, called without a
        device in its README), and their defaults stay reported."""
        if not holds_every_call(self.ctx.module, func):
            return False
        calls = self.ctx.shared(calls_of_file).get(func.name.value)
        if not calls:
            return False
        name = param.name.value
        # A call that may pass it in `*args`/`**kwargs` is not known to leave it out.
        return all(any(arg.star for arg in call.args) or passed(call, func, name) is not None for call in calls)

    def _only_a_device_type(self, func: cst.FunctionDef, name: str) -> bool:
        """`def autocast(enabled, device="cuda"): return torch.amp.autocast(device, ...)`: the
        parameter only picks a backend, which is disabled with a warning where it is missing.
        A parameter the function never reads places nothing either, nor one it binds anew
        before any read (`device = camera.origin.device` first): the default cannot reach
        anything whatever the callers pass or omit."""
        reads = parameter_reads(func, name)
        if reads is None:
            return False  # `locals()`: read where the walk does not see
        read = {id(node) for node in reads}
        kinds = 0
        compared = 0  # neither way: `if device == "cpu": ... else: torch.cuda._sleep(n)`
        for node in descendants(func.body):
            kind = type(node)
            if kind is cst.Call:
                chosen = _type_argument(node, self.ctx.qualify(node.func) in _DEVICE_TYPE_CALLS)  # type: ignore[arg-type]
                if id(chosen) in read:
                    kinds += 1
            elif kind is cst.Comparison:
                operands = (node.left, *(target.comparator for target in node.comparisons))  # type: ignore[attr-defined]
                compared += sum(1 for operand in operands if id(operand) in read)
        return not read or kinds > 0 and len(read) == kinds + compared  # never read: "cuda" reaches nothing

    def visit_Param(self, node: cst.Param) -> None:
        if node.default is not None and _is_device_name(node.name.value):
            literal = self._accelerator_literal(node.default)
            if literal is not None:
                self._flag(literal, f"as the default of `{node.name.value}`")

    def visit_Assign(self, node: cst.Assign) -> None:
        if self.ctx.qualify(node.value) in CUDA_TENSOR_TYPES and id(node.value) not in self._idiom:
            # `Tensor = torch.cuda.FloatTensor`: every `Tensor(...)` and `.type(Tensor)` allocates on the GPU.
            self._flag(node.value, "assigned as the tensor type")
            return
        names = [dotted_name(target.target) or "" for target in node.targets]
        if any(_is_device_name(name.rsplit(".", 1)[-1]) for name in names):
            literal = self._accelerator_literal(node.value)
            if literal is not None:
                self._flag(literal, "assigned as the device")


# Calls whose first argument is a device type that only switches a feature on:
# without that backend they warn and disable themselves.
_DEVICE_TYPE_CALLS = frozenset({"torch.autocast", "torch.amp.autocast", "torch.amp.GradScaler", "torch.amp.grad_scaler.GradScaler"})


def _type_argument(call: cst.Call, positional: bool) -> cst.BaseExpression | None:
    """The `device_type=` argument of a call, or its first positional one for a device-type call."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "device_type":
            return arg.value
    first = call.args[0] if call.args else None
    if positional and first is not None and first.keyword is None and not first.star:
        return first.value
    return None


def _cpu_fallbacks(module: cst.Module, names: ImportTable) -> frozenset[str]:
    """Options the file falls back from: `args.device = "cpu"`, `args.device if <check> else "cpu"`."""
    found: set[str] = set()
    for node in descendants(module):
        if type(node) is cst.Assign and is_cpu_device(node.value, names):  # type: ignore[attr-defined]
            found.update(t.target.attr.value for t in node.targets if type(t.target) is cst.Attribute)  # type: ignore[attr-defined]
        elif type(node) is cst.IfExp:
            branches = (node.body, node.orelse)  # type: ignore[attr-defined]
            if any(is_cpu_device(branch, names) for branch in branches):
                found.update(branch.attr.value for branch in branches if type(branch) is cst.Attribute)
    return frozenset(found)


def _literal_parts(expr: cst.BaseExpression) -> list[cst.CSTNode]:
    """The string literals (and torch.device calls) a branch chooses among."""
    if isinstance(expr, cst.IfExp):
        return [*_literal_parts(expr.body), *_literal_parts(expr.orelse)]
    parts: list[cst.CSTNode] = [expr]
    if isinstance(expr, cst.Call) and expr.args:
        parts.append(expr.args[0].value)
    return parts


def _snippet(code: str, limit: int = 60) -> str:
    """Code quoted in a message: one line (findings are one line each), and short."""
    return snippet(code, limit)

