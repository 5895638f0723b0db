"""gpuplan: plan GPU clusters for training and serving.

The library is usable from Python; the CLI in :mod:`gpuplan.cli.app` only parses flags and calls it.
"""

__version__ = "0.1.0"
