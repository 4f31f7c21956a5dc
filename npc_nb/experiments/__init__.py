"""Extraction experiments: the same conversations under two extractors, reviewed blind,
compared with intervals and tests (``nb.experiment``, ``nb.experiments``).

``service`` (Experiments: create, open and list; the work list made in one
transaction), ``experiment`` (Experiment: run, wait, status, review, results, compare,
plot, promote), ``arms`` (an arm's configuration, checked and recorded whole; its
prompt and its extractor), ``runner`` (the background run, resumable after a killed
kernel), ``blind`` (the seeded order and what a blind card hides), ``results`` (the
results and comparison frames, from ``analytics.comparison``) and ``promotion`` (an arm
into live memory through the live matcher). Its layer sits above the services it uses
(chat's extraction prompt, review's session, analytics' statistics) and below the
facade; it holds no SQL (``store.experiments`` does).
"""

from .experiment import Experiment, ExperimentStatus
from .promotion import Promotion
from .service import Experiments

__all__ = ["Experiment", "ExperimentStatus", "Experiments", "Promotion"]
