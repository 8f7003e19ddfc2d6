"""The package's version: one constant, read by setuptools for the build (pyproject's dynamic
``version``), re-exported as ``recoeval_tracking.__version__``, and imported by the modules that
record it (``job.json``, ``--version``) without loading the package's top ``__init__``."""

__version__ = "0.1.0"
