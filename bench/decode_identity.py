"""Decoded output identical before and after a change to the decoders: `trace-decode --json`
and the text report of every capture in captures/, byte for byte (sha256 of stdout, stderr
and exit status), from two snapshots of the working tree that differ only in the files named.

The reference tree is the working tree with those files taken from REV (`git show`), so
anyone else's edit to other files in the same tree is in both snapshots and cannot show up
as a difference. Both snapshots are copied when the script starts.

usage: python3 bench/decode_identity.py [--rev REV] [--paths P ...] [--keep DIR] [CAPTURE ...]
  default REV: HEAD; default paths: the decode hot path (DEFAULT_PATHS); default captures:
  every captures/*/capture.tlc.gz. Exit 0 when identical, 1 otherwise (the differing
  outputs stay under --keep DIR when given).
"""
import argparse
import concurrent.futures
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

DEFAULT_PATHS = (
    "decoders/launch.py", "decoders/pushbuf.py", "decoders/fields.py", "decoders/gpfifo.py",
    "decoders/capture/reader.py", "decoders/rm/objects.py", "decoders/qmd/__init__.py",
    "decoders/qmd/v03_00.py", "decoders/qmd/v04_00.py", "decoders/qmd/v05_00.py",
    "decoders/session.py", "decoders/cuda/calls.py", "decoders/cuda/attribute.py",
    "decoders/ioctl.py", "decoders/escapes/render.py", "decoders/node.py",
    "decoders/rm/controls_data.py", "decoders/rm/gen_controls.py", "decoders/cubin/__init__.py",
    "decoders/methods/__init__.py", "tracer/report.py",
)
VIEWS = {"json": ["--json"], "text": []}


def snapshot(dest):
    """Copy the working tree (no .git, no caches; captures linked, not copied)."""
    def ignore(d, names):
        skip = {n for n in names if n in (".git", "__pycache__", ".pytest_cache")}
        if os.path.abspath(d) == ROOT:
            skip.add("captures")
        return skip
    shutil.copytree(ROOT, dest, ignore=ignore, symlinks=True)
    os.symlink(os.path.join(ROOT, "captures"), os.path.join(dest, "captures"))


def overlay(dest, rev, paths):
    for p in paths:
        out = subprocess.run(["git", "-C", ROOT, "show", f"{rev}:{p}"], capture_output=True)
        target = os.path.join(dest, p)
        if out.returncode:
            if os.path.exists(target):
                os.remove(target)           # not in REV: not in the reference either
            continue
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as f:
            f.write(out.stdout)


def decode(tree, capture, view):
    """(sha256 hex, stdout bytes) of one trace-decode run in `tree`."""
    cmd = [sys.executable, "-m", "tracer.cli_main", "trace-decode", capture, *VIEWS[view]]
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    out = subprocess.run(cmd, cwd=tree, capture_output=True, env=env)
    h = hashlib.sha256()
    for part in (out.stdout, b"\0stderr\0", out.stderr, b"\0rc\0", str(out.returncode).encode()):
        h.update(part)
    return h.hexdigest(), out.stdout + b"\n--- stderr ---\n" + out.stderr


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rev", default="HEAD")
    ap.add_argument("--paths", nargs="+", default=list(DEFAULT_PATHS))
    ap.add_argument("--keep", help="write differing outputs here")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("captures", nargs="*")
    args = ap.parse_args(argv)
    caps = args.captures or sorted(
        os.path.join("captures", d, "capture.tlc.gz") for d in os.listdir(os.path.join(ROOT, "captures"))
        if os.path.exists(os.path.join(ROOT, "captures", d, "capture.tlc.gz")))
    work = tempfile.mkdtemp(prefix="decode-identity-")
    try:
        new, ref = os.path.join(work, "new"), os.path.join(work, "ref")
        snapshot(new)
        shutil.copytree(new, ref, symlinks=True)
        overlay(ref, args.rev, args.paths)
        jobs = [(c, v) for c in caps for v in VIEWS]
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            futs = {(c, v, t): pool.submit(decode, tree, c, v)
                    for c, v in jobs for t, tree in (("ref", ref), ("new", new))}
            bad = 0
            for c, v in jobs:
                (hr, outr), (hn, outn) = futs[(c, v, "ref")].result(), futs[(c, v, "new")].result()
                same = hr == hn
                bad += not same
                print(f"{'same' if same else 'DIFFERENT':9} {v:4} {c}  {hn[:16]}"
                      + ("" if same else f" (ref {hr[:16]})"))
                if not same and args.keep:
                    os.makedirs(args.keep, exist_ok=True)
                    stem = os.path.join(args.keep, c.split("/")[-2] + "." + v)
                    for tag, data in (("ref", outr), ("new", outn)):
                        with open(f"{stem}.{tag}", "wb") as f:
                            f.write(data)
        print(f"{len(jobs) - bad}/{len(jobs)} identical to {args.rev} "
              f"(paths from {args.rev}: {', '.join(args.paths)})")
        return 1 if bad else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
