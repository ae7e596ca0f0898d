"""DL101: `.cuda()` hardcodes an NVIDIA GPU."""

from __future__ import annotations

import libcst as cst

from devlint.fixes import cuda_to_device, device_in_scope
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
        fix = cuda_to_device(self.ctx, calls, device) if device is not None else None
        receiver = self.ctx.code_range(first.func.value)  # type: ignore[attr-defined]
        # `WaveRNN(\n ...\n).cuda()`: the finding starts where `.cuda()` is, not 14 lines above.
        at = first.func.attr if receiver.end.line > receiver.start.line else first  # type: ignore[attr-defined]
        self.report_unless_guarded(at, message, fix)


def _snippet(code: str, limit: int = 60) -> str:
    """Code quoted in a message: one line (findings are one line each), and short."""
    return snippet(code, limit)
