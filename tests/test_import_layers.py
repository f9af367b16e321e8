"""The package's import structure: no import cycle anywhere in ``hbo_envs`` and ``agents``
(imports inside functions count: a circle dodged by a late import is still a circle), and
the contracts of ``[tool.importlinter]`` in pyproject.toml hold (the judging layer's order
cli > publish > archive > experiments > rules, the harness below it, the leaderboard's
verify above its submission module). CI also runs ``lint-imports`` itself (.ci/run)."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import grimp
import pytest
from importlinter.cli import lint_imports

ROOT = Path(__file__).resolve().parents[1]


def import_cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The import cycles of ``graph``: its strongly connected components of more than one
    module (Tarjan's algorithm, iterative), each sorted, the list sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for start in sorted(graph.modules):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.find_modules_directly_imported_by(start))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.find_modules_directly_imported_by(w)))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return sorted(out)


def test_no_import_cycle_in_the_package() -> None:
    graph = grimp.build_graph("hbo_envs", "agents", cache_dir=None)
    assert "hbo_envs.judging.rules.claims" in graph.modules  # the graph is this checkout's
    assert import_cycles(graph) == []


def test_the_cycle_finder_sees_a_circle_dodged_inside_a_function(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check is not vacuous: a late import inside a function still closes a circle,
    and a chain a -> b -> c -> a is found whole; a plain chain is not a cycle."""
    pkg = tmp_path / "circ_pkg"
    pkg.mkdir()
    files = {
        "__init__.py": "",
        "a.py": "from circ_pkg import b\n",
        "b.py": "def f():\n    from circ_pkg import c\n    return c\n",
        "c.py": "import circ_pkg.a\n",
        "d.py": "from circ_pkg import a\n",
    }
    for name, text in files.items():
        (pkg / name).write_text(textwrap.dedent(text))
    monkeypatch.syspath_prepend(str(tmp_path))
    graph = grimp.build_graph("circ_pkg", cache_dir=None)
    assert import_cycles(graph) == [["circ_pkg.a", "circ_pkg.b", "circ_pkg.c"]]
    (pkg / "b.py").write_text("def f():\n    return 1\n")
    sys.modules.pop("circ_pkg", None)
    assert import_cycles(grimp.build_graph("circ_pkg", cache_dir=None)) == []


def test_the_import_contracts_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    assert lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True) == 0


def test_a_contract_breach_fails_lint_imports(tmp_path: Path) -> None:
    """An upward import (a rule importing the pages) breaks the layers contract."""
    config = tmp_path / "contracts.toml"
    config.write_text(
        (ROOT / "pyproject.toml").read_text()
        + textwrap.dedent(
            """
            [[tool.importlinter.contracts]]
            id = "inverted"
            name = "inverted on purpose: rules above publish"
            type = "layers"
            layers = ["hbo_envs.judging.rules", "hbo_envs.judging.publish"]
            """
        )
    )
    assert lint_imports(config_filename=str(config), no_cache=True) == 1
