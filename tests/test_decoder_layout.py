"""decoders/ as rooms with narrow doors (STYLE 13a/13b, issue 24): no import circle between
its modules, found by reading every import statement (module level and inside functions,
where a circle hides best) with ast, never by importing; and no module past 800 lines
except generated tables."""
import ast

from conftest import ROOT

MAX_LINES = 800
GENERATED = {"decoders/rm/controls_data.py"}     # written by decoders/rm/gen_controls.py


def _modules():
    """{dotted name: path} of every module under decoders/ (a package by its __init__)."""
    out = {}
    for path in sorted((ROOT / "decoders").rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _imports(name, path, modules):
    """The decoders modules that `name` imports anywhere in its source: `from P import X`
    is P.X where that is a module, else P; relative imports resolved from the package."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                       for a in node.names]
        else:
            continue
        out.update(t for t in targets if t in modules and t != name)
    return out


def import_graph():
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def circles(graph):
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_no_import_circle_in_decoders():
    graph = import_graph()
    assert "decoders.launch" in graph and "decoders.pushbuf" in graph      # the walk sees them
    assert "decoders.launch.decoder" in graph["decoders.launch"]
    found = circles(graph)
    assert found == [], "import circles: " + "; ".join(" <-> ".join(c) for c in found)


def test_the_circle_finder_finds_circles():
    """Can fail: a lazy import inside a function closes a circle as surely as a top one."""
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []
    src = {"m": "def f():\n    from decoders import n\n", "n": "import decoders.m\n"}
    mods = {f"decoders.{k}": v for k, v in src.items()}

    class _P:
        name = "x.py"

        def __init__(self, text):
            self.text = text

        def read_text(self):
            return self.text
    graph = {k: _imports(k, _P(v), mods) for k, v in mods.items()}
    assert circles(graph) == [["decoders.m", "decoders.n"]]


def test_no_decoder_module_past_800_lines():
    long = []
    for path in sorted((ROOT / "decoders").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        n = len(path.read_text().splitlines())
        if n > MAX_LINES and rel not in GENERATED:
            long.append(f"{rel}: {n} lines")
    assert long == []
