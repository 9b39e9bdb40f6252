"""Steering for relay workers sharing one UDP port (``SO_REUSEPORT``): a classic BPF program,
attached with ``SO_ATTACH_REUSEPORT_CBPF``, that sends every packet of a room to the worker
holding the room.  Its return value is the index of the socket in the port's reuseport group
(the order the sockets were bound); an index out of range falls back to the kernel's 4-tuple
hash.  The program sees the UDP payload from offset 0 (the kernel pulls the UDP header first;
Linux tools/testing/selftests/net/reuseport_bpf.c steers on the payload the same way).

    type (offset 3) JOIN   -> hash(room name in the token) mod N: room_len at 34, room at 35
                             (JOIN: token at 24; token: version, flags, expires:8, room_len)
         RESUME           -> byte 27: bits 24..31 of the session id at 24
         anything else    -> byte 7:  bits 24..31 of the session id at 4 (DATA, PING, LEAVE)

A worker writes its index into bits 24..31 of every session id it hands out
(``relay.server``), so everything after the JOIN follows the session; the JOIN, and the
cookie-less JOIN before it, follow the room.  A packet too short for a load makes the program
return 0 (worker 0 then drops it as malformed).  ``room_worker()`` is the same hash in Python.

Why the sockets belong to the supervisor (``relay.workers``): the group's order is the bind
order, and a socket that closes is replaced by the group's last one; a worker restarted with a
new socket would reshuffle every room.  The supervisor binds all N once and hands worker i
socket i, so a worker's crash or restart never moves another worker's rooms.

Sources of facts: socket(7) (SO_REUSEPORT, SO_ATTACH_REUSEPORT_CBPF), linux/filter.h and
linux/bpf_common.h (struct sock_filter / sock_fprog, opcodes), asm-generic/socket.h (value 51).
"""

from __future__ import annotations

import ctypes
import socket
import struct

SO_ATTACH_REUSEPORT_CBPF = 51  # asm-generic/socket.h
MAX_ROOM = 32
ROOM_LEN_OFF, ROOM_OFF = 34, 35  # JOIN header 24 + token version/flags/expires 10
T_JOIN, T_RESUME = 0x01, 0x02

# linux/bpf_common.h
BPF_LD, BPF_LDX, BPF_ST, BPF_ALU, BPF_JMP, BPF_RET, BPF_MISC = 0x00, 0x01, 0x02, 0x04, 0x05, 0x06, 0x07
BPF_B, BPF_ABS, BPF_MEM, BPF_IMM = 0x10, 0x20, 0x60, 0x00
BPF_ADD, BPF_MUL, BPF_MOD = 0x00, 0x20, 0x90
BPF_JEQ, BPF_JGT, BPF_K, BPF_X, BPF_A = 0x10, 0x20, 0x00, 0x08, 0x10
BPF_TAX, BPF_TXA = 0x00, 0x80


def room_worker(room: str, workers: int) -> int:
    """The worker a room's JOINs go to (the program's hash: h = h*31 + byte, 32 bits)."""
    h = 0
    for b in room.encode()[:MAX_ROOM]:
        h = (h * 31 + b) & 0xFFFFFFFF
    return h % workers


def program(workers: int) -> list[tuple[int, int, int, int]]:
    """The cBPF program as (code, jt, jf, k) rows."""
    if not 1 <= workers <= 256:
        raise ValueError(f"{workers} workers: the session id has 8 bits for the worker")
    ins: list[tuple[int, int, int, int]] = []

    def op(code: int, k: int = 0, jt: int = 0, jf: int = 0) -> None:
        ins.append((code, jt, jf, k))

    # Row by row, jumps counted from the next row:
    #  0 ldb [3]
    #  1 jeq JOIN   -> 7      (jt = 5)
    #  2 jeq RESUME -> 5      (jt = 2)
    #  3 ldb [7]
    #  4 ret a
    #  5 ldb [27]
    #  6 ret a
    #  7 ldb [34]; st M[0]; ldx #0           (len, hash = 0)
    # 10 + 8*i: ld M[0]; jgt #i ? next : done; txa; mul #31; tax; ldb [35+i]; add x; tax  (8 rows)
    op(BPF_LD | BPF_B | BPF_ABS, 3)
    op(BPF_JMP | BPF_JEQ | BPF_K, T_JOIN, jt=5)
    op(BPF_JMP | BPF_JEQ | BPF_K, T_RESUME, jt=2)
    op(BPF_LD | BPF_B | BPF_ABS, 7)
    op(BPF_RET | BPF_A)
    op(BPF_LD | BPF_B | BPF_ABS, 27)
    op(BPF_RET | BPF_A)
    op(BPF_LD | BPF_B | BPF_ABS, ROOM_LEN_OFF)
    op(BPF_ST, 0)
    op(BPF_LDX | BPF_IMM, 0)
    per = 8
    done = len(ins) + per * MAX_ROOM
    for i in range(MAX_ROOM):
        here = len(ins)
        op(BPF_LD | BPF_MEM, 0)  # A = room_len
        op(BPF_JMP | BPF_JGT | BPF_K, i, jt=0, jf=done - (here + 2))  # len > i: go on, else done
        op(BPF_MISC | BPF_TXA)
        op(BPF_ALU | BPF_MUL | BPF_K, 31)
        op(BPF_MISC | BPF_TAX)
        op(BPF_LD | BPF_B | BPF_ABS, ROOM_OFF + i)
        op(BPF_ALU | BPF_ADD | BPF_X)
        op(BPF_MISC | BPF_TAX)
    assert len(ins) == done
    op(BPF_MISC | BPF_TXA)
    op(BPF_ALU | BPF_MOD | BPF_K, workers)
    op(BPF_RET | BPF_A)
    for n, (code, jt, jf, _k) in enumerate(ins):
        if code & 0x07 == BPF_JMP and (n + 1 + max(jt, jf) >= len(ins) or max(jt, jf) > 255):
            raise AssertionError(f"cBPF jump at row {n} out of range")
    return ins


def attach(sock: socket.socket, workers: int) -> None:
    """Attach the steering program to ``sock``'s reuseport group (any member will do)."""
    rows = program(workers)
    filt = (ctypes.c_uint8 * (8 * len(rows))).from_buffer_copy(b"".join(struct.pack("<HBBI", *r) for r in rows))
    fprog = struct.pack("<HxxxxxxQ", len(rows), ctypes.addressof(filt))  # struct sock_fprog on x86-64
    sock.setsockopt(socket.SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, fprog)
