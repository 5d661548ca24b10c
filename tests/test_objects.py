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
    ua = nvos.UVM_MAP_EXTERNAL_ALLOCATION_PARAMS.build(dict(
        base=0x7FFF00000000, length=0x10000, offset=0,
        perGpuAttributes=[dict(gpuUuid=bytes(16), gpuMappingType=0, gpuCachingType=0,
                               gpuFormatType=0, gpuElementBits=0, gpuCompressionType=0)] * 256,
        gpuAttributesCount=1, rmCtrlFd=3, hClient=CLIENT, hMemory=SYSMEM, rmStatus=0))
    t.feed_ioctl(rec(33, ua, path=UVM_PATH), pid=100)
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
    ua = nvos.UVM_MAP_EXTERNAL_ALLOCATION_PARAMS.build(dict(
        base=0x7FFE00000000, length=0x20000, offset=0,
        perGpuAttributes=[dict(gpuUuid=bytes(16), gpuMappingType=0, gpuCachingType=0,
                               gpuFormatType=0, gpuElementBits=0, gpuCompressionType=0)] * 256,
        gpuAttributesCount=1, rmCtrlFd=3, hClient=CLIENT, hMemory=SYSMEM, rmStatus=0))
    t.feed_ioctl(rec(33, ua, path=UVM_PATH), pid=100)
    assert [m["va"] for m in t.objects[SYSMEM].gpu_mappings] == [0x7FFE00000000]
    assert "offset 0x1ff00 in memory object" in t.resolve_va(0x7FFE0001FF00)
    assert not t.notes
