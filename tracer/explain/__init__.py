"""`trace-decode explain CAPTURE [--launch N] [--html FILE]`: one launch's story, told with
the capture's own numbers, for people learning what a kernel launch is (issue 27).

    <<<grid, block>>> -> runtime -> driver API call -> pushbuffer -> QMD -> doorbell -> SMs

`build_story(model, n)` reads the decoded model (decoders/session.py CaptureModel: the
launch summary and its attribution, the API calls, the submission that carried the
launch, the ioctls and the RM object tree) and returns a `Story`: its `facts` (every
number the story tells, as data: what the tests compare with a capture's manifest) and
its sections, each a list of lines made of text, values and terms. `render_text` and
`render_html` are two views of that one story. No number is written in this package:
each comes from the capture, or from the decoders' tables (a method's or a QMD field's
name, a shift named in a field's name).

Each term (TERMS) is defined once, where the story first uses it: the text prints the
definition under that line; the HTML page shows it on hover and in a glossary.
Every string from the capture is escaped: decoders/text.py printable() for the text,
html.escape() for the page.

The package, in the order a story is made:
    story.py       TERMS and the story as data (Story, Section, Line, Value, Term)
    reader.py      which launch (pick_launch, ExplainError) and the look-ups into the model
    program.py     sections: the launch, the driver API call, the channel
    pushbuffer.py  section: the methods libcuda wrote, grouped into steps
    qmd.py         sections: the QMD, constant bank 0
    doorbell.py    sections: the doorbell, on the GPU
    render.py      render_text, render_html
"""
from tracer.explain.doorbell import _doorbell, _gpu
from tracer.explain.program import _api, _channel, _intro
from tracer.explain.pushbuffer import _pushbuffer
from tracer.explain.qmd import _cbank0, _qmd, qmd_fields
from tracer.explain.reader import ExplainError, _Reader, pick_launch
from tracer.explain.render import render_html, render_text
from tracer.explain.story import TERMS, Line, Section, Story, Term, Value

__all__ = ["explain", "build_story", "render_text", "render_html", "pick_launch",
           "ExplainError", "TERMS", "Story", "Section", "Line", "Value", "Term", "qmd_fields"]


# -- building ----------------------------------------------------------------------------
def build_story(model, index):
    """The Story of launch `index` of a decoded capture."""
    launch = model.launches[index]
    rd = _Reader(model, launch, index)
    s = rd.s
    facts = {"launch": index, "capture": model.path, "kernel": bool(s.get("kernel")),
             "qmd_version": s.get("qmd_version"), "qmd_address": s.get("qmd_address"),
             "qmd_type": s.get("qmd_type"), "grid": s.get("grid"), "block": s.get("block"),
             "cluster": s.get("cluster"), "registers": s.get("registers"),
             "shared_memory_bytes": s.get("shared_memory_bytes"),
             "program_address": s.get("program_address"), "record_index": launch.record_index}
    sections = [_intro(model, rd, facts), _api(rd, facts), _channel(rd, facts),
                _pushbuffer(rd, facts), _qmd(rd, facts), _cbank0(rd, facts),
                _doorbell(rd, facts), _gpu(rd, facts)]
    return Story(model.path, index, facts, [x for x in sections if x is not None])


# -- the command -------------------------------------------------------------------------
def explain(path, out, launch=None, html_path=None):
    """Decode `path` as far as the story of launch `launch` (default: pick_launch) needs
    (decoders/pick.py: a launch early in a long job is told without decoding the job),
    tell it on `out`, or write the page to `html_path`. Returns the model's problems (the
    CLI prints them): those of the records read."""
    from decoders.pick import PickError, until_launch
    from decoders.session import decode_capture
    from tracer.progress import Bar
    until = until_launch(path, launch, named=True)
    with Bar("trace-decode") as progress:   # on a terminal, for a decode past a few seconds
        model = decode_capture(path, progress=progress, until=until)
    try:
        index = until.index(model)
    except PickError as exc:
        raise ExplainError(str(exc)) from None
    story = build_story(model, index)
    if html_path:
        from tracer import write_text
        write_text(html_path, lambda f: render_html(story, f))
    else:
        render_text(story, out)
        out.flush()
    return model.problems
