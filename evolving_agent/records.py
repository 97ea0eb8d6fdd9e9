"""``@record``: the dataclass shapes every command defines, without dataclasses' compiler.

``@dataclass`` writes ``__init__``, ``__repr__`` and ``__eq__`` (frozen: also
``__setattr__``, ``__delattr__`` and ``__hash__``) as source text and compiles each with
``exec``, and signs an undocumented class with ``inspect``: about a millisecond of CPU per
class.  A read command defines 17 such classes before it reads anything (``review list``
37), 6-12 % of its CPU, and the suite starts thousands of commands.  ``@record`` gives a
class the same methods as shared functions, and works out once per class what they read
(the fields ``__init__`` fills, in order, with their defaults and factories; a getter of
the field values for ``==`` and ``hash``), so defining one costs microseconds and an
instance is built, compared and hashed in about 1-2.5x a dataclass's time.

What it keeps of ``@dataclass`` (``tests/test_records.py`` compares the two on generated
classes): ``__init__`` with positional or keyword fields, defaults (a base class's
attribute too), ``dataclasses.field(default=…, default_factory=…, init=False)`` and
``__post_init__``; the same ``repr`` (``...`` for a record inside itself); equality by
class and fields; ``frozen`` (``FrozenInstanceError`` on assignment, hashable by fields);
an unfrozen record is unhashable; fields inherited from a base record; methods the class
writes itself are left alone; ``__match_args__``; ``inspect.signature`` and ``__doc__``
(built when read); ``ClassVar`` read as dataclasses read it (a string's first name looked
up in the class's module: ``ClassVar``, ``typing.ClassVar``, ``t.ClassVar``, an alias),
and also when ``ClassVar`` is imported for type checking only, as mypy reads it; the
mutable-default rule of Python 3.11 (a default whose type is unhashable).
What it refuses (``TypeError`` at class definition, so nothing differs quietly): any other
``field()`` option, ``InitVar``, ``KW_ONLY``, a frozen and an unfrozen record in one
hierarchy, a record that is or extends a dataclass (a ``@dataclass`` subclass of a record
cannot be refused: it would not see the record's fields — do not write one).
``dataclasses.replace``/``asdict``/``astuple``/``fields`` do not apply, nor does ``asdict``
look inside a record a dataclass holds: keep ``@dataclass`` where they are used (a test
keeps records away from them).  Mypy reads ``@record`` as a dataclass
(``dataclass_transform``).

No import here but what every interpreter has loaded at start (``operator``, ``_thread``):
the boot path must not pay for ``typing``, ``dataclasses`` or ``inspect``.
"""

from __future__ import annotations

import sys
from _thread import get_ident
from operator import attrgetter  # operator is loaded at every interpreter's start (collections)

TYPE_CHECKING = False  # typing costs boot's fast path a few ms; mypy reads the name as typing's
if TYPE_CHECKING:
    from collections.abc import Callable
    from dataclasses import Field, field
    from typing import Any, TypeVar, dataclass_transform, overload

    T = TypeVar("T")

_MISSING = object()
_FIELDS = "__record_fields__"  # ((name, default, factory, init), ...) in field order
_FROZEN = "__record_frozen__"
# (steps, positional names, init names, setter, calls __post_init__): worked out once a class
_INIT = "__record_init__"
_VALUES = "__record_values__"  # instance -> the tuple of its field values, for == and hash
_NAMES = "__record_names__"  # frozenset of the field names


class _Slotted:
    __slots__ = ("name",)


_MEMBER = type(_Slotted.__dict__["name"])  # types.MemberDescriptorType: a __slots__ name


class _Factory:
    def __repr__(self) -> str:
        return "<factory>"  # as dataclasses shows a factory default in a signature


_HAS_FACTORY = _Factory()


def _options(value: Any) -> tuple[Any, Any, bool] | None:
    """A ``dataclasses.field(...)``'s default, factory and init flag; None if not a field."""
    dc = sys.modules.get("dataclasses")  # a Field exists only once dataclasses is imported
    if dc is None or not isinstance(value, dc.Field):
        return None
    plain = dc.field()
    for option in ("repr", "hash", "compare", "metadata", "kw_only"):
        if getattr(value, option) != getattr(plain, option):
            raise TypeError(f"@record does not take field({option}=...): use @dataclass")
    default = _MISSING if value.default is dc.MISSING else value.default
    factory = _MISSING if value.default_factory is dc.MISSING else value.default_factory
    return default, factory, value.init


_HEADS: dict[str, tuple[str | None, str] | None] = {}  # annotations repeat: "str", "int"


def _head(text: str) -> tuple[str | None, str] | None:
    r"""``module.name`` or ``name`` at the start of an annotation string, as
    dataclasses' ``_MODULE_IDENTIFIER_RE`` (``^(?:\s*(\w+)\s*\.)?\s*(\w+)``) reads it."""
    if text in _HEADS:
        return _HEADS[text]
    parts: list[str] = []
    at, end = 0, len(text)
    while len(parts) < 2:
        while at < end and text[at].isspace():
            at += 1
        start = at
        while at < end and (text[at].isalnum() or text[at] == "_"):
            at += 1
        if at == start:
            break
        parts.append(text[start:at])
        while at < end and text[at].isspace():
            at += 1
        if at == end or text[at] != ".":
            break
        at += 1
    head = None if not parts else (None, parts[0]) if len(parts) == 1 else (parts[0], parts[1])
    _HEADS[text] = head
    return head


def _named(annotation: object, cls: type, typing: Any, dc: Any) -> object:
    """What an annotation names, as dataclasses' ``_is_type`` resolves it: an object is
    itself; a string's first name is looked up in the class's module (``ClassVar[int]``,
    ``CV`` after ``from typing import ClassVar as CV``), or, when it reads ``t.name`` and
    the module's ``t`` is typing or dataclasses, in that module (``t.ClassVar``,
    ``dataclasses.InitVar``); None when it names nothing found."""
    if not isinstance(annotation, str):
        return annotation
    head = _head(annotation)
    if head is None:
        return None
    names = getattr(sys.modules.get(cls.__module__), "__dict__", {})
    if head[0] is not None:
        module = names.get(head[0])
        if module is None or (module is not typing and module is not dc):
            return None
        names = module.__dict__
    return names.get(head[1])


def _kind(annotation: object, cls: type, name: str) -> str:
    """The kind, "field" or "classvar", as dataclasses reads the annotation; a TypeError
    for what a record does not take (``InitVar``, ``KW_ONLY``).  ``ClassVar``, ``InitVar``
    and ``KW_ONLY`` cannot be named unless typing or dataclasses is loaded."""
    typing, dc = sys.modules.get("typing"), sys.modules.get("dataclasses")
    found = _named(annotation, cls, typing, dc)
    if typing is not None and (
        found is typing.ClassVar
        or (type(found) is typing._GenericAlias and found.__origin__ is typing.ClassVar)  # type: ignore[attr-defined]
    ):
        return "classvar"
    if found is None and isinstance(annotation, str):
        # ``ClassVar`` imported for type checking only: not in the module, so dataclasses
        # would make a field of what mypy reads as a ClassVar; a record follows mypy
        head = _head(annotation)
        if head is not None and head[1] == "ClassVar" and head[0] in (None, "typing"):
            names = getattr(sys.modules.get(cls.__module__), "__dict__", {})
            if (head[0] or head[1]) not in names:
                return "classvar"
    if dc is not None and found is not None:
        if found is dc.InitVar or type(found) is dc.InitVar:
            raise TypeError(f"@record does not take InitVar ({cls.__name__}.{name})")
        if found is dc.KW_ONLY:
            raise TypeError(f"@record does not take KW_ONLY ({cls.__name__}.{name})")
    return "field"


def _annotations(cls: type) -> dict[str, Any]:
    """The class's own annotations; Python 3.14 evaluates them lazily, and a name imported
    only for type checking then fails to evaluate: read those as strings."""
    try:
        return cls.__annotations__  # own, not a base's, since 3.10
    except NameError:  # pragma: no cover - Python 3.14 without `from __future__ import annotations`
        annotationlib: Any = __import__("annotationlib")
        return annotationlib.get_annotations(cls, format=annotationlib.Format.STRING)


def _build(cls: type, frozen: bool) -> type:
    if hasattr(cls, "__dataclass_fields__"):
        raise TypeError(
            f"{cls.__name__}: a @record cannot be a dataclass or extend one "
            "(dataclasses would not see its fields, nor it theirs): use @dataclass"
        )
    fields: dict[str, tuple[str, Any, Any, bool]] = {}
    for base in reversed(cls.__mro__[1:]):
        if _FIELDS in base.__dict__:
            if base.__dict__[_FROZEN] != frozen:
                raise TypeError(f"{cls.__name__}: a frozen and an unfrozen @record in one line")
            fields.update((f[0], f) for f in base.__dict__[_FIELDS])
    annotations = _annotations(cls)
    dc = sys.modules.get("dataclasses")
    if dc is not None:
        for name, value in cls.__dict__.items():
            if isinstance(value, dc.Field) and name not in annotations:
                raise TypeError(f"{name!r} is a field but has no type annotation")
    for name, annotation in annotations.items():
        if _kind(annotation, cls, name) == "classvar":
            continue
        value = getattr(cls, name, _MISSING)  # a base's class attribute is a default too
        if type(value) is _MEMBER:
            value = _MISSING  # a __slots__ name, not a value
        default, factory, init = _MISSING, _MISSING, True
        spec = _options(value)
        if spec is not None:
            default, factory, init = spec
            if name in cls.__dict__:
                if default is _MISSING:
                    delattr(cls, name)
                else:
                    setattr(cls, name, default)
        elif value is not _MISSING:
            default = value
        if default is not _MISSING and default.__class__.__hash__ is None:
            raise ValueError(
                f"mutable default {type(default)} for field {name} is not allowed: "
                "use default_factory"
            )
        fields[name] = (name, default, factory, init)
    seen_default = False
    for name, default, factory, init in fields.values():
        if not init:
            continue
        if default is _MISSING and factory is _MISSING:
            if seen_default:
                raise TypeError(f"non-default argument {name!r} follows default argument")
        else:
            seen_default = True
    table = tuple(fields.values())
    positional = tuple(f[0] for f in table if f[3])
    at = {name: i for i, name in enumerate(positional)}
    # what __init__ does per field, in field order: (name, default, factory, position);
    # an init=False field with a plain default stays a class attribute, as in dataclasses
    steps = tuple(
        (name, default, factory, at.get(name, len(positional)))
        for name, default, factory, init in table
        if init or factory is not _MISSING
    )
    setattr(cls, _FIELDS, table)
    setattr(cls, _FROZEN, frozen)
    setattr(
        cls,
        _INIT,
        (
            steps,
            positional,
            frozenset(positional),
            object.__setattr__ if frozen else setattr,
            hasattr(cls, "__post_init__"),
        ),
    )
    names = tuple(f[0] for f in table)
    setattr(cls, _NAMES, frozenset(names))
    setattr(cls, _VALUES, _getter(names))
    own_init = "__init__" in cls.__dict__
    for attr, method in (("__init__", _init), ("__repr__", _repr), ("__eq__", _eq)):
        if attr not in cls.__dict__:
            setattr(cls, attr, method)
    if not own_init and "__signature__" not in cls.__dict__:
        cls.__signature__ = _SIGNATURE  # type: ignore[attr-defined]
    if not cls.__dict__.get("__doc__"):  # as dataclasses: no docstring, or an empty one
        cls.__doc__ = _DOC  # type: ignore[assignment]
    if "__match_args__" not in cls.__dict__:
        cls.__match_args__ = positional  # type: ignore[attr-defined,misc]
    class_hash = cls.__dict__.get("__hash__", _MISSING)
    explicit_hash = not (
        class_hash is _MISSING or (class_hash is None and "__eq__" in cls.__dict__)
    )
    if frozen:
        for attr, method in (("__setattr__", _frozen_setattr), ("__delattr__", _frozen_delattr)):
            if attr in cls.__dict__:
                raise TypeError(f"Cannot overwrite attribute {attr} in class {cls.__name__}")
            setattr(cls, attr, method)
        if not explicit_hash:
            cls.__hash__ = _hash  # type: ignore[assignment]
    elif not explicit_hash:
        cls.__hash__ = None  # type: ignore[assignment]
    return cls


def _getter(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """Always a tuple, as dataclasses compares and hashes ``(self.a,)``: one NaN field
    equals itself by identity, and the hash is the tuple's."""
    if len(names) > 1:
        return attrgetter(*names)
    if names:
        one = attrgetter(names[0])
        return lambda self: (one(self),)
    return lambda self: ()


def _init(self: Any, *args: Any, **kwargs: Any) -> None:
    cls = type(self)
    steps, positional, known, put, post = cls.__record_init__  # _INIT
    n = len(args)
    if kwargs:
        for key in kwargs:
            if key not in known:
                raise TypeError(
                    f"{cls.__qualname__}.__init__() got an unexpected keyword argument {key!r}"
                )
            if key in positional[:n]:
                raise TypeError(
                    f"{cls.__qualname__}.__init__() got multiple values for argument {key!r}"
                )
    if n > len(positional):
        raise TypeError(
            f"{cls.__qualname__}.__init__() takes {len(positional) + 1} positional arguments "
            f"but {n + 1} were given"
        )
    for name, default, factory, at in steps:
        if at < n:
            put(self, name, args[at])
        elif name in kwargs:
            put(self, name, kwargs[name])
        elif factory is not _MISSING:
            put(self, name, factory())
        elif default is not _MISSING:
            put(self, name, default)
        else:
            raise _missing(cls, steps, n, kwargs)
    if post:
        self.__post_init__()


def _missing(cls: type, steps: Any, n: int, kwargs: dict[str, Any]) -> TypeError:
    names = [
        repr(name)
        for name, default, factory, at in steps
        if at >= n and name not in kwargs and default is _MISSING and factory is _MISSING
    ]
    if len(names) < 3:
        listed = " and ".join(names)
    else:
        listed = ", ".join(names[:-1]) + f", and {names[-1]}"
    return TypeError(
        f"{cls.__qualname__}.__init__() missing {len(names)} required positional "
        f"argument{'s' if len(names) > 1 else ''}: {listed}"
    )


_REPRS: set[tuple[int, int]] = set()  # (object, thread) whose repr is being written


def _repr(self: Any) -> str:
    key = (id(self), get_ident())
    if key in _REPRS:
        return "..."  # a record inside itself, as reprlib.recursive_repr shows it
    _REPRS.add(key)
    try:
        shown = ", ".join([f"{f[0]}={getattr(self, f[0])!r}" for f in getattr(type(self), _FIELDS)])
    finally:
        _REPRS.discard(key)
    return f"{self.__class__.__qualname__}({shown})"


def _eq(self: Any, other: object) -> bool:
    if other.__class__ is not self.__class__:
        return NotImplemented
    values = type(self).__record_values__  # type: ignore[attr-defined]  # _VALUES, read faster
    return values(self) == values(other)


def _hash(self: Any) -> int:
    return hash(self.__class__.__record_values__(self))  # _VALUES


def _frozen(self: Any, name: str) -> bool:
    cls = type(self)
    return _FIELDS in cls.__dict__ or name in getattr(cls, _NAMES)


def _frozen_setattr(self: Any, name: str, value: object) -> None:
    if _frozen(self, name):
        from dataclasses import FrozenInstanceError

        raise FrozenInstanceError(f"cannot assign to field {name!r}")
    object.__setattr__(self, name, value)


def _frozen_delattr(self: Any, name: str) -> None:
    if _frozen(self, name):
        from dataclasses import FrozenInstanceError

        raise FrozenInstanceError(f"cannot delete field {name!r}")
    object.__delattr__(self, name)


class _Signature:
    """``inspect.signature(cls)`` as for a dataclass, built when asked: ``inspect`` costs
    a command more than the signature is worth at definition."""

    def __get__(self, instance: object, owner: type) -> Any:
        if instance is not None:
            raise AttributeError("__signature__")
        if owner.__init__ is not _init:  # type: ignore[misc]
            return None  # a subclass wrote its own __init__: inspect reads that one
        import inspect

        annotations: dict[str, Any] = {}
        for base in reversed(owner.__mro__):
            if _FIELDS in base.__dict__:
                annotations.update(_annotations(base))
        kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
        parameters = [
            inspect.Parameter(
                name,
                kind,
                default=_HAS_FACTORY
                if factory is not _MISSING
                else (inspect.Parameter.empty if default is _MISSING else default),
                annotation=annotations.get(name, inspect.Parameter.empty),
            )
            for name, default, factory, init in getattr(owner, _FIELDS)
            if init
        ]
        return inspect.Signature(parameters, return_annotation=None)


class _Doc:
    """A record without a docstring reads as dataclasses writes one: ``Name(x: int)``."""

    def __get__(self, instance: object, owner: type) -> str:
        try:
            import inspect

            shown = str(inspect.signature(owner)).replace(" -> None", "")
        except (TypeError, ValueError):
            shown = ""
        return owner.__name__ + shown


_SIGNATURE = _Signature()
_DOC = _Doc()


def _record(cls: Any = None, /, *, frozen: bool = False) -> Any:
    if cls is None:
        return lambda c: _build(c, frozen)
    return _build(cls, frozen)


if TYPE_CHECKING:

    @overload
    @dataclass_transform(field_specifiers=(field, Field))
    def record(cls: type[T], /) -> type[T]: ...

    @overload
    def record(*, frozen: bool = False) -> Callable[[type[T]], type[T]]: ...

    def record(cls: Any = None, /, *, frozen: bool = False) -> Any:
        """A dataclass-shaped class (the module's docstring): ``@record`` or
        ``@record(frozen=True)``."""
        return _record(cls, frozen=frozen)

else:
    record = _record
