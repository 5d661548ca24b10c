"""What a decode keeps in memory of a capture, counted: past a limit it reports once and
keeps less (bodies, images) or stops (entries, open calls)."""
import hashlib

from decoders.capture.reader import cstr
from decoders.capture.writer import capture_gpus
from decoders.cubin import bytes_in_use
from decoders.errors import CaptureError
from decoders.spill import BytesSpill, SpilledBytes

# What a decode keeps in memory of an untrusted capture (issue 20: 512 MiB peak RSS for
# any input). Submissions, launches and API calls spill to a file past `keep`; the other
# records each leave an entry in memory (an ioctl ~1.6 KB with its body, a NOTE ~0.5 KB),
# so a capture of identical records gzips ~1000:1 and a 1 MB file could hold millions.
# Measured (trace-decode, one core): 300,000 ioctl records 500 MB and 21 s; 600 ioctls with
# 1 MiB argument copies 1.27 GB. The real recordings stay far below: launch-loop-10k keeps
# 572 such entries, torch-small a few thousand.
KEPT_ENTRIES = 200_000    # ioctl/mmap/open/mark/note/process records: then decoding stops
KEPT_OPEN_CALLS = 100_000  # API_ENTER records without their API_EXIT yet: likewise
# ioctl entries past a decode's first few are written to its file without their bodies
# (~0.4 KB each), or counted and dropped by a brief decode (model.IoctlList): not
# KEPT_ENTRIES, which is memory, but this many to the file; a job without a caching
# allocator makes ~440 ioctls a step (PyTorch, PYTORCH_NO_CUDA_MEMORY_CACHING=1, measured)
SPILLED_IOCTLS = 4_000_000
KEPT_IMAGES = 128 << 20   # module image bytes kept (for kernel names, cubins): then not kept
IMAGE_IN_MEMORY = 64 << 10  # an image this size or larger is kept in a file (BytesSpill): a
                            # cuDNN job's fatbins held 54 MiB of a 200 MiB decode (train_loader.py)
SPILLED_IMAGES = 1 << 30    # whole image bytes kept in that file, at most (the budget above
                            # counts the entries the capture's GPUs may run)
KEPT_BYTES = 128 << 20    # ioctl bodies kept in memory (the first few entries: the views
                          # read each ioctl's facts, decoders/ioctl.py) and capture strings
                          # kept: then bodies are dropped
STRING_CUT = 256          # and each later string is cut to this many bytes
_KEPT_TYPES = frozenset(("IOCTL", "MMAP", "MUNMAP", "MREMAP", "OPEN", "CLOSE", "MARK", "NOTE",
                         "PROCESS_START", "PROCESS_ENV", "UNFINISHED"))


class _Budget:
    """Counts what the model keeps of the capture; reports once when a limit is reached."""

    def __init__(self, model):
        self.model = model
        self.entries = 0
        self.ioctls = 0         # ioctl entries written to a file (model.IoctlList)
        self.bytes = 0
        self.over = False
        self.images = 0
        self.images_spilled = 0     # whole lengths of the images kept in a file
        self.images_over = False
        self.image_keys = {}    # (length, SHA-256) -> the kept bytes of that image
        self.image_ids = {}     # id(kept bytes) -> its key
        self._spill = None      # BytesSpill of the images kept in a file
        self.sms = capture_gpus(getattr(model, "meta", None) or {})

    def entry(self, rec):
        """False when this record is one entry past KEPT_ENTRIES (decoding then stops)."""
        return self._within(rec, "entries", KEPT_ENTRIES, "ioctl, mmap, open, mark and note "
                            "records, whose entries the decoder keeps in memory")

    def spilled_ioctl(self, rec):
        """False when this ioctl is one past SPILLED_IOCTLS, all counted (decoding then
        stops)."""
        return self._within(rec, "ioctls", SPILLED_IOCTLS, "ioctl records, whose entries past "
                            "the first few the decoder writes to a file")

    def _within(self, rec, counter, limit, what):
        n = getattr(self, counter) + 1
        setattr(self, counter, n)
        if n <= limit:
            return True
        self.stop(rec, f"the capture has more than {limit} {what}")
        return False

    def stop(self, rec, why):
        self.model.problems.append(CaptureError(
            f"decoding stopped at record {rec.index}: {why} (the report covers the records "
            f"before it)", offset=rec.offset))

    def image(self, data, rec):
        """The bytes to keep of a module image, or None once KEPT_IMAGES is spent. Each
        distinct image counts once (SHA-256 and length): the ranks of a job load the same
        libraries, and an image they share is kept once, as these same bytes (issue 26)."""
        key = self.image_ids.get(id(data))      # the same bytes object (an IMAGE_REF)
        if key is None:
            if data.__class__ is SpilledBytes:  # (an IMAGE_REF to an image kept in the file)
                return data
            key = (len(data), hashlib.sha256(data).digest())
        kept = self.image_keys.get(key)
        if kept is not None:
            return kept
        # an image kept in a file counts as the exit step keeps it: the fatbin entries the
        # capture's GPUs may run (a library's cubins for other generations spent the
        # budget while the program ran, and not once its capture was rewritten: held-out
        # mix3's); its whole length counts against SPILLED_IMAGES. One kept in memory
        # counts whole (memory stays bounded whatever entries an image claims).
        spilled = len(data) >= IMAGE_IN_MEMORY
        self.images += bytes_in_use(data, self.sms) if spilled and self.sms else len(data)
        self.images_spilled += len(data) if spilled else 0
        if self.images <= KEPT_IMAGES and self.images_spilled <= SPILLED_IMAGES:
            if spilled:
                if self._spill is None:
                    self._spill = BytesSpill()
                data = self._spill.put(data, key)
            self.image_keys[key] = data     # kept alive here, so its id stays its own
            self.image_ids[id(data)] = key
            return data
        if not self.images_over:
            self.images_over = True
            limit = f"{KEPT_IMAGES // (1 << 20)} MiB in all" if self.images > KEPT_IMAGES \
                else f"{SPILLED_IMAGES // (1 << 20)} MiB as recorded"
            self.model.problems.append(CaptureError(
                f"record {rec.index}: module images pass {limit}; this and later images are "
                f"not kept (their kernels keep the names the calls give, without a cubin)",
                offset=rec.offset))
        return None

    def keep(self, n, rec):
        """Whether n more bytes of a body or string may be kept."""
        self.bytes += n
        if self.bytes <= KEPT_BYTES:
            return True
        if not self.over:
            self.over = True
            self.model.problems.append(CaptureError(
                f"record {rec.index}: ioctl bodies and strings of the capture pass "
                f"{KEPT_BYTES // (1 << 20)} MiB; from here ioctls keep their summary and names, "
                f"not their bodies, and strings are cut to {STRING_CUT} bytes", offset=rec.offset))
        return False

    def text(self, raw, rec):
        """cstr(raw), cut to STRING_CUT bytes once KEPT_BYTES is spent."""
        if self.keep(len(raw), rec) or len(raw) <= STRING_CUT:
            return cstr(raw)
        return cstr(bytes(raw)[:STRING_CUT])


