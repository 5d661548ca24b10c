"""bench/live_sim.py, the decode during the run without a GPU: on a real recording, its live
decode (a writer revealing the records, LiveDecode reading them) ends with the launches the
offline decode of the same bytes finds, both split over two processes, and the row's times
are in order (the live decode ends after the writer)."""
import json
import os
import subprocess
import sys
from tests.conftest import capture_file

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_live_sim_agrees_with_the_offline_decode(tmp_path):
    out = tmp_path / "sim.json"
    env = dict(os.environ, TRACE_LAUNCH_SPLIT="1")
    p = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "live_sim.py"),
                        str(capture_file("launch-loop-10k")),
                        "--rate", "400", "--reps", "1", "--out", str(out)],
                       capture_output=True, text=True, timeout=300, env=env, cwd=ROOT)
    assert p.returncode == 0, p.stderr[-2000:]
    got = json.loads(out.read_text())
    (row,) = got["runs"]
    # the recording's manifest: 10,000 launches after 100 warm-up ones, each a kernel QMD
    # and the driver's GRID_NULL QMD before it
    assert row["launches"] == row["offline_launches"] == 20200
    assert row["split"] == row["offline_split"] == "front"
    assert row["live_done_s"] >= row["writer_s"] > 0
    assert got["raw_bytes"] > os.path.getsize(
        str(capture_file("launch-loop-10k")))
