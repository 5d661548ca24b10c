"""The launch decoder: method packets of each channel -> GPU memory image -> QMDs ->
launches. Follows inline-to-memory uploads (OFFSET_OUT_UPPER/OFFSET_OUT, LINE_LENGTH_IN,
LINE_COUNT, PITCH_OUT, LAUNCH_DMA, LOAD_INLINE_DATA) of the compute and I2M classes and
copy-engine transfers whose source bytes are known, into a sparse GPU VA image (memory.py);
QMDs are read from it (qmds.py). Facts: hw-facts.md sections 3, 4, 5.
"""
from decoders.fields import join_u64, shifted
from decoders.launch.channel import _Channel, _ClassPlan, _I2M, _I2M_REGS, _DATA_FORMS, \
    _class_table, _i2m_launch_fields, _method_fields, _payload, _problem
from decoders.launch.memory import SparseMemory
from decoders.launch.ops import TemplateOps
from decoders.launch.syncs import MAX_RELEASES, acquire_satisfied, sync_operation
from decoders.launch.qmds import QmdLaunches
from decoders.forms import NON_INC
from decoders.methods.clc8b5 import REMAP_SRC

# SET_REMAP_COMPONENTS' sources that read the source memory (the copy classes share them)
_FROM_SOURCE = frozenset(v for v, name in REMAP_SRC.items() if name.startswith("SRC_"))


class LaunchDecoder(TemplateOps, QmdLaunches):
    """Feed method packets (decoders.pushbuf) per channel; collect .launches."""

    def __init__(self, gpu="hopper", memory_lookup=None):
        self.gpu = gpu
        self.memory = SparseMemory()
        self.memory_lookup = memory_lookup
        self.launches = []
        self.problems = []
        self.copies = []        # copy engine transfers (LAUNCH_DMA) since SubmissionDecoder took them
        self._channels = {}
        self._launched = {}
        # QMD VA -> bytes launched in the submission being fed (begin_submission): a CUDA
        # graph replay reaches each node once, however many paths lead to it
        self._this_submission = {}
        # QMD VA -> (launch, its dependent targets): the launches of the submission being fed
        # that a DEPENDENT_QMDn_POINTER led to (LaunchDecoder._launch_at replaces one sent
        # again by its own SEND_PCAS_A)
        self._chained = {}
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
        # This submission's semaphore methods that are no launch's (_semaphore): waits
        # (acquires) always, releases where the channel has run no launch (a copy engine's,
        # an event's before any kernel). SubmissionDecoder.feed takes them.
        self.syncs = []
        # semaphore VA -> (payload, SUBMISSION record, channel token, source, hChannel): the last
        # release this process's pushbuffers wrote there, for the waits that follow
        self.releases = {}
        self._record = None

    def begin_submission(self, record_index=None):
        self._this_submission = {}
        self._chained = {}
        self.memory.tag = record_index
        self._record = record_index

    def resync(self, channel):
        """A capture window left this channel's methods out (decoders/window.py): inline
        transfers and an inline QMD in flight are dropped, and a later semaphore is not the
        last launch's. Registers (I2M, copy, report) keep their values."""
        ch = self._channels.get(channel)
        if ch is None:
            return
        for st in ch.i2m.values():
            st.need, st.buf, st.dst = 0, bytearray(), None
        ch.inline_words = {}
        ch.last_launch = None

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
            ch = self._channels[channel] = _Channel(channel)
        if template is not None:
            prog = self._programs.get(template)
            if prog is None:
                prog = self._program(methods, template)
            self._run(ch, methods, prog)
            return self.launches
        self._run(ch, methods, self._plan(methods))
        return self.launches



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
        # a remapped transfer whose every destination component is a constant (libcuda's
        # memsets) reads no source: its OFFSET_IN is whatever a copy before left there
        src = None if f.get("REMAP_ENABLE") and not self._remap_reads_source(st, pkt) else \
            join_u64(st.get(0x404, 0), st.get(0x400, 0))
        dst = join_u64(st.get(0x40C, 0), st.get(0x408, 0))
        length = st.get(0x418, 0)
        lines = st.get(0x41C, 1) if f["MULTI_LINE_ENABLE"] else 1
        token, hchannel = _channel_ids(ch)
        rec = {"src": src, "dst": dst, "line_length": length, "line_count": lines,
               "bytes": length * lines, "offset": pkt[0], "channel": token,
               "hChannel": hchannel, "remap": bool(f.get("REMAP_ENABLE")),
               "reconstructed": False}
        self.copies.append(rec)
        if f["SRC_TYPE"] or f["DST_TYPE"] or not (f["SRC_MEMORY_LAYOUT"] and f["DST_MEMORY_LAYOUT"]):
            rec["why"] = "physical or block-linear transfer"
            return
        if src is None:
            rec["why"] = "a fill of remap constants"
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

    @staticmethod
    def _remap_reads_source(st, pkt):
        """Whether SET_REMAP_COMPONENTS takes any destination component it writes from the
        source (SRC_X..SRC_W), not from CONST_A, CONST_B or NO_WRITE."""
        mdef = _class_table(pkt[6]).get(0x708)
        if mdef is None:        # (a class without the method: read as a plain copy)
            return True
        f = {n: v for n, v, _ in mdef.decode(st.get(0x708, 0))}
        n = f["NUM_DST_COMPONENTS"] + 1
        return any(f[c] in _FROM_SOURCE for c in ("DST_X", "DST_Y", "DST_Z", "DST_W")[:n])

    def _semaphore(self, ch, sem):
        """A semaphore method: a release follows the channel's last launch (it runs when
        the work before it is done: an event record); a wait (ACQ_* operation) holds back
        the work after it, so it is no launch's, and goes to `syncs` with the release it
        waits for where this process wrote one before (released_by)."""
        op = sync_operation(sem)
        waits = op is not None and op.startswith("ACQ")
        if op is None or op.startswith("RELEASE"):     # (not a REDUCTION's operand, a TRAP)
            self._released(ch, sem)
        launch = ch.last_launch
        if launch is not None and not waits:
            if launch._own and "fields" in sem:     # its summary was read: not shared
                sem["fields"] = dict(sem["fields"])
            launch._summary["semaphores"].append(sem)
            return
        token, hchannel = _channel_ids(ch)
        entry = dict(sem, channel=token, hChannel=hchannel, operation=op, waits=waits)
        if waits:
            entry["released_by"] = self._released_by(sem.get("address"), sem.get("payload"), op)
        self.syncs.append(entry)

    def _released(self, ch, sem):
        releases, address = self.releases, sem.get("address")
        if not address:
            return
        if len(releases) >= MAX_RELEASES and address not in releases:
            del releases[next(iter(releases))]      # the oldest address first
        token, hchannel = _channel_ids(ch)
        releases[address] = (sem.get("payload"), self._record, token, sem.get("source"),
                             hchannel, sem.get("reduction"))

    def _released_by(self, address, payload, op):
        """The last release at `address` before this wait, when its payload satisfies the
        wait's operation (32-bit circular for ACQ_CIRC_GEQ); else None. A reduction (a
        graph's RED_ADD release) leaves a value the capture does not hold (the word's count
        so far): it is named with its `reduction`, and whether it satisfies the wait is not
        known (decoders/launch/syncs.py counts it apart)."""
        r = self.releases.get(address)
        if r is None or r[0] is None or payload is None:
            return None
        if r[5] is None and not acquire_satisfied(op, r[0], payload):
            return None
        out = {"record_index": r[1], "channel": r[2], "hChannel": r[4], "source": r[3],
               "payload": r[0]}
        if r[5] is not None:
            out["reduction"] = r[5]
        return out


def _channel_ids(ch):
    """(work-submit token, hChannel) of a channel keyed (pid, hClient, hChannel, token) as
    SubmissionDecoder keys them; (None, None) for another key (a test's, a dump's)."""
    key = ch.key
    return (key[3], key[2]) if isinstance(key, tuple) and len(key) == 4 else (None, None)
