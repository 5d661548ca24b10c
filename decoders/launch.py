"""Launch reconstruction: method packets -> GPU memory image -> QMDs -> launch summaries.

Follows inline-to-memory uploads (OFFSET_OUT_UPPER/OFFSET_OUT, LINE_LENGTH_IN,
LINE_COUNT, PITCH_OUT, LAUNCH_DMA, LOAD_INLINE_DATA) of the compute and I2M classes
and copy-engine transfers whose source bytes are known, into a sparse GPU VA image.
A QMD is found from SEND_PCAS_A (VA >> 8), from an inline QMD load
(SET_INLINE_QMD_ADDRESS_A/B + LOAD_INLINE_QMD_DATA(i)), or from a DEPENDENT_QMDn_POINTER.
Facts used: h100-measured.md section 1 (launch order, cbank0 layout, +1 KiB shared
memory, cluster QMDs); hw-facts.md sections 3, 4, 5.
"""
import struct

from decoders.errors import DecodeError
from decoders.fields import join_u64, shifted
from decoders.gpfifo import segment_lengths
from decoders.methods import class_info
from decoders.node import Node
from decoders.pushbuf import INC, NON_INC, ONE_INC, IMMD, HOST_METHOD_LIMIT
from decoders import qmd as qmdmod

PAGE = 4096

# Kernel-parameter base in constant bank 0 and the driver-region fields a source names.
# hw-facts.md 5.1 ([ptxas]: EIATTR_PARAM_CBANK, ntid/nctaid/stack-pointer/descriptor
# immediates); h100-measured.md 1 (blockDim at +0x0, gridDim at +0xC on the H100).
ARCH_CBANK0 = {
    "sm_70-89": {"param_base": 0x160, "fields": (
        ("blockDim.x", 0x0, 4), ("blockDim.y", 0x4, 4), ("blockDim.z", 0x8, 4),
        ("gridDim.x", 0xC, 4), ("gridDim.y", 0x10, 4), ("gridDim.z", 0x14, 4),
        ("stack_pointer_init", 0x28, 4), ("global_memory_descriptor", 0x118, 8))},
    "sm_90": {"param_base": 0x210, "fields": (
        ("blockDim.x", 0x0, 4), ("blockDim.y", 0x4, 4), ("blockDim.z", 0x8, 4),
        ("gridDim.x", 0xC, 4), ("gridDim.y", 0x10, 4), ("gridDim.z", 0x14, 4),
        ("stack_pointer_init", 0x28, 4), ("global_memory_descriptor", 0x208, 8))},
    "sm_100+": {"param_base": 0x380, "fields": (
        ("blockDim.x", 0x360, 4), ("blockDim.y", 0x364, 4), ("blockDim.z", 0x368, 4),
        ("gridDim.x", 0x370, 4), ("gridDim.y", 0x374, 4), ("gridDim.z", 0x378, 4),
        ("stack_pointer_init", 0x37C, 4), ("global_memory_descriptor", 0x358, 8))},
}
FAMILY_ARCH = {"ampere": "sm_70-89", "ada": "sm_70-89", "hopper": "sm_90",
               "blackwell": "sm_100+"}
# How the driver turns a launch's shared memory into SHARED_MEMORY_SIZE, measured on the
# H100 (captures/smem-sweep, 61 launches; docs/shared-memory.md): the 1 KiB the driver
# reserves per block, plus static + dynamic bytes rounded up to 128-byte granules.
# Not measured on other families (no rounding is assumed there).
DRIVER_SMEM_RESERVED = {"hopper": 1024}
SMEM_GRANULE = {"hopper": 128}
_FAMILY_OF_MAJOR = {8: "ampere", 9: "hopper", 10: "blackwell", 12: "blackwell"}


def family_of_sm(sm):
    """The GPU family of a compute capability written as 90 (9.0), 89, 100..."""
    return _FAMILY_OF_MAJOR.get(sm // 10, "hopper")
QMD_TYPE_NAMES = {0: "QUEUE", 1: "GRID_NULL", 2: "GRID_CTA", 3: "GRID_GPC_CGA",
                  4: "GRID_GPU_CGA", 5: "GRID_GPU_GPC_CGA"}
# A hostile capture's dependent pointers may form long chains or loops: each QMD is walked
# once per submission (LaunchDecoder._this_submission), and a walk stops after this many.
MAX_DEPENDENT_CHAIN = 4096


_ONES = memoryview(b"\x01" * PAGE)      # "known" marks for up to a page, sliced without a copy


class SparseMemory:
    """GPU VA -> bytes, as far as the stream wrote them (4 KiB pages + known-byte map).

    The last few writes are also kept whole (`RECENT`, none overlapping another: a write
    drops the ones it overlaps), so a read inside one of them is a slice: a QMD or
    constant bank is read right after the upload that wrote it.
    A page is a pair of memoryviews over its bytearrays (data, known): a memoryview takes
    a same-size slice assignment ~3x faster than a bytearray, and reads copy only once."""

    RECENT = 4

    def __init__(self):
        self._pages = {}      # page number -> (data, known): memoryviews of bytearray(PAGE)
        self._recent = []     # [(va, end, bytes)], oldest first, pairwise disjoint
        self.writes = 0       # writes so far, and the last one that started at each VA:
        self.starts = {}      # a QMD sent twice with no upload between runs once
        self.tag = None       # the SUBMISSION record being fed (set by LaunchDecoder)
        self.written_by = {}  # VA -> tag of the last write that started there

    def _page(self, page):
        entry = self._pages[page] = (memoryview(bytearray(PAGE)), memoryview(bytearray(PAGE)))
        return entry

    def write(self, va, data):
        n = len(data)
        if not n:
            return
        self.writes += 1
        starts = self.starts
        if len(starts) > 65536:         # bounded whatever a capture holds
            starts.clear()
            self.written_by.clear()
        starts[va] = self.writes
        self.written_by[va] = self.tag
        if data.__class__ is not bytes:
            data = bytes(data)
        page, off = divmod(va, PAGE)
        stop = off + n
        if stop <= PAGE:                        # within one page (a QMD, a constant bank)
            entry = self._pages.get(page)
            if entry is None:
                entry = self._page(page)
            entry[0][off:stop] = data
            entry[1][off:stop] = _ONES[:n]
        else:
            pos = 0
            while pos < n:
                page, off = divmod(va + pos, PAGE)
                chunk = min(n - pos, PAGE - off)
                entry = self._pages.get(page)
                if entry is None:
                    entry = self._page(page)
                entry[0][off:off + chunk] = data[pos:pos + chunk]
                entry[1][off:off + chunk] = _ONES[:chunk]
                pos += chunk
        end = va + n
        recent = self._recent
        for start, last, _ in recent:
            if start < end and va < last:       # overlapped: no longer the latest bytes
                recent = self._recent = [r for r in recent if r[1] <= va or r[0] >= end]
                break
        recent.append((va, end, data))
        if len(recent) > self.RECENT:
            del recent[0]

    def _cached(self, va, n):
        """The n bytes at va from one recent write that holds them all, else None."""
        if n <= 0:
            return None
        for start, end, data in self._recent:
            if start <= va and va + n <= end:
                return data[va - start:va - start + n]
        return None

    def read(self, va, n):
        """The n bytes at va if every one is known, else None."""
        data = self.read_known(va, n)
        return data if len(data) == max(n, 0) else None

    def read_known(self, va, limit):
        """The known bytes from va onward, up to the first unknown byte or `limit` bytes."""
        if limit > 0:                           # _cached(), inline
            stop = va + limit
            for start, end, data in self._recent:
                if start <= va and stop <= end:
                    return data[va - start:stop - start]
        page, off = divmod(va, PAGE)
        if 0 < limit <= PAGE - off:             # within one page: one slice
            entry = self._pages.get(page)
            if entry is None:
                return b""
            stop = entry[1].obj.find(0, off, off + limit)
            return bytes(entry[0][off:off + limit if stop == -1 else stop])
        out = bytearray()
        pos = 0
        while pos < limit:
            page, off = divmod(va + pos, PAGE)
            chunk = min(limit - pos, PAGE - off)
            entry = self._pages.get(page)
            if entry is None:
                break
            stop = entry[1].obj.find(0, off, off + chunk)
            if stop == -1:
                out += entry[0][off:off + chunk]
                pos += chunk
                continue
            out += entry[0][off:stop]
            break
        return bytes(out)

    def holds(self, va, n, prefix):
        """Whether the n bytes at va are all known and start with `prefix` (n >= its
        length), compared where they lie; False also where they cross a page."""
        page, off = divmod(va, PAGE)
        if off + n > PAGE:
            return False
        entry = self._pages.get(page)
        return entry is not None and entry[1].obj.find(0, off, off + n) == -1 and \
            entry[0].obj.startswith(prefix, off)

    def known(self, va, n):
        return self.read(va, n) is not None

    def __len__(self):
        return sum(e[1].obj.count(1) for e in self._pages.values())


class Launch:
    """One decoded QMD: .summary (dict) and .node (Node tree, built on first use).

    summary["qmd_fields"] (every field of the QMD) and .fields are computed on first
    access from the QMD bytes: the summary's other keys need only ~90 of the ~200 fields.
    summary["cbank0_driver"] likewise, from the driver constants' bytes (`driver`: the
    key of driver_constants()): nothing reads it while decoding, and a spilled launch
    keeps 528 bytes instead of a dict holding their hex.
    While decoding, the summary holds the remembered QMD parts themselves (grid, grid_raw,
    cluster, block, constant_buffers, the releases' semaphore fields: _SummaryPlan, shared
    by every launch whose words hold the same values; the fields of a semaphore method:
    _method_fields, per value; read, never changed); the first read
    of .summary gives it its own copies, so each summary handed out has its own lists and
    dicts (and a spilled batch marshals one copy of each shared part).
    The dict handed out is the same either way (same keys, same order, same values).
    decode_submissions() also sets where it came from: .record_index (capture record),
    .submission_index (n-th submission fed), .channel (work-submit token), .pid, .hChannel.
    """
    __slots__ = ("_summary", "qmd_bytes", "_fields", "version", "_node", "_words", "_driver",
                 "_own", "record_index", "submission_index", "channel", "pid", "hChannel")

    def __init__(self, summary, qmd_bytes, fields, version, words=None, driver=None):
        self._summary = summary
        self.qmd_bytes = qmd_bytes
        self._fields = fields
        self.version = version
        self._words = words
        self._driver = driver
        self._own = False           # the summary's parts not copied yet (see above)
        self._node = None
        self.record_index = self.submission_index = self.channel = None
        self.pid = self.hChannel = None

    @property
    def fields(self):
        """{field: value} for every field of the QMD's version."""
        if self._fields is None:
            words = self._words if self._words is not None else qmdmod.padded_words(
                self.qmd_bytes, self.version)
            self._fields = qmdmod.extract_words(words, self.version)
        return self._fields

    @property
    def summary(self):
        s = self._summary
        if not self._own:
            _own_parts(s)
            self._own = True
        if s["qmd_fields"] is None:
            s["qmd_fields"] = self.fields
        if self._driver is not None:
            s["cbank0_driver"] = driver_constants(*self._driver)
            self._driver = None
        return s

    def view(self, qmd_fields=None):
        """The summary to read, not change: the same keys, order and values as .summary, but
        its parts may be shared with other launches' (nothing is copied), and `qmd_fields`,
        when given, stands in for every field of the QMD (a renderer that already has their
        text for these QMD bytes need not extract them again)."""
        if self._own:
            s = self._summary
            return s if qmd_fields is None else dict(s, qmd_fields=qmd_fields)
        s = dict(self._summary)
        s["qmd_fields"] = qmd_fields if qmd_fields is not None else \
            (s["qmd_fields"] if s["qmd_fields"] is not None else self.fields)
        if self._driver is not None:
            s["cbank0_driver"] = driver_constants(*self._driver)
        return s

    @property
    def kernel(self):
        """True for a QMD that runs a program; False for the GRID_NULL QMD the H100 driver
        schedules before each kernel's own QMD (captures/builtin-vadd, record 790)."""
        return self._summary["kernel"]

    @property
    def node(self):
        if self._node is None:
            self._node = build_node(self)
        return self._node


def _own_parts(s):
    """Give a summary its own copies of the parts it may share with other launches'."""
    for key in ("grid", "grid_raw", "cluster", "block"):
        if s[key] is not None:
            s[key] = list(s[key])
    s["constant_buffers"] = [dict(cb) for cb in s["constant_buffers"]]
    for sem in s["semaphores"]:
        if isinstance(sem, dict) and "fields" in sem:
            sem["fields"] = dict(sem["fields"])
    s["dependents"] = [dict(d) for d in s["dependents"]]
    r = s.get("resolved")
    if r is not None:           # its constant bank list: one per tree state (session)
        r["constant_buffers"] = list(r["constant_buffers"])
    call = s.get("api_call")
    if call is not None:        # one per API call, shared by its launches (ApiCall.api_call_json)
        from decoders.cuda.calls import own_launch_config
        own = dict(call, launch=own_launch_config(call["launch"]))
        s["api_call"] = own
        a = s.get("attribution")
        if a is not None and a.get("api_call") is call:
            a["api_call"] = own
    a = s.get("attribution")
    if a is not None and a.get("kernel") is not None:      # one per kernel (Attribution)
        a["kernel"] = dict(a["kernel"])


_DATA_FORMS = frozenset((INC, NON_INC, ONE_INC, IMMD))
# LINE_LENGTH_IN, LINE_COUNT, OFFSET_OUT_UPPER, OFFSET_OUT, PITCH_OUT (hw-facts.md 3.1)
_I2M_REGS = {0x180: "line_length", 0x184: "line_count", 0x188: "upper", 0x18C: "lower",
             0x190: "pitch"}
_I2M_ORDER = tuple(_I2M_REGS.values())


def _reg_positions(regs):
    """((register name, word index), ...) written in order -> the word index of each
    register's last write in _I2M_ORDER (None: not written): the same final registers."""
    last = dict(regs)
    return tuple(last.get(name) for name in _I2M_ORDER)


class _I2M:
    __slots__ = ("line_length", "line_count", "upper", "lower", "pitch", "dst", "need",
                 "buf", "layout_pitch", "sem_upper", "sem_lower", "sem_payload")

    def __init__(self):
        self.line_length = self.line_count = self.upper = self.lower = self.pitch = 0
        self.dst = None
        self.need = 0
        self.buf = bytearray()
        self.layout_pitch = True
        self.sem_upper = self.sem_lower = self.sem_payload = 0


class _Channel:
    def __init__(self):
        self.i2m = {}
        self.copy = {}
        self.inline_upper = 0
        self.inline_lower = 0
        self.inline_size = 256
        self.inline_words = {}
        self.report = [0, 0, 0]            # SET_REPORT_SEMAPHORE_A/B/C
        self.report2 = [0, 0, 0, 0]        # PAYLOAD_LOWER/UPPER, ADDRESS_LOWER/UPPER (0x158..)
        self.host_sem = [0, 0, 0, 0]       # SEM_ADDR_LO/HI, SEM_PAYLOAD_LO/HI
        self.last_launch = None


class _ClassPlan:
    """Per class, resolved once: its engine, family, and method -> handler for the methods
    launch reconstruction reads (every other method is skipped by one dict miss)."""
    __slots__ = ("class_id", "engine", "family", "handlers", "default", "inline", "calls")

    def __init__(self, dec, class_id):
        info = class_info(class_id) if class_id is not None else None
        self.class_id = class_id
        self.engine = engine = info.engine if info is not None else None
        self.family = info.arch if info is not None else dec.gpu
        h = {m: dec._host for m in (0x5C, 0x60, 0x64, 0x68, 0x6C)}
        self.default = None
        self.inline = engine in ("compute", "i2m")
        if self.inline:
            for m in (0x180, 0x184, 0x188, 0x18C, 0x190):
                h[m] = dec._i2m_register
            h[0x1B0] = dec._i2m_launch_dma
            h[0x1B4] = dec._inline_word
            for m in (0x1DC, 0x1E0, 0x1E4):
                h[m] = dec._i2m_semaphore
        if engine == "compute":
            h[0x2B4] = dec._send_pcas
            h[0x318] = dec._inline_qmd_upper
            h[0x31C] = dec._inline_qmd_lower
            for m in (0x158, 0x15C, 0x160, 0x164):
                h[m] = dec._report2_register
            h[0x168] = dec._report2_execute
            for m in (0x1B00, 0x1B04, 0x1B08):
                h[m] = dec._report_register
            h[0x1B0C] = dec._report_execute
            for m in range(0x320, 0x500, 4):
                h[m] = dec._inline_qmd_word
            for m in range(0x3800, 0x3C00, 8):      # CALL_MME_MACRO(j)
                h[m] = dec._mme_call
        elif engine == "copy":
            self.default = dec._copy
        self.handlers = h
        self.calls = {}

    CALLS = 4096        # remembered packet shapes per class before starting over

    def calls_for(self, form, method, count):
        """The handler calls of a data packet, remembered per (form, first method, word
        count): ((handler, method, data index), ...) in data order. INC steps the method
        by 4 per word, ONE_INC once after the first word, NON_INC and IMMD never; a method
        with no handler is skipped (host methods only through their own handlers)."""
        handlers, default = self.handlers, self.default
        out = []
        for k in range(count):
            if form == INC:
                m = method + 4 * k
            elif form == ONE_INC:
                m = method + 4 if k else method
            else:
                m = method
            h = handlers.get(m)
            if h is None and default is not None and m >= HOST_METHOD_LIMIT:
                h = default
            if h is not None:
                out.append((h, m, k))
        out = tuple(out)
        if len(self.calls) >= self.CALLS:
            self.calls.clear()
        self.calls[(form, method, count)] = out
        return out


class LaunchDecoder:
    """Feed method packets (decoders.pushbuf) per channel; collect .launches."""

    def __init__(self, gpu="hopper", memory_lookup=None):
        self.gpu = gpu
        self.memory = SparseMemory()
        self.memory_lookup = memory_lookup
        self.launches = []
        self.problems = []
        self.copies = []
        self._channels = {}
        self._launched = {}
        # QMD VA -> bytes launched in the submission being fed (begin_submission): a CUDA
        # graph replay reaches each node once, however many paths lead to it
        self._this_submission = {}
        self._walk = []         # (launch, dependent targets, depth) still to follow
        # dst VA -> bytes of the last inline (I2M) upload that started there: the size of
        # a kernel's argument block is the size of the upload to cbank0 + param base.
        self._uploads = {}
        self._plans = {}
        self._programs = {}     # feed_raw template key -> planned handler calls
        self._compiled = {}     # feed_template key -> word-level ops (_compile)
        # Inline transfers whose data the stream does not carry (supplied on the GPU by an
        # MME macro): {"offset", "dst", "size", "why"}. Not problems: the capture is whole.
        self.unreconstructed = []

    def begin_submission(self, record_index=None):
        self._this_submission = {}
        self.memory.tag = record_index

    # -- memory -------------------------------------------------------------------
    def read(self, va, n):
        data = self.memory.read(va, n)
        if data is None and self.memory_lookup is not None:
            data = self.memory_lookup(va, n)
            if data is not None and len(data) < n:
                data = None
        return data

    # -- stream -------------------------------------------------------------------
    def feed_methods(self, methods, channel=None):
        """Feed Packet objects (decoders.pushbuf); returns .launches."""
        return self.feed_raw([(p.offset, p.va, p.form, p.subchannel, p.method, p.data,
                               p.class_id, p.host_class) for p in methods], channel)

    def feed_raw(self, methods, channel=None, template=None):
        """Feed StreamDecoder.feed_raw() tuples (a packet's offset, va, form, subchannel,
        method, data, class id, host class: the first 8 RAW_* items); returns .launches.
        Handlers get the tuple where they name the packet (`pkt` below).

        template: a hashable key that is equal only for packet lists of the same shape
        (form, method, word count and class of every packet), e.g. (the StreamDecoder's
        replayed template, its binding): the handler calls are then planned once per key
        (_program) and the packets no handler reads are not looked at again."""
        ch = self._channels.get(channel)
        if ch is None:
            ch = self._channels[channel] = _Channel()
        if template is not None:
            prog = self._programs.get(template)
            if prog is None:
                prog = self._program(methods, template)
            self._run(ch, methods, prog)
            return self.launches
        self._run(ch, methods, self._plan(methods))
        return self.launches

    PROGRAMS = 4096         # remembered packet-list shapes before starting over

    def feed_template(self, channel, tpl, binding, host, words, data, base, va):
        """feed_raw(tpl.replay(words, base, va, dict(binding), host), channel) without the
        packets: a segment that replays a pushbuffer template (decoders.pushbuf
        StreamDecoder.feed_raw(packets=False)) runs the handler calls planned for that
        (template, binding, host class) as word-level ops (_compile), which read the data
        words (and the inline bytes from `data`, the segment's bytes) where they lie.
        binding: tuple(StreamDecoder.binding.items())."""
        ch = self._channels.get(channel)
        if ch is None:
            ch = self._channels[channel] = _Channel()
        key = (tpl, binding, host)
        prog = self._compiled.get(key)
        if prog is None:
            prog = self._compile(key, words, base, va)
        for op in prog:
            op[0](ch, words, data, base, va, op)
        return self.launches

    def _compile(self, key, words, base, va):
        """The ops of feed_template for one key, from _plan of the packets the template
        replays: per handler call one op (op[0](ch, words, data, base, va, op)); a handler
        with no word-level form gets its packet tuple rebuilt as replay() builds it.
        I2M register writes in a row are one op, and a run of them with the LAUNCH_DMA and
        the NON_INC LOAD_INLINE_DATA after it, on one subchannel, one upload op."""
        tpl, binding, host = key
        bound = dict(binding)
        words = tuple(words)        # a memoryview over the segment (StreamDecoder.feed_raw)
        ops = []
        for i, h, m, k, plan in self._plan(tpl.replay(words, base, va, bound, host)):
            rel, form, subch, method, data, is_bound, w, expected = tpl.packets[i]
            j = data.start + k if k is not None and data.__class__ is slice else None
            last = ops[-1] if ops else None
            if h is None:
                op = (self._w_inline, subch, 4 * data.start, 4 * data.stop, rel)
                if last is not None and last[0] == self._w_i2m_dma and last[1] == subch:
                    ops[-1] = (self._w_upload, subch, _reg_positions(last[2]), last[3],
                               last[4], last[5], op[2], op[3], rel, _i2m_launch_fields(last[5]))
                    continue
            elif j is not None and h == self._i2m_register:
                reg = (_I2M_REGS[m], j)
                if last is not None and last[0] == self._w_i2m_regs and last[1] == subch:
                    ops[-1] = (self._w_i2m_regs, subch, last[2] + (reg,))
                    continue
                op = (self._w_i2m_regs, subch, (reg,))
            elif j is not None and h == self._i2m_launch_dma:
                cls = plan.class_id
                op = (self._w_i2m_dma, subch, (), j, rel, cls)
                if last is not None and last[0] == self._w_i2m_regs and last[1] == subch:
                    op = (self._w_i2m_dma, subch, last[2], j, rel, cls)
                    ops[-1] = op
                    continue
            elif j is not None and h == self._send_pcas:
                op = (self._w_send_pcas, j, rel, plan)
            elif j is not None and h == self._host and 0x5C <= m <= 0x68:
                reg = ((m - 0x5C) // 4, j)
                if last is not None and last[0] == self._w_host_regs:
                    ops[-1] = (self._w_host_regs, last[1] + (reg,))
                    continue
                op = (self._w_host_regs, (reg,))
            elif j is not None and h == self._report_register:
                reg = ((m - 0x1B00) // 4, j)
                if last is not None and last[0] == self._w_report_regs:
                    ops[-1] = (self._w_report_regs, last[1] + (reg,))
                    continue
                op = (self._w_report_regs, (reg,))
            elif j is not None and h == self._report_execute:
                cls = bound.get(subch, (None, True))[0] if is_bound else None
                op = (self._w_report_execute, j, rel, cls)
            elif j is not None and h == self._host and m == 0x6C:
                op = (self._w_host_execute, j, rel, host)
            else:
                cls, assumed = bound.get(subch, (None, True)) if is_bound else (None, False)
                op = (self._w_call, h, m, k, plan, (rel, form, subch, method, data, cls, host,
                                                     assumed, w, expected))
            ops.append(op)
        ops = tuple(ops)
        if len(self._compiled) >= self.PROGRAMS:
            self._compiled.clear()
        self._compiled[key] = ops
        return ops

    # -- word-level ops (feed_template): the same calls as the handlers they stand for ----
    def _w_call(self, ch, words, data, base, va, op):
        _, h, m, k, plan, (rel, form, subch, method, pdata, cls, host, assumed, w, expected) = op
        if pdata.__class__ is slice:
            pdata = tuple(words[pdata])
        pkt = (base + rel, va + rel if va is not None else None, form, subch, method, pdata,
               cls, host, assumed, w, expected, False)
        if k is None:
            self._inline_data(ch, subch, _payload(pdata), pkt)
        else:
            h(ch, pkt, m, pdata[k], plan)

    def _w_i2m_regs(self, ch, words, data, base, va, op):
        st = ch.i2m.get(op[1])
        if st is None:
            st = self._i2m_state(ch, op[1])
        for name, j in op[2]:
            setattr(st, name, words[j])

    def _w_i2m_dma(self, ch, words, data, base, va, op):
        _, subch, regs, j, rel, cls = op
        st = ch.i2m.get(subch)
        if st is None:
            st = self._i2m_state(ch, subch)
        for name, r in regs:
            setattr(st, name, words[r])
        self._i2m_launch(ch, st, words[j], cls, (base + rel, va + rel if va is not None else None))

    def _w_inline(self, ch, words, data, base, va, op):
        _, subch, a, b, rel = op
        self._inline_data(ch, subch, data[a:b], (base + rel, va + rel if va is not None else None))

    def _w_upload(self, ch, words, data, base, va, op):
        _, subch, (jl, jc, ju, jo, jp), j, rel, cls, a, b, data_rel, launch_fields = op
        st = ch.i2m.get(subch)
        if st is None:
            st = self._i2m_state(ch, subch)
        if jl is not None:
            st.line_length = words[jl]
        if jc is not None:
            st.line_count = words[jc]
        if ju is not None:
            st.upper = words[ju]
        if jo is not None:
            st.lower = words[jo]
        if jp is not None:
            st.pitch = words[jp]
        value = words[j]
        layout, completion = launch_fields(value)
        need = st.line_length * st.line_count
        if layout == 1 and completion != 2 and not st.need and 0 < need <= b - a < need + 4 \
                and (st.line_count <= 1 or st.pitch in (0, st.line_length)):
            # The usual upload (one pitch line, all its data in this packet, nothing else
            # open): what _i2m_launch + _inline_data + _i2m_write do here, in one step.
            st.layout_pitch = True
            st.dst = dst = join_u64(st.lower, st.upper)
            st.need = 0
            if st.buf:
                st.buf = bytearray()
            self._uploads[dst] = need
            self.memory.write(dst, data[a:a + need])
            return
        self._i2m_launch(ch, st, value, cls, (base + rel, va + rel if va is not None else None))
        self._inline_data(ch, subch, data[a:b],
                          (base + data_rel, va + data_rel if va is not None else None))

    def _w_send_pcas(self, ch, words, data, base, va, op):
        _, j, rel, plan = op
        self._launch_at(ch, shifted(words[j], 8), "SEND_PCAS_A",
                        (base + rel, va + rel if va is not None else None), plan)

    def _w_host_regs(self, ch, words, data, base, va, op):
        sem = ch.host_sem
        for n, j in op[1]:
            sem[n] = words[j]

    def _w_report_regs(self, ch, words, data, base, va, op):
        report = ch.report
        for n, j in op[1]:
            report[n] = words[j]

    def _w_report_execute(self, ch, words, data, base, va, op):
        # _report_execute without the packet tuple: it reads the offset and class only
        _, j, rel, cls = op
        hi, lo, payload = ch.report
        self._semaphore(ch, {"source": "SET_REPORT_SEMAPHORE", "address": join_u64(lo, hi),
                             "payload": payload, "fields": _method_fields(cls, 0x1B0C, words[j]),
                             "offset": base + rel})

    def _w_host_execute(self, ch, words, data, base, va, op):
        # _host's SEM_EXECUTE without the packet tuple (the offset and host class)
        _, j, rel, host = op
        lo, hi, plo, phi = ch.host_sem
        self._semaphore(ch, {
            "source": "host.SEM_EXECUTE", "address": join_u64(lo, hi), "payload": join_u64(plo, phi),
            "fields": _method_fields(host, 0x6C, words[j]), "offset": base + rel})

    def _run(self, ch, methods, prog):
        for i, h, m, k, plan in prog:
            pkt = methods[i]
            if k is None:
                self._inline_data(ch, pkt[3], _payload(pkt[5]), pkt)
            else:
                h(ch, pkt, m, pkt[5][k], plan)

    def _program(self, methods, key):
        """_plan(methods), remembered under `key` (at most PROGRAMS of them)."""
        out = self._plan(methods)
        if len(self._programs) >= self.PROGRAMS:
            self._programs.clear()
        self._programs[key] = out
        return out

    def _plan(self, methods):
        """The handler calls feed_raw() makes for these packets, in order:
        ((packet index, handler, method, data index, plan), ...); data index None for
        LOAD_INLINE_DATA sent NON_INC (the packet's data as bytes)."""
        plans = self._plans
        out = []
        for i, pkt in enumerate(methods):
            data = pkt[5]
            if not data:
                continue
            form = pkt[2]
            if form not in _DATA_FORMS:
                continue
            cls = pkt[6]
            plan = plans.get(cls)
            if plan is None:
                plan = plans[cls] = _ClassPlan(self, cls)
            m = pkt[4]
            if form == NON_INC and m == 0x1B4 and plan.inline:
                out.append((i, None, m, None, plan))
                continue
            calls = plan.calls.get((form, m, len(data)))
            if calls is None:
                calls = plan.calls_for(form, m, len(data))
            out.extend((i, h, method, k, plan) for h, method, k in calls)
        return tuple(out)

    def _host(self, ch, pkt, method, value, plan):
        if 0x5C <= method <= 0x68:
            ch.host_sem[(method - 0x5C) // 4] = value
        elif method == 0x6C:
            lo, hi, plo, phi = ch.host_sem
            self._semaphore(ch, {
                "source": "host.SEM_EXECUTE", "address": join_u64(lo, hi), "payload": join_u64(plo, phi),
                "fields": _method_fields(pkt[7], 0x6C, value), "offset": pkt[0]})

    # -- compute / I2M methods, one handler each (_ClassPlan) ------------------------
    @staticmethod
    def _i2m_state(ch, subch):
        st = ch.i2m.get(subch)
        if st is None:
            st = ch.i2m[subch] = _I2M()
        return st

    def _i2m_register(self, ch, pkt, method, value, plan):
        # LINE_LENGTH_IN, LINE_COUNT, OFFSET_OUT_UPPER, OFFSET_OUT, PITCH_OUT
        st = ch.i2m.get(pkt[3])
        if st is None:
            st = self._i2m_state(ch, pkt[3])
        setattr(st, _I2M_REGS[method], value)

    def _i2m_launch_dma(self, ch, pkt, method, value, plan):
        self._i2m_launch(ch, self._i2m_state(ch, pkt[3]), value, pkt[6], pkt)

    def _inline_word(self, ch, pkt, method, value, plan):
        # LOAD_INLINE_DATA sent as INC/ONE_INC/IMMD: one word at a time
        self._inline_data(ch, pkt[3], value.to_bytes(4, "little"), pkt)

    def _i2m_semaphore(self, ch, pkt, method, value, plan):
        st = self._i2m_state(ch, pkt[3])
        if method == 0x1DC:
            st.sem_upper = value
        elif method == 0x1E0:
            st.sem_lower = value
        else:
            st.sem_payload = value

    def _send_pcas(self, ch, pkt, method, value, plan):
        self._launch_at(ch, shifted(value, 8), "SEND_PCAS_A", pkt, plan)

    def _inline_qmd_upper(self, ch, pkt, method, value, plan):
        table = _class_table(pkt[6])
        mdef = table.get(0x318)
        names = {f.name for f in mdef.fields}
        ch.inline_upper = mdef.table.get((value,), "QMD_ADDRESS_SHIFTED8_UPPER")
        if "INLINE_SIZE" in names:
            ch.inline_size = 384 if mdef.table.get((value,), "INLINE_SIZE") else 256
        else:
            ch.inline_size = 256
        ch.inline_words = {}

    def _inline_qmd_lower(self, ch, pkt, method, value, plan):
        ch.inline_lower = value
        ch.inline_words = {}

    def _inline_qmd_word(self, ch, pkt, method, value, plan):
        index = (method - 0x320) // 4
        ch.inline_words[index] = value
        nwords = ch.inline_size // 4
        if len(ch.inline_words) == nwords and all(k < nwords for k in ch.inline_words):
            data = b"".join(ch.inline_words[k].to_bytes(4, "little") for k in range(nwords))
            va = shifted(join_u64(ch.inline_lower, ch.inline_upper), 8)
            self.memory.write(va, data)
            ch.inline_words = {}
            self._launch_at(ch, va, "LOAD_INLINE_QMD_DATA", pkt, plan, data=data)

    def _report2_register(self, ch, pkt, method, value, plan):
        ch.report2[(method - 0x158) // 4] = value

    def _report2_execute(self, ch, pkt, method, value, plan):
        plo, phi, alo, ahi = ch.report2
        self._semaphore(ch, {"source": "REPORT_SEMAPHORE_EXECUTE", "address": join_u64(alo, ahi),
                             "payload": join_u64(plo, phi),
                             "fields": _method_fields(pkt[6], 0x168, value),
                             "offset": pkt[0]})

    def _report_register(self, ch, pkt, method, value, plan):
        ch.report[(method - 0x1B00) // 4] = value

    def _report_execute(self, ch, pkt, method, value, plan):
        hi, lo, payload = ch.report
        self._semaphore(ch, {"source": "SET_REPORT_SEMAPHORE", "address": join_u64(lo, hi),
                             "payload": payload,
                             "fields": _method_fields(pkt[6], 0x1B0C, value),
                             "offset": pkt[0]})

    def _mme_call(self, ch, pkt, method, value, plan):
        """CALL_MME_MACRO(j) while an inline transfer waits for data: the macro (uploaded
        earlier through LOAD_MME_INSTRUCTION_RAM, not emulated here) supplies it
        (captures/torch-small record 816: LINE_LENGTH_IN 1, LAUNCH_DMA, CALL_MME_MACRO(0)
        = 1, no LOAD_INLINE_DATA). The bytes at dst stay unknown."""
        st = ch.i2m.get(pkt[3])
        if st is not None and st.need:
            self.unreconstructed.append({
                "offset": pkt[0], "dst": st.dst, "size": st.need,
                "why": f"data supplied by CALL_MME_MACRO({(method - 0x3800) // 8})"})
            st.need = 0
            st.buf = bytearray()
            st.dst = None

    def _i2m_launch(self, ch, st, value, cls, pkt):
        # LAUNCH_DMA fields through the class table (DST_MEMORY_LAYOUT 0:0, COMPLETION_TYPE 5:4).
        # pkt here and below: anything whose [0] and [1] are the packet's offset and VA.
        layout, completion = _i2m_launch_fields(cls)(value)
        if st.need:
            self.problems.append(_problem(pkt, f"LAUNCH_DMA while {st.need} byte(s) of the "
                                               f"previous inline transfer were still expected"))
        st.layout_pitch = layout == 1
        st.dst = join_u64(st.lower, st.upper)
        st.need = st.line_length * st.line_count
        st.buf = bytearray()
        if completion == 2:
            self._semaphore(ch, {"source": "I2M LAUNCH_DMA", "address": join_u64(st.sem_lower, st.sem_upper),
                                 "payload": st.sem_payload, "offset": pkt[0]})
        if st.need == 0:
            st.dst = None

    def _inline_data(self, ch, subch, data, pkt):
        st = ch.i2m.get(subch)
        if st is None or not st.need:
            self.problems.append(_problem(pkt, f"LOAD_INLINE_DATA of {len(data)} byte(s) with no "
                                               f"inline transfer open"))
            return
        if not st.buf and len(data) >= st.need:
            # The whole transfer in one packet (the H100 driver's form): no copy.
            extra = len(data) - st.need
            if extra >= 4:
                self.problems.append(_problem(pkt, f"{extra} byte(s) of LOAD_INLINE_DATA beyond "
                                                   f"LINE_LENGTH_IN x LINE_COUNT"))
            self._i2m_write(st, data if not extra else data[:st.need], pkt)
            st.need = 0
            return
        st.buf += data
        if len(st.buf) >= st.need:
            extra = len(st.buf) - st.need
            if extra >= 4:
                self.problems.append(_problem(pkt, f"{extra} byte(s) of LOAD_INLINE_DATA beyond "
                                                   f"LINE_LENGTH_IN x LINE_COUNT"))
            self._i2m_write(st, bytes(st.buf[:st.need]), pkt)
            st.need = 0
            st.buf = bytearray()

    def _i2m_write(self, st, data, pkt):
        if not st.layout_pitch:
            self.problems.append(_problem(pkt, f"block-linear inline transfer to {st.dst:#x} "
                                               f"not reconstructed"))
            return
        self._uploads[st.dst] = len(data)
        if st.line_count <= 1 or st.pitch in (0, st.line_length):
            self.memory.write(st.dst, data)
            return
        for k in range(st.line_count):
            line = data[k * st.line_length:(k + 1) * st.line_length]
            self.memory.write(st.dst + k * st.pitch, line)

    def _copy(self, ch, pkt, method, value, plan=None):
        st = ch.copy.get(pkt[3])
        if st is None:
            st = ch.copy[pkt[3]] = {}
        if method != 0x300:
            st[method] = value
            return
        mdef = _class_table(pkt[6]).get(0x300)
        f = {n: v for n, v, d in mdef.decode(value)}
        if f["SEMAPHORE_TYPE"]:
            self._semaphore(ch, {
                "source": "copy LAUNCH_DMA",
                "address": join_u64(st.get(0x244, 0), st.get(0x240, 0)),
                "payload": join_u64(st.get(0x248, 0), st.get(0x24C, 0)) if f["SEMAPHORE_PAYLOAD_SIZE"]
                else st.get(0x248, 0),
                "fields": {"SEMAPHORE_TYPE": mdef.table.render("SEMAPHORE_TYPE", f["SEMAPHORE_TYPE"])},
                "offset": pkt[0]})
        if not f["DATA_TRANSFER_TYPE"]:
            return
        src = join_u64(st.get(0x404, 0), st.get(0x400, 0))
        dst = join_u64(st.get(0x40C, 0), st.get(0x408, 0))
        length = st.get(0x418, 0)
        lines = st.get(0x41C, 1) if f["MULTI_LINE_ENABLE"] else 1
        rec = {"src": src, "dst": dst, "line_length": length, "line_count": lines,
               "offset": pkt[0], "reconstructed": False}
        self.copies.append(rec)
        if f["SRC_TYPE"] or f["DST_TYPE"] or not (f["SRC_MEMORY_LAYOUT"] and f["DST_MEMORY_LAYOUT"]):
            rec["why"] = "physical or block-linear transfer"
            return
        pitch_in = st.get(0x410, length) or length
        pitch_out = st.get(0x414, length) or length
        for k in range(lines):
            data = self.memory.read(src + k * pitch_in, length)
            if data is None:
                rec["why"] = "source bytes not known"
                return
            self.memory.write(dst + k * pitch_out, data)
        rec["reconstructed"] = True

    def _semaphore(self, ch, sem):
        launch = ch.last_launch
        if launch is not None:
            if launch._own and "fields" in sem:     # its summary was read: not shared
                sem["fields"] = dict(sem["fields"])
            launch._summary["semaphores"].append(sem)

    # -- QMDs ---------------------------------------------------------------------
    def _launch_at(self, ch, va, source, pkt, plan, data=None, depth=0, parent=None):
        """pkt: [0] and [1] are the offset and VA of the packet that led here; plan: its
        class's _ClassPlan."""
        family = plan.family
        if data is None:
            data = self.memory._cached(va, 384)     # the usual case: the QMD just uploaded
            if data is None:
                data = self.read(va, 384) or self.read(va, 256)
        if data is None:
            self.problems.append(_problem(pkt, f"{source}: QMD at {va:#x} not in the reconstructed "
                                               f"memory image"))
            return None
        # A QMD image seen before (the driver's GRID_NULL QMDs of a launch loop cycle through
        # a ring of a few slots with the same bytes) gives the same words, version and parts
        seen = _QMD_IMAGES.get((family, data))
        if seen is None:
            seen = self._image(family, data, va, source, pkt)
            if seen is None:
                return None
        data, words, version, parts = seen
        if self._ran_here(va, data):
            # sent again in the same submission, not uploaded again (the driver schedules a
            # graph's first node twice in its first replay): it runs once
            return None
        summary, driver = self._summary(va, version, words, parts, family, source, pkt[0],
                                        plan.class_id, parent)
        launch = Launch(summary, data, None, version, words, driver)
        self.launches.append(launch)
        self._launched[va] = data
        self._this_submission[va] = (data, self.memory.writes)
        ch.last_launch = launch
        if depth < MAX_DEPENDENT_CHAIN and parts[4]:
            self._walk.append((launch, parts[4], depth))
            if depth == 0:
                walk = self._walk
                while walk:
                    self._follow_dependents(ch, *walk.pop(0), pkt, plan)
        return launch

    def _image(self, family, data, va, source, pkt):
        """(data cut to its version's size, words, version, _SummaryPlan parts) of the QMD
        image `data`, remembered in _QMD_IMAGES; None (a problem) when it has no version."""
        key = (family, data)
        words = qmdmod.words_of(data[:384])
        version = qmdmod.version_of_words(words, prefer_v05=(family == "blackwell"))
        if version is None:
            self.problems.append(_problem(pkt, f"{source}: bytes at {va:#x} carry no known QMD "
                                               f"version (dword 18 = {_word(data, 18):#010x})"))
            return None
        sp = _SUMMARY_PLANS.get(version)
        if sp is None:
            sp = _summary_plan(version)
        if len(data) > sp.size:
            data = data[:sp.size]
        if len(words) != sp.nwords:     # the words of data[:384] are those of data[:size]
            words = qmdmod.padded_words(data, version)
        return _remember(_QMD_IMAGES, key, (data, words, version, sp.parts(words, family)),
                         limit=256)

    def _follow_dependents(self, ch, launch, targets, depth, pkt, plan):
        """Each enabled dependent QMD of `launch` runs when it completes. A target decoded
        before runs again when it is a kernel's QMD not yet run in this submission: a CUDA
        graph's nodes are written once (instantiate, upload or first launch) and each replay
        reaches them through these pointers. Not through the driver's stream-ordering
        GRID_NULL QMDs: a kernel's pointer to the next launch's GRID_NULL, and a GRID_NULL's
        pointer to an earlier launch's QMD, lead to ring slots not yet rewritten, which
        their own SEND_PCAS_A runs."""
        deps = launch._summary["dependents"]
        # A GRID_NULL QMD's pointer leads to an earlier launch's slot of the stream ring:
        # nothing decoded before runs again through it (captures/torch-graph record 1640)
        rerun = launch._summary["qmd_type"] != "GRID_NULL"
        for n, target in targets:
            ran = self._this_submission.get(target)
            if ran is not None and self._ran_here(target, ran[0]):
                deps.append(_already_decoded(target))
                continue
            done = self._launched.get(target)
            if done is not None and self.memory.holds(target, 384, done):
                # the usual case, without reading the bytes out (what the general path below
                # finds for them: 384 known bytes that start with the QMD decoded there)
                if not (rerun and self._runs_again(done, plan, target, pkt)):
                    deps.append(_already_decoded(target))
                    continue
                data = done
            else:
                data = self.memory.read_known(target, 384)      # self.read(target, 384) when whole
                if len(data) != 384:
                    data = self.read(target, 384) or self.read(target, 256)
                if data is None:
                    deps.append({"pointer": target, "decoded": False})
                    continue
                done = self._launched.get(target)
                if done is not None and data[:len(done)] == done and \
                        not (rerun and self._runs_again(done, plan, target, pkt)):
                    deps.append(_already_decoded(target))
                    continue
            deps.append({"pointer": target, "decoded": True})
            self._launch_at(ch, target, f"DEPENDENT_QMD{n}_POINTER", pkt, plan, data=data,
                            depth=depth + 1, parent=launch._summary["qmd_address"])

    def _ran_here(self, va, data):
        """The QMD at va ran in this submission with these bytes, not uploaded since."""
        ran = self._this_submission.get(va)
        return ran is not None and ran[0] == data and self.memory.starts.get(va, 0) <= ran[1]

    def _runs_again(self, data, plan, va, pkt):
        """A QMD decoded before, reached again as a dependent: a kernel's (graph node).
        _QMD_IMAGES is a memo that may have been emptied since (its limit): a miss works
        the parts out again, never reads as "not a kernel" (a long capture's graph replays
        lost their kernels that way)."""
        seen = _QMD_IMAGES.get((plan.family, data))
        if seen is None:
            seen = self._image(plan.family, data, va, "DEPENDENT_QMD", pkt)
        return seen is not None and seen[3][0][1]     # parts -> shape -> kernel

    def _summary(self, va, version, words, parts, family, source, offset, cls, parent):
        """(summary, the driver_constants() key of its constant bank 0 or None)."""
        _, cbanks, cb0, releases, _, proto = parts
        sems = []
        for source_name, fields, pick in releases:
            address, payload = pick(words)
            sems.append({"source": source_name, "address": address, "payload": payload,
                         "fields": fields})
        # the parts' keys and values (_SummaryPlan.prototype), then this launch's own
        summary = proto.copy()
        summary["qmd_address"] = va
        summary["source"] = source
        summary["parent_qmd"] = parent
        # the SUBMISSION whose pushbuffer wrote this QMD: a CUDA graph replay runs a chain
        # of QMDs written by its first replay or by cuGraphUpload
        summary["qmd_written_by"] = self.memory.written_by.get(va)
        summary["pushbuf_offset"] = offset
        summary["class"] = _CLASS_TEXT.get(cls) or _class_text(cls)
        summary["semaphores"] = sems
        summary["dependents"] = []
        if cb0 is None:
            return summary, None
        return summary, self._params(summary, cbanks[cb0], FAMILY_ARCH.get(family, "sm_90"))

    def _params(self, summary, cb0, arch):
        """summary["params"]; returns the key of summary["cbank0_driver"]
        (driver_constants(), made when the summary is first read: Launch.summary)."""
        base = ARCH_CBANK0[arch]["param_base"]
        address, size = cb0["address"], cb0["size"]
        limit = (size - base) if size > base else 0x8000
        # The argument block is what the stream uploaded to cbank0 + base (h100-measured.md 1
        # step 2); with no such upload in view, the known bytes there (which may run into
        # bytes an earlier launch left in a reused bank).
        uploads, read_known = self._uploads, self.memory.read_known
        uploaded = uploads.get(address + base)
        if uploaded is not None and uploaded <= limit:
            data = read_known(address + base, uploaded)
        else:
            uploaded = None
            data = read_known(address + base, limit)
        # Launches whose bytes are the same get the same (shared, never changed) dicts: a
        # launch loop uploads identical driver constants and arguments again and again.
        key = (arch, data, uploaded is not None)
        params = _PARAMS.get(key)
        if params is None:
            params = _remember(_PARAMS, key, {
                "offset": base, "size": len(data), "hex": data.hex(), "arch": arch,
                "uploaded": uploaded is not None})
        summary["params"] = params
        return arch, read_known(address, base), uploads.get(address)


class _SummaryPlan:
    """Per QMD version: the fields the summary reads, in parts (shape, constant banks,
    releases, dependents). Each part is derived from its fields once per distinct set of
    the whole words holding them (FieldTable.word_key) and remembered: a launch loop's
    QMDs differ in a few words (ring addresses, payloads), so most parts repeat."""

    CACHE = 4096          # entries per part before it starts over

    def __init__(self, version):
        c = qmdmod.COMMON[version]
        self.version = version
        self.table = table = qmdmod.TABLES[version]
        self.size = qmdmod.MODULES[version].SIZE
        self.nwords = qmdmod.MODULES[version].NWORDS
        self.grid, self.block = c["grid"], c["block"]
        self.qmd_type = c["qmd_type"]
        self.gpc_cga, self.gpu_cga = c.get("gpc_cga", ()), c.get("gpu_cga", ())
        self.smem_name, self.smem_shift = c["shared_memory"]
        self.program = c["program"]
        self.registers = c["registers"]
        alo, ahi, self.cbank_shift, asize, avalid = c["cbank"]
        self.cbank = [(alo.format(i), ahi.format(i), asize.format(i), avalid.format(i))
                      for i in range(8)]
        ren, ralo, rahi, rplo, rphi, rextra = c["release"]
        self.release = [(ren.format(i), ralo.format(i), rahi.format(i), rplo.format(i),
                         rphi.format(i), tuple(n.format(i) for n in rextra if
                                               n.format(i) in table.by_name))
                        for i in range(3)]
        self.dependent = c["dependent"]
        # Values split over fields or stored shifted, declared once (FieldTable.composer).
        lo, hi, pshift = self.program
        self._smem_program = table.composer([((self.smem_name, self.smem_shift),),
                                             ((lo, pshift), (hi, 32 + pshift))])
        ashift = self.cbank_shift
        self._cbank_values = table.composer([
            terms for alo, ahi, asize, avalid in self.cbank
            for terms in (((alo, ashift), (ahi, 32 + ashift)), ((asize, 4),))])
        known = table.by_name
        shape = list(self.grid) + list(self.block) + list(self.gpc_cga) + list(self.gpu_cga)
        shape += [self.smem_name, self.program[0], self.program[1], self.registers]
        if self.qmd_type:
            shape.append(self.qmd_type)
        self._shape_part = self._part([n for n in shape if n in known])
        self._cbank_part = self._part([n for g in self.cbank for n in g if n in known])
        flags = []
        for ren, ralo, rahi, rplo, rphi, rextra in self.release:
            flags += [ren, *rextra]
        self._release_part = self._part([n for n in flags if n in known])
        self._release_pick = {}
        dep = [n for d in self.dependent for n in d if n is not None and n in known]
        dep = list(dict.fromkeys(dep))
        pick = table.picker(dep) if dep else (lambda w: ())
        self.dependent_fields = lambda w: dict(zip(dep, pick(w)))
        self._dependent_key = table.word_key(dep)
        # DEPENDENT_QMDn_POINTER holds the QMD's VA >> 8 (as SEND_PCAS_A does).
        self._dependent_pointer = [table.composer([((pointer, 8),)]) if pointer is not None
                                   else None for enable, action, pointer in self.dependent]
        self._dependents = {}
        self._parts_key = table.word_key(
            [n for n in shape if n in known] + [n for g in self.cbank for n in g if n in known]
            + [n for n in flags if n in known] + dep)
        self._parts = {}
        self._shapes = {}
        self._cbanks = {}
        self._releases = {}

    def _part(self, names):
        """(word key, words -> {name: value}) of a group of fields."""
        names = list(dict.fromkeys(names))
        pick = self.table.picker(names) if names else (lambda w: ())
        return self.table.word_key(names), lambda w: dict(zip(names, pick(w)))

    def _remember(self, cache, key, value):
        if len(cache) >= self.CACHE:
            cache.clear()
        cache[key] = value
        return value

    def shape(self, words, family):
        """(qmd_type name, kernel, grid, grid_units, grid_raw, cluster, block, registers,
        shared memory bytes, driver-reserved bytes, program address)."""
        key_of, fields_of = self._shape_part
        key = (family, key_of(words))
        part = self._shapes.get(key)
        if part is not None:
            return part
        f = fields_of(words)
        grid_raw = [f[n] for n in self.grid]
        block = [f[n] for n in self.block]
        cluster = None
        qmd_type = f[self.qmd_type] if self.qmd_type else None
        if qmd_type in (3, 5):        # GRID_GPC_CGA (measured on H100), GRID_GPU_GPC_CGA
            cluster = [f[n] for n in self.gpc_cga]
        elif qmd_type == 4:           # GRID_GPU_CGA: shape in GPU_CGA_* (not measured)
            cluster = [f[n] for n in self.gpu_cga]
        if cluster is not None:
            grid = [g * max(k, 1) for g, k in zip(grid_raw, cluster)]
        else:
            grid = list(grid_raw)
        smem, program = self._smem_program(words)
        reserved = DRIVER_SMEM_RESERVED.get(family)
        # A QMD that runs nothing: the GRID_NULL QMD the H100 driver schedules ahead of each
        # kernel's own (captures/builtin-vadd record 790; h100-measured.md 1 step 3).
        kernel = bool(program) and qmd_type != 1 and all(grid_raw)
        return self._remember(self._shapes, key, (
            QMD_TYPE_NAMES.get(qmd_type, qmd_type) if qmd_type is not None else None,
            kernel, grid, "clusters" if cluster is not None else "blocks", grid_raw, cluster,
            block, f[self.registers], smem,
            reserved if reserved is not None and smem >= reserved else None, program))

    def cbanks(self, words):
        """(the constant banks that are valid or set: [{index, address, size, valid}], the
        position of the valid bank 0 among them or None)."""
        key_of, fields_of = self._cbank_part
        key = key_of(words)
        part = self._cbanks.get(key)
        if part is not None:
            return part
        f = fields_of(words)
        values = self._cbank_values(words)
        cbanks = []
        for i, (alo, ahi, asize, avalid) in enumerate(self.cbank):
            addr, size = values[2 * i], values[2 * i + 1]
            valid = bool(f[avalid])
            if valid or addr or size:
                cbanks.append({"index": i, "address": addr, "size": size, "valid": valid})
        cb0 = next((k for k, cb in enumerate(cbanks) if cb["index"] == 0 and cb["valid"]), None)
        return self._remember(self._cbanks, key, (cbanks, cb0))

    def parts(self, words, family):
        """(shape(), *cbanks(), releases(), dependent_targets(), prototype()) at once,
        remembered per distinct words holding any of their fields (one key instead of four)."""
        key = (family, self._parts_key(words))
        part = self._parts.get(key)
        if part is None:
            shape, cbanks = self.shape(words, family), self.cbanks(words)
            part = self._remember(self._parts, key, (
                shape, *cbanks, self.releases(words), self.dependent_targets(words),
                self.prototype(shape, cbanks[0])))
        return part

    def prototype(self, shape, cbanks):
        """A launch summary's keys in their order, with the values its parts decide (shape,
        constant banks); LaunchDecoder._summary copies it and sets the launch's own."""
        (qmd_type, kernel, grid, grid_units, grid_raw, cluster, block, registers, smem, reserved,
         program) = shape
        # The parts go in as they are remembered: Launch.summary gives each summary its
        # own copies when it is first read.
        return {
            "qmd_address": None,
            "qmd_version": self.version,
            "source": None,
            "parent_qmd": None,
            "qmd_written_by": None,
            "pushbuf_offset": None,
            "class": None,
            "qmd_type": qmd_type,
            "kernel": kernel,
            "grid": grid,
            "grid_units": grid_units,
            "grid_raw": grid_raw,
            "cluster": cluster,
            "block": block,
            "registers": registers,
            "shared_memory_bytes": smem,
            "shared_memory_driver_reserved_bytes": reserved,
            "program_address": program,
            "constant_buffers": cbanks,
            "params": None,
            "cbank0_driver": None,
            "semaphores": None,
            "dependents": None,
            "qmd_fields": None,      # filled from the QMD words on first access (Launch.summary)
        }

    def dependent_targets(self, words):
        """((n, QMD VA), ...) of the enabled dependent QMD pointers that are not 0."""
        key = self._dependent_key(words)
        part = self._dependents.get(key)
        if part is not None:
            return part
        f = self.dependent_fields(words)
        out = []
        for n, (enable, action, pointer) in enumerate(self.dependent):
            if pointer is None or not f.get(enable):
                continue
            (target,) = self._dependent_pointer[n](words)
            if target:
                out.append((n, target))
        return self._remember(self._dependents, key, tuple(out))

    def releases(self, words):
        """Per enabled release: (source, rendered fields, words -> (address, payload));
        address and payload change from launch to launch."""
        key_of, fields_of = self._release_part
        key = key_of(words)
        part = self._releases.get(key)
        if part is not None:
            return part
        f = fields_of(words)
        table = self.table
        out = []
        for i, (ren, ralo, rahi, rplo, rphi, rextra) in enumerate(self.release):
            if not f.get(ren):
                continue
            pick = self._release_pick.get(i)
            if pick is None:
                pick = self._release_pick[i] = table.composer([((ralo, 0), (rahi, 32)),
                                                               ((rplo, 0), (rphi, 32))])
            out.append((f"qmd.RELEASE{i}", {n: table.render(n, f[n]) for n in rextra if n in f},
                        pick))
        return self._remember(self._releases, key, out)


_SUMMARY_PLANS = {}
_QMD_IMAGES = {}        # (GPU family, QMD bytes) -> LaunchDecoder._image()
_ALREADY_DECODED = {}   # dependent QMD pointer -> summary["dependents"] item of a QMD seen before
_PARAMS = {}        # (arch, argument bytes, uploaded) -> summary["params"]
_DRIVER = {}        # (arch, driver constant bytes, upload size) -> summary["cbank0_driver"]


def driver_constants(arch, driver, upload_size):
    """summary["cbank0_driver"]: the driver's constants (constant bank 0 below the
    parameter base, `driver` as far as known) with the fields ARCH_CBANK0 names, and the
    size of the upload that wrote them. Launches whose bytes are the same get the same
    (shared, never changed) dict."""
    key = (arch, driver, upload_size)
    drv = _DRIVER.get(key)
    if drv is None:
        named = {}
        for name, off, size in ARCH_CBANK0[arch]["fields"]:
            if off + size <= len(driver):
                named[name] = int.from_bytes(driver[off:off + size], "little")
        drv = _remember(_DRIVER, key, {"offset": 0, "size": len(driver), "fields": named,
                                       "hex": driver.hex(), "upload_size": upload_size})
    return drv


_CLASS_TEXT = {}


def _class_text(cls):
    """summary["class"]: "0xcbc0" (remembered: a capture launches from a class or two)."""
    text = _CLASS_TEXT.get(cls)
    if text is None:
        text = _remember(_CLASS_TEXT, cls, f"{cls:#06x}" if cls is not None else None)
    return text


def _already_decoded(target):
    """The dependents item of a QMD pointer decoded before: one dict per target (a ring of
    QMD slots), shared: read, never changed."""
    d = _ALREADY_DECODED.get(target)
    if d is None:
        d = _remember(_ALREADY_DECODED, target,
                      {"pointer": target, "decoded": False, "why": "already decoded"})
    return d


def _remember(cache, key, value, limit=1024):
    if len(cache) >= limit:
        cache.clear()
    cache[key] = value
    return value


def _summary_plan(version):
    sp = _SUMMARY_PLANS.get(version)
    if sp is None:
        sp = _SUMMARY_PLANS[version] = _SummaryPlan(version)
    return sp


_LAUNCH_DMA_UNPACK = {}
_METHOD_FIELDS = {}


def _method_fields(class_id, method, value):
    """{field: display} of one method value, through the class table; cached per value
    (semaphore methods repeat the same few values). The remembered dict itself: it goes
    into a summary's semaphores, shared as the QMD's release fields are (Launch.summary
    gives a summary its own copy when first read; _semaphore copies it for one already
    read)."""
    key = (class_id, method, value)
    out = _METHOD_FIELDS.get(key)
    if out is None:
        table = _class_table(class_id) if class_id is not None else None
        mdef = table.get(method) if table is not None else None
        out = {n: d for n, v, d in mdef.decode(value)} if mdef is not None else {}
        if len(_METHOD_FIELDS) < 4096:
            _METHOD_FIELDS[key] = out
    return out


def _i2m_launch_fields(class_id):
    """(DST_MEMORY_LAYOUT, COMPLETION_TYPE) unpacker of a class's I2M LAUNCH_DMA."""
    fn = _LAUNCH_DMA_UNPACK.get(class_id)
    if fn is None:
        from decoders.fields import FieldTable
        mdef = _class_table(class_id).get(0x1B0)
        keep = [f for f in mdef.fields if f.name in ("DST_MEMORY_LAYOUT", "COMPLETION_TYPE")]
        keep.sort(key=lambda f: f.name != "DST_MEMORY_LAYOUT")
        fn = _LAUNCH_DMA_UNPACK[class_id] = FieldTable(mdef.table.name, keep, None, 1).unpacker()
    return fn


def _class_table(class_id):
    from decoders.methods import method_table
    return method_table(class_id)


def _problem(pkt, message):
    return {"offset": pkt[0], "va": pkt[1], "message": message}


_PAYLOAD = {}


def _payload(words):
    """Data words as little-endian bytes (Packet.payload, without the Packet)."""
    n = len(words)
    st = _PAYLOAD.get(n)
    if st is None:
        st = _PAYLOAD[n] = struct.Struct(f"<{n}I")
    return st.pack(*words)


def _word(data, i):
    return int.from_bytes(data[4 * i:4 * i + 4], "little") if len(data) >= 4 * i + 4 else 0


def build_node(launch):
    """Node tree of one launch: launch.* summary nodes and qmd.<version>.<field> nodes."""
    s = launch.summary
    root = Node("launch", "launch", raw=s["qmd_address"], display=f"QMD {s['qmd_address']:#x}")
    for key in ("qmd_version", "qmd_type", "grid", "cluster", "block", "registers",
                "shared_memory_bytes", "program_address"):
        value = s[key]
        display = f"{value:#x}" if key == "program_address" else str(value)
        root.add(Node(f"launch.{key}", key, raw=value, display=display))
    ver = launch.version.lower()
    qnode = root.add(Node(f"qmd.{ver}", f"QMD{launch.version}", raw=launch.qmd_bytes,
                          display=f"{len(launch.qmd_bytes)} bytes"))
    table = qmdmod.TABLES[launch.version]
    for fdef in table.fields:
        value = launch.fields[fdef.name]
        path = f"qmd.{ver}." + fdef.name.lower().replace("(", "_").replace(")", "")
        qnode.add(Node(path, fdef.name, raw=value, display=table.render(fdef.name, value),
                       offset=fdef.dword * 4))
    return root


# -- whole captures: submissions in doorbell order ---------------------------------------

from decoders.capture.format import TL_SF_COPIED, TL_SF_UNMAPPED, TL_SUB_LOST  # noqa: E402


class _Where:
    """"record N (channel token T)", formatted only when a problem needs it."""
    __slots__ = ("record_index", "token")

    def __init__(self, record_index, token):
        self.record_index = record_index
        self.token = token

    def __format__(self, spec):
        return format(f"record {self.record_index} (channel token {self.token:#x})", spec)

    __str__ = lambda self: format(self, "")


class SubmissionResult:
    """What decode_submissions() found: .launches (Launch, in decode order), .problems
    (DecodeError, each naming the record, channel and stream offset), .channels
    ({channel key: {'token', 'hChannel', 'pid', 'submissions', 'bytes', 'binding'}})."""

    def __init__(self, launches, problems, channels):
        self.launches = launches
        self.problems = problems
        self.channels = channels

    @property
    def kernels(self):
        """The launches that run a program (not the driver's GRID_NULL companions)."""
        return [l for l in self.launches if l.summary["kernel"]]


class SubmissionDecoder:
    """Streaming form of decode_submissions(): feed() one SUBMISSION body at a time.

    Per channel (key: pid, hClient, hChannel, token) one StreamDecoder carries SET_OBJECT
    bindings and split method sequences from one submission to the next. One
    LaunchDecoder per process holds the reconstructed GPU VA image, with I2M state per
    channel: the channels of one process share one GPU address space (CUDA's unified
    addressing), so an upload on one channel is visible to a QMD read on another.
    """

    def __init__(self, gpu="hopper", memory_lookup=None, sink=None):
        """sink: None to keep every launch in .launches; or a callable that takes each
        launch, in the same order, once nothing can change it any more (a later method of
        its channel may still attach a semaphore to a channel's last launch), and then
        nothing keeps it here: memory stays flat however many launches a capture holds."""
        from decoders.pushbuf import StreamDecoder
        from collections import deque
        self._stream_cls = StreamDecoder
        self.gpu = gpu
        self.memory_lookup = memory_lookup
        self.launches = []
        self.sink = sink
        self._pending = deque()     # (launch, its _Channel) not yet handed to the sink
        self.problems = []
        self.channels = {}
        self._streams = {}          # channel key -> StreamDecoder
        self._seen_problems = {}    # channel key -> problems already converted
        self._decoders = {}         # pid -> LaunchDecoder
        self._count = 0

    def decoder(self, pid=None):
        """The LaunchDecoder (memory image, copies) of one process."""
        ld = self._decoders.get(pid)
        if ld is None:
            ld = self._decoders[pid] = LaunchDecoder(gpu=self.gpu, memory_lookup=self.memory_lookup)
        return ld

    def feed(self, record_index, body, pid=None):
        """Decode one SUBMISSION record body; returns the launches it produced."""
        # Subscripts, not attributes: a construct Container's attribute access is a Python
        # call per field.
        token, hChannel = body["token"], body["hChannel"]
        key = (pid, body["hClient"], hChannel, token)
        dec = self._streams.get(key)
        if dec is None:
            host = body.hClass if class_info(body.hClass) is not None else None
            dec = self._streams[key] = self._stream_cls(gpu=self.gpu, host_class=host)
            self.channels[key] = {"pid": pid, "token": token, "hChannel": hChannel,
                                  "hClient": body.hClient, "host_class": dec.host_class,
                                  "submissions": 0, "bytes": 0, "binding": dec.binding}
            self._seen_problems[key] = 0
        info = self.channels[key]
        info["submissions"] += 1
        ld = self._decoders.get(pid)
        if ld is None:
            ld = self.decoder(pid)
        ld.begin_submission(record_index)
        launches = ld.launches
        nl, nlp = len(launches), len(ld.problems)
        lost = body["lost"]
        if body["flags"] & TL_SUB_LOST or lost:
            where = _Where(record_index, token)
            self.problems.append(DecodeError(
                f"{where}: {lost} GP entries were overwritten before the capture read "
                f"them; the method stream has a hole", path="pushbuf"))
        lengths = segment_lengths(body["entries"])
        nlen = len(lengths)
        k = 0
        for seg in body["segments"]:
            seg_size, seg_flags = seg["size"], seg["flags"]
            want = lengths[k] if k < nlen else seg_size
            k += 1
            size = seg_size if seg_flags & TL_SF_COPIED else 0
            if size:
                data = seg["data"]
                if len(data) != size:
                    data = data[:size]
                info["bytes"] += size
                va = seg["va"]
                packets = dec.feed_raw(data, va, packets=False)
                if packets is None:         # a replayed template: ops on its words
                    ld.feed_template(key, dec.template, tuple(dec.binding.items()),
                                     dec.host_class, dec.words, dec.data, dec.base, va)
                else:
                    ld.feed_raw(packets, channel=key)
            if want > size:
                why = ("segment not mapped in the traced process" if seg_flags & TL_SF_UNMAPPED
                       else "segment clipped by the capture")
                where = _Where(record_index, token)
                dec.gap(want - size, f"{where}: GP segment at {seg.va:#x} ({want} bytes): {why}",
                        seg.va + size)
        if len(dec.problems) != self._seen_problems[key] or len(ld.problems) != nlp:
            self._convert(key, dec, ld, nlp, _Where(record_index, token))
        n = self._count
        self._count = n + 1
        if len(launches) == nl:
            return []
        new = launches[nl:]
        for launch in new:
            launch.record_index = record_index
            launch.submission_index = n
            launch.channel = token
            launch.pid = pid
            launch.hChannel = hChannel
            s = launch._summary
            s["record_index"] = record_index
            s["submission_index"] = n
            s["channel"] = token
            s["pid"] = pid
        sink = self.sink
        if sink is None:
            self.launches.extend(new)
            return new
        del launches[:]
        pending = self._pending
        ch = ld._channels.get(key)
        for launch in new:
            pending.append((launch, ch))
        while pending:
            head = pending[0]
            if head[1].last_launch is head[0]:
                break
            sink(pending.popleft()[0])
        return new

    def _convert(self, key, dec, ld, nlp, where):
        done = self._seen_problems[key]
        for p in dec.problems[done:]:
            self.problems.append(DecodeError(f"{where}: {p.message}", path="pushbuf",
                                             offset=p.offset))
        self._seen_problems[key] = len(dec.problems)
        for p in ld.problems[nlp:]:
            self.problems.append(DecodeError(f"{where}: {p['message']}", path="launch",
                                             offset=p["offset"]))

    def finish(self):
        """End of capture: a channel whose stream stops inside a sequence is a problem."""
        for key, dec in self._streams.items():
            dec.finish()
            ld = self.decoder(key[0])
            self._convert(key, dec, ld, len(ld.problems), f"end of capture (channel token "
                                                          f"{key[3]:#x})")
        while self._pending:
            self.sink(self._pending.popleft()[0])
        return SubmissionResult(self.launches, self.problems, self.channels)


def decode_submissions(submissions, gpu="hopper", memory_lookup=None):
    """Decode every SUBMISSION of a capture, in record order, into launches.

    submissions: an iterable (a generator is fine: nothing is kept but channel state and
    the reconstructed memory) of `(record_index, body)` or `(record_index, body, pid)`,
    where body is a SUBMISSION record body as decoders.capture.reader parses it (fields
    token, hClient, hChannel, hClass, flags, lost, entries, segments[va, size, flags,
    data]) and pid the recording process (None when the caller has one process).
    Submissions of one channel must come in doorbell order (capture record order is).

    Returns a SubmissionResult: .launches (each a Launch with .summary, .node,
    .record_index, .submission_index, .channel), .kernels, .problems (DecodeError).
    Never raises on stream content.
    """
    dec = SubmissionDecoder(gpu=gpu, memory_lookup=memory_lookup)
    for item in submissions:
        if len(item) == 3:
            dec.feed(item[0], item[1], item[2])
        else:
            dec.feed(item[0], item[1])
    return dec.finish()
