"""captures/cond-nodes (scripts/corpus/cond_nodes.py on the H100, issue 25): graphs with IF
(true, false), SWITCH (3 bodies) and WHILE (4 trips, 0 trips, 3 trips with its body filled
by stream capture, and 2 trips with an IF inside its body) nodes, 3 replays each. The
truth is the manifest's: each graph's nodes as the program built them, how many times each
body's kernel ran (counted by the kernel itself on the GPU and read back), and CUPTI."""
import json
from collections import Counter, defaultdict

import pytest

from tests.conftest import CAPTURES

CAP = CAPTURES / "cond-nodes"
COND = "[driver kernel, conditional node]"


@pytest.fixture(scope="module")
def truth():
    return json.loads((CAP / "manifest.json").read_text())["ground_truth"]


@pytest.fixture(scope="module")
def decoded():
    from decoders.session import decode_capture
    m = decode_capture(str(CAP / "capture.tlc.gz"))
    replays = {c["index"]: c["args"]["hGraphExec"] for c in m.api_calls
               if c["name"] == "cuGraphLaunch"}
    kernels = [l.summary for l in m.launches if l.summary["kernel"]]
    return m, replays, kernels


def _slot(s):
    """The slot argument of a cn_count launch (its constant bank: hits, slot)."""
    return int.from_bytes(bytes.fromhex(s["params"]["hex"])[8:12], "little")


def test_every_kernel_named_and_verified(decoded):
    m, _, kernels = decoded
    att = [s["attribution"] for s in kernels]
    assert all((a["kernel"] or {}).get("name") for a in att)
    assert all(a["verified"] is True for a in att), Counter(
        (a["kernel"]["name"], a["verified"]) for a in att)
    assert m.verified == {"verified": len(kernels)}


def test_every_body_is_sent_each_replay_whether_it_runs_or_not(decoded, truth):
    """hits (the GPU's own count) says bodies 2, 4, 5, 8 never ran, body 7 ran 4 times a
    replay and body 10 (stream-captured) 3 times; the capture holds each body's QMD once
    per replay all the same, and the decode says of none of them that it ran."""
    _, replays, kernels = decoded
    n = truth["replays"]
    assert truth["hits"] == [n, n, 0, n, 0, 0, n, 4 * n, 0, n, 3 * n, 2 * n, 2 * n]
    sent = Counter()
    for s in kernels:
        a = s["attribution"]
        if a["kernel"]["name"] == "cn_count":
            c = a["graph_node"].get("conditional")
            sent[_slot(s)] += 1
            if _slot(s) in (1, 2, 4, 5, 6, 7, 8, 10, 11, 12):      # the body kernels
                assert c is not None and c["ran"] is None and c["iteration"] is None
            else:
                assert c is None
    assert sent == {k: n for k in range(13)}


def test_bodies_are_placed_in_their_node_and_body(decoded, truth):
    _, _, kernels = decoded
    switch = {}
    for s in kernels:
        a = s["attribution"]
        c = a["graph_node"].get("conditional")
        if a["kernel"]["name"] == "cn_count" and _slot(s) in (4, 5, 6):
            switch[_slot(s)] = (c["type"], c["body"])
    # the program added body k's kernel with slot 4 + k
    assert switch == {4: ("SWITCH", 0), 5: ("SWITCH", 1), 6: ("SWITCH", 2)}
    assert truth["graphs"]["switch"]["nodes"][1]["size"] == 3


def test_conditional_kernels_per_replay_and_what_they_check(decoded, truth):
    """Per replay: one kernel at the end of each body, one of its own for a node inside a
    body, and one sent last (word0 0) for the top-level node; every one checked for where
    it sits, word0 too where the exec has one conditional node (the measured numbering).
    All of an exec's conditional kernels share pointer0/pointer1, and no two execs do."""
    _, replays, kernels = decoded
    per = defaultdict(list)
    pairs = defaultdict(set)
    for s in kernels:
        a = s["attribution"]
        if a["kernel"]["name"] != COND:
            continue
        v = {x["field"]: x["value"] for x in a["args"]}
        role = a["why"].split(") (")[1].split(")")[0]
        per[a["api_call"]["index"]].append((v["word0"], tuple(a["checked"]), role))
        pairs[a["graph_node"]["exec"]].add((v["pointer0"], v["pointer1"]))
    assert len(per) == 7 * truth["replays"]
    shapes = Counter()
    for ks in per.values():
        assert ks[-1] == (0, ("node",), "its own, sent last")
        assert [k for k in ks if k[0] == 0] == [ks[-1]]
        shapes[tuple(k[1:] for k in ks[:-1])] += 1
    one_body = ((("node", "word0"), "at the end of body 0"),)
    assert shapes == {
        one_body: 5 * truth["replays"],         # IF true, IF false, three WHILEs of one node
        tuple((("node", "word0"), f"at the end of body {b}") for b in (2, 1, 0)):
            truth["replays"],                    # the SWITCH: bodies sent 2, 1, 0
        ((("node",), "its own, inside a body"), (("node",), "at the end of body 0"),
         (("node",), "at the end of body 0")): truth["replays"]}     # the IF inside a WHILE
    assert all(len(p) == 1 for p in pairs.values())
    assert len({next(iter(p)) for p in pairs.values()}) == len(pairs) == 7


def _body_kernels(nodes):
    """The kernel nodes inside conditional bodies, at any depth, of a manifest graph."""
    out = 0
    for n in nodes:
        for b in n.get("bodies", ()):
            out += sum(1 for x in b if "kernel" in x) + _body_kernels(b)
    return out


def test_body_sends_are_counted_apart(decoded, truth):
    """stats.conditional_body_launches: every body kernel node the program built (manifest),
    and the driver's conditional kernels inside a body, once per replay; CUPTI's count of
    what ran differs (bodies that never ran, a WHILE's further trips)."""
    m, _, _ = decoded
    body_nodes = sum(_body_kernels(g["nodes"]) for g in truth["graphs"].values())
    assert body_nodes == 13
    # and, inside the WHILE body of the nested graph, the IF's own kernel and its body's end
    assert m.stats()["conditional_body_launches"] == (body_nodes + 2) * truth["replays"]
