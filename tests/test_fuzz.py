"""Fuzz: every bad input ends in a clear error, nothing non-finite is published, nothing
big is allocated before refusing.

Generated from the registries (``hbo_envs.registration.ENV_SPECS``, ``agents.available()``)
and from the signatures of the env and agent classes, so envs and agents added later are
fuzzed with no new test code. The values drawn are bad for the parameter's kind (by its
default's type): a flag gets strings and ints (``"false"`` used to become ``True``), a
count gets negatives, floats, strings and huge values, a real gets NaN, infinities,
booleans, strings and magnitudes far outside any range that works. Each must be refused
with a ``ValueError``/``TypeError`` whose message names the parameter and the value.
"""

from __future__ import annotations

import importlib
import inspect
import math
import tracemalloc
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hbo_envs
from hbo_envs.problem import Problem
from hbo_envs.registration import ENV_SPECS

SETTINGS = settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

BAD_BOOL = st.sampled_from(["false", "no", "True", 0, 1, 0.0, "", None.__class__.__name__])
BAD_INT = st.one_of(
    st.integers(max_value=-1),
    st.sampled_from([2**64, 1.5, 2.0, float("nan"), "100", True, False]),
)
BAD_REAL = st.one_of(
    st.sampled_from([float("nan"), float("inf"), -float("inf"), True, False, "1.0", 1e300, -1e300]),
    st.floats(max_value=-1e-9, allow_nan=False, allow_infinity=False),
)
BAD_STR = st.one_of(st.sampled_from(["bogus", "", 3, 1.0, True]), st.text(min_size=1, max_size=8))

ALLOC_LIMIT = 64 * 2**20
"""No refusal may allocate more than this (64 MiB) before raising."""


def _kind(default: Any) -> st.SearchStrategy[Any] | None:
    if isinstance(default, bool):
        return BAD_BOOL
    if isinstance(default, int):
        return BAD_INT
    if isinstance(default, float):
        return BAD_REAL
    if isinstance(default, str):
        return BAD_STR
    return None


def _env_params() -> list[tuple[str, str, Any, st.SearchStrategy[Any]]]:
    out = []
    for e in ENV_SPECS:
        module, _, cls = e.entry_point.partition(":")
        klass = getattr(importlib.import_module(module), cls)
        for name, p in inspect.signature(klass.__init__).parameters.items():
            if name in ("self", "name") or p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
                continue
            default = e.kwargs.get(name, p.default)
            if name == "redraw":  # bool | None in the generic env
                strat: st.SearchStrategy[Any] | None = BAD_BOOL
            else:
                strat = _kind(default)
            if strat is not None:
                out.append((e.id, name, default, strat))
    return out


ENV_PARAMS = _env_params()


def _names_param_and_value(msg: str, name: str, value: Any) -> bool:
    return name in msg and (repr(value) in msg or str(value) in msg)


def _plausible(default: Any, value: Any) -> bool:
    """Whether an accepted value could be valid for a parameter with this default: some
    drawn values are valid somewhere (a seed of 10^12, a real of 1e-300 where the lower
    bound is 0); those must then give an honest problem (checked by the caller). A flag
    never accepts a non-bool; a count never a float, a string or a negative number."""
    if isinstance(default, bool) or default is None:
        return isinstance(value, bool)
    if isinstance(default, int):
        return type(value) is int and value >= 0
    if isinstance(default, float):
        return (
            isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
        )
    return isinstance(value, str)


def _check_env(env_id: str, name: str, value: Any, default: Any) -> None:
    tracemalloc.start()
    try:
        env = gym.make(env_id, **{name: value})
        env.reset(seed=0)
    except (ValueError, TypeError) as exc:
        peak = tracemalloc.get_traced_memory()[1]
        msg = str(exc)
        assert _names_param_and_value(msg, name, value), (env_id, name, value, msg)
        assert peak < ALLOC_LIMIT, f"{env_id} {name}={value!r}: {peak / 2**20:.0f} MiB"
        return
    finally:
        tracemalloc.stop()
    # accepted: it must have been a valid value, with an honest, finite problem
    p = env.unwrapped.problem
    for c in ("B", "alpha", "v", "nu", "sup_f", "noise_scale"):
        assert math.isfinite(getattr(p, c)), (env_id, name, value, c)
    _, r, *_ = env.step(0)
    assert math.isfinite(r)
    assert _plausible(default, value), f"{env_id}: {name}={value!r} was accepted"


@pytest.mark.parametrize(
    ("env_id", "name", "default", "strategy"),
    ENV_PARAMS,
    ids=[f"{e}:{n}" for e, n, _, _ in ENV_PARAMS],
)
def test_bad_env_kwargs_are_refused_naming_parameter_and_value(
    env_id, name, default, strategy
) -> None:
    reason = _unbuildable(env_id)
    if reason:  # e.g. a real-data env without its data set on this machine
        pytest.skip(f"{env_id} cannot be built with its defaults here: {reason}")

    @SETTINGS
    @given(value=strategy)
    def run(value: Any) -> None:
        if isinstance(value, str) and isinstance(default, str):
            # a text parameter (a choice, a path): a valid value is fine; anything else
            # must be refused naming the value (a missing path: an OSError naming it)
            try:
                gym.make(env_id, **{name: value})
            except (ValueError, TypeError, OSError) as exc:
                assert _names_param_and_value(str(exc), name, value) or repr(value) in str(exc), (
                    str(exc)
                )
            return
        _check_env(env_id, name, value, None if name == "redraw" else default)

    run()


_UNBUILDABLE: dict[str, str] = {}


def _unbuildable(env_id: str) -> str:
    """Why the env cannot be built with its registered defaults here ("" if it can)."""
    if env_id not in _UNBUILDABLE:
        try:
            gym.make(env_id)
            _UNBUILDABLE[env_id] = ""
        except Exception as exc:  # noqa: BLE001 - reported as the skip reason
            _UNBUILDABLE[env_id] = f"{type(exc).__name__}: {exc}"
    return _UNBUILDABLE[env_id]


def test_every_registered_env_and_parameter_is_fuzzed() -> None:
    fuzzed = {e for e, _, _, _ in ENV_PARAMS}
    assert fuzzed == set(hbo_envs.ENV_IDS)
    for e in ENV_SPECS:
        assert (e.id, "horizon") in {(i, n) for i, n, _, _ in ENV_PARAMS}


# -- Problem: no non-finite constant can be published ------------------------------------------
def _problem_kwargs() -> dict[str, Any]:
    from hbo_envs.kernels import SquaredExponential

    X = np.linspace(0, 1, 5)[:, None]
    k = SquaredExponential(0.2)
    return dict(
        points=X, kernel_matrix=k(X), kernel=k, B=1.0, alpha=1.0, v=4.0, nu=3.0, sup_f=1.0,
        horizon=10,
    )  # fmt: skip


@SETTINGS
@given(
    field=st.sampled_from(["B", "alpha", "v", "nu", "sup_f", "noise_scale", "C", "kernel_jitter"]),
    value=st.sampled_from([float("nan"), float("inf"), -float("inf")]),
)
def test_no_problem_with_a_non_finite_constant(field: str, value: float) -> None:
    with pytest.raises(ValueError, match=f"'{field}'"):
        Problem(**{**_problem_kwargs(), field: value})


@SETTINGS
@given(i=st.integers(0, 4), j=st.integers(0, 4), value=st.sampled_from([math.nan, math.inf]))
def test_no_problem_with_a_non_finite_kernel_matrix(i: int, j: int, value: float) -> None:
    kw = _problem_kwargs()
    K = np.array(kw["kernel_matrix"])
    K[i, j] = value
    with pytest.raises(ValueError, match="kernel_matrix"):
        Problem(**{**kw, "kernel_matrix": K})


# -- agents ------------------------------------------------------------------------------------
def _agent_params() -> list[tuple[str, str, Any]]:
    import agents

    out = []
    for n in agents.available():
        klass = type(agents.make(n))
        for name, p in inspect.signature(klass.__init__).parameters.items():
            if name == "self" or p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
                continue
            out.append((n, name, p.default))
    return out


AGENT_PARAMS = _agent_params()
# Values bad for every agent parameter, whatever else it accepts (None, a real, a callable,
# a choice): non-finite numbers, a string that is no choice, an arbitrary object.
BAD_ANY = st.sampled_from([float("nan"), float("inf"), -float("inf"), -1e300, "bogus!", object()])


@pytest.mark.parametrize(
    ("agent", "name", "default"), AGENT_PARAMS, ids=[f"{a}:{n}" for a, n, _ in AGENT_PARAMS]
)
def test_bad_agent_parameters_are_refused(agent: str, name: str, default: Any) -> None:
    import agents

    env = gym.make("hbo/RKHS-SE-StudentT-v0", horizon=50).unwrapped
    env.reset(seed=0)
    strat = _kind(default) if default is not None and not callable(default) else None
    strat = BAD_ANY if strat is None else st.one_of(BAD_ANY, strat)

    @SETTINGS
    @given(value=strat)
    def run(value: Any) -> None:
        if isinstance(default, str) and value == default:
            return
        tracemalloc.start()
        try:
            a = agents.make(agent, **{name: value})
            a.reset(env.problem, seed=0)
            a.update(a.act(), 0.5)
        except (ValueError, TypeError) as exc:
            peak = tracemalloc.get_traced_memory()[1]
            assert name in str(exc), (agent, name, value, str(exc))
            assert peak < ALLOC_LIMIT
            return
        finally:
            tracemalloc.stop()
        # accepted: only values that are valid for this parameter may get here
        assert isinstance(value, int | float) and math.isfinite(value) and value >= 0, (
            f"{agent}: {name}={value!r} was accepted"
        )

    run()


def test_mom_ell_is_bounded_before_allocation() -> None:
    import agents

    env = gym.make("hbo/RKHS-SE-StudentT-v0", horizon=1000).unwrapped
    env.reset(seed=0)
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=r"'ell'.*\[1, 1000\]. Got 1000000000"):
            agents.make("mom-gp-ucb", ell=10**9).reset(env.problem, seed=0)
        assert tracemalloc.get_traced_memory()[1] < ALLOC_LIMIT
    finally:
        tracemalloc.stop()


# -- CLI options -------------------------------------------------------------------------------
CLI_BAD = st.one_of(
    st.tuples(
        st.just("--seeds"), st.sampled_from(["", ",", "a", "-1", "5-2", "0-99999999", "1e3"])
    ),
    st.tuples(st.just("--seeds"), st.text(alphabet="0123456789-, x", max_size=12)),
    st.tuples(st.just("--n-seeds"), st.sampled_from(["0", "-3", "1.5", "x", "1000000"])),
    st.tuples(st.just("--horizon"), st.sampled_from(["0", "-1", "1.5", "x", str(10**10)])),
    st.tuples(st.just("--workers"), st.sampled_from(["0", "-2", "x", "100000"])),
    st.tuples(st.just("--resolution"), st.sampled_from(["0", "-5", "10000000"])),
    st.tuples(st.just("--coverage-points"), st.sampled_from(["-100", "-1", "100000"])),
    st.tuples(st.just("--backend"), st.sampled_from(["dask", "", "LOCAL"])),
    st.tuples(
        st.just("--env-kwargs"),
        st.sampled_from(
            [
                "{",
                "[]",
                "3",
                '{"redraw": "false"}',
                '{"redraw": "no"}',
                '{"horizon": -1}',
                '{"horizon": 10}',
                '{"bogus": 1}',
                '{"magnitude": NaN}',
                '{"sign": 3}',
                '{"objective_seed": -1}',
                '{"horizon": 1e3}',
            ]
        ),
    ),  # fmt: skip
    st.tuples(st.just("--agent"), st.sampled_from(["", "nope", "gp-ucb[lam=-1]", "x:Y", "[a=1]"])),
)


@settings(SETTINGS, max_examples=60)
@given(opt=CLI_BAD)
def test_bad_cli_options_exit_2_with_a_message(opt: tuple[str, str], tmp_path_factory, capsys):
    from hbo_envs.cli import main

    out = tmp_path_factory.mktemp("cli")
    args = {
        "--env": "hbo/RKHS-SE-Spike-v0", "--agent": "random", "--seeds": "0-1",
        "--horizon": "5", "--workers": "1", "--out": str(out),
    }  # fmt: skip
    flag, value = opt
    if flag in ("--n-seeds",):
        del args["--seeds"]
    if flag == "--env-kwargs" and "horizon" in value:
        pass  # given with --horizon: a conflict, refused
    args[flag] = value
    argv = ["run", "--no-progress"] + [x for kv in args.items() for x in kv]
    try:
        rc = main(argv)
    except SystemExit as exc:  # argparse: wrong type / choice
        rc = exc.code
    err = capsys.readouterr().err
    if rc == 0:  # only a text that happens to be a valid seed list may run
        assert flag == "--seeds", (argv, err)
        return
    assert rc == 2, (argv, rc, err)
    assert "error:" in err and "Traceback" not in err, err


# -- issue 22: the remaining fuzz findings, each a clear error naming the parameter ------------
def _corruption_problem() -> Any:
    env = gym.make("hbo/Corrupted-SE-Region-v0", horizon=20).unwrapped
    env.reset(seed=0)
    return env.problem


@pytest.mark.parametrize(
    ("agent", "param"),
    [
        ("gp-ucb", "beta"),
        ("tgp-ucb", "beta"),
        ("gp-ucb-corruption", "beta"),
        ("mom-gp-ucb", "beta"),
        ("ca-tgp-ucb", "beta"),
        ("fast-slow-gp-ucb", "beta_fast"),
        ("fast-slow-gp-ucb", "beta_slow"),
        ("fast-slow-gp-ucb", "beta_fallback"),
    ],
)
def test_zero_argument_schedule_is_refused_naming_it(agent: str, param: str) -> None:
    import agents

    a = agents.make(agent, **{param: lambda: 1.0})
    with pytest.raises(ValueError, match=rf"'{param}' parameter of .*called with the round t"):
        a.reset(_corruption_problem(), seed=0)


@pytest.mark.parametrize("param", ["beta_fast", "beta_slow", "beta_fallback"])
@pytest.mark.parametrize("value", [np.array([1.0, 2.0]), float("nan"), math.inf, -1.0, "x"])
def test_fast_slow_width_overrides_are_validated(param: str, value: Any) -> None:
    import agents

    a = agents.make("fast-slow-gp-ucb", **{param: value})
    with pytest.raises(ValueError, match=rf"The '{param}' parameter of FastSlowGPUCB must be"):
        a.reset(_corruption_problem(), seed=0)


def test_evaluate_refuses_bad_agent_params_and_repeated_seeds() -> None:
    from hbo_envs.harness import evaluate

    env = "hbo/RKHS-SE-Spike-v0"
    with pytest.raises(ValueError, match=r"'agent_params' parameter of evaluate .* Got 'x'"):
        evaluate("random", env, seeds=1, horizon=5, workers=1, agent_params="x")
    with pytest.raises(ValueError, match=r"'seeds' parameter of evaluate must be distinct"):
        evaluate("random", env, seeds=[0, 0], horizon=5, workers=1)


def test_deep_json_submission_is_a_clear_error(tmp_path: Any) -> None:
    from hbo_envs.cli import main

    f = tmp_path / "deep.json"
    f.write_text("[" * 5000 + "]" * 5000)
    assert main(["leaderboard", "validate", str(f)]) == 1  # not a RecursionError


def test_summary_of_a_non_results_directory_exits_2(tmp_path: Any, capsys: Any) -> None:
    from hbo_envs.cli import main

    assert main(["summary", str(tmp_path)]) == 2
    assert "is not a results directory" in capsys.readouterr().err


def test_internal_error_is_not_a_usage_error(monkeypatch: Any, capsys: Any) -> None:
    """A TypeError from a bug (here: numpy inside a command) exits 1 with its traceback;
    exit 2 stays for usage errors."""
    from hbo_envs import cli

    def broken(args: Any) -> int:
        return int(np.add(np.ones(2), np.ones(3)).sum())  # ValueError from numpy: a bug

    monkeypatch.setitem(cli._COMMANDS, "list", broken)
    assert cli.main(["list"]) == 1
    err = capsys.readouterr().err
    assert "internal error" in err and "Traceback" in err
    monkeypatch.setitem(cli._COMMANDS, "list", lambda args: len(None))  # a TypeError bug
    assert cli.main(["list"]) == 1
    assert cli.main(["run", "--env", "hbo/RKHS-SE-Spike-v0", "--agent", "random", "--seeds",
                     "0", "--horizon", "0", "--out", "x"]) == 2  # fmt: skip


# -- issue 37 item 8: the fuzz classes left, each a clear error naming the parameter ------------
BAD_SCHEDULE_VALUE = st.sampled_from(
    [float("nan"), -1.0, -1, math.inf, -math.inf, "x", "1.0", None, [1.0], {"t": 1}]
)


@pytest.mark.parametrize("param", ["beta_fast", "beta_slow", "beta_fallback"])
@SETTINGS
@given(value=BAD_SCHEDULE_VALUE)
def test_fast_slow_callable_widths_are_checked_on_their_first_values(
    param: str, value: Any
) -> None:
    """A callable width returning NaN, a negative, an infinity or a non-number is refused at
    reset (its first values are evaluated), not when it is first used: the fallback width
    only after a switch, which may never come."""
    import agents

    a = agents.make("fast-slow-gp-ucb", **{param: lambda t: value})
    with pytest.raises(
        ValueError, match=rf"The '{param}' parameter of FastSlowGPUCB must be .*\(at t=1\)"
    ):
        a.reset(_corruption_problem(), seed=0)
    # a schedule that goes bad at its second value is caught too
    b = agents.make("fast-slow-gp-ucb", **{param: lambda t: 1.0 if t == 1 else value})
    with pytest.raises(ValueError, match=rf"'{param}' parameter of FastSlowGPUCB .*\(at t=2\)"):
        b.reset(_corruption_problem(), seed=0)


BAD_SEQUENCE = st.one_of(
    st.text(max_size=4),
    st.binary(max_size=3),
    st.lists(st.lists(st.floats(0.1, 1.0), min_size=1, max_size=2), min_size=1, max_size=2),
    st.sampled_from([0.5, 1, None, {"a": 1.0}, [True], ["0.1"], [1.0, "x"], [], ()]),
)


@pytest.mark.parametrize(
    ("cls", "param"),
    [
        ("ClippingAttack", "center"),
        ("ClippingAttack", "side"),
        ("AggressiveSubtractionAttack", "center"),
        ("AggressiveSubtractionAttack", "side"),
        ("SubtractionAttack", "width"),
    ],
)
@SETTINGS
@given(value=BAD_SEQUENCE)
def test_han_scarlett_attack_geometry_is_a_clear_error(cls: str, param: str, value: Any) -> None:
    """A string (``"12"`` is not ``(1, 2)``), bytes, a scalar, a mapping, a nested or empty
    sequence or a sequence holding non-numbers is refused at construction, naming the
    parameter and the value."""
    from hbo_envs.adversaries import han_scarlett

    with pytest.raises(ValueError) as err:
        getattr(han_scarlett, cls)(**{param: value})
    msg = str(err.value)
    assert f"The '{param}' parameter of {cls} must be" in msg or (
        # an empty center makes the paired side's length the first violation
        param == "side" and "'side' parameter" in msg
    ), msg
    assert repr(value)[:20] in msg, msg
