"""Kernel names as people read them (issue 16): the short name of a demangled C++ name.

PyTorch's demangled kernel names run to thousands of characters: a return type, namespaces,
template arguments that hold functors and lambdas, and the parameter list. Nsight Systems
shows the function's own name by default; so does the text report:

    void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>,
        at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, ...)
    -> vectorized_elementwise_kernel

The rule, over the demangled string with a small parser of <> () {} [] nesting: drop every
bracketed group at the top level (template arguments, the parameter list, `(anonymous
namespace)`, `{lambda(int)#1}`, `[clone .cold]`), then the return type (what comes before
the last top-level space), then the namespaces and enclosing classes (all but the last
`::` part). Deterministic, no tables. A name that is not C++ (extern "C", Triton's
`triton_poi_fused_add_0`) is returned as it is. `operator<`, `operator()` and friends keep
their operator token. --json keeps the mangled and the full demangled name.
"""

_OPEN = {"<": ">", "(": ")", "{": "}", "[": "]"}
_CLOSE = {v: k for k, v in _OPEN.items()}
_OPERATORS = ("operator<<=", "operator>>=", "operator<<", "operator>>", "operator<=>",
              "operator<=", "operator>=", "operator->*", "operator->", "operator()",
              "operator[]", "operator<", "operator>")


def _top_level(name):
    """`name` with every top-level bracketed group removed, and whether the brackets
    balanced. Operator tokens that hold brackets are kept as they are."""
    out = []
    depth = 0
    stack = []
    i, n = 0, len(name)
    while i < n:
        if name.startswith("operator", i):
            for op in _OPERATORS:
                if name.startswith(op, i):
                    break
            else:
                op = "o"
            if depth == 0:
                out.append(op)
            i += len(op)
            continue
        if name.startswith("->", i):
            if depth == 0:
                out.append("->")
            i += 2
            continue
        ch = name[i]
        if ch in _OPEN:
            # "->" inside a name is not a bracket; a lone ">" at depth 0 is not either
            stack.append(_OPEN[ch])
            depth += 1
        elif ch in _CLOSE:
            if stack and stack[-1] == ch:
                stack.pop()
                depth -= 1
            elif depth == 0:
                return name, False
            else:   # mismatched: give up on this name
                return name, False
        elif depth == 0:
            out.append(ch)
        i += 1
    return "".join(out), depth == 0


_SHORT = {}     # demangled name -> short_name() (a training loop names the same kernels)


def short_name(demangled):
    """The function's own name, without return type, namespaces, template arguments,
    parameters or lambdas. None stays None; a name that does not parse is returned whole."""
    if not demangled:
        return demangled
    short = _SHORT.get(demangled)
    if short is None:
        if len(_SHORT) >= 4096:
            _SHORT.clear()
        short = _SHORT[demangled] = _short_name(demangled)
    return short


def _short_name(demangled):
    flat, ok = _top_level(demangled.strip())
    if not ok:
        return demangled
    flat = flat.strip()
    # trailing qualifiers of a member function: "... const", "... &&"
    for tail in (" const", " volatile", " &&", " &", " noexcept"):
        while flat.endswith(tail):
            flat = flat[: -len(tail)].rstrip()
    # the return type: what precedes the last top-level space that is not inside an
    # operator token ("operator new" keeps its space)
    head, sep, last = flat.rpartition(" ")
    if sep and not head.endswith("operator"):
        flat = last
    parts = [p for p in flat.split("::") if p]
    short = parts[-1] if parts else ""
    if not short:
        return demangled
    return short
