"""``metrics.backend`` is checked before any data is loaded: ``cuda`` on a machine without a GPU
or CUDA library fails at once, naming the key, what is missing and the extra to install. The
availability probe is replaced, so these tests run the same on machines with and without a GPU."""

from __future__ import annotations

import pytest

from recoeval_tracking import InputError
from recoeval_tracking.app import pipeline
from recoeval_tracking.app.precheck import check_before_load
from recoeval_tracking.engine import backends, cuda_driver

MISSING = (
    "The 'cuda' engine backend cannot run here: no CUDA GPU was found (or its driver, or "
    f"numba-cuda, is missing). It needs an NVIDIA GPU with its driver, numba-cuda and "
    f"CuPy: {cuda_driver.EXTRA}."
)


@pytest.fixture
def probe(monkeypatch):
    """Set what the cuda backend's availability probe answers (None: it can run)."""

    def set_answer(answer: str | None) -> None:
        monkeypatch.setattr(cuda_driver, "unavailable_reason", lambda: answer)
        monkeypatch.setattr(backends, "_UNAVAILABLE", {})  # the probe is asked once a process

    return set_answer


def test_cuda_without_a_gpu_names_the_key_and_the_extra(probe) -> None:
    probe(MISSING)
    with pytest.raises(InputError) as err:
        check_before_load({"metrics": {"k": 10, "backend": "cuda"}})
    text = str(err.value)
    assert text.startswith(
        "metrics.backend must be an engine backend that can run on this "
        "machine; got 'cuda'. The 'cuda' engine backend cannot run here: no "
        "CUDA GPU was found"
    ), text
    assert 'pip install "recoeval_tracking[cuda]"' in text
    assert text.endswith("Or run on the CPU: metrics.backend=cpu.")


def test_cuda_with_a_gpu_and_cpu_pass(probe) -> None:
    probe(None)
    check_before_load({"metrics": {"backend": "cuda"}})
    probe(MISSING)
    check_before_load({"metrics": {"backend": "cpu"}})
    check_before_load({"metrics": {}})


def test_an_unknown_backend_names_the_known_ones() -> None:
    with pytest.raises(InputError, match=r"^metrics.backend must be one of cpu, cuda; got 'tpu'"):
        check_before_load({"metrics": {"backend": "tpu"}})


def test_the_backend_is_checked_before_the_data_is_loaded(probe, monkeypatch, tmp_path) -> None:
    """run_job with metrics.backend=cuda on a machine without a GPU fails before it loads the
    data (which does not exist here) or builds the model."""
    probe(MISSING)

    def must_not_run(*args, **kwargs):
        raise AssertionError("the data was loaded or the model built before the backend check")

    monkeypatch.setattr(pipeline, "load_data", must_not_run)
    monkeypatch.setattr(pipeline, "build_model", must_not_run)
    cfg = {
        "dataset": {"name": "csv", "path": str(tmp_path / "absent.csv")},
        "model": {"name": "popularity"},
        "metrics": {"k": 5, "backend": "cuda"},
        "tracking": {"enabled": False},
    }
    with pytest.raises(InputError, match=r"^metrics.backend must be .*recoeval_tracking\[cuda\]"):
        pipeline.run_job(cfg, tmp_path / "job")
    assert not (tmp_path / "job").exists()
