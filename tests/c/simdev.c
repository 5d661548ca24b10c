/* A simulated GPU submission path, for testing the shim's doorbell trap without a GPU.
 * Synthetic: file-backed mappings under TRACE_LAUNCH_DEVDIR stand in for the usermode
 * page, the USERD + GPFIFO memory and the pushbuffer. It follows libcuda's order as
 * measured on the H100: RM_ALLOC (NVOS64, paramsSize 0) of the usermode object, RM_MAP_MEMORY
 * + mmap, memory objects mapped on the CPU (RM_MAP_MEMORY + mmap) and on the GPU
 * (UVM_MAP_EXTERNAL_ALLOCATION), channels with NV_CHANNEL_ALLOC_PARAMS, the work-submit
 * token control; then per submission: methods into the pushbuffer, a GP entry, GP_PUT in
 * USERD, and the token stored to usermode + 0x90.
 *
 * Usage: simdev DEVDIR TRUTH.json [threads] [per_thread]
 * Writes what it submitted (token, entries, segment VAs and bytes) to TRUTH.json. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define CLIENT 0xc1d00042u
#define UM_HANDLE 0x5c000005u
#define GPU_FILE_USERMODE 0x0
#define GPU_FILE_RINGS 0x10000      /* file offset of the USERD + ring memory in "nvidia0" */
#define RING_VA 0x200600000ull
#define PB_VA 0x200800000ull
#define PB_SIZE (1u << 20)
#define MAX_CH 8

static char dev[512];
static int ctl, gpu, uvm;
static uint8_t *um, *rings, *pb;
static FILE *truth;
static pthread_mutex_t truth_lock = PTHREAD_MUTEX_INITIALIZER;

struct chan { uint32_t handle, token, entries, put; uint64_t ring_off, userd_off; uint32_t pb_off, pb_end; };
static struct chan ch[MAX_CH];

static int open_dev(const char *name) {
    char p[600]; snprintf(p, sizeof p, "%s/%s", dev, name); return open(p, O_RDWR);
}

/* ioctl argument layouts, written out here as the driver ABI gives them (x86-64). */
static void rm_alloc64(uint32_t parent, uint32_t obj, uint32_t cls, void *params) {
    struct { uint32_t hRoot, hParent, hNew, hClass; uint64_t pAlloc, pRights; uint32_t size, flags, status, pad; }
        a = { CLIENT, parent, obj, cls, (uint64_t)(uintptr_t)params, 0, 0 /* as libcuda */, 0, 0, 0 };
    ioctl(ctl, 0xC030462Bu, &a);
}
static void rm_map(uint32_t mem, uint64_t off, uint64_t len, int fd) {
    struct { uint32_t hClient, hDevice, hMemory, pad; uint64_t offset, length, pLinear; uint32_t status, flags; int fd, pad2; }
        a = { CLIENT, 0x5c000001u, mem, 0, off, len, 0, 0, 0, fd, 0 };
    ioctl(ctl, 0xC038464Eu, &a);
}
static void uvm_map(uint32_t mem, uint64_t va, uint64_t off, uint64_t len) {
    static uint8_t p[9264];
    memset(p, 0, sizeof p);
    memcpy(p + 0, &va, 8); memcpy(p + 8, &len, 8); memcpy(p + 16, &off, 8);
    uint32_t client = CLIENT; memcpy(p + 9252, &client, 4); memcpy(p + 9256, &mem, 4);
    ioctl(uvm, 0x21, p);
}
static void token_ctrl(uint32_t chan, uint32_t token) {
    uint32_t params[1] = { token };   /* RM would fill this; the fake device echoes it */
    struct { uint32_t hClient, hObject, cmd, flags; uint64_t params; uint32_t size, status; }
        a = { CLIENT, chan, 0xC36F0108u, 0, (uint64_t)(uintptr_t)params, 4, 0 };
    ioctl(ctl, 0xC020462Au, &a);
}

static void make_channel(int k, uint32_t entries, uint32_t token) {
    struct chan *c = &ch[k];
    c->handle = 0x5c000100u + k; c->token = token; c->entries = entries;
    c->ring_off = 0x3000ull * k; c->userd_off = 0x3000ull * k + 0x2000;
    c->pb_off = k * (PB_SIZE / MAX_CH); c->pb_end = c->pb_off + PB_SIZE / MAX_CH;
    uint8_t params[368]; memset(params, 0, sizeof params);
    uint64_t va = RING_VA + c->ring_off;
    uint32_t mem = 0x5c000010u;
    memcpy(params + 8, &va, 8); memcpy(params + 16, &entries, 4);
    memcpy(params + 32, &mem, 4); memcpy(params + 64, &c->userd_off, 8);
    rm_alloc64(0x5c000002u, c->handle, 0xC86F, params);
    token_ctrl(c->handle, token);
}

/* Doorbell stores shaped like libcuda 580's (the H100 probe found `89 08` = mov %ecx,(%rax),
 * then `e9 rel32`, then multi-byte NOP padding up to a 16-byte boundary): the shape the
 * shim patches into a jump to its stub (shim/patch.c). sim_doorbell is used by the worker
 * threads; sim_doorbell_regs also writes every register after the store (to out[]), so the
 * test can see the stub preserved them, its flags and xmm0-15, and the red zone. */
void sim_doorbell(volatile uint32_t *db, uint32_t token);
void sim_doorbell_regs(volatile uint32_t *db, uint32_t token, uint64_t *out);
void sim_set_gp_put(volatile uint8_t *userd, uint32_t put);
/* The GP entry writer, laid out like libcuda 580's (docs/doorbell-hook.md) down to the byte,
 * so that the shim's template (shim/patch.c I14) finds it: ENTRY0 = va & ~3, ENTRY1 = va
 * bits 39:32 | length in bytes << 8 (LENGTH, dwords at bit 10) | SYNC when `sync` | bit 9. */
void sim_gp_entry(volatile uint32_t *dst, uint64_t va, uint32_t bytes, uint8_t sync);
extern char sim_db_site[], sim_regs_site[];
/* Places the store at offset 15 of a 32-byte block (libcuda: 0x...d1f): the 5-byte jump then
 * ends at 20 and 12 bytes of padding follow (lea and nopl change no flags). */
#define AT_15 "  .p2align 5\n  .byte 0x48,0x8d,0x80,0,0,0,0, 0x0f,0x1f,0x00, 0x0f,0x1f,0x44,0x00,0x00\n"
__asm__(
    /* GP_PUT as libcuda 580 stores it: mov %esi,0x8c(%rdi); ret; padding */
    ".text\n.p2align 4\n.globl sim_set_gp_put\nsim_set_gp_put:\n"
    "  mov %esi, 0x8c(%rdi)\n  ret\n"
    "  .byte 0x66,0x0f,0x1f,0x84,0,0,0,0,0\n"          /* libcuda's padding, byte for byte */
    "  mov $0x200, %eax\n  ret\n"
    "  .byte 0x66,0x2e,0x0f,0x1f,0x84,0,0,0,0,0\n"
    ".globl sim_gp_entry\nsim_gp_entry:\n"
    "  mov %esi, %eax\n  shl $8, %edx\n  and $0xfffffffc, %eax\n  and $0x7ffffc00, %edx\n"
    "  shr $32, %rsi\n  mov %eax, (%rdi)\n  mov %edx, %eax\n  movzbl %sil, %esi\n"
    "  or $0x80000000, %eax\n  test %cl, %cl\n  cmovne %eax, %edx\n  or %edx, %esi\n"
    "  or $0x200, %esi\n  mov %esi, 0x4(%rdi)\n  ret\n"
    ".p2align 4\n.globl sim_doorbell\nsim_doorbell:\n"
    "  mov %rdi, %rax\n  mov %esi, %ecx\n" AT_15
    ".globl sim_db_site\nsim_db_site:\n"
    "  mov %ecx, (%rax)\n"
    "  .byte 0xe9\n  .long 1f - 2f\n2:\n  .p2align 4\n1:\n  ret\n"
    ".p2align 4\n.globl sim_doorbell_regs\nsim_doorbell_regs:\n"
    "  push %rbx\n  push %rbp\n  push %r12\n  push %r13\n  push %r14\n  push %r15\n"
    "  mov %rdx, -16(%rsp)\n"                 /* in the red zone: the stub must skip it */
    "  mov %rdi, %rax\n  mov %esi, %ecx\n"
    "  movabs $0x1111111111111111, %rdx\n  movabs $0x2222222222222222, %rbx\n"
    "  movabs $0x3333333333333333, %rbp\n  movabs $0x4444444444444444, %rsi\n"
    "  movabs $0x5555555555555555, %rdi\n  movabs $0x8888888888888888, %r8\n"
    "  movabs $0x9999999999999999, %r9\n  movabs $0xaaaaaaaaaaaaaaaa, %r10\n"
    "  movabs $0xbbbbbbbbbbbbbbbb, %r11\n  movabs $0xcccccccccccccccc, %r12\n"
    "  movabs $0xdddddddddddddddd, %r13\n  movabs $0xeeeeeeeeeeeeeeee, %r14\n"
    "  movabs $0x7777777777777777, %r15\n"
    "  movq %rdx, %xmm0\n  movq %rbx, %xmm1\n  movq %rbp, %xmm2\n  movq %rsi, %xmm3\n"
    "  movq %rdi, %xmm4\n  movq %r8, %xmm5\n  movq %r9, %xmm6\n  movq %r10, %xmm7\n"
    "  movq %r11, %xmm8\n  movq %r12, %xmm9\n  movq %r13, %xmm10\n  movq %r14, %xmm11\n"
    "  movq %r15, %xmm12\n  movq %rdx, %xmm13\n  movq %rbx, %xmm14\n  movq %rbp, %xmm15\n"
    "  stc\n" AT_15
    ".globl sim_regs_site\nsim_regs_site:\n"
    "  mov %ecx, (%rax)\n"
    "  .byte 0xe9\n  .long 3f - 4f\n4:\n  .p2align 4\n3:\n"
    "  pushfq\n"
    "  xchg %rax, -8(%rsp)\n"               /* rax <- out; the slot keeps rax */
    "  mov %rbx, 8(%rax)\n  mov %rcx, 16(%rax)\n  mov %rdx, 24(%rax)\n  mov %rsi, 32(%rax)\n"
    "  mov %rdi, 40(%rax)\n  mov %rbp, 48(%rax)\n  mov %r8, 56(%rax)\n  mov %r9, 64(%rax)\n"
    "  mov %r10, 72(%rax)\n  mov %r11, 80(%rax)\n  mov %r12, 88(%rax)\n  mov %r13, 96(%rax)\n"
    "  mov %r14, 104(%rax)\n  mov %r15, 112(%rax)\n"
    "  mov -8(%rsp), %rbx\n  mov %rbx, 0(%rax)\n"
    "  pop %rbx\n  mov %rbx, 120(%rax)\n"
    "  movq %xmm0, 128(%rax)\n  movq %xmm1, 136(%rax)\n  movq %xmm2, 144(%rax)\n  movq %xmm3, 152(%rax)\n"
    "  movq %xmm4, 160(%rax)\n  movq %xmm5, 168(%rax)\n  movq %xmm6, 176(%rax)\n  movq %xmm7, 184(%rax)\n"
    "  movq %xmm8, 192(%rax)\n  movq %xmm9, 200(%rax)\n  movq %xmm10, 208(%rax)\n  movq %xmm11, 216(%rax)\n"
    "  movq %xmm12, 224(%rax)\n  movq %xmm13, 232(%rax)\n  movq %xmm14, 240(%rax)\n  movq %xmm15, 248(%rax)\n"
    "  pop %r15\n  pop %r14\n  pop %r13\n  pop %r12\n  pop %rbp\n  pop %rbx\n  ret\n");

/* One submission: `nwords` method words into the pushbuffer, a GP entry, GP_PUT, doorbell. */
enum { DB_C = 0, DB_XCHG = 1, DB_PATCHABLE = 2, DB_REGS = 3 };
static uint64_t regs_out[32];
static void submit_w(int k, int nwords, int fallback, int writer) {
    struct chan *c = &ch[k];
    if (c->pb_off + 4u * (nwords + 2) > c->pb_end) c->pb_off = k * (PB_SIZE / MAX_CH);
    uint32_t *w = (uint32_t *)(pb + c->pb_off);
    w[0] = 0x20012000u | (nwords - 1) << 16 | (0x1b4 >> 2);   /* INC subch 1 header, then data */
    for (int i = 1; i < nwords; i++) w[i] = (uint32_t)(k << 24 | c->put << 8 | i);
    uint64_t va = PB_VA + c->pb_off;
    uint64_t entry = (va & 0xFFFFFFFFFCull) | ((uint64_t)nwords << 42) | (1ull << 41);
    volatile uint32_t *ring = (volatile uint32_t *)(rings + c->ring_off);
    if (writer) {
        sim_gp_entry(ring + 2 * c->put, va, 4u * nwords, 0);
        if ((ring[2 * c->put] | (uint64_t)ring[2 * c->put + 1] << 32) != entry) { fprintf(stderr, "sim_gp_entry\n"); exit(3); }
        if (writer == 2) entry ^= 4, ring[2 * c->put] = (uint32_t)entry;   /* rewritten by a plain store */
    } else {
        ring[2 * c->put] = (uint32_t)entry; ring[2 * c->put + 1] = (uint32_t)(entry >> 32);
    }
    uint32_t put = (c->put + 1) % c->entries;
    if (fallback == DB_PATCHABLE || fallback == DB_REGS) sim_set_gp_put(rings + c->userd_off, put);
    else *(volatile uint32_t *)(rings + c->userd_off + 0x8C) = put;
    __sync_synchronize();
    pthread_mutex_lock(&truth_lock);
    fprintf(truth, "{\"token\": %u, \"put_prev\": %u, \"put\": %u, \"entry\": %llu, \"va\": %llu, \"hex\": \"",
            c->token, c->put, put, (unsigned long long)entry, (unsigned long long)va);
    if (nwords <= 64)   /* bulk segments: the test rebuilds their words from (channel, put, i) */
        for (int i = 0; i < nwords * 4; i++) fprintf(truth, "%02x", ((uint8_t *)w)[i]);
    fprintf(truth, "\", \"fallback\": %d, \"writer\": %d},\n", fallback == DB_XCHG, writer);
    pthread_mutex_unlock(&truth_lock);
    c->put = put;
    c->pb_off += 4u * nwords;
    volatile uint32_t *db = (volatile uint32_t *)(um + 0x90);
    if (fallback == DB_C) {
        *db = c->token;                         /* whatever the compiler emits */
    } else if (fallback == DB_PATCHABLE) {
        sim_doorbell(db, c->token);
    } else if (fallback == DB_REGS) {
        sim_doorbell_regs(db, c->token, regs_out);
    } else {
        uint32_t v = c->token;                  /* xchg: an encoding the shim does not emulate */
        __asm__ volatile("xchgl %0, (%1)" : "+r"(v) : "r"(db) : "memory");
    }
}

static void submit(int k, int nwords, int fallback) {
    submit_w(k, nwords, fallback, fallback == DB_PATCHABLE || fallback == DB_REGS);
}

/* The program's own SIGSEGV handler: faults that are not the shim's must reach it. */
static sigjmp_buf own_jmp;
static volatile int own_handler_ran;
static void own_segv(int sig, siginfo_t *si, void *uc) {
    (void)sig; (void)si; (void)uc;
    own_handler_ran++;
    siglongjmp(own_jmp, 1);
}

struct job { int k, n; };
static void *worker(void *arg) {
    struct job *j = arg;
    for (int i = 0; i < j->n; i++) submit(j->k, 3 + (i % 5), DB_PATCHABLE);
    return NULL;
}

/* The device files opened and mapped as libcuda does (tests/c/winprog.c shares it). */
static const uint32_t sim_timer = 0x7ee1c0de;
static int sim_setup(void) {
    ctl = open_dev("nvidiactl"); gpu = open_dev("nvidia0"); uvm = open_dev("nvidia-uvm");
    /* The usermode object: timer at +0x80 readable through the trap. */
    pwrite(gpu, &sim_timer, 4, GPU_FILE_USERMODE + 0x80);
    uint8_t um_params[2] = { 0, 0 };
    rm_alloc64(0x5c000003u, UM_HANDLE, 0xC661, um_params);
    rm_map(UM_HANDLE, 0, 0x10000, gpu);
    um = mmap(NULL, 0x10000, PROT_WRITE, MAP_SHARED, gpu, GPU_FILE_USERMODE);
    /* USERD + rings: one memory object, CPU-mapped from nvidia0, GPU-mapped by UVM. */
    rm_map(0x5c000010u, 0, 0x40000, gpu);
    rings = mmap(NULL, 0x40000, PROT_READ | PROT_WRITE, MAP_SHARED, gpu, GPU_FILE_RINGS);
    uvm_map(0x5c000010u, RING_VA, 0, 0x40000);
    /* Pushbuffer: system memory from nvidiactl. */
    rm_map(0x5c000020u, 0, PB_SIZE, ctl);
    pb = mmap(NULL, PB_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, ctl, 0);
    uvm_map(0x5c000020u, PB_VA, 0, PB_SIZE);
    if (um == MAP_FAILED || rings == MAP_FAILED || pb == MAP_FAILED) { perror("mmap"); return 1; }
    return 0;
}

/* SIMDEV_CROWD=1: as in a torch.compile process, no free 1 MiB-aligned page within a rel32
 * jump of the store sites: each free 1 MiB slot of the 4 GiB around them is reserved but
 * for its last 64 KiB, and a slot partly taken keeps its first page reserved. The holes
 * left are what a stub page can still use. */
static void crowd(void) {
    uintptr_t site = (uintptr_t)sim_db_site & ~(uintptr_t)0xFFFFF;
    for (long k = -2100; k <= 2100; k++) {
        uintptr_t slot = site + (uintptr_t)(k << 20);
        if (mmap((void *)slot, (1 << 20) - (64 << 10), PROT_NONE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | 0x100000 /* FIXED_NOREPLACE */,
                 -1, 0) == MAP_FAILED)
            mmap((void *)slot, 4096, PROT_NONE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | 0x100000, -1, 0);
    }
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    snprintf(dev, sizeof dev, "%s", argv[1]);
    int threads = argc > 3 ? atoi(argv[3]) : 4, per = argc > 4 ? atoi(argv[4]) : 50;
    truth = fopen(argv[2], "w");
    fprintf(truth, "{\"submissions\": [\n");
    if (sim_setup()) return 1;
    if (getenv("SIMDEV_CROWD")) crowd();
    uint32_t seen_timer = *(volatile uint32_t *)(um + 0x80);

    /* Channel 0: a 16-entry ring driven 40 times, so GP_PUT wraps. */
    make_channel(0, 16, 0xa);
    for (int i = 0; i < 40; i++) submit(0, 4 + (i % 3), 0);
    /* Channel 1: one doorbell through the fallback encoding. */
    make_channel(1, 1024, 0xb);
    submit(1, 6, 0);
    submit(1, 5, DB_XCHG);
    submit(1, 7, 0);
    /* Channel 1 again, through the register-checking site: the first store faults (and
     * patches the site when patching is on), the others go through the stub. */
    char regs_json[8192]; size_t rj = 0;
    for (int i = 0; i < 3; i++) {
        memset(regs_out, 0, sizeof regs_out);
        submit(1, 4 + i, DB_REGS);
        rj += snprintf(regs_json + rj, sizeof regs_json - rj, "%s[", i ? ", " : "");
        for (int r = 0; r < 32; r++)
            rj += snprintf(regs_json + rj, sizeof regs_json - rj, "%s\"%llu\"", r ? ", " : "", (unsigned long long)regs_out[r]);
        rj += snprintf(regs_json + rj, sizeof regs_json - rj, "]");
    }
    /* Channels 2..: several threads submitting at once, each on its own channel. */
    pthread_t th[MAX_CH]; struct job jobs[MAX_CH];
    if (threads > MAX_CH - 2) threads = MAX_CH - 2;
    for (int t = 0; t < threads; t++) make_channel(2 + t, 1024, 0x10012 + t);
    for (int t = 0; t < threads; t++) { jobs[t] = (struct job){ 2 + t, per }; pthread_create(&th[t], NULL, worker, &jobs[t]); }
    for (int t = 0; t < threads; t++) pthread_join(th[t], NULL);
    /* Channel 0 again, 16 more times through the entry writer (hooked by now), then 16 times
     * with plain stores to the same ring slots: the shadow of the first lap must not be taken
     * for the second. With SIMDEV_REWRITE=1 one entry is rewritten after the writer made it. */
    for (int i = 0; i < 16; i++) submit_w(0, 4 + (i % 3), 0, 1);
    for (int i = 0; i < 16; i++) submit_w(0, 4 + (i % 3), 0, 0);
    if (getenv("SIMDEV_REWRITE")) submit_w(0, 5, 0, 2);
    /* SIMDEV_BULK=n: n submissions of 8 KiB segments on channel 1, so that the capture grows
     * well past what the shim maps ahead of its cursor. */
    for (int i = 0, n = getenv("SIMDEV_BULK") ? atoi(getenv("SIMDEV_BULK")) : 0; i < n; i++)
        submit(1, 2048, DB_PATCHABLE);
    /* The program installs its own SIGSEGV handler: doorbells must still be trapped, and
     * its own fault must reach its handler. */
    struct sigaction sa; memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = own_segv; sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
    /* A vfork child that resets SIGSEGV and exits runs in this process's memory: the handler
     * the shim chains to must stay this process's own (shim I22). */
    pid_t child = vfork();
    if (child == 0) { signal(SIGSEGV, SIG_DFL); _exit(0); }
    waitpid(child, NULL, 0);
    submit(0, 4, 0);
    uint8_t *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (sigsetjmp(own_jmp, 1) == 0) ro[16] = 1;
    submit(0, 5, 0);
    /* A doorbell for a token no channel owns. */
    *(volatile uint32_t *)(um + 0x90) = 0xdead;

    fprintf(truth, "{\"token\": 0}],\n \"timer_read\": %u, \"timer_written\": %u, \"own_handler_ran\": %d,\n"
            " \"doorbell\": \"%llu\", \"sites\": [\"%llu\", \"%llu\"], \"gp_put_site\": \"%llu\", \"gp_entry_writer\": \"%llu\","
            " \"regs_after\": [%s]}\n",
            seen_timer, sim_timer, own_handler_ran, (unsigned long long)(uintptr_t)(um + 0x90),
            (unsigned long long)(uintptr_t)sim_db_site, (unsigned long long)(uintptr_t)sim_regs_site,
            (unsigned long long)(uintptr_t)sim_set_gp_put, (unsigned long long)(uintptr_t)sim_gp_entry, regs_json);
    fclose(truth);
    munmap(um, 0x10000);
    return 0;
}
