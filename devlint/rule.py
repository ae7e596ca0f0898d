"""The unit of checking: a rule declares its metadata and visits libcst nodes.

A rule subclass sets `code`, `name`, `summary` and overrides `visit_<Node>` /
`leave_<Node>` methods as a libcst visitor would. The engine batches every
selected rule into one walk of the tree and knows no rule by name.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

import libcst as cst

from devlint.codes import RuleInfo
from devlint.finding import Fix

if TYPE_CHECKING:
    from devlint.context import FileContext




class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]
    default_enabled: ClassVar[bool] = True
    fix: ClassVar[str] = ""
    # The rule cannot fire on a file that contains none of these strings:
    # such files are not even parsed.
    needles: ClassVar[tuple[str, ...]] = ("torch",)
    # No finding in a file that cannot run without a GPU whatever it is told (Triton kernels, an
    # NCCL script): naming CUDA there is by design. The engine relies on it too: a project fact
    # that only makes a file GPU-only cannot change a file without such findings.
    silent_on_gpu_only: ClassVar[bool] = False

    def __init__(self, ctx: "FileContext") -> None:
        self.ctx = ctx

    @property
    def exempt_as_gpu_only(self) -> bool:
        return self.silent_on_gpu_only and self.ctx.gpu_only

    @classmethod
    def info(cls) -> RuleInfo:
        return RuleInfo(cls.code, cls.name, cls.summary, cls.default_enabled, cls.fix)

    def report(
        self,
        node: cst.CSTNode,
        message: str,
        fix: Fix | None = None,
        related: Sequence[tuple[cst.CSTNode, str]] = (),
        within: str | None = None,
    ) -> None:
        """`within`: the function the finding is in, dropped where its callers' guards answer for it."""
        self.ctx.report(self.code, node, message, fix, related, within)

    def guarded_callable(self) -> str | None:
        """The function the walk is in, whose callers' guards may answer for what needs an
        accelerator in it (none with `--strict`). Read it during the walk."""
        return None if self.ctx.settings.strict else self.ctx.guards.callable

    def report_unless_guarded(self, node: cst.CSTNode, message: str, fix: Fix | None = None) -> None:
        """Reports code that needs an accelerator, unless the function it is in runs only
        behind a check at every place this file calls it."""
        self.report(node, message, fix, within=self.guarded_callable())
