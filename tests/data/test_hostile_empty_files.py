"""A data file with no interaction: an empty file and a header-only file were both called "the
file is empty", in a message that named the function (``load_csv: no interactions found``) and
no parameter, so the app could not say which setting to change. Both now name ``path`` and what
the file holds; the app turns it into ``dataset.path`` (its entry point run in this process:
:func:`commands.run_main`, its exit status and output as the command's)."""

from __future__ import annotations

import pytest
from commands import run_main

import recoeval_tracking as rt


@pytest.mark.parametrize(
    ("text", "what"),
    [("", "which is empty"), ("user,item,rating\n", "which has a header line and no row")],
    ids=["empty", "header-only"],
)
def test_a_file_without_rows_names_path(tmp_path, text, what):
    path = tmp_path / "data.csv"
    path.write_text(text)
    with pytest.raises(rt.InputError) as err:
        rt.load_dataset("csv", path=str(path), sep=",", header=True)
    message = str(err.value)
    assert message.startswith("The 'path' parameter of load_csv must be a file with at least one")
    assert f"'{path}', {what}" in message


def test_the_app_names_dataset_path(tmp_path):
    (tmp_path / "header.csv").write_text("user,item,rating\n")
    proc = run_main(
        ["dataset=csv", "dataset.path=header.csv", "model=popularity", "tracking=none"],
        tmp_path,
    )
    assert proc.returncode == 2, proc.stderr[-2000:]
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("recoeval-track: dataset.path: The 'path' parameter of load_csv")
    assert "header line and no row" in last
