"""One item's compact JSON text (no spaces), as json's C encoder writes it with separators
(",", ":"), made by orjson (~2.7x json's encoder) wherever the two agree: the JSON
report's long lists (tracer/report_json.py) and the timeline's events (decoders/timeline.py).

orjson's text is taken only where it is all ASCII (json escapes every other character as
\\uXXXX, so that no byte of a capture reaches a terminal raw) and orjson can write the item
(it refuses a key that is not a string and an integer past 64 bits); otherwise json's. The
two then differ only in how a float's exponent is spelled (`1e-06`, `1e-6`): the same
number."""
import json

try:
    import orjson
except ImportError:     # (an install without it: json's encoder throughout)
    orjson = None


def compact_encoder(default=None):
    """obj -> its compact JSON text; `default` as json's and orjson's (for what neither
    knows: without one, both raise TypeError)."""
    by_json = json.JSONEncoder(separators=(",", ":"), default=default).encode
    if orjson is None:
        return by_json
    dumps = orjson.dumps

    def encode(obj):
        try:
            data = dumps(obj, default=default)
        except TypeError:       # (orjson.JSONEncodeError)
            return by_json(obj)
        return data.decode("ascii") if data.isascii() else by_json(obj)
    return encode
