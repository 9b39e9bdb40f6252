"""The table the real-program suites print at the end of their module (issue 29: program, cases,
identical, run-time lifts), written past pytest's capture: a module fixture's teardown output
is otherwise shown only when a test failed."""

from __future__ import annotations

import re

LIFT_NOTICE = re.compile(rb"^nxrecomp: lifted at run time: ", re.M)  # one line per run-time lift


def write(request, results: dict[str, list[int]]) -> None:
    """``results``: program -> [cases run, identical, run-time lifts]."""
    tr = request.config.pluginmanager.get_plugin("terminalreporter")
    if tr is None or not results:
        return
    with request.config.pluginmanager.getplugin("capturemanager").global_and_fixture_disabled():
        tr.write_line("")
        tr.write_line(f"{'program':<14}{'cases':>7}{'identical':>11}{'run-time lifts':>16}")
        for prog, (n, same, lifts) in sorted(results.items()):
            tr.write_line(f"{prog:<14}{n:>7}{same:>11}{lifts:>16}")
