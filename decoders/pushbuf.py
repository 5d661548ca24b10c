"""Pushbuffer (method stream) decoder: PB segments -> method packets.

One `Packet` per method header: its form (INC, NON_INC, ONE_INC, IMMD, ...), subchannel,
first method byte offset, and data words. Header bits come from the NV_FIFO_DMA_*
field table below (hw-facts.md 2.1/2.2, from clc56f.h `NVC56F_DMA_*`).

A sequence whose data runs past the end of a fed segment is carried into the next
`feed()` (dev_pbdma.ref: "PB compressed method sequence is split across PB segments").
A dump that ends inside a sequence decodes what is there and records a problem naming
the byte offset where decoding stopped; the decoder never raises on stream content.

Subchannel -> class comes from SET_OBJECT; with none in view the GPU family's default
binding is used (compute on subchannel 1, copy on 4) and marked assumed. Methods below
byte offset 0x100 are host methods, decoded with the channel's host class whatever
the subchannel (dev_pbdma.ref, NV_UDMA).
"""
import json
import struct
import sys

from decoders.fields import FieldTable, bits
from decoders.forms import (  # noqa: F401 (names kept here too)
    END_PB_SEGMENT, HOST_METHOD_LIMIT, IMMD, INC, NON_INC, NOP, ONE_INC, SET_SUBDEVICE_MASK,
    STORE_SUBDEVICE_MASK, USE_SUBDEVICE_MASK)
from decoders.methods import (SUBCH_COMPUTE, SUBCH_COPY, class_info, gpu_defaults,
                              method_table, unknown_display)

PROVENANCE = {
    "repository": "NVIDIA/open-gpu-kernel-modules",
    "path": "src/common/sdk/nvidia/inc/class/clc56f.h (NVC56F_DMA_*); "
            "open-gpu-doc manuals/ampere/ga100/dev_ram.ref.txt (NV_FIFO_DMA_*)",
    "commit": "1739a20efc4acb55fd1dc53dcc66057b70c2613c",
    "prefix": "NVC56F_DMA_",
}

SEC_OP = {0: "GRP0_USE_TERT", 1: "INC_METHOD", 2: "GRP2_USE_TERT", 3: "NON_INC_METHOD",
          4: "IMMD_DATA_METHOD", 5: "ONE_INC", 6: "RESERVED6", 7: "END_PB_SEGMENT"}
TERT_OP = {0: "GRP0_INC_METHOD", 1: "GRP0_SET_SUB_DEV_MASK", 2: "GRP0_STORE_SUB_DEV_MASK",
           3: "GRP0_USE_SUB_DEV_MASK"}

# Order matters: unpacker() returns the values in this order.
HEADER = FieldTable("NV_FIFO_DMA_METHOD_HEADER", [
    ("SEC_OP", 0, 29, 3, SEC_OP),
    ("METHOD_COUNT", 0, 16, 13, None),       # also IMMD_DATA for SEC_OP 4
    ("METHOD_SUBCHANNEL", 0, 13, 3, None),
    ("METHOD_ADDRESS", 0, 0, 12, None),      # dword address: byte offset = ADDRESS * 4
    ("TERT_OP", 0, 16, 2, TERT_OP),
    ("SUBDEVICE_MASK", 0, 4, 12, None),      # SET/STORE_SUBDEVICE_MASK value
    ("GRP0_OPCODE", 0, 16, 16, None),        # SET/STORE/USE_SUBDEVICE_MASK_OPCODE 31:16
], PROVENANCE, nwords=1)
# Header fields that share bits by design: which applies depends on SEC_OP.
HEADER_OVERLAPS = {"METHOD_COUNT", "TERT_OP", "SUBDEVICE_MASK", "METHOD_SUBCHANNEL",
                   "GRP0_OPCODE", "METHOD_ADDRESS", "SEC_OP"}
_unpack_header = HEADER.unpacker()

_DATA_FORMS = {1: INC, 3: NON_INC, 5: ONE_INC}
_GRP0 = {1: SET_SUBDEVICE_MASK, 2: STORE_SUBDEVICE_MASK, 3: USE_SUBDEVICE_MASK}


# Positions in a StreamDecoder.feed_raw() tuple (Packet's constructor arguments, in order).
(RAW_OFFSET, RAW_VA, RAW_FORM, RAW_SUBCHANNEL, RAW_METHOD, RAW_DATA, RAW_CLASS, RAW_HOST_CLASS,
 RAW_ASSUMED, RAW_HEADER, RAW_EXPECTED, RAW_CONTINUED) = range(12)


class Problem:
    """Something in the stream that could not be decoded as it stands."""
    __slots__ = ("offset", "va", "message")

    def __init__(self, offset, message, va=None):
        self.offset = offset
        self.va = va
        self.message = message

    def to_json(self):
        out = {"offset": self.offset, "message": self.message}
        if self.va is not None:
            out["va"] = self.va
        return out

    def __repr__(self):
        return f"Problem(offset={self.offset:#x}, {self.message!r})"


class Packet:
    """One method header and its data words (or a control entry with none).

    offset: stream byte offset of the header (of the first data word for a packet
    that continues a sequence from the previous segment); va: its GPU VA when known.
    method: byte offset of the first data word's method. data: tuple of 32-bit words.
    """
    __slots__ = ("offset", "va", "form", "subchannel", "method", "data", "class_id",
                 "host_class", "assumed", "continued", "header", "expected", "_payload")

    def __init__(self, offset, va, form, subchannel, method, data, class_id, host_class,
                 assumed, header, expected=None, continued=False, payload=None):
        self.offset = offset
        self.va = va
        self.form = form
        self.subchannel = subchannel
        self.method = method
        self.data = data
        self.class_id = class_id
        self.host_class = host_class
        self.assumed = assumed
        self.header = header
        self.expected = expected if expected is not None else len(data)
        self.continued = continued
        self._payload = payload

    @property
    def count(self):
        return len(self.data)

    @property
    def payload(self):
        """The data words as little-endian bytes."""
        if self._payload is None:
            self._payload = struct.pack(f"<{len(self.data)}I", *self.data)
        return self._payload

    def method_at(self, k):
        """Byte offset of the method the k-th data word goes to."""
        form = self.form
        if form == INC:
            return self.method + 4 * k
        if form == ONE_INC:
            return self.method + (4 if k else 0)
        return self.method

    def calls(self):
        """(method byte offset, value) for every data word."""
        form, m = self.form, self.method
        if form == INC:
            return [(m + 4 * k, v) for k, v in enumerate(self.data)]
        if form == ONE_INC:
            return [(m + (4 if k else 0), v) for k, v in enumerate(self.data)]
        return [(m, v) for v in self.data]

    def class_for(self, method):
        return self.host_class if method < HOST_METHOD_LIMIT else self.class_id

    def describe(self, method, value):
        """(NAME, display) of one method call through the class tables."""
        cls = self.class_for(method)
        table = method_table(cls) if cls is not None else None
        mdef = table.get(method) if table is not None else None
        if mdef is None:
            return f"UNKNOWN_{method:#06x}", unknown_display(method, value)
        return mdef.name, mdef.render(value)

    def to_json(self):
        out = {"offset": self.offset, "form": self.form, "subchannel": self.subchannel,
               "header": f"{self.header:#010x}" if self.header is not None else None}
        if self.va is not None:
            out["va"] = self.va
        if self.continued:
            out["continued"] = True
        if self.form in (INC, NON_INC, ONE_INC, IMMD):
            info = class_info(self.class_id) if self.class_id is not None else None
            out["class"] = f"{self.class_id:#06x}" if self.class_id is not None else None
            out["class_name"] = info.name if info else None
            out["class_assumed"] = self.assumed
            out["count"] = len(self.data)
            if self.expected != len(self.data):
                out["expected_count"] = self.expected
            out["methods"] = []
            for m, v in self.calls():
                name, display = self.describe(m, v)
                out["methods"].append({"method": f"{m:#06x}", "name": name, "value": v,
                                       "display": display})
        elif self.data:
            out["value"] = self.data[0]
        return out

    def __repr__(self):
        return (f"Packet({self.form} subch={self.subchannel} method={self.method:#x} "
                f"n={len(self.data)} @{self.offset:#x})")


class StreamDecoder:
    """Decode PB segments in order, carrying a split method sequence across feeds."""

    def __init__(self, gpu="hopper", host_class=None, binding=None):
        defaults = gpu_defaults(gpu)
        self.gpu = gpu
        self.host_class = host_class if host_class is not None else defaults["host"]
        # subchannel -> (class id, assumed?)
        self.binding = {SUBCH_COMPUTE: (defaults["compute"], True),
                        SUBCH_COPY: (defaults["copy"], True)}
        if binding:
            for subch, cls in binding.items():
                self.binding[subch] = (cls, False)
        self.problems = []
        self.position = 0          # stream bytes consumed by earlier feeds
        self._pending = None       # (form, subch, next method, remaining, header, offset)
        self._tail = b""           # bytes of a partial word left by the previous feed
        # The _Template the last feed_raw() replayed (None: parsed afresh): equal templates
        # under equal bindings give packets of the same shape (consumers key plans on it).
        self.template = None
        self.words, self.data, self.base = (), b"", 0   # feed_raw(packets=False)

    def _bind(self, subch):
        return self.binding.get(subch, (None, True))

    def _set_object(self, subch, value):
        table = method_table(self.host_class)
        nvclass = table.get(0).table.get((value,), "NVCLASS") if table else bits(value, 0, 16)
        self.binding[subch] = (nvclass, False)

    def feed(self, data, va=None):
        """Decode one segment; returns its packets. Problems accumulate in .problems."""
        return [Packet(*raw) for raw in self.feed_raw(data, va)]

    def feed_raw(self, data, va=None, packets=True):
        """feed() without the Packet objects: one tuple per packet, holding Packet's
        constructor arguments in order (RAW_* indices; `expected` None means len(data)).
        For hot consumers (the launch decoder) that read a few of them per packet.

        packets=False: a segment that replays a template returns None instead, with
        .template, .words (its words), .data (their bytes) and .base (stream offset of
        words[0]) set: a consumer that planned its work per template reads what it needs."""
        base = self.position
        if self._tail:
            # A word split across feeds: only possible when a caller feeds unaligned chunks.
            data = self._tail + bytes(data)
            base -= len(self._tail)
            self._tail = b""
        n = len(data) // 4
        self.position = base + len(data)
        if len(data) % 4:
            self._tail = bytes(data[4 * n:])
        self.template = None
        if self._pending is None and n:
            if not packets and _WORD_VIEW:
                # The words read where they lie: a replayed segment's consumer reads a few
                # dozen of its hundreds (heads, then the data its ops use).
                data = data if data.__class__ is bytes else bytes(data)
                words = memoryview(data)[:4 * n].cast("I")
            else:
                words = _words(n).unpack_from(data)
            # A segment with the header words of one decoded before parses the same way.
            for tpl in _TEMPLATES.get(n, ()):
                if tpl.heads(words) == tpl.values:
                    self.template = tpl
                    if not packets:
                        self.words, self.base, self.data = words, base, data
                        return None
                    return tpl.replay(words, base, va, self.binding, self.host_class)
            if words.__class__ is not tuple:
                words = tuple(words)
            nproblems = len(self.problems)
            out = self._parse(words, n, 0, base, va, [])
            if self._pending is None and len(self.problems) == nproblems:
                _remember(n, out, base)
            return out
        words = _words(n).unpack_from(data) if n else ()
        out = []
        i = 0
        if self._pending is not None and n:
            i = self._continue(words, n, base, va, out)
        return self._parse(words, n, i, base, va, out)

    def _parse(self, words, n, i, base, va, out):
        """Packets of words[i:] (base: stream offset of words[0]) appended to out."""
        append = out.append
        unpack = _unpack_header
        binding = self.binding
        host = self.host_class
        data_forms = _DATA_FORMS
        stop = len(out) + MAX_PACKETS
        while i < n:
            w = words[i]
            off = base + 4 * i
            wva = va + 4 * i if va is not None else None
            if len(out) >= stop:
                self.problems.append(Problem(
                    off, f"more than {MAX_PACKETS} method packets in one piece of pushbuffer: "
                    f"the remaining {4 * (n - i)} bytes not decoded", wva))
                break
            if w == 0:
                # A run of zero words is one NOP packet (at the run's first word): a segment
                # of zeros (a 4 MiB one is 1 M words) must not become a million packets
                j = i + 1
                while j < n and words[j] == 0:
                    j += 1
                append((off, wva, NOP, 0, 0, (), None, host, False, 0, None, False))
                i = j
                continue
            sec, count, subch, addr, tert, mask, grp0 = unpack(w)
            method = 4 * addr     # METHOD_ADDRESS counts 4-byte methods
            form = data_forms.get(sec)
            if form is not None:
                avail = n - i - 1
                take = count if count <= avail else avail
                data_words = words[i + 1:i + 1 + take]
                if method == 0 and take:
                    self._set_object(subch, data_words[0])
                cls, assumed = binding.get(subch, (None, True))
                append((off, wva, form, subch, method, data_words, cls, host, assumed, w, count,
                        False))
                i += 1 + take
                if take < count:
                    self._pending = _carry(form, method, take, count - take, subch, w, off)
                continue
            if sec == 4:
                cls, assumed = binding.get(subch, (None, True))
                append((off, wva, IMMD, subch, method, (count,), cls, host, assumed, w, None,
                        False))
                if method == 0:
                    self._set_object(subch, count)
                i += 1
                continue
            if sec == 7:
                append((off, wva, END_PB_SEGMENT, subch, method, (), None, host, False, w, None,
                        False))
                rest = n - i - 1
                if rest:
                    self.problems.append(Problem(
                        off + 4, f"{4 * rest} bytes after END_PB_SEGMENT not decoded",
                        wva + 4 if wva is not None else None))
                i = n
                break
            if sec == 0 and tert and grp0 in _GRP0:
                form = _GRP0[grp0]
                value = () if form == USE_SUBDEVICE_MASK else (mask,)
                append((off, wva, form, subch, 0, value, None, host, False, w, None, False))
                i += 1
                continue
            # GRP0 INC (TERT 0), legacy GRP2, RESERVED6, or a GRP0 word with junk in 31:18:
            # not a header current drivers write. Skip one word and say so.
            self.problems.append(Problem(
                off, f"invalid method header {w:#010x} (SEC_OP {SEC_OP[sec]}); skipped 4 bytes",
                wva))
            append((off, wva, "INVALID", subch, method, (), None, host, False, w, None, False))
            i += 1
        return out

    def _continue(self, words, n, base, va, out):
        form, subch, method, remaining, header, hoff = self._pending
        take = remaining if remaining <= n else n
        data_words = words[:take]
        if method == 0 and take:
            self._set_object(subch, data_words[0])
        cls, assumed = self.binding.get(subch, (None, True))
        out.append((base, va, form, subch, method, data_words, cls, self.host_class, assumed,
                    header, remaining, True))
        self._pending = (_carry(form, method, take, remaining - take, subch, header, hoff)
                         if take < remaining else None)
        return take

    def gap(self, length, why, va=None):
        """`length` stream bytes are missing here (a segment the capture could not copy):
        drop a sequence waiting for data and a partial word, say so, and go on after them.
        SET_OBJECT bindings are kept: they live in the channel, not in the segment."""
        if self._pending is not None:
            form, subch, method, remaining, header, hoff = self._pending
            self.problems.append(Problem(
                self.position,
                f"{why}: the {form} sequence of header {header:#010x} at offset {hoff:#x} "
                f"loses {remaining} data word(s)", va))
            self._pending = None
        elif length:
            self.problems.append(Problem(self.position, f"{why}: {length} byte(s) not decoded",
                                         va))
        self._tail = b""
        self.position += length

    def resync(self):
        """Start clean at the next feed: a capture window left bytes out here on purpose
        (decoders/window.py), so a sequence waiting for data and a partial word are dropped
        without a problem. SET_OBJECT bindings are kept."""
        self._pending = None
        self._tail = b""

    def finish(self):
        """End of stream: report a sequence still waiting for data, or a partial word."""
        if self._pending is not None:
            form, subch, method, remaining, header, hoff = self._pending
            self.problems.append(Problem(
                self.position,
                f"stream ends inside the {form} sequence of header {header:#010x} at offset "
                f"{hoff:#x}: {remaining} data word(s) missing; decoding stopped at byte offset "
                f"{self.position:#x}"))
            self._pending = None
        if self._tail:
            self.problems.append(Problem(
                self.position - len(self._tail),
                f"{len(self._tail)} trailing byte(s) do not make a 32-bit word; decoding stopped "
                f"at byte offset {self.position - len(self._tail):#x}"))
            self._tail = b""
        return self.problems


# Segment templates: a launch loop sends the same method sequence again and again with
# different data words. Parsing is decided by the header words alone (each header gives
# the next one's position), so a segment whose words at a decoded segment's header
# positions equal that segment's headers yields the same packets, data sliced from its
# own words. Only segments that changed no decoder state are kept (no SET_OBJECT, no
# sequence left open, no problem); the subchannel binding is looked up on each replay.
_TEMPLATES = {}             # segment length in words -> [_Template], newest first
_TEMPLATES_PER_LENGTH = 4
_TEMPLATE_LENGTHS = 1024
_BOUND_FORMS = frozenset((INC, NON_INC, ONE_INC, IMMD))


class _Template:
    __slots__ = ("heads", "values", "packets")

    def __init__(self, positions, values, packets):
        from operator import itemgetter
        getter = itemgetter(*positions)
        self.heads = getter if len(positions) > 1 else (lambda w: (getter(w),))
        self.values = values
        # (byte offset, form, subchannel, method, data slice or fixed data, bound?, header,
        # expected)
        self.packets = packets

    def replay(self, words, base, va, binding, host):
        out = []
        append = out.append
        for rel, form, subch, method, data, bound, w, expected in self.packets:
            if data.__class__ is slice:
                data = words[data]
            if bound:
                cls, assumed = binding.get(subch, (None, True))
            else:
                cls, assumed = None, False
            append((base + rel, va + rel if va is not None else None, form, subch, method, data,
                    cls, host, assumed, w, expected, False))
        return out


def _remember(n, out, base):
    """Keep the template of a freshly parsed segment (its packets: feed_raw tuples)."""
    positions, values, packets = [], [], []
    for at, pkt in enumerate(out):
        rel = pkt[RAW_OFFSET] - base
        k = rel // 4
        form, method, data = pkt[RAW_FORM], pkt[RAW_METHOD], pkt[RAW_DATA]
        if form == NOP:
            end = out[at + 1][RAW_OFFSET] - base if at + 1 < len(out) else 4 * n
            if end - rel > 4:
                return      # a run of zero words as one packet: its other words are no heads
        bound = form in _BOUND_FORMS
        if bound and method == 0:
            return                                  # SET_OBJECT: changes the binding
        if form == IMMD or not bound:
            fixed = data                            # taken from the header word itself
        else:
            fixed = slice(k + 1, k + 1 + len(data))
        positions.append(k)
        values.append(pkt[RAW_HEADER])
        packets.append((rel, form, pkt[RAW_SUBCHANNEL], method, fixed, bound, pkt[RAW_HEADER],
                        pkt[RAW_EXPECTED]))
    if not positions:
        return
    if len(_TEMPLATES) >= _TEMPLATE_LENGTHS and n not in _TEMPLATES:
        _TEMPLATES.clear()
    kept = _TEMPLATES.setdefault(n, [])
    kept.insert(0, _Template(tuple(positions), tuple(values), tuple(packets)))
    del kept[_TEMPLATES_PER_LENGTH:]


_WORDS = {}
# memoryview.cast("I") reads native 32-bit words: the stream's little-endian words where
# the host is little-endian with a 4-byte unsigned int (else struct unpacks them all).
_WORD_VIEW = sys.byteorder == "little" and struct.calcsize("I") == 4


def _words(n):
    """The struct.Struct of n little-endian 32-bit words."""
    st = _WORDS.get(n)
    if st is None:
        if len(_WORDS) >= 4096:
            _WORDS.clear()
        st = _WORDS[n] = struct.Struct(f"<{n}I")
    return st


def _carry(form, method, done, remaining, subch, header, offset):
    """Pending state for a sequence cut after `done` words: where its data goes next.

    A ONE_INC sequence that already delivered its first word continues as words that
    all go to method + 4, which is what NON_INC at that method means.
    """
    if form == INC:
        return (INC, subch, method + 4 * done, remaining, header, offset)
    if form == ONE_INC and done:
        return (NON_INC, subch, method + 4, remaining, header, offset)
    return (form, subch, method, remaining, header, offset)


# The most method packets decoded from one feed (a segment, or a dump): each is a tuple of
# ~650 B, and a 4 MiB segment (the shim's MAX_SEG) of one-word headers is 1 M of them
# (666 MB). The recorded segments hold at most a few thousand.
MAX_PACKETS = 1 << 16


class DumpResult:
    """Packets, launches and problems of one decoded dump. `launches`: what the launch
    decoder (decoders/launch) found in the packets alone (a QMD and constant bank the
    dump uploads inline, SEND_PCAS); `launch_problems`: what it could not follow (e.g. a
    QMD address the dump never wrote), reported apart from the stream's own problems."""

    def __init__(self, methods, problems, gpu, va, launches=(), launch_problems=()):
        self.methods = methods
        self.problems = problems
        self.gpu = gpu
        self.va = va
        self.launches = list(launches)
        self.launch_problems = list(launch_problems)

    def to_json(self, indent=None):
        """JSON text. `launches` hold the same summaries as `trace-decode CAPTURE --json`
        (grid, block, cluster, params.hex, qmd_fields, ...; docs/json.md)."""
        return json.dumps({"gpu": self.gpu, "va": self.va,
                           "packets": [p.to_json() for p in self.methods],
                           "launches": [_jsonable(l.summary) for l in self.launches],
                           "launch_problems": _jsonable(self.launch_problems),
                           "problems": [p.to_json() for p in self.problems]}, indent=indent)


def _jsonable(obj):
    """As tracer/report.py _clean: keys starting with "_" left out, bytes as hex."""
    if isinstance(obj, dict):
        return {k: _jsonable(v) for k, v in obj.items() if not str(k).startswith("_")}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return bytes(obj).hex()
    return obj


def decode_dump(data, gpu="hopper", va=None, host_class=None, binding=None, launches=True):
    """Decode one whole PB dump (a single segment or a concatenation), and with `launches`
    the launches its packets carry."""
    from decoders.errors import TraceLaunchError
    dec = StreamDecoder(gpu=gpu, host_class=host_class, binding=binding)
    methods = dec.feed(data, va)
    dec.finish()
    found, launch_problems = [], []
    if launches:
        from decoders.launch import LaunchDecoder
        ld = LaunchDecoder(gpu=gpu)
        try:
            ld.feed_methods(methods)
        except TraceLaunchError as exc:
            launch_problems.append({"message": f"launch decoding stopped: {exc}"})
        found, launch_problems = ld.launches, list(ld.problems) + launch_problems
    return DumpResult(methods, dec.problems, gpu, va, found, launch_problems)


_FORM_SEC_OP = {INC: 1, NON_INC: 3, IMMD: 4, ONE_INC: 5, END_PB_SEGMENT: 7}


def encode(form, subchannel, method, data=()):
    """Header (+ data) words for one packet: the inverse of decoding, for tests and
    synthetic dumps. IMMD takes its 13-bit value as data[0]."""
    if form == IMMD:
        words = HEADER.build(SEC_OP=4, METHOD_COUNT=data[0], METHOD_SUBCHANNEL=subchannel,
                             METHOD_ADDRESS=method // 4)
        return words
    if form == END_PB_SEGMENT:
        return HEADER.build(SEC_OP=7)
    words = HEADER.build(SEC_OP=_FORM_SEC_OP[form], METHOD_COUNT=len(data),
                         METHOD_SUBCHANNEL=subchannel, METHOD_ADDRESS=method // 4)
    return words + list(data)


def pack_words(words):
    return struct.pack(f"<{len(words)}I", *words)
