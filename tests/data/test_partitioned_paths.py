"""A partitioned dataset's manifest names its part files; every name must stay inside the
dataset's ``users/`` folder. The existence check compared base names only, so a manifest naming
``users/../../outside/part-000000.parquet`` was read from outside the dataset."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
import scipy.sparse as sp

from recoeval_tracking._validation import InputError
from recoeval_tracking.data import open_partitioned, write_partitioned
from recoeval_tracking.data._partitioned import LAYOUT_FILE


def _dataset(root):
    rng = np.random.default_rng(0)
    train = sp.csr_array((rng.random((12, 6)) < 0.4).astype(np.float64))
    test = sp.csr_array(((rng.random((12, 6)) < 0.3) & (train.toarray() == 0)).astype(float))
    write_partitioned(root, train, test, users_per_part=6)
    return root


def _rename_first_part(root, name: str) -> None:
    manifest = json.loads((root / LAYOUT_FILE).read_text())
    manifest["parts"][0]["file"] = name
    (root / LAYOUT_FILE).write_text(json.dumps(manifest))


@pytest.mark.parametrize(
    "name",
    [
        "users/../../outside/part-000000.parquet",
        "../outside/part-000000.parquet",
        "users/sub/../../../outside/part-000000.parquet",
        "ABSOLUTE",
        "items.parquet",
    ],
)
def test_a_part_named_outside_the_users_folder_is_refused(tmp_path, name):
    root = _dataset(tmp_path / "data" / "ds")
    outside = tmp_path / "data" / "outside" if name != "ABSOLUTE" else tmp_path / "abs"
    outside.mkdir(parents=True)
    # a file with the same base name as a real part, where the manifest points
    shutil.copy(root / "users" / "part-000000.parquet", outside / "part-000000.parquet")
    if name == "ABSOLUTE":
        name = str(outside / "part-000000.parquet")
    _rename_first_part(root, name)
    with pytest.raises(
        InputError, match=rf"manifest {LAYOUT_FILE} .* must name files inside users/"
    ):
        ds = open_partitioned(root)
        ds.check_files()
        ds.read_parts(0, 1)


def test_a_part_name_that_normalises_inside_is_read(tmp_path):
    root = _dataset(tmp_path / "ds")
    want = open_partitioned(root).read_parts(0, 1)
    _rename_first_part(root, "users/./part-000000.parquet")
    got = open_partitioned(root).read_parts(0, 1)
    assert (got[0] != want[0]).nnz == 0 and (got[1] != want[1]).nnz == 0
