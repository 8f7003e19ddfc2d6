"""``recoeval_tracking.stats`` stands alone at run time: ``rt.stats`` resolves on first use, and
importing it loads numpy and scipy's sparse arrays (for the errors of ``_validation``) but none
of the package's runs, reports, tracking or app, nor pandas, matplotlib, MLflow, Hydra or numba
(tests/test_layers.py checks the imports in the source; this checks what actually loads)."""

from __future__ import annotations

import json
import subprocess
import sys

CODE = (
    "import json, sys\n"
    "import recoeval_tracking as rt\n"
    "p = rt.stats.wilcoxon_test([1.0, 2.0, 3.0], [0.0, 0.0, 0.0])[1]\n"
    "print(json.dumps([p, sorted(sys.modules)]))\n"
)


def test_the_statistics_load_nothing_of_the_package_above_them():
    out = subprocess.run(
        [sys.executable, "-c", CODE], capture_output=True, text=True, check=True, timeout=300
    )
    p, loaded = json.loads(out.stdout.strip().splitlines()[-1])
    assert p == 0.25  # the exact p of three positive differences, 2 / 2^3
    ours = {m for m in loaded if m.split(".")[0] == "recoeval_tracking"}
    allowed = {"recoeval_tracking", "recoeval_tracking._version", "recoeval_tracking._validation"}
    assert {m for m in ours if not m.startswith("recoeval_tracking.stats")} <= allowed
    heavy = {"pandas", "matplotlib", "mlflow", "hydra", "omegaconf", "numba", "pyarrow", "dask"}
    assert not heavy & {m.split(".")[0] for m in loaded}
