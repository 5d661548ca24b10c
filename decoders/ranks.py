"""Which process is which rank, on which GPU (issue 26: multi-GPU jobs under torchrun, MPI,
srun).

Two sources, both in the capture:
* the rank: the PROCESS_ENV record the shim writes after a process's PROCESS_START (the
  launcher's variables, decoders/capture/format.py TL_ENV_NAMES), read by `rank_fields`;
* the GPUs: the process's own ioctls, fed one by one to `GpuMap` (from
  decoders/rm/objects.py ObjectTree.feed_ioctl, which already has each decoded):
  - NV_ESC_CARD_INFO lists every GPU: gpu_id, PCI domain/bus/slot/function, device minor
    (/dev/nvidiaN);
  - NV0000_CTRL_CMD_GPU_GET_ID_INFO(_V2) ties a gpu_id to RM's deviceInstance (not the minor:
    on captures/multi-gpu gpu_id 6 is /dev/nvidia0 and deviceInstance 1);
  - RM_ALLOC of NV01_DEVICE_0 (0x0080) gives a device handle its deviceInstance
    (NV0080_ALLOC_PARAMETERS.deviceId); NV20_SUBDEVICE_0 (0x2080) sits under a device;
  - NV2080_CTRL_CMD_GPU_GET_GID_INFO on a subdevice returns the GPU's UUID (16 binary bytes
    with flags FORMAT_BINARY, else its "GPU-..." text); NV0000 GET_UUID_INFO /
    GET_UUID_FROM_GPU_ID, NV0000 GPU_GET_PCI_INFO and NV2080 GPU_GET_ID say the same by
    gpu_id; UVM_REGISTER_GPU names the UUIDs the process registered with UVM;
  - every object's parent, so a channel (its submissions carry hClient and hChannel) finds
    its device, and so its GPU.
RM handles are the client's: two processes may use the same numbers, so everything here is
keyed by pid. The GPU `index` is the device minor number (/dev/nvidiaN), which is also
nvidia-smi's index where minors follow PCI order (they did on every machine recorded).
"""
from construct import Array

from decoders.escapes.structs import nv_ioctl_card_info_t
from decoders.rm.classes import ROLE

# Rank fields and the variables that give each, first found wins (torchrun, Open MPI, srun).
ENV_FIELDS = (
    ("rank", ("RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID")),
    ("local_rank", ("LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID")),
    ("world_size", ("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS")),
    ("local_world_size", ("LOCAL_WORLD_SIZE",)),
    ("node_rank", ("GROUP_RANK",)),
)

CLASS_DEVICE, CLASS_SUBDEVICE = 0x0080, 0x2080
CTRL_GET_ID_INFO, CTRL_GET_ID_INFO_V2 = 0x00000202, 0x00000205
CTRL_GPU_GET_PCI_INFO = 0x0000021B
CTRL_GET_UUID_INFO, CTRL_GET_UUID_FROM_GPU_ID = 0x00000274, 0x00000275
CTRL_OS_GET_GPU_INFO = 0x00003D07
CTRL_GID_INFO, CTRL_2080_GET_ID = 0x2080014A, 0x20800142
GID_FLAGS_FORMAT_BINARY = 0x2       # NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT_BINARY (1:0 = 2)
MAX_DEPTH = 16                      # parent links followed from a channel to its device


def parse_env(raw):
    """{NAME: VALUE} of a PROCESS_ENV body's entries (NUL-terminated NAME=VALUE)."""
    out = {}
    for item in bytes(raw).split(b"\0"):
        name, eq, value = item.partition(b"=")
        if eq and name:
            out[name.decode("ascii", "replace")] = value.decode("utf-8", "replace")
    return out


def rank_fields(env):
    """{rank, local_rank, world_size, local_world_size, node_rank}: ints where the launcher's
    variables give them, None otherwise."""
    out = {}
    for field, names in ENV_FIELDS:
        value = None
        for name in names:
            try:
                value = int(env[name])
                break
            except (KeyError, ValueError):
                continue
        out[field] = value
    return out


def uuid_text(b):
    h = bytes(b).hex()
    return f"GPU-{h[0:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def pci_bus_id(domain, bus, slot, function=0):
    return f"{domain:04x}:{bus:02x}:{slot:02x}.{function:x}"


class GpuMap:
    """Fed every ioctl in capture order (`feed`); answers which GPUs a process used and
    which GPU a channel of a process belongs to. Only successful calls are fed."""

    def __init__(self):
        self.cards = {}          # gpu_id -> {"pci_bus_id", "minor", "pci_device_id"}
        self.instance_of = {}    # gpu_id -> RM deviceInstance
        self.uuid_of = {}        # gpu_id -> "GPU-..."
        self.parent = {}         # (pid, handle) -> (hclass, parent handle)
        self.device_instance = {}    # (pid, hDevice) -> deviceInstance
        self.sub_uuid = {}       # (pid, hSubdevice) -> "GPU-..."
        self.sub_gpu_id = {}     # (pid, hSubdevice) -> gpu_id
        self.uvm_uuids = {}      # pid -> [uuid, ...] registered with UVM
        self.channels = {}       # pid -> [channel handles allocated], in order

    # -- feeding ------------------------------------------------------------------------
    def feed(self, rec, info, a, p, pid):
        esc = (info.escape or "").replace(" (via XFER)", "")
        if esc == "NV_ESC_CARD_INFO":
            self._card_info(rec)
        elif esc in ("NV_ESC_RM_ALLOC", "NV_ESC_RM_ALLOC_OBJECT", "NV_ESC_RM_ALLOC_MEMORY"):
            h, cls = a.get("hObjectNew"), a.get("hClass")
            if h is not None and cls is not None:
                self.parent[(pid, h)] = (cls, a.get("hObjectParent"))
                if ROLE.get(cls) == "channel":
                    self.channels.setdefault(pid, []).append(h)
                if cls == CLASS_DEVICE and "deviceId" in p:
                    self.device_instance[(pid, h)] = p["deviceId"]
        elif esc == "NV_ESC_RM_CONTROL" and info.control is not None:
            self._control(info.control, a.get("hObject"), info.params_after, pid)
        elif esc == "UVM_REGISTER_GPU":
            u = a.get("gpu_uuid")
            if isinstance(u, (bytes, bytearray)) and len(u) == 16:
                lst = self.uvm_uuids.setdefault(pid, [])
                if uuid_text(u) not in lst:
                    lst.append(uuid_text(u))

    def _card_info(self, rec):
        after = bytes(getattr(rec, "after", b"") or b"")
        size = nv_ioctl_card_info_t.sizeof()
        if not after or len(after) % size:
            return
        for e in Array(len(after) // size, nv_ioctl_card_info_t).parse(after):
            if not e.valid:
                continue
            pci = e.pci_info
            self.cards[e.gpu_id] = {
                "pci_bus_id": pci_bus_id(pci.domain, pci.bus, pci.slot, pci.function),
                "minor": e.minor_number, "pci_device_id": pci.device_id}

    def _control(self, cmd, hobject, p, pid):
        if not p:
            return
        if cmd in (CTRL_GET_ID_INFO, CTRL_GET_ID_INFO_V2) and "gpuId" in p:
            self.instance_of[p["gpuId"]] = p.get("deviceInstance")
        elif cmd == CTRL_GID_INFO and p.get("length"):
            data = bytes(p.get("data") or b"")[:p["length"]]
            if p.get("flags", 0) & GID_FLAGS_FORMAT_BINARY and len(data) == 16:
                self.sub_uuid[(pid, hobject)] = uuid_text(data)
            elif data.startswith(b"GPU-"):
                self.sub_uuid[(pid, hobject)] = data.split(b"\0", 1)[0].decode("ascii", "replace")
        elif cmd == CTRL_2080_GET_ID and "gpuId" in p:
            self.sub_gpu_id[(pid, hobject)] = p["gpuId"]
        elif cmd in (CTRL_GET_UUID_INFO, CTRL_GET_UUID_FROM_GPU_ID) and "gpuId" in p:
            data = bytes(p.get("gpuUuid") or b"")
            if p.get("flags", 0) & GID_FLAGS_FORMAT_BINARY:
                if any(data[:16]):
                    self.uuid_of[p["gpuId"]] = uuid_text(data[:16])
            elif data.startswith(b"GPU-"):
                self.uuid_of[p["gpuId"]] = data.split(b"\0", 1)[0].decode("ascii", "replace")
        elif cmd == CTRL_GPU_GET_PCI_INFO and "gpuId" in p and p.get("gpuId") not in self.cards:
            self.cards[p["gpuId"]] = {"pci_bus_id": pci_bus_id(p.get("domain", 0), p.get("bus", 0),
                                                               p.get("slot", 0)),
                                      "minor": None, "pci_device_id": None}
        elif cmd == CTRL_OS_GET_GPU_INFO and "gpuId" in p and p["gpuId"] in self.cards:
            self.cards[p["gpuId"]].setdefault("minor", p.get("minorNum"))

    # -- queries ------------------------------------------------------------------------
    def device_of(self, pid, handle):
        """The NV01_DEVICE_0 handle `handle` of process `pid` descends from, or None."""
        for _ in range(MAX_DEPTH):
            row = self.parent.get((pid, handle))
            if row is None:
                return None
            if row[0] == CLASS_DEVICE:
                return handle
            handle = row[1]
        return None

    def gpu(self, pid, hdevice):
        """What is known of the GPU behind device handle `hdevice` of `pid`: index (device
        minor), pci_bus_id, uuid, gpu_id, device_instance (None where not in the capture)."""
        inst = self.device_instance.get((pid, hdevice))
        gpu_id = next((g for g, i in self.instance_of.items() if i == inst), None) \
            if inst is not None else None
        uuid = None
        for (p_, h), (cls, parent) in self.parent.items():
            if p_ == pid and cls == CLASS_SUBDEVICE and parent == hdevice:
                uuid = uuid or self.sub_uuid.get((pid, h))
                gpu_id = gpu_id if gpu_id is not None else self.sub_gpu_id.get((pid, h))
        if uuid is None and gpu_id is not None:
            uuid = self.uuid_of.get(gpu_id)
        card = self.cards.get(gpu_id, {}) if gpu_id is not None else {}
        return {"index": card.get("minor"), "pci_bus_id": card.get("pci_bus_id"), "uuid": uuid,
                "gpu_id": gpu_id, "device_instance": inst}

    def channel_gpu(self, pid, hchannel):
        """The GPU (as `gpu`) a channel of `pid` runs on, or None."""
        dev = self.device_of(pid, hchannel)
        return self.gpu(pid, dev) if dev is not None else None

    def process_gpus(self, pid):
        """The GPUs process `pid` allocated a device for, in allocation order, each with
        `channels`: how many GPU channels the process created on it (a device with none is
        one it opened for peer access or a query)."""
        channels = self.channels.get(pid, ())
        out = []
        for (p_, h), inst in self.device_instance.items():
            if p_ != pid:
                continue
            g = self.gpu(pid, h)
            g["channels"] = sum(1 for c in channels if self.device_of(pid, c) == h)
            if not any(o["device_instance"] == g["device_instance"] for o in out):
                out.append(g)
        return out


def processes_meta(model):
    """meta.processes (docs/json.md): each process's record dict, in pid order, plus its rank
    fields (null where no launcher variable gives them) and `gpus`: the GPUs it allocated a
    device for, those its channels run on first, each {index, pci_bus_id, uuid, gpu_id,
    device_instance, channels}."""
    gm = getattr(model.objects, "gpus", None)
    out = []
    for pid in sorted(model.processes):
        p = model.processes[pid]
        gpus = gm.process_gpus(pid) if gm is not None else []
        gpus.sort(key=lambda g: -g["channels"])
        out.append(dict(p, **rank_fields(p.get("env") or {}), gpus=gpus))
    return out


def rank_label(proc):
    """'rank 1 (GPU 1, 0000:00:07.0) pid 1775' (the GPU its channels are on; 'GPUs 0, 1'
    for a process with channels on several), or 'pid 1775 (...)' without a rank."""
    gpus = [g for g in proc.get("gpus", ()) if g.get("channels")] or list(proc.get("gpus", ()))
    idx = lambda g: "?" if g.get("index") is None else str(g["index"])  # noqa: E731
    where = ""
    if len(gpus) == 1:
        g = gpus[0]
        where = f" (GPU {idx(g)}" + (f", {g['pci_bus_id']}" if g.get("pci_bus_id") else "") + ")"
    elif gpus:
        where = " (GPUs " + ", ".join(idx(g) for g in gpus) + ")"
    if proc.get("rank") is not None:
        return f"rank {proc['rank']}{where} pid {proc['pid']}"
    return f"pid {proc['pid']}{where}"
