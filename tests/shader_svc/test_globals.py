"""shader-ctl2 (issue 31): ``__device__`` globals placed as a loader would (``cuda_globals.py``)
and the clock special registers.  The corpus group ``ctl2_globals`` (test_cuda_corpus.py) runs
the kernels exactly; these check the placement against the cubin's own ELF facts and the
SR_CLOCK/SR_GLOBALTIMER decoding against nvdisasm."""

from __future__ import annotations

import io
import struct

import pytest

import cuda_build
import cuda_corpus as cc
import cuda_globals


@pytest.fixture(scope="module")
def cub86():
    try:
        return cuda_build.compile_cubin(cc.group_source("ctl2_globals"), 86, "O3")
    except cuda_build.NoCompiler as e:
        pytest.skip(f"LOUD SKIP: {e}")


def test_bank4_holds_each_global_address(cub86):
    """Every relocated slot of bank 4 is the placed address of its symbol (region base + the
    section's offset + st_value), and the pointer held in global data points into g2_tab."""
    from elftools.elf.elffile import ELFFile

    elf = ELFFile(io.BytesIO(cub86))
    base = 0x7F00_0000_0000
    p = cuda_globals.place(cub86, "g2_device_data", 86, base)
    sym = {s.name: s for s in elf.get_section_by_name(".symtab").iter_symbols()}
    slots = {
        r["r_offset"]: sym_name
        for r in cuda_globals._relocs(elf, ".nv.constant4")
        for sym_name in [elf.get_section_by_name(".symtab").get_symbol(r["r_info_sym"]).name]
    }
    assert {"g2_tab", "g2_scratch", "g2_ptr"} <= set(slots.values())
    for off, name in slots.items():
        s = sym[name]
        sec = elf.get_section(s["st_shndx"]).name
        assert struct.unpack_from("<Q", p.bank4, off)[0] == base + p.offsets[sec] + s["st_value"], name
    ptr = struct.unpack_from("<Q", p.image, p.offsets[".nv.global.init"] + sym["g2_ptr"]["st_value"])[0]
    assert ptr == base + p.offsets[".nv.global.init"] + sym["g2_tab"]["st_value"] + 16  # &g2_tab[4]
    tab = p.offsets[".nv.global.init"] + sym["g2_tab"]["st_value"]
    assert list(struct.unpack_from("<16I", p.image, tab)) == [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3]


def test_without_bank4_the_global_read_is_refused_by_name(cub86):
    """The old path (no bank 4): the read of a global's address names c[0x4]."""
    from nxrecomp.common.errors import NxError

    code = cuda_globals.place(cub86, "g2_device_data", 86, 0).code
    with pytest.raises(NxError, match=r"c\[0x4\]"):
        cc.translate(86, code)


def test_clock_registers_decode_as_nvdisasm_prints(nv_tools):
    """CS2R / S2UR with SR field 0x50..0x53 (bits 72..79): nvdisasm's names, ours equal."""
    import nvtools
    from shader_svc.sm86 import decode as dec

    words = [(lo, 0xFCA0000000000 | sr << 8) for lo in (0x47805, 0x679C3) for sr in range(0x50, 0x54)]
    ref = nvtools.nvdisasm_raw(words)
    ours = [dec.decode_stream(struct.pack("<QQ", *w))[0].text() for w in words]
    assert [r.text for r in ref] == ours
    assert {t.split(", ")[1].rstrip(" ;") for t in ours} == {"SR_CLOCKLO", "SR_CLOCKHI", "SR_GLOBALTIMERLO", "SR_GLOBALTIMERHI"}


def test_clock_read_refused_by_name():
    """A clock read is not translated (no device clock in the translation yet): refused, naming it."""
    from shader_svc.sm86 import decode as dec
    from shader_svc.sm86.to_spirv import ComputeSpec, translate_compute
    from nxrecomp.common.errors import NxError

    exit_w = (0x000000000000794D, 0x000FEA0003800000)
    code = struct.pack("<QQ", 0x47805, 0xFCA0000015000) + struct.pack("<QQ", *exit_w)
    insts = dec.decode_stream(code)
    assert insts[0].text().startswith("CS2R R4, SR_CLOCKLO")
    with pytest.raises(NxError, match="SR_CLOCKLO"):
        translate_compute(insts, ComputeSpec())


_CLOCK_DELTAS = r"""
K(g2_clock_deltas) { int i = TID; if (i >= n) return;
  long long t0 = clock64(); uint32_t x = a[i], m = 64u + (x & 63u);
  for (uint32_t k = 0; k < m; k++) x = x * 3u + 1u;
  long long t1 = clock64(); uint64_t g0, g1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g0)); o[4 * i + 2] = x;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g1));
  uint64_t d = (uint64_t)(t1 - t0), e = g1 - g0;
  o[4 * i] = (uint32_t)d; o[4 * i + 1] = (uint32_t)(d >> 32); o[4 * i + 3] = (uint32_t)(e >> 32); }
"""


@pytest.mark.parametrize("isa", [86, 53])
def test_clock_is_a_real_clock(isa, compute_device, nv_tools):
    """clock64() read around a loop, on lavapipe through OpReadClockKHR: no invocation sees it go
    back, the global timer neither, and the clock advances somewhere in the run (a constant
    would pass the first two); the 64-bit pair is one read (a CS2R pair's high word from
    elsewhere made the timer's difference huge: caught here, not by the corpus's flags)."""
    import numpy as np

    from compute_dispatch import run_spirv, upload
    from shader_svc.request import FEATURES
    import vk_compute
    from shader_svc.sm53.to_spirv import cbank0 as cbank53

    if not compute_device.shader_clock:
        pytest.skip("LOUD SKIP: the Vulkan device lacks VK_KHR_shader_clock")
    try:
        ks = cuda_build.build(cc.HEADER + _CLOCK_DELTAS, isa, "G")
    except cuda_build.NoCompiler as e:
        pytest.skip(f"LOUD SKIP: {e}")
    k = ks["g2_clock_deltas"]
    spv, _ = cc.translate(isa, k.code, k.cbank2, features=FEATURES["shader_clock"])
    assert cc.spirv_val(spv) == "ok"
    n = 128
    a = np.arange(n, dtype=np.uint32) * 7
    ba, bb, bo = upload(compute_device, a), upload(compute_device, a), upload(compute_device, np.zeros(4 * n, np.uint32))
    params = struct.pack("<QQQi", ba.address, bb.address, bo.address, n)
    layout = vk_compute.cbank0 if isa == 86 else cbank53
    (got,) = run_spirv(compute_device, spv, layout, k.cbank0_size, n, params, [bo], cc.BLOCK)
    got = got[: 4 * n].reshape(n, 4)
    want = a.astype(np.uint64)
    for j in range(127):
        want = np.where(j < 64 + (a & 63), (want * 3 + 1) & 0xFFFFFFFF, want)
    assert (got[:, 2] == want.astype(np.uint32)).all()  # the work between the reads ran
    # the device clock: its 64-bit difference never negative (high word 0); the SM clock's
    # difference small and non-negative modulo 2^32 (lavapipe's subgroup clock counts in 32
    # bits, its high word 0: a wrap between the reads is no going back)
    assert (got[:, 3] == 0).all(), got[:4]
    assert (got[:, 0] < 0x80000000).all(), got[:4]
    assert int(got[:, 0].astype(np.uint64).sum()) > 0


# --- R2UR's predicate output (lower/waterfall.py) ------------------------------------------------
def _tr86(text: str) -> bytes:
    from shader_svc.sm86 import decode as dec86
    from shader_svc.sm86.assemble import assemble_program as asm86
    from shader_svc.sm86.to_spirv import translate_compute as tr86

    return tr86(dec86.decode_stream(asm86(text)))


def test_arrives_guarded_by_r2ur_predicate_translates():
    """nvcc -G's loop (R2UR P0 then @!P0 ARRIVES): the guard holds in every invocation."""
    spv = _tr86("R2UR P0, UR4, R3\n@!P0 ARRIVES.LDGSTSBAR.64 [UR4]\nEXIT\n")
    assert cc.spirv_val(spv) == "ok"


@pytest.mark.parametrize(
    "text",
    [
        "ISETP.NE.AND P0, PT, R3, RZ, PT\n@!P0 ARRIVES.LDGSTSBAR.64 [UR4]\nEXIT\n",  # P0 from a compare
        "R2UR P0, UR4, R3\nISETP.NE.AND P0, PT, R3, RZ, PT\n@!P0 ARRIVES.LDGSTSBAR.64 [UR4]\nEXIT\n",  # rewritten
        "R2UR P0, UR4, R3\n@P0 ARRIVES.LDGSTSBAR.64 [UR4]\nEXIT\n",  # the lanes not served
        "R2UR P1, UR4, R3\n@!P0 ARRIVES.LDGSTSBAR.64 [UR4]\nEXIT\n",  # another predicate
    ],
)
def test_other_guarded_arrives_still_refused(text):
    from shader_svc.lower.base import TranslateError

    with pytest.raises(TranslateError, match="guarded ARRIVES not translated"):
        _tr86(text)


def test_sm53_lea_immediate_decodes_as_nvdisasm_prints(nvdisasm53):
    """SM53 LEA's immediate form (top 0x36D0): random fields, our text equals nvdisasm 11.8's."""
    import random

    import sm53_tools
    from shader_svc.sm53 import decode as dec53

    rng = random.Random(53)
    # bits 51..63 the opcode (bit 56, the immediate's sign, a hole in it), bits 0..50 random
    # (bit 44 clear: the register and bank forms' reference encoding, which the decoder keeps)
    words = [(0x36D0 << 48) | (rng.getrandbits(51) & ~(1 << 44)) | (rng.getrandbits(1) << 56) for _ in range(48)]
    ref = sm53_tools.nvdisasm53_raw(words)
    assert sum(r is not None for r in ref) > 24  # most are valid LEA words for nvdisasm
    for w, r in zip(words, ref):
        if r is None:
            continue
        want = (f"{r.pred} " if r.pred else "") + f"{r.opcode} {r.operands}".strip()
        assert dec53.decode(w).text() == want, hex(w)


@pytest.mark.parametrize("name", ["g2_device_data", "g2_virtual"])
def test_globals_through_the_service(name, server, compute_device):
    """The loader's part through the shader service over gRPC on loopback: bank 4 (the placed
    globals' addresses) travels as a program bank beside the kernel's bank 2; the reflection
    reports the bank-4 words the program reads; lavapipe's output equals numpy's."""
    from proto import shader_pb2 as P

    try:
        ks = cuda_build.build(cc.group_source("ctl2_globals"), 86, "O3")
    except cuda_build.NoCompiler as e:
        pytest.skip(f"LOUD SKIP: {e}")
    k, case = ks[name], next(c for c in cc.CASES if c.name == name)
    gbuf = compute_device.buffer(cuda_globals.region_size(k.globals_cubin))
    placed = cuda_globals.place(k.globals_cubin, name, 86, gbuf.address)
    compute_device.write(gbuf, placed.image)
    banks = [*k.banks, (4, placed.bank4)]
    stub, _ = server
    prog = P.Program(arch=86, stage=P.COMPUTE, code=placed.code, local_size=[cc.BLOCK, 1, 1])
    prog.banks.extend([P.ConstBank(bank=n, data=d) for n, d in banks])
    t = stub.Translate(prog, timeout=120)
    assert any(r.bank == 4 for r in t.reflection.const_ranges)
    ok, why = cc.run(compute_device, 86, k, case, t.spirv)
    assert ok, why


# what assert expands to, without assert.h (NVRTC has none): a call of the runtime's
# __assertfail (CUDA's declaration)
_ASSERT = r"""
extern "C" __device__ void __assertfail(const char *, const char *, unsigned, const char *, decltype(sizeof(0)));
__device__ uint32_t g3_tab[4] = {1, 2, 3, 4};
K(g3_assert) { int i = TID; if (i >= n) return;
  if (a[i] == 0xFFFFFFFFu) __assertfail("a[i] != ~0u", "k.cu", 4, "g3_assert", 1);
  o[i] = g3_tab[a[i] & 3]; }
"""


@pytest.mark.parametrize("isa", [86, 53])
def test_a_call_through_a_bank_slot_outside_the_program_is_refused_by_name(isa, nv_tools):
    """``assert`` calls __assertfail through its bank-4 slot at -O3.  The corpus link now supplies
    one (tests/shader_svc/cuda_build_assert.py), so the placed slot holds a real address; a slot
    holding an address that is no code of the program (0xffffff00, what a loader writes for an
    unresolved symbol) is still refused, naming the call and the slot."""
    from shader_svc.lower.base import TranslateError

    try:
        ks = cuda_build.build(cc.HEADER + _ASSERT, isa, "O3")
    except cuda_build.NoCompiler as e:
        pytest.skip(f"LOUD SKIP: {e}")
    k = ks["g3_assert"]
    p = cuda_globals.place(k.globals_cubin, k.name, isa, 0x7F00_0000_0000)
    bank4 = bytearray(p.bank4)
    bank4[0:8] = (0xFFFF_FF00).to_bytes(8, "little")
    with pytest.raises(
        TranslateError, match=r"(CALL\.ABS|JMX).*call to 0xffffff00 \(c\[0x4\]\[0x0\]\), an address outside the program"
    ):
        cc.translate(isa, p.code, k.cbank2, ((4, bytes(bank4)),), ((0x7F00_0000_0000, p.image),))
