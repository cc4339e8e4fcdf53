"""A package's public names loaded on first use (PEP 562): the package names each one's module, and
importing the package imports none of them, so that a run loads only what it uses.

    _EXPORTS = {"Servers": ".servers", "run_games": "engine.play.run"}  # relative to the package, or absolute
    __all__ = sorted(_EXPORTS)
    __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def load(package: str, exports: Mapping[str, str], name: str) -> Any:
    """``package``'s public ``name``, imported from its module and kept in the package from then on;
    AttributeError for a name it does not export."""
    module = exports.get(name)
    if module is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    value = getattr(import_module(module, package), name)
    setattr(sys.modules[package], name, value)
    return value


def lazy_exports(package: str, exports: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The package's ``__getattr__`` (``load``) and ``__dir__`` (its ``__all__``)."""

    def __getattr__(name: str) -> Any:
        return load(package, exports, name)

    def __dir__() -> list[str]:
        return list(sys.modules[package].__all__)

    return __getattr__, __dir__
