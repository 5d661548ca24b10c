/* trace-launch shim, part 2: brackets around CUDA driver API calls. Included by
 * tracelaunch.c (one translation unit, so the record helpers stay static).
 *
 * Invariants (in addition to I1..I8):
 *  I9  Every bracketed entry point is reached three ways, and each one gives the program
 *      exactly the function it would have had: (a) the exported symbol itself (programs
 *      linked with -lcuda), (b) dlsym() on libcuda (cuda-python, the runtime library),
 *      (c) cuGetProcAddress(_v2). dlsym answers NULL wherever it would have without the
 *      shim; dlsym(RTLD_NEXT, ...) is passed through by a jump, so glibc still sees the
 *      program's return address and resolves relative to the caller.
 *  I10 A wrapper forwards 12 integer-class argument words to the real function. Every
 *      bracketed function takes at most 12 integer or pointer arguments (SysV x86-64: six
 *      in registers, the rest in 8-byte stack slots), so forwarding is exact; the words
 *      past a function's own are never interpreted.
 *  I11 API wrappers run in ordinary context (the CUDA API is not async-signal-safe), so
 *      they may call the driver (cuFuncGetParamInfo) and dlopen(RTLD_NOLOAD). Only the
 *      outermost call on a thread is recorded (libcuda calling itself is not a new call).
 *      Program memory named by an argument is read with process_vm_readv only (I5).
 *  I17 A cached parameter layout belongs to the function a lookup handed out: every
 *      lookup that returns a handle (cuModuleGetFunction, cuLibraryGetKernel,
 *      cuKernelGetFunction) drops what was cached for that handle, because a module
 *      unloaded and another loaded can give a new function the old one's address (XLA's
 *      autotuning does: captures/jax-jit before this rule read a stale layout).
 *  I18 Every launched function has a name in the capture (issue 25). A CUfunction or
 *      CUkernel no bracketed lookup handed out (cuFFT, cuBLAS, cuDNN and NCCL static
 *      runtimes get theirs through the driver's export tables) is named by the driver the
 *      first time a launch or a graph node uses it: cuFuncGetName + cuFuncGetModule, or
 *      cuKernelGetName + cuKernelGetLibrary, resolved with cuda_sym and tolerated absent;
 *      that record carries a FUNCTION_NAME section. g_named (fixed size, keys published by
 *      compare-and-swap) holds the handles that need nothing more: those a lookup handed
 *      out and those already named. No unload is bracketed, so a handle an unbracketed path
 *      hands out again after an unload keeps its first name.
 *  I19 A graph is walked through the driver (cuGraphGetNodes, the per-type getters, child
 *      graphs, conditional bodies) by the call that hands it over, at entry, in ordinary
 *      context (I11): the walk may malloc. It reads only what the driver hands back (node
 *      lists, params, the driver-owned kernelParams) and reads it with safe_read, and it
 *      stops at fixed limits (TL_WALK_MAX_*), each named in a NOTE when reached. Conditional
 *      bodies learned at cuGraphAddNode exit go to an append-only table (as I6).
 */

typedef uint32_t (*api_fn)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t,
                           uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t);
struct api_slot { const char *name; uint16_t kind, nargs; api_fn real; api_fn wrap; uint32_t looked; };

#define MAX_KPARAMS 256        /* kernel parameters copied per launch */
#define MAX_FUNCS 4096         /* cached parameter layouts */
#define CACHED_PARAMS 32
#define MAX_LAUNCH_ATTRS 32
#define NAME_MAX_LEN 4096

static int g_api;                       /* bracket API calls (mode full, TRACE_LAUNCH_API != 0) */
static uint64_t g_image_max = 256ull << 20;
static TLS int t_api_depth;
static uint32_t g_api_call;

/* ---- the real dlsym, and the exported dlsym (I9) ----------------------------------- */
__attribute__((visibility("hidden"))) void *(*tl_real_dlsym)(void *, const char *);
__attribute__((visibility("hidden"))) void *tl_dlsym(void *handle, const char *name);
/* RTLD_NEXT (-1) jumps straight to glibc with the caller's return address untouched. */
__asm__(".text\n.globl dlsym\n.type dlsym,@function\ndlsym:\n"
        "  cmpq $-1, %rdi\n  jne tl_dlsym\n"
        "  movq tl_real_dlsym(%rip), %rax\n  testq %rax, %rax\n  jz tl_dlsym\n  jmp *%rax\n"
        ".size dlsym, .-dlsym\n");

static void resolve_dlsym(void) {
    if (tl_real_dlsym) return;
    void *p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (!p) p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    __atomic_store_n(&tl_real_dlsym, (void *(*)(void *, const char *))p, __ATOMIC_RELEASE);
}

/* libcuda as loaded by the program (never loaded by us). */
static void *libcuda(void) {
    static void *h;
    void *v = __atomic_load_n(&h, __ATOMIC_ACQUIRE);
    if (!v) {
        v = dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_LAZY);
        if (v) __atomic_store_n(&h, v, __ATOMIC_RELEASE);
    }
    return v;
}
static void *cuda_sym(const char *name) {
    void *h = libcuda();
    resolve_dlsym();
    return h && tl_real_dlsym ? tl_real_dlsym(h, name) : NULL;
}

/* ---- wrappers, one per slot ---------------------------------------------------------- */
static uint32_t api_call(int slot, const uint64_t *a);
#define API_WRAP(slot, name, kind, n)                                                     \
    static uint32_t w_##name(uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3,          \
                             uint64_t a4, uint64_t a5, uint64_t a6, uint64_t a7,          \
                             uint64_t a8, uint64_t a9, uint64_t a10, uint64_t a11) {      \
        uint64_t a[TL_API_MAX_ARGS] = { a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11 };\
        return api_call(slot, a);                                                         \
    }
TL_API_SLOTS(API_WRAP)
#define API_SLOT(slot, name, kind, n) [slot] = { #name, kind, n, NULL, w_##name, 0 },
static struct api_slot g_slots[TL_API_COUNT] = { TL_API_SLOTS(API_SLOT) };
/* (a): the exported names are the wrappers themselves. */
#define API_EXPORT(slot, name, kind, n) \
    extern __typeof(w_##name) name __attribute__((alias("w_" #name), visibility("default")));
TL_API_SLOTS(API_EXPORT)

static api_fn slot_real(struct api_slot *s) {
    api_fn r = LOAD_ACQ(&s->real);
    if (!r && !LOAD_ACQ(&s->looked)) {
        r = (api_fn)cuda_sym(s->name);
        if (r == s->wrap) r = NULL;
        if (r) STORE_REL(&s->real, r);
        if (libcuda()) STORE_REL(&s->looked, 1);
    }
    return r;
}

static struct api_slot *slot_by_name(const char *name) {
    for (int i = 0; i < TL_API_COUNT; i++)
        if (g_slots[i].name && !strcmp(g_slots[i].name, name)) return &g_slots[i];
    return NULL;
}

/* The wrapper to hand out for a real function pointer `p` (NULL: not one of ours). */
static void *wrap_for(void *p) {
    for (int i = 0; i < TL_API_COUNT; i++) {
        struct api_slot *s = &g_slots[i];
        if (s->name && (void *)slot_real(s) == p) return (void *)s->wrap;
    }
    return NULL;
}

/* ---- cuGetProcAddress (c) -------------------------------------------------------------- */
typedef uint32_t (*getproc_fn)(const char *, void **, int, uint64_t, void *);
static getproc_fn g_getproc_real[2];
static const char *const g_getproc_name[2] = { "cuGetProcAddress", "cuGetProcAddress_v2" };
static uint32_t getproc(int v, const char *sym, void **pfn, int ver, uint64_t flags, void *status);
EXPORT uint32_t cuGetProcAddress(const char *sym, void **pfn, int ver, uint64_t flags, void *st) {
    return getproc(0, sym, pfn, ver, flags, st);
}
EXPORT uint32_t cuGetProcAddress_v2(const char *sym, void **pfn, int ver, uint64_t flags, void *st) {
    return getproc(1, sym, pfn, ver, flags, st);
}
static void *getproc_wrap(int v) { return v ? (void *)cuGetProcAddress_v2 : (void *)cuGetProcAddress; }

static getproc_fn getproc_real(int v) {
    getproc_fn r = LOAD_ACQ(&g_getproc_real[v]);
    if (!r) {
        r = (getproc_fn)cuda_sym(g_getproc_name[v]);
        if ((void *)r == getproc_wrap(v)) r = NULL;
        if (r) STORE_REL(&g_getproc_real[v], r);
    }
    return r;
}

static int base_is_ours(const char *sym) {
    size_t n = s_len(sym);
    for (int i = 0; i < TL_API_COUNT; i++) {
        const char *s = g_slots[i].name;
        if (s && !strncmp(s, sym, n) && (s[n] == 0 || s[n] == '_')) return 1;
    }
    return 0;
}

/* A NOTE record: "cuGetProcAddress SYMBOL (cudaVersion V, flags F): not bracketed". */
static void note_unwrapped(const char *sym, int ver, uint64_t flags) {
    char text[200];
    size_t n = 0;
    const char *parts[3] = { "cuGetProcAddress ", sym, " answered a function the shim does not bracket (cudaVersion " };
    for (int i = 0; i < 3; i++) for (const char *q = parts[i]; *q && n < 150; q++) text[n++] = *q;
    char num[24]; int k = 0; unsigned v = (unsigned)ver;
    do { num[k++] = (char)('0' + v % 10); v /= 10; } while (v && k < 20);
    while (k) text[n++] = num[--k];
    const char *mid = ", flags ";
    for (const char *q = mid; *q; q++) text[n++] = *q;
    text[n++] = (char)('0' + (flags & 7));
    text[n++] = ')';
    note_text(text, n);
}

static uint32_t getproc(int v, const char *sym, void **pfn, int ver, uint64_t flags, void *status) {
    getproc_fn real = getproc_real(v);
    if (!real) return TL_CUDA_ERROR_NOT_INITIALIZED;
    uint32_t r = real(sym, pfn, ver, flags, status);
    if (r != 0 || !g_api || !pfn || !sym) return r;
    int e = errno;
    void *p = *pfn, *w = NULL;
    if (p && !strncmp(sym, "cuGetProcAddress", 16)) {
        for (int i = 0; i < 2; i++) if (p == (void *)getproc_real(i)) w = getproc_wrap(i);
    } else if (p) {
        w = wrap_for(p);
        if (!w && base_is_ours(sym)) {       /* a variant we do not know: say which */
            STAT(TL_STAT_API_UNWRAPPED);
            note_unwrapped(sym, ver, flags);
        }
    }
    if (w) *pfn = w;
    errno = e;
    return r;
}

/* (b): dlsym hands out the wrapper for a bracketed name, and NULL where it would have. */
void *tl_dlsym(void *handle, const char *name) {
    resolve_dlsym();
    if (!tl_real_dlsym) return NULL;
    void *r = tl_real_dlsym(handle, name);
    if (!r || !name || name[0] != 'c' || name[1] != 'u') return r;
    for (int v = 0; v < 2; v++) {
        if (strcmp(name, g_getproc_name[v])) continue;
        /* Our export was found first: answer as if the shim were not there. */
        if (r == getproc_wrap(v) && !(r = tl_real_dlsym(RTLD_NEXT, name))) return NULL;
        if (!g_api) return r;
        if (!LOAD_ACQ(&g_getproc_real[v])) STORE_REL(&g_getproc_real[v], (getproc_fn)r);
        return (void *)g_getproc_real[v] == r ? getproc_wrap(v) : r;
    }
    struct api_slot *s = slot_by_name(name);
    if (!s) return r;
    if (r == (void *)s->wrap && !(r = tl_real_dlsym(RTLD_NEXT, name))) return NULL;
    if (!g_api) return r;
    if (!LOAD_ACQ(&s->real)) STORE_REL(&s->real, (api_fn)r);
    return (void *)s->real == r ? (void *)s->wrap : r;
}

/* ---- what a call's pointers point to: sections ---------------------------------------- */
struct sec {
    uint32_t tag, size, flags, full;
    const void *local;                  /* bytes already here, or */
    uintptr_t remote;                   /* program memory to read (I5), or */
    const uint32_t *kp_off, *kp_size;   /* kernel parameters: kp_ptr[i] -> data + kp_off[i] */
    const uint64_t *kp_ptr; uint32_t kp_n;
    const uint64_t *win_ptr; uint32_t win_n;   /* or: TL_PARAM_WINDOW_BYTES behind each pointer */
};

static size_t sec_len(const struct sec *s) { return TL_API_SECTION__FIXED + pad8(s->size); }

/* The section's data at d (its `size` bytes), read from wherever it points. */
static void sec_data(uint8_t *d, struct sec *s) {
    if (s->local) put_bytes(d, s->local, s->size);
    else if (s->remote) { if (!safe_read(d, s->remote, s->size)) s->flags |= TL_API_SF_UNREADABLE; }
    else if (s->kp_n) {
        struct iovec l[MAX_KPARAMS], r[MAX_KPARAMS];
        size_t want = 0;
        for (uint32_t i = 0; i < s->kp_n; i++) {
            l[i].iov_base = d + s->kp_off[i]; l[i].iov_len = s->kp_size[i];
            r[i].iov_base = (void *)s->kp_ptr[i]; r[i].iov_len = s->kp_size[i];
            want += s->kp_size[i];
        }
        /* One syscall for all arguments: a bad pointer gives a short count, never a fault. */
        if (syscall(SYS_process_vm_readv, getpid_(), l, s->kp_n, r, s->kp_n, 0) != (long)want)
            s->flags |= TL_API_SF_UNREADABLE;
    } else if (s->win_n) {
        /* sizes unknown: each window is read alone, cut at its page end if the next page
         * is not readable; what cannot be read stays zero */
        for (uint32_t i = 0; i < s->win_n; i++) {
            uintptr_t p = s->win_ptr[i];
            uint8_t *dst = d + (size_t)i * TL_PARAM_WINDOW_BYTES;
            size_t to_page = PAGE - (p & (PAGE - 1));
            if (p && !safe_read(dst, p, TL_PARAM_WINDOW_BYTES) && to_page < TL_PARAM_WINDOW_BYTES)
                safe_read(dst, p, to_page);
        }
    }
}

static void sec_fill(uint8_t *p, struct sec *s) {
    sec_data(p + TL_API_SECTION__data, s);
    w32(p, TL_API_SECTION__tag, s->tag); w32(p, TL_API_SECTION__size, s->size);
    w32(p, TL_API_SECTION__flags, s->flags); w32(p, TL_API_SECTION__full_size, s->full);
}

/* A NUL-terminated string in program memory: its length, read in small steps (I5). */
static uint32_t remote_strlen(uintptr_t p, uint32_t cap) {
    char buf[256];
    uint32_t n = 0;
    while (n < cap) {
        size_t step = 256 - ((p + n) & 255);       /* never cross into an unread page early */
        if (!safe_read(buf, p + n, step)) return n;
        for (size_t i = 0; i < step; i++) if (!buf[i]) return n + (uint32_t)i;
        n += (uint32_t)step;
    }
    return cap;
}

/* Size of a module image in program memory: fatbin, fatbin wrapper, ELF or PTX text. */
static uint64_t image_size(uintptr_t *p) {
    uint8_t h[Elf64_Ehdr__SIZE];
    for (int hop = 0; hop < 2; hop++) {
        if (!safe_read(h, *p, sizeof h)) return remote_strlen(*p, 1u << 30);
        uint32_t magic = r32(h, 0);
        if (magic == TL_FATBIN_WRAPPER_MAGIC) { *p = r64(h, FATBIN_WRAPPER__data); continue; }
        if (magic == TL_FATBIN_MAGIC) {
            uint16_t hs; memcpy(&hs, h + FATBIN_HEADER__header_size, 2);
            return hs + r64(h, FATBIN_HEADER__fat_size);
        }
        if (!memcmp(h, "\177ELF", 4)) {
            uint16_t phn, phs, shn, shs;
            memcpy(&phn, h + Elf64_Ehdr__e_phnum, 2); memcpy(&phs, h + Elf64_Ehdr__e_phentsize, 2);
            memcpy(&shn, h + Elf64_Ehdr__e_shnum, 2); memcpy(&shs, h + Elf64_Ehdr__e_shentsize, 2);
            uint64_t a = r64(h, Elf64_Ehdr__e_phoff) + (uint64_t)phn * phs;
            uint64_t b = r64(h, Elf64_Ehdr__e_shoff) + (uint64_t)shn * shs;
            return a > b ? a : b;
        }
        return remote_strlen(*p, 1u << 30);
    }
    return 0;
}

static void sec_remote(struct sec *s, uint32_t tag, uintptr_t p, uint64_t n, uint64_t cap) {
    *s = (struct sec){ .tag = tag, .remote = p, .size = (uint32_t)(n > cap ? cap : n),
                       .full = n > 0xffffffffu ? 0xffffffffu : (uint32_t)n };
    if (s->size < n) s->flags |= TL_API_SF_TRUNCATED;
}

/* ---- kernel parameter layouts (cuFuncGetParamInfo, cached per handle) ----------------- */
typedef uint32_t (*paraminfo_fn)(uint64_t, size_t, size_t *, size_t *);
struct fnlayout { uint64_t key; uint32_t ready, n, flags; uint32_t off[CACHED_PARAMS], size[CACHED_PARAMS]; };
static struct fnlayout g_fn[MAX_FUNCS];

static uint32_t query_layout(uint64_t f, uint32_t *off, uint32_t *size, uint32_t *flags) {
    static paraminfo_fn func_info, kernel_info;
    if (!func_info) func_info = (paraminfo_fn)cuda_sym("cuFuncGetParamInfo");
    if (!kernel_info) kernel_info = (paraminfo_fn)cuda_sym("cuKernelGetParamInfo");
    paraminfo_fn q = func_info;
    size_t o, s;
    uint32_t r = q ? q(f, 0, &o, &s) : TL_CUDA_ERROR_NOT_INITIALIZED;
    if (r != 0 && r != TL_CUDA_ERROR_INVALID_VALUE) {
        /* Not a CUfunction: the runtime launches CUkernel handles. */
        r = kernel_info ? kernel_info(f, 0, &o, &s) : TL_CUDA_ERROR_NOT_INITIALIZED;
        q = kernel_info; *flags |= TL_API_SF_LAYOUT_FROM_KERNEL;
    }
    if (r == TL_CUDA_ERROR_INVALID_VALUE) return 0;          /* no parameters */
    if (r != 0) { *flags |= TL_API_SF_LAYOUT_UNKNOWN; return 0; }
    uint32_t n = 0;
    while (r == 0 && n < MAX_KPARAMS) {
        off[n] = (uint32_t)o; size[n] = (uint32_t)s; n++;
        r = q(f, n, &o, &s);
    }
    return n;
}

#define FN_FREE 1u   /* an evicted entry (I17): handles are aligned, never 1 */

static uint32_t param_layout(uint64_t f, uint32_t *off, uint32_t *size, uint32_t *flags) {
    uint32_t h = (uint32_t)((f >> 4) * 0x9E3779B1u) % MAX_FUNCS;
    for (uint32_t probe = 0; probe < 8; probe++) {
        struct fnlayout *e = &g_fn[(h + probe) % MAX_FUNCS];
        uint64_t k = LOAD_ACQ(&e->key);
        if (k == f && LOAD_ACQ(&e->ready)) {
            uint32_t fl = e->flags, n = e->n;
            memcpy(off, e->off, n * 4); memcpy(size, e->size, n * 4);
            /* evicted and refilled while copying: ask the driver instead */
            if (LOAD_ACQ(&e->key) != f || !LOAD_ACQ(&e->ready)) break;
            *flags |= fl;
            return n;
        }
        if (k == 0 || k == FN_FREE) {
            uint64_t was = k;
            uint32_t n = query_layout(f, off, size, flags);
            if (n <= CACHED_PARAMS && !(*flags & TL_API_SF_LAYOUT_UNKNOWN) &&
                __atomic_compare_exchange_n(&e->key, &was, f, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
                e->n = n; e->flags = *flags;
                memcpy(e->off, off, n * 4); memcpy(e->size, size, n * 4);
                STORE_REL(&e->ready, 1);
            }
            return n;
        }
    }
    return query_layout(f, off, size, flags);
}

/* I17: a lookup handed out handle f: forget the layout cached for that address. */
static void layout_forget(uint64_t f) {
    uint32_t h = (uint32_t)((f >> 4) * 0x9E3779B1u) % MAX_FUNCS;
    for (uint32_t probe = 0; probe < 8; probe++) {
        struct fnlayout *e = &g_fn[(h + probe) % MAX_FUNCS];
        uint64_t k = f;
        if (LOAD_ACQ(&e->key) != f) continue;
        STORE_REL(&e->ready, 0);
        __atomic_compare_exchange_n(&e->key, &k, (uint64_t)FN_FREE, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    }
}

/* ---- the bracket ----------------------------------------------------------------------- */
/* A call's fate in a capture window (shim/window.c, I19), decided at its entry. */
struct win_call { int sub_before, opens; uint32_t role, n; };
static int win_enter(int slot, const uint64_t *a, struct win_call *w);
static uint32_t win_skip(api_fn real, const uint64_t *a, struct win_call *w);
static void win_open_at(struct win_call *w, int slot, uint32_t call);
static void win_exit(int slot, const uint64_t *a, uint32_t r, uint32_t call, struct win_call *w);

static void api_record(uint16_t type, int slot, uint32_t call, const uint64_t *a, uint32_t result,
                       struct sec *secs, uint32_t nsec, uint64_t t0) {
    struct api_slot *s = &g_slots[slot];
    size_t len = TL_RECORD_HEADER__SIZE + TL_API__FIXED + 8u * s->nargs;
    for (uint32_t i = 0; i < nsec; i++) len += sec_len(&secs[i]);
    uint8_t *r = rec_begin(len);
    if (!r) return;
    uint8_t *b = body(r);
    w64(r, TL_RECORD_HEADER__t_start, t0); w64(r, TL_RECORD_HEADER__t_end, now_ns());
    w32(b, TL_API__slot, (uint32_t)slot); w32(b, TL_API__call, call); w32(b, TL_API__result, result);
    w16(b, TL_API__nargs, s->nargs); w16(b, TL_API__nsections, (uint16_t)nsec);
    for (uint32_t i = 0; i < s->nargs; i++) w64(b, TL_API__args + 8 * i, a[i]);
    uint8_t *p = b + TL_API__args + 8u * s->nargs;
    for (uint32_t i = 0; i < nsec; i++) { sec_fill(p, &secs[i]); p += sec_len(&secs[i]); }
    rec_publish(r, type, type == TL_REC_API_EXIT ? TL_RF_COMPLETE : 0);
}

/* Kernel arguments: the layout, then the bytes each kernelParams[i] points to. */
static uint32_t launch_sections(uint64_t f, uint64_t params, uint64_t extra, struct sec *secs,
                                uint32_t *off, uint32_t *size, uint64_t *ptr, uint32_t *lay) {
    uint32_t nsec = 0, flags = 0;
    uint32_t n = param_layout(f, off, size, &flags);
    if (flags & TL_API_SF_LAYOUT_UNKNOWN) STAT(TL_STAT_API_LAYOUT_UNKNOWN);
    for (uint32_t i = 0; i < n; i++) { lay[2 * i] = off[i]; lay[2 * i + 1] = size[i]; }
    secs[nsec++] = (struct sec){ .tag = TL_API_SEC_PARAM_LAYOUT, .size = 8 * n, .flags = flags, .full = n, .local = lay };
    if (params && n) {
        uint32_t total = 0;
        for (uint32_t i = 0; i < n; i++) if (off[i] + size[i] > total) total = off[i] + size[i];
        struct sec *d = &secs[nsec++];
        *d = (struct sec){ .tag = TL_API_SEC_PARAM_DATA, .size = total, .full = total };
        if (safe_read(ptr, params, 8u * n)) { d->kp_off = off; d->kp_size = size; d->kp_ptr = ptr; d->kp_n = n; }
        else d->flags = TL_API_SF_UNREADABLE;
        if (!d->kp_n) d->local = NULL, d->remote = 0;
    } else if (params && (flags & TL_API_SF_LAYOUT_UNKNOWN)) {
        /* No layout from the driver: keep the first pointers (as many as can be read) and
         * a window behind each; the decoder applies the cubin's layout. */
        uint32_t k = TL_PARAM_WINDOWS_MAX;
        while (k && !safe_read(ptr, params, 8u * k)) k /= 2;
        if (k) {
            secs[nsec++] = (struct sec){ .tag = TL_API_SEC_PARAM_POINTERS, .size = 8 * k, .full = k, .local = ptr };
            secs[nsec++] = (struct sec){ .tag = TL_API_SEC_PARAM_WINDOWS, .size = k * TL_PARAM_WINDOW_BYTES,
                                         .full = k, .win_ptr = ptr, .win_n = k };
        }
    } else if (extra) {
        /* extra = { BUFFER_POINTER, p, BUFFER_SIZE, &size, END } in any order. */
        uint64_t kv[16], bp = 0, bs = 0;
        if (safe_read(kv, extra, sizeof kv) || safe_read(kv, extra, 8 * 6)) {
            for (int i = 0; i + 1 < 16 && kv[i] != TL_CU_LAUNCH_PARAM_END; i += 2) {
                if (kv[i] == TL_CU_LAUNCH_PARAM_BUFFER_POINTER) bp = kv[i + 1];
                if (kv[i] == TL_CU_LAUNCH_PARAM_BUFFER_SIZE && !safe_read(&bs, kv[i + 1], 8)) bs = 0;
            }
        }
        if (bp && bs) sec_remote(&secs[nsec++], TL_API_SEC_EXTRA_BUFFER, bp, bs, MAX_BUF);
    }
    return nsec;
}

/* ==== issue 25: names from handles (I18) and graph walks (I19) ========================= */
/* The driver calls these use, each resolved once on libcuda with cuda_sym (never loaded
 * by us); any of them may be absent (an older driver) and is then not called. */
typedef uint32_t (*getname_fn)(const char **, uint64_t);          /* cuFuncGetName, cuKernelGetName */
typedef uint32_t (*getparent_fn)(uint64_t *, uint64_t);           /* cuFuncGetModule, cuKernelGetLibrary */
typedef uint32_t (*getnodes_fn)(uint64_t, uint64_t *, size_t *);  /* cuGraphGetNodes */
typedef uint32_t (*nodetype_fn)(uint64_t, uint32_t *);            /* cuGraphNodeGetType */
typedef uint32_t (*nodeget_fn)(uint64_t, void *);                 /* the per-type getters */
static struct {
    getname_fn func_name, kernel_name; getparent_fn func_module, kernel_library;
    getnodes_fn get_nodes; nodetype_fn node_type;
    nodeget_fn kernel_v2, kernel_v1, memset, memcpy, child, event_record, event_wait, node_params;
    uint32_t looked;
} g_drv;

static void drv_resolve(void) {
    if (LOAD_ACQ(&g_drv.looked) || !libcuda()) return;
    g_drv.func_name = (getname_fn)cuda_sym("cuFuncGetName");               /* CUDA 12.3 */
    g_drv.kernel_name = (getname_fn)cuda_sym("cuKernelGetName");           /* 12.3 */
    g_drv.func_module = (getparent_fn)cuda_sym("cuFuncGetModule");         /* 11.0 */
    g_drv.kernel_library = (getparent_fn)cuda_sym("cuKernelGetLibrary");   /* 12.x, not in 12.0 */
    g_drv.get_nodes = (getnodes_fn)cuda_sym("cuGraphGetNodes");
    g_drv.node_type = (nodetype_fn)cuda_sym("cuGraphNodeGetType");
    /* the _v2 getter fills CUDA_KERNEL_NODE_PARAMS_v2 (72 bytes); the unsuffixed one is
     * the CUDA 11 ABI (56) */
    g_drv.kernel_v2 = (nodeget_fn)cuda_sym("cuGraphKernelNodeGetParams_v2");
    g_drv.kernel_v1 = (nodeget_fn)cuda_sym("cuGraphKernelNodeGetParams");
    g_drv.memset = (nodeget_fn)cuda_sym("cuGraphMemsetNodeGetParams");
    g_drv.memcpy = (nodeget_fn)cuda_sym("cuGraphMemcpyNodeGetParams");
    g_drv.child = (nodeget_fn)cuda_sym("cuGraphChildGraphNodeGetGraph");
    g_drv.event_record = (nodeget_fn)cuda_sym("cuGraphEventRecordNodeGetEvent");
    g_drv.event_wait = (nodeget_fn)cuda_sym("cuGraphEventWaitNodeGetEvent");
    g_drv.node_params = (nodeget_fn)cuda_sym("cuGraphNodeGetParams");      /* newer than 13.0 */
    STORE_REL(&g_drv.looked, 1);
}

/* A NOTE of up to three strings and a number (hex when `hex`). */
static void note_parts(const char *a, const char *b, const char *c, uint64_t num, int hex) {
    char text[256];
    size_t n = 0;
    const char *parts[3] = { a, b, c };
    for (int i = 0; i < 3; i++) for (const char *q = parts[i]; q && *q && n < 200; q++) text[n++] = *q;
    char digits[24]; int k = 0;
    do { digits[k++] = "0123456789abcdef"[num % (hex ? 16 : 10)]; num /= hex ? 16 : 10; } while (num && k < 20);
    if (hex) { text[n++] = '0'; text[n++] = 'x'; }
    while (k) text[n++] = digits[--k];
    note_text(text, n);
}

/* ---- names (I18) ---------------------------------------------------------------------- */
#define MAX_NAMED 16384
static uint64_t g_named[MAX_NAMED];    /* handles that need no name query; 0: free */
static uint32_t g_named_full;

/* 1: nobody has named `h` and this caller now must; 0: known already (or no room). A
 * bracketed lookup calls it for the handle it handed out and ignores the answer. */
static int named_claim(uint64_t h) {
    if (!h) return 0;
    uint32_t i = (uint32_t)((h >> 4) * 0x9E3779B1u) % MAX_NAMED;
    for (uint32_t probe = 0; probe < 16; probe++) {
        uint64_t *e = &g_named[(i + probe) % MAX_NAMED];
        uint64_t k = LOAD_ACQ(e);
        if (k == h) return 0;
        if (k == 0) {
            if (__atomic_compare_exchange_n(e, &k, h, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return 1;
            if (k == h) return 0;
        }
    }
    if (!__atomic_exchange_n(&g_named_full, 1, __ATOMIC_ACQ_REL))
        note_parts("function name table full (", "MAX_NAMED", "): later handles no lookup handed out are not named; at ", h, 1);
    return 0;
}

#define NAME_SEC_MAX (TL_FUNCTION_NAME__FIXED + NAME_MAX_LEN)
#define NODE_UNION (CUgraphNodeParams__reserved2 - CUgraphNodeParams__union)   /* 232 bytes */

/* A FUNCTION_NAME section for handle f in buf (NAME_SEC_MAX bytes). `kernel_first`: the
 * layout query found a CUkernel, so the kernel calls are asked first. 0 (no section) when
 * the driver exports none of the four calls. */
static int name_section(uint64_t f, int kernel_first, uint8_t *buf, struct sec *s) {
    drv_resolve();
    if (!g_drv.func_name && !g_drv.kernel_name && !g_drv.func_module && !g_drv.kernel_library)
        return 0;
    const char *name = NULL;
    uint64_t parent = 0;
    uint32_t flags = TL_FN_NO_NAME, n = 0;
    for (int pass = 0; pass < 2 && (flags & TL_FN_NO_NAME); pass++) {
        int kern = pass == 0 ? kernel_first : !kernel_first;
        getname_fn g = kern ? g_drv.kernel_name : g_drv.func_name;
        name = NULL;
        if (g && g(&name, f) == 0 && name) flags = kern ? TL_FN_KERNEL : 0;
    }
    getparent_fn p = (flags & TL_FN_KERNEL) ? g_drv.kernel_library : g_drv.func_module;
    if ((flags & TL_FN_NO_NAME) && !(p && p(&parent, f) == 0)) {
        /* no name: its module may still be known (cuFuncGetModule is older) */
        p = g_drv.kernel_library;
        if (p && p(&parent, f) == 0) flags |= TL_FN_KERNEL;
        else parent = 0, p = NULL;
    } else if (!(flags & TL_FN_NO_NAME) && !(p && p(&parent, f) == 0)) parent = 0, p = NULL;
    if (!p) flags |= TL_FN_NO_PARENT;
    if (name) {
        n = remote_strlen((uintptr_t)name, NAME_MAX_LEN);
        if (n == NAME_MAX_LEN) flags |= TL_FN_NAME_TRUNCATED;
        if (!safe_read(buf + TL_FUNCTION_NAME__name, (uintptr_t)name, n)) n = 0, flags |= TL_FN_NO_NAME;
    }
    w64(buf, TL_FUNCTION_NAME__handle, f); w64(buf, TL_FUNCTION_NAME__parent, parent);
    w32(buf, TL_FUNCTION_NAME__flags, flags); w32(buf, TL_FUNCTION_NAME__name_len, n);
    *s = (struct sec){ .tag = TL_API_SEC_FUNCTION_NAME, .size = TL_FUNCTION_NAME__FIXED + n,
                       .full = TL_FUNCTION_NAME__FIXED + n, .local = buf };
    return 1;
}

/* The kernel-first hint from the layout section launch_sections put first. */
static int layout_says_kernel(const struct sec *first) {
    return first->tag == TL_API_SEC_PARAM_LAYOUT && (first->flags & TL_API_SF_LAYOUT_FROM_KERNEL);
}

/* ---- conditional bodies learned at cuGraphAddNode exit (I19) --------------------------- */
#define MAX_CONDS 1024
struct cond { uint32_t valid, n; uint64_t node; uint8_t params[CUDA_CONDITIONAL_NODE_PARAMS__SIZE];
              uint64_t bodies[TL_WALK_MAX_BODIES]; };
static struct cond g_cond[MAX_CONDS];
static uint32_t g_ncond;

/* CUDA_CONDITIONAL_NODE_PARAMS at c (phGraph_out filled): its body graphs into out (at
 * most TL_WALK_MAX_BODIES); *flags gets BODIES_CUT / BODIES_UNKNOWN. */
static uint32_t cond_bodies(const uint8_t *c, uint64_t *out, uint32_t *flags) {
    uint32_t size = r32(c, CUDA_CONDITIONAL_NODE_PARAMS__size), k = size;
    uint64_t arr = r64(c, CUDA_CONDITIONAL_NODE_PARAMS__phGraph_out);
    if (k > TL_WALK_MAX_BODIES) k = TL_WALK_MAX_BODIES, *flags |= TL_GN_BODIES_CUT;
    if (k && (!arr || !safe_read(out, arr, 8u * k))) { *flags |= TL_GN_BODIES_UNKNOWN; return 0; }
    return k;
}

static void cond_remember(uint64_t node, const uint8_t *c, const uint64_t *bodies, uint32_t n) {
    uint32_t i = ADD(&g_ncond, 1);
    if (i >= MAX_CONDS || !node) return;
    struct cond *e = &g_cond[i];
    e->node = node; e->n = n;
    memcpy(e->params, c, CUDA_CONDITIONAL_NODE_PARAMS__SIZE);
    memcpy(e->bodies, bodies, 8u * n);
    STORE_REL(&e->valid, 1);
}

static const struct cond *cond_find(uint64_t node) {
    uint32_t n = LOAD_ACQ(&g_ncond);
    if (n > MAX_CONDS) n = MAX_CONDS;
    while (n--)     /* latest first: a destroyed node's handle may come back */
        if (LOAD_ACQ(&g_cond[n].valid) && g_cond[n].node == node) return &g_cond[n];
    return NULL;
}

/* ---- a graph walk (I19) ----------------------------------------------------------------- */
/* a node's params as kept: the largest getter's struct (CUDA_MEMCPY3D) or a conditional's
 * params and bodies, whichever is more */
#define WALK_PARAMS_MAX 256
_Static_assert(CUDA_MEMCPY3D__SIZE <= WALK_PARAMS_MAX &&
               CUDA_CONDITIONAL_NODE_PARAMS__SIZE + 8 * TL_WALK_MAX_BODIES <= WALK_PARAMS_MAX,
               "a node's params fit WALK_PARAMS_MAX");
struct walk {
    struct sec *secs; uint32_t nsec, cap;       /* the record's sections, GRAPH_WALK first */
    void **blobs; uint32_t nblobs, blobcap;     /* malloc'd data the sections point to */
    uint32_t nodes, kernels, flags, failed;     /* failed: out of memory, nothing recorded */
    uint8_t head[TL_GRAPH_WALK__SIZE];
    uint32_t *off, *size, *lay; uint64_t *ptr;  /* launch_sections' scratch */
};

static void *walk_blob(struct walk *w, size_t n) {
    if (w->failed) return NULL;
    if (w->nblobs == w->blobcap) {
        uint32_t cap = w->blobcap ? 2 * w->blobcap : 256;
        void **b = realloc(w->blobs, cap * sizeof *b);
        if (!b) { w->failed = 1; return NULL; }
        w->blobs = b; w->blobcap = cap;
    }
    void *p = malloc(n ? n : 1);
    if (!p) { w->failed = 1; return NULL; }
    return w->blobs[w->nblobs++] = p;
}

static struct sec *walk_sec(struct walk *w) {
    if (w->failed) return NULL;
    if (w->nsec == w->cap) {
        uint32_t cap = w->cap ? 2 * w->cap : 64;
        struct sec *s = realloc(w->secs, cap * sizeof *s);
        if (!s) { w->failed = 1; return NULL; }
        w->secs = s; w->cap = cap;
    }
    return &w->secs[w->nsec++];
}

/* A section whose data is read now into a blob of the walk (the driver may reuse the
 * memory it points to once the next node is asked for). */
static void walk_own(struct walk *w, const struct sec *s) {
    struct sec *d = walk_sec(w);
    uint8_t *blob = d ? walk_blob(w, s->size) : NULL;
    if (!blob) return;
    struct sec t = *s;
    sec_data(blob, &t);
    *d = (struct sec){ .tag = t.tag, .size = t.size, .flags = t.flags, .full = t.full, .local = blob };
}

static void walk_graph(struct walk *w, uint64_t graph, uint64_t parent, uint32_t depth, uint32_t body);

/* One node: its GRAPH_NODE section, a kernel's argument sections and name, then what it
 * holds (a child graph, a conditional's bodies). */
static void walk_node(struct walk *w, uint64_t graph, uint64_t node, uint64_t parent,
                      uint32_t depth, uint32_t body) {
    uint32_t type = ~0u, flags = 0, psize = 0;
    uint8_t *h = walk_blob(w, TL_GRAPH_NODE__FIXED + WALK_PARAMS_MAX);
    if (!h) return;
    uint8_t *prm = h + TL_GRAPH_NODE__params;
    uint64_t kp[(CUDA_KERNEL_NODE_PARAMS_v2__SIZE + 63) / 8] = { 0 };   /* room past v2 */
    uint64_t bodies[TL_WALK_MAX_BODIES], child = 0;
    uint32_t nbodies = 0;
    nodeget_fn g = NULL;
    if (g_drv.node_type(node, &type) != 0) { w->flags |= TL_GW_FAILED; type = ~0u; }
    memset(prm, 0, WALK_PARAMS_MAX);
    switch (type) {
    case TL_CU_GRAPH_NODE_TYPE_KERNEL:
        if (g_drv.kernel_v2 && g_drv.kernel_v2(node, kp) == 0) psize = CUDA_KERNEL_NODE_PARAMS_v2__SIZE;
        else if (g_drv.kernel_v1 && g_drv.kernel_v1(node, kp) == 0) psize = CUDA_KERNEL_NODE_PARAMS__SIZE;
        else flags |= TL_GN_PARAMS_UNREADABLE;
        memcpy(prm, kp, psize);
        break;
    case TL_CU_GRAPH_NODE_TYPE_MEMSET: g = g_drv.memset; psize = CUDA_MEMSET_NODE_PARAMS__SIZE; break;
    case TL_CU_GRAPH_NODE_TYPE_MEMCPY: g = g_drv.memcpy; psize = CUDA_MEMCPY3D__SIZE; break;
    case TL_CU_GRAPH_NODE_TYPE_GRAPH: g = g_drv.child; psize = 8; break;
    case TL_CU_GRAPH_NODE_TYPE_EVENT_RECORD: g = g_drv.event_record; psize = 8; break;
    case TL_CU_GRAPH_NODE_TYPE_WAIT_EVENT: g = g_drv.event_wait; psize = 8; break;
    case TL_CU_GRAPH_NODE_TYPE_CONDITIONAL: {
        uint8_t gp[CUgraphNodeParams__SIZE + 64];
        const struct cond *c;
        memset(gp, 0, sizeof gp);
        if (g_drv.node_params && g_drv.node_params(node, gp) == 0 &&
            r32(gp, CUgraphNodeParams__type) == TL_CU_GRAPH_NODE_TYPE_CONDITIONAL) {
            memcpy(prm, gp + CUgraphNodeParams__union, CUDA_CONDITIONAL_NODE_PARAMS__SIZE);
            nbodies = cond_bodies(prm, bodies, &flags);
        } else if ((c = cond_find(node))) {
            memcpy(prm, c->params, CUDA_CONDITIONAL_NODE_PARAMS__SIZE);
            nbodies = c->n;
            memcpy(bodies, c->bodies, 8u * nbodies);
            if (r32(prm, CUDA_CONDITIONAL_NODE_PARAMS__size) > nbodies) flags |= TL_GN_BODIES_CUT;
        } else flags |= TL_GN_BODIES_UNKNOWN | TL_GN_PARAMS_UNREADABLE;
        if (flags & TL_GN_BODIES_UNKNOWN) w->flags |= TL_GW_BODIES_UNKNOWN;
        if (!(flags & TL_GN_PARAMS_UNREADABLE)) {
            psize = CUDA_CONDITIONAL_NODE_PARAMS__SIZE + 8 * nbodies;
            memcpy(prm + CUDA_CONDITIONAL_NODE_PARAMS__SIZE, bodies, 8u * nbodies);
        }
        break;
    }
    }
    if (g) {
        uint8_t buf[CUDA_MEMCPY3D__SIZE + 64];
        memset(buf, 0, sizeof buf);
        if (g(node, buf) == 0) memcpy(prm, buf, psize);
        else psize = 0, flags |= TL_GN_PARAMS_UNREADABLE;
        if (type == TL_CU_GRAPH_NODE_TYPE_GRAPH && psize) child = r64(prm, 0);
    }
    w64(h, TL_GRAPH_NODE__graph, graph); w64(h, TL_GRAPH_NODE__node, node);
    w64(h, TL_GRAPH_NODE__parent, parent); w32(h, TL_GRAPH_NODE__type, type);
    w16(h, TL_GRAPH_NODE__depth, (uint16_t)depth); w16(h, TL_GRAPH_NODE__body, (uint16_t)body);
    w32(h, TL_GRAPH_NODE__flags, flags); w32(h, TL_GRAPH_NODE__params_size, psize);
    struct sec *s = walk_sec(w);
    if (!s) return;
    *s = (struct sec){ .tag = TL_API_SEC_GRAPH_NODE, .size = TL_GRAPH_NODE__FIXED + psize,
                       .full = TL_GRAPH_NODE__FIXED + psize, .local = h };
    w->nodes++;
    if (type == TL_CU_GRAPH_NODE_TYPE_KERNEL && psize) {
        const uint8_t *k = (const uint8_t *)kp;
        uint64_t f = r64(k, CUDA_KERNEL_NODE_PARAMS__func);
        if (!f && psize >= CUDA_KERNEL_NODE_PARAMS_v2__SIZE) f = r64(k, CUDA_KERNEL_NODE_PARAMS_v2__kern);
        struct sec tmp[4];
        uint32_t n = launch_sections(f, r64(k, CUDA_KERNEL_NODE_PARAMS__kernelParams),
                                     r64(k, CUDA_KERNEL_NODE_PARAMS__extra), tmp, w->off, w->size,
                                     w->ptr, w->lay);
        for (uint32_t i = 0; i < n; i++) walk_own(w, &tmp[i]);
        if (named_claim(f)) {
            uint8_t *nb = walk_blob(w, NAME_SEC_MAX);
            struct sec *ns = nb ? walk_sec(w) : NULL;
            if (ns && !name_section(f, n && layout_says_kernel(&tmp[0]), nb, ns)) w->nsec--;
        }
        w->kernels++;
    }
    if (child) walk_graph(w, child, node, depth + 1, 0);
    for (uint32_t b = 0; b < nbodies; b++) if (bodies[b]) walk_graph(w, bodies[b], node, depth + 1, b);
}

static void walk_graph(struct walk *w, uint64_t graph, uint64_t parent, uint32_t depth, uint32_t body) {
    if (depth > TL_WALK_MAX_DEPTH) { w->flags |= TL_GW_DEPTH_LIMIT; return; }
    size_t count = 0;
    if (!graph || g_drv.get_nodes(graph, NULL, &count) != 0) { w->flags |= TL_GW_FAILED; return; }
    if (!count) return;
    uint64_t *nodes = malloc(count * 8);
    if (!nodes) { w->failed = 1; return; }
    size_t got = count;
    if (g_drv.get_nodes(graph, nodes, &got) != 0) { w->flags |= TL_GW_FAILED; got = 0; }
    if (got > count) got = count;
    for (size_t i = 0; i < got && !w->failed; i++) {
        if (w->nodes >= TL_WALK_MAX_NODES) { w->flags |= TL_GW_NODE_LIMIT; break; }
        if (nodes[i]) walk_node(w, graph, nodes[i], parent, depth, body);
    }
    free(nodes);
}

static void walk_free(struct walk *w) {
    for (uint32_t i = 0; i < w->nblobs; i++) free(w->blobs[i]);
    free(w->blobs); free(w->secs); free(w->off); free(w->ptr);
    *w = (struct walk){ 0 };
}

/* Walk `graph` (its top nodes under `parent`) for the API_ENTER record of call `name`:
 * w->secs[0] is the GRAPH_WALK section. 0 when nothing could be recorded. */
static int graph_walk(struct walk *w, const char *name, uint64_t graph, uint64_t parent) {
    *w = (struct walk){ 0 };
    drv_resolve();
    w->off = malloc(MAX_KPARAMS * 8); w->ptr = malloc(MAX_KPARAMS * 16);
    if (!w->off || !w->ptr) { walk_free(w); return 0; }
    w->size = w->off + MAX_KPARAMS; w->lay = (uint32_t *)(w->ptr + MAX_KPARAMS);
    struct sec *head = walk_sec(w);
    if (!head) { walk_free(w); return 0; }
    if (!g_drv.get_nodes || !g_drv.node_type) w->flags |= TL_GW_NO_DRIVER;
    else walk_graph(w, graph, parent, 0, 0);
    if (w->failed) { walk_free(w); return 0; }
    w64(w->head, TL_GRAPH_WALK__graph, graph); w64(w->head, TL_GRAPH_WALK__parent, parent);
    w32(w->head, TL_GRAPH_WALK__nodes, w->nodes); w32(w->head, TL_GRAPH_WALK__kernels, w->kernels);
    w32(w->head, TL_GRAPH_WALK__flags, w->flags); w32(w->head, TL_GRAPH_WALK__reserved0, 0);
    w->secs[0] = (struct sec){ .tag = TL_API_SEC_GRAPH_WALK, .size = TL_GRAPH_WALK__SIZE,
                               .full = TL_GRAPH_WALK__SIZE, .local = w->head };
    if (w->flags & TL_GW_NODE_LIMIT)
        note_parts("graph walk stopped at TL_WALK_MAX_NODES nodes (later nodes not recorded): ", name, " of graph ", graph, 1);
    if (w->flags & TL_GW_DEPTH_LIMIT)
        note_parts("graph walk did not follow graphs nested deeper than TL_WALK_MAX_DEPTH: ", name, " of graph ", graph, 1);
    if (w->flags & TL_GW_BODIES_UNKNOWN)
        note_parts("graph walk met a conditional node whose bodies it could not learn: ", name, " of graph ", graph, 1);
    return 1;
}

/* A generic CUgraphNodeParams (cuGraphAddNode, cuGraph(Exec)NodeSetParams) at entry: a
 * kernel node's sections as GRAPH_KERNEL_NODE's (and its name), then a GRAPH_NODE section
 * of the union, last: sections after a GRAPH_NODE belong to that node. */
static uint32_t node_params_sections(int slot, const uint64_t *a, uint8_t *gp, struct sec *secs,
                                     uint32_t *off, uint32_t *size, uint64_t *ptr, uint32_t *lay,
                                     uint8_t *namebuf) {
    struct api_slot *s = &g_slots[slot];
    uint32_t nsec = 0;
    uint64_t np = a[s->nargs - 1];
    uint8_t *h = gp + CUgraphNodeParams__SIZE;      /* the GRAPH_NODE data after the params */
    if (!np || !safe_read(gp, np, CUgraphNodeParams__SIZE)) return 0;
    uint32_t type = r32(gp, CUgraphNodeParams__type);
    if (type == TL_CU_GRAPH_NODE_TYPE_KERNEL) {
        const uint8_t *k = gp + CUgraphNodeParams__union;
        uint64_t f = r64(k, CUDA_KERNEL_NODE_PARAMS__func);
        if (!f) f = r64(k, CUDA_KERNEL_NODE_PARAMS_v2__kern);
        secs[nsec++] = (struct sec){ .tag = TL_API_SEC_KERNEL_NODE_PARAMS, .size = CUDA_KERNEL_NODE_PARAMS__SIZE,
                                     .full = CUDA_KERNEL_NODE_PARAMS__SIZE, .local = k };
        uint32_t first = nsec;
        nsec += launch_sections(f, r64(k, CUDA_KERNEL_NODE_PARAMS__kernelParams),
                                r64(k, CUDA_KERNEL_NODE_PARAMS__extra), secs + nsec, off, size, ptr, lay);
        if (named_claim(f)) {
            int kern = nsec > first && layout_says_kernel(&secs[first]);
            nsec += name_section(f, kern, namebuf, &secs[nsec]);
        }
    }
    int add = s->nargs >= 5;        /* cuGraphAddNode(_v2): graph=arg1; setters: node=arg[n-2] */
    w64(h, TL_GRAPH_NODE__graph, add ? a[1] : 0); w64(h, TL_GRAPH_NODE__node, add ? 0 : a[s->nargs - 2]);
    w64(h, TL_GRAPH_NODE__parent, 0); w32(h, TL_GRAPH_NODE__type, type);
    w16(h, TL_GRAPH_NODE__depth, 0); w16(h, TL_GRAPH_NODE__body, 0);
    w32(h, TL_GRAPH_NODE__flags, TL_GN_GENERIC); w32(h, TL_GRAPH_NODE__params_size, NODE_UNION);
    memcpy(h + TL_GRAPH_NODE__params, gp + CUgraphNodeParams__union, NODE_UNION);
    secs[nsec++] = (struct sec){ .tag = TL_API_SEC_GRAPH_NODE, .size = TL_GRAPH_NODE__FIXED + NODE_UNION,
                                 .full = TL_GRAPH_NODE__FIXED + NODE_UNION, .local = h };
    return nsec;
}

/* cuGraphAddNode(_v2) returned: a conditional node's body graphs (the driver filled
 * phGraph_out) as a GRAPH_NODE section, remembered for later walks. */
static uint32_t node_added_sections(int slot, const uint64_t *a, uint8_t *gp, struct sec *sec) {
    uint64_t np = a[g_slots[slot].nargs - 1], node = 0, bodies[TL_WALK_MAX_BODIES];
    uint8_t *h = gp + CUgraphNodeParams__SIZE, *c = gp + CUgraphNodeParams__union;
    uint32_t flags = 0;
    if (!np || !safe_read(gp, np, CUgraphNodeParams__SIZE) ||
        r32(gp, CUgraphNodeParams__type) != TL_CU_GRAPH_NODE_TYPE_CONDITIONAL)
        return 0;
    if (!safe_read(&node, a[0], 8)) node = 0;
    uint32_t n = cond_bodies(c, bodies, &flags);
    if (!(flags & TL_GN_BODIES_UNKNOWN)) cond_remember(node, c, bodies, n);
    uint32_t psize = CUDA_CONDITIONAL_NODE_PARAMS__SIZE + 8 * n;
    w64(h, TL_GRAPH_NODE__graph, a[1]); w64(h, TL_GRAPH_NODE__node, node);
    w64(h, TL_GRAPH_NODE__parent, 0); w32(h, TL_GRAPH_NODE__type, TL_CU_GRAPH_NODE_TYPE_CONDITIONAL);
    w16(h, TL_GRAPH_NODE__depth, 0); w16(h, TL_GRAPH_NODE__body, 0);
    w32(h, TL_GRAPH_NODE__flags, flags); w32(h, TL_GRAPH_NODE__params_size, psize);
    memcpy(h + TL_GRAPH_NODE__params, c, CUDA_CONDITIONAL_NODE_PARAMS__SIZE);
    memcpy(h + TL_GRAPH_NODE__params + CUDA_CONDITIONAL_NODE_PARAMS__SIZE, bodies, 8u * n);
    *sec = (struct sec){ .tag = TL_API_SEC_GRAPH_NODE, .size = TL_GRAPH_NODE__FIXED + psize,
                         .full = TL_GRAPH_NODE__FIXED + psize, .local = h };
    return 1;
}

/* cuGraph(Exec)MemcpyNodeSetParams / cuGraph(Exec)MemsetNodeSetParams at entry: the node's
 * new CUDA_MEMCPY3D or CUDA_MEMSET_NODE_PARAMS as a GRAPH_NODE section of its own type (the
 * exec-level ones: exec, node, params, ctx; the graph-level ones: node, params). */
static uint32_t copy_node_sections(int slot, const uint64_t *a, uint8_t *gp, struct sec *sec) {
    struct api_slot *s = &g_slots[slot];
    /* "cuGraph[Exec]Memcpy..." or "cuGraph[Exec]Memset...": the letter after "Mem" (no libc
     * string functions in the shim: tests/test_shim_vector.py) */
    int exec = s->nargs >= 4, memcpy_node = s->name[exec ? 14 : 10] == 'c';
    uint32_t psize = memcpy_node ? CUDA_MEMCPY3D__SIZE : CUDA_MEMSET_NODE_PARAMS__SIZE;
    uint64_t np = a[exec ? 2 : 1];
    uint8_t *h = gp;
    /* gp is api_call's CUgraphNodeParams + GRAPH_NODE buffer; the section is built at its start */
    _Static_assert(TL_GRAPH_NODE__FIXED + CUDA_MEMCPY3D__SIZE <=
                   CUgraphNodeParams__SIZE + TL_GRAPH_NODE__FIXED + NODE_UNION, "fits api_call's gp");
    if (!np || !safe_read(h + TL_GRAPH_NODE__params, np, psize)) return 0;
    w64(h, TL_GRAPH_NODE__graph, 0); w64(h, TL_GRAPH_NODE__node, a[exec ? 1 : 0]);
    w64(h, TL_GRAPH_NODE__parent, 0);
    w32(h, TL_GRAPH_NODE__type, memcpy_node ? TL_CU_GRAPH_NODE_TYPE_MEMCPY : TL_CU_GRAPH_NODE_TYPE_MEMSET);
    w16(h, TL_GRAPH_NODE__depth, 0); w16(h, TL_GRAPH_NODE__body, 0);
    w32(h, TL_GRAPH_NODE__flags, 0); w32(h, TL_GRAPH_NODE__params_size, psize);
    *sec = (struct sec){ .tag = TL_API_SEC_GRAPH_NODE, .size = TL_GRAPH_NODE__FIXED + psize,
                         .full = TL_GRAPH_NODE__FIXED + psize, .local = h };
    return 1;
}

static uint32_t api_call(int slot, const uint64_t *a) {
    struct api_slot *s = &g_slots[slot];
    api_fn real = slot_real(s);
    if (!real) return TL_CUDA_ERROR_NOT_INITIALIZED;   /* only reachable without libcuda */
    if (!g_api || !g_on || t_api_depth)
        return real(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11]);
    struct win_call w = { 0 };
    if (g_win_mode && !win_enter(slot, a, &w)) return win_skip(real, a, &w);   /* shim/window.c */
    t_api_depth++;
    int e = errno;
    uint64_t t0 = now_ns();
    uint32_t call = ADD(&g_api_call, 1);
    if (w.opens) win_open_at(&w, slot, call);
    STAT(TL_STAT_API_CALLS);
    /* LAUNCH_EX: config, attributes, layout, data or pointers + windows, and a name;
     * GRAPH_NODE_PARAMS: node, kernel node params, three argument sections and a name */
    struct sec secs[8];
    uint32_t nsec = 0;
    uint64_t named = 0;           /* the launch's function, to be named if no lookup did (I18) */
    uint8_t namebuf[NAME_SEC_MAX];
    struct walk walk = { 0 };     /* a graph walked for this call (I19) */
    int walked = 0;
    /* CUgraphNodeParams, then the GRAPH_NODE section made of it */
    uint8_t gp[CUgraphNodeParams__SIZE + TL_GRAPH_NODE__FIXED + NODE_UNION];
    uint32_t off[MAX_KPARAMS], size[MAX_KPARAMS], lay[2 * MAX_KPARAMS];
    uint64_t ptr[MAX_KPARAMS];
    uint8_t tmin[TL_TENSOR_MAP_RANK_MAX * 24 + 8];  /* cuTensorMapEncodeTiled's arrays */
    /* CUlaunchConfig, or CUDA_KERNEL_NODE_PARAMS (the larger decides) */
    uint64_t cfg[(CUlaunchConfig__SIZE > CUDA_KERNEL_NODE_PARAMS__SIZE ? CUlaunchConfig__SIZE : CUDA_KERNEL_NODE_PARAMS__SIZE) / 8];
    switch (s->kind) {
    case TL_API_KIND_LAUNCH: nsec = launch_sections(named = a[0], a[9], a[10], secs, off, size, ptr, lay); break;
    case TL_API_KIND_LAUNCH_COOP: nsec = launch_sections(named = a[0], a[9], 0, secs, off, size, ptr, lay); break;
    case TL_API_KIND_LAUNCH_EX:
        if (safe_read(cfg, a[0], sizeof cfg)) {
            uint8_t *c = (uint8_t *)cfg;
            secs[nsec++] = (struct sec){ .tag = TL_API_SEC_LAUNCH_CONFIG, .size = sizeof cfg, .full = sizeof cfg, .local = cfg };
            uint32_t na = r32(c, CUlaunchConfig__numAttrs);
            uint64_t attrs = r64(c, CUlaunchConfig__attrs);
            if (na && attrs)
                sec_remote(&secs[nsec++], TL_API_SEC_LAUNCH_ATTRS, attrs, (uint64_t)na * CUlaunchAttribute__SIZE,
                           MAX_LAUNCH_ATTRS * CUlaunchAttribute__SIZE);
        }
        named = a[1];
        nsec += launch_sections(a[1], a[2], a[3], secs + nsec, off, size, ptr, lay);
        break;
    case TL_API_KIND_GRAPH_KERNEL_NODE: {
        /* CUDA_KERNEL_NODE_PARAMS * is the last argument of every such call; its function,
         * kernelParams and extra are read as a launch's are. */
        uint64_t np = s->nargs ? a[s->nargs - 1] : 0;
        if (np && safe_read(cfg, np, CUDA_KERNEL_NODE_PARAMS__SIZE)) {
            uint8_t *c = (uint8_t *)cfg;
            secs[nsec++] = (struct sec){ .tag = TL_API_SEC_KERNEL_NODE_PARAMS, .size = CUDA_KERNEL_NODE_PARAMS__SIZE,
                                         .full = CUDA_KERNEL_NODE_PARAMS__SIZE, .local = cfg };
            named = r64(c, CUDA_KERNEL_NODE_PARAMS__func);
            nsec += launch_sections(named, r64(c, CUDA_KERNEL_NODE_PARAMS__kernelParams),
                                    r64(c, CUDA_KERNEL_NODE_PARAMS__extra), secs + nsec, off, size, ptr, lay);
        }
        break;
    }
    case TL_API_KIND_GRAPH_NODE_PARAMS:
        nsec = node_params_sections(slot, a, gp, secs, off, size, ptr, lay, namebuf);
        break;
    case TL_API_KIND_GRAPH_COPY_NODE:
        nsec = copy_node_sections(slot, a, gp, secs);
        break;
    case TL_API_KIND_COPY_PARAMS:
        /* "cuMemcpy2D..." or "cuMemcpy3D...": the digit after "cuMemcpy" says which struct
         * pCopy points to (read remotely, I5: a bad pointer is an UNREADABLE section) */
        if (a[0]) sec_remote(&secs[nsec++], TL_API_SEC_COPY_PARAMS, a[0],
                             s->name[8] == '2' ? CUDA_MEMCPY2D__SIZE : CUDA_MEMCPY3D__SIZE,
                             CUDA_MEMCPY3D__SIZE);
        break;
    case TL_API_KIND_TENSOR_MAP:
        if (s->nargs == 12) {
            /* cuTensorMapEncodeTiled: its four arrays of tensorRank entries, end to end (a
             * 32-bit argument's register word: the low half only) */
            uint32_t rank = (uint32_t)a[2], n = 0;
            if (rank >= 1 && rank <= TL_TENSOR_MAP_RANK_MAX) {
                uint32_t len[4] = { 8 * rank, 8 * (rank - 1), 4 * rank, 4 * rank }, ok = 1;
                for (int i = 0; i < 4; i++) { ok &= (uint32_t)safe_read(tmin + n, a[4 + i], len[i]); n += len[i]; }
                secs[nsec++] = (struct sec){ .tag = TL_API_SEC_TENSOR_MAP_INPUTS, .size = n, .full = n,
                                             .local = tmin, .flags = ok ? 0 : TL_API_SF_UNREADABLE };
            }
        } else if (a[0])    /* cuTensorMapReplaceAddress: the map it changes, as it was */
            sec_remote(&secs[nsec++], TL_API_SEC_TENSOR_MAP, a[0], TL_TENSOR_MAP_BYTES, TL_TENSOR_MAP_BYTES);
        break;
    case TL_API_KIND_GRAPH_INSTANTIATE: case TL_API_KIND_GRAPH_EXEC_UPDATE:
        walked = graph_walk(&walk, s->name, a[1], 0);
        break;
    case TL_API_KIND_GRAPH_EXEC_CHILD:
        walked = graph_walk(&walk, s->name, a[2], a[1]);
        break;
    case TL_API_KIND_LOAD_IMAGE: {
        uintptr_t img = a[1];
        uint64_t n = img ? image_size(&img) : 0;
        if (n) sec_remote(&secs[nsec++], TL_API_SEC_IMAGE, img, n, g_image_max);
        break;
    }
    case TL_API_KIND_LOAD_FILE: case TL_API_KIND_GET_BY_NAME: {
        uintptr_t str = s->kind == TL_API_KIND_LOAD_FILE ? a[1] : a[2];
        if (str) sec_remote(&secs[nsec++], TL_API_SEC_NAME, str, remote_strlen(str, NAME_MAX_LEN), NAME_MAX_LEN);
        break;
    }
    }
    if (named && named_claim(named)) {
        /* the layout section launch_sections put first says whether it is a CUkernel */
        int kern = 0;
        for (uint32_t i = 0; i < nsec; i++) if (secs[i].tag == TL_API_SEC_PARAM_LAYOUT) kern = layout_says_kernel(&secs[i]);
        nsec += name_section(named, kern, namebuf, &secs[nsec]);
    }
    if (walked) {
        api_record(TL_REC_API_ENTER, slot, call, a, 0, walk.secs, walk.nsec > 65535 ? 65535 : walk.nsec, t0);
        walk_free(&walk);
    } else api_record(TL_REC_API_ENTER, slot, call, a, 0, secs, nsec, t0);
    errno = e;
    uint32_t r = real(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11]);
    e = errno;
    nsec = 0;
    if (r == 0 && a[0] && (s->kind == TL_API_KIND_GET_BY_NAME ||
                           (s->kind == TL_API_KIND_OUT0 && !strcmp(s->name, "cuKernelGetFunction")))) {
        uint64_t h = 0;     /* I17 */
        if (safe_read(&h, a[0], 8) && h) { layout_forget(h); named_claim(h); /* I18: named by it */ }
    }
    if (r == 0 && a[0] && (s->kind == TL_API_KIND_LOAD_IMAGE || s->kind == TL_API_KIND_LOAD_FILE ||
                           s->kind == TL_API_KIND_GET_BY_NAME || s->kind == TL_API_KIND_OUT0 ||
                           (s->kind == TL_API_KIND_GRAPH_KERNEL_NODE && s->nargs == 5) ||
                           s->kind == TL_API_KIND_GRAPH_INSTANTIATE ||
                           (s->kind == TL_API_KIND_GRAPH_NODE_PARAMS && s->nargs >= 5)))
        sec_remote(&secs[nsec++], TL_API_SEC_OUT, a[0], 8, 8);
    if (r == 0 && a[0] && s->kind == TL_API_KIND_GRAPH_NODE_PARAMS && s->nargs >= 5)
        nsec += node_added_sections(slot, a, gp, &secs[nsec]);
    if (r == 0 && a[0] && s->kind == TL_API_KIND_TENSOR_MAP)     /* the map made or changed */
        sec_remote(&secs[nsec++], TL_API_SEC_TENSOR_MAP, a[0], TL_TENSOR_MAP_BYTES, TL_TENSOR_MAP_BYTES);
    api_record(TL_REC_API_EXIT, slot, call, a, r, secs, nsec, t0);
    if (g_win_mode) win_exit(slot, a, r, call, &w);
    t_api_depth--;
    errno = e;
    return r;
}

static void api_init(void) {
    resolve_dlsym();
    const char *v = getenv("TRACE_LAUNCH_API");
    g_api = g_full && g_capture && !(v && !strcmp(v, "0"));
    const char *m = getenv("TRACE_LAUNCH_IMAGE_MAX");
    if (m && *m) g_image_max = strtoull(m, NULL, 0);
}
