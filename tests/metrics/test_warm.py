"""The child process that compiles the kernels while a job loads and fits (metrics/warm.py)."""

from __future__ import annotations

import subprocess

import numpy as np

from recoeval_tracking import _heartbeat
from recoeval_tracking.metrics import warm
from recoeval_tracking.options import EvalOptions


def test_the_child_compiles_for_the_options_and_exits_cleanly():
    options = EvalOptions.from_config({"names": ["p", "ndcg", "roc_auc"], "k": 5}, nthreads=2)
    w = warm.start(options, "float64")
    proc = w.proc
    assert w.wait("float64", timeout=300)
    assert w.proc is None and w.waited > 0
    assert proc.stdout.closed  # the pipe of its line to the job, closed once it has ended


def test_a_job_scoring_in_another_dtype_stops_the_child_without_waiting():
    options = EvalOptions.from_config({"names": ["p"], "k": 5})
    w = warm.start(options, "float32")
    proc = w.proc
    assert not w.wait(np.float64)
    assert proc.poll() is not None and w.waited == 0.0
    assert proc.stdout.closed


def test_no_child_is_waited_for_when_it_could_not_start(monkeypatch):
    def refuse(*a, **kw):
        raise OSError("no more processes")

    monkeypatch.setattr(subprocess, "Popen", refuse)
    w = warm.start(EvalOptions.from_config({"names": ["p"], "k": 5}), "float32")
    assert not w.wait("float32")


def test_compile_for_runs_an_evaluation_of_the_options():
    """In this process: every option the app passes is accepted on the tiny input."""
    for section, column in (
        ({"names": ["standard"], "k": 10, "cumulative": True, "ties": "noise"}, "roc_auc"),
        ({"names": ["p", "ap"], "k": 3, "ties": "average"}, "ap_at_3"),
    ):
        res = warm.compile_for(EvalOptions.from_config(section, nthreads=1), "float64")
        assert len(res.per_user) == 40
        assert np.isfinite(res.per_user[column]).sum() > 20


def test_the_dtype_waited_for_is_the_one_the_engine_scores_in():
    f32, f64 = np.zeros((2, 2), np.float32), np.zeros((2, 2))
    assert warm.score_dtype({"A": f32, "B": f32}) == "float32"
    assert warm.score_dtype({"A": f32, "B": f64}) == "float64"  # mixed factors: float64
    assert warm.score_dtype({"scores": f32}) == "float32"
    assert warm.score_dtype({"ranked": np.zeros((2, 3), np.int64)}) is None
    w = warm.start(EvalOptions.from_config({"names": ["p"], "k": 5}), "float32")
    proc = w.proc
    assert not w.wait_for({"ranked": np.zeros((2, 3), np.int64)})  # no score kernel: no wait
    assert proc.poll() is not None and w.waited == 0.0


def test_a_wait_for_a_running_child_is_said(caplog):
    import logging
    import sys

    # a child still at work when the job reaches its evaluation: one line, then the wait
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.5)"])
    w = warm.WarmUp(proc, "float32")
    with caplog.at_level(logging.INFO, logger="recoeval_tracking.metrics.warm"):
        assert w.wait("float32", timeout=60)
    assert "waiting for the metric kernels compiling in a second process" in caplog.text
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait()
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="recoeval_tracking.metrics.warm"):
        assert warm.WarmUp(done, "float32").wait("float32")
    assert caplog.text == ""  # a child already done: nothing to say


def test_a_long_wait_says_it_is_still_compiling_and_runs_what_the_job_needs_next(
    caplog, monkeypatch
):
    import logging
    import sys
    import threading

    monkeypatch.setattr(_heartbeat, "TICK_SECONDS", 0.05)
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.6)"])
    ran = []
    w = warm.WarmUp(proc, "float32")
    with caplog.at_level(logging.INFO, logger="recoeval_tracking.metrics.warm"):
        assert w.wait(
            "float32", timeout=60, meanwhile=lambda: ran.append(threading.current_thread())
        )
    said = [r.getMessage() for r in caplog.records]
    assert said[0] == "waiting for the metric kernels compiling in a second process..."
    assert len(said) >= 4 and all(
        s.startswith("... still compiling the metric kernels (") for s in said[1:]
    )
    # what the job needs next ran in another thread, during the wait
    assert len(ran) == 1 and ran[0] is not threading.current_thread()
    # a failure there is the job's to meet later, not the wait's
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.2)"])
    assert warm.WarmUp(proc, "float32").wait("float32", meanwhile=lambda: 1 / 0)


def test_a_child_past_the_longest_wait_is_stopped(monkeypatch):
    import sys

    monkeypatch.setattr(_heartbeat, "TICK_SECONDS", 0.05)
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    w = warm.WarmUp(proc, "float32")
    assert not w.wait("float32", timeout=0.2)
    assert proc.poll() is not None and w.proc is None


def test_what_the_job_needs_next_waits_for_the_childs_callees():
    """The job's preload starts when the child says its kernel's callees are compiled (one core
    is then free), not while both cores still compile; or when the child has ended."""
    import sys
    import threading

    script = "import sys; sys.stdin.readline(); sys.stdout.write('x\\n'); sys.stdout.flush()"
    script += "; sys.stdin.readline()"
    pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE}
    proc = subprocess.Popen([sys.executable, "-c", script], **pipes)
    ran = threading.Event()
    side = threading.Thread(target=warm._after_callees, args=(proc, ran.set))
    side.start()
    assert not ran.wait(0.3)  # the child is still compiling its callees
    proc.stdin.write(b"\n")  # ... and now says it is done
    proc.stdin.flush()
    assert ran.wait(30)
    side.join(30)
    assert proc.poll() is None  # before the child's end: during the kernel's own compile
    proc.stdin.close()
    proc.wait(30)
    proc.stdout.close()
    # a child that ends without the line (a cached kernel, a failure): the preload runs then
    quiet = subprocess.Popen([sys.executable, "-c", "pass"], stdout=subprocess.PIPE)
    ran.clear()
    warm._after_callees(quiet, ran.set)
    assert ran.is_set() and quiet.wait(30) == 0
    quiet.stdout.close()


def test_the_child_tells_the_job_its_line():
    import io

    out = io.BytesIO()
    warm._tell_job(out)
    assert out.getvalue() == warm.CALLEES_DONE == b"callees compiled\n"
    closed = io.BytesIO()
    closed.close()
    warm._tell_job(closed)  # a job gone: nothing to tell, no error
