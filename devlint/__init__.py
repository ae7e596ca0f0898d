"""devlint: find PyTorch device bugs before the GPU job crashes."""

__version__ = "0.1.0"
