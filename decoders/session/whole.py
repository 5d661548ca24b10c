"""What every decode of a whole capture does first and last: its model made empty, where
its progress is read from, and its end (decoders/session/__init__.py decode_capture, and
each block of decoders/session/shard.py)."""
import gzip
import io
import os

from decoders.capture.files import ZstdStream
from decoders.errors import CaptureError
from decoders.session.entries import _SUBMISSION_BODY, _append_call, _submission_load
from decoders.session.launches import _sm, repair_launch
from decoders.session.model import (CaptureModel, IoctlList, _api_call_load, _launch_dump,
                                    _launch_load, capture_header)
from decoders.spill import SpillList

PROGRESS_RECORDS = 4096     # records between two calls of decode_capture's `progress`
COLLECT_RECORDS = 1024      # and between two collections of young objects (the reader's
                            # parse contexts are small cycles)


def _new_model(path, reader, branch, keep, brief=None):
    from decoders.cuda.attribute import Attribution
    from decoders.cuda.calls import ApiCalls
    from decoders.rm.objects import ObjectTree
    meta = reader.meta
    model = CaptureModel(path=str(path), meta=meta, header=capture_header(reader.header))
    model.objects = ObjectTree(branch)
    model.channel_counts, model.rank_counts = {}, {}
    if keep is not None:
        drop = brief is not None
        short = brief if drop else keep
        model.brief = brief
        for name, lst in report_lists(keep, short, drop).items():
            setattr(model, name, lst)
        model.ioctls = IoctlList(short, drop=drop)
    model.api = ApiCalls()
    model.attribution = Attribution(model.objects, sm=_sm(meta))
    return model


def report_lists(keep, short, drop, drop_submissions=False, launches=None, directory=None):
    """The model's lists as a decode keeps them: its first `keep` submissions and `short`
    launches (`launches` if given), API calls, syncs and copies in memory, the rest spilled
    or, with `drop` (a brief decode; `drop_submissions` for the submissions), counted.
    `directory`: spilled to files by name there (SpillList `directory`)."""
    d = directory
    return {
        # submissions go in through append_dumped (_submission_raw) when the reader has
        # their fast body parse
        "submissions": SpillList(keep, load=LIST_LOADS["submissions"],
                                 drop=drop_submissions, directory=d),
        "launches": SpillList(short if launches is None else launches, _launch_dump,
                              _launch_load, repair_launch, drop=drop, directory=d),
        # items go in through append_dumped: (ApiCall.compact(), (kernel name,) or ())
        "api_calls": SpillList(short, load=_api_call_load, drop=drop, directory=d),
        "syncs": SpillList(short, drop=drop, directory=d),
        "copies": SpillList(short, drop=drop, directory=d)}


# how each list's spilled items are read back (report_lists; SpillList.adopt)
LIST_LOADS = {"submissions": _submission_load if _SUBMISSION_BODY is not None else None,
              "launches": _launch_load, "api_calls": _api_call_load, "syncs": None,
              "copies": None}


def _progress_source(stream, reader):
    """() -> (bytes of the capture read so far, their total or None), for progress: over
    the file on disk where open_capture() made the stream (a gzipped or zstd capture by its
    compressed bytes), else the reader's offset in the stream, with no total. A capture
    read while it is written (decoders/capture/live.py) is done up to what was handed out,
    of the file's size now."""
    if getattr(stream, "live", False) and hasattr(stream, "fd"):
        def live():
            try:
                return stream.pos, os.fstat(stream.fd).st_size
            except OSError:
                return stream.pos, None
        return live
    compressed = isinstance(stream, (gzip.GzipFile, ZstdStream))
    raw = getattr(stream, "fileobj", None) if compressed else \
        stream if isinstance(stream, io.BufferedReader) else None
    if raw is not None:
        try:
            total = os.fstat(raw.fileno()).st_size
            raw.tell()
        except (OSError, AttributeError, ValueError, io.UnsupportedOperation):
            raw = None
    if raw is None:
        return lambda: (reader.offset, None)
    return lambda: (raw.tell(), total)


def _finish(model, reader, stage, stopped, since=0):
    """After the last record: the reader's and attribution's problems, a capture cut
    short, the launch stage's end (its problems from the `since`th), and the calls that
    never returned."""
    model.problems[:0] = reader.problems
    model.problems.extend(model.attribution.problems)    # module images that did not decode
    if model.end is None and not stopped and not reader.stopped:
        last = f"after record {model.records - 1}" if model.records else "before any record"
        model.problems.append(CaptureError(
            f"capture cut short: no END record {last}", offset=reader.offset))
    if stage is not None:
        stage.finish(model, reader.problems, since)
    for call in model.api.unfinished:     # never returned: the process died inside it
        _append_call(model.api_calls, call, ())
        model.api_call_names[call.name] += 1


def capture_marks(path):
    """The capture's MARK records, as model.marks holds them (index, pid, tid, kind, id),
    read alone (the records of other kinds passed over unparsed): what a decode stopped
    early (decode_capture's `until`) needs to know of marks it will not reach."""
    from decoders.capture import format as F
    from decoders.capture.reader import CaptureReader, open_capture
    out = []
    with open_capture(path) as f:
        for rec in CaptureReader(f, name=str(path)).records(only=("MARK",)):
            if rec.type == "MARK" and rec.body is not None:
                out.append({"index": rec.index, "pid": rec.pid, "tid": rec.tid,
                            "kind": F.TL_MARK_KIND.get(rec.body.kind, rec.body.kind),
                            "id": rec.body.id})
    return out
