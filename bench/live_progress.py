"""trace-launch with its live decode's progress logged: where a default report's time goes on
a long job (GPU machine). Each progress call of the decode that follows the program
(tracer/live.py) is logged as (seconds since start, capture bytes decoded, file size then),
and when the tracer asks for the decode's end and gets it; the log is written as JSON to
$LIVELOG at exit. The arguments are trace-launch's.

    LIVELOG=live.json python3 bench/live_progress.py -o run.tlc -- python3 train.py
"""
import atexit
import json
import os
import sys
import time

T0 = time.monotonic()
LOG = []


def _at():
    return round(time.monotonic() - T0, 3)


def main():
    import tracer.live as live
    progress, finish = live.LiveDecode._progress, live.LiveDecode.finish

    def logged_progress(self, done, total):
        LOG.append((_at(), done, total))
        return progress(self, done, total)

    def logged_finish(self):
        LOG.append((_at(), "finish-called", None))
        try:
            return finish(self)
        finally:
            # and how it was decoded (decode_capture's model.split: blocks, or why not)
            LOG.append((_at(), "finish-returned", getattr(self.model, "split", None) or
                        repr(self.error)))
    live.LiveDecode._progress = logged_progress
    live.LiveDecode.finish = logged_finish
    atexit.register(lambda: open(os.environ["LIVELOG"], "w").write(json.dumps(LOG)))
    from tracer.cli import trace_launch
    sys.argv[0] = "trace-launch"
    trace_launch(prog_name="trace-launch")


if __name__ == "__main__":
    main()
