"""The recoeval-track configs (YAML), shipped as the package recoeval_tracking.configs."""
