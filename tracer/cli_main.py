"""`python3 -m tracer.cli_main trace-launch|trace-decode ...`: the console scripts without
installing them (used by tests and the recording scripts)."""
import sys

from tracer.cli import trace_decode, trace_launch

if __name__ == "__main__":
    cmd = sys.argv.pop(1) if len(sys.argv) > 1 else ""
    {"trace-launch": trace_launch, "trace-decode": trace_decode}.get(cmd, trace_decode)(
        prog_name=cmd or "trace-decode")
