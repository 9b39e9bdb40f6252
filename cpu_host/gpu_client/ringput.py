"""The client's submit of a native recording in C (``ringput.c``): the reference part record
(ring tag 5) of a submission made of one ``Block`` recorded in the command arena, written,
published and its doorbell rung in one call, where the Python path (``blob.part_records`` +
``RingWriter``) spends tens of microseconds a frame building ranges and headers.

Built like the project's other C libraries (``nxrecomp.common.clib``); the record layout's
constants come from ``gpu_host.ring_layout`` and ``gpu_host.binpackets`` as generated defines, so
the format is written down once (PROTOCOL.md "Command arena", "Staged chunks").  ``put`` returns
False where the C path does not apply right now (the ring has no room, or the input is not what it
handles): the caller then takes the Python path, which waits, recovers and names errors."""

from __future__ import annotations

from pathlib import Path

from gpu_host import binpackets
from gpu_host import ring_layout as R
from nxrecomp.common import clib

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "ringput.c"
CDEF = """
int nx_ring_put_ref(uint8_t *ring, uint64_t cap, uint64_t *wpos, uint64_t seq, uint64_t chunks_addr, uint32_t nch,
                    uint64_t total, uint64_t at, int bell);
"""
OK, FULL, BAD = 0, 1, 2
DEFINES = {
    "NX_HEADER_SIZE": R.HEADER_SIZE,
    "NX_OFF_READ": R.OFF_READ,
    "NX_OFF_WRITE": R.OFF_WRITE,
    "NX_REC_HDR": R.REC_HDR.size,
    "NX_TAG_PAD": R.TAG_PAD,
    "NX_TAG_BLOB_REF": R.TAG_BLOB_REF,
    "NX_BLOB_PART": R.BLOB_PART.size,
    "NX_BLOB_LAST": R.BLOB_LAST,
    "NX_BLOB_STAGED": R.BLOB_STAGED,
    "NX_REF_RANGE": R.REF_RANGE.size,
    "NX_STAGED_RANGE": R.STAGED_RANGE.size,
    "NX_MAX_PACKET": R.MAX_PACKET,
    "NX_BLOB_HEADER": binpackets.HEADER,
    "NX_BLOB_MAGIC": binpackets.MAGIC,
    "NX_BLOB_VERSION": binpackets.VERSION,
}
FLAGS = ["-O2", *clib.SHARED_FLAGS, "-Wall", "-Werror", *(f"-D{k}={v}u" for k, v in DEFINES.items())]


def _build() -> Path:
    return clib.build_shared("ringput", [SOURCE], FLAGS, "cpu_host")


lib = clib.Loaded(CDEF, _build)


class RingPut:
    """The C submit bound to one ring mapping (``RingView``) and its doorbell."""

    def __init__(self, view: R.RingView, bell: int) -> None:
        import ctypes

        self.ffi, self.L = lib()
        self._ref = ctypes.c_char.from_buffer(view.mm)  # pins the mapping while bound
        self.ring = self.ffi.cast("uint8_t *", ctypes.addressof(self._ref))
        self.cap = view.capacity
        self.bell = bell
        self.wpos = self.ffi.new("uint64_t *")

    def put(self, writer, seq: int, chunks: int, nch: int, total: int, at: int) -> bool:
        """Write submission ``seq`` (``nch`` recorder chunks at address ``chunks``, ``total``
        bytes at arena offset ``at``) after ``writer``'s position, advancing it; False: nothing
        written (no room, or input the C path refuses)."""
        self.wpos[0] = writer.wpos
        rc = self.L.nx_ring_put_ref(self.ring, self.cap, self.wpos, seq, chunks, nch, total, at, self.bell)
        if rc != OK:
            return False
        writer.wpos = self.wpos[0]
        return True

    def release(self) -> None:
        del self._ref
