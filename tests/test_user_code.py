"""Parallel runs from any user code: the local pool must not re-import ``__main__``.

Each case runs a user script in a fresh interpreter, ``evaluate`` on 2 workers and on 1,
and checks that the numbers are identical and that the script's top level ran once
(the script prints a marker line to stderr at import; a pool that re-imports the main
module — multiprocessing's spawn — prints it once per worker, or dies). Every script
evaluates two agents: a registered one (``"gp-ucb"``) and a class defined in the script
itself (shipped to the workers by value), so one interpreter and one pool cover both
(a fresh interpreter with its two workers costs ~2 s of imports each).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

PRELUDE = """\
import json, sys
print("TOP-LEVEL-RAN", file=sys.stderr, flush=True)
import numpy as np
from hbo_envs import harness
"""

AGENT = """\
class ScriptAgent:  # defined in the user's script: shipped to workers by value
    name = "script-agent"
    def reset(self, problem, *, seed=None):
        self.n = problem.n
        self.rng = np.random.default_rng(seed)
    def act(self):
        return int(self.rng.integers(self.n))
    def update(self, action, reward):
        pass
"""

BODY = """\
kw = dict(seeds=[0, 1, 2], horizon=150, progress=False)
cols = ["seed", "t", "regret"]
out = {}
for label, agent in (("gp-ucb", "gp-ucb"), ("ScriptAgent", ScriptAgent)):
    par = harness.evaluate(agent, "hbo/RKHS-SE-StudentT-v0", workers=2, **kw)
    seq = harness.evaluate(agent, "hbo/RKHS-SE-StudentT-v0", workers=1, **kw)
    out[label] = {"par": par[cols].to_numpy().tolist(), "seq": seq[cols].to_numpy().tolist()}
print(json.dumps(out))
"""


def _run(script: str, tmp_path: Path, *, stdin: bool) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    if stdin:
        return subprocess.run(
            [sys.executable, "-"],
            input=script,
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=env,
            timeout=300,
        )
    path = tmp_path / "run.py"
    path.write_text(script)
    return subprocess.run(
        [sys.executable, str(path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=300,
    )


@pytest.mark.parametrize(
    ("case", "stdin"),
    [("script without a main guard", False), ("script fed on stdin", True)],
)
def test_user_code_runs_on_two_workers(case: str, stdin: bool, tmp_path) -> None:
    r = _run(textwrap.dedent(PRELUDE + AGENT + BODY), tmp_path, stdin=stdin)
    assert r.returncode == 0, f"{case}: {r.stderr[-3000:]}"
    assert r.stderr.count("TOP-LEVEL-RAN") == 1, f"{case}: top level ran more than once"
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert set(out) == {"gp-ucb", "ScriptAgent"}
    for agent, runs in out.items():
        assert len(runs["par"]) == 3 * 150, f"{case}, {agent}"
        assert runs["par"] == runs["seq"], f"{case}, {agent}: 2 workers and 1 worker disagree"
