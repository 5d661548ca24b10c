"""QMDs -> launches: a QMD found at a VA (SEND_PCAS_A, an inline QMD load, a dependent
pointer) is read from the memory image, its version found, its summary made; enabled
DEPENDENT_QMDn_POINTERs are followed (a CUDA graph replay's chain).
Facts: h100-measured.md section 1 (launch order, cbank0 layout, cluster QMDs)."""
import heapq

from decoders import qmd as qmdmod
from decoders.launch.channel import _problem, _word
from decoders.launch.summary import ARCH_CBANK0, FAMILY_ARCH, MAX_DEPENDENT_CHAIN, Launch, \
    _CLASS_TEXT, _PARAMS, _SUMMARY_PLANS, _already_decoded, _class_text, _remember, _summary_plan

_QMD_IMAGES = {}        # (GPU family, QMD bytes) -> QmdLaunches._image()
# The mark a block of a decode in blocks leaves on a dependent pointer where it knew no
# byte (decoders/session/blocks.py _renumbered takes it off: never in a report)
UNKNOWN = "_unknown"
# What a kernel QMD says of its ordering with other grids (Hopper on): the latch it waits
# on and the one it arrives at (programmatic dependent launch), and its memory sync domain
_ORDER_FIELDS = ("WAIT_ON_LATCH_VALID", "WAIT_ON_LATCH_ID", "ARRIVE_AT_LATCH_VALID",
                 "ARRIVE_AT_LATCH_ID", "SYNC_DOMAIN_ID")
_ORDER_PICKS = {}       # QMD version -> words -> _ORDER_FIELDS values, or None (no such fields)


def _order_pick(version):
    pick = _ORDER_PICKS.get(version, False)
    if pick is False:
        table = qmdmod.TABLES[version]
        pick = _ORDER_PICKS[version] = table.picker(_ORDER_FIELDS) \
            if all(n in table.by_name for n in _ORDER_FIELDS) else None
    return pick


class QmdLaunches:
    """LaunchDecoder's QMD stage (a mixin: it reads the decoder's memory and channels)."""

    def _launch_at(self, ch, va, source, pkt, plan, data=None, depth=0, parent=None):
        """pkt: [0] and [1] are the offset and VA of the packet that led here; plan: its
        class's _ClassPlan."""
        family = plan.family
        if data is None:
            data = self.memory._cached(va, 384)     # the usual case: the QMD just uploaded
            if data is None:
                data = self.read(va, 384) or self.read(va, 256)
        if data is None:
            self.problems.append(_problem(pkt, f"{source}: QMD at {va:#x} not in the reconstructed "
                                               f"memory image"))
            return None
        # A QMD image seen before (the driver's GRID_NULL QMDs of a launch loop cycle through
        # a ring of a few slots with the same bytes) gives the same words, version and parts
        seen = _QMD_IMAGES.get((family, data))
        if seen is None:
            seen = self._image(family, data, va, source, pkt)
            if seen is None:
                return None
        data, words, version, parts = seen
        if self._ran_here(va, data) and not (depth == 0 and self._args_since_chain(va)):
            # sent again in the same submission, not uploaded again (the driver schedules a
            # graph's first node twice in its first replay): it runs once
            return None
        summary, driver = self._summary(va, version, words, parts, family, source, pkt[0],
                                        plan.class_id, parent)
        for sem in summary["semaphores"]:       # the QMD's own releases, for later waits
            self._released(ch, sem)
        launch = Launch(summary, data, None, version, words, driver)
        if summary["kernel"]:
            pick = _order_pick(version)
            if pick is not None:
                # programmatic dependent launch (measured, captures/pdl): the secondary
                # kernel's QMD waits on the latch its primary's QMD arrives at, which the
                # primary reaches at griddepcontrol.launch_dependents or its end
                wait_valid, wait, arrive_valid, arrive, domain = pick(words)
                launch.latch = (wait if wait_valid else None, arrive if arrive_valid else None)
                if wait_valid:
                    summary["programmatic"] = {"waits_on_latch": wait, "after_launch": None}
                if domain:      # a launch with MEM_SYNC_DOMAIN (NCCL's: captures/ddp-2rank)
                    summary["memory_sync_domain"] = domain
        chained = self._chained.pop(va, None) if depth == 0 else None
        if chained is not None and chained[1] == parts[4]:
            self._sent_after_chain(chained[0], launch)
        else:
            self.launches.append(launch)
            chained = None
        self._launched[va] = data
        self._this_submission[va] = (data, self.memory.writes)
        ch.last_launch = launch
        if depth:
            self._chained[va] = (launch, parts[4])
        if chained is None and depth < MAX_DEPENDENT_CHAIN and parts[4]:
            self._walk.append((launch, parts[4], depth))
            if depth == 0:
                walk = self._walk
                while walk:
                    self._follow_dependents(ch, *walk.pop(0), pkt, plan)
        return launch

    def _sent_after_chain(self, chained, launch):
        """`launch`, sent by its own SEND_PCAS_A, is the QMD that a dependent pointer already
        led to in this submission (`chained`, decoded from the bytes there then): it runs
        once, as sent. A graph replay whose nodes the driver rewrites (program address,
        semaphore release) sends the head, whose chain reaches the nodes' earlier bytes, and
        then each node, rewritten, with its SEND_PCAS_A (captures/jax-loops record 10634);
        the chain fires only when the head completes, so the bytes as sent are what runs.
        `launch` takes the chained one's place in the chain (its parent and the dependents
        followed from it: the same pointers) and goes in the order as sent, replacing it."""
        summary, was = launch._summary, chained._summary
        summary["parent_qmd"] = was["parent_qmd"]
        summary["dependents"] = was["dependents"]
        launches = self.launches
        for k in range(len(launches) - 1, -1, -1):
            if launches[k] is chained:
                del launches[k]
                break
        launches.append(launch)

    def _args_since_chain(self, va):
        """The QMD at va, which a dependent pointer reached earlier in this submission, is
        sent by its own SEND_PCAS_A after the argument bytes in its constant bank 0 changed:
        it runs with the bytes as sent. A graph replay whose nodes XLA gave new arguments
        (cuGraphExecKernelNodeSetParams) patches only the changed bytes of each node's bank,
        then sends each node (out/run7 records 10522, 10551, ...: a conditional body's
        nodes); the QMD bytes are the same, so only the bank tells."""
        chained = self._chained.get(va)
        return chained is not None and self._bank_changed(chained[0]._summary) is not None

    def _bank_changed(self, summary):
        """Constant bank 0 of a launch whose argument bytes there are no longer the ones its
        summary read (None: the same, or no arguments or bank)."""
        params = summary.get("params")
        if not params:
            return None
        cb0 = next((cb for cb in summary["constant_buffers"] if cb.get("index") == 0), None)
        if cb0 is None:
            return None
        old = bytes.fromhex(params["hex"])
        return cb0 if self.memory.read_known(cb0["address"] + params["offset"], len(old)) != old \
            else None

    def end_submission(self):
        """The argument bytes of each QMD a dependent chain reached in this submission, read
        again as the submission left them. A chain is followed where its head is sent, but
        a node past a gate runs only when the pushbuffer releases the gate (SEND_PCAS_A with
        DECREMENT_DEPENDENCE), after the inline uploads before it: XLA's graph replays send
        the head, then patch the changed argument bytes of the later nodes' banks
        (cuGraphExecKernelNodeSetParams), then release them (scripts/corpus/train_jax.py:
        records 14199-14200 of its 30-step capture)."""
        for va, (launch, _) in self._chained.items():
            s = launch._summary
            now = self.memory.read_known(va, len(launch.qmd_bytes))
            if len(now) == len(launch.qmd_bytes) and now != launch.qmd_bytes:
                # (not seen: the replays measured patch only the banks) which bytes ran
                # then depends on the gate: say so rather than show one as certain
                self.problems.append(_problem(
                    (s["pushbuf_offset"], None), f"the QMD at {va:#x}, reached by a dependent "
                    "pointer, was written again later in the same submission: the launch "
                    "shows its bytes as the pointer found them"))
            cb0 = self._bank_changed(s)
            if cb0 is not None:
                launch._driver = self._params(s, cb0, s["params"]["arch"])

    def _image(self, family, data, va, source, pkt):
        """(data cut to its version's size, words, version, _SummaryPlan parts) of the QMD
        image `data`, remembered in _QMD_IMAGES; None (a problem) when it has no version."""
        key = (family, data)
        words = qmdmod.words_of(data[:384])
        version = qmdmod.version_of_words(words, prefer_v05=(family == "blackwell"))
        if version is None:
            self.problems.append(_problem(pkt, f"{source}: bytes at {va:#x} carry no known QMD "
                                               f"version (dword 18 = {_word(data, 18):#010x})"))
            return None
        sp = _SUMMARY_PLANS.get(version)
        if sp is None:
            sp = _summary_plan(version)
        if len(data) > sp.size:
            data = data[:sp.size]
        if len(words) != sp.nwords:     # the words of data[:384] are those of data[:size]
            words = qmdmod.padded_words(data, version)
        return _remember(_QMD_IMAGES, key, (data, words, version, sp.parts(words, family)),
                         limit=256)

    def _follow_dependents(self, ch, launch, targets, depth, pkt, plan):
        """Each enabled dependent QMD of `launch` runs when it completes. A target decoded
        before runs again when it is a kernel's QMD not yet run in this submission: a CUDA
        graph's nodes are written once (instantiate, upload or first launch) and each replay
        reaches them through these pointers. Not through the driver's stream-ordering
        GRID_NULL QMDs: a kernel's pointer to the next launch's GRID_NULL, and a GRID_NULL's
        pointer to an earlier launch's QMD, lead to ring slots not yet rewritten, which
        their own SEND_PCAS_A runs."""
        deps = launch._summary["dependents"]
        # A GRID_NULL QMD's pointer leads to an earlier launch's slot of the stream ring:
        # nothing decoded before runs again through it (captures/torch-graph record 1640)
        rerun = launch._summary["qmd_type"] != "GRID_NULL"
        for n, target in targets:
            ran = self._this_submission.get(target)
            if ran is not None and self._ran_here(target, ran[0]):
                deps.append(_already_decoded(target))
                continue
            done = self._launched.get(target)
            if done is not None and self.memory.holds(target, 384, done):
                # the usual case, without reading the bytes out (what the general path below
                # finds for them: 384 known bytes that start with the QMD decoded there)
                if not (rerun and self._runs_again(done, plan, target, pkt)):
                    deps.append(_already_decoded(target))
                    continue
                data = done
            else:
                unknown = getattr(self._launched, "unknown", None)
                if unknown is not None and unknown(target, rerun):
                    # a block of a decode in blocks knows no byte there: what one decode
                    # says of it is the merge's to give (decoders/session/skim.py)
                    deps.append({"pointer": target, "decoded": False, UNKNOWN: True})
                    continue
                data = self.memory.read_known(target, 384)      # self.read(target, 384) when whole
                if len(data) != 384:
                    data = self.read(target, 384) or self.read(target, 256)
                if data is None:
                    if done is None:
                        self._unseen(target, None, False)
                    deps.append({"pointer": target, "decoded": False})
                    continue
                if done is not None and data[:len(done)] == done and \
                        not (rerun and self._runs_again(done, plan, target, pkt)):
                    deps.append(_already_decoded(target))
                    continue
            deps.append({"pointer": target, "decoded": True})
            self._launch_at(ch, target, f"DEPENDENT_QMD{n}_POINTER", pkt, plan, data=data,
                            depth=depth + 1, parent=launch._summary["qmd_address"])
            if done is None:
                img = self._launched.get(target)
                self._unseen(target, img, img is not None and rerun and
                             self._runs_again(img, plan, target, pkt))

    def _unseen(self, va, image, runs_again):
        """A dependent QMD at va with no launch from va seen: decoded here from `image` (as
        launched, or None where its bytes were not known). A block of a decode in blocks
        asks (decoders/session/skim.py _Launched) whether a launch there before the block
        would have made one decode call it "already decoded"."""
        unseen = getattr(self._launched, "unseen", None)
        if unseen is not None:
            unseen(va, image, runs_again)

    def _ran_here(self, va, data):
        """The QMD at va ran in this submission with these bytes, not uploaded since."""
        ran = self._this_submission.get(va)
        return ran is not None and ran[0] == data and self.memory.starts.get(va, 0) <= ran[1]

    def _runs_again(self, data, plan, va, pkt):
        """A QMD decoded before, reached again as a dependent: a kernel's (graph node).
        _QMD_IMAGES is a memo that may have been emptied since (its limit): a miss works
        the parts out again, never reads as "not a kernel" (a long capture's graph replays
        lost their kernels that way)."""
        seen = _QMD_IMAGES.get((plan.family, data))
        if seen is None:
            seen = self._image(plan.family, data, va, "DEPENDENT_QMD", pkt)
        return seen is not None and seen[3][0][1]     # parts -> shape -> kernel

    def _summary(self, va, version, words, parts, family, source, offset, cls, parent):
        """(summary, the driver_constants() key of its constant bank 0 or None)."""
        _, cbanks, cb0, releases, _, proto = parts
        sems = []
        for source_name, fields, pick, reduction in releases:
            address, payload = pick(words)
            sem = {"source": source_name, "address": address, "payload": payload,
                   "fields": fields}
            if reduction is not None:       # an atomic on the word: `payload` is its operand
                sem["reduction"] = reduction
            sems.append(sem)
        # the parts' keys and values (_SummaryPlan.prototype), then this launch's own
        summary = proto.copy()
        summary["qmd_address"] = va
        summary["source"] = source
        summary["parent_qmd"] = parent
        # the SUBMISSION whose pushbuffer wrote this QMD: a CUDA graph replay runs a chain
        # of QMDs written by its first replay or by cuGraphUpload
        summary["qmd_written_by"] = self.memory.written_by.get(va)
        summary["pushbuf_offset"] = offset
        summary["class"] = _CLASS_TEXT.get(cls) or _class_text(cls)
        summary["semaphores"] = sems
        summary["dependents"] = []
        if cb0 is None:
            return summary, None
        return summary, self._params(summary, cbanks[cb0], FAMILY_ARCH.get(family, "sm_90"))

    def _params(self, summary, cb0, arch):
        """summary["params"]; returns the key of summary["cbank0_driver"]
        (driver_constants(), made when the summary is first read: Launch.summary)."""
        base = ARCH_CBANK0[arch]["param_base"]
        address, size = cb0["address"], cb0["size"]
        limit = (size - base) if size > base else 0x8000
        # The argument block is what the stream uploaded to cbank0 + base (h100-measured.md 1
        # step 2); with no such upload in view, the known bytes there (which may run into
        # bytes an earlier launch left in a reused bank).
        uploads, read_known = self._uploads, self.memory.read_known
        uploaded = uploads.get(address + base)
        if uploaded is not None and uploaded <= limit:
            data = read_known(address + base, uploaded)
        else:
            uploaded = None
            data = read_known(address + base, limit)
        # Launches whose bytes are the same get the same (shared, never changed) dicts: a
        # launch loop uploads identical driver constants and arguments again and again.
        key = (arch, data, uploaded is not None)
        params = _PARAMS.get(key)
        if params is None:
            params = _remember(_PARAMS, key, {
                "offset": base, "size": len(data), "hex": data.hex(), "arch": arch,
                "uploaded": uploaded is not None})
        summary["params"] = params
        return arch, read_known(address, base), uploads.get(address)


def run_order(launches):
    """One submission's launches in the order the GPU runs them. A launch that another
    launch's DEPENDENT_QMDn_POINTER leads to runs after that one: a CUDA graph's first
    replay sends each node with its own SEND_PCAS_A, the last node first, and the nodes
    wait for their chain (captures/graph-replay record 797 sends node 2, then node 1, whose
    pointer leads to node 2); later replays send the first node and follow the chain. The
    pointers of the driver's GRID_NULL QMDs, and those to them, order a stream's launches
    across submissions, not these: left out. A pointer to a QMD that this submission sends
    later by its own SEND_PCAS_A orders it too: a first replay may send every node before
    the head (captures/pdl, cupy-fft), each pointing at a slot not yet written. A node that
    the chain reached and that was then rewritten and sent again (_sent_after_chain) is
    listed where it was sent and keeps its parent: it runs after it. Otherwise the order as
    sent is kept.
    Returns `launches` itself when nothing moves; else a new list, and each summary of the
    submission gets "sent_order", its place as sent (0 first)."""
    if len(launches) < 2:
        return launches
    nodes, backward = set(), False      # first, cheaply: can any pointer lead back?
    for launch in launches:
        s = launch._summary
        if s["qmd_type"] != "GRID_NULL":
            backward = backward or any(d["pointer"] in nodes for d in s["dependents"]
                                       if d.get("why") == "already decoded")
            # a node sent after a chain reached it (_sent_after_chain): in the order as sent
            backward = backward or (s["parent_qmd"] is not None and s.get("source") == "SEND_PCAS_A")
            nodes.add(s["qmd_address"])
    if not backward:        # the usual submission: a launch and its GRID_NULL companion
        return launches
    at = {}                 # QMD VA -> positions, in order
    for k, launch in enumerate(launches):
        at.setdefault(launch._summary["qmd_address"], []).append(k)
    after = [[] for _ in launches]      # position -> positions that run after it
    waits = [0] * len(launches)         # position -> launches it runs after
    backward = False
    for k, launch in enumerate(launches):
        s = launch._summary
        if s["qmd_type"] == "GRID_NULL":
            continue
        for d in s["dependents"]:
            where = at.get(d["pointer"], ())
            if d.get("decoded"):        # followed here: the next launch made from it
                t = next((t for t in where if t > k and
                          launches[t]._summary["parent_qmd"] == s["qmd_address"]), None)
                if t is None:       # sent again, rewritten, before its parent was
                    t = next((t for t in where if t != k and
                              launches[t]._summary["parent_qmd"] == s["qmd_address"]), None)
                    backward = backward or t is not None
            elif where:
                # sent by its own SEND_PCAS_A in this submission (decoded before, or not yet
                # written when this one was sent): earlier (a graph's first replay sends the
                # nodes before its head), or later (its gate holds it for this one: the first
                # replay of a programmatic launch's graph sends every node before the head,
                # scripts/corpus/pdl.py); a ring slot of GRID_NULL QMDs orders nothing here
                t = next((t for t in reversed(where) if t < k), None)
                if t is None:
                    t = next((t for t in where if t > k), None)
                if t is not None and launches[t]._summary["qmd_type"] == "GRID_NULL":
                    t = None
                backward = backward or (t is not None and t < k)
            else:
                t = None
            if t is not None:
                after[k].append(t)
                waits[t] += 1
    if not backward:
        return launches
    ready = [k for k in range(len(launches)) if not waits[k]]
    heapq.heapify(ready)
    order = []
    while ready:        # the first as sent of those whose chain has come (Kahn)
        k = heapq.heappop(ready)
        order.append(k)
        for t in after[k]:
            waits[t] -= 1
            if not waits[t]:
                heapq.heappush(ready, t)
    if len(order) < len(launches):      # pointers in a circle (a damaged capture): as sent
        placed = set(order)
        order += [k for k in range(len(launches)) if k not in placed]
    if order == list(range(len(launches))):
        return launches
    for k, launch in enumerate(launches):
        launch._summary["sent_order"] = k
    return [launches[k] for k in order]
