"""Tie each decoded launch to the API call that made it, its kernel and its arguments,
and check the QMD against what the call asked for.

launch (QMD, from a SUBMISSION record) -> the API call its doorbell rang in (same thread,
between API_ENTER and API_EXIT) -> function handle -> cuModuleGetFunction /
cuLibraryGetKernel / cuKernelGetFunction -> module image (cuModuleLoadData /
cuLibraryLoadData bytes) -> cubin -> kernel (.nv.info parameters, static shared memory).
Arguments are read from constant bank 0 as the hardware saw it, named by type from the
demangled signature, and pointers are resolved to the cuMemAlloc they fall in.

Nothing here guesses: a launch whose call is not a launch (cuGraphLaunch replays recorded
nodes) gets its API call and `verified: null` with the reason; a copy or memset the driver
runs as a kernel (cuMemsetD32, cuMemcpyDtoDAsync) is named and checked by
decoders/cuda/driverkernels.py.
"""
from decoders.cubin import demangle, image_cubin
from decoders.cuda import allocations as AL
from decoders.cuda import graphs as G
from decoders.cuda.allocations import Allocations
from decoders.cuda.params import arg_value as _value
from decoders.cuda.tensormaps import TensorMaps
from decoders.cuda.api import GRAPH_PREPARE, GRAPH_WALK_KINDS, LAUNCH_KINDS
from decoders.cuda import graphdriver as GD
from decoders.cuda.driverkernels import before_entry_kernel, chained_kernel, \
    check as driver_kernel
from decoders.names import short_name
from decoders.errors import CaptureError, TraceLaunchError
from decoders.fields import align_up
from decoders.launch import SMEM_GRANULE, family_of_sm

_ALLOC = ("cuMemAlloc", "cuMemAllocAsync", "cuMemAllocManaged")
CUBIN_CACHE_BYTES = 32 * 1024 * 1024    # decoded cubins kept at once (Attribution._cubin)
ARGS_MEMO = 4096        # distinct argument lists remembered (Attribution._args): then cleared
_FREE = ("cuMemFree", "cuMemFreeAsync")
# virtual memory management: a mapping of physical memory into a reserved range is named as
# an allocation is; an unmap ends every mapping that starts in the range it unmaps
_MAP, _UNMAP = "cuMemMap", "cuMemUnmap"


def smem_allocation(section, dynamic, reserve, granule, allocated):
    """What a launch asked for in shared memory and what the QMD should then hold
    (docs/shared-memory.md): reserve + (static + dynamic) rounded up to `granule`.
    `section` is the cubin's .nv.shared.<kernel> size, which holds the driver's reserve
    when the kernel has static shared memory (measured: CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES
    1008 B -> a 2032 B section) and is absent (0) when it has none."""
    static = section - reserve if section >= reserve else section
    requested = static + dynamic
    return {"static": static, "dynamic": dynamic, "requested": requested, "reserve": reserve,
            "granule": granule, "expected_allocation": reserve + align_up(requested, granule),
            "allocated": allocated}


def param_types(demangled):
    """param_types_of(), remembered per name (a training loop launches the same few
    kernels thousands of times)."""
    got = _PARAM_TYPES.get(demangled, _PARAM_TYPES)
    if got is _PARAM_TYPES:
        if len(_PARAM_TYPES) >= 4096:
            _PARAM_TYPES.clear()
        got = _PARAM_TYPES[demangled] = param_types_of(demangled)
    return None if got is None else list(got)


_PARAM_TYPES = {}


def param_types_of(demangled):
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


_SHARED = {}        # _by_program: an address more than one kernel ran at (names none)


class Attribution:
    """Fed each API call as it returns (`observe`); `for_launch(launch, call)` per decoded
    launch, with the call its doorbell rang in (None outside any bracketed call). Keeps only
    what later launches can need: module images, function names, live allocations, and the
    launch calls stream capture turned into graph nodes, each indexed by what looks it up.
    Launches come in launch order (their record_index never goes down): an allocation
    freed at or before a launch's record can match no later launch and is dropped then."""

    def __init__(self, objects=None, sm=90):
        self.objects = objects
        self.sm = sm
        self.granule = SMEM_GRANULE.get(family_of_sm(sm), 1)
        self.smem = None
        # Handles and pointers are a process's own: two ranks may hold the same numbers
        # (issue 26), so the tables are keyed by (pid, handle) and allocations carry a pid.
        self.images = {}        # (pid, module / library handle) -> the ApiCall that loaded it
        self.functions = {}     # (pid, CUfunction / CUkernel handle) -> (mangled, parent handle)
        self._pid = None        # the process of the launch being attributed (for_launch)
        self._stash = None      # its Launch.stash (session/launches.py LaunchSink.settle)
        self._allocations = Allocations()      # cuMemAlloc ranges (resolve)
        self.tensor_maps = TensorMaps()         # TMA descriptors by their bytes (session 44)
        self._seq = 0           # captured launch calls so far (_capture)
        # launch calls that submitted nothing: graph nodes (stream capture), by grid and
        # block, then by argument layout, then by argument bytes: [(seq, call)] in call order
        self._captured = {}
        self._cubins = {}       # image bytes -> Cubin, least recently used first (_cubin)
        self._cubin_bytes = 0   # their decompressed bytes
        self._image_why = {}    # image bytes -> why it gave no cubin (None: nothing wrong)
        self._image_kernels = {}    # (image bytes, mangled) -> (Kernel, arch, why)
        self.problems = []      # CaptureError per distinct module image that did not decode
        self._by_program = {}   # (pid, program address) -> kernel dict (attributed launches)
        self._kernels = {}      # handle -> kernel(): cleared whenever a load or lookup lands,
                                # a handle's own entry when only it changes (_forget)
        self._kernel_json = {}  # handle -> attribution["kernel"] of kernel(): cleared with it
        # (pid, kernel, layout, QMD and call bytes) -> (allocations' version, tree generation,
        # _args's list): a step launches the same kernels with the same arguments again
        self._args_memo = {}
        self.any_calls = False
        # issue 25: handles the driver named (FUNCTION_NAME) -> the call that asked it
        self._named_by = {}
        self._looked_up = {}    # (pid, mangled name) -> the module/library a lookup found it in
        self.execs = G.GraphExecs()     # graph exec -> its nodes (graph walks and exec-level sets)
        self._ran = (None, set())       # (replay call index, node handles its QMDs matched so far)
        self._prev = (None, None)       # (replay call index, the node its last kernel QMD ran)
        self._cond = (None, {})         # (replay call index, its conditional kernels' state)
        # (launch call index, pid, the QMD addresses its kernel QMD chains to, its program,
        # its kernel's short name, its module has the device runtime): chained_kernel
        self._chain = None

    def names(self, c):
        """Register the names the driver gave in a call's FUNCTION_NAME sections (issue 25):
        handles no bracketed lookup handed out. Done once per call, when its first launch is
        attributed or when it returns, whichever comes first."""
        c.names_seen = self
        g = c.graph
        if g is None or not g.names:
            return
        for f in g.names:
            if f.name:
                self.functions[(c.pid, f.handle)] = (f.name, f.parent)
                self._named_by[(c.pid, f.handle)] = "cuKernelGetName" if "KERNEL" in f.flags else \
                    "cuFuncGetName"
                self._forget((c.pid, f.handle))

    def observe(self, c):
        """A call that returned (API_EXIT seen)."""
        self.any_calls = True
        if c.ordered is not None and c.names_seen is not self:
            self.names(c)
        if c.result != 0:
            return
        if c.kind == "TENSOR_MAP":
            self.tensor_maps.observe(c)
            return
        if c.kind in GRAPH_WALK_KINDS:
            self._walked(c)
            return
        if c.kind in LAUNCH_KINDS or c.kind == "GRAPH_KERNEL_NODE" or \
                (c.kind == "GRAPH_NODE_PARAMS" and c.launch_config is not None):
            # (never a load or a lookup: nothing to forget) a launch that submitted nothing
            # was captured into a graph; a kernel node's parameters are what its replays run
            if c.launch_config:
                # the function as bound now: a later lookup may hand its handle to another
                # function (XLA unloads modules) before this call's QMDs are attributed
                entry = self.functions.get((c.pid, c.launch_config["function"]))
                c.bound = (entry, self.images.get((c.pid, entry[1])) if entry else None)
            # (an exec-level set of a walked exec is that exec's node from now on, not a
            # captured launch: indexed, XLA's 26 sets a step would pile up for the whole run)
            if not c.submissions and c.launch_config and not (
                    "hGraphExec" in c.args and (c.pid, c.args["hGraphExec"]) in self.execs):
                self._capture(c)
            if "hGraphExec" in c.args and c.launch_config:     # an exec-level kernel node set
                self.execs.set_node((c.pid, c.args["hGraphExec"]), c.args["hNode"], c)
            return
        if c.kind == "GRAPH_NODE_PARAMS":
            return
        if c.kind == "GRAPH_COPY_NODE":
            if "hGraphExec" in c.args:      # the copy or memset its replays run from now on
                self.execs.set_params((c.pid, c.args["hGraphExec"]), c.args["hNode"], c)
            return
        if c.kind in ("LOAD_IMAGE", "GET_BY_NAME"):
            self._kernels.clear()
            self._kernel_json.clear()
        if c.kind == "LOAD_IMAGE" and c.out is not None and c.image is not None:
            self.images[(c.pid, c.out)] = c
        elif c.kind == "GET_BY_NAME" and c.out is not None:
            parent = c.args.get("hmod", c.args.get("library"))
            self.functions[(c.pid, c.out)] = (c.string, parent)
            self._named_by.pop((c.pid, c.out), None)
            if c.string is not None and (c.pid, parent) in self.images:
                self._looked_up[(c.pid, c.string)] = parent
        elif c.base == "cuKernelGetFunction" and c.out is not None:
            # only this handle's entry changes (PyTorch asks again each step: clearing
            # every kernel() made a 500-step job work out 29,000 of them again)
            self._forget((c.pid, c.out))
            k = self.functions.get((c.pid, c.args.get("kernel")))
            if k:
                self.functions[(c.pid, c.out)] = k
                self._named_by.pop((c.pid, c.out), None)
        elif c.base in _ALLOC and c.out is not None and "bytesize" in c.args:
            self._allocations.add(c.pid, c.out, c.args["bytesize"], c.name, c.index)
        elif c.base in _FREE:
            self._allocations.free(c.pid, c.args.get("dptr"), c.index)
        elif c.base == _MAP and "size" in c.args:
            self._allocations.add(c.pid, c.args["ptr"], c.args["size"], c.name, c.index)
        elif c.base == _UNMAP and "size" in c.args:
            self._allocations.free_range(c.pid, c.args["ptr"], c.args["size"], c.index)

    def _walked(self, c):
        """A call that walked a graph (cuGraphInstantiate*, cuGraphExecUpdate*,
        cuGraphExecChildGraphNodeSetParams): its exec's nodes from now on. A call whose record
        holds no walk (captures before issue 25) changes nothing."""
        g = c.graph
        if g is None or g.walk is None:
            return
        for n in g.nodes:
            if n.is_kernel:
                entry = self.functions.get((c.pid, n.launch_config["function"]))
                n.bound = (entry, self.images.get((c.pid, entry[1])) if entry else None)
        if c.kind == "GRAPH_INSTANTIATE":
            if c.out is not None:
                self.execs.set_walk((c.pid, c.out), c, g)
        elif c.kind == "GRAPH_EXEC_UPDATE":
            self.execs.set_walk((c.pid, c.args["hGraphExec"]), c, g)
        else:
            self.execs.set_child((c.pid, c.args["hGraphExec"]), c.args["hNode"], c, g)

    # -- lookups ---------------------------------------------------------------------------
    def allocation(self, value, at_index):
        """The cuMemAlloc a pointer falls in, live at record `at_index` (which never goes
        down from one call to the next: see the class), made by the process of the launch
        being attributed (decoders/cuda/allocations.py)."""
        r = self._allocations.find(value, at_index, self._pid)
        if r is None:
            return None
        return {"base": r[AL.BASE], "size": r[AL.SIZE], "offset": value - r[AL.BASE],
                "call": r[AL.CALL], "call_index": r[AL.INDEX]}

    def _forget(self, handle):
        """kernel() of (pid, handle) is worked out again: its function entry changed (what
        kernel() reads of other handles did not)."""
        self._kernels.pop(handle, None)
        self._kernel_json.pop(handle, None)

    def kernel(self, handle, bound=None, pid=None):
        """{'mangled', 'name', 'module', 'cubin', 'kernel'} for a function handle of process
        `pid`, or None. bound: (function entry, module load) as the launch call saw them."""
        handle = (pid, handle)
        if bound is not None and bound[0] is not None and \
                (self.functions.get(handle) != bound[0] or
                 self.images.get((pid, bound[0][1])) is not bound[1]):
            return self._kernel(handle, bound)      # rebound since the call: as it was then
        k = self._kernels.get(handle, self)
        if k is self:
            k = self._kernels[handle] = self._kernel(handle)
        return k

    def _kernel(self, handle, bound=None):
        entry = bound[0] if bound is not None else self.functions.get(handle)
        if entry is None:
            return None
        mangled, parent = entry
        out = {"mangled": mangled, "name": demangle(mangled) if mangled else mangled,
               "module": parent, "image_call": None, "cubin": None, "info": None}
        load = bound[1] if bound is not None else self.images.get((handle[0], parent))
        named_by = self._named_by.get(handle)
        if named_by is not None:
            out["named_by"] = named_by
            if load is None and mangled:
                # the driver's module handle is not one a load returned (a library's module
                # in this context): the library a bracketed lookup found this name in
                found = self._looked_up.get((handle[0], mangled))
                load = self.images.get((handle[0], found)) if found is not None else None
        if load is None:
            return out
        out["image_call"] = load.index
        k, arch, why = self._image_kernel(load, mangled) if mangled else (None, None, None)
        if why is None and mangled:
            why = self._image_why.get(load.image)
        if why is not None:
            out["image_problem"] = why
        if k is not None:
            out.update(name=k.name, cubin=arch, info=k)
        return out

    def _image_kernel(self, load, mangled):
        """(Kernel or None, cubin arch, why it failed or None) of a kernel of a module image,
        worked out once per (image content, kernel): a library is loaded again and again
        with the same bytes, and only launched kernels are parsed."""
        key = (load.image, mangled)
        got = self._image_kernels.get(key)
        if got is None:
            got = (None, None, None)
            cubin = self._cubin(load)
            if cubin is not None:
                try:
                    got = (cubin.kernel(mangled), cubin.arch, None)
                except KeyError:    # the image holds no such kernel (a damaged capture)
                    pass
                except TraceLaunchError as e:       # its .nv.info does not parse
                    got = (None, None, self._image_problem(load, e))
            self._image_kernels[key] = got
        return got

    def _cubin(self, load):
        """The Cubin of a module image or None (why: _image_why). Decoded cubins are kept
        while they fit CUBIN_CACHE_BYTES (least recently used first out): a real workload's
        libraries decompress to ~100 MB of cubins, of which a few kernels are needed, and a
        dropped one is decoded again only for a kernel not yet asked for."""
        image = load.image
        cache = self._cubins
        cubin = cache.pop(image, None)
        if cubin is None:
            if image in self._image_why:
                return None
            try:
                cubin = image_cubin(image, self.sm)
            except TraceLaunchError as e:
                # an image the shim cut on purpose (TRACE_LAUNCH_IMAGE_MAX, section flag
                # TRUNCATED) is known not to be whole: no cubin, and no problem to report
                cut = "TRUNCATED" in load.sections["IMAGE"]["flags"]
                self._image_why[image] = None if cut else self._image_problem(load, e)
                return None
            if cubin is None:
                self._image_why[image] = None       # PTX only: nothing to read
                return None
            self._cubin_bytes += len(cubin.data)
        cache[image] = cubin                        # (most recently used last)
        while self._cubin_bytes > CUBIN_CACHE_BYTES and len(cache) > 1:
            old = cache.pop(next(iter(cache)))
            self._cubin_bytes -= len(old.data)
            old.release()
        return cubin

    def _image_problem(self, load, e):
        """Record a problem for a module image that does not decode; its one-line why."""
        why = getattr(e, "detail", None) or str(e)
        if getattr(e, "offset", None) is not None:
            why += f" (image offset {e.offset:#x})"
        at = load._records[1]
        err = CaptureError(f"module image of {load.name} ({len(load.image):,} B) does not "
                           f"decode: {why}", offset=at, record=load.index)
        self.problems.append(err)
        return f"module image (record {load.index}) not decoded: {why}"

    def resolve(self, value, at_index):
        a = self.allocation(value, at_index)
        if a is not None:
            return dict(a, what=f"offset {a['offset']:#x} in {a['call']} of {a['size']:#x} bytes "
                                f"at {a['base']:#x} (record {a['call_index']})")
        if self.objects is not None:
            stash = self._stash     # the tree's answer when the launch arrived, if asked
            try:
                text = stash[1][value] if stash is not None and value in stash[1] else \
                    self.objects.resolve_va(value, pid=self._pid)
            except TraceLaunchError:
                text = None
            if text:
                return {"what": text}
        return None

    # -- one launch ------------------------------------------------------------------------
    def for_launch(self, launch, call, args=True, before_entry=False):
        """{'api_call', 'graph_node', 'kernel', 'args', 'verified', 'differences', 'why'}.
        args=False: the arguments by name only when the launch differs from its call (a
        brief decode's launch that no report shows: decoders/session/launches.py).
        before_entry: its doorbell rang inside the launch call `call` before the shim wrote
        the call's entry (LaunchSink.entered): the driver's, for the shim's lookups."""
        # the summary without forcing every QMD field (decoders/launch/summary.py Launch is lazy)
        s = getattr(launch, "_summary", None) or launch.summary
        self._pid = s.get("pid")    # pointers resolve to this process's allocations
        self._stash = getattr(launch, "stash", None)     # (tree generation, answers)
        if call is None:
            out = {"api_call": None, "graph_node": None, "kernel": None, "args": None,
                   "verified": None, "checked": [], "differences": [], "shared_memory": None,
                   "why": "the doorbell rang outside any bracketed API call"}
            return self._by_address(out, s)
        # The tables (functions, named_by, images, allocations) are keyed by the pid of the
        # call that registered them: the launch's call is of the launch's process (its
        # doorbell rang on that call's thread), and it holds the pid also where the launch
        # does not (a submission fed without one: decoders/submissions.py, pid None)
        pid = getattr(call, "pid", None)
        if pid is None:
            pid = s.get("pid")
        self._pid = pid
        api_call = call.api_call_json()
        if not s.get("kernel"):     # (the same keys in the same order, made at once)
            return {"api_call": api_call, "graph_node": None, "kernel": None, "args": None,
                    "verified": None, "checked": [], "differences": [], "shared_memory": None,
                    "why": _no_kernel_why(s.get("qmd_type"), call.base)}
        out = {"api_call": api_call, "graph_node": None, "kernel": None, "args": None,
               "verified": None, "checked": [], "differences": [], "shared_memory": None, "why": None}
        if call.ordered is not None and call.names_seen is not self:
            self.names(call)
        if before_entry:
            k = self.kernel(call.launch_config["function"], call.bound, pid=pid) \
                if call.launch_config else None
            info = k["info"] if k else None
            out.update(before_entry_kernel(
                call.base, short_name(k["name"]) if k and k["name"] else None,
                bool(info is not None and info.device_runtime)))
            return out
        params = s.get("params")
        hw = params.get("hex") if params else None
        hw_bytes = bytes.fromhex(hw) if hw else None     # constant bank 0 from the parameter base
        if call.kind not in LAUNCH_KINDS:
            graph = call.base == "cuGraphLaunch" or call.base in GRAPH_PREPARE
            node, how, why = self._graph_node(call, s, hw_bytes) if graph else (None, None, None)
            if graph and node is not None:
                self._prev = (call.index, node)
            if node is None:
                # a copy or memset the driver runs as a kernel (for a call, or for a graph's
                # memcpy / memset node), or its kernel for a conditional node: named and
                # checked there
                prev = self._prev
                own = GD.driver_kernel_of_replay(self, call, s, hw_bytes, launch.record_index) \
                    if graph else driver_kernel(call, s, hw_bytes, self.resolve,
                                                launch.record_index)
                if graph and self._prev is prev:    # (a MEMCPY / MEMSET node sets its own)
                    self._prev = (call.index, None)
                if own is not None:
                    out.update(own)
                    return out
                out["why"] = why or (f"{call.base} replays graph nodes, and the capture holds no "
                              "kernel node set with this grid, block and argument bytes (no "
                              "bracketed cuGraphAddKernelNode, *KernelNodeSetParams or stream-"
                              "captured launch)" if graph else
                              f"{call.base} runs a kernel of the driver's own (memsets and "
                              "device copies are kernels on this GPU): the call names no kernel, "
                              "grid or argument layout, so the capture holds nothing to check "
                              "this QMD against")
                return self._by_address(out, s)
            # A graph replay runs the launches captured into the graph: the launch call made
            # during stream capture (it submitted nothing) with this grid, block and arguments.
            out["graph_node"] = gn = {"call": node.name, "index": node.index, "matched_by": how}
            if isinstance(node, G.GraphNode):
                # a node of a graph walk (issue 25): where it sits in the launched exec
                gn.update(GD.where(call, node))
            if call.base in GRAPH_PREPARE:
                out["graph_node"]["sent_by"] = (f"{call.base}: the node's QMD is written and "
                                                "scheduled ahead of the replays that run it")
            call = node
        else:
            chain = self._chain
            if chain is not None and chain[0] == call.index and chain[1] == s.get("pid") and \
                    s.get("qmd_address") in chain[2] and s.get("program_address") != chain[3]:
                out.update(chained_kernel(call.base, chain[4], s.get("program_address") or 0,
                                          chain[5]))
                return out
        cfg = call.launch_config
        handle = (pid, cfg["function"])
        k = self.kernel(cfg["function"], call.bound, pid=pid)
        info = k["info"] if k else None
        if k:
            # one dict per kernel() entry, shared by its launches (read, never changed;
            # Launch.summary gives each its own copy)
            kj = self._kernel_json.get(handle)
            if kj is None or kj["mangled"] != k["mangled"] or kj["image_call"] != k["image_call"] \
                    or kj.get("named_by") != k.get("named_by"):
                kj = self._kernel_json[handle] = {
                    "name": k["name"], "mangled": k["mangled"], "module": k["module"],
                    "image_call": k["image_call"], "cubin_arch": k["cubin"]}
                if "named_by" in k:     # the driver named the handle (issue 25)
                    kj["named_by"] = k["named_by"]
            out["kernel"] = kj
            key = (s.get("pid"), s.get("program_address"))
            was = self._by_program.get(key)
            # an address two kernels ran at names neither: libcuda points every top-level
            # node of a graph with a conditional node at one shared program (docs/graphs.md),
            # and a module loaded again may put another kernel where one was
            self._by_program[key] = kj if was is None or (
                was is not _SHARED and was["mangled"] == kj["mangled"]) else _SHARED
        if k and k["name"] and k["name"].startswith("ncclDevKernel_"):    # which collective
            from decoders.cuda.nccl import describe
            out["nccl"] = describe(hw_bytes, k["name"], (s.get("grid") or [0])[0])
        params = call.params or self._from_windows(call, info)
        out["differences"] = self._verify(call, params, cfg, s, info, hw_bytes or b"")
        if args or out["differences"]:
            out["args"] = self._args(params, hw_bytes, info, k, launch.record_index)
        if hw_bytes:
            maps = self.tensor_maps.find(pid, hw_bytes, (s.get("params") or {}).get("offset") or 0,
                                         launch.record_index)
            if maps:    # (absent where none: the key is a Hopper TMA kernel's alone)
                out["tensor_maps"] = [
                    dict(d, param_offset=off,
                         points_to=self.resolve(d["global_address"], launch.record_index))
                    for off, d in maps]
        out["checked"] = self.checked
        out["shared_memory"] = self.smem
        out["verified"] = not out["differences"]
        if out["graph_node"] is None:
            # a QMD it chains to that runs another program is the driver's (chained_kernel)
            self._chain = (call.index, s.get("pid"),
                           {d.get("pointer") for d in s.get("dependents") or ()},
                           s.get("program_address"), short_name(k["name"]) if k and k["name"]
                           else "its kernel", bool(info is not None and info.device_runtime))
        if k and k.get("image_problem"):
            out["image_problem"] = k["image_problem"]
        return out

    def prev_node(self, replay_index):
        """The graph node the previous kernel QMD of this replay ran (None: none, or none
        matched): a conditional body's end kernel follows the body's last node."""
        return self._prev[1] if self._prev[0] == replay_index else None

    def set_prev_node(self, replay_index, node):
        self._prev = (replay_index, node)

    def cond_state(self, replay_index):
        """{(pointer0, pointer1): conditional node} of this replay's conditional-node kernels
        so far (docs/graphs.md: one pair per node)."""
        if self._cond[0] != replay_index:
            self._cond = (replay_index, {})
        return self._cond[1]

    def _capture(self, c):
        """Index a launch call captured into a graph (only one whose every argument has its
        bytes can match a replay's QMD)."""
        params = c.params
        if not params or any(p["bytes"] is None for p in params):
            return
        cfg = c.launch_config
        layout = tuple((p["offset"], p["size"]) for p in params)
        by_layout = self._captured.setdefault((_shape(cfg["grid"]), _shape(cfg["block"])), {})
        self._seq += 1
        by_layout.setdefault(layout, {}).setdefault(
            tuple(p["bytes"] for p in params), []).append((self._seq, c))

    def _graph_node(self, replay, s, hw_bytes):
        """(node, matched by, why not) for a QMD a graph replay (or a call preparing one) ran:
        a kernel node of the exec's graph walks (issue 25) when the capture holds them, else
        the captured launch call (no submission, before the replay) with its grid, block and
        argument bytes."""
        nodes = self._exec_candidates(replay, s)
        if nodes is not None:
            prefer = (self._by_program.get((s.get("pid"), s.get("program_address"))) or
                      {}).get("mangled")     # (_SHARED: {}, no preference)
            # the nodes that already ran in this replay (its launches come in run order)
            if self._ran[0] != replay.index:
                self._ran = (replay.index, set())
            node, how = G.match(nodes, hw_bytes, prefer, self._ran[1])
            if node is not None:
                if node.node:
                    self._ran[1].add(node.node)
                return node, how, None
            return None, None, self._unmatched_why(replay)
        node = self._captured_node(replay, s, hw_bytes)
        return node, "grid, block and argument bytes", None

    def _exec_candidates(self, replay, s):
        """The kernel nodes with the QMD's grid and block of the graph exec the call runs or
        prepares; None when the capture holds no walk of it."""
        grid, block = s.get("grid"), s.get("block")
        if replay.kind in GRAPH_WALK_KINDS:
            # a QMD the walking call sends itself (an instantiate that uploads): its own walk
            g = replay.graph
            if g is None or g.walk is None:
                return None
            own = G.by_shape(g.nodes).get((G._t(grid), G._t(block)), [])
            if replay.kind == "GRAPH_EXEC_CHILD":
                own = own + (self.execs.candidates((replay.pid, replay.args["hGraphExec"]),
                                                   grid, block, replay.index) or [])
            return own
        return self.execs.candidates((replay.pid, replay.args.get("hGraphExec")), grid, block,
                                     replay.index)

    def _unmatched_why(self, replay):
        if replay.kind in GRAPH_WALK_KINDS:
            return G.unmatched_why(replay.base, replay.out or 0, replay, replay.graph.nodes)
        exec_ = replay.args.get("hGraphExec")
        key = (replay.pid, exec_)       # exec handles are per process
        return G.unmatched_why(replay.base, exec_, self.execs.source(key, replay.index),
                               self.execs.nodes(key, replay.index))

    def _captured_node(self, replay, s, hw_bytes):
        """The captured launch call (no submission, before the replay) this QMD replays:
        of those with its grid, block and argument bytes, the latest (the latest setting of
        a node wins)."""
        hw_bytes = hw_bytes or b""
        best = None
        for layout, by_bytes in self._captured.get(
                (_shape(s.get("grid")), _shape(s.get("block"))), {}).items():
            calls = by_bytes.get(tuple(hw_bytes[o:o + n] for o, n in layout))
            for seq, c in reversed(calls or ()):
                if c.index <= replay.index:
                    if best is None or seq > best[0]:
                        best = (seq, c)
                    break
        return best[1] if best is not None else None

    def _by_address(self, out, s):
        k = self._by_program.get((s.get("pid"), s.get("program_address")))
        if k:           # (not _SHARED)
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
        allocs, memo = self._allocations, self._args_memo
        key = None
        if at_index > allocs.changed:   # every allocation and free so far is before it
            key = (self._pid, k["name"] if k else None, None if params else info, hw_bytes,
                   tuple([(p["index"], p["offset"], p["size"], p.get("bytes"))
                          for p in params]) if params else None)
            gen = self._stash[0] if self._stash is not None else \
                getattr(self.objects, "generation", 0)
            try:
                got = memo.get(key)
            except TypeError:       # (a part that is no key: not remembered)
                got = key = None
            if got is not None and got[0] == allocs.version and got[1] == gen:
                return got[2]
        args = self._args_made(params, hw_bytes, info, k, at_index)
        if key is not None:
            if len(memo) >= ARGS_MEMO:
                memo.clear()
            memo[key] = (allocs.version, gen, args)
        return args

    def _args_made(self, params, hw_bytes, info, k, at_index):
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
        self.smem = None
        if smem is not None and info is not None:
            self.smem = smem_allocation(info.shared_memory_bytes, smem,
                                        s.get("shared_memory_driver_reserved_bytes") or 0,
                                        self.granule, s.get("shared_memory_bytes"))
            smem = self.smem["expected_allocation"]
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


def _shape(dims):
    """A grid or block as a key (a list is not one)."""
    return tuple(dims) if dims is not None else None


def describe(attr, full_names=False):
    """One line for the text report: what _describe says, then, when the kernel's module
    image did not decode, why (beside the verified line, issue 20)."""
    line = _describe(attr, full_names)
    if attr is not None and attr.get("image_problem"):
        line += f"; {attr['image_problem']}"
    return line


def _describe(attr, full_names=False):
    """One line for the text report. The kernel by its short name (decoders/names.py), or
    its full demangled name with `full_names`."""
    if attr is None:
        return None
    call = attr["api_call"]
    k = attr["kernel"]
    head = (f"{call['name']} (record {call['index']})" if call else "no API call")
    if k:
        head += f" -> {k['name'] if full_names else short_name(k['name'])}"
    cond = (attr.get("graph_node") or {}).get("conditional")
    if cond:    # a node of a conditional body (docs/graphs.md): which one; not whether it ran
        head += (f" [{cond['type']} body {cond['body']} of node {cond['node']:#x}: sent; "
                 "whether it runs is decided on the GPU]")
    dk = attr.get("driver_kernel")
    span = dk.get("span") if dk else None
    if span and (span["offset"], span["bytes"]) != (0, dk["bytes"]):
        # one of the kernels a call was split into (docs/driver-kernels.md)
        head += f" [bytes {span['offset']:#x}..{span['offset'] + span['bytes']:#x} of {dk['bytes']:#x}]"
    sm = attr.get("shared_memory")
    smem = (f"; shared memory requested {sm['requested']} B, allocated {sm['allocated']} B "
            f"(granule {sm['granule']} B, {sm['reserve']} B reserved)") if sm else ""
    if attr["verified"] is True:
        what = ", ".join(x.replace("_bytes", "").replace("_", " ") for x in attr.get("checked") or [])
        left = "".join(f"; {u['field']} not checked: {u['why']}" for u in attr.get("unchecked") or ())
        return head + f": verified ({what}){smem}{left}"
    if attr["verified"] is False:
        parts = [f"{d['field']}: call {d['api']} != QMD {d['qmd']}" for d in attr["differences"]]
        return head + ": MISMATCH " + "; ".join(parts) + smem
    return head + (f" ({attr['why']})" if attr["why"] else "")
