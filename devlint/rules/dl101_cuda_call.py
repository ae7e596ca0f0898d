"""DL101: `.cuda()` hardcodes an NVIDIA GPU."""

from __future__ import annotations

import libcst as cst

from devlint.fixes import cuda_to_device, device_in_scope
from devlint.names import dotted_name, with_local_bases
from devlint.rule import Rule
from devlint.snippet import snippet


class CudaCall(Rule):
    """`x.cuda()` / `model.cuda()` crash on any machine without CUDA (a laptop, a Mac, CI).

    Calls guarded by `torch.cuda.is_available()` (or a flag derived from it)
    are correct and only reported with `strict = true`. `.cuda(rank)` with a
    device index from a variable is multi-GPU code, GPU-only by design. Several `.cuda()` in
    one statement are one finding: they are one mistake, fixed together.
    """

    code = "DL101"
    name = "cuda-call"
    summary = "`.cuda()` on a tensor or module hardcodes a CUDA GPU"
    needles = ("cuda",)
    silent_on_gpu_only = True
    # `.cuda()` -> `.to(device)` only where a device variable is certainly bound.
    fix = "safe"

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._statement: list[cst.Call] | None = None
        self._classes: list[cst.ClassDef] = []
        self._functions: list[str] = []  # names of the functions the walk is in, innermost last

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._functions.append(node.name.value)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._functions.pop()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._classes.append(node)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._classes.pop()

    def _own_cuda(self, receiver: cst.BaseExpression) -> bool:
        """`self.cuda()` in a class that defines `cuda` (itself or through a base of this file):
        the class's own method, whose body runs only where its caller asked for CUDA (FLUX's
        TensorRT engine calls it from its own `to()`, for a non-CPU device only)."""
        if not (isinstance(receiver, cst.Name) and receiver.value == "self") or not self._classes:
            return False
        return any(
            isinstance(item, cst.FunctionDef) and item.name.value == "cuda"
            for cls in with_local_bases(self.ctx.module, self._classes[-1])
            for item in cls.body.body
        )

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._statement = []

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine) -> None:
        self._flush()

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "cuda"):
            return
        if self.ctx.qualify(func.value) is not None and self.ctx.qualify(func.value).split(".")[0] == "torch":
            return  # torch.cuda is the module, not a .cuda() call
        if self._own_cuda(func.value):
            return
        if self.ctx.guards.guarded and not self.ctx.settings.strict or self.exempt_as_gpu_only:
            return
        if any(arg.keyword is None and not isinstance(arg.value, cst.Integer) or arg.keyword is not None and arg.keyword.value == "device" for arg in node.args):
            # `.cuda(rank)`: one GPU per process, multi-GPU code that is GPU-only by design.
            return
        if self._statement is None:
            self._emit([node])
        else:
            self._statement.append(node)

    def _flush(self) -> None:
        calls, self._statement = self._statement, None
        if calls:
            self._emit(calls)

    def _emit(self, calls: list[cst.Call]) -> None:
        first = calls[0]
        if len(calls) == 1:
            target = _snippet(self.ctx.module.code_for_node(first.func.value))  # type: ignore[attr-defined]
            message = f"`{target}.cuda()` hardcodes a CUDA GPU and fails on machines without one; use `.to(device)` with a selected device"
        else:
            # One finding for the statement, but each call named: the fix rewrites them all.
            named = ", ".join(
                f"`{_snippet(self.ctx.module.code_for_node(call.func.value), 40)}.cuda()`"  # type: ignore[attr-defined]
                for call in calls
            )
            message = (
                f"{len(calls)} `.cuda()` calls ({named}) hardcode a CUDA GPU and fail on machines "
                "without one; use `.to(device)` with a selected device"
            )
        device = device_in_scope(self.ctx, first)
        # `self.cuda()` inside the class's own `to()`: `self.to(device)` would call itself for ever.
        recursive = self._functions[-1:] == ["to"] and any(dotted_name(call.func.value) == "self" for call in calls)  # type: ignore[attr-defined]
        fix = cuda_to_device(self.ctx, calls, device) if device is not None and not recursive else None
        receiver = self.ctx.code_range(first.func.value)  # type: ignore[attr-defined]
        # `WaveRNN(\n ...\n).cuda()`: the finding starts where `.cuda()` is, not 14 lines above.
        at = first.func.attr if receiver.end.line > receiver.start.line else first  # type: ignore[attr-defined]
        self.report_unless_guarded(at, message, fix)


def _snippet(code: str, limit: int = 60) -> str:
    """Code quoted in a message: one line (findings are one line each), and short."""
    return snippet(code, limit)
