"""Decoded output identical before and after a change to the decoders: `trace-decode --json
--all-fields` and the text report with `--all-launches` of every capture in captures/, byte for byte (sha256 of stdout, stderr
and exit status), from two snapshots of the working tree that differ only in the files named.

The reference tree is the working tree with those files taken from REV (`git show`), so
anyone else's edit to other files in the same tree is in both snapshots and cannot show up
as a difference. Both snapshots are copied when the script starts.

usage: python3 bench/decode_identity.py [--rev REV] [--paths P ...] [--keep DIR] [CAPTURE ...]
  default REV: HEAD; default paths: the whole decoder (default_paths); default captures:
  every captures/*/capture.tlc.{gz,zst}. Exit 0 when identical, 1 otherwise (the differing
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
from importlib.machinery import EXTENSION_SUFFIXES

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

def default_paths(rev):
    """Every decoders/ and tracer/ file at REV or in the working tree: the whole decoder and
    the code that calls it and renders what it made, so that a change spread over modules (a
    helper moved into decoders/fields.py, say, a new argument of decode_capture that
    trace-decode passes, or the JSON renderer asking the decoder for something new) cannot
    leave the reference half old and half new."""
    at_rev = subprocess.run(["git", "-C", ROOT, "ls-tree", "-r", "--name-only", rev, "decoders",
                             "tracer"], capture_output=True, text=True, check=True).stdout.split()
    here = [os.path.relpath(os.path.join(d, f), ROOT)
            for top in ("decoders", "tracer")
            for d, _, files in os.walk(os.path.join(ROOT, top)) for f in files
            if f.endswith(".py")]
    return sorted({p for p in at_rev + here if p.endswith(".py")})


# everything the decoder says: the JSON with every field and the text with every launch (by
# default trace-decode leaves the bulk out of the JSON and shows the first 200 launches)
VIEWS = {"json": ["--json", "--all-fields"], "text": ["--all-launches"]}


def snapshot(dest):
    """Copy the working tree (no .git, no caches; captures linked, not copied)."""
    def ignore(d, names):
        skip = {n for n in names if n in (".git", "__pycache__", ".pytest_cache")}
        if os.path.abspath(d) == ROOT:
            skip.add("captures")
        return skip
    shutil.copytree(ROOT, dest, ignore=ignore, symlinks=True)
    os.symlink(os.path.join(ROOT, "captures"), os.path.join(dest, "captures"))


def inside(p):
    """Whether `p` names a file inside the tree, relative to its root: overlay() writes and
    removes os.path.join(snapshot, p), which for an absolute path is that path itself (a
    capture passed after --paths was once taken for a path, and deleted)."""
    return not os.path.isabs(p) and os.path.normpath(p).split(os.sep)[0] != ".."


def overlay(dest, rev, paths):
    for p in paths:
        out = subprocess.run(["git", "-C", ROOT, "show", f"{rev}:{p}"], capture_output=True)
        target = os.path.join(dest, p)
        # an extension built in place (setup.py COMPILED) would be imported instead of REV's
        # source: the reference runs REV's Python
        for suffix in EXTENSION_SUFFIXES:
            if os.path.exists(target[:-3] + suffix):
                os.remove(target[:-3] + suffix)
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
    ap.add_argument("--paths", nargs="+", default=None)
    ap.add_argument("--keep", help="write differing outputs here")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("captures", nargs="*")
    args = ap.parse_args(argv)
    outside = [p for p in args.paths or () if not inside(p)]
    if outside:
        ap.error(f"--paths takes files of the tree, relative to its root: not {outside[0]!r} "
                 f"(captures go before --paths)")
    caps = args.captures or sorted(
        os.path.join("captures", d, f) for d in os.listdir(os.path.join(ROOT, "captures"))
        for f in ("capture.tlc.gz", "capture.tlc.zst")
        if os.path.exists(os.path.join(ROOT, "captures", d, f)))
    work = tempfile.mkdtemp(prefix="decode-identity-")
    try:
        new, ref = os.path.join(work, "new"), os.path.join(work, "ref")
        snapshot(new)
        shutil.copytree(new, ref, symlinks=True)
        if args.paths is None:
            args.paths = default_paths(args.rev)
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
              f"({len(args.paths)} paths from {args.rev})")
        return 1 if bad else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
