"""Facts kept across versions of a document (devlint.statement_facts)."""

from __future__ import annotations

import libcst as cst

from devlint.config import Settings
from devlint.statement_facts import StatementFacts


def test_a_fact_is_computed_once_per_node_and_context() -> None:
    facts = StatementFacts()
    node = cst.parse_statement("def f(x):\n    return x\n")
    calls: list[str] = []

    def compute(tag: str) -> str:
        calls.append(tag)
        return tag

    assert facts.remember(node, "what", ("imports", 1), lambda: compute("a")) == "a"
    assert facts.remember(node, "what", ("imports", 1), lambda: compute("b")) == "a"
    # Another context (the file's imports changed): computed again.
    assert facts.remember(node, "what", ("imports", 2), lambda: compute("c")) == "c"
    # Another node of the same code is another node: libcst nodes are compared by identity.
    twin = cst.parse_statement("def f(x):\n    return x\n")
    assert facts.remember(twin, "what", ("imports", 2), lambda: compute("d")) == "d"
    assert calls == ["a", "c", "d"]


def test_a_fact_no_version_asks_for_is_forgotten_after_the_next() -> None:
    facts = StatementFacts()
    node = cst.parse_statement("x = 1\n")
    calls: list[int] = []
    facts.remember(node, "what", None, lambda: calls.append(1))
    facts.keep_only([node])  # version 1 done: asked, kept
    facts.remember(node, "what", None, lambda: calls.append(2))
    facts.keep_only([node])  # version 2 asked again: kept
    facts.keep_only([node])  # version 3 did not ask
    facts.remember(node, "what", None, lambda: calls.append(3))
    assert calls == [1, 3]


def test_the_worker_reads_a_function_the_edit_left_alone_once(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # The local bindings of every function but `evaluate`, the one the edit changed (and the
    # incremental parser parsed again), are read from its code on the first version only.
    from devlint.names import LocalBindings
    from devlint.server.jobs import Job
    from devlint.server.worker import Worker

    text = (
        "import torch\n\n\n"
        "def train(model, loader, device):\n    for x in loader:\n        model(x.to(device))\n\n\n"
        "def log(y):\n    print(y)\n\n\n"
        "def evaluate(model, loader):\n    for x in loader:\n        model(x)\n\n\n"
        "def report(z):\n    print(z)\n\n\n"
        "model = torch.nn.Linear(2, 2).cuda()\n"
    )
    seen: list[str] = []
    original = LocalBindings.of

    def spy(func, walrus=True):  # type: ignore[no-untyped-def]
        seen.append(func.name.value if isinstance(func, cst.FunctionDef) else "<lambda>")
        return original(func, walrus)

    monkeypatch.setattr(LocalBindings, "of", staticmethod(spy))
    worker = Worker()
    first = worker.handle(Job("check", "doc", "f.py", text, Settings())).findings
    assert sorted(set(seen)) == ["evaluate", "log", "report", "train"]
    seen.clear()
    edited = text.replace("model(x)\n", "model(x + 1)\n")
    second = worker.handle(Job("check", "doc", "f.py", edited, Settings())).findings
    assert seen == ["evaluate"]
    assert [f.code for f in first] == [f.code for f in second] == ["DL101"]
