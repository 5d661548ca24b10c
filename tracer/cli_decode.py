"""`trace-decode`: the report of a saved capture (`trace-decode CAPTURE`, the default
command), and its other views: timeline, diff, explain, pushbuffer, cubin, sass. Offline:
no GPU needed.
"""
import json
import os
import sys
from pathlib import Path

import click

from decoders.errors import TraceLaunchError
from tracer.cli_common import (EXIT_BAD_INPUT, SHOWN_LAUNCHES, _env_epilog, _guard, _line,
                               print_report)

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
