"""scikit-learn's estimator checks for every built-in method.

Failures that follow from what these methods are (e.g. AP picks its own
number of clusters, so it cannot satisfy checks that assume ``n_clusters``)
are listed with their reason in ``ccbench.running.check_plugin.EXPECTED_FAILED_CHECKS``,
as scikit-learn's own suite does. ``ccbench check-plugin NAME`` runs the same
checks on a third-party method.
"""

from sklearn.utils.estimator_checks import parametrize_with_checks

from ccbench.running.check_plugin import (
    builtin_methods,
    check_instance,
    expected_failed_checks,
)

_SPECS = builtin_methods()


def _expected_failed(estimator):
    spec = next(s for s in _SPECS if s.estimator is type(estimator))
    return expected_failed_checks(spec)


@parametrize_with_checks([check_instance(spec) for spec in _SPECS], expected_failed_checks=_expected_failed)
def test_sklearn_compatible(estimator, check):
    check(estimator)
