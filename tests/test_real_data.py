"""Real data: loaders (on small generated files, always; on ../shared/data when present),
the real-data envs' constants against hand computations, the data scripts (fetch with a
local stand-in for the network, import, interrupted fetch), and the missing-data paths."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest
from gymnasium.utils.env_checker import check_env

import hbo_envs  # noqa: F401  (registers)
from hbo_envs.data import (
    DataFormatError,
    DataNotFoundError,
    ks_gaussian,
    load_lightsensor,
    load_stockpicking,
    load_stocks29,
    missing_files,
)
from hbo_envs.data.loaders import STOCKPICKING_TICKERS, STOCKS29_TICKERS

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT / ".." / "shared" / "data"
needs_shared = pytest.mark.skipif(
    not SHARED.is_dir(), reason="../shared/data (the real data beside the checkout) is absent"
)


# -- small files in the documented formats ---------------------------------------------------
def _dates(start: str, end: str) -> pd.DatetimeIndex:
    return pd.bdate_range(start, end)


def write_stocks29(root: Path, days: int = 150, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    idx = _dates("2016-01-04", "2019-04-10")[:days]
    P = (
        50
        * np.exp(np.cumsum(0.02 * rng.standard_normal((days, 29)), axis=0))
        * rng.uniform(0.5, 2, 29)
    )
    df = pd.DataFrame(P, index=idx.strftime("%Y-%m-%d"), columns=list(STOCKS29_TICKERS))
    df.index.name = "Date"
    (root / "chowdhury2019_fin").mkdir(parents=True, exist_ok=True)
    df.to_csv(root / "chowdhury2019_fin" / "fin.csv")
    return df


def write_lightsensor(root: Path, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    d = root / "cmu_iw_lightsensor"
    d.mkdir(parents=True, exist_ok=True)
    cols = [f"s{i}" for i in range(1, 42)]
    base = rng.uniform(100, 900, 41)
    out = []
    for part, n in (("train", 60), ("test", 30)):
        X = np.round(base * rng.pareto(3.0, (n, 41)) + 50).astype(int)
        df = pd.DataFrame(X, columns=cols)
        df.insert(0, "t", np.arange(1, n + 1))
        df.to_csv(d / f"{part}_sensordata_raw.csv", index=False)
        out.append(X.astype(float))
    xy = rng.uniform(0, 300, (41, 2))
    pd.DataFrame({"sensor": cols, "x": xy[:, 0], "y": xy[:, 1]}).to_csv(
        d / "sensor_coords.csv", index=False
    )
    return out[0], out[1], xy


def yahoo_frame(idx: pd.DatetimeIndex, rng: np.random.Generator) -> pd.DataFrame:
    close = 20 * np.exp(np.cumsum(0.02 * rng.standard_normal(len(idx))))
    return pd.DataFrame(
        {
            "Open": close * rng.uniform(0.98, 1.02, len(idx)),
            "High": close * 1.03,
            "Low": close * 0.97,
            "Close": close,
            "Adj Close": close * 0.9,
            "Volume": rng.integers(1_000, 100_000, len(idx)).astype(float),
        },
        index=pd.DatetimeIndex(idx, name="Date"),
    )


def write_stockpicking(root: Path, seed: int = 0) -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    idx = _dates("2010-01-04", "2022-01-31")
    d = root / "park2024_aapl_bidu_ha"
    d.mkdir(parents=True, exist_ok=True)
    frames = {}
    for t in STOCKPICKING_TICKERS:
        f = yahoo_frame(idx, rng)
        out = f.copy()
        out.index = idx.strftime("%Y-%m-%d")
        out.index.name = "Date"
        out.to_csv(d / f"{t}.csv")
        frames[t] = f
    return frames


@pytest.fixture
def datadir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HBO_DATA_DIR", str(tmp_path))
    return tmp_path


# -- loaders on generated files ------------------------------------------------------------
def test_loaders_read_the_documented_formats(datadir: Path) -> None:
    ref = write_stocks29(datadir)
    got = load_stocks29()
    assert got.shape == (150, 29) and list(got.columns) == list(STOCKS29_TICKERS)
    np.testing.assert_allclose(got.to_numpy(), ref.to_numpy(), rtol=1e-15)
    train, test, xy = write_lightsensor(datadir)
    ls = load_lightsensor()
    np.testing.assert_array_equal(ls.train, train)
    np.testing.assert_array_equal(ls.test, test)
    np.testing.assert_allclose(ls.coords, xy, rtol=1e-15)
    write_stockpicking(datadir)
    sp = load_stockpicking()
    assert set(sp) == set(STOCKPICKING_TICKERS)
    assert all(list(f.columns) == ["Open", "High", "Low", "Close", "Volume"] for f in sp.values())


def _shifted_dates(n: int) -> list[str]:  # the same count of days, one calendar day later
    return list((_dates("2010-01-04", "2022-01-31") + pd.Timedelta(days=1)).strftime("%Y-%m-%d"))[
        :n
    ]


def _corrupt(path: Path, fn) -> None:  # noqa: ANN001
    df = pd.read_csv(path)
    fn(df)
    df.to_csv(path, index=False)


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda df: df.__setitem__("KO", np.where(df.index == 3, np.nan, df["KO"])), "missing"),
        (lambda df: df.__setitem__("GE", np.where(df.index == 5, -1.0, df["GE"])), "'GE'"),
        (lambda df: df.pop("MMM"), "MMM"),
        (lambda df: df.__setitem__("Date", df["Date"][::-1].to_numpy()), "increasing"),
        (lambda df: df.__setitem__("Date", "04/01/2016"), "ISO"),
        (lambda df: df.__setitem__("XOM", "n/a"), "missing"),
        (lambda df: df.__setitem__("XOM", "abc"), "non-numeric"),
    ],
)
def test_bad_stock_file_names_file_problem_and_fix(datadir: Path, mutate, message: str) -> None:  # noqa: ANN001
    write_stocks29(datadir)
    path = datadir / "chowdhury2019_fin" / "fin.csv"
    _corrupt(path, mutate)
    with pytest.raises(DataFormatError, match=message) as e:
        load_stocks29()
    assert "fin.csv" in str(e.value) and "hbo-bench data fetch" in str(e.value)


def test_bad_lightsensor_and_stockpicking_files(datadir: Path) -> None:
    write_lightsensor(datadir)
    _corrupt(datadir / "cmu_iw_lightsensor" / "test_sensordata_raw.csv", lambda df: df.pop("s7"))
    with pytest.raises(DataFormatError, match="test_sensordata_raw.csv.*s1..s41"):
        load_lightsensor()
    write_stockpicking(datadir)
    _corrupt(
        datadir / "park2024_aapl_bidu_ha" / "HA.csv",
        lambda df: df.__delitem__("Date") or df.insert(0, "Date", _shifted_dates(len(df))),
    )
    with pytest.raises(DataFormatError, match="HA.csv: trading dates differ"):
        load_stockpicking()
    write_stockpicking(datadir)
    _corrupt(
        datadir / "park2024_aapl_bidu_ha" / "BIDU.csv",
        lambda df: df.__setitem__("Volume", np.where(df.index == 7, 0.0, df["Volume"])),
    )
    with pytest.raises(DataFormatError, match="BIDU.csv: column 'Volume'.*> 0"):
        load_stockpicking()


@pytest.mark.parametrize(
    "env_id, name",
    [
        ("hbo/Stocks29-v0", "stocks29"),
        ("hbo/LightSensor-v0", "lightsensor"),
        ("hbo/StockPicking-v0", "stockpicking"),
    ],
)
def test_missing_data_names_the_command(datadir: Path, env_id: str, name: str) -> None:
    assert missing_files(name)
    with pytest.raises(DataNotFoundError, match=f"hbo-bench data fetch {name}") as e:
        gym.make(env_id)
    assert f"python -m data_scripts.{name}" in str(e.value) and "--from" in str(e.value)
    from hbo_envs.harness import build_cells, parse_agent

    with pytest.raises(DataNotFoundError, match=f"hbo-bench data fetch {name}"):
        build_cells([env_id], [parse_agent("random")], 2)  # a sweep stops before running
    from hbo_envs.registration import env_table_markdown

    table = env_table_markdown()  # the README table still lists the env
    assert f"| `{env_id}` | " in table and f"needs data: `hbo-bench data fetch {name}`" in table


# -- env constants against hand computations ------------------------------------------------
def _corr(X: np.ndarray) -> np.ndarray:  # an independent implementation: numpy's corrcoef
    return np.corrcoef(X, rowvar=False)


def _check_psd_kernel(K: np.ndarray) -> None:
    np.testing.assert_array_equal(K, K.T)
    assert np.linalg.eigvalsh(K).min() > -1e-10
    np.testing.assert_allclose(np.diag(K), 1.0, rtol=0, atol=0)


def test_stocks29_constants_by_hand(datadir: Path) -> None:
    P = write_stocks29(datadir).to_numpy()
    env = gym.make("hbo/Stocks29-v0", horizon=4000).unwrapped
    p = env.problem
    m = P.mean(axis=0)
    f = m / m.max()
    np.testing.assert_allclose(env.objective.values, f, rtol=1e-13)
    assert env.objective.argmax == int(np.argmax(m)) and env.objective.f_star == pytest.approx(1)
    np.testing.assert_allclose(p.kernel_matrix, _corr(P), atol=1e-12)
    _check_psd_kernel(np.asarray(p.kernel_matrix))
    K = _corr(P)
    assert p.B == pytest.approx(np.sqrt(f @ np.linalg.solve(K, f)), rel=1e-6)
    Y = P / m.max()
    assert p.v == pytest.approx(np.max(np.mean(Y**2, axis=0)), rel=1e-12)
    assert p.nu == pytest.approx(np.max(np.var(Y, axis=0)), rel=1e-12)
    assert p.meta["v_pooled"] == pytest.approx(np.mean(Y**2), rel=1e-12)
    assert p.v >= p.meta["v_pooled"]
    # payoffs are real observations of the arm, unbiased for f: Monte Carlo with a tolerance
    # of 5 standard errors of the mean
    env.reset(seed=3)
    a = 4
    ys = np.array([env.step(a)[1] for _ in range(4000)])
    assert np.all(np.isin(ys, Y[:, a]))
    assert abs(ys.mean() - f[a]) < 5 * Y[:, a].std() / np.sqrt(ys.size)
    check_env(gym.make("hbo/Stocks29-v0", horizon=20).unwrapped, skip_render_check=True)


def test_lightsensor_constants_and_coordinates(datadir: Path) -> None:
    train, test, xy = write_lightsensor(datadir)
    env = gym.make("hbo/LightSensor-v0").unwrapped
    p = env.problem
    m = test.mean(axis=0)
    np.testing.assert_allclose(env.objective.values, m / m.max(), rtol=1e-13)
    np.testing.assert_allclose(p.kernel_matrix, _corr(train), atol=1e-12)
    _check_psd_kernel(np.asarray(p.kernel_matrix))
    scaled = (xy - xy.min(axis=0)) / (xy.max(axis=0) - xy.min(axis=0))
    np.testing.assert_allclose(p.points, scaled, atol=1e-15)
    assert p.kernel.analytic is False
    assert p.meta["coordinate_kernel"] == {"name": "se", "lengthscale": np.sqrt(0.1)}
    se = gym.make("hbo/LightSensor-v0", kernel="se").unwrapped.problem
    d2 = ((scaled[:, None, :] - scaled[None, :, :]) ** 2).sum(-1)
    np.testing.assert_allclose(se.kernel_matrix, np.exp(-d2 / (2 * 0.1)), atol=1e-14)
    with pytest.raises(ValueError, match="'kernel' parameter of LightSensorEnv"):
        gym.make("hbo/LightSensor-v0", kernel="matern")


def test_stockpicking_reading_by_hand(datadir: Path) -> None:
    frames = write_stockpicking(datadir)
    env = gym.make("hbo/StockPicking-v0", horizon=50).unwrapped
    close = pd.DataFrame({t: frames[t]["Close"] for t in STOCKPICKING_TICKERS})
    rate = close.pct_change()
    test_days = close.loc["2018-01-01":"2021-12-31"].index
    nxt = [close.index[close.index.get_loc(d) + 1] for d in test_days[:50]]
    expected = rate.loc[nxt].to_numpy()
    np.testing.assert_allclose(env.round_values[:50], expected, rtol=1e-9, atol=1e-15)
    assert env.max_rounds == len(test_days)
    env.reset(seed=0)
    for t, a in enumerate([0, 2, 1, 1, 0]):
        _, y, _, _, info = env.step(a)
        assert y == pytest.approx(expected[t, a], rel=1e-9, abs=1e-15)
        assert info["regret"] == pytest.approx(expected[t].max() - expected[t, a], abs=1e-14)
    # constants from the training period only (<= 2017)
    tr = rate.loc[:"2017-12-31"].iloc[1:]
    np.testing.assert_allclose(env.objective.values, tr.mean().to_numpy(), rtol=1e-10)
    Ks = []
    for col in ("Open", "High", "Low", "Close", "Volume"):
        x = pd.DataFrame({t: frames[t][col] for t in STOCKPICKING_TICKERS}).pct_change()
        Ks.append(_corr(x.loc[:"2017-12-31"].iloc[1:].to_numpy()))
    np.testing.assert_allclose(env.problem.kernel_matrix, np.mean(Ks, axis=0), atol=1e-12)
    _check_psd_kernel(np.asarray(env.problem.kernel_matrix))
    assert env.problem.v == pytest.approx((tr.to_numpy() ** 2).mean(axis=0).max(), rel=1e-12)
    with pytest.raises(ValueError, match="'horizon' parameter of StockPickingEnv"):
        gym.make("hbo/StockPicking-v0", horizon=env.max_rounds + 1)
    check_env(gym.make("hbo/StockPicking-v0", horizon=20).unwrapped, skip_render_check=True)


def test_ks_statistic_matches_its_definition() -> None:
    from scipy.stats import norm

    x = np.random.default_rng(1).standard_t(2.5, 400)
    z = np.sort((x - x.mean()) / x.std(ddof=1))
    F = norm.cdf(z)
    n = x.size
    D = max(np.max(np.arange(1, n + 1) / n - F), np.max(F - np.arange(n) / n))
    assert ks_gaussian(x).statistic == pytest.approx(D, rel=1e-12)
    with pytest.raises(ValueError, match="'x' parameter of ks_gaussian"):
        ks_gaussian([1.0, np.nan, 2.0])


# -- data scripts: fetch with a stand-in for the network, import, interruption -------------
class FakeYF:
    """A stand-in ``yfinance`` module recording every request."""

    def __init__(self, fail_on: str | None = None, exc: BaseException | None = None) -> None:
        self.calls: list[tuple[str, dict]] = []
        self.fail_on, self.exc = fail_on, exc

    def module(self) -> types.ModuleType:
        m = types.ModuleType("yfinance")
        m.download = self.download  # type: ignore[attr-defined]
        return m

    def download(self, symbol: str, **kw: object) -> pd.DataFrame:
        self.calls.append((symbol, kw))
        if symbol == self.fail_on:
            raise self.exc or ConnectionError("network unreachable")
        idx = pd.bdate_range(str(kw["start"]), pd.Timestamp(str(kw["end"])) - pd.Timedelta(days=1))
        f = yahoo_frame(idx, np.random.default_rng(len(self.calls)))
        # yfinance >= 0.2.48 answers with (Price, Ticker) column levels
        f.columns = pd.MultiIndex.from_product([f.columns, [symbol]], names=["Price", "Ticker"])
        return f


def test_stocks29_fetch_builds_the_right_requests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeYF()
    monkeypatch.setitem(sys.modules, "yfinance", fake.module())
    from data_scripts import stocks29

    out = stocks29.fetch(root=tmp_path, progress=False)
    symbols = [s for s, _ in fake.calls]
    assert symbols == [("RTX" if t == "UTX" else t) for t in STOCKS29_TICKERS]
    for _, kw in fake.calls:
        assert kw["start"] == "2016-01-04" and kw["end"] == "2019-04-11"  # end is exclusive
        assert kw["auto_adjust"] is False and kw["progress"] is False
    header = (out / "fin.csv").read_text().splitlines()[0]
    assert header == "Date," + ",".join(STOCKS29_TICKERS)
    df = load_stocks29(tmp_path)
    assert df.index[0] == pd.Timestamp("2016-01-04") and df.index[-1] == pd.Timestamp("2019-04-10")
    assert json.loads((out / "SOURCE.json").read_text())["symbols"] == {"UTX": "RTX"}


def test_stockpicking_fetch_writes_the_yahoo_format(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeYF()
    monkeypatch.setitem(sys.modules, "yfinance", fake.module())
    from data_scripts import stockpicking

    out = stockpicking.fetch(root=tmp_path, progress=False)
    assert [s for s, _ in fake.calls] == ["AAPL", "BIDU", "HA"]
    assert {kw["end"] for _, kw in fake.calls} == {"2022-02-01"}
    for t in STOCKPICKING_TICKERS:
        head = (out / f"{t}.csv").read_text().splitlines()[:2]
        assert head[0] == "Date,Open,High,Low,Close,Adj Close,Volume"
        assert head[1].startswith("2010-01-0")
    assert set(load_stockpicking(tmp_path)) == set(STOCKPICKING_TICKERS)


@pytest.mark.parametrize("exc", [ConnectionError("network unreachable"), KeyboardInterrupt()])
def test_interrupted_fetch_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exc: BaseException
) -> None:
    from data_scripts import FetchError, stocks29

    monkeypatch.setitem(sys.modules, "yfinance", FakeYF("JPM", exc).module())
    with pytest.raises(FetchError if isinstance(exc, Exception) else KeyboardInterrupt) as e:
        stocks29.fetch(root=tmp_path, progress=False)
    assert list(tmp_path.iterdir()) == [] or not any(tmp_path.rglob("*.csv"))
    assert not any(p.name.startswith(".staging") for p in tmp_path.iterdir())
    if isinstance(exc, Exception):
        assert "JPM" in str(e.value) and "nothing was written" in str(e.value)
    # an existing data set survives a failed re-fetch untouched
    write_stocks29(tmp_path)
    before = (tmp_path / "chowdhury2019_fin" / "fin.csv").read_bytes()
    monkeypatch.setitem(sys.modules, "yfinance", FakeYF("JPM", ConnectionError("down")).module())
    with pytest.raises(FetchError):
        stocks29.fetch(root=tmp_path, progress=False)
    assert (tmp_path / "chowdhury2019_fin" / "fin.csv").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chowdhury2019_fin"]


def test_yfinance_empty_answer_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from data_scripts import FetchError, stockpicking

    m = types.ModuleType("yfinance")
    m.download = lambda symbol, **kw: pd.DataFrame()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "yfinance", m)
    with pytest.raises(FetchError, match="no data for AAPL"):
        stockpicking.fetch(root=tmp_path, progress=False)
    assert list(tmp_path.iterdir()) == []


def test_lightsensor_download_failure_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import urllib.error

    from data_scripts import FetchError, _common, lightsensor

    def offline(url: str, timeout: float = 0) -> None:
        raise urllib.error.URLError("Name or service not known")

    monkeypatch.setattr(_common.urllib.request, "urlopen", offline)
    with pytest.raises(FetchError, match="Could not download .*iw_data_all.mat"):
        lightsensor.fetch(root=tmp_path, progress=False)
    assert list(tmp_path.iterdir()) == []


# -- on the real files (../shared/data) ------------------------------------------------------
@needs_shared
def test_real_data_shapes_and_kernels() -> None:
    P = load_stocks29(SHARED)
    assert P.shape == (823, 29)
    assert str(P.index[0].date()) == "2016-01-04" and str(P.index[-1].date()) == "2019-04-10"
    ls = load_lightsensor(SHARED)
    assert ls.train.shape == (601, 41) and ls.test.shape == (192, 41) and ls.coords.shape == (41, 2)
    for env_id in ("hbo/Stocks29-v0", "hbo/LightSensor-v0", "hbo/StockPicking-v0"):
        env = gym.make(env_id, horizon=30).unwrapped
        _check_psd_kernel(np.asarray(env.problem.kernel_matrix))
        f = env.objective.values
        assert env.objective.f_star == max(f) and env.objective.argmax == int(np.argmax(f))
        assert env.problem.kernel_jitter == 0.0  # the data kernels are positive definite
        check_env(env, skip_render_check=True)
    stocks = gym.make("hbo/Stocks29-v0").unwrapped
    assert stocks.arms[stocks.objective.argmax] == P.mean().idxmax()
    assert (stocks.ks_statistics().pvalue < 0.05).all()  # the paper's KS claim holds


@needs_shared
def test_import_from_the_real_files(tmp_path: Path) -> None:
    from data_scripts import lightsensor, stockpicking, stocks29

    stocks29.import_from(SHARED / "chowdhury2019_fin", root=tmp_path / "a")
    pd.testing.assert_frame_equal(load_stocks29(tmp_path / "a"), load_stocks29(SHARED))
    # the long Yahoo OHLCV table pivots to the same 29 x 823 layout (Yahoo's adjustment)
    stocks29.import_from(SHARED / "djia29_yahoo_2016_2019", root=tmp_path / "b")
    y = load_stocks29(tmp_path / "b")
    assert y.shape == (823, 29) and y.index.equals(load_stocks29(SHARED).index)
    lightsensor.import_from(SHARED / "cmu_iw_lightsensor" / "iw_data_all.mat", root=tmp_path / "c")
    for f in lightsensor.FILES:  # the .mat converts to the shared CSVs byte for byte
        assert (tmp_path / "c" / "cmu_iw_lightsensor" / f).read_bytes() == (
            SHARED / "cmu_iw_lightsensor" / f
        ).read_bytes()
    stockpicking.import_from(SHARED / "park2024_aapl_bidu_ha", root=tmp_path / "d")
    got, ref = load_stockpicking(tmp_path / "d"), load_stockpicking(SHARED)
    for t in STOCKPICKING_TICKERS:
        pd.testing.assert_frame_equal(got[t], ref[t], rtol=1e-9)


@needs_shared
def test_lightsensor_fetch_with_a_local_stand_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    from data_scripts import _common, lightsensor

    blob = (SHARED / "cmu_iw_lightsensor" / "iw_data_all.mat").read_bytes()
    seen = []

    class Resp(io.BytesIO):
        headers = {"Content-Length": str(len(blob))}

    def urlopen(url: str, timeout: float = 0) -> Resp:
        seen.append(url)
        return Resp(blob)

    monkeypatch.setattr(_common.urllib.request, "urlopen", urlopen)
    out = lightsensor.fetch(root=tmp_path, progress=False)
    assert seen == [lightsensor.URL]
    assert sorted(p.name for p in out.iterdir()) == sorted([*lightsensor.FILES, "SOURCE.json"])
    np.testing.assert_array_equal(load_lightsensor(tmp_path).test, load_lightsensor(SHARED).test)
    # a corrupted download fails its checksum and writes nothing
    blob = blob[:-10] + b"0" * 10
    with pytest.raises(_common.FetchError, match="SHA-256"):
        lightsensor.fetch(root=tmp_path / "x", progress=False)
    assert list((tmp_path / "x").iterdir()) == []


def test_cli_data_list_and_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:  # noqa: ANN001
    from hbo_envs.cli import main

    monkeypatch.setenv("HBO_DATA_DIR", str(tmp_path / "dd"))
    assert main(["data", "list"]) == 0
    out = capsys.readouterr().out
    assert "stocks29" in out and "missing" in out and "hbo-bench data fetch stocks29" in out
    src = tmp_path / "src"
    write_stocks29(src)
    assert main(["data", "import", "stocks29", "--from", str(src / "chowdhury2019_fin")]) == 0
    assert main(["data", "list"]) == 0
    assert "present" in capsys.readouterr().out
    assert main(["data", "import", "lightsensor", "--from", str(tmp_path / "nope")]) == 1
    assert "Nothing to import" in capsys.readouterr().err


def test_qff_refuses_the_data_kernel(datadir: Path) -> None:
    import agents

    if "ata-gp-ucb-qff" not in agents.available():
        pytest.skip("ata-gp-ucb-qff is not in this build of agents (issue 9)")
    write_lightsensor(datadir)
    env = gym.make("hbo/LightSensor-v0").unwrapped
    with pytest.raises(ValueError, match="(?i)kernel"):
        agents.make("ata-gp-ucb-qff").reset(env.problem, seed=0)


# -- experiments --------------------------------------------------------------------------
def test_real_data_experiments_are_registered_with_claims() -> None:
    from hbo_envs.judging.experiments import EXPERIMENTS

    for name, env in (
        ("cg2019-fig1d", "hbo/Stocks29-v0"),
        ("cg2019-fig1e", "hbo/LightSensor-v0"),
        ("pl2024-table2", "hbo/StockPicking-v0"),
    ):
        e = EXPERIMENTS[name]
        assert e.envs == (env,) and e.seeds == 10 and e.horizon == 1000 and e.claims
        specs, skipped = e.agent_specs(available={"tgp-ucb", "gp-ucb", "random"})
        assert "random" in [s.label for s in specs]  # the floor
        assert "ata-gp-ucb-nystrom" in skipped
    assert any("qff" in a.label for a in EXPERIMENTS["cg2019-fig1e"].paper)
    assert not any("qff" in a.label for a in EXPERIMENTS["cg2019-fig1d"].paper)


def test_paper_value_claim_verdicts() -> None:
    from hbo_envs.judging.experiments.real_data import PaperValue
    from hbo_envs.judging.rules.claims import DOES_NOT, NOT_RUN, REPRODUCES, evaluate_claims

    rec = pd.DataFrame(
        {"env_id": "e", "agent": "a", "seed": range(6), "t": 100, "regret": [27.0, 28, 29] * 2}
    )
    verdict = [v.verdict for v in evaluate_claims([PaperValue("x", "", "a", 28.4)], rec)]
    assert verdict == [REPRODUCES]
    verdict = [v.verdict for v in evaluate_claims([PaperValue("x", "", "a", 40.0)], rec)]
    assert verdict == [DOES_NOT]
    verdict = [v.verdict for v in evaluate_claims([PaperValue("x", "", "b", 28.0)], rec)]
    assert verdict == [NOT_RUN]


def test_reproduce_without_data_says_how_to_get_it(datadir: Path, capsys) -> None:  # noqa: ANN001
    from hbo_envs.cli import main

    assert main(["reproduce", "pl2024-table2", "--quick", "--out", str(datadir / "r")]) == 2
    err = capsys.readouterr().err
    assert "hbo-bench data fetch stockpicking" in err
    assert not (datadir / "r" / "cells").exists()  # nothing ran


@needs_shared
def test_real_data_envs_are_learnable() -> None:
    """GP-UCB with a constant beta = 1 (the posterior engine on the data kernel) beats the
    exact expected regret of uniform play, sum_t mean_s (f* - f(s)), by far in 300 rounds."""
    import agents

    for env_id in ("hbo/Stocks29-v0", "hbo/LightSensor-v0"):
        env = gym.make(env_id, horizon=300).unwrapped
        f = env.objective.values
        random_regret = 300 * float(np.mean(f.max() - f))
        agent = agents.make("gp-ucb", beta=1.0)
        env.reset(seed=0)
        agent.reset(env.problem, seed=0)
        R = 0.0
        for _ in range(300):
            a = agent.act()
            _, y, _, _, info = env.step(a)
            agent.update(a, y)
            R += info["regret"]
        assert R < 0.6 * random_regret, (env_id, R, random_regret)
