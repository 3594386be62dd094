"""The step-wise engine's logs: preallocated NumPy columns, one row per slow step.

A paced loop must not allocate in its hot path (every object it creates is work the
1 ms window pays for, and garbage the collector later walks). :class:`StepLogs` holds
each logged quantity of a run in one array whose leading axis is the slow step,
allocated when the first step's log shows the shapes; each step then copies its values
into row ``k`` (``column[k] = value``, no object created). The site's, the
substructure's and the updater's logs are nested dictionaries of NumPy arrays (the
protocols' logs); a quantity is addressed by its path (``("fast", "force")``).

:class:`StepRow` is slow step ``k`` read back as a nested mapping (``row["fast"]["force"]``
is a view of the column's row ``k``): what the loop's ``check`` and ``on_step`` callbacks
receive. It builds nothing until a key is read, and it stays valid after the step (the
row is never overwritten), so a subscriber may keep it.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

__all__ = ["StepLogs", "StepRow"]


def _leaves(tree, prefix=()):
    """(path, value) of every leaf of a nested mapping (empty mappings: no leaf)."""
    if isinstance(tree, Mapping):
        for key, value in tree.items():
            yield from _leaves(value, prefix + (key,))
    else:
        yield prefix, tree


def _skeleton(tree):
    """The nesting of a mapping, leaves as None (empty mappings kept)."""
    if isinstance(tree, Mapping):
        return {key: _skeleton(value) for key, value in tree.items()}
    return None


class StepLogs:
    """The logs of a run of ``n_steps`` slow steps (module doc).

    Sections (``"fast"``, ``"ns"``, ``"update"``) are stored with :meth:`store`; the
    first call of a section fixes its quantities, their shapes and dtypes (a later step
    with other keys or shapes is an error, as a ragged log would be)."""

    def __init__(self, n_steps: int):
        self.n_steps = int(n_steps)
        self.count = 0  # rows complete (every section of steps 0 … count−1 stored)
        self.columns: dict = {}  # nested like the logs: section -> … -> array (n_steps, …)
        self._plans: dict[str, list] = {}  # section -> [(keys, column)]

    def store(self, section: str, k: int, log) -> None:
        """Copy ``log`` (a nested mapping of arrays) into row ``k`` of ``section``."""
        plan = self._plans.get(section)
        if plan is None:
            plan = self._allocate(section, log)
        for keys, column in plan:
            value = log
            for key in keys:
                value = value[key]
            column[k] = value

    def _allocate(self, section: str, log) -> list:
        plan = []
        skeleton = _skeleton(log)
        for keys, value in _leaves(log):
            value = np.asarray(value)
            column = np.zeros((self.n_steps, *value.shape), dtype=value.dtype)
            node = skeleton
            for key in keys[:-1]:
                node = node[key]
            node[keys[-1]] = column
            plan.append((keys, column))
        self.columns[section] = skeleton
        self._plans[section] = plan
        return plan

    def row(self, k: int) -> "StepRow":
        """Slow step ``k`` as a nested mapping of views (module doc)."""
        return StepRow(self.columns, k)

    def stacked(self, n: int | None = None) -> dict:
        """The first ``n`` rows (default: the complete ones) of every quantity, nested
        like the logs (contiguous copies: the run's result)."""
        n = self.count if n is None else int(n)

        def cut(node):
            if isinstance(node, dict):
                return {key: cut(value) for key, value in node.items()}
            return np.array(node[:n])

        return cut(self.columns) if n > 0 else {}


class StepRow(Mapping):
    """Row ``k`` of nested columns, read as a nested mapping (module doc)."""

    __slots__ = ("_node", "_k")

    def __init__(self, node: dict, k: int):
        self._node, self._k = node, k

    def __getitem__(self, key):
        value = self._node[key]
        if isinstance(value, dict):
            return StepRow(value, self._k)
        return value[self._k]

    def __contains__(self, key) -> bool:
        return key in self._node

    def __iter__(self):
        return iter(self._node)

    def __len__(self) -> int:
        return len(self._node)

    @property
    def step(self) -> int:
        """The slow step this row is."""
        return self._k

    def __repr__(self) -> str:
        return f"StepRow(step {self._k}: {', '.join(map(str, self._node))})"
