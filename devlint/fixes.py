"""Builders of the fixes rules attach to findings.

Every builder takes the rule's `FileContext` and the libcst nodes of the finding
and returns a `Fix` (edits at character offsets into the file's text), or None
when the rewrite cannot be made with confidence; a rule then reports without a
fix. Replacement text is assembled from the source of the nodes themselves, so
comments and formatting inside them survive.

A fix is *safe* when the program behaves the same on every machine where it
already works and only the broken case changes.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import libcst as cst

from devlint.analysis.guards import device_type_of_string, string_value
from devlint.analysis.torchapi import DTYPES, takes_device
from devlint.finding import Edit, Fix
from devlint.names import dotted_name
from devlint.tree import descendants, parent_table

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from devlint.context import FileContext


# Expressions after which `.attr` binds to the whole expression without parentheses.
_POSTFIX_SAFE = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.List, cst.Dict, cst.Set, cst.SimpleString)


# -- positions ---------------------------------------------------------------
def outer_span(ctx: "FileContext", node: cst.CSTNode) -> tuple[int, int]:
    """Offsets of a node including its own parentheses (libcst's range leaves them out)."""
    start, end = ctx.offsets(node)
    module = ctx.module
    for paren in getattr(node, "lpar", ()):
        start -= len(module.code_for_node(paren))
    for paren in getattr(node, "rpar", ()):
        end += len(module.code_for_node(paren))
    return start, end


def source_of(ctx: "FileContext", node: cst.CSTNode) -> str:
    """The node's text exactly as written, parentheses included."""
    start, end = outer_span(ctx, node)
    return ctx.text[start:end]


def postfix_ready(node: cst.BaseExpression) -> bool:
    """Can `.method()` follow `node` as written (`t`, `f(x)`, `(a + b)`), or does it need parentheses?"""
    return bool(getattr(node, "lpar", ())) or isinstance(node, _POSTFIX_SAFE)


def _method_call(ctx: "FileContext", expr: cst.BaseExpression, suffix: str) -> list[Edit]:
    """Edits that turn `expr` into `expr<suffix>` (`(a + b).cpu()` where needed)."""
    start, end = outer_span(ctx, expr)
    if postfix_ready(expr):
        return [Edit(end, end, suffix)]
    return [Edit(start, start, "("), Edit(end, end, ")" + suffix)]


# -- DL202 ---------------------------------------------------------------------
def assign_result(ctx: "FileContext", call: cst.Call, safe: bool = True) -> Fix | None:
    """`x.to(device)` as a statement -> `x = x.to(device)` (also `.cuda()`, `.cpu()`).

    `call` is the Call that is the whole expression statement. Only a plain
    name receiver is fixed (None otherwise). The fix is safe unless the call
    visibly converts a dtype (`dtype=`, `torch.float16`): then keeping the
    result changes values on every machine, and the fix is marked unsafe.
    Pass `safe=False` when the rule knows less than that.
    """
    func = call.func
    if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)):
        return None
    if func.attr.value not in {"to", "cuda", "cpu"} or func.value.lpar:
        return None
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is not None and arg.keyword.value == "dtype":
            safe = False
        if arg.keyword is None and ctx.names.qualify(arg.value) in DTYPES:
            safe = False
    name = func.value.value
    start, _ = outer_span(ctx, call)
    return Fix((Edit(start, start, f"{name} = "),), safe=safe, title=f"Assign the result back to `{name}`")


# -- DL302 ---------------------------------------------------------------------
def cpu_before_numpy(ctx: "FileContext", call: cst.Call) -> Fix | None:
    """`t.numpy()` -> `t.cpu().numpy()`; `t.detach().numpy()` -> `t.detach().cpu().numpy()`.

    `call` is the `.numpy()` Call. Safe: `.cpu()` of a CPU tensor is the tensor itself.
    """
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value == "numpy"):
        return None
    return Fix(tuple(_method_call(ctx, func.value, ".cpu()")), safe=True, title="Copy to the CPU before `.numpy()`")


def append_cpu(ctx: "FileContext", expr: cst.BaseExpression) -> Fix:
    """`np.asarray(t)` -> `np.asarray(t.cpu())`: `expr` is the tensor argument.

    Parenthesises where needed (`(a + b).cpu()`). Safe for the same reason as above.
    """
    return Fix(tuple(_method_call(ctx, expr, ".cpu()")), safe=True, title="Copy to the CPU first")


# -- keyword insertion (DL303, DL501) -------------------------------------------
def add_keyword(ctx: "FileContext", call: cst.Call, name: str, value: str, *, safe: bool, title: str = "") -> Fix | None:
    """`f(a, b)` -> `f(a, b, name=value)`; `value` is source text.

    None when the keyword is already there or `**kwargs` may hold it.
    """
    for arg in call.args:
        if arg.star == "**" or (arg.keyword is not None and arg.keyword.value == name):
            return None
    if call.args:
        _, end = outer_span(ctx, call.args[-1].value)
        edit = Edit(end, end, f", {name}={value}")
    else:
        _, func_end = outer_span(ctx, call.func)
        at = func_end + len(ctx.module.code_for_node(call.whitespace_after_func)) + 1  # past "("
        edit = Edit(at, at, f"{name}={value}")
    return Fix((edit,), safe=safe, title=title or f"Pass `{name}={value}`")


def add_device_keyword(ctx: "FileContext", call: cst.Call, device: str) -> Fix | None:
    """`torch.zeros(n)` -> `torch.zeros(n, device=x.device)`; `device` is source text.

    None for factories that take no `device=` (`torch.from_numpy`, legacy
    typed constructors) and when `device=` is already given. Safe: on a
    machine where the code works the tensor was already on that device.
    """
    if not takes_device(ctx.qualify(call.func) or ""):
        return None
    return add_keyword(ctx, call, "device", device, safe=True, title=f"Create it on `{device}`")


def add_map_location(ctx: "FileContext", call: cst.Call) -> Fix | None:
    """`torch.load(f)` -> `torch.load(f, map_location=device)` with a device variable
    in scope (see `device_in_scope`), else `map_location="cpu"`.

    Unsafe: tensors load where `map_location` says, not where they were saved.
    """
    location = device_in_scope(ctx, call) or '"cpu"'
    return add_keyword(ctx, call, "map_location", location, safe=False, title=f"Load onto `{location}`")


# -- DL101 ---------------------------------------------------------------------
def cuda_to_device(ctx: "FileContext", calls: Sequence[cst.Call], device: str) -> Fix | None:
    """Every `X.cuda()` in `calls` -> `X.to(device)`; `device` is source text.

    `.cuda(non_blocking=True)` keeps its keyword. A call with a device index
    (`.cuda(1)`) makes the whole fix None: that is a choice a person makes.
    """
    edits = []
    for call in calls:
        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "cuda"):
            return None
        extra = []
        for arg in call.args:
            if arg.keyword is None or arg.keyword.value != "non_blocking":
                return None
            extra.append(f"non_blocking={source_of(ctx, arg.value)}")
        start, _ = ctx.offsets(func.attr)
        _, end = ctx.offsets(call)
        edits.append(Edit(start, end, f"to({', '.join([device, *extra])})"))
    if not edits:
        return None
    return Fix(tuple(edits), safe=True, title=f"Use `.to({device})`")


# -- what is in scope --------------------------------------------------------------
def _module_parents(ctx: "FileContext") -> dict[cst.CSTNode, cst.CSTNode]:
    return parent_table(ctx.module)


def _parents(ctx: "FileContext", node: cst.CSTNode) -> dict[cst.CSTNode, cst.CSTNode]:
    statement = ctx.statement_of(node)
    # The statement's own table: kept between a document's versions by the language server.
    return ctx.shared(_module_parents) if statement is None else ctx.statement_facts.parents(statement)


def parent_of(ctx: "FileContext", node: cst.CSTNode) -> cst.CSTNode | None:
    """The code node directly around `node` (None at the top)."""
    return _parents(ctx, node).get(node)


def enclosing_functions(ctx: "FileContext", node: cst.CSTNode) -> Iterator[cst.FunctionDef]:
    """The functions around a node, innermost first."""
    parents = _parents(ctx, node)
    current = parents.get(node)
    while current is not None:
        if isinstance(current, cst.FunctionDef):
            yield current
        current = parents.get(current)


def _assigned_value(statement: cst.BaseStatement, name: str) -> cst.BaseExpression | None:
    if not isinstance(statement, cst.SimpleStatementLine):
        return None
    for small in statement.body:
        if isinstance(small, cst.Assign) and any(
            isinstance(target.target, cst.Name) and target.target.value == name for target in small.targets
        ):
            return small.value
        if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) and small.target.value == name:
            return small.value
    return None


def _names_the_cpu(ctx: "FileContext", value: cst.BaseExpression) -> bool:
    if isinstance(value, cst.SimpleString):
        return value.evaluated_value in ("cpu", b"cpu")
    if isinstance(value, cst.Call) and ctx.names.qualify(value.func) == "torch.device" and value.args:
        return _names_the_cpu(ctx, value.args[0].value)
    return False


def _branch_values(ctx: "FileContext", statement: cst.BaseStatement, name: str) -> list[cst.BaseExpression] | None:
    """What `name` is bound to on every path through an `if`/`elif`/`else` (None: some path binds nothing).

    `if cuda: device = "cuda"` / `else: device = "cpu"` selects the device as
    surely as the one-line idiom does.
    """
    if not isinstance(statement, cst.If) or statement.orelse is None:
        return None
    values = []
    for block in (statement.body, statement.orelse if isinstance(statement.orelse, cst.If) else statement.orelse.body):
        if isinstance(block, cst.If):
            found = _branch_values(ctx, block, name)
        else:
            found = _bound_in_block(ctx, block, name)
        if found is None:
            return None
        values.extend(found)
    return values


def _bound_in_block(ctx: "FileContext", block: cst.BaseSuite, name: str) -> list[cst.BaseExpression] | None:
    if not isinstance(block, cst.IndentedBlock):
        return None
    for statement in reversed(block.body):  # the last binding is the one that holds after the block
        value = _assigned_value(statement, name)
        if value is not None:
            return [value]
        branches = _branch_values(ctx, statement, name)
        if branches is not None:
            return branches
    return None


def _assigned_before(ctx: "FileContext", owner: cst.CSTNode, body: Sequence[cst.BaseStatement], name: str, before: int | None) -> bool:
    """A top-level `name = <not the CPU>` in body (or an `if`/`else` that binds it on
    every branch, not only to the CPU), ending before offset `before` (None: anywhere).

    `owner` is the module or function the body belongs to."""
    end = _first_binding_end(ctx, owner, body, name)
    return end is not None and (before is None or end <= before)


def _first_binding_end(ctx: "FileContext", owner: cst.CSTNode, body: Sequence[cst.BaseStatement], name: str) -> int | None:
    """Where the first statement of `body` that binds `name` (not to the CPU) ends; None: none does.

    Statements come in order, so the first one also ends first. Found once per
    body and name: a file of many small functions, each with a fix that asks,
    would otherwise read every module-level statement once per fix.
    """
    found = ctx.shared(_binding_ends)
    key = (owner, name)
    if key not in found:
        found[key] = None
        for statement in body:
            value = _assigned_value(statement, name)
            values = [value] if value is not None else _branch_values(ctx, statement, name)
            if values and not all(_names_the_cpu(ctx, value) for value in values):
                found[key] = ctx.offsets(statement)[1]
                break
    return found[key]


def _binding_ends(ctx: "FileContext") -> dict[tuple[cst.CSTNode, str], int | None]:
    return {}


def device_in_scope(ctx: "FileContext", node: cst.CSTNode) -> str | None:
    """The name of a device variable certainly bound where `node` runs, or None.

    Conservative on purpose (no dataflow): `device` (or a configured device
    variable) that is a parameter of an enclosing function, or is assigned by
    a top-level statement of that function before the node, or by a top-level
    statement of the module (before the node when the node is itself at module
    level). A name assigned only `"cpu"` / `torch.device("cpu")` does not count:
    code moved there would change machine.
    """
    candidates = ["device", *(name for name in ctx.settings.device_variables if name.isidentifier())]
    candidates = [name for name in candidates if name not in ctx.shared(_compared_with_other_words)]
    start = ctx.offsets(node)[0]
    functions = list(enclosing_functions(ctx, node))
    for name in candidates:
        found = _bound_in(ctx, name, functions, start)
        if found:
            return name
    return None


def _compared_with_other_words(ctx: "FileContext") -> frozenset[str]:
    """Names the file compares with a string that is no torch device (`args.device == "gpu"`,
    YOLOX's demo): they hold the project's own words, which `.to()` and `map_location` reject."""
    names: set[str] = set()
    for node in descendants(ctx.module):
        if type(node) is not cst.Comparison:
            continue
        operands = [node.left, *(c.comparator for c in node.comparisons)]  # type: ignore[attr-defined]
        words = [text for op in operands if (text := string_value(op)) is not None]
        if not any(device_type_of_string(word) is None for word in words):
            continue
        for op in operands:
            dotted = dotted_name(op) if isinstance(op, (cst.Name, cst.Attribute)) else None
            if dotted is not None:
                names.add(dotted.rsplit(".", 1)[-1])
    return frozenset(names)


def _bound_in(ctx: "FileContext", name: str, functions: list[cst.FunctionDef], start: int) -> bool:
    for func in functions:
        params = func.params
        if any(p.name.value == name for p in (*params.posonly_params, *params.params, *params.kwonly_params)):
            return True
        if name in ctx.local_bindings(func):
            body = func.body.body if isinstance(func.body, cst.IndentedBlock) else ()
            return _assigned_before(ctx, func, body, name, start)
    return _assigned_before(ctx, ctx.module, ctx.module.body, name, None if functions else start)


# -- DL401 / DL402 ---------------------------------------------------------------
def wrap_in_call(ctx: "FileContext", expr: cst.BaseExpression, callee: str, *, safe: bool, title: str = "") -> Fix:
    """`expr` -> `callee(expr)`, e.g. `[a, b]` -> `nn.ModuleList([a, b])`."""
    start, end = outer_span(ctx, expr)
    return Fix((Edit(start, start, f"{callee}("), Edit(end, end, ")")), safe=safe, title=title or f"Wrap in `{callee}`")


def replace_node(ctx: "FileContext", node: cst.CSTNode, text: str, *, safe: bool, title: str = "") -> Fix:
    """Replace a node's source (parentheses included) with `text`."""
    start, end = outer_span(ctx, node)
    return Fix((Edit(start, end, text),), safe=safe, title=title)
