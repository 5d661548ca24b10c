"""ObjectTree on a hand-built CUDA-like sequence (synthetic records, not a capture)."""
import json

from decoders.escapes.structs import nv_ioctl_rm_api_version_t
from decoders.rm import allocparams as AP
from decoders.rm import nvos
from decoders.rm.objects import ObjectTree
from ioctl_helpers import DEV_PATH, UVM_PATH, buf, nv_request, rec
from test_ioctl_decode import alloc_rec, channel_params, control_rec

CLIENT, DEVICE, SUBDEV, MEM, VAS, GROUP, CHAN, SYSMEM = (
    0x5C000001, 0x5C000002, 0x5C000003, 0x5C000017, 0x5C000010, 0x5C000012, 0x5C00001C, 0x5C000020)


def mem_params(size, attr):
    return AP.NV_MEMORY_ALLOCATION_PARAMS.build(dict(
        owner=0, type=0, flags=0, width=0, height=0, pitch=0, attr=attr, attr2=0, format=0,
        comprCovg=0, zcullCovg=0, rangeLo=0, rangeHi=0, size=size, alignment=0, offset=0,
        limit=size - 1, address=0, ctagOffset=0, hVASpace=0, internalflags=0, tag=0, numaNode=0))


def uvm_map(base, length, hmemory=SYSMEM):
    """UVM_MAP_EXTERNAL_ALLOCATION params: `length` bytes of `hmemory` at `base`."""
    return nvos.UVM_MAP_EXTERNAL_ALLOCATION_PARAMS.build(dict(
        base=base, length=length, offset=0,
        perGpuAttributes=[dict(gpuUuid=bytes(16), gpuMappingType=0, gpuCachingType=0,
                               gpuFormatType=0, gpuElementBits=0, gpuCompressionType=0)] * 256,
        gpuAttributesCount=1, rmCtrlFd=3, hClient=CLIENT, hMemory=hmemory, rmStatus=0))


def build_tree():
    t = ObjectTree()
    ver = nv_ioctl_rm_api_version_t.build(dict(cmd=0, reply=1, versionString=b"580.159.04".ljust(64, b"\0")))
    t.feed_ioctl(rec(nv_request(0xD2, 72), ver), pid=100)
    t.feed_ioctl(alloc_rec(0x41, CLIENT, 0, AP.NV0000_ALLOC_PARAMETERS.build(dict(
        hClient=CLIENT, processID=100, processName=b"vadd".ljust(100, b"\0"), pOsPidInfo=0))), pid=100)
    t.feed_ioctl(alloc_rec(0x80, DEVICE, CLIENT), pid=100)
    t.feed_ioctl(alloc_rec(0x2080, SUBDEV, DEVICE), pid=100)
    t.feed_ioctl(alloc_rec(0x40, MEM, DEVICE, mem_params(0x200000, 0)), pid=100)
    # CPU mapping: RM_MAP_MEMORY with fd 7, then mmap of fd 7.
    m = nvos.nv_ioctl_nvos33_parameters_with_fd.build(dict(params=dict(
        hClient=CLIENT, hDevice=DEVICE, hMemory=MEM, offset=0, length=0x200000,
        pLinearAddress=0, status=0, flags=0), fd=7))
    m_after = nvos.nv_ioctl_nvos33_parameters_with_fd.build(dict(params=dict(
        hClient=CLIENT, hDevice=DEVICE, hMemory=MEM, offset=0, length=0x200000,
        pLinearAddress=0x1000, status=0, flags=0), fd=7))
    t.feed_ioctl(rec(nv_request(0x4E, 56), m, m_after), pid=100)
    t.feed_mmap(0x7F1200000000, 0x200000, 7, "/dev/nvidia0", 0, pid=100)
    # GPU VA: RM_MAP_MEMORY_DMA returns dmaOffset.
    d = dict(hClient=CLIENT, hDevice=DEVICE, hDma=VAS, hMemory=MEM, offset=0, length=0x200000,
             flags=0, flags2=0, kindOverride=0, dmaOffset=0, status=0)
    d_after = dict(d, dmaOffset=0x200600000)
    t.feed_ioctl(rec(nv_request(0x57, 64), nvos.NVOS46_PARAMETERS.build(d),
                     nvos.NVOS46_PARAMETERS.build(d_after)), pid=100)
    t.feed_ioctl(alloc_rec(0xA06C, GROUP, DEVICE), pid=100)
    t.feed_ioctl(alloc_rec(0xC86F, CHAN, GROUP, channel_params(0x200600000, MEM, 0x2000)), pid=100)
    tok = nvos.NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN_PARAMS
    t.feed_ioctl(control_rec(0xC36F0108, CHAN, tok.build(dict(workSubmitToken=0)),
                             tok.build(dict(workSubmitToken=0x1000A))), pid=100)
    # Sysmem via UVM_MAP_EXTERNAL_ALLOCATION.
    t.feed_ioctl(alloc_rec(0x3E, SYSMEM, DEVICE, mem_params(0x10000, 1 << 25)), pid=100)
    t.feed_ioctl(rec(33, uvm_map(0x7FFF00000000, 0x10000), path=UVM_PATH), pid=100)
    return t


def test_objects_and_parents():
    t = build_tree()
    assert t.branch == "580"
    assert t.objects[CLIENT].class_name == "NV01_ROOT_CLIENT"
    assert t.objects[SUBDEV].parent == DEVICE
    assert t.objects[MEM].size == 0x200000 and t.objects[MEM].location == "vidmem"
    assert t.objects[SYSMEM].location == "sysmem"
    assert t.objects[CLIENT].params["processID"] == 100


def test_channel_record():
    ch = build_tree().channels[CHAN]
    assert ch.token == 0x1000A and ch.runlist == 0x1
    assert ch.gpfifo_va == 0x200600000 and ch.entries == 1024
    assert ch.userd_memory == MEM and ch.userd_offset == 0x2000
    assert ch.engine == "GRAPHICS" and ch.parent == GROUP


def test_resolve_va():
    t = build_tree()
    text = t.resolve_va(0x200602000)
    assert text.startswith(f"offset 0x2000 in memory object {MEM:#x} (NV01_MEMORY_LOCAL_USER, "
                           "size 0x200000, vidmem, CPU mapping 0x7f1200000000)")
    assert "offset 0x10 in memory object" in t.resolve_va(0x7FFF00000010)
    assert t.resolve_va(0x1234) is None


def test_munmap_and_free():
    t = build_tree()
    t.feed_munmap(0x7F1200000000, 0x200000, pid=100)
    assert not [m for m in t.objects[MEM].cpu_mappings if m["fd"] is not None]
    args = nvos.NVOS00_PARAMETERS.build(dict(hRoot=CLIENT, hObjectParent=CLIENT, hObjectOld=DEVICE,
                                             status=0))
    t.feed_ioctl(rec(nv_request(0x29, 16), args), pid=100)    # (the tree is per process)
    assert t.objects[DEVICE].freed and t.objects[MEM].freed and t.channels[CHAN].freed
    assert not t.objects[CLIENT].freed
    assert t.resolve_va(0x200602000) is None


def test_failed_alloc_is_ignored():
    t = ObjectTree()
    t.feed_ioctl(alloc_rec(0x80, DEVICE, CLIENT, status=0x1F))
    assert DEVICE not in t.objects


def test_text_and_json_views():
    t = build_tree()
    text = t.to_text()
    assert "HOPPER_CHANNEL_GPFIFO_A token 0x1000a" in text
    assert f"{SUBDEV:#x} NV20_SUBDEVICE_0" in text
    data = json.loads(json.dumps(t.to_json()))
    assert data["branch"] == "580" and len(data["channels"]) == 1
    assert any(o["handle"] == MEM and o["gpu_mappings"] for o in data["objects"])


def test_uvm_free_then_same_handle_reallocated_and_remapped():
    """captures/torch-small records 909-913 (PyTorch's caching allocator growing a block):
    UVM_FREE of the old base, RM_FREE of the memory, RM_ALLOC of a larger memory under the same
    handle, and a map of it at a new base. The tree keeps only the new mapping, on the new object."""
    from decoders.uvm.ioctls import UVM_FREE_PARAMS_580
    t = build_tree()
    t.feed_ioctl(rec(34, UVM_FREE_PARAMS_580.build(dict(base=0x7FFF00000000, length=0x10000, rmStatus=0)),
                     path=UVM_PATH), pid=100)
    assert not t.objects[SYSMEM].gpu_mappings
    assert t.resolve_va(0x7FFF00000010) is None
    t.feed_ioctl(rec(nv_request(0x29, 16), nvos.NVOS00_PARAMETERS.build(dict(
        hRoot=CLIENT, hObjectParent=DEVICE, hObjectOld=SYSMEM, status=0))), pid=100)
    assert t.objects[SYSMEM].freed
    t.feed_ioctl(alloc_rec(0x3E, SYSMEM, DEVICE, mem_params(0x20000, 1 << 25)), pid=100)
    assert not t.objects[SYSMEM].freed and t.objects[SYSMEM].size == 0x20000
    t.feed_ioctl(rec(33, uvm_map(0x7FFE00000000, 0x20000), path=UVM_PATH), pid=100)
    assert [m["va"] for m in t.objects[SYSMEM].gpu_mappings] == [0x7FFE00000000]
    assert "offset 0x1ff00 in memory object" in t.resolve_va(0x7FFE0001FF00)
    assert not t.notes


def test_two_processes_keep_their_own_objects():
    """Two processes allocate the same handles and map the same UVM base (the ranks of
    captures/ddp-2rank do): each keeps its own objects, mappings and channels."""
    from decoders.uvm.ioctls import UVM_FREE_PARAMS_580
    t = build_tree()                                    # process 100
    t.feed_ioctl(alloc_rec(0x80, DEVICE, CLIENT), pid=200)
    t.feed_ioctl(alloc_rec(0x3E, SYSMEM, DEVICE, mem_params(0x40000, 1 << 25)), pid=200)
    t.feed_ioctl(rec(33, uvm_map(0x7FFF00000000, 0x40000), path=UVM_PATH), pid=200)
    a, b = t.view(100), t.view(200)
    assert a.objects[SYSMEM].size == 0x10000 and b.objects[SYSMEM].size == 0x40000
    assert a.objects[SYSMEM].pid == 100 and b.objects[SYSMEM].pid == 200
    assert CHAN in a.channels and CHAN not in b.channels
    assert t.resolution(0x7FFF00020000, pid=100) is None            # past 100's 0x10000
    assert t.resolution(0x7FFF00020000, pid=200)["offset"] == 0x20000
    assert t.view(300).resolution(0x7FFF00000000) is None           # made no object
    # process 200's UVM_FREE of the same base leaves process 100's mapping
    t.feed_ioctl(rec(34, UVM_FREE_PARAMS_580.build(dict(base=0x7FFF00000000, length=0x40000,
                                                         rmStatus=0)), path=UVM_PATH), pid=200)
    assert a.objects[SYSMEM].gpu_mappings and not b.objects[SYSMEM].gpu_mappings
    # without a pid: every process's objects; a handle both hold names neither
    assert t.view() is t and len(t.objects) == len(a.objects) + len(b.objects)
    assert t.objects.get(SYSMEM) is None and t.objects.get(MEM) is a.objects[MEM]
    text = t.to_text()
    assert "process 100:" in text and "process 200:" in text
    assert {c.get("pid") for c in t.to_json()["channels"]} == {100}


IMPORT = 0x3D0C         # NV0000_CTRL_CMD_OS_UNIX_IMPORT_OBJECTS_FROM_FD


def _import_params(fd, parent, handles, types):
    from decoders.rm.ctrlparams_p2p import NV0000_CTRL_OS_UNIX_IMPORT_OBJECTS_FROM_FD_PARAMS as P
    pad = 128 - len(handles)
    return P.build(dict(fd=fd, hParent=parent, objects=list(handles) + [0] * pad,
                        objectTypes=list(types) + [0] * pad, numObjects=len(handles), index=0))


def test_imported_objects_are_memory_under_their_parent():
    """IMPORT_OBJECTS_FROM_FD dups another process's exported objects under hParent as
    objects[] (ctrl0000unix.h); objectTypes (OUT) says what each is, NONE: not imported
    (captures/ddp-2rank: NCCL's peer buffers, then UVM-mapped)."""
    t = build_tree()
    before = _import_params(69, DEVICE, [0x5C00027A, 0x5C00027D], [0, 0])
    after = _import_params(69, DEVICE, [0x5C00027A, 0x5C00027D], [1, 0])
    t.feed_ioctl(control_rec(IMPORT, CLIENT, before, after), pid=100)
    o = t.objects[0x5C00027A]
    assert (o.hclass, o.parent, o.client, o.role, o.location, o.class_name) == \
        (None, DEVICE, CLIENT, "memory", "vidmem", "imported VIDMEM")
    assert 0x5C00027D not in t.objects                      # objectTypes NONE: not imported
    t.feed_ioctl(rec(33, uvm_map(0x7F3A56000000, 0x200000, 0x5C00027A), path=UVM_PATH), pid=100)
    assert not t.notes
    r = t.resolution(0x7F3A56000040, pid=100)
    assert (r["handle"], r["class"], r["class_name"], r["memory"]) == \
        (0x5C00027A, None, "imported VIDMEM", "vidmem")
    assert t.describe_object(0x5C00027A) == "0x5c00027a imported VIDMEM vidmem"
    assert f"{0x5C00027A:#x} imported VIDMEM vidmem gpu 0x7f3a56000000+0x200000" in t.to_text()


def test_duped_object_takes_its_source_class():
    """NV_ESC_RM_DUP_OBJECT (NVOS55): hObjectSrc duped under hParent as hObject; the source
    in the same process gives the class, size and location, an unknown one gives none."""
    t = build_tree()
    dup = nvos.NVOS55_PARAMETERS.build(dict(hClient=CLIENT, hParent=DEVICE, hObject=0x5C000300,
                                           hClientSrc=CLIENT, hObjectSrc=SYSMEM, flags=0,
                                           status=0))
    t.feed_ioctl(rec(nv_request(0x34, 28), dup, dup), pid=100)
    o = t.objects[0x5C000300]
    assert (o.hclass, o.parent, o.size, o.location, o.role) == (0x3E, DEVICE, 0x10000, "sysmem",
                                                                 "memory")
    dup = nvos.NVOS55_PARAMETERS.build(dict(hClient=CLIENT, hParent=DEVICE, hObject=0x5C000301,
                                           hClientSrc=0xC1D00000, hObjectSrc=0x5C009999,
                                           flags=0, status=0))
    t.feed_ioctl(rec(nv_request(0x34, 28), dup, dup), pid=100)
    assert t.objects[0x5C000301].hclass is None
    assert t.describe_object(0x5C000301) == "0x5c000301 duped (source not in this process)"
