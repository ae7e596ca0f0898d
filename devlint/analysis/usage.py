"""What a function's own code shows its parameters to be.

A parameter annotated `torch.Tensor`, one the body uses through a member
that only tensors have (`x.unsqueeze(0)`, `x.device`, `x.detach()`), or one
it passes where torch takes nothing but a tensor (`torch.index_select(x, ...)`,
`F.conv2d(x, w)`, both read from torch's operator schemas) is a tensor: neither an `nn.Module`, a numpy array, a pandas object, a PIL image
nor a builtin container has those members (the lists come from the
libraries themselves, tools/gen_torch_api.py). A member that a class of the
file defines proves nothing: the parameter may be one of those objects. Nor
does a use after the name was bound to a new value (`x = np.array(x)`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import MappingProxyType

import libcst as cst

from devlint.analysis.facts import Kind, Place, PlaceKind, Value, tuple_of
from devlint.analysis.program import ClassInfo, FunctionInfo, Program
from devlint.analysis.torchapi import TENSOR_ATTRIBUTES, TENSOR_METHODS, TENSOR_ONLY_MEMBERS, tensor_arguments
from devlint.analysis.torchapi.frameworks import OTHER_TENSOR_LIBRARIES
from devlint.names import ImportTable, dotted_name, imports_any, is_none
from devlint.tree import descendants

# Every member a tensor has: a parameter that uses another is no tensor.
TENSOR_MEMBERS = TENSOR_METHODS | TENSOR_ATTRIBUTES
_TYPE_TESTS = frozenset({"isinstance", "hasattr", "type", "getattr"})

_TENSOR_TYPES = frozenset({"torch.Tensor", "torch.FloatTensor", "torch.LongTensor"})
_OPTIONAL = "typing.Optional"
_UNION = "typing.Union"

# Containers whose subscript names their elements' type (`List[Tensor]`, `list[Tensor]`), and
# mappings whose last subscript names their values' (`Dict[str, Tensor]`, `Mapping[str, Tensor]`).
_SEQUENCES = frozenset({
    "typing.List", "typing.Sequence", "typing.MutableSequence", "typing.Iterable", "typing.Iterator", "typing.Collection",
    "collections.abc.Sequence", "collections.abc.MutableSequence", "collections.abc.Iterable", "collections.abc.Iterator",
    "collections.abc.Collection", "list",
})
_MAPPINGS = frozenset({
    "typing.Dict", "typing.Mapping", "typing.MutableMapping", "typing.OrderedDict", "typing.DefaultDict",
    "collections.abc.Mapping", "collections.abc.MutableMapping", "collections.OrderedDict", "collections.defaultdict", "dict",
})
_TUPLES = frozenset({"typing.Tuple", "tuple"})
_BUILTIN_GENERICS = frozenset({"list", "dict", "tuple"})
_DATACLASS = "dataclasses.dataclass"
_DATACLASS_FIELD = "dataclasses.field"
_NOT_FIELDS = frozenset({"typing.ClassVar", "dataclasses.InitVar"})  # class attributes; `__init__`-only arguments


def own_members(program: Program) -> frozenset[str]:
    """Names the file's own classes define: methods, class attributes, `self.x` attributes."""
    if program.own_members is None:
        names: set[str] = set()
        for info in program.by_key.values():
            names.update(program.facts.remember(info.node, "members", None, lambda: _class_members(info)))
        program.own_members = frozenset(names)
    return program.own_members


def _class_members(info: ClassInfo) -> frozenset[str]:
    names = set(info.methods)
    for node in descendants(info.node.body):
        if type(node) is cst.Attribute and type(node.value) is cst.Name and node.value.value == "self":  # type: ignore[attr-defined]
            names.add(node.attr.value)  # type: ignore[attr-defined]
        elif type(node) is cst.AssignTarget and type(node.target) is cst.Name:  # type: ignore[attr-defined]
            names.add(node.target.value)  # type: ignore[attr-defined]
    return frozenset(names)


def imports_other_tensors(names: ImportTable) -> bool:
    """The file imports a library whose tensors have torch's members too (TensorFlow)."""
    return imports_any(names.bindings.values(), OTHER_TENSOR_LIBRARIES)


def tensor_parameters(func: FunctionInfo, program: Program, names: ImportTable) -> frozenset[str]:
    """The parameters the function's annotations or its body show to be tensors (in a file that
    imports TensorFlow, the members they use show nothing: its tensors have them too)."""
    return _evidence(func, program, names)[0]


def unshown_in_exits(func: FunctionInfo, program: Program, names: ImportTable) -> Mapping[cst.If, frozenset[str]]:
    """Per `if` whose body leaves the function (`return`, `raise`), the parameters shown to be
    tensors only by uses after it: a path that returns before those uses learns nothing from them
    (skorch's `to_numpy`: `if _is_slicedataset(X): return np.asarray(X)` comes before `X.is_cuda`)."""
    return _evidence(func, program, names)[1]


def no_tensor_parameters(func: FunctionInfo, program: Program, names: ImportTable) -> frozenset[str]:
    """The parameters the body uses with a member no tensor has (`stft_fn.transform(...)`): a
    tensor method's name on them (`stft_fn.inverse(...)`) is the object's own method."""
    return _evidence(func, program, names)[2]


def _evidence(func: FunctionInfo, program: Program, names: ImportTable) -> tuple[frozenset[str], Mapping[cst.If, frozenset[str]], frozenset[str]]:
    if func.tensor_params is None:
        excluded = TENSOR_ONLY_MEMBERS if imports_other_tensors(names) else own_members(program)
        hooked = _hook_gradient(func, program)
        context = (names.fingerprint, excluded, frozenset(hooked))
        func.tensor_params = program.facts.remember(func.node, "tensor parameters", context, lambda: _tensor_parameters(func, names, excluded, hooked))
    return func.tensor_params


def _tensor_hooks(program: Program) -> frozenset[tuple[str, str]]:
    """The functions the file registers with `t.register_hook(f)`: PyTorch calls each with the
    gradient of `t`, a tensor on `t`'s device. Named as (class key, method) for `self.f`, and
    ("", name) for a function."""
    if program.tensor_hooks is None:
        found: set[tuple[str, str]] = set()
        for func in program.functions:
            for node in descendants(func.node.body):
                if type(node) is not cst.Call or type(node.func) is not cst.Attribute or node.func.attr.value != "register_hook":  # type: ignore[attr-defined]
                    continue
                args = node.args  # type: ignore[attr-defined]
                target = args[0].value if args and args[0].keyword is None and not args[0].star else None
                if isinstance(target, cst.Name):
                    found.add(("", target.value))
                elif isinstance(target, cst.Attribute) and func.cls is not None and dotted_name(target.value) == func.self_param:
                    found.add((func.cls.key, target.attr.value))
        program.tensor_hooks = frozenset(found)
    return program.tensor_hooks


def _hook_gradient(func: FunctionInfo, program: Program) -> set[str]:
    """The gradient parameter of a function registered as a tensor hook."""
    key = (func.cls.key if func.cls is not None and func.self_param is not None else "", func.name)
    if key not in _tensor_hooks(program):
        return set()
    params = func.params[1:] if func.self_param is not None else func.params
    return {params[0].name.value} if params else set()


def _tensor_parameters(
    func: FunctionInfo, names: ImportTable, excluded: frozenset[str], hooked: set[str]
) -> tuple[frozenset[str], Mapping[cst.If, frozenset[str]], frozenset[str]]:
    params = {p.name.value for p in func.params}
    declared = {p.name.value for p in func.params if p.annotation is not None and _tensor_annotation(p.annotation.annotation, names)} | hooked
    found = set(declared)
    first: dict[str, int] = {}  # where the body first shows a parameter to be a tensor
    order: dict[int, int] = {}  # id(node) -> its place in the walk
    exits: list[cst.If] = []
    contradicted: set[str] = set()  # parameters with a member no tensor has
    tested: set[str] = set()  # parameters whose type the body tests: a member tells of one branch only
    for index, (node, rebound) in enumerate(_reads(func.node.body, frozenset(), params)):
        order[id(node)] = index
        shown: set[str] = set()
        kind = type(node)
        if kind is cst.Attribute and type(node.value) is cst.Name:  # type: ignore[attr-defined]
            name = node.value.value  # type: ignore[attr-defined]
            member = node.attr.value  # type: ignore[attr-defined]
            if name in params and name not in rebound and member in TENSOR_ONLY_MEMBERS and member not in excluded:
                shown.add(name)
            elif name in params and name not in rebound and not member.startswith("_") and member not in TENSOR_MEMBERS:
                # FastSpeech2's `stft_fn.inverse(...)` beside `stft_fn.transform(...)`: a tensor has
                # no `transform`, so `inverse` there is the object's own method.
                contradicted.add(name)
        elif kind is cst.Call:
            shown = _passed_as_tensors(node, params - rebound, names, excluded)  # type: ignore[arg-type]
            if type(node.func) is cst.Name and node.func.value in _TYPE_TESTS and node.args and type(node.args[0].value) is cst.Name:  # type: ignore[attr-defined]
                tested.add(node.args[0].value.value)  # type: ignore[attr-defined]  # `isinstance(X, dict)`: X may be either
        elif kind is cst.If and _leaves(node.body):  # type: ignore[attr-defined]
            exits.append(node)  # type: ignore[arg-type]
        for name in shown:
            first.setdefault(name, index)
        found |= shown
    contradicted -= tested
    found -= contradicted - declared
    unshown: dict[cst.If, frozenset[str]] = {}
    for branch in exits:
        end = max(order.get(id(node), -1) for node in descendants(branch))
        names_after = frozenset(name for name, at in first.items() if at > end and name not in declared)
        if names_after:
            unshown[branch] = names_after
    return frozenset(found), MappingProxyType(unshown), frozenset(contradicted - declared)


def _leaves(suite: cst.BaseSuite) -> bool:
    """The suite's last statement returns or raises."""
    last = suite.body[-1] if suite.body else None
    if isinstance(last, cst.SimpleStatementLine):
        last = last.body[-1] if last.body else None
    return isinstance(last, (cst.Return, cst.Raise))


_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
_SUITES = (cst.IndentedBlock, cst.SimpleStatementSuite)


def _reads(suite: cst.BaseSuite, rebound: frozenset[str], params: set[str]) -> Iterator[tuple[cst.CSTNode, frozenset[str]]]:
    """The nodes of the suite, each with the parameters a new value has replaced on every path
    there: `x = np.array(x)` then `x = torch.FloatTensor(x)` makes `x.permute` a use of the new
    tensor, not of the parameter. A replacement inside a branch does not hold after it."""
    for statement in suite.body:
        if isinstance(statement, _SCOPES):
            continue
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                yield from ((node, rebound) for node in descendants(small, enter=lambda n: type(n) not in _SCOPES))
                rebound |= _replaced(small, params)
        elif isinstance(statement, cst.BaseSmallStatement):  # `if c: x = f(x); x.long()`
            yield from ((node, rebound) for node in descendants(statement, enter=lambda n: type(n) not in _SCOPES))
            rebound |= _replaced(statement, params)
        else:
            for node in descendants(statement, enter=lambda n: type(n) not in _SCOPES and type(n) not in _SUITES):
                if type(node) in _SUITES:
                    yield from _reads(node, rebound, params)  # type: ignore[arg-type]
                else:
                    yield node, rebound


def _replaced(small: cst.BaseSmallStatement, params: set[str]) -> frozenset[str]:
    """Parameters this statement binds to a new value: one that does not mention them, or a call
    that takes them (`x = np.array(x)`, `index = torch.as_tensor(index)`), not their own members
    (`x = x.to(device)`, `x = x[0]`: what those show of the result they show of `x`)."""
    if isinstance(small, cst.Assign):
        targets = [target.target for target in small.targets]
    elif isinstance(small, cst.AnnAssign) and small.value is not None:
        targets = [small.target]
    else:
        return frozenset()
    value = small.value
    assert value is not None
    found = set()
    for target in targets:
        for node in descendants(target):
            if type(node) is cst.Name and node.value in params and _new_value(value, node.value):  # type: ignore[attr-defined]
                found.add(node.value)  # type: ignore[attr-defined]
    return frozenset(found)


def _new_value(value: cst.BaseExpression, param: str) -> bool:
    if not any(type(node) is cst.Name and node.value == param for node in descendants(value)):  # type: ignore[attr-defined]
        return True
    if not isinstance(value, cst.Call):
        return False
    root: cst.BaseExpression = value
    while isinstance(root, (cst.Call, cst.Attribute, cst.Subscript)):
        root = root.func if isinstance(root, cst.Call) else root.value
    return not (isinstance(root, cst.Name) and root.value == param)


def _passed_as_tensors(call: cst.Call, params: set[str], names: ImportTable, excluded: frozenset[str]) -> set[str]:
    """Parameters passed where torch takes nothing but a tensor: `torch.index_select(x, 1, i)`,
    `F.conv2d(x, w)`, `t.gather(1, index)` (a tensor-only method, so `t` is a tensor too)."""
    if not any(type(arg.value) is cst.Name and arg.value.value in params for arg in call.args):  # type: ignore[attr-defined]
        return set()  # most calls pass no parameter as it came: no need to ask what they are
    qualified = names.qualify(call.func)
    if qualified is not None:
        positions, keywords = tensor_arguments(qualified)
    elif isinstance(call.func, cst.Attribute) and call.func.attr.value in TENSOR_ONLY_MEMBERS and call.func.attr.value not in excluded:
        positions, keywords = tensor_arguments(call.func.attr.value)
    else:
        return set()
    found = set()
    index = 0
    for arg in call.args:
        if arg.star:
            continue
        at = arg.keyword.value in keywords if arg.keyword is not None else index in positions
        if arg.keyword is None:
            index += 1
        if at and isinstance(arg.value, cst.Name) and arg.value.value in params:
            found.add(arg.value.value)
    return found


def _tensor_annotation(annotation: cst.BaseExpression, names: ImportTable) -> bool:
    """`torch.Tensor`, `Tensor`, `Optional[Tensor]`, `Tensor | None`, `"torch.Tensor"`."""
    if isinstance(annotation, cst.SimpleString):
        text = annotation.value.strip("'\"")
        root = text.split(".", 1)[0]
        target = names.bindings.get(root)
        return (f"{target}{text[len(root):]}" if target else text) in _TENSOR_TYPES
    if isinstance(annotation, cst.BinaryOperation) and isinstance(annotation.operator, cst.BitOr):
        return _tensor_annotation(annotation.left, names) or _tensor_annotation(annotation.right, names)
    if isinstance(annotation, cst.Subscript) and names.qualify(annotation.value) == _OPTIONAL:
        inner = annotation.slice[0].slice if len(annotation.slice) == 1 else None
        return isinstance(inner, cst.Index) and _tensor_annotation(inner.value, names)
    return names.qualify(annotation) in _TENSOR_TYPES


def declared_value(annotation: cst.BaseExpression, names: ImportTable, place: Place) -> Value | None:
    """What a type annotation declares a value the caller built to be: a tensor at `place`
    (`torch.Tensor`), or a container of such tensors (`List[Tensor]`, `Dict[str, Tensor]`,
    `tuple[Tensor, ...]`). None where it declares no tensor."""
    if _tensor_annotation(annotation, names):
        return Value(Kind.TENSOR, place)
    if isinstance(annotation, cst.SimpleString):
        try:
            annotation = cst.parse_expression(annotation.value.strip("'\""))
        except cst.ParserSyntaxError:
            return None
        return declared_value(annotation, names, place)
    optional = _optional_of(annotation, names)
    if optional is not None:
        return declared_value(optional, names, place)
    if not isinstance(annotation, cst.Subscript):
        return None
    generic = names.qualify(annotation.value) or _builtin(annotation.value, names)
    arguments = [element.slice.value for element in annotation.slice if isinstance(element.slice, cst.Index)]
    if len(arguments) != len(annotation.slice) or not arguments:
        return None
    if generic in _SEQUENCES and len(arguments) == 1 or generic in _TUPLES and len(arguments) == 2 and isinstance(arguments[1], cst.Ellipsis):
        elem = declared_value(arguments[0], names, place)
        return Value(Kind.SEQ, elem=elem) if elem is not None else None
    if generic in _MAPPINGS and len(arguments) == 2:
        elem = declared_value(arguments[1], names, place)
        return Value(Kind.SEQ, elem=elem, mapping=True) if elem is not None else None
    if generic in _TUPLES:
        items = [declared_value(argument, names, place) for argument in arguments]
        if all(item == items[0] for item in items):
            # Alike: what any index yields, also one the code computes (`preds[i]`).
            return Value(Kind.SEQ, elem=items[0]) if items[0] is not None else None
        return tuple_of([item or Value() for item in items])
    return None


def declared_container(annotation: cst.BaseExpression, names: ImportTable) -> Value | None:
    """A container of what the annotation does not say: `dict`, `Optional[dict]`, `List`,
    `Mapping[str, Any]`. Indexing it, or writing into it, reads or stores an entry; it is no
    tensor. None for anything else."""
    if isinstance(annotation, cst.SimpleString):
        try:
            annotation = cst.parse_expression(annotation.value.strip("'\""))
        except cst.ParserSyntaxError:
            return None
    optional = _optional_of(annotation, names)
    if optional is not None:
        return declared_container(optional, names)
    generic_node = annotation.value if isinstance(annotation, cst.Subscript) else annotation
    if not isinstance(generic_node, (cst.Name, cst.Attribute)):
        return None
    generic = names.qualify(generic_node) or _builtin(generic_node, names)
    if generic in _MAPPINGS:
        return Value(Kind.SEQ, mapping=True)
    if generic in _SEQUENCES or generic in _TUPLES:
        return Value(Kind.SEQ)
    return None


def _optional_of(annotation: cst.BaseExpression, names: ImportTable) -> cst.BaseExpression | None:
    """`X` of `Optional[X]`, `Union[X, None]`, `X | None`."""
    if isinstance(annotation, cst.BinaryOperation) and isinstance(annotation.operator, cst.BitOr):
        if is_none(annotation.right):
            return annotation.left
        return annotation.right if is_none(annotation.left) else None
    if isinstance(annotation, cst.Subscript) and names.qualify(annotation.value) in (_OPTIONAL, _UNION):
        inner = [element.slice.value for element in annotation.slice if isinstance(element.slice, cst.Index)]
        kept = [value for value in inner if not is_none(value)]
        if len(inner) == len(annotation.slice) and len(kept) == 1:
            return kept[0]
    return None


def _builtin(node: cst.BaseExpression, names: ImportTable) -> str | None:
    """`list`, `dict`, `tuple` as PEP 585 generics, where the file does not rebind them."""
    name = dotted_name(node)
    return name if name in _BUILTIN_GENERICS and name not in names.bindings else None


def dataclass_fields(cls: ClassInfo, names: ImportTable) -> dict[str, Value]:
    """The tensors a `@dataclass` holds as the `__init__` it generates received them.

    Its class-level annotated fields are that `__init__`'s parameters, so a field declared a
    tensor (or a container of tensors) lives where the caller built it. A field with a default
    other than None may hold the default, and one a method assigns may hold what it assigned:
    both are left out.
    """
    if cls.init_fields is None:
        cls.init_fields = {}
        if _generated_init(cls, names) and "__init__" not in cls.methods:
            assigned = _assigned_attributes(cls)
            for stmt in _class_body(cls):
                for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
                    if not isinstance(small, cst.AnnAssign) or not isinstance(small.target, cst.Name):
                        continue
                    name = small.target.value
                    if name in assigned or not _init_parameter(small, names):
                        continue
                    value = declared_value(small.annotation.annotation, names, Place(PlaceKind.FOLLOWS, name))
                    if value is not None:
                        cls.init_fields[name] = value
    return cls.init_fields


def _generated_init(cls: ClassInfo, names: ImportTable) -> bool:
    """`@dataclass` or `@dataclass(...)` without `init=False`."""
    for decorator in cls.node.decorators:
        node = decorator.decorator
        call = node if isinstance(node, cst.Call) else None
        if names.qualify(call.func if call is not None else node) != _DATACLASS:
            continue
        return call is None or not any(
            arg.keyword is not None and arg.keyword.value == "init" and dotted_name(arg.value) == "False" for arg in call.args
        )
    return False


def _init_parameter(field: cst.AnnAssign, names: ImportTable) -> bool:
    """A field the generated `__init__` takes with no default but None: not a `ClassVar`,
    an `InitVar`, nor a `field(init=False)` or `field(default_factory=...)`."""
    annotation = field.annotation.annotation
    if names.qualify(annotation.value if isinstance(annotation, cst.Subscript) else annotation) in _NOT_FIELDS:
        return False
    default = field.value
    if default is None or is_none(default):
        return True
    if isinstance(default, cst.Call) and names.qualify(default.func) == _DATACLASS_FIELD:
        for arg in default.args:
            keyword = arg.keyword.value if arg.keyword is not None else None
            if keyword in ("default_factory", "init") or keyword == "default" and not is_none(arg.value):
                return False
        return True
    return False


def _assigned_attributes(cls: ClassInfo) -> frozenset[str]:
    """Attributes a method of the class sets on its instance: `self.x = ...`, `self.x += ...`,
    `object.__setattr__(self, "x", ...)` (how a frozen dataclass's `__post_init__` sets one)."""
    found: set[str] = set()
    for method in cls.methods.values():
        own = method.self_param
        for node in descendants(method.node.body):
            targets: list[cst.BaseExpression] = []
            if type(node) is cst.AssignTarget:
                targets = [node.target]  # type: ignore[attr-defined]
            elif type(node) in (cst.AugAssign, cst.AnnAssign):
                targets = [node.target]  # type: ignore[attr-defined]
            elif type(node) is cst.Call and (dotted_name(node.func) or "").endswith("setattr"):  # type: ignore[attr-defined]
                found.update(arg.value.value.strip("'\"") for arg in node.args if isinstance(arg.value, cst.SimpleString))  # type: ignore[attr-defined]
            for target in targets:
                for element in [target, *descendants(target)]:
                    if type(element) is cst.Attribute and type(element.value) is cst.Name and element.value.value == own:  # type: ignore[attr-defined]
                        found.add(element.attr.value)  # type: ignore[attr-defined]
    return frozenset(found)


def _class_body(cls: ClassInfo) -> list[cst.CSTNode]:
    body = cls.node.body
    return list(body.body) if isinstance(body, cst.IndentedBlock) else []
