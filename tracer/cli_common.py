"""What both command lines share: one-line errors and their exit status (STYLE.md 15:
--traceback shows the stack instead; a broken pipe exits quietly), the report printed from
a capture (print_report), how much of it a brief decode reads, and the environment
settings both --help texts end with. tracer/cli_launch.py is `trace-launch`,
tracer/cli_decode.py `trace-decode`; tracer/cli.py names the two.
"""
import os
import sys

import click

from decoders.errors import TraceLaunchError

EXIT_BAD_INPUT = 2


ERR_LINE = 1000    # a stderr line is cut here (paths make them longer than report lines)


def _line(text):
    """One stderr line: capture strings in it escaped, at most ERR_LINE characters."""
    from decoders.text import clip, printable
    return clip(printable(text), ERR_LINE)


def _fail(prog, message):
    click.echo(_line(f"{prog}: {message}"), err=True)
    sys.exit(EXIT_BAD_INPUT)


def _guard(prog, fn, traceback=False, path=None):
    """Run fn, mapping our errors and OSError to one line and exit 2. `path` (the input
    file) leads the line when the message does not already name it."""
    try:
        return fn()
    except BrokenPipeError:
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        sys.exit(0)
    except (TraceLaunchError, OSError) as exc:
        if traceback:
            raise
        if isinstance(exc, TraceLaunchError):
            msg = str(exc)
            if path is not None and not msg.startswith(f"{path}:"):
                msg = f"{path}: {msg}"
        elif getattr(exc, "filename", None):
            msg = f"{exc.filename}: {exc.strerror or exc}"
        else:
            msg = f"{path}: {exc}" if path is not None else str(exc)
        _fail(prog, " ".join(msg.split("\n")))


def _use_color(flag, stream):
    if flag is not None:
        return flag
    return stream.isatty() and not os.environ.get("NO_COLOR")


def _family(meta):
    from decoders.session import gpu_family
    return gpu_family(meta)


def print_report(path, out, as_json=False, color=None, ioctls=False, objects=False,
                 stats=False, prog="trace-decode", filters=None, cost=False, full_names=False,
                 launch_limit=None, model=None, all_fields=False):
    """Decode `path` and write the report to `out`. Returns the exit status: 0, or 2 when the
    capture has problems (each printed as one line on stderr after the report).
    `launch_limit`: the text shows that many launches in full, then a table of them all.
    `model`: the capture already decoded (trace-launch, while the program ran; the file
    has since been rewritten by the exit step: its header is read again here).
    `filters`: keyword criteria of decoders.select.select (launches, channel, cls, ioctl, pid).
    `all_fields`: the JSON with every part (by default tracer/report.py ELIDED is left out)."""
    from decoders.session import decode_capture
    from decoders.text import MAX_LINE, TextOut
    from tracer.report import render_json, render_text
    filters = {k: v for k, v in (filters or {}).items() if v not in (None, (), [])}
    brief = brief_for(as_json, launch_limit, filters, cost, ioctls or stats)
    if model is not None and getattr(model, "brief", None) not in (None, brief):
        model = None        # kept too little for this view: decoded again in full
    pre = None
    if model is None:
        from tracer.progress import Bar
        from tracer import prerender
        from tracer.report_json import prerender_views
        views = prerender_views(all_fields) if as_json and not filters and not cost else {}
        if views and prerender.wanted():
            pre = prerender.Prerender(views)
        try:
            with Bar(prog) as progress:     # on a terminal, for a decode past a few seconds
                # a whole capture in blocks side by side (decoders/session/shard.py): the
                # JSON, a selection, --ioctls, --stats and --cost read every list
                model = decode_capture(path, progress=progress, brief=brief,
                                       full_blocks=brief is None, prerender=pre)
            if pre is not None:
                pre.finish()
        except BaseException:
            if pre is not None:
                pre.close()
            raise
    else:
        from decoders.capture.reader import CaptureReader, open_capture
        from decoders.session import capture_header
        with open_capture(path) as f:
            model.header = capture_header(CaptureReader(f, name=path).header)
    color = _use_color(color, out)
    if not as_json:     # text: capture strings escaped, lines cut (decoders/text.py)
        out = TextOut(out, color=color, limit=None if full_names else MAX_LINE)
    if filters:
        from decoders.select import select
        model = select(model, **filters)
        if not as_json:
            out.write(f"selection: {_describe_filter(model.meta['filter'])} (counts below are of "
                      f"the selection; launches are numbered within it)\n")
            where = model.meta["filter"].get("launch_indices")
            if where:
                # a few (a channel of a long job keeps 157,170): the rest in the JSON
                out.write("  " + ", ".join(f"launch {k} is launch {n} of the capture"
                                           for k, n in enumerate(where[:SHOWN_WHERE])) +
                          (f", and {len(where) - SHOWN_WHERE} more (--json: "
                           f"meta.filter.launch_indices)" if len(where) > SHOWN_WHERE else "")
                          + "\n")
    if cost:
        # a second streaming pass: per API call, time and what it handed the GPU
        from decoders.cuda.cost import measure, render
        c = measure(path, gpu=model.meta and _family(model.meta), launches=model.launches)
        if as_json:
            from tracer.outcome import run_json
            from tracer.report_json import write_indented
            # how the run ended too; the calls' rows read back from disk one at a time
            write_indented(dict(c, **run_json(model)), out)
        else:
            from tracer.report import render_header
            render_header(model, out, color)
            out.write("\n")
            render(c, out)
    elif as_json:
        from tracer.progress import Bar
        # a long capture's JSON is made for seconds after its decode: a line on the terminal,
        # unless the JSON goes there too (trace-launch's report is on stderr)
        with Bar(f"{prog}: JSON", unit="items") as bar:
            try:
                render_json(model, out, all_fields=all_fields,
                            progress=None if _same_file(out, bar.stream) else bar,
                            prerender=pre)
            finally:
                if pre is not None:
                    pre.close()
    else:
        render_text(model, out, color=color, show_ioctls=ioctls,
                    show_objects=objects, show_stats=stats, full_names=full_names,
                    launch_limit=launch_limit)
    out.flush()
    for p in model.problems:
        click.echo(_line(f"{prog}: {path}: {p}"), err=True)
    return EXIT_BAD_INPUT if model.problems else 0


def _same_file(a, b):
    """Whether two streams write to one file (a terminal both go to counts)."""
    try:
        sa, sb = os.fstat(a.fileno()), os.fstat(b.fileno())
    except (AttributeError, OSError, ValueError):
        return a is b
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


SHOWN_WHERE = 6     # "launch k is launch n of the capture" pairs a selection's text shows


def brief_for(as_json, launch_limit, filters=None, cost=False, ioctls=False):
    """The N of a brief decode (decoders/session decode_capture) for a report, or None: the
    text that shows N launches in full and counts the rest reads no launch, API call, ioctl,
    sync or copy past the first N; JSON, a selection, --cost, --ioctls and --stats (the
    naming coverage of every ioctl) read them all. `ioctls`: --ioctls or --stats."""
    if as_json or cost or launch_limit is None or filters or ioctls:
        return None
    return launch_limit


def _describe_filter(criteria):
    parts = []
    for key, value in criteria.items():
        if key == "launch_indices":
            continue
        if key == "launches":
            parts.append("launch " + ", ".join(map(str, value)))
        elif key in ("channel", "class"):
            parts.append(f"{key} {value:#x}")
        else:
            parts.append(f"{key} {value}")
    return "; ".join(parts)


# Launches a report shows in full (trace-launch after a run, trace-decode); a training
# loop's 26,000 would be 35 MB of text on the terminal (--all-launches shows them all).
SHOWN_LAUNCHES = 200

# Every TRACE_LAUNCH_* setting the shim (shim/*.c getenv) and the tracer (tracer/*.py)
# read, one line each: both --help texts end with them (tests/test_cli.py checks the list
# against the sources).
ENV_SETTINGS = (
    ("TRACE_LAUNCH_CAPTURE", "set by trace-launch: the capture file the shim writes (unset: "
                             "the shim records nothing)"),
    ("TRACE_LAUNCH_MODE", "set by trace-launch from --mode: ioctl (no doorbell trap), full"),
    ("TRACE_LAUNCH_API=0", "do not bracket CUDA driver API calls (no API records)"),
    ("TRACE_LAUNCH_IMAGE_MAX=N", "module image bytes recorded per call (default 256 MiB)"),
    ("TRACE_LAUNCH_WINDOW", "set by trace-launch from --capture-range/--nvtx-range/"
                            "--launch-range: cudaProfilerApi, nvtx or launches"),
    ("TRACE_LAUNCH_WINDOW_NAME", "set by trace-launch: the NVTX range whose ranges are counted"),
    ("TRACE_LAUNCH_WINDOW_SKIP=K", "set by trace-launch: ranges or launch calls before the window"),
    ("TRACE_LAUNCH_WINDOW_COUNT=N", "set by trace-launch: ranges or launch calls in the window "
                                    "(0: to the end)"),
    ("TRACE_LAUNCH_COPY=stream", "copy pushbuffers with streaming loads (write-combined memory)"),
    ("TRACE_LAUNCH_PATCH=0", "patch no store site: every doorbell through the page fault"),
    ("TRACE_LAUNCH_PREFAULT=0", "no helper thread growing the capture file ahead"),
    ("TRACE_LAUNCH_KNOWN=0", "no hooks at known libcuda functions (for measuring)"),
    ("TRACE_LAUNCH_PROBE=ring", "name each store to the USERD and GPFIFO pages in a NOTE "
                                "(measuring aid, slow)"),
    ("TRACE_LAUNCH_SHADOW_CHECK=N", "every Nth doorbell of a channel reads the ring to check "
                                    "the shim's shadow copies (default 64)"),
    ("TRACE_LAUNCH_XSAVE=1", "hook stubs save the vector registers too (for measuring)"),
    ("TRACE_LAUNCH_PROFILE=1", "fenced cycle counters in the shim's STATS (for measuring)"),
    ("TRACE_LAUNCH_DEVDIR=DIR", "tests only: plain files in DIR count as NVIDIA devices"),
    ("TRACE_LAUNCH_SHIM=PATH", "the shim library to preload (default: the installed one)"),
    ("TRACE_LAUNCH_LIVE=0|1", "decode while the program runs (default: with 4 or more CPUs)"),
    ("TRACE_LAUNCH_JOBS=N", "worker processes rendering a long report (default: the CPUs, "
                            "at most 12; 1: none)"),
    ("TRACE_LAUNCH_SPLIT=0|1", "decode SUBMISSION records in a second process (default: with "
                               "2 or more CPUs, live or for a capture of 8 MiB or more)"),
    ("TRACE_LAUNCH_SHARDS=N", "decode a report's capture in N blocks side by side (default: "
                              "with 8 or more CPUs, the CPUs less 2, at most 16; 0 or 1: not)"),
    ("TRACE_LAUNCH_AGAIN=N", "blocks of that decode decoded again, seeded, at most "
                             "(default 8; for measuring)"),
    ("TRACE_LAUNCH_SHARD_LOG=FILE", "when that decode's blocks told and ended, appended to "
                                    "FILE (for measuring)"),
    ("TRACE_LAUNCH_BLOCK=N", "SUBMISSION records per block of that decode while the program "
                             "runs (default 8192)"),
    ("TRACE_LAUNCH_PRERENDER=0|1", "render --json's launches, API calls and submissions in a "
                                   "worker while the capture decodes (default: with 2 or more "
                                   "CPUs)"),
)


def _env_epilog(columns=96):
    """The environment settings as a --help epilog (\\b: click keeps the lines as they are)."""
    import textwrap
    width = max(len(name) for name, _ in ENV_SETTINGS)
    lines = ["Environment:"]
    for name, what in ENV_SETTINGS:
        text = textwrap.wrap(what, columns - width - 4)
        lines.append(f"  {name:{width}s}  {text[0]}")
        lines += [" " * (width + 4) + more for more in text[1:]]
    return "\b\n" + "\n".join(lines)
