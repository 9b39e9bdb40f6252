"""First pass over a submission: check every handle, pool range and piece of state a command
needs, and list the memory the replay must snapshot.  Nothing reaches Vulkan before this passes,
so a hostile submission is dropped whole with one clear message."""

from __future__ import annotations

from dataclasses import dataclass, field

from gpu_host import compute_check, events, present_image
from gpu_host import packets as P
from gpu_host.objects import Objects, Program, Sampler, Texture
from gpu_host.ring_layout import NUM_FENCES

MAX_UNIFORM = 65536


class SubmissionError(ValueError):
    pass


@dataclass
class Plan:
    seq: int
    commands: list[tuple]
    ranges: list[tuple[int, int, int]] = field(default_factory=list)  # (pool, offset, size) to snapshot
    uploads: list[Texture] = field(default_factory=list)  # textures read from pool memory
    dirty: list[tuple[int, int, int]] = field(default_factory=list)  # (pool, offset, size) the CPU wrote
    waits: int = 0  # EVENT_WAITs: replayed in parts (events.py)
    images: list[tuple[int, int, int]] = field(default_factory=list)  # PRESENT_IMAGE ranges (present_image.py)
    image_cmds: list[tuple] = field(default_factory=list)  # the PRESENT_IMAGE packets, in order


def _range(objects: Objects, where: str, pool: int, offset: int, size: int) -> None:
    psize = objects.memory.pool_size(pool)
    if psize is None:
        raise SubmissionError(f"{where}: field pool {pool} is not a registered pool")
    if size == 0 or offset + size > psize:
        raise SubmissionError(f"{where}: range {offset:#x}+{size:#x} is empty or runs past pool {pool}'s end {psize:#x}")


def _depth_target(where: str, cmd: tuple, need_texture) -> tuple[Texture | None, Texture]:
    """DEPTH_TARGET's (colour, depth) pair, checked: a colour render target or none, a render target
    of a depth format (or none, not both), of one size."""
    color = None if cmd[1] == P.EMPTY else need_texture(cmd[1])
    depth = None if cmd[2] == P.EMPTY else need_texture(cmd[2])
    if color is None and depth is None:
        raise SubmissionError(f"{where}: fields color and depth are both empty")
    if color is not None:
        if not color.render_target:
            raise SubmissionError(f"{where}: field color = {color.id} was not registered as a render target")
        if color.fmt.depth:
            raise SubmissionError(f"{where}: field color = {color.id} has depth format {color.fmt.name}")
        _not_volume(where, "color", color)
    if depth is not None:
        if not depth.render_target:
            raise SubmissionError(f"{where}: field depth = {depth.id} was not registered as a render target")
        if not depth.fmt.depth:
            raise SubmissionError(f"{where}: field depth = {depth.id} has format {depth.fmt.name}, not a depth format")
    if color is not None and depth is not None:
        _layers_match(where, [color], depth)
    if color is not None and depth is not None and (color.width, color.height) != (depth.width, depth.height):
        raise SubmissionError(
            f"{where}: field depth = {depth.id} is {depth.width}x{depth.height}, the colour "
            f"target {color.id} {color.width}x{color.height}"
        )
    return color, depth


def _render_target(where: str, objects: Objects, name: str, tid: int, layered: bool = False) -> Texture:
    """Texture ``tid`` given in field ``name``: registered, and registered as a render target
    (one layer, or ``layered``: any layers, a colour target drawn with all of them)."""
    t = objects.textures.get(tid)
    if t is None:
        raise SubmissionError(f"{where}: field {name} = {tid} is not a registered texture")
    if not t.render_target:
        raise SubmissionError(f"{where}: field {name} = {tid} was not registered as a render target")
    (_not_volume if layered else _one_layer)(where, name, t)
    return t


def _layers_match(where: str, colors: list[Texture], depth: Texture | None) -> None:
    """gfx-layers: the bound colour targets are drawn with all their layers (a geometry stage's
    Layer picks one; without it layer 0), so they have one layer count, and a layered one is bound
    without a depth target (depth targets have one layer)."""
    counts = {t.layers for t in colors}
    if len(counts) > 1:
        raise SubmissionError(
            f"{where}: the colour targets' layer counts differ ({', '.join(f'{t.id}: {t.layers}' for t in colors)}); "
            "layered targets are drawn with all their layers, one count for all"
        )
    if depth is not None and colors and colors[0].layers > 1:
        raise SubmissionError(
            f"{where}: colour target {colors[0].id} is layered ({colors[0].layers} layers) and depth target "
            f"{depth.id} has one layer: a layered target is drawn without a depth target"
        )


def _not_volume(where: str, name: str, t: Texture) -> None:
    """A volume (3D) render target is a surface of the 3D pool only (compute) and written back."""
    if t.volume:
        raise SubmissionError(
            f"{where}: field {name} = {t.id} is a volume (3D) texture ({t.layers} slices): it is a "
            "3D surface pool entry or a bound 3D texture, never drawn into, resolved, presented or in the texture pool"
        )


def _one_layer(where: str, name: str, t: Texture) -> None:
    """A layered render target is a surface (compute), sampled, drawn into (gfx-layers) and written
    back; resolves and PRESENT take one-layer targets."""
    _not_volume(where, name, t)
    if t.layers > 1:
        raise SubmissionError(
            f"{where}: field {name} = {t.id} is a layered render target ({t.layers} layers): it is a "
            "surface pool entry, sampled, drawn into or written back, never resolved or presented"
        )


def _render_targets(where: str, cmd: tuple, objects: Objects) -> tuple[list[Texture], Texture | None]:
    """RENDER_TARGETS' colour targets (in attachment order) and depth target, checked: each colour
    a registered colour render target, none named twice, no gap before the last one, the depth a
    render target of a depth format (or none); all of one size; at least one target."""
    colors: list[Texture] = []
    ids = cmd[1]
    last = max((k for k, tid in enumerate(ids) if tid != P.EMPTY), default=-1)
    for k, tid in enumerate(ids[: last + 1]):
        name = f"field colors[{k}]"
        if tid == P.EMPTY:
            raise SubmissionError(
                f"{where}: {name} is empty but a later colour target is set (colour targets are attachments 0..n-1 with no gaps)"
            )
        t = _render_target(where, objects, f"colors[{k}]", tid, layered=True)
        if t.fmt.depth:
            raise SubmissionError(f"{where}: {name} = {tid} has depth format {t.fmt.name}; a depth target goes in field depth")
        if tid in ids[:k]:
            raise SubmissionError(f"{where}: {name} = {tid} is also colors[{ids.index(tid)}] (a texture is bound once)")
        colors.append(t)
    depth = None
    if cmd[2] != P.EMPTY:
        depth = _render_target(where, objects, "depth", cmd[2])
        if not depth.fmt.depth:
            raise SubmissionError(f"{where}: field depth = {depth.id} has format {depth.fmt.name}, not a depth format")
    if not colors and depth is None:
        raise SubmissionError(f"{where}: fields colors and depth are all empty")
    _layers_match(where, colors, depth)
    first = colors[0] if colors else depth
    for name, t in [*((f"colors[{k}]", t) for k, t in enumerate(colors)), ("depth", depth)]:
        if t is not None and (t.width, t.height) != (first.width, first.height):
            raise SubmissionError(
                f"{where}: field {name} = {t.id} is {t.width}x{t.height}, "
                f"{'colors[0]' if colors else 'depth'} = {first.id} {first.width}x{first.height} "
                "(all targets must be one size)"
            )
    return colors, depth


def _compare_matches(where: str, program: Program, slot: int, t: Texture, s: Sampler) -> None:
    """A depth-compare lookup (SPIR-V Dref: TEXS/TEX/TLD4 .DC, GLSL sampler2DShadow) needs a
    sampler with a compare op, and a lookup that does not compare needs one without: Vulkan
    leaves either mismatch undefined (drivers return garbage or fault), so the draw is refused
    naming the slot; so is a Dref lookup of a colour texture (only depth formats are sure to
    support comparison).  A binding the code never looks up through (or only fetches from) passes."""
    use = program.lookups.get(4 + slot)
    if use in ("dref", "both") and not t.fmt.depth:
        raise SubmissionError(
            f"{where}: texture {t.id} in slot {slot} is a {t.fmt.name} texture, but program "
            f"{program.id} looks binding {4 + slot} up with a depth comparison (Dref), which "
            "needs a depth format (Vulkan leaves it undefined on colour formats)"
        )
    if use in ("dref", "both") and not s.compare:
        raise SubmissionError(
            f"{where}: texture {t.id} in slot {slot} is looked up with a depth comparison "
            f"(Dref) by program {program.id} at binding {4 + slot}, but sampler {s.id} is a "
            "plain sampler (no compare op; Vulkan leaves the result undefined)"
        )
    if use in ("plain", "both") and s.compare:
        raise SubmissionError(
            f"{where}: sampler {s.id} in slot {slot} (texture {t.id}) has a compare op, but "
            f"program {program.id}'s lookup at binding {4 + slot} does not compare (no Dref; "
            "Vulkan leaves the result undefined)"
        )


def _resolve(where: str, cmd: tuple, objects: Objects) -> None:
    """RESOLVE's src (a multisampled colour render target) and dst (a one-sample colour render
    target of the same size and format), checked."""
    ts = []
    for name, tid in (("src", cmd[1]), ("dst", cmd[2])):
        t = _render_target(where, objects, name, tid)
        if t.fmt.depth:
            raise SubmissionError(
                f"{where}: field {name} = {tid} has depth format {t.fmt.name}; only colour targets are resolved"
            )
        ts.append(t)
    src, dst = ts
    if src.samples == 1:
        raise SubmissionError(f"{where}: field src = {src.id} has one sample (nothing to resolve)")
    if dst.samples != 1:
        raise SubmissionError(f"{where}: field dst = {dst.id} has {dst.samples} samples; it must have one")
    if (src.width, src.height) != (dst.width, dst.height):
        raise SubmissionError(
            f"{where}: field dst = {dst.id} is {dst.width}x{dst.height}, src = {src.id} "
            f"{src.width}x{src.height} (they must be one size)"
        )
    if src.fmt.name != dst.fmt.name:
        raise SubmissionError(
            f"{where}: field dst = {dst.id} has format {dst.fmt.name}, src = {src.id} {src.fmt.name} (they must be one format)"
        )


def plan(seq: int, commands: list[tuple], objects: Objects) -> Plan:
    pl = Plan(seq, commands)
    seen: set[tuple[int, int, int]] = set()
    uploads: dict[int, Texture] = {}
    colors: list[Texture] = []  # the bound colour targets, attachment 0 first
    depth = program = layout = vertex = index = None
    tex_slots: dict[int, Texture] = {}
    slot_samplers: dict[int, Sampler] = {}
    pool_textures: list[Texture] = []  # the last POOLS packet's registered entries
    ms_samples: int | None = None  # the last MULTISAMPLE packet's count (None: none sent)
    cstate = compute_check.CheckState()  # compute dispatches (compute_check.py, compute.py)

    def add_range(key: tuple[int, int, int]) -> None:
        if key not in seen:
            seen.add(key)
            pl.ranges.append(key)

    for i, cmd in enumerate(commands):
        op = cmd[0]
        where = f"submission {seq}: packet {i} {P.OPS[op].name}"

        def need_texture(tid: int) -> Texture:
            t = objects.textures.get(tid)
            if t is None:
                raise SubmissionError(f"{where}: field texture {tid} is not a registered texture")
            return t

        if op == P.OP_TARGET:
            target = need_texture(cmd[1])
            depth = None
            if not target.render_target:
                raise SubmissionError(f"{where}: texture {cmd[1]} was not registered as a render target")
            _not_volume(where, "texture", target)  # a layered one: drawn with all its layers
            if target.fmt.depth:
                raise SubmissionError(
                    f"{where}: field texture {cmd[1]} has depth format {target.fmt.name}; bind it with DEPTH_TARGET"
                )
            colors = [target]
        elif op == P.OP_DEPTH_TARGET:
            target, depth = _depth_target(where, cmd, need_texture)
            colors = [] if target is None else [target]
        elif op == P.OP_RENDER_TARGETS:
            colors, depth = _render_targets(where, cmd, objects)
        elif op == P.OP_CLEAR:
            if not colors:
                raise SubmissionError(
                    f"{where}: no render target set"
                    if depth is None
                    else f"{where}: no colour target set (the depth target {depth.id} is bound alone)"
                )
        elif op == P.OP_CLEAR_TARGET:
            if cmd[1] >= len(colors):
                raise SubmissionError(f"{where}: field index = {cmd[1]} names no bound colour target ({len(colors)} bound)")
        elif op == P.OP_CLEAR_DEPTH_STENCIL:
            if depth is None:
                raise SubmissionError(f"{where}: no depth target set")
        elif op == P.OP_PROGRAM:
            program = objects.programs.get(cmd[1])
            if program is None:
                raise SubmissionError(f"{where}: field program {cmd[1]} is not a registered program")
        elif op == P.OP_VERTEX_LAYOUT:
            layout = cmd
        elif op in (P.OP_VERTEX, P.OP_INDEX, P.OP_UNIFORM):
            pool, off, size = cmd[1:4] if op != P.OP_UNIFORM else cmd[2:5]
            _range(objects, where, pool, off, size)
            if op == P.OP_UNIFORM and size > MAX_UNIFORM:
                raise SubmissionError(f"{where}: uniform range of {size} bytes exceeds {MAX_UNIFORM}")
            if op == P.OP_VERTEX:
                vertex = cmd
            elif op == P.OP_INDEX:
                index = cmd
            key = (pool, off, size)
            if key not in seen:
                seen.add(key)
                pl.ranges.append(key)
        elif op == P.OP_TEXTURE:
            t = need_texture(cmd[2])
            if cmd[3] not in objects.samplers:
                raise SubmissionError(f"{where}: field sampler {cmd[3]} is not a registered sampler")
            if t.samples > 1:
                raise SubmissionError(
                    f"{where}: field texture {t.id} is multisampled ({t.samples} samples); "
                    "RESOLVE it into a one-sample texture to sample it"
                )
            tex_slots[cmd[1]] = t  # a volume too: a 3D view, checked against the program at the draw
            slot_samplers[cmd[1]] = objects.samplers[cmd[3]]
            if not t.render_target:
                uploads[t.id] = t
        elif op == P.OP_POOLS:
            pool_textures = []
            for j, tid in enumerate(cmd[1]):
                if tid == P.EMPTY:
                    continue
                t = objects.textures.get(tid)
                if t is None:
                    raise SubmissionError(f"{where}: field textures[{j}] = {tid} is not a registered texture")
                if t.view_kind not in ("2d", "2d_array", "3d", "cube", "cube_array"):
                    # 2D array, 3D (gfx-layers), cube and cube array (gpu-pools): kernels' pools
                    raise SubmissionError(
                        f"{where}: field textures[{j}] = {tid} is a {t.view_kind} texture; the texture pool holds "
                        "2D, 2D array, 3D, cube and cube array textures"
                    )
                if t.samples > 1:
                    raise SubmissionError(
                        f"{where}: field textures[{j}] = {tid} is multisampled ({t.samples} "
                        "samples); RESOLVE it into a one-sample texture to sample it"
                    )
                pool_textures.append(t)
                if not t.render_target:
                    uploads[t.id] = t
            for j, sid in enumerate(cmd[2]):
                if sid != P.EMPTY and sid not in objects.samplers:
                    raise SubmissionError(f"{where}: field samplers[{j}] = {sid} is not a registered sampler")
        elif op in (P.OP_DRAW, P.OP_DRAW_INDEXED):
            for what, v in (
                ("render target", colors or depth),
                ("program", program),
                ("vertex layout", layout),
                ("vertex buffer", vertex),
            ):
                if v is None:
                    raise SubmissionError(f"{where}: no {what} set")
            bound = [t for t in (*colors, depth) if t is not None]
            # A one-sample target ignores the state's count, as OpenGL's multisampling does without a
            # multisampled framebuffer (and as submissions before multisampled targets rendered);
            # a multisampled one must match it: Vulkan has no mixed-sample rasterization here.
            if ms_samples is not None and any(t.samples > 1 and t.samples != ms_samples for t in bound):
                t = next(t for t in bound if t.samples != ms_samples)
                raise SubmissionError(
                    f"{where}: MULTISAMPLE's samples = {ms_samples} but target {t.id} has {t.samples} sample(s)"
                )
            if len({t.samples for t in bound}) > 1:
                raise SubmissionError(
                    f"{where}: the bound targets' sample counts differ ({', '.join(f'{t.id}: {t.samples}' for t in bound)})"
                )
            locs = {a[0] for a in layout[3]}
            missing = program.vertex.input_locations - locs
            if missing:
                raise SubmissionError(f"{where}: program {program.id} reads vertex locations {sorted(missing)} the layout lacks")
            kinds = program.sampler_kinds
            for slot, t in tex_slots.items():
                if t is depth or any(t is c for c in colors):
                    raise SubmissionError(f"{where}: texture {t.id} in slot {slot} is the current render target")
                want = kinds.get(4 + slot)
                # a plain 2D texture where a shader's kind is not one we model stays as it was
                if want is not None and t.view_kind != want and (t.view_kind != "2d" or want != "other"):
                    raise SubmissionError(
                        f"{where}: texture {t.id} in slot {slot} is a {t.view_kind} texture; "
                        f"program {program.id} samples binding {4 + slot} as {want}"
                    )
                _compare_matches(where, program, slot, t, slot_samplers[slot])
            if program.pools:
                for t in pool_textures:
                    if t is depth or any(t is c for c in colors):
                        raise SubmissionError(f"{where}: texture {t.id} in the texture pool is the current render target")
            stride, attrs = layout[1], layout[3]
            attr_end = max(a[2] + P.VERTEX_FORMATS[a[1]][1] for a in attrs)
            if op == P.OP_DRAW:
                count, first = cmd[1], cmd[3]
                if count and (first + count - 1) * stride + attr_end > vertex[3]:
                    raise SubmissionError(
                        f"{where}: vertices {first}..{first + count - 1} run past the "
                        f"{vertex[3]}-byte vertex buffer (stride {stride})"
                    )
            else:
                if index is None:
                    raise SubmissionError(f"{where}: no index buffer set")
                count, first = cmd[1], cmd[3]
                if (first + count) * index[4] > index[3]:
                    raise SubmissionError(
                        f"{where}: indices {first}..{first + count - 1} run past the {index[3]}-byte index buffer"
                    )
        elif op == P.OP_DIRTY:
            _range(objects, where, cmd[1], cmd[2], cmd[3])
            pl.dirty.append((cmd[1], cmd[2], cmd[3]))
        elif op == P.OP_SIGNAL:
            if cmd[1] >= NUM_FENCES:
                raise SubmissionError(f"{where}: field fence {cmd[1]} is not below {NUM_FENCES}")
        elif op == P.OP_WRITEBACK:
            t = need_texture(cmd[1])
            if not t.render_target:
                raise SubmissionError(f"{where}: texture {cmd[1]} is not a render target")
            if t.samples > 1:
                raise SubmissionError(
                    f"{where}: field texture {t.id} is multisampled ({t.samples} samples); "
                    "RESOLVE it into a one-sample target and write that back"
                )
            if not t.block_linear and t.pitch < t.row_bytes:
                raise SubmissionError(f"{where}: texture {t.id}'s field pitch {t.pitch} is below a row of {t.row_bytes} bytes")
            can_write = getattr(objects.memory, "can_write", None)
            psize = objects.memory.pool_size(t.pool)
            if psize is None:
                raise SubmissionError(f"{where}: texture {t.id}'s field pool {t.pool} is not a registered pool")
            if t.offset + t.byte_size > psize:
                raise SubmissionError(
                    f"{where}: texture {t.id}'s bytes {t.offset:#x}+{t.byte_size:#x} run past pool {t.pool}'s end {psize:#x}"
                )
            if can_write is not None and not can_write(t.pool):
                raise SubmissionError(f"{where}: pool {t.pool} was mapped read-only (its memfd refuses writes)")
        elif op == P.OP_PRESENT:
            t = need_texture(cmd[2])
            if not t.render_target:
                raise SubmissionError(f"{where}: texture {cmd[2]} is not a render target")
            _one_layer(where, "texture", t)
            if t.fmt.depth:
                raise SubmissionError(
                    f"{where}: field texture {cmd[2]} has depth format {t.fmt.name}; only colour targets are presented"
                )
            if t.samples > 1:
                raise SubmissionError(
                    f"{where}: field texture {t.id} is multisampled ({t.samples} samples); "
                    "RESOLVE it into a one-sample target and present that"
                )
            if t.fmt.name not in ("RGBA8", "BGRA8"):
                raise SubmissionError(
                    f"{where}: field texture {cmd[2]} has format {t.fmt.name}; only RGBA8 and "
                    "BGRA8 targets are presented (WRITEBACK reads the others)"
                )
        elif op == P.OP_PRESENT_IMAGE:
            img = present_image.key(cmd)
            _range(objects, where, *img)
            if img not in pl.images:
                pl.images.append(img)
            pl.image_cmds.append(cmd)
        elif op == P.OP_RESOLVE:
            _resolve(where, cmd, objects)
        elif op == P.OP_MULTISAMPLE:
            ms_samples = cmd[1]
        elif op == P.OP_EVENT_SIGNAL or op == P.OP_EVENT_WAIT:
            why = events.problem(objects.memory, cmd)
            if why:
                raise SubmissionError(f"{where}: {why}")
            pl.waits += op == P.OP_EVENT_WAIT
        elif op in compute_check.COMPUTE_OPS:
            bad = compute_check.check(cmd, objects, cstate, add_range)
            if bad:
                raise SubmissionError(f"{where}: {bad}")
        elif op in (P.OP_BEGIN, P.OP_END):
            raise SubmissionError(f"{where}: nested submission marker")
    pl.uploads = list(uploads.values())
    return pl
