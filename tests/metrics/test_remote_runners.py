"""evaluate(client=...) hands over to the runner registered under "dask": the metrics never import
the Dask layer, which registers its runner when imported (recoeval_tracking.metrics.remote)."""

from __future__ import annotations

import sys

import numpy as np
import pytest
import scipy.sparse as sp

from recoeval_tracking.metrics import remote
from recoeval_tracking.metrics.evaluate import evaluate


def test_the_dask_layer_registers_its_runner():
    from recoeval_tracking.distributed import evaluate_on_dask

    assert remote.remote_runner("dask") is evaluate_on_dask


def test_evaluate_with_a_client_calls_the_registered_runner(monkeypatch):
    calls = []

    def runner(client, train, test, options, **kwargs):
        calls.append((client, options.k, sorted(kwargs)))
        return "the runner's results"

    monkeypatch.setitem(remote.REMOTE_RUNNERS, "dask", runner)
    train = sp.csr_matrix(np.array([[1, 0, 0], [0, 1, 0]], dtype=np.float64))
    test = sp.csr_matrix(np.array([[0, 1, 0], [0, 0, 1]], dtype=np.float64))
    scores = np.array([[0.1, 0.9, 0.3], [0.2, 0.1, 0.8]])
    got = evaluate(train, test, scores=scores, k=2, client="a client")
    assert got == "the runner's results"
    assert calls == [
        (
            "a client",
            2,
            ["A", "B", "item_biases", "item_features", "ranked", "scorer", "scores", "user_ids"],
        )
    ]


def test_a_missing_runner_is_imported_from_its_provider(monkeypatch, tmp_path):
    (tmp_path / "house_fake_provider.py").write_text(
        "from recoeval_tracking.metrics.remote import register_remote_runner\n"
        "def run(*args, **kwargs):\n    return 'fake'\n"
        "register_remote_runner('fake', run)\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(remote.PROVIDERS, "fake", "house_fake_provider")
    monkeypatch.setattr(remote, "REMOTE_RUNNERS", dict(remote.REMOTE_RUNNERS))
    try:
        assert remote.remote_runner("fake")() == "fake"
    finally:
        sys.modules.pop("house_fake_provider", None)


def test_an_unknown_runner_is_named():
    with pytest.raises(LookupError, match="'nowhere'"):
        remote.remote_runner("nowhere")
