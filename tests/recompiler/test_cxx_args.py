"""The argument registers a C++ name's parameters leave unread are no input (analysis.cxx_args).

Functions of many signatures (integers, pointers, references, float/double/long double, an
``__int128``, a 16-byte struct and an HFA by value, an enum, a member function's ``this``,
a static one, a scoped free function) are compiled by zig's clang++ for AArch64 at -O2; each
returns a value that depends on every parameter.  Unicorn runs each with random values in
X0-X8 and V0-V7, then again with only the registers ``cxx_args.input_regs_of`` drops (those
it says the function does not read) changed: the results must be equal (clang's code reads
none of them), and must differ where a kept argument register changes (the function reads its
parameters: the check can fail).  The caps of a few names are pinned as well, and a variadic
function, a C name and an unmangled word get none.  The recompiled whole is compared with qemu
by tests/realprogs/test_cxx.py."""

from __future__ import annotations

import random
import struct
import subprocess
import sys

import pytest

from recompiler.analysis import cxx_args
from recompiler.lift import liveness as L

unicorn = pytest.importorskip("unicorn", reason="the Unicorn oracle (pip package unicorn) is not installed")
from unicorn import arm64_const as U  # noqa: E402

needs_demangler = pytest.mark.skipif(
    cxx_args._demangler() is None, reason="LOUD SKIP: no host C++ runtime with __cxa_demangle (libstdc++.so.6)"
)

SOURCE = r"""
struct S { long a, b; };
struct H { double a, b, c, d; };
enum E { E0, E1 = 7 };
namespace ns {
__attribute__((noinline)) long ints(int a, long b, char c) { return a * 3 + b * 5 + c; }
__attribute__((noinline)) double fp(double a, int b, float c) { return a * 2 + b + c * 4; }
__attribute__((noinline)) long byval(S s, int x) { return s.a * 7 + s.b * 11 + x; }
__attribute__((noinline)) double hfa(H h, double z) { return h.a + 2 * h.b + 3 * h.c + 4 * h.d + 5 * z; }
__attribute__((noinline)) long wide(__int128 a, long b) { return (long)(a >> 64) * 3 + (long)a + b * 13; }
__attribute__((noinline)) long en(E e, long b) { return (long)e * 17 + b; }
__attribute__((noinline)) long refs(const long &a, long *b, const char *c) { return a + *b * 3 + c[0]; }
__attribute__((noinline)) long ld(long a, long double b) { long r; __builtin_memcpy(&r, &b, 8); return r + a; }
struct K {
  long v;
  __attribute__((noinline)) long m(long a, double d) const;
  __attribute__((noinline)) static long st(long a, long b);
};
long K::m(long a, double d) const { return v * 5 + a * 3 + (long)d; }
long K::st(long a, long b) { return a * 9 + b; }
}
__attribute__((noinline)) long pm(long (ns::K::*f)(long, double) const, const ns::K *k) { return (k->*f)(3, 2.0); }
__attribute__((noinline)) long top(long a, long b, long c, long d, long e, long f, long g, long h, long i) {
  return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h + 9 * i;
}
"""

BASE, STACK, RET_ADDR, DATA = 0x100000, 0x800000, 0x200000, 0x600000
_X = [U.UC_ARM64_REG_X0 + k for k in range(9)]
_Q = [U.UC_ARM64_REG_Q0 + k for k in range(8)]


@pytest.fixture(scope="module")
def functions(tmp_path_factory) -> tuple[bytes, dict[str, int]]:
    d = tmp_path_factory.mktemp("cxxargs")
    (d / "f.cpp").write_text(SOURCE)
    obj = d / "f.o"
    cmd = [sys.executable, "-m", "ziglang", "c++", "-target", "aarch64-linux-musl", "-O2", "-g0"]
    r = subprocess.run([*cmd, "-c", str(d / "f.cpp"), "-o", str(obj)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    from elftools.elf.elffile import ELFFile

    with open(obj, "rb") as fh:
        elf = ELFFile(fh)
        text = elf.get_section_by_name(".text").data()
        tidx = [i for i, s in enumerate(elf.iter_sections()) if s.name == ".text"][0]
        syms = {
            s.name: s["st_value"]
            for s in elf.get_section_by_name(".symtab").iter_symbols()
            if s["st_info"]["type"] == "STT_FUNC" and s["st_shndx"] == tidx
        }
    return text, syms


FP_RESULT = {"fp", "hfa"}  # the functions that return a double (in D0; the others in X0)


def _run(text: bytes, off: int, xs: list[int], qs: list[int], data: bytes, fp: bool = False) -> int:
    uc = unicorn.Uc(unicorn.UC_ARCH_ARM64, unicorn.UC_MODE_ARM)
    uc.mem_map(BASE, 0x10000)
    uc.mem_write(BASE, text)
    uc.mem_map(RET_ADDR, 0x1000)
    uc.mem_map(STACK - 0x10000, 0x10000)
    uc.mem_map(DATA, 0x1000)
    uc.mem_write(DATA, data)
    # FP/SIMD on (CPACR_EL1.FPEN)
    uc.reg_write(U.UC_ARM64_REG_CPACR_EL1, uc.reg_read(U.UC_ARM64_REG_CPACR_EL1) | (3 << 20))
    for r, v in zip(_X, xs):
        uc.reg_write(r, v)
    for r, v in zip(_Q, qs):
        uc.reg_write(r, v)
    uc.reg_write(U.UC_ARM64_REG_SP, STACK - 0x100)
    uc.reg_write(U.UC_ARM64_REG_X30, RET_ADDR)
    uc.emu_start(BASE + off, RET_ADDR, count=10_000)
    assert uc.reg_read(U.UC_ARM64_REG_PC) == RET_ADDR
    return uc.reg_read(U.UC_ARM64_REG_Q0) & ((1 << 64) - 1) if fp else uc.reg_read(U.UC_ARM64_REG_X0)


def _inputs(rng: random.Random) -> tuple[list[int], list[int]]:
    # pointers must point somewhere: X0-X8 hold addresses inside DATA (as longs they vary too)
    xs = [DATA + 8 * rng.randrange(0, 64) for _ in range(9)]
    # a double in [1, 100) whose low 32 bits are a float in [1, 100) too (a float argument
    # reads them), above them random bits
    qs = []
    for _ in range(8):
        d = struct.unpack("<Q", struct.pack("<d", rng.uniform(1, 100)))[0]
        f = struct.unpack("<I", struct.pack("<f", rng.uniform(1, 100)))[0]
        qs.append(d & ~0xFFFF_FFFF | f | rng.getrandbits(64) << 64)
    return xs, qs


def _dropped(cap: int) -> tuple[list[int], list[int]]:
    return [k for k in range(8) if not cap >> k & 1], [k for k in range(8) if not cap >> (32 + k) & 1]


@needs_demangler
def test_dropped_registers_are_not_read(functions) -> None:
    text, syms = functions
    rng = random.Random(29)
    data = bytes(rng.getrandbits(8) for _ in range(0x1000))
    checked = 0
    for name, off in sorted(syms.items()):
        if name.startswith("_Z2pm"):  # (it calls through its pointer: test_member_pointer)
            checked += 1
            continue
        cap = cxx_args.input_regs_of(name)
        assert cap is not None, name
        dx, dv = _dropped(cap)
        kept_x = [k for k in range(8) if k not in dx]
        fp = cxx_args.demangle(name).split("(")[0].split("::")[-1] in FP_RESULT
        for _ in range(6):
            xs, qs = _inputs(rng)
            base = _run(text, off, xs, qs, data, fp)
            xs2, qs2 = list(xs), list(qs)
            for k in dx:
                xs2[k] = DATA + 8 * rng.randrange(0, 64)
            for k in dv:
                qs2[k] = rng.getrandbits(128)
            assert _run(text, off, xs2, qs2, data, fp) == base, (name, cxx_args.demangle(name), dx, dv)
        # and a kept argument register does matter (the oracle can tell a read)
        xs, qs = _inputs(rng)
        base = _run(text, off, xs, qs, data, fp)
        changed = False
        for k in kept_x:
            xs2 = list(xs)
            xs2[k] = xs[k] + 8
            changed |= _run(text, off, xs2, qs, data, fp) != base
        for k in (k for k in range(8) if k not in dv):
            qs2 = list(qs)
            qs2[k] = qs[k] ^ 1 << 50
            changed |= _run(text, off, xs, qs2, data, fp) != base
        assert changed, (name, kept_x)
        checked += 1
    assert checked == len(SOURCE.split("noinline")) - 1


@needs_demangler
def test_member_pointer(functions) -> None:
    """A pointer to member function is 16 bytes: two general registers, then the next one."""
    _text, syms = functions
    (name,) = [n for n in syms if n.startswith("_Z2pm")]
    assert _regs(cxx_args.input_regs_of(name)) == ([0, 1, 2, 8], [])


def test_expression_template_argument() -> None:
    """Brackets that do not pair up as types' (an expression among template arguments) give
    no parameter list rather than a short one."""
    assert cxx_args._split_params("g(std::enable_if<(sizeof(T)>4), int>::type, long)") is None
    assert cxx_args._split_params("h(void (*)(void*), std::pair<int, long> const&) const") == [
        "void (*)(void*)",
        "std::pair<int, long> const&",
    ]


def _regs(cap: int) -> tuple[list[int], list[int]]:
    return [k for k in range(9) if cap >> k & 1], [k for k in range(8) if cap >> (32 + k) & 1]


@needs_demangler
@pytest.mark.parametrize(
    "name,xs,vs",
    [
        ("_ZSt9terminatev", [8], []),  # std::terminate(): nothing but X8 (a result's address)
        ("_Znwm", [0, 8], []),  # operator new(unsigned long)
        ("_ZNK4Json5Value8CZStringltERKS1_", [0, 1, 8], []),  # this, a reference
        ("_ZN2ns2fpEdif", [0, 1, 8], [0, 1]),  # scoped: an implicit this counted (only more)
        ("_Z3toplllllllll", [*range(9)], []),  # nine: the ninth on the stack
        ("_ZN2ns5byvalENS_1SEi", [0, 1, 2, 3, 8], [0, 1, 2, 3]),  # a struct: at most 2 X or 4 V
        ("_Unwind_Resume", [0, 8], []),
        ("__cxa_throw", [0, 1, 2, 8], []),
    ],
)
def test_caps(name: str, xs: list[int], vs: list[int]) -> None:
    cap = cxx_args.input_regs_of(name)
    assert cap is not None
    assert _regs(cap) == (xs, vs)
    # the rest stays: X9-X30, SP, V8-V31
    assert cap & ~((1 << 8) - 1) & ~(((1 << 8) - 1) << 32) == L.ALL & ~((1 << 8) - 1) & ~(((1 << 8) - 1) << 32)


@pytest.mark.parametrize("name", ["_Z3fooiz", "printf", "main", "_ZTV4Json", "_Zgarbage"])
def test_no_cap(name: str) -> None:
    assert cxx_args.input_regs_of(name) is None
