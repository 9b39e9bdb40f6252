/* fs: nn::fs, nn::os ticks, nn::time, nn::settings, nn::oe and nn::hid as the host serves them.
 * Each line states the rule it checks; tests/horizon/test_horizon_hle.py builds the RomFS and
 * the input script and derives the expected lines from nn::fs's documented behaviour. */
#include "hz_sdk.h"
#include "nn.h"

static uint32_t fnv1a(const uint8_t *p, size_t n) {
    uint32_t h = 2166136261u;
    while (n--) { h ^= *p++; h *= 16777619u; }
    return h;
}

static uint8_t buf[70000];

static void read_whole(const char *path) {
    NnFileHandle f;
    NnResult r = nnfsOpenFile(&f, path, NN_FS_READ);
    if (r) { hz_printf("open %s: %x\n", path, r); return; }
    int64_t size = -1;
    nnfsGetFileSize(&size, f);
    r = nnfsReadFile(f, 0, buf, (size_t)size);
    hz_printf("read %s: result %x size %d fnv %x\n", path, r, (int)size, fnv1a(buf, (size_t)size));
    nnfsCloseFile(f);
}

int hz_main(void) {
    /* ---- RomFS: read-only, files by path, sizes, reads past the end */
    size_t cache = 0;
    nnfsQueryMountRomCacheSize(&cache);
    static uint8_t rom_cache[0x4000];
    hz_printf("MountRom: %x\n", nnfsMountRom("rom", rom_cache, cache));
    hz_printf("MountRom again (name taken): %x\n", nnfsMountRom("rom", rom_cache, cache));
    read_whole("rom:/hello.txt");
    read_whole("rom:/data/big.bin");
    int type = -1;
    hz_printf("entry type rom:/data: %x %d\n", nnfsGetEntryType(&type, "rom:/data"), type);
    hz_printf("entry type rom:/hello.txt: %x %d\n", nnfsGetEntryType(&type, "rom:/hello.txt"), type);
    hz_printf("entry type rom:/nope: %x\n", nnfsGetEntryType(&type, "rom:/nope"));
    NnFileHandle f;
    hz_printf("open missing: %x\n", nnfsOpenFile(&f, "rom:/missing.txt", NN_FS_READ));
    hz_printf("open rom for write: %x\n", nnfsOpenFile(&f, "rom:/hello.txt", NN_FS_WRITE));
    hz_printf("open unmounted: %x\n", nnfsOpenFile(&f, "nothere:/x", NN_FS_READ));
    nnfsOpenFile(&f, "rom:/hello.txt", NN_FS_READ);
    hz_printf("read past end: %x\n", nnfsReadFile(f, 10, buf, 100));
    size_t got = 0;
    NnResult r = nnfsReadFileSized(&got, f, 10, buf, 100);
    hz_printf("sized read past end: %x got %d\n", r, (int)got);
    nnfsCloseFile(f);

    /* ---- save data: a working copy; CommitSaveData makes it durable; Unmount drops the rest */
    NnUid user = {0x0123456789abcdefull, 0x1122334455667788ull};
    hz_printf("EnsureSaveData: %x\n", nnfsEnsureSaveData(&user));
    hz_printf("MountSaveData: %x\n", nnfsMountSaveData("save", &user));
    hz_printf("create dir: %x\n", nnfsCreateDirectory("save:/slot"));
    hz_printf("create dir again: %x\n", nnfsCreateDirectory("save:/slot"));
    hz_printf("create file in missing dir: %x\n", nnfsCreateFile("save:/none/a.bin", 4));
    hz_printf("create file: %x\n", nnfsCreateFile("save:/slot/a.bin", 4));
    nnfsOpenFile(&f, "save:/slot/a.bin", NN_FS_WRITE);
    NnWriteOption opt = {0};
    hz_printf("write past end without append: %x\n", nnfsWriteFile(f, 2, "abcd", 4, &opt));
    hz_printf("write inside: %x\n", nnfsWriteFile(f, 0, "abcd", 4, &opt));
    hz_printf("delete open file: %x\n", nnfsDeleteFile("save:/slot/a.bin"));
    nnfsCloseFile(f);
    nnfsOpenFile(&f, "save:/slot/a.bin", NN_FS_WRITE | NN_FS_APPEND | NN_FS_READ);
    hz_printf("append write: %x\n", nnfsWriteFile(f, 4, "efgh", 4, &opt));
    int64_t size = 0;
    nnfsGetFileSize(&size, f);
    nnfsReadFile(f, 0, buf, 8);
    buf[8] = 0;
    hz_printf("after append: size %d text %s\n", (int)size, (char *)buf);
    nnfsCloseFile(f);
    hz_printf("commit: %x\n", nnfsCommitSaveData("save"));
    nnfsCreateFile("save:/slot/uncommitted.bin", 16);
    nnfsUnmount("save");
    nnfsMountSaveData("save", &user);
    hz_printf("after remount: committed %x uncommitted %x\n", nnfsGetEntryType(&type, "save:/slot/a.bin"),
              nnfsGetEntryType(&type, "save:/slot/uncommitted.bin"));
    nnfsDeleteFile("save:/slot/a.bin");
    nnfsCommitSaveData("save");
    nnfsUnmount("save");

    /* ---- ticks, time, settings, oe */
    int64_t t0 = nnosGetSystemTick();
    nnosSleepThread(20 * 1000 * 1000);
    int64_t dt = nnosConvertToTimeSpan(nnosGetSystemTick() - t0);
    hz_printf("tick frequency: %d\n", (int)nnosGetSystemTickFrequency());
    hz_printf("sleep 20ms measured >= 20ms: %d\n", dt >= 20 * 1000 * 1000);
    hz_printf("ConvertToTimeSpan(19200000): %d\n", (int)(nnosConvertToTimeSpan(19200000) / 1000000));
    int64_t now = 0;
    nntimeInitialize();
    hz_printf("time: %x %d\n", nntimeGetCurrentTime(&now), (int)(now / 86400));
    uint64_t lang = 0;
    nnsettingsGetLanguageCode(&lang);
    hz_printf("language: %s %d\n", (char *)&lang, nnoeGetDesiredLanguage() == lang);
    nnoeInitialize();
    hz_printf("operation mode: %d performance mode: %d\n", nnoeGetOperationMode(), nnoeGetPerformanceMode());

    /* ---- hid: the scripted state of input frame 0 */
    nnhidInitializeNpad();
    uint32_t ids[2] = {0, 0x20};
    nnhidSetSupportedNpadIdType(ids, 2);
    NnNpadState st;
    nnhidGetNpadFullKeyState(&st, &ids[0]);
    hz_printf("npad 0: buttons %x sticks %d %d %d %d attrs %x sampling %d\n", (unsigned)st.buttons, st.lx, st.ly,
              st.rx, st.ry, st.attributes, (int)st.sampling_number);
    uint32_t other = 3;
    nnhidGetNpadFullKeyState(&st, &other);
    hz_printf("npad 3: buttons %x attrs %x\n", (unsigned)st.buttons, st.attributes);
    return 0;
}
