"""Word-level ops of the launch decoder: a segment that replays a pushbuffer template runs
the handler calls planned for it once, reading the data words where they lie (no packet
tuples). The same calls as the handlers they stand for (decoders/launch/decoder.py)."""
from decoders.fields import join_u64, shifted
from decoders.launch.channel import _Channel, _I2M_REGS, _i2m_launch_fields, _method_fields, _payload, \
    _reg_positions


class TemplateOps:
    """LaunchDecoder.feed_template and its ops (a mixin: they run the decoder's handlers)."""

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
            ch = self._channels[channel] = _Channel(channel)
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

