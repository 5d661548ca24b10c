"""API calls made with the same argument words share what those words alone decide
(calls._SAME_ARGS: name, kind, named arguments, a LAUNCH's launch_config), and the launches
of one call share its attribution "api_call" dict (ApiCall.api_call_json). Checked against
the general path (nothing remembered) on real captures, where the memo must not be taken
(LAUNCH_EX: its config comes from the call's sections), and for independence: a summary or
a call's JSON handed out has its own copies."""

import pytest

from decoders.capture.reader import read_capture
from decoders.cuda import calls as C
from decoders.session import decode_capture

from tests.conftest import SMALL, capture_path as _path


def _calls(name, remembered):
    _, records = read_capture(_path(name))
    out = []
    for rec in records:
        if rec.type != "API_ENTER":
            continue
        if not remembered:
            C._SAME_ARGS.clear()        # the general path: worked out from the words
        out.append(C.ApiCall(rec))
    return out


@pytest.mark.parametrize("name", SMALL + ["launch-loop-10k"])
def test_calls_from_remembered_args_equal_general_path(name):
    C._SAME_ARGS.clear()
    fast = _calls(name, True)
    slow = _calls(name, False)
    assert fast
    for a, b in zip(fast, slow, strict=True):
        assert (a.name, a.kind, a.args, a.launch_config, a.params, a.sections) == \
               (b.name, b.kind, b.args, b.launch_config, b.params, b.sections)
        assert a.to_json() == b.to_json()
        assert a.args is not b.args


def test_launch_ex_config_is_not_remembered():
    """cuLaunchKernelEx: the grid is in its LAUNCH_CONFIG section, not its argument words."""
    C._SAME_ARGS.clear()
    calls = [c for name in SMALL for c in _calls(name, True) if c.kind == "LAUNCH_EX"]
    if not calls:
        pytest.skip("no cuLaunchKernelEx in the captures")
    for c in calls:
        (_, _, _, config), = [v for k, v in C._SAME_ARGS.items() if k[0] == c.slot
                              and v[0] == c.name][:1]
        assert config is None
        assert c.launch_config is not None and c.launch_config["grid"] is not None


def test_same_words_share_one_config_and_copies_are_own():
    C._SAME_ARGS.clear()
    launches = [c for c in _calls("launch-loop-10k", True) if c.kind == "LAUNCH"]
    assert len(launches) > 100
    a, b = launches[-2], launches[-1]
    assert a.launch_config is b.launch_config            # shared while decoding
    ja = a.to_json()
    ja["launch"]["grid"].append(7)
    ja["launch"]["attributes"].append({})
    assert b.to_json()["launch"] == b.launch_config and len(b.launch_config["grid"]) == 3


@pytest.mark.parametrize("keep", [None, 0])
def test_launch_summaries_get_own_api_call(keep):
    """The GRID_NULL and kernel QMD of one cuLaunchKernel share its api_call dict while
    decoding; each summary read has its own (attribution's is the summary's)."""
    model = decode_capture(_path("builtin-vadd"), keep=keep)
    with_call = [l for l in model.launches if l.summary.get("api_call")]
    for l in with_call:
        s = l.summary
        assert s["attribution"]["api_call"] is s["api_call"]
    by_call = {}
    for l in with_call:
        if l.summary["api_call"]["launch"] is not None:
            by_call.setdefault(l.summary["api_call"]["index"], []).append(l.summary)
    s0, s1 = next(v for v in by_call.values() if len(v) >= 2)[:2]     # GRID_NULL, kernel
    want = dict(s1["api_call"], launch=dict(s1["api_call"]["launch"]))
    s0["api_call"]["name"] = "changed"
    s0["api_call"]["launch"]["grid"].append(0)
    assert s1["api_call"] == want and s1["api_call"]["launch"]["grid"] == want["launch"]["grid"]
