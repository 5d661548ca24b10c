"""Two views of one Story: `render_text` (each term defined under the line that first uses
it) and `render_html` (one self-contained page: the chain of boxes, the sections, the
definitions on hover and in a glossary). Strings from the capture are escaped:
decoders/text.py printable() for the text, html.escape() for the page."""
import html
import textwrap

from tracer.explain.story import TERMS, Term, Value

WIDTH = 100         # text lines are wrapped here (TextOut cuts at 300 anyway)


# -- text --------------------------------------------------------------------------------
def _plain(part):
    from decoders.text import printable
    if isinstance(part, Term):
        return part.shown
    if isinstance(part, Value):
        return printable(part.text) if part.capture else part.text
    return part


def render_text(story, out):
    """The story as text: each section, its lines wrapped, each term's definition under
    the line that first uses it."""
    from decoders.text import TextOut
    text_out = TextOut(out)
    w = text_out.write
    defined = set()
    for k, sec in enumerate(story.sections):
        w(("\n" if k else "") + f"{k}. {sec.title}\n")
        for line in sec.lines:
            text = "".join(_plain(p) for p in line.parts)
            pad = "   " + "  " * line.indent
            if line.code:
                w(pad + text + "\n")
            else:
                w("\n".join(textwrap.wrap(text, WIDTH, initial_indent=pad,
                                          subsequent_indent=pad + "  ")) + "\n")
            for p in line.parts:
                if isinstance(p, Term) and p.name not in defined:
                    defined.add(p.name)
                    w("\n".join(textwrap.wrap(f"* {p.name}: {TERMS[p.name]}", WIDTH,
                                              initial_indent=pad + "    ",
                                              subsequent_indent=pad + "      ")) + "\n")
    text_out.flush()
    return defined


# -- HTML --------------------------------------------------------------------------------
_CSS = """
body{font:15px/1.45 system-ui,sans-serif;margin:24px;color:#1d2330;background:#fafafa}
h1{font-size:20px;margin:0 0 4px}
.sub{color:#5a6272;margin:0 0 18px}
.chain{display:flex;flex-wrap:wrap;align-items:stretch;gap:6px;margin:0 0 24px}
.box{background:#fff;border:1px solid #c9cfda;border-radius:8px;padding:8px 10px;min-width:150px}
.box h3{margin:0 0 4px;font-size:13px;text-transform:uppercase;letter-spacing:.04em;color:#3a4a6b}
.arrow{align-self:center;font-size:22px;color:#8a93a6}
.sec{background:#fff;border:1px solid #d7dce5;border-radius:8px;padding:10px 14px;margin:0 0 14px}
.sec h2{font-size:16px;margin:0 0 6px}
.line{margin:3px 0}
.code{font-family:ui-monospace,monospace;font-size:13px;white-space:pre-wrap;word-break:break-all}
.v{font-family:ui-monospace,monospace;background:#eef2fb;border-radius:3px;padding:0 2px}
.v.hl{background:#ffd76a}
.key-grid,.key-block{background:#d8f0dd}
.key-registers,.key-shared-memory,.key-program{background:#e9defa}
.key-token,.key-doorbell,.key-gp-put,.key-gp-put-prev{background:#fde2d2}
.key-args,.key-param-base,.key-cbank0{background:#d9ecfb}
.term{border-bottom:1px dotted #3a4a6b;cursor:help;position:relative}
.term:hover::after,.term:focus::after{content:attr(data-def);position:absolute;left:0;top:1.5em;
 z-index:9;width:340px;background:#1d2330;color:#fff;padding:6px 8px;border-radius:6px;
 font:13px/1.4 system-ui,sans-serif;white-space:normal}
dl{margin:0}dt{font-weight:600;margin-top:6px}dd{margin:0 0 0 16px}
"""

_JS = """
document.querySelectorAll('.v[data-k]').forEach(function(el){
  var k=el.getAttribute('data-k');
  function set(on){document.querySelectorAll('.v[data-k="'+k+'"]').forEach(function(o){
    o.classList.toggle('hl',on);});}
  el.addEventListener('mouseenter',function(){set(true);});
  el.addEventListener('mouseleave',function(){set(false);});
});
"""


def _key_class(key):
    head = key.split("-")[0] if key.split("-")[0] in ("grid", "block") else key
    return f" key-{head}" if head in ("grid", "block", "registers", "shared-memory", "program",
                                       "token", "doorbell", "gp-put", "gp-put-prev", "args",
                                       "param-base", "cbank0") else ""


def _html_part(part):
    from decoders.text import printable
    e = html.escape
    if isinstance(part, Term):
        return (f'<span class="term" tabindex="0" data-term="{e(part.name)}" '
                f'data-def="{e(part.name)}: {e(TERMS[part.name])}">'
                f'{e(part.shown)}</span>')
    if isinstance(part, Value):
        text = printable(part.text) if part.capture else part.text
        return (f'<span class="v{_key_class(part.key)}" data-k="{e(part.key)}">'
                f'{e(text)}</span>')
    return e(part)


def _html_line(line):
    cls = "line code" if line.code else "line"
    pad = f' style="margin-left:{line.indent * 18}px"' if line.indent else ""
    return f'<div class="{cls}"{pad}>{"".join(_html_part(p) for p in line.parts)}</div>'


def _safe(text):
    """Escaped for the page: controls as printable() shows them, then html.escape."""
    from decoders.text import printable
    return html.escape(printable(text))


def render_html(story, out):
    """One self-contained page: the chain of boxes (API call -> channel -> pushbuffer ->
    QMD -> constant bank 0 -> doorbell -> GPU) with the key fields, each section in full
    below, definitions on hover and in a glossary. No external resource."""
    e = html.escape
    from decoders.text import printable
    used = []
    for sec in story.sections:
        for line in sec.lines + sec.brief:
            for p in line.parts:
                if isinstance(p, Term) and p.name not in used:
                    used.append(p.name)
    title = f"explain: launch {story.index} of {printable(story.path)}"   # escaped below
    w = out.write
    w("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n")
    w(f"<title>{e(title)}</title>\n<style>{_CSS}</style></head><body>\n")
    w(f"<h1>{e(title)}</h1>\n<p class=\"sub\">Every number on this page comes from the "
      f"capture. Hover a dotted word for its meaning, a value to see where else it "
      f"appears.</p>\n<div class=\"chain\" id=\"chain\">\n")
    boxes = [sec for sec in story.sections if sec.brief]
    for k, sec in enumerate(boxes):
        if k:
            w('<div class="arrow">&rarr;</div>\n')
        w(f'<div class="box" id="box-{e(sec.key)}"><h3>{_safe(sec.box or sec.title)}</h3>'
          + "".join(_html_line(l) for l in sec.brief) + "</div>\n")
    w("</div>\n")
    for k, sec in enumerate(story.sections):
        w(f'<div class="sec" id="sec-{e(sec.key)}"><h2>{k}. {_safe(sec.title)}</h2>\n')
        for line in sec.lines:
            w(_html_line(line) + "\n")
        w("</div>\n")
    w('<div class="sec" id="glossary"><h2>Words</h2><dl>\n')
    for name in used:
        w(f"<dt id=\"term-{e(name)}\">{e(name)}</dt><dd>{e(TERMS[name])}</dd>\n")
    w(f"</dl></div>\n<script>{_JS}</script>\n</body></html>\n")
