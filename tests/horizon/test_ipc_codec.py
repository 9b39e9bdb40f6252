"""The HIPC/CMIF codec against messages laid out by hand from switchbrew's IPC_Marshalling
page (bit positions written out here, not taken from the codec), and the dispatcher's answers
to malformed messages with the results Atmosphère defines (sf/hipc/cmif modules)."""

from __future__ import annotations

import struct

import pytest

from cpu_host.horizon.ipc import cmif, hipc
from cpu_host.horizon.ipc.dispatcher import Context, Interface, Server, command
from cpu_host.horizon.ipc.results import IpcError
from tests.horizon.guest_memory import BytesMemory


def hand_made_request() -> bytes:
    """type 4, one X (index 1, address 0x12_3456_7890, size 0x301), one A (address 0x45_0000_1000,
    size 0x2_0000_0010, mode 1), one B, special header: PID 0x51, copy handle 0xFFFF8001, two
    data words of CMIF after alignment, one C descriptor (mode 3 = 1 entry)."""
    x_addr, a_addr, a_size = 0x1234567890, 0x4500001000, 0x200000010
    w = [0] * 2
    w += [1 | 1 << 1]  # special: send PID, one copy handle
    w += [0x51, 0]  # PID
    w += [0xFFFF8001]
    w += [1 | ((x_addr >> 36) & 0x3F) << 6 | ((x_addr >> 32) & 0xF) << 12 | 0x301 << 16, x_addr & 0xFFFFFFFF]
    w += [a_size & 0xFFFFFFFF, a_addr & 0xFFFFFFFF, 1 | (a_addr >> 36) << 2 | (a_size >> 32) << 24 | ((a_addr >> 32) & 0xF) << 28]
    w += [0x100, 0x2000, 0]  # B: 0x100 bytes at 0x2000, mode 0
    data_index = len(w)  # 14 words = 56 bytes; CMIF at 64
    payload = struct.pack("<IIIIQ", cmif.SFCI, 0, 7, 0, 0xDEADBEEF)
    pad = (-(data_index * 4)) % 16
    data = bytes(pad) + payload + bytes(16 - pad)
    w += list(struct.unpack(f"<{len(data) // 4}I", data))
    w += [0x3000, 0x40 << 16]  # C: 0x40 bytes at 0x3000
    w[0] = 4 | 1 << 16 | 1 << 20 | 1 << 24
    w[1] = len(data) // 4 | 3 << 10 | 1 << 31
    return struct.pack(f"<{len(w)}I", *w)


def test_parse_hand_made_request() -> None:
    m = hipc.parse(hand_made_request() + bytes(0x100 - len(hand_made_request())))
    assert (m.type, m.pid, m.copy_handles, m.move_handles) == (4, 0x51, [0xFFFF8001], [])
    assert m.x == [hipc.Static(1, 0x1234567890, 0x301)]
    assert m.a == [hipc.Buffer(0x4500001000, 0x200000010, 1)]
    assert m.b == [hipc.Buffer(0x2000, 0x100, 0)]
    assert m.c == [hipc.Static(0, 0x3000, 0x40)] and m.c_mode == 3
    req = cmif.parse_request(m, domain=False)
    assert (req.command, req.params[:8]) == (7, struct.pack("<Q", 0xDEADBEEF))


def test_builder_matches_hand_layout() -> None:
    """build_request (what the tests' tools use) writes the same bits as the hand-made message."""
    raw = hand_made_request()
    m = hipc.parse(raw + bytes(0x100 - len(raw)))
    again = hipc.build_request(
        4, cmif.request_payload(7, struct.pack("<Q", 0xDEADBEEF)), pid=0x51, copy_handles=[0xFFFF8001], x=m.x, a=m.a, b=m.b, c=m.c
    )
    a, b = hipc.parse(again + bytes(0x100 - len(again))), hipc.parse(raw + bytes(0x100 - len(raw)))
    fields = ("type", "pid", "copy_handles", "move_handles", "x", "a", "b", "w", "c", "c_mode", "data_offset")
    assert [getattr(a, f) for f in fields] == [getattr(b, f) for f in fields]
    assert cmif.parse_request(a, False).params == cmif.parse_request(b, False).params[:8]
    assert again[:4] + again[8 : b.data_offset] == raw[:4] + raw[8 : b.data_offset]  # all but the data-word count
    assert struct.unpack_from("<I", again, 4)[0] & ~0x3FF == struct.unpack_from("<I", raw, 4)[0] & ~0x3FF


def test_reply_layout() -> None:
    """A reply with one move handle: special header, handle, payload (SFCO) at the first 16-byte
    aligned offset, as libnx's cmifParseResponse reads it."""
    r = hipc.build(0, cmif.reply_payload(0, struct.pack("<I", 42)), move_handles=[0x1234])
    w = struct.unpack_from("<5I", r)
    assert w[0] & 0xFFFF == 0 and w[1] >> 31 == 1 and w[2] == 1 << 5 and w[3] == 0x1234
    assert struct.unpack_from("<IIIII", r, 16) == (cmif.SFCO, 0, 0, 0, 42)


def test_too_large_for_buffer() -> None:
    raw = struct.pack("<II", 4, 0x3FF)
    with pytest.raises(IpcError) as e:
        hipc.parse(raw + bytes(0xF8))
    assert e.value.code == 0xE801  # InvalidCombination (kernel, 116)


class Echo(Interface):
    name = "test::IEcho"
    service = "echo"

    @command(5)
    def echo(self, ctx: Context) -> None:
        ctx.push("I", ctx.u32() + 1)


def memory() -> BytesMemory:
    """Guest memory in which the copy handles of these messages (0xFFFF8001, 0x8001) are objects."""
    return BytesMemory(handles=(0xFFFF8001, 0x8001))


def reply_result(reply: bytes, domain: bool = False) -> int:
    m = hipc.parse(reply + bytes(0x100 - len(reply)))
    body = cmif.payload(m)[16 if domain else 0 :]
    assert struct.unpack_from("<I", body)[0] == cmif.SFCO
    return struct.unpack_from("<I", body, 8)[0]


@pytest.mark.parametrize(
    "raw,kernel,cmif_result",
    [
        (hipc.build_request(4, cmif.request_payload(5, b"\1\0\0\0")), 0, 0),
        (hipc.build_request(4, cmif.request_payload(6)), None, None),  # unserved: raises
        (hipc.build_request(4, struct.pack("<IIII", 0x1234, 0, 5, 0)), 0, 0x1A60A),  # cmif InvalidInHeader
        (hipc.build_request(4, b""), 0, 0x1940A),  # cmif InvalidHeaderSize
        (hipc.build_request(12, cmif.request_payload(5)), 0, 0x3260B),  # hipc UnknownCommandType
        (hipc.build_request(4, cmif.request_payload(5), copy_handles=[0x4242]), 0xE401, None),  # InvalidHandle
        (hipc.build_request(4, cmif.request_payload(5), a=[hipc.Buffer(0x20, 0x10, 0)]), 0xD401, None),
        (hipc.build_request(4, cmif.request_payload(5), b=[hipc.Buffer(0xFFF0, 0x100, 0)]), 0xD401, None),
    ],
)
def test_dispatch_results(raw: bytes, kernel: int | None, cmif_result: int | None) -> None:
    from cpu_host.horizon.ipc.dispatcher import Unserved

    srv = Server()
    sid = srv.open(Echo())
    if kernel is None:
        with pytest.raises(Unserved, match=r"service 'echo', interface test::IEcho, command 6"):
            srv.handle(memory(), sid, raw + bytes(0x100 - len(raw)))
        return
    rc, reply = srv.handle(memory(), sid, raw + bytes(0x100 - len(raw)))
    assert rc == kernel
    if cmif_result is not None:
        assert reply_result(reply) == cmif_result
        if cmif_result == 0:
            assert struct.unpack_from("<I", cmif.payload(hipc.parse(reply + bytes(0x100 - len(reply)))), 16)[0] == 2


def test_domain_objects() -> None:
    srv, mem = Server(), memory()
    sid = srv.open(Echo())
    raw = hipc.build_request(5, cmif.request_payload(0))  # ConvertCurrentObjectToDomain
    rc, reply = srv.handle(mem, sid, raw + bytes(0x100 - len(raw)))
    assert rc == 0 and struct.unpack_from("<I", cmif.payload(hipc.parse(reply + bytes(0x100 - len(reply)))), 16)[0] == 1
    for oid, want in ((1, 0), (7, 0x3D80B)):  # hipc DomainObjectNotFound (11, 492)
        raw = hipc.build_request(4, cmif.request_payload(5, b"\2\0\0\0", domain_object=oid))
        rc, reply = srv.handle(mem, sid, raw + bytes(0x100 - len(raw)))
        assert (rc, reply_result(reply, domain=True)) == (0, want)
    raw = hipc.build_request(4, cmif.request_payload(5, b"", domain_object=1, in_objects=[9]))
    rc, reply = srv.handle(mem, sid, raw + bytes(0x100 - len(raw)))
    assert reply_result(reply, domain=True) == 0x1DE0A  # cmif InvalidInObject (10, 239)
    raw = hipc.build_request(2, b"")  # Close: the session ends
    assert srv.handle(mem, sid, raw + bytes(0x100 - len(raw)))[0] == 0
    assert srv.handle(mem, sid, raw + bytes(0x100 - len(raw)))[0] == 0xF601  # SessionClosed (123)


def test_settings_item_not_found() -> None:
    """set:sys GetSettingsItemValueSize (37) of an item the host does not keep: settings
    SettingsItemNotFound (105, 11) = 0x1669, in the SFCO header (libnx set.c: name and key are
    X buffers 0 and 1, 0x48 bytes each)."""
    from cpu_host.horizon.services.settings import SystemSettingsServer

    srv, mem = Server(), memory()
    sid = srv.open(SystemSettingsServer())
    mem.write(0x2000, b"hbloader".ljust(0x48, b"\0"))
    mem.write(0x3000, b"item".ljust(0x48, b"\0"))
    raw = hipc.build_request(4, cmif.request_payload(37), x=[hipc.Static(0, 0x2000, 0x48), hipc.Static(1, 0x3000, 0x48)])
    rc, reply = srv.handle(mem, sid, raw + bytes(0x100 - len(raw)))
    assert (rc, reply_result(reply)) == (0, 0x1669)


def test_sm_tipc_and_names() -> None:
    """sm: over TIPC (type 16 + id, result as the first data word): RegisterClient, then
    GetServiceHandle of a name with a NUL inside (sm InvalidServiceName 0xC15) and of a served
    name (one move handle)."""
    from cpu_host.horizon.services import psm, sm

    srv, mem = Server(), memory()
    sm.register(srv)
    psm.register(srv)
    sid = srv.connect("sm:")

    def tipc(cmd: int, params: bytes = b"", pid: int | None = None) -> hipc.Message:
        raw = hipc.build_request(16 + cmd, params, pid=pid, align=False)
        rc, reply = srv.handle(mem, sid, raw + bytes(0x100 - len(raw)))
        assert rc == 0
        return hipc.parse(reply + bytes(0x100 - len(reply)))

    assert struct.unpack_from("<I", tipc(1, b"psm\0\0\0\0\0").data)[0] == 0x415  # before RegisterClient
    assert struct.unpack_from("<I", tipc(0, b"", pid=0).data)[0] == 0
    assert struct.unpack_from("<I", tipc(1, b"ps\0m\0\0\0\0").data)[0] == 0xC15
    m = tipc(1, b"psm\0\0\0\0\0")
    assert struct.unpack_from("<I", m.data)[0] == 0 and len(m.move_handles) == 1


def test_release_closes_objects_no_clone_holds() -> None:
    """A session whose handle the guest closed (horizon_kernel.c queues its id) is released: its
    objects are told they are closed, unless a clone (CloneCurrentObject) still holds them."""

    class Tracked(Interface):
        name = "test::ITracked"
        service = "test"

        def __init__(self) -> None:
            self.was_closed = False

        def closed(self) -> None:
            self.was_closed = True

    srv, mem = Server(), memory()
    a, b = Tracked(), Tracked()
    sa, sb = srv.open(a), srv.open(b)
    raw = hipc.build_request(5, cmif.request_payload(2))  # CloneCurrentObject of b's session
    rc, reply = srv.handle(mem, sb, raw + bytes(0x100 - len(raw)))
    assert rc == 0 and hipc.parse(reply + bytes(0x100 - len(reply))).move_handles
    srv.release(sa)
    srv.release(sb)
    assert a.was_closed and not b.was_closed  # the clone still holds b
    assert sa not in srv.sessions and sb not in srv.sessions
