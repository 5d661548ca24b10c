"""The multi-GPU tables of issue 26 (decoders/rm/ctrlparams_p2p.py, the NUMA and DMABUF escape
structs): sizes worked out by hand from the 580.142 headers, decodes of synthetic argument
bytes (synthetic records, not captures: no capture holds a peer or IPC call yet), and the
NUMA_INFO escape of captures/multi-gpu decoded field by field."""
import struct
from pathlib import Path

import pytest

from decoders.escapes import structs as S
from decoders.ioctl import coverage, decode_ioctl, summarize
from decoders.rm import allocparams as AP
from decoders.rm import ctrlparams as CP
from decoders.rm import ctrlparams_p2p as P2P
from decoders.rm.controls import control_info
from decoders.session import decode_capture
from ioctl_helpers import DEV_PATH, nv_request, rec
from tests.conftest import CAPTURES, capture_file
from test_ioctl_decode import alloc_rec, control_rec


@pytest.mark.parametrize("name", sorted(P2P.SIZES))
def test_sizes_from_the_headers(name):
    st = getattr(P2P, name)
    assert st.sizeof() == P2P.SIZES[name]
    assert len(st.build(st.parse(bytes(st.sizeof())))) == st.sizeof()


def test_every_declared_control_is_public_and_named_like_its_struct():
    for cmd, (name, st, hints) in P2P.CTRL_PARAMS_P2P.items():
        info = control_info(cmd, "580")
        assert info.public, hex(cmd)
        assert name.split("_")[0] == info.name.split("_")[0], (hex(cmd), name, info.name)
        assert CP.CTRL_PARAMS[cmd][1] is st
        assert name in P2P.SIZES


def test_escape_structs_sizes():
    assert S.nv_ioctl_numa_info_t.sizeof() == 560
    assert S.nv_ioctl_export_to_dma_buf_fd_t.sizeof() == 2608


def test_nv50_p2p_alloc_named_with_both_subdevices():
    p = P2P.NV503B_ALLOC_PARAMETERS.build(dict(
        hSubDevice=0x5C000003, hPeerSubDevice=0x5C00000C, subDevicePeerIdMask=0,
        peerSubDevicePeerIdMask=0, mailboxBar1Addr=0, mailboxTotalSize=0, flags=1,
        subDeviceEgmPeerIdMask=0, peerSubDeviceEgmPeerIdMask=0,
        l2pBar1P2PDmaInfo=dict(dma_address=2 ** 64 - 1, dma_size=0),
        p2lBar1P2PDmaInfo=dict(dma_address=2 ** 64 - 1, dma_size=0)))
    r = alloc_rec(0x503B, 0x5C000200, 0x5C000003, p)
    node = decode_ioctl(r)
    assert node.find("ioctl.class").display == "NV50_P2P"
    assert node.find("ioctl.params.in").display == "NV503B_ALLOC_PARAMETERS"
    assert node.find("ioctl.params.in.hPeerSubDevice").display == "0x5c00000c"
    assert node.find("ioctl.params.in.flags").display == "SPA"
    assert node.find("ioctl.params.in.l2pBar1P2PDmaInfo.dma_address").display == "0xffffffffffffffff"
    assert "hSubDevice=0x5c000003 hPeerSubDevice=0x5c00000c" in summarize(r)
    assert coverage([r])["params_decoded_public"] == 1.0


def test_fabric_memory_alloc_and_attach():
    p = P2P.NV00F8_ALLOCATION_PARAMETERS.build(dict(
        alignment=0x200000, allocSize=0x4000000, pageSize=0x200000, allocFlags=0x5,
        map=dict(offset=0, hVidMem=0, flags=0)))
    node = decode_ioctl(alloc_rec(0x00F8, 0x5C000300, 0x5C000002, p))
    assert node.find("ioctl.class").display == "NV_MEMORY_FABRIC"
    assert node.find("ioctl.params.in.allocFlags").display == "FLEXIBLE_FLA|FORCE_CONTIGUOUS"
    info = dict(hMemory=0x5C000301, offset=0, mapOffset=0, mapLength=0x4000000)
    zero = dict(hMemory=0, offset=0, mapOffset=0, mapLength=0)
    a = P2P.NV00F8_CTRL_ATTACH_MEM_PARAMS.build(dict(
        memInfos=[info] + [zero] * 63, numMemInfos=1, flags=0, numAttached=0))
    after = P2P.NV00F8_CTRL_ATTACH_MEM_PARAMS.build(dict(
        memInfos=[info] + [zero] * 63, numMemInfos=1, flags=0, numAttached=1))
    node = decode_ioctl(control_rec(0x00F80103, 0x5C000300, a, after))
    assert node.find("ioctl.control").display == "NV00F8_CTRL_CMD_ATTACH_MEM"
    assert node.find("ioctl.params.in.memInfos").children[0].display.startswith(
        "{hMemory=0x5c000301")
    assert len(node.find("ioctl.params.in.memInfos").children) == 1      # numMemInfos
    assert node.find("ioctl.params.out.numAttached").display == "1"


def test_p2p_caps_v2_flags_and_status():
    st = P2P.NV0000_CTRL_SYSTEM_GET_P2P_CAPS_V2_PARAMS
    ids = [6, 7] + [0] * 30
    before = st.build(dict(gpuIds=ids, gpuCount=2, p2pCaps=0, p2pOptimalReadCEs=0,
                           p2pOptimalWriteCEs=0, p2pCapsStatus=[0] * 9,
                           busPeerIds=[0] * 1024, busEgmPeerIds=[0] * 1024))
    peers = [0xFFFFFFFF, 0, 0, 0xFFFFFFFF] + [0] * 1020
    after = st.build(dict(gpuIds=ids, gpuCount=2, p2pCaps=0x4B, p2pOptimalReadCEs=0,
                          p2pOptimalWriteCEs=0, p2pCapsStatus=[0, 0, 5, 0, 0, 0, 0, 5, 5],
                          busPeerIds=peers, busEgmPeerIds=[0] * 1024))
    node = decode_ioctl(control_rec(0x0000012B, 0xC1D00034, before, after))
    assert node.find("ioctl.control").display == "NV0000_CTRL_CMD_SYSTEM_GET_P2P_CAPS_V2"
    assert node.find("ioctl.params.in.gpuIds").display == "[0x6, 0x7]"
    assert node.find("ioctl.params.out.p2pCaps").display == "WRITES|READS|NVLINK|PCI"
    assert node.find("ioctl.params.out.p2pCapsStatus").display.startswith(
        "[OK, OK, NOT_SUPPORTED")


def test_export_and_import_object_by_fd():
    obj = dict(type=1, hDevice=0x5C000002, hParent=0x5C000002, hObject=0x5C000040)
    e = P2P.NV0000_CTRL_OS_UNIX_EXPORT_OBJECT_TO_FD_PARAMS
    node = decode_ioctl(control_rec(0x00003D05, 0xC1D00034,
                                    e.build(dict(object=obj, fd=41, flags=0))))
    assert node.find("ioctl.control").display == "NV0000_CTRL_CMD_OS_UNIX_EXPORT_OBJECT_TO_FD"
    assert node.find("ioctl.params.in.object.type").display == "RM"
    assert node.find("ioctl.params.in.object.hObject").display == "0x5c000040"
    assert node.find("ioctl.params.in.fd").display == "41"
    i = P2P.NV0000_CTRL_OS_UNIX_IMPORT_OBJECTS_FROM_FD_PARAMS
    before = i.build(dict(fd=41, hParent=0x5C000002, objects=[0x5C000080] + [0] * 127,
                          objectTypes=[0] * 128, numObjects=1, index=0))
    after = i.build(dict(fd=41, hParent=0x5C000002, objects=[0x5C000080] + [0] * 127,
                         objectTypes=[1] + [0] * 127, numObjects=1, index=0))
    node = decode_ioctl(control_rec(0x00003D0C, 0xC1D00035, before, after))
    assert node.find("ioctl.params.out.objectTypes").display == "[VIDMEM]"
    g = P2P.NV0000_CTRL_OS_GET_GPU_INFO_PARAMS
    node = decode_ioctl(control_rec(0x00003D07, 0xC1D00034, g.build(dict(gpuId=7, minorNum=0)),
                                    g.build(dict(gpuId=7, minorNum=1))))
    assert node.find("ioctl.params.out.minorNum").display == "1"


def test_bus_set_p2p_mapping_uuid():
    st = P2P.NV2080_CTRL_BUS_SET_P2P_MAPPING_PARAMS
    uuid = bytes.fromhex("ebd58ac3a4cf424c838e0fd718c475d1")
    node = decode_ioctl(control_rec(0x2080182E, 0x5C000003, st.build(dict(
        connectionType=2, peerId=0, bEgmPeer=0, bSpaAccessOnly=0, bUseUuid=1, remoteGpuId=7,
        remoteGpuUuid=uuid))))
    assert node.find("ioctl.params.in.connectionType").display == "PCIE"
    assert node.find("ioctl.params.in.remoteGpuUuid").display == \
        "GPU-ebd58ac3-a4cf-424c-838e-0fd718c475d1"


def test_numa_info_escape_of_the_multi_gpu_capture():
    """captures/multi-gpu: libcuda asks each /dev/nvidiaN for its NUMA info; the H200s of that
    VM report no NUMA node (nid -1, status DISABLED) and a 1 GiB memory block size. Before
    issue 26 the 560 bytes were an opaque dump."""
    m = decode_capture(capture_file("multi-gpu"))
    numa = [i for i in m.ioctls if i["escape"] == "NV_ESC_NUMA_INFO"]
    assert [i["path"] for i in numa] == ["/dev/nvidia0", "/dev/nvidia1"]
    for i in numa:
        node = decode_ioctl(i["_body"])
        assert node.find("ioctl.out.nid").raw == -1
        assert node.find("ioctl.out.status").display == "DISABLED"
        assert node.find("ioctl.out.memblock_size").raw == 1 << 30
        assert node.find("ioctl.status").display == "ret=0"     # NUMA status is not an NV_STATUS
        assert "opaque" not in i["summary"]


def test_dmabuf_export_escape():
    st = S.nv_ioctl_export_to_dma_buf_fd_t
    b = st.build(dict(fd=-1, hClient=0xC1D00034, totalObjects=1, numObjects=1, index=0,
                      totalSize=0x200000, mappingType=1, bAllowMmap=0,
                      handles=[0x5C000040] + [0] * 127, offsets=[0] * 128,
                      sizes=[0x200000] + [0] * 127, status=0))
    node = decode_ioctl(rec(nv_request(0xD9, 2608), b, b, path=DEV_PATH))
    assert node.find("ioctl.escape").display == "NV_ESC_EXPORT_TO_DMABUF_FD"
    assert node.find("ioctl.in.mappingType").display == "FORCE_PCIE"
    assert node.find("ioctl.in.handles").display == "[0x5c000040]"


def test_the_shim_copies_the_new_classes_by_size():
    """libcuda passes paramsSize 0 for some allocs; the shim then copies the class size from
    shim/abi.h TL_ALLOC_SIZES, generated from these tables (python -m decoders.shimabi)."""
    abi = (Path(__file__).resolve().parent.parent / "shim" / "abi.h").read_text()
    for cls in (0x503B, 0x00E0, 0x00F8, 0x00F9, 0x00FB):
        size = AP.alloc_params_struct(cls).sizeof()
        assert f"{{ 0x{cls:x}u, {size}u }}" in abi
