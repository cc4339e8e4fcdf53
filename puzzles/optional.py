"""``implements(obj, protocol)``: whether an object has an optional part of the contract (``Secrets``,
``BestOfN``, ``SamplingPolicy``, ...), as ``isinstance(obj, protocol)`` answers it.

Hand-written for speed: a runtime-checkable protocol looks up each of its members on every
``isinstance`` (about 6 us each on Python 3.11, several times per game). The answer depends only on
the object's class unless the object sets one of the protocol's members on itself, so it is worked
out once per class and protocol; an object with such a member of its own is asked the slow way.
"""

from __future__ import annotations

from typing import TypeVar

from typing_extensions import TypeIs

T = TypeVar("T")


_members: dict[type, frozenset[str]] = {}
_answers: dict[tuple[type, type], bool] = {}  # (class, protocol) -> whether the class implements it


def members(protocol: type) -> frozenset[str]:
    """The names a protocol declares (its methods and attributes)."""
    names = _members.get(protocol)
    if names is None:
        declared = vars(protocol)
        names = _members[protocol] = frozenset(
            {name for name, value in declared.items() if not name.startswith("_") and callable(value)}
            | {n for n in declared.get("__annotations__", {}) if not n.startswith("_")}
        )
    return names


def implements(obj: object, protocol: type[T]) -> TypeIs[T]:
    """``isinstance(obj, protocol)`` for a runtime-checkable protocol of methods, answered once per
    class; a type checker narrows ``obj`` to the protocol where it is true."""
    own = getattr(obj, "__dict__", None)
    if own and not own.keys().isdisjoint(members(protocol)):
        return isinstance(obj, protocol)
    key = (type(obj), protocol)
    answer = _answers.get(key)
    if answer is None:
        answer = _answers[key] = issubclass(*key)
    return answer
