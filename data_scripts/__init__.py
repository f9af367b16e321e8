"""Scripts that fetch and prepare the real data of the real-data environments.

Run one per data set, ``python -m data_scripts.<name>`` (``stocks29``, ``lightsensor``,
``stockpicking``), or all through the CLI::

    hbo-bench data list                                   # where the data goes, what is there
    hbo-bench data fetch stocks29                         # download (yfinance / public URL)
    hbo-bench data import stocks29 --from ../shared/data/chowdhury2019_fin   # no network

Everything is written into the data directory (``$HBO_DATA_DIR``, default the per-user
cache directory) in the layout of :mod:`hbo_envs.data.paths`, never into the project.
Every write is staged in a temporary directory inside the data directory, validated with
the loaders of :mod:`hbo_envs.data.loaders`, and only then renamed into place: a failed or
interrupted fetch leaves nothing behind (and an existing data set untouched).
"""

from hbo_envs._lazy import lazy_exports

# Imported on first use (PEP 562): data_scripts._common needs pandas and the loaders, which
# ``hbo-bench``'s argument parser (it adds the ``data`` subcommand) should not pay for.
__getattr__, __dir__ = lazy_exports(__name__, {"FetchError": "data_scripts._common"})

__all__ = ["FetchError"]
