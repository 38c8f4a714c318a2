"""phaseline's shared core: errors, table schemas, the store, Java helpers and the CLI."""

__version__ = "0.1.0"
