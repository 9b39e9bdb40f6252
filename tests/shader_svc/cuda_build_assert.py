"""The device side of CUDA's ``assert``: the ``__assertfail`` the CUDA driver supplies, ours,
compiled at test time by the same ptxas, linked into programs that call it, and the host side
that reports a failed assertion by name (shader-assert, issue 31).

Facts (public CUDA documentation and nvcc's own output, nothing of NVIDIA's copied):

- nvcc compiles ``assert(e)`` in device code to a call of the external function
  ``__assertfail(message, file, line, function, charSize)``: its PTX declares
  ``.extern .func __assertfail(.param .b64, .param .b64, .param .b32, .param .b64, .param .b64)``
  and passes the generic addresses of ``.global`` strings (the expression's text, ``__FILE__``,
  the function's signature), ``__LINE__`` and 1.  libcu++ and ``cuda_pipeline.h`` at -G call a
  local ``__assert_fail(message, file, line, function)`` wrapper that passes charSize 1.  The
  cubin leaves ``__assertfail`` undefined (``SHN_UNDEF``): the driver resolves it at load time.
- The CUDA Programming Guide (Assertion): a failed device assert prints the message with the
  block and thread and stops the kernel; the host's next synchronising call returns
  ``cudaErrorAssert`` (the runtime API's error 710, "An assertion triggered in device code
  during kernel execution").

Ours (``RUNTIME_PTX``): record the assertion in a diagnostic log, a ``.global`` array placed in
the program's global region (``cuda_globals.place``), then ``trap`` (BPT.TRAP: the translation
ends the invocation, the lowering's rule for BPT.TRAP; a GPU would end the kernel).  No fence
before the trap: the log's stores are seen by the host once the dispatch has completed (a
``membar.gl`` would compile to MEMBAR.SC + ERRBAR + CCTL.IVALL, more than the log needs).  The log:
word 0 counts the failed assertions (every one, also past the records); record i (of
``RECORDS``) at 16 + 48 i holds tid.x, tid.y, tid.z, line, ctaid.x, ctaid.y, ctaid.z, i, then the
message's and the file's addresses (64-bit each).  It is compiled with ``ptxas -c -O0``
(relocatable: the function stays, its log address as linker-patched ``MOV`` immediates,
relocation types 56/57 on SM86 and 43/44 on SM53, the ones ``cuda_build.link`` applies).
"""

from __future__ import annotations

import hashlib
import os
import struct
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from nxrecomp.common.errors import NxError

LOG_SYMBOL = "__nxrecomp_assert_log"
RECORDS = 32
RECORD_BYTES = 48
LOG_BYTES = 16 + RECORDS * RECORD_BYTES
# the runtime's functions: the undefined symbols a program may call that the link resolves here
FUNCTIONS = ("__assertfail",)
CUDA_ERROR_ASSERT = 710  # cudaErrorAssert (CUDA runtime API, enum cudaError)

RUNTIME_PTX = r"""
.version 8.0
.target sm_{isa}
.address_size 64
.visible .global .align 16 .b8 {log}[{size}];
.visible .func __assertfail(.param .b64 p_msg, .param .b64 p_file, .param .b32 p_line,
                            .param .b64 p_func, .param .b64 p_charsize)
{{
	.reg .pred %p<2>;
	.reg .b32 %r<12>;
	.reg .b64 %rd<8>;
	ld.param.u64 %rd1, [p_msg];
	ld.param.u64 %rd2, [p_file];
	ld.param.u32 %r1, [p_line];
	mov.u64 %rd4, {log};
	atom.global.add.u32 %r2, [%rd4], 1;
	setp.ge.u32 %p1, %r2, {records};
	@%p1 bra $L_full;
	mul.wide.u32 %rd5, %r2, {rec};
	add.s64 %rd6, %rd4, %rd5;
	mov.u32 %r3, %tid.x; mov.u32 %r4, %tid.y; mov.u32 %r5, %tid.z;
	mov.u32 %r6, %ctaid.x; mov.u32 %r7, %ctaid.y; mov.u32 %r8, %ctaid.z;
	st.global.v4.u32 [%rd6+16], {{%r3, %r4, %r5, %r1}};
	st.global.v4.u32 [%rd6+32], {{%r6, %r7, %r8, %r2}};
	st.global.u64 [%rd6+48], %rd1;
	st.global.u64 [%rd6+56], %rd2;
$L_full:
	trap;
	ret;
}}
"""


def runtime_ptx(isa: int) -> str:
    return RUNTIME_PTX.format(isa=isa, log=LOG_SYMBOL, size=LOG_BYTES, records=RECORDS, rec=RECORD_BYTES)


def runtime_cubin(isa: int) -> bytes:
    """The runtime's relocatable cubin for sm_``isa`` (ptxas 12.9 from PyPI, cached by hash)."""
    import cuda_build
    import nvtools

    ptx = runtime_ptx(isa)
    key = hashlib.sha256(f"{nvtools.PTXAS_WHEEL[0]}\0rt\0{isa}\0{ptx}".encode()).hexdigest()[:32]
    out = cuda_build._cache_dir() / f"rt_{key}.cubin"
    if out.is_file():
        return out.read_bytes()
    with tempfile.TemporaryDirectory() as tmp:
        Path(f"{tmp}/rt.ptx").write_text(ptx)
        cmd = [str(nvtools.ptxas_path()), "-c", f"-arch=sm_{isa}", "-O0", f"{tmp}/rt.ptx", "-o", f"{tmp}/rt.cubin"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"ptxas (the assert runtime) failed ({' '.join(cmd)}):\n{r.stderr[-2000:]}")
        data = Path(f"{tmp}/rt.cubin").read_bytes()
    part = out.with_suffix(f".{os.getpid()}.part")  # (per process: cuda_build.compile_cubin)
    part.write_bytes(data)
    os.replace(part, out)
    return data


@dataclass(frozen=True)
class AssertRecord:
    """One failed assertion: the thread and block that made it, ``__LINE__``, and the message
    and file read back from the program's global data (None where the address is not there)."""

    thread: tuple[int, int, int]
    block: tuple[int, int, int]
    line: int
    message: str | None
    file: str | None

    def text(self) -> str:
        return (
            f"{self.file or '?'}:{self.line}: block {self.block} thread {self.thread}: "
            f"Assertion `{self.message if self.message is not None else '?'}` failed."
        )


class DeviceAssert(NxError):
    """A device-side assertion failed: cudaErrorAssert (710), with every recorded assertion."""

    def __init__(self, kernel: str, count: int, records: list[AssertRecord], outputs=None) -> None:
        # outputs: what the caller read back besides the log (the harness's output words)
        self.kernel, self.count, self.records, self.outputs = kernel, count, records, outputs
        shown = "; ".join(r.text() for r in records[:4]) + ("; ..." if len(records) > 4 else "")
        super().__init__(
            f"cudaErrorAssert ({CUDA_ERROR_ASSERT}): device-side assert triggered in kernel {kernel}: "
            f"{count} failed assertion(s) ({len(records)} recorded): {shown}"
        )


def _c_string(region: bytes, base: int, addr: int) -> str | None:
    off = addr - base
    if not 0 <= off < len(region):
        return None
    end = region.find(b"\0", off)
    return region[off : end if end >= 0 else len(region)].decode("utf-8", "replace")


def read_log(region: bytes, log_offset: int, base: int) -> tuple[int, list[AssertRecord]]:
    """(failed assertions counted, the records kept) of the log at ``log_offset`` of the global
    region read back from the device (``base``: the region's device address, for the strings)."""
    (count,) = struct.unpack_from("<I", region, log_offset)
    out = []
    for i in range(min(count, RECORDS)):
        p = log_offset + 16 + i * RECORD_BYTES
        tx, ty, tz, line, bx, by, bz, _idx = struct.unpack_from("<8I", region, p)
        msg, fil = struct.unpack_from("<QQ", region, p + 32)
        out.append(AssertRecord((tx, ty, tz), (bx, by, bz), line, _c_string(region, base, msg), _c_string(region, base, fil)))
    return count, sorted(out, key=lambda r: (r.block, r.thread))
