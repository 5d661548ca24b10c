/* trace-launch shim: an LD_PRELOAD recorder of what a CUDA program does at the NVIDIA
 * driver interface: every ioctl, open/close and mmap of /dev/nvidia* (and of each copy of
 * such an fd made by dup, dup2, dup3 or fcntl F_DUPFD), and every GPU submission (GPFIFO
 * entries + pushbuffer segments) at the moment its doorbell rings.
 *
 * Invariants (keep them true; each is relied on somewhere):
 *  I1 Never harm the program. Every wrapper calls the real function with the program's
 *     arguments and returns its result with errno unchanged. When recording fails, the
 *     shim stops recording (and counts it); it never fails the call.
 *  I2 Async-signal safety. Record reservation and publication, the fault handlers and all
 *     they call use no locks, no malloc, no stdio: atomics on a MAP_SHARED file, raw
 *     syscalls, plain stores. Any wrapper may run inside a signal handler of the program.
 *  I3 The capture fd is high-numbered and close-on-exec. close, dup2, dup3, close_range and
 *     closefrom by the program step around it. If it is lost anyway (raw syscall), it is
 *     reopened by path, after checking it is the same inode, only when the file must grow.
 *  I4 The shim never creates or truncates the capture. The tracer creates it with its header;
 *     every process (forked children, exec'd images) appends through one atomic cursor in
 *     that header, so one file holds every process and a crash loses no published record.
 *  I5 User pointers handed to ioctl are read with process_vm_readv: a bad pointer yields
 *     EFAULT, never a fault. Device memory (BAR1 rings, USERD) is read with aligned 32-bit
 *     loads, except a GPFIFO entry: one aligned 64-bit load (it is plain memory, and each
 *     uncached BAR1 read costs about a microsecond). PROT_NONE mappings and
 *     /dev/nvidia-uvm ranges are never read.
 *  I6 Object tables are append-only fixed arrays. An entry is filled, then published by a
 *     release store of `valid`; readers (the fault handler too) acquire `valid` first.
 *  I7 The doorbell trap: the first 4 KiB page of each usermode-object mapping is made
 *     read-only. Loads (libcuda reads +0x80 timer, +0x94) still go through; the doorbell
 *     store faults. The handler records the submission, performs the store through a
 *     private alias mapping of the same page, and steps over the instruction. An encoding
 *     it does not decode takes the single-step path (counted), never an exit.
 *  I8 Faults that are not ours go to the program's own SIGSEGV/SIGTRAP handler: the shim
 *     keeps its handler installed and shows the program the handler it asked for.
 *  I12 A doorbell store site is rewritten only when its shape proves the rewrite safe
 *     (shim/patch.c says which shape); the stub preserves every register, the flags and the
 *     vector state, and runs the same trap_store as the fault path. A site that is refused
 *     keeps faulting. Each site is named in a NOTE record.
 *  I13 GP_PUT without a device read: each channel's USERD page is made read-only too, and
 *     every store to it is emulated through an alias mapping (made when the memory was
 *     mapped) or comes through a patched site, so the shim sees each GP_PUT libcuda writes.
 *     That shadow replaces the uncached read at the doorbell; every SHADOW_CHECK-th doorbell
 *     reads GP_PUT anyway and a mismatch (counted) sends the channel back to reading it.
 *  I14 GPFIFO entries without a device read: libcuda's GP entry writer, found byte for byte
 *     (shim/patch.c), is hooked at its entry; the hook runs a private copy of the writer into
 *     a shadow slot keyed by the ring address. The doorbell takes an entry from its slot only
 *     when it was written after the channel's previous capture (a stamp) and no other thread
 *     was writing the slot; each slot is taken once. Anything else is read from the ring.
 *     Every SHADOW_CHECK-th doorbell reads the ring too and a mismatch (counted) sends the
 *     channel back to reading it.
 *  I15 One helper thread per process, started when the first GPU channel is created (full
 *     capture only; TRACE_LAUNCH_PREFAULT=0: none): it grows the capture file and maps its
 *     pages ahead of the cursor, so that writing a record faults on nothing. It blocks every
 *     signal, holds no lock and writes no record; a forked child starts its own when it
 *     creates a channel. Without it (or when it falls behind) rec_begin grows the file itself.
 *  I16 No vector registers: the shim is built with -mgeneral-regs-only and calls no libc
 *     function that may use them where a patched site's hook runs (its own mem and str
 *     functions, raw syscalls, the vDSO clock). So the hook's trampoline saves only the GPRs
 *     and flags; the program's x87/SSE/AVX state is never touched. The one exception, the
 *     streaming-load copy (TRACE_LAUNCH_COPY=stream), puts back the xmm0 it uses.
 *     tests/test_shim_vector.py checks the built library.
 *  I18..I20 (capture windows, the NVTX injection) are at the top of shim/window.c.
 *  I21 A work-submit token names a channel on one GPU only: a process on two GPUs has a
 *     channel with token 0xb on each (captures/peer-copy). A doorbell's token picks,
 *     among the live channels that hold it, the one whose GP_PUT moved since its last
 *     capture (the shadow where I13 keeps it, else USERD); the newest when none did.
 *  I22 A vfork child (Python's subprocess makes one) runs in the parent's memory until it
 *     execs or exits: every table and flag of the shim there is the parent's, and so is the
 *     cached pid. Wrappers that change the fd table (open, close, close_range, dup, dup2,
 *     dup3, fcntl), sigaction of SIGSEGV/SIGTRAP (I8) and the exit record first ask the
 *     kernel for the pid (a syscall, on calls that are rare) and, in such a child, only
 *     call the real function. Before this, the close_range of Python's subprocess child
 *     emptied the parent's fd table: every ioctl and mmap of the rest of a torch.compile
 *     run went unrecorded.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <linux/futex.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include <x86intrin.h>

#include "abi.h"

#define EXPORT __attribute__((visibility("default")))
#define TLS __thread __attribute__((tls_model("initial-exec")))

/* ---- limits (fixed tables: nothing here allocates) ---------------------------------- */
#define MAX_FD 16384           /* fds above this are not tracked as NVIDIA devices */
#define MAX_PATHS 64
#define PATH_LEN 64
#define MAX_CHANNELS 512
#define MAX_USERMODE 64
#define MAX_CPUMAPS 8192
#define MAX_GPUMAPS 16384
#define MAX_DUPS 4096
#define MAX_PENDING 256
#define MAX_TRAPS 256
#define MAX_BUF (256u << 10)   /* per ioctl buffer copy */
#define MAX_SEG (4u << 20)     /* per pushbuffer segment copy */
#define MAX_ENTRIES_PER_REC 128
#define WINDOW (64ull << 30)   /* virtual size of the capture mapping */
#define GROW_STEP (8ull << 20)
#define PF_AHEAD (32ull << 20) /* the helper thread keeps this much populated past the cursor (I15) */
#define FD_FLOOR 1000          /* the capture fd is moved at or above this */
#define PAGE 4096ul
#define USERMODE_DOORBELL 0x90 /* NVC361_NOTIFY_CHANNEL_PENDING */
#define USERD_GP_PUT 0x8C      /* NV_RAMUSERD_GP_PUT (dword 35) */
#define SHADOW_CHECK 64        /* every 64th doorbell of a channel reads the device to check the shadows */
#define GP_SHADOW 8192         /* GP entry shadow slots (I14); a miss costs one device read */

enum { K_NONE = 0, K_CTL, K_GPU, K_UVM, K_OTHER };

/* ---- real functions --------------------------------------------------------------- */
static int (*real_ioctl)(int, unsigned long, ...);
static void *(*real_mmap)(void *, size_t, int, int, int, off_t);
static int (*real_munmap)(void *, size_t);
static void *(*real_mremap)(void *, size_t, size_t, int, ...);
static int (*real_close)(int);
static int (*real_dup)(int);
static int (*real_fcntl)(int, int, ...);
static int (*real_fcntl64)(int, int, ...);
static int (*real_dup2)(int, int);
static int (*real_dup3)(int, int, int);
static int (*real_sigaction)(int, const struct sigaction *, struct sigaction *);

/* ---- state ------------------------------------------------------------------------ */
static volatile int g_on;              /* recording enabled in this process */
static int g_full = 1;                 /* doorbell trap enabled (TRACE_LAUNCH_MODE != ioctl) */
static int g_capture = 1;              /* record submissions at the trap (mode "trap": no, for
                                          measuring the fault cost alone) */
static int g_fd = -1;                  /* capture fd */
static uint8_t *g_base;                /* capture mapping (WINDOW bytes of virtual space) */
static uint64_t g_known_size;          /* file size this process has ensured */
static dev_t g_dev; static ino_t g_ino;
static char g_path[4096];
static char g_devdir[512]; static size_t g_devdir_len;
static uint32_t g_seq;
static uint64_t g_stats[TL_STAT_COUNT];
static int g_exit_written;

static uint8_t g_fdkind[MAX_FD];       /* K_* per fd */
static uint8_t g_fdpath[MAX_FD];       /* index into g_paths */
static char g_paths[MAX_PATHS][PATH_LEN];
static uint32_t g_npaths;

struct channel { uint32_t valid, hClient, hChannel, hClass, token, token_valid, entries, hUserd;
                 uint64_t gpfifo_va, userd_off; uint32_t last_put, freed;
                 /* GP_PUT as libcuda last stored it (I13), valid while shadow_ok */
                 uintptr_t gp_put_cpu; uint32_t shadow_put, shadow_ok, doorbells;
                 /* GP entries from the writer hook (I14): usable while entries_ok; only
                  * those stamped after cap_stamp, the stamp when the last capture began */
                 uint32_t entries_ok; uint64_t cap_stamp;
                 /* translation cache, checked against the entries' `valid` on every use */
                 struct cpumap *userd_map; struct gpumap *ring_gmap; struct cpumap *ring_cmap;
                 struct gpumap *seg_gmap; struct cpumap *seg_cmap; };
struct usermode { uint32_t valid, hClient, hObject; };
struct cpumap { uint32_t valid, hClient, hMemory, kind; uint64_t memoff, len, addr; int prot;
                uintptr_t alias; /* a second mapping of the same device memory (I13) */ };
struct gpumap { uint32_t valid, hClient, hMemory, pad; uint64_t memoff, len, va; };
struct dupe { uint32_t valid, hClient, hObject, hClientSrc, hObjectSrc; };
struct pending { uint32_t valid; int fd; uint32_t hClient, hMemory; uint64_t off, len; };
enum { TRAP_USERMODE = 0, TRAP_USERD = 1 };
struct trap { uint32_t valid, probe, kind, own_alias; uintptr_t user, alias; size_t len; };

static struct channel g_ch[MAX_CHANNELS]; static uint32_t g_nch;
static struct usermode g_um[MAX_USERMODE]; static uint32_t g_num;
static struct cpumap g_cpu[MAX_CPUMAPS]; static uint32_t g_ncpu;
static struct gpumap g_gpu[MAX_GPUMAPS]; static uint32_t g_ngpu;
static struct dupe g_dup[MAX_DUPS]; static uint32_t g_ndup;
static struct pending g_pend[MAX_PENDING]; static uint32_t g_npend;
static struct trap g_trap[MAX_TRAPS]; static uint32_t g_ntrap;
/* GP entry shadow (I14). A slot is locked by making `seq` odd; a writer or reader that
 * finds it locked leaves it (a writer also raises g_gp_floor: nothing older is trusted). */
struct gp_shadow { uint64_t seq, addr, value, stamp; };
static struct gp_shadow g_gps[GP_SHADOW];
static uint64_t g_gp_stamp, g_gp_floor;
static uint32_t g_shadow_check = SHADOW_CHECK;   /* TRACE_LAUNCH_SHADOW_CHECK=1: every doorbell */

/* ---- capture window (shim/window.c, I18): all the doorbell handler reads of it ------- */
enum { WIN_FOLLOW = 0, WIN_KEEP = 1, WIN_DROP = 2 };
static int g_win_mode;                 /* TL_WINDOW_BY_* asked for; 0: no window, record all */
static int g_win_open = 1;             /* submissions are recorded now (atomic loads only) */
static TLS int t_win_sub;              /* this thread's API call decided its submissions (I19) */
/* Whether a doorbell rung now on this thread is recorded. */
static int win_keep(void) {
    int m = t_win_sub;
    return m ? m == WIN_KEEP : __atomic_load_n(&g_win_open, __ATOMIC_RELAXED);
}
struct channel;
static int win_doorbell(struct channel *c);

static struct sigaction g_prog_act[65]; /* what the program installed, per signal */
static int g_handlers_installed;
static TLS struct trap *t_stepping;     /* fallback: the trap being single-stepped */

#define LOAD_ACQ(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define STORE_REL(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define ADD(p, v) __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)
#define STAT(i) ADD(&g_stats[(i)], 1)

/* ---- the shim's own memory and string functions (I16) ------------------------------ */
/* libc's use vector registers, which the trampolines of patched sites do not save. These
 * are hidden, so only the shim's own calls (and those the compiler makes) bind to them;
 * string instructions run with DF clear (the ABI; the trampolines clear it too). */
#define HIDDEN __attribute__((visibility("hidden")))
HIDDEN void *memcpy(void *restrict d, const void *restrict s, size_t n) {
    void *r = d;
    __asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
    return r;
}
HIDDEN void *memmove(void *d, const void *s, size_t n) {
    if ((uintptr_t)d - (uintptr_t)s >= n) return memcpy(d, s, n);   /* no overlap from behind */
    uint8_t *dd = (uint8_t *)d + n - 1; const uint8_t *ss = (const uint8_t *)s + n - 1;
    __asm__ volatile("std; rep movsb; cld" : "+D"(dd), "+S"(ss), "+c"(n) : : "memory", "cc");
    return d;
}
HIDDEN void *memset(void *d, int c, size_t n) {
    void *r = d;
    __asm__ volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(c) : "memory");
    return r;
}
HIDDEN int memcmp(const void *a, const void *b, size_t n) {
    const uint8_t *x = a, *y = b;
    for (size_t i = 0; i < n; i++) if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
    return 0;
}
HIDDEN size_t strlen(const char *s) { size_t n = 0; while (s[n]) n++; return n; }
static int str_diff(const char *a, const char *b, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (a[i] != b[i]) return (uint8_t)a[i] < (uint8_t)b[i] ? -1 : 1;
        if (!a[i]) return 0;
    }
    return 0;
}
HIDDEN int strncmp(const char *a, const char *b, size_t n) { return str_diff(a, b, n); }
HIDDEN int strcmp(const char *a, const char *b) { return str_diff(a, b, (size_t)-1); }

/* ---- small async-signal-safe helpers ------------------------------------------------ */
static size_t s_len(const char *s) { return strlen(s); }
static void s_copy(char *d, const char *s, size_t cap) {
    size_t i = 0; for (; s[i] && i + 1 < cap; i++) d[i] = s[i]; d[i] = 0;
}
static int s_prefix(const char *s, const char *p, size_t n) {
    for (size_t i = 0; i < n; i++) if (s[i] != p[i]) return 0;
    return 1;
}
/* The vDSO's clock, called directly: the kernel builds it without vector registers (I16);
 * libc's wrapper promises nothing. A raw syscall when there is none. */
static int (*g_vdso_clock)(clockid_t, struct timespec *);
static uint64_t now_ns(void) {
    struct timespec ts;
    int (*vc)(clockid_t, struct timespec *) = __atomic_load_n(&g_vdso_clock, __ATOMIC_RELAXED);
    if (!vc || vc(CLOCK_MONOTONIC, &ts) != 0) syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
/* pid and tid are cached (a syscall each would cost more than the rest of a record);
 * the fork handler resets them in the child. */
static uint32_t g_pid;
static TLS uint32_t t_tid, t_tid_pid;
static uint32_t getpid_(void) {
    uint32_t p = __atomic_load_n(&g_pid, __ATOMIC_RELAXED);
    if (!p) { p = (uint32_t)syscall(SYS_getpid); __atomic_store_n(&g_pid, p, __ATOMIC_RELAXED); }
    return p;
}
/* Whether this is a vfork child still running in the parent's memory (I22). */
static int vfork_child(void) {
    uint32_t p = __atomic_load_n(&g_pid, __ATOMIC_RELAXED);
    return p && (uint32_t)syscall(SYS_getpid) != p;
}
static uint32_t gettid_(void) {
    uint32_t p = getpid_();
    if (t_tid_pid != p) { t_tid = (uint32_t)syscall(SYS_gettid); t_tid_pid = p; }
    return t_tid;
}
static size_t pad8(size_t n) { return (n + 7) & ~(size_t)7; }
static void w16(uint8_t *p, size_t off, uint16_t v) { memcpy(p + off, &v, 2); }
static void w32(uint8_t *p, size_t off, uint32_t v) { memcpy(p + off, &v, 4); }
static void w64(uint8_t *p, size_t off, uint64_t v) { memcpy(p + off, &v, 8); }
static uint32_t r32(const uint8_t *p, size_t off) { uint32_t v; memcpy(&v, p + off, 4); return v; }
static uint64_t r64(const uint8_t *p, size_t off) { uint64_t v; memcpy(&v, p + off, 8); return v; }

/* Copy from a possibly bad user pointer without faulting (I5). */
static int safe_read(void *dst, uintptr_t src, size_t n) {
    if (n == 0) return 1;
    if (src == 0) return 0;
    struct iovec l = { dst, n }, r = { (void *)src, n };
    return syscall(SYS_process_vm_readv, getpid_(), &l, 1, &r, 1, 0) == (long)n;
}

/* Device memory: aligned 32-bit loads only (I5). */
static uint32_t dev_load32(uintptr_t a) { return *(volatile const uint32_t *)a; }
static uint64_t dev_load64(uintptr_t a) { return *(volatile const uint64_t *)a; }
/* Fenced TSC: an uncached load must finish inside the phase it is counted in. The fences
 * cost about as much as a record's bookkeeping, so they run only when TRACE_LAUNCH_PROFILE=1. */
static int g_profile;
static uint64_t tsc(void) {
    if (!g_profile) return 0;
    __asm__ volatile("lfence" ::: "memory");
    uint64_t t = __rdtsc();
    __asm__ volatile("lfence" ::: "memory");
    return t;
}
#define PROF(i, v) do { if (g_profile) ADD(&g_stats[(i)], (v)); } while (0)
static void dev_copy(uint8_t *dst, uintptr_t src, size_t n) {
    size_t i = 0;
    for (; i + 4 <= n; i += 4) { uint32_t v = dev_load32(src + i); memcpy(dst + i, &v, 4); }
    if (i < n) { uint32_t v = dev_load32(src + i); memcpy(dst + i, &v, n - i); }
}

static void resolve(void) {
    if (real_ioctl) return;
    real_mmap = dlsym(RTLD_NEXT, "mmap");
    real_munmap = dlsym(RTLD_NEXT, "munmap");
    real_mremap = dlsym(RTLD_NEXT, "mremap");
    real_close = dlsym(RTLD_NEXT, "close");
    real_dup = dlsym(RTLD_NEXT, "dup");
    real_fcntl = dlsym(RTLD_NEXT, "fcntl");
    real_fcntl64 = dlsym(RTLD_NEXT, "fcntl64");
    if (!real_fcntl64) real_fcntl64 = real_fcntl;
    real_dup2 = dlsym(RTLD_NEXT, "dup2");
    real_dup3 = dlsym(RTLD_NEXT, "dup3");
    real_sigaction = dlsym(RTLD_NEXT, "sigaction");
    void *vdso = dlopen("linux-vdso.so.1", RTLD_NOLOAD | RTLD_LAZY);
    if (vdso) __atomic_store_n(&g_vdso_clock, dlvsym(vdso, "__vdso_clock_gettime", "LINUX_2.6"), __ATOMIC_RELAXED);
    __atomic_store_n(&real_ioctl, dlsym(RTLD_NEXT, "ioctl"), __ATOMIC_RELEASE);
}

/* ---- the capture file: reserve, fill, publish (I2, I4) ------------------------------- */
static int reopen_capture(void) {
    int fd = (int)syscall(SYS_openat, AT_FDCWD, g_path, O_RDWR | O_CLOEXEC);
    if (fd < 0) return -1;
    struct stat st;
    if (syscall(SYS_fstat, fd, &st) != 0 || st.st_dev != g_dev || st.st_ino != g_ino) { syscall(SYS_close, fd); return -1; }
    int hi = (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, FD_FLOOR);
    if (hi >= 0) { syscall(SYS_close, fd); fd = hi; }
    g_fd = fd;
    return 0;
}

/* Make the file at least `end` bytes (in GROW_STEP units) and map its new pages. Either the
 * recording thread (when the helper is absent or behind) or the helper (I15) runs it. */
static uint32_t g_pf_on;                /* the helper thread runs in this process */
static uint32_t g_pf_kick;              /* futex word: 1 asks the helper to grow */
static uint64_t g_pf_next = UINT64_MAX; /* the cursor offset past which the helper is asked */
static int grow(uint64_t end, int may_reopen) {
    uint64_t known = __atomic_load_n(&g_known_size, __ATOMIC_ACQUIRE);
    if (end <= known) return 1;
    uint64_t want = (end + GROW_STEP - 1) / GROW_STEP * GROW_STEP;
    for (int attempt = 0; attempt < 2; attempt++) {
        struct stat st;
        int fd = g_fd;
        if (fd >= 0 && syscall(SYS_fstat, fd, &st) == 0 && st.st_dev == g_dev && st.st_ino == g_ino) {
            /* fallocate only grows: processes racing here can never shrink the file. */
            if (st.st_size >= (off_t)want || syscall(SYS_fallocate, fd, 0, (off_t)0, (off_t)want) == 0) {
                /* Fault the new pages in with one call rather than one fault per page. */
                uint64_t from = known & ~(uint64_t)(PAGE - 1);
                if (syscall(SYS_madvise, g_base + from, (size_t)(want - from), 23 /* MADV_POPULATE_WRITE */) != 0)
                    STAT(TL_STAT_POPULATE_FAILED);
                while (known < want && !__atomic_compare_exchange_n(&g_known_size, &known, want, 0,
                                                                    __ATOMIC_RELEASE, __ATOMIC_ACQUIRE)) {}
                STAT(may_reopen ? TL_STAT_GROWS_INLINE : TL_STAT_GROWS_HELPER);
                return 1;
            }
            return 0;
        }
        if (!may_reopen || reopen_capture() != 0) return 0;
    }
    return 0;
}

static int ensure_size(uint64_t end) {
    uint64_t known = __atomic_load_n(&g_known_size, __ATOMIC_RELAXED);
    if (end > __atomic_load_n(&g_pf_next, __ATOMIC_RELAXED) &&
        __atomic_exchange_n(&g_pf_next, UINT64_MAX, __ATOMIC_RELAXED) != UINT64_MAX) {
        __atomic_store_n(&g_pf_kick, 1, __ATOMIC_RELEASE);
        syscall(SYS_futex, &g_pf_kick, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    }
    if (end <= known) return 1;
    return grow(end, 1);
}

/* The helper (I15): woken when the cursor passes g_pf_next, it keeps PF_AHEAD bytes
 * populated past the cursor, in GROW_STEP pieces (madvise holds the mmap lock while it runs). */
static void *pf_main(void *arg) {
    (void)arg;
    for (;;) {
        while (!__atomic_exchange_n(&g_pf_kick, 0, __ATOMIC_ACQUIRE))
            syscall(SYS_futex, &g_pf_kick, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
        uint64_t cur = __atomic_load_n((uint64_t *)(g_base + TL_CURSOR_OFFSET), __ATOMIC_RELAXED);
        uint64_t target = cur + PF_AHEAD > WINDOW ? WINDOW : cur + PF_AHEAD;
        int ok = 1;
        while (ok && __atomic_load_n(&g_known_size, __ATOMIC_ACQUIRE) < target)
            ok = grow(__atomic_load_n(&g_known_size, __ATOMIC_ACQUIRE) + GROW_STEP, 0);
        if (ok && target < WINDOW) __atomic_store_n(&g_pf_next, target - PF_AHEAD / 2, __ATOMIC_RELAXED);
    }
    return NULL;
}

static int g_prefault = 1;
static void pf_start(void) {
    if (!g_prefault || !g_full || !g_capture || __atomic_exchange_n(&g_pf_on, 1, __ATOMIC_ACQ_REL)) return;
    pthread_attr_t a;
    sigset_t all, old;
    pthread_t th;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&a, 64 << 10);
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);   /* the helper inherits a mask that blocks all */
    int rc = pthread_create(&th, &a, pf_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&a);
    if (rc != 0) return;
    pthread_setname_np(th, "tracelaunch-pf");
    __atomic_store_n(&g_pf_kick, 1, __ATOMIC_RELEASE);
    syscall(SYS_futex, &g_pf_kick, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Reserve `len` bytes for one record. Returns NULL (and counts) when recording is off or full. */
static uint8_t *rec_begin(size_t len) {
    if (!g_on || !g_base) return NULL;
    len = pad8(len);
    uint64_t off = __atomic_fetch_add((uint64_t *)(g_base + TL_CURSOR_OFFSET), (uint64_t)len, __ATOMIC_ACQ_REL);
    if (off + len > WINDOW || !ensure_size(off + len)) {
        STAT(TL_STAT_RECORDS_DROPPED); ADD(&g_stats[TL_STAT_BYTES_DROPPED], len);
        return NULL;
    }
    uint8_t *p = g_base + off;
    /* sync and length in one 8-byte store: a reader never sees a length without its sync. */
    __atomic_store_n((uint64_t *)p, (uint64_t)TL_RECORD_SYNC | ((uint64_t)len << 32), __ATOMIC_RELAXED);
    w32(p, TL_RECORD_HEADER__pid, getpid_());
    w32(p, TL_RECORD_HEADER__tid, gettid_());
    w32(p, TL_RECORD_HEADER__seq, ADD(&g_seq, 1));
    return p;
}

static void rec_publish(uint8_t *p, uint16_t type, uint16_t flags) {
    w16(p, TL_RECORD_HEADER__flags, flags);
    STORE_REL((uint16_t *)(p + TL_RECORD_HEADER__type), type);
    STAT(TL_STAT_RECORDS);
}

static uint8_t *body(uint8_t *rec) { return rec + TL_RECORD_HEADER__SIZE; }

static void put_bytes(uint8_t *dst, const void *src, size_t n) { if (n) memcpy(dst, src, n); }

/* A NOTE record: one line of text for the reader (level 1: information). */
static void note_text(const char *text, size_t n) {
    uint8_t *r = rec_begin(TL_RECORD_HEADER__SIZE + TL_NOTE__FIXED + pad8(n));
    if (!r) return;
    uint64_t t = now_ns();
    w64(r, TL_RECORD_HEADER__t_start, t); w64(r, TL_RECORD_HEADER__t_end, t);
    w32(body(r), TL_NOTE__level, 1); w32(body(r), TL_NOTE__text_len, (uint32_t)n);
    put_bytes(body(r) + TL_NOTE__text, text, n);
    rec_publish(r, TL_REC_NOTE, TL_RF_COMPLETE);
}

/* ---- fd bookkeeping ----------------------------------------------------------------- */
static int path_kind(const char *path, const char **name) {
    const char *n = NULL;
    if (g_devdir_len && s_prefix(path, g_devdir, g_devdir_len) && path[g_devdir_len] == '/')
        n = path + g_devdir_len + 1;
    else if (s_prefix(path, "/dev/", 5))
        n = path + 5;
    if (!n || !s_prefix(n, "nvidia", 6)) return K_NONE;
    *name = n;
    if (s_prefix(n, "nvidiactl", 10)) return K_CTL;
    if (s_prefix(n, "nvidia-uvm", 10)) return K_UVM;   /* nvidia-uvm and nvidia-uvm-tools */
    if (n[6] >= '0' && n[6] <= '9') return K_GPU;
    return K_OTHER;
}

static uint8_t path_index(const char *path) {
    uint32_t n = LOAD_ACQ(&g_npaths);
    for (uint32_t i = 1; i <= n && i < MAX_PATHS; i++)
        if (!strncmp(g_paths[i], path, PATH_LEN - 1)) return (uint8_t)i;
    uint32_t i = ADD(&g_npaths, 1) + 1;
    if (i >= MAX_PATHS) return 0;
    s_copy(g_paths[i], path, PATH_LEN);
    return (uint8_t)i;
}

static int fd_kind(int fd) { return (fd >= 0 && fd < MAX_FD) ? g_fdkind[fd] : K_NONE; }
static const char *fd_path(int fd) { return (fd >= 0 && fd < MAX_FD) ? g_paths[g_fdpath[fd]] : ""; }

static void record_open(int fd, int oflags, const char *path) {
    size_t pl = s_len(path);
    uint8_t *r = rec_begin(TL_RECORD_HEADER__SIZE + TL_OPEN__FIXED + pad8(pl));
    if (!r) return;
    uint8_t *b = body(r);
    uint64_t t = now_ns();
    w64(r, TL_RECORD_HEADER__t_start, t); w64(r, TL_RECORD_HEADER__t_end, t);
    w32(b, TL_OPEN__fd, (uint32_t)fd); w32(b, TL_OPEN__oflags, (uint32_t)oflags);
    w32(b, TL_OPEN__path_len, (uint32_t)pl); put_bytes(b + TL_OPEN__path, path, pl);
    rec_publish(r, TL_REC_OPEN, TL_RF_COMPLETE);
}

static void after_open(int fd, int oflags, const char *path) {
    if (fd < 0 || !path || !g_on || vfork_child()) return;
    const char *name;
    int k = path_kind(path, &name);
    if (fd < MAX_FD) { g_fdkind[fd] = (uint8_t)k; g_fdpath[fd] = k ? path_index(path) : 0; }
    if (k) record_open(fd, oflags, path);
}

static void record_close(int fd, int ret) {
    uint8_t *r = rec_begin(TL_RECORD_HEADER__SIZE + TL_CLOSE__SIZE);
    if (!r) return;
    uint64_t t = now_ns();
    w64(r, TL_RECORD_HEADER__t_start, t); w64(r, TL_RECORD_HEADER__t_end, t);
    w32(body(r), TL_CLOSE__fd, (uint32_t)fd); w32(body(r), TL_CLOSE__ret, (uint32_t)ret);
    rec_publish(r, TL_REC_CLOSE, TL_RF_COMPLETE);
}

static void forget_fd(int fd) {
    if (fd_kind(fd)) { record_close(fd, 0); g_fdkind[fd] = K_NONE; }
}

/* ---- object tables (I6) ------------------------------------------------------------- */
static void canon(uint32_t *client, uint32_t *obj) {
    uint32_t n = LOAD_ACQ(&g_ndup);
    for (uint32_t i = 0; i < n && i < MAX_DUPS; i++) {
        struct dupe *d = &g_dup[i];
        if (LOAD_ACQ(&d->valid) && d->hClient == *client && d->hObject == *obj) {
            *client = d->hClientSrc; *obj = d->hObjectSrc; return;
        }
    }
}

#define APPEND(arr, count, max) ({ uint32_t _i = ADD(&(count), 1); _i < (max) ? &(arr)[_i] : NULL; })

static int is_usermode_class(uint32_t c) {
    return c == 0xC361 || c == 0xC461 || c == 0xC561 || c == 0xC661 || c == 0xC761;
}
static int is_channel_class(uint32_t c) {
    return c == 0xC36F || c == 0xC46F || c == 0xC56F || c == 0xC76F || c == 0xC86F ||
           c == 0xC96F || c == 0xCA6F;
}

static int is_usermode(uint32_t client, uint32_t obj) {
    canon(&client, &obj);
    uint32_t n = LOAD_ACQ(&g_num);
    for (uint32_t i = 0; i < n && i < MAX_USERMODE; i++)
        if (LOAD_ACQ(&g_um[i].valid) && g_um[i].hClient == client && g_um[i].hObject == obj) return 1;
    return 0;
}

static int g_nt_copy;                  /* streaming loads for system-memory copies */

/* The newest readable CPU mapping holding byte `memoff` of memory object (client, mem). */
static struct cpumap *find_cpu(uint32_t client, uint32_t mem, uint64_t memoff) {
    canon(&client, &mem);
    uint32_t n = LOAD_ACQ(&g_ncpu);
    for (uint32_t i = n < MAX_CPUMAPS ? n : MAX_CPUMAPS; i-- > 0;) {   /* newest first */
        struct cpumap *c = &g_cpu[i];
        if (!LOAD_ACQ(&c->valid) || c->hClient != client || c->hMemory != mem) continue;
        if (memoff < c->memoff || memoff >= c->memoff + c->len) continue;
        if (c->prot == PROT_NONE || c->kind == K_UVM) continue;
        return c;
    }
    return NULL;
}

static int in_cpu(const struct cpumap *c, uint64_t memoff) {
    return c && LOAD_ACQ(&c->valid) && memoff >= c->memoff && memoff < c->memoff + c->len;
}

static int in_gpu(const struct gpumap *g, uint64_t va) {
    return g && LOAD_ACQ(&g->valid) && va >= g->va && va < g->va + g->len;
}

static uintptr_t cpu_addr(const struct cpumap *c, uint64_t memoff, uint64_t *avail, int *kind) {
    *avail = c->memoff + c->len - memoff;
    if (kind) *kind = (int)c->kind;
    return (uintptr_t)(c->addr + (memoff - c->memoff));
}

/* GPU VA -> CPU address via (cached) mapping entries; the cache is only a starting guess. */
static uintptr_t va_to_cpu_cached(uint64_t va, uint64_t *avail, int *kind,
                                  struct gpumap **gcache, struct cpumap **ccache) {
    struct gpumap *g = *gcache;
    if (!in_gpu(g, va)) {
        g = NULL;
        uint32_t n = LOAD_ACQ(&g_ngpu);
        for (uint32_t i = n < MAX_GPUMAPS ? n : MAX_GPUMAPS; i-- > 0;) {
            struct gpumap *x = &g_gpu[i];
            if (!in_gpu(x, va)) continue;
            if (find_cpu(x->hClient, x->hMemory, x->memoff + (va - x->va))) { g = x; break; }
        }
        if (!g) return 0;
        *gcache = g; *ccache = NULL;
    }
    uint64_t memoff = g->memoff + (va - g->va);
    struct cpumap *c = *ccache;
    if (!in_cpu(c, memoff) || c->hMemory != g->hMemory) {
        c = find_cpu(g->hClient, g->hMemory, memoff);
        if (!c) return 0;
        *ccache = c;
    }
    uintptr_t p = cpu_addr(c, memoff, avail, kind);
    uint64_t left = g->va + g->len - va;
    if (left < *avail) *avail = left;
    return p;
}

/* CPU address of byte `memoff` of memory object (client, mem), with bytes available after it. */
static uintptr_t mem_to_cpu(uint32_t client, uint32_t mem, uint64_t memoff, uint64_t *avail, int *kind) {
    struct cpumap *c = find_cpu(client, mem, memoff);
    return c ? cpu_addr(c, memoff, avail, kind) : 0;
}

/* System memory (the pushbuffer) may be mapped write-combined: 16-byte streaming loads
 * read it far faster than ordinary loads. Used only when the CPU has SSE4.1. */
__attribute__((noinline)) static void nt_copy(uint8_t *dst, uintptr_t src, size_t n) {
    size_t i = 0;
    while (((src + i) & 15) && i + 4 <= n) { uint32_t v = dev_load32(src + i); memcpy(dst + i, &v, 4); i += 4; }
    if (i + 16 <= n) {
        /* xmm0 is the program's (I16): kept in `keep` and put back */
        uint8_t keep[16], *d = dst + i; const uint8_t *q = (const uint8_t *)(src + i);
        size_t blocks = (n - i) / 16;
        __asm__ volatile("movdqu %%xmm0, (%3)\n"
                         "1: movntdqa (%1), %%xmm0\n movdqu %%xmm0, (%0)\n"
                         "   add $16, %0\n add $16, %1\n dec %2\n jnz 1b\n"
                         "movdqu (%3), %%xmm0\n"
                         : "+r"(d), "+r"(q), "+r"(blocks) : "r"(keep) : "memory", "cc");
        i += (n - i) / 16 * 16;
    }
    if (i < n) dev_copy(dst + i, src + i, n - i);
}

/* Whether channel c's GP_PUT is not where its last capture left it (I21). */
static int put_moved(struct channel *c) {
    if (LOAD_ACQ(&c->shadow_ok)) return LOAD_ACQ(&c->shadow_put) != LOAD_ACQ(&c->last_put);
    uint64_t avail = 0;
    uintptr_t userd = mem_to_cpu(c->hClient, c->hUserd, c->userd_off, &avail, NULL);
    return userd && avail >= USERD_GP_PUT + 4 &&
           dev_load32(userd + USERD_GP_PUT) != LOAD_ACQ(&c->last_put);
}

static struct channel *channel_by_token(uint32_t token) {
    uint32_t n = LOAD_ACQ(&g_nch);
    struct channel *newest = NULL;
    int several = 0;
    for (uint32_t i = n < MAX_CHANNELS ? n : MAX_CHANNELS; i-- > 0;) {
        struct channel *c = &g_ch[i];
        if (!LOAD_ACQ(&c->valid) || !LOAD_ACQ(&c->token_valid) || c->freed || c->token != token)
            continue;
        if (!newest) { newest = c; continue; }
        if (!several) {                 /* a second GPU's channel with this token (I21) */
            several = 1;
            if (put_moved(newest)) return newest;
        }
        if (put_moved(c)) return c;
    }
    return newest;
}

/* TRACE_LAUNCH_PROBE=ring (a measuring aid, not for tracing): protect each new channel's
 * USERD page and GPFIFO ring pages too, and name in a NOTE every instruction that stores
 * there (each store is then single-stepped). This is how the stores of GP entries and
 * GP_PUT were found. */
static int g_probe_ring;
static void install_handlers(void);
static struct trap *trap_at(uintptr_t a);
static void probe_page(uintptr_t page) {
    struct trap *t = APPEND(g_trap, g_ntrap, MAX_TRAPS);
    if (!t) return;
    t->user = page; t->alias = 0; t->len = PAGE; t->probe = 1; t->own_alias = 0; t->kind = TRAP_USERMODE;
    install_handlers();
    STORE_REL(&t->valid, 1);
    syscall(SYS_mprotect, (void *)page, PAGE, PROT_READ);
}
static void probe_channel(struct channel *c) {
    uint64_t avail = 0;
    uintptr_t u = mem_to_cpu(c->hClient, c->hUserd, c->userd_off, &avail, NULL);
    if (u) probe_page(u & ~(PAGE - 1));
    struct gpumap *gm = NULL; struct cpumap *cm = NULL;
    uintptr_t ring = va_to_cpu_cached(c->gpfifo_va, &avail, NULL, &gm, &cm);
    for (uintptr_t p = ring & ~(PAGE - 1); ring && p < ring + 8ull * c->entries; p += PAGE) probe_page(p);
}

/* Trap the channel's USERD page (I13): read-only, stores emulated through the alias. */
static void userd_trap(struct channel *c) {
    if (!g_full) return;
    struct cpumap *m = find_cpu(c->hClient, c->hUserd, c->userd_off);
    if (!m || !m->alias || m->kind != K_GPU) return;
    uintptr_t gp = (uintptr_t)(m->addr + (c->userd_off - m->memoff)) + USERD_GP_PUT;
    uintptr_t page = gp & ~(PAGE - 1);
    if ((gp & 3) || gp + 4 > m->addr + m->len || page < m->addr) return;
    c->gp_put_cpu = gp;
    c->shadow_put = c->last_put;
    if (!trap_at(page)) {
        struct trap *t = APPEND(g_trap, g_ntrap, MAX_TRAPS);
        if (!t) { STAT(TL_STAT_TRAP_SETUP_FAILED); return; }
        t->user = page; t->alias = m->alias + (page - m->addr); t->len = PAGE;
        t->kind = TRAP_USERD; t->own_alias = 0; t->probe = 0;
        install_handlers();
        STORE_REL(&t->valid, 1);
        if (syscall(SYS_mprotect, (void *)page, PAGE, PROT_READ) != 0) {
            STORE_REL(&t->valid, 0); STAT(TL_STAT_TRAP_SETUP_FAILED); return;
        }
    }
    STORE_REL(&c->shadow_ok, 1);
}

static void track_ioctl(int kind, unsigned long req, int fd, const uint8_t *arg, uint32_t size,
                        const uint8_t *buf, uint32_t bufsize) {
    uint32_t nr = req & 0xff;
    if (kind == K_UVM) {
        if (req == 0x21 && size >= UVM_MAP_EXTERNAL_ALLOCATION_PARAMS__SIZE &&
            r32(arg, UVM_MAP_EXTERNAL_ALLOCATION_PARAMS__rmStatus) == 0) {
            struct gpumap *g = APPEND(g_gpu, g_ngpu, MAX_GPUMAPS);
            if (!g) return;
            g->hClient = r32(arg, UVM_MAP_EXTERNAL_ALLOCATION_PARAMS__hClient);
            g->hMemory = r32(arg, UVM_MAP_EXTERNAL_ALLOCATION_PARAMS__hMemory);
            g->memoff = r64(arg, UVM_MAP_EXTERNAL_ALLOCATION_PARAMS__offset);
            g->len = r64(arg, UVM_MAP_EXTERNAL_ALLOCATION_PARAMS__length);
            g->va = r64(arg, UVM_MAP_EXTERNAL_ALLOCATION_PARAMS__base);
            STORE_REL(&g->valid, 1);
        }
        return;
    }
    if (((req >> 8) & 0xff) != 'F') return;
    if (nr == 0x2B && (size == NVOS21_PARAMETERS__SIZE || size == NVOS64_PARAMETERS__SIZE)) {
        uint32_t status = r32(arg, size == NVOS21_PARAMETERS__SIZE ? NVOS21_PARAMETERS__status
                                                                  : NVOS64_PARAMETERS__status);
        if (status) return;
        uint32_t client = r32(arg, NVOS21_PARAMETERS__hRoot), obj = r32(arg, NVOS21_PARAMETERS__hObjectNew);
        uint32_t cls = r32(arg, NVOS21_PARAMETERS__hClass);
        if (is_usermode_class(cls)) {
            struct usermode *u = APPEND(g_um, g_num, MAX_USERMODE);
            if (u) { u->hClient = client; u->hObject = obj; STORE_REL(&u->valid, 1); }
        } else if (is_channel_class(cls) && buf && bufsize >= NV_CHANNEL_ALLOC_PARAMS__engineType) {
            struct channel *c = APPEND(g_ch, g_nch, MAX_CHANNELS);
            if (!c) return;
            c->hClient = client; c->hChannel = obj; c->hClass = cls;
            c->gpfifo_va = r64(buf, NV_CHANNEL_ALLOC_PARAMS__gpFifoOffset);
            c->entries = r32(buf, NV_CHANNEL_ALLOC_PARAMS__gpFifoEntries);
            c->hUserd = r32(buf, NV_CHANNEL_ALLOC_PARAMS__hUserdMemory);
            c->userd_off = r64(buf, NV_CHANNEL_ALLOC_PARAMS__userdOffset);
            c->last_put = 0;   /* GP_PUT starts at 0 on a new channel */
            /* shadow slots of an earlier ring at the same address are older than this */
            c->cap_stamp = LOAD_ACQ(&g_gp_stamp); c->entries_ok = 1;
            STORE_REL(&c->valid, 1);
            pf_start();
            if (g_probe_ring) probe_channel(c);
            else userd_trap(c);
        }
    } else if (nr == 0x2A && size == NVOS54_PARAMETERS__SIZE) {
        if (r32(arg, NVOS54_PARAMETERS__status) || r32(arg, NVOS54_PARAMETERS__cmd) != 0xC36F0108u) return;
        if (!buf || bufsize < 4) return;
        uint32_t client = r32(arg, NVOS54_PARAMETERS__hClient), obj = r32(arg, NVOS54_PARAMETERS__hObject);
        uint32_t n = LOAD_ACQ(&g_nch);
        for (uint32_t i = 0; i < n && i < MAX_CHANNELS; i++) {
            struct channel *c = &g_ch[i];
            if (LOAD_ACQ(&c->valid) && c->hClient == client && c->hChannel == obj) {
                c->token = r32(buf, NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN_PARAMS__workSubmitToken);
                STORE_REL(&c->token_valid, 1);
            }
        }
    } else if (nr == 0x4E && size == nv_ioctl_nvos33_parameters_with_fd__SIZE) {
        if (r32(arg, NVOS33_PARAMETERS__status)) return;
        int mfd = (int)r32(arg, nv_ioctl_nvos33_parameters_with_fd__fd);
        struct pending *p = NULL;
        uint32_t n = LOAD_ACQ(&g_npend);
        for (uint32_t i = 0; i < n && i < MAX_PENDING; i++)
            if (g_pend[i].fd == mfd) { p = &g_pend[i]; break; }
        if (!p && !(p = APPEND(g_pend, g_npend, MAX_PENDING))) return;
        STORE_REL(&p->valid, 0);
        p->fd = mfd;
        p->hClient = r32(arg, NVOS33_PARAMETERS__hClient);
        p->hMemory = r32(arg, NVOS33_PARAMETERS__hMemory);
        p->off = r64(arg, NVOS33_PARAMETERS__offset);
        p->len = r64(arg, NVOS33_PARAMETERS__length);
        STORE_REL(&p->valid, 1);
    } else if (nr == 0x27 && size == nv_ioctl_nvos02_parameters_with_fd__SIZE) {
        /* NV01_MEMORY_SYSTEM_OS_DESCRIPTOR: the object is the user's own memory at pMemory. */
        if (r32(arg, NVOS02_PARAMETERS__status) || r32(arg, NVOS02_PARAMETERS__hClass) != 0x71) return;
        struct cpumap *c = APPEND(g_cpu, g_ncpu, MAX_CPUMAPS);
        if (!c) return;
        c->hClient = r32(arg, NVOS02_PARAMETERS__hRoot); c->hMemory = r32(arg, NVOS02_PARAMETERS__hObjectNew);
        c->memoff = 0; c->len = r64(arg, NVOS02_PARAMETERS__limit) + 1;
        c->addr = r64(arg, NVOS02_PARAMETERS__pMemory); c->prot = PROT_READ; c->kind = K_OTHER;
        STORE_REL(&c->valid, 1);
    } else if (nr == 0x57 && size == NVOS46_PARAMETERS__SIZE) {
        if (r32(arg, NVOS46_PARAMETERS__status)) return;
        struct gpumap *g = APPEND(g_gpu, g_ngpu, MAX_GPUMAPS);
        if (!g) return;
        g->hClient = r32(arg, NVOS46_PARAMETERS__hClient); g->hMemory = r32(arg, NVOS46_PARAMETERS__hMemory);
        g->memoff = r64(arg, NVOS46_PARAMETERS__offset); g->len = r64(arg, NVOS46_PARAMETERS__length);
        g->va = r64(arg, NVOS46_PARAMETERS__dmaOffset);
        STORE_REL(&g->valid, 1);
    } else if (nr == 0x34 && size >= 28) {
        /* NVOS55 (DUP): hClient@0 hParent@4 hObject@8 hClientSrc@12 hObjectSrc@16 status@24 */
        if (r32(arg, 24)) return;
        struct dupe *d = APPEND(g_dup, g_ndup, MAX_DUPS);
        if (!d) return;
        d->hClient = r32(arg, 0); d->hObject = r32(arg, 8);
        d->hClientSrc = r32(arg, 12); d->hObjectSrc = r32(arg, 16);
        STORE_REL(&d->valid, 1);
    } else if (nr == 0x29 && size == NVOS00_PARAMETERS__SIZE) {
        if (r32(arg, NVOS00_PARAMETERS__status)) return;
        uint32_t client = r32(arg, NVOS00_PARAMETERS__hRoot), obj = r32(arg, NVOS00_PARAMETERS__hObjectOld);
        uint32_t n = LOAD_ACQ(&g_nch);
        for (uint32_t i = 0; i < n && i < MAX_CHANNELS; i++)
            if (g_ch[i].hClient == client && g_ch[i].hChannel == obj) g_ch[i].freed = 1;
    }
    (void)fd;
}

/* ---- GP entry shadow (I14) ----------------------------------------------------------- */

static struct gp_shadow *gps_slot(uintptr_t ring_addr) {
    uint64_t x = (uint64_t)ring_addr * 0x9E3779B97F4A7C15ull;   /* rings share alignment: mix */
    return &g_gps[(x >> 40) % GP_SHADOW];
}
static int gps_lock(struct gp_shadow *s, uint64_t *q) {
    *q = LOAD_ACQ(&s->seq);
    return !(*q & 1) && __atomic_compare_exchange_n(&s->seq, q, *q + 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}
/* The writer hook: libcuda wrote (or is about to write) `value` at ring address `a`. */
static void gp_shadow_put(uintptr_t a, uint64_t value) {
    struct gp_shadow *s = gps_slot(a);
    uint64_t q;
    if (!gps_lock(s, &q)) {
        STAT(TL_STAT_GP_ENTRY_SHADOW_BUSY);
        uint64_t st = ADD(&g_gp_stamp, 1) + 1, f = LOAD_ACQ(&g_gp_floor);
        while (f < st && !__atomic_compare_exchange_n(&g_gp_floor, &f, st, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {}
        return;
    }
    s->addr = a; s->value = value; s->stamp = ADD(&g_gp_stamp, 1) + 1;
    STORE_REL(&s->seq, q + 2);
    STAT(TL_STAT_GP_ENTRIES_HOOKED);
}
/* The doorbell: the entry at `a` when the hook wrote it after `floor`; the slot is emptied. */
static int gp_shadow_take(uintptr_t a, uint64_t floor, uint64_t *value) {
    struct gp_shadow *s = gps_slot(a);
    uint64_t q;
    if (!gps_lock(s, &q)) return 0;
    int ok = s->addr == a && s->stamp > floor;
    if (ok) { *value = s->value; s->addr = 0; }
    STORE_REL(&s->seq, q + 2);
    return ok;
}

/* ---- the doorbell (I7) -------------------------------------------------------------- */
struct seg { uint64_t va; uintptr_t cpu; uint32_t size, flags; int kind; };

/* Record the GPFIFO entries from the channel's last seen GP_PUT to its current one, with
 * the pushbuffer segments they point to. Runs in the fault handler: no locks, no malloc. */
static void capture_channel(struct channel *c, uint32_t token, uintptr_t doorbell, uint64_t rip,
                            uint32_t insn_len, uint32_t extra_flags) {
    if (g_win_mode && !win_doorbell(c)) return;    /* outside the capture window (I18) */
    uint64_t avail = 0, t0 = tsc(), t1, tcopy = 0;
    uint32_t flags = TL_SUB_CHANNEL_KNOWN | extra_flags, put = 0, prev = 0, lost = 0, check = 1;
    /* Entries stamped after the previous capture began are this submission's (I14). */
    uint64_t stamp_now = LOAD_ACQ(&g_gp_stamp), floor = LOAD_ACQ(&c->cap_stamp), gf = LOAD_ACQ(&g_gp_floor);
    if (gf > floor) floor = gf;
    struct cpumap *um = c->userd_map;
    if (!in_cpu(um, c->userd_off)) um = c->userd_map = find_cpu(c->hClient, c->hUserd, c->userd_off);
    uintptr_t userd = um ? cpu_addr(um, c->userd_off, &avail, NULL) : 0;
    uintptr_t ring = 0;
    uint32_t n = 0, entries = c->entries ? c->entries : 1;
    uint64_t ravail = 0;
    if (userd) ring = va_to_cpu_cached(c->gpfifo_va, &ravail, NULL, &c->ring_gmap, &c->ring_cmap);
    t1 = tsc();
    PROF(TL_STAT_CYCLES_LOOKUP, t1 - t0);
    if (!userd || avail < USERD_GP_PUT + 4) {
        flags |= TL_SUB_NO_USERD;
    } else {
        uint64_t tp = tsc();
        uint32_t k = ADD(&c->doorbells, 1);
        check = k % g_shadow_check == 0;
        if (LOAD_ACQ(&c->shadow_ok) && !check) {
            put = LOAD_ACQ(&c->shadow_put);
        } else {
            put = dev_load32(userd + USERD_GP_PUT);
            if (LOAD_ACQ(&c->shadow_ok) && put != LOAD_ACQ(&c->shadow_put)) {
                STORE_REL(&c->shadow_ok, 0); STAT(TL_STAT_GP_PUT_SHADOW_MISMATCH);
            }
        }
        PROF(TL_STAT_CYCLES_GP_PUT, tsc() - tp);
        prev = __atomic_exchange_n(&c->last_put, put, __ATOMIC_ACQ_REL);
        if (put < entries && prev < entries) n = (put + entries - prev) % entries;
        if (n && (!ring || ravail < (uint64_t)entries * 8)) { lost = n; n = 0; flags |= TL_SUB_LOST; }
    }
    ADD(&g_stats[TL_STAT_SUBMISSIONS_LOST], lost);
    uint32_t idx = prev;
    do {
        uint32_t m = n > MAX_ENTRIES_PER_REC ? MAX_ENTRIES_PER_REC : n;
        uint64_t e[MAX_ENTRIES_PER_REC];
        struct seg s[MAX_ENTRIES_PER_REC];
        uint32_t nseg = 0;
        uint64_t ext = 0;   /* SET_PB_SEGMENT_EXTENDED_BASE operand: VA bits 63:40 */
        size_t total = TL_RECORD_HEADER__SIZE + TL_SUBMISSION__FIXED + 8ull * m;
        uint64_t tr = tsc();
        uint32_t shadowed = 0;
        for (uint32_t k = 0; k < m; k++) {
            uintptr_t a = ring + 8ull * ((idx + k) % entries);
            if (LOAD_ACQ(&c->entries_ok) && gp_shadow_take(a, floor, &e[k])) {
                shadowed++;
                uint64_t d = check ? dev_load64(a) : e[k];   /* one uncached read when checked */
                if (d != e[k]) {
                    STORE_REL(&c->entries_ok, 0); STAT(TL_STAT_GP_ENTRY_SHADOW_MISMATCH);
                    e[k] = d; shadowed--;
                }
            } else e[k] = dev_load64(a);
            uint32_t lo = (uint32_t)e[k], hi = (uint32_t)(e[k] >> 32);
            uint32_t length = (hi >> 10) & 0x1FFFFF;   /* NVC86F_GP_ENTRY1_LENGTH 30:10, dwords */
            if (length == 0) {
                if ((hi & 0xFF) == 4) ext = (lo >> 8) & 0x1FFFF;   /* OPCODE SET_PB_SEGMENT_EXTENDED_BASE */
                continue;
            }
            struct seg *sg = &s[nseg++];
            sg->va = (ext << 40) | ((uint64_t)(hi & 0xFF) << 32) | (lo & ~3u);
            sg->flags = 0; sg->size = 0;
            uint64_t sav = 0;
            sg->cpu = va_to_cpu_cached(sg->va, &sav, &sg->kind, &c->seg_gmap, &c->seg_cmap);
            uint64_t want = (uint64_t)length * 4;
            if (!sg->cpu) { sg->flags = TL_SF_UNMAPPED; STAT(TL_STAT_SEGMENTS_UNMAPPED); }
            else {
                sg->flags = TL_SF_COPIED;
                if (want > sav) { want = sav; sg->flags |= TL_SF_CLIPPED; }
                if (want > MAX_SEG) { want = MAX_SEG; sg->flags |= TL_SF_CLIPPED; }
                sg->size = (uint32_t)want;
            }
            total += TL_SEGMENT__FIXED + pad8(sg->size);
        }
        PROF(TL_STAT_CYCLES_DEVICE_READS, tsc() - tr);
        ADD(&g_stats[TL_STAT_GP_ENTRIES_SHADOWED], shadowed);
        uint32_t rflags = flags | (m && shadowed == m ? TL_SUB_ENTRIES_SHADOWED : 0);
        uint64_t tb = tsc();
        uint8_t *r = rec_begin(total);
        PROF(TL_STAT_CYCLES_RESERVE, tsc() - tb);
        if (r) {
            uint8_t *b = body(r);
            uint64_t tk = tsc();
            uint64_t t = now_ns();
            PROF(TL_STAT_CYCLES_CLOCK, tsc() - tk);
            w64(r, TL_RECORD_HEADER__t_start, t);
            w32(b, TL_SUBMISSION__token, token); w32(b, TL_SUBMISSION__hClient, c->hClient);
            w32(b, TL_SUBMISSION__hChannel, c->hChannel); w32(b, TL_SUBMISSION__hClass, c->hClass);
            w32(b, TL_SUBMISSION__gp_put_prev, idx % entries);
            w32(b, TL_SUBMISSION__gp_put, (idx + m) % entries);
            w32(b, TL_SUBMISSION__gp_entries, c->entries); w32(b, TL_SUBMISSION__flags, rflags);
            w64(b, TL_SUBMISSION__gpfifo_va, c->gpfifo_va); w64(b, TL_SUBMISSION__doorbell_addr, doorbell);
            w64(b, TL_SUBMISSION__rip, rip); w32(b, TL_SUBMISSION__nentries, m);
            w32(b, TL_SUBMISSION__nsegments, nseg); w32(b, TL_SUBMISSION__lost, lost);
            w32(b, TL_SUBMISSION__insn_len, insn_len);
            uint8_t *q = b + TL_SUBMISSION__entries;
            for (uint32_t k = 0; k < m; k++, q += 8) w64(q, 0, e[k]);
            for (uint32_t k = 0; k < nseg; k++) {
                w64(q, TL_SEGMENT__va, s[k].va); w32(q, TL_SEGMENT__size, s[k].size);
                w32(q, TL_SEGMENT__flags, s[k].flags);
                if (s[k].size) {
                    uint64_t tc = tsc();
                    if (s[k].kind != K_CTL && s[k].kind != K_OTHER) dev_copy(q + TL_SEGMENT__data, s[k].cpu, s[k].size);
                    else if (g_nt_copy) nt_copy(q + TL_SEGMENT__data, s[k].cpu, s[k].size);
                    else memcpy(q + TL_SEGMENT__data, (void *)s[k].cpu, s[k].size);
                    tcopy += tsc() - tc;
                }
                q += TL_SEGMENT__FIXED + pad8(s[k].size);
            }
            w64(r, TL_RECORD_HEADER__t_end, now_ns());
            rec_publish(r, TL_REC_SUBMISSION, TL_RF_COMPLETE);
        }
        STAT(TL_STAT_SUBMISSIONS);
        idx += m; n -= m; lost = 0;
    } while (n);
    uint64_t cs = LOAD_ACQ(&c->cap_stamp);
    while (cs < stamp_now && !__atomic_compare_exchange_n(&c->cap_stamp, &cs, stamp_now, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {}
    PROF(TL_STAT_CYCLES_COPY, tcopy);
    PROF(TL_STAT_CYCLES_CAPTURE, tsc() - t0);
}

static void doorbell(struct trap *t, uint32_t token, uint64_t rip, uint32_t insn_len, uint32_t flags) {
    STAT(TL_STAT_DOORBELLS);
    if (!g_capture) return;
    struct channel *c = channel_by_token(token);
    uintptr_t db = t->user + USERMODE_DOORBELL;
    if (c) { capture_channel(c, token, db, rip, insn_len, flags); return; }
    if (g_win_mode && !win_keep()) { STAT(TL_STAT_WINDOW_SUBMISSIONS_SKIPPED); return; }
    uint8_t *r = rec_begin(TL_RECORD_HEADER__SIZE + TL_SUBMISSION__FIXED);
    if (!r) return;
    uint8_t *b = body(r);
    uint64_t tm = now_ns();
    w64(r, TL_RECORD_HEADER__t_start, tm); w64(r, TL_RECORD_HEADER__t_end, tm);
    w32(b, TL_SUBMISSION__token, token); w32(b, TL_SUBMISSION__flags, flags);
    w64(b, TL_SUBMISSION__doorbell_addr, db); w64(b, TL_SUBMISSION__rip, rip);
    w32(b, TL_SUBMISSION__insn_len, insn_len);
    rec_publish(r, TL_REC_SUBMISSION, TL_RF_COMPLETE);
}

/* Fallback: the store's value is unknown, so capture every channel whose GP_PUT moved. */
static void doorbell_scan(struct trap *t, uint64_t rip) {
    STAT(TL_STAT_DOORBELLS);
    uint32_t n = LOAD_ACQ(&g_nch);
    for (uint32_t i = 0; i < n && i < MAX_CHANNELS; i++) {
        struct channel *c = &g_ch[i];
        if (!LOAD_ACQ(&c->valid) || !LOAD_ACQ(&c->token_valid) || c->freed) continue;
        uint64_t avail = 0;
        uintptr_t userd = mem_to_cpu(c->hClient, c->hUserd, c->userd_off, &avail, NULL);
        if (!userd || avail < USERD_GP_PUT + 4) continue;
        if (dev_load32(userd + USERD_GP_PUT) != LOAD_ACQ(&c->last_put))
            capture_channel(c, c->token, t->user + USERMODE_DOORBELL, rip, 0, TL_SUB_FALLBACK);
    }
}

/* x86-64 store decoding: the forms a compiler emits for a 32-bit MMIO store. */
static const int greg_of[16] = { REG_RAX, REG_RCX, REG_RDX, REG_RBX, REG_RSP, REG_RBP, REG_RSI, REG_RDI,
                                 REG_R8, REG_R9, REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15 };

struct store {
    uint32_t len, size;
    int kind;             /* 1: store of register `reg`, 2: store of immediate `imm` */
    int reg, rex;         /* x86 register numbers (0 rax .. 15 r15) */
    int base;             /* address register when the operand is base + disp, else -1 */
    int32_t disp;
    uint64_t imm;
};

/* Returns the instruction length, or 0 when the encoding is not one we emulate. */
static uint32_t parse_store(const uint8_t *ip, struct store *st) {
    const uint8_t *p = ip;
    int op16 = 0, rex = 0, fsgs = 0;
    for (int i = 0; i < 4; i++) {
        if (*p == 0x66) { op16 = 1; p++; }
        else if (*p == 0x64 || *p == 0x65) { fsgs = 1; p++; }
        else if (*p == 0x2E || *p == 0x3E || *p == 0x26 || *p == 0x36) p++;
        else break;
    }
    if ((*p & 0xF0) == 0x40) rex = *p++;
    int w = rex & 8;
    uint8_t op = *p++;
    if (op == 0x89) { st->kind = 1; st->size = w ? 8 : op16 ? 2 : 4; }
    else if (op == 0x88) { st->kind = 1; st->size = 1; }
    else if (op == 0xC7) { st->kind = 2; st->size = w ? 8 : op16 ? 2 : 4; }
    else if (op == 0xC6) { st->kind = 2; st->size = 1; }
    else if (op == 0x0F && *p == 0xC3) { p++; st->kind = 1; st->size = w ? 8 : 4; }   /* MOVNTI */
    else return 0;
    uint8_t modrm = *p++;
    int mod = modrm >> 6, rm = modrm & 7;
    st->reg = ((modrm >> 3) & 7) | ((rex & 4) ? 8 : 0);
    st->rex = rex;
    /* base + disp without SIB, RIP-relative or segment override: all a patched site needs */
    st->base = (rm != 4 && !(mod == 0 && rm == 5) && !fsgs) ? (rm | ((rex & 1) ? 8 : 0)) : -1;
    st->disp = 0;
    if (mod == 3) return 0;
    if (st->kind == 2 && (st->reg & 7) != 0) return 0;
    if (rm == 4) { uint8_t sib = *p++; if ((sib & 7) == 5 && mod == 0) p += 4; }
    else if (rm == 5 && mod == 0) p += 4;
    if (mod == 1) { st->disp = (int8_t)*p; p += 1; }
    else if (mod == 2) { memcpy(&st->disp, p, 4); p += 4; }
    st->imm = 0;
    if (st->kind == 2) {
        if (st->size == 1) { st->imm = *p; p += 1; }
        else if (st->size == 2) { uint16_t v; memcpy(&v, p, 2); st->imm = v; p += 2; }
        else { int32_t v; memcpy(&v, p, 4); st->imm = (uint64_t)(int64_t)v; p += 4; }
    }
    st->len = (uint32_t)(p - ip);
    return st->len;
}

/* The value the store writes, from the faulting context's registers. */
static uint64_t store_value(const struct store *st, const greg_t *g) {
    uint64_t v = st->imm;
    if (st->kind == 1) {
        if (st->size == 1 && !st->rex && st->reg >= 4 && st->reg < 8) v = (uint64_t)g[greg_of[st->reg - 4]] >> 8;   /* AH..BH */
        else v = (uint64_t)g[greg_of[st->reg]];
    }
    return st->size < 8 ? v & ((1ull << (8 * st->size)) - 1) : v;
}

static struct trap *trap_at(uintptr_t a) {
    uint32_t n = LOAD_ACQ(&g_ntrap);
    for (uint32_t i = 0; i < n && i < MAX_TRAPS; i++) {
        struct trap *t = &g_trap[i];
        if (LOAD_ACQ(&t->valid) && a >= t->user && a < t->user + PAGE) return t;
    }
    return NULL;
}

static void chain(int sig, siginfo_t *si, void *uc) {
    struct sigaction *pa = &g_prog_act[sig];
    if (pa->sa_flags & SA_SIGINFO) { if (pa->sa_sigaction) { pa->sa_sigaction(sig, si, uc); return; } }
    else if (pa->sa_handler != SIG_DFL && pa->sa_handler != SIG_IGN) { pa->sa_handler(sig); return; }
    if (sig == SIGTRAP && pa->sa_handler == SIG_IGN) return;
    /* Default action: restore it and return, so the faulting instruction re-runs and the
     * program dies of the same signal it would have died of without us. */
    struct sigaction dfl; memset(&dfl, 0, sizeof dfl); dfl.sa_handler = SIG_DFL;
    real_sigaction(sig, &dfl, NULL);
    if (sig == SIGTRAP) raise(SIGTRAP);
}

/* Emulate a store of `size` bytes at `off` of a trapped usermode page: the doorbell when it
 * covers +0x90, then the store itself through the alias mapping. */
/* The dword at `at` (page offset) within a store of `size` bytes at `off`: 1 covered, 0 not
 * touched, -1 touched in part. */
static int covers(uintptr_t off, uint32_t size, uintptr_t at) {
    if (off <= at && at + 4 <= off + size) return 1;
    return (off < at + 4 && at < off + size) ? -1 : 0;
}

/* A store to a trapped USERD page: keep each channel's GP_PUT shadow (I13). */
static int userd_store(struct trap *t, uintptr_t off, uint64_t value, uint32_t size) {
    int hit = 0;
    uint32_t n = LOAD_ACQ(&g_nch);
    for (uint32_t i = 0; i < n && i < MAX_CHANNELS; i++) {
        struct channel *c = &g_ch[i];
        if (!LOAD_ACQ(&c->valid) || c->gp_put_cpu - t->user >= PAGE) continue;
        int k = covers(off, size, c->gp_put_cpu - t->user);
        if (k > 0) { STORE_REL(&c->shadow_put, (uint32_t)(value >> (8 * (c->gp_put_cpu - t->user - off)))); hit = 1; }
        else if (k < 0) STORE_REL(&c->shadow_ok, 0);
    }
    return hit;
}

/* A store the program cannot make itself (the page is read-only): USERD stores it could not
 * decode leave the shadows of that page unknown. */
static void userd_unknown(struct trap *t) {
    uint32_t n = LOAD_ACQ(&g_nch);
    for (uint32_t i = 0; i < n && i < MAX_CHANNELS; i++)
        if (LOAD_ACQ(&g_ch[i].valid) && g_ch[i].gp_put_cpu - t->user < PAGE) STORE_REL(&g_ch[i].shadow_ok, 0);
}

static void trap_store_alias(struct trap *t, uintptr_t off, uint64_t value, uint32_t size) {
    volatile uint8_t *dst = (volatile uint8_t *)(t->alias + off);
    if (size == 4) *(volatile uint32_t *)dst = (uint32_t)value;
    else if (size == 8) *(volatile uint64_t *)dst = value;
    else if (size == 2) *(volatile uint16_t *)dst = (uint16_t)value;
    else *dst = (uint8_t)value;
}

/* Emulate a store of `size` bytes at `off` of a trapped page: the doorbell when it covers
 * usermode +0x90, a channel's GP_PUT in USERD; then the store itself through the alias. */
static void trap_store(struct trap *t, uintptr_t off, uint64_t value, uint32_t size, uint64_t rip,
                       uint32_t len, uint32_t flags) {
    if (t->kind == TRAP_USERD) userd_store(t, off, value, size);
    else if (covers(off, size, USERMODE_DOORBELL) > 0)
        doorbell(t, (uint32_t)(value >> (8 * (USERMODE_DOORBELL - off))), rip, len, flags);
    trap_store_alias(t, off, value, size);
}

#include "patch.c"

static void on_segv(int sig, siginfo_t *si, void *ucv) {
    int saved = errno;
    ucontext_t *uc = ucv;
    uintptr_t a = (uintptr_t)si->si_addr;
    struct trap *t = (si->si_code == SEGV_ACCERR) ? trap_at(a) : NULL;
    if (!t) { STAT(TL_STAT_FAULTS_NOT_OURS); errno = saved; chain(sig, si, ucv); return; }
    greg_t *g = uc->uc_mcontext.gregs;
    if (t->probe) {
        probe_note((uintptr_t)g[REG_RIP], a);
        t_stepping = t;
        syscall(SYS_mprotect, (void *)t->user, PAGE, PROT_READ | PROT_WRITE);
        g[REG_EFL] |= 0x100;
        errno = saved;
        return;
    }
    uint64_t rip = (uint64_t)g[REG_RIP];
    struct store st;
    uint32_t len = parse_store((const uint8_t *)rip, &st);
    struct site *known = len ? NULL : site_at(rip);
    if (known) { st = known->st; len = st.len; }   /* it faulted before its site was rewritten */
    uint32_t size = st.size;
    uintptr_t off = a - t->user;
    if (len && off + size <= PAGE) {
        uint64_t value = store_value(&st, g);
        if (t->kind == TRAP_USERD) {
            if (userd_store(t, off, value, size)) consider_site(rip, &st, "GP_PUT");
            trap_store_alias(t, off, value, size);
        } else {
            trap_store(t, off, value, size, rip, len, 0);
            if (covers(off, size, USERMODE_DOORBELL) > 0) consider_site(rip, &st, "doorbell");
        }
        g[REG_RIP] = (greg_t)(rip + len);
    } else {
        /* Unknown encoding: record what GP_PUT shows, then let the instruction run once with
         * the page writable and the trap flag set; on_trap restores the protection. */
        STAT(TL_STAT_FALLBACKS);
        if (t->kind == TRAP_USERD) userd_unknown(t);
        else doorbell_scan(t, rip);
        t_stepping = t;
        syscall(SYS_mprotect, (void *)t->user, PAGE, PROT_READ | PROT_WRITE);
        g[REG_EFL] |= 0x100;
    }
    errno = saved;
}

static void on_trap(int sig, siginfo_t *si, void *ucv) {
    int saved = errno;
    struct trap *t = t_stepping;
    if (t) {
        ucontext_t *uc = ucv;
        syscall(SYS_mprotect, (void *)t->user, PAGE, PROT_READ);
        uc->uc_mcontext.gregs[REG_EFL] &= ~(greg_t)0x100;
        t_stepping = NULL;
        errno = saved;
        return;
    }
    errno = saved;
    chain(sig, si, ucv);
}

static void install_handlers(void) {
    if (__atomic_exchange_n(&g_handlers_installed, 1, __ATOMIC_ACQ_REL)) return;
    struct sigaction sa; memset(&sa, 0, sizeof sa);
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART | SA_NODEFER;
    sa.sa_sigaction = on_segv;
    real_sigaction(SIGSEGV, &sa, &g_prog_act[SIGSEGV]);
    sa.sa_sigaction = on_trap;
    real_sigaction(SIGTRAP, &sa, &g_prog_act[SIGTRAP]);
}

static void setup_trap(uintptr_t user, size_t len, int prot, int flags, int fd, off_t off) {
    if (!g_full || len < PAGE) return;
    resolve();
    void *alias = real_mmap(NULL, len, prot, flags & ~MAP_FIXED, fd, off);
    if (alias == MAP_FAILED) { STAT(TL_STAT_TRAP_SETUP_FAILED); return; }
    struct trap *t = APPEND(g_trap, g_ntrap, MAX_TRAPS);
    if (!t) { real_munmap(alias, len); STAT(TL_STAT_TRAP_SETUP_FAILED); return; }
    t->user = user; t->alias = (uintptr_t)alias; t->len = len; t->own_alias = 1; t->kind = TRAP_USERMODE;
    install_handlers();
    STORE_REL(&t->valid, 1);
    if (syscall(SYS_mprotect, (void *)user, PAGE, PROT_READ) != 0) {
        STORE_REL(&t->valid, 0); real_munmap(alias, len); STAT(TL_STAT_TRAP_SETUP_FAILED);
    }
}

/* ---- process records ---------------------------------------------------------------- */
static size_t read_file(const char *path, char *buf, size_t cap) {
    int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    size_t n = 0;
    while (n < cap) { long r = syscall(SYS_read, fd, buf + n, cap - n); if (r <= 0) break; n += (size_t)r; }
    syscall(SYS_close, fd);
    return n;
}

/* PROCESS_ENV (issue 26): the launcher's rank variables, TL_ENV_NAMES only (never the rest
 * of the environment), read from `environ` as it is now: after exec that is what the launcher
 * passed (torchrun sets RANK for each worker it starts), after fork what the parent set.
 * Written only when one is set. No allocation: a fixed buffer, values cut to TL_ENV_VALUE_MAX. */
extern char **environ;
static void record_process_env(void) {
    static const char *const names[] = TL_ENV_NAMES;
    char buf[TL_ENV_MAX];
    size_t n = 0;
    for (char **e = environ; e && *e; e++) {
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
            size_t nl = s_len(names[i]);
            if (!s_prefix(*e, names[i], nl) || (*e)[nl] != '=') continue;
            size_t vl = s_len(*e + nl + 1);
            if (vl > TL_ENV_VALUE_MAX) vl = TL_ENV_VALUE_MAX;
            if (n + nl + 1 + vl + 1 <= sizeof buf) {
                put_bytes((uint8_t *)buf + n, *e, nl + 1 + vl);
                n += nl + 1 + vl;
                buf[n++] = 0;
            }
            break;
        }
    }
    if (!n) return;
    uint8_t *r = rec_begin(TL_RECORD_HEADER__SIZE + TL_PROCESS_ENV__FIXED + pad8(n));
    if (!r) return;
    uint8_t *b = body(r);
    uint64_t t = now_ns();
    w64(r, TL_RECORD_HEADER__t_start, t); w64(r, TL_RECORD_HEADER__t_end, t);
    w32(b, TL_PROCESS_ENV__env_len, (uint32_t)n);
    put_bytes(b + TL_PROCESS_ENV__env, buf, n);
    rec_publish(r, TL_REC_PROCESS_ENV, TL_RF_COMPLETE);
}

static void record_process_start(uint32_t how) {
    char exe[1024], cmd[4096];
    long el = syscall(SYS_readlink, "/proc/self/exe", exe, sizeof exe);
    if (el < 0) el = 0;
    size_t cl = read_file("/proc/self/cmdline", cmd, sizeof cmd);
    uint8_t *r = rec_begin(TL_RECORD_HEADER__SIZE + TL_PROCESS_START__FIXED + pad8((size_t)el) + pad8(cl));
    if (!r) return;
    uint8_t *b = body(r);
    uint64_t t = now_ns();
    w64(r, TL_RECORD_HEADER__t_start, t); w64(r, TL_RECORD_HEADER__t_end, t);
    w32(b, TL_PROCESS_START__ppid, (uint32_t)syscall(SYS_getppid)); w32(b, TL_PROCESS_START__how, how);
    w32(b, TL_PROCESS_START__exe_len, (uint32_t)el); w32(b, TL_PROCESS_START__cmdline_len, (uint32_t)cl);
    put_bytes(b + TL_PROCESS_START__exe, exe, (size_t)el);
    put_bytes(b + TL_PROCESS_START__exe + pad8((size_t)el), cmd, cl);
    rec_publish(r, TL_REC_PROCESS_START, TL_RF_COMPLETE);
    record_process_env();
}

static void record_exit(int status, int known) {
    if (!g_on || vfork_child() || __atomic_exchange_n(&g_exit_written, 1, __ATOMIC_ACQ_REL)) return;
    uint8_t *r = rec_begin(TL_RECORD_HEADER__SIZE + TL_STATS__FIXED + 8 * TL_STAT_COUNT);
    if (r) {
        uint8_t *b = body(r);
        uint64_t t = now_ns();
        w64(r, TL_RECORD_HEADER__t_start, t); w64(r, TL_RECORD_HEADER__t_end, t);
        w32(b, TL_STATS__count, TL_STAT_COUNT);
        for (int i = 0; i < TL_STAT_COUNT; i++) w64(b, TL_STATS__counters + 8 * i, __atomic_load_n(&g_stats[i], __ATOMIC_RELAXED));
        rec_publish(r, TL_REC_STATS, TL_RF_COMPLETE);
    }
    r = rec_begin(TL_RECORD_HEADER__SIZE + TL_PROCESS_EXIT__SIZE);
    if (r) {
        uint64_t t = now_ns();
        w64(r, TL_RECORD_HEADER__t_start, t); w64(r, TL_RECORD_HEADER__t_end, t);
        w32(body(r), TL_PROCESS_EXIT__status, (uint32_t)status);
        rec_publish(r, TL_REC_PROCESS_EXIT, known ? TL_RF_COMPLETE : 0);
    }
}

static void after_fork_child(void) {
    if (!g_on) return;
    /* The child shares the file and its cursor; it starts its own process history. */
    for (int i = 0; i < TL_STAT_COUNT; i++) g_stats[i] = 0;
    g_seq = 0; g_exit_written = 0;
    g_pf_on = 0; g_pf_kick = 0; g_pf_next = UINT64_MAX;   /* threads do not survive fork (I15) */
    g_pid = (uint32_t)syscall(SYS_getpid);
    record_process_start(2);
}

static void api_init(void);
static void win_init(void);

__attribute__((constructor)) static void tl_init(void) {
    resolve();
    const char *p = getenv("TRACE_LAUNCH_CAPTURE");
    if (!p || !*p) return;
    s_copy(g_path, p, sizeof g_path);
    const char *d = getenv("TRACE_LAUNCH_DEVDIR");   /* test-only: treat files there as devices */
    if (d && *d) { s_copy(g_devdir, d, sizeof g_devdir); g_devdir_len = s_len(g_devdir); }
    const char *m = getenv("TRACE_LAUNCH_MODE");
    if (m && !strcmp(m, "ioctl")) g_full = 0;
    if (m && !strcmp(m, "trap")) g_capture = 0;
    const char *cp = getenv("TRACE_LAUNCH_COPY");
    const char *pt = getenv("TRACE_LAUNCH_PATCH");
    if (pt && !strcmp(pt, "0")) g_patch = 0;
    const char *pfo = getenv("TRACE_LAUNCH_PREFAULT");
    if (pfo && !strcmp(pfo, "0")) g_prefault = 0;
    const char *kn = getenv("TRACE_LAUNCH_KNOWN");
    if (kn && !strcmp(kn, "0")) g_known_done = 1;   /* no known-function hooks (I14): for measuring */
    const char *pr = getenv("TRACE_LAUNCH_PROBE");
    g_probe_ring = pr && !strcmp(pr, "ring");
    const char *sc = getenv("TRACE_LAUNCH_SHADOW_CHECK");
    if (sc && atoi(sc) > 0) g_shadow_check = (uint32_t)atoi(sc);
    const char *xs = getenv("TRACE_LAUNCH_XSAVE");
    g_xsave = xs && !strcmp(xs, "1");
    const char *pf = getenv("TRACE_LAUNCH_PROFILE");
    g_profile = pf && !strcmp(pf, "1");
    xstate_init();
    __builtin_cpu_init();
    /* Measured on the H100: the pushbuffer is cached system memory, where memcpy is ~5x
     * faster than streaming loads; "stream" is kept for write-combined pushbuffers. */
    g_nt_copy = __builtin_cpu_supports("sse4.1") && cp && !strcmp(cp, "stream");
    api_init();
    int fd = (int)syscall(SYS_openat, AT_FDCWD, g_path, O_RDWR | O_CLOEXEC);
    if (fd < 0) return;
    int hi = (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, FD_FLOOR);
    if (hi >= 0) { syscall(SYS_close, fd); fd = hi; }
    struct stat st;
    if (syscall(SYS_fstat, fd, &st) != 0 || st.st_size < TL_HEADER_SIZE) { syscall(SYS_close, fd); return; }
    void *base = real_mmap(NULL, WINDOW, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
    if (base == MAP_FAILED) { syscall(SYS_close, fd); return; }
    if (memcmp(base, TL_MAGIC, 8) != 0) { real_munmap(base, WINDOW); syscall(SYS_close, fd); return; }
    g_fd = fd; g_dev = st.st_dev; g_ino = st.st_ino; g_known_size = (uint64_t)st.st_size;
    g_base = base;
    g_on = 1;
    pthread_atfork(NULL, NULL, after_fork_child);
    record_process_start(1);
    win_init();
}

__attribute__((destructor)) static void tl_fini(void) { record_exit(0, 0); }

/* ---- exported: cooperative marks ---------------------------------------------------- */
EXPORT int tracelaunch_mark(uint32_t kind, uint32_t id, const char *label) {
    if (!g_on) return -1;
    size_t ll = label ? s_len(label) : 0;
    uint8_t *r = rec_begin(TL_RECORD_HEADER__SIZE + TL_MARK__FIXED + pad8(ll));
    if (!r) return -1;
    uint8_t *b = body(r);
    uint64_t t = now_ns();
    w64(r, TL_RECORD_HEADER__t_start, t); w64(r, TL_RECORD_HEADER__t_end, t);
    w32(b, TL_MARK__kind, kind); w32(b, TL_MARK__id, id); w32(b, TL_MARK__label_len, (uint32_t)ll);
    put_bytes(b + TL_MARK__label, label, ll);
    rec_publish(r, TL_REC_MARK, TL_RF_COMPLETE);
    return 0;
}

EXPORT int tracelaunch_active(void) { return g_on; }

/* ---- wrappers: open/close/dup ------------------------------------------------------- */
static int do_open(int dirfd, const char *path, int flags, mode_t mode) {
    return (int)syscall(SYS_openat, dirfd, path, flags, mode);   /* sets errno on failure */
}

#define OPEN_BODY(dirfd)                                                   \
    mode_t mode = 0;                                                       \
    if (flags & (O_CREAT | O_TMPFILE)) {                                   \
        va_list ap; va_start(ap, flags); mode = va_arg(ap, mode_t); va_end(ap); \
    }                                                                      \
    int fd = do_open((dirfd), path, flags, mode);                          \
    if (fd >= 0 && g_on) { int e = errno; after_open(fd, flags, path); errno = e; } \
    return fd;

EXPORT int open(const char *path, int flags, ...) { OPEN_BODY(AT_FDCWD) }
EXPORT int open64(const char *path, int flags, ...) { OPEN_BODY(AT_FDCWD) }
EXPORT int openat(int dirfd, const char *path, int flags, ...) { OPEN_BODY(dirfd) }
EXPORT int openat64(int dirfd, const char *path, int flags, ...) { OPEN_BODY(dirfd) }
EXPORT int __open_2(const char *path, int flags) { int fd = do_open(AT_FDCWD, path, flags, 0); if (fd >= 0 && g_on) { int e = errno; after_open(fd, flags, path); errno = e; } return fd; }
EXPORT int __open64_2(const char *path, int flags) { return __open_2(path, flags); }

/* Keep the capture fd out of the program's way: move it before the program takes its number. */
static void move_capture_fd(void) {
    int nfd = (int)syscall(SYS_fcntl, g_fd, F_DUPFD_CLOEXEC, g_fd + 1);
    if (nfd >= 0) { int old = g_fd; g_fd = nfd; syscall(SYS_close, old); }
}

EXPORT int close(int fd) {
    resolve();
    if (g_on && fd == g_fd && fd >= 0) return 0;   /* the program does not own it: pretend */
    int k = fd_kind(fd);
    int r = real_close(fd);
    if (k) { int e = errno; if (r == 0 && !vfork_child()) forget_fd(fd); errno = e; }
    return r;
}

/* A copy of an NVIDIA fd is one too (dup, dup2, dup3, fcntl F_DUPFD): its ioctls and mmaps
 * are the driver's (libcuda copies a /dev/nvidia0 fd with fcntl F_DUPFD_CLOEXEC: a
 * torch.compile max-autotune run held 8 such copies at exit, none seen opened before this).
 * Recorded as an OPEN of the same path. */
static void adopt_copy(int oldfd, int r, int oflags) {
    int e = errno;
    if (vfork_child()) { errno = e; return; }
    forget_fd(r);
    if (fd_kind(oldfd) && r < MAX_FD) { g_fdkind[r] = g_fdkind[oldfd]; g_fdpath[r] = g_fdpath[oldfd]; record_open(r, oflags, fd_path(oldfd)); }
    errno = e;
}

EXPORT int dup(int oldfd) {
    resolve();
    int r = real_dup(oldfd);
    if (r >= 0 && g_on) adopt_copy(oldfd, r, 0);
    return r;
}

#define FCNTL_BODY(real)                                                   \
    va_list ap; va_start(ap, cmd); void *arg = va_arg(ap, void *); va_end(ap); \
    resolve();                                                             \
    int r = (real)(fd, cmd, arg);                                          \
    if (r >= 0 && g_on && (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC))      \
        adopt_copy(fd, r, cmd == F_DUPFD_CLOEXEC ? O_CLOEXEC : 0);         \
    return r;

EXPORT int fcntl(int fd, int cmd, ...) { FCNTL_BODY(real_fcntl) }
EXPORT int fcntl64(int fd, int cmd, ...) { FCNTL_BODY(real_fcntl64) }

EXPORT int dup2(int oldfd, int newfd) {
    resolve();
    if (g_on && newfd == g_fd && newfd != oldfd && !vfork_child()) move_capture_fd();
    int r = real_dup2(oldfd, newfd);
    if (r >= 0 && g_on && r != oldfd) adopt_copy(oldfd, r, 0);
    return r;
}

EXPORT int dup3(int oldfd, int newfd, int flags) {
    resolve();
    if (g_on && newfd == g_fd && newfd != oldfd && !vfork_child()) move_capture_fd();
    int r = real_dup3(oldfd, newfd, flags);
    if (r >= 0 && g_on) adopt_copy(oldfd, r, flags);
    return r;
}

static int close_range_around(unsigned first, unsigned last, int flags) {
    if (g_on && g_fd >= 0 && (unsigned)g_fd >= first && (unsigned)g_fd <= last && !(flags & CLOSE_RANGE_CLOEXEC)) {
        int r = 0;
        if ((unsigned)g_fd > first) r = (int)syscall(SYS_close_range, first, (unsigned)g_fd - 1, flags);
        if (r == 0 && (unsigned)g_fd < last) r = (int)syscall(SYS_close_range, (unsigned)g_fd + 1, last, flags);
        return r;
    }
    return (int)syscall(SYS_close_range, first, last, flags);
}

EXPORT int close_range(unsigned first, unsigned last, int flags) {
    int r = close_range_around(first, last, flags);
    if (r == 0 && g_on && !(flags & CLOSE_RANGE_CLOEXEC) && !vfork_child()) {
        int e = errno;
        for (unsigned fd = first; fd <= last && fd < MAX_FD; fd++) forget_fd((int)fd);
        errno = e;
    }
    return r;
}

EXPORT void closefrom(int low) {
    if (low < 0) low = 0;
    if (close_range((unsigned)low, ~0u, 0) == 0) return;
    for (int fd = low; fd < MAX_FD; fd++) if (fd != g_fd || !g_on) syscall(SYS_close, fd);
}

/* ---- wrappers: ioctl ---------------------------------------------------------------- */
static const struct { uint32_t cmd, size; } uvm_sizes[] = TL_UVM_SIZES;


static const struct { uint32_t cls, size; } alloc_sizes[] = TL_ALLOC_SIZES;


static int alloc_size(uint32_t cls, uint32_t *size) {
    for (size_t i = 0; i < sizeof alloc_sizes / sizeof alloc_sizes[0]; i++)
        if (alloc_sizes[i].cls == cls) { *size = alloc_sizes[i].size; return 1; }
    return 0;
}

static int uvm_size(unsigned long req, uint32_t *size) {
    for (size_t i = 0; i < sizeof uvm_sizes / sizeof uvm_sizes[0]; i++)
        if (uvm_sizes[i].cmd == req) { *size = uvm_sizes[i].size; return 1; }
    return 0;
}

#include "rmptrs.c"

EXPORT int ioctl(int fd, unsigned long req, ...) {
    va_list ap; va_start(ap, req); void *argp = va_arg(ap, void *); va_end(ap);
    if (!real_ioctl) resolve();
    int kind = fd_kind(fd);
    if (!g_on || !kind) return real_ioctl(fd, req, argp);
    STAT(TL_STAT_IOCTLS);
    int errno_in = errno;      /* the copies below may fail with EFAULT; the call sees errno as the program left it (I1) */
    uintptr_t arg = (uintptr_t)argp;
    uint32_t size = 0, iflags = 0;
    if (kind == K_UVM) { if (!uvm_size(req, &size)) iflags |= TL_IF_UVM_SIZE_UNKNOWN; }
    else size = (uint32_t)((req >> 16) & 0x3FFF);
    if (size > MAX_BUF) size = MAX_BUF;
    /* Peek at the argument's head to find the buffers it points to. */
    uint8_t head[64]; memset(head, 0, sizeof head);
    int head_ok = safe_read(head, arg, size < sizeof head ? size : sizeof head);
    struct ptrbuf bufs[1 + PTRS_PER_CMD];
    memset(bufs, 0, sizeof bufs);
    uint32_t nbufs = 0, nr = req & 0xff;
    if (head_ok && kind != K_UVM && ((req >> 8) & 0xff) == 'F') {
        if (nr == 0x2A && size == NVOS54_PARAMETERS__SIZE)
            bufs[nbufs++] = (typeof(bufs[0])){ TL_BUF_RM_CONTROL_PARAMS, r32(head, NVOS54_PARAMETERS__paramsSize), 0, 0, r64(head, NVOS54_PARAMETERS__params) };
        else if (nr == 0x2B && size == NVOS21_PARAMETERS__SIZE)
            bufs[nbufs++] = (typeof(bufs[0])){ TL_BUF_RM_ALLOC_PARAMS, r32(head, NVOS21_PARAMETERS__paramsSize), 0, 0, r64(head, NVOS21_PARAMETERS__pAllocParms) };
        else if (nr == 0x2B && size == NVOS64_PARAMETERS__SIZE)
            bufs[nbufs++] = (typeof(bufs[0])){ TL_BUF_RM_ALLOC_PARAMS, r32(head, NVOS64_PARAMETERS__paramsSize), 0, 0, r64(head, NVOS64_PARAMETERS__pAllocParms) };
        else if (nr == 0xD3 && size == nv_ioctl_xfer_t__SIZE)
            bufs[nbufs++] = (typeof(bufs[0])){ TL_BUF_XFER_ARGS, r32(head, nv_ioctl_xfer_t__size), 0, 0, r64(head, nv_ioctl_xfer_t__ptr) };
        if (nbufs && bufs[0].role == TL_BUF_RM_ALLOC_PARAMS && bufs[0].size == 0 && bufs[0].addr &&
            alloc_size(r32(head, NVOS21_PARAMETERS__hClass), &bufs[0].size))
            bufs[0].flags |= TL_BF_SIZE_FROM_CLASS;   /* libcuda passes 0; RM sizes by class */
        if (nbufs && (bufs[0].addr == 0 || bufs[0].size == 0)) nbufs = 0;
        if (nbufs && bufs[0].size > MAX_BUF) { bufs[0].size = MAX_BUF; bufs[0].flags |= TL_BF_TRUNCATED; }
        if (nbufs && bufs[0].role == TL_BUF_RM_CONTROL_PARAMS)
            nbufs += follow_ptrs(r32(head, NVOS54_PARAMETERS__cmd), bufs[0].addr, bufs[0].size,
                                 &bufs[1], &iflags);
    }
    const char *path = fd_path(fd);
    size_t pl = s_len(path);
    size_t total = TL_RECORD_HEADER__SIZE + TL_IOCTL__FIXED + pad8(pl) + 2 * pad8(size);
    for (uint32_t i = 0; i < nbufs; i++) total += TL_IOCTL_BUFFER__FIXED + 2 * pad8(bufs[i].size);
    uint8_t *r = rec_begin(total);
    if (!r) { errno = errno_in; return real_ioctl(fd, req, argp); }
    uint8_t *b = body(r);
    uint8_t *before = b + TL_IOCTL__path + pad8(pl), *after = before + pad8(size);
    uint8_t *bp = after + pad8(size);
    w32(b, TL_IOCTL__fd, (uint32_t)fd); w32(b, TL_IOCTL__request, (uint32_t)req); w64(b, TL_IOCTL__arg, arg);
    w32(b, TL_IOCTL__arg_size, size); w32(b, TL_IOCTL__nbufs, nbufs); w32(b, TL_IOCTL__path_len, (uint32_t)pl);
    put_bytes(b + TL_IOCTL__path, path, pl);
    if (safe_read(before, arg, size)) iflags |= TL_IF_ARG_BEFORE;
    uint8_t *bb[1 + PTRS_PER_CMD] = { 0 };
    for (uint32_t i = 0; i < nbufs; i++) {
        w32(bp, TL_IOCTL_BUFFER__role, bufs[i].role); w32(bp, TL_IOCTL_BUFFER__size, bufs[i].size);
        w64(bp, TL_IOCTL_BUFFER__addr, bufs[i].addr); w32(bp, TL_IOCTL_BUFFER__field, bufs[i].field);
        bb[i] = bp + TL_IOCTL_BUFFER__FIXED;
        if (safe_read(bb[i], bufs[i].addr, bufs[i].size)) bufs[i].flags |= TL_BF_BEFORE;
        bp = bb[i] + 2 * pad8(bufs[i].size);
    }
    w64(r, TL_RECORD_HEADER__t_start, now_ns());
    errno = errno_in;
    int ret = real_ioctl(fd, req, argp);
    int err = errno;
    w64(r, TL_RECORD_HEADER__t_end, now_ns());
    if (safe_read(after, arg, size)) iflags |= TL_IF_ARG_AFTER;
    for (uint32_t i = 0; i < nbufs; i++) {
        if (safe_read(bb[i] + pad8(bufs[i].size), bufs[i].addr, bufs[i].size)) bufs[i].flags |= TL_BF_AFTER;
        w32(bb[i] - TL_IOCTL_BUFFER__FIXED, TL_IOCTL_BUFFER__flags, bufs[i].flags);
    }
    w32(b, TL_IOCTL__ret, (uint32_t)ret); w32(b, TL_IOCTL__err, (uint32_t)(ret < 0 ? err : 0));
    w32(b, TL_IOCTL__flags, iflags);
    /* Test devices (TRACE_LAUNCH_DEVDIR) are plain files: ioctl fails with ENOTTY there, and
     * the objects are tracked from the arguments as if RM had accepted them. */
    int accepted = ret == 0 || (g_devdir_len && ret < 0 && err == ENOTTY);
    if (accepted && (iflags & TL_IF_ARG_AFTER))
        track_ioctl(kind, req, fd, after, size, nbufs ? bb[0] + pad8(bufs[0].size) : NULL, nbufs ? bufs[0].size : 0);
    rec_publish(r, TL_REC_IOCTL, TL_RF_COMPLETE);
    errno = err;
    return ret;
}

/* ---- wrappers: mmap family ---------------------------------------------------------- */
static void track_cpu_map(int fd, int kind, uintptr_t addr, size_t len, int prot, off_t off) {
    struct pending *p = NULL;
    uint32_t n = LOAD_ACQ(&g_npend);
    for (uint32_t i = 0; i < n && i < MAX_PENDING; i++)
        if (LOAD_ACQ(&g_pend[i].valid) && g_pend[i].fd == fd) { p = &g_pend[i]; break; }
    struct cpumap *c = APPEND(g_cpu, g_ncpu, MAX_CPUMAPS);
    if (!c) return;
    c->hClient = p ? p->hClient : 0; c->hMemory = p ? p->hMemory : 0;
    c->memoff = p ? p->off : 0; c->len = len; c->addr = addr; c->prot = prot; c->kind = (uint32_t)kind;
    int um = p && is_usermode(p->hClient, p->hMemory);
    c->alias = 0;
    if (!um && g_full && kind == K_GPU && (prot & PROT_WRITE) && len <= (64u << 20)) {
        /* Device memory that may hold a channel's USERD: the alias lets its page be trapped
         * later (I13). Made now because the driver maps what the last RM_MAP_MEMORY named. */
        void *al = real_mmap(NULL, len, prot, MAP_SHARED, fd, off);
        if (al != MAP_FAILED) c->alias = (uintptr_t)al;
    }
    STORE_REL(&c->valid, 1);
    if (um) setup_trap(addr, len, prot, MAP_SHARED, fd, 0);
}

static void untrack_range(uintptr_t a, size_t len) {
    /* Traps go first, so no store is emulated through an alias about to be unmapped. */
    uint32_t n = LOAD_ACQ(&g_ntrap);
    for (uint32_t i = 0; i < n && i < MAX_TRAPS; i++) {
        struct trap *t = &g_trap[i];
        if (LOAD_ACQ(&t->valid) && t->user < a + len && a < t->user + t->len) {
            STORE_REL(&t->valid, 0);
            /* GP_PUT stores there are no longer seen: the shadow stops (I13) */
            if (t->kind == TRAP_USERD) userd_unknown(t);
            if (t->own_alias) real_munmap((void *)t->alias, t->len);
        }
    }
    n = LOAD_ACQ(&g_ncpu);
    for (uint32_t i = 0; i < n && i < MAX_CPUMAPS; i++) {
        struct cpumap *c = &g_cpu[i];
        if (LOAD_ACQ(&c->valid) && c->addr < a + len && a < c->addr + c->len) {
            STORE_REL(&c->valid, 0);
            if (c->alias) real_munmap((void *)c->alias, c->len);
        }
    }
}

static int range_tracked(uintptr_t a, size_t len) {
    uint32_t n = LOAD_ACQ(&g_ncpu);
    for (uint32_t i = 0; i < n && i < MAX_CPUMAPS; i++) {
        struct cpumap *c = &g_cpu[i];
        if (LOAD_ACQ(&c->valid) && c->kind && c->addr < a + len && a < c->addr + c->len) return 1;
    }
    return 0;
}

EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off) {
    if (!real_mmap) resolve();
    int kind = fd_kind(fd);
    if (!g_on || !kind || (flags & MAP_ANONYMOUS)) return real_mmap(addr, len, prot, flags, fd, off);
    STAT(TL_STAT_MMAPS);
    const char *path = fd_path(fd);
    size_t pl = s_len(path);
    uint8_t *r = rec_begin(TL_RECORD_HEADER__SIZE + TL_MMAP__FIXED + pad8(pl));
    uint64_t t0 = now_ns();
    void *res = real_mmap(addr, len, prot, flags, fd, off);
    int err = errno;
    if (res != MAP_FAILED && kind != K_UVM) track_cpu_map(fd, kind, (uintptr_t)res, len, prot, off);
    if (r) {
        uint8_t *b = body(r);
        w64(r, TL_RECORD_HEADER__t_start, t0); w64(r, TL_RECORD_HEADER__t_end, now_ns());
        w64(b, TL_MMAP__addr, (uint64_t)(uintptr_t)res); w64(b, TL_MMAP__length, len);
        w32(b, TL_MMAP__prot, (uint32_t)prot); w32(b, TL_MMAP__flags, (uint32_t)flags);
        w32(b, TL_MMAP__fd, (uint32_t)fd); w32(b, TL_MMAP__err, res == MAP_FAILED ? (uint32_t)err : 0);
        w64(b, TL_MMAP__offset, (uint64_t)off); w32(b, TL_MMAP__path_len, (uint32_t)pl);
        put_bytes(b + TL_MMAP__path, path, pl);
        rec_publish(r, TL_REC_MMAP, TL_RF_COMPLETE);
    }
    errno = err;
    return res;
}
EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
    __attribute__((alias("mmap")));

EXPORT int munmap(void *addr, size_t len) {
    if (!real_munmap) resolve();
    if (!g_on || !range_tracked((uintptr_t)addr, len)) return real_munmap(addr, len);
    uint8_t *r = rec_begin(TL_RECORD_HEADER__SIZE + TL_MUNMAP__SIZE);
    uint64_t t0 = now_ns();
    untrack_range((uintptr_t)addr, len);
    int ret = real_munmap(addr, len);
    int err = errno;
    if (r) {
        uint8_t *b = body(r);
        w64(r, TL_RECORD_HEADER__t_start, t0); w64(r, TL_RECORD_HEADER__t_end, now_ns());
        w64(b, TL_MUNMAP__addr, (uint64_t)(uintptr_t)addr); w64(b, TL_MUNMAP__length, len);
        w32(b, TL_MUNMAP__ret, (uint32_t)ret); w32(b, TL_MUNMAP__err, ret ? (uint32_t)err : 0);
        rec_publish(r, TL_REC_MUNMAP, TL_RF_COMPLETE);
    }
    errno = err;
    return ret;
}

EXPORT void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...) {
    void *new_addr = NULL;
    if (flags & MREMAP_FIXED) { va_list ap; va_start(ap, flags); new_addr = va_arg(ap, void *); va_end(ap); }
    if (!real_mremap) resolve();
    if (!g_on || !range_tracked((uintptr_t)old, old_len)) return real_mremap(old, old_len, new_len, flags, new_addr);
    uint8_t *r = rec_begin(TL_RECORD_HEADER__SIZE + TL_MREMAP__SIZE);
    uint64_t t0 = now_ns();
    void *res = real_mremap(old, old_len, new_len, flags, new_addr);
    int err = errno;
    if (res != MAP_FAILED && res != old) {
        /* A trapped page moved with the mapping would fault where no trap is recorded: give
         * it back its write access and stop trapping it (counted: its doorbells or GP_PUT
         * stores are no longer seen). */
        uint32_t nt = LOAD_ACQ(&g_ntrap);
        for (uint32_t i = 0; i < nt && i < MAX_TRAPS; i++) {
            struct trap *t = &g_trap[i];
            if (!LOAD_ACQ(&t->valid) || t->user < (uintptr_t)old || t->user >= (uintptr_t)old + old_len) continue;
            STORE_REL(&t->valid, 0);
            if (t->kind == TRAP_USERD) userd_unknown(t);
            uintptr_t moved = (uintptr_t)res + (t->user - (uintptr_t)old);
            if (moved + PAGE <= (uintptr_t)res + new_len)
                syscall(SYS_mprotect, (void *)moved, PAGE, PROT_READ | PROT_WRITE);
            STAT(TL_STAT_TRAPS_MOVED);
        }
    }
    if (res != MAP_FAILED) {
        /* Move the tracked mapping with the pages (same memory object, new address). */
        uint32_t n = LOAD_ACQ(&g_ncpu);
        for (uint32_t i = 0; i < n && i < MAX_CPUMAPS; i++) {
            struct cpumap *c = &g_cpu[i];
            if (LOAD_ACQ(&c->valid) && c->addr == (uintptr_t)old) {
                struct cpumap *d = APPEND(g_cpu, g_ncpu, MAX_CPUMAPS);
                STORE_REL(&c->valid, 0);
                if (d) { *d = *c; d->valid = 0; d->addr = (uintptr_t)res; d->len = new_len; STORE_REL(&d->valid, 1); }
            }
        }
    }
    if (r) {
        uint8_t *b = body(r);
        w64(r, TL_RECORD_HEADER__t_start, t0); w64(r, TL_RECORD_HEADER__t_end, now_ns());
        w64(b, TL_MREMAP__old_addr, (uint64_t)(uintptr_t)old); w64(b, TL_MREMAP__old_length, old_len);
        w64(b, TL_MREMAP__new_length, new_len); w32(b, TL_MREMAP__flags, (uint32_t)flags);
        w32(b, TL_MREMAP__err, res == MAP_FAILED ? (uint32_t)err : 0);
        w64(b, TL_MREMAP__new_addr, (uint64_t)(uintptr_t)res);
        rec_publish(r, TL_REC_MREMAP, TL_RF_COMPLETE);
    }
    errno = err;
    return res;
}

/* ---- wrappers: signals and exit (I8) ------------------------------------------------ */
EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
    if (!real_sigaction) resolve();
    if ((sig == SIGSEGV || sig == SIGTRAP) && LOAD_ACQ(&g_handlers_installed) && !vfork_child()) {
        /* Our handler stays; the program's becomes the one we chain to. */
        if (old) *old = g_prog_act[sig];
        if (act) g_prog_act[sig] = *act;
        return 0;
    }
    return real_sigaction(sig, act, old);
}

EXPORT sighandler_t signal(int sig, sighandler_t h) {
    struct sigaction sa, old; memset(&sa, 0, sizeof sa);
    sa.sa_handler = h; sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask); sigaddset(&sa.sa_mask, sig);
    if (sigaction(sig, &sa, &old) != 0) return SIG_ERR;
    return old.sa_handler;
}

EXPORT void exit(int status) {
    static void (*real_exit)(int);
    if (!real_exit) real_exit = dlsym(RTLD_NEXT, "exit");
    record_exit(status, 1);
    real_exit(status);
    __builtin_unreachable();
}

EXPORT void _exit(int status) {
    record_exit(status, 1);
    syscall(SYS_exit_group, status);
    __builtin_unreachable();
}

/* ---- CUDA driver API brackets ------------------------------------------------------- */
#include "cuapi.c"

/* ---- capture windows and the NVTX injection ----------------------------------------- */
#include "window.c"
