"""DuckDB SQL of the profiles stage: one concept per ``.sql`` file (see :mod:`profiles.queries`)."""
