"""Command line: `trace-launch` records, `trace-decode` reads captures offline.

Every error the user can cause ends as one line on stderr and exit status 2 (STYLE.md 15);
--traceback shows the stack instead. A broken pipe (e.g. `| head`) exits quietly.
"""
import json
import os
import sys
from pathlib import Path

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
    if model is None:
        from tracer.progress import Bar
        with Bar(prog) as progress:     # on a terminal, for a decode past a few seconds
            # a whole capture in blocks side by side (decoders/session/shard.py): the JSON,
            # a selection, --ioctls, --stats and --cost read every list
            model = decode_capture(path, progress=progress, brief=brief,
                                   full_blocks=brief is None)
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
            render_json(model, out, all_fields=all_fields,
                        progress=None if _same_file(out, bar.stream) else bar)
    else:
        render_text(model, out, color=color, show_ioctls=ioctls,
                    show_objects=objects, show_stats=stats, full_names=full_names,
                    launch_limit=launch_limit)
    out.flush()
    for p in model.problems:
        click.echo(_line(f"{prog}: {path}: {p}"), err=True)
    return EXIT_BAD_INPUT if model.problems else 0


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


# ---- trace-launch -------------------------------------------------------------------

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


# Options end at PROGRAM (allow_interspersed_args=False: what follows is the program's, as
# with strace); an unknown option before it is an error, never taken for the program, and
# `trace-launch -- PROG --weird` runs PROG whatever its name.
@click.command(context_settings=dict(allow_interspersed_args=False,
                                     help_option_names=["-h", "--help"]), epilog=_env_epilog())
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="capture file to write "
              "(default: a new trace-launch-PROGRAM-N.tlc in the current directory)")
@click.option("--mode", type=click.Choice(["full", "ioctl"]), default="full", show_default=True,
              help="full: ioctls, mmaps and every GPU submission; ioctl: no doorbell trap")
@click.option("--grid", type=int, default=4096, show_default=True, help="built-in launch grid")
@click.option("--block", type=int, default=256, show_default=True, help="built-in launch block")
@click.option("--shared-mem", type=int, default=0, show_default=True,
              help="built-in launch dynamic shared memory in bytes")
@click.option("--json", "as_json", is_flag=True, help="print the report as JSON (on stderr)")
@click.option("--no-report", is_flag=True, help="only write the capture")
@click.option("--no-compress", is_flag=True, help="leave the capture as the shim wrote it (by "
              "default each distinct module image is kept once and the file is zstd-compressed)")
@click.option("--all-launches", is_flag=True, help=f"show every launch in the report (by "
              f"default the first {SHOWN_LAUNCHES} and any that differ from their call are "
              f"shown in full, then all of them counted by kernel, grid and block)")
@click.option("--all-fields", is_flag=True, help="with --json: every field (see trace-decode "
              "--help)")
@click.option("--all-entries", is_flag=True, help="keep every fatbin entry of each module "
              "image (by default entries for GPUs other than this machine's are left out)")
@click.option("--capture-range", type=click.Choice(["none", "cudaProfilerApi", "nvtx"]),
              default="none", show_default=True, help="record submissions and launch calls only "
              "inside a window: from cudaProfilerStart to cudaProfilerStop, or an NVTX range "
              "(--nvtx-range); outside it only what the decode needs (ioctls, module loads, "
              "lookups, allocations, graph setup) is kept")
@click.option("--nvtx-range", metavar="NAME", default=None, help="the NVTX range (its message, "
              "e.g. step for torch.cuda.nvtx.range(\"step\")) whose start and end open and close "
              "the window; implies --capture-range=nvtx")
@click.option("--range-skip", type=click.IntRange(min=0), default=0, show_default=True,
              help="ranges to let pass before the window opens")
@click.option("--range-count", type=click.IntRange(min=0), default=1, show_default=True,
              help="ranges the window spans, from the start of the first to the end of the last "
                   "(0: until the program ends)")
@click.option("--launch-range", metavar="N:M", default=None, help="a window from kernel launch "
              "call N+1 to N+M (cuLaunchKernel and its variants, counted per process; M empty or "
              "0: to the end)")
@click.option("--color/--no-color", default=None, help="colour the report (default: on a tty)")
@click.option("--traceback", is_flag=True, help="show Python tracebacks for errors")
@click.argument("program", nargs=-1, type=click.UNPROCESSED)
def trace_launch(output, mode, grid, block, shared_mem, as_json, no_report, no_compress,
                 all_launches, all_fields, all_entries, capture_range, nvtx_range, range_skip, range_count,
                 launch_range, color, traceback, program):
    """Run PROGRAM [ARGS]... under the shim and print what its launches did at the hardware
    interface. With no PROGRAM, trace the built-in vadd launch (cuda-python driver API).

    The program's stdout is untouched; the report goes to stderr. The exit status is the
    program's (128+N when a signal N killed it)."""
    from tracer.run import TracerError, builtin_argv, check_driver, default_output, \
        open_output, resolve_program, run_traced
    window = capture_window(capture_range, nvtx_range, range_skip, range_count, launch_range, mode)
    try:
        check_driver()
        if program:
            argv = list(program)
            resolve_program(argv)
            name = argv[0]
        else:
            try:
                from tracer.cudaapi import _modules
                _modules()
            except Exception as exc:
                raise TracerError(f"capture needs an NVIDIA GPU and driver (cuda-python cannot "
                                  f"load: {exc}); trace-decode works offline on saved captures")
            argv = builtin_argv(grid, block, shared_mem)
            name = "builtin"
        # opened once, here, before the program starts (an unwritable path or a symlink is
        # an error then); kept open, never reopened by name (tracer/run.py OutputPath)
        out = open_output(output) if output else default_output(name)
        from tracer import live
        decoding = []       # the decode that follows the capture while the program runs

        def follow(capture):
            decoding.append(live.LiveDecode(capture, brief=brief_for(
                as_json, None if all_launches else SHOWN_LAUNCHES), full_blocks=as_json).start())
            return decoding[0]
        rc = run_traced(argv, out, mode=mode,
                        live=follow if not no_report and live.wanted() else None, window=window,
                        finish_live=False)
    except TracerError as exc:
        if traceback:
            raise
        click.echo(f"trace-launch: {exc}", err=True)
        sys.exit(exc.status)
    exit_step = lambda: _finish_capture(out, not no_compress, all_entries)    # noqa: E731
    try:
        if decoding:
            # the exit step rewrites the file by rename while the decode still reads the one
            # it follows (its own descriptor): the two run side by side, the exit step in a
            # process of its own (its walk over the records would take the GIL from the
            # decode's thread: the decode slowed to a quarter for 0.7 s of a 500-step job's,
            # on the H100 host)
            exit_step = _beside(lambda: _finish_capture_apart(out, not no_compress,
                                                              all_entries))
            try:
                decoding[0].finish()
            except KeyboardInterrupt:
                _report_interrupted(out, exit_step, traceback, rc)
        note = _guard("trace-launch", exit_step, traceback, path=str(out))
        click.echo(f"trace-launch: capture written to {out}{note}", err=True)
        if not no_report:
            model = decoding[0].model if decoding and decoding[0].error is None else None
            if decoding and model is None:
                click.echo(_line(f"trace-launch: the decode during the run stopped "
                                 f"({type(decoding[0].error).__name__}: {decoding[0].error}); "
                                 f"decoding the capture file"), err=True)
            try:
                _guard("trace-launch", lambda: print_report(
                    str(out), sys.stderr, as_json=as_json, color=color, prog="trace-launch",
                    launch_limit=None if all_launches else SHOWN_LAUNCHES, model=model,
                    all_fields=all_fields), traceback, path=str(out))
            except KeyboardInterrupt:
                _report_interrupted(out, None, traceback, rc)
    except KeyboardInterrupt:       # a Ctrl-C while the exit step was awaited (a first, the
        # decode done; or a second): the file is whole either way (the rewrite, a process of
        # its own, replaces it by rename, or not at all); the status is still the program's
        click.echo("", err=True)
        click.echo(_line(f"trace-launch: interrupted; the capture is in {out} (`trace-decode` "
                         f"reads it)"), err=True)
        sys.exit(rc)
    sys.exit(rc)


def _report_interrupted(out, exit_step, traceback, rc):
    """Ctrl-C once the program has exited (a long job's report can take as long as the job):
    the exit step finishes (it runs in a session of its own, out of the terminal's signals),
    the capture is kept, and trace-launch exits with the program's status, saying how to
    make the report later."""
    if exit_step is not None:
        note = _guard("trace-launch", exit_step, traceback, path=str(out))
        click.echo(f"trace-launch: capture written to {out}{note}", err=True)
    else:
        click.echo("", err=True)   # (the line the report was writing may be unfinished)
    click.echo(_line(f"trace-launch: report interrupted; `trace-decode {out}` makes it from "
                     f"the capture"), err=True)
    sys.exit(rc)


def _beside(fn):
    """fn() started in a thread now; returns a callable that waits for it and returns what
    it returned, or raises what it raised."""
    import threading
    got = {}

    def run():
        try:
            got["value"] = fn()
        except BaseException as exc:     # noqa: BLE001 - raised again by the waiter
            got["error"] = exc
    t = threading.Thread(target=run, name="trace-launch-exit-step", daemon=True)
    t.start()

    def wait():
        t.join()
        if "error" in got:
            raise got["error"]
        return got["value"]
    return wait


def capture_window(capture_range, nvtx_range, skip, count, launch_range, mode):
    """The window trace-launch's options ask for (tracer/run.py window_env), or None.
    Contradictory options are usage errors (exit 2)."""
    if nvtx_range is not None and capture_range == "none":
        capture_range = "nvtx"
    if launch_range is not None:
        if capture_range != "none":
            raise click.UsageError("--launch-range and --capture-range are two kinds of window: "
                                   "give one")
        first, sep, n = launch_range.partition(":")
        try:
            skip, count = int(first), int(n) if n else 0
        except ValueError:
            raise click.BadParameter(f"{launch_range!r} is not N:M (launch calls to let pass, "
                                     f"then launch calls to record)", param_hint="--launch-range")
        if not sep or skip < 0 or count < 0:
            raise click.BadParameter(f"{launch_range!r} is not N:M with N, M >= 0",
                                     param_hint="--launch-range")
        capture_range = "launches"
    if capture_range == "none":
        return None
    if mode != "full":
        raise click.UsageError("a capture window needs --mode full (it selects submissions and "
                               "API calls, which --mode ioctl does not record)")
    if capture_range == "nvtx" and not nvtx_range:
        raise click.UsageError("--capture-range=nvtx needs --nvtx-range NAME")
    if capture_range != "nvtx" and nvtx_range is not None:
        raise click.UsageError(f"--nvtx-range is for --capture-range=nvtx, not {capture_range}")
    window = {"kind": capture_range, "skip": skip, "count": count}
    if nvtx_range is not None:
        window["name"] = nvtx_range
    return window


def _finish_capture(out, compress, all_entries=False):
    """The exit step, once the program has exited: each distinct module image kept once,
    fatbin entries for other GPUs left out, then zstd (decoders/capture/writer.py
    compact_capture). Returns a note for the written line."""
    from decoders.capture.writer import compact_capture
    return _exit_note(compact_capture(out, compress=compress, all_entries=all_entries))


_EXIT_STEP = """
import json, sys
from decoders.errors import TraceLaunchError
from decoders.capture.writer import compact_capture
try:
    st = compact_capture(sys.argv[1], compress=sys.argv[2] == "1", all_entries=sys.argv[3] == "1",
                         threads=int(sys.argv[4]))
except TraceLaunchError as exc:
    st = {"error": str(exc)}
except OSError as exc:
    st = {"oserror": [exc.errno, exc.strerror, exc.filename]}
print(json.dumps(st))
"""


def _finish_capture_apart(out, compress, all_entries=False):
    """_finish_capture in a process of its own (beside a decode in this one): the same
    note, or the same errors raised here."""
    import subprocess

    from decoders.session.split import package_env
    root = str(Path(__file__).resolve().parent.parent)
    env = package_env()
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    # zstd's workers leave CPUs to the decode's two processes and this one
    threads = max(1, cpus - 3)
    done = subprocess.run([sys.executable, "-c", _EXIT_STEP, os.path.abspath(str(out)),
                           "1" if compress else "0", "1" if all_entries else "0",
                           str(threads)], env=env, cwd=root,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          # a Ctrl-C at the terminal is not for it: a rewrite cut short
                          # would leave the capture uncompacted (_report_interrupted)
                          start_new_session=True)
    lines = done.stdout.strip().splitlines()
    try:
        st = json.loads(lines[-1]) if done.returncode == 0 and lines else None
    except ValueError:
        st = None
    if st is None:
        why = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        raise TraceLaunchError(f"the exit step failed: {why}")
    if "error" in st:
        raise TraceLaunchError(st["error"])
    if "oserror" in st:
        raise OSError(*st["oserror"])
    return _exit_note(st)


def _exit_note(st):
    """The written line's note for compact_capture's stats."""
    parts = []
    if st["images_repeated"]:
        parts.append(f"{st['images_repeated']} repeated module image(s) stored once")
    if st["entries_elided"]:
        parts.append(f"{st['entries_elided']} fatbin entries for other GPUs left out, "
                     f"{st['elided_bytes']:,} B: --all-entries keeps them")
    if st["compressed"]:
        parts.append(f"zstd, {st['raw_bytes']:,} -> {st['bytes']:,} B")
    return f" ({'; '.join(parts)})" if parts else ""


# ---- trace-decode -------------------------------------------------------------------

class DefaultGroup(click.Group):
    """`trace-decode CAPTURE` runs the `report` command; other words are subcommands.
    Its --help lists the report's options too (they are what `trace-decode CAPTURE` takes)."""

    def parse_args(self, ctx, args):
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = ["report"] + list(args)
        return super().parse_args(ctx, args)

    def format_options(self, ctx, formatter):
        super().format_options(ctx, formatter)
        report = self.commands["report"]
        sub = click.Context(report, info_name="report", parent=ctx)
        rows = [r for r in (p.get_help_record(sub) for p in report.get_params(sub)
                            if isinstance(p, click.Option)) if r]
        with formatter.section("Report options (trace-decode CAPTURE [OPTIONS])"):
            formatter.write_dl(rows)


@click.group(cls=DefaultGroup, context_settings=dict(help_option_names=["-h", "--help"]),
             epilog=_env_epilog())
def trace_decode():
    """Decode trace-launch captures offline (no GPU needed).

    \b
    trace-decode CAPTURE [--json [--all-fields]] [--ioctls] [--objects] [--stats]
                 [--cost] [--all-launches] [--full-names] [--launch N]...
                 [--channel C] [--class C] [--ioctl NAME] [--pid P]
    trace-decode timeline CAPTURE [-o trace.json]
    trace-decode diff A [B] [--launch I [--launch J]] [--json] [--ignore-addresses]
    trace-decode pushbuffer DUMP --gpu hopper [--va ADDR] [--json]
    trace-decode cubin FILE [--json]
    trace-decode sass CUBIN|PROGRAM [--kernel NAME]
    """


@trace_decode.command("report", epilog=_env_epilog())
@click.argument("capture", type=click.Path())    # a directory: one line from open_capture
@click.option("--json", "as_json", is_flag=True, help="one JSON object: meta, exit, failed_calls, "
              "ioctls, mmaps, submissions, launches, api_calls, stats, problems (docs/json.md)")
@click.option("--ioctls", is_flag=True, help="list every ioctl, decoded")
@click.option("--objects", is_flag=True, help="print the RM object tree")
@click.option("--stats", is_flag=True, help="print every counter and the naming coverage")
@click.option("--launch", "launches", type=click.IntRange(min=0), multiple=True,
              help="only launch N (as the report numbers them) and the submission that carried "
                   "it; repeatable")
@click.option("--channel", default=None, help="only submissions and launches of this channel: "
              "work-submit token or channel handle (hex or decimal)")
@click.option("--class", "cls", default=None, help="only this class (number or NVIDIA name): "
              "its RM allocs, submissions of a channel of it, launches of it")
@click.option("--ioctl", default=None, metavar="NAME", help="only ioctls whose escape, RM control "
              "or class name contains NAME (case-insensitive)")
@click.option("--pid", type=int, default=None, help="only records of this process")
@click.option("--cost", is_flag=True, help="per API call: time inside it and to its first "
              "doorbell, doorbells, GPFIFO entries, pushbuffer bytes and methods, kernel QMDs")
@click.option("--full-names", is_flag=True, help="kernels by their full demangled names (default: "
              "the short name, e.g. vectorized_elementwise_kernel; lines then may pass 300 "
              "characters for names)")
@click.option("--all-launches", is_flag=True, help=f"show every launch in full (by default the "
              f"first {SHOWN_LAUNCHES} and any that differ from their call, then all of them "
              f"counted by kernel, grid and block)")
@click.option("--all-fields", is_flag=True, help="with --json: every field (by default every QMD "
              "field, the driver's constant bank 0 bytes and the pushbuffer bytes are left out; "
              "the JSON's \"elided\" key names them)")
@click.option("--color/--no-color", default=None, help="colour the report (default: on a tty)")
@click.option("--traceback", is_flag=True, help="show Python tracebacks for errors")
def report_cmd(capture, as_json, ioctls, objects, stats, launches, channel, cls, ioctl, pid, cost,
               full_names, all_launches, all_fields, color, traceback):
    """Print the report of CAPTURE (gzip or zstd compressed captures are read as they are).

    The filters narrow the lists they are about and combine with AND (decoders/select.py);
    a pid, channel, class or ioctl name the capture does not hold is an error."""
    filters = dict(launches=launches, channel=_int_option(channel, "--channel"), cls=cls,
                   ioctl=ioctl, pid=pid)
    rc = _guard("trace-decode", lambda: print_report(
        capture, sys.stdout, as_json=as_json, color=color, ioctls=ioctls, objects=objects,
        stats=stats, filters=filters, cost=cost, full_names=full_names,
        launch_limit=None if all_launches else SHOWN_LAUNCHES, all_fields=all_fields),
        traceback, path=capture)
    sys.exit(rc)


def _int(text):
    return int(text, 0)


def _int_option(text, name):
    """A hex or decimal number for an option, or a click usage error (exit 2)."""
    if text is None:
        return None
    from decoders.select import SelectError, parse_int
    try:
        return parse_int(text)
    except SelectError as exc:
        raise click.BadParameter(str(exc), param_hint=name)


def _same_file(a, b):
    """Whether two streams write to one file (a terminal both go to counts)."""
    try:
        sa, sb = os.fstat(a.fileno()), os.fstat(b.fileno())
    except (AttributeError, OSError, ValueError):
        return a is b
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


def _decoded(path, until=None, full_blocks=False):
    """decode_capture(path), with a progress line on a terminal past a few seconds."""
    from decoders.session import decode_capture
    from tracer.progress import Bar
    with Bar("trace-decode") as progress:
        return decode_capture(path, progress=progress, until=until, full_blocks=full_blocks)


def _problem_lines(prog, path, problems):
    for p in problems:
        click.echo(_line(f"{prog}: {path}: {p}"), err=True)
    return EXIT_BAD_INPUT if problems else 0


@trace_decode.command("timeline")
@click.argument("capture", type=click.Path())
@click.option("-o", "--output", type=click.Path(dir_okay=False, allow_dash=True), default="-",
              show_default=True, help="trace file to write (- for stdout)")
@click.option("--traceback", is_flag=True)
def timeline_cmd(capture, output, traceback):
    """Write CAPTURE as a Chrome/Perfetto trace (Trace Event Format JSON): one track per
    thread (ioctls, marks, doorbells, API calls) and one per GPU channel (submissions and
    the launches they carried). Open it in https://ui.perfetto.dev (docs/timeline.md)."""
    def run():
        from decoders.timeline import write_timeline
        from tracer.parallel import map_ranges
        from tracer.progress import Bar
        # every list the JSON has: decoded in blocks side by side where the CPUs allow
        model = _decoded(capture, full_blocks=True)
        # the events made (sorted on disk as they come), then written; what each item of
        # the long lists gives is read back and made by worker processes (map_ranges)
        with Bar("trace-decode: timeline", unit="events") as progress:
            if output == "-":
                write_timeline(model, sys.stdout, progress, map_ranges)
                sys.stdout.flush()
            else:
                from tracer import write_text
                write_text(output, lambda f: write_timeline(model, f, progress, map_ranges))
        return _problem_lines("trace-decode", capture, model.problems)
    sys.exit(_guard("trace-decode", run, traceback, path=capture))


@trace_decode.command("diff")
@click.argument("a", type=click.Path())
@click.argument("b", type=click.Path(), required=False)
@click.option("--launch", "launches", type=click.IntRange(min=0), multiple=True,
              help="launch I of A (as the report numbers them); given twice, I of A and J of B "
                   "(default: the marked kernel launch, else the first kernel launch)")
@click.option("--json", "as_json", is_flag=True, help="one JSON object: a, b, differences")
@click.option("--ignore-addresses", is_flag=True, help="leave out differences that are virtual "
              "addresses (allocations land elsewhere in every run)")
@click.option("--traceback", is_flag=True)
def diff_cmd(a, b, launches, as_json, ignore_addresses, traceback):
    """The QMD fields, constant bank 0 words and method values that differ between a launch
    of capture A and a launch of capture B (or of A again when B is omitted or the same
    file). Differences that are virtual addresses are listed in their own group."""
    if len(launches) > 2:
        raise click.UsageError("--launch is given at most twice (I in A, J in B)")

    def run():
        from decoders.diff import DiffError, describe_launch, diff_launches
        from decoders.pick import PickError, until_launch
        # each capture decoded only as far as its launch needs (decoders/pick.py)
        same = b is None or os.path.realpath(b) == os.path.realpath(a)
        ua = until_launch(a, launches[0] if launches else None)
        ub = until_launch(a, launches[-1] if launches else None) if same else None
        model_a = _decoded(a, (lambda m: ua(m) and ub(m)) if same else ua)
        try:
            if same:
                model_b = model_a
            else:
                ub = until_launch(b, launches[-1] if launches else None)
                model_b = _decoded(b, ub)
        except TraceLaunchError as exc:
            msg = str(exc)
            raise type(exc)(msg if msg.startswith(f"{b}:") else f"{b}: {msg}") from None

        def picked(until, model, given):
            if given is not None:
                return given    # (diff_launches says where it is not in the capture)
            try:
                return until.index(model)
            except PickError:
                raise DiffError(f"{model.path}: no launch decoded in this capture") from None
        ia = picked(ua, model_a, launches[0] if launches else None)
        ib = picked(ub, model_b, launches[-1] if launches else None)
        diffs = diff_launches(model_a, ia, model_b, ib)
        if ignore_addresses:
            diffs = [d for d in diffs if not d.address]
        if as_json:
            json.dump({"a": describe_launch(model_a, ia), "b": describe_launch(model_b, ib),
                       "differences": [d.to_json() for d in diffs]}, sys.stdout, indent=1)
            sys.stdout.write("\n")
        else:
            from decoders.text import TextOut
            out = TextOut(sys.stdout)
            _print_diff(model_a, ia, model_b, ib, diffs, out.write)
            out.flush()
        sys.stdout.flush()
        rc = _problem_lines("trace-decode", a, model_a.problems)
        if not same:
            rc = max(rc, _problem_lines("trace-decode", b, model_b.problems))
        return rc
    sys.exit(_guard("trace-decode", run, traceback, path=a))


def _print_diff(model_a, ia, model_b, ib, diffs, w):
    from decoders.diff import describe_launch
    for tag, model, n in (("a", model_a, ia), ("b", model_b, ib)):
        d = describe_launch(model, n)
        what = (f"grid {'x'.join(map(str, d['grid'] or []))} block "
                f"{'x'.join(map(str, d['block'] or []))}" if d["kernel"] else "no kernel (GRID_NULL)")
        w(f"{tag}: {d['capture']} launch {n} (record {d['record_index']}, QMD at "
          f"{d['qmd_address'] or 0:#x}): {what}\n")
    values = [d for d in diffs if not d.address]
    addresses = [d for d in diffs if d.address]
    if not diffs:
        w("no differences\n")
    for d in values:
        w(d.text() + "\n")
    if addresses:
        w(f"addresses ({len(addresses)}: allocations and windows land elsewhere in each run):\n")
        for d in addresses:
            w("  " + d.text() + "\n")


@trace_decode.command("explain")
@click.argument("capture", type=click.Path())
@click.option("--launch", type=int, default=None, help="launch N (as the report numbers them; "
              "default: the marked kernel launch, else the first kernel launch)")
@click.option("--html", "html_path", type=click.Path(dir_okay=False), default=None,
              help="write the story as one self-contained HTML page to FILE instead")
@click.option("--traceback", is_flag=True)
def explain_cmd(capture, launch, html_path, traceback):
    """One launch's story, told with the capture's own numbers: the API call, the channel,
    the pushbuffer methods, the QMD, constant bank 0, the doorbell (tracer/explain/)."""
    def run():
        from tracer.explain import explain
        return _problem_lines("trace-decode", capture,
                              explain(capture, sys.stdout, launch=launch, html_path=html_path))
    sys.exit(_guard("trace-decode", run, traceback, path=capture))


@trace_decode.command("pushbuffer")
@click.argument("dump", type=click.Path(dir_okay=False))
@click.option("--gpu", type=click.Choice(["ampere", "ada", "hopper", "blackwell"]),
              default="hopper", show_default=True)
@click.option("--va", type=_int, default=None, help="GPU VA the dump was copied from")
@click.option("--json", "as_json", is_flag=True)
@click.option("--traceback", is_flag=True)
def pushbuffer_cmd(dump, gpu, va, as_json, traceback):
    """Decode a raw dump of little-endian pushbuffer words, and the launches it carries
    (QMDs and constant banks the dump uploads itself). --json: packets, launches (as
    `trace-decode CAPTURE --json` gives them), launch_problems, problems."""
    def run():
        from decoders.pushbuf import decode_dump
        data = Path(dump).read_bytes()
        res = decode_dump(data, gpu, va=va)
        if as_json:
            sys.stdout.write(res.to_json(indent=1) + "\n")   # DumpResult gives JSON text
        else:
            from decoders.text import TextOut
            from tracer.report import _render_launch, _render_packet
            out = TextOut(sys.stdout)
            for pkt in res.methods:
                _render_packet(pkt, out.write)
            if res.launches:
                out.write(f"launches ({len(res.launches)})\n")
            for n, l in enumerate(res.launches):
                _render_launch(n, l, out.write)
            for p in res.launch_problems:
                where = f"offset {p['offset']:#x}: " if p.get("offset") is not None else ""
                out.write(f"launch problem: {where}{p['message']}\n")
            out.flush()
        sys.stdout.flush()
        for p in res.problems:
            click.echo(_line(f"trace-decode: {dump}: offset {p.offset:#x}: {p.message}"),
                       err=True)
        return EXIT_BAD_INPUT if res.problems else 0
    sys.exit(_guard("trace-decode", run, traceback, path=dump))


@trace_decode.command("cubin")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True)
@click.option("--full-names", is_flag=True, help="full demangled kernel names (default: short)")
@click.option("--traceback", is_flag=True)
def cubin_cmd(file, as_json, full_names, traceback):
    """List the kernels of a cubin, fatbin, executable or shared object."""
    def run():
        from decoders.cubin import find_cubins, kernels_json
        doc = kernels_json(find_cubins(file))
        if as_json:
            json.dump(doc, sys.stdout, indent=1, default=str)
            sys.stdout.write("\n")
        else:
            from decoders.text import MAX_LINE, TextOut
            out = TextOut(sys.stdout, limit=None if full_names else MAX_LINE)
            for k in doc["kernels"]:
                params = ", ".join(f"#{p['index']}@{p['offset']:#x}:{p['size']}" for p in k["params"])
                out.write(f"{_s(k['arch']):7s} {_kernel_name(k['name'], full_names)}  "
                          f"regs={k.get('registers')} smem={k.get('shared_memory_bytes')} "
                          f"param_base={k['param_base']:#x}  params: {params}\n")
            out.flush()
        return 0
    sys.exit(_guard("trace-decode", run, traceback, path=file))


@trace_decode.command("sass")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--kernel", default=None)
@click.option("--full-names", is_flag=True, help="full demangled kernel names (default: short)")
@click.option("--traceback", is_flag=True)
def sass_cmd(file, kernel, full_names, traceback):
    """Each instruction's 128-bit word (hex, most significant half first) and its
    scheduling control bits, e.g. `tl_empty  0x0000  000fe2000000080000000a00ff017b82
    B------:R-:W-:Y:S01` (cuobjdump -sass prints the two halves the other way round)."""
    def run():
        from decoders.cubin import find_cubins, sass_listing
        from decoders.text import MAX_LINE, TextOut
        out = TextOut(sys.stdout, limit=None if full_names else MAX_LINE)
        for source, cub in find_cubins(file):
            for ins in sass_listing(cub, kernel=kernel):
                out.write(_sass_line(source, ins, full_names) + "\n")
        out.flush()
        return 0
    sys.exit(_guard("trace-decode", run, traceback, path=file))


def _s(value):
    from decoders.text import printable
    return printable(value)


def _kernel_name(name, full_names=False):
    """A kernel name for a text line: escaped, short unless full_names (decoders/names.py)."""
    from decoders.names import short_name
    from decoders.text import printable
    return printable(name if full_names else short_name(name))


def _sass_line(source, ins, full_names=False):
    """kernel, offset, the 128-bit instruction word (word1 then word0: the number the 16
    little-endian bytes make), control bits, and nvdisasm's text when there is any."""
    parts = [_kernel_name(ins["kernel"], full_names), f"{ins['offset']:#06x}",
             f"{int(ins['word1'], 16):016x}{int(ins['word0'], 16):016x}", ins["control"]]
    if ins.get("text"):
        parts.append(_s(ins["text"]))
    return "  ".join(str(p) for p in parts)
