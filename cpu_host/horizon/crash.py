"""The crash report of a Horizon guest (svcBreak, or an SVC the kernel does not serve): guest
PC, registers and a backtrace that follows the AArch64 frame records (X29 chain), every
address named by module and symbol."""

from __future__ import annotations

import bisect
import ctypes
from dataclasses import dataclass

SVC_NAMES = {0x26: "svcBreak"}
MAX_FRAMES = 32


@dataclass(frozen=True)
class Symbolizer:
    modules: list[tuple[int, int, str]]  # (base, end, name)
    symbols: list[tuple[int, str]]  # sorted (address, name)

    def name(self, addr: int) -> str:
        mod = next((f"{n}+{addr - b:#x}" for b, e, n in self.modules if b <= addr < e), None)
        if mod is None:
            return f"{addr:#x} (outside every module)"
        i = bisect.bisect_right(self.symbols, (addr, "\uffff")) - 1
        if i >= 0:
            a, n = self.symbols[i]
            if any(b <= a < e and b <= addr < e for b, e, _ in self.modules):
                return f"{addr:#x} {mod} {n}+{addr - a:#x}"
        return f"{addr:#x} {mod}"


def backtrace(pc: int, lr: int, fp: int, readable) -> list[int]:
    """pc, the link register, then the return address of each frame record on the chain;
    ``readable(addr, n)`` says whether guest memory may be read there."""
    out = [pc, lr]
    seen = set()
    while fp and fp not in seen and len(out) < MAX_FRAMES and fp % 8 == 0 and readable(fp, 16):
        seen.add(fp)
        nxt, ret = ctypes.c_uint64.from_address(fp).value, ctypes.c_uint64.from_address(fp + 8).value
        if ret:
            out.append(ret)
        fp = nxt
    # the leaf's caller shows twice when the leaf saved a frame record: drop the repeat
    return [a for i, a in enumerate(out) if i == 0 or a != out[i - 1]]


def report(crash, sym: Symbolizer, readable, host_fault: str | None = None) -> str:
    """Text of the report for an ``HzCrash`` record (``host_fault``: what the failed host
    function said, when a host function ended the process)."""
    if host_fault is not None:
        what = host_fault
    elif crash.svc == 0x26:
        what = f"svcBreak(reason={crash.reason:#x}, info={crash.info_addr:#x}, size={crash.info_size:#x})"
        if crash.info_size == 4 and readable(crash.info_addr, 4):
            # libnx's diagAbortWithResult and fatal paths pass the failing Result there
            rc = ctypes.c_uint32.from_address(crash.info_addr).value
            what += f" with result {rc:#x} (module {rc & 0x1FF}, description {rc >> 9 & 0x1FFF})"
    elif crash.svc == 0x28:
        what = (
            f"svcReturnFromException(result={crash.reason:#x}) with no exception to return from "
            "(the host delivers no user exceptions)"
        )
    else:
        what = f"SVC {crash.svc:#x}, which the kernel does not serve"
    lines = [f"nxrecomp: guest crash: {what} in thread handle {crash.thread_handle:#x}", f"  pc  {sym.name(crash.pc)}"]
    x = list(crash.x)
    for i in range(0, 31, 2):
        right = f"x{i + 1:<2} {x[i + 1]:016x}" if i + 1 < 31 else f"sp  {crash.sp:016x}"
        lines.append(f"  x{i:<2} {x[i]:016x}  {right}")
    lines.append(f"  tpidrro_el0 {crash.tpidrro:016x}")
    lines.append("  backtrace:")
    for n, a in enumerate(backtrace(crash.pc, x[30], x[29], readable)):
        lines.append(f"    #{n:<2} {sym.name(a)}")
    return "\n".join(lines)
