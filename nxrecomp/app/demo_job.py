"""``nxrecomp demo``: the README's main job.  Builds the demo game (examples/demo: a C program
for AArch64 with our guest SDK, packaged as an ExeFS and a RomFS), recompiles it, and plays it
through every process under the supervisor: shader service, GPU process, CPU host.  Headless
(no display) it writes frames, and at the end a report: ``report.json`` (frames, state
checksums, frame-time statistics with start-up apart from steady state, timings, device, GPU
restarts, co-op events, the sound's duration, RMS and spectrum peaks) and ``report.html`` (the
same for a person, with the frame-time chart, the screenshots and the sound to play:
nxrecomp/app/report.py).  Headless, the game's sound goes to ``audio.wav`` (``--audio-out``), and a
``--record`` recording gets it appended as audio events (``nxrecomp replay`` writes it back out)."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

from nxrecomp.common.errors import NxError

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_INPUT = ROOT / "examples" / "demo" / "input" / "default.txt"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="the main job: build, recompile and play the demo game through every process")
    p.add_argument("--frames", type=int, default=600, help="frames to play before the game is asked to exit (600)")
    p.add_argument("--input", default=str(DEFAULT_INPUT), help="scripted gamepad input (default: the demo's tour)")
    p.add_argument("--record", help="record the GPU command stream to this file (nxrecomp replay plays it)")
    p.add_argument(
        "--screenshot-every",
        type=int,
        default=100,
        metavar="N",
        help="keep every Nth frame as a PNG in OUT/screenshots (0: none)",
    )
    p.add_argument(
        "--shaders",
        choices=("spirv", "sm86", "sm53"),
        help="the shader code the game carries: sm86 (default: Ampere machine code the shader service translates), sm53 (Maxwell) or spirv",
    )
    p.add_argument(
        "--target",
        choices=("switch1", "switch2"),
        help="the console to build for: switch1 = --shaders sm53, switch2 = --shaders sm86",
    )
    p.add_argument("--relay", metavar="HOST:PORT", help="play co-op through this relay (the other players appear)")
    p.add_argument("--coop-token", help="this player's join token (nxrecomp relay token --room R --player P [--host])")
    p.add_argument("--coop-password", default="", help="the room's password, if it has one")
    p.add_argument(
        "--audio-out",
        metavar="FILE",
        help="write the game's sound to this WAV file (default without a display: OUT/audio.wav; with "
        "one: the audio device, cpu_host.audio_device)",
    )
    p.add_argument("--out", default="demo-out", help="folder for the build, bundle, frames and report (demo-out)")
    p.set_defaults(func=_demo)


def _lines(log: str) -> tuple[list[tuple[int, str, int]], list[str]]:
    frames, other = [], []
    for line in log.splitlines():
        if not line.startswith("cpu "):
            continue
        text = line.split("| ", 1)[1]
        parts = text.split()
        if len(parts) == 6 and parts[0] == "frame" and parts[2] == "state":
            frames.append((int(parts[1]), parts[3], int(parts[5])))
        else:
            other.append(text)
    return frames, other


def _demo(a: argparse.Namespace) -> int:
    if str(ROOT) not in sys.path:  # the demo's sources live in the checkout's examples/ (not installed)
        sys.path.insert(0, str(ROOT))
    from examples.demo.build import build, gpu_for, shaders_for
    from nxrecomp.app import frame_stats, run_watch
    from nxrecomp.common import settings
    from nxrecomp.app.doctor import host_summary
    from nxrecomp.app.plot import frame_time_chart
    from nxrecomp.app.report import write_html
    from nxrecomp.app.supervise_bundle import bundle_specs
    from nxrecomp.app.supervisor import Supervisor
    from recompiler.horizon import recompile_exefs

    if a.frames < 1:
        raise NxError("--frames must be at least 1")
    try:
        a.shaders = shaders_for(a.shaders, a.target)
    except ValueError as e:
        raise NxError(str(e)) from None
    if a.relay and not a.coop_token:
        raise NxError("--relay needs --coop-token (nxrecomp relay token --room R --player P [--host])")
    script = Path(a.input)
    if not script.is_file():
        raise NxError("no such input script", path=str(script))
    out = Path(a.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    print(f"building the demo game (ExeFS + RomFS, shaders: {a.shaders}) in {out / 'build'}", flush=True)
    exefs, romfs = build(out / "build", a.shaders)
    t_built = time.monotonic()
    print("recompiling it (AArch64 -> C -> x86-64)", flush=True)
    m = recompile_exefs(exefs, out / "bundle", romfs=romfs, gpu=gpu_for(a.shaders))
    t_recompiled = time.monotonic()
    print(f"  {m['stats']['functions']} functions in {t_recompiled - t0:.1f}s", flush=True)

    run_dir = out / "run"
    shutil.rmtree(run_dir, ignore_errors=True)
    run_dir.mkdir()
    if len(str(run_dir)) > 90:
        raise NxError("output path too long for UNIX socket names (keep it under 80 characters)", path=str(out))
    frames_dir = out / "frames"
    shutil.rmtree(frames_dir, ignore_errors=True)
    if a.record:  # the GPU processes of this run append to it (a restart goes on recording)
        Path(a.record).unlink(missing_ok=True)
    specs = bundle_specs(out / "bundle", run_dir, frames_dir=str(frames_dir), record=a.record)
    times_file = run_dir / "frame_times.txt"
    specs[-1].env.update(
        {
            "NXRECOMP_CPU_HOST_MAX_FRAMES": str(a.frames),
            "NXRECOMP_CPU_HOST_INPUT_SCRIPT": str(script),
            "NXRECOMP_CPU_HOST_FRAME_TIMES_FILE": str(times_file),
            "NXRECOMP_CPU_HOST_DETERMINISTIC": "1",
        }
    )
    headless = not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    wav = Path(a.audio_out).resolve() if a.audio_out else out / "audio.wav" if headless else None
    if wav is not None:
        wav.unlink(missing_ok=True)
        specs[-1].env["NXRECOMP_CPU_HOST_AUDIO_OUT"] = str(wav)
    if a.relay:
        specs[-1].env.update(
            {
                "NXRECOMP_CPU_HOST_RELAY": a.relay,
                "NXRECOMP_CPU_HOST_RELAY_TOKEN": a.coop_token,
                "NXRECOMP_CPU_HOST_RELAY_PASSWORD": a.coop_password,
            }
        )
    if str(settings.get("nxrecomp", "log_level")).lower() in ("warning", "error"):
        # the GPU process names its Vulkan device at info level (a few lines, into run.log only)
        level_env = next(s.env_name for s in settings.all_settings() if (s.section, s.key) == ("nxrecomp", "log_level"))
        for spec in specs:
            if spec.name == "gpu":
                spec.env[level_env] = "info"
    print(f"playing {a.frames} frames headless (shader service, GPU process, CPU host); logs: {run_dir / 'run.log'}", flush=True)
    shader_addr = next((s.argv[-1] for s in specs if s.name == "shader"), None)
    watch = run_watch.ShaderWatch(shader_addr).start() if shader_addr else None
    sup = Supervisor(specs, run_dir / "run.log")
    t_wall, t_mono = run_watch.wall_and_mono()
    try:
        rc = sup.run(install_signals=True)
    finally:
        shader_stats = watch.stop() if watch else None
    log_text = (run_dir / "run.log").read_text()
    frames, other = _lines(log_text)
    ms = [float(x) for x in times_file.read_text().split()] if times_file.exists() else []
    events = run_watch.process_events(sup.events, t_mono)
    shots = out / "screenshots"
    shutil.rmtree(shots, ignore_errors=True)
    shots.mkdir()
    if a.screenshot_every > 0:
        for f in range(a.screenshot_every, len(frames) + 1, a.screenshot_every):
            src = frames_dir / f"frame_{f:06d}.png"
            if src.exists():
                shutil.copy(src, shots / src.name)
    fm = frame_stats.split(ms)
    chart = out / "frame_times.png"
    if ms:
        frame_time_chart(ms, chart, fm["startup_frames"], fm["steady"])
    else:
        chart.unlink(missing_ok=True)
    audio = None
    if wav is not None and wav.is_file():
        from nxrecomp.bundle import wav as wavfile

        audio = wavfile.summary(wav)
        if a.record and Path(a.record).is_file():  # the recording carries the sound too (nxrecomp replay)
            audio["recording_events"] = wavfile.append_to_recording(a.record, wav)
    report = {
        "exit_status": rc,
        "audio": audio,
        "frames": len(frames),
        "final_state": frames[-1][1] if frames else None,
        "score": frames[-1][2] if frames else None,
        "states": [s for _, s, _ in frames],
        "frame_ms": fm,
        "timings": {
            "build_s": round(t_built - t0, 2),
            "recompile_s": round(t_recompiled - t_built, 2),
            "functions": m["stats"]["functions"],
            "ready_s": run_watch.first_healthy(events),
            "shaders": vars(shader_stats) if shader_stats else None,
            "first_frame_s": run_watch.first_frame_s(frames_dir, t_wall),
        },
        "device": run_watch.device(log_text),
        "host": host_summary(),
        "shaders": a.shaders,
        "gpu_restarts": run_watch.gpu_restarts(events),
        "relay": a.relay,
        "coop_events": run_watch.coop_events(other),
        "process_events": events,
        "game_said": other,
        "frames_dir": str(frames_dir),
        "screenshots": str(shots),
        "chart": str(chart) if ms else None,
        "log": str(run_dir / "run.log"),
        "record": a.record,
    }
    tmp = out / "report.json.tmp"
    tmp.write_text(json.dumps(report, indent=1))
    os.replace(tmp, out / "report.json")
    page = write_html(out)
    print(f"\n{len(frames)} frames played (exit status {rc}); final state {report['final_state']}, score {report['score']}")
    for part, title in (("startup", "start-up"), ("steady", "steady state")):
        st = fm[part]
        if st:
            print(
                f"frame time, {title} ({st['frames']} frames): mean {st['mean']} ms, p50 {st['p50']}, "
                f"p95 {st['p95']}, p99 {st['p99']}, max {st['max']} ms"
            )
    if audio:
        print(
            f"sound: {audio['duration_s']} s in {audio['file']} (RMS {audio['rms']}, peaks "
            f"{', '.join(str(f) for f in audio['peaks_hz'])} Hz)"
        )
    for line in other:
        print(f"  game: {line}")
    print(f"frames: {frames_dir}\nscreenshots: {shots}\nreport: {page} (and {out / 'report.json'})")
    return 0 if rc == 0 and len(frames) == a.frames else 1
