"""Parallel runs from any user code: the local pool must not re-import ``__main__``.

Each case runs a user script in a fresh interpreter, ``evaluate`` on 2 workers and on 1,
and checks that the numbers are identical and that the script's top level ran once
(the script prints a marker line to stderr at import; a pool that re-imports the main
module — multiprocessing's spawn — prints it once per worker, or dies).
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
par = harness.evaluate({agent}, "hbo/RKHS-SE-StudentT-v0", workers=2, **kw)
seq = harness.evaluate({agent}, "hbo/RKHS-SE-StudentT-v0", workers=1, **kw)
cols = ["seed", "t", "regret"]
print(json.dumps({{
    "par": par[cols].to_numpy().tolist(),
    "seq": seq[cols].to_numpy().tolist(),
}}))
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
    ("case", "agent", "stdin"),
    [
        ("script without a main guard", '"gp-ucb"', False),
        ("script fed on stdin", '"gp-ucb"', True),
        ("agent class defined in the script", "ScriptAgent", False),
    ],
)
def test_user_code_runs_on_two_workers(case: str, agent: str, stdin: bool, tmp_path) -> None:
    script = PRELUDE + (AGENT if agent == "ScriptAgent" else "") + BODY.format(agent=agent)
    r = _run(textwrap.dedent(script), tmp_path, stdin=stdin)
    assert r.returncode == 0, f"{case}: {r.stderr[-3000:]}"
    assert r.stderr.count("TOP-LEVEL-RAN") == 1, f"{case}: top level ran more than once"
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert len(out["par"]) == 3 * 150
    assert out["par"] == out["seq"], f"{case}: 2 workers and 1 worker disagree"
