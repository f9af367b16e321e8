"""Every shipped reproduction runs end to end (issue 20): ``hbo-bench reproduce NAME --smoke``
through the real CLI for every name of ``reproduce --list``: 1 seed, a few dozen rounds,
every agent of the experiment, the summary and the plot written. A constructor-signature
change that breaks a shipped figure fails here, not in a user's terminal.

The real-data experiments need ``../shared/data`` (``tests/conftest.py`` points
``HBO_DATA_DIR`` at it) and skip, saying why, without it.
"""

from __future__ import annotations

import json

import pytest

from hbo_envs.cli import main
from hbo_envs.judging.experiments import EXPERIMENTS
from hbo_envs.registration import missing_data


def _listed(capsys: pytest.CaptureFixture[str]) -> list[str]:
    assert main(["reproduce", "--list"]) == 0
    return [line.split()[0] for line in capsys.readouterr().out.splitlines() if line.strip()]


def test_list_names_every_registered_experiment(capsys: pytest.CaptureFixture[str]) -> None:
    assert _listed(capsys) == list(EXPERIMENTS)


@pytest.mark.parametrize("name", list(EXPERIMENTS))
def test_reproduce_smoke(name: str, tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    exp = EXPERIMENTS[name]
    envs = [v.env_id for v in getattr(exp, "variants", ())] or list(exp.envs)
    if missing := sorted({d for e in envs if (d := missing_data(e))}):
        pytest.skip(f"{name} needs the real data sets {missing} (../shared/data is absent)")
    out = tmp_path / name
    rc = main(["reproduce", name, "--smoke", "--out", str(out), "--workers", "1", "--no-progress"])
    text = capsys.readouterr().out
    assert rc == 0, text
    summary = json.loads((out / "summary.json").read_text())
    assert summary["verdicts"], f"{name}: no verdicts written"
    assert summary["seeds"] == 1
    pngs = sorted(p.name for p in out.glob("*.png"))
    assert pngs, f"{name}: no plot written"
    if exp.kind != "exponent":
        # one seed: the papers' std band would have width 0, so that figure is not drawn
        assert "regret.png" in pngs and "regret_std.png" not in pngs, pngs
        assert "regret_std: not drawn (one seed per agent" in text
    if exp.kind == "exponent":
        assert summary["horizons"] == list(exp.smoke_horizons)
        ran = {r["agent"] for r in summary["exponents"]}
    else:
        assert set(summary["horizons"].values()) == {exp.smoke_horizon}
        ran = {r["agent"] for r in summary["summary"]}
    specs, skipped = exp.agent_specs()
    assert not skipped, f"{name}: agents not available: {skipped}"
    assert ran == {s.label for s in specs}, f"{name}: not every agent finished a cell"
