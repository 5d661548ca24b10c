"""Run a command and print one JSON line: its exit status, when its last stdout line came
(the end of scripts/corpus/train_transformer.py, which prints `steps=...` last) and when it
exited, and trace-launch's summary lines from its stderr (submissions lost, capture
written). The run itself is scripts/record_scaling.py's.

    python3 bench/probes/timed_run.py LABEL COMMAND [ARGS...]
"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "scripts"))

import record_scaling as R  # noqa: E402


def main():
    label, cmd = sys.argv[1], sys.argv[2:]
    r = R.run(cmd, timeout=None)
    err = [line.strip() for line in r["stderr_tail"].splitlines()
           if "trace-launch" in line or "kernel launches" in line or "submissions" in line][-6:]
    print(json.dumps({"label": label, "rc": r["rc"], "job_end_s": r["program_output_done_s"],
                      "total_s": r["wall_s"], "stdout": r["stdout"].strip()[-200:],
                      "err": err}), flush=True)


if __name__ == "__main__":
    main()
