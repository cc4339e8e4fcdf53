"""``implements(obj, protocol)``: whether an object has an optional part of the contract (``Secrets``,
``BestOfN``, ``SamplingPolicy``, ...), as ``isinstance(obj, protocol)`` answers it.

Hand-written for speed: a runtime-checkable protocol looks up each of its members on every
``isinstance`` (about 6 us each on Python 3.11, several times per game). The answer depends only on
the object's class unless the object sets one of the protocol's members on itself, so it is worked
out once per class and protocol; an object with such a member of its own is asked the slow way.
"""

from __future__ import annotations

import functools


@functools.cache
def members(protocol: type) -> frozenset[str]:
    """The names a protocol declares (its methods and attributes)."""
    names = {name for name, value in vars(protocol).items() if not name.startswith("_") and callable(value)}
    return frozenset(names | {n for n in vars(protocol).get("__annotations__", {}) if not n.startswith("_")})


@functools.cache
def _class_implements(cls: type, protocol: type) -> bool:
    return issubclass(cls, protocol)


def implements(obj: object, protocol: type) -> bool:
    """``isinstance(obj, protocol)`` for a runtime-checkable protocol of methods, answered once per class."""
    own = getattr(obj, "__dict__", None)
    if own and not own.keys().isdisjoint(members(protocol)):
        return isinstance(obj, protocol)
    return _class_implements(type(obj), protocol)
