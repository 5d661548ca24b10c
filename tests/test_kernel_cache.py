"""Attribution.kernel() is worked out once per function handle, and again only when what
it reads changes: PyTorch calls cuKernelGetFunction for a kernel each step, which binds one
handle; the other handles' entries stay (a 500-step job worked out 29,000 of them again
when every lookup cleared them all)."""
from types import SimpleNamespace

from decoders.cuda.attribute import Attribution

PID = 7


def _get_function(out, kernel):
    """A cuKernelGetFunction that returned `out` for library kernel `kernel`."""
    return SimpleNamespace(kind="OUT0", base="cuKernelGetFunction", name="cuKernelGetFunction",
                           result=0, out=out, args={"pFunc": 0x1000, "kernel": kernel},
                           pid=PID, ordered=None, names_seen=None)


def _attribution():
    attr = Attribution(None)
    attr.functions[(PID, 0xA0)] = ("_Z1fv", 0x10)
    attr.functions[(PID, 0xB0)] = ("_Z1gv", 0x10)
    attr.functions[(PID, 0xC0)] = ("_Z1hv", 0x10)     # a library kernel (CUkernel)
    return attr


def test_a_lookup_leaves_the_other_handles_entries():
    attr = _attribution()
    a, b = attr.kernel(0xA0, pid=PID), attr.kernel(0xB0, pid=PID)
    assert (a["name"], b["name"]) == ("f()", "g()")
    attr.observe(_get_function(0xA0, 0xC0))     # handle 0xA0 now runs h()
    assert attr.kernel(0xA0, pid=PID)["name"] == "h()"
    assert attr.kernel(0xB0, pid=PID) is b      # not worked out again


def test_a_lookup_of_a_new_handle_names_it():
    attr = _attribution()
    assert attr.kernel(0xD0, pid=PID) is None
    attr.observe(_get_function(0xD0, 0xC0))
    assert attr.kernel(0xD0, pid=PID)["mangled"] == "_Z1hv"


def test_a_failed_lookup_changes_nothing():
    attr = _attribution()
    a = attr.kernel(0xA0, pid=PID)
    call = _get_function(0xA0, 0xC0)
    call.result = 500
    attr.observe(call)
    assert attr.kernel(0xA0, pid=PID) is a
