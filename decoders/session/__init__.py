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

from decoders.capture.reader import CaptureReader, open_capture
from decoders.errors import CaptureError
from decoders.session.budget import (KEPT_BYTES, KEPT_ENTRIES, KEPT_IMAGES,  # noqa: F401
                                     KEPT_OPEN_CALLS, STRING_CUT, _Budget)
from decoders.session.entries import (_GP_KEYS, _SUBMISSION_BODY, _append_call,  # noqa: F401
                                      _at_record, _gp_entry, _submission_load, _submission_raw)
from decoders.session.launches import (MISMATCHED_KEPT, TALLY_KEYS, _VERIFIED, LaunchStage,  # noqa: F401
                                       gpu_family, _resolve_launch, _sm, _tally, repair_launch)
from decoders.session.model import (DEFAULT_KEEP, CaptureModel, IoctlList, _api_call_load,  # noqa: F401
                                    MarkedRecords, _launch_dump, _launch_load, capture_header,
                                    channels, mark_pairs, marked_submissions)
from decoders.session import shard
from decoders.session.records import RecordHandlers
from decoders.session.whole import (COLLECT_RECORDS, PROGRESS_RECORDS,  # noqa: F401
                                    _finish, _new_model, _progress_source, capture_marks)
from decoders.session.split import Diverged, Front, RemoteLaunchStage, wanted
from decoders.spill import SpillList


def decode_capture(path, branch=None, launches=True, keep=DEFAULT_KEEP, stream=None,
                   progress=None, brief=None, split=None, full_blocks=False, until=None,
                   prerender=None):
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
    None: where split.wanted() says so). A brief decode is first tried in blocks side by
    side (decoders/session/shard.py: where shard.shards() > 1), and so is a full one
    (brief None) with `full_blocks` (the JSON report: its lists then read each block's
    files in turn, decoders/spill.py SpillChain). The model is the same either way.
    `until(model)`: asked every COLLECT_RECORDS records; once true the decode stops there,
    as a budget stops it (no "cut short" problem), with model.until_record the records
    read: what one launch's story needs (tracer/explain) is early in a long job. A split
    decode's front is then stopped, not waited for: the launches it still held (those
    after the last one handed over) are not in the model.
    `prerender`: an object whose attach(model) is called with the model of a decode not in
    blocks as it starts (tracer/prerender.py: the JSON's lists rendered meanwhile)."""
    gc_was = gc.isenabled()
    gc.disable()   # decoding makes many small acyclic objects: collect young ones by hand
    try:
        why = None
        live = stream is not None and getattr(stream, "live", False)
        if launches and (brief is not None or full_blocks) and keep is not None and \
                until is None and (stream is None or live) and shard.shards() > 1:
            try:
                return shard.decode_sharded(path, shard.shards(), brief, progress, stream)
            except shard.Diverged as exc:
                why = str(exc)
                gc.collect()
                stream = stream.reopen() if live else None
        model = _decode_unsharded(path, branch, launches, keep, stream, progress, brief,
                                  split, until, prerender)
        if why is not None:
            model.split = f"{model.split or 'one process'} (not sharded: {why})"
        return model
    finally:
        if gc_was:
            gc.enable()


def _decode_unsharded(path, branch, launches, keep, stream, progress, brief, split,
                      until=None, prerender=None):
    front = None
    # (a stream given must be one the front can read too, and this decode again: live)
    if launches and (stream is None or getattr(stream, "live", False)) and \
            (split if split is not None else wanted(path, stream)):
        try:
            front = Front(path, stream)
        except OSError:
            front = None
    if front is None:
        return _decode_capture(path, branch, launches, keep, stream, progress, brief,
                               until=until, prerender=prerender)
    try:
        model = _decode_capture(path, branch, launches, keep, stream, progress, brief,
                                front, until, prerender)
        model.split = "front"
        return model
    except Diverged as exc:
        why = str(exc)
    finally:
        front.close()
    gc.collect()    # the model given up, and its files
    stream = stream.reopen() if stream is not None else None
    model = _decode_capture(path, branch, launches, keep, stream, progress, brief,
                            until=until, prerender=prerender)
    model.split = f"one process: {why}"
    return model


def _decode_capture(path, branch, launches, keep, stream=None, progress=None, brief=None,
                    front=None, until=None, prerender=None):
    stream = open_capture(path) if stream is None else stream
    try:
        reader = CaptureReader(stream, name=str(path))
        if branch is None:
            branch = (str(reader.meta.get("driver", "580")).split(".")[0]) or "580"
        model = _new_model(path, reader, branch, keep, brief if keep is not None else None)
        if prerender is not None:
            prerender.attach(model)
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
            if until is not None and not nrecords % COLLECT_RECORDS and until(model):
                model.until_record = nrecords
                stopped = True
                break
        model.records = nrecords
        # stopped by `until`: the front (which reads on) is stopped, not waited for
        _finish(model, reader, None if front is not None and model.until_record is not None
                else stage, stopped)
        if wins.active:
            model.windows = wins.finish(model)
        if where is not None:
            progress(*where())
        return model
    finally:
        stream.close()


