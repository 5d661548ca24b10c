"""Command line: `trace-launch` records (tracer/cli_launch.py), `trace-decode` reads
captures offline (tracer/cli_decode.py); what the two share is tracer/cli_common.py. The
console scripts (pyproject.toml) name these two."""
from tracer.cli_decode import trace_decode
from tracer.cli_launch import trace_launch

__all__ = ["trace_decode", "trace_launch"]
