"""Baseline models (placeholder registry while the modules are written)."""
from ._als import ALSModel
