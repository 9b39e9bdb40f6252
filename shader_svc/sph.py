"""The shader program header (SPH) that starts every graphics program of Maxwell and later
GPUs: what stage it is, which attributes it reads and writes, where a fragment program's colour
outputs are.  Parsed into a ``Header`` record; anything that is not a header of the requested
stage is refused with a ``HeaderError`` naming the field.

Layout facts (public: envytools' and Mesa NAK's descriptions of the class 0xA097 SPH; nothing
copied): 20 words in version 3, 32 in version 4 (Turing and later).  Word 0: SPH type in bits
0..4 (1 = vertex/tessellation/geometry, 2 = pixel), version 5..9, shader type 10..13 (1 vertex,
2 tessellation init, 3 tessellation, 4 geometry, 5 pixel), MRT enable 14, kills pixels 15.
Bit ranges over the whole header: input system values 160..191 (bit i: attribute address 4*i),
generic inputs 192..319 for vertex stages (bit i: address 0x80 + 4*i) or 192..447 for pixel
programs (2 bits per component: 0 unused, 1 constant, 2 perspective, 3 screen linear), output
system values 400..431 and generic outputs 432..559 (vertex stages), colour targets 576..607
(4 bits per target, one per component), sample mask 608, depth 609 (pixel programs).

Geometry programs (shader type 4; Mesa NAK's ``sph.rs`` setters, public): threads per input
primitive (the invocation count) in word 2 bits 24..31, output topology in word 3 bits 24..27
(1 point list, 6 line strip, 7 triangle strip; anything else is refused), the maximum output
vertex count in word 4 bits 0..11; word 0 bit 24 asks for a passthrough program
(NV_geometry_shader_passthrough: the input vertices go on as they are), which is refused by name
(its attribute rules are not established here).  The input primitive is no part of the header: the hardware
reads any primitive's vertices through ISBERD, while SPIR-V declares it, so the request names it
(stage ``geometry_points`` ... ``geometry_triangles_adjacency``; the GPU process asks for the
one its draw's topology needs, as Ryujinx specialises its geometry shaders on the topology).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from nxrecomp.common.errors import NxError

SIZES = {3: 0x50, 4: 0x80}
SPH_TYPES = {1: "vtg", 2: "ps"}
SHADER_TYPES = {1: "vertex", 2: "tessellation_init", 3: "tessellation", 4: "geometry", 5: "fragment"}
INTERP = {0: "unused", 1: "constant", 2: "perspective", 3: "linear"}
POSITION = 0x70  # attribute addresses of the position (x, y, z, w)
GENERIC = 0x80  # generic attribute N component c at 0x80 + 16*N + 4*c
# geometry: output topology codes (SPH word 3 bits 24..27) -> SPIR-V execution mode
OUT_TOPOLOGY = {1: "OutputPoints", 6: "OutputLineStrip", 7: "OutputTriangleStrip"}
# input primitives a geometry translation is made for: (SPIR-V execution mode, vertices)
IN_PRIMS = {
    "points": ("InputPoints", 1),
    "lines": ("InputLines", 2),
    "lines_adjacency": ("InputLinesAdjacency", 4),
    "triangles": ("Triangles", 3),
    "triangles_adjacency": ("InputTrianglesAdjacency", 6),
}
MAX_GS_VERTICES = 1024  # Vulkan's maxGeometryOutputVertices is at least 256; NVIDIA's and lavapipe's 1024
MAX_GS_INVOCATIONS = 32  # Vulkan's maxGeometryShaderInvocations minimum (NVIDIA's and lavapipe's too)


class HeaderError(NxError):
    pass


@dataclass(frozen=True)
class Header:
    stage: str  # 'vertex', 'geometry' or 'fragment' (others refused)
    version: int
    size: int  # bytes before the first instruction
    kills_pixels: bool
    inputs: frozenset[int]  # attribute addresses read (generic + system values)
    outputs: frozenset[int]  # vertex: attribute addresses written
    interp: tuple[tuple[int, str], ...]  # fragment: (address, 'constant'|'perspective'|'linear')
    targets: tuple[int, ...]  # fragment: component mask of colour targets 0..7
    writes_depth: bool
    writes_sample_mask: bool
    # geometry programs: the input primitive (IN_PRIMS key, from the request), the output
    # topology's execution mode, the maximum output vertices, the invocations per primitive
    in_prim: str = ""
    out_topology: str = ""
    max_vertices: int = 0
    invocations: int = 0

    def interpolation(self, addr: int) -> str:
        return dict(self.interp).get(addr, "unused")

    def to_dict(self) -> dict:
        return {
            "stage": self.stage,
            "version": self.version,
            "size": self.size,
            "kills_pixels": self.kills_pixels,
            "inputs": sorted(self.inputs),
            "outputs": sorted(self.outputs),
            "interp": [list(x) for x in self.interp],
            "targets": list(self.targets),
            "writes_depth": self.writes_depth,
            "writes_sample_mask": self.writes_sample_mask,
            **({"geometry": [self.in_prim, self.out_topology, self.max_vertices, self.invocations]} if self.in_prim else {}),
        }


def _bits(words: tuple[int, ...], lo: int, n: int) -> int:
    v = 0
    for i in range(n):
        b = lo + i
        v |= ((words[b // 32] >> (b % 32)) & 1) << i
    return v


def parse(code: bytes, stage: str) -> Header:
    """The header at the start of ``code`` for a program of ``stage`` ('vertex', 'fragment' or
    'geometry_<input primitive>')."""
    in_prim = stage[len("geometry_") :] if stage.startswith("geometry_") else ""
    if in_prim:
        if in_prim not in IN_PRIMS:
            raise HeaderError(f"geometry input primitive {in_prim!r} unknown (known: {', '.join(IN_PRIMS)})", field="stage")
        stage = "geometry"
    if len(code) < 4:
        raise HeaderError(f"program of {len(code)} bytes is shorter than a shader program header", field="code")
    w0 = struct.unpack_from("<I", code)[0]
    sph_type, version, shader_type = w0 & 0x1F, (w0 >> 5) & 0x1F, (w0 >> 10) & 0xF
    if sph_type not in SPH_TYPES:
        raise HeaderError(
            f"header word 0 = {w0:#010x}: SPH type {sph_type} is neither 1 (vertex/geometry) nor 2 (pixel)",
            field="code",
            offset=0,
        )
    if version not in SIZES:
        raise HeaderError(f"header word 0 = {w0:#010x}: SPH version {version} unknown (known: 3, 4)", field="code", offset=0)
    size = SIZES[version]
    if len(code) < size:
        raise HeaderError(
            f"header truncated: version {version} needs {size} bytes, program has {len(code)}", field="code", offset=len(code)
        )
    kind = SHADER_TYPES.get(shader_type)
    if kind is None:
        raise HeaderError(f"header word 0 = {w0:#010x}: shader type {shader_type} unknown", field="code", offset=0)
    if (kind == "fragment") != (sph_type == 2):
        raise HeaderError(
            f"header word 0 = {w0:#010x}: SPH type {SPH_TYPES[sph_type]} does not go with shader type {kind}",
            field="code",
            offset=0,
        )
    if kind not in ("vertex", "fragment", "geometry"):
        raise HeaderError(f"{kind} programs are not translated yet", field="stage")
    if kind != stage:
        raise HeaderError(f"header is for a {kind} program, the request says {stage}", field="stage")
    words = struct.unpack_from(f"<{size // 4}I", code)
    sys_in = _bits(words, 160, 32)
    inputs = {4 * i for i in range(32) if sys_in >> i & 1}
    interp: list[tuple[int, str]] = []
    outputs: set[int] = set()
    targets: tuple[int, ...] = ()
    depth = sample_mask = False
    geo: tuple[str, str, int, int] = ("", "", 0, 0)
    if kind == "geometry":
        geo = _geometry(words, in_prim)
    if kind != "fragment":
        gen = _bits(words, 192, 128)
        inputs |= {GENERIC + 4 * i for i in range(128) if gen >> i & 1}
        sys_out = _bits(words, 400, 32)
        outputs = {4 * i for i in range(32) if sys_out >> i & 1}
        gout = _bits(words, 432, 128)
        outputs |= {GENERIC + 4 * i for i in range(128) if gout >> i & 1}
    else:
        gen = _bits(words, 192, 256)
        for i in range(128):
            m = gen >> (2 * i) & 3
            if m:
                inputs.add(GENERIC + 4 * i)
                interp.append((GENERIC + 4 * i, INTERP[m]))
        t = _bits(words, 576, 32)
        targets = tuple(t >> (4 * k) & 0xF for k in range(8))
        sample_mask, depth = bool(_bits(words, 608, 1)), bool(_bits(words, 609, 1))
    return Header(
        kind,
        version,
        size,
        bool(w0 >> 15 & 1),
        frozenset(inputs),
        frozenset(outputs),
        tuple(interp),
        targets,
        depth,
        sample_mask,
        *geo,
    )


def _geometry(words: tuple[int, ...], in_prim: str) -> tuple[str, str, int, int]:
    """(input primitive, output topology mode, max output vertices, invocations) of a geometry
    header, each checked (module docstring)."""
    if words[0] >> 24 & 1:
        raise HeaderError(
            f"header word 0 = {words[0]:#010x}: a passthrough geometry program (bit 24) is not translated",
            field="code",
            offset=0,
        )
    topo, nmax, inv = _bits(words, 3 * 32 + 24, 4), _bits(words, 4 * 32, 12), _bits(words, 2 * 32 + 24, 8)
    if topo not in OUT_TOPOLOGY:
        raise HeaderError(
            f"header word 3 = {words[3]:#010x}: geometry output topology {topo} unknown "
            f"(1 point list, 6 line strip, 7 triangle strip)",
            field="code",
            offset=12,
        )
    if not 1 <= nmax <= MAX_GS_VERTICES:
        raise HeaderError(
            f"header word 4 = {words[4]:#010x}: geometry max output vertex count {nmax} is not 1..{MAX_GS_VERTICES}",
            field="code",
            offset=16,
        )
    inv = max(inv, 1)  # 0 and 1 both mean one invocation per primitive
    if inv > MAX_GS_INVOCATIONS:
        raise HeaderError(
            f"header word 2 = {words[2]:#010x}: geometry threads per input primitive {inv} is more than {MAX_GS_INVOCATIONS}",
            field="code",
            offset=8,
        )
    return in_prim, OUT_TOPOLOGY[topo], nmax, inv


def build(
    stage: str,
    inputs: dict[int, str] | set[int] = frozenset(),
    outputs: set[int] = frozenset(),
    targets: tuple[int, ...] = (),
    version: int = 4,
    kills_pixels: bool = False,
    geometry: tuple[int, int, int] | None = None,
) -> bytes:
    """A header for test programs and the demo's shaders (the inverse of ``parse``).  Vertex:
    ``inputs``/``outputs`` are attribute addresses.  Fragment: ``inputs`` maps generic input
    addresses to 'constant'/'perspective'/'linear' (position 0x70..0x7c as a system value),
    ``targets`` the component masks of colour targets 0..7.  Geometry (``stage`` 'geometry'):
    ``geometry`` = (output topology code, max output vertices, threads per input primitive),
    written as given (tests write bad ones too)."""
    nbits = SIZES[version] * 8
    bits = [0] * nbits

    def setf(lo: int, n: int, v: int) -> None:
        for i in range(n):
            bits[lo + i] = v >> i & 1

    frag = stage == "fragment"
    setf(0, 5, 2 if frag else 1)
    setf(5, 5, version)
    setf(10, 4, 5 if frag else (4 if stage == "geometry" else 1))
    if geometry is not None:
        setf(3 * 32 + 24, 4, geometry[0])
        setf(4 * 32, 12, geometry[1])
        setf(2 * 32 + 24, 8, geometry[2])
    setf(14, 1, 1 if frag else 0)
    setf(15, 1, int(kills_pixels))
    code = {v: k for k, v in INTERP.items()}
    for a in inputs:
        if a < GENERIC:
            setf(160 + a // 4, 1, 1)
        elif frag:
            setf(192 + 2 * ((a - GENERIC) // 4), 2, code[inputs[a]])  # type: ignore[index]
        else:
            setf(192 + (a - GENERIC) // 4, 1, 1)
    for a in outputs:
        setf(400 + a // 4 if a < GENERIC else 432 + (a - GENERIC) // 4, 1, 1)
    for k, m in enumerate(targets):
        setf(576 + 4 * k, 4, m)
    words = [sum(bits[32 * i + j] << j for j in range(32)) for i in range(nbits // 32)]
    return struct.pack(f"<{len(words)}I", *words)
