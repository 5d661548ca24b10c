"""decoders/extsort.py ExternalSort: the order of sorted() (stable for equal keys) whether
the items stay in memory or go to disk in runs, with memory bounded by its run length."""
import random

import pytest

from decoders.extsort import ExternalSort


@pytest.mark.parametrize("run", [1, 3, 64, 10_000])
def test_sorted_order_stable_in_memory_and_on_disk(run):
    rng = random.Random(run)
    items = [((rng.randrange(20), rng.random() < 0.5, -rng.randrange(5) / 1000.0), n,
              {"n": n, "args": [n, str(n)]}) for n in range(2000)]
    s = ExternalSort(run=run)
    for key, _, payload in items:
        s.add(key, payload)
    assert len(s) == len(items)
    want = sorted(items, key=lambda i: i[0])        # stable: equal keys in order added
    got = list(s)
    assert [k for k, _ in got] == [k for k, _, _ in want]
    assert [p["n"] for _, p in got] == [n for _, n, _ in want]
    assert got[0][1] == want[0][2]
    # the items held never passed one run: the rest went to the file in runs
    assert len(s._items) == 0 and s._file is None


def test_holds_at_most_a_run():
    s = ExternalSort(run=100)
    held = 0
    for n in range(1050):
        s.add((1050 - n,), n)
        held = max(held, len(s._items))
    assert held < 100 and len(s._runs) == 10
    assert [p for _, p in s] == list(range(1049, -1, -1))


def test_empty_and_abandoned():
    assert list(ExternalSort()) == []
    s = ExternalSort(run=2)
    for n in range(7):
        s.add((n % 3,), n)
    it = iter(s)
    assert next(it) == ((0,), 0)
    it.close()          # a reader that stops early closes the file
    assert s._file is None
