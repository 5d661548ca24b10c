"""Capture-file framing: the one construct definition of the file (docs/capture-format.md)."""
