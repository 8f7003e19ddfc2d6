"""Models of the example project: not recoeval_tracking's, only keeping its small protocol."""
