"""Real-workload captures (issue 16): truth from the manifests written at capture time.

Shared memory: captures/smem-sweep's 61 launches against the measured rule
(docs/shared-memory.md), with the static size the driver reported at capture time
(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES), not the cubin the decoder reads.
"""
import pytest

from conftest import CAPTURES, capture_file, capture_path, manifest
from decoders.fields import align_up
from decoders.session import decode_capture

ALL = sorted(p.name for p in CAPTURES.iterdir() if capture_file(p.name).exists())


def _kernel_launches(name):
    model = decode_capture(capture_path(name))
    return model, [launch.summary for launch in model.launches if launch.summary["kernel"]]


def test_shared_memory_rule_on_the_sweep():
    truth = manifest("smem-sweep")["ground_truth"]
    _, launches = _kernel_launches("smem-sweep")
    want = [t for t in truth["launches"] if t["ok"]]
    assert len(want) == 61 and len(launches) == len(want)
    reserve = truth["device_limits"]["CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK"]
    for t, s in zip(want, launches):
        requested = t["shared_mem_static"] + t["shared_mem_dynamic"]
        assert s["shared_memory_bytes"] == reserve + align_up(requested, 128), t
        assert s["grid"] == t["grid"] and s["block"] == t["block"], t
        assert s["verified"] is True, (t, s["attribution"]["differences"])
        sm = s["attribution"]["shared_memory"]
        assert (sm["requested"], sm["allocated"]) == (requested, s["shared_memory_bytes"])


def test_a_real_shared_memory_difference_still_fails():
    """The rule explains rounding, nothing else: one granule more than the call asked for
    is reported as a mismatch."""
    from decoders.cuda.attribute import smem_allocation
    sm = smem_allocation(0, 1068, 1024, 128, 1024 + 1152 + 128)
    assert sm["expected_allocation"] == 1024 + 1152 != sm["allocated"]


@pytest.mark.parametrize("name", ALL)
def test_no_false_mismatch(name):
    """No kernel launch of a real capture is `verified: false`, and each that is not checked
    says why."""
    model, launches = _kernel_launches(name)
    bad = [(s["qmd_address"], s["attribution"]["differences"]) for s in launches
           if s["verified"] is False]
    assert not bad


def _replays(name, call_names=("cuGraphLaunch",)):
    """{API call index: [kernel launch summaries]} of the graph launches of a capture."""
    _, launches = _kernel_launches(name)
    out = {}
    for s in launches:
        call = s["api_call"]
        if call and call["name"] in call_names:
            out.setdefault(call["index"], []).append(s)
    return [out[k] for k in sorted(out)]


def test_every_kernel_of_every_graph_replay():
    """captures/launch-paths: a graph of two kernel nodes (scale, then offset) replayed five
    times: twice as instantiated, twice after cuGraphExecKernelNodeSetParams changed the
    first node, once after cuGraphExecUpdate. Each replay runs both nodes, with the grid,
    block and argument bytes the program set (manifest truth); the second node is reached
    only through the first one's DEPENDENT_QMD pointer after the first replay."""
    truth = manifest("launch-paths")["ground_truth"]["sections"]["graph"]
    assert truth["ok"]
    replays = _replays("launch-paths")
    assert len(replays) == len(truth["replays"]) == 5
    for got, want in zip(replays, truth["replays"]):
        assert len(got) == len(want["nodes"]) == 2
        for s, node in zip(got, want["nodes"]):
            assert (s["grid"], s["block"]) == (node["grid"], node["block"]), (want["after"], node)
            n = len(node["param_bytes"]) // 2
            assert s["params"]["hex"][:2 * n] == node["param_bytes"], (want["after"], node)
        assert got[1]["source"] == "DEPENDENT_QMD0_POINTER"
        # the second node's QMD was written by cuGraphUpload's submission, never again
        writer = got[1]["qmd_written_by"]
        assert writer is not None and writer < got[0]["record_index"]
    model, _ = _kernel_launches("launch-paths")
    upload = [c for c in model.api_calls if c["name"] == "cuGraphUpload"]
    assert len(upload) == 1 and replays[1][1]["qmd_written_by"] in upload[0]["submissions"]
    # the QMD the upload sent is counted apart, not as a sixth run
    assert model.stats()["kernel_launches"].get("graph_prepared") == 1


def test_graph_replay_capture_runs_both_kernels_each_time():
    """captures/graph-replay (kernels/corpus_graph.cu): 2 stream-captured kernels, 3 replays."""
    replays = _replays("graph-replay")
    assert [len(r) for r in replays] == [2, 2, 2]
    assert all(s["verified"] is True for r in replays for s in r)


def _named(name, kernel):
    _, launches = _kernel_launches(name)
    return [s for s in launches
            if s["attribution"] and (s["attribution"]["kernel"] or {}).get("name") == kernel]


def test_triton_launches_match_the_program():
    """captures/triton-add: three @triton.jit launches, grid/block/pointers known to the
    program (manifest). Triton adds its own trailing parameters (scratch pointers): the
    four of the signature come first."""
    truth = manifest("triton-add")["ground_truth"]["launches"]
    got = _named("triton-add", "add_kernel")
    assert len(got) == len(truth) == 3
    for s, t in zip(got, truth):
        assert (s["grid"], s["block"]) == (t["grid"], t["block"])
        values = [a["value"] for a in s["attribution"]["args"][:4]]
        assert values == [t["args"][k] for k in ("x_ptr", "y_ptr", "out_ptr", "n")]
        assert s["verified"] is True and "argument bytes" in s["attribution"]["checked"]


def test_cupy_raw_kernel_matches_the_program():
    import struct
    (t,) = manifest("cupy-kernels")["ground_truth"]["launches"]
    (s,) = _named("cupy-kernels", "saxpy")
    assert (s["grid"], s["block"]) == (t["grid"], t["block"])
    a = t["args"]
    want = struct.pack("<f4xQQi", a["a"], a["x"], a["y"], a["n"])
    assert bytes.fromhex(s["params"]["hex"])[:len(want)] == want
    assert s["verified"] is True


def test_torch_graph_every_replay_runs_every_node():
    """captures/torch-graph: the graph's 8 kernel nodes (read back through the driver's graph
    API at capture time) run in each of the 3 replays, named and verified."""
    truth = manifest("torch-graph")["ground_truth"]
    nodes = sorted(n["kernel"] for n in truth["graph_nodes"] if "kernel" in n)
    replays = _replays("torch-graph")
    assert len(replays) == truth["replays"] == 3
    for r in replays:
        assert sorted(s["attribution"]["kernel"]["mangled"] for s in r) == nodes
        assert all(s["verified"] is True for s in r)
        by_grid = sorted((n["grid"], n["block"]) for n in truth["graph_nodes"])
        assert sorted((s["grid"], s["block"]) for s in r) == by_grid


class _Forgetful(dict):
    """A memo that keeps nothing: what the decoder's caches look like right after their
    limit emptied them (a long capture, or other captures decoded before in one process)."""

    def __setitem__(self, key, value):
        pass


def test_graph_replays_do_not_depend_on_the_qmd_memo(monkeypatch):
    """The same replays with decoders/launch/qmds.py's QMD-image memo forgetting everything: a
    graph node reached again through a DEPENDENT_QMD pointer still runs in each replay (it
    did not when the memo had been emptied, e.g. after 256 distinct QMDs)."""
    from decoders.launch import qmds as LQ
    truth = manifest("torch-graph")["ground_truth"]
    monkeypatch.setattr(LQ, "_QMD_IMAGES", _Forgetful())
    replays = _replays("torch-graph")
    assert len(replays) == truth["replays"] == 3
    assert [len(r) for r in replays] == [sum("kernel" in n for n in truth["graph_nodes"])] * 3


def test_jax_arguments_exact():
    """captures/jax-jit: every kernel launched by a launch call is verified; XLA's own
    (cuLaunchKernelEx) with their argument bytes (the shim's layout cache once named a
    reused handle's old layout: 8 false mismatches before shim invariant I17)."""
    _, launches = _kernel_launches("jax-jit")
    calls = [s for s in launches if s["api_call"] and s["api_call"]["name"].startswith("cuLaunch")]
    xla = [s for s in calls if s["api_call"]["name"] == "cuLaunchKernelEx"]
    assert len(calls) > 200 and len(xla) > 50
    assert all(s["verified"] is True for s in calls)
    assert all("argument bytes" in s["attribution"]["checked"] for s in xla)


@pytest.mark.parametrize("name", ALL)
def test_every_unchecked_launch_says_why(name):
    """A kernel launch left unchecked is a kernel the driver runs for a memset or a copy,
    and its reason says what the capture lacks."""
    _, launches = _kernel_launches(name)
    for s in launches:
        if s["verified"] is None:
            why = s["attribution"]["why"] if s["attribution"] else None
            assert why and ("driver's own" in why or "holds no" in why or "capture" in why), why


@pytest.mark.parametrize("name", ["builtin-vadd", "torch-eager", "jax-jit"])
def test_followed_params_pointers_on_recorded_captures(name):
    """Issue 18 on captures recorded with the shim that follows NvP64 params fields: GR info
    pairs all named, with SM_VERSION the GPU's compute capability (manifest), the channel
    list's handles in the object tree, GET_BUILD_VERSION's string the driver's version."""
    from decoders import ioctl as I
    from tracer.report import coverage_stats
    m = manifest(name)
    model = decode_capture(capture_path(name), keep=None)
    cov = coverage_stats(model)
    assert cov["params_pointers"].get("followed", 0) > 0
    assert set(cov["params_pointers"]) <= {"followed", "null"}
    assert cov["params_decoded_public"] >= 0.99
    branch = str(model.meta.get("driver", "580")).split(".")[0]
    major, minor = m["compute_capability"].split(".")
    grs, handles, version = [], None, None
    for e in model.ioctls:
        node, b = I._decode(e["_body"], branch)
        if b.info.failed:
            continue
        if b.info.control == 0x20801201:
            grs.append(node.find("ioctl.params.grInfoList.out"))
        if b.info.control == 0x0080170D and handles is None:
            handles = node.find("ioctl.params.pChannelHandleList.in")
        if b.info.control == 0x00000101 and version is None:
            version = node.find("ioctl.params.pDriverVersionBuffer.out")
    # ctrl0080gr.h (580) defines no index 0x2f-0x31 (a gap before LITTER_NUM_SLICES_PER_LTC);
    # libcuda asks for them, and they stay numbers
    import re
    assert grs and all(g is not None for g in grs)
    unknown = {u for g in grs for u in re.findall(r"(0x[0-9a-f]+) GR_INFO_INDEX_\?\?\?", g.display)}
    assert unknown <= {"0x2f", "0x30", "0x31"}, unknown
    assert any(f"SM_VERSION={int(major) << 8 | int(minor):#x}" in g.display for g in grs)
    if handles is not None:
        assert all(h in model.objects.objects for h in handles.children[0].raw if h)
    if version is not None:
        assert version.display.strip("'").startswith(m["driver"])


def test_jax_replays_run_the_arguments_xla_set():
    """captures/jax-train (scripts/corpus/train_jax.py, 30 steps, traced without CUPTI):
    XLA replays its command buffer once a step after giving its 26 kernel nodes new
    argument pointers (cuGraphExecKernelNodeSetParams_v2). The driver sends the head node,
    patches the changed bytes of the later nodes' constant banks, then releases them
    (SEND_PCAS_A with DECREMENT_DEPENDENCE): the chained nodes run the patched bytes. Each
    replay's every kernel is verified against the node parameters of the last set call."""
    steps = manifest("jax-train")["ground_truth"]["steps"]
    _, launches = _kernel_launches("jax-train")
    replays = {}
    for s in launches:
        call = s["api_call"]
        if call and call["name"] == "cuGraphLaunch":
            replays.setdefault(call["index"], []).append(s)
    assert len(replays) == steps
    first, *rest = [replays[k] for k in sorted(replays)]
    assert {s["attribution"]["graph_node"]["call"] for s in first} == {"cuGraphInstantiateWithFlags"}
    for replay in [first] + rest:
        assert len(replay) == 26
        assert all(s["verified"] is True for s in replay), [
            s["attribution"]["why"] for s in replay if s["verified"] is not True][:3]
    for replay in rest:
        assert {s["attribution"]["graph_node"]["call"] for s in replay} == \
            {"cuGraphExecKernelNodeSetParams_v2"}
        # most nodes are reached through the chain, past the gate: the case this covers
        assert sum(s["source"].startswith("DEPENDENT_QMD") for s in replay) >= 20


@pytest.mark.parametrize("name", ["torch-fp8", "torch-fp8-h200"])
def test_cublaslt_fp8_and_bf16_gemms_as_cupti_ran_them(name):
    """captures/torch-fp8 and torch-fp8-h200 (scripts/corpus/torch_fp8.py on the H100 and on
    the H200): torch._scaled_mm and
    bf16 matmuls run cuBLASLt's nvjet sm_90 kernels, each a thread-block cluster launch
    (a GRID_GPC_CGA QMD). CUPTI's kernels, in the order they started, are the decode's
    kernel launches: name, grid and block, every one verified against its call."""
    import re
    model, launches = _kernel_launches(name)
    cupti = manifest(name)["ground_truth"]["cupti"]["kernels"]
    norm = lambda s: re.sub(r"\s+", " ", s).strip()     # noqa: E731
    assert [(norm(s["attribution"]["kernel"]["name"]), list(s["grid"]), list(s["block"]))
            for s in launches] == [(norm(k["name"]), k["grid"], k["block"]) for k in cupti]
    assert model.verified == {"verified": len(cupti)}
    nvjet = [s for s in launches if s["attribution"]["kernel"]["name"].startswith("nvjet_sm90")]
    assert len(nvjet) == 18 and all(s["qmd_type"] == "GRID_GPC_CGA" and s["cluster"]
                                    for s in nvjet)
