"""DuckDB SQL of the platform model (loaded with importlib.resources)."""
