"""What the GPU process knows about the client's objects: pools (mapped memfds), textures,
samplers, programs.  Everything here is rebuilt from the client's registry after a restart.
Registration checks every field; a bad descriptor raises ObjectError naming it."""

from __future__ import annotations

import fcntl
import functools
import mmap
import os
from dataclasses import dataclass
from typing import Protocol

from gpu_host import blocklinear
from gpu_host.formats import FORMATS, TexFormat
from gpu_host.spirv_reflect import Reflection, SpirvError, reflect

MAX_TEX_DIM = 8192
MAX_LAYERS = 2048
MAX_POOL = 1 << 34
SAMPLE_COUNTS = (1, 2, 4, 8)  # a render target's sample counts (the device may offer fewer)


class ObjectError(ValueError):
    pass


class Memory(Protocol):
    """Where pool bytes come from: live mapped memfds, or a recording."""

    def pool_size(self, pool: int) -> int | None: ...
    def read(self, pool: int, offset: int, size: int) -> memoryview: ...


@dataclass(frozen=True)
class Texture:
    id: int
    pool: int
    offset: int
    width: int
    height: int
    fmt: TexFormat
    block_linear: bool
    block_height_log2: int
    pitch: int
    render_target: bool
    gob: str = "fermi"  # GOB kind (gpu_host/blocklinear.py): Switch 1 "fermi", Switch 2 "turing"
    layers: int = 1  # array layers (a cube: 6 faces per cube, +X -X +Y -Y +Z -Z)
    cube: bool = False  # sampled as a cube (layers 6) or cube array (layers 6n)
    samples: int = 1  # a multisampled render target (2, 4, 8): drawn into, resolved, never sampled
    # A layered render target (layers > 1, colour, one sample, not a cube) is GPU-owned like any
    # render target but only a surface pool entry (compute), sampled and written back (every
    # layer); draws and PRESENT refuse it (validate.py).
    # A volume (3D) render target: ``layers`` depth slices of one 3D image; pitch-linear (slices
    # ``layer_stride`` apart as layers are) or block-linear (blocks ``2**block_depth_log2`` slices
    # deep: blocklinear.size_bytes_3d).  A volume render target is a surface of the 3D pool
    # (compute), written back and sampled; a volume that is not a render target is uploaded from
    # its pool bytes (deswizzled whole where block-linear) and sampled as a 3D texture (gfx-layers).
    # Never drawn into or presented.
    volume: bool = False
    # A 1D render target (``one_dim``): one row (height 1), an ordinary 2D image (array) to every
    # other command; COMPUTE_SURFACE puts it in the 1D pool (one layer) or the 1D array pool.
    one_dim: bool = False
    block_depth_log2: int = 0  # a block-linear volume's block depth in slices (log2, 0..5)

    @property
    def row_bytes(self) -> int:
        """Bytes of one row of elements (texels, or blocks of a compressed format)."""
        return self.fmt.blocks(self.width, self.height)[0] * self.fmt.bpp

    @property
    def rows(self) -> int:
        """Rows of elements."""
        return self.fmt.blocks(self.width, self.height)[1]

    @property
    def layer_size(self) -> int:
        """Bytes of one layer."""
        wb = self.row_bytes
        if self.block_linear:
            return blocklinear.size_bytes(wb, self.rows, self.block_height_log2)
        return self.pitch * (self.rows - 1) + wb

    @property
    def layer_stride(self) -> int:
        """Bytes from one layer to the next: whole blocks (block-linear) or whole rows (pitch)."""
        return self.layer_size if self.block_linear else self.pitch * self.rows

    @property
    def byte_size(self) -> int:
        if self.volume and self.block_linear:  # slices share blocks: the whole volume's slabs
            return blocklinear.size_bytes_3d(
                self.row_bytes, self.rows, self.layers, self.block_height_log2, self.block_depth_log2
            )
        return self.layer_stride * (self.layers - 1) + self.layer_size

    @property
    def view_kind(self) -> str:
        """How shaders see it: "2d", "2d_array", "cube", "cube_array" or "3d"."""
        if self.cube:
            return "cube" if self.layers == 6 else "cube_array"
        if self.volume:  # a 3D view of its ``layers`` slices (the native replay hands these to Python)
            return "3d"
        return "2d" if self.layers == 1 else "2d_array"


@dataclass(frozen=True)
class Sampler:
    id: int
    linear: bool
    repeat: bool
    compare: int = 0  # depth compare: 0 none, else 1 + compare op (packets.COMPARE_OPS)


# gfx-geom: a geometry stage's modules, one per input primitive (shader.proto Stage numbers),
# and the input primitive each draw topology (packets.TOPOLOGIES) gives its geometry stage
GEOMETRY_INPUTS = {4: "points", 5: "lines", 6: "triangles", 7: "lines_adjacency", 8: "triangles_adjacency"}
TOPOLOGY_INPUT = {0: "triangles", 1: "triangles", 2: "lines", 3: "points"}
GEOMETRY_MODEL = 3  # SPIR-V ExecutionModel Geometry
# gfx-layers: the SpecId of the framebuffer's layer count in a geometry module that writes Layer
# (shader_svc/lower/gfx_geometry.py's LAYER_COUNT_SPEC_ID; the pipeline sets it to the target's layers)
LAYER_COUNT_SPEC_ID = 0x4C41
# shader-tex: the SpecId of the viewport count in a geometry stage that writes ViewportIndex
# (shader_svc/lower/gfx_geometry.py's VIEWPORT_COUNT_SPEC_ID; the pipeline sets it to the number of
# viewports the replay sets, Device.viewports)
VIEWPORT_COUNT_SPEC_ID = 0x5650


@dataclass(frozen=True)
class Program:
    id: int
    vertex_spirv: bytes
    fragment_spirv: bytes
    vertex: Reflection
    fragment: Reflection
    # gfx-geom: ((input primitive name, SPIR-V), ...) and their reflections; () without a geometry stage
    geometry: tuple[tuple[str, bytes], ...] = ()
    geometry_refl: tuple[Reflection, ...] = ()

    @functools.cached_property
    def digest(self) -> bytes:
        """Computed once: pipelines are looked up by it at every pipeline change of a replay."""
        import hashlib

        geo = b"".join(b"\0" + name.encode() + b"\0" + code for name, code in self.geometry)
        return hashlib.sha256(self.vertex_spirv + b"\0" + self.fragment_spirv + geo).digest()

    @property
    def _stages(self) -> tuple[Reflection, ...]:
        return (self.vertex, self.fragment, *self.geometry_refl)

    def geometry_for(self, topology: int) -> bytes | None:
        """The geometry module a draw of ``topology`` (packets.TOPOLOGIES) runs, None without a
        geometry stage; one made for another input primitive only is refused by name."""
        if not self.geometry:
            return None
        want = TOPOLOGY_INPUT[topology]
        code = dict(self.geometry).get(want)
        if code is None:
            raise ObjectError(
                f"program {self.id}: its geometry stage has modules for {', '.join(n for n, _ in self.geometry)}, "
                f"a draw of topology {topology} needs one for {want}"
            )
        return code

    @functools.cached_property
    def writes_layer(self) -> bool:
        """Whether the geometry stage writes Layer (declares the layer count constant): its
        pipelines are specialised on the bound target's layer count."""
        return any(LAYER_COUNT_SPEC_ID in r.spec_ids for r in self.geometry_refl)

    @functools.cached_property
    def writes_viewport(self) -> bool:
        """Whether the geometry stage writes ViewportIndex (declares the viewport count constant,
        shader-tex): its pipelines have the device's viewports (Device.viewports) and draws with
        it set all of them (VIEWPORT, VIEWPORT_INDEXED)."""
        return any(VIEWPORT_COUNT_SPEC_ID in r.spec_ids for r in self.geometry_refl)

    @functools.cached_property
    def sampler_kinds(self) -> dict[int, str]:
        """Binding -> the view kind a stage samples it as (spirv_reflect's kinds)."""
        out: dict[int, str] = {}
        for r in reversed(self._stages):
            out.update(dict(r.sampler_kinds))
        return out

    @functools.cached_property
    def lookups(self) -> dict[int, str]:
        """Binding -> "dref", "plain" or "both": whether the stages' lookups through it compare
        with a reference (spirv_reflect's lookups; every stage's uses merged)."""
        out: dict[int, str] = {}
        for b, u in sum((r.lookups for r in self._stages), ()):
            out[b] = u if out.get(b, u) == u else "both"
        return out

    @property
    def pools(self) -> bool:
        """Whether a stage reads the bindless texture/sampler pools (descriptor set 1)."""
        return any(r.pools for r in self._stages)


class MappedPools:
    """Pools mapped from memfds sent by the client.  Mapped read-write where the memfd allows
    it, for WRITEBACK (render targets copied into guest memory); everything else only reads."""

    def __init__(self) -> None:
        self.maps: dict[int, mmap.mmap] = {}
        self.writable: set[int] = set()

    def add(self, pool: int, fd: int, size: int) -> None:
        try:
            st_size = os.fstat(fd).st_size
            seals = fcntl.fcntl(fd, fcntl.F_GET_SEALS)
        except OSError as e:
            raise ObjectError(f"pool {pool}: fd is not a sealable memfd ({e.strerror})") from None
        if not seals & fcntl.F_SEAL_SHRINK:
            # Without the seal the client could shrink the file under our mapping (SIGBUS).
            raise ObjectError(f"pool {pool}: memfd lacks F_SEAL_SHRINK")
        if not 0 < size <= st_size or size > MAX_POOL:
            raise ObjectError(f"pool {pool}: field size {size} does not fit its memfd of {st_size} bytes")
        old = self.maps.pop(pool, None)
        if old is not None:
            old.close()
        self.writable.discard(pool)
        try:
            self.maps[pool] = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
            self.writable.add(pool)
        except PermissionError:  # a read-only fd or F_SEAL_WRITE: no WRITEBACK into this pool
            self.maps[pool] = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ)

    def pool_size(self, pool: int) -> int | None:
        m = self.maps.get(pool)
        return None if m is None else len(m)

    def read(self, pool: int, offset: int, size: int) -> memoryview:
        return memoryview(self.maps[pool])[offset : offset + size]

    def can_write(self, pool: int) -> bool:
        return pool in self.writable

    def write(self, pool: int, offset: int, data: bytes | memoryview) -> None:
        self.maps[pool][offset : offset + len(data)] = data

    def close(self) -> None:
        for m in self.maps.values():
            try:
                m.close()
            except BufferError:
                pass
        self.maps.clear()


class Objects:
    def __init__(self, memory: Memory) -> None:
        self.compute_programs: dict = {}  # id -> compute.ComputeProgram (RegisterProgram of a GLCompute module)
        self.memory = memory
        self.textures: dict[int, Texture] = {}
        self.samplers: dict[int, Sampler] = {}
        self.programs: dict[int, Program] = {}
        self.flushed_pools: set[int] = set()  # pools whose CPU writes arrive as DIRTY packets

    def add_texture(
        self,
        id: int,
        pool: int,
        offset: int,
        width: int,
        height: int,
        format: str,
        block_linear: bool,
        block_height_log2: int,
        pitch: int,
        render_target: bool,
        gob: str = "fermi",
        layers: int = 1,
        cube: bool = False,
        samples: int = 1,
        volume: bool = False,
        one_dim: bool = False,
        block_depth_log2: int = 0,
    ) -> Texture:
        fmt = FORMATS.get(format)
        if fmt is None:
            raise ObjectError(f"texture {id}: field format {format!r} is not one of {sorted(FORMATS)}")
        if not (0 < width <= MAX_TEX_DIM and 0 < height <= MAX_TEX_DIM):
            raise ObjectError(f"texture {id}: size {width}x{height} is not in 1..{MAX_TEX_DIM}")
        if render_target and not fmt.renderable:
            raise ObjectError(f"texture {id}: format {format} cannot be a render target")
        if fmt.depth and not render_target:
            # Depth surfaces are GPU-owned here: nothing uploads depth texels from a pool.
            raise ObjectError(f"texture {id}: field format {format} is a depth format; it must be a render target")
        if block_linear and block_height_log2 > 5:
            raise ObjectError(f"texture {id}: field block_height_log2 {block_height_log2} is above 5")
        gob = gob or "fermi"  # recordings and clients from before GOB kinds: Switch 1's
        if gob not in blocklinear.GOB_KINDS:
            raise ObjectError(f"texture {id}: field gob {gob!r} is not one of {', '.join(blocklinear.GOB_KINDS)}")
        layers = layers or 1  # clients from before layers send 0
        if not 1 <= layers <= MAX_LAYERS:
            raise ObjectError(f"texture {id}: field layers {layers} is not in 1..{MAX_LAYERS}")
        if cube and (layers % 6 or width != height):
            raise ObjectError(
                f"texture {id}: a cube needs square faces and layers a multiple of 6 "
                f"(got {width}x{height}, field layers {layers})"
            )
        if render_target and (cube or (layers > 1 and fmt.depth)):
            # a layered colour target is a surface (compute) and a sampled array, never drawn into
            raise ObjectError(
                f"texture {id}: a render target is not a cube and a layered one is a colour format "
                f"(field layers {layers}, cube {cube}, format {format})"
            )
        samples = samples or 1  # clients from before multisampling send 0
        if samples not in SAMPLE_COUNTS:
            raise ObjectError(f"texture {id}: field samples {samples} is not one of {SAMPLE_COUNTS}")
        if samples > 1 and not render_target:
            raise ObjectError(f"texture {id}: field samples {samples} needs a render target (only those are multisampled)")
        if volume and (fmt.depth or cube or samples not in (0, 1) or fmt.block_w != 1 or fmt.block_h != 1):
            # a sampled volume is uploaded slice by slice (or deswizzled whole): uncompressed colour only
            raise ObjectError(
                f"texture {id}: a volume (3D) texture is a one-sample, uncompressed colour texture (format {format}, "
                f"cube {cube}, samples {samples})"
            )
        if block_depth_log2 and not (volume and block_linear):
            # only a block-linear volume stacks slices in its blocks
            raise ObjectError(
                f"texture {id}: field block_depth_log2 {block_depth_log2} needs a block-linear volume "
                f"(volume {volume}, block_linear {block_linear})"
            )
        if block_depth_log2 > 5:
            raise ObjectError(f"texture {id}: field block_depth_log2 {block_depth_log2} is above 5")
        if one_dim and not (render_target and not fmt.depth and not cube and not volume and height == 1 and samples in (0, 1)):
            # a 1D surface's twin is a 1D image filled through a buffer from this one row (compute.py)
            raise ObjectError(
                f"texture {id}: a 1D texture is a one-row (height 1), one-sample, non-cube, non-volume colour render "
                f"target (format {format}, height {height}, render_target {render_target}, cube {cube}, "
                f"volume {volume}, samples {samples})"
            )
        if samples > 1 and layers > 1:
            raise ObjectError(
                f"texture {id}: field samples {samples} with field layers {layers} (a layered target has one sample)"
            )
        row = fmt.blocks(width, height)[0] * fmt.bpp
        if not block_linear and not render_target and pitch < row:
            raise ObjectError(f"texture {id}: field pitch {pitch} is below a row of {row} bytes")
        t = Texture(
            id,
            pool,
            offset,
            width,
            height,
            fmt,
            block_linear,
            block_height_log2,
            pitch,
            render_target,
            gob,
            layers,
            cube,
            samples,
            volume,
            one_dim,
            block_depth_log2,
        )
        if not render_target:
            psize = self.memory.pool_size(pool)
            if psize is None:
                raise ObjectError(f"texture {id}: field pool {pool} is not a registered pool")
            if offset + t.byte_size > psize:
                raise ObjectError(f"texture {id}: bytes {offset:#x}+{t.byte_size:#x} run past pool {pool}'s end {psize:#x}")
        self.textures[id] = t
        return t

    def add_sampler(self, id: int, linear: bool, repeat: bool, compare: int = 0) -> Sampler:
        if not 0 <= compare <= 8:
            raise ObjectError(f"sampler {id}: field compare {compare} is not 0 (no compare) or 1..8 (1 + compare op)")
        s = Sampler(id, linear, repeat, compare)
        self.samplers[id] = s
        return s

    def add_program(self, id: int, vertex_spirv: bytes, fragment_spirv: bytes, geometry=()) -> Program:
        """A graphics program; ``geometry``: ((input primitive: shader.proto Stage 4..8, SPIR-V),
        ...) of its geometry stage (gfx-geom), each checked to be a geometry module."""
        try:
            v = reflect(vertex_spirv, f"program {id} vertex")
            f = reflect(fragment_spirv, f"program {id} fragment")
        except SpirvError as e:
            raise ObjectError(str(e)) from None
        if v.execution_model != 0 or f.execution_model != 4:
            raise ObjectError(
                f"program {id}: stages are models {v.execution_model}/{f.execution_model}, expected vertex (0) and fragment (4)"
            )
        _spirv_val(vertex_spirv, f"program {id} vertex")
        _spirv_val(fragment_spirv, f"program {id} fragment")
        geo, grefl = _geometry_modules(id, geometry)
        p = Program(id, vertex_spirv, fragment_spirv, v, f, geo, grefl)
        self.programs[id] = p
        return p


def _geometry_modules(id: int, geometry) -> tuple[tuple[tuple[str, bytes], ...], tuple[Reflection, ...]]:
    """(name, SPIR-V) and reflection of each of a program's geometry modules, checked: a known
    input primitive once each, a geometry execution model, spirv-val clean (gfx-geom)."""
    out, refl = [], []
    for inp, code in sorted(geometry):
        what = f"program {id} geometry[{inp}]"
        name = GEOMETRY_INPUTS.get(inp)
        if name is None:
            raise ObjectError(f"{what}: input primitive {inp} is not one of {sorted(GEOMETRY_INPUTS)} (shader.proto Stage)")
        if any(n == name for n, _ in out):
            raise ObjectError(f"{what}: a second module for {name}")
        try:
            r = reflect(code, what)
        except SpirvError as e:
            raise ObjectError(str(e)) from None
        if r.execution_model != GEOMETRY_MODEL:
            raise ObjectError(f"{what}: execution model {r.execution_model}, expected geometry ({GEOMETRY_MODEL})")
        _spirv_val(code, what)
        out.append((name, bytes(code)))
        refl.append(r)
    return tuple(out), tuple(refl)


def _spirv_val(code: bytes, what: str) -> None:
    """Refuse modules spirv-val rejects: invalid SPIR-V can crash a driver."""
    import subprocess
    import tempfile

    with tempfile.NamedTemporaryFile(suffix=".spv") as f:
        f.write(code)
        f.flush()
        r = subprocess.run(["spirv-val", "--target-env", "vulkan1.3", f.name], capture_output=True, text=True, errors="replace")
    if r.returncode != 0:
        raise ObjectError(f"{what}: spirv-val rejects it: {(r.stderr or r.stdout).strip().splitlines()[0][:200]}")
