"""The RM object tree of a capture: handles, classes, parents, memory and its mappings, channels.

Fed record by record (feed_ioctl / feed_mmap / feed_munmap) in capture order. Facts used:
* RM_ALLOC / RM_ALLOC_OBJECT / RM_ALLOC_MEMORY create an object (class, parent, client, alloc
  params); RM_FREE frees it and its descendants (RM frees children with the parent).
* RM_MAP_MEMORY(hMemory, offset, length, fd) makes an mmap context on `fd`; the next mmap of
  that fd is the CPU mapping (hw-facts.md 6.1: rm_create_mmap_context, then user mmap).
* RM_MAP_MEMORY_DMA returns the GPU VA (dmaOffset) of hMemory+offset in hDma;
  UVM_MAP_EXTERNAL_ALLOCATION maps hMemory+offset at base; UVM_FREE(base) removes it.
* Channel alloc params (NV_CHANNEL_ALLOC_PARAMS) give the GPFIFO VA, entries, USERD memory
  and offset, engine. libcuda on the H100 leaves the channel's engineType 0 (NULL) and sets it
  on the parent channel group (KEPLER_CHANNEL_GROUP_A, NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS;
  captures/builtin-vadd): the channel's engine is then taken from its group, and
  `engine_from` says which. NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN on the channel gives the
  doorbell token. The runlist shown is token >> 16: an inference from the tokens measured on
  the H100 (h100-measured.md 3: 0xA.. on the GR runlist, 0x10012/0x30016/0xA001A on CE
  runlists), not a documented field.
* NV0000_CTRL_CMD_OS_UNIX_IMPORT_OBJECTS_FROM_FD dups the objects another process exported
  to an fd under hParent, with the handles in objects[] (ctrl0000unix.h: "the exported objects
  will be duped under these handles"); objectTypes[] (OUT) says what each became (VIDMEM,
  SYSMEM, FABRIC, FABRIC_MC; NONE: not imported). Its class is the exporter's, which the
  import does not name and the fd passed between the processes does not tie (captures/
  ddp-2rank: NCCL's peer buffers, 48 per rank, then UVM-mapped): such an object has class
  None and its import type as location. NV_ESC_RM_DUP_OBJECT (NVOS55) dups hObjectSrc under
  hParent as hObject: the new object takes the source's class, size and location when the
  source is in the same process's tree.
RM handles, UVM bases and CPU addresses mean something within one process only: libcuda in
every process allocates the same handles (0x5c0000xx) and the ranks of one torchrun job map
the same UVM bases (captures/ddp-2rank). ObjectTree keeps one ProcessTree per pid and routes
each record to its process's; lookups name the process (view(pid)).
Only successful calls change the tree; failed ones are ignored.
Lookups are indexed (children by parent, mappings by address granule, UVM mappings by
base): no record's work grows with the objects the tree has seen (STYLE 13b).
"""
from dataclasses import dataclass, field

from decoders.ioctl import _decode, branch_of
from decoders.ranks import GpuMap
from decoders.rm.allocparams import NV2080_ENGINE_TYPE, memory_location
from decoders.rm.classes import ROLE, class_name
from decoders.fields import bits

WORK_SUBMIT_TOKEN = 0xC36F0108
IMPORT_OBJECTS_FROM_FD = 0x00003D0C
# NV0000_CTRL_CMD_OS_UNIX_IMPORT_OBJECT_TYPE_* (ctrl0000unix.h, 580) -> the location shown
IMPORT_LOCATION = {1: "vidmem", 2: "sysmem", 3: "fabric", 4: "fabric multicast"}
IMPORT_TYPE = {1: "VIDMEM", 2: "SYSMEM", 3: "FABRIC", 4: "FABRIC_MC"}
# ioctl handlers that change no object or mapping: what was resolved still holds after them
_KEEP_RESOLVED = frozenset(("_on_rm_control", "_on_check_version_str", "_on_rm_map_memory"))
GRANULE = 2 << 20       # the address span an index bucket covers (GPU allocations: 2 MiB)
HUGE_SPAN = 1024        # granules; a mapping wider than this is looked at on every query


class _SpanIndex:
    """Address granule -> the handles of objects with a mapping over it, so a lookup looks
    at the few objects near an address, not all. Entries are never taken out: a lookup
    checks the object's mappings as they are now (a mapping removed since, or an object
    re-created under the same handle, only costs that check)."""

    def __init__(self):
        self._buckets = {}
        self._huge = {}         # handle -> None (an ordered set), for spans past HUGE_SPAN

    def add(self, handle, addr, length):
        if addr is None:
            return
        first, last = addr // GRANULE, (addr + max(length or 0, 1) - 1) // GRANULE
        if last - first > HUGE_SPAN:
            self._huge[handle] = None
            return
        for g in range(first, last + 1):
            self._buckets.setdefault(g, {})[handle] = None

    def near(self, addr):
        """The handles that may have a mapping over `addr`."""
        bucket = self._buckets.get(addr // GRANULE)
        if not self._huge:
            return bucket or ()
        return list(bucket or ()) + list(self._huge)

    def prune(self, addr, handles):
        """Take out of the bucket of `addr` (and the huge spans) handles whose objects were
        freed: a job that frees and allocates again each step (no caching allocator: ~60 RM
        allocations a step) put one more freed object under the same addresses every step,
        and each lookup there walked them all."""
        bucket = self._buckets.get(addr // GRANULE)
        for h in handles:
            if bucket is not None:
                bucket.pop(h, None)
            self._huge.pop(h, None)


@dataclass
class RmObject:
    handle: int
    hclass: int
    class_name: str
    parent: int
    client: int
    params: dict = field(default_factory=dict)
    freed: bool = False
    pid: int = None
    role: str = "other"
    size: int = None
    location: str = None
    cpu_mappings: list = field(default_factory=list)   # [{"addr", "length", "offset", "fd"}]
    gpu_mappings: list = field(default_factory=list)   # [{"va", "length", "offset", "via"}]

    def to_json(self):
        out = {"handle": self.handle, "class": self.hclass, "class_name": self.class_name,
               "parent": self.parent, "client": self.client, "role": self.role,
               "freed": self.freed}
        for key in ("pid", "size", "location"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.cpu_mappings:
            out["cpu_mappings"] = self.cpu_mappings
        if self.gpu_mappings:
            out["gpu_mappings"] = self.gpu_mappings
        if self.params:
            out["params"] = {k: (v.hex() if isinstance(v, (bytes, bytearray)) else v)
                             for k, v in self.params.items()}
        return out


@dataclass
class Channel:
    handle: int
    hclass: int
    class_name: str
    parent: int
    token: int = None
    gpfifo_va: int = None
    entries: int = None
    userd_memory: int = None
    userd_offset: int = None
    engine: str = None
    engine_from: str = None
    runlist: int = None
    context_share: int = None
    freed: bool = False

    def to_json(self):
        return dict(self.__dict__)


@dataclass
class Resolved:
    """A GPU VA resolved to a memory object: `offset` into it, the mapping `how`, `cpu_addr`."""
    obj: RmObject
    offset: int
    how: str
    cpu_addr: int = None


class ProcessTree:
    """The objects, channels and mappings of one process (ObjectTree keeps one per pid).
    The driver branch, notes, unmatched mmaps and GPUs are the capture's: its owner's."""

    def __init__(self, owner):
        self.owner = owner              # the ObjectTree
        self.objects = {}
        self.channels = {}
        self.virtual_ranges = []        # [(va, limit, handle)]
        self._pending_mmap = {}         # (pid, fd) -> [(hMemory, offset, length)]
        self._resolved = {}             # va -> Resolved/None, valid until the tree changes
        self._resolutions = {}          # va -> resolution() data, valid as long
        self.launch_memo = {}           # for callers' own resolution()-derived data, as long
        self._described = {}            # va -> resolve_va() text, as long
        self._position = {}             # handle -> its place in self.objects (dict order)
        self._children = {}             # parent handle -> {child handle: None}
        self._gpu_index = _SpanIndex()  # GPU mappings
        self._cpu_index = _SpanIndex()  # CPU mappings
        self._uvm = {}                  # UVM_MAP_EXTERNAL_ALLOCATION base -> {handle: None}
        self._fd_mapped = {}            # handle -> None: objects with an mmap'd CPU mapping

    branch = property(lambda self: self.owner.branch)
    notes = property(lambda self: self.owner.notes)
    unmatched_mmaps = property(lambda self: self.owner.unmatched_mmaps)

    def resolve_cached(self, va):
        """resolve(va), remembered until the next feed_* (a launch loop asks for the same
        few ring addresses thousands of times between two ioctls)."""
        return _remembered(self._resolved, va, self.resolve)

    def _forget(self):
        """The tree changed: what was resolved may not hold any more."""
        self._resolved.clear()
        self._resolutions.clear()
        self.launch_memo.clear()
        self._described.clear()

    def resolution(self, va):
        """Where GPU VA `va` lands, as JSON data (docs/json.md launches[].resolved): handle,
        class, class_name, offset, size, memory (sysmem/vidmem/...), cpu, via; None when no
        mapping covers it. Remembered like resolve_cached(): the same VA asked again before
        the tree changes gets the same dict (callers keep it as it is)."""
        cache = self._resolutions
        try:
            return cache[va]
        except KeyError:
            pass
        r = self.resolve_cached(va)
        if r is None:
            out = None
        else:
            o = r.obj
            out = {"handle": o.handle, "class": o.hclass, "class_name": o.class_name,
                   "offset": r.offset, "size": o.size, "memory": o.location, "cpu": r.cpu_addr,
                   "via": r.how}
        if len(cache) >= 65536:
            cache.clear()
        cache[va] = out
        return out

    # -- feeding ------------------------------------------------------------------------
    def feed(self, name, a, p, info, pid, rec):
        """One successful ioctl of this process, decoded (ObjectTree.feed_ioctl)."""
        handler = getattr(self, name, None)
        if handler is not None:
            if name not in _KEEP_RESOLVED:
                self._forget()
            handler(a, p, info, pid, rec)

    def _on_check_version_str(self, a, p, info, pid, rec):
        ver = a.get("versionString")
        if isinstance(ver, (bytes, bytearray)):
            text = bytes(ver).split(b"\0", 1)[0].decode("ascii", "replace")
            if text:
                self.owner.branch = branch_of(text)

    def _new(self, handle, hclass, parent, client, params, pid):
        """A new object; hclass None: one whose class the capture does not say (imported)."""
        if hclass is None:
            name = "class ?"
        else:
            name = class_name(hclass, self.branch)[0] or f"{hclass:#06x}"
        obj = RmObject(handle, hclass, name, parent, client, dict(params or {}),
                       pid=pid, role=ROLE.get(hclass, "other"))
        self.objects[handle] = obj
        self._position.setdefault(handle, len(self._position))
        self._children.setdefault(parent, {})[handle] = None
        return obj

    def _cpu_mapping(self, obj, m):
        obj.cpu_mappings.append(m)
        self._cpu_index.add(obj.handle, m["addr"], m["length"])
        if m["fd"] is not None:
            self._fd_mapped[obj.handle] = None

    def _gpu_mapping(self, obj, m):
        obj.gpu_mappings.append(m)
        self._gpu_index.add(obj.handle, m["va"], m["length"])

    def _in_order(self, handles):
        """The current objects of these handles, in self.objects order."""
        objects, pos = self.objects, self._position
        return [objects[h] for h in sorted(handles, key=pos.__getitem__) if h in objects]

    def _on_rm_alloc(self, a, p, info, pid, rec):
        handle, hclass = a.get("hObjectNew"), a.get("hClass")
        if handle is None or hclass is None:
            return
        obj = self._new(handle, hclass, a.get("hObjectParent", 0), a.get("hRoot", 0), p, pid)
        if obj.role == "memory":
            if "size" in p:
                obj.size = p["size"]
            obj.location = memory_location(hclass, p.get("attr"))
            if p.get("address"):
                self._cpu_mapping(obj, {"addr": p["address"], "length": obj.size, "offset": 0,
                                        "fd": None, "via": "alloc params address"})
        elif obj.role == "virtual":
            obj.location = "virtual"
            if p.get("limit"):
                base = p.get("offset", 0)
                obj.size = p["limit"] - base + 1
                self.virtual_ranges.append((base, p["limit"], handle))
        elif obj.role == "channel" and "gpFifoOffset" in p:
            userd = (p.get("hUserdMemory") or [None])[0]
            uoff = (p.get("userdOffset") or [None])[0]
            eng, eng_from = p.get("engineType"), "channel alloc params"
            group = self.objects.get(obj.parent)
            if not eng and group is not None and group.params.get("engineType"):
                eng, eng_from = group.params["engineType"], f"channel group {group.handle:#x}"
            self.channels[handle] = Channel(
                handle, hclass, obj.class_name, obj.parent, gpfifo_va=p.get("gpFifoOffset"),
                entries=p.get("gpFifoEntries"), userd_memory=userd or p.get("hObjectBuffer"),
                userd_offset=uoff, engine=NV2080_ENGINE_TYPE.get(eng, eng), engine_from=eng_from,
                context_share=p.get("hContextShare"))

    _on_rm_alloc_object = _on_rm_alloc

    def _on_rm_alloc_memory(self, a, p, info, pid, rec):
        handle, hclass = a.get("hObjectNew"), a.get("hClass")
        if handle is None or hclass is None:
            return
        obj = self._new(handle, hclass, a.get("hObjectParent", 0), a.get("hRoot", 0), {}, pid)
        if a.get("limit") is not None:
            obj.size = a["limit"] + 1
        obj.location = memory_location(hclass)
        obj.params = {"pMemory": a.get("pMemory"), "limit": a.get("limit"), "flags": a.get("flags")}
        if a.get("pMemory"):
            self._cpu_mapping(obj, {"addr": a["pMemory"], "length": obj.size, "offset": 0,
                                    "fd": None, "via": "OS descriptor (user memory)"})

    def _on_rm_free(self, a, p, info, pid, rec):
        handle = a.get("hObjectOld")
        if handle is None:
            return
        todo = [handle]
        while todo:
            h = todo.pop()
            obj = self.objects.get(h)
            if obj is None or obj.freed:
                continue
            obj.freed = True
            if h in self.channels:
                self.channels[h].freed = True
            todo.extend(o.handle for o in self._in_order(self._children.get(h, ()))
                        if o.parent == h and o.handle != h)

    def _on_rm_map_memory(self, a, p, info, pid, rec):
        fd = a.get("fd")
        self._pending_mmap.setdefault((pid, fd), []).append(
            (a.get("hMemory"), a.get("offset", 0), a.get("length", 0), a.get("pLinearAddress")))

    def _on_rm_unmap_memory(self, a, p, info, pid, rec):
        obj = self.objects.get(a.get("hMemory"))
        addr = a.get("pLinearAddress")
        if obj is not None:
            obj.cpu_mappings = [m for m in obj.cpu_mappings if m["addr"] != addr]

    def _on_rm_map_memory_dma(self, a, p, info, pid, rec):
        obj = self.objects.get(a.get("hMemory"))
        if obj is None or a.get("dmaOffset") is None:
            return
        self._gpu_mapping(obj, {"va": a["dmaOffset"], "length": a.get("length") or obj.size or 0,
                                "offset": a.get("offset", 0),
                                "via": f"RM_MAP_MEMORY_DMA in {a.get('hDma', 0):#x}"})

    def _on_rm_unmap_memory_dma(self, a, p, info, pid, rec):
        obj = self.objects.get(a.get("hMemory"))
        if obj is not None:
            obj.gpu_mappings = [m for m in obj.gpu_mappings if m["va"] != a.get("dmaOffset")]

    def _on_rm_control(self, a, p, info, pid, rec):
        if info.control == WORK_SUBMIT_TOKEN:
            ch = self.channels.get(a.get("hObject"))
            token = info.params_after.get("workSubmitToken")
            if ch is not None and token is not None:
                ch.token = token
                ch.runlist = bits(token, 16, 16)      # the token is runlist << 16 | channel id
        elif info.control == IMPORT_OBJECTS_FROM_FD:
            self._import_objects(a, info.params_after, pid)

    def _import_objects(self, a, p, pid):
        """NV0000_CTRL_CMD_OS_UNIX_IMPORT_OBJECTS_FROM_FD: objects[i] is a new object under
        hParent when objectTypes[i] (OUT) is not NONE."""
        handles, types = p.get("objects") or [], p.get("objectTypes") or []
        n = min(p.get("numObjects") or 0, len(handles), len(types))
        for handle, kind in zip(handles[:n], types[:n]):
            if not handle or not kind:
                continue
            obj = self._new(handle, None, p.get("hParent", 0), a.get("hClient", 0),
                            {"fd": p.get("fd"), "index": p.get("index"),
                             "objectType": IMPORT_TYPE.get(kind, kind)}, pid)
            obj.role, obj.location = "memory", IMPORT_LOCATION.get(kind)
            obj.class_name = f"imported {IMPORT_TYPE.get(kind, kind)}"

    def _on_rm_dup_object(self, a, p, info, pid, rec):
        """NVOS55: hObjectSrc (of client hClientSrc) duped under hParent as hObject."""
        handle = a.get("hObject")
        if handle is None:
            return
        src = self.objects.get(a.get("hObjectSrc"))
        if src is not None and src.freed:
            src = None
        obj = self._new(handle, src.hclass if src else None, a.get("hParent", 0),
                        a.get("hClient", 0), {"hClientSrc": a.get("hClientSrc"),
                                              "hObjectSrc": a.get("hObjectSrc")}, pid)
        if src is not None:
            obj.role, obj.size, obj.location = src.role, src.size, src.location
        else:
            obj.class_name = "duped (source not in this process)"

    def _on_uvm_map_external_allocation(self, a, p, info, pid, rec):
        obj = self.objects.get(a.get("hMemory"))
        if obj is None:
            self.notes.append(f"UVM map of unknown memory {a.get('hMemory', 0):#x}")
            return
        self._gpu_mapping(obj, {"va": a.get("base"), "length": a.get("length"),
                                "offset": a.get("offset", 0), "via": "UVM_MAP_EXTERNAL_ALLOCATION"})
        self._uvm.setdefault(a.get("base"), {})[obj.handle] = obj

    def _on_uvm_free(self, a, p, info, pid, rec):
        base = a.get("base")
        for obj in self._uvm.pop(base, {}).values():
            obj.gpu_mappings = [m for m in obj.gpu_mappings
                                if not (m["via"] == "UVM_MAP_EXTERNAL_ALLOCATION" and m["va"] == base)]

    def feed_mmap(self, addr, length, fd, path, offset, pid=None):
        queue = self._pending_mmap.get((pid, fd))
        if not queue:
            self.unmatched_mmaps.append({"addr": addr, "length": length, "fd": fd,
                                         "path": path, "offset": offset, "pid": pid})
            return None
        hmem, moff, mlen, _cookie = queue.pop(0)
        obj = self.objects.get(hmem)
        if obj is None:
            return None
        self._forget()
        self._cpu_mapping(obj, {"addr": addr, "length": length, "offset": moff, "fd": fd,
                                "via": "RM_MAP_MEMORY + mmap"})
        return obj

    def feed_munmap(self, addr, length, pid=None):
        end = addr + length
        for obj in self._in_order(self._fd_mapped):
            if obj.pid is not None and pid is not None and obj.pid != pid:
                continue
            kept = [m for m in obj.cpu_mappings
                    if m["fd"] is None or not (m["addr"] < end and addr < m["addr"] + (m["length"] or 0))]
            if len(kept) != len(obj.cpu_mappings):
                self._forget()
                obj.cpu_mappings = kept
                if all(m["fd"] is None for m in kept):
                    del self._fd_mapped[obj.handle]

    # -- queries ------------------------------------------------------------------------
    def _describe(self, obj, off, how):
        cpu = next((m for m in obj.cpu_mappings if m.get("fd") is not None or m["via"]), None)
        cpu_text = f"CPU mapping {cpu['addr']:#x}" if cpu else "no CPU mapping"
        size = f"size {obj.size:#x}" if obj.size is not None else "size ?"
        return (f"offset {off:#x} in memory object {obj.handle:#x} ({obj.class_name}, {size}, "
                f"{obj.location or 'location ?'}, {cpu_text})" + (f" [{how}]" if how else ""))

    def resolve(self, va):
        """Where GPU VA `va` lands, as data: a Resolved, or None when no mapping covers it.

        GPU mappings (UVM_MAP_EXTERNAL_ALLOCATION, RM_MAP_MEMORY_DMA) are searched first; a
        CPU mapping at the same address is accepted only as a fallback and says so (`how`).
        `cpu_addr` is where the bytes are visible to the process (None without a CPU mapping).
        """
        for obj in self._live_near(self._gpu_index, va):
            for m in obj.gpu_mappings:
                if m["va"] is not None and m["va"] <= va < m["va"] + (m["length"] or 0):
                    off = va - m["va"] + (m["offset"] or 0)
                    return Resolved(obj, off, m["via"], self._cpu_addr(obj, off))
        for obj in self._live_near(self._cpu_index, va):
            for m in obj.cpu_mappings:
                if m["addr"] <= va < m["addr"] + (m["length"] or 0):
                    off = va - m["addr"] + (m["offset"] or 0)
                    return Resolved(obj, off, "matched by CPU VA (GPU VA == CPU VA assumed)", va)
        return None

    def _live_near(self, index, va):
        """The objects not freed of index.near(va), in self.objects order; the freed ones
        found are pruned from the index there."""
        objs = self._in_order(index.near(va))
        dead = [o.handle for o in objs if o.freed]
        if not dead:
            return objs
        index.prune(va, dead)
        return [o for o in objs if not o.freed]

    @staticmethod
    def _cpu_addr(obj, off):
        for m in obj.cpu_mappings:
            moff = m["offset"] or 0
            if moff <= off < moff + (m["length"] or 0):
                return m["addr"] + off - moff
        return None

    def resolve_va(self, va):
        """Where GPU VA `va` lands: memory object and offset, or None when unknown.
        Remembered until the tree changes (a training loop's launches pass the same
        pointers step after step)."""
        return _remembered(self._described, va, self._resolve_va)

    def _resolve_va(self, va):
        r = self.resolve_cached(va)
        if r is not None:
            how = "" if r.how.startswith(("UVM_", "RM_MAP")) else r.how
            return self._describe(r.obj, r.offset, how)
        for base, limit, h in self.virtual_ranges:
            if base <= va <= limit:
                obj = self.objects.get(h)
                if obj is not None and not obj.freed:
                    return (f"offset {va - base:#x} in virtual range {h:#x} ({obj.class_name}); "
                            "no physical memory mapping seen")
        return None

    def describe_object(self, handle):
        """One line naming an RM object: handle, class name and number, size and memory
        location when known (what the report's "NVIDIA mappings" list shows per mapping)."""
        obj = self.objects.get(handle)
        if obj is None:
            return f"{handle:#x} (not allocated in this capture)"
        text = f"{obj.handle:#x} {obj.class_name}" + (
            f" (class {obj.hclass:#x})" if obj.hclass is not None else "")
        if obj.size is not None:
            text += f" size {obj.size:#x}"
        if obj.location and obj.location != "virtual":
            text += f" {obj.location}"
        return text

    def children(self, handle):
        return [o for o in self._in_order(self._children.get(handle, ()))
                if o.parent == handle and o.handle != handle]

    def to_json(self):
        return {"branch": self.branch,
                "objects": [o.to_json() for o in self.objects.values()],
                "channels": [c.to_json() for c in self.channels.values()],
                "unmatched_mmaps": self.unmatched_mmaps, "notes": self.notes}

    def to_text(self):
        lines = [f"RM objects (driver branch {self.branch}):"]
        roots = [o for o in self.objects.values() if o.parent not in self.objects or o.parent == o.handle]

        def line(o, depth):
            bits_ = [f"{'  ' * depth}{o.handle:#x} {o.class_name}"]
            if o.size is not None:
                bits_.append(f"size {o.size:#x}")
            if o.location:
                bits_.append(o.location)
            for m in o.cpu_mappings:
                bits_.append(f"cpu {m['addr']:#x}+{(m['length'] or 0):#x}")
            for m in o.gpu_mappings:
                bits_.append(f"gpu {m['va']:#x}+{(m['length'] or 0):#x}")
            if o.freed:
                bits_.append("(freed)")
            lines.append(" ".join(bits_))
            for c in self.children(o.handle):
                line(c, depth + 1)
        for r in roots:
            line(r, 1)
        if self.channels:
            lines.append("Channels:")
            for c in self.channels.values():
                tok = f"{c.token:#x}" if c.token is not None else "?"
                rl = f"{c.runlist:#x}" if c.runlist is not None else "?"
                gp = f"{c.gpfifo_va:#x}" if c.gpfifo_va is not None else "?"
                ud = (f"{c.userd_memory:#x}+{c.userd_offset:#x}"
                      if c.userd_memory is not None and c.userd_offset is not None else "?")
                lines.append(f"  {c.handle:#x} {c.class_name} token {tok} runlist {rl} (token>>16, "
                             f"inferred) gpfifo {gp} entries {c.entries} userd {ud} engine {c.engine}"
                             + (f" (from {c.engine_from})" if c.engine_from else "")
                             + (" (freed)" if c.freed else ""))
        return "\n".join(lines)


def _remembered(cache, va, work):
    """cache[va], or work(va) remembered there (at most 65,536 addresses, whatever a capture
    holds); the tree clears the caches when it changes (ObjectTree._forget)."""
    try:
        return cache[va]
    except KeyError:
        pass
    if len(cache) >= 65536:
        cache.clear()
    r = cache[va] = work(va)
    return r


class ObjectTree:
    """The RM object tree of a capture: one ProcessTree per process, in the order each first
    fed it. Records are routed by pid (feed_*); lookups name the process: view(pid) is its
    tree. A capture of one process is that tree, so its views, text and JSON are the tree's
    own. Without a pid, several processes answer together: lists and counts hold every
    process's objects, a handle is found only where one process alone holds it, and a VA is
    resolved by the first process that maps it."""

    def __init__(self, branch="580"):
        self.branch = branch_of(branch) or "580"
        self.unmatched_mmaps = []
        self.notes = []
        self.gpus = GpuMap()            # which GPU each process's devices and channels are
        self.processes = {}             # pid -> ProcessTree
        self._empty = ProcessTree(self)  # what a process that made no object sees (never fed)
        self.generation = 0             # records fed so far: a memo of resolve_va's answers
                                        # holds while it stands (attribute.py _args)

    def process(self, pid):
        """The tree of process `pid`, made on its first record."""
        tree = self.processes.get(pid)
        if tree is None:
            tree = self.processes[pid] = ProcessTree(self)
        return tree

    def view(self, pid=None):
        """The tree that answers for process `pid` (an empty one when it made no object).
        Without a pid: the only process's tree, an empty one when none fed the tree, and
        this ObjectTree when several did (it answers for all of them, as the class says)."""
        trees = self.processes
        if pid is not None:
            return trees.get(pid, self._empty)
        if len(trees) <= 1:
            return next(iter(trees.values()), self._empty)
        return self

    # -- feeding ------------------------------------------------------------------------
    def feed_ioctl(self, rec, pid=None):
        self.generation += 1
        _, b = _decode(rec, self.branch)
        info = b.info
        if info.failed or not info.escape:
            return
        esc = info.escape.replace(" (via XFER)", "")
        a = {**info.args_before, **info.args_after}
        p = info.params_after or info.params_before
        self.gpus.feed(rec, info, a, {**info.params_before, **info.params_after}, pid)
        self.process(pid).feed("_on_" + esc.replace("NV_ESC_", "").lower(), a, p, info, pid,
                               rec)

    def feed_mmap(self, addr, length, fd, path, offset, pid=None):
        self.generation += 1
        tree = self.processes.get(pid)
        if tree is None:        # no RM_MAP_MEMORY in that process: nothing is pending
            self.unmatched_mmaps.append({"addr": addr, "length": length, "fd": fd,
                                         "path": path, "offset": offset, "pid": pid})
            return None
        return tree.feed_mmap(addr, length, fd, path, offset, pid=pid)

    def feed_munmap(self, addr, length, pid=None):
        self.generation += 1
        for key in dict.fromkeys((pid, None)):  # (objects fed with no pid: any process's)
            tree = self.processes.get(key)
            if tree is not None:
                tree.feed_munmap(addr, length, pid=pid)

    def _forget(self):
        for tree in self.processes.values():
            tree._forget()

    # -- queries: pid= names the process (see the class docstring) ------------------------
    @property
    def objects(self):
        v = self.view()
        return v.objects if v is not self else \
            _Merged([t.objects for t in self.processes.values()])

    @property
    def channels(self):
        v = self.view()
        return v.channels if v is not self else \
            _Merged([t.channels for t in self.processes.values()])

    @property
    def virtual_ranges(self):
        v = self.view()
        if v is not self:
            return v.virtual_ranges
        return [r for t in self.processes.values() for r in t.virtual_ranges]

    @property
    def launch_memo(self):
        v = self.view()
        return v.launch_memo if v is not self else {}

    def _ask(self, method, arg, pid):
        v = self.view(pid)
        if v is not self:
            return getattr(v, method)(arg)
        for t in self.processes.values():
            r = getattr(t, method)(arg)
            if r is not None:
                return r
        return None

    def resolve(self, va, pid=None):
        return self._ask("resolve", va, pid)

    def resolve_cached(self, va, pid=None):
        return self._ask("resolve_cached", va, pid)

    def resolution(self, va, pid=None):
        return self._ask("resolution", va, pid)

    def resolve_va(self, va, pid=None):
        return self._ask("resolve_va", va, pid)

    def describe_object(self, handle, pid=None):
        v = self.view(pid)
        if v is self:
            held = [t for t in self.processes.values() if handle in t.objects]
            v = held[0] if len(held) == 1 else self._empty
        return v.describe_object(handle)

    def children(self, handle, pid=None):
        v = self.view(pid)
        if v is not self:
            return v.children(handle)
        return [c for t in self.processes.values() for c in t.children(handle)]

    def to_json(self):
        v = self.view()
        if v is not self:
            return v.to_json()
        return {"branch": self.branch,
                "objects": [o.to_json() for t in self.processes.values()
                            for o in t.objects.values()],
                "channels": [dict(c.to_json(), pid=pid) for pid, t in self.processes.items()
                             for c in t.channels.values()],
                "unmatched_mmaps": self.unmatched_mmaps, "notes": self.notes}

    def to_text(self):
        v = self.view()
        if v is not self:
            return v.to_text()
        parts = []
        for pid, t in self.processes.items():
            head, _, rest = t.to_text().partition("\n")
            parts.append(f"{head[:-1]}, process {pid}:" + ("\n" + rest if rest else ""))
        return "\n".join(parts)


class _Merged:
    """Several processes' handle -> object dicts read as one (ObjectTree.objects and .channels
    of a capture of several processes): values(), items() and len() hold every process's, in
    order; get(), [] and `in` find a handle only where one process alone holds it (the same
    handle in two processes names no one object)."""

    def __init__(self, maps):
        self._maps = maps

    def _holders(self, key):
        return [m for m in self._maps if key in m]

    def get(self, key, default=None):
        held = self._holders(key)
        return held[0][key] if len(held) == 1 else default

    def __getitem__(self, key):
        held = self._holders(key)
        if len(held) != 1:
            raise KeyError(key)
        return held[0][key]

    def __contains__(self, key):
        return len(self._holders(key)) == 1

    def __iter__(self):
        return (k for m in self._maps for k in m)

    def __len__(self):
        return sum(len(m) for m in self._maps)

    def __bool__(self):
        return any(self._maps)

    def values(self):
        return [v for m in self._maps for v in m.values()]

    def items(self):
        return [kv for m in self._maps for kv in m.items()]
