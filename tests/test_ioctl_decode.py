"""decode_ioctl / summarize on hand-built argument bytes (synthetic records, not captures)."""
import struct
from construct import Container

from decoders.escapes.structs import nv_ioctl_rm_api_version_t
from decoders.ioctl import coverage, decode_ioctl, detect_branch, escape_name, summarize, to_text
from decoders.rm import allocparams as AP
from decoders.rm import ctrlparams as CP
from decoders.rm import ctrlparams_ext as CPX
from decoders.rm import nvos
from decoders.uvm import ioctls as U
from ioctl_helpers import CTL_PATH, DEV_PATH, UVM_PATH, buf, nv_request, rec

ZERO_DESC = dict(base=0, size=0, addressSpace=0, cacheAttrib=0)


def channel_params(gpfifo=0x200600000, userd=0x5C000017, uoff=0x2000, engine=1):
    return nvos.NV_CHANNEL_ALLOC_PARAMS.build(dict(
        hObjectError=0x5C000014, hObjectBuffer=0, gpFifoOffset=gpfifo, gpFifoEntries=1024, flags=0,
        hContextShare=0x5C000015, hVASpace=0, hUserdMemory=[userd] + [0] * 7,
        userdOffset=[uoff] + [0] * 7, engineType=engine, cid=0, subDeviceId=0, hObjectEccError=0,
        instanceMem=ZERO_DESC, userdMem=ZERO_DESC, ramfcMem=ZERO_DESC, mthdbufMem=ZERO_DESC,
        hPhysChannelGroup=0, internalFlags=0, errorNotifierMem=ZERO_DESC,
        eccErrorNotifierMem=ZERO_DESC, ProcessID=0, SubProcessID=0, encryptIv=[0] * 3,
        decryptIv=[0] * 3, hmacNonce=[0] * 8, tpcConfigID=0))


def alloc_rec(hclass, handle, parent, params=b"", status=0, client=0x5C000001, size=48):
    st = nvos.NVOS64_PARAMETERS if size == 48 else nvos.NVOS21_PARAMETERS
    fields = dict(hRoot=client, hObjectParent=parent, hObjectNew=handle, hClass=hclass,
                  pAllocParms=0x7F0000001000 if params else 0, paramsSize=len(params), status=status)
    if size == 48:
        fields.update(pRightsRequested=0, flags=0)
    args = st.build(fields)
    bufs = [buf(2, params)] if params else []
    return rec(nv_request(0x2B, size), args, args, buffers=bufs)


def control_rec(cmd, hobject, before, after=None, status=0, client=0x5C000001):
    fields = dict(hClient=client, hObject=hobject, cmd=cmd, flags=0, params=0x7F0000002000,
                  paramsSize=len(before), status=0)
    args_before = nvos.NVOS54_PARAMETERS.build(fields)
    fields["status"] = status
    args_after = nvos.NVOS54_PARAMETERS.build(fields)
    return rec(nv_request(0x2A, 32), args_before, args_after, buffers=[buf(1, before, after)])


def test_channel_alloc_summary_matches_issue_example():
    r = alloc_rec(0xC86F, 0x5C00001C, 0x5C000012, channel_params())
    line = summarize(r)
    assert line.startswith("RM_ALLOC HOPPER_CHANNEL_GPFIFO_A 0x5c00001c under 0x5c000012: "
                           "gpFifoOffset=0x200600000 entries=1024 userd=0x5c000017+0x2000")
    node = decode_ioctl(r)
    assert node.find("ioctl.class").display == "HOPPER_CHANNEL_GPFIFO_A"
    assert node.find("ioctl.params.in.gpFifoOffset").raw == 0x200600000
    assert node.find("ioctl.params.in.engineType").display == "GRAPHICS"
    assert node.find("ioctl.fd").display == "3 /dev/nvidiactl"
    assert node.find("ioctl.status").display == "ret=0 NV_OK"


def test_nvos21_alloc_and_memory_params():
    p = AP.NV_MEMORY_ALLOCATION_PARAMS.build(dict(
        owner=0, type=0, flags=0, width=0, height=0, pitch=0, attr=1 << 25, attr2=0, format=0,
        comprCovg=0, zcullCovg=0, rangeLo=0, rangeHi=0, size=0x200000, alignment=0, offset=0,
        limit=0, address=0, ctagOffset=0, hVASpace=0, internalflags=0, tag=0, numaNode=0))
    r = alloc_rec(0x3E, 0x5C000020, 0x5C000002, p, size=32)
    node = decode_ioctl(r)
    assert "LOCATION=PCI" in node.find("ioctl.params.in.attr").display
    assert "size=0x200000 sysmem" in summarize(r)


def test_work_submit_token_outputs_after_arrow():
    t = nvos.NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN_PARAMS
    r = control_rec(0xC36F0108, 0x5C00001C, t.build(dict(workSubmitToken=0)),
                    t.build(dict(workSubmitToken=0xA)))
    node = decode_ioctl(r)
    assert node.find("ioctl.control").display == "NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN"
    assert node.find("ioctl.params.out.workSubmitToken").display == "0xa"
    assert summarize(r).endswith("=> workSubmitToken=0xa")
    text = to_text(node)
    assert "=>:" in text and "workSubmitToken=0xa" in text


def test_name_string_and_list_controls():
    p = CP.NV2080_CTRL_GPU_GET_NAME_STRING_PARAMS
    after = p.build(dict(gpuNameStringFlags=0, gpuNameString=b"NVIDIA H100 80GB HBM3".ljust(128, b"\0")))
    r = control_rec(0x20800110, 0x5C000003, p.build(dict(gpuNameStringFlags=0,
                                                          gpuNameString=bytes(128))), after)
    assert decode_ioctl(r).find("ioctl.params.out.gpuNameString").display == "'NVIDIA H100 80GB HBM3'"
    # GET_ENGINES_V2 with a list sized from paramsSize; count limits what is shown.
    body = (2).to_bytes(4, "little") + (1).to_bytes(4, "little") + (9).to_bytes(4, "little") + bytes(8)
    node = decode_ioctl(control_rec(0x20800170, 0x5C000003, body))
    assert node.find("ioctl.params.in.engineList").display == "[GRAPHICS, COPY0]"


def test_pointer_inside_params_of_an_old_capture_says_not_in_capture():
    """A record from a shim that did not follow pointers (no TL_IF_PTRS_FOLLOWED)."""
    p = CP.NV0080_CTRL_GPU_GET_CLASSLIST_PARAMS.build(dict(numClasses=80, classList=0x7F00DEAD0000))
    node = decode_ioctl(control_rec(0x00800201, 0x5C000002, p))
    assert node.find("ioctl.params.in.classList").display == "0x7f00dead0000"
    assert "not in this capture" in node.find("ioctl.params.classList").display


def _followed(cmd, hobject, params, pointees):
    """control_rec plus role-5 buffers {field offset: (before, after)} and the flag."""
    r = control_rec(cmd, hobject, params)
    for off, (before, after) in pointees.items():
        r.buffers.append(buf(5, before, after, field=off, addr=0x7F0000003000 + off))
    r.flags |= 0x8
    return r


def test_gr_get_info_list_followed_as_index_value_pairs():
    p = CP.NV2080_CTRL_GR_GET_INFO_PARAMS.build(dict(grInfoListSize=3, grInfoList=0x7F0000003008,
                                                     grRouteInfo=dict(flags=0, route=0)))
    before = struct.pack("<6I", 0x0C, 0, 0x14, 0, 0x1D, 0)
    after = struct.pack("<6I", 0x0C, 0x900, 0x14, 8, 0x1D, 132)
    node = decode_ioctl(_followed(0x20801201, 0x5C000003, p, {8: (before, after)}))
    ptr = node.find("ioctl.params.grInfoList")
    assert ptr.display.startswith("3 x 8 B at ")
    assert node.find("ioctl.params.grInfoList.out").display == (
        "SM_VERSION=0x900 LITTER_NUM_GPCS=8 GPU_CORE_COUNT=0x84")
    assert "not followed" not in to_text(node)
    assert "*grInfoList=[SM_VERSION=0x900 LITTER_NUM_GPCS=8 GPU_CORE_COUNT=0x84]" in node.display


def test_channel_list_followed_as_handles_and_bad_pointer_unreadable():
    p = CP.NV0080_CTRL_FIFO_GET_CHANNELLIST_PARAMS.build(
        dict(numChannels=2, pChannelHandleList=0x7F0000003008, pChannelList=0xDEAD0000))
    handles = struct.pack("<2I", 0x5C00001C, 0x5C000020)
    r = _followed(0x0080170D, 0x5C000002, p, {8: (handles, handles)})
    r.buffers.append(buf(5, None, None, flags=0, size=8, field=16, addr=0xDEAD0000))
    node = decode_ioctl(r)
    assert node.find("ioctl.params.pChannelHandleList.in").display == "[0x5c00001c, 0x5c000020]"
    assert "unreadable" in node.find("ioctl.params.pChannelList").display


def test_nonpublic_control_and_failed_status():
    r = control_rec(0x20808159, 0x5C000003, b"\x01\x02\x03\x04", status=0x56)
    node = decode_ioctl(r)
    assert node.note == "FAILED"
    assert "non-public" in summarize(r) and "NV_ERR_NOT_SUPPORTED" in summarize(r)
    assert node.find("ioctl.raw").note.startswith("params not declared; size 4")
    assert "01 02 03 04" in node.find("ioctl.raw").display


def test_errno_failure_flagged():
    args = nvos.NVOS00_PARAMETERS.build(dict(hRoot=1, hObjectParent=1, hObjectOld=2, status=0))
    r = rec(nv_request(0x29, 16), args, args, ret=-1, err=22)
    node = decode_ioctl(r)
    assert node.note == "FAILED" and "EINVAL" in node.find("ioctl.status").display
    assert summarize(r).startswith("RM_FREE 0x2 under 0x1 FAILED")


def test_unknown_escape_hexdump():
    r = rec(nv_request(0x44, 8), b"\xaa" * 8)
    node = decode_ioctl(r)
    assert node.find("ioctl.escape").display.startswith("NV_ESC_0x44_???")
    assert "aa aa" in node.find("ioctl.raw").display
    assert escape_name(nv_request(0x44, 8), "/dev/nvidiactl") == "NV_ESC_0x44_???"


def test_escape_names():
    assert escape_name(nv_request(0x2A, 32), b"/dev/nvidiactl") == "NV_ESC_RM_CONTROL"
    assert escape_name(0x30000001, b"/dev/nvidia-uvm") == "UVM_INITIALIZE"
    assert escape_name(0x49, "/dev/nvidia-uvm") == "UVM_CREATE_EXTERNAL_RANGE"
    assert escape_name(0xC9, "/dev/nvidia-uvm") == "UVM_0xc9_???"
    assert escape_name(nv_request(0xD7, 560), "/dev/nvidia0") == "NV_ESC_NUMA_INFO"


def test_xfer_cmd_decodes_inner_escape():
    inner = nvos.NVOS54_PARAMETERS.build(dict(hClient=1, hObject=2, cmd=0x20800110, flags=0,
                                              params=0x7F0000003000, paramsSize=132, status=0))
    xfer = nvos.nv_ioctl_xfer_t.build(dict(cmd=0x2A, size=32, ptr=0x7F0000004000))
    r = rec(nv_request(0xD3, 16), xfer, buffers=[buf(3, inner)])
    node = decode_ioctl(r)
    assert node.find("ioctl.escape").display == "NV_ESC_RM_CONTROL (via XFER)"
    assert node.find("ioctl.control").display == "NV2080_CTRL_CMD_GPU_GET_NAME_STRING"
    assert any("not captured" in n for n in node.find("ioctl.notes").display.split(";"))


def test_uvm_map_external_and_free_branch():
    p = nvos.UVM_MAP_EXTERNAL_ALLOCATION_PARAMS
    fields = dict(base=0x7FFF00000000, length=0x200000, offset=0,
                  perGpuAttributes=[dict(gpuUuid=bytes(16), gpuMappingType=0, gpuCachingType=0,
                                         gpuFormatType=0, gpuElementBits=0, gpuCompressionType=0)] * 256,
                  gpuAttributesCount=1, rmCtrlFd=3, hClient=0x5C000001, hMemory=0x5C000020,
                  rmStatus=0)
    r = rec(33, p.build(fields), path=UVM_PATH, fd=5)
    node = decode_ioctl(r)
    assert node.name == "UVM_MAP_EXTERNAL_ALLOCATION"
    assert node.find("ioctl.in.hMemory").raw == 0x5C000020
    free580 = U.UVM_FREE_PARAMS_580.build(dict(base=0x7FFF00000000, length=0x200000, rmStatus=0))
    n580 = decode_ioctl(rec(34, free580, path=UVM_PATH))
    assert n580.find("ioctl.in.length").raw == 0x200000
    n595 = decode_ioctl(rec(34, free580, path=UVM_PATH), branch="595")
    assert n595.find("ioctl.in.length") is None and "arg_size 24 != sizeof 16" in n595.find("ioctl.notes").display
    failed = U.UVM_FREE_PARAMS_580.build(dict(base=1, length=2, rmStatus=0x1F))
    nf = decode_ioctl(rec(34, failed, path=UVM_PATH))
    assert nf.note == "FAILED" and "NV_ERR_INVALID_ARGUMENT" in nf.find("ioctl.status").display


def test_uvm_unknown_size_flag():
    r = rec(80, b"", b"", path=UVM_PATH, flags=0x4, arg_size=0)
    node = decode_ioctl(r)
    assert node.name == "UVM_DISCARD"
    assert "no size" in node.find("ioctl.notes").display


def test_check_version_str_and_detect_branch():
    arg = nv_ioctl_rm_api_version_t.build(dict(cmd=ord("2"), reply=1,
                                               versionString=b"580.159.04".ljust(64, b"\0")))
    r = rec(nv_request(0xD2, 72), arg)
    node = decode_ioctl(r)
    assert node.find("ioctl.version").display == "580.159.04 (branch 580)"
    assert node.find("ioctl.in.cmd").display == "QUERY"
    assert node.find("ioctl.in.reply").display == "RECOGNIZED"
    assert detect_branch([r]) == "580"


def test_truncated_params_noted():
    p = channel_params()[:100]
    r = alloc_rec(0xC86F, 0x5C00001C, 0x5C000012, b"")
    r.buffers = [buf(2, p, flags=0x7)]
    node = decode_ioctl(r)
    assert node.find("ioctl.params.in.gpFifoOffset").raw == 0x200600000
    notes = node.find("ioctl.notes").display
    assert "truncated" in notes


def test_coverage_fractions():
    recs = [alloc_rec(0xC86F, 1, 2, channel_params()),
            control_rec(0x20808159, 3, b"\0" * 4),
            control_rec(0xC36F0108, 1, b"\0" * 4),
            rec(nv_request(0x44, 8), b"\0" * 8),
            rec(34, bytes(24), path=UVM_PATH)]
    cov = coverage(recs)
    assert cov["named"]["controls_public"] == 1.0       # the one public command is named
    assert cov["named"]["controls_not_public"] == 0.5   # 0x20808159: no public define
    assert cov["named"]["controls"] == 1.0
    assert cov["named"]["classes"] == 1.0
    assert cov["named"]["escapes"] == 0.75
    assert cov["named"]["uvm"] == 1.0
    assert 0 < cov["params_decoded"] < 1


def test_record_as_plain_dict_is_accepted():
    r = dict(rec(nv_request(0xC9, 4), (3).to_bytes(4, "little"), path=DEV_PATH))
    r["buffers"] = []
    assert summarize(Container(r)).startswith("REGISTER_FD: ctl_fd=3")


def test_repeated_decode_of_one_body_is_remembered():
    """synthetic: the session decodes each ioctl body twice in a row (summary, object tree);
    the second decode of the same body object is the first's result, and it equals a
    fresh decode. Another body (or branch) is decoded afresh."""
    from decoders import ioctl as I
    a = alloc_rec(0xC86F, 0x5C00001C, 0x5C000012, channel_params())
    b = alloc_rec(0xC86F, 0x5C00001D, 0x5C000012, channel_params(userd=0x5C000018))
    first = I._decode(a)
    assert I._decode(a) is first
    fresh = I._decode_new(a, "580")
    assert to_text(fresh[0]) == to_text(first[0]) and fresh[0].display == first[0].display
    other = I._decode(b)
    assert other is not first and summarize(b) == other[0].display != first[0].display
    assert summarize(a) == first[0].display
    assert I._decode(a, "570") is not I._decode(a, "580")


def test_rusd_request_data_poll_is_public_and_decoded():
    """NV00DE_CTRL_CMD_REQUEST_DATA_POLL: ctrl00de.h writes it (0xde0001U), which the TSV
    extraction missed; JAX issues it (seen in a real JAX capture on the H100, not committed)."""
    node = decode_ioctl(control_rec(0x00DE0001, 0xA55A0040, struct.pack("<Q", 0x20)))
    assert node.find("ioctl.control").display == "NV00DE_CTRL_CMD_REQUEST_DATA_POLL"
    assert node.find("ioctl.params.in.polledDataMask").display == "PCI"


def test_grmgr_query_union_named_by_query_type():
    """GRMGR_GET_GR_FS_INFO: queryData is a union; the member follows queryType (values as
    captures/builtin-vadd answered them on the H100: logical GPC 5 is chiplet GPC 6)."""
    q = dict(queryType=2, reserved=bytes(2), status=0, queryData=[5, 6, 0])
    rest = dict(queryType=0, reserved=bytes(2), status=0, queryData=[0, 0, 0])
    p = CPX.NV2080_CTRL_GRMGR_GET_GR_FS_INFO_PARAMS.build(
        dict(numQueries=1, reserved=bytes(6), queries=[q] + [rest] * 95))
    node = decode_ioctl(control_rec(0x20803801, 0x5C000003, p))
    entry = node.find("ioctl.params.in.queries").children[0]
    assert entry.display == "{queryType=CHIPLET_GPC_MAP status=NV_OK queryData=gpcId=5 chipletGpcMap=6}"


def test_rusd_and_binapi_allocs_decoded_and_sized_for_the_shim():
    """RM_USER_SHARED_DATA, NV2081_BINAPI and the SMC session allocs (cl00de.h, cl2081.h,
    clc639.h, clc640.h at 580.142): libcuda passes paramsSize 0, so the shim copies the class
    size from shim/abi.h TL_ALLOC_SIZES, generated from these structs."""
    from pathlib import Path
    abi = (Path(__file__).resolve().parent.parent / "shim" / "abi.h").read_text()
    for cls, size in ((0x00DE, 8), (0x2081, 4), (0xC639, 8), (0xC640, 8)):
        assert AP.alloc_params_struct(cls).sizeof() == size
        assert f"{{ 0x{cls:x}u, {size}u }}" in abi
    node = decode_ioctl(alloc_rec(0x00DE, 0x5C000008, 0x5C000003, struct.pack("<Q", 0x5)))
    assert node.find("ioctl.params.in.polledDataMask").display == "CLOCK|MEMORY"
