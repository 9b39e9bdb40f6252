/* savegame: commits a save again and again, each commit changing two files together.  The
 * test kills the process with SIGKILL at random points; after each kill the committed save
 * must be exactly one of the commits (both files from the same round), never a mix. */
#include "hz_sdk.h"
#include "nn.h"

#define BIG 65536
static uint8_t a[BIG], b[BIG];

int hz_main(void) {
    NnResult r = nnfsMountSaveDataForDebug("save");
    if (r) { hz_printf("mount failed %x\n", r); return 1; }
    uint64_t round = 0;
    NnFileHandle f;
    if (nnfsOpenFile(&f, "save:/round", NN_FS_READ) == 0) {
        nnfsReadFile(f, 0, &round, 8);
        nnfsCloseFile(f);
    } else {
        nnfsCreateFile("save:/round", 8);
        nnfsCreateFile("save:/a.bin", BIG);
        nnfsCreateFile("save:/b.bin", BIG);
    }
    hz_printf("start at round %llu\n", (unsigned long long)round);
    NnWriteOption opt = {0};
    for (int i = 0; i < 100000; i++) {
        round++;
        memset(a, (int)(round & 0xFF), BIG);
        memset(b, (int)((round * 7) & 0xFF), BIG);
        nnfsOpenFile(&f, "save:/a.bin", NN_FS_WRITE);
        nnfsWriteFile(f, 0, a, BIG, &opt);
        nnfsCloseFile(f);
        nnfsOpenFile(&f, "save:/b.bin", NN_FS_WRITE);
        nnfsWriteFile(f, 0, b, BIG, &opt);
        nnfsCloseFile(f);
        nnfsOpenFile(&f, "save:/round", NN_FS_WRITE);
        nnfsWriteFile(f, 0, &round, 8, &opt);
        nnfsCloseFile(f);
        r = nnfsCommitSaveData("save");
        if (r) { hz_printf("commit failed %x\n", r); return 1; }
        hz_printf("committed %llu\n", (unsigned long long)round);
    }
    return 0;
}
