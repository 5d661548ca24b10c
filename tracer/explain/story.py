"""The story as data: the words it defines (TERMS), the parts a story is made of (Story,
Section, Line, Value, Term), and the small builders every section uses.

A section is a list of lines; a line is a list of parts: plain text, a Value (a number or
a string the capture gave, with a key that links its places on the page) or a Term (a
word of TERMS, defined where the story first uses it). The builders below (`_t`, `_v`,
`_hex`, `_where`, ...) are the package's own: the section modules share them, nothing
outside tracer/explain/ uses them.
"""
from dataclasses import dataclass, field

# Plain-words definitions. No value of a capture appears here (the story gives them);
# only the widths the formats fix (a 32-bit store, 8-byte GPFIFO entries, 8 subchannels).
TERMS = {
    "runtime": "the CUDA runtime library (libcudart): `kernel<<<grid, block>>>(args)` in CUDA "
               "C++ compiles to a call of its cudaLaunchKernel. The runtime, and libraries "
               "such as cuda-python, PyTorch or JAX, end in a call of the driver API.",
    "driver API": "the functions of libcuda.so, NVIDIA's user-space driver (cuLaunchKernel, "
                  "cuMemAlloc, ...). The shim records each call, its arguments and its result.",
    "grid": "how many thread blocks the kernel runs, in up to three dimensions (x, y, z).",
    "block": "a group of threads that run together on one SM and can share memory; its size "
             "is given in up to three dimensions.",
    "ioctl": "a system call that hands a request to a kernel driver through an open device "
             "file (/dev/nvidiactl, /dev/nvidia0, /dev/nvidia-uvm).",
    "RM": "the Resource Manager: the part of NVIDIA's kernel driver that owns the GPU's "
          "objects. A program asks it for objects with ioctls (RM_ALLOC, RM_CONTROL, ...).",
    "RM client": "the root object a process allocates first; every other RM object it makes "
                 "hangs below it, and RM frees them all when the client goes.",
    "RM object": "something RM made on the program's behalf (a device, a memory block, a "
                 "channel), named by a 32-bit handle and placed under a parent object.",
    "RM class": "the number that says what kind of object an RM object is, e.g. a memory "
                "class, a channel class or a compute class; NVIDIA's headers name each one.",
    "channel": "a queue of commands from one process to the GPU: the GPU's host engine reads "
               "it in order and hands the commands to an engine (compute, copy).",
    "GPFIFO": "the channel's ring of 8-byte entries in GPU-visible memory; each entry gives "
              "the address and length of a piece of pushbuffer for the GPU to read.",
    "USERD": "a small block of memory per channel that the CPU and the GPU both see; it holds "
             "GP_PUT (written by the CPU) and GP_GET (written by the GPU).",
    "GP_PUT": "the index of the next free GPFIFO entry: the CPU writes new entries, then "
              "advances GP_PUT past them. GP_GET is how far the GPU has read.",
    "doorbell": "a 32-bit store to a register page of the GPU (the usermode page, mapped into "
                "the process) that tells the GPU a channel has new GPFIFO entries.",
    "channel token": "the number written to the doorbell to say which channel has work (RM "
                     "hands it out for each channel: the work-submit token).",
    "pushbuffer": "memory the driver fills with commands (methods) for the GPU; GPFIFO entries "
                  "point into it.",
    "method": "one command in the pushbuffer: a method number (a register offset of an "
              "engine's class) and a 32-bit value, written after a header word that gives the "
              "subchannel, the method and how many values follow.",
    "subchannel": "one of eight slots of a channel, each bound (by the SET_OBJECT method) to "
                  "one engine object, such as the compute class; a method header names the "
                  "subchannel its methods go to.",
    "inline-to-memory": "methods that copy data carried in the pushbuffer itself to a GPU "
                        "address: OFFSET_OUT_UPPER/OFFSET_OUT (where), LINE_LENGTH_IN and "
                        "LINE_COUNT (how much), LAUNCH_DMA (go), then LOAD_INLINE_DATA words.",
    "constant bank 0": "a block of memory every thread of a kernel reads through c[0x0][...]: "
                       "the driver puts blockDim, gridDim and other constants at its start, "
                       "and the kernel's arguments after them.",
    "QMD": "Queue Meta Data: the launch descriptor the GPU's compute scheduler reads. It "
           "holds the grid and block sizes, the registers and shared memory per block, the "
           "program's address, the constant banks, and what to signal when the grid is done.",
    "PCAS": "the compute engine's scheduling methods (SEND_PCAS_A, SEND_SIGNALING_PCAS*_B): "
            "they hand the scheduler the address of a QMD to take up.",
    "GRID_NULL": "a QMD type with no grid and no program: the driver schedules one before each "
                 "kernel's own QMD on this GPU; the kernel's QMD names it as its dependent.",
    "semaphore": "a memory word the GPU writes a value (the payload) to when its work reaches "
                 "a point; the CPU reads it to learn what has finished.",
    "SM": "streaming multiprocessor: one of the GPU's processors; the scheduler hands each "
          "block of the grid to an SM, which runs its threads.",
}


# -- the story as data --------------------------------------------------------------------
@dataclass
class Term:
    name: str           # a key of TERMS
    shown: str          # the words in the line


@dataclass
class Value:
    key: str            # what it is (grid-x, token, ...): the same key links it across boxes
    text: str           # as shown
    capture: bool = False   # a string from the capture (escaped on output)


@dataclass
class Line:
    parts: list
    indent: int = 0
    code: bool = False      # a record or a byte listing: kept on one line in the text


@dataclass
class Section:
    key: str
    title: str
    box: str = ""       # the picture's box title
    lines: list = field(default_factory=list)
    brief: list = field(default_factory=list)   # a few lines for the picture's box


@dataclass
class Story:
    path: str
    index: int
    facts: dict
    sections: list


def _t(name, shown=None):
    return Term(name, shown or name)


def _v(key, value, capture=False):
    return Value(key, value if isinstance(value, str) else str(value), capture)


def _hex(value):
    return "?" if value is None else f"{value:#x}"


# -- values that several sections show ---------------------------------------------------
def _count(d):
    n = 1
    for x in d or []:
        n *= x
    return n


def _dim_values(key, dims):
    """(x, y, z) as values keyed grid-x, grid-y, ... so each links to its QMD field."""
    out = ["("]
    for k, (axis, d) in enumerate(zip("xyz", dims or [])):
        if k:
            out.append(", ")
        out.append(_v(f"{key}-{axis}", d))
    out.append(")")
    return out


def _where(r):
    """A resolved GPU VA (docs/json.md `resolved`) in words."""
    if not r:
        return "in no memory object the capture saw mapped"
    size = f", {r['size']:#x} bytes" if r.get("size") is not None else ""
    cpu = (f", visible to the CPU at {r['cpu']:#x}" if r.get("cpu") is not None
           else ", not mapped for the CPU")
    return (f"offset {r['offset']:#x} of RM object {r['handle']:#x} ({r['class_name']}"
            f"{size}, {r.get('memory') or 'location ?'}{cpu})")
