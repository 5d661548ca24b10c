"""Per-record work does not grow with what a decode has seen (issue 24, STYLE 13b): the
lookups that used to walk everything kept so far (every allocation ever made, every
captured graph node, every RM object) are indexed, give what the walks gave, and cost the
same after 40 things as after 1,000. And a launch handed to the sink before its channel's
last semaphore (past SubmissionDecoder.HOLD) still reads back whole from the spill file."""
import gc
import io
import sys
from types import SimpleNamespace

import pytest

from conftest import capture_path
from decoders.cuda.attribute import Attribution
from decoders.rm.objects import ObjectTree
from decoders.session import decode_capture


def lines_run(fn, *args):
    """(fn(*args), lines of Python it ran): work, counted. The collector is held off while
    it counts: a finalizer of some earlier test's garbage (a generator's close, say) that
    a collection happens to run inside fn would be counted as fn's work (CI, stop 29:
    23 lines against 12)."""
    n = [0]

    def line(frame, event, arg):
        n[0] += 1
        return line
    was = gc.isenabled()
    gc.disable()        # (no gc.collect() here: in a long test session one costs ~0.5 s)
    sys.settrace(lambda frame, event, arg: line)
    try:
        out = fn(*args)
    finally:
        sys.settrace(None)
        if was:
            gc.enable()
    return out, n[0]


def _call(index, name, **kw):
    """A returned call with the fields a decoders/cuda/calls.py ApiCall has that
    Attribution reads: one process, no FUNCTION_NAME or graph sections (ordered None)."""
    base = name
    fields = dict(index=index, name=name, base=base, result=0, kind="PLAIN", pid=1, tid=1,
                  launch_config=None, submissions=[], params=None, args={}, out=None,
                  sections={}, ordered=None, out_ordered=None, graph=None, names_seen=None,
                  bound=None)
    fields.update(kw)
    return SimpleNamespace(**fields)


# -- allocations: a program that allocates and frees as it runs -----------------------
def _allocating(steps):
    """An Attribution fed `steps` rounds of cuMemAlloc, a lookup, cuMemFree; returns the
    work of the last round's lookup."""
    attr = Attribution(sm=90)
    work = []
    for k in range(steps):
        base = 0x7f0000000000 + k * 0x100000
        attr.observe(_call(3 * k, "cuMemAlloc", out=base, args={"bytesize": 0x1000}))
        hit, w = lines_run(attr.allocation, base + 8, 3 * k + 1)
        assert hit["base"] == base and hit["offset"] == 8
        work.append(w)
        attr.observe(_call(3 * k + 2, "cuMemFree", out=None, args={"dptr": base}))
    return work[-1]


def test_allocation_lookup_does_not_grow_with_freed_allocations():
    assert _allocating(1000) <= _allocating(40)


def test_allocation_lookup_is_what_the_walk_gave():
    """Against the walk over every allocation (09c72ff), on calls that allocate the same
    base again, free twice, overlap, and look up before and after frees."""
    import random
    rng = random.Random(3)
    attr = Attribution(sm=90)
    every = []          # [base, size, index, freed]
    at = 0
    for step in range(600):
        at += rng.randint(1, 3)
        base = 0x1000 * rng.randint(1, 40)
        if rng.random() < 0.5:
            size = 0x1000 * rng.randint(1, 4)
            attr.observe(_call(at, "cuMemAlloc", out=base, args={"bytesize": size}))
            every.append([base, size, at, None])
        else:
            attr.observe(_call(at, "cuMemFree", out=None, args={"dptr": base}))
            for a in every:
                if a[0] == base and a[3] is None:
                    a[3] = at
        at += 1
        value = 0x1000 * rng.randint(1, 44) + rng.randint(0, 0xfff)
        want = next(({"base": b, "size": s, "offset": value - b, "call": "cuMemAlloc",
                      "call_index": i} for b, s, i, f in every
                     if b <= value < b + s and i < at and (f is None or f > at)), None)
        assert attr.allocation(value, at) == want, (step, hex(value))



def _live(n):
    """An Attribution holding `n` live allocations of the launch's process (none freed: a
    program without a caching allocator, or one that keeps tensors step after step);
    returns the work of a lookup of a pointer into the middle one."""
    attr = Attribution(sm=90)
    for k in range(n):
        attr.observe(_call(k, "cuMemAlloc", out=0x7f0000000000 + k * 0x100000,
                           args={"bytesize": 0x1000}))
    attr._pid = 1       # (for_launch sets it: the launch's process)
    want = 0x7f0000000000 + (n // 2) * 0x100000
    hit, work = lines_run(attr.allocation, want + 8, n)
    assert hit["base"] == want and hit["offset"] == 8
    return work


def test_allocation_lookup_does_not_grow_with_live_allocations():
    assert _live(2000) <= _live(40)


def test_allocation_lookup_by_process_is_what_the_walk_gave():
    """Two processes that allocate, free and allocate the same VAs again (never two live
    ranges of one process overlapping, as the driver gives them), looked up by record
    numbers that lag the calls (a launch is attributed after calls made since it): the
    bisection finds what the walk over every allocation found."""
    import random
    rng = random.Random(5)
    attr = Attribution(sm=90)
    every = []          # [base, size, index, freed, pid]
    at = lookup_at = 0
    hits = 0
    for step in range(1500):
        at += rng.randint(1, 3)
        pid = rng.choice((1, 2))
        live = [a for a in every if a[4] == pid and a[3] is None]
        if rng.random() < 0.55:
            base = 0x1000 * rng.randint(1, 60)
            size = 0x1000 * rng.randint(1, 4)
            if not any(a[0] < base + size and base < a[0] + a[1] for a in live):
                attr.observe(_call(at, "cuMemAlloc", out=base, pid=pid,
                                   args={"bytesize": size}))
                every.append([base, size, at, None, pid])
        elif live:
            a = rng.choice(live)
            attr.observe(_call(at, "cuMemFree", out=None, pid=pid, args={"dptr": a[0]}))
            a[3] = at
        lookup_at = rng.randint(lookup_at, at + 1)      # never goes down
        value = 0x1000 * rng.randint(1, 64) + rng.randint(0, 0xfff)
        attr._pid = pid = rng.choice((1, 2))
        want = next(({"base": b, "size": s, "offset": value - b, "call": "cuMemAlloc",
                      "call_index": i} for b, s, i, f, p in every
                     if p == pid and b <= value < b + s and i < lookup_at and
                     (f is None or f > lookup_at)), None)
        assert attr.allocation(value, lookup_at) == want, (step, hex(value))
        hits += want is not None
    assert 100 < hits < 1400        # both kinds of answer were asked for


# -- graph nodes: every replay looks up the node it runs --------------------------------
def _node(index, grid, arg):
    c = _call(index, "cuLaunchKernel")
    c.kind = "LAUNCH"
    c.launch_config = {"function": 1, "grid": [grid, 1, 1], "block": [128, 1, 1]}
    c.params = [{"index": 0, "offset": 0, "size": 8, "bytes": arg.to_bytes(8, "little")}]
    c.bound = None
    return c


def _capturing(nodes):
    attr = Attribution(sm=90)
    for k in range(nodes):
        attr.observe(_node(k, 1 + k % 7, k))
    replay = _call(nodes + 1, "cuGraphLaunch", args={"hGraphExec": 0x1, "hStream": 0})
    k = 0       # the first node captured: a walk from the latest meets every other first
    s = {"grid": [1 + k % 7, 1, 1], "block": [128, 1, 1]}
    (got, how, why), w = lines_run(attr._graph_node, replay, s, k.to_bytes(8, "little"))
    assert got.index == k and how == "grid, block and argument bytes"
    return w


def test_graph_node_lookup_does_not_grow_with_captured_nodes():
    assert _capturing(1000) <= _capturing(40)


def test_graph_node_lookup_is_the_latest_match():
    """Of the captured calls with the grid, block and argument bytes, the latest one not
    after the replay (a node set again wins); none for other bytes or shapes."""
    attr = Attribution(sm=90)
    for k, (grid, arg) in enumerate([(2, 5), (2, 6), (3, 5), (2, 5), (2, 5)]):
        attr.observe(_node(10 * k, grid, arg))
    s = {"grid": [2, 1, 1], "block": [128, 1, 1]}
    five = (5).to_bytes(8, "little")
    def replay(index):
        return _call(index, "cuGraphLaunch", args={"hGraphExec": 0x1, "hStream": 0})
    node = attr._graph_node
    assert node(replay(100), s, five)[0].index == 40
    assert node(replay(35), s, five)[0].index == 30
    assert node(replay(5), s, five)[0].index == 0
    assert node(replay(100), s, (7).to_bytes(8, "little"))[0] is None
    assert node(replay(100), dict(s, grid=[9, 1, 1]), five)[0] is None


# -- a graph exec whose nodes are set before every replay (XLA's command buffers) ---------
def _exec_replays(steps, nodes=26):
    """(lines one replay's lookup ran at the last step, the exec's GraphExecs): `nodes`
    kernel nodes given new argument bytes before each of `steps` replays
    (cuGraphExecKernelNodeSetParams, as captures/jax-train does), each replay looked up
    after its call, as the attribution does."""
    from types import SimpleNamespace as NS
    from decoders.cuda.graphs import GraphExecs
    execs, key, index = GraphExecs(), (1, 0x1), 0
    execs.set_walk(key, _call(0, "cuGraphInstantiateWithFlags"), NS(nodes=[]))
    for step in range(steps):
        for k in range(nodes):
            index += 1
            execs.set_node(key, 0x100 + k, _call(
                index, "cuGraphExecKernelNodeSetParams_v2", kind="GRAPH_KERNEL_NODE",
                args={"hGraphExec": 0x1, "hNode": 0x100 + k},
                launch_config={"function": 1, "grid": [1 + k % 3, 1, 1], "block": [128, 1, 1]},
                params=[{"index": 0, "offset": 0, "size": 8, "bytes": step.to_bytes(8, "little")}]))
        index += 1      # the replay
        got, work = lines_run(execs.candidates, key, [1, 1, 1], [128, 1, 1], index)
        # the nodes of that shape as their latest set made them, in the order first set
        assert [n.index for n in got] == [index - nodes + k for k in range(0, nodes, 3)]
    return work, execs


def test_exec_replay_lookup_does_not_grow_with_sets():
    """jaxtrain-300 (issue 24): the (grid, block) index was rebuilt from every setting ever
    made after each set, so each step cost more than the one before (4.8 CPU s, 2.3 now)."""
    assert _exec_replays(400)[0] <= _exec_replays(20)[0]


def test_exec_keeps_only_the_settings_a_replay_can_still_read():
    _, execs = _exec_replays(400)
    (e,) = execs._execs[(1, 0x1)]
    assert len(e["history"]) == 26
    assert all(len(calls) <= execs.SPARE + 1 for calls, _ in e["history"].values())
    # a replay looked up late (its call before the latest sets) reads the setting of its time
    last = max(calls[-1] for calls, _ in e["history"].values())
    got = execs.candidates((1, 0x1), [1, 1, 1], [128, 1, 1], last - 26)
    assert got and all(n.params[0]["bytes"] == (398).to_bytes(8, "little") for n in got)


def test_exec_level_sets_of_a_walked_exec_are_not_captured_launches():
    """Attribution indexes a launch call with no submission as a stream-captured node; an
    exec-level set of an exec it has walked is that exec's node, and not kept again."""
    from types import SimpleNamespace as NS
    attr = Attribution(sm=90)
    attr.execs.set_walk((1, 0x1), _call(0, "cuGraphInstantiateWithFlags"), NS(nodes=[]))
    for k, exec_ in enumerate((0x1, 0x2)):
        attr.observe(_call(10 + k, "cuGraphExecKernelNodeSetParams_v2", kind="GRAPH_KERNEL_NODE",
                           args={"hGraphExec": exec_, "hNode": 0x100},
                           launch_config={"function": 1, "grid": [1, 1, 1], "block": [128, 1, 1]},
                           params=[{"index": 0, "offset": 0, "size": 8, "bytes": bytes(8)}]))
    captured = [c.args["hGraphExec"] for by in attr._captured.values() for by_bytes in by.values()
                for calls in by_bytes.values() for _, c in calls]
    assert captured == [0x2]        # the exec no walk of the capture describes: kept


# -- the RM object tree: a program that allocates and frees memory as it runs ------------
def _tree(objects):
    """A process's tree with `objects` memory objects, each mapped at its own GPU VA."""
    tree = ObjectTree().process(1)
    for k in range(objects):
        h = 0x5c000100 + k
        tree._on_rm_alloc({"hObjectNew": h, "hClass": 0x3E, "hObjectParent": 0x5c000001,
                           "hRoot": 1}, {"size": 0x200000}, None, 1, None)
        tree._on_rm_map_memory_dma({"hMemory": h, "dmaOffset": 0x200000000 + k * 0x200000,
                                    "length": 0x200000, "hDma": 2}, {}, None, 1, None)
    return tree


def _tree_work(objects):
    tree = _tree(objects)
    va = 0x200000000 + (objects - 1) * 0x200000 + 0x40
    r, resolve = lines_run(tree.resolve, va)
    assert r.obj.handle == 0x5c000100 + objects - 1 and r.offset == 0x40
    _, free = lines_run(tree._on_rm_free, {"hObjectOld": 0x5c000100}, {}, None, 1, None)
    _, munmap = lines_run(tree.feed_munmap, 0x10000, 0x1000, 1)
    return resolve, free, munmap


def test_object_tree_work_does_not_grow_with_objects():
    few, many = _tree_work(40), _tree_work(1000)
    assert all(m <= f for f, m in zip(few, many)), (few, many)


def _realloc_work(steps):
    """A process that frees its memory object and allocates a new one at the same GPU VA,
    `steps` times (no caching allocator: a new RM handle each step, measured ~60 a step);
    returns the work of a lookup there after the last, and checks each step's answer."""
    tree = ObjectTree().process(1)
    for k in range(steps):
        h = 0x5c000100 + k
        tree._on_rm_alloc({"hObjectNew": h, "hClass": 0x3E, "hObjectParent": 0x5c000001,
                           "hRoot": 1}, {"size": 0x200000}, None, 1, None)
        tree._on_rm_map_memory_dma({"hMemory": h, "dmaOffset": 0x200000000,
                                    "length": 0x200000, "hDma": 2}, {}, None, 1, None)
        assert tree.resolve(0x200000040).obj.handle == h
        tree._on_rm_free({"hObjectOld": h}, {}, None, 1, None)
        assert tree.resolve(0x200000040) is None
    h = 0x5c000100 + steps
    tree._on_rm_alloc({"hObjectNew": h, "hClass": 0x3E, "hObjectParent": 0x5c000001,
                       "hRoot": 1}, {"size": 0x200000}, None, 1, None)
    tree._on_rm_map_memory_dma({"hMemory": h, "dmaOffset": 0x200000000,
                                "length": 0x200000, "hDma": 2}, {}, None, 1, None)
    r, work = lines_run(tree.resolve, 0x200000040)
    assert r.obj.handle == h and r.offset == 0x40
    return work


def test_object_tree_lookup_does_not_grow_with_freed_objects_at_its_address():
    assert _realloc_work(1000) <= _realloc_work(40)


def _walk_resolve(tree, va):
    """ObjectTree.resolve as 09c72ff walked it: every object, in order."""
    for obj in tree.objects.values():
        if obj.freed:
            continue
        for m in obj.gpu_mappings:
            if m["va"] is not None and m["va"] <= va < m["va"] + (m["length"] or 0):
                return obj, va - m["va"] + (m["offset"] or 0), m["via"]
    for obj in tree.objects.values():
        if obj.freed:
            continue
        for m in obj.cpu_mappings:
            if m["addr"] <= va < m["addr"] + (m["length"] or 0):
                return obj, va - m["addr"] + (m["offset"] or 0), "cpu"
    return None


@pytest.mark.parametrize("name", ["torch-graph", "jax-jit", "multi-gpu"])
def test_object_tree_lookups_are_what_the_walks_gave(name):
    tree = decode_capture(capture_path(name), launches=False).objects
    vas = set()
    for o in tree.objects.values():
        for m in o.gpu_mappings:
            vas.update((m["va"] - 1, m["va"], m["va"] + (m["length"] or 0) - 1,
                        m["va"] + (m["length"] or 0)))
        for m in o.cpu_mappings:
            vas.update((m["addr"], m["addr"] + (m["length"] or 1) - 1))
    assert len(vas) > 100
    for va in sorted(v for v in vas if v is not None and v >= 0):
        r, want = tree.resolve(va), _walk_resolve(tree, va)
        got = None if r is None else (r.obj, r.offset, "cpu" if r.how.startswith("matched")
                                      else r.how)
        assert got == want, hex(va)
    for h in tree.objects:
        assert tree.children(h) == [o for o in tree.objects.values()
                                    if o.parent == h and o.handle != h]


# -- launches handed over before their channel's last semaphore --------------------------
@pytest.mark.parametrize("name", ["jax-jit", "torch-graph"])
def test_launches_past_the_hold_read_back_whole(name, monkeypatch):
    """With no launch held (HOLD 0), every launch goes to the sink as its submission is
    decoded, and a later semaphore of its channel reaches one already in the spill file
    (each batch of one launch is written at once) as a patch: spilled (keep 0) reads back
    what the all-in-memory decode holds."""
    from decoders.session import launches as SL
    from decoders.spill import SpillList
    from decoders.submissions import SubmissionDecoder
    from tracer.report import render_json
    monkeypatch.setattr(SubmissionDecoder, "HOLD", 0)
    monkeypatch.setattr(SpillList, "BATCH", 1)
    patched = []
    late = SL.LaunchSink.late

    def counting(self, launch):
        late(self, launch)
        patched.append(self.patched)
    monkeypatch.setattr(SL.LaunchSink, "late", counting)
    mem, spill = io.StringIO(), io.StringIO()
    render_json(decode_capture(capture_path(name), keep=None), mem)
    render_json(decode_capture(capture_path(name), keep=0), spill)
    assert patched and max(patched) > 0         # some launches were patched
    assert spill.getvalue() == mem.getvalue()
