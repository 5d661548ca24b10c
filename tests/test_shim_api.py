"""The shim's CUDA driver API brackets, on a fake libcuda (tests/c/fakecuda.c, synthetic,
no GPU) driven by tests/c/apiprog.c the three ways real programs reach the driver:
cuGetProcAddress_v2 on a dlopen'd libcuda, dlsym on its handle, dlsym(RTLD_DEFAULT).

Every recorded field is compared with what the program passed (its JSON) and with the
answers the fake library is written to give.
"""
import json
import os
import struct
import subprocess

import pytest

from decoders.capture.reader import read_capture
from decoders.capture.writer import append_end, create_capture
from decoders.cuda.calls import ApiCalls
from tests.test_shim import CC, ROOT, shim  # noqa: F401  (the session-built shim fixture)

pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler")


@pytest.fixture(scope="module")
def apibin(tmp_path_factory):
    d = tmp_path_factory.mktemp("api")
    c = ROOT / "tests/c"
    # -Bsymbolic: the library's own references bind inside it, as libcuda's do.
    subprocess.run([CC, "-O1", "-shared", "-fPIC", "-Wl,-Bsymbolic", "-o", str(d / "libcuda.so.1"),
                    str(c / "fakecuda.c")], check=True)
    subprocess.run([CC, "-O1", "-shared", "-fPIC", "-o", str(d / "libnext.so"), str(c / "libnext.c"),
                    "-ldl"], check=True)
    subprocess.run([CC, "-O1", "-o", str(d / "apiprog"), str(c / "apiprog.c"), f"-L{d}", "-lnext",
                    "-ldl", f"-Wl,-rpath,{d}"], check=True)
    return d


def _run(shim, d, mode, name):  # noqa: F811
    cap, out = d / f"{name}.tlc", d / f"{name}.json"
    env = dict(os.environ, LD_LIBRARY_PATH=str(d))
    if shim is not None:
        create_capture(cap, {"argv": ["apiprog"], "synthetic": True})
        env.update(LD_PRELOAD=str(shim), TRACE_LAUNCH_CAPTURE=str(cap), TRACE_LAUNCH_MODE=mode,
                   TRACE_LAUNCH_DEVDIR=str(d / "nodev"))
    proc = subprocess.run([str(d / "apiprog"), str(out)], env=env, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    truth = json.loads(out.read_text())
    if shim is None:
        return truth, None
    append_end(cap, proc.returncode)
    reader, recs = read_capture(cap)
    assert reader.problems == []
    api = ApiCalls()
    api.calls = []      # every call in entry order (ApiCalls itself keeps none)
    for r in recs:
        if r.type == "API_ENTER":
            api.calls.append(api.enter(r))
        elif r.type == "API_EXIT":
            api.exit(r)
    return truth, api


@pytest.fixture(scope="module")
def runs(shim, apibin):  # noqa: F811
    return {"native": _run(None, apibin, None, "native"),
            "full": _run(shim, apibin, "full", "full"),
            "ioctl": _run(shim, apibin, "ioctl", "ioctl")}


IGNORE = ("params_ptr", "kparams_ptr", "extra_ptr", "cfg_ptr", "fatbin_ptr", "elf_ptr",
          "host_ptr", "launch_from", "direct_from", "tmap_ptr", "tmap_seen")


def test_program_sees_the_same_results(runs):
    """Results, handles, what the library received: identical with and without the shim."""
    native = {k: v for k, v in runs["native"][0].items() if k not in IGNORE}
    for mode in ("full", "ioctl"):
        got = {k: v for k, v in runs[mode][0].items() if k not in IGNORE}
        assert got == native, mode


def test_symbols_the_program_sees(runs):
    native, full, ioctl = runs["native"][0], runs["full"][0], runs["ioctl"][0]
    assert native["launch_from"] == native["direct_from"] == "libcuda.so.1"
    # dlsym(RTLD_DEFAULT) of a name only a RTLD_LOCAL libcuda defines: NULL, shim or not
    assert native["default_from"] == full["default_from"] == ioctl["default_from"] == "none"
    # ioctl-only tracing hands out libcuda's own functions; full tracing, the brackets
    assert ioctl["launch_from"] == ioctl["direct_from"] == "libcuda.so.1"
    assert full["launch_from"] == full["direct_from"] == "libtracelaunch.so"
    # dlsym(RTLD_NEXT) from another interposer still resolves past that interposer
    assert native["next_ok"] == full["next_ok"] == ioctl["next_ok"] == 1


def test_unknown_variant_passes_through_and_is_noted(runs, shim, apibin):  # noqa: F811
    """cuGetProcAddress answering a function no slot names (here the fake's cuMemsetD8_v9)
    hands the program that very function: called once, not bracketed; a NOTE names it."""
    for mode in ("native", "full", "ioctl"):
        assert runs[mode][0]["variant_calls"] == 1
        assert runs[mode][0]["variant_from"] == "libcuda.so.1"
    assert [c.name for c in runs["full"][1].calls].count("cuMemsetD8_v2") == 1
    _, recs = read_capture(apibin / "full.tlc")
    notes = [bytes(r.body.text).decode() for r in recs if r.type == "NOTE"]
    assert notes == ["cuGetProcAddress cuMemsetD8 answered a function the shim does not bracket "
                     "(cudaVersion 12000, flags 2)"]


def test_ioctl_mode_records_no_api_calls(runs):
    assert runs["ioctl"][1].calls == []


def test_every_call_recorded_once_and_paired(runs):
    truth, api = runs["full"]
    names = [c.name for c in api.calls]
    assert names == ["cuModuleLoadData", "cuModuleGetFunction", "cuModuleGetFunction",
                     "cuMemAlloc_v2", "cuLaunchKernel", "cuLaunchKernel_ptsz", "cuLaunchKernel",
                     "cuLaunchKernelEx", "cuLaunchKernel", "cuLaunchKernel",
                     "cuModuleGetFunction", "cuLaunchKernel", "cuLaunchKernel",
                     "cuLibraryLoadData", "cuModuleLoadData", "cuMemcpyHtoD_v2", "cuMemsetD8_v2",
                     "cuTensorMapEncodeTiled", "cuTensorMapReplaceAddress"]
    assert all(c.complete for c in api.calls) and api.unfinished == []
    assert [c.result for c in api.calls] == [0] * 12 + [400] + [0] * 6
    assert api.calls[12].result_name == "CUDA_ERROR_INVALID_HANDLE"
    assert len({c.call for c in api.calls}) == len(api.calls)
    assert all(c.t_start <= c.t_end for c in api.calls)


def test_outputs_read_at_exit(runs):
    truth, api = runs["full"]
    c = api.calls
    assert c[0].out == truth["mod"] and c[1].out == truth["f"] and c[2].out == truth["f0"]
    assert c[3].out == truth["d"] and c[13].out == truth["lib"] and c[14].out == truth["mod2"]
    assert (c[1].string, c[2].string) == ("vadd", "empty")
    assert c[3].args == {"dptr": c[3].args["dptr"], "bytesize": 4096}


def test_launch_arguments_and_bytes(runs):
    truth, api = runs["full"]
    k = api.calls[4]
    assert k.args["kernelParams"] == truth["params_ptr"] and k.args["hStream"] == 0x55
    assert k.launch_config["grid"] == [4096, 1, 1] and k.launch_config["block"] == [256, 1, 1]
    # the fake's layout for 0x1000: 8 B @0, 8 B @8, 4 B @16; values from apiprog.c
    assert [(p["offset"], p["size"]) for p in k.params] == [(0, 8), (8, 8), (16, 4)]
    assert k.param_bytes == struct.pack("<QQi", 0x1111222233334444, 0x5555666677778888, 1048576)
    # a CUkernel handle: cuKernelGetParamInfo answered (4 B @0, 8 B @8), padding left zero
    p = api.calls[5]
    assert "LAYOUT_FROM_KERNEL" in p.sections["PARAM_LAYOUT"]["flags"]
    assert p.param_bytes == struct.pack("<i4xd", 7, 2.5)
    assert p.launch_config["grid"] == [2, 3, 4] and p.launch_config["block"] == [8, 4, 2]
    assert p.launch_config["shared_memory_bytes"] == 128
    assert api.calls[6].params == [] and api.calls[6].param_bytes is None
    # `extra` buffer, layout unknown for 0x9999: the buffer's bytes, nothing guessed
    e = api.calls[8]
    assert "LAYOUT_UNKNOWN" in e.sections["PARAM_LAYOUT"]["flags"]
    assert e.param_bytes == bytes(range(0x40, 0x40 + 24))


def test_layout_of_a_handle_handed_out_again(runs):
    """Shim invariant I17: cuModuleGetFunction hands out 0x1000 again for another function
    (tests/c/fakecuda.c "vadd_reloaded": two ints): the next launch's layout is the new one,
    not the one cached for the first function at that address (XLA reuses addresses)."""
    _, api = runs["full"]
    last = api.calls[11]
    assert last.args["f"] == 0x1000
    assert [(p["offset"], p["size"]) for p in last.params] == [(0, 4), (4, 4)]
    assert last.param_bytes == struct.pack("<ii", 11, -22)


def test_unknown_layout_keeps_pointer_windows(runs):
    """Neither param-info call knows 0x8888: the shim keeps the kernelParams pointers it can
    read and 64 bytes behind each, for the decoder to cut with the cubin's layout."""
    truth, api = runs["full"]
    w = api.calls[9]
    assert "LAYOUT_UNKNOWN" in w.sections["PARAM_LAYOUT"]["flags"] and w.params == []
    windows = w.param_windows
    assert windows[0][:8] == struct.pack("<q", -5) and windows[1][:2] == struct.pack("<H", 0xBEEF)
    assert all(len(x) == 64 for x in windows)


def test_launch_ex_config_and_cluster(runs):
    truth, api = runs["full"]
    x = api.calls[7]
    assert x.args["config"] == truth["cfg_ptr"]
    cfg = x.launch_config
    assert cfg["grid"] == [8, 1, 1] and cfg["block"] == [32, 1, 1]
    assert cfg["shared_memory_bytes"] == 1024 and cfg["stream"] == 0x77
    assert cfg["cluster"] == [2, 1, 1]
    assert [a["name"] for a in cfg["attributes"]] == ["CLUSTER_DIMENSION"]


def test_images_copied_to_their_size(runs):
    """Fatbin sized by its header (16 + 48), ELF by its section table (128 + 2*64), PTX by
    its NUL; the 0xEE bytes after each image are never copied."""
    truth, api = runs["full"]
    fat = api.calls[0].image
    assert len(fat) == 64 and fat[16:] == bytes(range(16, 64))
    assert struct.unpack_from("<IHHQ", fat) == (0xBA55ED50, 1, 16, 48)
    elf = api.calls[13].image
    assert len(elf) == 256 and elf[:4] == b"\x7fELF"
    assert elf[64:] == bytes((i * 7) & 0xFF for i in range(64, 256))
    assert api.calls[14].image.decode() == truth["ptx"]


def test_plain_arguments(runs):
    truth, api = runs["full"]
    cp, ms = api.calls[15], api.calls[16]
    assert cp.args == {"dstDevice": truth["d"], "srcHost": truth["host_ptr"], "ByteCount": 512}
    assert ms.args["dstDevice"] == truth["d"] and ms.args["N"] == 4096
    assert ms.args["value"] & 0xFF == 0xAB


def test_tensor_map_calls_forward_twelve_words_and_keep_the_map(runs):
    """cuTensorMapEncodeTiled takes 12 argument words (the shim forwarded 11 before session
    44): the fake library saw each one the program passed, the record holds them, the four
    arrays at entry and the 128-byte map at exit; cuTensorMapReplaceAddress's record holds
    the map before (entry) and after (exit)."""
    truth, api = runs["full"]
    assert truth["tmap_results"] == [0, 0]
    enc, rep = api.calls[17], api.calls[18]
    assert (enc.name, rep.name) == ("cuTensorMapEncodeTiled", "cuTensorMapReplaceAddress")
    seen = truth["tmap_seen"]
    assert seen[0] == truth["tmap_ptr"] and seen[1:4] == [10, 3, truth["d"]]
    assert seen[8:] == [0, 3, 2, 1]         # interleave, swizzle, l2Promotion, oobFill
    assert [enc.args[k] & 0xFFFFFFFF for k in ("tensorDataType", "tensorRank", "interleave",
                                                "swizzle", "l2Promotion", "oobFill")] == \
        [10, 3, 0, 3, 2, 1]
    assert enc.args["globalAddress"] == truth["d"] and enc.args["tensorMap"] == truth["tmap_ptr"]
    inputs = enc.sections["TENSOR_MAP_INPUTS"]["data"]
    assert inputs == struct.pack("<3Q2Q3I3I", 4096, 1024, 7, 8192, 8192 * 1024, 64, 32, 1, 1, 1, 1)
    assert enc.out_sections["TENSOR_MAP"]["data"].hex() == truth["tmap_made"]
    assert rep.sections["TENSOR_MAP"]["data"].hex() == truth["tmap_made"]
    assert rep.out_sections["TENSOR_MAP"]["data"].hex() == truth["tmap_replaced"]
    assert rep.args == {"tensorMap": truth["tmap_ptr"], "globalAddress": truth["d"] + 0x1000}
