"""Training data for chess models: the shapes models eat, built from the games fastpgn replays.

:mod:`fastpgn.training.vocab` numbers moves as the move vocabularies of
searchless chess, lc0, AlphaZero and Maia-2 number them; :mod:`fastpgn.training.labels` makes the
training columns of ``fastpgn.read_positions`` (the move's id, the Polyglot key, the mover's labels, the
mirrored rows).
"""
