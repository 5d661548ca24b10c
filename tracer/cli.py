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


def _fail(prog, message):
    click.echo(f"{prog}: {message}", err=True)
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


def print_report(path, out, as_json=False, color=None, ioctls=False, objects=False,
                 stats=False, prog="trace-decode"):
    """Decode `path` and write the report to `out`. Returns the exit status: 0, or 2 when the
    capture has problems (each printed as one line on stderr after the report)."""
    from decoders.session import decode_capture
    from tracer.report import render_json, render_text
    model = decode_capture(path)
    if as_json:
        render_json(model, out)
    else:
        render_text(model, out, color=_use_color(color, out), show_ioctls=ioctls,
                    show_objects=objects, show_stats=stats)
    out.flush()
    for p in model.problems:
        click.echo(f"{prog}: {path}: {p}", err=True)
    return EXIT_BAD_INPUT if model.problems else 0


# ---- trace-launch -------------------------------------------------------------------

@click.command(context_settings=dict(ignore_unknown_options=True, allow_interspersed_args=False,
                                     help_option_names=["-h", "--help"]))
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
@click.option("--color/--no-color", default=None, help="colour the report (default: on a tty)")
@click.option("--traceback", is_flag=True, help="show Python tracebacks for errors")
@click.argument("program", nargs=-1, type=click.UNPROCESSED)
def trace_launch(output, mode, grid, block, shared_mem, as_json, no_report, color, traceback,
                 program):
    """Run PROGRAM [ARGS]... under the shim and print what its launches did at the hardware
    interface. With no PROGRAM, trace the built-in vadd launch (cuda-python driver API).

    The program's stdout is untouched; the report goes to stderr. The exit status is the
    program's (128+N when a signal N killed it)."""
    from tracer.run import TracerError, builtin_argv, check_driver, default_output, \
        resolve_program, run_traced
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
        out = Path(output) if output else default_output(name)
        if output:
            try:   # an unwritable path is an error before the program starts
                fd = os.open(out, os.O_WRONLY | os.O_CREAT, 0o600)
                os.close(fd)
            except OSError as exc:
                raise TracerError(f"cannot write capture {out}: {exc.strerror}")
        rc = run_traced(argv, out, mode=mode)
    except TracerError as exc:
        if traceback:
            raise
        click.echo(f"trace-launch: {exc}", err=True)
        sys.exit(exc.status)
    click.echo(f"trace-launch: capture written to {out}", err=True)
    if not no_report:
        _guard("trace-launch", lambda: print_report(
            str(out), sys.stderr, as_json=as_json, color=color, prog="trace-launch"), traceback,
            path=str(out))
    sys.exit(rc)


# ---- trace-decode -------------------------------------------------------------------

class DefaultGroup(click.Group):
    """`trace-decode CAPTURE` runs the `report` command; other words are subcommands."""

    def parse_args(self, ctx, args):
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = ["report"] + list(args)
        return super().parse_args(ctx, args)


@click.group(cls=DefaultGroup, context_settings=dict(help_option_names=["-h", "--help"]))
def trace_decode():
    """Decode trace-launch captures offline (no GPU needed).

    \b
    trace-decode CAPTURE [--json] [--ioctls] [--objects] [--stats]
    trace-decode pushbuffer DUMP --gpu hopper [--va ADDR] [--json]
    trace-decode cubin FILE [--json]
    trace-decode sass CUBIN|PROGRAM [--kernel NAME]
    """


@trace_decode.command("report")
@click.argument("capture", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="one JSON object: meta, ioctls, mmaps, "
              "submissions, launches, stats")
@click.option("--ioctls", is_flag=True, help="list every ioctl, decoded")
@click.option("--objects", is_flag=True, help="print the RM object tree")
@click.option("--stats", is_flag=True, help="print every counter and the naming coverage")
@click.option("--color/--no-color", default=None)
@click.option("--traceback", is_flag=True)
def report_cmd(capture, as_json, ioctls, objects, stats, color, traceback):
    """Print the report of CAPTURE (gzip or zstd compressed captures are read as they are)."""
    rc = _guard("trace-decode", lambda: print_report(
        capture, sys.stdout, as_json=as_json, color=color, ioctls=ioctls, objects=objects,
        stats=stats), traceback, path=capture)
    sys.exit(rc)


def _int(text):
    return int(text, 0)


@trace_decode.command("pushbuffer")
@click.argument("dump", type=click.Path(dir_okay=False))
@click.option("--gpu", type=click.Choice(["ampere", "ada", "hopper", "blackwell"]),
              default="hopper", show_default=True)
@click.option("--va", type=_int, default=None, help="GPU VA the dump was copied from")
@click.option("--json", "as_json", is_flag=True)
@click.option("--traceback", is_flag=True)
def pushbuffer_cmd(dump, gpu, va, as_json, traceback):
    """Decode a raw dump of little-endian pushbuffer words."""
    def run():
        from decoders.pushbuf import decode_dump
        data = Path(dump).read_bytes()
        res = decode_dump(data, gpu, va=va)
        if as_json:
            sys.stdout.write(res.to_json(indent=1) + "\n")   # DumpResult gives JSON text
        else:
            from tracer.report import _render_launch, _render_packet
            for pkt in res.methods:
                _render_packet(pkt, sys.stdout.write)
            for n, l in enumerate(getattr(res, "launches", None) or []):
                _render_launch(n, l, sys.stdout.write)
        sys.stdout.flush()
        for p in res.problems:
            click.echo(f"trace-decode: {dump}: offset {p.offset:#x}: {p.message}", err=True)
        return EXIT_BAD_INPUT if res.problems else 0
    sys.exit(_guard("trace-decode", run, traceback, path=dump))


@trace_decode.command("cubin")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True)
@click.option("--traceback", is_flag=True)
def cubin_cmd(file, as_json, traceback):
    """List the kernels of a cubin, fatbin, executable or shared object."""
    def run():
        from decoders.cubin import kernels_json
        doc = kernels_json(file)
        if as_json:
            json.dump(doc, sys.stdout, indent=1, default=str)
            sys.stdout.write("\n")
        else:
            for k in doc["kernels"]:
                params = ", ".join(f"#{p['index']}@{p['offset']:#x}:{p['size']}" for p in k["params"])
                sys.stdout.write(f"{k['arch']:7s} {k['name']}  regs={k.get('registers')} "
                                 f"smem={k.get('shared_memory_bytes')} param_base={k['param_base']:#x}"
                                 f"  params: {params}\n")
        return 0
    sys.exit(_guard("trace-decode", run, traceback, path=file))


@trace_decode.command("sass")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--kernel", default=None)
@click.option("--traceback", is_flag=True)
def sass_cmd(file, kernel, traceback):
    """Each instruction's 128-bit word and its scheduling control bits."""
    def run():
        from decoders.cubin import find_cubins, sass_listing
        for source, cub in find_cubins(file):
            for ins in sass_listing(cub, kernel=kernel):
                sys.stdout.write(_sass_line(source, ins) + "\n")
        return 0
    sys.exit(_guard("trace-decode", run, traceback, path=file))


def _sass_line(source, ins):
    parts = [f"{ins.get('kernel', '')}", f"{ins.get('offset', 0):#06x}"]
    lo, hi = ins.get("lo"), ins.get("hi")
    if lo is not None and hi is not None:
        parts.append(f"{hi:016x}{lo:016x}")
    parts.append(ins.get("control_text") or ins.get("control") or "")
    if ins.get("text"):
        parts.append(ins["text"])
    return "  ".join(str(p) for p in parts)
