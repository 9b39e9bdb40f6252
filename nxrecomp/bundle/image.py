"""The bundle's linked image: where each segment of the program (and of its shared objects, for
a Linux program; of its NSO/NRO modules, for a Switch one) lies in guest memory, its relocated
bytes, the modules' init/fini arrays, unwind tables and TLS layout, the symbols and the function
hints analysis starts from.  The linker (``recompiler/link.py``, ``recompiler/horizon.py``)
makes it; the manifest holds it (``to_json``: the bytes go to ``image.bin``, named in the
manifest with their SHA-256) and the hosts read it back (``from_json``, which checks that hash).
"""

from __future__ import annotations

import base64
import hashlib
import os
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from nxrecomp.common.errors import NxError

IMAGE_FILE = "image.bin"


@dataclass
class Segment:
    vaddr: int
    memsz: int
    data: bytes  # relocated bytes from vaddr (the file part; longer if a relocation wrote into .bss)
    prot: str  # "r-x", "rw-", ...
    module: str


@dataclass
class ModuleInfo:
    name: str
    base: int
    path: str
    init_array: list[int] = field(default_factory=list)
    fini_array: list[int] = field(default_factory=list)
    preinit_array: list[int] = field(default_factory=list)
    init: int = 0
    fini: int = 0
    eh_frame: tuple[int, bytes] | None = None
    eh_frame_hdr: tuple[int, bytes] | None = None
    gcc_except_table: tuple[int, bytes] | None = None
    text_ranges: list[tuple[int, int]] = field(default_factory=list)
    tls_modid: int = 0  # 1-based DTV index, 0 = no TLS
    tls_offset: int = 0  # offset of its TLS block from TP
    # a Go program's function table (.gopclntab), read by analysis only: not in the bundle
    go_pclntab: tuple[int, bytes] | None = field(default=None, compare=False, repr=False)


@dataclass
class TlsBlock:
    module: str
    template: int  # absolute address of the initialisation image
    filesz: int
    memsz: int
    align: int
    tp_offset: int  # block start = TP + tp_offset


@dataclass
class TlsLayout:
    template: int  # the first block's (the main program's when it has TLS)
    filesz: int
    memsz: int
    align: int
    tp_offset: int
    blocks: list[TlsBlock] = field(default_factory=list)
    static_size: int = 0  # bytes from TP to the end of the last block (TCB included)


@dataclass
class LinkedImage:
    segments: list[Segment]
    entry: int
    modules: list[ModuleInfo]
    symbols: dict[int, str]
    func_hints: set[int]
    tls: TlsLayout | None
    phdr: int
    phent: int
    phnum: int
    brk_start: int
    static: bool  # True: a static executable (applies its own IRELATIVE relocs)
    unresolved: list[str] = field(default_factory=list)  # "module:symbol" of unbound JUMP_SLOTs (left 0)
    # every IFUNC slot (static executables' own IRELATIVE ones too) -> its resolver, in link
    # order (recompiler/analyse.py: ifunc_candidates reads it for PLT stubs)
    ifunc_slots: dict[int, int] = field(default_factory=dict)

    @property
    def irelative(self) -> list[tuple[int, int]]:
        """(slot, resolver) the runtime resolves before start: none for a static executable."""
        return [] if self.static else list(self.ifunc_slots.items())

    # ---- manifest form ------------------------------------------------------------------
    def to_json(self, blob_path: str | Path | None = None) -> dict:
        """A JSON-able dict.  Byte strings go into one binary file ``blob_path`` (written
        atomically; the dict names it relative to its folder) or, without it, inline as
        base64 of zlib (busybox: ~1 MB of text)."""
        blob = bytearray()

        def put(b: bytes) -> list[int]:
            off = len(blob)
            blob.extend(b)
            return [off, len(b)]

        def range_(t: tuple[int, bytes] | None):
            return None if t is None else [t[0], put(t[1])]

        d = {
            "format": 1,
            "entry": self.entry,
            "phdr": self.phdr,
            "phent": self.phent,
            "phnum": self.phnum,
            "brk_start": self.brk_start,
            "static": self.static,
            "unresolved": self.unresolved,
            "segments": [
                {"vaddr": s.vaddr, "memsz": s.memsz, "prot": s.prot, "module": s.module, "data": put(s.data)}
                for s in self.segments
            ],
            "modules": [
                {
                    "name": m.name,
                    "base": m.base,
                    "path": m.path,
                    "init_array": m.init_array,
                    "fini_array": m.fini_array,
                    "preinit_array": m.preinit_array,
                    "init": m.init,
                    "fini": m.fini,
                    "eh_frame": range_(m.eh_frame),
                    "eh_frame_hdr": range_(m.eh_frame_hdr),
                    "gcc_except_table": range_(m.gcc_except_table),
                    "text_ranges": [list(r) for r in m.text_ranges],
                    "tls_modid": m.tls_modid,
                    "tls_offset": m.tls_offset,
                }
                for m in self.modules
            ],
            "symbols": [[a, n] for a, n in sorted(self.symbols.items())],
            "func_hints": sorted(self.func_hints),
            "ifunc_slots": [[k, v] for k, v in sorted(self.ifunc_slots.items())],
            "tls": None
            if self.tls is None
            else {
                "template": self.tls.template,
                "filesz": self.tls.filesz,
                "memsz": self.tls.memsz,
                "align": self.tls.align,
                "tp_offset": self.tls.tp_offset,
                "static_size": self.tls.static_size,
                "blocks": [vars(b) for b in self.tls.blocks],
            },
        }
        if blob_path is None:
            d["blob_inline"] = base64.b64encode(zlib.compress(bytes(blob), 6)).decode()
        else:
            blob_path = Path(blob_path)
            tmp = blob_path.with_name(blob_path.name + f".tmp{os.getpid()}")
            tmp.write_bytes(blob)
            os.replace(tmp, blob_path)
            d["blob_file"] = blob_path.name
            d["blob_sha256"] = hashlib.sha256(blob).hexdigest()
        return d

    @classmethod
    def from_json(cls, d: dict, base_dir: str | Path = ".") -> "LinkedImage":
        if d.get("format") != 1:
            raise NxError(f"unknown linked-image format {d.get('format')!r}", field="format")
        if "blob_file" in d:
            p = Path(base_dir) / d["blob_file"]
            try:
                blob = p.read_bytes()
            except OSError as e:
                raise NxError(f"cannot read: {e.strerror}", path=str(p)) from None
            if hashlib.sha256(blob).hexdigest() != d.get("blob_sha256"):
                raise NxError("contents do not match blob_sha256 of the manifest", path=str(p), field="blob_sha256")
        else:
            try:
                blob = zlib.decompress(base64.b64decode(d["blob_inline"]))
            except (KeyError, ValueError, zlib.error) as e:
                raise NxError(f"bad inline data: {e}", field="blob_inline") from None

        def get(r: list[int]) -> bytes:
            if r[0] < 0 or r[0] + r[1] > len(blob):
                raise NxError(f"range {r} is past the end of the data ({len(blob)} bytes)", field="blob")
            return bytes(blob[r[0] : r[0] + r[1]])

        def range_(v):
            return None if v is None else (v[0], get(v[1]))

        tls = None
        if d["tls"] is not None:
            t = d["tls"]
            tls = TlsLayout(
                t["template"],
                t["filesz"],
                t["memsz"],
                t["align"],
                t["tp_offset"],
                [TlsBlock(**b) for b in t["blocks"]],
                t["static_size"],
            )
        return cls(
            segments=[Segment(s["vaddr"], s["memsz"], get(s["data"]), s["prot"], s["module"]) for s in d["segments"]],
            entry=d["entry"],
            modules=[
                ModuleInfo(
                    m["name"],
                    m["base"],
                    m["path"],
                    m["init_array"],
                    m["fini_array"],
                    m["preinit_array"],
                    m["init"],
                    m["fini"],
                    range_(m["eh_frame"]),
                    range_(m["eh_frame_hdr"]),
                    range_(m["gcc_except_table"]),
                    [tuple(r) for r in m["text_ranges"]],
                    m["tls_modid"],
                    m["tls_offset"],
                )
                for m in d["modules"]
            ],
            symbols={a: n for a, n in d["symbols"]},
            func_hints=set(d["func_hints"]),
            ifunc_slots={k: v for k, v in d.get("ifunc_slots", d.get("irelative", []))},
            tls=tls,
            phdr=d["phdr"],
            phent=d["phent"],
            phnum=d["phnum"],
            brk_start=d["brk_start"],
            static=d["static"],
            unresolved=d["unresolved"],
        )
