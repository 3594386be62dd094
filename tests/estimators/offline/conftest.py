"""Fixtures of the offline-fitting tests; puts this folder on ``sys.path`` so the tests
can import the shared synthetic-data generators (``offline_synthetic``) under the
``--import-mode=importlib`` of the suite."""

import os
import sys

import numpy as np
import pytest

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
