"""One tree of decoded nodes; text, JSON and diff are views of it (STYLE.md 10).

A node is (dotted path, NVIDIA name, raw value, display text, byte offset) plus
children. Dotted paths are public API: renaming one is a breaking change.
"""
from dataclasses import dataclass, field


@dataclass
class Node:
    path: str
    name: str
    raw: object = None
    display: str = ""
    offset: int = None
    children: list = field(default_factory=list)
    note: str = ""

    def add(self, child):
        self.children.append(child)
        return child

    def walk(self):
        yield self
        for c in self.children:
            yield from c.walk()

    def find(self, path):
        """The first node in walk() order whose path is `path`, else None."""
        if self.path == path:
            return self
        for c in self.children:     # recursion, not walk()'s generator chain per level
            n = c.find(path)
            if n is not None:
                return n
        return None

    def to_json(self):
        raw = self.raw
        if isinstance(raw, (bytes, bytearray)):
            raw = bytes(raw).hex()
        out = {"path": self.path, "name": self.name, "raw": raw, "display": self.display}
        if self.offset is not None:
            out["offset"] = self.offset
        if self.note:
            out["note"] = self.note
        if self.children:
            out["children"] = [c.to_json() for c in self.children]
        return out
