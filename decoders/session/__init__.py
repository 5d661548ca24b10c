"""A whole capture decoded into one model: the data the report and the JSON render.

A pipeline of stages, each in its own module, fed on one pass:
  record reader (decoders/capture/reader.py: framing)
  -> records.py: a table from record kind to its handler (ioctl model, mmaps, API calls)
  -> launches.py: SUBMISSION records -> launches (decoders/submissions.py)
     -> the launch sink (resolution, attribution, tally, keeping)
  -> model.py: CaptureModel, what the report and the JSON read.
Each stage keeps state indexed by what will look it up; none walks what it kept so far
(STYLE 13a/13b). Nothing here prints or formats text for people; tracer/report.py does.
The JSON view (`to_json`) is documented in docs/json.md.
"""
import gc
import gzip
import io
import os

from decoders.capture.reader import CaptureReader, open_capture
from decoders.errors import CaptureError
from decoders.session.budget import (KEPT_BYTES, KEPT_ENTRIES, KEPT_IMAGES,  # noqa: F401
                                     KEPT_OPEN_CALLS, STRING_CUT, _Budget)
from decoders.session.entries import (_GP_KEYS, _SUBMISSION_BODY, _append_call,  # noqa: F401
                                      _at_record, _gp_entry, _submission_load, _submission_raw)
from decoders.session.launches import (MISMATCHED_KEPT, TALLY_KEYS, _VERIFIED, LaunchStage,  # noqa: F401
                                       gpu_family, _resolve_launch, _sm, _tally, repair_launch)
from decoders.session.model import (DEFAULT_KEEP, CaptureModel, IoctlList, _api_call_load,  # noqa: F401
                                    _launch_dump, _launch_load, capture_header, channels,
                                    marked_submissions)
from decoders.session.records import RecordHandlers
from decoders.session.split import Diverged, Front, RemoteLaunchStage, wanted
from decoders.spill import SpillList

PROGRESS_RECORDS = 4096     # records between two calls of decode_capture's `progress`
COLLECT_RECORDS = 1024      # and between two collections of young objects (the reader's
                            # parse contexts are small cycles)


def decode_capture(path, branch=None, launches=True, keep=DEFAULT_KEEP, stream=None,
                   progress=None, brief=None, split=None):
    """Read and decode a whole capture. Problems are collected, never raised, except for a
    file that is not a capture at all (CaptureError) or cannot be opened (OSError).

    Streams: each SUBMISSION is fed to the launch decoder as it is read, and
    `model.submissions` / `model.launches` are SpillLists that keep their first `keep`
    items in memory and the rest in a temporary file, so memory stays flat whatever the
    capture's length (keep=None keeps everything in memory). The model is the same
    either way; an item read back from the file is a fresh copy.
    `stream`: read this instead of opening `path` (decoders/capture/live.py LiveCapture).
    `progress`: called as progress(done, total) every PROGRESS_RECORDS records and once at
    the end, with the bytes of the file read so far and its size (None when not known).
    `brief=N`: for a text report that shows the first N launches and the mismatched ones
    (tracer/report.py launch_limit): launches, API calls, syncs and copies past the first N
    are counted and not kept (model.brief; decoders/spill.py drop=True). Spilling them is a
    quarter of a long decode, and the report never reads them back.
    `split`: decode the SUBMISSION records in a second process (decoders/session/split.py;
    None: where split.wanted() says so). The model is the same either way."""
    gc_was = gc.isenabled()
    gc.disable()   # decoding makes many small acyclic objects: collect young ones by hand
    try:
        front = None
        # (a stream given must be one the front can read too, and this decode again: live)
        if launches and (stream is None or getattr(stream, "live", False)) and \
                (split if split is not None else wanted(path, stream)):
            try:
                front = Front(path, stream)
            except OSError:
                front = None
        if front is None:
            return _decode_capture(path, branch, launches, keep, stream, progress, brief)
        try:
            model = _decode_capture(path, branch, launches, keep, stream, progress, brief,
                                    front)
            model.split = "front"
            return model
        except Diverged as exc:
            why = str(exc)
        finally:
            front.close()
        gc.collect()    # the model given up, and its files
        stream = stream.reopen() if stream is not None else None
        model = _decode_capture(path, branch, launches, keep, stream, progress, brief)
        model.split = f"one process: {why}"
        return model
    finally:
        if gc_was:
            gc.enable()


def _new_model(path, reader, branch, keep, brief=None):
    from decoders.cuda.attribute import Attribution
    from decoders.cuda.calls import ApiCalls
    from decoders.rm.objects import ObjectTree
    meta = reader.meta
    model = CaptureModel(path=str(path), meta=meta, header=capture_header(reader.header))
    model.objects = ObjectTree(branch)
    model.channel_counts, model.rank_counts = {}, {}
    if keep is not None:
        # submissions go in through append_dumped (_submission_raw) when the reader has
        # their fast body parse
        model.submissions = SpillList(keep, load=_submission_load) \
            if _SUBMISSION_BODY is not None else SpillList(keep)
        drop = brief is not None
        short = brief if drop else keep
        model.brief = brief
        model.launches = SpillList(short, _launch_dump, _launch_load, repair_launch, drop=drop)
        model.ioctls = IoctlList(short, drop=drop)
        # items go in through append_dumped: (ApiCall.compact(), (kernel name,) or ())
        model.api_calls = SpillList(short, load=_api_call_load, drop=drop)
        model.syncs = SpillList(short, drop=drop)
        model.copies = SpillList(short, drop=drop)
    model.api = ApiCalls()
    model.attribution = Attribution(model.objects, sm=_sm(meta))
    return model


def _decode_capture(path, branch, launches, keep, stream=None, progress=None, brief=None,
                    front=None):
    stream = open_capture(path) if stream is None else stream
    try:
        reader = CaptureReader(stream, name=str(path))
        if branch is None:
            branch = (str(reader.meta.get("driver", "580")).split(".")[0]) or "580"
        model = _new_model(path, reader, branch, keep, brief if keep is not None else None)
        from decoders.window import Windows
        wins = Windows(reader.meta)     # capture windows: resync points, launches outside
        if front is not None and wins.active:
            raise Diverged("a capture with windows: its streams resync at their edges")
        stage = None if not launches else \
            RemoteLaunchStage(model, model.attribution, front, wins) if front is not None \
            else LaunchStage(model, model.attribution, gpu_family(reader.meta), wins)
        table = RecordHandlers(model, _Budget(model), branch, stage, wins).table
        where = _progress_source(stream, reader) if progress is not None else None
        nrecords = 0
        stopped = False
        # a split decode's front parses the SUBMISSION records: read here unparsed when
        # they are kept as their bytes (records.py: the front gives the counts' parts)
        lazy = ("SUBMISSION",) if front is not None and isinstance(model.submissions,
                                                                  SpillList) \
            and _SUBMISSION_BODY is not None else None
        for rec in reader.records(lazy=lazy):
            nrecords += 1
            if not nrecords % COLLECT_RECORDS:
                gc.collect(0)
                if where is not None and not nrecords % PROGRESS_RECORDS:
                    progress(*where())
            handler = table.get(rec.type)
            if handler is not None and handler(rec) is False:
                stopped = True
                break
        model.records = nrecords
        _finish(model, reader, stage, stopped)
        if wins.active:
            model.windows = wins.finish(model)
        if where is not None:
            progress(*where())
        return model
    finally:
        stream.close()


def _progress_source(stream, reader):
    """() -> (bytes of the capture read so far, their total or None), for progress: over
    the file on disk where open_capture() made the stream (a gzipped capture by its
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
    raw = getattr(stream, "fileobj", None) if isinstance(stream, gzip.GzipFile) else \
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


def _finish(model, reader, stage, stopped):
    """After the last record: the reader's and attribution's problems, a capture cut
    short, the launch stage's end, and the calls that never returned."""
    model.problems[:0] = reader.problems
    model.problems.extend(model.attribution.problems)    # module images that did not decode
    if model.end is None and not stopped and not reader.stopped:
        last = f"after record {model.records - 1}" if model.records else "before any record"
        model.problems.append(CaptureError(
            f"capture cut short: no END record {last}", offset=reader.offset))
    if stage is not None:
        stage.finish(model, reader.problems)
    for call in model.api.unfinished:     # never returned: the process died inside it
        _append_call(model.api_calls, call, ())
        model.api_call_names[call.name] += 1
