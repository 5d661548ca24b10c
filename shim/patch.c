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
 *   common: save flags, the 16 GPRs and the x87/SSE/AVX/AVX-512 state; tl_site_hook(regs,
 *           return address); restore; ret
 *
 * Safe shape: a plain register store `mov reg,(base)` followed by an unconditional jump or
 * ret, then compiler alignment padding (NOP forms or int3) up to the next 16-byte boundary.
 * Padding after an unconditional transfer is reached by nothing, so the cave is never
 * executed in place; the instruction after the store is not moved, so a branch to it still
 * lands on it. Anything else stays on the fault path. Each site, patched or refused, is
 * named in a NOTE record with its code bytes. TRACE_LAUNCH_PATCH=0 turns patching off.
 */
#include <cpuid.h>

#define MAX_SITES 32
#define STUB_RET 11            /* offset in a stub of the return address its call pushes */
#define STUB_SITE 41           /* offset in a stub of its site's index in g_site */
#define MAP_FIXED_NOREPLACE_ 0x100000

enum { SITE_LIVE = 1, SITE_REFUSED = 2 };
struct site { uint32_t valid, state; uintptr_t rip, stub; struct store st; };
static struct site g_site[MAX_SITES]; static uint32_t g_nsite;
static uint32_t g_patching;            /* one thread patches at a time; others keep faulting */
static int g_patch = 1;

/* Read by tl_tramp_common: the extended state it saves (XCR0 & x87|SSE|AVX|AVX-512) and
 * the size of the standard-format XSAVE area for it, a multiple of 64. 0: no XSAVE, no patching. */
__attribute__((used)) uint64_t tl_xmask, tl_xsize;

void tl_site_hook(uint64_t *regs, uintptr_t ret);
extern char tl_tramp_common[];
__asm__(
    ".text\n.p2align 4\n.globl tl_tramp_common\n.hidden tl_tramp_common\n"
    ".type tl_tramp_common,@function\ntl_tramp_common:\n"
    "  pushfq\n"
    "  push %r15\n  push %r14\n  push %r13\n  push %r12\n  push %r11\n  push %r10\n  push %r9\n  push %r8\n"
    "  push %rdi\n  push %rsi\n  push %rbp\n  push %rsp\n  push %rbx\n  push %rdx\n  push %rcx\n  push %rax\n"
    "  mov %rsp, %rbx\n"                  /* regs[x86 register number]; rbx survives the call */
    "  mov 136(%rsp), %rsi\n"             /* the stub's return address names the site */
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
    "  mov %rbx, %rsp\n"
    "  pop %rax\n  pop %rcx\n  pop %rdx\n  pop %rbx\n  lea 8(%rsp), %rsp\n  pop %rbp\n  pop %rsi\n  pop %rdi\n"
    "  pop %r8\n  pop %r9\n  pop %r10\n  pop %r11\n  pop %r12\n  pop %r13\n  pop %r14\n  pop %r15\n"
    "  popfq\n"
    "  ret\n"
    ".size tl_tramp_common, .-tl_tramp_common\n");

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
/* A page within a rel32 jump of `near`: tried 1 MiB apart, below then above, never over an
 * existing mapping. */
static uintptr_t stub_page(uintptr_t near) {
    for (int dir = -1; dir <= 1; dir += 2)
        for (uintptr_t k = 1; k < 2000; k++) {
            uintptr_t hint = (near & ~(uintptr_t)0xFFFFF) + (dir < 0 ? -(k << 20) : (k << 20));
            void *p = real_mmap((void *)hint, PAGE, PROT_READ | PROT_WRITE,
                                MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE_, -1, 0);
            if (p == MAP_FAILED) continue;
            if (in_reach((uintptr_t)p, near)) return (uintptr_t)p;
            real_munmap(p, PAGE);
        }
    return 0;
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
 * they were before any patch. */
static void note_site(uintptr_t rip, const char *kind, const char *what, const uint8_t *code) {
    char t[256];
    size_t n = 0;
    for (const char *q = kind; *q && n < 16; q++) t[n++] = *q;
    for (const char *q = " store site 0x"; *q; q++) t[n++] = *q;
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

/* Rewrite the store at `rip` into a jump to a new stub; the reason when it cannot. */
static const char *patch_site(struct site *s) {
    const struct store *st = &s->st;
    uintptr_t rip = s->rip;
    if (!g_patch) return "patching off (TRACE_LAUNCH_PATCH=0)";
    if (!tl_xsize) return "no XSAVE";
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
    uintptr_t stub = stub_alloc(cave);
    if (!stub) return "no page within reach for the stub";
    static const uint8_t code[25] = {
        0x48, 0x8d, 0x64, 0x24, 0x80,                     /* lea -0x80(%rsp),%rsp: the red zone */
        0xff, 0x15, 0x0e, 0x00, 0x00, 0x00,               /* call *[rip+14] -> tl_tramp_common */
        0x48, 0x8d, 0xa4, 0x24, 0x80, 0x00, 0x00, 0x00,   /* lea 0x80(%rsp),%rsp */
        0xff, 0x25, 0x08, 0x00, 0x00, 0x00 };             /* jmp *[rip+8] -> resume */
    uint64_t common = (uint64_t)(uintptr_t)tl_tramp_common, resume = rip + st->len;
    uint64_t index = (uint64_t)(s - g_site);
    memcpy((void *)stub, code, sizeof code);
    memcpy((void *)(stub + 25), &common, 8);
    memcpy((void *)(stub + 33), &resume, 8);
    memcpy((void *)(stub + STUB_SITE), &index, 8);
    if (syscall(SYS_mprotect, (void *)g_stub_page, PAGE, PROT_READ | PROT_EXEC) != 0)
        return "mprotect of the stub failed";
    s->stub = stub;
    /* The site must be complete before any thread can reach the stub. */
    __atomic_thread_fence(__ATOMIC_RELEASE);
    uintptr_t pg = rip & ~(PAGE - 1), pe = (cave + 5 + PAGE - 1) & ~(PAGE - 1);
    if (syscall(SYS_mprotect, (void *)pg, pe - pg, PROT_READ | PROT_WRITE | PROT_EXEC) != 0)
        return "code is not writable";
    uint8_t jmp[5] = { 0xE9 };
    int32_t rel = (int32_t)((intptr_t)stub - (intptr_t)(cave + 5));
    memcpy(jmp + 1, &rel, 4);
    memcpy((void *)cave, jmp, 5);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    /* One 2-byte store inside a cache line: another thread executes the old or the new
     * instruction, never a mix. */
    uint16_t j2 = (uint16_t)(0xEB | ((cave - (rip + 2)) << 8));
    __asm__ volatile("movw %1, %0" : "=m"(*(volatile uint16_t *)rip) : "r"(j2) : "memory");
    syscall(SYS_mprotect, (void *)pg, pe - pg, PROT_READ | PROT_EXEC);
    return NULL;
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
            s->state = why ? SITE_REFUSED : SITE_LIVE;
            STAT(why ? TL_STAT_SITES_REFUSED : TL_STAT_SITES_PATCHED);
            note_site(rip, kind, why ? why : "patched", code);
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
