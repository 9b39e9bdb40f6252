/* hello: the first things a Horizon program asks of its kernel.  Each line printed states
 * what it checks; tests/horizon/test_horizon_run.py derives the expected values from
 * Horizon's rules (and from the main.npdm the test wrote). */
#include "hz_sdk.h"

int counter_in_data = 7;          /* .data, through a relocated pointer below */
int *pointer_to_counter = &counter_in_data;
static const char *greeting = "hello from horizon";

int hz_main(void) {
    hz_printf("%s\n", greeting);
    hz_printf("relocated pointer: %d\n", *pointer_to_counter);

    /* GetSystemTick counts at 19.2 MHz: 50 ms of SleepThread is ~960000 ticks */
    uint64_t t0 = svcGetSystemTick();
    svcSleepThread(50 * 1000 * 1000);
    uint64_t t1 = svcGetSystemTick();
    hz_printf("ticks over 50ms sleep: %llu\n", (unsigned long long)(t1 - t0));

    /* SetHeapSize takes multiples of 2 MiB; the heap lies in the heap region GetInfo names */
    void *heap = 0;
    Result r = svcSetHeapSize(&heap, 0x1000);
    hz_printf("SetHeapSize(0x1000): %x\n", r);
    r = svcSetHeapSize(&heap, 0x400000);
    uint64_t heap_region = 0, heap_region_size = 0;
    svcGetInfo(&heap_region, 4, HZ_CUR_PROCESS, 0);
    svcGetInfo(&heap_region_size, 5, HZ_CUR_PROCESS, 0);
    int inside = (uint64_t)heap >= heap_region && (uint64_t)heap + 0x400000 <= heap_region + heap_region_size;
    hz_printf("SetHeapSize(0x400000): %x, in heap region: %d\n", r, inside);
    volatile uint32_t *hp = heap;
    hp[0] = 0x12345678; hp[0x3FFFFC / 4] = 0x9abcdef0;
    hz_printf("heap words: %x %x\n", hp[0], hp[0x3FFFFC / 4]);

    MemoryInfo mi;
    uint32_t page;
    r = svcQueryMemory(&mi, &page, (uint64_t)heap + 0x1234);
    hz_printf("QueryMemory(heap): %x addr_ok=%d size=%llx type=%x perm=%x\n", r, mi.addr == (uint64_t)heap,
              (unsigned long long)mi.size, mi.type, mi.perm);
    r = svcQueryMemory(&mi, &page, (uint64_t)&hz_main);
    hz_printf("QueryMemory(code): %x type=%x perm=%x\n", r, mi.type, mi.perm);
    r = svcQueryMemory(&mi, &page, (uint64_t)&counter_in_data);
    hz_printf("QueryMemory(data): %x type=%x perm=%x\n", r, mi.type, mi.perm);
    uint64_t stack_probe = 0;
    r = svcQueryMemory(&mi, &page, (uint64_t)&stack_probe);
    hz_printf("QueryMemory(stack): %x perm=%x\n", r, mi.perm);

    r = svcSetHeapSize(&heap, 0x200000);
    r = svcQueryMemory(&mi, &page, (uint64_t)heap);
    hz_printf("heap shrunk to: %llx\n", (unsigned long long)mi.size);

    uint64_t v = 0;
    r = svcGetInfo(&v, 18, HZ_CUR_PROCESS, 0);
    hz_printf("program id: %x %llx\n", r, (unsigned long long)v);
    r = svcGetInfo(&v, 0, HZ_CUR_PROCESS, 0);
    hz_printf("core mask: %x %llx\n", r, (unsigned long long)v);
    r = svcGetInfo(&v, 1, HZ_CUR_PROCESS, 0);
    hz_printf("priority mask: %x %llx\n", r, (unsigned long long)v);
    r = svcGetInfo(&v, 12345, HZ_CUR_PROCESS, 0);
    hz_printf("unknown info id: %x\n", r);
    r = svcGetInfo(&v, 4, 0x1234, 0);
    hz_printf("info of a bad handle: %x\n", r);

    /* bad guest pointers get InvalidCurrentMemory, never a host crash */
    hz_printf("OutputDebugString(unmapped): %x\n", svcOutputDebugString((const char *)0x1000, 5));
    hz_printf("QueryMemory(out to read-only code): %x\n", svcQueryMemory((MemoryInfo *)(uintptr_t)&hz_main, &page, 0));
    int32_t index;
    Handle hs[65] = {0};
    hz_printf("WaitSynchronization(65 handles): %x\n", svcWaitSynchronization(&index, hs, 65, 0));
    hz_printf("WaitSynchronization(unmapped list): %x\n", svcWaitSynchronization(&index, (Handle *)0x1000, 2, 0));

    int32_t prio = 0;
    svcGetThreadPriority(&prio, HZ_CUR_THREAD);
    hz_printf("main thread priority: %d on core %u\n", prio, svcGetCurrentProcessorNumber());
    hz_printf("bye\n");
    return 0;
}
