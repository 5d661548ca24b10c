"""Invariant I16 (shim/tracelaunch.c), checked on the built library: the hook of a patched
site runs no instruction that names a vector or x87 register, because its trampoline saves
only the GPRs and flags. A clobbered xmm/ymm/zmm register would corrupt the program silently
(glibc's memcpy uses ymm16-31 on AVX-512 CPUs, which tests/c/simdev.c's xmm0-15 check
cannot see), so this reads the machine code itself: the functions reachable from the
trampoline by direct calls, the libc functions they call, and the targets of their two
indirect calls (the vDSO clock and the private copy of libcuda's GP entry writer)."""
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CC = shutil.which("cc") or shutil.which("gcc")
OBJDUMP = shutil.which("objdump")
pytestmark = pytest.mark.skipif(CC is None or OBJDUMP is None, reason="needs a C compiler and objdump")

# A register of the x87, MMX, SSE, AVX or AVX-512 files, or an AVX-512 mask register.
VECTOR_REG = re.compile(r"%(?:[xyz]mm\d+|mm\d|st\b|st\(\d\)|k[0-7]\b)")
# What the hook may call in libc: plain system-call stubs, no vector code; and where the
# compiler protects the stack by default (Ubuntu's gcc), the abort on a smashed canary.
HOOK_LIBC = {"syscall", "__errno_location", "__stack_chk_fail"}
# Where the hook calls through a pointer: the GP entry writer's copy, and the vDSO clock.
HOOK_INDIRECT = {"tl_site_hook", "now_ns"}


@pytest.fixture(scope="module")
def shim(tmp_path_factory):
    so = tmp_path_factory.mktemp("vec") / "libtracelaunch.so"
    flags = (ROOT / "shim/cflags").read_text().split()
    subprocess.run([CC, *flags, "-fPIC", "-shared", "-I", str(ROOT / "shim"), "-o", str(so),
                    str(ROOT / "shim/tracelaunch.c"), "-ldl", "-lpthread"], check=True)
    return so


def disassemble(path, *extra):
    """{function: [instruction text]} from objdump, in address order."""
    out = subprocess.run([OBJDUMP, "-d", "--no-show-raw-insn", *extra, str(path)],
                         capture_output=True, text=True, check=True).stdout
    funcs, cur = {}, None
    for line in out.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
        if m:
            cur = funcs.setdefault(m.group(1).split("@@")[0], [])
            continue
        if cur is not None and re.match(r"^\s+[0-9a-f]+:\t", line):
            cur.append(line.split("\t", 1)[1].strip())
    return funcs


def reachable(funcs, start):
    """Functions reached from `start` by direct calls and tail jumps; {name: indirect calls}."""
    seen, todo, indirect = set(), [start], {}
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        for ins in funcs.get(f, []):
            m = re.match(r"(?:call|jmp)\w*\s+[0-9a-f]+ <([^>+]+)>", ins)
            if m and m.group(1) != f:
                todo.append(m.group(1))
            elif re.match(r"(?:call|jmp)\w*\s+\*", ins) and not f.endswith("@plt"):
                indirect.setdefault(f, []).append(ins)
    return seen, indirect


def test_hook_path_names_no_vector_register(shim):
    funcs = disassemble(shim)
    seen, indirect = reachable(funcs, "tl_tramp_common")
    assert {"tl_site_hook", "trap_store", "capture_channel", "rec_begin"} <= seen   # the walk works
    for f in seen - {"nt_copy"}:   # nt_copy: the next test
        bad = [i for i in funcs.get(f, []) if VECTOR_REG.search(i)]
        assert not bad, (f, bad[:3])
    libc = {f[:-len("@plt")] for f in seen if f.endswith("@plt")}
    assert libc <= HOOK_LIBC, libc - HOOK_LIBC
    assert set(indirect) <= HOOK_INDIRECT, indirect


def test_library_names_xmm0_only_in_the_streaming_copy(shim):
    """Anywhere in the library, only the streaming-load copy (nt_copy) names a vector
    register: xmm0, saved before its first use and put back after its last."""
    funcs = disassemble(shim)
    users = {f: [i for i in ins if VECTOR_REG.search(i)] for f, ins in funcs.items()}
    assert [f for f, uses in users.items() if uses] == ["nt_copy"]
    for f, uses in users.items():
        if not uses:
            continue
        assert all(set(VECTOR_REG.findall(i)) == {"%xmm0"} for i in uses), (f, uses)
        assert re.match(r"movdqu\s+%xmm0,\(", uses[0]) and re.match(r"movdqu\s+\(.*\),%xmm0", uses[-1]), (f, uses)
        assert {i.split()[0] for i in uses} <= {"movdqu", "movntdqa"}, (f, uses)


def test_no_libc_memory_or_string_function_imported(shim):
    out = subprocess.run([OBJDUMP, "-T", str(shim)], capture_output=True, text=True, check=True).stdout
    undefined = {line.split()[-1] for line in out.splitlines() if "*UND*" in line}
    assert not {u for u in undefined if re.match(r"(mem|str(?!to)|wcs|bcopy|bzero)", u)}, undefined


def test_vdso_clock_names_no_vector_register(tmp_path):
    """This machine's vDSO clock_gettime (the shim calls it directly from the hook)."""
    maps = Path("/proc/self/maps").read_text().splitlines()
    span = [line.split()[0] for line in maps if line.endswith("[vdso]")]
    if not span:
        pytest.skip("no vDSO in this process")
    lo, hi = (int(x, 16) for x in span[0].split("-"))
    with open("/proc/self/mem", "rb") as f:
        f.seek(lo)
        (tmp_path / "vdso.so").write_bytes(f.read(hi - lo))
    funcs = disassemble(tmp_path / "vdso.so")
    seen, indirect = reachable(funcs, "__vdso_clock_gettime")
    assert "__vdso_clock_gettime" in funcs and not indirect
    for f in seen:
        assert not [i for i in funcs.get(f, []) if VECTOR_REG.search(i)], f


def test_gp_writer_template_names_no_vector_register(tmp_path):
    """The hook runs a private copy of the known function's bytes (shim/patch.c g_known)."""
    src = (ROOT / "shim/patch.c").read_text()
    table = src[src.index("g_known[] = {"):]
    table = table[:table.index("\n};")]
    code = bytes(int(x, 16) for x in re.findall(r"0x([0-9a-f]{2})\b", table.split("{", 2)[2]))
    assert len(code) == 64
    (tmp_path / "fn.bin").write_bytes(code[16:])
    out = subprocess.run([OBJDUMP, "-D", "-b", "binary", "-m", "i386:x86-64", str(tmp_path / "fn.bin")],
                         capture_output=True, text=True, check=True).stdout
    ins = [line.split("\t")[-1] for line in out.splitlines() if re.match(r"^\s+[0-9a-f]+:\t", line)]
    assert ins[-1].startswith("ret") and not [i for i in ins if VECTOR_REG.search(i)]
