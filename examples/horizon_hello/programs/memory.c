/* memory: the memory SVCs beyond the heap.  Each line states the rule it checks.
 * MapMemory lends heap pages to the stack region (the SDK's thread stacks): the source is
 * locked and inaccessible while mapped, the destination is Stack memory, and what was written
 * through it is in the source again after UnmapMemory.  SetMemoryPermission re-protects heap
 * pages; SetMemoryAttribute changes only the uncached bit; MapPhysicalMemory gives fresh zero
 * pages in the alias region. */
#include "hz_sdk.h"

static void query(const char *what, void *addr) {
    MemoryInfo mi;
    uint32_t page;
    svcQueryMemory(&mi, &page, (uint64_t)addr);
    if (mi.type == 0)   /* an unmapped block spans to its neighbours: its size says nothing here */
        hz_printf("%s: type %x perm %x attr %x\n", what, mi.type, mi.perm, mi.attr);
    else
        hz_printf("%s: type %x perm %x attr %x size %llx\n", what, mi.type, mi.perm, mi.attr, (unsigned long long)mi.size);
}

int hz_main(void) {
    void *heap = 0;
    svcSetHeapSize(&heap, 0x400000);
    uint8_t *src = (uint8_t *)heap + 0x100000;
    for (int i = 0; i < 0x10000; i++) src[i] = (uint8_t)(i * 7);
    uint64_t stack_region = 0, stack_size = 0;
    svcGetInfo(&stack_region, 14, HZ_CUR_PROCESS, 0);
    svcGetInfo(&stack_size, 15, HZ_CUR_PROCESS, 0);
    uint8_t *dst = (uint8_t *)(stack_region + stack_size / 2);

    hz_printf("rule: MapMemory's destination must lie in the stack region: %x\n",
              svcMapMemory((uint8_t *)heap + 0x300000, src, 0x10000));
    hz_printf("rule: addresses are page-aligned, sizes whole pages: %x %x\n", svcMapMemory(dst + 8, src, 0x10000),
              svcMapMemory(dst, src, 0x10001));
    hz_printf("MapMemory: %x\n", svcMapMemory(dst, src, 0x10000));
    int same = 1;
    for (int i = 0; i < 0x10000; i++) same &= dst[i] == (uint8_t)(i * 7);
    hz_printf("rule: the destination shows the source's bytes: %d\n", same);
    query("rule: the destination is Stack memory, RW", dst);
    query("rule: the source is locked, inaccessible", src);
    hz_printf("rule: the heap keeps its size while lent out: %x\n", svcSetHeapSize(&heap, 0x200000));
    hz_printf("rule: a mapped source cannot be mapped again: %x\n", svcMapMemory(dst + 0x20000, src, 0x10000));
    for (int i = 0; i < 0x10000; i++) dst[i] = (uint8_t)(i * 13);
    hz_printf("rule: UnmapMemory needs the same triple: %x\n", svcUnmapMemory(dst, src, 0x8000));
    hz_printf("UnmapMemory: %x\n", svcUnmapMemory(dst, src, 0x10000));
    same = 1;
    for (int i = 0; i < 0x10000; i++) same &= src[i] == (uint8_t)(i * 13);
    hz_printf("rule: writes through the destination are in the source: %d\n", same);
    query("rule: the source is heap RW again", src);
    query("rule: the destination is unmapped again", dst);

    hz_printf("SetMemoryPermission(R): %x\n", svcSetMemoryPermission(src, 0x1000, 1));
    query("rule: the pages are read-only heap", src);
    hz_printf("rule: execute is not a heap permission: %x\n", svcSetMemoryPermission(src, 0x1000, 5));
    hz_printf("SetMemoryPermission(RW): %x (byte %x)\n", svcSetMemoryPermission(src, 0x1000, 3), src[1]);
    hz_printf("SetMemoryAttribute(uncached): %x\n", svcSetMemoryAttribute(src, 0x2000, 8, 8));
    query("rule: the attribute shows in QueryMemory", src);
    hz_printf("rule: only the uncached bit may change: %x\n", svcSetMemoryAttribute(src, 0x2000, 1, 1));
    svcSetMemoryAttribute(src, 0x2000, 8, 0);

    uint64_t alias = 0, alias_size = 0;
    svcGetInfo(&alias, 2, HZ_CUR_PROCESS, 0);
    svcGetInfo(&alias_size, 3, HZ_CUR_PROCESS, 0);
    uint8_t *phys = (uint8_t *)alias;
    hz_printf("MapPhysicalMemory: %x\n", svcMapPhysicalMemory(phys, 0x200000));
    int zero = 1;
    for (int i = 0; i < 0x200000; i += 0x1000) zero &= phys[i] == 0;
    phys[0x1234] = 5;
    hz_printf("rule: fresh pages read zero and take writes: %d %d\n", zero, phys[0x1234]);
    query("rule: physical memory mapped in the alias region is Normal RW", phys);
    hz_printf("rule: outside the alias region: %x\n", svcMapPhysicalMemory(heap, 0x1000));
    hz_printf("UnmapPhysicalMemory: %x\n", svcUnmapPhysicalMemory(phys, 0x200000));
    query("rule: unmapped again", phys);
    return 0;
}
