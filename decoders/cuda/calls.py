"""API_ENTER / API_EXIT records -> API calls: named arguments, copied sections, result.

`ApiCalls` is fed records in capture order. It pairs each API_ENTER with its API_EXIT
(same pid and call number), knows which call each thread is inside (so a submission
whose doorbell rang on that thread belongs to it), and keeps what later attribution
needs: module images by handle, function and kernel names, allocations.
"""
from collections import namedtuple

from decoders.capture import format as F
from decoders.capture.reader import _FAST, cstr
from decoders.cuda import api as A
from decoders.cuda import params as P
from decoders.cuda import types as T
from decoders.errors import CaptureError
from decoders.fields import low_bits

_CONFIG = T.CUlaunchConfig.compile()
_CONFIG_SIZE = T.CUlaunchConfig.sizeof()
_ATTR = T.CUlaunchAttribute.compile()
_ATTR_SIZE = T.CUlaunchAttribute.sizeof()
_NODE = T.CUDA_KERNEL_NODE_PARAMS.compile()
# a 2D or 3D copy's struct (COPY_PARAMS), by its size
_COPY_STRUCTS = {s.sizeof(): s.compile() for s in (T.CUDA_MEMCPY2D, T.CUDA_MEMCPY3D)}
_NODE_SIZE = T.CUDA_KERNEL_NODE_PARAMS.sizeof()


_FLAGS = {}     # section flag word -> its names (a fresh list is handed out)


def _flags(value):
    names = _FLAGS.get(value)
    if names is None:
        names = [name for bit, name in sorted({**A.SECTION_FLAGS, **A.EXIT_STEP_SECTION_FLAGS}
                                               .items()) if value & bit]
        if len(_FLAGS) < 256:
            _FLAGS[value] = names
    return list(names)


_ORDERED_TAGS = frozenset(A.SECTION_BY_NAME[n] for n in A.REPEATED_SECTIONS)


def _sections(body):
    """({name: section} of the sections that appear once, [(name, section)] from the first
    that may repeat on, or None): a FUNCTION_NAME, a graph walk's GRAPH_WALK and GRAPH_NODEs
    with the argument sections each kernel node carries (decoders/cuda/graphs.py)."""
    # Subscripts, not attributes: a construct Container's attribute access is a Python call.
    out = {}
    ordered = None
    for s in body["sections"]:
        tag = s["tag"]
        name = A.SECTIONS.get(tag) or A.EXIT_STEP_SECTIONS.get(tag)
        if name is None:
            name = f"SECTION_{tag}"
        section = {"data": bytes(s["data"]), "flags": _flags(s["flags"]),
                   "full_size": s["full_size"]}
        if ordered is None and tag not in _ORDERED_TAGS:
            out[name] = section
        else:
            if ordered is None:
                ordered = []
            ordered.append((name, section))
    return out, ordered


_BASE = {}      # call name -> A.base_name(name)


def _base(name):
    b = _BASE.get(name)
    if b is None:
        if len(_BASE) >= 4096:      # names of unknown slots come from the capture
            _BASE.clear()
        b = _BASE[name] = A.base_name(name)
    return b


# API_ENTER and API_EXIT bodies (one declaration, format.py TL_API), parsed as the reader does
_API_BODY = _FAST.get("API_ENTER")
# (slot, argument words) -> ApiCall._from_args(): shared by the calls made with those words;
# its launch_config is read, never changed (to_json and Launch.summary hand out copies)
_SAME_ARGS = {}
_SAME_CONFIG = {}   # (function, LAUNCH_CONFIG bytes, LAUNCH_ATTRS bytes) -> a LAUNCH_EX's config
_ApiRecord = namedtuple("_ApiRecord", "index offset pid tid t_start t_end body raw")


def own_launch_config(cfg):
    """A copy of a launch_config with its own lists and dicts (one may be shared by the
    calls made with the same argument words: _SAME_ARGS)."""
    if cfg is None:
        return None
    out = dict(cfg)
    for key in ("grid", "block", "cluster"):
        if out[key] is not None:
            out[key] = list(out[key])
    out["attributes"] = [dict(a, value=dict(a["value"])) for a in cfg["attributes"]]
    return out


class ApiCall:
    """One bracketed call. `args` are named from decoders/cuda/api.py."""
    __slots__ = ("index", "exit_index", "pid", "tid", "call", "slot", "name", "kind", "args",
                 "sections", "out_sections", "result", "t_start", "t_end", "submissions",
                 "launch_config", "params", "complete", "_records", "_json", "bound",
                 "ordered", "out_ordered", "_graph", "names_seen", "before")

    def __init__(self, rec):
        b = rec.body
        # what compact() keeps: the API_ENTER record's fields that __init__ reads, its body bytes
        self._records = (rec.index, rec.offset, rec.pid, rec.tid, rec.t_start,
                         getattr(rec, "raw", None))
        slot, args = b["slot"], b["args"]
        # A launch loop makes the same call with the same argument words again and again:
        # what they alone decide (name, kind, named arguments, a LAUNCH's launch_config) is
        # worked out once per (slot, words)
        key = (slot, *args)
        same = _SAME_ARGS.get(key)
        if same is None:
            same = self._from_args(slot, args, rec)
        self.name, self.kind, named, config = same
        if self.kind == "LOAD_IMAGE":
            # its body holds the module image, which `sections` holds too: not kept twice
            # (compact() then gives None and the call is kept as its to_json() dict)
            self._records = self._records[:5] + (None,)
        self.args = named.copy()
        self.index, self.exit_index = rec.index, None
        self.pid, self.tid, self.call, self.slot = rec.pid, rec.tid, b["call"], slot
        self.sections, self.ordered = _sections(b) if b["sections"] else ({}, None)
        self.out_sections, self.out_ordered = {}, None
        self._graph = None      # graphs.parse_ordered() of `ordered`, made when asked for
        self.names_seen = None      # the Attribution that registered its FUNCTION_NAMEs
        self.result = None
        self.t_start, self.t_end = rec.t_start, None
        self.submissions = []
        self.complete = False
        self._json = None
        self.bound = None       # a launch's function as its lookup bound it (Attribution.observe)
        self.before = None      # a brief decode: LaunchSink.before() at its entry
        self.launch_config = config if config is not None else self._launch_config()
        self.params = self._params() if self.sections else None

    def _from_args(self, slot, args, rec):
        """(name, kind, {argument: word}, launch_config of a LAUNCH/LAUNCH_COOP or None) of
        one call's argument words, remembered in _SAME_ARGS."""
        fn = A.BY_SLOT.get(slot)
        if fn is not None:
            if len(args) != len(fn.params):
                # the shim writes exactly the declared words: anything else is damage
                raise CaptureError(f"record {rec.index}: {fn.name} API record has {len(args)} "
                                   f"argument words, the declaration has {len(fn.params)}",
                                   offset=rec.offset)
            name, kind, named = fn.name, fn.kind, dict(zip(fn.params, args))
        else:
            name, kind = f"api_slot_{slot}", "PLAIN"
            named = {f"arg{i}": v for i, v in enumerate(args)}
        self.kind, self.args = kind, named
        config = self._launch_config() if kind in ("LAUNCH", "LAUNCH_COOP") else None
        same = (name, kind, named, config)
        if len(_SAME_ARGS) >= 4096:
            _SAME_ARGS.clear()
        _SAME_ARGS[(slot, *args)] = same
        return same

    def api_call_json(self):
        """attribution's "api_call" of a launch made in this call: one dict per call, shared
        by its launches (read, never changed; Launch.summary gives each its own copy)."""
        d = self._json
        if d is None:
            d = self._json = {"name": self.name, "index": self.index,
                              "launch": self.launch_config, "t_start": self.t_start}
        return d

    @property
    def base(self):
        return _base(self.name)

    @property
    def result_name(self):
        if self.result is None:
            return None
        return A.CURESULT.get(self.result, f"CUresult {self.result}")

    def finish(self, rec):
        b = rec.body
        self.exit_index, self.result, self.t_end = rec.index, b["result"], rec.t_end
        self.out_sections, self.out_ordered = _sections(b) if b["sections"] else ({}, None)
        self.complete = True
        self._records += (rec.index, rec.t_end, getattr(rec, "raw", None))

    def compact(self):
        """The call as its records' bytes (API_ENTER, API_EXIT if it returned) and its
        submissions: restore() parses them again into an equal call (to_json() and all).
        None when a record's bytes are not at hand."""
        if _API_BODY is None or None in self._records[5::3]:
            return None
        return self._records, tuple(self.submissions)

    @classmethod
    def restore(cls, compact):
        records, submissions = compact
        index, offset, pid, tid, t_start, raw = records[:6]
        c = cls(_ApiRecord(index, offset, pid, tid, t_start, None, _API_BODY(raw)[0], None))
        if len(records) > 6:
            index, t_end, raw = records[6:]
            c.finish(_ApiRecord(index, None, pid, tid, None, t_end, _API_BODY(raw)[0], None))
        c.submissions = list(submissions)
        return c

    @property
    def graph(self):
        """decoders/cuda/graphs.py CallGraph of what the call's sections say about function
        names and graph nodes (entry and exit), or None when they say nothing."""
        g = self._graph
        if g is None and (self.ordered is not None or self.out_ordered is not None):
            from decoders.cuda.graphs import CallGraph
            g = self._graph = CallGraph(self)
        return g

    @property
    def out(self):
        """The handle or pointer the call wrote through its first argument."""
        s = self.out_sections.get("OUT")
        if s and len(s["data"]) == 8 and not s["flags"]:
            return int.from_bytes(s["data"], "little")
        return None

    @property
    def copy_params(self):
        """A cuMemcpy2D* / cuMemcpy3D* call's CUDA_MEMCPY2D or CUDA_MEMCPY3D as a dict (the
        3D one has `Depth`), or None where the capture lacks it (recorded before the shim
        copied it, or unreadable)."""
        s = self.sections.get("COPY_PARAMS")
        if not s or s["flags"]:
            return None
        struct = _COPY_STRUCTS.get(len(s["data"]))
        if struct is None:
            return None
        out = dict(struct.parse(s["data"]))
        out.pop("_io", None)
        return out

    @property
    def string(self):
        s = self.sections.get("NAME")
        return cstr(s["data"]) if s else None

    @property
    def image(self):
        s = self.sections.get("IMAGE")
        # NOT_KEPT: the session dropped the bytes (decoders/session/budget.py KEPT_IMAGES)
        return s["data"] if s and "UNREADABLE" not in s["flags"] and \
            "NOT_KEPT" not in s["flags"] else None

    @property
    def image_size(self):
        """The image's length, also where its bytes are an IMAGE_REF not resolved here (a
        call restored from compact(): the bytes are the earlier record's)."""
        image = self.image
        ref = self.sections.get("IMAGE_REF")
        for s in (self.sections.get("IMAGE"), ref):
            if s and "ENTRIES_ELIDED" in s["flags"]:      # the size the program passed
                return s["full_size"]
        if image is not None:
            return len(image)
        if ref and "UNREADABLE" not in ref["flags"] and len(ref["data"]) == F.TL_IMAGE_REF.sizeof():
            return F.TL_IMAGE_REF.parse(ref["data"]).size
        return None

    # -- launches -------------------------------------------------------------------------
    def _launch_config(self):
        """{grid, block, shared_memory_bytes, stream, cluster, attributes} of a launch."""
        if self.kind in ("LAUNCH", "LAUNCH_COOP"):
            a = self.args
            # `unsigned int` arguments: the low 32 bits of their register words (the rest is
            # junk), in one call
            u = low_bits((a["gridDimX"], a["gridDimY"], a["gridDimZ"], a["blockDimX"],
                          a["blockDimY"], a["blockDimZ"], a["sharedMemBytes"]), 32)
            return {"function": a["f"], "grid": u[0:3], "block": u[3:6],
                    "shared_memory_bytes": u[6], "stream": a["hStream"],
                    "cluster": None, "cooperative": self.kind == "LAUNCH_COOP", "attributes": []}
        if self.kind in ("GRAPH_KERNEL_NODE", "GRAPH_NODE_PARAMS"):
            # what a graph's kernel node was set to: checked against each replay's QMD
            node = self.sections.get("KERNEL_NODE_PARAMS")
            if not node or "UNREADABLE" in node["flags"] or len(node["data"]) < _NODE_SIZE:
                return None
            n = _NODE.parse(node["data"])
            return {"function": n.func, "grid": [n.gridDimX, n.gridDimY, n.gridDimZ],
                    "block": [n.blockDimX, n.blockDimY, n.blockDimZ],
                    "shared_memory_bytes": n.sharedMemBytes, "stream": None, "cluster": None,
                    "cooperative": False, "attributes": []}
        if self.kind != "LAUNCH_EX":
            return None
        cfg = self.sections.get("LAUNCH_CONFIG")
        if not cfg or "UNREADABLE" in cfg["flags"] or len(cfg["data"]) < _CONFIG_SIZE:
            return {"function": self.args["f"], "grid": None, "block": None,
                    "shared_memory_bytes": None, "stream": None, "cluster": None,
                    "cooperative": False, "attributes": []}
        raw = self.sections.get("LAUNCH_ATTRS", {}).get("data", b"")
        # a training loop's cuLaunchKernelEx passes the same config bytes step after step:
        # parsed once (shared, read, never changed: as _SAME_ARGS's)
        key = (self.args["f"], cfg["data"], raw)
        out = _SAME_CONFIG.get(key)
        if out is None:
            out = self._launch_ex_config(cfg["data"], raw)
            if len(_SAME_CONFIG) >= 4096:
                _SAME_CONFIG.clear()
            _SAME_CONFIG[key] = out
        return out

    def _launch_ex_config(self, data, raw):
        """_launch_config of a cuLaunchKernelEx: its CUlaunchConfig and attributes."""
        c = _CONFIG.parse(data)
        out = {"function": self.args["f"], "grid": [c.gridDimX, c.gridDimY, c.gridDimZ],
               "block": [c.blockDimX, c.blockDimY, c.blockDimZ],
               "shared_memory_bytes": c.sharedMemBytes, "stream": c.hStream, "cluster": None,
               "cooperative": False, "attributes": []}
        for i in range(min(c.numAttrs, len(raw) // _ATTR_SIZE)):
            at = _ATTR.parse(raw[i * _ATTR_SIZE:(i + 1) * _ATTR_SIZE])
            name = T.CU_LAUNCH_ATTRIBUTE.get(at.id, f"ATTRIBUTE_{at.id}")
            value = T.LAUNCH_ATTRIBUTE_VALUE.get(name)
            v = dict(value.parse(at.value)) if value is not None else {"raw": at.value[:16].hex()}
            v.pop("_io", None)
            out["attributes"].append({"id": at.id, "name": name, "value": v})
            if name == "CLUSTER_DIMENSION":
                out["cluster"] = [v["x"], v["y"], v["z"]]
            if name == "COOPERATIVE":
                out["cooperative"] = bool(v["value"])
        return out

    def _params(self):
        """[{index, offset, size, bytes}] of the kernel's arguments as the call passed them."""
        return P.kernel_params(self.sections)

    @property
    def param_windows(self):
        """Without a driver layout: [bytes behind kernelParams[i]] (PARAM_WINDOW_BYTES each)."""
        return P.param_windows(self.sections)

    @property
    def param_bytes(self):
        """The argument block as one buffer (offsets from the parameter base), or None."""
        return P.param_bytes(self.sections)

    def summary(self):
        parts = []
        for k, v in self.args.items():
            parts.append(f"{k}={v:#x}" if v > 9 else f"{k}={v}")
        text = f"{self.name}({', '.join(parts)})"
        if self.string is not None:
            text += f" name={self.string!r}"
        if self.result is not None:
            text += f" = {self.result_name}"
        if self.out is not None:
            text += f" -> {self.out:#x}"
        return text

    def to_json(self):
        return {"index": self.index, "exit_index": self.exit_index, "pid": self.pid,
                "tid": self.tid, "call": self.call, "name": self.name, "base": self.base,
                "args": dict(self.args), "result": self.result,
                "result_name": self.result_name, "out": self.out, "string": self.string,
                "t_start": self.t_start,
                "t_end": self.t_end if self.t_end is not None else self.t_start,
                "complete": self.complete,
                "launch": own_launch_config(self.launch_config),
                "params": [dict(p) for p in self.params] if self.params is not None else None,
                "image_bytes": self.image_size,
                "submissions": list(self.submissions), **self._graph_json(),
                **self._copy_json()}

    def _copy_json(self):
        """`copy` (the 2D or 3D copy's struct), only for a call whose record holds it."""
        p = self.copy_params
        return {"copy": p} if p is not None else {}

    def _graph_json(self):
        """`function_names` and `graph` keys, only for a call whose records hold them."""
        g = self.graph
        return g.to_json() if g is not None else {}


class ApiCalls:
    """Pairs API_ENTER with API_EXIT and knows which call each thread is inside. It keeps
    no finished call (the caller decides what to keep), so memory stays flat."""

    def __init__(self):
        self.count = 0
        self._images = {}        # record offset -> its IMAGE section (format version 2 refs)
        self._open = {}          # (pid, call) -> ApiCall
        self._inside = {}        # (pid, tid) -> ApiCall (outermost only: the shim records no nesting)
        self.unmatched_exits = 0

    def enter(self, rec):
        c = ApiCall(rec)
        self.count += 1
        self._open[(c.pid, c.call)] = c
        self._inside[(c.pid, c.tid)] = c
        sections = c.sections
        if "IMAGE" in sections:
            self._images[rec.offset] = sections["IMAGE"]
        elif "IMAGE_REF" in sections:
            self._resolve_image(c, rec)
        return c

    def _resolve_image(self, c, rec):
        """An IMAGE_REF (capture format version 2) becomes the IMAGE section of the earlier
        record it names, the same bytes object (CaptureError if it names none)."""
        ref = c.sections["IMAGE_REF"]
        image = None
        if len(ref["data"]) == F.TL_IMAGE_REF.sizeof():
            r = F.TL_IMAGE_REF.parse(ref["data"])
            image = self._images.get(r.offset)
            if image is not None and len(image["data"]) != r.size:
                image = None
        if image is None:
            raise CaptureError(f"record {rec.index}: {c.name}: its IMAGE_REF names no earlier "
                               "record's module image of that size", offset=rec.offset)
        c.sections["IMAGE"] = image

    def exit(self, rec):
        c = self._open.pop((rec.pid, rec.body["call"]), None)
        if c is None:
            self.unmatched_exits += 1
            return None
        c.finish(rec)
        if self._inside.get((c.pid, c.tid)) is c:
            del self._inside[(c.pid, c.tid)]
        return c

    def current(self, pid, tid):
        return self._inside.get((pid, tid))

    @property
    def unfinished(self):
        """Calls that never returned (the process died inside them)."""
        return [c for c in self._open.values()]
