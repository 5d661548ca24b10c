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
 *  I10 A wrapper forwards 11 integer-class argument words to the real function. Every
 *      bracketed function takes at most 11 integer or pointer arguments (SysV x86-64: six
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
 */

typedef uint32_t (*api_fn)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t,
                           uint64_t, uint64_t, uint64_t, uint64_t, uint64_t);
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
                             uint64_t a8, uint64_t a9, uint64_t a10) {                    \
        uint64_t a[TL_API_MAX_ARGS] = { a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10 };    \
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
    for (int i = 0; i < TL_API_COUNT; i++) if (!strcmp(g_slots[i].name, name)) return &g_slots[i];
    return NULL;
}

/* The wrapper to hand out for a real function pointer `p` (NULL: not one of ours). */
static void *wrap_for(void *p) {
    for (int i = 0; i < TL_API_COUNT; i++) {
        struct api_slot *s = &g_slots[i];
        if ((void *)slot_real(s) == p) return (void *)s->wrap;
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
        if (!strncmp(s, sym, n) && (s[n] == 0 || s[n] == '_')) return 1;
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

static void sec_fill(uint8_t *p, struct sec *s) {
    uint8_t *d = p + TL_API_SECTION__data;
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

static uint32_t api_call(int slot, const uint64_t *a) {
    struct api_slot *s = &g_slots[slot];
    api_fn real = slot_real(s);
    if (!real) return TL_CUDA_ERROR_NOT_INITIALIZED;   /* only reachable without libcuda */
    if (!g_api || !g_on || t_api_depth)
        return real(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10]);
    struct win_call w = { 0 };
    if (g_win_mode && !win_enter(slot, a, &w)) return win_skip(real, a, &w);   /* shim/window.c */
    t_api_depth++;
    int e = errno;
    uint64_t t0 = now_ns();
    uint32_t call = ADD(&g_api_call, 1);
    if (w.opens) win_open_at(&w, slot, call);
    STAT(TL_STAT_API_CALLS);
    struct sec secs[6];   /* LAUNCH_EX: config, attributes, layout, and data or pointers + windows */
    uint32_t nsec = 0;
    uint32_t off[MAX_KPARAMS], size[MAX_KPARAMS], lay[2 * MAX_KPARAMS];
    uint64_t ptr[MAX_KPARAMS];
    /* CUlaunchConfig, or CUDA_KERNEL_NODE_PARAMS (the larger decides) */
    uint64_t cfg[(CUlaunchConfig__SIZE > CUDA_KERNEL_NODE_PARAMS__SIZE ? CUlaunchConfig__SIZE : CUDA_KERNEL_NODE_PARAMS__SIZE) / 8];
    switch (s->kind) {
    case TL_API_KIND_LAUNCH: nsec = launch_sections(a[0], a[9], a[10], secs, off, size, ptr, lay); break;
    case TL_API_KIND_LAUNCH_COOP: nsec = launch_sections(a[0], a[9], 0, secs, off, size, ptr, lay); break;
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
            nsec += launch_sections(r64(c, CUDA_KERNEL_NODE_PARAMS__func), r64(c, CUDA_KERNEL_NODE_PARAMS__kernelParams),
                                    r64(c, CUDA_KERNEL_NODE_PARAMS__extra), secs + nsec, off, size, ptr, lay);
        }
        break;
    }
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
    api_record(TL_REC_API_ENTER, slot, call, a, 0, secs, nsec, t0);
    errno = e;
    uint32_t r = real(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10]);
    e = errno;
    nsec = 0;
    if (r == 0 && a[0] && (s->kind == TL_API_KIND_GET_BY_NAME ||
                           (s->kind == TL_API_KIND_OUT0 && !strcmp(s->name, "cuKernelGetFunction")))) {
        uint64_t h = 0;     /* I17 */
        if (safe_read(&h, a[0], 8) && h) layout_forget(h);
    }
    if (r == 0 && a[0] && (s->kind == TL_API_KIND_LOAD_IMAGE || s->kind == TL_API_KIND_LOAD_FILE ||
                           s->kind == TL_API_KIND_GET_BY_NAME || s->kind == TL_API_KIND_OUT0 ||
                           (s->kind == TL_API_KIND_GRAPH_KERNEL_NODE && s->nargs == 5)))
        sec_remote(&secs[nsec++], TL_API_SEC_OUT, a[0], 8, 8);
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
