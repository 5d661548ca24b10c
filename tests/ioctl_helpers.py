"""Hand-built TL_IOCTL record bodies for the ioctl decoder tests (synthetic, not captured)."""
from construct import Container

from decoders.escapes import numbers as ESC

UVM_PATH = b"/dev/nvidia-uvm"
CTL_PATH = b"/dev/nvidiactl"
DEV_PATH = b"/dev/nvidia0"


def nv_request(nr, size):
    return 0xC0000000 | (size << 16) | (ESC.NV_IOCTL_MAGIC << 8) | nr


def buf(role, before, after=None, flags=None, size=None, addr=0x7F0000001000, field=0):
    after = before if after is None else after
    if flags is None:
        flags = (1 if before is not None else 0) | (2 if after is not None else 0)
    size = size if size is not None else len(before if before is not None else after)
    return Container(role=role, size=size, addr=addr, flags=flags, field=field,
                     before=before or b"", after=after or b"")


def rec(request, before, after=None, path=CTL_PATH, fd=3, ret=0, err=0, buffers=(), flags=None,
        arg_size=None):
    after = before if after is None else after
    if flags is None:
        flags = (1 if before is not None else 0) | (2 if after is not None else 0)
    size = arg_size if arg_size is not None else len(before if before is not None else after or b"")
    return Container(fd=fd, request=request, arg=0x7FFD0000, ret=ret, err=err, arg_size=size,
                     nbufs=len(buffers), flags=flags, path=path, before=before or b"",
                     after=after or b"", buffers=list(buffers))
