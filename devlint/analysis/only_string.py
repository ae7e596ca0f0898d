"""Can an expression hold only one string, as far as its file shows?

Launchers pass the distributed backend through a name: `args.dist_backend = "nccl"`
then `init_process_group(backend=args.dist_backend)` (DETR, DeiT, ConvNeXt, BLIP, MAE,
GroundingDINO), a parameter default `def setup_distributed(backend="nccl")`
(Depth-Anything-V2, VAR), or a command-line default `--dist-backend default="nccl"`
(MoCo). The value is known when every way the file gives the name a value gives that
string: each assignment, the default, each call in the file that passes the parameter.
Any other source (a second string such as `"gloo"`, a conditional, a config entry, a
binding the file cannot read, a value that may arrive from outside with no assignment
before the use) makes the answer no.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from devlint.analysis.guards import string_value
from devlint.tree import descendants, own_nodes, parent_table

_DEPTH = 6  # names resolved through names: `backend = args.dist_backend`, then its assignment
_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


class OnlyString:
    def __init__(self, module: cst.Module) -> None:
        self._module = module
        self._parents = parent_table(module)
        self._code = module.code_for_node

    def holds_only(self, expr: cst.BaseExpression, at: cst.CSTNode, wanted: str, depth: int = 0) -> bool:
        """`expr`, read at `at`, can only be the string `wanted`."""
        if depth > _DEPTH:
            return False
        if string_value(expr) is not None:
            return string_value(expr) == wanted
        if isinstance(expr, cst.Name):
            return self._name(expr.value, at, wanted, depth)
        if isinstance(expr, cst.Attribute):
            return self._attribute(expr, at, wanted, depth)
        return False

    # -- names ----------------------------------------------------------------------------
    def _name(self, name: str, at: cst.CSTNode, wanted: str, depth: int) -> bool:
        function = self._enclosing_function(at)
        while function is not None:
            sources = self._bindings(function.body, name)
            param = _parameter(function, name)
            if param is not None:
                if sources is None or param.default is None:
                    return False
                passed = self._passed(function, param)
                if passed is None:
                    return False
                values = [(param.default, function), *passed, *sources]
                return all(self.holds_only(value, where, wanted, depth + 1) for value, where in values)
            if sources is None or _declares_global(function, name):
                return False
            if sources:
                return all(self.holds_only(value, where, wanted, depth + 1) for value, where in sources)
            function = self._enclosing_function(function)  # a closure reads its outer function's name
        sources = self._bindings(self._module, name)
        if not sources or self._rebound_globally(name):
            return False
        return all(self.holds_only(value, where, wanted, depth + 1) for value, where in sources)

    def _bindings(self, scope: cst.CSTNode, name: str) -> list[tuple[cst.BaseExpression, cst.CSTNode]] | None:
        """The values `scope` assigns to `name` (not in nested functions or classes); None when
        it binds the name some other way (unpacking, `for`, `with`, `:=`, `+=`, an import)."""
        values: list[tuple[cst.BaseExpression, cst.CSTNode]] = []
        for node in own_nodes(scope):
            if isinstance(node, cst.Assign):
                for target in node.targets:
                    if _names(target.target, name) == "plain":
                        values.append((node.value, node))
                    elif _names(target.target, name) == "other":
                        return None
            elif isinstance(node, cst.AnnAssign) and isinstance(node.target, cst.Name) and node.target.value == name:
                if node.value is not None:
                    values.append((node.value, node))
            elif isinstance(node, (cst.AugAssign, cst.NamedExpr, cst.For, cst.CompFor)) and _names(node.target, name) != "none":
                return None
            elif isinstance(node, cst.WithItem) and node.asname is not None and _names(node.asname.name, name) != "none":
                return None
            elif isinstance(node, cst.ImportAlias) and _bound_by_import(node) == name:
                return None
            elif isinstance(node, (cst.FunctionDef, cst.ClassDef)) and node.name.value == name:
                return None
        return values

    def _passed(self, function: cst.FunctionDef, param: cst.Param) -> list[tuple[cst.BaseExpression, cst.CSTNode]] | None:
        """What the file's calls of `function` pass for `param` (None: one may pass it unseen)."""
        positional = [*function.params.posonly_params, *function.params.params]
        index = next((i for i, p in enumerate(positional) if p is param), None)
        method = bool(positional) and positional[0].name.value in ("self", "cls")
        values: list[tuple[cst.BaseExpression, cst.CSTNode]] = []
        for call in self._calls_of(function.name.value):
            if any(arg.star for arg in call.args):
                return None
            keyword = next((arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value == param.name.value), None)
            if keyword is not None:
                values.append((keyword, call))
                continue
            if index is None:
                continue
            shift = 1 if method and isinstance(call.func, cst.Attribute) else 0
            given = [arg.value for arg in call.args if arg.keyword is None]
            if index - shift < 0:
                return None
            if index - shift < len(given):
                values.append((given[index - shift], call))
        return values

    def _calls_of(self, name: str) -> Iterator[cst.Call]:
        for node in descendants(self._module):
            if isinstance(node, cst.Call):
                func = node.func
                if isinstance(func, cst.Name) and func.value == name or isinstance(func, cst.Attribute) and func.attr.value == name:
                    yield node

    def _rebound_globally(self, name: str) -> bool:
        return any(isinstance(node, cst.FunctionDef) and _declares_global(node, name) for node in descendants(self._module))

    # -- attributes -----------------------------------------------------------------------
    def _attribute(self, expr: cst.Attribute, at: cst.CSTNode, wanted: str, depth: int) -> bool:
        """`args.dist_backend`: every assignment of the file to that very attribute, and the
        default of a command-line option of that name, give `wanted`; and one of them is sure to
        have happened (an assignment earlier in the blocks around `at`, or the option's parse),
        since without one the object may come from elsewhere with any value."""
        text = self._code(expr)
        attr = expr.attr.value
        sources: list[tuple[cst.BaseExpression, cst.CSTNode]] = []
        option = False
        for node in descendants(self._module):
            if isinstance(node, cst.Assign):
                for target in node.targets:
                    if isinstance(target.target, cst.Attribute) and self._code(target.target) == text:
                        sources.append((node.value, node))
                    elif _attribute_in_unpacking(target.target, attr):
                        return False
            elif isinstance(node, (cst.AugAssign, cst.AnnAssign)) and isinstance(node.target, cst.Attribute) and node.target.attr.value == attr:
                return False
            elif isinstance(node, cst.Call) and _names_attribute(node, attr):
                default = _option_default(node, attr)
                if default is None:
                    return False
                sources.append((default, node))
                option = True
        if not sources or not (option or self._assigned_before(text, at)):
            return False
        return all(self.holds_only(value, where, wanted, depth + 1) for value, where in sources)

    def _assigned_before(self, text: str, at: cst.CSTNode) -> bool:
        """A statement assigning `text` comes before `at` in one of the blocks holding it."""
        node: cst.CSTNode = at
        while node in self._parents:
            parent = self._parents[node]
            body = getattr(parent, "body", None)
            if isinstance(body, (list, tuple)) and node in body:
                for statement in body[: body.index(node)]:
                    if isinstance(statement, cst.SimpleStatementLine) and any(
                        isinstance(small, cst.Assign)
                        and any(isinstance(t.target, cst.Attribute) and self._code(t.target) == text for t in small.targets)
                        for small in statement.body
                    ):
                        return True
            if isinstance(parent, _SCOPES):
                return False
            node = parent
        return False

    def _enclosing_function(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        while node in self._parents:
            node = self._parents[node]
            if isinstance(node, cst.FunctionDef):
                return node
            if isinstance(node, (cst.ClassDef, cst.Lambda)):
                return None  # a class body or a lambda: not followed
        return None


def _names(target: cst.BaseExpression, name: str) -> str:
    """"plain": `target` is the name; "other": it binds the name within unpacking; else "none"."""
    if isinstance(target, cst.Name):
        return "plain" if target.value == name else "none"
    if isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            if _names(element.value, name) != "none":
                return "other"
    if isinstance(target, cst.StarredElement):
        return "other" if _names(target.value, name) != "none" else "none"
    return "none"


def _attribute_in_unpacking(target: cst.BaseExpression, attr: str) -> bool:
    if isinstance(target, (cst.Tuple, cst.List)):
        return any(
            isinstance(element.value, cst.Attribute) and element.value.attr.value == attr or _attribute_in_unpacking(element.value, attr)
            for element in target.elements
        )
    return False


def _bound_by_import(alias: cst.ImportAlias) -> str | None:
    if alias.asname is not None:
        return alias.asname.name.value if isinstance(alias.asname.name, cst.Name) else None
    node: cst.BaseExpression = alias.name
    while isinstance(node, cst.Attribute):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None


def _parameter(function: cst.FunctionDef, name: str) -> cst.Param | None:
    params = function.params
    for param in (*params.posonly_params, *params.params, *params.kwonly_params):
        if param.name.value == name:
            return param
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param) and star.name.value == name:
            return cst.Param(star.name)  # no default: unknown
    return None


def _declares_global(function: cst.FunctionDef, name: str) -> bool:
    return any(
        isinstance(node, (cst.Global, cst.Nonlocal)) and any(item.name.value == name for item in node.names)
        for node in own_nodes(function.body)
    )


def _names_attribute(call: cst.Call, attr: str) -> bool:
    """A call that may set the attribute out of sight: `setattr(o, "attr", ...)`, or the
    command-line option whose value becomes it (`add_argument("--dist-backend")`)."""
    func = call.func
    if isinstance(func, cst.Name) and func.value == "setattr":
        return len(call.args) > 1 and string_value(call.args[1].value) in (attr, None)
    if isinstance(func, cst.Attribute) and func.attr.value in ("add_argument", "set_defaults"):
        return attr in _option_names(call)
    return False


def _option_names(call: cst.Call) -> set[str]:
    names: set[str] = set()
    for arg in call.args:
        if arg.keyword is None:
            flag = string_value(arg.value)
            if flag is not None:
                names.add(flag.lstrip("-").replace("-", "_"))
        elif arg.keyword.value == "dest":
            names.add(string_value(arg.value) or "")
        elif isinstance(call.func, cst.Attribute) and call.func.attr.value == "set_defaults":
            names.add(arg.keyword.value)
    return names


def _option_default(call: cst.Call, attr: str) -> cst.BaseExpression | None:
    """The value an option gives the attribute when the command line does not, where the file
    offers no other (`choices` naming more values): None when unknown."""
    func = call.func
    if not isinstance(func, cst.Attribute) or func.attr.value not in ("add_argument", "set_defaults"):
        return None
    keywords = {arg.keyword.value: arg.value for arg in call.args if arg.keyword is not None}
    if func.attr.value == "set_defaults":
        return keywords.get(attr)
    if "choices" in keywords or any(arg.star for arg in call.args):
        return None
    return keywords.get("default")
