"""A call's arguments as values, and the keywords the device analysis reads."""

from __future__ import annotations

import libcst as cst

from devlint.analysis import facts as F
from devlint.analysis.evaluation import Arguments, Evaluation
from devlint.analysis.facts import CPU, Kind, Value
from devlint.names import is_none


def arguments(run: Evaluation, node: cst.Call) -> Arguments:
    out: Arguments = []
    for arg in node.args:
        value = run.eval(arg.value)
        if arg.star == "**" and not value.batch:
            # `f(x, **kwargs)` hands on options the callee may use or drop (ZoeDepth's
            # `focal=`): which of them reach a tensor operation is unknown. A batch expanded
            # into a model (`model(**batch)`) is no such bag of options.
            value = F.UNKNOWN
        elif arg.star:
            value = (F.iterated(value) or F.UNKNOWN) if value.kind is Kind.SEQ else (value if value.batch else F.UNKNOWN)
        out.append((arg.value, value))
    return out


def flat(args: Arguments) -> Arguments:
    """Tensors inside list/tuple arguments count as operands (`torch.cat([x, h])`)."""
    out: Arguments = []
    for expr, value in args:
        if value.kind is Kind.SEQ and (F.iterated(value) is not None or value.items is not None):
            items = list(value.items) if value.items is not None else list(value.parts or (value.elem,))  # type: ignore[arg-type]
            elements = getattr(expr, "elements", None)
            if elements is not None and len(elements) == len(items):
                out.extend((el.value, item) for el, item in zip(elements, items))
            else:
                out.extend((expr, item) for item in items)
        else:
            out.append((expr, value))
    return out


def only_arguments(args: Arguments, node: cst.Call, keep: frozenset[int | str]) -> Arguments:
    """The arguments passed at the positions or keywords in `keep`."""
    out: Arguments = []
    index = 0
    for (expr, value), arg in zip(args, node.args):
        if arg.keyword is not None:
            if arg.keyword.value in keep:
                out.append((expr, value))
        elif not arg.star:
            if index in keep:
                out.append((expr, value))
            index += 1
    return out


def keyword(node: cst.Call, name: str) -> cst.Arg | None:
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def device_keyword(node: cst.Call) -> cst.Arg | None:
    """`device=X`; `device=None` asks for the default device, as leaving it out does."""
    arg = keyword(node, "device")
    return None if arg is not None and is_none(arg.value) else arg


def keywords_unpacked(node: cst.Call) -> bool:
    """`f(..., **options)`: any keyword, `device=` included, may be in there."""
    return any(arg.star == "**" for arg in node.args)


def maybe_moved_module(value: Value) -> bool:
    """A module, or something moved like one (`model = model.to(device)` on a parameter), not known on the CPU."""
    if value.kind is Kind.MODULE:
        return not value.stateless and value.place != CPU
    return value.kind is Kind.UNKNOWN and value.place.on_accelerator


def wraps_what_it_is_given(wrapped: tuple[int, ...], node: cst.Call, args: Arguments) -> bool:
    """Building a module moves nothing: one that keeps and calls a module it is given
    (`Wrapper(model)`) has that module's tensors, wherever the caller put them."""
    if not wrapped:
        return False
    positional = [value for (_, value), arg in zip(args, node.args) if arg.keyword is None and not arg.star]
    return any(
        position >= len(positional) or positional[position].kind is Kind.UNKNOWN and positional[position].place != CPU
        for position in wrapped
    )
