"""Gymnasium conventions, tested over the whole registry (a new id needs no new test code):
one horizon (``horizon`` = ``max_episode_steps`` = ``problem.horizon``), render modes,
plain pickling and deep copies, and the native vector env against ``SyncVectorEnv``."""

from __future__ import annotations

import copy
import doctest
import importlib
import pickle
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils import seeding
from gymnasium.utils.env_checker import check_env

import hbo_envs
from hbo_envs.envs import GPBanditEnv
from hbo_envs.envs.base import resolve_horizon
from hbo_envs.envs.vector import GPBanditVectorEnv
from hbo_envs.registration import default_horizon, missing_data

IDS = list(hbo_envs.ENV_IDS)


@pytest.fixture(scope="module", params=IDS)
def env_id(request: pytest.FixtureRequest) -> str:
    if need := missing_data(request.param):
        pytest.skip(f"{request.param} needs the {need!r} data set (hbo-bench data fetch {need})")
    return request.param


def _actions(n: int, steps: int) -> list[int]:
    return [int((7 * t + 3) % n) for t in range(steps)]


# -- one horizon -----------------------------------------------------------------------------
def test_default_spec_states_the_horizon(env_id: str) -> None:
    env = gym.make(env_id)
    assert env.spec.max_episode_steps == env.unwrapped.problem.horizon == default_horizon(env_id)


def test_max_episode_steps_is_the_horizon(env_id: str) -> None:
    env = gym.make(env_id, max_episode_steps=7)
    u = env.unwrapped
    assert u.horizon == u.problem.horizon == env.spec.max_episode_steps == 7
    env.reset(seed=1)
    u.attach_agent(None)
    truncs = [env.step(a)[3] for a in _actions(u.problem.n, 7)]
    assert truncs == [False] * 6 + [True]
    with pytest.raises(RuntimeError, match="episode is over"):  # the env itself ends at 7
        u.step(0)
    same = gym.make(env_id, horizon=7)
    assert same.spec.max_episode_steps == same.unwrapped.problem.horizon == 7
    both = gym.make(env_id, horizon=7, max_episode_steps=7)
    assert both.unwrapped.problem.horizon == 7


def test_two_different_horizons_are_refused(env_id: str) -> None:
    with pytest.raises(ValueError, match=r"'max_episode_steps' parameter .* horizon=7.*Got 8"):
        gym.make(env_id, horizon=7, max_episode_steps=8)


def test_horizon_larger_than_the_default_is_not_cut() -> None:
    env = gym.make("hbo/Corrupted-SE-None-v0", horizon=default_horizon("hbo/GPBandit-v0") * 3)
    assert env.spec.max_episode_steps == env.unwrapped.problem.horizon == 3000


@pytest.mark.parametrize("bad", [0, -2, 2.5, True, "7", 10**10])
def test_bad_max_episode_steps_named(bad: object) -> None:
    with pytest.raises((ValueError, TypeError), match="max_episode_steps"):
        gym.make("hbo/GPBandit-v0", max_episode_steps=bad)


def test_no_time_limit_keeps_the_horizon() -> None:
    env = gym.make("hbo/GPBandit-v0", max_episode_steps=-1, horizon=4)
    assert env.unwrapped.problem.horizon == env.spec.max_episode_steps == 4


def test_resolve_horizon_by_hand() -> None:
    assert resolve_horizon("E", None, None) is None
    assert resolve_horizon("E", 3, None) == resolve_horizon("E", None, 3) == 3
    assert resolve_horizon("E", 3, -1) == 3
    with pytest.raises(ValueError, match="'horizon' parameter of E"):
        resolve_horizon("E", 0, None)


def test_gymnasium_modules_doctests() -> None:
    for name in ("hbo_envs.envs.base", "hbo_envs.envs.render", "hbo_envs.envs.vector"):
        res = doctest.testmod(
            importlib.import_module(name),
            optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
        )
        assert res.attempted > 0 and res.failed == 0, name


# -- render ----------------------------------------------------------------------------------
def _seed_unseeded_resets(monkeypatch: pytest.MonkeyPatch) -> None:
    """``reset()`` without a seed seeds from a fixed number instead of OS entropy."""
    real = seeding.np_random
    monkeypatch.setattr(
        seeding, "np_random", lambda seed=None: real(12345 if seed is None else seed)
    )


@pytest.mark.parametrize("mode", ["ansi", "rgb_array"])
def test_check_env_with_render_mode(
    env_id: str, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = gym.make(env_id, horizon=20, render_mode=mode)
    # check_env also resets a fresh copy of the env without a seed, which gymnasium seeds
    # from OS entropy: an env that redraws its objective at reset then draws a random one,
    # and the test checked different draws on every run. Unseeded resets get a fixed seed
    # here, so every run checks the same draws. (Those draws once included max|f| = 1 + a
    # few ulps, where the signed-Pareto moment quadrature warned; the channels no longer
    # warn at any c, tests/test_moment_quadrature.py, but a test should check the same env
    # on every run.)
    _seed_unseeded_resets(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # check_env must stay clean: no warning either
        check_env(env.unwrapped)


def test_unseeded_resets_in_the_check_env_test_are_seeded(monkeypatch: pytest.MonkeyPatch) -> None:
    """The seeding in :func:`test_check_env_with_render_mode` reaches the reset check_env makes
    without a seed: two fresh copies draw the same objective (without it, different ones)."""
    env = gym.make("hbo/Tails-SE2D-Contaminated-v0", horizon=20)

    def draw() -> np.ndarray:
        fresh = env.spec.make()
        fresh.reset()
        return fresh.unwrapped.objective.values.copy()

    assert not np.array_equal(draw(), draw())  # OS entropy
    _seed_unseeded_resets(monkeypatch)
    assert np.array_equal(draw(), draw())


def test_render_shows_the_played_rounds(env_id: str) -> None:
    env = gym.make(env_id, horizon=20, render_mode="rgb_array")
    u = env.unwrapped
    env.reset(seed=0)
    before = env.render()
    assert before.dtype == np.uint8 and before.ndim == 3 and before.shape[2] == 3
    acts = _actions(u.problem.n, 5)
    for a in acts:
        env.step(a)
    after = env.render()
    assert after.shape == before.shape and not np.array_equal(before, after)
    text = gym.make(env_id, horizon=20, render_mode="ansi")
    text.reset(seed=0)
    rows = []
    for a in acts:
        _, r, _, _, info = text.step(a)
        rows.append((a, r, info["regret"]))
    lines = text.render().strip().splitlines()
    assert len(lines) == 1 + len(acts)
    for line, (t, (a, r, regret)) in zip(lines[1:], enumerate(rows, 1), strict=True):
        cells = line.split()
        assert int(cells[0]) == t and int(cells[1]) == a
        assert float(cells[-3]) == pytest.approx(r, rel=1e-3, abs=1e-3)
        assert float(cells[-2]) == pytest.approx(regret, rel=1e-3, abs=1e-3)


def test_render_draws_an_attached_agents_band() -> None:
    import agents

    env = gym.make("hbo/RKHS-SE-StudentT-v0", horizon=10, render_mode="rgb_array")
    u = env.unwrapped
    env.reset(seed=0)
    plain = env.render()
    agent = agents.make("gp-ucb")
    agent.reset(u.problem, seed=0)
    u.attach_agent(agent)
    with_band = env.render()
    assert not np.array_equal(plain, with_band)
    from hbo_envs.envs.render import _PICTURES

    legend = [t.get_text() for t in _PICTURES[u].legend.get_texts()]
    assert legend == ["f", "agent estimate", "estimate ± width", "played"]  # the band named
    u.attach_agent(None)
    assert np.array_equal(env.render(), plain)
    assert [t.get_text() for t in _PICTURES[u].legend.get_texts()] == ["f", "played"]
    with pytest.raises(ValueError, match="'agent' parameter"):
        u.attach_agent(3)


def _new_figure_frame(u: GPBanditEnv) -> np.ndarray:
    """The frame of ``u``'s state drawn by a figure built for it (nothing kept)."""
    from hbo_envs.envs import render

    band = render._band(u)
    return render._Picture(u, (), band).frame(u, band)


_RKHS3D = {"objective": {"name": "random-rkhs", "dim": 3, "n_points": 300}}


@pytest.mark.parametrize(
    ("env_id", "kw"),
    [("hbo/RKHS-SE-StudentT-v0", {}), ("hbo/Griewank2D-SymPareto-eps02-v0", {}),
     ("hbo/GPBandit-v0", _RKHS3D)],
    ids=["1-D", "2-D", "3-D"],
)  # fmt: skip
def test_the_kept_figure_draws_what_a_new_figure_draws(env_id: str, kw: dict) -> None:
    """1-D, 2-D and 3-D: an episode's frames from the env's kept figure equal, pixel for
    pixel, those of a figure built for the same state, also where the axis limits moved
    (the figure laid out again) and after the agent is attached or detached; a deep copy
    and an unpickled copy draw the original's frame. (Without the subplot parameters reset
    before each layout, the 3-D frames differed from round 2 on: tight_layout's result
    depends on the layout it starts from.)"""
    import agents
    from hbo_envs.envs import render

    env = gym.make(env_id, horizon=20, render_mode="rgb_array", **kw)
    u = env.unwrapped
    env.reset(seed=1)
    agent = agents.make("gp-ucb")
    agent.reset(u.problem, seed=1)
    u.attach_agent(agent)
    layouts, checked, late_move = set(), 0, False
    for t in range(1, 13):
        a = agent.act()
        _, r, *_ = env.step(a)
        agent.update(a, r)
        frame = env.render()
        pic = render._PICTURES[u]
        moved = pic.layout not in layouts
        layouts.add(pic.layout)
        if t in (1, 2, 3, 12) or (moved and t > 3 and not late_move):
            late_move = late_move or (moved and t > 3)
            assert np.array_equal(frame, _new_figure_frame(u)), (env_id, t)
            checked += 1
        if t == 6:
            assert np.array_equal(copy.deepcopy(u).render(), frame)
            assert np.array_equal(pickle.loads(pickle.dumps(u)).render(), frame)
            u.attach_agent(None)
            assert np.array_equal(env.render(), _new_figure_frame(u))
            u.attach_agent(agent)
    assert checked >= 4 and np.array_equal(env.render(), frame)
    if u.problem.points.shape[1] != 2:  # the band's axis followed the agent at least once
        assert len(layouts) >= 2, layouts


def test_thinning_keeps_each_columns_first_and_last_round() -> None:
    """_thin_monotone over random non-decreasing traces: at most two points a column, the
    first and last round always, and in every column of the axis the thinned line spans
    exactly the values the full trace spans there (its first and last, as it never falls)."""
    from hbo_envs.envs.render import _nice_up, _thin_monotone

    rng = np.random.default_rng(0)
    for n, cols in [(7, 4), (9, 4), (1000, 16), (5000, 64), (123_457, 1024)]:
        y = np.cumsum(rng.exponential(size=n) * (rng.random(n) < 0.3))
        xmax = _nice_up(n)
        keep = _thin_monotone(n, xmax, columns=cols)
        assert keep[0] == 0 and keep[-1] == n - 1 and np.all(np.diff(keep) > 0)
        if n <= 2 * cols:
            assert keep.size == n
            continue
        assert keep.size <= 2 * cols
        col = np.ceil(np.arange(1, n + 1) * cols / xmax) - 1  # column of round x = 1..n
        for c in np.unique(col):
            full, thin = y[col == c], y[keep][col[keep] == c]
            assert thin.size in (1, 2) and (thin.min(), thin.max()) == (full.min(), full.max())


def test_long_episodes_draw_the_regret_trace_thinned() -> None:
    """At round 3000 of a 3-D env the regret line holds at most 2 TRACE_COLUMNS points
    from the first round to the last, and the frame equals the one drawn through every
    round except for anti-aliasing at the line's edges, inside the regret panel."""
    from hbo_envs.envs import render

    env = gym.make("hbo/GPBandit-v0", horizon=3000, render_mode="rgb_array", **_RKHS3D)
    u = env.unwrapped
    env.reset(seed=2)
    for a in _actions(u.problem.n, 3000):
        env.step(a)
    frame = env.render()
    pic = render._PICTURES[u]
    x, y = pic.regret.get_data()
    cum = np.cumsum([r for _, _, r, _ in u._trace])
    assert x.size <= 2 * render.TRACE_COLUMNS and (x[0], x[-1]) == (1, 3000)
    np.testing.assert_array_equal(y, cum[x.astype(int) - 1])
    pic.regret.set_data(np.arange(1, 3001), cum)  # every round, as before the thinning
    canvas = pic.canvas
    canvas.restore_region(pic.background)
    for artist in pic.dynamic:
        artist.draw(canvas.get_renderer())
    full = np.asarray(canvas.buffer_rgba())[..., :3]
    rows, cols = np.nonzero(np.any(full != frame, axis=2))
    h, w = frame.shape[:2]
    assert rows.size < 0.01 * h * w  # a few hundred pixels of 256 000 at the line's edges
    if rows.size:
        box = pic.ax2.get_window_extent()  # display coordinates: y from the bottom
        assert box.x0 - 2 <= cols.min() and cols.max() <= box.x1 + 2
        assert h - box.y1 - 2 <= rows.min() and rows.max() <= h - box.y0 + 2


def test_kept_figure_is_rebuilt_for_a_new_objective_and_goes_with_the_env() -> None:
    """A reset that redraws ``f`` draws the new ``f`` (not the kept figure's); the figure
    is held weakly, so an env that is gone takes it along, and pickling never meets it."""
    import gc

    from hbo_envs.envs import render

    env = gym.make("hbo/GPBandit-v0", horizon=5, render_mode="rgb_array")  # redraws f
    u = env.unwrapped
    env.reset(seed=0)
    env.step(0)
    first = env.render()
    env.reset(seed=1)
    env.step(0)
    assert np.array_equal(env.render(), _new_figure_frame(u))
    assert not np.array_equal(env.render(), first)
    assert b"matplotlib" not in pickle.dumps(u)
    # the same f after a reset (no redraw): the kept figure forgets the last episode's rounds
    same = gym.make("hbo/HS-Hartmann6-Clipping-v0", horizon=9, render_mode="rgb_array")
    same.reset(seed=0)
    for a in (5, 6, 7, 5):
        same.step(a)
    same.render()
    kept = render._PICTURES[same.unwrapped]
    same.reset(seed=0)
    same.step(1)
    assert np.array_equal(same.render(), _new_figure_frame(same.unwrapped))
    assert render._PICTURES[same.unwrapped] is kept and kept.arms == [1]
    held = len(render._PICTURES)
    del env, u
    gc.collect()
    assert len(render._PICTURES) == held - 1


def test_axis_limits_move_in_steps() -> None:
    """``_nice_range`` holds its input with a margin, lands on a grid of half the decade of
    the span, and stays put while the data move within a step; degenerate and infinite
    input gives finite, increasing limits. ``_nice_up`` is the next 1, 2, 5 x 10^k."""
    from hbo_envs.envs.render import _nice_range, _nice_up

    assert _nice_range(-0.25, 1.0) == (-0.5, 1.5)  # span 1.25 -> step 0.5, 5 % margins
    assert _nice_range(-0.25, 1.0) == _nice_range(-0.3, 1.1)  # moved within a step
    assert _nice_range(-0.25, 1.0) != _nice_range(-0.25, 1.5)
    rng = np.random.default_rng(0)
    for _ in range(500):
        lo = rng.normal() * 10.0 ** rng.integers(-6, 7)
        hi = lo + abs(rng.normal()) * 10.0 ** rng.integers(-6, 7)
        a, b = _nice_range(lo, hi)
        pad = 0.05 * (hi - lo)
        assert a <= lo - pad * (1 - 1e-9) and b >= hi + pad * (1 - 1e-9)
        step = 10.0 ** np.floor(np.log10(hi - lo + 2 * pad)) / 2
        assert b - a <= (hi - lo) + 2 * pad + 2 * step * (1 + 1e-9)  # at most a step a side
    for lo, hi in [
        (1.0, 1.0),
        (0.0, 0.0),
        (-np.inf, 1.0),
        (np.nan, np.nan),
        (1e300, 1e300),
        (-1.7e308, 1.7e308),
    ]:
        a, b = _nice_range(lo, hi)
        assert np.isfinite([a, b]).all() and a < b, (lo, hi)
    assert [_nice_up(v) for v in (1, 1.5, 2, 3, 7, 10, 11, 0.03, 1e-3)] == [
        1, 2, 2, 5, 10, 10, 20, 0.05, 1e-3,
    ]  # fmt: skip


def test_legend_takes_the_emptiest_corner() -> None:
    from hbo_envs.envs.render import _legend_corner

    x = np.linspace(0, 1, 50)
    lim = (0.0, 1.0)
    # a rising line fills the lower-left and upper-right corners
    assert _legend_corner([(x, x)], lim, lim) == "upper left"
    assert _legend_corner([(x, 1 - x)], lim, lim) == "upper right"  # falls: ties go first
    assert _legend_corner([(x, np.full(50, 0.9))], lim, lim) == "lower right"
    assert _legend_corner([(x, np.full(50, 0.9)), (np.full(9, 0.9), np.linspace(0, .2, 9))],
                          lim, lim) == "lower left"  # fmt: skip


def test_an_unbounded_band_draws_clipped() -> None:
    """An agent whose widths are infinite or ~1e300 (or whose estimate is NaN somewhere)
    still gets a picture: the axis follows the band at most ``BAND_REACH`` spans of ``f``
    beyond ``f``, and the band is clipped there instead of reaching Agg as ~1e300."""
    from hbo_envs.envs import render

    class Wild:
        def __init__(self, n: int, width: float) -> None:
            self.est, self.w = np.zeros(n), np.full(n, width)
            self.est[3] = np.nan

        def posterior(self):
            return self.est, self.w

    env = gym.make("hbo/RKHS-SE-StudentT-v0", horizon=5, render_mode="rgb_array")
    u = env.unwrapped
    env.reset(seed=0)
    env.step(2)
    f = u.objective.values
    reach = render.BAND_REACH * (f.max() - f.min())
    for width in (np.inf, 1e300, 0.1):
        u.attach_agent(Wild(u.problem.n, width))
        frame = env.render()
        assert frame.shape == (400, 640, 3)
        lo, hi = render._PICTURES[u].ax.get_ylim()
        assert lo <= f.min() and hi >= f.max()
        if width > 1:
            assert lo >= f.min() - reach - (hi - lo) and hi <= f.max() + reach + (hi - lo)
        assert np.array_equal(frame, _new_figure_frame(u))


def test_binned_heat_map_is_the_mean_of_f_per_cell(monkeypatch) -> None:
    """Beyond ``SCATTER_MAX_POINTS`` 2-D points the heat map shows the mean of ``f`` per
    grid cell: ``binned_mean`` against a loop over the points, and the picture drawn that
    way (threshold lowered so a small env takes that path)."""
    from hbo_envs.envs import render

    rng = np.random.default_rng(3)
    pts = np.column_stack([rng.uniform(-2, 3, 500), rng.uniform(0, 1, 500)])
    f = rng.standard_normal(500)
    M, (x0, x1, y0, y1) = render.binned_mean(pts, f, 7)
    assert (x0, x1, y0, y1) == (pts[:, 0].min(), pts[:, 0].max(), pts[:, 1].min(), pts[:, 1].max())
    tot, cnt = np.zeros((7, 7)), np.zeros((7, 7))
    for (a, b), v in zip(pts, f, strict=True):  # cell i covers [x0 + i w, x0 + (i+1) w)
        i = min(int((a - x0) / ((x1 - x0) / 7)), 6)
        j = min(int((b - y0) / ((y1 - y0) / 7)), 6)
        tot[i, j] += v
        cnt[i, j] += 1
    assert np.array_equal(np.isnan(M), cnt == 0)
    np.testing.assert_allclose(M[cnt > 0], (tot / np.maximum(cnt, 1))[cnt > 0], rtol=1e-12)
    env = gym.make("hbo/GPBandit-v0", objective={"name": "random-rkhs", "dim": 2}, horizon=5,
                   render_mode="rgb_array")  # fmt: skip
    env.reset(seed=0)
    env.step(0)
    assert env.unwrapped.problem.points.shape[1] == 2
    scatter = env.render()
    monkeypatch.setattr(render, "SCATTER_MAX_POINTS", 10)
    binned = env.render()
    assert binned.shape == scatter.shape == (400, 640, 3) and binned.dtype == np.uint8
    assert not np.array_equal(binned, scatter)


def test_render_without_mode_returns_none_and_bad_modes_are_named() -> None:
    env = gym.make("hbo/GPBandit-v0", horizon=3)
    env.reset(seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert env.render() is None
    with pytest.raises(ValueError, match=r"'render_mode' parameter of GPBanditEnv.*'rgb_array'"):
        GPBanditEnv(render_mode="video")
    env = gym.make("hbo/GPBandit-v0", render_mode=None)  # tools pass it explicitly
    assert env.render_mode is None


# -- pickling and copying --------------------------------------------------------------------
def test_pickle_and_deepcopy_continue_the_episode(env_id: str) -> None:
    env = gym.make(env_id, horizon=12)
    u = env.unwrapped
    env.reset(seed=3)
    acts = _actions(u.problem.n, 12)
    for a in acts[:4]:
        env.step(a)
    clones = [pickle.loads(pickle.dumps(env)), copy.deepcopy(env)]
    rest = [env.step(a)[1] for a in acts[4:]]
    for clone in clones:
        assert clone.spec.max_episode_steps == 12
        assert [clone.step(a)[1] for a in acts[4:]] == rest


# -- the native vector env -------------------------------------------------------------------
def test_vector_env_equals_sync_vector_env(env_id: str) -> None:
    k, horizon, steps = 3, 3, 8  # through two autoresets
    native = gym.make_vec(
        env_id, num_envs=k, vectorization_mode="vector_entry_point", horizon=horizon
    )
    sync = gym.make_vec(env_id, num_envs=k, vectorization_mode="sync", horizon=horizon)
    assert isinstance(native.unwrapped, GPBanditVectorEnv)
    assert native.action_space == sync.action_space
    o1, _ = native.reset(seed=11)
    o2, _ = sync.reset(seed=11)
    assert np.array_equal(o1, o2)
    rng = np.random.default_rng(0)
    for _ in range(steps):
        a = rng.integers(0, native.single_action_space.n, size=k)
        r1, r2 = native.step(a), sync.step(a)
        for x, y in zip(r1[:4], r2[:4], strict=True):
            assert np.array_equal(x, y)
        assert r1[4].keys() == r2[4].keys()
        for key in r1[4]:
            assert np.array_equal(r1[4][key], r2[4][key]), key


def test_vector_env_equals_single_envs_and_takes_max_episode_steps() -> None:
    k = 4
    vec = gym.make_vec(
        "hbo/RKHS-SE-StudentT-v0",
        num_envs=k,
        vectorization_mode="vector_entry_point",
        max_episode_steps=5,
    )
    assert vec.unwrapped.horizon == 5
    vec.reset(seed=[5, 6, 7, 8])
    singles = [gym.make("hbo/RKHS-SE-StudentT-v0", horizon=5) for _ in range(k)]
    for i, e in enumerate(singles):
        e.reset(seed=5 + i)
    for t in range(5):
        a = np.arange(k) * 10 + t
        _, r, _, trunc, info = vec.step(a)
        single = [e.step(int(a[i])) for i, e in enumerate(singles)]
        assert r.tolist() == [s[1] for s in single]
        assert info["regret"].tolist() == [s[4]["regret"] for s in single]
        assert trunc.tolist() == [s[3] for s in single]


def test_vector_env_bad_input_is_named() -> None:
    def vec(**kw: object) -> gym.vector.VectorEnv:
        return gym.make_vec("hbo/GPBandit-v0", vectorization_mode="vector_entry_point", **kw)

    with pytest.raises(ValueError, match="'num_envs' parameter"):
        vec(num_envs=0)
    with pytest.raises(ValueError, match="'max_episode_steps' parameter"):
        vec(num_envs=2, horizon=3, max_episode_steps=4)
    envs = vec(num_envs=2, horizon=3)
    with pytest.raises(RuntimeError, match="reset"):
        envs.step(np.array([0, 1]))
    with pytest.raises(ValueError, match="'seed' parameter"):
        envs.reset(seed=[1, 2, 3])
    envs.reset(seed=0)
    for bad in (np.array([0]), np.array([0.5, 1.0]), np.array([0, 10**6]), [-1, 0]):
        with pytest.raises(ValueError, match="'actions' parameter"):
            envs.step(bad)


def test_agents_plan_for_the_time_limit() -> None:
    """MoM-GP-UCB's episode length ell = ceil(ln(2T/delta')) and N = floor(T/ell) (experiment
    schedule, Park–Lee Alg. 2 line 2) follow max_episode_steps, as they follow horizon."""
    import math

    import agents

    for k in (40, 5000):
        plans = []
        for kw in ({"max_episode_steps": k}, {"horizon": k}):
            env = gym.make("hbo/RKHS1D-SymPareto-eps02-v0", **kw)
            env.reset(seed=0)
            agent = agents.make("mom-gp-ucb")
            agent.reset(env.unwrapped.problem, seed=0)
            assert agent.ell_ == math.ceil(math.log(2 * k / agent.delta_prime_))
            assert agent.N_ == k // agent.ell_
            plans.append((agent.ell_, agent.N_))
        assert plans[0] == plans[1]
