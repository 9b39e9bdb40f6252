"""Block profiles keyed by guest addresses, and their sample profiles for clang.

A block profile says how many times each guest basic block ran in a training run: a JSON file
``{"format": "nxrecomp-block-profile", "version": 2, "program": SHA256, "blocks": {"0x...": N},
"copies": {"F0x...:0x...": N, "F0x...:0x...+1": M, ...}}`` (``program``: the hash of the guest code
it was recorded on, or "" where unknown).  ``blocks`` counts a guest block over all its C copies;
``copies`` (version 2) counts it per C copy and per segment: a copy is the C function that holds
it, named by its kind and guest entry (``F`` the function, ``R`` its resume twin, ``I`` an inlined
leaf's copy, ``C`` a cold exit: ``F_10566f4`` is ``F0x10566f4``), a segment the block's lines up to
and including its first line that can leave it (a conditional ``goto``, a returned-pc check's
``NX_CATCH``, a ``return``), then the lines after that line to the next such line (``+1``), and so
on: a side exit taken most of the time leaves the lines after it with the count of the times it was
not.  Version 1 files (``blocks`` only) are still read: every copy and line of a block gets the
block's count.  Keyed by guest
addresses, it survives lifter changes: a rebuild maps each address to the C the lifter writes
now.  The generated C opens each guest block with a label ``L_<addr>:;`` on a line of its own;
each C line of a block (the label to the next label or the function's end) gets the block's count,
written in clang's sample profile text format (``-fprofile-sample-use``) under the C function that
holds it, at its offset from the function's first line (DWARF's ``decl_line``: the generated C
names each function on the first line of its definition).  A block in several C functions (an
inlined copy, a twin) gets its count in each."""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from pathlib import Path

from nxrecomp.common.errors import NxError

FORMAT = "nxrecomp-block-profile"
VERSION = 2
VERSIONS = (1, 2)

_LABEL = re.compile(r"^\s*L_([0-9a-f]+):;")
_ATTR = re.compile(r"__attribute__\(\(.*?\)\)\s*")
# a function definition's first line: a type, the name, "(" at column 0
_DEF = re.compile(r"^(?!static\s+const|extern|typedef|#)[A-Za-z_][\w \*]*?\b([A-Za-z_]\w*)\s*\(")
# a line that can leave its block: the increment of the next segment's counter goes after it
_EXIT = re.compile(r"\b(goto|return|NX_CATCH|MUSTTAIL|NX_JT_GO)\b")
# a lifted function's C name: its kind and guest entry
_COPY = re.compile(r"^([A-Z])_([0-9a-f]+)$")
_KEY = re.compile(r"^[A-Z]0x[0-9a-f]+:0x[0-9a-f]+(\+[0-9]+)?$")


class Profile(dict):
    """A block profile read: counts per guest block address (the dict), and ``copies``: counts per
    C copy and segment (key: see the module's text), None for a version 1 file."""

    copies: dict[str, int] | None = None


def write(path: Path | str, blocks: dict[int, int], program: str = "", copies: dict[str, int] | None = None) -> None:
    """Write a block profile atomically (a reader never sees half a file): version 2 with
    ``copies``, version 1 without."""
    path = Path(path)
    doc = {
        "format": FORMAT,
        "version": 1 if copies is None else VERSION,
        "program": program,
        "blocks": {f"{a:#x}": int(n) for a, n in sorted(blocks.items()) if n > 0},
    }
    if copies is not None:
        doc["copies"] = {k: int(n) for k, n in sorted(copies.items()) if n > 0}
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent or ".")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(doc, f, indent=0)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def read(path: Path | str, program: str | None = None) -> Profile:
    """A block profile's counts per guest block address (and, version 2, per copy and segment).  A file that is not one, of another
    version, or recorded on other guest code (``program`` given and the file names another) is an
    NxError naming the file and the field."""
    p = str(path)
    try:
        doc = json.loads(Path(path).read_text())
    except OSError as e:
        raise NxError(f"cannot read the block profile ({e.strerror})", path=p) from None
    except (ValueError, UnicodeDecodeError) as e:
        raise NxError(f"not a block profile: not JSON ({e})", path=p) from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise NxError(f"not a block profile (expected {FORMAT!r})", path=p, field="format")
    if doc.get("version") not in VERSIONS:
        raise NxError(
            f"block profile version {doc.get('version')!r}, this recompiler reads {', '.join(map(str, VERSIONS))}",
            path=p,
            field="version",
        )
    if program is not None and doc.get("program") and doc["program"] != program:
        raise NxError(
            f"recorded on other guest code ({str(doc['program'])[:16]}..., this program is {program[:16]}...)",
            path=p,
            field="program",
        )
    blocks = doc.get("blocks")
    if not isinstance(blocks, dict):
        raise NxError("expected an object of address: count", path=p, field="blocks")
    out = Profile()
    for k, v in blocks.items():
        try:
            a = int(k, 16)
        except (TypeError, ValueError):
            raise NxError(f"block address {k!r} is not hexadecimal", path=p, field="blocks") from None
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise NxError(f"count of block {k} is {v!r}, not a count", path=p, field="blocks")
        out[a] = v
    if doc["version"] >= 2:
        copies = doc.get("copies")
        if not isinstance(copies, dict):
            raise NxError("expected an object of copy:block: count", path=p, field="copies")
        for k, v in copies.items():
            if not isinstance(k, str) or not _KEY.match(k):
                raise NxError(f"copy key {k!r} is not KIND0xENTRY:0xBLOCK[+SEGMENT]", path=p, field="copies")
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise NxError(f"count of {k} is {v!r}, not a count", path=p, field="copies")
        out.copies = dict(copies)
    return out


def merge(profiles: list[Profile]) -> Profile:
    """The sum of several runs' profiles (``copies`` where every one has them)."""
    out = Profile()
    for pr in profiles:
        for a, n in pr.items():
            out[a] = out.get(a, 0) + n
    if profiles and all(pr.copies is not None for pr in profiles):
        out.copies = {}
        for pr in profiles:
            for k, n in pr.copies.items():
                out.copies[k] = out.copies.get(k, 0) + n
    return out


def program_id(code: bytes) -> str:
    """The ``program`` field of a profile recorded on ``code`` (the guest's executable bytes)."""
    return hashlib.sha256(code).hexdigest()


def functions_of(c_text: str) -> list[tuple[str, int, int]]:
    """(name, first line, last line) of each function definition of generated C: a line at
    column 0 naming a function, whose body ends at the next ``}`` at column 0."""
    out = []
    lines = c_text.splitlines()
    i = 0
    while i < len(lines):
        m = _DEF.match(_ATTR.sub("", lines[i]))
        if m and not lines[i].rstrip().endswith(";"):
            j = i
            while j < len(lines) and "{" not in lines[j] and not lines[j].rstrip().endswith(";"):
                j += 1
            if j < len(lines) and "{" in lines[j]:
                k = j
                while k < len(lines) and not lines[k].startswith("}"):
                    k += 1
                out.append((m[1], i + 1, k + 1))
                i = k + 1
                continue
        i += 1
    return out


def block_lines(c_text: str) -> list[tuple[str, int, int, list[int]]]:
    """(function, its first line, block address, the block's lines) of every labelled guest block
    of generated C, in order."""
    lines = c_text.splitlines()
    out = []
    for name, first, last in functions_of(c_text):
        cur: tuple[int, list[int]] | None = None
        for ln in range(first, last + 1):
            m = _LABEL.match(lines[ln - 1])
            if m:
                cur = (int(m[1], 16), [])
                out.append((name, first, cur[0], cur[1]))
            elif cur is not None and ln < last:
                cur[1].append(ln)
    return out


def blocks_from_lines(c_text: str, line_counts: dict[int, int]) -> dict[int, int]:
    """Guest block counts of one C file from the times its lines ran (a line's most executed
    instruction, callgrind's): a block's count is its most executed line's, summed over the
    functions that hold a copy of it."""
    out: dict[int, int] = {}
    for _, _, addr, lns in block_lines(c_text):
        n = max((line_counts.get(ln, 0) for ln in lns), default=0)
        if n:
            out[addr] = out.get(addr, 0) + n
    return out


def copy_name(fn: str) -> str | None:
    """A lifted function's copy key (``F_10566f4`` -> ``F0x10566f4``), None for another name."""
    m = _COPY.match(fn)
    return f"{m[1]}{int(m[2], 16):#x}" if m else None


def _closes(line: str) -> bool:
    """Whether a statement may follow ``line`` on the same line: a complete statement, its braces
    and parentheses balanced, not a preprocessor line."""
    t = line.rstrip()
    return (
        not t.lstrip().startswith("#")
        and t.endswith((";", "}"))
        and t.count("{") == t.count("}")
        and t.count("(") == t.count(")")
    )


def segments(c_text: str) -> list[tuple[str, int, int, int, int, list[int]]]:
    """(function, its first line, block address, segment, the line its counter goes on, the
    segment's lines) of every labelled guest block of generated C, in order: a block's segment 0
    runs from its label to its first line that can leave it (inclusive; its counter on the label's
    line), segment k from the line after the k-th such line to the next (its counter after the
    k-th line's statements, so that it counts the times that line did not leave)."""
    lines = c_text.splitlines()
    out = []
    for name, first, last in functions_of(c_text):
        cur = None
        for ln in range(first, last):
            text = lines[ln - 1]
            m = _LABEL.match(text)
            if m:
                cur = (name, first, int(m[1], 16), 0, ln, [])
                out.append(cur)
                continue
            if cur is None:
                continue
            cur[5].append(ln)
            if _EXIT.search(text) and _closes(text) and ln + 1 < last and not _LABEL.match(lines[ln]):
                cur = (name, first, cur[2], cur[3] + 1, ln, [])
                out.append(cur)
    return out


def _key(name: str, addr: int, seg: int) -> str | None:
    c = copy_name(name)
    return None if c is None else f"{c}:{addr:#x}" + (f"+{seg}" if seg else "")


def sample_profile(c_text: str, blocks: dict[int, int]) -> tuple[str, int, int]:
    """The sample profile text of one C file.  With a version 2 profile (``blocks.copies``) each
    line gets its copy's segment's count (0 where that segment never ran in the training, for a
    function some line of which ran); with a version 1 profile each line of a block gets the
    block's count in every copy.  Returns (text, functions with samples, blocks with samples); ""
    where none has any."""
    copies = getattr(blocks, "copies", None)
    recs: dict[str, tuple[int, dict[int, int]]] = {}
    counted: set[tuple[str, int]] = set()
    if copies is None:
        for name, first, addr, lns in block_lines(c_text):
            n = blocks.get(addr, 0)
            if not n or not lns:
                continue
            counted.add((name, addr))
            body = recs.setdefault(name, (first, {}))[1]
            for ln in lns:
                body[ln - first] = max(body.get(ln - first, 0), n)
    else:
        segs = segments(c_text)
        hot = {name for name, _, addr, k, _, _ in segs if copies.get(_key(name, addr, k) or "", 0)}
        for name, first, addr, k, _, lns in segs:
            if name not in hot:
                continue
            n = copies.get(_key(name, addr, k) or "", 0)
            if n:
                counted.add((name, addr))
            body = recs.setdefault(name, (first, {}))[1]
            for ln in lns:
                body[ln - first] = max(body.get(ln - first, 0), n)
    out = []
    for name, (first, body) in sorted(recs.items(), key=lambda kv: (-sum(kv[1][1].values()), kv[0])):
        head = body[min(body)]
        out.append(f"{name}:{sum(body.values())}:{head}\n")
        out.extend(f" {off}: {body[off]}\n" for off in sorted(body))
    return "".join(out), len(recs), len(counted)


def instrument(c_text: str, tag: str, program: str) -> tuple[str, int]:
    """A shard's C that counts its guest blocks per C copy and segment (``recompiler.profile_gen``;
    see ``segments``): each label ``L_<addr>:;`` and each line that can leave a block increments a
    counter of its own (on that line: the lines stay where they were, below the one line of
    declarations put after the first), and a constructor registers the counters with their guest
    block addresses (segment 0's; 0 for the others) and copy keys in the runtime
    (cpu_host/runtime/core/block_profile.c), which writes the profile at exit.  A function of
    another name than a lifted one's counts its blocks (segment 0) without a copy key.  ``tag``
    names the shard's arrays; returns (C, counters)."""
    lines = c_text.split("\n")
    pcs: list[str] = []
    keys: list[str] = []
    for name, _, addr, k, at, _ in segments(c_text):
        key = _key(name, addr, k)
        if k and key is None:
            continue
        lines[at - 1] = f"{lines[at - 1]} _nxbp_{tag}[{len(pcs)}]++;"
        pcs.append(f"0x{addr:x}ull" if k == 0 else "0")
        keys.append(f'"{key or ""}"')
    if not pcs:
        return c_text, 0
    decl = f"static u64 _nxbp_{tag}[{len(pcs)}];"
    head = 1 if lines and lines[0].startswith("#include") else 0
    lines.insert(head, decl)
    lines.append(
        f"static const u64 _nxbp_pc_{tag}[{len(pcs)}] = {{{', '.join(pcs)}}};\n"
        f"static const char *const _nxbp_key_{tag}[{len(pcs)}] = {{{', '.join(keys)}}};\n"
        "void nx_block_profile_register2(u64 *counts, const u64 *pcs, const char *const *keys, unsigned n, const char *program);\n"
        f"__attribute__((constructor)) static void _nxbp_reg_{tag}(void) {{\n"
        f'  nx_block_profile_register2(_nxbp_{tag}, _nxbp_pc_{tag}, _nxbp_key_{tag}, {len(pcs)}, "{program}");\n'
        "}\n"
    )
    return "\n".join(lines), len(pcs)


def cached_sample_profile(text: str, cache_dir: Path | str) -> Path:
    """``text`` (a shard's sample profile) as a file named by its content under ``cache_dir``:
    the file's path is part of the compile flags, so the object cache's key (the flags) follows the
    profile's content, not the bundle it was built for."""
    d = Path(cache_dir) / "profiles"
    d.mkdir(parents=True, exist_ok=True)
    p = d / f"{hashlib.sha256(text.encode()).hexdigest()[:32]}.prof"
    if not p.exists():
        fd, tmp = tempfile.mkstemp(suffix=".tmp", dir=d)
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, p)
    return p
