"""Extraction experiments' tables, read and written for both backends.

``experiment_rows`` (an experiment and its arms created in one transaction, found by
name, listed; the work list claimed, finished and resumed; each proposed item recorded
with its candidate's row; the blind reviews and the promotions recorded) and
``experiment_results`` (what the results and the comparison count, per arm, card and
conversation). An experiment's memories are ``memories`` rows marked with their arm: the
predicates (``memories.predicates``) keep them out of every live read.

It may import the store's contract, ``memories`` (the predicates) and the foundations;
no backend (``tests/test_layers.py``).
"""
