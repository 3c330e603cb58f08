"""The package's version, kept in one place (hatchling reads it too)."""

__version__ = "0.1.0"
