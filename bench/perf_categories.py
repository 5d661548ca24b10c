"""Where a Python process's CPU goes by kind of work, from `perf report --no-children
--sort symbol -g none` text (stdin): object allocation and freeing, attribute and dict
lookups, marshal, the interpreter's eval loop, thread-local lookups, zstd, and the
compiled modules' own code (Cython's __pyx_/__Pyx_ symbols). Says whether compiling harder
can help: compiled code makes in full the attribute lookups the 3.11+ interpreter caches.

    perf report -i perf.data --no-children --sort symbol -g none | python3 bench/perf_categories.py
"""
import json
import re
import sys

CATEGORIES = (
    ("marshal", r"\bw_object|\bw_long|\bw_ref|w_complex|w_pstring|w_short|_Py_hashtable|marshal|"
                r"\br_object|r_ref|PyMarshal"),
    ("alloc/free", r"Malloc|Free\b|_PyObject_Free|malloc|\bfree\b|_int_|unlink_chunk|tuple_alloc|"
                   r"dealloc|Dealloc|GC_UnTrack|GC_Track|free_keys|new_keys|PyTuple_New|"
                   r"PyList_New|PyDict_New|gc_alloc"),
    ("attribute/dict lookup", r"dict_lookup|_PyType_Lookup|unicodekeys|GetAttr|"
                              r"GetInstanceAttribute|GetMethod|dict_get|insertdict|"
                              r"PyDict_SetItem|PyDict_GetItem|_PyDict_Next|SetAttr|PyMember|"
                              r"_PyType_GetDict|lookdict"),
    ("eval loop", r"_PyEval_EvalFrameDefault"),
    ("thread-local lookup", r"tls_get_addr"),
    ("zstd", r"ZSTD|zstd|HUF_|FSE_"),
    ("compiled modules", r"__pyx|__Pyx"),
)


def main():
    totals = {name: 0.0 for name, _ in CATEGORIES}
    other = 0.0
    for line in sys.stdin:
        m = re.match(r"\s*([\d.]+)%\s+\[\.\]\s+(\S+)", line)
        if not m:
            continue
        share, symbol = float(m.group(1)), m.group(2)
        for name, pattern in CATEGORIES:
            if re.search(pattern, symbol):
                totals[name] += share
                break
        else:
            other += share
    totals["other"] = other
    print(json.dumps({k: round(v, 1) for k, v in totals.items()}, indent=1))


if __name__ == "__main__":
    main()
