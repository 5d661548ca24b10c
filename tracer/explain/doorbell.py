"""The story's last sections: the doorbell (the GPFIFO entries, GP_PUT, the store of the
channel token) and what the GPU does after it, told from the methods and the QMD."""
from tracer.explain.story import Line, Section, _count, _hex, _t, _v, _where


# -- the doorbell ------------------------------------------------------------------------
def _doorbell(rd, facts):
    sub = rd.sub
    if sub is None:
        return None
    from decoders.gpfifo import ENTRY
    sec = Section("doorbell", "The doorbell: telling the GPU", "doorbell")
    entry_bytes = ENTRY.nwords * 4
    facts.update(gp_put_prev=sub["gp_put_prev"], gp_put=sub["gp_put"],
                 doorbell_addr=sub["doorbell_addr"], submission_record=sub["index"])
    for k, e in enumerate(sub["entries"]):
        slot = (sub["gp_put_prev"] + k) % max(sub["gp_entries"] or 1, 1)
        sec.lines.append(Line([
            "libcuda wrote ", _t("GPFIFO"), " entry ", _v("gp-slot", slot), " at ",
            _v("gp-entry-addr", _hex((sub["gpfifo_va"] or 0) + slot * entry_bytes)), ": ",
            _v("gp-entry", f"{e['raw']:#018x}"),
            *([" = pushbuffer segment ", _v("segment", _hex(e.get("address"))), ", ",
               _v("segment-bytes", e.get("length_bytes")), " bytes"]
              if e.get("kind") == "segment" else [f" ({e.get('kind')} entry)"]), "."]))
    sec.lines.append(Line([
        "Then it advanced ", _t("GP_PUT"), " in the channel's USERD from ",
        _v("gp-put-prev", sub["gp_put_prev"]), " to ", _v("gp-put", sub["gp_put"]),
        f" (of {sub['gp_entries']} entries)."]))
    off = facts.get("doorbell_offset")
    sec.lines.append(Line([
        f"record {sub['index']}: the doorbell: a store of the channel token ",
        _v("token", _hex(sub["token"])), " to ", _v("doorbell", _hex(sub["doorbell_addr"])),
        *([" (usermode page ", _v("usermode-cpu", _hex(facts.get("usermode_cpu"))), " + ",
           _v("doorbell-offset", _hex(off)), ")"] if off is not None else []),
        ", by the instruction at ", _v("rip", _hex(sub["rip"])), "."]))
    call = (rd.s.get("attribution") or {}).get("api_call") or {}
    if call.get("t_start") is not None and sub.get("t") is not None:
        sec.lines.append(Line([
            "It rang ", _v("doorbell-us", f"{(sub['t'] - call['t_start']) / 1000:.1f}"),
            " µs after ", _v("api-name", call.get("name"), True), " was entered."], indent=1))
    sec.brief.append(Line(["token ", _v("token", _hex(sub["token"])), " to ",
                           _v("doorbell", _hex(sub["doorbell_addr"]))]))
    sec.brief.append(Line(["GP_PUT ", _v("gp-put-prev", sub["gp_put_prev"]), " -> ",
                           _v("gp-put", sub["gp_put"])]))
    return sec


# -- on the GPU --------------------------------------------------------------------------
def _gpu(rd, facts):
    s = rd.s
    sec = Section("gpu", "On the GPU", "SMs")
    sec.lines.append(Line([
        "The capture ends at the doorbell: what follows is the GPU's side, told from the "
        "methods and the QMD above. The host engine reads GPFIFO entries up to GP_PUT, "
        "fetches the pushbuffer bytes they point to and runs the methods; the compute "
        "engine takes up each QMD the PCAS methods name, and its scheduler hands the ",
        _v("blocks", _count(s.get("grid"))), " blocks to the ", _t("SM"), "s."]))
    facts["semaphores"] = []
    seen, more = set(), 0
    for k, sem in enumerate(s.get("semaphores") or []):
        if not isinstance(sem, dict):
            continue
        if sem.get("source") in seen:     # the later reports of a long submission
            more += 1
            continue
        seen.add(sem.get("source"))
        fact = {"source": sem.get("source"), "address": sem.get("address"),
                "payload": sem.get("payload")}
        if sem.get("reduction"):
            fact["reduction"] = sem["reduction"]
        facts["semaphores"].append(fact)
        res = (s.get("resolved") or {}).get("semaphores") or []
        # a reduction release is an atomic on the word (a graph's RED_ADD), not a write
        does = f"the GPU applies {sem['reduction']} with " if sem.get("reduction") else \
            "the GPU writes "
        sec.lines.append(Line([
            f"{sem.get('source')}: {does}", _v(f"sem-{k}-payload", sem.get("payload")),
            " to ", _v(f"sem-{k}", _hex(sem.get("address"))), " (",
            _where(res[k] if k < len(res) else None), ")."], indent=1))
    if more:
        sec.lines.append(Line([f"({more} more semaphore write(s) follow in this submission, "
                               "for the work after this launch)"], indent=1))
    nxt = next(rd.api_calls_after((s.get("api_call") or {}).get("index", rd.launch.record_index)),
               None)
    if nxt is not None:
        dur = (nxt["t_end"] - nxt["t_start"]) / 1000 if nxt.get("t_end") and nxt.get("t_start") \
            else None
        sec.lines.append(Line([
            "The program's next API call is ", _v("next-call", nxt["name"], True), " (record ",
            _v("next-record", nxt["index"]), ")",
            *([", which returned after ", _v("next-us", f"{dur:.1f}"), " µs"] if dur else []),
            "."]))
    sec.brief.append(Line([_v("blocks", _count(s.get("grid"))), " blocks x ",
                           _v("threads-per-block", _count(s.get("block"))), " threads"]))
    return sec
