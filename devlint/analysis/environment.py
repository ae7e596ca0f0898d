"""The variables of one function run: a dict that remembers what changed since it was forked."""

from __future__ import annotations

from devlint.analysis import facts as F
from devlint.analysis.facts import Value


class Env(dict):
    """Variables to values, remembering which keys changed since it was forked.

    Joins then look at the changed keys only: a 20,000-line function costs
    what its statements cost, not statements times variables.
    """

    def __init__(self, *args: object) -> None:
        super().__init__(*args)
        self.written: set[str] = set()

    def fork(self) -> "Env":
        return Env(self)

    def __setitem__(self, key: str, value: Value) -> None:
        self.written.add(key)
        super().__setitem__(key, value)

    def __delitem__(self, key: str) -> None:
        self.written.add(key)
        super().__delitem__(key)


def join_envs(envs: list[Env], start: Env) -> Env:
    """Where paths forked from `start` meet: what they all agree on, key by key.

    A name bound on one path only is kept (a loop body, an `if` without
    `else`); a name the paths disagree on joins towards unknown.
    """
    changed: set[str] = set()
    for env in envs:
        changed |= env.written
    joined = envs[0].fork()
    for key in changed:
        present = [env[key] for env in envs if key in env]
        if len(present) == len(envs):
            value = present[0]
            for other in present[1:]:
                value = F.join(value, other)
            dict.__setitem__(joined, key, value)
        elif len(present) == 1:
            dict.__setitem__(joined, key, present[0])
        elif key in joined:
            dict.__delitem__(joined, key)
    # The enclosing fork must still see these keys as changed; sharing the set keeps this O(changes).
    start.written |= changed
    joined.written = start.written
    return joined
