"""One local Spark session for the Spark tests (``local[2]``, 2 shuffle partitions, no UI, a
JVM tuned for short runs), started once per package so the JVM starts once. The tests that use it skip when pyspark or a
Java runtime is missing; the layer and import tests need neither."""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import pytest

#: pyspark's warnings about pandas 3, not ours.
_QUIET = (
    "ignore:PySpark does not yet fully support pandas",
    "ignore:The copy keyword is deprecated",
)


def pytest_collection_modifyitems(items):
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            for rule in _QUIET:
                item.add_marker(pytest.mark.filterwarnings(rule))


@pytest.fixture(scope="package")
def spark():
    pytest.importorskip("pyspark")
    if shutil.which("java") is None:
        pytest.skip("no Java runtime (java not on PATH)")
    from pyspark.sql import SparkSession

    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas")
    session = (
        SparkSession.builder.master("local[2]")
        .appName("recoeval-tests")
        .config("spark.ui.enabled", "false")
        # a JVM that lives for the tests' small jobs: the quick JIT tier only and one GC thread
        # (its CPU seconds over tests/spark: 27-30 against 58 with the server defaults)
        .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
