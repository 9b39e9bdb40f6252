"""The NVN front end's memory pools, buffers, textures, samplers, descriptor pools and programs:
the guest's objects made and registered with the GPU process. ``NvnResources`` is mixed into
``frontend.NvnService``, whose state and helpers (``_obj``, ``_new``, ``_gpu``, the lock) its
methods use."""

from __future__ import annotations

import logging
import struct

from cpu_host.horizon.hle.abi import Call, GuestError
from cpu_host.horizon.hle.nvn.compute import STAGE_COMPUTE, ComputeFunctions
from cpu_host.horizon.hle.nvn.guest_memory import back_with_memfd
from cpu_host.horizon.hle.nvn.objects import (
    Buffer,
    DescriptorPool,
    MemoryPool,
    Program,
    Sampler,
    Texture,
)
from gpu_host import blocklinear
from gpu_host import packets as P
from gpu_host.spirv_reflect import SpirvError, reflect
from shader_svc.request import feature_bits

from cpu_host.horizon.hle.nvn.tables import (
    FORMATS,
    DEPTH_FORMATS,
    FLAG_DISPLAY,
    FLAG_RENDER_TARGET,
    FLAG_LINEAR,
    TARGET_1D,
    TARGET_1D_ARRAY,
    TARGET_3D,
    POOL_CPU_CACHED,
    SHADER_MAGIC,
    STAGE_VERTEX,
    STAGE_FRAGMENT,
    STAGE_GEOMETRY,
    ARCH_SPIRV,
    HANDLE_SAMPLER_SHIFT,
    block_depth_log2,
    block_height_log2,
    _enum,
)

log = logging.getLogger("cpu_host.nvn")


class NvnResources:
    # -- memory pools, buffers -------------------------------------------------------------
    def pool_initialize(self, c: Call) -> int:
        with self.lock:
            b = self.builders.get(c.arg(1), {})
            addr, size = b.get("memory", 0), b.get("size", 0)
            if not addr or not size or addr % 4096 or size % 4096:
                raise GuestError(f"memory pool storage {addr:#x}+{size:#x} must be non-empty and 4096-aligned")
            c.check(addr, size, 3, "memory pool storage")
            pool = self._new(c, 0, lambda i: MemoryPool(i, addr, size, bool(b.get("flags", 0) & POOL_CPU_CACHED)))
            fd = back_with_memfd(addr, size, f"nx-nvn-pool-{pool.id}")
            self._gpu().create_pool(pool.id, size, fd, flushed_writes=pool.cpu_cached)
            if self.native:
                self.native.pool(pool.id, addr, size)
        return 1

    def pool_address(self, c: Call) -> int:
        with self.lock:
            return self._obj(c, 0, MemoryPool, "nvnMemoryPoolGetBufferAddress").addr

    def pool_flush(self, c: Call) -> None:
        """The game's flush of CPU writes: for a CPU-cached pool, the range goes to the GPU
        process as a DIRTY packet at the next submission (it re-reads only textures there);
        other pools share their pages coherently and need nothing."""
        with self.lock:
            pool = self._obj(c, 0, MemoryPool, "nvnMemoryPoolFlushMappedRange")
            off, size = c.arg(1), c.arg(2)
            if off > pool.size or size > pool.size - off:
                raise GuestError(f"nvnMemoryPoolFlushMappedRange: {off:#x}+{size:#x} past the pool's end {pool.size:#x}")
            if pool.cpu_cached and size:
                self.flushed.append((pool.id, off, size))

    def buffer_initialize(self, c: Call) -> int:
        with self.lock:
            b = self.builders.get(c.arg(1), {})
            pool = self.objects.get(c.read_u64(b.get("pool", 0), "buffer pool")) if b.get("pool") else None
            if not isinstance(pool, MemoryPool):
                raise GuestError("nvnBufferInitialize: the builder names no initialised memory pool")
            off, size = b.get("offset", 0), b.get("size", 0)
            if off + size > pool.size:
                raise GuestError(f"nvnBufferInitialize: {off:#x}+{size:#x} past the pool's end {pool.size:#x}")
            self._new(c, 0, lambda i: Buffer(i, pool, off, size))
        return 1

    def buffer_address(self, c: Call) -> int:
        with self.lock:
            buf = self._obj(c, 0, Buffer, "nvnBufferGetAddress")
            return buf.pool.addr + buf.offset

    # -- textures, samplers, pools of descriptors -------------------------------------------
    def _texture_layout(self, b: dict) -> tuple[str, int, int, int, int]:
        """(format name, width, height, block height log2, storage bytes: every layer)."""
        code = b.get("format", 0)
        if code not in FORMATS:
            raise GuestError(f"texture format {code} is not one nvn.h defines")
        name, bpe, blk = FORMATS[code]
        w, h = b.get("width", 0), b.get("height", 0)
        if not (0 < w <= 16384 and 0 < h <= 16384):
            raise GuestError(f"texture size {w}x{h} out of range")
        ew, eh = -(-w // blk), -(-h // blk)
        bhl = block_height_log2(eh)
        layers = self._layers(b)[0]
        if b.get("flags", 0) & FLAG_LINEAR:
            return name, w, h, bhl, ew * bpe * eh * layers
        if self._volume(b):  # a block-linear 3D texture: its slices share blocks (block depth)
            return name, w, h, bhl, blocklinear.size_bytes_3d(ew * bpe, eh, layers, bhl, block_depth_log2(layers))
        return name, w, h, bhl, blocklinear.size_bytes(ew * bpe, eh, bhl) * layers

    @staticmethod
    def _volume(b: dict) -> bool:
        """Whether a builder's SetTarget is NVN_TEXTURE_TARGET_3D (SetDepth: its slices)."""
        return b.get("target", 0) & 0xFFFFFFFF == TARGET_3D

    @staticmethod
    def _layers(b: dict) -> tuple[int, bool]:
        """(layers, cube) of a builder: SetTarget's kind, SetDepth's layer count (a cube: 6; a
        3D texture: its depth slices)."""
        target = b.get("target", 0) & 0xFFFFFFFF
        if target > TARGET_1D_ARRAY:
            raise GuestError(f"nvnTextureBuilderSetTarget: target {target} is not one nvn.h defines (0..{TARGET_1D_ARRAY})")
        cube = target in (2, 3)
        layers = b.get("layers", 0) & 0xFFFFFFFF or (6 if cube else 1)
        if target in (0, TARGET_1D):
            layers = 1
        if not 1 <= layers <= 2048 or (cube and layers % 6):
            raise GuestError(f"texture layers {layers} (1..2048; a multiple of 6 for cubes)")
        return layers, cube

    def texture_storage_size(self, c: Call) -> int:
        with self.lock:
            return self._texture_layout(self.builders.get(c.arg(0), {}))[4]

    def texture_block_height(self, c: Call) -> int:
        with self.lock:
            return self._texture_layout(self.builders.get(c.arg(0), {}))[3]

    def texture_initialize(self, c: Call) -> int:
        from cpu_host.gpu_client.registry import TextureDesc

        with self.lock:
            b = self.builders.get(c.arg(1), {})
            name, w, h, bhl, size = self._texture_layout(b)
            flags = b.get("flags", 0)
            target = bool(flags & (FLAG_DISPLAY | FLAG_RENDER_TARGET))
            if name in DEPTH_FORMATS and not (flags & FLAG_RENDER_TARGET and not flags & FLAG_DISPLAY):
                raise GuestError(
                    f"nvnTextureInitialize: a {name} texture must be made with the render-target "
                    f"flag (and not the display flag); flags are {flags:#x}"
                )
            pool, off = None, 0
            if b.get("pool"):
                pool = self.objects.get(c.read_u64(b["pool"], "texture pool"))
                if not isinstance(pool, MemoryPool):
                    raise GuestError("nvnTextureInitialize: the builder's storage is no initialised memory pool")
                off = b.get("offset", 0)
                if off + size > pool.size:
                    raise GuestError(
                        f"nvnTextureInitialize: {name} {w}x{h} needs {size:#x} bytes at {off:#x}, "
                        f"past the pool's end {pool.size:#x}"
                    )
            elif not target:
                raise GuestError("nvnTextureInitialize: a sampled texture needs storage in a memory pool")
            layers, cube = self._layers(b)
            volume = self._volume(b)
            one_dim = b.get("target", 0) & 0xFFFFFFFF in (TARGET_1D, TARGET_1D_ARRAY)
            if one_dim and not (h == 1 and not flags & FLAG_DISPLAY and name not in DEPTH_FORMATS):
                # gpu-pools: a sampled 1D texture (no render-target flag) is a W x 1 texture (a 1D
                # array one of W x 1 layers): the GPU process's 2D (2D array) pool entry, where the
                # translation samples 1D textures (nxrecomp/common/kernel_pools.py TEXTURE_VIEW_POOL);
                # with the flag it is also a 1D surface (the 1D surface pools)
                raise GuestError(
                    f"nvnTextureInitialize: a 1D texture is one row of colour texels (a W x 1 texture; with "
                    f"the render-target flag a compute surface), not display ({name} {w}x{h}, flags {flags:#x})"
                )
            if volume and (flags & FLAG_DISPLAY or name in DEPTH_FORMATS or FORMATS[b["format"]][2] > 1):
                # a 3D render target is a compute surface; without the flag a sampled 3D texture
                # (gfx-layers), uploaded from the pool (deswizzled whole where block-linear)
                raise GuestError(
                    f"nvnTextureInitialize: a 3D texture is an uncompressed colour texture, not display "
                    f"({name}, flags {flags:#x})"
                )
            if target and (cube or (layers > 1 and (flags & FLAG_DISPLAY or name in DEPTH_FORMATS))):
                # a layered colour render target (NVN_TEXTURE_TARGET_2D_ARRAY) is a compute
                # surface of the 2D array pool, sampled and written back; never a display or depth
                raise GuestError(
                    f"nvnTextureInitialize: a render target is not a cube, and a layered one is a colour, "
                    f"non-display texture ({layers} layers, {name}, flags {flags:#x})"
                )
            if cube and w != h:
                raise GuestError(f"nvnTextureInitialize: cube faces must be square, not {w}x{h}")
            samples = b.get("samples", 0) & 0xFFFFFFFF or 1
            if samples not in (1, 2, 4, 8):
                raise GuestError(f"nvnTextureInitialize: samples {samples} is not 0, 1, 2, 4 or 8")
            if samples > 1 and not (flags & FLAG_RENDER_TARGET and not flags & FLAG_DISPLAY):
                raise GuestError(
                    f"nvnTextureInitialize: a {samples}-sample texture must be made with the "
                    f"render-target flag (and not the display flag); flags are {flags:#x}"
                )
            tex = self._new(c, 0, lambda i: Texture(i, w, h, name, flags, pool, off, bhl, samples, layers, volume, one_dim))
            linear = bool(flags & FLAG_LINEAR)
            bpe = FORMATS[b["format"]][1]
            self._gpu().register(
                TextureDesc(
                    tex.id,
                    pool.id if pool else 0,
                    off,
                    w,
                    h,
                    name,
                    block_linear=not linear,
                    block_height_log2=bhl,
                    pitch=w * bpe if linear else 0,
                    render_target=target,
                    gob=self.gob,
                    layers=layers,
                    cube=cube,
                    samples=samples,
                    volume=volume,
                    one_dim=one_dim and target,  # a 1D surface; sampled only: an ordinary W x 1 texture
                    block_depth_log2=block_depth_log2(layers) if volume and not linear else 0,
                )
            )
        return 1

    def sampler_initialize(self, c: Call) -> int:
        from cpu_host.gpu_client.registry import SamplerDesc

        with self.lock:
            b = self.builders.get(c.arg(1), {})
            linear = b.get("mag", 0) == 1 or b.get("min", 0) == 1
            repeat = b.get("wrap_s", 0) == 1
            compare = 0
            mode = b.get("compare_mode", 0) & 0xFFFFFFFF
            # NVN_COMPARE_MODE_NONE (0) or COMPARE_R_TO_TEXTURE (1): any other value is a guest bug
            _enum("nvnSamplerInitialize", "compare mode", mode, 1)
            if mode:
                func = b.get("compare_func", 0) & 0xFFFFFFFF
                _enum("nvnSamplerInitialize", "compare func", func, len(P.COMPARE_OPS) - 1)
                compare = 1 + func
            s = self._new(c, 0, lambda i: Sampler(i, linear, repeat))
            self._gpu().register(SamplerDesc(s.id, linear, repeat, compare))
        return 1

    def descriptor_pool_initialize(self, c: Call) -> int:
        with self.lock:
            self._new(c, 0, lambda i: DescriptorPool(i))
        return 1

    def register_texture(self, c: Call) -> None:
        with self.lock:
            slot = c.sarg32(1)
            if not 0 <= slot < 1 << HANDLE_SAMPLER_SHIFT:
                raise GuestError(f"texture id {slot} out of range")
            self.texture_slots[slot] = self._obj(c, 2, Texture, "nvnTexturePoolRegisterTexture")
            if self.native:
                self.native.texture_slot(slot, self.texture_slots[slot].id)

    def register_sampler(self, c: Call) -> None:
        with self.lock:
            slot = c.sarg32(1)
            if not 0 <= slot < 1 << 12:
                raise GuestError(f"sampler id {slot} out of range")
            self.sampler_slots[slot] = self._obj(c, 2, Sampler, "nvnSamplerPoolRegisterSampler")
            if self.native:
                self.native.sampler_slot(slot, self.sampler_slots[slot].id)

    # -- programs ---------------------------------------------------------------------------
    def program_initialize(self, c: Call) -> int:
        with self.lock:
            self._new(c, 0, lambda i: Program(i))
        return 1

    def _geometry(self, i: int, arch: int, code: bytes, features: int) -> tuple[tuple[int, bytes], ...]:
        """A geometry stage's machine code translated for every input primitive (the draw's
        topology picks one in the GPU process; shader_svc/README.md "Geometry stage"), refused by
        name where the GPU process's device runs no geometry stage or the code is SPIR-V (whose
        input primitive is fixed)."""
        if "geometry_shader" not in getattr(self._gpu(), "features", ()):
            raise GuestError(f"shader {i}: a geometry stage, and the GPU process's device has no geometryShader")
        if arch == ARCH_SPIRV:
            raise GuestError(f"shader {i}: a SPIR-V geometry stage is not served (guest machine code is)")
        from shader_svc.request import GEOMETRY_STAGES

        return tuple((s, self.translate(arch, s, code, features)) for s in GEOMETRY_STAGES)

    def program_set_shaders(self, c: Call) -> int:
        from cpu_host.gpu_client.registry import ProgramDesc

        with self.lock:
            prog = self._obj(c, 0, Program, "nvnProgramSetShaders")
            count, stages = c.sarg32(1), c.arg(2)
            if not 1 <= count <= 5:
                raise GuestError(f"nvnProgramSetShaders: stage count {count}")
            spirv: dict[int, bytes] = {}
            geometry: tuple[tuple[int, bytes], ...] = ()  # gfx-geom: (input primitive, SPIR-V) per input
            features = feature_bits(getattr(self._gpu(), "features", ()))
            for i in range(count):
                data, control = struct.unpack("<QQ", c.read(stages + 16 * i, 16, "NVNshaderData"))
                magic, stage, arch, size = struct.unpack("<IIII", c.read(control, 16, "NVNshaderControl"))
                if magic != SHADER_MAGIC:
                    raise GuestError(f"shader {i}: control magic {magic:#x} is not 'NXSH'")
                if stage == STAGE_COMPUTE and count == 1:  # a compute program (nvn/compute.py)
                    return ComputeFunctions(self).set_shaders(c, prog, control, data, arch, size, features)
                if stage not in (STAGE_VERTEX, STAGE_FRAGMENT, STAGE_GEOMETRY):
                    raise GuestError(
                        f"shader {i}: stage {stage} (vertex 2, fragment 3 and geometry 4 are served; compute 1 alone)"
                    )
                if stage in spirv or (stage == STAGE_GEOMETRY and geometry):
                    raise GuestError(f"shader {i}: a second shader of stage {stage}")
                pool, off = self._pool_at(data, size, f"shader {i} code")
                code = c.read(data, size, f"shader {i} code")
                if stage == STAGE_GEOMETRY:
                    geometry = self._geometry(i, arch, code, features)
                    continue
                spirv[stage] = code if arch == ARCH_SPIRV else self.translate(arch, stage, code, features)
            if set(spirv) != {STAGE_VERTEX, STAGE_FRAGMENT}:
                return 0
            try:
                stages = [*spirv.items(), *((f"geometry {g}", m) for g, m in geometry)]
                prog.pools = any(reflect(code, f"stage {st}").pools for st, code in stages)
            except SpirvError as e:
                raise GuestError(f"nvnProgramSetShaders: {e}") from None
            self._gpu().register(ProgramDesc(prog.id, spirv[STAGE_VERTEX], spirv[STAGE_FRAGMENT], geometry=geometry))
            prog.registered = True
            if self.native:
                self.native.program(prog.id, prog.pools)
        return 1
