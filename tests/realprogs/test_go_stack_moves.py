"""A Go program whose goroutines end, and whose stacks move, while other goroutines run,
recompiled, against qemu-aarch64 over many runs (issue 29).

A goroutine switch (``gogo``) is a return to somewhere else, and a goroutine's start is a jump to
its function with X30 = ``goexit+4`` inside whatever host frames the switch ran in.  A goroutine
whose return came up to the run loop left X30 = ``goexit+4``, so the run loop entered ``goexit+4``
with X30 = ``goexit+4``; its ``goexit1`` -> ``schedule`` started the next goroutine, whose return
to ``goexit+4`` came up to that ``nx_enter`` frame, which took it for its own normal return and
wrote back the SP it had passed: the dead goroutine's (bullseye fzf's ``--filter``: "runtime:
newstack sp=... stack=[...]", split stack overflow, in about half of its runs; where the stale SP
lies above the new goroutine's stack nothing checks it, and ``goexit1`` writes into a stack some
other goroutine may own).  The program is built here with the apt-installed Go 1.19
(``golang-1.19-go``): each round 64 goroutines of one function that never block recurse deeply
(their stacks grow and move) and end, eight workers recurse and park on channels, a goroutine
loops running the GC (its signals, SIGURG, stop running goroutines; it shrinks parked ones'
stacks), and one calls through a function value in a loop."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.realprogs.test_debian_static import _bundle

PROGRAM = """package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
)

type frame struct{ a [24]uint64 }

//go:noinline
func deep(n int, f frame) uint64 {
	if n == 0 {
		return f.a[3]
	}
	f.a[n%24] += uint64(n)
	return deep(n-1, f)*31 + f.a[(n*7)%24]
}

func worker(id int, in <-chan int, out chan<- uint64, wg *sync.WaitGroup) {
	defer wg.Done()
	var sum uint64
	for n := range in {
		var f frame
		f.a[0] = uint64(id)
		sum = sum*131 + deep(n, f)
		out <- sum
	}
}

func step(x uint64) uint64 { return x*6364136223846793005 + 1442695040888963407 }

func main() {
	rounds, workers := 30, 8
	if len(os.Args) > 1 {
		rounds, _ = strconv.Atoi(os.Args[1])
	}
	var stop int32
	var spun uint64
	fn := step
	go func() { // calls through a function value: preempted by signal (SIGURG) too
		x := uint64(1)
		for atomic.LoadInt32(&stop) == 0 {
			x = fn(x)
		}
		atomic.StoreUint64(&spun, x|1)
	}()
	go func() { // the GC stops running goroutines by signal, and shrinks parked ones' stacks
		for atomic.LoadInt32(&stop) == 0 {
			runtime.GC()
		}
	}()
	total := uint64(0)
	for r := 0; r < rounds; r++ {
		var wg sync.WaitGroup
		ins := make([]chan int, workers)
		out := make(chan uint64, workers)
		for w := 0; w < workers; w++ {
			ins[w] = make(chan int)
			wg.Add(1)
			go worker(w, ins[w], out, &wg)
		}
		res := make(chan uint64, 64)
		for g := 0; g < 64; g++ { // short-lived goroutines of one function: all come back to goexit
			go func(g int) {
				var f frame
				f.a[1] = uint64(g)
				res <- deep(20+(g*53+r*7)%400, f)
			}(g)
		}
		for k := 0; k < 6; k++ {
			for w := 0; w < workers; w++ {
				ins[w] <- 50 + (r*131+w*37+k*101)%700 // deep: the stack grows (and moves)
			}
			for w := 0; w < workers; w++ {
				total += <-out
			}
		}
		for g := 0; g < 64; g++ {
			total += <-res
		}
		for w := 0; w < workers; w++ {
			close(ins[w])
		}
		wg.Wait() // every worker came back to goexit
	}
	atomic.StoreInt32(&stop, 1)
	fmt.Println("rounds", rounds, "total", total)
}
"""

RUNS = 20
ENV = {"PATH": "/usr/bin:/bin", "LC_ALL": "C", "HOME": "/nonexistent", "GOMAXPROCS": "4"}


def _go() -> str:
    for g in (shutil.which("go"), *sorted(Path("/usr/lib").glob("go-1.*/bin/go"), reverse=True)):
        if g:
            return str(g)
    pytest.skip("LOUD SKIP: no Go toolchain (apt golang-1.19-go) to build the stack-moving Go program")


@pytest.fixture(scope="module")
def stackmove(tmp_path_factory) -> tuple[Path, Path]:
    src = tmp_path_factory.mktemp("stackmove")
    (src / "main.go").write_text(PROGRAM)
    (src / "go.mod").write_text("module stackmove\n\ngo 1.19\n")
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(src),
        "GOCACHE": str(src / "cache"),
        "GOPATH": str(src / "gopath"),
        "GOPROXY": "off",
        "CGO_ENABLED": "0",
        "GOOS": "linux",
        "GOARCH": "arm64",
    }
    r = subprocess.run(
        [_go(), "build", "-trimpath", "-o", "stackmove", "."], cwd=src, env=env, capture_output=True, text=True, timeout=900
    )
    assert r.returncode == 0, r.stderr
    binary = src / "stackmove"
    return binary, _bundle(binary, "go-stackmove", tmp_path_factory)


@pytest.mark.heavy
def test_go_stacks_move_under_goroutine_switches(stackmove, tmp_path) -> None:
    if not shutil.which("qemu-aarch64"):
        pytest.skip("LOUD SKIP: qemu-aarch64 (apt qemu-user) is not installed")
    binary, bundle = stackmove
    argv = ["stackmove", "12"]
    ref = subprocess.run(["qemu-aarch64", "-0", argv[0], str(binary), *argv[1:]], capture_output=True, env=ENV, timeout=600)
    assert ref.returncode == 0 and ref.stdout.startswith(b"rounds 12 total "), ref.stderr[-2000:]
    bad = []
    for i in range(RUNS):
        ours = subprocess.run(
            [sys.executable, "-m", "nxrecomp", "exec", str(bundle), "--", *argv],
            capture_output=True,
            cwd=tmp_path,
            env={**ENV, **({"PYTHONPATH": p} if (p := __import__("os").environ.get("PYTHONPATH")) else {})},
            timeout=600,
        )
        if (ours.returncode, ours.stdout) != (0, ref.stdout):
            bad.append((i, ours.returncode, ours.stdout[-200:], ours.stderr[-1500:]))
    assert not bad, f"{len(bad)} of {RUNS} runs differ from qemu's {ref.stdout!r}: first {bad[0]}"
