"""Per-channel state of the launch decoder (inline-to-memory registers, inline QMD words,
semaphore registers, the channel's last launch), per-class method handler plans, and the
small helpers the handlers share."""
import struct

from decoders.forms import HOST_METHOD_LIMIT, IMMD, INC, NON_INC, ONE_INC
from decoders.methods import class_info

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
    def __init__(self, key=None):
        self.key = key          # (pid, hClient, hChannel, token) as the submission gave it
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

