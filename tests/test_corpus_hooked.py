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
    assert doorbell_code[16:19] == bytes.fromhex("8908e9")            # mov %ecx,(%rax); jmp
    assert gp_code[16:23] == bytes.fromhex("89b78c000000c3")          # mov %esi,0x8c(%rdi); ret
    subs = [r.body for r in recs if r.type == "SUBMISSION"]
    hooked = [s for s in subs if s.flags & F.TL_SUB_HOOKED]
    assert sum(s.lost for s in subs) == 0
    stats = [r.body for r in recs if r.type == "STATS"]
    if name == "sigkill":
        assert not stats                                              # killed: no STATS record
        return
    c = {}
    for st in stats:        # one STATS record per process (JAX's ptxas children, compile workers)
        for k, v in zip(F.TL_STATS_NAMES, st.counters):
            c[k] = c.get(k, 0) + v
    assert c["doorbells"] == c["submissions"] == len(subs)
    assert c["gp_put_shadow_mismatch"] == 0 and c["submissions_lost"] == 0 and c["fallbacks"] == 0
    if doorbell_what != "patched":
        # captures/torch-compile: torch.compile's process left no free page within a jump of
        # libcuda for the stub; each doorbell then faults (the trap path), and none is lost
        assert doorbell_what == gp_what == "no page within reach for the stub"
        assert c["sites_patched"] == 0 and c["sites_refused"] == 2 and not hooked
        return
    assert doorbell_what == gp_what == "patched"
    assert len(hooked) == len(subs) - 1                               # all but the patching fault
    assert c["doorbells_hooked"] == c["gp_put_hooked"] == len(hooked)
    # doorbell and GP_PUT stores, and (shims from 97675ae) libcuda's GP entry writer
    writer = sum(r.type == "NOTE" and bytes(r.body.text).startswith(b"GP entry writer site") and
                 b": patched;" in bytes(r.body.text) for r in recs)
    assert c["sites_patched"] == 2 + writer and c["sites_refused"] == 0
