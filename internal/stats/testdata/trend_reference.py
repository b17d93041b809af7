"""Reference values of the trend test (internal/stats/trend.go) from SciPy:
Kendall's tau of the values against their order with its two-sided p-value
(exact without ties, the normal approximation with the tie correction
otherwise) and Sen's slope (Theil-Sen). Run:
python3 trend_reference.py > trend_reference.json
(SciPy 1.17.1 wrote the file beside it)."""
import json

import numpy as np
from scipy import stats

rng = np.random.default_rng(7)
cases = []


def case(x, exact):
    """SciPy's figures of one case."""
    x = np.asarray(x, dtype=float)
    order = np.arange(len(x))
    k = stats.kendalltau(x, order, method="exact" if exact else "asymptotic")
    return {"values": x.tolist(), "tau": float(k.statistic), "p": float(k.pvalue), "exact": exact,
            "slope": float(stats.theilslopes(x, order).slope), "median": float(np.median(x))}


for n in (3, 4, 5, 8, 12, 20):
    for drift in (0.0, 0.01, -0.03):
        x = 1000 * (1 + drift * np.arange(n)) * (1 + 0.02 * rng.standard_normal(n))
        cases.append(case(x, True))
# Ties (values printed at their resolution): the approximation.
cases.append(case([10, 10, 11, 12, 12, 12, 13, 11, 14], False))
cases.append(case([5, 5, 5, 4, 4, 3, 3, 3, 2, 2, 1], False))
# HammerDB users' three runs on one schema, and a longer fall.
cases.append(case([104000, 77000, 68000], True))
cases.append(case([104000, 77000, 68000, 61000, 60500, 57000], True))
print(json.dumps({"cases": cases}, indent=1))
