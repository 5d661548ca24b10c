"""The report's first lines (issue 27): how the program ended as a shell shows it, every CUDA
API call that failed, with the launch before it, and the capture's problems; the "what"
column of "NVIDIA mappings"; no raw Python value in the text. Expectations come from the
captures' manifests (what the program and the shell saw on the H100) and from the raw
records read with struct.unpack, never from the decoder's earlier output."""
import io
import json
import re
import struct

import pytest

from conftest import ALL, SMALL, capture_bytes, capture_path, manifest, record_spans
from decoders.session import decode_capture
from tracer.report import render_json, render_text

RECORD_HEADER = 40
IOCTL, MMAP = 5, 6
OPEN = 3           # TL_REC_OPEN (docs/capture-format.md)
NV_IOCTL_MAGIC = 0x46
NV_ESC_RM_ALLOC_MEMORY, NV_ESC_RM_ALLOC, NV_ESC_RM_MAP_MEMORY = 0x27, 0x2B, 0x4E


def _report(name, **kw):
    model = decode_capture(capture_path(name))
    out = io.StringIO()
    render_text(model, out, launch_limit=200, **kw)
    return model, out.getvalue()


def _json(name):
    out = io.StringIO()
    render_json(decode_capture(capture_path(name)), out, all_fields=False)
    return json.loads(out.getvalue())


def _header(text):
    return text.split("\nshim notes\n")[0].split("\n\n")[0]


def _cuda_error_name(runtime_name):
    """cudaErrorIllegalAddress -> CUDA_ERROR_ILLEGAL_ADDRESS (the driver API's name of the
    same error, as cuda.h spells it)."""
    words = re.findall(r"[A-Z][a-z]+", runtime_name[len("cudaError"):])
    return "CUDA_ERROR_" + "_".join(w.upper() for w in words)


def test_kernel_fault_names_the_error_and_the_launch_before_it():
    """captures/kernel-fault: the program's cudaDeviceSynchronize got cudaErrorIllegalAddress
    (700) after its one launch of store_to (manifest); the program then exited 0."""
    truth = manifest("kernel-fault")["ground_truth"]
    want = _cuda_error_name(truth["sync_error_name"])
    assert want == "CUDA_ERROR_ILLEGAL_ADDRESS"
    launch = truth["launches"][0]
    _, text = _report("kernel-fault")
    head = _header(text)
    line = next(l for l in head.splitlines() if want in l)
    assert f"= {truth['sync_error']} {want}" in line and "cuCtxSynchronize" in line
    assert (f"{launch['kernel']} grid {'x'.join(map(str, launch['grid']))} block "
            f"{'x'.join(map(str, launch['block']))}") in line
    assert "  exit     0\n" in head and truth["native_exit"] == 0
    doc = _json("kernel-fault")
    (failed,) = doc["failed_calls"]
    assert (failed["result"], failed["result_name"]) == (truth["sync_error"], want)
    before = failed["launch_before"]
    assert (before["grid"], before["block"]) == (launch["grid"], launch["block"])
    assert before["kernel"].startswith(launch["kernel"] + "(")
    assert before["api_call"] == "cuLaunchKernel" and before["api_call_index"] < failed["index"]
    assert doc["stats"]["failed_api_calls"] == 1 and doc["exit"]["status"] == 0



def test_failed_calls_name_each_error_and_the_launch_before_it():
    """captures/failed-calls: two rounds of 40 vadd launches, 8 copies, then
    cuModuleGetFunction of a missing name and cuMemAlloc of twice the GPU's memory. The
    program kept each call's result and the launch it made last before it (manifest):
    the report gives the same result, and that launch (its grid, block and argument bytes)."""
    truth = manifest("failed-calls")["ground_truth"]
    assert truth["output_unchanged"] and truth["c_wrong"] == 0
    doc = _json("failed-calls")
    failed = doc["failed_calls"]
    assert [(f["name"], f["result"], f["result_name"]) for f in failed] == \
        [(t["call"], t["result"], t["result_name"]) for t in truth["failed"]]
    assert doc["stats"]["failed_api_calls"] == len(truth["failed"])
    kernels = [l for l in doc["launches"] if l.get("kernel")]
    assert len(kernels) == len(truth["launches"]) and all(l["verified"] for l in kernels)
    by_record = {l["record_index"]: l for l in kernels}
    for f, t in zip(failed, truth["failed"]):
        want, before = t["launch_before"], f["launch_before"]
        assert (before["kernel"], before["grid"], before["block"]) == \
            (want["kernel"], want["grid"], want["block"])
        assert before["api_call"] == "cuLaunchKernel" and before["api_call_index"] < f["index"]
        assert sum(1 for l in kernels if l["record_index"] < f["index"]) == t["launches_before"]
        args = by_record[before["record_index"]]["attribution"]["args"]
        assert "".join(a["hex"] for a in sorted(args, key=lambda a: a["offset"])) == \
            want["param_bytes"][:2 * (args[-1]["offset"] + args[-1]["size"])]


def test_sigkill_exit_as_the_shell_shows_it():
    """captures/sigkill: the program was killed by SIGKILL; the shell (and trace-launch)
    said 137 (manifest exit_status) where Python's wait gave -9 (native_exit)."""
    m = manifest("sigkill")
    assert m["ground_truth"]["native_exit"] == -9
    _, text = _report("sigkill")
    head = _header(text)
    assert f"  exit     {m['exit_status']} (killed by signal 9, SIGKILL)\n" in head
    assert "-9" not in head
    (pid,) = m["summary"]["pids"]
    assert re.search(rf"^  pid {pid}: .* exit {m['exit_status']} \(killed by signal 9", head, re.M)
    assert re.search(r"^  unfinished cuLaunchKernel .* never returned", head, re.M)
    doc = _json("sigkill")
    assert doc["exit"] == {"status": 137, "raw": -9, "signal": 9, "signal_name": "SIGKILL"}
    (proc,) = doc["meta"]["processes"]
    assert (proc["exit_status"], proc["exit_from"]) == (137, "END")


@pytest.mark.parametrize("name", SMALL)
def test_header_names_every_process_exit(name):
    """Each process of the manifest has one header line with a shell-style status or the
    words saying why it is unknown; the run's status is the manifest's exit_status. Where
    QUIET_FOLDED or more processes opened no NVIDIA device file (no OPEN record of theirs,
    read with struct) and ended with 0 or returned from main (XLA's ptxas children in the
    jax captures), those are counted on one line by program instead, and only those."""
    from tracer.report import QUIET_FOLDED
    m = manifest(name)
    model, text = _report(name)
    head = _header(text)
    assert f"  exit     {m['exit_status']}" in head
    opened = {pid for _, pid, _ in _raw_records(name, (OPEN,))}
    folded = re.findall(r"^  and (\d+) more process\(es\) that opened no NVIDIA device "
                        r"file: (.+); each exit 0", head, re.M)
    unlisted = []
    for pid in m["summary"]["pids"]:
        lines = [l for l in head.splitlines() if l.startswith(f"  pid {pid}: ")]
        if not lines:
            unlisted.append(pid)
            continue
        (line,) = lines
        assert re.search(r"  exit (\d+|unknown \(.+\))", line), line
    if folded:
        (count, names), = folded
        assert int(count) == len(unlisted) >= QUIET_FOLDED
        assert sum(int(n) for n in re.findall(r" x(\d+)", names)) == len(unlisted)
        for pid in unlisted:
            assert pid not in opened and pid != model.meta.get("pid")
            assert model.processes[pid].get("exit") in (0, None)
    else:
        assert unlisted == []
    assert "exit=" not in head and "problems" in head


@pytest.mark.parametrize("name", ALL)
def test_no_python_values_in_the_text(name):
    """None/True/False are Python's words, not the report's (issue 27: `exit=None`)."""
    _, text = _report(name, show_ioctls=True, show_objects=True, show_stats=True)
    bad = [l for l in text.splitlines() if re.search(r"\b(None|True|False)\b|=None", l)]
    assert not bad, bad[:5]


def _raw_records(name, types):
    data = capture_bytes(name)
    for off, length, rtype in record_spans(name):
        if rtype in types:
            yield rtype, struct.unpack_from("<I", data, off + 12)[0], \
                data[off + RECORD_HEADER:off + length]


def _pad8(n):
    return (n + 7) & ~7


def raw_mappings(name):
    """[(addr, hMemory or None, hClass or None)] of each successful MMAP record, by
    struct.unpack alone: an RM_MAP_MEMORY (nv_ioctl_nvos33_parameters_with_fd: hClient,
    hDevice, hMemory at +8, ..., status at +40, fd at +48) made an mmap context on `fd`, and
    the next mmap of that fd in that process maps hMemory (objects.py's docstring); its
    class is the hClass of the RM_ALLOC (NVOS21/64: hObjectNew +8, hClass +12) or
    RM_ALLOC_MEMORY (NVOS02: the same two) that made the handle."""
    classes, pending, out = {}, {}, []
    for rtype, pid, b in _raw_records(name, (IOCTL, MMAP)):
        if rtype == IOCTL:
            request, _, ret = struct.unpack_from("<IQi", b, 4)
            arg_size, _, _, path_len = struct.unpack_from("<4I", b, 24)
            path = b[40:40 + path_len].split(b"\0")[0]
            before = b[40 + _pad8(path_len):40 + _pad8(path_len) + arg_size]
            after = b[40 + _pad8(path_len) + _pad8(arg_size):][:arg_size]
            if ret != 0 or b"uvm" in path or (request >> 8) & 0xFF != NV_IOCTL_MAGIC:
                continue
            nr = request & 0xFF
            if nr in (NV_ESC_RM_ALLOC, NV_ESC_RM_ALLOC_MEMORY) and len(before) >= 16:
                handle, hclass = struct.unpack_from("<II", before, 8)
                classes[handle] = hclass
            elif nr == NV_ESC_RM_MAP_MEMORY and len(after) >= 52 and \
                    struct.unpack_from("<I", after, 40)[0] == 0:
                hmem, = struct.unpack_from("<I", before, 8)
                fd, = struct.unpack_from("<i", before, 48)
                pending.setdefault((pid, fd), []).append(hmem)
        else:
            addr, _, _, _, fd, err = struct.unpack_from("<QQiiii", b, 0)
            if err:
                continue
            queue = pending.get((pid, fd))
            hmem = queue.pop(0) if queue else None
            out.append((addr, hmem, classes.get(hmem)))
    return out


@pytest.mark.parametrize("name", SMALL)
def test_mappings_name_their_rm_object(name):
    """The "what" column: each mapping's RM object (handle and class) as the raw ioctls
    say; a UVM mapping says it has none. No row is blank (it was, on every capture)."""
    _, text = _report(name)
    table = text.split("\nNVIDIA mappings (")[1].split("\n\n")[0].splitlines()[2:]
    rows = {int(l.split()[0], 16): l for l in table}
    want = raw_mappings(name)
    assert want and len(rows) == len({a for a, _, _ in want})
    named = 0
    for addr, hmem, hclass in want:
        row = rows[addr]
        what = row[row.index("/dev/"):].split(None, 1)[1]
        if hmem is None:
            assert "nvidia-uvm" in row and "UVM" in what, row
            continue
        assert what.startswith(f"{hmem:#x} ") and f"(class {hclass:#x})" in what, row
        named += 1
    assert named >= len(want) - 2


def test_mappings_json_object():
    """mmaps[].object in the JSON is the handle the text names."""
    doc = _json("builtin-vadd")
    want = {addr: hmem for addr, hmem, _ in raw_mappings("builtin-vadd")}
    maps = [m for m in doc["mmaps"] if "prot" in m and not m["errno"]]
    assert maps and all(m["object"] == want[m["addr"]] for m in maps)


@pytest.mark.parametrize("args", [[], ["--cost"], ["--ioctls"], ["--cost", "--json"]])
def test_kernel_fault_shown_in_every_form(args):
    """Issue 27 tried the default report, --cost and --ioctls: none named the failed call."""
    from click.testing import CliRunner
    from tracer.cli import trace_decode
    truth = manifest("kernel-fault")["ground_truth"]
    res = CliRunner().invoke(trace_decode, [capture_path("kernel-fault"), *args])
    assert res.exit_code == 0, res.output
    want = _cuda_error_name(truth["sync_error_name"])
    if "--json" in args:
        (failed,) = json.loads(res.output)["failed_calls"]
        assert (failed["result"], failed["result_name"]) == (truth["sync_error"], want)
    else:
        assert f"= {truth['sync_error']} {want}" in _header(res.output)
