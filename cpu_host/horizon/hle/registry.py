"""Collect the host functions of every service and bind them at their guest addresses.

Binding rules: a name the linker put in the host-import region is bound at its slot (served,
or a "not served" function that ends the process with a report naming it); a name the host
serves that a module defines is bound at that definition too, overriding the lifted function
for every indirect and PLT call (the SDK served at the function level)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from cpu_host.horizon.hle.abi import Call, GuestError, GuestResult

log = logging.getLogger("cpu_host.hle")
MASK64 = (1 << 64) - 1
IPC_FAULT_BASE = 0x40000000  # crash reasons of the IPC layer (nx_hz_ipc_fault), apart from bindings


@dataclass(frozen=True)
class HostFunction:
    name: str  # the mangled symbol name
    signature: str  # readable C++ signature, for reports and docs
    impl: Callable[[Call], int | None]  # returns X0 (None: leave X0 as is)
    blocking: bool = False  # host work: give the core back meanwhile
    native: str | None = None  # the same function in C (game.so's nx_os_native
    # name): bound directly, no Python on the call path


@dataclass
class Binding:
    function: HostFunction | None  # None: the host does not serve this name
    name: str
    address: int


@dataclass
class Registry:
    functions: dict[str, HostFunction] = field(default_factory=dict)
    bindings: list[Binding] = field(default_factory=list)
    faults: dict[int, str] = field(default_factory=dict)  # binding index -> what went wrong
    natives: dict[int, HostFunction] = field(default_factory=dict)  # native fault index -> function
    _callbacks: list[Any] = field(default_factory=list)  # keep cffi callbacks alive
    _lib: Any = None
    binders: list[Callable[[Any, Any], None]] = field(default_factory=list)  # (ffi, lib): more to bind (IPC)
    ipc_faults: dict[int, str] = field(default_factory=dict)  # IPC_FAULT_BASE + n -> what went wrong

    def add(self, fns: Iterable[HostFunction]) -> None:
        for f in fns:
            if f.name in self.functions:
                raise ValueError(f"host function {f.name} served twice")
            self.functions[f.name] = f

    def plan(self, host_slots: dict[str, int], defined: dict[str, int]) -> list[Binding]:
        """Where each binding goes: every host-import slot, and each served name a module defines."""
        out = [Binding(self.functions.get(n), n, a) for n, a in sorted(host_slots.items(), key=lambda kv: kv[1])]
        for n, f in sorted(self.functions.items()):
            if n in defined and n not in host_slots:
                out.append(Binding(f, n, defined[n]))
        return out

    def bind(self, ffi: Any, lib: Any, host_slots: dict[str, int], defined: dict[str, int]) -> None:
        self.bindings = self.plan(host_slots, defined)
        self._ffi, self._lib = ffi, lib
        native = 0
        for index, b in enumerate(self.bindings):
            fn = None
            if b.function is not None and b.function.native:
                got = ffi.new("uint32_t *")
                fn = lib.nx_os_native(b.function.native.encode(), got)
                if fn != ffi.NULL:
                    self.natives[got[0]] = b.function
                    native += 1
                else:
                    fn = None
            if fn is None:
                fn = ffi.callback("void(NxCpu *)", self._wrap(ffi, lib, index, b))
                self._callbacks.append(fn)
            if lib.nx_host_bind(b.address, fn) != 0:
                raise RuntimeError(f"host function table full at {b.name}")
        for binder in self.binders:
            binder(ffi, lib)
        served = sum(1 for b in self.bindings if b.function)
        log.info(
            "host functions: %d bound (%d served, %d of them native; %d not served)",
            len(self.bindings),
            served,
            native,
            len(self.bindings) - served,
        )

    def ipc_fault(self, message: str) -> int:
        """A crash reason index for an IPC failure (the report prints ``message``)."""
        index = IPC_FAULT_BASE + len(self.ipc_faults)
        self.ipc_faults[index] = message
        return index

    def describe_fault(self, index: int) -> str:
        if index in self.ipc_faults:
            return f"IPC: {self.ipc_faults[index]}"
        if index in self.natives:  # a native entry: its sentence is in game.so
            why = self._ffi.string(self._lib.nx_os_fault_why()).decode("utf-8", "replace")
            return f"host function {self.natives[index].signature}: {why}"
        b = self.bindings[index] if 0 <= index < len(self.bindings) else None
        what = self.faults.get(index, "failed")
        if b is None:
            return f"host function #{index}: {what}"
        sig = b.function.signature if b.function else b.name
        return f"host function {sig}: {what}"

    def _wrap(self, ffi: Any, lib: Any, index: int, b: Binding) -> Callable[[Any], None]:
        f = b.function
        faults = self.faults

        if f is None:

            def missing(cpu: Any) -> None:
                faults[index] = (
                    f"the guest called {b.name} (a host import at {b.address:#x}), which no module "
                    "defines and the host does not serve"
                )
                lib.nx_hz_host_fault(cpu, index)

            return missing

        def call(cpu: Any) -> None:
            c = Call(cpu, ffi, lib)
            try:
                if f.blocking:
                    lib.nx_hz_host_begin(cpu)
                try:
                    r = f.impl(c)
                finally:
                    if f.blocking:
                        lib.nx_hz_host_end(cpu)
                if r is not None:
                    cpu.x[0] = r & MASK64
            except GuestResult as e:
                cpu.x[0] = e.code
            except GuestError as e:
                faults[index] = str(e)
                lib.nx_hz_host_fault(cpu, index)
            except Exception as e:  # a bug of ours: report it at the guest's call site
                log.exception("host function %s raised", f.signature)
                faults[index] = f"raised {type(e).__name__}: {e}"
                lib.nx_hz_host_fault(cpu, index)
            cpu.pc = cpu.x[30]
            lib.nx_hz_host_yield(cpu)

        return call
