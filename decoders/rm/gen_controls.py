"""Generate decoders/rm/controls_data.py from shared/reference/rm-ctrl-cmds.tsv.

Run: python3 -m decoders.rm.gen_controls [TSV] [OUT]. The data module is committed; a test
checks that it is what this generator makes from the TSV (so neither drifts). The TSV is our
own extraction (NVIDIA/open-gpu-kernel-modules src/common/sdk/nvidia/inc/ctrl/** at tag
595.45.04, commit df1c9a3de, with an `in_580.105.08` column compared against tag 580.105.08).
"""
import sys
from pathlib import Path

# <checkout>/../shared/reference (the shared tree sits beside the checkout).
DEFAULT_TSV = Path(__file__).resolve().parents[3] / "shared" / "reference" / "rm-ctrl-cmds.tsv"
TSV_CANDIDATES = (DEFAULT_TSV,)
OUT = Path(__file__).with_name("controls_data.py")
PREFIX = "NVIDIA/open-gpu-kernel-modules:src/common/sdk/nvidia/inc/ctrl/"

HEADER = '''"""RM control command numbers as data (generated: do not edit; see gen_controls.py).

Provenance: NVIDIA/open-gpu-kernel-modules, src/common/sdk/nvidia/inc/ctrl/**, tag 595.45.04
(commit df1c9a3de2be4b130f4fc7680f7198193d8ac6ad); 580 column compared against tag 580.105.08
(commit 2af9f1f0f7de4988432d4ae875b5858ffdb09cc2). Source: shared/reference/rm-ctrl-cmds.tsv.
Name prefix: NVxxxx_CTRL_CMD_. Controls that exist only in 580 (removed before 595) are NOT
in this table: on 580 they decode as class/category/index, flagged non-public.
Row: (value in 595, name, in_580, header under ctrl/) where in_580 is "same", "absent" or the
580 value as an int.
The rows are one line each of TABLE (value, name, in_580, header, space-separated), read into
ROWS at import: where no bytecode is written (PYTHONDONTWRITEBYTECODE), every run compiles
this module, and one string compiles in ~1 ms where 1,586 tuple displays took ~20 ms.
"""

TABLE = """\\
'''

FOOTER = '''"""


def _row(line):
    value, name, in580, header = line.split()
    return int(value, 16), name, in580 if in580 in ("same", "absent") else int(in580, 16), header


ROWS = tuple(_row(line) for line in TABLE.splitlines())
'''


def generate(tsv_text):
    out = [HEADER]
    for line in tsv_text.splitlines():
        if not line or line.startswith("#") or line.startswith("value\t"):
            continue
        value, name, _cat, _idx, in580, source = line.split("\t")
        if in580.startswith("differs:"):
            in580 = f"{int(in580.split(':', 1)[1], 16):#010x}"
        header = source[len(PREFIX):] if source.startswith(PREFIX) else source
        out.append(f"{int(value, 16):#010x} {name} {in580} {header}\n")
    out.append(FOOTER)
    return "".join(out)


def find_tsv():
    for path in TSV_CANDIDATES:
        if path.exists():
            return path
    return None


def main(argv):
    tsv = Path(argv[1]) if len(argv) > 1 else find_tsv()
    out = Path(argv[2]) if len(argv) > 2 else OUT
    out.write_text(generate(tsv.read_text()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
