"""SM53 (Maxwell, Switch 1) vertex and fragment programs: the graphics instruction forms against
NVIDIA's disassembler, and the guest shaders' Maxwell listings (examples/demo/shaders/*.sm53)
drawing on lavapipe exactly the pixels of the GLSL they replace.

Oracles nobody here wrote:
- nvdisasm 11.8 (Debian non-free, fetched at test time; tools.py): every word of the listings
  prints as the listing's line, field by field, and randomly mutated words of the graphics rows
  (ALD/AST/IPA/KIL/OUT/TEXS/TLDS/TLD4S/TEX/TLD/TXQ) print as nvdisasm prints them or are refused;
- glslang + the same Vulkan driver (tests/shader_svc/vk_graphics.py): the GLSL versions of the
  programs (scene.vert/.frag, gpu_guest's COLOR_*/TEX_*), and small GLSL programs written from
  the GLSL specification for the texture forms (texelFetch, textureGather, textureLod,
  textureSize, discard), drawn with the same inputs, must give the same pixels.
The draw cases are test_guest_shaders.py's for SM86 (perspective mvp, ties, instances,
nearest/linear textures).  Each was seen to fail when the listing was changed (see the asserts).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import listings
from examples.demo.shaders import build as shaders
from glsl_compare import QUAD, QUAD_UV, assert_same, perspective_triangles
from guest_frames import check_demo_matches_reference, check_gfx_guest_frames
from nxrecomp.common.errors import NxError
from shader_svc import sph
from shader_svc import translate as tr
import sm53_corpus as corpus
import sm53_tools as tools
from shader_svc.sm53 import decode as dec
from shader_svc.sm53.assemble import assemble_program
from shader_svc.sm53.table import ROWS
from sm53_gfx_programs import STAGE, VS_MODES, VS_MODES53, glsl, program, translate

GFX_IRS = {"ALD", "AST", "IPA", "KIL", "OUT", "TEXS", "TLDS", "TLD4S", "TEX", "TLD", "TXQ"}


# --- the instruction forms against nvdisasm ------------------------------------------------------


def test_listings_are_what_nvdisasm_reads(nvdisasm53):
    """The code after each version-3 header is real Maxwell code: nvdisasm prints the listing's
    lines (field by field), and our decoder prints the same."""
    seen = set()
    for name in shaders.PROGRAMS:
        for stage in ("vertex", "fragment"):
            lst = shaders.listing(name, stage, "sm53")
            full = shaders.sm53_program(name, stage)
            assert sph.parse(full, stage).size == 0x50
            code = full[0x50:]
            ref = tools.nvdisasm53_code(code)
            want = [ln.split("//")[0].strip() for ln in lst.text.splitlines()]
            want = [w for w in want if w]
            ours = dec.decode_stream(code)
            got = [ref[i.addr].text for i in ours]
            assert [listings.fields(g) for g in got[: len(want)]] == [listings.fields(w) for w in want], (name, stage)
            assert all(g == "NOP" for g in got[len(want) :])  # padding of the last group
            assert [listings.fields(i.text()) for i in ours] == [listings.fields(g) for g in got]
            seen |= {i.row.ir for i in ours}
    assert {"ALD", "AST", "IPA", "TEXS", "MUFU"} <= seen


def test_graphics_rows_agree_with_nvdisasm_or_refuse(nvdisasm53):
    seeds = sorted(
        {r.base for r in ROWS if r.ir in GFX_IRS}
        | {
            w
            for n in shaders.PROGRAMS
            for s in ("vertex", "fragment")
            for w in (i.word for i in dec.decode_stream(shaders.sm53_program(n, s)[0x50:]))
            if dec.decode(w).row.ir in GFX_IRS
        }
    )
    words, ctl = corpus.mutations(seeds, 900, seed=5353)
    ref = tools.nvdisasm53_raw(words, ctl)
    agree, kinds = 0, set()
    for i, (w, r) in enumerate(zip(words, ref)):
        c = dec.Control.from_bits((ctl[i // 3] >> (i % 3 * 21)) & ((1 << 21) - 1))
        try:
            inst = dec.decode(w, c, tools.raw_addr(i))
        except dec.DecodeError:
            continue
        assert r is not None, f"{w:#018x}: we print {inst.text()!r}, nvdisasm refuses it"
        assert listings.fields(inst.text()) == listings.fields(r.text), f"{w:#018x}"
        agree += 1
        kinds.add(inst.row.ir)
    assert agree > 300, agree  # refusing everything is not passing
    assert GFX_IRS <= kinds | {"OUT"}, sorted(GFX_IRS - kinds)


def test_texture_forms_print_as_nvdisasm_prints_them(nvdisasm53):
    """Hand-written forms (short and full texture forms, every TEXS mask with one and two
    destination pairs, IPA modes, KIL) assemble, and nvdisasm prints exactly the text."""
    lines = ["TEXS RZ, R4, R0, R1, 0x1, 2D, " + m for m in ("R", "G", "B", "A", "RG", "RA", "GA", "BA")]
    lines += ["TEXS R6, R4, R0, R1, 0x2, 2D, " + m for m in ("RGB", "RGA", "RBA", "GBA", "RGBA")]
    lines += [
        "TEXS.LL R6, R4, R2, R3, 0x0, 2D, RGBA",
        "TEXS.LZ.NODEP R2, R0, R0, R1, 0x3, 2D, RGBA",
        "TLDS.LZ R2, R0, R0, R1, 0x0, 2D, RGBA",
        "TLDS.LL R6, R4, R0, R2, 0x1, 2D, RGBA",
        "TLD4S.G R2, R0, R0, R1, 0x0",
        "TLD4S.A.NODEP RZ, R4, R2, R3, 0x1",
        "TEX R0, R4, 0x0, 2D, 0xf",
        "TEX.LL R0, R4, R6, 0x1, 2D, 0x7",
        "TEX.LB.NODEP R0, R4, R6, 0x2, 2D, 0x9",
        "TLD.LZ R0, R4, 0x0, 2D, 0xf",
        "TLD.LL R0, R4, R6, 0x0, 2D, 0x3",
        "TXQ R0, RZ, TEX_HEADER_DIMENSION, 0x0, 0x3",
        "IPA.PASS R0, a[0x7c], RZ",
        "IPA R1, a[0x80], R0",
        "IPA.CONSTANT R2, a[0x94], RZ",
        "IPA.PASS.CENTROID R3, a[0x98], RZ",
        "@P1 KIL",
        "KIL",
        "ALD.128 R4, a[0x90]",
        "ALD R0, a[0x2fc]",
        "AST.96 a[0xa0], R8",
        "AST a[0x70], RZ",
    ]
    code = assemble_program("\n".join(lines))
    ref = tools.nvdisasm53_code(code)
    got = [ref[i.addr].text for i in dec.decode_stream(code)][: len(lines)]
    assert [listings.fields(g) for g in got] == [listings.fields(ln) for ln in lines]


def test_bad_graphics_words_are_refused():
    ipa = 0xE003FF880FF7FF01
    with pytest.raises(dec.DecodeError, match="unsupported modifier value loc=3"):
        dec.decode(ipa | 3 << 52)  # IPA.INVALID
    with pytest.raises(dec.DecodeError, match="differ from the reference"):
        dec.decode(ipa ^ 1 << 38)  # IPA.IDX: not taken
    with pytest.raises(dec.DecodeError, match="component mask value 5"):
        dec.decode(0xD834003060170004)  # TEXS ... INVALID5
    with pytest.raises(dec.DecodeError, match="unsupported modifier value target=14"):
        dec.decode(0xD9D0003060170004)


# --- the guest programs: SM53 draws what the GLSL draws -------------------------------------------

# The guest programs drawn against their GLSL: tests/shader_svc/test_guest_shaders.py, for SM53 and
# SM86 alike (its `arch` fixture).


VS_PASS = """#version 450
layout(location=0) in vec4 pos;
layout(location=1) in vec4 uv;
layout(location=0) out vec4 t;
void main() { gl_Position = pos; t = uv; }
"""
VS_PASS53 = program(
    "vertex",
    """
ALD.128 R0, a[0x80]
ALD.128 R4, a[0x90]
AST.128 a[0x70], R0
AST.128 a[0x80], R4
EXIT
""",
    inputs=set(range(0x80, 0xA0, 4)),
    outputs=set(range(0x70, 0x90, 4)),
)


def _quad_verts(uv_scale=1.0, w=1.0) -> np.ndarray:
    v = np.zeros((6, 2, 4), np.float32)
    v[:, 0, :2], v[:, 0, 2], v[:, 0, 3] = QUAD * w, 0.5 * w, w
    v[:, 1, :2] = QUAD_UV * uv_scale
    v[:, 1, 2:] = (0.3, 0.8)
    return v


def _draw_pair(gpu, fs53: bytes, fs_glsl: str, verts, size, **kw):
    a = gpu.draw(translate("vertex", VS_PASS53), translate("fragment", fs53), verts, size, **kw)
    b = gpu.draw(glsl(VS_PASS, "vertex"), glsl(fs_glsl, "fragment"), verts, size, **kw)
    return a, b


def test_texel_fetch_gather_and_size_query_match_glsl(gpu):
    """TLDS.LZ at each pixel's FragCoord (F2I), TXQ's width in alpha; TLD4S.G between texels;
    TEX.LL / TLD.LZ full forms: each equal to its GLSL."""
    from vk_graphics import Texture

    rng = np.random.default_rng(77)
    texels = rng.integers(0, 256, (8, 12, 4), dtype=np.uint8)
    tex = {1: Texture(texels)}
    fetch = program(
        "fragment",
        """
IPA.PASS R0, a[0x70], RZ
IPA.PASS R1, a[0x74], RZ
F2I.S32.F32.FLOOR R0, R0
F2I.S32.F32.FLOOR R1, R1
TLDS.LZ R2, R4, R0, R1, 0x1, 2D, RGBA
TXQ R8, RZ, TEX_HEADER_DIMENSION, 0x1, 0x1
I2F.F32.S32 R8, R8
FMUL R3, R8, 0.00390625
MOV R0, R4
MOV R1, R5
EXIT
""",
        inputs={0x70: "perspective", 0x74: "perspective"},
        targets=(0xF,),
    )
    a, b = _draw_pair(
        gpu,
        fetch,
        """#version 450
layout(set=0, binding=5) uniform sampler2D tex;
layout(location=0) out vec4 o;
void main() { vec4 c = texelFetch(tex, ivec2(floor(gl_FragCoord.xy)), 0);
              o = vec4(c.rgb, float(textureSize(tex, 0).x) / 256.0); }
""",
        _quad_verts(),
        (12, 8),
        textures=tex,
    )
    assert_same(gpu, a, b, min_covered=96, min_colours=50)
    assert np.array_equal(a[..., :3], texels[..., :3]) and (a[..., 3] == round(12 / 256 * 255)).all()

    gather = program(
        "fragment",
        """
IPA.PASS R4, a[0x7c], RZ
MUFU.RCP R4, R4
IPA R0, a[0x80], R4
IPA R1, a[0x84], R4
TLD4S.G R2, R0, R0, R1, 0x1
EXIT
""",
        inputs={0x7C: "perspective", 0x80: "perspective", 0x84: "perspective"},
        targets=(0xF,),
    )
    a, b = _draw_pair(
        gpu,
        gather,
        """#version 450
layout(location=0) in vec4 t;
layout(set=0, binding=5) uniform sampler2D tex;
layout(location=0) out vec4 o;
void main() { o = textureGather(tex, t.xy, 1); }
""",
        _quad_verts(),
        (24, 16),
        textures=tex,
    )
    assert_same(gpu, a, b, min_covered=300, min_colours=50)

    full = program(
        "fragment",
        """
IPA.PASS R4, a[0x7c], RZ
MUFU.RCP R4, R4
IPA R0, a[0x80], R4
IPA R1, a[0x84], R4
MOV R2, RZ
TEX.LL R8, R0, R2, 0x1, 2D, 0xb
MOV R0, R8
MOV R1, R9
MOV32I R2, 0x3f000000
MOV R3, R10
EXIT
""",
        inputs={0x7C: "perspective", 0x80: "perspective", 0x84: "perspective"},
        targets=(0xF,),
    )
    a, b = _draw_pair(
        gpu,
        full,
        """#version 450
layout(location=0) in vec4 t;
layout(set=0, binding=5) uniform sampler2D tex;
layout(location=0) out vec4 o;
void main() { vec4 c = textureLod(tex, t.xy, 0.0); o = vec4(c.rg, 0.5, c.a); }
""",
        _quad_verts(1.3),
        (20, 14),
        textures=tex,
    )
    assert_same(gpu, a, b, min_covered=200, min_colours=50)


def test_interpolation_modes_and_kill_match_glsl(gpu):
    """Maxwell's IPA without the idiom: IPA.PASS of a perspective varying is value/w (value *
    FragCoord.w), the multiply mode scales by its register; IPA.CONSTANT is flat (provoking
    vertex), a screen-linear header input is noperspective; @P0 KIL discards.  Under a real
    perspective (w from 0.5 to 3), against GLSL written for each meaning; exact on lavapipe.
    (Seen to fail with the flat input read as perspective and with KIL's predicate inverted.)"""
    verts = perspective_triangles(5)
    fs53 = program(
        "fragment",
        """
IPA.PASS R0, a[0x80], RZ
MOV32I R5, 0x3f000000
IPA R1, a[0x84], R5
IPA.CONSTANT R2, a[0x90], RZ
FSETP.LT.AND P0, PT, R2, 0.25, PT
@P0 KIL
IPA.PASS R3, a[0xa0], RZ
EXIT
""",
        inputs={0x80: "perspective", 0x84: "perspective", 0x90: "constant", 0xA0: "linear"},
        targets=(0xF,),
        kills_pixels=True,
    )
    fs_glsl = """#version 450
layout(location=0) in vec4 t;
layout(location=1) flat in vec4 u;
layout(location=2) noperspective in vec4 v;
layout(location=0) out vec4 o;
void main() { if (u.x < 0.25) discard;
              o = vec4(t.x * gl_FragCoord.w, t.y * gl_FragCoord.w * 0.5, u.x, v.x); }
"""
    a = gpu.draw(translate("vertex", VS_MODES53), translate("fragment", fs53), verts, (48, 40))
    b = gpu.draw(glsl(VS_MODES, "vertex"), glsl(fs_glsl, "fragment"), verts, (48, 40))
    assert_same(gpu, a, b, min_covered=150, min_colours=50)
    # the discard really removed pixels: without it more is drawn
    keep = gpu.draw(glsl(VS_MODES, "vertex"), glsl(fs_glsl.replace("discard;", "{}"), "fragment"), verts, (48, 40))
    assert keep.any(axis=2).sum() > b.any(axis=2).sum()


# --- end to end: the guest programs carrying SM53 (the Switch 1 build) -----------------------------


def test_gfx_guest_program_draws_its_frames_from_sm53(tmp_path):
    """examples/horizon_hello's gfx program, recompiled, with /shaders/arch = "sm53": the guest
    calls nvnProgramSetShaders with arch 53, the CPU host's NVN front end sends the Maxwell code
    to the shader service, and every frame equals the numpy picture tests/horizon computes for
    the GLSL build (the same frames the SM86 run draws)."""
    check_gfx_guest_frames(tmp_path, "sm53")


def test_demo_game_switch1_build_matches_reference_and_native_states(tmp_path, monkeypatch):
    """``nxrecomp demo --target switch1`` (= --shaders sm53, textures in Switch 1's GOB layout):
    frames 1 and 60 equal tests/demo's reference pictures (made with the GLSL build) with the
    tolerance tests/demo uses, and the per-frame state checksums equal the native build's.

    The game really carried Maxwell code: the run's shader service, on a cache folder of its
    own (so neither other tests nor earlier runs can answer for it), stored exactly the two
    programs of the switch1 build, SM53 vertex and fragment with the listings' bytes, and a
    translation of each by this translator.  The stored programs are compared by arch, stage
    and code, not by key: the key also covers the feature bits of the GPU process's device."""
    from shader_svc import identity
    from shader_svc.disk_cache import DiskCache
    from tests.demo.test_demo import native_states

    cache_root = tmp_path / "shader-cache"
    monkeypatch.setenv("NXRECOMP_SHADER_SVC_CACHE_DIR", str(cache_root))
    report = check_demo_matches_reference(tmp_path, "--target", "switch1")
    assert report["states"] == native_states(60, tmp_path)
    cache = DiskCache(cache_root, identity.translator_id())
    keys = cache.program_keys()
    seen = {}
    for key in keys:
        p = tr.Program.deserialize(cache.get_program(key), key)
        seen[(p.arch, p.stage)] = p.code
        assert cache.get(key) is not None, f"program {key} (SM{p.arch} stage {p.stage}) has no translation"
    want = {(53, STAGE[st]): shaders.sm53_program("scene", st) for st in ("vertex", "fragment")}
    assert len(keys) == 2 and seen == want, sorted(seen)
    assert (report["timings"].get("shaders") or {}).get("errors", 0) == 0


# --- the builds: RomFS files, --shaders sm53 and its alias --target switch1 ------------------------


def test_romfs_and_demo_build_carry_sm53():
    from examples.demo.build import TARGETS, shader_files, shaders_for

    files = shaders.romfs_shaders("sm53")
    assert files["/shaders/arch"] == b"sm53"
    for n in shaders.PROGRAMS:
        for stage, ext in (("vertex", "vs"), ("fragment", "fs")):
            code = files[f"/shaders/{n}.{ext}"]
            assert code == shaders.sm53_program(n, stage)
            h = sph.parse(code, stage)
            assert h.version == 3 and h.size == 0x50 and (len(code) - 0x50) % 32 == 0
    # what the guests read: the same names for both machine codes, different code
    sm86 = shaders.romfs_shaders("sm86")
    assert set(sm86) == set(files) and all(files[k] != sm86[k] for k in files)
    demo = shader_files("sm53")
    assert set(demo) == {"/shaders/arch", "/shaders/scene.vs", "/shaders/scene.fs"}
    assert demo["/shaders/scene.fs"] == files["/shaders/scene.fs"]
    assert TARGETS == {"switch1": "sm53", "switch2": "sm86"}
    assert shaders_for(None, "switch1") == "sm53" and shaders_for(None, "switch2") == "sm86"
    assert shaders_for("sm53", "switch1") == "sm53" and shaders_for(None, None) == "sm86"
    with pytest.raises(ValueError, match="--target switch2 means --shaders sm86, not sm53"):
        shaders_for("sm53", "switch2")
    with pytest.raises(NxError, match="unknown machine-code arch 'sm70'"):
        shaders.listing("scene", "vertex", "sm70")


def test_bad_sm53_listing_names_file_and_line(tmp_path):
    p = tmp_path / "x.fs.sm53"
    p.write_text("//@sph fragment inputs=0x80:perspective targets=0x1\nIPA.PASS R0, a[0x80], RZ\nFROB R1\nEXIT\n")
    with pytest.raises(NxError) as e:
        shaders.assemble_listing(shaders.read_listing(p))  # the suffix picks the SM53 assembler
    assert str(p) in str(e.value) and "line 3" in str(e.value) and "FROB" in str(e.value)
    p.write_text("//@sph fragment inputs=0x80:perspective targets=0x1\nIPA.PASS R0, a[0x80]\nEXIT\n")
    with pytest.raises(NxError, match=r"line 2 .*no encoding of 'IPA.PASS R0, a\[0x80\]'"):
        shaders.assemble_listing(shaders.read_listing(p))  # SM86 text: Maxwell prints the RZ


def test_demo_cli_refuses_conflicting_target_and_shaders(tmp_path):
    import subprocess

    root = Path(__file__).resolve().parents[2]
    r = subprocess.run(
        [sys.executable, "-m", "nxrecomp", "demo", "--target", "switch1", "--shaders", "sm86", "--out", str(tmp_path)],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2 and "--target switch1 means --shaders sm53, not sm86" in r.stderr + r.stdout
    r = subprocess.run(
        [sys.executable, "-m", "examples.demo.build", str(tmp_path), "--target", "switch3"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2 and "invalid choice: 'switch3'" in r.stderr


def test_mutated_programs_translate_validly_or_fail_clearly(tmp_path):
    """1-3 flipped bits anywhere in the guest programs (header included): each either translates
    to a module spirv-val accepts or is refused with an NxError (never another exception)."""
    import random
    import shutil
    import subprocess

    rng = random.Random(53)
    progs = [(shaders.sm53_program(n, s), STAGE[s]) for n in shaders.PROGRAMS for s in STAGE]
    ok, refused, checked = 0, 0, 0
    for _ in range(400):
        code, stage = rng.choice(progs)
        b = bytearray(code)
        for _ in range(rng.choice((1, 2, 3))):
            b[rng.randrange(0x50 if rng.random() < 0.9 else 0, len(b))] ^= 1 << rng.randrange(8)
        try:
            spv = tr.translate(tr.Program(53, stage, bytes(b)))
        except NxError:
            refused += 1
            continue
        ok += 1
        if checked < 25 and shutil.which("spirv-val"):
            p = tmp_path / f"m{checked}.spv"
            p.write_bytes(spv)
            r = subprocess.run(["spirv-val", "--target-env", "vulkan1.2", str(p)], capture_output=True, text=True)
            assert r.returncode == 0, (bytes(b).hex(), r.stderr)
            checked += 1
    assert ok > 50 and refused > 50, (ok, refused)


def test_ipa_idiom_is_recognised_after_a_kil(gpu):
    """An alpha-test shape: 1/w and its reciprocal before a KIL, varyings read with the multiply
    mode after it (a new block, entered only by falling through).  The translation reads the
    perspective-correct inputs themselves (no multiply left in the module) and draws the GLSL's
    pixels; a branch target between them would have to forget the idiom."""
    import subprocess

    text = """
IPA.PASS R4, a[0x7c], RZ
MUFU.RCP R4, R4
IPA R0, a[0x80], R4
FSETP.LT.AND P0, PT, R0, 0.25, PT
@P0 KIL
IPA R1, a[0x84], R4
IPA R2, a[0x88], R4
IPA R3, a[0x8c], R4
EXIT
"""
    hdr = dict(inputs={0x7C: "perspective", **{a: "perspective" for a in range(0x80, 0x90, 4)}}, targets=(0xF,))
    spv = translate("fragment", program("fragment", text, **hdr))
    dis = subprocess.run(["spirv-dis", "-"], input=spv, capture_output=True).stdout.decode()
    assert "OpFMul" not in dis and "OpKill" in dis
    # with a branch into the block after the KIL the idiom cannot be assumed there
    joined = text.replace("@P0 KIL", "@P0 BRA L\nL:")
    dis2 = subprocess.run(
        ["spirv-dis", "-"], input=translate("fragment", program("fragment", joined, **hdr)), capture_output=True
    ).stdout.decode()
    assert dis2.count("OpFMul") == 6  # value * FragCoord.w * R4 for the three later reads
    verts = perspective_triangles(9)
    a = gpu.draw(translate("vertex", VS_PASS53), spv, verts, (48, 40))
    b = gpu.draw(
        glsl(VS_PASS, "vertex"),
        glsl(
            """#version 450
layout(location=0) in vec4 t;
layout(location=0) out vec4 o;
void main() { if (t.x < 0.25) discard; o = t; }
""",
            "fragment",
        ),
        verts,
        (48, 40),
    )
    assert_same(gpu, a, b, min_covered=150, min_colours=100)
