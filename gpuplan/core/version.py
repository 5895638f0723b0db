"""The package version (one place; the root package and every output read it)."""

__version__ = "0.1.0"
