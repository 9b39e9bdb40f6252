"""The graphics lowering's SPIR-V before and after a change that must not change it (issue 33's
split of ``lower/graphics.py``): a pytest plugin that records every graphics program the tests
translate in this process (the lowering class, its constructor's arguments and the SPIR-V bytes
it built), and a replay that translates each recorded program with the code now on
``PYTHONPATH`` and compares the bytes.

    # on the old code (a checkout of the commit before the change):
    SPIRV_SAME_OUT=/tmp/gfx.pkl python -m pytest -p spirv_same tests/shader_svc/test_sm86_draw.py ...
    python tests/shader_svc/spirv_same.py replay /tmp/gfx.pkl /tmp/before.pkl
    # on the new code:
    python tests/shader_svc/spirv_same.py replay /tmp/gfx.pkl /tmp/after.pkl
    python tests/shader_svc/spirv_same.py compare /tmp/before.pkl /tmp/after.pkl

Programs translated in another process (the service's workers) are not seen; the same programs
are translated in-process by the tests that build them."""

from __future__ import annotations

import atexit
import hashlib
import os
import pickle
import sys

_RECORDS: dict[bytes, tuple[str, str, tuple, dict, bytes]] = {}


def _install() -> None:
    """Wrap ``GraphicsLowering.__init__`` (to keep its arguments) and ``build`` (to keep them
    with the bytes) of every graphics lowering class."""
    from shader_svc.lower.graphics import GraphicsLowering

    init, build = GraphicsLowering.__init__, GraphicsLowering.build

    def rec_init(self, *args, **kw):
        self._spirv_same_args = (pickle.dumps(args), pickle.dumps(kw))
        init(self, *args, **kw)

    def rec_build(self, *args, **kw):
        out = build(self, *args, **kw)
        a, k = getattr(self, "_spirv_same_args", (None, None))
        if a is not None and not args and not kw:
            cls = type(self)
            key = hashlib.sha256(cls.__module__.encode() + cls.__qualname__.encode() + a + k).digest()
            _RECORDS[key] = (cls.__module__, cls.__qualname__, a, k, out)
        return out

    GraphicsLowering.__init__ = rec_init
    GraphicsLowering.build = rec_build


def pytest_configure(config) -> None:
    _install()
    out = os.environ["SPIRV_SAME_OUT"]
    atexit.register(lambda: pickle.dump(list(_RECORDS.values()), open(out, "wb")))


def replay(path: str, out: str) -> int:
    """Translate every recorded program again with the code on ``PYTHONPATH`` and write the
    bytes to ``out``; print how many differ from what the test run built (a test that changes a
    setting around its translation builds other bytes than a plain replay: compare two replays)."""
    import importlib

    records = pickle.load(open(path, "rb"))
    got_all, moved = [], 0
    for mod, qual, a, k, seen in records:
        cls = importlib.import_module(mod)
        for part in qual.split("."):
            cls = getattr(cls, part)
        got = cls(*pickle.loads(a), **pickle.loads(k)).build()
        moved += got != seen
        got_all.append((f"{mod}.{qual}", got))
    pickle.dump(got_all, open(out, "wb"))
    print(f"{len(records)} programs replayed ({moved} unlike the test run's bytes) -> {out}")
    return 0


def compare(before: str, after: str) -> int:
    """The two replays' bytes, program by program."""
    a, b = pickle.load(open(before, "rb")), pickle.load(open(after, "rb"))
    assert len(a) == len(b), (len(a), len(b))
    bad = [i for i, (x, y) in enumerate(zip(a, b)) if x != y]
    by_cls: dict[str, int] = {}
    for name, _ in a:
        by_cls[name] = by_cls.get(name, 0) + 1
    print(f"{len(a)} programs, {len(bad)} different SPIR-V: {by_cls}")
    for i in bad:
        print(f"DIFFERENT: program {i} ({a[i][0]}, {len(a[i][1])} -> {len(b[i][1])} bytes)")
    return 1 if bad else 0


if __name__ == "__main__":
    if sys.argv[1] == "replay":
        sys.exit(replay(sys.argv[2], sys.argv[3]))
    sys.exit(compare(sys.argv[2], sys.argv[3]))
