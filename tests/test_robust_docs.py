"""The issue-19 docstring examples and the Python blocks of ``docs/robust.md`` run."""

from __future__ import annotations

import doctest
import importlib
import re
from pathlib import Path

import pytest

MODULES = [
    "agents.gp.engine",
    "agents.registry",
    "agents.robust.rcgp_ucb",
    "agents.robust.ec_gp_ucb",
    "hbo_envs.adversaries",
    "hbo_envs.adversaries.han_scarlett",
    "hbo_envs.adversaries.frequency",
    "hbo_envs.objectives.han_scarlett",
    "hbo_envs.envs.robust",
    "hbo_envs.judging.experiments.beyond",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    res = doctest.testmod(
        importlib.import_module(name), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    )
    assert res.failed == 0 and res.attempted > 0


def test_docs_page_examples_run() -> None:
    page = Path(__file__).resolve().parents[1] / "docs" / "robust.md"
    blocks = re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.S)
    assert len(blocks) >= 3
    for code in blocks:
        exec(compile(code, str(page), "exec"), {"__name__": "docs_example"})
