"""Shorter forms on the attribution and ioctl paths == the forms they replace, on real
captures: Attribution._verify (one pass over the four launch fields) == the pairs-list
version, differences and checked names, for every kernel launch with its call, including
calls altered to mismatch; ioctl.st_name (remembered per struct) == the module search."""
import os

import pytest

from decoders import ioctl as I
from decoders.cuda import attribute as A
from decoders.escapes import numbers as ESC
from decoders.session import decode_capture
from tests.conftest import capture_file

CAPTURES = os.path.join(os.path.dirname(__file__), "..", "captures")


def _verify_reference(self, call, params, cfg, s, info, hw_bytes):
    """Attribution._verify as it was (pairs list), returning (differences, checked)."""
    diffs = []
    checked = []
    required = info.required_cluster_dims if info is not None else None
    pairs = [("grid", cfg["grid"], s.get("grid")), ("block", cfg["block"], s.get("block")),
             ("cluster", cfg["cluster"] or required, s.get("cluster"))]
    if cfg["shared_memory_bytes"] is not None and info is not None:
        # docs/shared-memory.md: the reserve + (static + dynamic) in 128 B granules, where a
        # cubin section of at least the reserve already holds it
        reserve = s.get("shared_memory_driver_reserved_bytes") or 0
        static = info.shared_memory_bytes
        if static >= reserve:
            static -= reserve
        pairs.append(("shared_memory_bytes",
                      reserve + -(-(static + cfg["shared_memory_bytes"]) // 128) * 128,
                      s.get("shared_memory_bytes")))
    for name, api, qmd in pairs:
        if api is None:
            continue
        checked.append(name)
        if api != qmd:
            diffs.append({"field": name, "api": api, "qmd": qmd})
    if any(p["bytes"] is not None for p in params or []):
        checked.append("argument bytes")
    for p in params or []:
        if p["bytes"] is None:
            continue
        got = hw_bytes[p["offset"]:p["offset"] + p["size"]]
        if got != p["bytes"]:
            diffs.append({"field": f"param[{p['index']}] @{p['offset']:#x}",
                          "api": p["bytes"].hex(), "qmd": got.hex() or None})
    extra = call.sections.get("EXTRA_BUFFER")
    if not params and extra and extra["data"]:
        checked.append("argument bytes")
        got = hw_bytes[:len(extra["data"])]
        if got != extra["data"]:
            diffs.append({"field": "param buffer", "api": extra["data"].hex(), "qmd": got.hex()})
    return diffs, checked


@pytest.mark.parametrize("name", ["builtin-vadd", "launch-shapes", "torch-small", "two-streams"])
def test_verify_equals_reference(name, monkeypatch):
    path = str(capture_file(name))
    if not os.path.exists(path):
        pytest.skip(f"captures/{name} not present")
    seen = []
    real = A.Attribution._verify

    def spy(self, call, params, cfg, s, info, hw_bytes):
        for c in (cfg, dict(cfg, grid=[7, 7, 7]), dict(cfg, shared_memory_bytes=None),
                  dict(cfg, cluster=[2, 1, 1]), dict(cfg, shared_memory_bytes=3)):
            want = _verify_reference(self, call, params, c, s, info, hw_bytes)
            got = real(self, call, params, c, s, info, hw_bytes)
            assert (got, self.checked) == want
        seen.append(1)
        return real(self, call, params, cfg, s, info, hw_bytes)
    monkeypatch.setattr(A.Attribution, "_verify", spy)
    decode_capture(path, keep=None)
    assert seen


def test_st_name_equals_search():
    from decoders.escapes import structs as S
    from decoders.rm import nvos
    structs = [st for row in ESC.ESCAPES.values() for k, st in row[1].items()
               if isinstance(k, int)]
    assert structs
    for st in structs * 2:
        want = next((n for mod in (nvos, S) for n, v in vars(mod).items() if v is st),
                    "X args")
        assert I.st_name(st, "X") == want


def _for_launch_reference(self, launch, call):
    """Attribution.for_launch as it was (one dict, filled in), for the paths that do not
    reach _verify: no call, and a QMD that runs no kernel."""
    s = getattr(launch, "_summary", None) or launch.summary
    out = {"api_call": None, "graph_node": None, "kernel": None, "args": None,
           "verified": None, "checked": [], "differences": [], "shared_memory": None,
           "why": None}
    if call is None:
        out["why"] = "the doorbell rang outside any bracketed API call"
        return self._by_address(out, s)
    out["api_call"] = {"name": call.name, "index": call.index,
                       "launch": call.launch_config, "t_start": call.t_start}
    out["why"] = (f"a {s.get('qmd_type')} QMD runs no kernel: nothing to check against "
                  f"{call.base}")
    return out


@pytest.mark.parametrize("name", ["builtin-vadd", "two-streams", "graph-replay"])
def test_for_launch_without_kernel_equals_reference(name, monkeypatch):
    path = str(capture_file(name))
    if not os.path.exists(path):
        pytest.skip(f"captures/{name} not present")
    seen = []
    real = A.Attribution.for_launch

    def spy(self, launch, call, args=True, before_entry=False):
        got = real(self, launch, call, args, before_entry)
        if call is None or not launch._summary["kernel"]:
            want = _for_launch_reference(self, launch, call)
            assert list(got.items()) == list(want.items())      # same keys, same order
            seen.append(call is None)
        # a kernel the driver runs for a memset or copy (decoders/cuda/driverkernels.py)
        # adds its two keys after these
        extra = ["driver_kernel", "unchecked"] if got.get("driver_kernel") else []
        assert list(got) == ["api_call", "graph_node", "kernel", "args", "verified",
                             "checked", "differences", "shared_memory", "why"] + extra
        return got
    monkeypatch.setattr(A.Attribution, "for_launch", spy)
    decode_capture(path, keep=None)
    assert seen
    # a kernel QMD whose doorbell rang outside any call (no capture here has one)
    launch = type("L", (), {"_summary": {"kernel": True, "program_address": 0x1000}})()
    assert real(A.Attribution(), launch, None) == \
        _for_launch_reference(A.Attribution(), launch, None)
