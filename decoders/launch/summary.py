"""A decoded QMD as a launch: its summary (shape, constant banks, releases, dependents,
arguments), made from parts remembered per distinct QMD words (_SummaryPlan), and its
node tree. Facts: h100-measured.md section 1; hw-facts.md sections 4, 5.
"""
from decoders.node import Node
from decoders import qmd as qmdmod

# Kernel-parameter base in constant bank 0 and the driver-region fields a source names.
# hw-facts.md 5.1 ([ptxas]: EIATTR_PARAM_CBANK, ntid/nctaid/stack-pointer/descriptor
# immediates); h100-measured.md 1 (blockDim at +0x0, gridDim at +0xC on the H100).
ARCH_CBANK0 = {
    "sm_70-89": {"param_base": 0x160, "fields": (
        ("blockDim.x", 0x0, 4), ("blockDim.y", 0x4, 4), ("blockDim.z", 0x8, 4),
        ("gridDim.x", 0xC, 4), ("gridDim.y", 0x10, 4), ("gridDim.z", 0x14, 4),
        ("stack_pointer_init", 0x28, 4), ("global_memory_descriptor", 0x118, 8))},
    "sm_90": {"param_base": 0x210, "fields": (
        ("blockDim.x", 0x0, 4), ("blockDim.y", 0x4, 4), ("blockDim.z", 0x8, 4),
        ("gridDim.x", 0xC, 4), ("gridDim.y", 0x10, 4), ("gridDim.z", 0x14, 4),
        ("stack_pointer_init", 0x28, 4), ("global_memory_descriptor", 0x208, 8))},
    "sm_100+": {"param_base": 0x380, "fields": (
        ("blockDim.x", 0x360, 4), ("blockDim.y", 0x364, 4), ("blockDim.z", 0x368, 4),
        ("gridDim.x", 0x370, 4), ("gridDim.y", 0x374, 4), ("gridDim.z", 0x378, 4),
        ("stack_pointer_init", 0x37C, 4), ("global_memory_descriptor", 0x358, 8))},
}
FAMILY_ARCH = {"ampere": "sm_70-89", "ada": "sm_70-89", "hopper": "sm_90",
               "blackwell": "sm_100+"}
# How the driver turns a launch's shared memory into SHARED_MEMORY_SIZE, measured on the
# H100 (captures/smem-sweep, 61 launches; docs/shared-memory.md): the 1 KiB the driver
# reserves per block, plus static + dynamic bytes rounded up to 128-byte granules.
# Not measured on other families (no rounding is assumed there).
DRIVER_SMEM_RESERVED = {"hopper": 1024}
SMEM_GRANULE = {"hopper": 128}
_FAMILY_OF_MAJOR = {8: "ampere", 9: "hopper", 10: "blackwell", 12: "blackwell"}


def family_of_sm(sm):
    """The GPU family of a compute capability written as 90 (9.0), 89, 100..."""
    return _FAMILY_OF_MAJOR.get(sm // 10, "hopper")
QMD_TYPE_NAMES = {0: "QUEUE", 1: "GRID_NULL", 2: "GRID_CTA", 3: "GRID_GPC_CGA",
                  4: "GRID_GPU_CGA", 5: "GRID_GPU_GPC_CGA"}
# A hostile capture's dependent pointers may form long chains or loops: each QMD is walked
# once per submission (LaunchDecoder._this_submission), and a walk stops after this many.
MAX_DEPENDENT_CHAIN = 4096


class Launch:
    """One decoded QMD: .summary (dict) and .node (Node tree, built on first use).

    summary["qmd_fields"] (every field of the QMD) and .fields are computed on first
    access from the QMD bytes: the summary's other keys need only ~90 of the ~200 fields.
    summary["cbank0_driver"] likewise, from the driver constants' bytes (`driver`: the
    key of driver_constants()): nothing reads it while decoding, and a spilled launch
    keeps 528 bytes instead of a dict holding their hex.
    While decoding, the summary holds the remembered QMD parts themselves (grid, grid_raw,
    cluster, block, constant_buffers, the releases' semaphore fields: _SummaryPlan, shared
    by every launch whose words hold the same values; the fields of a semaphore method:
    _method_fields, per value; read, never changed); the first read
    of .summary gives it its own copies, so each summary handed out has its own lists and
    dicts (and a spilled batch marshals one copy of each shared part).
    The dict handed out is the same either way (same keys, same order, same values).
    decode_submissions() also sets where it came from: .record_index (capture record),
    .submission_index (n-th submission fed), .channel (work-submit token), .pid, .hChannel.
    """
    __slots__ = ("_summary", "qmd_bytes", "_fields", "version", "_node", "_words", "_driver",
                 "_own", "record_index", "submission_index", "channel", "pid", "hChannel",
                 "kept_at", "latch", "serial", "stash")

    def __init__(self, summary, qmd_bytes, fields, version, words=None, driver=None):
        self._summary = summary
        self.qmd_bytes = qmd_bytes
        self._fields = fields
        self.version = version
        self._words = words
        self._driver = driver
        self._own = False           # the summary's parts not copied yet (see above)
        self._node = None
        self.latch = None           # (latch it waits on or None, latch it arrives at): qmds.py
        self.record_index = self.submission_index = self.channel = None
        self.pid = self.hChannel = None
        self.kept_at = None         # (index in a kept list, its semaphores then): session sink
        self.stash = None           # {pointer: the object tree's answer then}: LaunchSink.settle
        self.serial = None          # its number in a split decode's front (session/front.py)

    @property
    def fields(self):
        """{field: value} for every field of the QMD's version."""
        if self._fields is None:
            words = self._words if self._words is not None else qmdmod.padded_words(
                self.qmd_bytes, self.version)
            self._fields = qmdmod.extract_words(words, self.version)
        return self._fields

    @property
    def summary(self):
        s = self._summary
        if not self._own:
            _own_parts(s)
            self._own = True
        if s["qmd_fields"] is None:
            s["qmd_fields"] = self.fields
        if self._driver is not None:
            s["cbank0_driver"] = driver_constants(*self._driver)
            self._driver = None
        return s

    def view(self, qmd_fields=None):
        """The summary to read, not change: the same keys, order and values as .summary, but
        its parts may be shared with other launches' (nothing is copied), and `qmd_fields`,
        when given, stands in for every field of the QMD (a renderer that already has their
        text for these QMD bytes need not extract them again)."""
        if self._own:
            s = self._summary
            return s if qmd_fields is None else dict(s, qmd_fields=qmd_fields)
        s = dict(self._summary)
        s["qmd_fields"] = qmd_fields if qmd_fields is not None else \
            (s["qmd_fields"] if s["qmd_fields"] is not None else self.fields)
        if self._driver is not None:
            s["cbank0_driver"] = driver_constants(*self._driver)
        return s

    @property
    def kernel(self):
        """True for a QMD that runs a program; False for the GRID_NULL QMD the H100 driver
        schedules before each kernel's own QMD (captures/builtin-vadd, record 790)."""
        return self._summary["kernel"]

    @property
    def node(self):
        if self._node is None:
            self._node = build_node(self)
        return self._node


def _own_parts(s):
    """Give a summary its own copies of the parts it may share with other launches'."""
    for key in ("grid", "grid_raw", "cluster", "block"):
        if s[key] is not None:
            s[key] = list(s[key])
    s["constant_buffers"] = [dict(cb) for cb in s["constant_buffers"]]
    for sem in s["semaphores"]:
        if isinstance(sem, dict) and "fields" in sem:
            sem["fields"] = dict(sem["fields"])
    s["dependents"] = [dict(d) for d in s["dependents"]]
    r = s.get("resolved")
    if r is not None:           # its constant bank list: one per tree state (session)
        r["constant_buffers"] = list(r["constant_buffers"])
    call = s.get("api_call")
    if call is not None:        # one per API call, shared by its launches (ApiCall.api_call_json)
        from decoders.cuda.calls import own_launch_config
        own = dict(call, launch=own_launch_config(call["launch"]))
        s["api_call"] = own
        a = s.get("attribution")
        if a is not None and a.get("api_call") is call:
            a["api_call"] = own
    a = s.get("attribution")
    if a is not None and a.get("kernel") is not None:      # one per kernel (Attribution)
        a["kernel"] = dict(a["kernel"])


class _SummaryPlan:
    """Per QMD version: the fields the summary reads, in parts (shape, constant banks,
    releases, dependents). Each part is derived from its fields once per distinct set of
    the whole words holding them (FieldTable.word_key) and remembered: a launch loop's
    QMDs differ in a few words (ring addresses, payloads), so most parts repeat."""

    CACHE = 4096          # entries per part before it starts over

    def __init__(self, version):
        c = qmdmod.COMMON[version]
        self.version = version
        self.table = table = qmdmod.TABLES[version]
        self.size = qmdmod.MODULES[version].SIZE
        self.nwords = qmdmod.MODULES[version].NWORDS
        self.grid, self.block = c["grid"], c["block"]
        self.qmd_type = c["qmd_type"]
        self.gpc_cga, self.gpu_cga = c.get("gpc_cga", ()), c.get("gpu_cga", ())
        self.smem_name, self.smem_shift = c["shared_memory"]
        self.program = c["program"]
        self.registers = c["registers"]
        alo, ahi, self.cbank_shift, asize, avalid = c["cbank"]
        self.cbank = [(alo.format(i), ahi.format(i), asize.format(i), avalid.format(i))
                      for i in range(8)]
        ren, ralo, rahi, rplo, rphi, rextra = c["release"]
        self.release = [(ren.format(i), ralo.format(i), rahi.format(i), rplo.format(i),
                         rphi.format(i), tuple(n.format(i) for n in rextra if
                                               n.format(i) in table.by_name))
                        for i in range(3)]
        self.dependent = c["dependent"]
        # Values split over fields or stored shifted, declared once (FieldTable.composer).
        lo, hi, pshift = self.program
        self._smem_program = table.composer([((self.smem_name, self.smem_shift),),
                                             ((lo, pshift), (hi, 32 + pshift))])
        ashift = self.cbank_shift
        self._cbank_values = table.composer([
            terms for alo, ahi, asize, avalid in self.cbank
            for terms in (((alo, ashift), (ahi, 32 + ashift)), ((asize, 4),))])
        known = table.by_name
        shape = list(self.grid) + list(self.block) + list(self.gpc_cga) + list(self.gpu_cga)
        shape += [self.smem_name, self.program[0], self.program[1], self.registers]
        if self.qmd_type:
            shape.append(self.qmd_type)
        self._shape_part = self._part([n for n in shape if n in known])
        self._cbank_part = self._part([n for g in self.cbank for n in g if n in known])
        flags = []
        for ren, ralo, rahi, rplo, rphi, rextra in self.release:
            flags += [ren, *rextra]
        self._release_part = self._part([n for n in flags if n in known])
        self._release_pick = {}
        dep = [n for d in self.dependent for n in d if n is not None and n in known]
        dep = list(dict.fromkeys(dep))
        pick = table.picker(dep) if dep else (lambda w: ())
        self.dependent_fields = lambda w: dict(zip(dep, pick(w)))
        self._dependent_key = table.word_key(dep)
        # DEPENDENT_QMDn_POINTER holds the QMD's VA >> 8 (as SEND_PCAS_A does).
        self._dependent_pointer = [table.composer([((pointer, 8),)]) if pointer is not None
                                   else None for enable, action, pointer in self.dependent]
        self._dependents = {}
        self._parts_key = table.word_key(
            [n for n in shape if n in known] + [n for g in self.cbank for n in g if n in known]
            + [n for n in flags if n in known] + dep)
        self._parts = {}
        self._shapes = {}
        self._cbanks = {}
        self._releases = {}

    def _part(self, names):
        """(word key, words -> {name: value}) of a group of fields."""
        names = list(dict.fromkeys(names))
        pick = self.table.picker(names) if names else (lambda w: ())
        return self.table.word_key(names), lambda w: dict(zip(names, pick(w)))

    def _remember(self, cache, key, value):
        if len(cache) >= self.CACHE:
            cache.clear()
        cache[key] = value
        return value

    def shape(self, words, family):
        """(qmd_type name, kernel, grid, grid_units, grid_raw, cluster, block, registers,
        shared memory bytes, driver-reserved bytes, program address)."""
        key_of, fields_of = self._shape_part
        key = (family, key_of(words))
        part = self._shapes.get(key)
        if part is not None:
            return part
        f = fields_of(words)
        grid_raw = [f[n] for n in self.grid]
        block = [f[n] for n in self.block]
        cluster = None
        qmd_type = f[self.qmd_type] if self.qmd_type else None
        if qmd_type in (3, 5):        # GRID_GPC_CGA (measured on H100), GRID_GPU_GPC_CGA
            cluster = [f[n] for n in self.gpc_cga]
        elif qmd_type == 4:           # GRID_GPU_CGA: shape in GPU_CGA_* (not measured)
            cluster = [f[n] for n in self.gpu_cga]
        if cluster is not None:
            grid = [g * max(k, 1) for g, k in zip(grid_raw, cluster)]
        else:
            grid = list(grid_raw)
        smem, program = self._smem_program(words)
        reserved = DRIVER_SMEM_RESERVED.get(family)
        # A QMD that runs nothing: the GRID_NULL QMD the H100 driver schedules ahead of each
        # kernel's own (captures/builtin-vadd record 790; h100-measured.md 1 step 3).
        kernel = bool(program) and qmd_type != 1 and all(grid_raw)
        return self._remember(self._shapes, key, (
            QMD_TYPE_NAMES.get(qmd_type, qmd_type) if qmd_type is not None else None,
            kernel, grid, "clusters" if cluster is not None else "blocks", grid_raw, cluster,
            block, f[self.registers], smem,
            reserved if reserved is not None and smem >= reserved else None, program))

    def cbanks(self, words):
        """(the constant banks that are valid or set: [{index, address, size, valid}], the
        position of the valid bank 0 among them or None)."""
        key_of, fields_of = self._cbank_part
        key = key_of(words)
        part = self._cbanks.get(key)
        if part is not None:
            return part
        f = fields_of(words)
        values = self._cbank_values(words)
        cbanks = []
        for i, (alo, ahi, asize, avalid) in enumerate(self.cbank):
            addr, size = values[2 * i], values[2 * i + 1]
            valid = bool(f[avalid])
            if valid or addr or size:
                cbanks.append({"index": i, "address": addr, "size": size, "valid": valid})
        cb0 = next((k for k, cb in enumerate(cbanks) if cb["index"] == 0 and cb["valid"]), None)
        return self._remember(self._cbanks, key, (cbanks, cb0))

    def parts(self, words, family):
        """(shape(), *cbanks(), releases(), dependent_targets(), prototype()) at once,
        remembered per distinct words holding any of their fields (one key instead of four)."""
        key = (family, self._parts_key(words))
        part = self._parts.get(key)
        if part is None:
            shape, cbanks = self.shape(words, family), self.cbanks(words)
            part = self._remember(self._parts, key, (
                shape, *cbanks, self.releases(words), self.dependent_targets(words),
                self.prototype(shape, cbanks[0])))
        return part

    def prototype(self, shape, cbanks):
        """A launch summary's keys in their order, with the values its parts decide (shape,
        constant banks); LaunchDecoder._summary copies it and sets the launch's own."""
        (qmd_type, kernel, grid, grid_units, grid_raw, cluster, block, registers, smem, reserved,
         program) = shape
        # The parts go in as they are remembered: Launch.summary gives each summary its
        # own copies when it is first read.
        return {
            "qmd_address": None,
            "qmd_version": self.version,
            "source": None,
            "parent_qmd": None,
            "qmd_written_by": None,
            "pushbuf_offset": None,
            "class": None,
            "qmd_type": qmd_type,
            "kernel": kernel,
            "grid": grid,
            "grid_units": grid_units,
            "grid_raw": grid_raw,
            "cluster": cluster,
            "block": block,
            "registers": registers,
            "shared_memory_bytes": smem,
            "shared_memory_driver_reserved_bytes": reserved,
            "program_address": program,
            "constant_buffers": cbanks,
            "params": None,
            "cbank0_driver": None,
            "semaphores": None,
            "dependents": None,
            "qmd_fields": None,      # filled from the QMD words on first access (Launch.summary)
        }

    def dependent_targets(self, words):
        """((n, QMD VA), ...) of the enabled dependent QMD pointers that are not 0."""
        key = self._dependent_key(words)
        part = self._dependents.get(key)
        if part is not None:
            return part
        f = self.dependent_fields(words)
        out = []
        for n, (enable, action, pointer) in enumerate(self.dependent):
            if pointer is None or not f.get(enable):
                continue
            (target,) = self._dependent_pointer[n](words)
            if target:
                out.append((n, target))
        return self._remember(self._dependents, key, tuple(out))

    def releases(self, words):
        """Per enabled release: (source, rendered fields, words -> (address, payload));
        address and payload change from launch to launch."""
        key_of, fields_of = self._release_part
        key = key_of(words)
        part = self._releases.get(key)
        if part is not None:
            return part
        f = fields_of(words)
        table = self.table
        out = []
        for i, (ren, ralo, rahi, rplo, rphi, rextra) in enumerate(self.release):
            if not f.get(ren):
                continue
            pick = self._release_pick.get(i)
            if pick is None:
                pick = self._release_pick[i] = table.composer([((ralo, 0), (rahi, 32)),
                                                               ((rplo, 0), (rphi, 32))])
            fields = {n: table.render(n, f[n]) for n in rextra if n in f}
            out.append((f"qmd.RELEASE{i}", fields, pick, _reduction(fields)))
        return self._remember(self._releases, key, out)


def _reduction(fields):
    """The operation of a release that is a reduction (RELEASE_REDUCTION_ENABLE: RED_ADD,
    ...), else None: the GPU then combines the payload with the word there (an atomic),
    it does not write it. CUDA graphs' and XLA's QMDs release so (captures/graph-replay)."""
    enabled = next((v for n, v in fields.items() if "REDUCTION_ENABLE" in n), None)
    if enabled != "TRUE":
        return None
    return next((v for n, v in fields.items() if "REDUCTION_OP" in n), "REDUCTION")


_SUMMARY_PLANS = {}
_QMD_IMAGES = {}        # (GPU family, QMD bytes) -> LaunchDecoder._image()
_ALREADY_DECODED = {}   # dependent QMD pointer -> summary["dependents"] item of a QMD seen before
_PARAMS = {}        # (arch, argument bytes, uploaded) -> summary["params"]
_DRIVER = {}        # (arch, driver constant bytes, upload size) -> summary["cbank0_driver"]


def driver_constants(arch, driver, upload_size):
    """summary["cbank0_driver"]: the driver's constants (constant bank 0 below the
    parameter base, `driver` as far as known) with the fields ARCH_CBANK0 names, and the
    size of the upload that wrote them. Launches whose bytes are the same get the same
    (shared, never changed) dict."""
    key = (arch, driver, upload_size)
    drv = _DRIVER.get(key)
    if drv is None:
        named = {}
        for name, off, size in ARCH_CBANK0[arch]["fields"]:
            if off + size <= len(driver):
                named[name] = int.from_bytes(driver[off:off + size], "little")
        drv = _remember(_DRIVER, key, {"offset": 0, "size": len(driver), "fields": named,
                                       "hex": driver.hex(), "upload_size": upload_size})
    return drv


_CLASS_TEXT = {}


def _class_text(cls):
    """summary["class"]: "0xcbc0" (remembered: a capture launches from a class or two)."""
    text = _CLASS_TEXT.get(cls)
    if text is None:
        text = _remember(_CLASS_TEXT, cls, f"{cls:#06x}" if cls is not None else None)
    return text


def _already_decoded(target):
    """The dependents item of a QMD pointer decoded before: one dict per target (a ring of
    QMD slots), shared: read, never changed."""
    d = _ALREADY_DECODED.get(target)
    if d is None:
        d = _remember(_ALREADY_DECODED, target,
                      {"pointer": target, "decoded": False, "why": "already decoded"})
    return d


def _remember(cache, key, value, limit=1024):
    if len(cache) >= limit:
        cache.clear()
    cache[key] = value
    return value


def _summary_plan(version):
    sp = _SUMMARY_PLANS.get(version)
    if sp is None:
        sp = _SUMMARY_PLANS[version] = _SummaryPlan(version)
    return sp



def build_node(launch):
    """Node tree of one launch: launch.* summary nodes and qmd.<version>.<field> nodes."""
    s = launch.summary
    root = Node("launch", "launch", raw=s["qmd_address"], display=f"QMD {s['qmd_address']:#x}")
    for key in ("qmd_version", "qmd_type", "grid", "cluster", "block", "registers",
                "shared_memory_bytes", "program_address"):
        value = s[key]
        display = f"{value:#x}" if key == "program_address" else str(value)
        root.add(Node(f"launch.{key}", key, raw=value, display=display))
    ver = launch.version.lower()
    qnode = root.add(Node(f"qmd.{ver}", f"QMD{launch.version}", raw=launch.qmd_bytes,
                          display=f"{len(launch.qmd_bytes)} bytes"))
    table = qmdmod.TABLES[launch.version]
    for fdef in table.fields:
        value = launch.fields[fdef.name]
        path = f"qmd.{ver}." + fdef.name.lower().replace("(", "_").replace(")", "")
        qnode.add(Node(path, fdef.name, raw=value, display=table.render(fdef.name, value),
                       offset=fdef.dword * 4))
    return root

