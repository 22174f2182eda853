"""The dump converter: a run's story (``converter``), its threads and workers
(``schedule``), several inputs at once (``many``), chunk files and their
formats (``chunks``, ``tables``; month folders by ``fastpgn.schema.by_month``), the resume
state (``resume``), the rejected games' file (``rejects``) and ``--limit``
(``limit``).

>>> from fastpgn.convert import Converter, Options
"""

from fastpgn.convert.converter import Converter, Options, OutputError, SharedWorkers, Summary

__all__ = ["Converter", "Options", "OutputError", "SharedWorkers", "Summary"]
