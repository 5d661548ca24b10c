"""`trace-launch`: run a program under the shim, write its capture, and print the report
(decoded while the program runs where the CPUs allow, tracer/live.py); the capture's exit
step (compaction) beside the decode.
"""
import json
import os
import sys
from pathlib import Path

import click

from decoders.errors import TraceLaunchError
from tracer.cli_common import (SHOWN_LAUNCHES, _env_epilog, _guard, _line, brief_for,
                               print_report)

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
        st = _guard("trace-launch", exit_step, traceback, path=str(out))
        click.echo(f"trace-launch: capture written to {out}{_exit_note(st)}", err=True)
        if not no_report:
            model = decoding[0].model if decoding and decoding[0].error is None else None
            if model is not None:   # decoded as the shim wrote it: what the rewrite cut too
                model.images_elided += st.get("images_elided", 0)
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
        st = _guard("trace-launch", exit_step, traceback, path=str(out))
        click.echo(f"trace-launch: capture written to {out}{_exit_note(st)}", err=True)
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
    compact_capture). Returns its stats (_exit_note makes the written line's note)."""
    from decoders.capture.writer import compact_capture
    return compact_capture(out, compress=compress, all_entries=all_entries)


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
    stats, or the same errors raised here."""
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
    return st


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
