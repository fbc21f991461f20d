"""The mutation operators of this domain: what a student gets wrong in numpy attention code, as edits of a module.

Cosmic Ray's own operators (binary and unary operators, comparisons, numbers, booleans, loops) cover
the arithmetic; these add the mistakes of array code and of the calls' contracts: an axis changed or
dropped, a transpose dropped or added, `.T` for `np.swapaxes`, `keepdims` dropped, `@` for `*`, an
in-place update for a copy and back, a float32 cast, iteration in a dict's own order, a container of
the caller's emptied or reordered, state kept across calls (a mutable default, a global), and the
constants students reach for (-1e9 for -inf, 1e-9 below the line).

Each operator maps a module's syntax tree to its mutants, each a list of text edits (byte offsets of
the source, a replacement), so a mutant's diff shows only the line it changes.
"""

import ast
from collections.abc import Callable, Iterator

Edit = tuple[int, int, str]  # start and end byte offsets in the source, and what replaces them

CONTAINERS = {"heads": "list", "params": "dict", "grads": "dict", "model.params": "dict"}  # the caller's containers, by name
MAY_HOLD_MINUS_INF = {("softmax", "x"), ("apply_causal_mask", "scores")}  # (function, parameter): masked scores


class Source:
    """A module's source, its syntax tree and byte offsets of its nodes."""

    def __init__(self, text: str):
        self.text = text
        self.data = text.encode("utf-8")
        self.tree = ast.parse(text)
        self.starts = [0]
        for line in self.data.splitlines(keepends=True):
            self.starts.append(self.starts[-1] + len(line))

    def offset(self, line: int, col: int) -> int:
        return self.starts[line - 1] + col

    def span(self, node: ast.AST) -> tuple[int, int]:
        return self.offset(node.lineno, node.col_offset), self.offset(node.end_lineno, node.end_col_offset)

    def code(self, node: ast.AST) -> str:
        start, end = self.span(node)
        return self.data[start:end].decode("utf-8")

    def apply(self, edits: list[Edit]) -> str:
        """The source with these edits made (none overlapping)."""
        out, at = [], 0
        for start, end, text in sorted(edits):
            out += [self.data[at:start], text.encode("utf-8")]
            at = end
        return b"".join(out + [self.data[at:]]).decode("utf-8")

    def functions(self) -> Iterator[ast.FunctionDef]:
        return (node for node in self.tree.body if isinstance(node, ast.FunctionDef))

    def line_start(self, node: ast.AST) -> int:
        return self.starts[node.lineno - 1]


def enclosing(source: Source) -> Iterator[tuple[ast.FunctionDef, ast.AST]]:
    """Every node inside a function, with its function."""
    for function in source.functions():
        for node in ast.walk(function):
            yield function, node


def is_np(node: ast.AST, name: str) -> bool:
    """Whether node is np.NAME."""
    return isinstance(node, ast.Attribute) and node.attr == name and isinstance(node.value, ast.Name) and node.value.id == "np"


def matmul_to_mul(s: Source) -> Iterator[list[Edit]]:
    """A @ B -> A * B."""
    for _, node in enclosing(s):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            yield [(*s.span(node), f"{s.code(node.left)} * {s.code(node.right)}")]


def matmul_swapped(s: Source) -> Iterator[list[Edit]]:
    """A @ B -> B @ A."""
    for _, node in enclosing(s):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            yield [(*s.span(node), f"{s.code(node.right)} @ {s.code(node.left)}")]


def axis_changed(s: Source) -> Iterator[list[Edit]]:
    """axis=A -> axis dropped, or another axis."""
    for _, node in enclosing(s):
        if isinstance(node, ast.Call):
            for i, keyword in enumerate(node.keywords):
                if keyword.arg == "axis":
                    yield [_dropped_keyword(s, node, i)]
                    for other in ("-2", "0", "1"):
                        if s.code(keyword.value) != other:
                            yield [(*s.span(keyword.value), other)]


def keepdims_dropped(s: Source) -> Iterator[list[Edit]]:
    """keepdims=True dropped."""
    for _, node in enclosing(s):
        if isinstance(node, ast.Call):
            for i, keyword in enumerate(node.keywords):
                if keyword.arg == "keepdims":
                    yield [_dropped_keyword(s, node, i)]


def _dropped_keyword(s: Source, call: ast.Call, i: int) -> Edit:
    """The edit that removes keyword i of a call, with its comma."""
    keyword = call.keywords[i]
    before = [*call.args, *call.keywords[:i]]
    start = s.span(before[-1])[1] if before else s.span(keyword)[0]
    end = s.span(keyword)[1] if before else s.span(call.keywords[i + 1])[0] if i + 1 < len(call.keywords) else s.span(keyword)[1]
    return start, end, ""


def transpose_dropped(s: Source) -> Iterator[list[Edit]]:
    """np.swapaxes(A, i, j) -> A, A.T -> A."""
    for _, node in enclosing(s):
        if isinstance(node, ast.Call) and is_np(node.func, "swapaxes"):
            yield [(*s.span(node), s.code(node.args[0]))]
        if isinstance(node, ast.Attribute) and node.attr == "T":
            yield [(*s.span(node), s.code(node.value))]


def transpose_added(s: Source) -> Iterator[list[Edit]]:
    """Either operand X of @ -> np.swapaxes(X, -1, -2)."""
    for _, node in enclosing(s):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            for side in (node.left, node.right):
                yield [(*s.span(side), f"np.swapaxes({s.code(side)}, -1, -2)")]


def t_for_swapaxes(s: Source) -> Iterator[list[Edit]]:
    """np.swapaxes(A, -1, -2) -> A.T, and A.T -> np.swapaxes(A, -1, -2)."""
    for _, node in enclosing(s):
        if isinstance(node, ast.Call) and is_np(node.func, "swapaxes"):
            yield [(*s.span(node), f"{s.code(node.args[0])}.T")]
        if isinstance(node, ast.Attribute) and node.attr == "T":
            yield [(*s.span(node), f"np.swapaxes({s.code(node.value)}, -1, -2)")]


IN_PLACE = {ast.Add: "add", ast.Sub: "subtract", ast.Mult: "multiply", ast.Div: "true_divide"}


def in_place_for_copy(s: Source) -> Iterator[list[Edit]]:
    """P op B -> np.op(P, B, out=P), for P an argument or an entry of one: the caller's array changed."""
    for function, node in enclosing(s):
        if isinstance(node, ast.BinOp) and type(node.op) in IN_PLACE and _of_argument(function, node.left):
            left = s.code(node.left)
            yield [(*s.span(node), f"np.{IN_PLACE[type(node.op)]}({left}, {s.code(node.right)}, out={left})")]


def _of_argument(function: ast.FunctionDef, node: ast.AST) -> bool:
    """Whether node is an argument of function or an entry of one (params[name])."""
    names = {a.arg for a in function.args.args}
    return isinstance(node, ast.Name) and node.id in names or isinstance(node, ast.Subscript) and _of_argument(function, node.value)


AUGMENTED = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.MatMult: "@"}


def copy_for_in_place(s: Source) -> Iterator[list[Edit]]:
    """A op= B -> A = A op B: a new array where the caller's should change."""
    for _, node in enclosing(s):
        if isinstance(node, ast.AugAssign) and type(node.op) in AUGMENTED:
            target = s.code(node.target)
            yield [(*s.span(node), f"{target} = {target} {AUGMENTED[type(node.op)]} {s.code(node.value)}")]


def cast_float32(s: Source) -> Iterator[list[Edit]]:
    """An array result kept as float32: each returned value, and each array computed into one name or entry."""
    for _, node in enclosing(s):
        values = []
        if isinstance(node, ast.Return) and node.value is not None:
            values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], (ast.Name, ast.Subscript)):
            values = [node.value] if isinstance(node.value, (ast.BinOp, ast.Call)) and not _is_builtin_call(node.value) else []
        for value in values:
            yield [(*s.span(value), f"np.asarray({s.code(value)}, dtype=np.float32)")]


def _is_builtin_call(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("next", "float", "range", "len")


def dict_positional(s: Source) -> Iterator[list[Edit]]:
    """In `for K in A:`, B[K] -> list(B.values())[list(A).index(K)]: B's entries taken by position in A's order."""
    for _, loop in enclosing(s):
        if isinstance(loop, ast.For) and isinstance(loop.target, ast.Name) and isinstance(loop.iter, ast.Name):
            key, own = loop.target.id, loop.iter.id
            for node in (n for statement in loop.body for n in ast.walk(statement)):
                if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id != own:
                    if isinstance(node.slice, ast.Name) and node.slice.id == key:
                        yield [(*s.span(node), f"list({node.value.id}.values())[list({own}).index({key})]")]


def _containers(function: ast.FunctionDef) -> list[tuple[str, str]]:
    """The caller's containers this function is given or reaches: (name, kind)."""
    names = [a.arg for a in function.args.args]
    found = [(name, CONTAINERS[name]) for name in names if name in CONTAINERS]
    return found + [(name, kind) for name, kind in CONTAINERS.items() if "." in name and name.split(".")[0] in names]


def _before_end(s: Source, function: ast.FunctionDef, statement: str) -> Edit:
    """An edit that puts a statement before the function's last statement when that returns, else after it."""
    last = function.body[-1]
    indent = " " * last.col_offset
    if isinstance(last, ast.Return):
        at = s.line_start(last)
        return at, at, f"{indent}{statement}\n"
    at = s.starts[last.end_lineno]
    return at, at, f"{indent}{statement}\n"


def container_emptied(s: Source) -> Iterator[list[Edit]]:
    """The caller's list or dict emptied before returning."""
    for function in s.functions():
        for name, _ in _containers(function):
            yield [_before_end(s, function, f"{name}.clear()")]


def container_reordered(s: Source) -> Iterator[list[Edit]]:
    """The caller's list reversed, or its dict's entries put in reverse order, before returning."""
    for function in s.functions():
        for name, kind in _containers(function):
            statement = (
                f"{name}.reverse()" if kind == "list" else f"[{name}.update({{key: {name}.pop(key)}}) for key in list({name})[::-1]]"
            )
            yield [_before_end(s, function, statement)]


def _is_empty_container(node: ast.AST) -> bool:
    return isinstance(node, ast.List) and not node.elts or isinstance(node, ast.Dict) and not node.keys


def mutable_default(s: Source) -> Iterator[list[Edit]]:
    """A local started empty (`losses = []`) made a default argument instead (`losses=[]`), kept across calls."""
    for function in s.functions():
        for statement in function.body:
            if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
                continue
            target, value = statement.targets[0], statement.value
            pairs = (
                list(zip(target.elts, value.elts)) if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) else [(target, value)]
            )
            if pairs and all(isinstance(t, ast.Name) and _is_empty_container(v) for t, v in pairs):
                defaults = "".join(f", {t.id}={s.code(v)}" for t, v in pairs)
                last = function.args.args[-1]
                at = s.span(last)[1]
                line = s.line_start(statement)
                yield [(at, at, defaults), (line, s.starts[statement.end_lineno], "")]


def kept_by_shape(s: Source) -> Iterator[list[Edit]]:
    """A global that keeps each function's first result for arguments of the same shapes (types for non-arrays)."""
    for function in s.functions():
        name = function.name
        start = s.offset(function.lineno, function.col_offset) + len("def ")
        after = s.starts[function.end_lineno]
        wrapper = (
            f"\n\n_kept_{name} = {{}}\n\n\ndef {name}(*args):\n"
            f'    key = tuple(getattr(a, "shape", type(a).__name__) for a in args)\n'
            f"    if key not in _kept_{name}:\n"
            f"        _kept_{name}[key] = _{name}_once(*args)\n"
            f"    return _kept_{name}[key]\n"
        )
        yield [(start, start + len(name), f"_{name}_once"), (after, after, wrapper)]


def minus_inf_clipped(s: Source) -> Iterator[list[Edit]]:
    """-inf entries of masked scores turned into -1e9 first."""
    for function in s.functions():
        for argument in function.args.args:
            if (function.name, argument.arg) in MAY_HOLD_MINUS_INF:
                first = function.body[1] if ast.get_docstring(function) else function.body[0]
                at = s.line_start(first)
                statement = f"{argument.arg} = np.where(np.isneginf({argument.arg}), -1e9, {argument.arg})"
                yield [(at, at, " " * first.col_offset + statement + "\n")]


def epsilon_added(s: Source) -> Iterator[list[Edit]]:
    """A / B -> A / (B + 1e-9)."""
    for _, node in enclosing(s):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            yield [(*s.span(node.right), f"({s.code(node.right)} + 1e-9)")]


def inf_to_large(s: Source) -> Iterator[list[Edit]]:
    """np.inf -> 1e9."""
    for _, node in enclosing(s):
        if is_np(node, "inf"):
            yield [(*s.span(node), "1e9")]


OPERATORS: dict[str, Callable[[Source], Iterator[list[Edit]]]] = {
    "MatMulToMul": matmul_to_mul,
    "MatMulSwapped": matmul_swapped,
    "AxisChanged": axis_changed,
    "KeepdimsDropped": keepdims_dropped,
    "TransposeDropped": transpose_dropped,
    "TransposeAdded": transpose_added,
    "TForSwapaxes": t_for_swapaxes,
    "InPlaceForCopy": in_place_for_copy,
    "CopyForInPlace": copy_for_in_place,
    "CastFloat32": cast_float32,
    "DictPositional": dict_positional,
    "ContainerEmptied": container_emptied,
    "ContainerReordered": container_reordered,
    "MutableDefault": mutable_default,
    "KeptByShape": kept_by_shape,
    "MinusInfClipped": minus_inf_clipped,
    "EpsilonAdded": epsilon_added,
    "InfToLarge": inf_to_large,
}
