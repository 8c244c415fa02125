"""The method registry, as Python records. The data comes from csrc/core/methods.h through the native
extension, so C++ and Python cannot disagree about which methods exist."""
from __future__ import annotations

from dataclasses import dataclass

from . import _C


@dataclass(frozen=True)
class MethodInfo:
    """One reduction strategy."""

    name: str
    idea: str
    devices: tuple[str, ...]
    dtypes: tuple[str, ...]
    deterministic_int: bool
    deterministic_float: bool
    launches: int
    host_sync: bool
    source: str
    ops: tuple[str, ...] = ("sum",)  # whole-tensor reductions served; "amax:int": integer input only

    @property
    def deterministic(self) -> str:
        """'yes' if every dtype gives bitwise identical results run to run, else which do."""
        if self.deterministic_int and self.deterministic_float:
            return "yes"
        return "integers only" if self.deterministic_int else "no"


def _load() -> tuple[MethodInfo, ...]:
    dtypes = tuple(_C.dtypes())
    out = []
    for d in _C.methods():
        devices = tuple(x for x in d["devices"].split(",") if x)
        out.append(
            MethodInfo(
                name=d["name"], idea=d["idea"], devices=devices, dtypes=dtypes,
                deterministic_int=d["deterministic_int"], deterministic_float=d["deterministic_float"],
                launches=d["launches"], host_sync=d["host_sync"], source=d["source"], ops=tuple(d["ops"].split()),
            )
        )
    return tuple(out)


_METHODS = _load()
_BY_NAME = {m.name: m for m in _METHODS}


def methods(device: str | None = None) -> list[MethodInfo]:
    """All methods, or those that run on `device` ('cpu' or 'cuda')."""
    if device is None:
        return list(_METHODS)
    return [m for m in _METHODS if device in m.devices]


def method(name: str) -> MethodInfo:
    try:
        return _BY_NAME[name]
    except KeyError:
        raise ValueError(f"unknown method {name!r}; valid methods: {', '.join(_BY_NAME)}") from None
