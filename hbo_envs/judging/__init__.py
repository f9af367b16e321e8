"""The judging layer: what decides whether a paper's claim reproduces, and what publishes it.

:mod:`hbo_envs.harness` runs cells (specs, the cell runner, records, stores, local and Ray
sweeps, summaries, plots, statistics); this package judges them. It is built in layers,
each importing only the layers below it and the harness (never the other way):

====================================  =====================================================
layer (top to bottom)                 what it holds
====================================  =====================================================
:mod:`hbo_envs.judging.cli`           ``hbo-bench archive build|verify|status|render``
:mod:`hbo_envs.judging.publish`       every published number rendered from the archive:
                                      verdict pages, README blocks, known failures
:mod:`hbo_envs.judging.archive`       the committed results archive: plan, build, status,
                                      verify, load (runs and stores the experiments)
:mod:`hbo_envs.judging.experiments`   the papers' experiments as data (envs, agents,
                                      seeds, horizons, claims); ``reproduce`` of an
                                      exponent experiment
:mod:`hbo_envs.judging.rules`         the rules a verdict comes from: claims and their
                                      decisions (:mod:`~hbo_envs.judging.rules.claims`),
                                      exponent fits (:mod:`~hbo_envs.judging.rules.exponent`),
                                      the random floor (:mod:`~hbo_envs.judging.rules.floor`)
                                      and its known failures
                                      (:mod:`~hbo_envs.judging.rules.known_failures`)
====================================  =====================================================

So an experiment states its claims with the rules, the archive runs and stores the
experiments, and the pages render the archive's verdicts; a rule knows no experiment, an
experiment no archive, the archive no page. No import is hidden inside a function to get
round this order: ``tests/test_import_layers.py`` finds no import cycle anywhere in
``hbo_envs`` and ``agents`` (counting imports inside functions), and CI runs
``lint-imports`` on the contracts in ``pyproject.toml`` (these layers; the harness never
imports the judging layer; the leaderboard's verify sits above its submission module).

This package's ``__init__`` imports nothing: import the layer you need.
"""
