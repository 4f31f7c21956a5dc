"""The store package: the only code that holds SQL (see ``store.py``)."""

from .pair import StorePair
from .store import Connection, Store

__all__ = ["Connection", "Store", "StorePair"]
