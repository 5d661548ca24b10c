"""Build step: compile shim/*.c into tracer/libtracelaunch.so, shipped inside the package.

The shim is a plain shared library (an LD_PRELOAD object, not a Python extension), so
build_ext is taught to name it libtracelaunch.so and to export no PyInit symbol.
"""
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class BuildShim(build_ext):
    def get_ext_filename(self, fullname):
        # distutils asks with the last name component, setuptools with the full name.
        if fullname == "libtracelaunch":
            return "libtracelaunch.so"
        if fullname == "tracer.libtracelaunch":
            return "tracer/libtracelaunch.so"
        return super().get_ext_filename(fullname)

    def get_export_symbols(self, ext):
        return []


setup(
    ext_modules=[Extension(
        "tracer.libtracelaunch",
        sources=["shim/tracelaunch.c"],
        depends=["shim/abi.h", "shim/cuapi.c", "shim/window.c", "shim/patch.c", "shim/rmptrs.c", "shim/cflags"],
        include_dirs=["shim"],
        # shim/cflags: shared with the tests' build; -mgeneral-regs-only is invariant I16
        extra_compile_args=open("shim/cflags").read().split(),
        libraries=["dl", "pthread"],
    )],
    cmdclass={"build_ext": BuildShim},
)
