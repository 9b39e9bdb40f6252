"""Depth-compare ("shadow") sampling through the whole split runtime with guest MACHINE-CODE
shaders: a guest program of our own renders a depth pass into a D32F and a D24S8 depth target,
then draws a full-screen quad whose fragment program, Maxwell SM53 or Ampere SM86 code assembled
here by the project's assemblers (as examples/demo/shaders/build.py does), samples that depth
texture through a compare sampler (LESS, GREATER) with the reference from a uniform block or the
interpolated u.  Forms: SM53 TEXS .LZ.DC / .DC / .LL.DC, TEX .LZ.DC, TLD4 .DC; SM86 TEX .LZ.DC /
.DC / .LL.DC, TLD4 .DC.  The NVN front end hands the code to the shader service (SASS -> SPIR-V),
the GPU process replays on lavapipe under Khronos's validation layer, and each presented frame is
compared with numpy: compare(reference, stored depth); gathers texel by texel in Vulkan's gather
order.  Misuse (a Dref lookup through a plain sampler or of a colour texture, a compare sampler
under a plain lookup) drops the submission with a log line naming the draw and the slot; an
unbound Dref slot reads 0."""

from __future__ import annotations

import operator
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from recompiler.formats.pack_romfs import pack_romfs
from tests.horizon.hz_build import nxrecomp
from tests.horizon.test_horizon_nvn import cpu_lines, read_frame

W = 32
# the depth pass: (x0, y0, x1, y1, z) rectangles drawn with a LESS depth test over a clear of 1.0;
# no reference below is near a stored depth, so D24's rounding cannot flip a comparison
RECTS = [(2, 2, 20, 14, 0.8), (10, 6, 30, 22, 0.35), (4, 18, 16, 30, 0.2), (18, 20, 28, 28, 0.55)]
OPS = {"less": (1, operator.lt), "greater": (4, operator.gt)}  # NVN_COMPARE_LESS / _GREATER
FORMATS = {"D32F": 15, "D24S8": 14}  # NVN_FORMAT_DEPTH32F / 24_STENCIL8
# one presented frame each: (depth format, compare op, reference, fragment program): a program of
# SHADOW_FS (the comparison in R), the reference a uniform or "u" (the interpolated u itself:
# (x + 0.75) / W, never within 0.004 of a stored depth); "gather" is TLD4.DC (the four comparisons
# of the 2x2 footprint)
FRAMES = [
    ("D32F", "less", 0.45, "lz"),
    ("D32F", "greater", 0.45, "lz"),
    ("D24S8", "less", 0.65, "lz"),
    ("D24S8", "greater", 0.25, "lz"),
    ("D24S8", "less", 0.45, "implicit"),
    ("D32F", "greater", 0.65, "ll"),
    ("D24S8", "greater", 0.45, "full"),
    ("D32F", "less", "u", "u_ref"),
    ("D24S8", "greater", "u", "u_ref"),
    ("D32F", "less", 0.45, "gather"),
    ("D24S8", "greater", 0.65, "gather"),
]
# the quad's texture coordinates are shifted a quarter texel: nearest lookups land on texel
# (x, y) and a gather's footprint is texels x..x+1, y..y+1 with no coordinate on a texel edge
SHIFT = 0.25 / W

DEPTH_VS = {
    "sm53": """// depth pass: gl_Position = vec4(pos.xyz, 1)
//@sph vertex inputs=0x80-0x88 outputs=0x70-0x7c
ALD.64 R0, a[0x80]
ALD R2, a[0x88]
MOV32I R3, 0x3f800000
AST.128 a[0x70], R0
EXIT
""",
    "sm86": """// depth pass: gl_Position = vec4(pos.xyz, 1)
//@sph vertex inputs=0x80-0x88 outputs=0x70-0x7c
ALD.64 R0, a[0x80]
ALD R2, a[0x88]
MOV R3, 0x3f800000
AST.128 a[0x70], R0
EXIT
""",
}
DEPTH_FS = {
    "sm53": """// depth pass colour: grey (only the depth target is looked at)
//@sph fragment inputs=0x7c:perspective targets=0xf
MOV32I R0, 0x3f000000
MOV32I R1, 0x3f000000
MOV32I R2, 0x3f000000
MOV32I R3, 0x3f800000
EXIT
""",
    "sm86": """// depth pass colour: grey (only the depth target is looked at)
//@sph fragment targets=0xf
MOV R0, 0x3f000000
MOV R1, 0x3f000000
MOV R2, 0x3f000000
MOV R3, 0x3f800000
EXIT
""",
}
# o = vec4(texture(shadow slot 0, vec3(t, ref)), 0, 0, 1): each lookup form the shader service
# translates, the reference c[0][0] (a uniform) or, for "u_ref", the interpolated u itself
PRO53 = """//@sph fragment inputs=0x7c:perspective,0x80-0x84:perspective targets=0xf
IPA.PASS R4, a[0x7c], RZ
MUFU.RCP R4, R4
IPA R8, a[0x80], R4
IPA R9, a[0x84], R4
MOV R11, c[0x0][0x0]
"""
EPI53 = """MOV R1, RZ
MOV R2, RZ
MOV32I R3, 0x3f800000
EXIT
"""
PRO86 = """//@sph fragment inputs=0x80-0x84:perspective targets=0xf
IPA.PASS R0, a[0x80]
IPA.PASS R1, a[0x84]
MOV R2, c[0x0][0x0]
"""
EPI86 = """MOV R0, R4
MOV R1, RZ
MOV R2, RZ
MOV R3, 0x3f800000
EXIT
"""
SHADOW_FS = {
    "sm53": {
        # TEXS .DC forms: Ra = (u, v) in R8, R9, Rb = (level,) the reference; R to R0
        "lz": PRO53 + "TEXS.LZ.DC RZ, R0, R8, R11, 0x0, 2D, R\n" + EPI53,
        "implicit": PRO53 + "TEXS.DC RZ, R0, R8, R11, 0x0, 2D, R\n" + EPI53,
        "ll": PRO53 + "MOV R12, RZ\nMOV R13, R11\nTEXS.LL.DC RZ, R0, R8, R12, 0x0, 2D, R\n" + EPI53,
        # the full form: Ra = (u, v), Rb = the reference, mask 0x1 to R0
        "full": PRO53 + "TEX.LZ.DC R0, R8, R11, 0x0, 2D, 0x1\n" + EPI53,
        "u_ref": PRO53 + "MOV R11, R8\nTEXS.LZ.DC RZ, R0, R8, R11, 0x0, 2D, R\n" + EPI53,
    },
    "sm86": {
        # TEX .DC: Ra = (u, v) in R0, R1, Rb = (level,) the reference; the mask 0x1's R to R4
        "lz": PRO86 + "TEX.LZ.DC R6, R4, R0, R2, 0x0, 0x0, 2D, 0x1\n" + EPI86,
        "implicit": PRO86 + "TEX.DC R6, R4, R0, R2, 0x0, 0x0, 2D, 0x1\n" + EPI86,
        "ll": PRO86 + "MOV R3, R2\nMOV R2, RZ\nTEX.LL.DC R6, R4, R0, R2, 0x0, 0x0, 2D, 0x1\n" + EPI86,
        "u_ref": PRO86 + "MOV R2, R0\nTEX.LZ.DC R6, R4, R0, R2, 0x0, 0x0, 2D, 0x1\n" + EPI86,
    },
}
# o = textureGather(shadow slot 0, t, c[0][0]): the four comparisons in Vulkan's gather order
SHADOW_FS["sm53"]["gather"], SHADOW_FS["sm86"]["gather"] = (
    """// TLD4.R.DC: Ra = (u, v) in R8, R9, Rb = the reference in R11; four results to R0..R3
//@sph fragment inputs=0x7c:perspective,0x80-0x84:perspective targets=0xf
IPA.PASS R4, a[0x7c], RZ
MUFU.RCP R4, R4
IPA R8, a[0x80], R4
IPA R9, a[0x84], R4
MOV R11, c[0x0][0x0]
TLD4.R.DC R0, R8, R11, 0x0, 2D, 0xf
EXIT
""",
    """// TLD4.R.DC: Ra = (u, v) in R0, R1, Rb = the reference in R3; r,g to R4,R5, b,a to R6,R7
//@sph fragment inputs=0x80-0x84:perspective targets=0xf
IPA.PASS R0, a[0x80]
IPA.PASS R1, a[0x84]
MOV R3, c[0x0][0x0]
TLD4.R.DC R6, R4, R0, R3, 0x0, 0x0, 2D
MOV R0, R4
MOV R1, R5
MOV R2, R6
MOV R3, R7
EXIT
""",
)
# a plain (non-comparing) lookup of slot 0: o = vec4(texture(slot 0, t).r, 0, 0, 1)
PLAIN_FS = {
    "sm53": """// TEXS (no .DC) of the depth texture: its depth in R0
//@sph fragment inputs=0x7c:perspective,0x80-0x84:perspective targets=0xf
IPA.PASS R4, a[0x7c], RZ
MUFU.RCP R4, R4
IPA R8, a[0x80], R4
IPA R9, a[0x84], R4
TEXS.LZ RZ, R0, R8, R9, 0x0, 2D, R
MOV R1, RZ
MOV R2, RZ
MOV32I R3, 0x3f800000
EXIT
""",
    "sm86": """// TEX.LZ (no .DC) of the depth texture: its depth in R0
//@sph fragment inputs=0x80-0x84:perspective targets=0xf
IPA.PASS R0, a[0x80]
IPA.PASS R1, a[0x84]
TEX.LZ R6, R4, R0, 0x0, 0x0, 2D, 0x1
MOV R0, R4
MOV R1, RZ
MOV R2, RZ
MOV R3, 0x3f800000
EXIT
""",
}


def frames(arch: str) -> list[tuple]:
    """The frames whose program the arch has (SM86 has no short TEXS form: "full" is "lz")."""
    return [f for f in FRAMES if f[3] in SHADOW_FS[arch]]


def programs(arch: str, tmp) -> dict[str, bytes]:
    """The RomFS shader files: each listing assembled with its header by the demo's shader build
    (shader_svc's assemblers; nothing binary is committed)."""
    from examples.demo.shaders.build import assemble_listing, listing, read_listing

    files = {"/shaders/tex.vs": assemble_listing(listing("tex", "vertex", arch), arch)}
    texts = {"depth.vs": DEPTH_VS[arch], "depth.fs": DEPTH_FS[arch], "plain.fs": PLAIN_FS[arch]}
    texts.update({f"{name}.fs": text for name, text in SHADOW_FS[arch].items()})
    for name, text in texts.items():
        path = tmp / f"{name}.{arch}"
        path.write_text(text)
        files[f"/shaders/{name}"] = assemble_listing(read_listing(path), arch)
    return files


def c_program(arch: str) -> str:
    def px(v):
        return f"{2.0 * v / W - 1.0:.6f}f"

    verts = []
    for x0, y0, x1, y1, z in RECTS:
        pts = [(x0, y0), (x0, y1), (x1, y1), (x0, y0), (x1, y1), (x1, y0)]
        verts.append("{" + ", ".join(f"{px(x)}, {px(y)}, {z:.6f}f" for x, y in pts) + "}")
    names = list(SHADOW_FS[arch])
    table = ", ".join(
        f"{{{list(FORMATS).index(f)}, {list(OPS).index(op)}, {0 if ref == 'u' else ref:.6f}f, {names.index(p)}}}"
        for f, op, ref, p in frames(arch)
    )
    return (
        SHADOW_C.replace("@VERTS@", ",\n    ".join(verts))
        .replace("@NRECTS@", str(len(RECTS)))
        .replace("@FRAMES@", table)
        .replace("@NFRAMES@", str(len(frames(arch))))
        .replace("@ARCH@", arch[2:])
        .replace("@NPROGS@", str(len(names)))
        .replace("@PROGS@", ", ".join(f'"rom:/shaders/{n}.fs"' for n in names))
        .replace("@FORMATS@", ", ".join(str(v) for v in FORMATS.values()))
        .replace("@OPS@", ", ".join(str(v[0]) for v in OPS.values()))
        .replace("@SHIFT@", f"{SHIFT:.8f}f")
    )


SHADOW_C = r"""
#include "hz_sdk.h"
#include "nn.h"
#include "nvn.h"
#include "nvn_util.h"

#define W 32
static NvnProcs nvn;
static NVNdevice dev;
static NVNmemoryPool pool;
static NVNqueue queue;
static NVNcommandBuffer cmd;
static NVNtexture win_tex[2], depth_tex[2], colour_tex;
static NVNprogram zprog, progs[@NPROGS@], plain_prog;
static const char *const prog_files[@NPROGS@] = {@PROGS@};
static NVNsampler compare[2], plain;
static NVNtexturePool tpool;
static NVNsamplerPool spool;
static NVNwindow window;
static uint8_t pool_mem[256 * 1024] __attribute__((aligned(4096)));
enum { OFF_VERTS = 0, OFF_QUAD = 0x800, OFF_UBO = 0x1000, OFF_SHADERS = 0x4000, OFF_TPOOL = 0x30000,
       OFF_SPOOL = 0x31000, OFF_COLOUR = 0x32000 };
static const float verts[@NRECTS@][18] = {
    @VERTS@
};
static const int formats[2] = {@FORMATS@};
static const int ops[2] = {@OPS@};
/* depth format index, compare op index, reference, program index */
static const struct { int format, op; float ref; int prog; } frames[@NFRAMES@] = {@FRAMES@};
static const float black[4] = {0, 0, 0, 1};
static const float one = 1.0f;

static void load_program(NVNprogram *p, const char *vs, const char *fs, uint32_t *off) {
    static NVNshaderControl ctl[2 * (@NPROGS@ + 2)];
    static int n;
    if (!nvnu_program(&nvn, &dev, &pool, pool_mem, off, p, &ctl[n], vs, fs, @ARCH@)) hz_printf("(%s)\n", fs);
    n += 2;
}

/* one frame: the depth pass into depth_tex[f], then the quad through `prog` sampling texture
 * `tex_id` with sampler `smp_id` and the reference `ref`; returns the window texture presented */
static void frame(int f, NVNprogram *prog, int tex_id, int smp_id, float ref, int slot) {
    NVNbufferAddress base = nvn.nvnMemoryPoolGetBufferAddress(&pool);
    static int n;
    memcpy(pool_mem + OFF_UBO + 0x100 * n, &ref, 4);
    int index = 0;
    nvn.nvnWindowAcquireTexture(&window, 0, &index);
    NVNtexture *colour[1] = {&win_tex[index]};
    NVNdepthStencilState ds, off;
    nvn.nvnDepthStencilStateSetDefaults(&ds);
    nvn.nvnDepthStencilStateSetDepthTestEnable(&ds, 1);
    nvn.nvnDepthStencilStateSetDepthWriteEnable(&ds, 1);
    nvn.nvnDepthStencilStateSetDepthFunc(&ds, NVN_COMPARE_LESS);
    nvn.nvnDepthStencilStateSetDefaults(&off);
    NVNvertexAttribState pos[1] = {{NVN_ATTR_FLOAT3, 0, 0, 0}};
    NVNvertexStreamState s12 = {12, 0};
    NVNvertexAttribState pos_uv[2] = {{NVN_ATTR_FLOAT2, 0, 0, 0}, {NVN_ATTR_FLOAT2, 8, 0, 1}};
    NVNvertexStreamState s16 = {16, 0};
    nvn.nvnCommandBufferBeginRecording(&cmd);
    nvn.nvnCommandBufferSetRenderTargets(&cmd, 1, colour, 0, &depth_tex[f], 0);
    nvn.nvnCommandBufferSetViewport(&cmd, 0, 0, W, W);
    nvn.nvnCommandBufferClearColor(&cmd, 0, black, 0xF);
    nvn.nvnCommandBufferClearDepthStencil(&cmd, &one, 1, 0, 0xFF);
    nvn.nvnCommandBufferBindProgram(&cmd, &zprog, 3);
    nvn.nvnCommandBufferBindVertexAttribState(&cmd, 1, pos);
    nvn.nvnCommandBufferBindVertexStreamState(&cmd, 1, &s12);
    nvn.nvnCommandBufferBindDepthStencilState(&cmd, &ds);
    for (int i = 0; i < @NRECTS@; i++) {
        nvn.nvnCommandBufferBindVertexBuffer(&cmd, 0, base + OFF_VERTS + sizeof verts[0] * i, sizeof verts[i]);
        nvn.nvnCommandBufferDrawArrays(&cmd, NVN_DRAW_TRIANGLES, 0, 6);
    }
    nvn.nvnCommandBufferSetRenderTargets(&cmd, 1, colour, 0, 0, 0);
    nvn.nvnCommandBufferSetViewport(&cmd, 0, 0, W, W);
    nvn.nvnCommandBufferBindDepthStencilState(&cmd, &off);
    nvn.nvnCommandBufferClearColor(&cmd, 0, black, 0xF);
    nvn.nvnCommandBufferBindProgram(&cmd, prog, 3);
    nvn.nvnCommandBufferBindVertexAttribState(&cmd, 2, pos_uv);
    nvn.nvnCommandBufferBindVertexStreamState(&cmd, 1, &s16);
    nvn.nvnCommandBufferBindTexture(&cmd, NVN_STAGE_FRAGMENT, slot, nvn.nvnDeviceGetTextureHandle(&dev, tex_id, smp_id));
    nvn.nvnCommandBufferBindUniformBuffer(&cmd, NVN_STAGE_FRAGMENT, 0, base + OFF_UBO + 0x100 * n, 16);
    nvn.nvnCommandBufferBindVertexBuffer(&cmd, 0, base + OFF_QUAD, 24 * sizeof(float));
    nvn.nvnCommandBufferDrawArrays(&cmd, NVN_DRAW_TRIANGLES, 0, 6);
    NVNcommandHandle h = nvn.nvnCommandBufferEndRecording(&cmd);
    nvn.nvnQueueSubmitCommands(&queue, 1, &h);
    nvn.nvnQueuePresentTexture(&queue, &window, index);
    nvn.nvnQueueFinish(&queue);
    n++;
}

int hz_main(void) {
    static uint8_t rom_cache[0x4000];
    nnfsMountRom("rom", rom_cache, sizeof rom_cache);
    hz_printf("nvn entry points missing: %d\n", nvn_load_procs(&nvn));
    nvnu_device_and_pool(&nvn, &dev, &pool, pool_mem, sizeof pool_mem);
    memcpy(pool_mem + OFF_VERTS, verts, sizeof verts);
    const float s = @SHIFT@;
    const float quad[24] = {-1, -1, s, s, 1, -1, 1 + s, s, 1, 1, 1 + s, 1 + s,
                            -1, -1, s, s, 1, 1, 1 + s, 1 + s, -1, 1, s, 1 + s};
    memcpy(pool_mem + OFF_QUAD, quad, sizeof quad);

    for (int f = 0; f < 2; f++) {
        NVNtextureBuilder tb;
        nvn.nvnTextureBuilderSetDefaults(&tb);
        nvn.nvnTextureBuilderSetDevice(&tb, &dev);
        nvn.nvnTextureBuilderSetFlags(&tb, NVN_TEXTURE_FLAGS_RENDER_TARGET);
        nvn.nvnTextureBuilderSetFormat(&tb, formats[f]);
        nvn.nvnTextureBuilderSetSize2D(&tb, W, W);
        nvn.nvnTextureInitialize(&depth_tex[f], &tb);
    }
    nvnu_texture(&nvn, &dev, &pool, &win_tex[0], NVN_FORMAT_RGBA8, W, W, NVN_TEXTURE_FLAGS_DISPLAY, -1);
    nvnu_texture(&nvn, &dev, &pool, &win_tex[1], NVN_FORMAT_RGBA8, W, W, NVN_TEXTURE_FLAGS_DISPLAY, -1);
    nvnu_texture(&nvn, &dev, &pool, &colour_tex, NVN_FORMAT_RGBA8, 8, 8, 0, OFF_COLOUR);
    NVNsamplerBuilder sb;
    nvn.nvnSamplerBuilderSetDefaults(&sb);
    nvn.nvnSamplerBuilderSetDevice(&sb, &dev);
    nvn.nvnSamplerBuilderSetMinMagFilter(&sb, NVN_FILTER_NEAREST, NVN_FILTER_NEAREST);
    nvn.nvnSamplerBuilderSetWrapMode(&sb, NVN_WRAP_CLAMP, NVN_WRAP_CLAMP, NVN_WRAP_CLAMP);
    nvn.nvnSamplerInitialize(&plain, &sb);
    for (int i = 0; i < 2; i++) {
        nvn.nvnSamplerBuilderSetCompare(&sb, NVN_COMPARE_MODE_COMPARE_R_TO_TEXTURE, ops[i]);
        nvn.nvnSamplerInitialize(&compare[i], &sb);
    }
    nvn.nvnTexturePoolInitialize(&tpool, &pool, OFF_TPOOL, 16);
    nvn.nvnSamplerPoolInitialize(&spool, &pool, OFF_SPOOL, 16);
    for (int f = 0; f < 2; f++) nvn.nvnTexturePoolRegisterTexture(&tpool, 1 + f, &depth_tex[f], 0);
    nvn.nvnTexturePoolRegisterTexture(&tpool, 3, &colour_tex, 0);
    for (int i = 0; i < 2; i++) nvn.nvnSamplerPoolRegisterSampler(&spool, 1 + i, &compare[i]);
    nvn.nvnSamplerPoolRegisterSampler(&spool, 3, &plain);

    uint32_t off = OFF_SHADERS;
    load_program(&zprog, "rom:/shaders/depth.vs", "rom:/shaders/depth.fs", &off);
    for (int i = 0; i < @NPROGS@; i++) load_program(&progs[i], "rom:/shaders/tex.vs", prog_files[i], &off);
    load_program(&plain_prog, "rom:/shaders/tex.vs", "rom:/shaders/plain.fs", &off);

    nvnu_queue_and_window(&nvn, &dev, &queue, &cmd, NULL, &window, &win_tex[0], &win_tex[1]);

    for (int i = 0; i < @NFRAMES@; i++)
        frame(frames[i].format, &progs[frames[i].prog], 1 + frames[i].format, 1 + frames[i].op, frames[i].ref, 0);
    hz_printf("frames drawn\n");
    /* misuse: a Dref lookup through a plain sampler, then a plain lookup through a compare sampler;
     * each submission is dropped by the GPU process (nothing presented) */
    frame(0, &progs[0], 1, 3, 0.5f, 0);
    frame(0, &plain_prog, 1, 1, 0.5f, 0);
    /* a plain lookup through a plain sampler reads the depth itself */
    frame(0, &plain_prog, 1, 3, 0.5f, 0);
    /* the compare program with its slot 0 left unbound (the texture goes to slot 1): reads 0 */
    frame(0, &progs[0], 1, 1, 0.5f, 1);
    /* misuse: a Dref lookup of a colour texture through a compare sampler: dropped */
    frame(0, &progs[0], 3, 1, 0.5f, 0);
    hz_printf("done\n");
    return 0;
}
"""


def stored_depth(fmt: str) -> np.ndarray:
    depth = np.ones((W, W))
    for x0, y0, x1, y1, z in RECTS:
        region = (slice(y0, y1), slice(x0, x1))
        depth[region] = np.where(z < depth[region], z, depth[region])
    if fmt == "D24S8":
        depth = np.round(depth * 0xFFFFFF) / 0xFFFFFF
    return depth.astype(np.float32)


def expected(fmt: str, op: str, ref: float, prog: str) -> np.ndarray:
    """RGBA8: R = compare(ref, depth) at texel (x, y); a gather's four channels are the
    comparisons at (x, y+1), (x+1, y+1), (x+1, y), (x, y) (Vulkan's i0j1, i1j1, i1j0, i0j0),
    clamped to the edge."""
    if ref == "u":  # the interpolated u at pixel (x, y): texel x's centre plus the shift
        ref = np.broadcast_to(((np.arange(W) + 0.5) / W + SHIFT).astype(np.float32), (W, W))
    cmp = OPS[op][1](np.float32(ref), stored_depth(fmt)).astype(np.uint8) * 255
    out = np.zeros((W, W, 4), np.uint8)
    if prog != "gather":
        out[..., 0] = cmp
        out[..., 3] = 255
        return out
    pad = np.pad(cmp, ((0, 1), (0, 1)), mode="edge")
    out[..., 0] = pad[1:, :-1]
    out[..., 1] = pad[1:, 1:]
    out[..., 2] = pad[:-1, 1:]
    out[..., 3] = pad[:-1, :-1]
    return out


# Khronos's validation layer (apt vulkan-validationlayers, in scripts/nx.sh): the GPU process runs
# under it, and no draw may break a Vulkan rule (e.g. a Dref lookup of a colour view or through a
# plain sampler, VUID-vkCmdDraw-None-06479)
VALIDATION = Path("/usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json")


@pytest.mark.parametrize("arch", ["sm53", "sm86"])
def test_shadow_sampling_with_machine_code_shaders(tmp_path, monkeypatch, arch) -> None:
    from examples.horizon_hello.build_exefs import build_exefs
    from recompiler.horizon import recompile_exefs

    if VALIDATION.exists():
        monkeypatch.setenv("VK_INSTANCE_LAYERS", "VK_LAYER_KHRONOS_validation")
    else:
        warnings.warn(f"LOUD: {VALIDATION} missing (apt-get install vulkan-validationlayers): Vulkan rules unchecked")

    src = tmp_path / "shadow.c"
    src.write_text(c_program(arch))
    rom = tmp_path / "rom.bin"
    rom.write_bytes(pack_romfs(programs(arch, tmp_path)))
    recompile_exefs(build_exefs(src, tmp_path / "exefs"), tmp_path / "bundle", romfs=rom)
    out = tmp_path / "frames"
    r = nxrecomp("run", str(tmp_path / "bundle"), "--run-dir", str(tmp_path / "run"), "--frames-dir", str(out), timeout=240)
    log = (tmp_path / "run" / "run.log").read_text()
    assert r.returncode == 0, log[-3000:]
    assert cpu_lines(log) == ["nvn entry points missing: 0", "frames drawn", "done"], log[-3000:]
    broken = [line for line in log.splitlines() if "VUID-" in line or "Validation Error" in line]
    assert not broken, "\n".join(broken[:5])
    for n, (fmt, op, ref, prog) in enumerate(frames(arch), 1):
        got = read_frame(out / f"frame_{n:06d}.png")
        want = expected(fmt, op, ref, prog)
        bad = np.argwhere((got != want).any(-1))
        assert not len(bad), (
            f"frame {n} {(fmt, op, ref, prog)}: {len(bad)} pixels differ, first at (y, x) "
            f"{tuple(bad[0])}: {got[tuple(bad[0])]} != {want[tuple(bad[0])]}"
        )
    # the three misused submissions are dropped, each naming the draw and the texture slot
    drops = [line for line in log.splitlines() if "dropped submission" in line]
    assert len(drops) == 3, "\n".join(drops) or log[-3000:]
    assert re.search(r"DRAW.*slot 0.*compare", drops[0]) and "plain sampler" in drops[0], drops[0]
    assert re.search(r"DRAW.*slot 0.*compare", drops[1]) and "does not compare" in drops[1], drops[1]
    assert (
        re.search(r"DRAW: texture \d+ in slot 0 is a RGBA8 texture.*depth comparison", drops[2])
        and "needs a depth format" in drops[2]
    ), drops[2]
    # presents numbered in the guest's order: the dropped submissions' two are missing; then the
    # depth itself through a plain lookup and a plain sampler
    n = len(frames(arch))
    assert sorted(p.name for p in out.iterdir()) == [f"frame_{i:06d}.png" for i in [*range(1, n + 1), n + 3, n + 4]]
    got = read_frame(out / f"frame_{n + 3:06d}.png")
    want = np.round(stored_depth("D32F") * 255).astype(np.uint8)
    assert np.abs(got[..., 0].astype(int) - want).max() <= 1
    # an unbound slot under a Dref lookup: the GPU process's depth dummy and NEVER sampler give 0
    got = read_frame(out / f"frame_{n + 4:06d}.png")
    assert not got[..., :3].any() and (got[..., 3] == 255).all()


REFLECT_FS = """#version 450
layout(location=0) in vec2 t;
layout(set=0, binding=4) uniform sampler2DShadow shadow;
layout(set=0, binding=5) uniform sampler2D colour;
layout(set=0, binding=6) uniform sampler2DShadow gathered;
layout(set=0, binding=7) uniform sampler2D fetched;
layout(location=0) out vec4 o;
void main() {
    o = vec4(texture(shadow, vec3(t, 0.5)), texture(colour, t).r, textureGather(gathered, t, 0.5).x,
             texelFetch(fetched, ivec2(t), 0).r);
}"""


def test_reflection_names_how_each_binding_is_looked_up() -> None:
    """glslang's SPIR-V (a compiler nobody here wrote): sampler2DShadow lookups (texture, gather)
    are Dref, sampler2D's are plain, a texel fetch takes no sampler; a module whose loads chain
    into each other is read without hanging."""
    import struct

    from cpu_host.gpu_client.shaders import compile_glsl
    from gpu_host.spirv_reflect import reflect

    r = reflect(compile_glsl(REFLECT_FS, "frag"), "fs")
    assert dict(r.lookups) == {4: "dref", 5: "plain", 6: "dref"}
    assert dict(r.sampler_kinds) == {4: "2d", 5: "2d", 6: "2d", 7: "2d"}
    # OpLoad %2 <- %3, %3 <- %2, then a Dref lookup through %2: a loop of ids, bounded
    words = [
        0x07230203,
        0x10000,
        0,
        10,
        0,
        (4 << 16) | 61,
        1,
        2,
        3,
        (4 << 16) | 61,
        1,
        3,
        2,
        (5 << 16) | 89,
        1,
        4,
        2,
        5,
        (4 << 16) | 15,
        4,
        6,
        0,
    ]
    assert reflect(struct.pack(f"<{len(words)}I", *words), "hostile").lookups == ()


BAD_COMPARE_C = r"""
#include "hz_sdk.h"
#include "nvn.h"
static NvnProcs nvn;
static NVNdevice dev;
static NVNsampler s;
int hz_main(void) {
    nvn_load_procs(&nvn);
    NVNdeviceBuilder db;
    nvn.nvnDeviceBuilderSetDefaults(&db);
    nvn.nvnDeviceInitialize(&dev, &db);
    NVNsamplerBuilder sb;
    nvn.nvnSamplerBuilderSetDefaults(&sb);
    nvn.nvnSamplerBuilderSetDevice(&sb, &dev);
    nvn.nvnSamplerBuilderSetCompare(&sb, NVN_COMPARE_MODE_COMPARE_R_TO_TEXTURE, NVN_COMPARE_GREATER);
    hz_printf("compare sampler: %d\n", (int)nvn.nvnSamplerInitialize(&s, &sb));
    nvn.nvnSamplerBuilderSetCompare(&sb, 2, NVN_COMPARE_LESS);
    nvn.nvnSamplerInitialize(&s, &sb);
    hz_printf("not reached\n");
    return 0;
}
"""


def test_unknown_compare_mode_is_a_named_crash(tmp_path) -> None:
    """A sampler builder's compare mode other than none (0) / R-to-texture (1) ends the guest at
    nvnSamplerInitialize with a report naming the function, the field and the value (the GPU
    process is needed: a sampler is registered with it)."""
    from examples.horizon_hello.build_exefs import build_exefs
    from recompiler.horizon import recompile_exefs

    src = tmp_path / "bad_compare.c"
    src.write_text(BAD_COMPARE_C)
    recompile_exefs(build_exefs(src, tmp_path / "exefs"), tmp_path / "bundle")
    r = nxrecomp("run", str(tmp_path / "bundle"), "--run-dir", str(tmp_path / "run"), timeout=240)
    log = (tmp_path / "run" / "run.log").read_text()
    assert r.returncode != 0, log[-3000:]
    assert cpu_lines(log)[:2] == [
        "compare sampler: 1",
        "nxrecomp: guest crash: host function nvnSamplerInitialize: "
        "nvnSamplerInitialize: compare mode 2 is not in 0..1 in thread handle 0x8001",
    ], log[-3000:]
    assert "not reached" not in log and "hz_main" in log
