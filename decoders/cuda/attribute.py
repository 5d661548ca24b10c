"""Tie each decoded launch to the API call that made it, its kernel and its arguments,
and check the QMD against what the call asked for.

launch (QMD, from a SUBMISSION record) -> the API call its doorbell rang in (same thread,
between API_ENTER and API_EXIT) -> function handle -> cuModuleGetFunction /
cuLibraryGetKernel / cuKernelGetFunction -> module image (cuModuleLoadData /
cuLibraryLoadData bytes) -> cubin -> kernel (.nv.info parameters, static shared memory).
Arguments are read from constant bank 0 as the hardware saw it, named by type from the
demangled signature, and pointers are resolved to the cuMemAlloc they fall in.

Nothing here guesses: a launch whose call is not a launch (cuMemsetD32 runs a driver
kernel; cuGraphLaunch replays recorded nodes) gets its API call and `verified: null`
with the reason.
"""
import re

from decoders.cubin import demangle, find_cubins
from decoders.names import short_name
from decoders.cuda.api import LAUNCH_KINDS
from decoders.errors import TraceLaunchError

_ALLOC = ("cuMemAlloc", "cuMemAllocAsync", "cuMemAllocManaged")
_FREE = ("cuMemFree", "cuMemFreeAsync")


def param_types(demangled):
    """['float const*', 'int', ...] from 'vadd(float const*, float const*, float*, int)'."""
    if not demangled or not demangled.endswith(")"):
        return None
    # the parameter list is the last top-level (...): names may hold "(anonymous namespace)"
    depth, start = 0, None
    for i in range(len(demangled) - 1, -1, -1):
        ch = demangled[i]
        if ch in ")>":
            depth += 1
        elif ch in "(<":
            depth -= 1
            if depth == 0 and ch == "(":
                start = i
                break
    if start is None:
        return None
    inner = demangled[start + 1:-1]
    out, depth, cur = [], 0, ""
    for ch in inner:
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return [] if out == ["void"] else out


def _value(raw, ctype):
    """A parameter's bytes as a number where its type says how."""
    if raw is None:
        return None
    if ctype and "*" in ctype:
        return int.from_bytes(raw, "little") if len(raw) == 8 else None
    if ctype in ("float", "double") and len(raw) in (4, 8):
        import struct
        return struct.unpack("<f" if len(raw) == 4 else "<d", raw)[0]
    if len(raw) in (1, 2, 4, 8) and (ctype is None or re.fullmatch(
            r"(unsigned |signed )?(char|short|int|long|long long)|bool|[a-z0-9_]*int[0-9]*_t|"
            r"size_t", ctype or "")):
        signed = ctype is not None and not ctype.startswith(("unsigned", "u", "size_t", "bool"))
        return int.from_bytes(raw, "little", signed=signed)
    return None


_NO_KERNEL_WHY = {}     # (QMD type, call base name) -> the text (one string object: a spilled
                        # batch of launches marshals it once)


def _no_kernel_why(qmd_type, base):
    key = (qmd_type, base)
    text = _NO_KERNEL_WHY.get(key)
    if text is None:
        text = f"a {qmd_type} QMD runs no kernel: nothing to check against {base}"
        if len(_NO_KERNEL_WHY) < 256:
            _NO_KERNEL_WHY[key] = text
    return text


class Attribution:
    """Fed each API call as it returns (`observe`); `for_launch(launch, call)` per decoded
    launch, with the call its doorbell rang in (None outside any bracketed call). Keeps only
    what later launches can need: module images, function names, live allocations, and the
    launch calls stream capture turned into graph nodes."""

    def __init__(self, objects=None, sm=90):
        self.objects = objects
        self.sm = sm
        self.images = {}        # module / library handle -> the ApiCall that loaded it
        self.functions = {}     # CUfunction / CUkernel handle -> (mangled name, parent handle)
        self.allocations = []   # [base, size, call name, call index, freed at record index]
        self._captured = []     # launch calls that submitted nothing: graph nodes (stream capture)
        self._cubins = {}
        self._by_program = {}   # program address -> kernel dict (from attributed launches)
        self._kernels = {}      # handle -> kernel(): cleared whenever a load or lookup lands
        self._kernel_json = {}  # handle -> attribution["kernel"] of kernel(): cleared with it
        self.any_calls = False

    def observe(self, c):
        """A call that returned (API_EXIT seen)."""
        self.any_calls = True
        if c.result != 0:
            return
        if c.kind in LAUNCH_KINDS:      # (never a load or a lookup: nothing to forget)
            if not c.submissions and c.launch_config:
                self._captured.append(c)
            return
        if c.kind in ("LOAD_IMAGE", "GET_BY_NAME") or c.base == "cuKernelGetFunction":
            self._kernels.clear()
            self._kernel_json.clear()
        if c.kind == "LOAD_IMAGE" and c.out is not None and c.image is not None:
            self.images[c.out] = c
        elif c.kind == "GET_BY_NAME" and c.out is not None:
            parent = c.args.get("hmod", c.args.get("library"))
            self.functions[c.out] = (c.string, parent)
        elif c.base == "cuKernelGetFunction" and c.out is not None:
            k = self.functions.get(c.args.get("kernel"))
            if k:
                self.functions[c.out] = k
        elif c.base in _ALLOC and c.out is not None and "bytesize" in c.args:
            self.allocations.append([c.out, c.args["bytesize"], c.name, c.index, None])
        elif c.base in _FREE:
            for a in self.allocations:
                if a[0] == c.args.get("dptr") and a[4] is None:
                    a[4] = c.index

    # -- lookups ---------------------------------------------------------------------------
    def allocation(self, value, at_index):
        """The cuMemAlloc a pointer falls in, live at record `at_index`."""
        for base, size, name, index, freed in self.allocations:
            if base <= value < base + size and index < at_index and (
                    freed is None or freed > at_index):
                return {"base": base, "size": size, "offset": value - base,
                        "call": name, "call_index": index}
        return None

    def kernel(self, handle):
        """{'mangled', 'name', 'module', 'cubin', 'kernel'} for a function handle, or None."""
        k = self._kernels.get(handle, self)
        if k is self:
            k = self._kernels[handle] = self._kernel(handle)
        return k

    def _kernel(self, handle):
        entry = self.functions.get(handle)
        if entry is None:
            return None
        mangled, parent = entry
        out = {"mangled": mangled, "name": demangle(mangled) if mangled else mangled,
               "module": parent, "image_call": None, "cubin": None, "info": None}
        load = self.images.get(parent)
        if load is None:
            return out
        out["image_call"] = load.index
        cubin = self._cubin(load)
        if cubin is not None:
            try:
                k = cubin.kernel(mangled) if mangled else None
            except KeyError:    # the module's image holds no such kernel (a damaged capture)
                k = None
            if k is not None:
                out.update(name=k.name, cubin=cubin.arch, info=k)
        return out

    def _cubin(self, load):
        if load.index not in self._cubins:
            best = None
            try:
                for _, cub in find_cubins(load.image):
                    if cub.sm == self.sm or best is None:
                        best = cub
            except TraceLaunchError:
                best = None
            self._cubins[load.index] = best
        return self._cubins[load.index]

    def resolve(self, value, at_index):
        a = self.allocation(value, at_index)
        if a is not None:
            return dict(a, what=f"offset {a['offset']:#x} in {a['call']} of {a['size']:#x} bytes "
                                f"at {a['base']:#x} (record {a['call_index']})")
        if self.objects is not None:
            try:
                text = self.objects.resolve_va(value)
            except (TraceLaunchError, AttributeError):
                text = None
            if text:
                return {"what": text}
        return None

    # -- one launch ------------------------------------------------------------------------
    def for_launch(self, launch, call):
        """{'api_call', 'graph_node', 'kernel', 'args', 'verified', 'differences', 'why'}."""
        # the summary without forcing every QMD field (decoders/launch.py Launch is lazy)
        s = getattr(launch, "_summary", None) or launch.summary
        if call is None:
            out = {"api_call": None, "graph_node": None, "kernel": None, "args": None,
                   "verified": None, "checked": [], "differences": [],
                   "why": "the doorbell rang outside any bracketed API call"}
            return self._by_address(out, s)
        api_call = call.api_call_json()
        if not s.get("kernel"):     # (the same keys in the same order, made at once)
            return {"api_call": api_call, "graph_node": None, "kernel": None, "args": None,
                    "verified": None, "checked": [], "differences": [],
                    "why": _no_kernel_why(s.get("qmd_type"), call.base)}
        out = {"api_call": api_call, "graph_node": None, "kernel": None, "args": None,
               "verified": None, "checked": [], "differences": [], "why": None}
        params = s.get("params")
        hw = params.get("hex") if params else None
        hw_bytes = bytes.fromhex(hw) if hw else None     # constant bank 0 from the parameter base
        if call.kind not in LAUNCH_KINDS:
            node = self._graph_node(call, s, hw_bytes) if call.base == "cuGraphLaunch" else None
            if node is None:
                out["why"] = (f"{call.base} is not a kernel launch call: nothing to check the "
                              "QMD against")
                return self._by_address(out, s)
            # A graph replay runs the launches captured into the graph: the launch call made
            # during stream capture (it submitted nothing) with this grid, block and arguments.
            out["graph_node"] = {"call": node.name, "index": node.index,
                                 "matched_by": "grid, block and argument bytes"}
            call = node
        cfg = call.launch_config
        handle = cfg["function"]
        k = self.kernel(handle)
        info = k["info"] if k else None
        if k:
            # one dict per kernel() entry, shared by its launches (read, never changed;
            # Launch.summary gives each its own copy)
            kj = self._kernel_json.get(handle)
            if kj is None:
                kj = self._kernel_json[handle] = {
                    "name": k["name"], "mangled": k["mangled"], "module": k["module"],
                    "image_call": k["image_call"], "cubin_arch": k["cubin"]}
            out["kernel"] = kj
            self._by_program[s.get("program_address")] = kj
        params = call.params or self._from_windows(call, info)
        out["args"] = self._args(params, hw_bytes, info, k, launch.record_index)
        out["differences"] = self._verify(call, params, cfg, s, info, hw_bytes or b"")
        out["checked"] = self.checked
        out["verified"] = not out["differences"]
        return out

    def _graph_node(self, replay, s, hw_bytes):
        """The captured launch call (no submission, before the replay) this QMD replays."""
        hw_bytes = hw_bytes or b""
        for c in self._captured:
            if c.index > replay.index or c.launch_config["grid"] != s.get("grid") or \
                    c.launch_config["block"] != s.get("block"):
                continue
            if all(p["bytes"] is not None and
                   hw_bytes[p["offset"]:p["offset"] + p["size"]] == p["bytes"]
                   for p in c.params or []) and c.params:
                return c
        return None

    def _by_address(self, out, s):
        k = self._by_program.get(s.get("program_address"))
        if k is not None:
            out["kernel"] = dict(k, how="same program address as an attributed launch")
        return out

    @staticmethod
    def _from_windows(call, info):
        """No driver layout (PARAM_LAYOUT_UNKNOWN): the cubin's, applied to the bytes the
        shim kept behind each kernelParams pointer."""
        windows = call.param_windows
        if not windows or info is None:
            return None
        out = []
        for p in info.params:
            w = windows[p["index"]] if p["index"] < len(windows) else None
            out.append({"index": p["index"], "offset": p["offset"], "size": p["size"],
                        "bytes": w[:p["size"]] if w is not None and p["size"] <= len(w) else None,
                        "layout": "cubin"})
        return out

    def _args(self, params, hw_bytes, info, k, at_index):
        layout = params or []
        if not layout and info is not None:
            layout = [{"index": p["index"], "offset": p["offset"], "size": p["size"],
                       "bytes": None} for p in info.params]
        types = param_types(k["name"]) if k and layout else None   # no arguments: not needed
        args = []
        for p in layout:
            ctype = types[p["index"]] if types and p["index"] < len(types) else None
            raw = hw_bytes[p["offset"]:p["offset"] + p["size"]] if hw_bytes is not None and \
                p["offset"] + p["size"] <= len(hw_bytes) else None
            value = _value(raw, ctype)
            a = {"index": p["index"], "type": ctype, "offset": p["offset"], "size": p["size"],
                 "hex": raw.hex() if raw is not None else None, "value": value,
                 "api_hex": p["bytes"].hex() if p.get("bytes") is not None else None}
            if isinstance(value, int) and p["size"] == 8 and (ctype is None or "*" in ctype):
                r = self.resolve(value, at_index)
                if r is not None:
                    a["points_to"] = r
            args.append(a)
        return args

    def _verify(self, call, params, cfg, s, info, hw_bytes):
        """The differences between the call and the QMD; `self.checked` names what was
        compared (shared memory needs the cubin's static size, arguments their bytes)."""
        diffs = []
        checked = self.checked = []
        smem = cfg["shared_memory_bytes"]
        if smem is not None and info is not None:
            # The QMD holds the static size, the driver's 1 KiB reserve and the dynamic size.
            # Measured on the H100: an NVRTC cubin's .nv.shared.<kernel> already includes the
            # reserve (tl_dynsmem: 256 B static -> 1280 B section; QMD 1280 + dynamic), an
            # nvcc kernel without static shared memory has no section (QMD 1024 + dynamic).
            reserve = s.get("shared_memory_driver_reserved_bytes") or 0
            static = info.shared_memory_bytes
            if static < reserve:
                static += reserve
            smem += static
        else:
            smem = None
        cluster = cfg["cluster"] or (info.required_cluster_dims if info is not None else None)
        # what the call asked for against the QMD
        for name, api in (("grid", cfg["grid"]), ("block", cfg["block"]), ("cluster", cluster),
                          ("shared_memory_bytes", smem)):
            if api is None:
                continue
            checked.append(name)
            qmd = s.get(name)
            if api != qmd:
                diffs.append({"field": name, "api": api, "qmd": qmd})
        if params:
            if any(p["bytes"] is not None for p in params):
                checked.append("argument bytes")
            for p in params:
                if p["bytes"] is None:
                    continue
                got = hw_bytes[p["offset"]:p["offset"] + p["size"]]
                if got != p["bytes"]:
                    diffs.append({"field": f"param[{p['index']}] @{p['offset']:#x}",
                                  "api": p["bytes"].hex(), "qmd": got.hex() or None})
        extra = call.sections.get("EXTRA_BUFFER")
        if not params and extra and extra["data"]:
            checked.append("argument bytes")
            got = hw_bytes[:len(extra["data"])]
            if got != extra["data"]:
                diffs.append({"field": "param buffer", "api": extra["data"].hex(), "qmd": got.hex()})
        return diffs


def describe(attr, full_names=False):
    """One line for the text report. The kernel by its short name (decoders/names.py), or
    its full demangled name with `full_names`."""
    if attr is None:
        return None
    call = attr["api_call"]
    k = attr["kernel"]
    head = (f"{call['name']} (record {call['index']})" if call else "no API call")
    if k:
        head += f" -> {k['name'] if full_names else short_name(k['name'])}"
    if attr["verified"] is True:
        what = ", ".join(x.replace("_bytes", "").replace("_", " ") for x in attr.get("checked") or [])
        return head + f": verified ({what})"
    if attr["verified"] is False:
        parts = [f"{d['field']}: call {d['api']} != QMD {d['qmd']}" for d in attr["differences"]]
        return head + ": MISMATCH " + "; ".join(parts)
    return head + (f" ({attr['why']})" if attr["why"] else "")
