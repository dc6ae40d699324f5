"""A package's names imported on first use (PEP 562): what keeps a package that only a run
needs out of start-up (the asking strategies, which the asking child imports before its SDK;
a sandbox, which planning a run never needs):

    _MODULE = {"Threads": "threads", ...}  # name -> the submodule that defines it
    __getattr__ = names_from(__name__, _MODULE, globals())
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def names_from(
    package: str, modules: Mapping[str, str], namespace: dict[str, Any]
) -> Callable[[str], Any]:
    """The module `__getattr__` of `package`: a name of `modules` imported from its submodule
    when first asked for, then kept in the package's `namespace` (asked once). A module that
    re-exports its sibling's names passes its package and its own `globals()`."""
    module = namespace.get("__name__", package)

    def __getattr__(name: str) -> Any:
        if name not in modules:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{modules[name]}"), name)
        namespace[name] = value
        return value

    return __getattr__
