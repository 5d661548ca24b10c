"""trace-launch decoders: capture bytes -> decoded node trees.

Data flow: shim records -> capture file -> decoders parse -> tracer/report.py renders.
This package never imports click and never prints.
"""
from decoders.errors import TraceLaunchError, CaptureError, DecodeError  # noqa: F401
