"""Summary table of the Unicorn differential test (test_unicorn.py), printed at the end of
every run that included it, also under pytest-xdist (rows travel as user properties)."""

from __future__ import annotations


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    rows = {}
    for reports in terminalreporter.stats.values():
        for rep in reports:
            for key, val in getattr(rep, "user_properties", ()) or ():
                if key == "unicorn_class" and getattr(rep, "when", "call") == "call":
                    rows[(val[0], getattr(rep, "nodeid", ""))] = val
    if not rows:
        return
    tr = terminalreporter
    tr.write_sep("=", "lifter vs Unicorn, per instruction class")
    tr.write_line(f"{'class':16} {'run':>6} {'passed':>7} {'known bug':>10} {'tried':>7} {'seconds':>8}")
    tot = [0, 0, 0, 0]
    for (_cls, _node), (cls, run, passed, known, tried, secs) in sorted(rows.items()):
        tr.write_line(f"{cls:16} {run:6} {passed:7} {known:10} {tried:7} {secs:8.1f}")
        for i, v in enumerate((run, passed, known, tried)):
            tot[i] += v
    tr.write_line(f"{'total':16} {tot[0]:6} {tot[1]:7} {tot[2]:10} {tot[3]:7}")
