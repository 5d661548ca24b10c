"""The H100 corpus recorded with the patched store sites (shim/patch.c, docs/doorbell-hook.md).

In every process, libcuda's doorbell store and its GP_PUT store each fault once. A NOTE
names each site as patched and keeps its original bytes, as the H100 probe found them:
`89 08` then `e9` (the doorbell), and `89 b7 8c 00 00 00` then `c3` (GP_PUT). Every
later doorbell comes through the stub, the GP_PUT shadow never disagrees with the device,
and nothing is lost.
"""
import pytest

from decoders.capture import format as F
from decoders.capture.reader import read_capture
from tests.conftest import ALL, CAPTURES, manifest

# multi-gpu was recorded on the H200 pair before the sites were patched.
HOOKED = [n for n in ALL if "sites_patched" in manifest(n)["summary"].get("shim_stats", {})
          or manifest(n)["name"] == "sigkill"]


def _site_notes(recs):
    out = {}
    for r in recs:
        if r.type == "NOTE":
            text = bytes(r.body.text).decode()
            kind, sep, rest = text.partition(" store site 0x")
            if sep:
                head, code = rest.split("; code from rip-16: ")
                out[kind] = (head.split(": ", 1)[1], bytes.fromhex(code))
    return out


def test_the_corpus_was_recorded_with_patching():
    assert len(HOOKED) >= 10 and "launch-loop-10k" in HOOKED and "torch-small" in HOOKED


@pytest.mark.parametrize("name", HOOKED)
def test_sites_patched_and_every_later_doorbell_hooked(name):
    _, recs = read_capture(CAPTURES / name / "capture.tlc.gz")
    notes = _site_notes(recs)
    doorbell_what, doorbell_code = notes["doorbell"]
    gp_what, gp_code = notes["GP_PUT"]
    assert doorbell_what == gp_what == "patched"
    assert doorbell_code[16:19] == bytes.fromhex("8908e9")            # mov %ecx,(%rax); jmp
    assert gp_code[16:23] == bytes.fromhex("89b78c000000c3")          # mov %esi,0x8c(%rdi); ret
    subs = [r.body for r in recs if r.type == "SUBMISSION"]
    hooked = [s for s in subs if s.flags & F.TL_SUB_HOOKED]
    assert len(hooked) == len(subs) - 1                               # all but the patching fault
    assert sum(s.lost for s in subs) == 0
    stats = [r.body for r in recs if r.type == "STATS"]
    if name == "sigkill":
        assert not stats                                              # killed: no STATS record
        return
    (st,) = stats
    c = dict(zip(F.TL_STATS_NAMES, st.counters))
    assert c["doorbells"] == c["submissions"] == len(subs)
    assert c["doorbells_hooked"] == c["gp_put_hooked"] == len(hooked)
    assert (c["sites_patched"], c["sites_refused"], c["fallbacks"]) == (2, 0, 0)
    assert c["gp_put_shadow_mismatch"] == 0 and c["submissions_lost"] == 0
