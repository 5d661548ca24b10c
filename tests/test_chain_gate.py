"""Graph replays past a dependence gate (decoders/launch/qmds.py end_submission): the QMDs a
dependent chain reached take their argument bytes as the submission leaves them, and a QMD
rewritten after the chain read it is reported. Synthetic: a LaunchDecoder's memory image
and one chained launch set by hand (the real case: captures/jax-train, tests/
test_real_workloads.py test_jax_replays_run_the_arguments_xla_set)."""
from types import SimpleNamespace

from decoders.launch.decoder import LaunchDecoder

QMD, BANK, BASE = 0x204c00400, 0x7efa2a011700, 0x210


def _chained(args):
    """A decoder whose submission reached, through a chain, a QMD at QMD whose constant bank
    0 at BANK holds `args` at the parameter base; (decoder, its launch)."""
    ld = LaunchDecoder()
    ld.begin_submission(1)
    qmd = bytes(range(256)) + bytes(128)
    ld.memory.write(QMD, qmd)
    ld.memory.write(BANK, bytes(BASE) + args)
    ld._uploads[BANK + BASE] = len(args)
    summary = {"pushbuf_offset": 0x70, "constant_buffers": [{"index": 0, "address": BANK,
                                                             "size": 0x300}]}
    launch = SimpleNamespace(_summary=summary, qmd_bytes=qmd, _driver=None)
    launch._driver = ld._params(summary, summary["constant_buffers"][0], "sm_90")
    ld._chained[QMD] = (launch, [])
    return ld, launch


def test_patched_argument_bytes_are_what_the_chained_node_runs():
    old, new = bytes.fromhex("0080dccaf97e0000"), bytes.fromhex("002750caf97e0000")
    ld, launch = _chained(old)
    assert launch._summary["params"]["hex"] == old.hex()
    ld.memory.write(BANK + BASE + 1, new[1:3])      # the driver's 2-byte patch at an odd address
    ld.end_submission()
    assert launch._summary["params"]["hex"] == new.hex()
    assert launch._summary["params"]["uploaded"] is True and ld.problems == []


def test_unchanged_bytes_keep_their_params():
    ld, launch = _chained(bytes(8))
    before = launch._summary["params"]
    ld.end_submission()
    assert launch._summary["params"] is before


def test_a_rewritten_chained_qmd_is_reported():
    ld, launch = _chained(bytes(8))
    ld.memory.write(QMD + 0x80, (7).to_bytes(4, "little"))
    ld.end_submission()
    (p,) = ld.problems
    assert p["offset"] == 0x70 and f"{QMD:#x}" in p["message"]
