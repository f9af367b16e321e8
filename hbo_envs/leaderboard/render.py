"""Rendering of leaderboards: ``README.md`` + ``regret.svg`` + ``index.html`` per suite, and
``leaderboards/index.html``.

Everything rendered is a pure function of the suite definitions and the submission files
(no clock, no absolute paths, no machine facts), so a fresh render of the committed
submissions reproduces the committed pages byte for byte (a test checks it). Submissions
that fail :func:`~hbo_envs.leaderboard.submission.validate` are left out (and reported).
Plots are hand-written SVG (deterministic, and embeddable in the HTML page, which loads no
external scripts, styles or fonts; the sortable table is ~20 lines of inline JavaScript).

Ranking: by the normalized score (mean over envs of ``1 − IQM(agent) / IQM(random)``,
see :mod:`~hbo_envs.leaderboard.aggregate`), then by mean rank, then by name.
"""

from __future__ import annotations

import html
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from hbo_envs.harness.stats import iqm
from hbo_envs.leaderboard.entries import Entry, collect_entries
from hbo_envs.leaderboard.suite import Suite, leaderboards_root, list_suites, load_suite

__all__ = ["Entry", "collect_entries", "render_all", "render_suite"]

PALETTE = (
    "#1f77b4",
    "#d62728",
    "#2ca02c",
    "#9467bd",
    "#ff7f0e",
    "#8c564b",
    "#e377c2",
    "#17becf",
    "#bcbd22",
    "#393b79",
)
RANDOM_COLOR = "#7f7f7f"


# -- formatting -------------------------------------------------------------------------------
def _g(x: float, digits: int = 4) -> str:
    if not np.isfinite(x):
        return "n/a"
    return f"{x:.{digits}g}"


def _f(x: float, digits: int = 3) -> str:
    return f"{x:.{digits}f}" if np.isfinite(x) else "n/a"


def _short_env(env_id: str) -> str:
    return env_id.removeprefix("hbo/")


def _code(sub: dict[str, Any]) -> str:
    c = sub["agent"]["code"]
    rev = (c.get("revision") or "no git")[:10]
    if c.get("dirty"):
        rev += " (dirty)"
    return rev


def _pkgs(sub: dict[str, Any]) -> str:
    p = sub["provenance"]["packages"]
    keys = ("hbo-bench", "python", "numpy", "scipy", "gymnasium")
    return ", ".join(f"{k} {p.get(k)}" for k in keys if p.get(k))


def _curves(
    entries: list[Entry], env_id: str
) -> list[tuple[str, str, bool, list[int], list[float]]]:
    out = []
    i = 0
    for e in entries:
        rows = [r for r in e.sub["results"] if r["env_id"] == env_id]
        t = rows[0]["checkpoints"]["t"]
        vals = np.array([r["checkpoints"]["regret"] for r in rows])
        y = [iqm(vals[:, k]) for k in range(vals.shape[1])]
        if e.is_random:
            color, dashed = RANDOM_COLOR, True
        else:
            color, dashed = PALETTE[i % len(PALETTE)], False
            i += 1
        out.append((e.name, color, dashed, t, y))
    return out


def _nice_ticks(hi: float, n: int = 4) -> list[float]:
    if hi <= 0:
        return [0.0]
    step = 10 ** np.floor(np.log10(hi / n))
    for m in (1, 2, 2.5, 5, 10):
        if hi / (m * step) <= n:
            step *= m
            break
    return [float(k * step) for k in range(int(np.floor(hi / step)) + 1)]


def svg_panel(title: str, series: list[Any], *, x0: int, y0: int, w: int, h: int) -> str:
    """One panel (axes, ticks, polylines) of IQM ``R_t`` curves, as SVG elements."""
    left, bottom, top, right = 52, 30, 22, 10
    pw, ph = w - left - right, h - top - bottom
    xmax = max(max(s[3]) for s in series)
    ymax = max(max(s[4]) for s in series) or 1.0
    xt, yt = _nice_ticks(xmax), _nice_ticks(ymax)
    ymax = max(ymax, yt[-1])

    def X(v: float) -> float:
        return x0 + left + pw * v / xmax

    def Y(v: float) -> float:
        return y0 + top + ph * (1 - v / ymax)

    parts = [
        f'<text x="{x0 + left + pw / 2:.1f}" y="{y0 + 14}" text-anchor="middle" '
        f'font-size="12" font-weight="bold">{html.escape(title)}</text>',
        f'<rect x="{x0 + left}" y="{y0 + top}" width="{pw}" height="{ph}" fill="none" '
        'stroke="#999" stroke-width="0.8"/>',
    ]
    for v in yt:
        parts.append(
            f'<line x1="{x0 + left}" y1="{Y(v):.1f}" x2="{x0 + left + pw}" y2="{Y(v):.1f}" '
            'stroke="#e5e5e5" stroke-width="0.6"/>'
            f'<text x="{x0 + left - 4}" y="{Y(v) + 3:.1f}" text-anchor="end" '
            f'font-size="9">{v:g}</text>'
        )
    for v in xt:
        parts.append(
            f'<text x="{X(v):.1f}" y="{y0 + top + ph + 12}" text-anchor="middle" '
            f'font-size="9">{v:g}</text>'
        )
    parts.append(
        f'<text x="{x0 + left + pw / 2:.1f}" y="{y0 + h - 4}" text-anchor="middle" '
        'font-size="9">round t</text>'
        f'<text transform="translate({x0 + 10},{y0 + top + ph / 2:.1f}) rotate(-90)" '
        'text-anchor="middle" font-size="9">IQM R_t</text>'
    )
    for _name, color, dashed, t, y in series:
        pts = " ".join(f"{X(a):.1f},{Y(b):.1f}" for a, b in zip(t, y, strict=True))
        dash = ' stroke-dasharray="4 3"' if dashed else ""
        parts.append(
            f'<polyline points="{pts}" fill="none" stroke="{color}" stroke-width="1.4"{dash}/>'
        )
    return "\n".join(parts)


def regret_svg(suite: Suite, entries: list[Entry]) -> str:
    """Small multiples: the IQM over seeds of ``R_t`` per env, one line per submission."""
    cols, w, h = 3, 300, 210
    envs = suite.env_ids
    rows = (len(envs) + cols - 1) // cols
    legend_h = 18 * ((len(entries) + 3) // 4) + 10
    W, H = cols * w, rows * h + legend_h + 20
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
        f'viewBox="0 0 {W} {H}" font-family="sans-serif" role="img" '
        f'aria-label="IQM cumulative regret per env, {html.escape(suite.id)}">',
        f'<rect width="{W}" height="{H}" fill="white"/>',
        f'<text x="8" y="14" font-size="11">IQM over {len(suite.seeds)} seeds of the '
        "cumulative regret R_t (lower is better); random: dashed grey</text>",
    ]
    for i, env in enumerate(envs):
        parts.append(
            svg_panel(
                _short_env(env),
                _curves(entries, env),
                x0=(i % cols) * w,
                y0=20 + (i // cols) * h,
                w=w,
                h=h,
            )
        )
    ly = 20 + rows * h + 6
    color_of = {name: (color, dashed) for name, color, dashed, _, _ in _curves(entries, envs[0])}
    for k, e in enumerate(entries):
        color, dashed = color_of[e.name]
        x, y = 10 + (k % 4) * (W // 4), ly + 18 * (k // 4)
        dash = ' stroke-dasharray="4 3"' if dashed else ""
        parts.append(
            f'<line x1="{x}" y1="{y + 6}" x2="{x + 22}" y2="{y + 6}" stroke="{color}" '
            f'stroke-width="2"{dash}/><text x="{x + 27}" y="{y + 10}" font-size="11">'
            f"{html.escape(e.name)}</text>"
        )
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


# -- README -----------------------------------------------------------------------------------
def _env_lines(suite: Suite) -> list[str]:
    out = ["| env | horizon T | kwargs |", "|---|---|---|"]
    for e in suite.envs:
        kw = json.dumps(dict(e.kwargs)) if e.kwargs else "—"
        out.append(f"| `{e.id}` | {e.horizon} | {kw} |")
    return out


def readme_md(suite: Suite, entries: list[Entry]) -> str:
    envs = suite.env_ids
    lines = [
        f"# Leaderboard `{suite.id}`: {suite.title}",
        "",
        f"<!-- Generated by `hbo-bench leaderboard render {suite.id}`; do not edit by hand. -->",
        "",
        suite.description,
        "",
        *_env_lines(suite),
        "",
        f"Public seeds: {', '.join(map(str, suite.seeds))}. Metric: final cumulative regret "
        "`R_T` (and `R_T / T`), aggregated over seeds by the interquartile mean (IQM) with a "
        f"{suite.confidence:.0%} stratified-bootstrap CI ({suite.bootstrap_reps} replicates). "
        "**Score** = mean over envs of `1 − IQM(agent) / IQM(random)`: uniform play scores 0, "
        "zero regret scores 1. **Mean rank** = rank by IQM on each env (1 = best), averaged.",
        "",
    ]
    if not entries:
        lines += ["No submissions yet.", ""]
        return "\n".join(lines)
    head = ["#", "agent", "score [95% CI]", "mean rank"]
    head += [f"{_short_env(x)} IQM R_T [CI]" for x in envs] + ["verification"]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for e in entries:
        row = [str(e.rank), f"`{e.name}`"]
        row.append(f"{_f(e.score)} [{_f(e.score_lo)}, {_f(e.score_hi)}]")
        row.append(_f(e.mean_rank, 2))
        for x in envs:
            a = e.iqm(x)
            row.append(f"{_g(a['iqm'])} [{_g(a['ci_low'])}, {_g(a['ci_high'])}]")
        row.append(f"{e.status} {e.date}".strip())
        lines.append("| " + " | ".join(row) + " |")
    lines += [
        "",
        "![IQM cumulative regret per env](regret.svg)",
        "",
        "Interactive page (sortable table, provenance): [index.html](index.html). "
        "Submission files: [submissions/](submissions/).",
        "",
        "| agent | import path | params | code revision | packages |",
        "|---|---|---|---|---|",
    ]
    for e in entries:
        a = e.sub["agent"]
        lines.append(
            f"| `{e.name}` | `{a['import_path']}` | `{json.dumps(a['params'])}` | "
            f"{_code(e.sub)} | {_pkgs(e.sub)} |"
        )
    return "\n".join(lines) + "\n"


# -- HTML -------------------------------------------------------------------------------------
_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:2em auto;max-width:1200px;
padding:0 1em;color:#222}
table{border-collapse:collapse;margin:1em 0;font-size:13px}
th,td{border:1px solid #ccc;padding:4px 8px;text-align:right;vertical-align:top}
th{background:#f3f3f3;cursor:pointer;user-select:none;white-space:nowrap}
td.l,th.l{text-align:left}
td code{white-space:nowrap}
.scroll{overflow-x:auto}
th[aria-sort=ascending]::after{content:" \\25B2"}
th[aria-sort=descending]::after{content:" \\25BC"}
.ci{color:#777;font-size:11px}
.verified{color:#17713a}.flagged{color:#a36200}.failed,.stale{color:#b00020}
.unverified{color:#777}
code{font-size:12px}
"""

_JS = """
(function () {
  function key(td) {
    var v = td.getAttribute("data-sort");
    if (v === null) { v = td.textContent; }
    var x = parseFloat(v);
    return isNaN(x) ? {n: false, v: v} : {n: true, v: x};
  }
  var tables = document.querySelectorAll("table.sortable");
  Array.prototype.forEach.call(tables, function (table) {
    var ths = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(ths, function (th, i) {
      th.addEventListener("click", function () {
        var asc = th.getAttribute("aria-sort") !== "ascending";
        Array.prototype.forEach.call(ths, function (o) { o.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", asc ? "ascending" : "descending");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = key(a.cells[i]), y = key(b.cells[i]);
          if (x.n !== y.n) { return x.n ? -1 : 1; }
          var c = x.n ? x.v - y.v : String(x.v).localeCompare(String(y.v));
          return asc ? c : -c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
})();
"""


def _td(text: str, sort: Any = None, cls: str = "") -> str:
    s = "" if sort is None else f' data-sort="{html.escape(str(sort))}"'
    c = f' class="{cls}"' if cls else ""
    return f"<td{c}{s}>{text}</td>"


def _num(x: float) -> str:
    return repr(float(x)) if np.isfinite(x) else "NaN"


def _page(title: str, body: str) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<link rel="icon" href="data:,">\n'
        f"<title>{html.escape(title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
        f"{body}\n<script>{_JS}</script>\n</body>\n</html>\n"
    )


def suite_html(suite: Suite, entries: list[Entry], svg: str | None) -> str:
    envs = suite.env_ids
    b = [
        '<p><a href="../index.html">All leaderboards</a></p>',
        f"<h1>{html.escape(suite.id)}: {html.escape(suite.title)}</h1>",
        f"<p>{html.escape(suite.description)}</p>",
        "<p>Envs: "
        + ", ".join(f"<code>{html.escape(e.id)}</code> (T = {e.horizon})" for e in suite.envs)
        + f". Public seeds: {', '.join(map(str, suite.seeds))}.</p>",
        "<p>Per env: interquartile mean (IQM) of the final cumulative regret R<sub>T</sub> "
        f"over seeds, with its {suite.confidence:.0%} stratified-bootstrap CI. "
        "<b>Score</b>: mean over envs of 1 − IQM(agent)/IQM(random) (random = 0, zero regret "
        "= 1). <b>Mean rank</b>: rank by IQM per env, averaged. Click a column header to sort."
        "</p>",
    ]
    if not entries:
        b.append("<p><b>No submissions yet.</b></p>")
        return _page(f"hbo-bench leaderboard {suite.id}", "\n".join(b))
    head = ['<th class="l">#</th>', '<th class="l">agent</th>', "<th>score</th>"]
    head += ["<th>mean rank</th>"]
    head += [f"<th>{html.escape(_short_env(x))}</th>" for x in envs]
    head += ["<th>R<sub>T</sub>/T (mean over envs of IQM)</th>", '<th class="l">verification</th>']
    b.append(
        '<div class="scroll"><table id="ranking" class="sortable">\n<thead><tr>'
        + "".join(head)
        + "</tr></thead>"
    )
    b.append("<tbody>")
    for e in entries:
        cells = [
            _td(str(e.rank), e.rank, "l"),
            _td(f"<code>{html.escape(e.name)}</code>", e.name, "l"),
            _td(
                f'{_f(e.score)} <span class="ci">[{_f(e.score_lo)}, {_f(e.score_hi)}]</span>',
                _num(e.score),
            ),
            _td(_f(e.mean_rank, 2), _num(e.mean_rank)),
        ]
        for x in envs:
            a = e.iqm(x)
            cells.append(
                _td(
                    f'{_g(a["iqm"])} <span class="ci">[{_g(a["ci_low"])}, '
                    f"{_g(a['ci_high'])}]</span>",
                    _num(a["iqm"]),
                )
            )
        avg = float(np.mean([e.iqm(x)["avg_iqm"] for x in envs]))
        cells.append(_td(_g(avg), _num(avg)))
        cells.append(_td(f'<span class="{e.status}">{e.status}</span> {e.date}', e.status, "l"))
        b.append('<tr class="entry">' + "".join(cells) + "</tr>")
    b.append("</tbody></table></div>")
    if svg:
        b += ["<h2>Regret curves</h2>", svg]
    b.append("<h2>Provenance</h2>")
    b.append(
        '<div class="scroll"><table id="provenance" class="sortable"><thead><tr>'
        '<th class="l">agent</th>'
        '<th class="l">import path</th><th class="l">params</th><th class="l">code revision</th>'
        '<th class="l">source sha256</th><th class="l">packages</th><th class="l">created</th>'
        '<th class="l">verification</th><th class="l">file</th></tr></thead><tbody>'
    )
    for e in entries:
        a, ver = e.sub["agent"], e.sub.get("verification") or {}
        detail = e.status + (f" {e.date}" if e.date else "")
        if ver.get("sample_seeds") is not None and e.status != "unverified":
            detail += (
                f"; re-ran seeds {ver.get('sample_seeds')}, fresh seeds "
                f"{len(ver.get('fresh_seeds') or [])}"
            )
            if ver.get("fresh_p_value") is not None:
                detail += f" (p = {ver['fresh_p_value']:.2g})"
        src = (a["code"].get("source_sha256") or "")[:12]
        b.append(
            "<tr>"
            + _td(f"<code>{html.escape(e.name)}</code>", e.name, "l")
            + _td(f"<code>{html.escape(a['import_path'])}</code>", None, "l")
            + _td(f"<code>{html.escape(json.dumps(a['params']))}</code>", None, "l")
            + _td(html.escape(_code(e.sub)), None, "l")
            + _td(html.escape(src), None, "l")
            + _td("<br>".join(html.escape(x) for x in _pkgs(e.sub).split(", ")), None, "l")
            + _td(html.escape(e.sub["provenance"]["created"]), None, "l")
            + _td(f'<span class="{e.status}">{html.escape(detail)}</span>', e.status, "l")
            + _td(
                f'<a href="submissions/{html.escape(e.file)}">{html.escape(e.file)}</a>',
                e.file,
                "l",
            )
            + "</tr>"
        )
    b.append("</tbody></table></div>")
    return _page(f"hbo-bench leaderboard {suite.id}", "\n".join(b))


def index_html(suites: list[Suite]) -> str:
    rows = []
    for s in suites:
        folder = s.folder / "submissions"
        n = len(list(folder.glob("*.json"))) if folder.is_dir() else 0
        rows.append(
            "<tr>"
            + _td(f'<a href="{html.escape(s.id)}/index.html">{html.escape(s.id)}</a>', s.id, "l")
            + _td(html.escape(s.title), s.title, "l")
            + _td(str(len(s.envs)), len(s.envs))
            + _td(str(n), n)
            + "</tr>"
        )
    body = (
        "<h1>hbo-bench leaderboards</h1>\n<p>Bandit optimization of RKHS functions under "
        "heavy-tailed and corrupted rewards. Each suite ranks verified submissions by "
        "normalized score.</p>\n"
        '<table id="suites" class="sortable"><thead><tr><th class="l">suite</th>'
        '<th class="l">title</th><th>envs</th><th>submission files</th></tr></thead><tbody>\n'
        + "\n".join(rows)
        + "\n</tbody></table>"
    )
    return _page("hbo-bench leaderboards", body)


# -- entry points -----------------------------------------------------------------------------
def _write(path: Path, text: str) -> Path:
    from hbo_envs.harness.store import _atomic_write

    _atomic_write(path, lambda p: p.write_text(text))
    path.chmod(0o644)  # the temporary file's private mode is wrong for published pages
    return path


def render_suite(suite: Suite | str, root: str | os.PathLike[str] | None = None) -> list[Path]:
    """Write ``README.md``, ``regret.svg`` (when there are entries) and ``index.html``.

    A suite whose envs are not all available here cannot validate its submissions: it is
    rendered as "no submissions yet" when it has none, else refused (``SuiteError``).
    """
    from hbo_envs.leaderboard.suite import SuiteError

    if not isinstance(suite, Suite):
        suite = load_suite(suite, root)
    folder = suite.folder
    has_files = any((folder / "submissions").glob("*.json"))
    reason = suite.unavailable_reason()
    if reason and has_files:
        raise SuiteError(
            f"Cannot render {suite.id!r} here: its submissions cannot be validated because "
            f"{reason}."
        )
    entries, notes = collect_entries(suite) if has_files else ([], [])
    for n in notes:
        print(f"left out: {n}")
    written = []
    svg = regret_svg(suite, entries) if entries else None
    if svg:
        written.append(_write(folder / "regret.svg", svg))
    else:
        (folder / "regret.svg").unlink(missing_ok=True)
    written.append(_write(folder / "README.md", readme_md(suite, entries)))
    written.append(_write(folder / "index.html", suite_html(suite, entries, svg)))
    return written


def render_index(root: str | os.PathLike[str] | None = None) -> Path:
    r = leaderboards_root(root)
    suites = [load_suite(s, r) for s in list_suites(r)]
    return _write(r / "index.html", index_html(suites))


def render_all(root: str | os.PathLike[str] | None = None) -> list[Path]:
    """Render every suite that can be rendered here (others are skipped, saying why), and
    the index."""
    from hbo_envs.leaderboard.suite import SuiteError

    r = leaderboards_root(root)
    out = []
    for s in list_suites(r):
        try:
            out += render_suite(s, r)
        except SuiteError as exc:
            print(f"skipped {s}: {exc}")
    out.append(render_index(r))
    return out
