"""``cobras``: COBRAS, clustering by asking pairwise questions (Van Craenendonck, Dumancic,
Van Wolputte & Blockeel, "COBRAS: Interactive clustering with pairwise queries", IDA 2018).

The algorithm lives in :mod:`.core`; this module is the estimator: the parameters, where the
oracle comes from, and the fitted attributes (the answers and the partition after each one).
"""

from __future__ import annotations

import numbers

import numpy as np

from ccbench.base import ConstrainedClusterer, InsufficientSupervisionError, Options, check_random_state

from .core import SPLIT_SEARCHES, labels_oracle, run_cobras


class COBRAS(ConstrainedClusterer):
    """COBRAS: super-instances split by k-means, merged into clusters by pairwise questions.

    Each question asks an oracle whether two points belong together (must-link) or not
    (cannot-link); the method decides which pairs to ask (:mod:`ccbench_plugins.cobras.core`:
    the largest super-instance is split into a number of parts estimated by questions, its parts
    are then merged with the clusters by questions about the closest representatives) and stops
    when ``max_questions`` answers are in or nothing is left to split. It is anytime: the partition
    after every answer is kept (``labels_history_``).

    Parameters
    ----------
    max_questions : int, default=100
        The budget: the most questions asked (>= 1). A pair is never asked twice.
    random_state : int, Generator or None, default=None
        Seeds the k-means splits.
    split_search : {"smaller", "larger"}, default="smaller"
        Which half the split-level search goes on with after a cannot-link
        (:meth:`ccbench_plugins.cobras.core._Run.split_level`): the smaller, as the authors'
        ``cobras_ts`` 0.1.3 does, or the larger (our earlier reading of the paper).

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        The clustering when the budget was spent: that of the last iteration whose merging phase
        ended (``labels_history_[-1]``).
    n_questions_ : int
        Questions asked (``<= max_questions``; fewer when every super-instance was a single point).
    queried_pairs_ : ndarray of shape (n_questions_, 2), int
        The pairs asked, in order, each ``i < j``.
    answers_ : ndarray of shape (n_questions_,), bool
        The oracle's answers (True = must-link).
    labels_history_ : ndarray of shape (n_questions_ + 1, n_samples), int
        Row ``t``: the partition after ``t`` answers (row 0: every point in one cluster), for
        anytime curves (quality against questions asked).

    Notes
    -----
    ``fit(X, oracle=f)`` asks ``f(i, j) -> bool``. Run by the ccbench harness, which passes
    ``constraints`` and no oracle yet, COBRAS asks the **exact oracle of the revealed labels**
    (``labels[i] == labels[j]``, at most ``max_questions`` times): provisional, until issue 53's
    anytime protocol hands methods an oracle; use the scheme ``oracle_labels`` (every label, no
    pairs). Labels revealed for some points only, or pairs drawn up front, are not an oracle: such a
    fit raises :class:`~ccbench.base.InsufficientSupervisionError` (harness status ``skipped``).
    """

    _parameter_constraints = {"random_state": ["random_state"], "split_search": [Options(*SPLIT_SEARCHES)]}

    def __init__(self, max_questions=100, random_state=None, split_search="smaller"):
        self.max_questions = max_questions
        self.random_state = random_state
        self.split_search = split_search

    def fit(self, X, y=None, *, oracle=None, constraints=None):
        """Cluster ``X`` by asking ``oracle(i, j) -> bool`` (True = same cluster); ``y`` is ignored."""
        self._check_budget()
        X, cons = self._validate_fit(X, constraints)
        oracle = self._resolve_oracle(oracle, constraints, cons, X.shape[0])
        run = run_cobras(X, oracle, self.max_questions, check_random_state(self.random_state),
                         split_search=self.split_search)
        pairs = list(run.answers)
        self.queried_pairs_ = np.array(pairs, dtype=np.intp).reshape(-1, 2)
        self.answers_ = np.fromiter(run.answers.values(), dtype=bool, count=len(pairs))
        self.n_questions_ = len(pairs)
        self.labels_history_ = np.array(run.history, dtype=np.intp)
        self.labels_ = self.labels_history_[-1].copy()
        return self

    def _check_budget(self) -> None:
        budget = self.max_questions
        if isinstance(budget, bool) or not isinstance(budget, numbers.Integral) or budget < 1:
            raise ValueError(f"COBRAS: max_questions must be an int >= 1 (the questions it may ask the oracle), "
                             f"got {budget!r}; with no question COBRAS would return its starting partition "
                             f"(every point in one cluster)")

    @staticmethod
    def _resolve_oracle(oracle, given, cons, n_samples: int):
        """The oracle passed, or the exact oracle of fully revealed labels (provisional harness route)."""
        if oracle is not None:
            if given is not None:
                raise ValueError("COBRAS: pass an oracle or constraints, not both; COBRAS asks its own questions")
            if not callable(oracle):
                raise TypeError(f"COBRAS: oracle must be a callable oracle(i, j) -> bool, got {type(oracle).__name__}")
            return oracle
        if cons.labels is None or np.any(cons.labels < 0):
            known = 0 if cons.labels is None else int(np.sum(cons.labels >= 0))
            raise InsufficientSupervisionError(
                f"COBRAS clusters by asking an oracle: pass fit(X, oracle=f) with f(i, j) -> bool, or (in the "
                f"harness, provisionally) constraints revealing every label (scheme oracle_labels); got "
                f"{known} of {n_samples} labels and {cons.n_must_link + cons.n_cannot_link} pairs drawn up front")
        return labels_oracle(cons.labels)
