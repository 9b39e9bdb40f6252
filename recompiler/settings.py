"""Settings of the recompiler (rows of the one settings table)."""

import os

from nxrecomp.common.settings import Setting, parse_bool


def _loop_edges(text: str) -> str:
    t = text.strip().lower()
    if t not in ("needed", "all"):
        raise ValueError(f"not 'needed' or 'all': {text!r}")
    return t


SETTINGS = [
    Setting("recompiler", "cc", "auto", "C compiler command ('auto': system clang, else clang from the ziglang wheel)"),
    Setting("recompiler", "opt", "-O2", "optimisation flag for lifted code"),
    Setting(
        "recompiler",
        "march",
        "auto",
        "x86-64 level of the compiled code: auto (x86-64-v3 where this CPU has it, else x86-64), x86-64, x86-64-v2, x86-64-v3, native, or a CPU name; a bundle refuses to start on a CPU lacking it",
    ),
    Setting(
        "recompiler",
        "call_abi",
        "sysv",
        "host calling convention of lifted functions (recompiler/lift/signature.py): sysv, preserve_none (clang's: the callee saves no host register; an experiment: jsontestrunner -8.5 % and xmltest -6.3 % instructions, but Lua +3.0 % to +4.0 %, so not the default), or auto (preserve_none, but dispatch loops that make calls and their direct callees SysV behind preserve_none thunks: recompiler/lift/call_abi.py; jsontestrunner -6.6 %, xmltest -6.2 %, Lua spectral-norm +0.7 %, n-body +2.6 %, so not the default either)",
    ),
    Setting("recompiler", "jobs", os.cpu_count() or 2, "parallel generator and compiler processes", int),
    Setting(
        "recompiler",
        "devirt_targets",
        2,
        "most targets an indirect call or jump is tried against as direct calls before its inline cache (recompiler/analysis/call_targets.py: the functions analysis guessed its register holds; a site with more candidates keeps the cache alone; 0: none)",
        int,
    ),
    Setting("recompiler", "shard_bytes", 32768, "guest code bytes per C shard (stable address buckets)", int),
    Setting(
        "recompiler",
        "shard_insns",
        4096,
        "most guest instructions per C shard (a bucket is split; a function over a quarter of it is a shard alone)",
        int,
    ),
    Setting(
        "recompiler",
        "cc_budget_s",
        60.0,
        "most estimated compile CPU seconds of one shard at -O2 (recompiler/cc.py function_costs); a shard over it is compiled the cheap way (build.py CHEAP_FLAGS) and named in the log; 0: no limit",
        float,
    ),
    Setting(
        "recompiler",
        "trust_abi",
        True,
        "calls keep X19-X29 and SP and hand back only their results as AAPCS64 says (off: store and reload all around calls)",
        parse_bool,
    ),
    Setting(
        "recompiler",
        "elide_saves",
        True,
        "a callee's save of X19-X28/D8-D15 is not a read: callers keep them in host locals only, saves nothing reads back are dropped (off: store them before calls)",
        parse_bool,
    ),
    Setting(
        "recompiler",
        "noreturn_calls",
        True,
        "a call of a function that never returns (no RET, no jump out through a register, tail calls only to such functions) ends its path: a return is a fatal error (off: the code after the call is its continuation)",
        parse_bool,
    ),
    Setting(
        "recompiler",
        "ifunc_stubs",
        True,
        "a PLT stub of an IFUNC branches directly to its resolver's possible answers (off: through the runtime's lookup, as an unknown target)",
        parse_bool,
    ),
    Setting(
        "recompiler",
        "go_liveness",
        True,
        "Go programs' call sites store and reload what liveness and the callees' summaries say, with Go's register sets (lift.liveness.GO; off: every register around every call, NZCV included)",
        parse_bool,
    ),
    Setting("recompiler", "comments", False, "put each instruction's disassembly in the generated C", parse_bool),
    Setting(
        "recompiler",
        "debug_info",
        False,
        "compile the shards with line tables (DWARF 4), so gdb, perf annotate and addr2line show the C line of a host address (and with comments on, the guest instruction above it)",
        parse_bool,
    ),
    Setting(
        "recompiler",
        "profile_gen",
        False,
        "the shards count the runs of each guest block, and the bundle writes them at exit as a block profile (cpu_host.block_profile_file; recompiler/profile.py): the training build of a profile-guided rebuild",
        parse_bool,
    ),
    Setting(
        "recompiler",
        "profile",
        "",
        "a block profile (recompiler/profile.py, written by a profile_gen bundle) whose counts the shards are compiled with (clang -fprofile-sample-use; a shard none of whose blocks ran compiles as without it); empty: none",
    ),
    Setting(
        "recompiler",
        "cache_mb",
        4096,
        "largest size in MB of each of the lift and object caches under nxrecomp.cache_dir (the least recently used entries go first after a build)",
        int,
    ),
    Setting(
        "recompiler",
        "hide_entries",
        "",
        "for tests of lift on miss: these function entries (hex addresses or symbol names, comma-separated) are left out of the build, as if analysis had missed them (not those in the bundle's discovered_entries.txt)",
    ),
    Setting(
        "recompiler",
        "signal_polls",
        False,
        "every backward branch reads the Linux personality's pending-signal flag (and a store/reload block each: 5-26 % slower on busybox's workloads, docs/PERFORMANCE.md), so a loop that makes no system call or runtime call still runs a signal's handler (off: such a loop sees it only when it makes one)",
        parse_bool,
    ),
    Setting(
        "recompiler",
        "loop_edges",
        "needed",
        "where a loop's back edge is a compiler barrier (lifted.h NX_LOOP_EDGE, so a loop polling memory another thread writes reloads it): needed (only a loop a round of which may run with no store, system call or call through a register, recompiler/lift/loop_edges.py), all (every back edge)",
        _loop_edges,
    ),
    Setting(
        "recompiler",
        "no_opt",
        "",
        "for bisecting a miscompile: these optimisations off, as trace builds have them (comma-separated: liveness, flags, twins, inline, mem_regs: X19-X28 of interpreter loops kept in locals, results: every result handed back at returns, frames: every return keeps SP and X29 where an indirect jump carries an unexpected X30, devirt: indirect calls and jumps not tried first as direct ones to the targets analysis guessed, args: no function's inputs limited to the argument registers its C++ name or Itanium ABI entry says), in the functions of no_opt_at only where that is set",
    ),
    Setting(
        "recompiler",
        "no_opt_at",
        "",
        "for bisecting a miscompile: the function entries (hex, or ranges lo-hi of entries) that no_opt applies to (empty: every function)",
    ),
    Setting(
        "recompiler",
        "entry_log",
        False,
        "for bisecting a miscompile: lifted functions log X0, X1, X29, X30 and SP at entry (NXRECOMP_TRACE_FILE, trace records of which only those are meaningful) with every optimisation kept: the first record that differs from a no_opt build's names where the optimised code went wrong",
        parse_bool,
    ),
    Setting(
        "recompiler",
        "trace",
        False,
        "lifted functions log the registers at entry (NXRECOMP_TRACE_FILE) for lockstep debugging against Unicorn",
        parse_bool,
    ),
]
