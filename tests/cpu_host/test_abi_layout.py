"""NxCpu as C lays it out (nxrt.h compiled by the project's C compiler) against the cffi
declaration the hosts use (cpu_host/abi.py, generated from the same header): every field's
offset and the struct's size agree.  The C side is the oracle: offsetof/sizeof printed by a
compiled program, not computed by the generator under test."""

from __future__ import annotations

import subprocess

import cffi

from cpu_host import abi
from recompiler import cc
from recompiler.build import RUNTIME_DIR


def _c_layout(tmp_path) -> dict[str, int]:
    fields, _size = abi.nxcpu_fields()
    src = tmp_path / "layout.c"
    body = "".join(f'    printf("{f.name} %zu\\n", offsetof(NxCpu, {f.name}));\n' for f in fields)
    src.write_text(
        '#include <stdio.h>\n#include "nxrt.h"\nint main(void) {\n'
        f'{body}    printf("sizeof %zu\\n", sizeof(NxCpu));\n'
        '    printf("alignof %zu\\n", _Alignof(NxCpu));\n    return 0;\n}\n'
    )
    exe = tmp_path / "layout"
    cc.run([str(src), "-I", str(RUNTIME_DIR), "-o", str(exe)], "layout.c")
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True, timeout=30).stdout
    return {k: int(v) for k, v in (line.split() for line in out.splitlines())}


def test_every_nxcpu_field_has_the_c_offset_in_cffi(tmp_path):
    c = _c_layout(tmp_path)
    ffi = cffi.FFI()
    ffi.cdef(abi.nxcpu_cdef())
    fields, size = abi.nxcpu_fields()
    assert {f.name for f in fields} >= {"x", "sp", "pc", "nzcv", "v", "thread", "host_sp_limit"}
    for f in fields:
        assert ffi.offsetof("NxCpu", f.name) == c[f.name], f.name
        assert f.offset == c[f.name], f.name
    assert ffi.sizeof("NxCpu") == c["sizeof"] == size
    # the vector registers are 16-byte aligned in C; so must the offset be where cffi writes them
    assert c["v"] % 16 == 0 and c["alignof"] == 16


def test_a_vector_written_through_cffi_is_read_by_c_at_the_same_place(tmp_path):
    """Round trip through a compiled function: cffi writes v[3].d[1], C reads it by name."""
    src = tmp_path / "probe.c"
    src.write_text('#include "nxrt.h"\nuint64_t probe(NxCpu *s) { return s->v[3].d[1] ^ s->host_sp_limit; }\n')
    so = tmp_path / "probe.so"
    cc.run(["-shared", "-fPIC", str(src), "-I", str(RUNTIME_DIR), "-o", str(so)], "probe.c")
    ffi = cffi.FFI()
    ffi.cdef(abi.nxcpu_cdef() + "uint64_t probe(NxCpu *s);")
    lib = ffi.dlopen(str(so))
    cpu = ffi.new("NxCpu *")
    cpu.v[3].d[1] = 0x1122334455667788
    cpu.host_sp_limit = 0xF0
    assert lib.probe(cpu) == 0x1122334455667788 ^ 0xF0
