"""ArviZ, imported without its once-a-day announcement.

ArviZ ≥ 0.22 warns at import, once a day per user (a stamp in its cache folder), that
it "is undergoing a major refactor" (a FutureWarning from arviz/__init__.py). It is
about ArviZ's future API, not about anything rths_ident or its user does, and it lands
in the middle of a ``rths-ident fit --method bayes`` report. Only that message is
ignored, only during the import; every other warning passes.
"""

from __future__ import annotations

import warnings


def import_arviz():
    """The ``arviz`` module (imported on demand: it is heavy)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"\s*ArviZ is undergoing a major refactor", category=FutureWarning)
        import arviz  # noqa: PLC0415
    return arviz
