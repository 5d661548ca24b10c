"""Render a CaptureModel (decoders/session.py) as the text report or the JSON object.

The report never decodes bits itself: everything it prints comes from the model.
"""
import io
import json
import os
from collections import Counter

from decoders.ranks import processes_meta
from decoders.session import channels, marked_submissions
from decoders.session.model import count_rank_launch, ioctl_counts
from decoders.names import short_name
from decoders.text import MAX_LINE, TextOut, printable
from tracer.parallel import render_ranges, worth_it
# the JSON view lives in tracer/report_json.py; its names stay importable from here
from tracer.report_json import (ALL_FIELDS_FLAG, ELIDED, _brief_launch, _clean,  # noqa: F401
                                 _json_at, _json_text, _launch_views, _parts, _processes,
                                 coverage_stats, render_json, to_json)

NOTE_CHARS = 240    # a note's text shown in the report (the rest elided, its length shown)
VALUE_CHARS = 200   # any other string from a capture (argv, paths, labels, parameter hex)
MAX_MARKED = 16     # marked launches whose submissions are printed with their methods
TYPE_CHARS = 80     # a kernel parameter's C++ type (full with full_names)


def _s(value, limit=VALUE_CHARS):
    """A string from the capture, escaped and cut (decoders/text.py printable)."""
    return printable(value, limit=limit)

PROT = {1: "R", 2: "W", 4: "X"}


def _prot(p):
    return "".join(n for b, n in PROT.items() if p & b) or "-"


def _hx(v):
    return f"{v:#x}" if isinstance(v, int) else str(v)


class Style:
    def __init__(self, color):
        self.color = color

    def _c(self, code, s):
        return f"\033[{code}m{s}\033[0m" if self.color else s

    def head(self, s):
        return self._c("1", s)

    def bad(self, s):
        return self._c("31", s)

    def dim(self, s):
        return self._c("2", s)


def render_text(model, out, color=False, show_ioctls=False, show_objects=False, show_stats=False,
                full_names=False, launch_limit=None):
    """The text report. Every string from the capture is escaped (decoders/text.py); lines
    are at most MAX_LINE characters (long values elided with their true length), except
    kernel names with `full_names`. With `launch_limit` and more launches than that, only
    the first `launch_limit` and every mismatched one are shown in full, then a table of
    all kernel launches by kernel, grid and block (what trace-launch prints after a run)."""
    st = Style(color)
    out = TextOut(out, color=color, limit=None if full_names else MAX_LINE)
    w = out.write
    render_header(model, out, color)

    _render_windows(model, w, st)

    if model.notes:
        # what the shim had to say: patched store sites (with their original code bytes),
        # getproc answers it could not bracket
        w("\n" + st.head("shim notes") + "\n")
        for n in model.notes:
            text, _, code = n["text"].partition("; code from rip-16: ")
            shown = printable(text, limit=NOTE_CHARS, length=n.get("text_length"))
            w(f"  pid {n['pid']}: {shown}\n" +
              (f"      code from rip-16: {printable(code, limit=NOTE_CHARS)}\n" if code else ""))
    shim = model.shim_stats
    if shim.get("doorbells") and "doorbells_hooked" not in shim:
        # a selection of submissions (decoders/select.py): one doorbell each
        w(f"  doorbells {shim['doorbells']} (one per selected submission)\n")
    elif shim.get("doorbells"):
        w(f"  doorbells {shim['doorbells']}: {shim.get('doorbells_hooked', 0)} through a patched "
          f"store site, {shim.get('fallbacks', 0)} single-stepped, the rest emulated at a fault\n")
    render_ranks(model, w, st)

    stats = model.stats()
    w("\n" + st.head("ioctls by device file") + "\n")
    for dev, n in stats["ioctls_by_device"].items():
        w(f"  {n:6d}  {_s(dev)}\n")
    w(st.head("ioctls by escape") + "\n")
    for esc, n in stats["ioctls_by_escape"].items():
        w(f"  {n:6d}  {_s(esc)}\n")
    failed = ioctl_counts(model.ioctls)[2]
    if failed:
        w(st.bad(f"  {failed} call(s) failed at the syscall level") + "\n")

    if show_ioctls:
        w("\n" + st.head("ioctls") + "\n")
        for i in model.ioctls:
            line = f"  #{i['index']:<6d} pid {i['pid']} fd {i['fd']} {_s(i['summary'], 250)}"
            if i["ret"] != 0:
                line += st.bad(f"  = {i['ret']} (errno {i['errno']})")
            w(line + "\n")

    maps = [m for m in model.mmaps if not m.get("munmap") and not m.get("mremap")]
    w("\n" + st.head(f"NVIDIA mappings ({len(maps)})") + "\n")
    w("  address             length      prot  device            what\n")
    for m in maps:
        what = _mapping_what(model, m)
        w(f"  {m['addr']:#018x}  {m['length']:#10x}  {_prot(m['prot']):4s}  {_s(m['path']):16s}  {_s(what)}\n")

    w("\n" + st.head("submissions per channel") + "\n")
    w("  pid      token       channel     class   submissions  GP entries  PB bytes  lost\n")
    for c in channels(model):
        w(f"  {c['pid']:<7d}  {c['token']:#010x}  {c['channel']:#010x}  {c['cls']:#06x}  "
          f"{c['submissions']:11d}  {c['entries']:10d}  {c['bytes']:8d}  {c['lost']:4d}\n")

    marked = marked_submissions(model, limit=MAX_MARKED + 1)
    for mark, subs in marked[:MAX_MARKED]:
        label = printable(mark["label"], limit=VALUE_CHARS, length=mark.get("label_length"))
        w("\n" + st.head(f"marked launch {mark['id']}: {label}") +
          f"  ({len(subs)} submission(s) between the marks)\n")
        for s in subs:
            w(f"  doorbell: token {s['token']:#x} channel {s['channel']:#x} class {s['class']:#06x}"
              f" GP_PUT {s['gp_put_prev']} -> {s['gp_put']}\n")
            for e in s["entries"]:
                w(f"    GP entry {e['raw']:#018x}: {e.get('kind')} address {_hx(e.get('address'))}"
                  f" length {e.get('length_bytes')} B\n")
            _render_methods(model, s, w)
    if len(marked) > MAX_MARKED:
        w(f"\n  (more marked launches: the first {MAX_MARKED} are shown; --launch N or --json "
          f"give any of them)\n")

    if model.api_calls:
        w("\n" + st.head(f"CUDA driver API calls ({len(model.api_calls)})") + "\n")
        names, unfinished = _call_names(model)
        for name, n in sorted(names.items(), key=lambda kv: (-kv[1], kv[0])):
            w(f"  {n:6d}  {_s(name)}\n")
        kl = stats["kernel_launches"]
        w(f"  kernel launches: {kl.get('verified', 0)} verified against their API call, "
          f"{kl.get('mismatch', 0)} with differences, {kl.get('not_checked', 0)} not checked"
          + (f", {kl['graph_prepared']} graph node QMDs sent ahead of their replays"
             if kl.get("graph_prepared") else "") + "\n")
        if stats.get("conditional_body_launches"):
            w(f"  of them {stats['conditional_body_launches']} in conditional bodies: sent with "
              "every replay, whether the body then ran, and how often, is decided on the GPU "
              "(docs/graphs.md)\n")
        sy = stats.get("syncs") or {}
        if sy.get("waits"):
            reduced = sy.get("waits_after_reduction", 0)
            matched = sy["waits"] - sy.get("waits_no_release_before", 0) - reduced
            w(f"  semaphore waits: {sy['waits']}, {matched} after a release of their address "
              f"({sy.get('waits_released_by_another_channel', 0)} by another channel, "
              f"{sy.get('waits_on_another_gpu', 0)} on another GPU); "
              + (f"{reduced} after a reduction there (RED_ADD: the value it leaves is not in "
                 "the capture); " if reduced else "") +
              f"{sy.get('releases_without_launch', 0)} releases on channels with no launch "
              f"(syncs[] in --json)\n")
        cp = stats.get("copies") or {}
        if cp:
            w(f"  copy engine transfers: {sum(cp.values())} ("
              + ", ".join(f"{n} {d}" for d, n in sorted(cp.items(), key=lambda kv: -kv[1]))
              + "; copies[] in --json)\n")
        if stats.get("module_images_entries_elided"):
            w(f"  module images: {stats['module_images_entries_elided']} kept without the "
              f"fatbin entries for other GPUs (trace-launch's exit step; --all-entries keeps "
              f"them)\n")
        for c in unfinished:
            w(st.bad(f"  {_s(c['name'])} (record {c['index']}, pid {c['pid']} tid {c['tid']}) "
                     "never returned: the process died inside it") + "\n")

    if model.launches:
        w("\n" + st.head(f"launches ({len(model.launches)})") + "\n")
        if (launch_limit is None or len(model.launches) <= launch_limit) and \
                worth_it(model.launches):
            # a long capture's launches: by worker processes, lines made as `out` makes them
            render_ranges(model.launches, _LaunchLines(color, out.limit, full_names),
                          out.write_made, sep="")
        elif launch_limit is None or len(model.launches) <= launch_limit:
            for n, l in enumerate(model.launches):
                _render_launch(n, l, w, full_names=full_names)
        else:
            _render_some_launches(model, w, st, launch_limit, full_names)

    if show_objects and model.objects is not None:
        w("\n" + st.head("objects") + "\n")
        w("\n".join(_s(line, MAX_LINE) for line in model.objects.to_text().split("\n")) + "\n")

    w("\n" + st.head("stats") + "\n")
    keys = ("records", "ioctls", "mmaps", "submissions", "submissions_lost", "doorbells",
            "launches") if not show_stats else tuple(stats)
    for k in keys:
        if k in ("ioctls_by_device", "ioctls_by_escape", "shim"):
            continue
        w(f"  {k:18s} {_value(stats[k])}\n")
    if show_stats:
        for k, v in stats["shim"].items():
            w(f"  shim.{k:13s} {_value(v)}\n")
        cov = coverage_stats(model)
        if cov:
            w(f"  named            {json.dumps(cov)}\n")
    if model.unfinished:
        w(st.bad(f"  {len(model.unfinished)} record(s) unfinished (a call that never returned, "
                 f"or a process that died while writing)") + "\n")
    out.flush()


RANK_KERNELS = 5     # kernels named per rank in the text report, most launched first


def render_ranks(model, w, st):
    """One block per rank (issue 26): its pid, local rank, world size, the GPUs it used
    (index, PCI bus id, UUID, channels made there) and its kernel launches by kernel. Shown
    when a process has a rank, or the processes use more than one GPU between them."""
    from decoders.ranks import rank_label
    procs = [p for p in processes_meta(model) if p["gpus"] or p.get("rank") is not None]
    if not any(p.get("rank") is not None for p in procs) and \
            sum(len(p["gpus"]) for p in procs) < 2:
        return
    counts = model.rank_counts      # counted as the launches were decoded
    if counts is None:              # a selection's launches (decoders/select.py)
        counts = {}
        for launch in model.launches:
            count_rank_launch(counts, launch._summary if hasattr(launch, "_summary") else launch)
    kernels, colls = {}, {}
    for pid, (names, works) in counts.items():
        c = kernels[pid] = Counter()
        for name, n in names.items():
            c[short_name(name)] += n
        colls[pid] = works
    procs.sort(key=lambda p: (p.get("rank") is None, p.get("rank") or 0, p["pid"]))
    ranked = sum(p.get("rank") is not None for p in procs)
    w("\n" + st.head(f"ranks ({ranked} of {len(procs)} process(es) on a GPU)" if ranked else
                      f"GPUs by process ({len(procs)} process(es) on a GPU)") + "\n")
    for p in procs:
        bits = [rank_label(p)]
        if p.get("local_rank") is not None:
            bits.append(f"local rank {p['local_rank']}")
        if p.get("world_size") is not None:
            bits.append(f"world size {p['world_size']}")
        if p.get("node_rank") is not None:
            bits.append(f"node {p['node_rank']}")
        w(st.head("  " + ", ".join(bits)) + "\n")
        for g in p["gpus"]:
            idx = "?" if g["index"] is None else g["index"]
            w(f"    GPU {idx}  {_s(g['pci_bus_id'] or '?')}  {_s(g['uuid'] or 'uuid ?')}  "
              f"{g['channels']} channel(s)" + ("" if g["channels"] else " (peer or query only)")
              + "\n")
        c = kernels.get(p["pid"], Counter())
        w(f"    {sum(c.values())} kernel launch(es)" + (":" if c else "") + "\n")
        for name, n in sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[:RANK_KERNELS]:
            w(f"      {n:6d}  {_s(name)}\n")
        if len(c) > RANK_KERNELS:
            w(f"      ({len(c) - RANK_KERNELS} more kernel(s))\n")
        for key, (n, nbytes) in sorted(colls.get(p["pid"], {}).items(),
                                       key=lambda kv: (-kv[1][0], kv[0])):
            w(f"    NCCL {_s(key)}: {n} work(s), {nbytes} B\n")


def render_header(model, out, color=False):
    """The report's first lines: the program, GPU, driver and capture, then how the run
    ended (_render_outcome). `trace-decode --cost` prints them above its table too."""
    st = Style(color)
    w = out.write
    meta = model.meta
    argv = meta.get("argv") or []
    if not isinstance(argv, list):
        argv = [argv]
    w(st.head("trace-launch report") + "\n")
    w(f"  program  {' '.join(_s(a) for a in argv) if argv else '?'}\n")
    w(f"  gpu      {_s(meta.get('gpu', '?'))}  (compute capability "
      f"{_s(meta.get('compute_capability', '?'))})\n")
    w(f"  driver   {_s(meta.get('driver', '?'))}\n")
    w(f"  capture  {_s(model.path)}  ({model.records} records, {len(model.processes)} process(es))\n")
    _render_outcome(model, w, st)


def _mapping_what(model, m):
    """The RM object behind a CPU mapping: the one the RM_MAP_MEMORY on the mmap's fd
    prepared (decoders/rm/objects.py feed_mmap; the mmap's "object")."""
    if m.get("errno"):
        return f"failed (errno {m['errno']})"
    if m.get("_object_what"):
        return m["_object_what"]       # the object as it was when mapped
    handle = m.get("object")
    if handle is not None and model.objects is not None:
        return model.objects.describe_object(handle, pid=m.get("pid"))
    if "nvidia-uvm" in (m.get("path") or ""):
        return "UVM range at its own address (no RM object: UVM maps it itself)"
    return "no RM_MAP_MEMORY on this fd before it"


def _value(v):
    """A stats value in words: never a Python None/True/False, a dict as its items."""
    if v is None:
        return "not recorded"
    if v is True or v is False:
        return "yes" if v else "no"
    if isinstance(v, dict):
        return ", ".join(f"{_s(k)} {_value(x)}" for k, x in v.items()) or "none"
    return _s(v) if isinstance(v, str) else str(v)


QUIET_FOLDED = 5    # processes that opened no NVIDIA device and did not fail: counted from here


def _render_processes(model, O, w, st):
    """A line per process with how it ended. A compiler's helpers (XLA's and Triton's ptxas
    and nvlink: 100 in a 2-GPU JAX job) that opened no NVIDIA device file and did not fail
    are counted by program when there are QUIET_FOLDED or more; the program, every process
    that opened a device, and every other ending keep their line."""
    root, gpu_pids = model.meta.get("pid"), {o["pid"] for o in model.opens}
    shown, quiet = [], []
    for pid, p in sorted(model.processes.items()):
        _, words = O.process_exit(model, p)
        plain = pid != root and pid not in gpu_pids and (
            words == "0" or words.startswith("unknown (its exit record has no status"))
        (quiet if plain else shown).append((pid, p, words))
    if len(quiet) < QUIET_FOLDED:
        shown, quiet = sorted(shown + quiet, key=lambda x: x[0]), []
    for pid, p, words in shown:
        line = (f"  pid {pid}: {_s(p.get('how', '?'))} "
                f"{_s(' '.join(p.get('cmdline') or [p.get('exe', '?')]), 100)}  exit {words}")
        w((st.bad(line) if words.startswith("unknown (no exit") or "signal" in words
           else line) + "\n")
    if quiet:
        names = Counter(os.path.basename(str(p.get("exe") or "?")) for _, p, _ in quiet)
        unknown = sum(1 for _, _, words in quiet if words != "0")
        w(f"  and {len(quiet)} more process(es) that opened no NVIDIA device file: "
          + ", ".join(f"{_s(name)} x{n}" for name, n in names.most_common()) +
          f"; each exit 0, or unknown ({unknown}) where it returned from main and the shim "
          "cannot see the status (--json meta.processes lists each)\n")


def _render_outcome(model, w, st):
    """How the run ended, first: the program's exit status as a shell shows it, each
    process's, every failed API call (name, CUresult, when, thread, the launch before it),
    calls that never returned, and the capture's problems (tracer/outcome.py)."""
    from tracer import outcome as O
    run = O.exit_of_run(model)
    w(f"  exit     {O.exit_text(run) if run else 'unknown (no END record: the capture was cut short)'}\n")
    _render_processes(model, O, w, st)
    t0 = (model.header or {}).get("t_start_ns")
    calls = O.failed_calls(model)
    if model.failed_call_count:
        w(st.bad(f"  failed   {model.failed_call_count} CUDA API call(s) returned an error") + "\n")
    for c in calls[:O.FAILED_SHOWN]:
        when = f"+{c['seconds']:.6f} s" if c["seconds"] is not None else "at an unknown time"
        line = (f"    {_s(c['name'])} = {c['result']} {_s(c['result_name'])} {when} "
                f"(record {c['index']}, pid {c['pid']} tid {c['tid']})")
        b = c["launch_before"]
        if b is not None:
            kernel = short_name(b["kernel"]) if b["kernel"] else "kernel ?"
            line += (f"; the launch before it: launch {b['launch']}, {_s(kernel)} grid "
                     f"{'x'.join(map(str, b['grid'] or []))} block "
                     f"{'x'.join(map(str, b['block'] or []))}")
            if b["api_call"]:
                line += f" ({_s(b['api_call'])} record {b['api_call_index']})"
        else:
            line += "; no kernel launch of this process before it"
        w(st.bad(line) + "\n")
    more = model.failed_call_count - min(len(calls), O.FAILED_SHOWN)
    if more > 0:
        w(f"    ({more} more: --json lists {'them' if len(calls) >= model.failed_call_count else f'the first {len(calls)}'})\n")
    api = model.api
    for c in (api.unfinished if api is not None else ()):
        when = f"+{(c.t_start - t0) / 1e9:.6f} s " if t0 and c.t_start else ""
        w(st.bad(f"  unfinished {_s(c.name)} {when}(record {c.index}, pid {c.pid} tid {c.tid}) "
                 f"never returned: the process died inside it") + "\n")
    n = len(model.problems)
    w(f"  problems {n if n else 'none'}" + (": each is a line on stderr after the report, "
      "the first ones here" if n else "") + "\n")
    for p in model.problems[:PROBLEMS_SHOWN]:
        w(st.bad(f"    {_s(str(p), 250)}") + "\n")
    if n > PROBLEMS_SHOWN:
        w(f"    ({n - PROBLEMS_SHOWN} more on stderr)\n")


PROBLEMS_SHOWN = 10


def _call_names(model):
    """(Counter of API call names, [calls that never returned]) in one pass, reading only
    those two keys: a spilled call is its compact form until read, and the names need no
    to_json() (decoders/session.py keeps the counts as calls are appended)."""
    counts = getattr(model, "api_call_names", None)
    if counts is not None and sum(counts.values()) == len(model.api_calls):
        api = model.api
        unfinished = [{"name": c.name, "index": c.index, "pid": c.pid, "tid": c.tid}
                      for c in api.unfinished] if api is not None else []
        return counts, unfinished
    names, unfinished = Counter(), []
    for c in model.api_calls:
        names[c["name"]] += 1
        if not c.get("complete", True):
            unfinished.append(c)
    return names, unfinished


def _render_methods(model, sub, w):
    """Decode a submission's segments with its channel's earlier submissions fed first,
    so the subchannel binding comes from the channel's own SET_OBJECT when it was seen."""
    from decoders.pushbuf import StreamDecoder
    dec = StreamDecoder(gpu="hopper")
    for s in model.submissions:
        if s["index"] >= sub["index"]:
            break
        if s["pid"] == sub["pid"] and s["token"] == sub["token"]:
            for g in s["segments"]:
                dec.feed(g["hex"], g["va"])
    dec.problems.clear()
    for g in sub["segments"]:
        data = g["hex"]
        w(f"    segment at {g['va']:#x}, {g['size']} bytes:\n")
        for pkt in dec.feed(data, g["va"]):
            _render_packet(pkt, w)
    for p in dec.problems:
        w(f"      problem: {_s(p, 250)}\n")


MAX_CALLS = 4   # long NON_INC data (inline uploads) is summarised after this many words


def _render_packet(pkt, w):
    hdr = f"{pkt.header:#010x}" if pkt.header is not None else "(cont.)"
    cls = f" class {pkt.class_id:#06x}{' (assumed)' if pkt.assumed else ''}" \
        if pkt.class_id is not None else ""
    w(f"      +{pkt.offset:#06x} {hdr} {pkt.form:<8s} subch {pkt.subchannel} method "
      f"{pkt.method:#06x} count {len(pkt.data)}{cls}\n")
    calls = pkt.calls()
    for m, v in calls[:MAX_CALLS]:
        name, display = pkt.describe(m, v)
        w(f"          {display if display.startswith(name) else name + ' = ' + display}\n")
    if len(calls) > MAX_CALLS:
        w(f"          ... {len(calls) - MAX_CALLS} more data words\n")


def _where(r):
    """One resolved GPU VA (summary["resolved"], decoders/session.py) as text."""
    if not r:
        return "not in any memory object the capture mapped"
    size = f"size {r['size']:#x}" if r.get("size") is not None else "size ?"
    cpu = f"CPU mapping {r['cpu']:#x}" if r.get("cpu") is not None else "no CPU mapping"
    return (f"offset {r['offset']:#x} in memory object {r['handle']:#x} ({r['class_name']}, "
            f"{size}, {r.get('memory') or 'location ?'}, {cpu})")


def _render_some_launches(model, w, st, limit, full_names):
    """The first `limit` launches and the mismatched ones in full, then every kernel launch
    counted by kernel, grid and block (decoders/session.py kernel_tally)."""
    launches = model.launches
    shown = 0
    for n in range(min(limit, len(launches))):     # (a brief decode keeps only these)
        _render_launch(n, launches[n], w, full_names=full_names)
        shown += 1
    later = [n for n in model.mismatched if n >= limit]
    if later:
        w(st.bad(f"  mismatched launches after the first {limit}:") + "\n")
        for n in later:
            _render_launch(n, launches[n], w, full_names=full_names)
            shown += 1
    total = len(launches)
    w(f"  ({total - shown:,} more launches decoded and counted below; --all-launches shows "
      f"every one, --launch N one of them)\n")
    tally = model.kernel_tally
    w("\n" + st.head(f"kernel launches by kernel, grid and block "
                      f"({sum(sum(t.values()) for t in tally.values()):,}, plus "
                      f"{model.scheduling_qmds:,} scheduling QMDs with no kernel)") + "\n")
    w("  launches  verified  differ  not checked  grid         block        kernel\n")
    rows = sorted(tally.items(), key=lambda kv: (-sum(kv[1].values()), str(kv[0])))
    for (name, grid, block), t in rows:
        kernel = "?" if name is None else (name if full_names else short_name(name))
        extra = f" ({t['graph_prepared']} graph node QMDs sent ahead)" if t["graph_prepared"] else ""
        line = (f"  {sum(t.values()):8,d}  {t['verified']:8,d}  {t['mismatch']:6,d}  "
                f"{t['not_checked']:11,d}  {'x'.join(map(str, grid)) or '-':11s}  "
                f"{'x'.join(map(str, block)) or '-':11s}  {_s(kernel, None)}{extra}\n")
        w(st.bad(line[:-1]) + "\n" if t["mismatch"] else line)


def _render_launch(n, launch, w, full_names=False):
    # the text reads the summary's parts, never changes them, and shows neither every QMD
    # field nor the driver's constant bank words: the summary as decoded, not materialized
    s = getattr(launch, "_summary", None) or launch
    res = s.get("resolved")
    if s.get("kernel") is False:   # the GRID_NULL QMD libcuda schedules ahead of each kernel
        w(f"  launch {n}: QMD {s.get('qmd_version')} at {_hx(s.get('qmd_address'))}: "
          f"{s.get('qmd_type')} scheduling QMD (no kernel)\n")
        _sent_order(s, w)
        if res is not None:
            w(f"    QMD: {_where(res['qmd_address'])}\n")
        return
    grid, block, cluster = s.get("grid"), s.get("block"), s.get("cluster")
    w(f"  launch {n}: QMD {s.get('qmd_version')} at {_hx(s.get('qmd_address'))}: grid "
      f"{'x'.join(map(str, grid or []))}, block {'x'.join(map(str, block or []))}"
      f"{', cluster ' + 'x'.join(map(str, cluster)) if cluster else ''}, "
      f"{s.get('registers')} registers, shared memory {s.get('shared_memory_bytes')} B, "
      f"program {_hx(s.get('program_address'))}\n")
    _sent_order(s, w)
    pdl = s.get("programmatic")
    if pdl:
        after = pdl.get("after_launch")
        w(f"    programmatic dependent launch: waits on latch {pdl.get('waits_on_latch')}"
          f"{'' if after is None else f', which launch {after} arrives at'} "
          f"(may start before that launch ends)\n")
    if s.get("memory_sync_domain"):
        w(f"    memory sync domain {s['memory_sync_domain']} (QMD SYNC_DOMAIN_ID: a memory "
          f"fence in this grid orders this domain's traffic only, not domain 0's)\n")
    if res is not None:
        w(f"    QMD: {_where(res['qmd_address'])}\n")
        w(f"    program: {_where(res['program_address'])}\n")
    for k, cb in enumerate(s.get("constant_buffers") or []):
        w(f"    cbank {cb.get('index')}: {_hx(cb.get('address'))} size {cb.get('size')}\n")
        if res is not None and k < len(res["constant_buffers"]):
            w(f"      {_where(res['constant_buffers'][k])}\n")
    p = s.get("params")
    if p:
        w(f"    params at c[0x0][{_hx(p.get('offset'))}]: {_s(p.get('hex'))}\n")
    a = s.get("attribution")
    if a is not None:
        from decoders.cuda.attribute import describe
        w(f"    API: {_s(describe(a, full_names=full_names), None)}\n")
        attrs = ((s.get("api_call") or {}).get("launch") or {}).get("attributes")
        if attrs:       # the call's cuLaunchKernelEx attributes (the JSON has them too)
            w(f"      launch attributes: {_s('; '.join(map(_attribute, attrs)), None)}\n")
        if a.get("nccl"):
            _render_nccl(a["nccl"], w)
        for arg in a.get("args") or []:
            v = arg["value"]
            shown = f"{v:#x}" if isinstance(v, int) and arg["size"] == 8 else v
            where = f"  -> {_s(arg['points_to']['what'])}" if arg.get("points_to") else ""
            ctype = _s(arg["type"] or "?", None if full_names else TYPE_CHARS)
            w(f"      arg {arg['index']} {ctype} @c[0x0][{_hx((p or {}).get('offset', 0) + arg['offset'])}]"
              f" = {_s(shown if v is not None else arg['hex'])}{where}\n")
        for m in a.get("tensor_maps") or []:
            _render_tensor_map(m, (p or {}).get("offset", 0), w)
    for k, sem in enumerate(s.get("semaphores") or []):
        if isinstance(sem, dict):
            op = sem.get("fields", {}).get("OPERATION", "release")
            if sem.get("reduction"):        # an atomic on the word, not a write
                op = f"reduction {_s(sem['reduction'])} of"
            w(f"    semaphore {sem.get('source')}: {op} payload {sem.get('payload')} at "
              f"{_hx(sem.get('address'))}\n")
            if res is not None and k < len(res["semaphores"]):
                w(f"      {_where(res['semaphores'][k])}\n")
        else:
            w(f"    semaphore: {_s(sem)}\n")


def _attribute(x):
    """A launch attribute as `NAME field=value, ...` (decoders/cuda/calls.py)."""
    v = x.get("value")
    fields = ", ".join(f"{k}={u}" for k, u in v.items()) if isinstance(v, dict) else \
        ("" if v is None else str(v))
    return f"{x.get('name') or x.get('id')} {fields}".rstrip()


def _render_tensor_map(m, base, w):
    """A TMA descriptor in the arguments (decoders/cuda/tensormaps.py): what the call that
    made its 128 bytes asked for."""
    made = m.get("made_by") or {}
    at = f"@c[0x0][{_hx(base + m['param_offset'])}]"
    if m.get("rank") is None:       # replaced from a map no recorded call made
        w(f"      tensor map {at}: address set by {_s(made.get('name'))} (call "
          f"{made.get('index')}) to {_hx(m.get('global_address'))}; the map it changed was "
          f"not made by a recorded call\n")
        return
    by = f"{_s(made.get('name'))} (call {made.get('index')})"
    if m.get("encoded_by") != made.get("index"):
        by += f", encoded by call {m.get('encoded_by')}"
    dims = "x".join(map(str, m["global_dim"]))
    w(f"      tensor map {at}: {by}: {_s(m['data_type'])}, dims {dims}, strides "
      f"[{', '.join(map(str, m['global_strides']))}] B, box {'x'.join(map(str, m['box_dim']))}, "
      f"element strides [{', '.join(map(str, m['element_strides']))}], interleave {_s(m['interleave'])}, swizzle "
      f"{_s(m['swizzle'])}, L2 promotion {_s(m['l2_promotion'])}, OOB fill {_s(m['oob_fill'])}\n")
    where = f" -> {_s(m['points_to']['what'])}" if m.get("points_to") else ""
    w(f"        global address {_hx(m['global_address'])}{where}\n")


def _render_nccl(n, w):
    """An NCCL kernel's collective (decoders/cuda/nccl.py): one line per work struct."""
    from decoders.cuda.nccl import summary_line
    if not n["works"]:
        w(f"    NCCL: {_s(n['why'] or '?')}\n")
    for work in n["works"][:4]:
        bufs = "" if work.get("why") or work.get("workType") == "P2p" else \
            f"  send {_hx(work.get('sendbuff'))} recv {_hx(work.get('recvbuff'))}"
        w(f"    NCCL: {_s(summary_line(work))}{bufs}\n")
    if len(n["works"]) > 4:
        w(f"    NCCL: ({len(n['works']) - 4} more work structs)\n")


def _sent_order(s, w):
    """A submission whose QMDs were sent in another order than they run (a CUDA graph's
    first replay): launches are listed as they run; say where each was sent."""
    if s.get("sent_order") is not None:
        w(f"    sent as QMD {s['sent_order']} of its submission (0 first), which sent its QMDs "
          f"in another order than their DEPENDENT_QMD chain runs them (listed as they run)\n")


class _LaunchLines:
    """A launch's text report lines, escaped and cut as render_text's TextOut does: what
    a worker process hands back (tracer/parallel.py)."""

    def __init__(self, color, limit, full_names):
        self.color, self.limit, self.full_names = color, limit, full_names

    def __call__(self, n, launch):
        buf = io.StringIO()
        out = TextOut(buf, color=self.color, limit=self.limit)
        _render_launch(n, launch, out.write, full_names=self.full_names)
        out.flush()
        return buf.getvalue()


__all__ = ["render_text", "render_json", "to_json", "Counter"]


# ---- capture windows (decoders/window.py) -------------------------------------------------

_TRIGGERS = {"PROFILER_API": "cudaProfilerStart/Stop", "NVTX": "NVTX range", "LAUNCHES": "launch calls"}


def window_asked(req):
    """What a capture window asked for (the header's capture_range), in words."""
    kind, skip, count = req.get("kind"), req.get("skip", 0), req.get("count", 1)
    span = (f"from the {_nth(skip + 1)} to the end" if not count else
            f"the {_nth(skip + 1)}" if count == 1 else f"the {_nth(skip + 1)} to the {_nth(skip + count)}")
    if kind == "launches":
        return (f"kernel launch calls {skip + 1} to {skip + count}" if count else
                f"kernel launch calls from {skip + 1} on")
    if kind == "nvtx":
        return f"NVTX range \"{_s(req.get('name'))}\": {span} (counted per process)"
    if kind == "cudaProfilerApi":
        return f"cudaProfilerStart to cudaProfilerStop: {span} (counted per process)"
    return _s(str(req))


def _nth(n):
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _edge_words(win, e, t0):
    trig = win["trigger"]
    at = f"record {e['record']} (t+{(e['t'] - t0) / 1e9:.6f} s)" if t0 else f"record {e['record']}"
    if trig == "NVTX":
        by = f"range \"{_s(win['name'])}\" #{e['ordinal']}"
    elif trig == "LAUNCHES":
        by = f"launch call #{e['ordinal']} ({_s(win['name'])}, call {e['call']})"
    else:
        by = f"{_s(win['name'])} #{e['ordinal']} (call {e['call']})"
    return f"{at}, {by}, after {e['launches']:,} kernel launch calls"


def _render_windows(model, w, st):
    """The capture windows: what was asked, when each opened and closed, what the shim left
    out around it and the launches decoded inside and outside it."""
    if not model.windows:
        return
    t0 = (model.header or {}).get("t_start_ns") or 0
    w("\n" + st.head("capture window") + "\n")
    req = model.windows[0].get("requested")
    if req:
        w(f"  asked    {window_asked(req)}\n")
    for win in model.windows:
        pid = win["pid"]
        if win["begin"] is None:
            w(st.bad(f"  pid {pid}: the window never opened: only what the decode needs was "
                     f"recorded") + "\n")
        else:
            w(f"  pid {pid}: opened at {_edge_words(win, win['begin'], t0)}\n")
            if win["end"] is not None:
                w(f"  pid {pid}: closed at {_edge_words(win, win['end'], t0)}\n")
            else:
                w(f"  pid {pid}: still open when the process ended\n")
        k = win.get("skipped") or {}
        w(f"  pid {pid}: outside it {k.get('submissions_skipped', 0):,} submissions and "
          f"{k.get('api_calls_skipped', 0):,} API calls ({k.get('launches_skipped', 0):,} of "
          f"them kernel or graph launches) not recorded; {k.get('submissions_kept', 0):,} "
          f"submissions kept for graph QMDs\n")
        w(f"  pid {pid}: launches decoded {win['launches_inside']:,} inside, "
          f"{win['launches_outside']:,} outside (from the submissions kept; \"window\" in "
          f"--json)\n")
