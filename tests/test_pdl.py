"""captures/pdl (scripts/corpus/pdl.py on the H100): programmatic dependent launch. A
producer kernel and a consumer launched with PROGRAMMATIC_STREAM_SERIALIZATION, 6 pairs on
a stream, then 3 pairs stream-captured into a graph and replayed 3 times. The truth is the
manifest's: CUPTI's kernels in the order they started, and the graph's nodes read back
through the driver's graph API (cuGraphKernelNodeGetParams).

The first replay of such a graph sends every node's QMD before the head's, each gated,
with pointers to QMDs not yet written; the head goes last and the GPU runs the chain from
it. The decode lists the launches in the order the GPU runs them (run_order)."""
import pytest

from tests.conftest import capture_path, manifest


@pytest.fixture(scope="module")
def truth():
    return manifest("pdl")["ground_truth"]


@pytest.fixture(scope="module")
def decoded():
    """(model, the kernel launches' summaries in the order listed)."""
    from decoders.session import decode_capture
    m = decode_capture(capture_path("pdl"))
    return m, [l.summary for l in m.launches if l.summary["kernel"]]


def test_every_kernel_named_and_verified(decoded, truth):
    m, kernels = decoded
    assert len(kernels) == truth["cupti"]["count"] == 30
    assert all(s["attribution"]["verified"] is True for s in kernels)
    assert m.verified == {"verified": 30}
    assert not m.problems


def test_kernels_in_the_order_cupti_saw_them_start(decoded, truth):
    """CUPTI (torch.profiler, in the traced run) starts each producer before its consumer,
    in every replay too; as sent, the first replay's head (a producer) came last."""
    _, kernels = decoded
    cupti = [(k["name"], k["grid"]) for k in truth["cupti"]["kernels"]]
    got = [(s["attribution"]["kernel"]["name"], list(s["grid"])) for s in kernels]
    assert got == cupti


def test_each_replay_runs_the_graph_nodes_in_order(decoded, truth):
    """Each replay's 6 kernels, as decoded, carry the argument bytes of the graph's nodes in
    the graph's order: producer 100, consumer, producer 101, consumer, producer 102,
    consumer (the driver's own read-back of the graph)."""
    _, kernels = decoded
    nodes = [n["param_bytes"] for n in truth["graph_nodes"]]
    replayed = [s for s in kernels if s["api_call"]["name"] == "cuGraphLaunch"]
    assert len(replayed) == truth["replays"] * len(nodes)
    for r in range(truth["replays"]):
        run = replayed[r * len(nodes):(r + 1) * len(nodes)]
        assert [s["params"]["hex"][:len(p)] for s, p in zip(run, nodes)] == nodes, r


def test_stream_pairs_carry_the_launch_attribute(decoded, truth):
    """The consumer's cuLaunchKernelEx carries PROGRAMMATIC_STREAM_SERIALIZATION (the
    API record), and each stream launch's arguments are the program's."""
    _, kernels = decoded
    direct = [s for s in kernels if s["api_call"]["name"] == "cuLaunchKernelEx"]
    want = truth["stream_launches"]
    assert len(direct) == len(want)
    for s, w in zip(direct, want):
        assert s["attribution"]["kernel"]["name"] == w["kernel"]
        assert s["params"]["hex"][:len(w["param_bytes"])] == w["param_bytes"]
        attrs = {a["name"] for a in s["api_call"]["launch"]["attributes"]}
        assert ("PROGRAMMATIC_STREAM_SERIALIZATION" in attrs) == \
            w["programmatic_stream_serialization"]


def test_each_consumer_waits_on_the_latch_its_producer_arrives_at(decoded, truth):
    """The hardware side of PROGRAMMATIC_STREAM_SERIALIZATION, as measured here: the
    consumer's QMD waits on a latch (WAIT_ON_LATCH_VALID, WAIT_ON_LATCH_ID) that the QMD of
    the producer before it arrives at (ARRIVE_AT_LATCH_ID). Every consumer the program
    launched that way (and captured into the graph) names its producer's launch; no
    producer waits on anything."""
    m, kernels = decoded
    index = {id(l.summary): n for n, l in enumerate(m.launches)}
    want = [w["programmatic_stream_serialization"] for w in truth["stream_launches"]]
    want += [n["kernel"] == "pdl_consume" for n in truth["graph_nodes"]] * truth["replays"]
    assert len(want) == len(kernels)
    for k, (s, pdl) in enumerate(zip(kernels, want)):
        if not pdl:
            assert "programmatic" not in s
            continue
        producer = kernels[k - 1]
        assert producer["attribution"]["kernel"]["name"] == "pdl_produce"
        assert s["programmatic"]["after_launch"] == index[id(producer)]


@pytest.mark.parametrize("name", ["jax-jit", "jax-train", "pdl"])
def test_a_launch_that_waits_on_a_latch_asked_for_it(name):
    """XLA launches with PROGRAMMATIC_STREAM_SERIALIZATION on the H100 (jax-jit 35 such
    waits, jax-train 904). Each launch whose QMD waits on a latch was made by a call that
    carries the attribute (the API record), or is a graph node; its primary is an earlier
    kernel launch of the same process and channel."""
    from decoders.session import decode_capture
    m = decode_capture(capture_path(name))
    summaries = [l.summary for l in m.launches]
    waits = [(n, s) for n, s in enumerate(summaries) if "programmatic" in s]
    assert len(waits) == {"jax-jit": 35, "jax-train": 904, "pdl": 15}[name]
    for n, s in waits:
        call = s["api_call"]
        attrs = {a["name"] for a in (call["launch"] or {}).get("attributes") or []} \
            if call["name"] != "cuGraphLaunch" else set()
        assert call["name"] == "cuGraphLaunch" or "PROGRAMMATIC_STREAM_SERIALIZATION" in attrs
        k = s["programmatic"]["after_launch"]
        assert k is not None and k < n
        primary = summaries[k]
        assert primary["kernel"] and (primary["pid"], primary["channel"]) == (s["pid"], s["channel"])


def test_explain_tells_the_latch(decoded):
    """trace-decode explain on a consumer: the latch it waits on and the launch whose QMD
    arrives there, from the decode's own numbers."""
    import io

    from tracer import explain as E
    m, kernels = decoded
    n = next(k for k, l in enumerate(m.launches) if "programmatic" in l.summary)
    pdl = m.launches[n].summary["programmatic"]
    out = io.StringIO()
    E.render_text(E.build_story(m, E.pick_launch(m, n)), out)
    flat = " ".join(out.getvalue().split())
    assert f"It waits on latch {pdl['waits_on_latch']}" in flat
    assert f"which launch {pdl['after_launch']}'s QMD arrives at" in flat


def test_the_call_attribute_is_read_by_name(decoded):
    """cuLaunchKernelEx's PROGRAMMATIC_STREAM_SERIALIZATION value, as the union member
    cuda.h names (programmaticStreamSerializationAllowed = 1), not raw bytes."""
    _, kernels = decoded
    values = [a["value"] for s in kernels if s["api_call"]["name"] == "cuLaunchKernelEx"
              for a in s["api_call"]["launch"]["attributes"]]
    assert values == [{"programmaticStreamSerializationAllowed": 1}] * 6


def test_the_text_report_shows_each_launchs_attributes(truth):
    """The text report names a cuLaunchKernelEx call's launch attributes under its API line:
    the 6 consumers pdl.py launched with PROGRAMMATIC_STREAM_SERIALIZATION on a stream
    (manifest: stream_launches), in their order, and none for the producers."""
    import io
    import re
    from decoders.session import decode_capture
    from decoders.text import TextOut
    from tracer.report import render_text
    buf = io.StringIO()
    render_text(decode_capture(capture_path("pdl")), TextOut(buf, color=False), color=False,
                launch_limit=None)
    named = re.findall(r"API: cuLaunchKernelEx \(record \d+\) -> (\w+):.*\n"
                       r"(      launch attributes: .*\n)?", buf.getvalue())
    want = [(x["kernel"], x["programmatic_stream_serialization"])
            for x in truth["stream_launches"]]
    assert [(k, bool(line)) for k, line in named] == want
    assert {line for _, line in named if line} == {
        "      launch attributes: PROGRAMMATIC_STREAM_SERIALIZATION "
        "programmaticStreamSerializationAllowed=1\n"}
