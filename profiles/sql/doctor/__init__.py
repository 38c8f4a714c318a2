"""DuckDB SQL of ``phaseline doctor``: one heuristic per ``.sql`` file (see :mod:`profiles.doctor`)."""
