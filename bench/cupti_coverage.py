"""CUPTI as the outside oracle: for each capture whose manifest holds CUPTI's kernels
(scripts/corpus/_cupti.py `kernel_configs`, or `cupti.kernels` lists written by the corpus
programs), the distinct (name, grid, block, registers) configurations CUPTI saw, and how
many of them the decode also shows: a kernel launch with that demangled name, grid, block
and QMD register count. Nothing here reads what the shim recorded about the API.

    python3 bench/cupti_coverage.py [CAPTURE_DIR ...]     (default: every captures/* with CUPTI truth)
"""
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _norm(name):
    return re.sub(r"\s+", " ", name or "").strip()


# CUPTI's names for the driver's own kernels, and the name the decode gives them
# (decoders/cuda/driverkernels.py, graphdriver.py): a graph MEMCPY node ran as a kernel that
# CUPTI lists as "memcpy32_post" (captures/jax-cmdbuf, H100: grid 1 and 16, block 256, 16
# registers), the decode's "[driver copy, graph MEMCPY node]". Grid, block and registers
# are still compared as CUPTI gives them. (cudaMemcpyAsync's copy kernels are memcpy
# activities in CUPTI, not kernels: nothing to map.)
DRIVER_KERNELS = {"memcpy32_post": "[driver copy, graph MEMCPY node]"}


NATIVE = "native_cupti"     # ground truth's CUPTI of the same program run without the shim


def cupti_configs(truth):
    """{(name, grid, block, registers)} of every CUPTI kernel list found in a manifest's
    ground truth (walked: each corpus program nests its parts differently), the native
    run's (NATIVE) left out."""
    out = set()

    def walk(d):
        if isinstance(d, dict):
            for k, v in d.items():
                if k == NATIVE:
                    continue
                if k in ("kernels", "kernel_configs") and isinstance(v, list) and v and \
                        isinstance(v[0], dict) and "registers" in v[0]:
                    for e in v:
                        name = _norm(e["name"])
                        out.add((DRIVER_KERNELS.get(name, name), tuple(e["grid"]),
                                 tuple(e["block"]), e["registers"]))
                else:
                    walk(v)
        elif isinstance(d, list):
            for x in d:
                walk(x)
    walk(truth)
    return out


def decoded_configs(capture):
    from decoders.session import decode_capture
    m = decode_capture(str(capture))
    seen = set()
    for launch in m.launches:
        s = launch._summary
        if not s.get("kernel"):
            continue
        k = (s.get("attribution") or {}).get("kernel") or {}
        seen.add((_norm(k.get("name")), tuple(s.get("grid") or ()), tuple(s.get("block") or ()),
                  s.get("registers")))
    return seen


def coverage(capture_dir):
    """CUPTI's configurations and those the decode lacks. Where the manifest also holds
    CUPTI of the program run natively (NATIVE), the truth is what both runs agree on: CUPTI
    names a launch by its function handle, and when XLA's autotuning unloads a module and
    the next one gets the same handle, one run's CUPTI may give the earlier module's
    kernel name (captures/jax-train: the traced run named 4 launches loop_multiply_fusion,
    the native run and the cubin loaded at record 6329 say input_reduce_fusion_1).
    `runs_differ`: the configurations only one run's CUPTI gave."""
    d = Path(capture_dir)
    truth = json.loads((d / "manifest.json").read_text()).get("ground_truth", {})
    traced = cupti_configs(truth)
    native = cupti_configs(truth[NATIVE]) if truth.get(NATIVE) else None
    if not traced and not native:
        return None
    # (a program recorded without CUPTI in its traced run: the native run's alone)
    want = traced & native if traced and native else traced or native
    got = decoded_configs(next((c for c in (d / "capture.tlc.gz", d / "capture.tlc.zst",
                                            d / "capture.tlc") if c.exists()), d / "capture.tlc.gz"))
    missing = sorted(want - got)
    r = {"capture": d.name, "cupti_configs": len(want), "also_decoded": len(want) - len(missing),
         "missing": [list(map(str, x)) for x in missing]}
    if native and traced:
        r["runs_differ"] = [[run] + list(map(str, x)) for run, only in
                            (("traced", traced - native), ("native", native - traced))
                            for x in sorted(only)]
        r["traced_only_not_decoded"] = [list(map(str, x)) for x in sorted(traced - native - got)]
    return r


def main(argv):
    dirs = argv or sorted(str(p.parent) for p in (ROOT / "captures").glob("*/manifest.json"))
    for d in dirs:
        r = coverage(d)
        if r is not None:
            print(json.dumps(r))


if __name__ == "__main__":
    main(sys.argv[1:])
