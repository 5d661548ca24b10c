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
from tests.conftest import ALL, CAPTURES, capture_file, manifest

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
    _, recs = read_capture(capture_file(name))
    # Checked per process: ddp-2rank (torchrun) is a launcher that never opens a channel plus
    # two ranks, each of which patches its own libcuda's sites (its own NOTEs and STATS).
    # JAX's ptxas children and compile workers likewise ring no doorbell.
    pids = list(dict.fromkeys(r.pid for r in recs if r.type in ("NOTE", "SUBMISSION", "STATS")))
    patching = 0
    for pid in pids:
        mine = [r for r in recs if r.pid == pid]
        subs = [r.body for r in mine if r.type == "SUBMISSION"]
        stats = [r.body for r in mine if r.type == "STATS"]
        notes = _site_notes(mine)
        assert sum(s.lost for s in subs) == 0
        if not notes:
            # a process that never rang a doorbell (the launcher, a compiler child)
            assert not subs, pid
            assert all(dict(zip(F.TL_STATS_NAMES, st.counters)).get(k, 0) == 0 for st in stats
                       for k in ("doorbells", "submissions", "sites_patched"))
            continue
        patching += 1
        doorbell_what, doorbell_code = notes["doorbell"]
        gp_what, gp_code = notes["GP_PUT"]
        assert doorbell_code[16:19] == bytes.fromhex("8908e9")        # mov %ecx,(%rax); jmp
        assert gp_code[16:23] == bytes.fromhex("89b78c000000c3")      # mov %esi,0x8c(%rdi); ret
        hooked = [s for s in subs if s.flags & F.TL_SUB_HOOKED]
        if name == "sigkill":
            assert not stats                                          # killed: no STATS record
            continue
        (st,) = stats                                                 # one STATS per process
        # shims that predate capture windows write fewer counters: those count 0
        c = {k: 0 for k in F.TL_STATS_NAMES} | dict(zip(F.TL_STATS_NAMES, st.counters))
        # Every doorbell is a recorded submission or, in a capture window's gap
        # (torch-window-launches/-nvtx/-profiler, docs/capture-format.md "Capture windows"),
        # one the shim counted as skipped; unwindowed processes skip none.
        windows = [r.body for r in mine if r.type == "WINDOW"]
        if not windows:
            assert c["window_submissions_skipped"] == c["window_submissions_kept"] == 0
        assert c["submissions"] == len(subs)
        assert c["doorbells"] == c["submissions"] + c["window_submissions_skipped"]
        assert c["gp_put_shadow_mismatch"] == 0 and c["submissions_lost"] == 0 \
            and c["fallbacks"] == 0
        if doorbell_what != "patched":
            # captures/torch-compile: torch.compile's process left no free page within a jump
            # of libcuda for the stub; each doorbell then faults (the trap path), none is lost
            assert doorbell_what == gp_what == "no page within reach for the stub"
            assert c["sites_patched"] == 0 and c["sites_refused"] == 2 and not hooked
            continue
        assert doorbell_what == gp_what == "patched"
        # all doorbells but the process's first, whose fault patched the sites
        assert c["doorbells_hooked"] == c["gp_put_hooked"] == c["doorbells"] - 1
        # That first doorbell is recorded unless a window opened after doorbells were
        # skipped (its BEGIN counts them) and nothing outside the window was kept: then the
        # patching fault was among the skipped (the torch-window-* gaps: 2,678 before BEGIN).
        first_skipped = bool(windows) and windows[0].edge == 1 \
            and windows[0].submissions_skipped > 0
        unhooked = len(subs) - len(hooked)
        if not first_skipped:
            assert unhooked == 1
        elif c["window_submissions_kept"] == 0:
            assert unhooked == 0
        else:       # a kept submission outside the window may have been the first doorbell
            assert unhooked <= 1
        # doorbell and GP_PUT stores, and (shims from 97675ae) libcuda's GP entry writer
        writer = sum(r.type == "NOTE" and bytes(r.body.text).startswith(b"GP entry writer site")
                     and b": patched;" in bytes(r.body.text) for r in mine)
        assert c["sites_patched"] == 2 + writer and c["sites_refused"] == 0
    assert patching >= 1
