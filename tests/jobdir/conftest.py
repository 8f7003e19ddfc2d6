"""Fixtures of the job-folder tests."""

from __future__ import annotations

import importlib

import pytest


@pytest.fixture
def fresh_secrets(monkeypatch):
    """An empty registry of secret values (:mod:`recoeval_tracking.jobdir.redact`) for the
    test: values registered by one test are not redacted in another."""
    module = importlib.import_module("recoeval_tracking.jobdir.redact")
    monkeypatch.setattr(module, "_SECRET_VALUES", set())
