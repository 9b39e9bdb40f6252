"""The kernel's code-memory SVCs on a guest program of ours: ``svcMapProcessCodeMemory`` (0x77),
``svcSetProcessMemoryPermission`` (0x73), ``svcUnmapProcessCodeMemory`` (0x78), each bad argument
answered with Horizon's result, the memory states QueryMemory reports before and after, and a call
into code the program wrote into its heap and mapped (lifted on miss from the mapping: no NRO, so
one function).

Every expected value is from public documentation: Atmosphère's ``kern_svc_process_memory.cpp``
(argument checks in order: alignment InvalidAddress 0xCC01, size InvalidSize 0xCA01, wrap
InvalidCurrentMemory 0xD401, ``GetObjectWithoutPseudoHandle``: the pseudo-handle is InvalidHandle
0xE401 for 0x77/0x78 but accepted by 0x73; permission InvalidNewMemoryPermission 0xD801) and
``KPageTableBase::MapCodeMemory``/``UnmapCodeMemory``/``SetProcessMemoryPermission`` (src Normal
RW without attributes, dst Free, else InvalidCurrentMemory; src then Locked with no permission,
dst AliasCode = QueryMemory type 8; a writable AliasCode page becomes AliasCodeData = type 9; an
unmap whose pages differ is InvalidMemoryRegion 0xDC01); svc::MemoryState values (Normal 5);
KMemoryState AliasCodeData 0x0FFFBD09 with CodeData's data flags (svcSetMemoryPermission
reprotects it; AliasCode 0x04DD7E08 it does not); the A64 encodings of MOVZ and RET (Arm ARM).  The process handle is got as nx-hbloader gets it
(a session to itself, a copied 0xFFFF8001).  Before these SVCs were served the program stopped at
SVC 0x77 (a crash report)."""

from __future__ import annotations

from tests.horizon.hz_build import bundle_from_c, nxrecomp

SRC = r"""
#include "hz_sdk.h"

static Result svcCreateSession(Handle *server, Handle *client) {
    register uint64_t x0 __asm__("x0"), x1 __asm__("x1"), x2 __asm__("x2") = 0, x3 __asm__("x3") = 0;
    __asm__ volatile("svc 0x40" : "=r"(x0), "=r"(x1), "+r"(x2), "+r"(x3) : : "memory");
    *server = (Handle)x1; *client = (Handle)x2;
    return (Result)x0;
}
static Result svcReplyAndReceive(int32_t *index, const Handle *handles, int32_t n, Handle reply, int64_t timeout) {
    register uint64_t x0 __asm__("x0"), x1 __asm__("x1") = (uint64_t)(uintptr_t)handles, x2 __asm__("x2") = (uint64_t)n,
        x3 __asm__("x3") = reply, x4 __asm__("x4") = (uint64_t)timeout;
    __asm__ volatile("svc 0x43" : "=r"(x0), "+r"(x1), "+r"(x2), "+r"(x3), "+r"(x4) : : "memory");
    *index = (int32_t)x1;
    return (Result)x0;
}
/* 0x77 / 0x78: W0 process, X1 dst, X2 src, X3 size; 0x73: W0 process, X1 addr, X2 size, W3 perm */
static Result pcm(int unmap, Handle proc, uint64_t dst, uint64_t src, uint64_t size) {
    register uint64_t x0 __asm__("x0") = proc, x1 __asm__("x1") = dst, x2 __asm__("x2") = src, x3 __asm__("x3") = size;
    if (unmap) __asm__ volatile("svc 0x78" : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3) : : "memory");
    else __asm__ volatile("svc 0x77" : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3) : : "memory");
    return (Result)x0;
}
static Result spmp(Handle proc, uint64_t addr, uint64_t size, uint32_t perm) {
    register uint64_t x0 __asm__("x0") = proc, x1 __asm__("x1") = addr, x2 __asm__("x2") = size, x3 __asm__("x3") = perm;
    __asm__ volatile("svc 0x73" : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3) : : "memory");
    return (Result)x0;
}

#define STACK 0x8000
static uint8_t stack1[STACK] __attribute__((aligned(16)));
static uint8_t bss_page[0x2000] __attribute__((aligned(0x1000)));
static Handle g_srv, g_proc;

static void server(void *arg) {      /* receives the copied pseudo-handle: a real process handle */
    (void)arg;
    int32_t idx;
    svcReplyAndReceive(&idx, &g_srv, 1, 0, -1);
    uint32_t *m = hz_tls();
    g_proc = m[3];                   /* header, special header, then the copied handle */
    svcCloseHandle(g_srv);
}

static void show(const char *what, uint64_t addr) {
    MemoryInfo mi;
    uint32_t pi;
    svcQueryMemory(&mi, &pi, addr);
    hz_printf("%s: type %x perm %x attr %x\n", what, mi.type, mi.perm, mi.attr);
}

int hz_main(void) {
    Handle cli;
    HzThread th;
    svcCreateSession(&g_srv, &cli);
    hz_thread_create(&th, server, 0, stack1, STACK, 44, -2);
    hz_thread_start(&th);
    uint32_t *m = hz_tls();
    memset(m, 0, 0x100);
    m[0] = 4; m[1] = 1u << 31; m[2] = 1u << 1; m[3] = HZ_CUR_PROCESS;   /* one copy handle */
    svcSendSyncRequest(cli);
    svcCloseHandle(cli);
    hz_thread_join(&th);
    hz_printf("process handle is real: %d\n", g_proc && g_proc != HZ_CUR_PROCESS);

    void *heap;
    svcSetHeapSize(&heap, 0x200000);
    uint64_t src = (uint64_t)(uintptr_t)heap, dst = 0x100000000ull;
    uint32_t *code = heap;
    code[0] = 0x52809A40u;           /* movz w0, #1234 */
    code[1] = 0xD65F03C0u;           /* ret */
    ((uint32_t *)heap)[0x400] = 0x5EED;   /* a marker in the second page */

    hz_printf("map with the pseudo-handle: %x\n", pcm(0, HZ_CUR_PROCESS, dst, src, 0x2000));
    hz_printf("map a misaligned dst: %x\n", pcm(0, g_proc, dst + 4, src, 0x2000));
    hz_printf("map size 0: %x\n", pcm(0, g_proc, dst, src, 0));
    hz_printf("map a wrapping range: %x\n", pcm(0, g_proc, 0xFFFFFFFFFFFFF000ull, src, 0x2000));
    hz_printf("map dst in the heap region: %x\n", pcm(0, g_proc, src + 0x100000, src, 0x2000));
    hz_printf("map a src that is no heap: %x\n", pcm(0, g_proc, dst, (uint64_t)(uintptr_t)bss_page, 0x2000));
    hz_printf("map: %x\n", pcm(0, g_proc, dst, src, 0x2000));
    show("dst", dst);
    show("src", src);
    hz_printf("map over it again: %x\n", pcm(0, g_proc, dst, src + 0x2000, 0x2000));
    hz_printf("perm RWX: %x\n", spmp(g_proc, dst, 0x1000, 7));
    hz_printf("perm W: %x\n", spmp(g_proc, dst, 0x1000, 2));
    hz_printf("perm R-X (pseudo-handle): %x\n", spmp(HZ_CUR_PROCESS, dst, 0x1000, 5));
    show("text", dst);
    hz_printf("perm RW: %x\n", spmp(g_proc, dst + 0x1000, 0x1000, 3));
    show("data", dst + 0x1000);
    hz_printf("SetMemoryPermission R on the data: %x\n", svcSetMemoryPermission((void *)(uintptr_t)(dst + 0x1000), 0x1000, 1));
    show("data read-only", dst + 0x1000);
    hz_printf("SetMemoryPermission RW on the data: %x\n", svcSetMemoryPermission((void *)(uintptr_t)(dst + 0x1000), 0x1000, 3));
    hz_printf("SetMemoryPermission R on the text: %x\n", svcSetMemoryPermission((void *)(uintptr_t)dst, 0x1000, 1));
    hz_printf("perm on the heap: %x\n", spmp(g_proc, src + 0x4000, 0x1000, 1));
    hz_printf("the same pages: %x\n", ((volatile uint32_t *)(uintptr_t)dst)[0x400]);
    ((volatile uint32_t *)(uintptr_t)dst)[0x401] = 0xCAFE;
    int (*volatile fn)(void) = (int (*)(void))(uintptr_t)dst;
    hz_printf("call into the mapped code: %d\n", fn());
    hz_printf("unmap other pages: %x\n", pcm(1, g_proc, dst, src + 0x1000, 0x1000));
    hz_printf("unmap with the pseudo-handle: %x\n", pcm(1, HZ_CUR_PROCESS, dst, src, 0x1000));
    hz_printf("unmap the text: %x\n", pcm(1, g_proc, dst, src, 0x1000));
    hz_printf("unmap the data: %x\n", pcm(1, g_proc, dst + 0x1000, src + 0x1000, 0x1000));
    show("dst after", dst);
    show("src after", src);
    hz_printf("written through dst, read at src: %x\n", ((volatile uint32_t *)heap)[0x401]);
    hz_printf("unmap again: %x\n", pcm(1, g_proc, dst, src, 0x1000));
    return 0;
}
"""

EXPECTED = [
    "process handle is real: 1",
    "map with the pseudo-handle: e401",
    "map a misaligned dst: cc01",
    "map size 0: ca01",
    "map a wrapping range: d401",
    "map dst in the heap region: d401",  # CanContain(AliasCode) fails at the SVC
    "map a src that is no heap: d401",  # .bss is CodeData, not Normal
    "map: 0",
    "dst: type 8 perm 0 attr 0",  # AliasCode, KernelRead|NotMapped: no user permission
    "src: type 5 perm 0 attr 1",  # Normal, Locked
    "map over it again: d401",  # dst not Free
    "perm RWX: d801",
    "perm W: d801",
    "perm R-X (pseudo-handle): 0",
    "text: type 8 perm 5 attr 0",
    "perm RW: 0",
    "data: type 9 perm 3 attr 0",  # AliasCodeData
    "SetMemoryPermission R on the data: 0",  # AliasCodeData carries the data flags (FlagCanReprotect): a RELRO
    "data read-only: type 9 perm 1 attr 0",
    "SetMemoryPermission RW on the data: 0",
    "SetMemoryPermission R on the text: d401",  # AliasCode is code: not reprotectable this way
    "perm on the heap: d401",  # Normal has no code flag
    "the same pages: 5eed",
    "call into the mapped code: 1234",
    "unmap other pages: dc01",
    "unmap with the pseudo-handle: e401",
    "unmap the text: 0",
    "unmap the data: 0",
    "dst after: type 0 perm 0 attr 0",
    "src after: type 5 perm 3 attr 0",
    "written through dst, read at src: cafe",
    "unmap again: d401",
]


def test_process_code_memory_svcs(tmp_path) -> None:
    bundle = bundle_from_c(SRC, {}, tmp_path / "w")
    r = nxrecomp("hz-run", str(bundle), timeout=180)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.splitlines() == EXPECTED, r.stdout + r.stderr[-2000:]
    assert "lifted at run time: code loaded at 0x100000000, from the function at 0x100000000 (2 instructions" in r.stderr, (
        r.stderr[-2000:]
    )
    assert (
        r.stderr.count("was unmapped") == 1
        and "the code mapped at 0x100000000 (0x2000 bytes) was unmapped (svcUnmapProcessCodeMemory)" in r.stderr
    ), r.stderr
