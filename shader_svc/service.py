"""The gRPC shader service (``nxshader.ShaderTranslator`` + standard gRPC health).

Every request is answered: a bad program becomes INVALID_ARGUMENT with the decoder's message
(field, offset, word), an unexpected failure INTERNAL; neither stops the server.  Translations
go through the disk cache (``disk_cache.DiskCache``) keyed by the translator identity."""

from __future__ import annotations

import argparse
import faulthandler
import hashlib
import json
import logging
import multiprocessing
import signal
import sys
import threading
import time
from concurrent import futures
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from nxrecomp.common.errors import NxError
from nxrecomp.common.progress import Progress
from proto import shader_pb2, shader_pb2_grpc
from shader_svc import identity, translate as tr
from shader_svc.disk_cache import DiskCache
from shader_svc.reflection import Reflection

log = logging.getLogger("shader_svc.service")
SERVICE = "nxshader.ShaderTranslator"
STOP_SECONDS = 10.0  # the most a SIGTERM may take to end the process


@dataclass
class Counters:
    translations: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    errors: int = 0
    translate_seconds: float = 0.0
    carried: int = 0  # served from an older translator while re-translating


class Failure(Exception):
    """A request that cannot be served: its gRPC status and message."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


class Translator:
    """Cache-aware translation; thread-safe (counters under a lock, files written atomically)."""

    def __init__(self, cache_root: Path, translator: str | None = None) -> None:
        self.id = translator or identity.translator_id()
        self.cache = DiskCache(cache_root, self.id)
        self.lock = threading.Lock()
        self.n = Counters()
        # Programs served from an older translator's files are re-translated in the
        # background: one thread queues them to one worker *process* (started on first need),
        # so the re-translation does not hold this process's GIL while a boot's Prepare
        # streams; `pending` keeps a program from being queued twice.
        self.background = futures.ThreadPoolExecutor(1, thread_name_prefix="retranslate")
        self._procs: futures.ProcessPoolExecutor | None = None
        self.pending: set[str] = set()

    def _count(self, **inc: float) -> None:
        with self.lock:
            for k, v in inc.items():
                setattr(self.n, k, getattr(self.n, k) + v)

    def run(self, p: tr.Program, carry: bool = True) -> shader_pb2.Translation:
        """Translation of ``p`` by this translator, from the cache when there.  With ``carry``
        an older translator's file is served at once and this one re-translates in the background."""
        key = p.key()
        hit = self.cache.get_entry(key)
        if hit is not None:
            # every program seen is in the program store (disk_cache.py), a hit too: its
            # translation may predate the store's file (an emptied programs/, an older cache);
            # put_program is one stat when the file is there
            self.cache.put_program(key, p.serialize())
            self._count(cache_hits=1)
            return shader_pb2.Translation(
                key=key, spirv=hit[0], cached=True, translator=self.id, reflection=self._reflection(p, hit[1])
            )
        prev = self.cache.previous(key) if carry else None
        if prev is not None:
            self.cache.put_program(key, p.serialize())  # stored now, not when the re-translation ends
            self._count(carried=1)
            with self.lock:
                queue = key not in self.pending
                self.pending.add(key)
            if queue:
                self.background.submit(self._retranslate, p, key)
            return shader_pb2.Translation(
                key=key, spirv=prev[1], cached=True, translator=prev[0], reflection=self._reflection(p, prev[2])
            )
        self._count(cache_misses=1)
        t0 = time.perf_counter()
        try:
            spv, refl = tr.translate_full(p)
        except NxError as e:
            self._count(errors=1)
            raise Failure(grpc.StatusCode.INVALID_ARGUMENT, str(e)) from None
        except Exception as e:  # a translator bug must not take the service down
            self._count(errors=1)
            log.exception("translating %s failed", key)
            raise Failure(grpc.StatusCode.INTERNAL, f"translator failure on program {key}: {e!r}") from None
        self._count(translations=1, translate_seconds=time.perf_counter() - t0)
        self.cache.put_program(key, p.serialize())
        self.cache.put(key, spv, json.dumps(refl.to_dict()).encode())
        return shader_pb2.Translation(key=key, spirv=spv, cached=False, translator=self.id, reflection=reflection_message(refl))

    @staticmethod
    def _reflection(p: tr.Program, meta: bytes) -> shader_pb2.Reflection:
        """Reflection stored with a cached translation; files of older formats have none, so
        it is computed again (decoding only)."""
        try:
            return reflection_message(Reflection.from_dict(json.loads(meta)))
        except (ValueError, KeyError, TypeError):
            pass
        try:
            return reflection_message(tr.reflect(p))
        except Exception:  # an older translator's file for code this one cannot read: serve it bare
            log.warning("no reflection for program %s", p.key(), exc_info=True)
            return shader_pb2.Reflection()

    def _worker(self) -> futures.ProcessPoolExecutor:
        with self.lock:
            if self._procs is None:
                # spawn, not fork: this process runs gRPC threads
                self._procs = futures.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
            return self._procs

    def _retranslate(self, p: tr.Program, key: str) -> None:
        try:
            if self.cache.get_entry(key) is not None:  # translated meanwhile (a Prepare)
                return
            status, spv, meta, secs = self._worker().submit(tr.translate_worker, p.serialize()).result()
            if status != "ok":  # the older translation stays in use
                self._count(errors=1)
                log.warning("re-translating %s with translator %s failed: %s", key, self.id, meta.decode())
                return
            self._count(translations=1, translate_seconds=secs)
            self.cache.put_program(key, p.serialize())
            self.cache.put(key, spv, meta)
        except Exception:  # e.g. the worker process died: the older translation stays in use
            log.exception("re-translating %s in the background failed", key)
        finally:
            with self.lock:
                self.pending.discard(key)

    def drain(self) -> None:
        """Wait for queued background re-translations (tests, shutdown)."""
        self.background.submit(lambda: None).result()

    def close(self) -> None:
        self.background.shutdown(wait=True, cancel_futures=True)
        if self._procs is not None:
            self._procs.shutdown(wait=True, cancel_futures=True)

    def run_request(self, req: shader_pb2.Program) -> shader_pb2.Translation:
        try:
            banks = [(b.bank, b.data) for b in req.banks]
            data = [(d.address, d.data) for d in req.data]  # placed __device__ globals (request.check_data)
            p = tr.make_program(req.arch, req.stage, req.code, tuple(req.local_size), req.features, banks, data)
        except NxError as e:
            self._count(errors=1)
            raise Failure(grpc.StatusCode.INVALID_ARGUMENT, str(e)) from None
        return self.run(p)

    def run_key(self, key: str, carry: bool = False) -> shader_pb2.Translation:
        data = self.cache.get_program(key)
        if data is None:
            self._count(errors=1)
            raise Failure(grpc.StatusCode.NOT_FOUND, f"program {key!r} was never seen (not in the program store)")
        if hashlib.sha256(data).hexdigest() != key:
            self._count(errors=1)
            raise Failure(grpc.StatusCode.DATA_LOSS, f"stored program {key} is damaged (hash differs)")
        # preparing means: this translator's own translation, now, unless the caller accepts an
        # older translator's while this one re-translates in the background
        return self.run(tr.Program.deserialize(data, key), carry=carry)


def reflection_message(r: Reflection) -> shader_pb2.Reflection:
    return shader_pb2.Reflection(
        const_ranges=[shader_pb2.ConstRange(bank=c.bank, offset=c.offset, size=c.size) for c in r.const_ranges],
        global_pointers=[
            shader_pb2.GlobalPointer(bank=g.bank, offset=g.offset, read=g.read, written=g.written, atomic=g.atomic)
            for g in r.global_pointers
        ],
        shared_memory=r.shared_memory,
        barriers=r.barriers,
        stage=r.stage,
        uniform_bindings=list(r.uniform_bindings),
        textures=list(r.textures),
        inputs=list(r.inputs),
        outputs=list(r.outputs),
        writes_position=r.writes_position,
        texture_pools=r.texture_pools,
        texture_dims=list(r.texture_dims),
        surface_pool=r.surface_pool,
    )


class ShaderServicer(shader_pb2_grpc.ShaderTranslatorServicer):
    def __init__(self, translator: Translator) -> None:
        self.t = translator

    def Translate(self, request, context):
        try:
            return self.t.run_request(request)
        except Failure as f:
            context.abort(f.code, f.message)

    def _stream(self, items: list, fn, what: str) -> Iterator[shader_pb2.BatchEvent]:
        total = len(items)
        with Progress(what, total) as prog:
            for i, item in enumerate(items):
                ev = shader_pb2.BatchEvent(index=i, done=i + 1, total=total)
                try:
                    ev.translation.CopyFrom(fn(item))
                except Failure as f:
                    ev.error_code, ev.error = f.code.value[0], f.message
                except Exception as e:  # e.g. the cache folder became unwritable: report, go on
                    log.exception("%s: item %d failed", what, i)
                    ev.error_code, ev.error = grpc.StatusCode.INTERNAL.value[0], f"{what}: item {i}: {e!r}"
                prog.advance()
                yield ev

    def TranslateBatch(self, request, context):
        yield from self._stream(list(request.programs), self.t.run_request, "translating shaders")

    def Prepare(self, request, context):
        keys = list(request.keys) or self.t.cache.program_keys()  # empty list: every program seen
        yield from self._stream(keys, lambda k: self.t.run_key(k, request.carry), "preparing shaders")

    def GetStats(self, request, context):
        with self.t.lock:
            n = Counters(**vars(self.t.n))
        return shader_pb2.Stats(
            translator=self.t.id,
            translations=n.translations,
            cache_hits=n.cache_hits,
            cache_misses=n.cache_misses,
            errors=n.errors,
            cache_entries=self.t.cache.entries(),
            translate_seconds=n.translate_seconds,
            carried=n.carried,
            retranslating=len(self.t.pending),
        )


def default_cache_root() -> Path:
    from nxrecomp.common import settings

    d = settings.get("shader_svc", "cache_dir")
    return Path(d) if d else Path(settings.get("nxrecomp", "cache_dir")) / "shaders"


def start(listen: str, cache_root: Path, workers: int = 4, translator: str | None = None) -> tuple[grpc.Server, int, Translator]:
    """Start a server; returns it, the bound port and its translator (call its ``close()``
    after stopping the server)."""
    t = Translator(cache_root, translator)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=workers))
    shader_pb2_grpc.add_ShaderTranslatorServicer_to_server(ShaderServicer(t), server)
    hs = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(hs, server)
    port = server.add_insecure_port(listen)
    if not port:
        raise NxError(f"cannot listen on {listen!r}", field="--listen")
    server.start()
    for name in ("", SERVICE):
        hs.set(name, health_pb2.HealthCheckResponse.SERVING)
    return server, port, t


def serve(listen: str, cache_root: Path | None = None) -> int:
    """Run until SIGTERM/SIGINT.  Prints one line with the bound address (port 0 picks one)."""
    root = cache_root or default_cache_root()
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):  # before the line that tells callers we are up
        signal.signal(sig, lambda *_: stop.set())
    server, port, t = start(listen, root)
    host = listen.rsplit(":", 1)[0]
    print(f"shader-svc listening on {host}:{port} translator {t.id} cache {root}", flush=True)
    # Wait in slices: a process-directed signal may land on one of gRPC's threads, and Python
    # runs its handler only when the main thread next executes bytecode; an untimed wait
    # would then sleep through the SIGTERM (seen once in CI: the process never exited).
    while not stop.wait(0.25):
        pass
    # Shutting down is bounded: should anything below hang, the stacks go to stderr and the
    # process exits (cache files are written atomically, so nothing is left half-written).
    faulthandler.dump_traceback_later(STOP_SECONDS, exit=True)
    if not server.stop(grace=1).wait(STOP_SECONDS / 2):
        log.warning("gRPC server still stopping after %.0f s; exiting anyway", STOP_SECONDS / 2)
    t.close()
    faulthandler.cancel_dump_traceback_later()
    return 0


def main(argv: list[str] | None = None) -> int:
    from nxrecomp.common import log as nxlog

    ap = argparse.ArgumentParser(prog="python -m shader_svc.service")
    ap.add_argument("--listen", default=None)
    ap.add_argument("--cache-dir", default=None)
    a = ap.parse_args(argv)
    nxlog.setup("shader-svc")
    from nxrecomp.common import settings

    return serve(a.listen or settings.get("shader_svc", "listen"), Path(a.cache_dir) if a.cache_dir else None)


if __name__ == "__main__":
    sys.exit(main())
