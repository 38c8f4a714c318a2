"""HiTune-style dataflow analysis: the specification language, reconstruction from samples, plots."""
