"""UCI engines: the conversation (``uci``), its process (``process``), options
(``options``), what a search reports (``info``), and a game's analysis with
lichess's layout (``analysis``).

>>> from fastpgn.engine import Engine, Score
"""

from fastpgn.engine.uci import (
    Engine,
    EngineError,
    EngineNotFoundError,
    EngineTimeoutError,
    Info,
    Option,
    Score,
    SearchResult,
    find_engine,
)

__all__ = ['Engine', 'EngineError', 'EngineNotFoundError', 'EngineTimeoutError', 'Info', 'Option', 'Score',
           'SearchResult', 'find_engine']
