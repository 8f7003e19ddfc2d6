"""Tests of the metric definitions: the slow reference and the engine held to it."""
