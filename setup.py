"""Build step: compile shim/*.c into tracer/libtracelaunch.so, shipped inside the package,
and the decode's hot modules into C extensions with Cython.

The shim is a plain shared library (an LD_PRELOAD object, not a Python extension), so
build_ext is taught to name it libtracelaunch.so and to export no PyInit symbol.

COMPILED: pure-Python modules that Cython translates as they are (no Cython syntax, no
types): the same code without the interpreter's dispatch. Session 22 measured a long job's
decode at 1.45x less CPU on Python 3.11 and 1.2x on 3.12; session 26, on this tree, no
CPU difference through the noise on either, and a long job's report tail ~10% shorter on the
H100 host (bench/compiled_ab.py, docs/measurements.md). The .py files stay the source and
ship beside the extensions; Python imports an extension before the .py of the same name,
and the .py where there is none (no Cython at build time, another Python version, or
TRACE_LAUNCH_PURE=1 at build time). tests/test_compiled.py checks the two decode alike.
"""
import os

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

SHIM = "tracer.libtracelaunch"

COMPILED = [
    # record reader and the decode's stages (decoders/session/__init__.py)
    "decoders/capture/reader.py", "decoders/capture/live.py", "decoders/spill.py",
    "decoders/session/__init__.py", "decoders/session/records.py",
    "decoders/session/entries.py", "decoders/session/budget.py", "decoders/session/model.py",
    "decoders/session/launches.py", "decoders/session/front.py", "decoders/session/split.py",
    "decoders/session/shard.py", "decoders/session/blocks.py", "decoders/session/skim.py",
    "decoders/session/whole.py",
    "decoders/window.py", "decoders/ranks.py",
    # SUBMISSION records -> launches
    "decoders/submissions.py", "decoders/gpfifo.py", "decoders/pushbuf.py", "decoders/fields.py",
    "decoders/qmd/__init__.py", "decoders/launch/__init__.py", "decoders/launch/channel.py",
    "decoders/launch/decoder.py", "decoders/launch/ops.py", "decoders/launch/memory.py",
    "decoders/launch/qmds.py", "decoders/launch/summary.py", "decoders/launch/syncs.py",
    # API calls, attribution, the RM object model
    "decoders/cuda/calls.py", "decoders/cuda/params.py", "decoders/cuda/attribute.py",
    "decoders/cuda/allocations.py", "decoders/cuda/driverkernels.py", "decoders/cuda/graphs.py",
    "decoders/cuda/graphdriver.py", "decoders/rm/objects.py", "decoders/ioctl.py",
    "decoders/escapes/render.py",
    # module images
    "decoders/cubin/__init__.py", "decoders/cubin/fatbin.py", "decoders/cubin/nvinfo.py",
    "decoders/cubin/elf.py",
    # the JSON's long lists
    "tracer/report_json.py", "tracer/parallel.py",
    # the timeline's events and their sort on disk
    "decoders/timeline.py", "decoders/extsort.py",
]

DIRECTIVES = {
    "language_level": 3,
    "binding": True,                # functions and methods introspect and pickle as Python's
    "always_allow_keywords": True,
    "annotation_typing": False,     # an annotation stays a comment, never a C type check
    "embedsignature": False,
}


def compiled_modules():
    """The Extensions of COMPILED, or none where Cython is not installed (or not wanted)."""
    if os.environ.get("TRACE_LAUNCH_PURE", "").strip() not in ("", "0"):
        return []
    try:
        from Cython.Build import cythonize
    except ImportError:
        return []
    exts = [Extension(path[:-3].replace("/", "."), [path])   # (a package: pkg.__init__)
            for path in COMPILED]
    exts = cythonize(exts, compiler_directives=DIRECTIVES, build_dir="build/cython",
                     nthreads=os.cpu_count() or 1, quiet=True)
    for ext in exts:
        ext.optional = True     # one that fails to compile (no Python headers) stays pure Python
    return exts


class BuildShim(build_ext):
    def finalize_options(self):
        super().finalize_options()
        if not self.parallel:       # one compiler per CPU (COMPILED is ~40 C files)
            self.parallel = os.cpu_count() or 1

    def get_ext_filename(self, fullname):
        # distutils asks with the last name component, setuptools with the full name.
        if fullname == "libtracelaunch":
            return "libtracelaunch.so"
        if fullname == SHIM:
            return "tracer/libtracelaunch.so"
        return super().get_ext_filename(fullname)

    def get_export_symbols(self, ext):
        return [] if ext.name == SHIM else super().get_export_symbols(ext)


setup(
    ext_modules=[Extension(
        SHIM,
        sources=["shim/tracelaunch.c"],
        depends=["shim/abi.h", "shim/cuapi.c", "shim/window.c", "shim/patch.c", "shim/rmptrs.c", "shim/cflags"],
        include_dirs=["shim"],
        # shim/cflags: shared with the tests' build; -mgeneral-regs-only is invariant I16
        extra_compile_args=open("shim/cflags").read().split(),
        libraries=["dl", "pthread"],
    )] + compiled_modules(),
    cmdclass={"build_ext": BuildShim},
)
