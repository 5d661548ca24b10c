/* The doorbell hook (I12), included by tracelaunch.c. A doorbell that faults costs about
 * 2.6 us on the H100 host (signal delivery, handler frame, sigreturn) on top of the
 * capture itself. So the first fault at a store site whose shape is known to be safe
 * rewrites that store into a jump to a stub, and every later doorbell from that site runs
 * the same capture code with no fault:
 *
 *   site:   mov %ecx,(%rax)         ->   jmp cave            (2 bytes, one atomic store)
 *           jmp elsewhere                jmp elsewhere       (untouched)
 *   cave:   nop padding (>= 5 bytes) ->  jmp stub            (written first: never executed
 *                                                              before the site jumps to it)
 *   stub:   lea -128(%rsp),%rsp; call *common; lea 128(%rsp),%rsp; jmp *resume
 *   common: save flags and the 16 GPRs; tl_site_hook(regs, return address); restore; ret
 *
 * The common part saves no vector state: the shim uses no vector register (I16), so the
 * program's x87/SSE/AVX/AVX-512 state passes through untouched. A full XSAVE and XRSTOR of
 * it cost about 450 cycles per hook on an AVX-512 CPU, three hooks per launch; the GPRs
 * alone about 20. TRACE_LAUNCH_XSAVE=1 uses the saving variant (for measuring).
 *
 * Safe shape: a plain register store `mov reg,(base)` followed by an unconditional jump or
 * ret, then compiler alignment padding (NOP forms or int3) up to the next 16-byte boundary.
 * Padding after an unconditional transfer is reached by nothing, so the cave is never
 * executed in place; the instruction after the store is not moved, so a branch to it still
 * lands on it. Anything else stays on the fault path. Each site, patched or refused, is
 * named in a NOTE record with its code bytes. TRACE_LAUNCH_PATCH=0 turns patching off.
 *
 * A function known byte for byte (I14) is hooked at its entry the same way: its first
 * instruction (position-independent) becomes a 2-byte jump into the padding before the
 * function, and the stub replays that instruction before it jumps back. libcuda's GP entry
 * writer is the one such function: the hook runs a private copy of it into the shadow.
 */
#include <cpuid.h>

#define MAX_SITES 32
#define STUB_RET 11            /* offset in a stub of the return address its call pushes */
#define STUB_COMMON 32         /* offsets in a stub of tl_tramp_common, where to resume, and */
#define STUB_RESUME 40         /* its site's index in g_site */
#define STUB_SITE 48
#define MAP_FIXED_NOREPLACE_ 0x100000

enum { SITE_LIVE = 1, SITE_REFUSED = 2 };
enum { SITE_STORE = 0, SITE_GP_WRITER = 1 };
/* A store site (its decode in st), or a known function hooked at its entry (its private copy) */
struct site { uint32_t valid, state, kind; uintptr_t rip, stub, copy; struct store st; };
static uint32_t g_known_done;          /* the known functions were looked for (I14) */
static struct site g_site[MAX_SITES]; static uint32_t g_nsite;
static uint32_t g_patching;            /* one thread patches at a time; others keep faulting */
static int g_patch = 1;

/* Read by tl_tramp_xsave: the extended state it saves (XCR0 & x87|SSE|AVX|AVX-512) and
 * the size of the standard-format XSAVE area for it, a multiple of 64. 0: no XSAVE. */
__attribute__((used)) uint64_t tl_xmask, tl_xsize;

void tl_site_hook(uint64_t *regs, uintptr_t ret);
extern char tl_tramp_common[], tl_tramp_xsave[];
static int g_xsave;                    /* TRACE_LAUNCH_XSAVE=1: stubs save the vector state too */
#define TRAMP_PUSH                                                                             \
    "  pushfq\n  cld\n"   /* the ABI's DF=0: the shim's string instructions rely on it */      \
    "  push %r15\n  push %r14\n  push %r13\n  push %r12\n  push %r11\n  push %r10\n  push %r9\n  push %r8\n" \
    "  push %rdi\n  push %rsi\n  push %rbp\n  push %rsp\n  push %rbx\n  push %rdx\n  push %rcx\n  push %rax\n" \
    "  mov %rsp, %rbx\n"                  /* regs[x86 register number]; rbx survives the call */ \
    "  mov 136(%rsp), %rsi\n"             /* the stub's return address names the site */
#define TRAMP_POP                                                                              \
    "  mov %rbx, %rsp\n"                                                                       \
    "  pop %rax\n  pop %rcx\n  pop %rdx\n  pop %rbx\n  lea 8(%rsp), %rsp\n  pop %rbp\n  pop %rsi\n  pop %rdi\n" \
    "  pop %r8\n  pop %r9\n  pop %r10\n  pop %r11\n  pop %r12\n  pop %r13\n  pop %r14\n  pop %r15\n"  \
    "  popfq\n"                                                                                \
    "  ret\n"
__asm__(
    ".text\n.p2align 4\n.globl tl_tramp_common\n.hidden tl_tramp_common\n"
    ".type tl_tramp_common,@function\ntl_tramp_common:\n"
    TRAMP_PUSH
    "  and $-16, %rsp\n"
    "  mov %rbx, %rdi\n"
    "  call tl_site_hook\n"
    TRAMP_POP
    ".size tl_tramp_common, .-tl_tramp_common\n"
    ".p2align 4\n.globl tl_tramp_xsave\n.hidden tl_tramp_xsave\n"
    ".type tl_tramp_xsave,@function\ntl_tramp_xsave:\n"
    TRAMP_PUSH
    "  and $-64, %rsp\n"
    "  sub tl_xsize(%rip), %rsp\n"
    "  xor %eax, %eax\n"                  /* the XSAVE header must be zero for XRSTOR */
    "  mov %rax, 512(%rsp)\n  mov %rax, 520(%rsp)\n  mov %rax, 528(%rsp)\n  mov %rax, 536(%rsp)\n"
    "  mov %rax, 544(%rsp)\n  mov %rax, 552(%rsp)\n  mov %rax, 560(%rsp)\n  mov %rax, 568(%rsp)\n"
    "  mov tl_xmask(%rip), %eax\n  mov tl_xmask+4(%rip), %edx\n"
    "  xsave64 (%rsp)\n"
    "  mov %rbx, %rdi\n"
    "  call tl_site_hook\n"
    "  mov tl_xmask(%rip), %eax\n  mov tl_xmask+4(%rip), %edx\n"
    "  xrstor64 (%rsp)\n"
    TRAMP_POP
    ".size tl_tramp_xsave, .-tl_tramp_xsave\n");

static void xstate_init(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) return;   /* OSXSAVE */
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    uint64_t mask = (((uint64_t)hi << 32) | lo) & 0xE7, size = 576;
    for (unsigned i = 2; i < 8; i++)
        if (mask & (1ull << i)) { __cpuid_count(0xD, i, a, b, c, d); if (b + a > size) size = b + a; }
    tl_xmask = mask;
    tl_xsize = (size + 63) & ~63ull;
}

static struct site *site_at(uintptr_t rip) {
    uint32_t n = LOAD_ACQ(&g_nsite);
    for (uint32_t i = 0; i < n && i < MAX_SITES; i++)
        if (LOAD_ACQ(&g_site[i].valid) && g_site[i].rip == rip) return &g_site[i];
    return NULL;
}

/* Length of one padding instruction (a NOP form or int3) at p, or 0. */
static size_t pad_len(const uint8_t *p) {
    size_t k = 0;
    while (k < 8 && (p[k] == 0x66 || p[k] == 0x2E)) k++;
    if (p[k] == 0x90 || p[k] == 0xCC) return k + 1;
    if (p[k] != 0x0F || p[k + 1] != 0x1F) return 0;
    uint8_t m = p[k + 2];
    int mod = m >> 6, rm = m & 7;
    if (((m >> 3) & 7) != 0 || mod == 3) return 0;
    size_t l = k + 3 + (rm == 4);
    if (mod == 1) l += 1; else if (mod == 2 || (mod == 0 && rm == 5)) l += 4;
    return l;
}

/* STUB_BYTES for one stub within reach of `near`. Stubs share a page while it has room and
 * is within reach: CUDA reserves much of the address space later on (on the H100 a page
 * near libcuda could not be found for the second site in 2 of 15 runs when each site
 * asked for its own), and the first site is patched early. Called with g_patching held. */
#define STUB_BYTES 64
static uintptr_t g_stub_page; static size_t g_stub_used = PAGE;
static int in_reach(uintptr_t a, uintptr_t near) {
    intptr_t d = (intptr_t)(a - near);
    return d > -(1l << 31) + (long)PAGE && d < (1l << 31) - (long)PAGE;
}
static uintptr_t page_at(uintptr_t hint, uintptr_t near) {
    void *p = real_mmap((void *)hint, PAGE, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE_, -1, 0);
    if (p == MAP_FAILED) return 0;
    if (in_reach((uintptr_t)p, near)) return (uintptr_t)p;
    real_munmap(p, PAGE);
    return 0;
}

static unsigned hexval(char c) {
    return c >= '0' && c <= '9' ? (unsigned)(c - '0') : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10) : 0;
}

/* The free page nearest `near` in the holes between the mappings /proc/self/maps lists
 * (raw syscalls and a stack buffer: this may run in the fault handler). A torch.compile
 * process on the H100 had no free 1 MiB-aligned page within reach of libcuda's sites:
 * large libraries and the capture's own 64 GiB window fill the 4 GiB around them, leaving
 * 26 holes of under 1 MiB between libraries. */
static uintptr_t hole_page(uintptr_t near) {
    int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    char buf[4096];
    size_t have = 0;
    uintptr_t prev_end = 0, best = 0, best_d = ~(uintptr_t)0;
    for (;;) {
        long n = syscall(SYS_read, fd, buf + have, sizeof buf - have);
        if (n <= 0) break;
        have += (size_t)n;
        size_t line = 0;
        for (size_t i = 0; i < have; i++) {
            if (buf[i] != '\n') continue;
            uintptr_t a = 0, b = 0; size_t j = line;
            for (; j < i && buf[j] != '-'; j++) a = a * 16 + (uintptr_t)hexval(buf[j]);
            for (j++; j < i && buf[j] != ' '; j++) b = b * 16 + (uintptr_t)hexval(buf[j]);
            if (a > prev_end) {       /* a hole [prev_end, a): its page nearest `near` */
                uintptr_t c = near < prev_end ? prev_end : near >= a ? a - PAGE : near & ~(PAGE - 1);
                uintptr_t d = c > near ? c - near : near - c;
                if (in_reach(c, near) && d < best_d) { best = c; best_d = d; }
            }
            if (b > prev_end) prev_end = b;
            line = i + 1;
        }
        memmove(buf, buf + line, have - line);   /* the line not yet whole */
        have -= line;
        if (have == sizeof buf) break;            /* a line longer than the buffer: give up */
    }
    syscall(SYS_close, fd);
    return best ? page_at(best, near) : 0;
}

/* A page within a rel32 jump of `near`: tried 1 MiB apart, below then above, never over an
 * existing mapping; else the nearest free page between mappings. */
static uintptr_t stub_page(uintptr_t near) {
    for (int dir = -1; dir <= 1; dir += 2)
        for (uintptr_t k = 1; k < 2000; k++) {
            uintptr_t hint = (near & ~(uintptr_t)0xFFFFF) + (dir < 0 ? -(k << 20) : (k << 20));
            uintptr_t p = page_at(hint, near);
            if (p) return p;
        }
    return hole_page(near);
}

static uintptr_t stub_alloc(uintptr_t near) {
    if (!g_stub_page || g_stub_used + STUB_BYTES > PAGE || !in_reach(g_stub_page, near)) {
        uintptr_t p = stub_page(near);
        if (!p) return 0;
        g_stub_page = p; g_stub_used = 0;
    }
    /* writable for the new stub, and still executable for stubs already in use */
    if (syscall(SYS_mprotect, (void *)g_stub_page, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) return 0;
    uintptr_t a = g_stub_page + g_stub_used;
    g_stub_used += STUB_BYTES;
    return a;
}

static void note_text(const char *text, size_t n);
static size_t put_hex(char *d, uint64_t v, int digits) {
    size_t n = 0;
    for (int i = digits - 1; i >= 0; i--) d[n++] = "0123456789abcdef"[(v >> (4 * i)) & 15];
    return n;
}

/* NOTE: "<kind> store site 0x<rip>: <what>; code from rip-16: <48 bytes hex>", the bytes as
 * they were before any patch; a known function is a "<name> site" (shim/patch.c I14). */
static void note_site(uintptr_t rip, const char *kind, const char *what, const uint8_t *code) {
    char t[256];
    size_t n = 0;
    for (const char *q = kind; *q && n < 24; q++) t[n++] = *q;
    for (const char *q = s_prefix(kind, "GP entry", 8) ? " site 0x" : " store site 0x"; *q; q++) t[n++] = *q;
    n += put_hex(t + n, rip, 12);
    t[n++] = ':'; t[n++] = ' ';
    for (const char *q = what; *q && n < 120; q++) t[n++] = *q;
    for (const char *q = "; code from rip-16: "; *q; q++) t[n++] = *q;
    for (int i = 0; i < 48; i++) n += put_hex(t + n, code[i], 2);
    note_text(t, n);
}

/* TRACE_LAUNCH_PROBE=ring: "ring store site 0x<rip> to 0x<addr>; code from rip-16: ..." once per rip. */
static uintptr_t g_probe_rip[64]; static uint32_t g_nprobe;
static void probe_note(uintptr_t rip, uintptr_t addr) {
    uint32_t n = LOAD_ACQ(&g_nprobe);
    for (uint32_t i = 0; i < n && i < 64; i++) if (g_probe_rip[i] == rip) return;
    uint32_t i = ADD(&g_nprobe, 1);
    if (i >= 64) return;
    g_probe_rip[i] = rip;
    char t[256];
    size_t k = 0;
    for (const char *q = "ring store site 0x"; *q; q++) t[k++] = *q;
    k += put_hex(t + k, rip, 12);
    for (const char *q = " to 0x"; *q; q++) t[k++] = *q;
    k += put_hex(t + k, addr, 12);
    for (const char *q = "; code from rip-16: "; *q; q++) t[k++] = *q;
    for (int j = -16; j < 32; j++) k += put_hex(t + k, ((const uint8_t *)rip)[j], 2);
    note_text(t, k);
}

/* Write a stub for site `s` and route its first 2 bytes to it through a 5-byte jump at
 * `cave` (padding within rel8 reach). The stub calls tl_tramp_common, replays `dlen` bytes
 * of displaced position-independent code, and jumps to `resume`. Stub layout:
 *    0 lea -0x80(%rsp),%rsp   5 call *STUB_COMMON   11 lea 0x80(%rsp),%rsp   19 displaced
 *    19+dlen jmp *STUB_RESUME   32 common   40 resume   48 site index */
static const char *install(struct site *s, uintptr_t cave, const uint8_t *displaced, size_t dlen,
                           uintptr_t resume) {
    uintptr_t rip = s->rip;
    if (dlen > 7) return "displaced code too long";
    uintptr_t stub = stub_alloc(cave);
    if (!stub) return "no page within reach for the stub";
    uint8_t code[STUB_BYTES];
    memset(code, 0xCC, sizeof code);
    static const uint8_t head[19] = {
        0x48, 0x8d, 0x64, 0x24, 0x80,                         /* lea -0x80(%rsp),%rsp: the red zone */
        0xff, 0x15, STUB_COMMON - 11, 0x00, 0x00, 0x00,       /* call *[rip+21] */
        0x48, 0x8d, 0xa4, 0x24, 0x80, 0x00, 0x00, 0x00 };     /* lea 0x80(%rsp),%rsp */
    memcpy(code, head, sizeof head);
    if (dlen) memcpy(code + 19, displaced, dlen);
    size_t j = 19 + dlen;
    code[j] = 0xff; code[j + 1] = 0x25;                        /* jmp *[rip+rel] */
    int32_t rel = (int32_t)(STUB_RESUME - (j + 6));
    memcpy(code + j + 2, &rel, 4);
    uint64_t common = (uint64_t)(uintptr_t)(g_xsave ? tl_tramp_xsave : tl_tramp_common), index = (uint64_t)(s - g_site);
    memcpy(code + STUB_COMMON, &common, 8);
    memcpy(code + STUB_RESUME, &resume, 8);
    memcpy(code + STUB_SITE, &index, 8);
    memcpy((void *)stub, code, sizeof code);
    if (syscall(SYS_mprotect, (void *)(stub & ~(PAGE - 1)), PAGE, PROT_READ | PROT_EXEC) != 0)
        return "mprotect of the stub failed";
    s->stub = stub;
    /* The site must be complete before any thread can reach the stub. */
    __atomic_thread_fence(__ATOMIC_RELEASE);
    uintptr_t lo = rip < cave ? rip : cave, hi = rip + 2 > cave + 5 ? rip + 2 : cave + 5;
    uintptr_t pg = lo & ~(PAGE - 1), pe = (hi + PAGE - 1) & ~(PAGE - 1);
    if (syscall(SYS_mprotect, (void *)pg, pe - pg, PROT_READ | PROT_WRITE | PROT_EXEC) != 0)
        return "code is not writable";
    uint8_t jmp[5] = { 0xE9 };
    rel = (int32_t)((intptr_t)stub - (intptr_t)(cave + 5));
    memcpy(jmp + 1, &rel, 4);
    memcpy((void *)cave, jmp, 5);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    /* One 2-byte store inside a cache line: another thread executes the old or the new
     * instruction, never a mix. */
    uint16_t j2 = (uint16_t)(0xEB | (uint16_t)(uint8_t)(int8_t)((intptr_t)cave - (intptr_t)(rip + 2)) << 8);
    __asm__ volatile("movw %1, %0" : "=m"(*(volatile uint16_t *)rip) : "r"(j2) : "memory");
    syscall(SYS_mprotect, (void *)pg, pe - pg, PROT_READ | PROT_EXEC);
    return NULL;
}

/* Rewrite the store at `rip` into a jump to a new stub; the reason when it cannot. */
static const char *patch_site(struct site *s) {
    const struct store *st = &s->st;
    uintptr_t rip = s->rip;
    if (!g_patch) return "patching off (TRACE_LAUNCH_PATCH=0)";
    if (g_xsave && !tl_xsize) return "no XSAVE";
    if (st->kind != 1 || st->base < 0 || st->base == 4 || st->reg == 4 || st->size < 2)
        return "not a plain register store";
    const uint8_t *q = (const uint8_t *)(rip + st->len);
    size_t jl = q[0] == 0xE9 ? 5 : q[0] == 0xEB ? 2 : q[0] == 0xC3 ? 1 : 0;
    if (!jl) return "no unconditional jump after the store";
    uintptr_t cave = rip + st->len + jl, end = (cave + 15) & ~(uintptr_t)15;
    if (end - cave < 5 || cave - (rip + 2) > 127) return "no padding to jump through";
    for (uintptr_t x = cave; x < end;) {
        size_t l = pad_len((const uint8_t *)x);
        if (!l || x + l > end) return "bytes after the jump are not padding";
        x += l;
    }
    if ((rip & 63) == 63) return "store straddles a cache line";
    return install(s, cave, NULL, 0, rip + st->len);
}

/* A site patched (why == NULL) or refused: its state, the count, and its NOTE. */
static void site_done(struct site *s, const char *why, const char *kind, const uint8_t *code) {
    s->state = why ? SITE_REFUSED : SITE_LIVE;
    STAT(why ? TL_STAT_SITES_REFUSED : TL_STAT_SITES_PATCHED);
    note_site(s->rip, kind, why ? why : "patched", code);
}

/* ---- functions known byte for byte (I14) -------------------------------------------- */
/* libcuda 580.159.04 writes each GPFIFO entry through one leaf function (the ring probe,
 * docs/doorbell-hook.md): gp_entry(dst, va, bytes, sync) stores NV_GP_ENTRY0 then ENTRY1.
 * A template is the 16 bytes before the function (the function before it and the padding
 * that is the cave) and the function itself; only an exact match is hooked, so what the
 * bytes do is what was disassembled. The first instruction, mov %esi,%eax, is replayed by
 * the stub; the hook calls a private copy of the function to make the entry. */
struct known_fn { const char *name; uint8_t cave, first_len, len; uint8_t code[64]; };
static const struct known_fn g_known[] = {
    { "GP entry writer", 6, 2, 64, {
        0xb8, 0x00, 0x02, 0x00, 0x00, 0xc3,                               /* mov $0x200,%eax; ret */
        0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00,       /* padding: the cave */
        0x89, 0xf0, 0xc1, 0xe2, 0x08, 0x83, 0xe0, 0xfc, 0x81, 0xe2, 0x00, 0xfc, 0xff, 0x7f,
        0x48, 0xc1, 0xee, 0x20, 0x89, 0x07, 0x89, 0xd0, 0x40, 0x0f, 0xb6, 0xf6, 0x0d, 0x00,
        0x00, 0x00, 0x80, 0x84, 0xc9, 0x0f, 0x45, 0xd0, 0x09, 0xd6, 0x81, 0xce, 0x00, 0x02,
        0x00, 0x00, 0x89, 0x77, 0x04, 0xc3 } },
};
#define KNOWN_REACH (64u << 10)   /* searched this far either side of the GP_PUT site */

static const char *patch_known(struct site *s, const struct known_fn *k) {
    if (!g_patch) return "patching off (TRACE_LAUNCH_PATCH=0)";
    if (g_xsave && !tl_xsize) return "no XSAVE";
    uintptr_t f = s->rip, cave = f - 16 + k->cave;
    for (uintptr_t x = cave; x < f;) {               /* the template says so; check anyway */
        size_t l = pad_len((const uint8_t *)x);
        if (!l || x + l > f) return "no padding before the function";
        x += l;
    }
    uintptr_t copy = stub_alloc(f);
    if (!copy) return "no page for the copy";
    memcpy((void *)copy, k->code + 16, (size_t)k->len - 16);
    if (syscall(SYS_mprotect, (void *)(copy & ~(PAGE - 1)), PAGE, PROT_READ | PROT_EXEC) != 0)
        return "mprotect of the copy failed";
    s->copy = copy;
    return install(s, cave, k->code + 16, k->first_len, f + k->first_len);
}

/* Hook every exact copy of a known function within KNOWN_REACH of `near` (a libcuda code
 * address). Read with process_vm_readv: the range may hold unmapped pages. */
static void find_known(uintptr_t near) {
    static uint8_t win[4096 + 64];
    if (__atomic_exchange_n(&g_known_done, 1, __ATOMIC_RELAXED)) return;
    for (size_t i = 0; i < sizeof g_known / sizeof g_known[0]; i++) {
        const struct known_fn *k = &g_known[i];
        uintptr_t lo = (near - KNOWN_REACH) & ~(uintptr_t)15, hi = near + KNOWN_REACH;
        for (uintptr_t base = lo; base < hi; base += 4096) {
            size_t n = safe_read(win, base, sizeof win) ? sizeof win : safe_read(win, base, 4096) ? 4096 : 0;
            for (size_t o = 0; o + k->len <= n && o < 4096; o += 16) {   /* only bytes read now */
                if (memcmp(win + o, k->code, k->len)) continue;
                uintptr_t f = base + o + 16;
                if (site_at(f)) continue;
                struct site *s = APPEND(g_site, g_nsite, MAX_SITES);
                if (!s) return;
                s->rip = f; s->kind = SITE_GP_WRITER;
                STORE_REL(&s->valid, 1);
                site_done(s, patch_known(s, k), k->name, k->code);
            }
        }
    }
}

/* Called by on_segv for a doorbell or GP_PUT store it emulated: patch the site once. */
static void consider_site(uintptr_t rip, const struct store *st, const char *kind) {
    if (site_at(rip) || __atomic_exchange_n(&g_patching, 1, __ATOMIC_ACQUIRE)) return;
    if (!site_at(rip)) {
        struct site *s = APPEND(g_site, g_nsite, MAX_SITES);
        if (s) {
            /* Published before the code changes: a thread that faulted on the old store and
             * then reads the new bytes finds the decode here (on_segv). */
            s->rip = rip; s->st = *st;
            STORE_REL(&s->valid, 1);
            uint8_t code[48];
            memcpy(code, (const uint8_t *)rip - 16, sizeof code);
            const char *why = patch_site(s);
            site_done(s, why, kind, code);
            /* libcuda's GP entry writer lies near its GP_PUT store */
            if (!why && s_prefix(kind, "GP_PUT", 6)) find_known(rip);
        }
    }
    __atomic_store_n(&g_patching, 0, __ATOMIC_RELEASE);
}

/* The stub's C side: the store the patched instruction would have made. The stub names its
 * site (written before the stub became reachable), so no lookup can miss. */
__attribute__((used)) void tl_site_hook(uint64_t *regs, uintptr_t ret) {
    int saved = errno;
    uint64_t index;
    memcpy(&index, (const void *)(ret - STUB_RET + STUB_SITE), 8);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    {
        struct site *s = &g_site[index];
        if (s->kind == SITE_GP_WRITER) {
            uint64_t e = 0;   /* the entry as libcuda's own code makes it, for ring slot rdi */
            ((void (*)(void *, uint64_t, uint64_t, uint64_t))s->copy)(&e, regs[6], regs[2], regs[1]);
            gp_shadow_put((uintptr_t)regs[7], e);
            errno = saved;
            return;
        }
        uintptr_t a = (uintptr_t)regs[s->st.base] + (uintptr_t)(intptr_t)s->st.disp;
        uint64_t v = regs[s->st.reg];
        if (s->st.size < 8) v &= (1ull << (8 * s->st.size)) - 1;
        struct trap *t = trap_at(a);
        if (t && !t->probe && a - t->user + s->st.size <= PAGE) {
            if (t->kind == TRAP_USERD) STAT(TL_STAT_GP_PUT_HOOKED);
            else if (covers(a - t->user, s->st.size, USERMODE_DOORBELL) > 0) STAT(TL_STAT_DOORBELLS_HOOKED);
            trap_store(t, a - t->user, v, s->st.size, s->rip, s->st.len, TL_SUB_HOOKED);
        } else if (s->st.size == 8) *(volatile uint64_t *)a = v;   /* not ours: the store as written */
        else if (s->st.size == 4) *(volatile uint32_t *)a = (uint32_t)v;
        else *(volatile uint16_t *)a = (uint16_t)v;
    }
    errno = saved;
}
