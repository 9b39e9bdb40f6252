"""A computed goto whose tables' addresses live in the stack frame (``analyse.Analyser.jump_table``):
glibc's vfprintf classes each format byte through a byte table (``class = classes[ch - ' ']``,
guarded by ``and wK, w0, #0xff; cmp wK, #90; b.hi``) and jumps through a table of label
addresses indexed by the class, both table bases spilled to ``[sp, #imm]`` at its entry, the
dispatch block longer than a dozen instructions.  Unresolved, each format directive left the
function through the inline cache into a separate copy of its rest (the labels are code
pointers in data, so each was lifted as a function of its own).

Here on a hand-encoded dispatcher of that shape (with a store of the base register between its
`adrp` and `add`, which once stopped the search for the constant): analysis finds every label,
including those of format bytes past the first 64, and the built code, run from a C driver,
reaches each handler through the lifted switch and the guarded default for bytes out of range."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from recompiler.analyse import Memory, analyse

if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from bundle_driver import RET, build_bundle, run_function  # noqa: E402

BASE = 0x30000000
F, RODATA = BASE, BASE + 0x1000
CLASSES, TARGETS = RODATA + 0x10, RODATA + 0x100
DEFAULT = F + 0x68
H = [F + 0x70 + 8 * k for k in range(4)]  # handler k: x0 = k + 1; return
CLASS_OF = {"s": 1, "c": 2, "%": 3}  # any other byte from ' ' to 'z': class 0

CODE = [
    0xB0000000,  # adrp x0, RODATA
    0xF9000BE0,  # str x0, [sp, #16]     (a store of x0: x0 is still the page)
    0x91004000,  # add x0, x0, #0x10     CLASSES
    0xF90067E0,  # str x0, [sp, #200]
    0xB0000000,  # adrp x0, RODATA
    0x91040000,  # add x0, x0, #0x100    TARGETS
    0xF90063E0,  # str x0, [sp, #192]
    0x510080A0,  # sub w0, w5, #32
    0x12001C01,  # and w1, w0, #0xff
    0x7101683F,  # cmp w1, #90
    0x54000208,  # b.hi DEFAULT
    0xF94067E1,  # ldr x1, [sp, #200]    (14 instructions before the BR)
    0x52800006,  # mov w6, #0
    0x52800003,  # mov w3, #0
    0x52800009,  # mov w9, #0
    0x52800016,  # mov w22, #0
    0x5280000A,  # mov w10, #0
    0x3860C820,  # ldrb w0, [x1, w0, sxtw]
    0x52800008,  # mov w8, #0
    0xF94063E1,  # ldr x1, [sp, #192]
    0x12800007,  # mov w7, #-1
    0xB90043FF,  # str wzr, [sp, #64]
    0xF8607821,  # ldr x1, [x1, x0, lsl #3]
    0x52800400,  # mov w0, #32
    0xB90053FF,  # str wzr, [sp, #80]
    0xD61F0020,  # br x1
    0xD2800000,  # DEFAULT: mov x0, #0
    RET,
]
for _k in range(4):
    CODE += [0xD2800000 | (_k + 1) << 5, RET]  # mov x0, #k+1; ret


def _memory() -> Memory:
    code = b"".join(w.to_bytes(4, "little") for w in CODE).ljust(0x1000, b"\0")
    ro = bytearray(0x1000)
    for k in range(91):
        ro[CLASSES - RODATA + k] = CLASS_OF.get(chr(k + 32), 0)
    for k, h in enumerate(H):
        ro[TARGETS - RODATA + 8 * k : TARGETS - RODATA + 8 * k + 8] = h.to_bytes(8, "little")
    segs = [(F, 0x1000, code, True), (RODATA, 0x1000, bytes(ro), False)]
    return Memory(segs, [(F, 0x1000), (RODATA, 0x1000)])


def test_analysis_finds_every_label_of_the_spilled_two_level_table() -> None:
    assert F + 4 * CODE.index(0xD61F0020) == F + 0x64 and F + 4 * 26 == DEFAULT
    plan = analyse(_memory(), F, {F}, [], {}).functions[F]
    # 's' and 'c' sit past the first 64 bytes of the class table: only the compare bounds them
    assert sorted(set(plan.jump_tables[F + 0x64])) == H
    assert {i.addr for i in plan.insns} >= set(H)  # the labels are this function's own code


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    return build_bundle(tmp_path_factory.mktemp("spilled"), analyse(_memory(), F, {F}, [], {}))


DRIVER = r"""
    void *m = mmap((void *)0x%xull, 0x1000, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (m != (void *)0x%xull) return 5;
    static const unsigned char ro[] = { %s };
    __builtin_memcpy(m, ro, sizeof ro);
    unsigned bytes[] = { %s };
    for (unsigned k = 0; k < sizeof bytes / sizeof bytes[0]; k++) {
        static NxCpu s;
        s.x[0] = 99; s.x[5] = bytes[k]; s.x[30] = 0x1234; s.sp = 0x10008000;
        nx_enter(&s, fn);
        printf("%%llu\n", (unsigned long long)s.x[0]);
        fflush(stdout);
    }
"""


def test_each_format_byte_reaches_its_handler_through_the_lifted_switch(bundle: Path, tmp_path: Path) -> None:
    text = "".join(p.read_text() for p in (bundle / "src").glob("*.c"))
    f_text = text[text.index(f"F_{F:x}(NxCpu *s") :]
    for h in H:  # a case of the switch, not a function of its own reached through the cache
        assert f"case {h:#x}ull:" in f_text
    ro = _memory().read(RODATA, 0x200)
    chars = "sc%ab"
    bytes_ = [ord(c) for c in chars] + [0x7F, 10]  # past the table's 91 bytes; below ' '
    got = run_function(tmp_path, bundle, F, DRIVER % (RODATA, RODATA, ", ".join(map(str, ro)), ", ".join(map(str, bytes_))))
    want = [str(CLASS_OF.get(c, 0) + 1) for c in chars] + ["0", "0"]
    assert got == want, (got, want)
