"""``@record``: the dataclass shapes every command defines, without dataclasses' compiler.

``@dataclass`` writes ``__init__``, ``__repr__`` and ``__eq__`` (frozen: also
``__setattr__``, ``__delattr__`` and ``__hash__``) as source text and compiles each with
``exec``, and signs an undocumented class with ``inspect``: about a millisecond of CPU per
class.  A read command defines 17 such classes before it reads anything (``review list``
37), 6-12 % of its CPU, and the suite starts thousands of commands.  ``@record`` gives a
class the same methods as shared functions that read the class's field names, so
defining one costs microseconds; building an instance loops over its fields in Python,
which the few records a command builds do not feel.

What it keeps of ``@dataclass`` (``tests/test_records.py`` compares the two on generated
classes): ``__init__`` with positional or keyword fields, defaults,
``dataclasses.field(default=…, default_factory=…, init=False)`` and ``__post_init__``;
the same ``repr``; equality by class and fields; ``frozen`` (``FrozenInstanceError`` on
assignment, hashable by fields); an unfrozen record is unhashable; fields inherited from
a base record; methods the class writes itself are left alone; ``__match_args__``.
What it refuses (``TypeError`` at class definition, so nothing differs quietly): any other
``field()`` option, ``InitVar``, a frozen and an unfrozen record in one hierarchy.
``dataclasses.replace``/``asdict``/``fields`` do not apply: keep ``@dataclass`` where they
are used.  Mypy reads ``@record`` as a dataclass (``dataclass_transform``).

No import here: the boot path must not pay for ``typing`` or ``dataclasses``.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing costs boot's fast path a few ms; mypy reads the name as typing's
if TYPE_CHECKING:
    from collections.abc import Callable
    from dataclasses import Field, field
    from typing import Any, TypeVar, dataclass_transform, overload

    T = TypeVar("T")

_MISSING = object()
_FIELDS = "__record_fields__"  # ((name, default, factory, init), ...) in __init__ order
_FROZEN = "__record_frozen__"


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


def _is_classvar(annotation: object) -> bool:
    text = annotation if isinstance(annotation, str) else repr(annotation)
    return text.startswith(("ClassVar", "typing.ClassVar"))


def _build(cls: type, frozen: bool) -> type:
    fields: dict[str, tuple[str, Any, Any, bool]] = {}
    for base in reversed(cls.__mro__[1:]):
        if _FIELDS in base.__dict__:
            if base.__dict__[_FROZEN] != frozen:
                raise TypeError(f"{cls.__name__}: a frozen and an unfrozen @record in one line")
            fields.update((f[0], f) for f in base.__dict__[_FIELDS])
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():
        if _is_classvar(annotation):
            continue
        if "InitVar" in str(annotation):
            raise TypeError(f"@record does not take InitVar ({cls.__name__}.{name})")
        value = cls.__dict__.get(name, _MISSING)
        default, factory, init = _MISSING, _MISSING, True
        spec = _options(value)
        if spec is not None:
            default, factory, init = spec
            if default is _MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, default)
        elif value is not _MISSING:
            default = value
        if isinstance(default, (list, dict, set)):
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
    setattr(cls, _FIELDS, tuple(fields.values()))
    setattr(cls, _FROZEN, frozen)
    for attr, method in (("__init__", _init), ("__repr__", _repr), ("__eq__", _eq)):
        if attr not in cls.__dict__:
            setattr(cls, attr, method)
    if "__match_args__" not in cls.__dict__:
        cls.__match_args__ = tuple(f[0] for f in fields.values() if f[3])  # type: ignore[attr-defined,misc]
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


def _init(self: Any, *args: Any, **kwargs: Any) -> None:
    cls = type(self)
    fields = getattr(cls, _FIELDS)
    settable = [f for f in fields if f[3]]
    if len(args) > len(settable):
        raise TypeError(
            f"{cls.__qualname__}.__init__() takes {len(settable) + 1} positional arguments "
            f"but {len(args) + 1} were given"
        )
    given = dict(zip((f[0] for f in settable), args, strict=False))
    for key, value in kwargs.items():
        if key in given:
            raise TypeError(
                f"{cls.__qualname__}.__init__() got multiple values for argument {key!r}"
            )
        if not any(f[0] == key for f in settable):
            raise TypeError(
                f"{cls.__qualname__}.__init__() got an unexpected keyword argument {key!r}"
            )
        given[key] = value
    missing = [
        f[0] for f in settable if f[0] not in given and f[1] is _MISSING and f[2] is _MISSING
    ]
    if missing:
        raise TypeError(
            f"{cls.__qualname__}.__init__() missing {len(missing)} required positional "
            f"argument{'s' if len(missing) > 1 else ''}: {', '.join(repr(m) for m in missing)}"
        )
    put = object.__setattr__
    for name, default, factory, init in fields:
        if init and name in given:
            put(self, name, given[name])
        elif factory is not _MISSING:
            put(self, name, factory())
        elif default is not _MISSING and init:
            put(self, name, default)
    post = getattr(self, "__post_init__", None)
    if post is not None:
        post()


def _values(self: Any) -> tuple[Any, ...]:
    return tuple(getattr(self, f[0]) for f in getattr(type(self), _FIELDS))


def _repr(self: Any) -> str:
    shown = ", ".join(f"{f[0]}={getattr(self, f[0])!r}" for f in getattr(type(self), _FIELDS))
    return f"{type(self).__qualname__}({shown})"


def _eq(self: Any, other: object) -> bool:
    if other.__class__ is not self.__class__:
        return NotImplemented
    return _values(self) == _values(other)


def _hash(self: Any) -> int:
    return hash(_values(self))


def _frozen(self: Any, name: str) -> bool:
    return type(self).__dict__.get(_FIELDS) is not None or any(
        f[0] == name for f in getattr(type(self), _FIELDS)
    )


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
