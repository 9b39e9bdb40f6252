/* A homebrew-style test program of ours: it relocates itself (RELR and RELA, as libnx's crt0
 * does), reads the loader configuration (Homebrew ABI) or the NSO start-up registers, prints
 * what it found with svcOutputDebugString and returns its exit code to the loader's return
 * address.  Written here; the corpus test runs the programs built by others. */
typedef unsigned long u64;
typedef unsigned int u32;
typedef long s64;

typedef struct { s64 tag; u64 val; } Dyn;
typedef struct { u64 off; u64 info; s64 addend; } Rela;
typedef struct { u32 key, flags; u64 value[2]; } Entry;

extern Dyn _DYNAMIC[] __attribute__((visibility("hidden")));

static void out(const char *s, u64 n) {
    register const char *x0 __asm__("x0") = s;
    register u64 x1 __asm__("x1") = n;
    __asm__ volatile("svc #0x27" : "+r"(x0), "+r"(x1) : : "memory");
}

static u64 len(const char *s) { u64 n = 0; while (s[n]) n++; return n; }
static void say(const char *s) { out(s, len(s)); }

static void hex(const char *label, u64 v) {
    char b[64];
    u64 n = 0;
    while (label[n]) { b[n] = label[n]; n++; }
    b[n++] = '0'; b[n++] = 'x';
    for (int i = 60; i >= 0; i -= 4) b[n++] = "0123456789abcdef"[(v >> i) & 15];
    b[n++] = '\n';
    out(b, n);
}

/* data the loader leaves unrelocated: the crt0 below must fix each pointer exactly once */
static const char greeting[] = "relocated pointer ok\n";
static const char *const pointers[] = {greeting, greeting + 10};

static void relocate(u64 base) {
    u64 rela = 0, relasz = 0, relr = 0, relrsz = 0;
    for (Dyn *d = _DYNAMIC; d->tag; d++) {
        if (d->tag == 7) rela = d->val;
        else if (d->tag == 8) relasz = d->val;
        else if (d->tag == 36) relr = d->val;
        else if (d->tag == 35) relrsz = d->val;
    }
    for (Rela *r = (Rela *)(base + rela); relasz >= sizeof *r; r++, relasz -= sizeof *r)
        if ((u32)r->info == 1027) *(u64 *)(base + r->off) = base + r->addend;
    u64 *where = 0;
    for (u64 *e = (u64 *)(base + relr); relrsz >= 8; e++, relrsz -= 8) {
        if (!(*e & 1)) { where = (u64 *)(base + *e); *where++ += base; continue; }
        for (u64 bits = *e >> 1, i = 0; bits; bits >>= 1, i++)
            if (bits & 1) where[i] += base;
        where += 63;
    }
}

static int contains(const char *s, const char *w) {
    for (; *s; s++) {
        u64 i = 0;
        while (w[i] && s[i] == w[i]) i++;
        if (!w[i]) return 1;
    }
    return 0;
}

static void copy(char *dst, const char *src) { while ((*dst++ = *src++)) {} }

/* Loaded as .../chain.nro, it asks its loader to start sdmc:/switch/last.nro next, through the
 * NextLoadPath entry's buffers (the Homebrew ABI: what libnx's envSetNextLoad writes). */
static void chain(Entry *cfg) {
    const char *argv = 0;
    Entry *next = 0;
    for (Entry *e = cfg; e->key; e++) {
        if (e->key == 5) argv = (const char *)e->value[1];
        if (e->key == 2) next = e;
    }
    if (argv && next && contains(argv, "chain.nro")) {
        copy((char *)next->value[0], "sdmc:/switch/last.nro");
        copy((char *)next->value[1], "sdmc:/switch/last.nro");
        say("next load sdmc:/switch/last.nro\n");
    }
}

int hb_start(Entry *cfg, u64 x1, u64 base, u64 ret) {
    (void)ret;
    relocate(base);
    if (cfg && x1 == ~0ull) {
        say("form nro\n");
        for (Entry *e = cfg; ; e++) {
            if (e->key == 0) { say("end of list: "); out((const char *)e->value[0], e->value[1]); break; }
            if (e->key == 1) hex("main thread handle ", e->value[0]);
            else if (e->key == 5) { say("argv "); say((const char *)e->value[1]); say("\n"); }
            else if (e->key == 3) hex("heap size ", e->value[1]);
            else if (e->key == 7) hex("applet type ", e->value[0]);
            else if (e->key == 6) hex("syscall hint ", e->value[0] & e->value[1]);
            else if (e->key == 10) hex("process handle ", e->value[0]);
            else if (e->key == 11) hex("last load result ", e->value[0]);
        }
        chain(cfg);
    } else {
        say("form nso\n");
        hex("main thread handle ", x1);
    }
    /* read through volatile so the compiler cannot fold the pointers back to their targets */
    say(*(const char *const volatile *)&pointers[0]);
    say(*(const char *const volatile *)&pointers[1]);
    return 42;
}
