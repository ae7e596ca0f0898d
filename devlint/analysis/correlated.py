"""Tests a body repeats: `if args.cuda:` that moves the model, and later `if args.cuda: ... else:`.

Old PyTorch code chooses the device with a switch tested again wherever it matters. Joining
both branches after the first test loses the link: the `else` of the second test then sees a
model that "may be on the GPU" beside the CPU tensors that branch makes for the CPU path. A body
that tests the same unchanged switch twice is analysed once per value of the switch instead,
and what either run finds is what the body does.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence

import libcst as cst

from devlint.names import dotted_name
from devlint.tree import descendants

# Comparisons that keep a switch a switch: `args.cuda > 0`, `args.ngpu >= 1`, `device == "cuda"`.
_COMPARISONS = (cst.Equal, cst.NotEqual, cst.GreaterThan, cst.GreaterThanEqual, cst.LessThan, cst.LessThanEqual, cst.Is, cst.IsNot)
_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


def switch(test: cst.BaseExpression) -> tuple[str, bool] | None:
    """The switch an `if` tests, and whether the test holds when the switch does: `args.cuda`,
    `not use_gpu` (False), `args.cuda > 0`, `x.is_cuda`. None for anything else."""
    polarity = True
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test, polarity = test.expression, not polarity
    if isinstance(test, (cst.Name, cst.Attribute)):
        name = dotted_name(test)
        return (name, polarity) if name is not None else None
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.comparisons[0].operator, _COMPARISONS):
        name = dotted_name(test.left)
        literal = _literal(test.comparisons[0].comparator)
        if name is not None and literal is not None:
            return f"{name} {type(test.comparisons[0].operator).__name__} {literal}", polarity
    return None


def repeated_switch(body: Sequence[cst.CSTNode], held: frozenset[str] = frozenset()) -> str | None:
    """The switch this body tests in two `if` statements or more, with nothing in between (or
    after the first test) rebinding it; the most tested one where there are several. A switch of
    `held` (one its class sets once and tests in `__init__`) counts from one test."""
    tests: Counter[str] = Counter()
    first: dict[str, int] = {}
    bound: list[tuple[int, str]] = []
    for position, node in enumerate(_walk(body)):
        if isinstance(node, cst.If):
            found = switch(node.test)
            if found is not None:
                tests[found[0]] += 1
                first.setdefault(found[0], position)
        for target in _targets(node):
            bound.append((position, target))
    for key, count in tests.most_common():
        if count < 2 and key not in held:
            continue
        root = key.split(" ", 1)[0]
        if not any(position > first[key] and _rebinds(target, root) for position, target in bound):
            return key
    return None


def class_switches(cls: cst.ClassDef, assigned: Callable[[], Counter[str]]) -> frozenset[str]:
    """Switches on `self` the class's `__init__` tests, whose attribute the class binds once (in
    `__init__`) and never again: `self.gpu_mode = gpu_mode`, then `if self.gpu_mode: self.D.cuda()`.
    Every method reads the value `__init__` tested, so a method testing it again takes the same
    branch as `__init__` did (pytorch-generative-model-collections' GANs, old SSD-style losses)."""
    methods = [node for node in cls.body.body if isinstance(node, cst.FunctionDef)]  # type: ignore[union-attr]
    init = next((node for node in methods if node.name.value == "__init__"), None)
    if init is None:
        return frozenset()
    tested = {
        found[0]
        for node in _walk(_statements(init.body))
        if isinstance(node, cst.If) and (found := switch(node.test)) is not None and found[0].startswith("self.")
    }
    if not tested:
        return frozenset()  # most classes: nothing more to look at
    bound: Counter[str] = Counter()
    for method in methods:
        for node in _walk(_statements(method.body)):
            for target in _targets(node):
                bound[target] += 1
    found_switches = set()
    for key in tested:
        root = key.split(" ", 1)[0]
        # Set from outside too (`trainer.gpu_mode = False`, anywhere in the file), it is not fixed.
        if root.count(".") == 1 and bound[root] == 1 and not any(_rebinds(t, root) for t in bound if t != root):
            if assigned()[root.split(".", 1)[1]] == 1:
                found_switches.add(key)
    return frozenset(found_switches)


def attribute_assignments(module: cst.Module) -> Counter[str]:
    """How many times the file binds each attribute name (`x.gpu_mode = ...`), on any object."""
    return Counter(
        target.rsplit(".", 1)[1]
        for node in descendants(module)
        if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign))
        for target in _targets(node)
        if "." in target
    )


def _literal(node: cst.BaseExpression) -> str | None:
    """`0`, `"cuda"`, `None`: a constant a switch is compared with (None: anything else)."""
    if isinstance(node, cst.SimpleString):
        return repr(node.evaluated_value)
    if isinstance(node, cst.Integer) or isinstance(node, cst.Name) and node.value in ("None", "True", "False"):
        return node.value
    return None


def _rebinds(target: str, root: str) -> bool:
    """Does binding `target` change what `root` reads? `args = ...` and `args.cuda = ...` change
    `args.cuda`; `x = x.cuda()` changes `x.is_cuda`."""
    base = root.rsplit(".", 1)[0] if root.endswith(".is_cuda") else root
    return target == root or root.startswith(target + ".") or target.startswith(base + ".") or target == base


def _targets(node: cst.CSTNode) -> Iterator[str]:
    names: list[cst.BaseExpression] = []
    if isinstance(node, cst.Assign):
        names = [t.target for t in node.targets]
    elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
        names = [node.target]
    elif isinstance(node, cst.For):
        names = [node.target]
    elif isinstance(node, cst.AsName):
        names = [node.name]  # type: ignore[list-item]
    stack = list(names)
    while stack:
        target = stack.pop()
        if isinstance(target, (cst.Tuple, cst.List)):
            stack.extend(e.value for e in target.elements)
        elif isinstance(target, cst.StarredElement):
            stack.append(target.value)
        elif (name := dotted_name(target)) is not None:
            yield name


def _walk(body: Sequence[cst.CSTNode]) -> Iterator[cst.CSTNode]:
    """The body's statements (small ones and compound ones) in source order, not entering nested
    functions or classes: where switches are tested and names bound."""
    stack = list(reversed(body))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, cst.SimpleStatementLine):
            stack.extend(reversed(node.body))
        elif isinstance(node, cst.With):
            yield from (item.asname for item in node.items if item.asname is not None)
            stack.extend(reversed(_statements(node.body)))
        elif isinstance(node, cst.BaseCompoundStatement) and not isinstance(node, _SCOPES):
            parts: list[cst.CSTNode] = []
            for attr in ("body", "orelse", "handlers", "finalbody"):
                part = getattr(node, attr, None)
                if part is None:
                    continue
                for item in part if isinstance(part, (list, tuple)) else [part]:
                    if isinstance(item, (cst.If, cst.ExceptHandler)):
                        parts.append(item)
                    else:
                        parts.extend(_statements(item.body if isinstance(item, (cst.Else, cst.Finally)) else item))
            stack.extend(reversed(parts))
        elif isinstance(node, cst.ExceptHandler):
            stack.extend(reversed(_statements(node.body)))


def _statements(suite: cst.CSTNode) -> list[cst.CSTNode]:
    if isinstance(suite, cst.IndentedBlock):
        return list(suite.body)
    if isinstance(suite, cst.SimpleStatementSuite):
        return list(suite.body)
    return []
