"""``@record`` behaves as ``@dataclass`` does, on generated classes and instances."""

from __future__ import annotations

import ast
import copy
import dataclasses
import importlib.util
import inspect
import pickle
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evolving_agent.records import record
from tests.helpers.roots import fresh_root

VALUES = st.one_of(st.integers(), st.text(max_size=5), st.none(), st.tuples(st.integers()))
# A field: (has a default, the default as a value or a factory)
FIELD = st.tuples(st.sampled_from(["required", "default", "factory", "inherited"]), VALUES)


def shape(fields: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """Required fields first, as both decorators demand."""
    return sorted(fields, key=lambda f: f[0] != "required")


def make(decorate: Any, fields: list[tuple[str, Any]], frozen: bool) -> type:
    namespace: dict[str, Any] = {"__annotations__": {}}
    inherited: dict[str, Any] = {}  # a plain base's class attribute is a default too
    for i, (kind, value) in enumerate(fields):
        name = f"f{i}"
        namespace["__annotations__"][name] = "object"
        if kind == "default":
            namespace[name] = value
        elif kind == "factory":
            namespace[name] = dataclasses.field(default_factory=lambda v=value: [v])
        elif kind == "inherited":
            inherited[name] = value
    cls = type("Rec", (type("Base", (), inherited),), namespace)
    return decorate(frozen=frozen)(cls)  # type: ignore[no-any-return]


def outcome(call: Any) -> Any:
    try:
        return ("ok", call())
    except Exception as e:  # noqa: BLE001 - the kind of failure is what is compared
        return ("raised", type(e).__name__)


@settings(max_examples=150, deadline=None)
@given(
    fields=st.lists(FIELD, max_size=5).map(shape),
    frozen=st.booleans(),
    args=st.lists(VALUES, max_size=6),
    kwargs=st.dictionaries(st.sampled_from(["f0", "f1", "f4", "f9"]), VALUES, max_size=3),
    other=st.lists(VALUES, max_size=6),
)
def test_a_record_is_built_shown_compared_and_hashed_as_a_dataclass(
    fields: list[tuple[str, Any]],
    frozen: bool,
    args: list[Any],
    kwargs: dict[str, Any],
    other: list[Any],
) -> None:
    rec, dc = make(record, fields, frozen), make(dataclasses.dataclass, fields, frozen)
    r, d = outcome(lambda: rec(*args, **kwargs)), outcome(lambda: dc(*args, **kwargs))
    assert r[0] == d[0]
    assert rec.__match_args__ == dc.__match_args__  # type: ignore[attr-defined]
    assert str(inspect.signature(rec)) == str(inspect.signature(dc))
    assert rec.__doc__ == dc.__doc__
    if r[0] == "raised":
        assert r[1] == d[1] == "TypeError"
        return
    a, b = r[1], d[1]
    assert repr(a) == repr(b)
    assert outcome(lambda: hash(a)) == outcome(lambda: hash(b))
    r2, d2 = outcome(lambda: rec(*other)), outcome(lambda: dc(*other))
    if r2[0] == "ok" and d2[0] == "ok":
        assert (a == r2[1]) == (b == d2[1])
        assert (a != r2[1]) == (b != d2[1])
    assert outcome(lambda: setattr(a, "f0", 1)) == outcome(lambda: setattr(b, "f0", 1))
    assert a == copy.copy(a) and a == copy.deepcopy(a)
    assert outcome(lambda: delattr(a, "f1")) == outcome(lambda: delattr(b, "f1"))
    assert outcome(lambda: repr(a)) == outcome(lambda: repr(b))
    assert vars(a) == vars(b) and list(vars(a)) == list(vars(b))  # same order, for JSON
    box_r, box_d = rec(*args, **kwargs), dc(*args, **kwargs)
    if fields:  # a record inside itself shows as "...", as reprlib.recursive_repr does
        object.__setattr__(box_r, "f0", [box_r])
        object.__setattr__(box_d, "f0", [box_d])
        assert repr(box_r) == repr(box_d)


@record(frozen=True)
class Point:
    x: int
    y: int = 0


@record
class Counter:
    name: str
    seen: list[str] = dataclasses.field(default_factory=list)
    total: int = dataclasses.field(init=False)

    def __post_init__(self) -> None:
        self.total = len(self.seen)


@record
class Child(Counter):
    extra: int = 1


def test_frozen_records_refuse_assignment_as_dataclasses_do() -> None:
    p = Point(1)
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'x'"):
        p.x = 2  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot delete field 'y'"):
        del p.y  # type: ignore[misc]
    assert {Point(1), Point(1, 0)} == {Point(1)}
    assert pickle.loads(pickle.dumps(p)) == p
    match p:
        case Point(1, 0):
            pass
        case _:
            pytest.fail("match by position")


def test_init_false_fields_post_init_factories_and_inheritance() -> None:
    c = Counter("a", ["x", "y"])
    assert (c.total, repr(c)) == (2, "Counter(name='a', seen=['x', 'y'], total=2)")
    assert Counter("a").seen is not Counter("a").seen
    with pytest.raises(TypeError):
        hash(c)
    with pytest.raises(TypeError, match="unexpected keyword argument 'total'"):
        Counter("a", total=3)  # type: ignore[call-arg]
    k = Child("b", extra=5)
    assert repr(k) == "Child(name='b', seen=[], total=0, extra=5)"
    assert k != Counter("b")


def test_what_a_record_does_not_do_fails_at_definition() -> None:
    with pytest.raises(TypeError, match="repr"):

        @record
        class Hidden:
            x: int = dataclasses.field(default=0, repr=False)

    with pytest.raises(ValueError, match="mutable default"):

        @record
        class Shared:
            x: list[int] = []  # noqa: RUF012 - the mistake under test

    with pytest.raises(TypeError, match="follows default"):

        @record
        class Order:
            x: int = 0
            y: int  # type: ignore[misc]

    with pytest.raises(TypeError, match="frozen and an unfrozen"):

        @record
        class Thawed(Point):
            z: int = 0


def test_defining_records_compiles_nothing_and_imports_neither_typing_nor_dataclasses() -> None:
    # What makes a record cheaper than a dataclass: no source text compiled per class.
    script = (
        "import builtins, sys\n"
        "from evolving_agent.records import record\n"
        "calls = []\n"
        "real = builtins.exec\n"
        "builtins.exec = lambda *a, **k: calls.append(a) or real(*a, **k)\n"
        "for i in range(20):\n"
        "    record(frozen=True)(type('R', (), {'__annotations__': {'a': 'int', 'b': 'str'}}))\n"
        "print(len(calls), 'typing' in sys.modules, 'dataclasses' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["0", "False", "False"]


COMMON = [["hypothesis", "list"], ["review", "list"], ["verify"], ["live", "show"]]
# Trace stays a dataclass: review_trace builds its variants with dataclasses.replace.
STILL_DATACLASSES = {"evolving_agent.memory.ops.review_trace.Trace"}


@pytest.mark.parametrize("argv", COMMON, ids=" ".join)
def test_the_commands_run_most_define_no_dataclass_of_ours(tmp_path: Path, argv: list[str]) -> None:
    # Each @dataclass costs a command ~1 ms of compiling; these commands once defined 17-37.
    root = fresh_root(tmp_path / "memory")
    script = (
        "import atexit, runpy, sys\n"
        "def shown():\n"
        "    found = sorted(f'{m.__name__}.{k}' for m in list(sys.modules.values())\n"
        "        if getattr(m, '__name__', '').startswith('evolving_agent')\n"
        "        for k, v in vars(m).items() if isinstance(v, type)\n"
        "        and v.__module__ == m.__name__ and '__dataclass_fields__' in v.__dict__)\n"
        "    print('DATACLASSES', *found, file=sys.stderr)\n"
        "atexit.register(shown)\n"
        f"sys.argv = ['evolving-agent', '--root', {str(root.path)!r}, *{argv!r}]\n"
        "runpy.run_module('evolving_agent', run_name='__main__')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    line = done.stderr.splitlines()[-1].split()
    assert line[0] == "DATACLASSES"
    assert set(line[1:]) <= STILL_DATACLASSES


def load(path: Path, source: str) -> Any:
    """A real module (a record reads its annotations' names in the module's globals)."""
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[path.stem]
    return module


SPELLINGS = """\
from __future__ import annotations
import dataclasses
import typing
import typing as t
from typing import ClassVar
from typing import ClassVar as CV
from evolving_agent.records import record

def both(deco):
    @deco
    class C:
        a: int
        b: ClassVar[dict] = {}
        c: typing.ClassVar[int] = 1
        d: t.ClassVar[list] = []
        e: CV[int] = 2
        f: CV = 3
        g: ClassVarish = 0
        h: MyInitVar = None
        i: int = 4
    return C

class ClassVarish: ...
class MyInitVar: ...
REC, DC = both(record), both(dataclasses.dataclass)
"""


def test_classvars_are_read_as_dataclasses_read_them(tmp_path: Path) -> None:
    module = load(tmp_path / "spellings.py", SPELLINGS)
    rec, dc = module.REC, module.DC
    assert rec.__match_args__ == dc.__match_args__ == ("a", "g", "h", "i")
    assert repr(rec(1)) == repr(dc(1))
    assert rec.d == dc.d == []  # a ClassVar may hold a list; a field may not


def test_a_classvar_imported_for_type_checking_only_is_a_classvar_as_mypy_reads_it(
    tmp_path: Path,
) -> None:
    # dataclasses would make a field of it (ClassVar is not in the module): the record
    # follows mypy, which the project's type checking relies on
    source = (
        "from __future__ import annotations\n"
        "from evolving_agent.records import record\n"
        "TYPE_CHECKING = False\n"
        "if TYPE_CHECKING:\n"
        "    from typing import ClassVar\n"
        "@record\n"
        "class C:\n"
        "    a: int\n"
        "    limit: ClassVar[int] = 3\n"
    )
    rec = load(tmp_path / "checking_only.py", source).C
    assert rec.__match_args__ == ("a",) and repr(rec(1)) == "C(a=1)"


@pytest.mark.parametrize(
    "annotation",
    ["dataclasses.InitVar[int]", "InitVar[int]", "InitVar", "dataclasses.KW_ONLY", "KW_ONLY"],
)
def test_initvar_and_kw_only_are_refused_however_spelled(tmp_path: Path, annotation: str) -> None:
    source = (
        "from __future__ import annotations\n"
        "import dataclasses\n"
        "from dataclasses import InitVar, KW_ONLY\n"
        "from evolving_agent.records import record\n"
        "@record\n"
        "class C:\n"
        "    a: int\n"
        f"    b: {annotation}\n"
    )
    with pytest.raises(TypeError, match="does not take (InitVar|KW_ONLY)"):
        load(tmp_path / "refused.py", source)


def test_initvar_and_kw_only_objects_are_refused() -> None:
    for annotation in (dataclasses.InitVar[int], dataclasses.InitVar, dataclasses.KW_ONLY):
        with pytest.raises(TypeError, match="does not take"):
            record(type("C", (), {"__annotations__": {"a": int, "b": annotation}}))


def test_a_record_in_a_dataclass_line_is_refused() -> None:
    @dataclasses.dataclass
    class Base:
        a: int = 0

    with pytest.raises(TypeError, match="cannot be a dataclass or extend one"):

        @record
        class Sub(Base):
            b: int = 0

    with pytest.raises(TypeError, match="cannot be a dataclass or extend one"):
        record(dataclasses.dataclass(type("C", (), {"__annotations__": {"a": "int"}})))


@record
class Loose:
    v: int = 0


@pytest.mark.parametrize(
    "default", [[], {}, set(), bytearray(b"x"), Loose(), frozenset(), (1, []), Point(1)], ids=repr
)
def test_a_default_is_refused_when_its_type_is_unhashable_as_in_python_3_11(default: Any) -> None:
    def build(deco: Any) -> Any:
        return outcome(
            lambda: deco(type("C", (), {"__annotations__": {"x": "object"}, "x": default}))
        )

    r, d = build(record), build(dataclasses.dataclass)
    assert r[0] == d[0]
    if r[0] == "raised":
        assert r[1] == d[1] == "ValueError"


def test_defaults_come_through_the_mro_as_in_dataclasses() -> None:
    def build(deco: Any) -> Any:
        class Mixin:
            x = 5

        @deco
        class A:
            y: int = 1

        @deco
        class B(A, Mixin):
            x: int
            y: int

        return repr(B()), str(inspect.signature(B))

    assert build(record) == build(dataclasses.dataclass)


def test_signature_and_doc_as_dataclasses_write_them_and_a_written_init_is_read() -> None:
    def build(deco: Any) -> Any:
        @deco
        class A:
            x: int
            y: list[int] = dataclasses.field(default_factory=list)
            z: int = dataclasses.field(default=0, init=False)

        class Own(A):
            def __init__(self, w: str) -> None:
                super().__init__(1)

        return str(inspect.signature(A)), A.__doc__, str(inspect.signature(Own)), Own.__doc__

    assert build(record) == build(dataclasses.dataclass)


def test_a_field_without_annotation_is_refused_as_dataclasses_do() -> None:
    with pytest.raises(TypeError, match="'x' is a field but has no type annotation"):
        record(type("C", (), {"__annotations__": {}, "x": dataclasses.field(default=1)}))


def test_missing_arguments_are_named_as_python_names_them() -> None:
    def build(deco: Any) -> Any:
        return deco(type("C", (), {"__annotations__": {"a": "int", "b": "int", "c": "int"}}))

    for args in ((), (1,), (1, 2)):
        errors = []
        for deco in (record, dataclasses.dataclass):
            with pytest.raises(TypeError) as caught:
                build(deco)(*args)
            errors.append(str(caught.value).split(".")[-1])
        assert errors[0] == errors[1]


# dataclasses' functions on a record: replace/fields/astuple raise, is_dataclass says False,
# and asdict leaves a record a dataclass holds as it is, in what becomes JSON
DATACLASS_CALLS = {"replace", "asdict", "astuple", "fields", "is_dataclass"}


def decorated(node: ast.ClassDef, name: str) -> bool:
    for d in node.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        if getattr(target, "id", getattr(target, "attr", None)) == name:
            return True
    return False


def words(annotation: ast.expr | None) -> set[str]:
    """The names an annotation mentions, string annotations included."""
    found: set[str] = set()
    for node in ast.walk(annotation) if annotation is not None else ():
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.update(re.findall(r"\w+", node.value))
    return found


def record_like(trees: dict[str, ast.Module]) -> set[str]:
    """Record class names, and the dataclasses holding one (asdict would keep it raw)."""
    shapes = [n for t in trees.values() for n in ast.walk(t) if isinstance(n, ast.ClassDef)]
    names = {c.name for c in shapes if decorated(c, "record")}
    holders = [c for c in shapes if decorated(c, "dataclass")]
    while True:
        more = {
            c.name
            for c in holders
            if any(isinstance(s, ast.AnnAssign) and words(s.annotation) & names for s in c.body)
        }
        if more <= names:
            return names
        names |= more


def misuses(trees: dict[str, ast.Module], shaped: set[str]) -> list[str]:
    """Each call of a dataclasses function whose first argument is, by what the source
    says of it, a record: the class itself, a record built in place, ``self`` in a
    record, or a parameter or variable annotated with a record's name."""
    found = []
    for where, tree in trees.items():
        methods = {
            id(f)
            for c in ast.walk(tree)
            if isinstance(c, ast.ClassDef) and c.name in shaped
            for f in c.body
        }
        for scope in ast.walk(tree):
            if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            known = {a.arg: words(a.annotation) for a in (*scope.args.args, *scope.args.kwonlyargs)}
            calls = []
            for node in ast.walk(scope):
                if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                    known[node.target.id] = words(node.annotation)
                elif isinstance(node, ast.Call) and node.args:
                    name = getattr(node.func, "id", getattr(node.func, "attr", None))
                    if name in DATACLASS_CALLS:
                        calls.append((name, node))
            for name, call in calls:
                arg = call.args[0]
                built = isinstance(arg, ast.Call) and getattr(arg.func, "id", None) in shaped
                named = isinstance(arg, ast.Name) and (
                    arg.id in shaped
                    or known.get(arg.id, set()) & shaped
                    or (arg.id == "self" and id(scope) in methods)
                )
                if built or named:
                    found.append(f"{where}:{call.lineno} {name}({ast.unparse(arg)})")
    return found


def test_no_dataclasses_function_is_called_on_a_record() -> None:
    package = Path(__file__).resolve().parents[1] / "evolving_agent"
    sources = {str(p): p.read_text() for p in sorted(package.rglob("*.py"))}
    trees = {  # a module that names neither decorator nor dataclasses has nothing to say
        p: ast.parse(text)
        for p, text in sources.items()
        if "@record" in text or "@dataclass" in text or "dataclasses" in text
    }
    shaped = record_like(trees)
    trees = {p: t for p, t in trees.items() if "dataclasses" in sources[p]}
    assert {"ReviewView", "Card"} <= shaped  # a record, and a dataclass holding records
    assert misuses(trees, shaped) == []
    # the finder sees each kind of misuse it claims to
    planted = ast.parse(
        "from dataclasses import asdict, replace\n"
        "import dataclasses\n"
        "@record\n"
        "class R:\n"
        "    x: int\n"
        "    def moved(self):\n"
        "        return replace(self, x=1)\n"
        "@dataclass\n"
        "class Holder:\n"
        "    r: 'R | None'\n"
        "def f(r: R, h: Holder):\n"
        "    v: R = r\n"
        "    return dataclasses.fields(R), asdict(h), replace(R(1)), dataclasses.astuple(v)\n"
    )
    assert len(misuses({"m": planted}, record_like({"m": planted}))) == 5
