"""HTML template and stylesheet of the offline report (see :mod:`profiles.report`)."""
