"""One local Spark session for the Spark tests (``local[2]``, 2 shuffle partitions, no UI),
started once per package so the JVM starts once. The tests that use it skip when pyspark or a
Java runtime is missing; the layer and import tests need neither."""

from __future__ import annotations

import shutil
import warnings

import pytest


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
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
