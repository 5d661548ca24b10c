/* trace-launch shim, part 4: the buffers that pointers inside RM_CONTROL params point to
 * (issue 18). Included by tracelaunch.c (one translation unit: safe_read, r32, r64 and the
 * record roles stay static there).
 *
 * Invariants (in addition to I1..I16):
 *  I17 A params pointer is read only with safe_read (process_vm_readv, I5): a bad pointer or
 *      a count past the end of the program's memory gives a buffer whose copies failed,
 *      never a fault. The count comes from the params the caller passed, is capped at
 *      TL_PTR_MAX, and sizes the record before anything is copied; nothing here allocates.
 *  I18 The table is generated (shim/abi.h TL_PTR_ROWS from decoders/rm/ctrlparams_ext.py
 *      POINTERS): a row applies only when paramsSize equals the declared params size, so a
 *      caller with another layout is recorded as before, unfollowed.
 */

/* NvP64 + count pairs of RM_CONTROL params (issue 18): the shim copies what they point to. */
static const struct { uint32_t cmd, psize, ptr_off, count_off, count_size, fixed, elem; } ptr_rows[] = TL_PTR_ROWS;
#define PTRS_PER_CMD 3          /* most rows one command has (GET_BUILD_VERSION's three strings) */
#define PTR_PARAMS_MAX 64       /* params that hold a followed pointer are this small or smaller */

/* The buffers NvP64 fields of RM_CONTROL params point to (TL_PTR_ROWS), sized by the count
 * the params give, capped at TL_PTR_MAX. The params are read here a first time, on the stack,
 * to size the record; a NULL pointer or a zero count adds no buffer. A bad pointer adds one
 * whose copies fail (I5): recorded as unreadable, never a fault. Returns buffers added. */
struct ptrbuf { uint32_t role, size, flags, field; uintptr_t addr; };
static uint32_t follow_ptrs(uint32_t cmd, uintptr_t params, uint32_t psize, struct ptrbuf *out,
                            uint32_t *iflags) {
    uint8_t p[PTR_PARAMS_MAX];
    uint32_t n = 0; int read = 0;
    for (size_t i = 0; i < sizeof ptr_rows / sizeof ptr_rows[0] && n < PTRS_PER_CMD; i++) {
        if (ptr_rows[i].cmd != cmd || ptr_rows[i].psize != psize || psize > sizeof p) continue;
        if (!read) {
            if (!safe_read(p, params, psize)) return 0;
            read = 1; *iflags |= TL_IF_PTRS_FOLLOWED;
        }
        uint64_t count = ptr_rows[i].fixed;
        if (ptr_rows[i].count_off != ~0u) {
            uint16_t c16; memcpy(&c16, p + ptr_rows[i].count_off, 2);
            count = ptr_rows[i].count_size == 2 ? c16 : r32(p, ptr_rows[i].count_off);
        }
        uint64_t bytes = count * ptr_rows[i].elem;
        uintptr_t addr = (uintptr_t)r64(p, ptr_rows[i].ptr_off);
        if (!addr || !bytes) continue;
        uint32_t flags = 0;
        if (bytes > TL_PTR_MAX) { bytes = TL_PTR_MAX; flags |= TL_BF_TRUNCATED; }
        out[n++] = (struct ptrbuf){ TL_BUF_RM_PARAMS_POINTER, (uint32_t)bytes, flags, ptr_rows[i].ptr_off, addr };
    }
    return n;
}
