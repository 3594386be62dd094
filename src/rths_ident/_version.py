"""The package's version (one place; the package face and the records read it)."""

__version__ = "0.1.0"
