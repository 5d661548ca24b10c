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

/* One submission: `nwords` method words into the pushbuffer, a GP entry, GP_PUT, doorbell. */
static void submit(int k, int nwords, int fallback) {
    struct chan *c = &ch[k];
    if (c->pb_off + 4u * (nwords + 2) > c->pb_end) c->pb_off = k * (PB_SIZE / MAX_CH);
    uint32_t *w = (uint32_t *)(pb + c->pb_off);
    w[0] = 0x20012000u | (nwords - 1) << 16 | (0x1b4 >> 2);   /* INC subch 1 header, then data */
    for (int i = 1; i < nwords; i++) w[i] = (uint32_t)(k << 24 | c->put << 8 | i);
    uint64_t va = PB_VA + c->pb_off;
    uint64_t entry = (va & 0xFFFFFFFFFCull) | ((uint64_t)nwords << 42) | (1ull << 41);
    volatile uint32_t *ring = (volatile uint32_t *)(rings + c->ring_off);
    ring[2 * c->put] = (uint32_t)entry; ring[2 * c->put + 1] = (uint32_t)(entry >> 32);
    uint32_t put = (c->put + 1) % c->entries;
    *(volatile uint32_t *)(rings + c->userd_off + 0x8C) = put;
    __sync_synchronize();
    pthread_mutex_lock(&truth_lock);
    fprintf(truth, "{\"token\": %u, \"put_prev\": %u, \"put\": %u, \"entry\": %llu, \"va\": %llu, \"hex\": \"",
            c->token, c->put, put, (unsigned long long)entry, (unsigned long long)va);
    for (int i = 0; i < nwords * 4; i++) fprintf(truth, "%02x", ((uint8_t *)w)[i]);
    fprintf(truth, "\", \"fallback\": %d},\n", fallback);
    pthread_mutex_unlock(&truth_lock);
    c->put = put;
    c->pb_off += 4u * nwords;
    volatile uint32_t *db = (volatile uint32_t *)(um + 0x90);
    if (!fallback) {
        *db = c->token;                         /* mov %ecx,(%rax): the form libcuda uses */
    } else {
        uint32_t v = c->token;                  /* xchg: an encoding the shim does not emulate */
        __asm__ volatile("xchgl %0, (%1)" : "+r"(v) : "r"(db) : "memory");
    }
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
    for (int i = 0; i < j->n; i++) submit(j->k, 3 + (i % 5), 0);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    snprintf(dev, sizeof dev, "%s", argv[1]);
    int threads = argc > 3 ? atoi(argv[3]) : 4, per = argc > 4 ? atoi(argv[4]) : 50;
    truth = fopen(argv[2], "w");
    fprintf(truth, "{\"submissions\": [\n");
    ctl = open_dev("nvidiactl"); gpu = open_dev("nvidia0"); uvm = open_dev("nvidia-uvm");
    /* The usermode object: timer at +0x80 readable through the trap. */
    uint32_t timer = 0x7ee1c0de;
    pwrite(gpu, &timer, 4, GPU_FILE_USERMODE + 0x80);
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
    uint32_t seen_timer = *(volatile uint32_t *)(um + 0x80);

    /* Channel 0: a 16-entry ring driven 40 times, so GP_PUT wraps. */
    make_channel(0, 16, 0xa);
    for (int i = 0; i < 40; i++) submit(0, 4 + (i % 3), 0);
    /* Channel 1: one doorbell through the fallback encoding. */
    make_channel(1, 1024, 0xb);
    submit(1, 6, 0);
    submit(1, 5, 1);
    submit(1, 7, 0);
    /* Channels 2..: several threads submitting at once, each on its own channel. */
    pthread_t th[MAX_CH]; struct job jobs[MAX_CH];
    if (threads > MAX_CH - 2) threads = MAX_CH - 2;
    for (int t = 0; t < threads; t++) make_channel(2 + t, 1024, 0x10012 + t);
    for (int t = 0; t < threads; t++) { jobs[t] = (struct job){ 2 + t, per }; pthread_create(&th[t], NULL, worker, &jobs[t]); }
    for (int t = 0; t < threads; t++) pthread_join(th[t], NULL);
    /* The program installs its own SIGSEGV handler: doorbells must still be trapped, and
     * its own fault must reach its handler. */
    struct sigaction sa; memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = own_segv; sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
    submit(0, 4, 0);
    uint8_t *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (sigsetjmp(own_jmp, 1) == 0) ro[16] = 1;
    submit(0, 5, 0);
    /* A doorbell for a token no channel owns. */
    *(volatile uint32_t *)(um + 0x90) = 0xdead;

    fprintf(truth, "{\"token\": 0}],\n \"timer_read\": %u, \"timer_written\": %u, \"own_handler_ran\": %d}\n",
            seen_timer, timer, own_handler_ran);
    fclose(truth);
    munmap(um, 0x10000);
    return 0;
}
