"""Values remembered on the launch path == the same values worked out afresh: the QMD version
per version-word key (qmd.version_of_words), and a semaphore method's rendered fields, shared
by the summaries that hold them until a summary is first read (launch._method_fields)."""
import os

import pytest

from decoders.launch import channel as LC
from decoders.submissions import decode_submissions
from decoders import qmd
from decoders.capture.reader import read_capture
from decoders.fields import FieldTable  # noqa: F401  (qmd.TABLES are FieldTables)

from tests.test_launch_decode import decode, synthetic_h100_launch
from tests.conftest import capture_file

CAPTURES = os.path.join(os.path.dirname(__file__), "..", "captures")


def _qmd_words(name):
    path = str(capture_file(name))
    if not os.path.exists(path):
        pytest.skip(f"captures/{name} not present")
    _, records = read_capture(path)
    result = decode_submissions([(r.index, r.body, r.pid) for r in records
                                   if r.type == "SUBMISSION"])
    return [qmd.words_of(l.qmd_bytes[:384]) for l in result.launches]


@pytest.mark.parametrize("name", ["builtin-vadd", "launch-shapes", "torch-small"])
def test_version_memo_equals_fresh(name):
    qmd._VERSION_OF.clear()
    seen = 0
    for words in _qmd_words(name)[:400]:
        # the real words, cut to a V03-sized image, and with the version words changed
        for w in (words, words[:64], words[:18], tuple(words[:14]) + (5 << 20,) + words[15:],
                  tuple(words[:18]) + (0x35,) + words[19:]):
            for prefer in (False, True):
                assert qmd.version_of_words(w, prefer) == qmd._version_of_words(w, prefer) \
                    if len(w) >= 19 else qmd.version_of_words(w, prefer) is None
                seen += 1
    assert seen and len(qmd._VERSION_OF) >= 2


def test_semaphore_method_fields_shared_until_read():
    """synthetic-h100: SET_REPORT_SEMAPHORE's fields are one remembered dict in the summaries
    of two launches while decoding; each summary handed out has its own, equal copy; a
    semaphore added to a launch whose summary was already read gets its own dict too."""
    LC._METHOD_FIELDS.clear()
    _, ld = decode(synthetic_h100_launch(1) + synthetic_h100_launch(1))
    kernels = [l for l in ld.launches
               if l._summary["semaphores"][-1]["source"] == "SET_REPORT_SEMAPHORE"]
    assert len(kernels) == 2
    sems = [l._summary["semaphores"][-1] for l in kernels]
    assert sems[0]["fields"] is sems[1]["fields"]               # shared while decoding
    read = [l.summary for l in kernels]
    assert read[0]["semaphores"][-1]["fields"] == read[1]["semaphores"][-1]["fields"]
    assert read[0]["semaphores"][-1]["fields"] is not read[1]["semaphores"][-1]["fields"]
    read[0]["semaphores"][-1]["fields"].clear()                 # changes no other summary
    assert read[1]["semaphores"][-1]["fields"]
    _, again = decode(synthetic_h100_launch(1))
    assert [l.summary for l in again.launches][-1]["semaphores"][-1]["fields"] == \
        read[1]["semaphores"][-1]["fields"]
    # a summary read before its launch's last semaphore arrives
    ch = LC._Channel()
    ch.last_launch = kernels[1]
    shared = LC._method_fields(0xCBC0, 0x1B0C, 4)
    ld._semaphore(ch, {"source": "x", "fields": shared})
    assert kernels[1]._summary["semaphores"][-1]["fields"] == shared
    assert kernels[1]._summary["semaphores"][-1]["fields"] is not shared


def test_argument_lists_remembered_only_while_the_allocations_stand():
    """Attribution._args: a kernel launched again with the same argument bytes shares the
    list made for it the first time, until an allocation or a free (or an RM record, which
    may change what a pointer resolves to) comes; a launch at or before the latest change
    is worked out on its own (it sees the allocations as they were at its record)."""
    from decoders.cuda.attribute import Attribution
    from decoders.rm.objects import ObjectTree
    a = Attribution(objects=ObjectTree())
    made = []
    a._args_made = lambda *x: made.append(x[-1]) or [{"made_at": x[-1]}]
    a._pid = 1
    params = [{"index": 0, "offset": 0, "size": 8, "bytes": bytes(8)}]
    k = {"name": "f(int*)"}

    def args(at, hw=bytes(8)):
        return a._args(params, hw, None, k, at)
    first = args(10)
    assert args(11) is first and made == [10]
    assert args(12, hw=b"\1" * 8) is not first and made == [10, 12]     # other bytes
    a._allocations.add(1, 0x1000, 0x100, "cuMemAlloc_v2", 20)
    assert args(19) is not first and made[-1] == 19     # before the allocation's record
    after = args(21)
    assert after is not first and made[-1] == 21
    assert args(22) is after
    a._allocations.free(1, 0x1000, 30)
    assert args(31) is not after and made[-1] == 31
    n = len(made)
    a.objects.generation += 1       # (ObjectTree.feed_*: an RM record)
    args(32)
    assert len(made) == n + 1
