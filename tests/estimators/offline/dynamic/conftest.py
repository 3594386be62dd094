"""Puts this folder on ``sys.path`` so the tests can import the shared generator of
synthetic dynamic records (``dynamic_synthetic``) under ``--import-mode=importlib``."""

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
