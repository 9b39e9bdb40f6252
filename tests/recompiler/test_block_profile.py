"""Block profiles (recompiler/profile.py): the file's round trip, a bad file rejected with an
error naming the file and the field, and the mapping of guest blocks onto the lines of generated
C in clang's sample profile format (checked by clang itself: the profile it is handed is applied
to the blocks the counts name)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from nxrecomp.common.errors import NxError
from recompiler import cc, profile

C = """\
#include <stdint.h>
typedef uint64_t u64;
static u64 I_2000(u64 a0) {
 L_2000:;
  if (a0 > 3) goto L_2010;
  a0 = a0 * 7;
 L_2010:;
  return a0 + 1;
}
u64 F_1000(u64 a0, u64 a1) {
  u64 x0 = a0;
 L_1000:;
  if (x0 & 1) goto L_1020;
 L_1008:;
  x0 = x0 * 3 + a1;
  x0 ^= x0 >> 7;
  goto L_1030;
 L_1020:;
  x0 = x0 / 5 + I_2000(a1);
 L_1030:;
  return x0;
}
"""


def test_round_trip(tmp_path):
    p = tmp_path / "p.json"
    blocks = {0x1000: 10, 0x1008: 3, 0x1020: 7, 0xFFFF_0000_1234: 1 << 40, 0x1030: 0}
    profile.write(p, blocks, program="ab" * 32)
    back = profile.read(p, program="ab" * 32)
    assert back == {a: n for a, n in blocks.items() if n}
    assert not list(tmp_path.glob("*.tmp")), "the atomic write left its temporary file"
    assert profile.read(p) == back  # no program to check against


@pytest.mark.parametrize(
    "doc, field, words",
    [
        ("{not json", None, "not JSON"),
        (json.dumps({"format": "other", "version": 1, "blocks": {}}), "format", "not a block profile"),
        (json.dumps({"format": profile.FORMAT, "version": 99, "blocks": {}}), "version", "version 99"),
        (json.dumps({"format": profile.FORMAT, "version": 1, "program": "cd" * 32, "blocks": {}}), "program", "other guest code"),
        (json.dumps({"format": profile.FORMAT, "version": 1, "blocks": []}), "blocks", "address: count"),
        (json.dumps({"format": profile.FORMAT, "version": 1, "blocks": {"zz": 1}}), "blocks", "not hexadecimal"),
        (json.dumps({"format": profile.FORMAT, "version": 1, "blocks": {"0x10": -1}}), "blocks", "not a count"),
        (json.dumps({"format": profile.FORMAT, "version": 1, "blocks": {"0x10": "5"}}), "blocks", "not a count"),
    ],
)
def test_bad_file_named(tmp_path, doc, field, words):
    p = tmp_path / "bad.json"
    p.write_text(doc)
    with pytest.raises(NxError) as e:
        profile.read(p, program="ab" * 32)
    assert e.value.path == str(p) and e.value.field == field
    assert str(p) in str(e.value) and words in str(e.value)


def test_missing_file_named(tmp_path):
    with pytest.raises(NxError) as e:
        profile.read(tmp_path / "none.json")
    assert "none.json" in str(e.value)


def test_blocks_to_lines():
    fns = profile.functions_of(C)
    assert [(n, f) for n, f, _ in fns] == [("I_2000", 3), ("F_1000", 10)]
    text, nf, nb = profile.sample_profile(C, {0x1000: 100, 0x1008: 60, 0x1020: 40, 0x1030: 100, 0x2000: 40, 0x2010: 40})
    assert (nf, nb) == (2, 6)
    recs = dict(re.findall(r"^(\w+):\d+:\d+\n((?: .*\n)*)", text, re.M))
    # F_1000 starts on line 10: L_1008's lines 15-17 are offsets 5-7, L_1020's line 19 offset 9
    f = dict(tuple(map(int, ln.split(":"))) for ln in recs["F_1000"].split("\n") if ln)
    assert f[3] == 100 and f[5] == f[6] == f[7] == 60 and f[9] == 40 and f[11] == 100
    assert 1 not in f  # the locals' line before the first label: no block
    # a block count round-trips through the lines it fills
    lines = {10 + off: n for off, n in f.items()}
    assert profile.blocks_from_lines(C, lines) == {0x1000: 100, 0x1008: 60, 0x1020: 40, 0x1030: 100}


def test_clang_applies_it(tmp_path):
    """clang reads the profile: the entry count and the branch weights come from the blocks."""
    src = tmp_path / "s.c"
    src.write_text(C)
    text, _, _ = profile.sample_profile(C, {0x1000: 1000, 0x1008: 990, 0x1020: 10, 0x1030: 1000, 0x2000: 10, 0x2010: 10})
    prof = tmp_path / "s.prof"
    prof.write_text(text)
    ll = tmp_path / "s.ll"
    cc.run(["-S", "-emit-llvm", "-O2", "-gline-tables-only", f"-fprofile-sample-use={prof}", "-o", str(ll), str(src)], "s.c")
    ir = ll.read_text()
    entry = re.search(r"define .*@F_1000\(.*!prof !(\d+)", ir)
    assert entry, "F_1000 has no entry count: the profile was not applied"
    assert re.search(rf'^!{entry[1]} = !{{!"function_entry_count", i64 100[01]}}', ir, re.M)
    weights = [tuple(map(int, w)) for w in re.findall(r'!"branch_weights", (?:!"expected", )?i32 (\d+), i32 (\d+)', ir)]
    assert any(max(w) > 50 * max(1, min(w)) for w in weights), weights


# a function, its resume twin (which holds the same blocks) and a block with a side exit in its
# middle: the lines after `if (x0 > a1) goto L_1120;` run only when it is not taken
C2 = """\
#include <stdint.h>
typedef uint64_t u64;
u64 F_1100(u64 a0, u64 a1) {
  u64 x0 = a0;
 L_1100:;
  x0 = x0 * 3;
  if (x0 > a1) goto L_1120;
  x0 = x0 + 11;
  x0 ^= x0 >> 3;
  if (x0 & 1) return x0;
  x0 = x0 + 1;
 L_1120:;
  return x0;
}
u64 R_1100(u64 a0, u64 a1) {
  u64 x0 = a0;
 L_1100:;
  x0 = x0 * 3;
  if (x0 > a1) goto L_1120;
  x0 = x0 + 11;
  x0 ^= x0 >> 3;
  if (x0 & 1) return x0;
  x0 = x0 + 1;
 L_1120:;
  return x0;
}
"""


def test_v2_round_trip_and_v1_still_read(tmp_path):
    p = tmp_path / "p.json"
    copies = {"F0x1100:0x1100": 10, "F0x1100:0x1100+1": 4, "R0x1100:0x1100": 0, "I0x2000:0x2010+12": 1 << 40}
    profile.write(p, {0x1100: 10}, program="ab" * 32, copies=copies)
    doc = json.loads(p.read_text())
    assert doc["version"] == 2
    back = profile.read(p, program="ab" * 32)
    assert back == {0x1100: 10} and back.copies == {k: n for k, n in copies.items() if n}
    v1 = tmp_path / "v1.json"
    v1.write_text(json.dumps({"format": profile.FORMAT, "version": 1, "program": "", "blocks": {"0x1100": 7}}))
    old = profile.read(v1)
    assert old == {0x1100: 7} and old.copies is None
    both = profile.merge([back, profile.read(p)])
    assert both == {0x1100: 20} and both.copies["F0x1100:0x1100+1"] == 8
    assert profile.merge([back, old]).copies is None  # a v1 run among them: blocks only


@pytest.mark.parametrize(
    "copies, words",
    [
        ([], "copy:block: count"),
        ({"0x1100:0x1100": 1}, "not KIND0xENTRY"),
        ({"F_1100:0x1100": 1}, "not KIND0xENTRY"),
        ({"F0x1100:0x1100+x": 1}, "not KIND0xENTRY"),
        ({"F0x1100:0x1100": -3}, "not a count"),
    ],
)
def test_bad_copies_named(tmp_path, copies, words):
    p = tmp_path / "bad.json"
    p.write_text(json.dumps({"format": profile.FORMAT, "version": 2, "program": "", "blocks": {}, "copies": copies}))
    with pytest.raises(NxError) as e:
        profile.read(p)
    assert e.value.field == "copies" and words in str(e.value)


def test_segments():
    segs = [(n, a, k, at, lns) for n, _, a, k, at, lns in profile.segments(C2)]
    f = [s for s in segs if s[0] == "F_1100"]
    # L_1100 (line 5): segment 0 to the side exit's line 7, 1 to the return's line 10, 2 line 11
    assert f == [
        ("F_1100", 0x1100, 0, 5, [6, 7]),
        ("F_1100", 0x1100, 1, 7, [8, 9, 10]),
        ("F_1100", 0x1100, 2, 10, [11]),
        ("F_1100", 0x1120, 0, 12, [13]),
    ]
    assert [s[1:3] for s in segs if s[0] == "R_1100"] == [s[1:3] for s in f]


def test_v2_lines_per_copy_and_segment():
    prof = profile.Profile({0x1100: 100, 0x1120: 100})
    prof.copies = {"F0x1100:0x1100": 100, "F0x1100:0x1100+1": 5, "F0x1100:0x1100+2": 0, "F0x1100:0x1120": 95}
    text, nf, nb = profile.sample_profile(C2, prof)
    recs = dict(re.findall(r"^(\w+):\d+:\d+\n((?: .*\n)*)", text, re.M))
    assert set(recs) == {"F_1100"}, "the twin never ran: no samples"
    f = dict(tuple(map(int, ln.split(":"))) for ln in recs["F_1100"].split("\n") if ln)
    # F_1100 on line 3: offsets 3-4 segment 0, 5-7 segment 1, 8 segment 2 (never ran: 0), 10 L_1120
    assert (f[3], f[4], f[5], f[6], f[7], f[8], f[10]) == (100, 100, 5, 5, 5, 0, 95)
    assert (nf, nb) == (1, 2)
    # the same blocks in a version 1 profile: every line of a block, in both copies, the block's
    v1 = profile.Profile({0x1100: 100, 0x1120: 100})
    text1, nf1, _ = profile.sample_profile(C2, v1)
    assert nf1 == 2 and " 8: 100\n" in text1


def test_instrumented_counts_per_copy(tmp_path):
    """The training build's counters, run: a driver calls F_1100 and R_1100 with inputs whose
    paths are known by arithmetic, the runtime's writer (cpu_host's block_profile.c) writes the
    file, and each copy's segments count what ran in it."""
    text, n = profile.instrument(C2, "t", "ab" * 32)
    assert n == 8
    got = text.split("\n")
    # the lines stay where they were (below the one declaration put after the first)
    assert all(got[i + (i > 0)].startswith(line) for i, line in enumerate(C2.split("\n")[:-1]))
    src = tmp_path / "s.c"
    src.write_text(text)
    (tmp_path / "u64.h").write_text("#include <stdint.h>\ntypedef uint64_t u64;\n")
    drv = tmp_path / "d.c"
    # F_1100(i, 30) for i < 100: x0 = 3i; the exit is taken for 3i > 30 (i > 10: 89 times); else
    # x0 = (3i + 11) ^ ((3i + 11) >> 3), odd for some i: those return; R_1100 runs 3 times, i = 50
    drv.write_text(
        "#include <stdint.h>\n#include <stdio.h>\ntypedef uint64_t u64;\n"
        "u64 F_1100(u64, u64); u64 R_1100(u64, u64); void nx_block_profile_write(void);\n"
        "int main(void) { u64 odd = 0; for (u64 i = 0; i < 100; i++) { F_1100(i, 30);\n"
        "  if (i <= 10) { u64 x = 3 * i + 11; x ^= x >> 3; odd += x & 1; } }\n"
        "  for (int j = 0; j < 3; j++) R_1100(50, 30);\n"
        '  printf("%llu\\n", (unsigned long long)odd); nx_block_profile_write(); return 0; }\n'
    )
    exe = tmp_path / "t"
    rt = Path(__file__).resolve().parents[2] / "cpu_host" / "runtime" / "core" / "block_profile.c"
    cc.run(["-O1", "-include", str(tmp_path / "u64.h"), "-o", str(exe), str(src), str(drv), str(rt)], "t")
    out = tmp_path / "p.json"
    r = subprocess.run(
        [str(exe)],
        capture_output=True,
        text=True,
        env={**os.environ, "NXRECOMP_CPU_HOST_BLOCK_PROFILE_FILE": str(out)},
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    odd = int(r.stdout)
    prof = profile.read(out, program="ab" * 32)
    assert json.loads(out.read_text())["version"] == 2
    assert prof.copies == {
        k: v
        for k, v in {
            "F0x1100:0x1100": 100,
            "F0x1100:0x1100+1": 11,
            "F0x1100:0x1100+2": 11 - odd,
            "F0x1100:0x1120": 89 + 11 - odd,
            "R0x1100:0x1100": 3,
            "R0x1100:0x1120": 3,
        }.items()
        if v
    }
    assert prof == {0x1100: 103, 0x1120: 89 + 11 - odd + 3}
