/* trace-launch shim, part 3: capture windows (trace-launch --capture-range, --launch-range)
 * and the NVTX injection that names their ranges. Included by tracelaunch.c after cuapi.c.
 *
 * A window is asked for in the environment: TRACE_LAUNCH_WINDOW (cudaProfilerApi, nvtx or
 * launches), TRACE_LAUNCH_WINDOW_NAME (the NVTX range's message), TRACE_LAUNCH_WINDOW_SKIP
 * (ranges or launches before the window) and TRACE_LAUNCH_WINDOW_COUNT (ranges or launches
 * in it; 0: until the process ends). Outside the window the shim still records every ioctl,
 * mmap and open, the API calls the decode of the window needs (decoders/cuda/api.py
 * WINDOW_ROLES: loads, lookups, allocations, graph building) and the submissions that write
 * graph QMDs; it drops the other submissions and API calls, and counts them.
 *
 * Invariants (in addition to I1..I17):
 *  I18 One window per process: it opens once (a WINDOW record, edge BEGIN) and closes once
 *      (edge END), each record carrying what triggered it and the counts so far. The doorbell
 *      handler reads only g_win_open (a plain int, atomic loads) and its thread's t_win_sub
 *      (initial-exec TLS). A doorbell outside the window moves the channel's last GP_PUT and
 *      entry stamp on and writes nothing, so the first submission recorded in the window
 *      holds only the GP entries written since the one before it.
 *  I19 A bracketed call's fate is decided once, at its entry: both of its records or neither,
 *      and its thread's submissions kept or dropped until it returns, whatever another
 *      thread does to the window meanwhile. A --launch-range window counts kernel launch
 *      calls (outermost ones) and decides by that number, not by the window's state. A
 *      launch into a stream being captured is graph building, not a launch: kept anywhere.
 *  I20 NVTX: the shim is also an NVTX injection library (tracer/run.py names it in
 *      NVTX_INJECTION64_PATH). InitializeInjectionNvtx2 fills the range callbacks only when an
 *      nvtx window is asked for in a recording process; otherwise it declines and the
 *      program's NVTX calls stay the header's no-ops. Range messages are program memory
 *      read with process_vm_readv (I5); per-thread range stacks are fixed TLS arrays.
 */

#define WIN_NAME_MAX 256       /* range name compared and recorded */
#define WIN_EXECS 4096         /* graph execs remembered as launched (a hash set) */
#define WIN_EXEC_PROBES 16
#define NVTX_DEPTH 64          /* nested ranges tracked per thread and stack */

static int g_win_state;                 /* 0 not yet open, 1 open, 2 closed (I18) */
static uint32_t g_win_skip, g_win_count;
static char g_win_name[WIN_NAME_MAX];
static uint32_t g_win_name_len;
static uint32_t g_win_launches;         /* kernel launch calls entered, this process */
static uint32_t g_prof_active, g_prof_starts;
static const uint8_t g_win_role[TL_API_COUNT] = TL_API_WINDOW_ROLES;

/* ---- the edges ----------------------------------------------------------------------- */
static void win_record(uint32_t edge, uint32_t trigger, uint32_t ordinal, uint32_t call,
                       uint64_t launches, const char *name, size_t n) {
    if (n > WIN_NAME_MAX) n = WIN_NAME_MAX;
    uint8_t *r = rec_begin(TL_RECORD_HEADER__SIZE + TL_WINDOW__FIXED + pad8(n));
    if (!r) return;
    uint8_t *b = body(r);
    uint64_t t = now_ns();
    w64(r, TL_RECORD_HEADER__t_start, t); w64(r, TL_RECORD_HEADER__t_end, t);
    w32(b, TL_WINDOW__edge, edge); w32(b, TL_WINDOW__trigger, trigger);
    w32(b, TL_WINDOW__ordinal, ordinal); w32(b, TL_WINDOW__call, call);
    w64(b, TL_WINDOW__launches, launches);
    w64(b, TL_WINDOW__submissions_skipped, __atomic_load_n(&g_stats[TL_STAT_WINDOW_SUBMISSIONS_SKIPPED], __ATOMIC_RELAXED));
    w64(b, TL_WINDOW__api_calls_skipped, __atomic_load_n(&g_stats[TL_STAT_WINDOW_API_CALLS_SKIPPED], __ATOMIC_RELAXED));
    w32(b, TL_WINDOW__name_len, (uint32_t)n);
    put_bytes(b + TL_WINDOW__name, name, n);
    rec_publish(r, TL_REC_WINDOW, TL_RF_COMPLETE);
}

/* BEGIN is written before the flag is raised, so every submission the window records comes
 * after it in the file; END after the flag is lowered. */
static void win_open(uint32_t trigger, uint32_t ordinal, uint32_t call, uint64_t launches,
                     const char *name, size_t n) {
    int was = 0;
    if (!__atomic_compare_exchange_n(&g_win_state, &was, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return;
    win_record(TL_WINDOW_BEGIN, trigger, ordinal, call, launches, name, n);
    __atomic_store_n(&g_win_open, 1, __ATOMIC_RELEASE);
}

static void win_close(uint32_t trigger, uint32_t ordinal, uint32_t call, const char *name, size_t n) {
    int was = 1;
    if (!__atomic_compare_exchange_n(&g_win_state, &was, 2, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return;
    __atomic_store_n(&g_win_open, 0, __ATOMIC_RELEASE);
    win_record(TL_WINDOW_END, trigger, ordinal, call, __atomic_load_n(&g_win_launches, __ATOMIC_RELAXED), name, n);
}

/* The range numbered `ordinal` (1 = first) is the window's first, or its last. */
static int win_first(uint32_t ordinal) { return ordinal == g_win_skip + 1; }
static int win_last(uint32_t ordinal) { return g_win_count && ordinal == g_win_skip + g_win_count; }

/* ---- the doorbell (I18) ---------------------------------------------------------------- */
/* 1: record this doorbell's submission; 0: it was skipped here. */
static int win_doorbell(struct channel *c) {
    if (win_keep()) {
        if (!__atomic_load_n(&g_win_open, __ATOMIC_RELAXED)) STAT(TL_STAT_WINDOW_SUBMISSIONS_KEPT);
        return 1;
    }
    STAT(TL_STAT_WINDOW_SUBMISSIONS_SKIPPED);
    uint64_t stamp_now = LOAD_ACQ(&g_gp_stamp);
    uint32_t put;
    if (LOAD_ACQ(&c->shadow_ok)) {
        put = LOAD_ACQ(&c->shadow_put);
    } else {
        uint64_t avail = 0;
        struct cpumap *um = c->userd_map;
        if (!in_cpu(um, c->userd_off)) um = c->userd_map = find_cpu(c->hClient, c->hUserd, c->userd_off);
        uintptr_t userd = um ? cpu_addr(um, c->userd_off, &avail, NULL) : 0;
        if (!userd || avail < USERD_GP_PUT + 4) return 0;
        put = dev_load32(userd + USERD_GP_PUT);
    }
    __atomic_exchange_n(&c->last_put, put, __ATOMIC_ACQ_REL);
    uint64_t cs = LOAD_ACQ(&c->cap_stamp);
    while (cs < stamp_now && !__atomic_compare_exchange_n(&c->cap_stamp, &cs, stamp_now, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {}
    return 0;
}

/* ---- graph execs launched since their instantiate or update --------------------------- */
static uint64_t g_win_exec[WIN_EXECS];   /* 0 empty, 1 forgotten, else a CUgraphExec */

static uint64_t *win_exec_slot(uint64_t h, uint32_t probe) {
    return &g_win_exec[((uint32_t)((h >> 4) * 0x9E3779B1u) + probe) % WIN_EXECS];
}
/* 1 when exec h had not been launched (it is remembered now); a full table answers 1 too:
 * keeping a launch too many is safe, losing a QMD write is not. */
static int win_exec_first(uint64_t h) {
    if (h <= 1) return 1;
    for (uint32_t p = 0; p < WIN_EXEC_PROBES; p++) {
        uint64_t *e = win_exec_slot(h, p), v = LOAD_ACQ(e);
        if (v == h) return 0;
        if (v == 0) {
            if (__atomic_compare_exchange_n(e, &v, h, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return 1;
            if (v == h) return 0;        /* another thread's launch of the same exec won */
        }
    }
    return 1;
}
static void win_exec_forget(uint64_t h) {
    if (h <= 1) return;
    for (uint32_t p = 0; p < WIN_EXEC_PROBES; p++) {
        uint64_t *e = win_exec_slot(h, p), v = h;
        if (LOAD_ACQ(e) == 0) return;
        __atomic_compare_exchange_n(e, &v, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    }
}

/* ---- launches into a stream being captured --------------------------------------------- */
/* A launch into a capturing stream runs nothing: it adds a node to a graph, whose replays the
 * decode attributes to it, so outside the window it is bookkeeping and kept. Asked of the
 * driver (cuStreamIsCapturing, which capture allows) only for a launch outside the window. */
typedef uint32_t (*capturing_fn)(uint64_t stream, uint32_t *status);
static int win_capturing(int slot, const uint64_t *a) {
    static capturing_fn fn[2];
    static int looked;
    if (!LOAD_ACQ(&looked)) {
        STORE_REL(&fn[0], (capturing_fn)cuda_sym("cuStreamIsCapturing"));
        STORE_REL(&fn[1], (capturing_fn)cuda_sym("cuStreamIsCapturing_ptsz"));
        if (libcuda()) STORE_REL(&looked, 1);
    }
    const struct api_slot *s = &g_slots[slot];
    size_t n = s_len(s->name);
    int ptsz = n > 5 && !strcmp(s->name + n - 5, "_ptsz");
    capturing_fn f = LOAD_ACQ(&fn[ptsz]);
    uint64_t stream = a[8];          /* cuLaunchKernel, cuLaunchCooperativeKernel: hStream */
    if (s->kind == TL_API_KIND_LAUNCH_EX && !safe_read(&stream, a[0] + CUlaunchConfig__hStream, 8)) return 0;
    uint32_t status = 0;             /* CU_STREAM_CAPTURE_STATUS_NONE */
    return f && f(stream, &status) == 0 && status != 0;
}

/* ---- API calls (I19) -------------------------------------------------------------------- */
/* At a call's entry: 1 when it is recorded. Sets what its thread's submissions do. */
static int win_enter(int slot, const uint64_t *a, struct win_call *w) {
    uint32_t role = g_win_role[slot];
    int open = __atomic_load_n(&g_win_open, __ATOMIC_ACQUIRE), keep = 1, sub = WIN_FOLLOW;
    w->role = role; w->sub_before = t_win_sub; w->opens = 0;
    switch (role) {
    case TL_WIN_ROLE_LAUNCH:
        w->n = ADD(&g_win_launches, 1) + 1;
        if (g_win_mode == TL_WINDOW_BY_LAUNCHES) {
            keep = w->n > g_win_skip && (!g_win_count || w->n <= g_win_skip + g_win_count);
            w->opens = win_first(w->n);
        } else keep = open;
        sub = keep ? WIN_KEEP : WIN_DROP;
        if (!keep && win_capturing(slot, a)) keep = 1, sub = WIN_FOLLOW;
        break;
    case TL_WIN_ROLE_GRAPH_LAUNCH: {
        int first = win_exec_first(a[0]);   /* remembered in the window too */
        keep = open || first;
        sub = keep ? WIN_KEEP : WIN_DROP;
        break;
    }
    case TL_WIN_ROLE_WORK:
        keep = open;
        sub = keep ? WIN_KEEP : WIN_DROP;
        break;
    case TL_WIN_ROLE_GRAPH_PREPARE:
        sub = WIN_KEEP;
        break;
    }
    t_win_sub = sub;
    return keep;
}

static uint32_t win_skip(api_fn real, const uint64_t *a, struct win_call *w) {
    STAT(TL_STAT_WINDOW_API_CALLS_SKIPPED);
    if (w->role == TL_WIN_ROLE_LAUNCH || w->role == TL_WIN_ROLE_GRAPH_LAUNCH) STAT(TL_STAT_WINDOW_LAUNCHES_SKIPPED);
    t_api_depth++;     /* libcuda calling itself is still not a call (I11) */
    uint32_t r = real(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11]);
    t_api_depth--;
    t_win_sub = w->sub_before;
    return r;
}

/* --launch-range: launch number skip+1 opens the window before its own records. */
static void win_open_at(struct win_call *w, int slot, uint32_t call) {
    const char *name = g_slots[slot].name;
    win_open(TL_WINDOW_BY_LAUNCHES, w->n, call, w->n - 1, name, s_len(name));
}

static void win_exit(int slot, const uint64_t *a, uint32_t r, uint32_t call, struct win_call *w) {
    const char *name = g_slots[slot].name;
    switch (w->role) {
    case TL_WIN_ROLE_LAUNCH:
        if (g_win_mode == TL_WINDOW_BY_LAUNCHES && win_last(w->n))
            win_close(TL_WINDOW_BY_LAUNCHES, w->n, call, name, s_len(name));
        break;
    case TL_WIN_ROLE_GRAPH_PREPARE: {
        /* its QMDs may be written again at the exec's next launch: keep that one too */
        uint64_t h = a[0];
        if (g_slots[slot].kind == TL_API_KIND_OUT0 && (r != 0 || !safe_read(&h, a[0], 8))) h = 0;
        win_exec_forget(h);
        break;
    }
    case TL_WIN_ROLE_PROFILER_START: {
        uint32_t was = 0;   /* a start while profiling is on starts nothing (nor in Nsight) */
        if (!__atomic_compare_exchange_n(&g_prof_active, &was, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) break;
        uint32_t ord = ADD(&g_prof_starts, 1) + 1;
        if (g_win_mode == TL_WINDOW_BY_PROFILER_API && win_first(ord))
            win_open(TL_WINDOW_BY_PROFILER_API, ord, call, __atomic_load_n(&g_win_launches, __ATOMIC_RELAXED),
                     name, s_len(name));
        break;
    }
    case TL_WIN_ROLE_PROFILER_STOP: {
        uint32_t was = 1;
        if (!__atomic_compare_exchange_n(&g_prof_active, &was, 0, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) break;
        uint32_t ord = __atomic_load_n(&g_prof_starts, __ATOMIC_ACQUIRE);
        if (g_win_mode == TL_WINDOW_BY_PROFILER_API && win_last(ord))
            win_close(TL_WINDOW_BY_PROFILER_API, ord, call, name, s_len(name));
        break;
    }
    }
    t_win_sub = w->sub_before;
}

/* ---- NVTX injection (I20) --------------------------------------------------------------
 * What nvtx3's loader (nvtxDetail/nvtxInit.h, CUDA 13.0 headers) and the NVTX export
 * tables (nvtxDetail/nvtxTypes.h) define, written down here as the ABI gives it: the loader
 * calls InitializeInjectionNvtx2(getExportTable); getExportTable(1) answers the callbacks
 * table {size_t struct_size; int GetModuleFunctionTable(module, &table, &size)}; a module's
 * table is an array of pointers to the loader's function-pointer slots, indexed by callback
 * id, `size` entries long. nvtxEventAttributes_t (v2): messageType at byte 32, the message
 * (a char * or wchar_t * or registered-string handle) at byte 40. */
enum { NVTX_ETID_CALLBACKS = 1 };
enum { NVTX_MODULE_CORE = 1, NVTX_MODULE_CORE2 = 5 };
enum { NVTX_CORE_RangeStartEx = 4, NVTX_CORE_RangeStartA = 5, NVTX_CORE_RangeStartW = 6,
       NVTX_CORE_RangeEnd = 7, NVTX_CORE_RangePushEx = 8, NVTX_CORE_RangePushA = 9,
       NVTX_CORE_RangePushW = 10, NVTX_CORE_RangePop = 11 };
enum { NVTX_CORE2_DomainRangeStartEx = 2, NVTX_CORE2_DomainRangeEnd = 3,
       NVTX_CORE2_DomainRangePushEx = 4, NVTX_CORE2_DomainRangePop = 5,
       NVTX_CORE2_DomainRegisterStringA = 10, NVTX_CORE2_DomainRegisterStringW = 11,
       NVTX_CORE2_DomainCreateA = 12, NVTX_CORE2_DomainCreateW = 13 };
enum { NVTX_MSG_ASCII = 1, NVTX_MSG_UNICODE = 2, NVTX_MSG_REGISTERED = 3 };
#define NVTX_ATTR_MESSAGE_TYPE 32
#define NVTX_ATTR_MESSAGE 40
#define NVTX_ATTR_MIN_SIZE 48
typedef void (*nvtx_fn)(void);
typedef int (*nvtx_table_fn)(uint32_t module, nvtx_fn ***table, uint32_t *size);
typedef const void *(*nvtx_export_fn)(uint32_t id);

/* Registered strings (nvtxDomainRegisterStringA/W): the handle says whether it is the name.
 * Domains (nvtxDomainCreateA/W): one handle for all, so that their ranges nest apart from
 * the default domain's (a NULL handle is the default domain). */
static const char g_nvtx_str[2] = { 0, 1 };
static const char g_nvtx_domain;

/* Whether the ASCII or wide string at p is the window's range name (I5: read, not followed). */
static int nvtx_is_name(uintptr_t p, int wide) {
    uint32_t n = g_win_name_len;
    if (!p) return 0;
    if (!wide) {
        char buf[WIN_NAME_MAX + 1];
        return safe_read(buf, p, n + 1) && !memcmp(buf, g_win_name, n) && buf[n] == 0;
    }
    uint32_t wbuf[WIN_NAME_MAX + 1];
    if (!safe_read(wbuf, p, 4ull * (n + 1)) || wbuf[n] != 0) return 0;
    for (uint32_t i = 0; i < n; i++) if (wbuf[i] != (uint8_t)g_win_name[i]) return 0;
    return 1;
}

static int nvtx_attr_is_name(const void *attr) {
    uint8_t a[NVTX_ATTR_MIN_SIZE];
    if (!safe_read(a, (uintptr_t)attr, sizeof a)) return 0;
    uint32_t type = r32(a, NVTX_ATTR_MESSAGE_TYPE);
    uint64_t msg = r64(a, NVTX_ATTR_MESSAGE);
    if (type == NVTX_MSG_REGISTERED) return msg == (uintptr_t)&g_nvtx_str[1];
    if (type == NVTX_MSG_ASCII || type == NVTX_MSG_UNICODE) return nvtx_is_name(msg, type == NVTX_MSG_UNICODE);
    return 0;
}

/* A range named like the window begins: its number (1 = first), or 0 for any other range. */
static uint32_t g_nvtx_matches;
static uint32_t nvtx_begin(int is_name) {
    if (!is_name) return 0;
    uint32_t n = ADD(&g_nvtx_matches, 1) + 1;
    if (win_first(n)) win_open(TL_WINDOW_BY_NVTX, n, 0, __atomic_load_n(&g_win_launches, __ATOMIC_RELAXED),
                               g_win_name, g_win_name_len);
    return n;
}
static void nvtx_end(uint32_t ordinal) {
    if (ordinal && win_last(ordinal)) win_close(TL_WINDOW_BY_NVTX, ordinal, 0, g_win_name, g_win_name_len);
}

/* Push/pop ranges nest per thread: the default domain's and the other domains' (together)
 * each in a fixed stack of range numbers. */
static TLS uint32_t t_nvtx_stack[2][NVTX_DEPTH];
static TLS int t_nvtx_depth[2];
static int nvtx_push(int stack, int is_name) {
    uint32_t ord = nvtx_begin(is_name);
    int d = t_nvtx_depth[stack]++;
    if (d < NVTX_DEPTH) t_nvtx_stack[stack][d] = ord;
    return d;
}
static int nvtx_pop(int stack) {
    if (t_nvtx_depth[stack] <= 0) return -1;
    int d = --t_nvtx_depth[stack];
    if (d < NVTX_DEPTH) nvtx_end(t_nvtx_stack[stack][d]);
    return d;
}
/* Start/end ranges may end on another thread: the range id carries its number. */
static uint64_t nvtx_start(int is_name) {
    static uint64_t ids;
    return (ADD(&ids, 1) + 1) << 32 | nvtx_begin(is_name);
}

static int nvtx_push_a(const char *m) { return nvtx_push(0, nvtx_is_name((uintptr_t)m, 0)); }
static int nvtx_push_w(const void *m) { return nvtx_push(0, nvtx_is_name((uintptr_t)m, 1)); }
static int nvtx_push_ex(const void *attr) { return nvtx_push(0, nvtx_attr_is_name(attr)); }
static int nvtx_pop_default(void) { return nvtx_pop(0); }
static int nvtx_domain_push_ex(const void *domain, const void *attr) {
    return nvtx_push(domain != NULL, nvtx_attr_is_name(attr));
}
static int nvtx_domain_pop(const void *domain) { return nvtx_pop(domain != NULL); }
static uint64_t nvtx_start_a(const char *m) { return nvtx_start(nvtx_is_name((uintptr_t)m, 0)); }
static uint64_t nvtx_start_w(const void *m) { return nvtx_start(nvtx_is_name((uintptr_t)m, 1)); }
static uint64_t nvtx_start_ex(const void *attr) { return nvtx_start(nvtx_attr_is_name(attr)); }
static uint64_t nvtx_domain_start_ex(const void *domain, const void *attr) {
    (void)domain; return nvtx_start(nvtx_attr_is_name(attr));
}
static void nvtx_end_id(uint64_t id) { nvtx_end((uint32_t)id); }
static void nvtx_domain_end(const void *domain, uint64_t id) { (void)domain; nvtx_end((uint32_t)id); }
static const void *nvtx_register_a(const void *domain, const char *s) {
    (void)domain; return &g_nvtx_str[nvtx_is_name((uintptr_t)s, 0)];
}
static const void *nvtx_register_w(const void *domain, const void *s) {
    (void)domain; return &g_nvtx_str[nvtx_is_name((uintptr_t)s, 1)];
}
static const void *nvtx_domain_create(const void *name) { (void)name; return &g_nvtx_domain; }

static void nvtx_fill(nvtx_table_fn get, uint32_t module, const uint32_t *ids, nvtx_fn const *fns, size_t n) {
    nvtx_fn **table = NULL;
    uint32_t size = 0;
    if (!get(module, &table, &size) || !table) return;
    for (size_t i = 0; i < n; i++)
        if (ids[i] < size && table[ids[i]]) *table[ids[i]] = fns[i];
}

EXPORT int InitializeInjectionNvtx2(nvtx_export_fn get_export_table) {
    if (!g_on || g_win_mode != TL_WINDOW_BY_NVTX || !get_export_table) return 0;
    const uint8_t *cb = get_export_table(NVTX_ETID_CALLBACKS);
    if (!cb) return 0;
    size_t struct_size; nvtx_table_fn get;
    memcpy(&struct_size, cb, sizeof struct_size);
    if (struct_size < sizeof(size_t) + sizeof get) return 0;
    memcpy(&get, cb + sizeof(size_t), sizeof get);
    if (!get) return 0;
    static const uint32_t core_ids[] = { NVTX_CORE_RangeStartEx, NVTX_CORE_RangeStartA, NVTX_CORE_RangeStartW,
                                         NVTX_CORE_RangeEnd, NVTX_CORE_RangePushEx, NVTX_CORE_RangePushA,
                                         NVTX_CORE_RangePushW, NVTX_CORE_RangePop };
    nvtx_fn const core[] = { (nvtx_fn)nvtx_start_ex, (nvtx_fn)nvtx_start_a, (nvtx_fn)nvtx_start_w,
                             (nvtx_fn)nvtx_end_id, (nvtx_fn)nvtx_push_ex, (nvtx_fn)nvtx_push_a,
                             (nvtx_fn)nvtx_push_w, (nvtx_fn)nvtx_pop_default };
    static const uint32_t core2_ids[] = { NVTX_CORE2_DomainRangeStartEx, NVTX_CORE2_DomainRangeEnd,
                                          NVTX_CORE2_DomainRangePushEx, NVTX_CORE2_DomainRangePop,
                                          NVTX_CORE2_DomainRegisterStringA, NVTX_CORE2_DomainRegisterStringW,
                                          NVTX_CORE2_DomainCreateA, NVTX_CORE2_DomainCreateW };
    nvtx_fn const core2[] = { (nvtx_fn)nvtx_domain_start_ex, (nvtx_fn)nvtx_domain_end,
                              (nvtx_fn)nvtx_domain_push_ex, (nvtx_fn)nvtx_domain_pop,
                              (nvtx_fn)nvtx_register_a, (nvtx_fn)nvtx_register_w,
                              (nvtx_fn)nvtx_domain_create, (nvtx_fn)nvtx_domain_create };
    nvtx_fill(get, NVTX_MODULE_CORE, core_ids, core, sizeof core_ids / sizeof core_ids[0]);
    nvtx_fill(get, NVTX_MODULE_CORE2, core2_ids, core2, sizeof core2_ids / sizeof core2_ids[0]);
    return 1;
}

/* ---- configuration --------------------------------------------------------------------- */
static void win_init(void) {
    const char *m = getenv("TRACE_LAUNCH_WINDOW");
    if (!m || !*m) return;
    int mode = !strcmp(m, "cudaProfilerApi") ? TL_WINDOW_BY_PROFILER_API
             : !strcmp(m, "nvtx") ? TL_WINDOW_BY_NVTX
             : !strcmp(m, "launches") ? TL_WINDOW_BY_LAUNCHES : 0;
    if (!mode) {
        static const char text[] = "TRACE_LAUNCH_WINDOW is not cudaProfilerApi, nvtx or launches: no window, everything recorded";
        note_text(text, sizeof text - 1);
        return;
    }
    const char *k = getenv("TRACE_LAUNCH_WINDOW_SKIP"), *c = getenv("TRACE_LAUNCH_WINDOW_COUNT");
    const char *name = getenv("TRACE_LAUNCH_WINDOW_NAME");
    g_win_skip = k && *k ? (uint32_t)strtoul(k, NULL, 10) : 0;
    g_win_count = c && *c ? (uint32_t)strtoul(c, NULL, 10) : 1;
    if (name) {
        size_t n = s_len(name);
        g_win_name_len = (uint32_t)(n > WIN_NAME_MAX ? WIN_NAME_MAX : n);
        memcpy(g_win_name, name, g_win_name_len);
    }
    g_win_open = 0;
    g_win_mode = mode;
}
