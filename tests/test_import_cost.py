"""``import recoeval_tracking`` loads none of the heavy dependencies until they are used.

Each check runs the import in a fresh interpreter (the test process has most of them loaded
already) and looks at ``sys.modules`` there.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

#: Modules the bare import must not load; each is a separate check.
HEAVY = [
    "mlflow",
    "hydra",
    "omegaconf",
    "matplotlib",
    "dask",
    "numba",
    "pyarrow",
    "pandas",
    "scipy",
    "recoeval_tracking.engine.kernels",
    "recoeval_tracking.engine.topk",
    "recoeval_tracking.engine.ranks",
    "recoeval_tracking.data._synthetic",
    "recoeval_tracking.splitting._split",
    "recoeval_tracking.models._als",
]


@pytest.fixture(scope="module")
def loaded_after_import() -> set[str]:
    code = "import json, sys, recoeval_tracking; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300
    )
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize("module", HEAVY)
def test_bare_import_does_not_load(module: str, loaded_after_import: set[str]) -> None:
    assert module not in loaded_after_import


def test_every_public_name_still_resolves() -> None:
    code = (
        "import json, recoeval_tracking as rt\n"
        "missing = [n for n in rt.__all__ if not hasattr(rt, n)]\n"
        "absent_from_dir = sorted(set(rt.__all__) - set(dir(rt)))\n"
        "print(json.dumps([missing, absent_from_dir, rt.evaluate.__module__,\n"
        "                  rt.Interactions.__name__, rt.metrics.__name__]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=600
    )
    missing, absent, evaluate_module, interactions, metrics = json.loads(
        out.stdout.strip().splitlines()[-1]
    )
    assert missing == []
    assert absent == []
    assert evaluate_module == "recoeval_tracking.metrics.evaluate"
    assert interactions == "Interactions"
    assert metrics == "recoeval_tracking.metrics"


def test_unknown_name_is_an_attribute_error() -> None:
    import recoeval_tracking as rt

    with pytest.raises(AttributeError, match="no_such_name"):
        rt.no_such_name  # noqa: B018


@pytest.mark.parametrize("name", ["Interactions", "Split"])
def test_the_data_and_split_containers_do_not_load_numba(name: str) -> None:
    code = (
        "import sys, recoeval_tracking as rt\n"
        f"rt.{name}\n"
        "print(sorted(m for m in ('numba', 'recoeval_tracking.data._synthetic') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300
    )
    assert out.stdout.strip().splitlines()[-1] == "[]"


def _last_line(code: str) -> str:
    """The last line ``code`` prints in a fresh interpreter."""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=600
    )
    return out.stdout.strip().splitlines()[-1]


def test_the_first_job_compiles_nothing_before_fit() -> None:
    # README's first command generates synthetic data and splits it at random: both in numpy,
    # so a cold numba cache costs nothing before the model (the app compiles the metric kernels
    # in a second process meanwhile)
    code = (
        "import sys, recoeval_tracking as rt\n"
        "from recoeval_tracking.splitting import random_holdout\n"
        "X = rt.make_synthetic(2000, 1000, seed=0)\n"
        "random_holdout(X, seed=0)\n"
        "print(sorted(f'{m}.{n}' for m, mod in list(sys.modules.items())\n"
        "             if m.startswith('recoeval_tracking')\n"
        "             for n, f in vars(mod).items() if getattr(f, 'signatures', None)))\n"
    )
    assert _last_line(code) == "[]"


def test_a_first_evaluation_loads_no_pandas() -> None:
    # pandas is 0.8 s of a new process's first result: the per-user frame is made when read
    # (the means and counts come from its columns)
    code = (
        "import sys, numpy as np, scipy.sparse as sp, recoeval_tracking as rt\n"
        "rng = np.random.default_rng(0)\n"
        "cells = rng.random((30, 50))\n"
        "res = rt.evaluate(sp.csr_array((cells < 0.2) * 1.0), sp.csr_array((cells > 0.9) * 1.0),\n"
        "                  A=rng.random((30, 4)), B=rng.random((50, 4)))\n"
        "before = 'pandas' in sys.modules\n"
        "means = res.means, res.n_users_evaluated, res.metric_columns\n"
        "print(before, 'pandas' in sys.modules, type(res.per_user).__name__)\n"
    )
    assert _last_line(code) == "False False DataFrame"
