"""Reference values of the paired analysis (internal/stats/paired.go) from
SciPy: Student's paired t on log ratios with its 95 % interval, the exact
Wilcoxon signed-rank p-value, and the exact sign-flip permutation p-value
of the mean log ratio. Run: python3 paired_reference.py > paired_reference.json
(SciPy 1.17.1 wrote the file beside it)."""
import json

import numpy as np
from scipy import stats

rng = np.random.default_rng(31)
cases = []


def case(base, cand, wilcoxon_method):
    """SciPy's figures of one case: the paired t on the logs and its
    interval, the signed-rank p-value by the method given, the exact
    sign-flip p-value."""
    d = np.log(cand) - np.log(base)
    t = stats.ttest_rel(np.log(cand), np.log(base))
    ci = t.confidence_interval(0.95)
    perm = stats.permutation_test((np.log(cand), np.log(base)), lambda x, y: np.mean(x - y),
                                  permutation_type="samples", n_resamples=np.inf, alternative="two-sided")
    out = {
        "baseline": base.tolist(), "candidate": cand.tolist(),
        "deltaPercent": 100 * (np.exp(np.mean(d)) - 1),
        "ciLowPercent": 100 * (np.exp(ci.low) - 1), "ciHighPercent": 100 * (np.exp(ci.high) - 1),
        "p": float(t.pvalue), "wilcoxonP": float(stats.wilcoxon(d, method=wilcoxon_method).pvalue),
        "permutationP": float(perm.pvalue),
    }
    if wilcoxon_method == "approx":
        out["wilcoxonApprox"] = True
    return out


for n, shift, cv, drift in [(3, 0.0, 0.02, 0.0), (5, -0.03, 0.02, 0.005), (5, 0.0, 0.02, 0.005),
                            (6, 0.05, 0.03, 0.0), (8, -0.03, 0.02, 0.01), (12, 0.01, 0.02, 0.005),
                            (16, -0.02, 0.05, 0.0), (20, 0.0, 0.01, 0.002)]:
    level = 1000 * np.exp(drift * np.arange(n))
    base = np.round(level * np.exp(rng.normal(0, cv, n)), 3)
    cand = np.round(level * np.exp(shift + rng.normal(0, cv, n)), 3)
    cases.append(case(base, cand, "exact"))
# Tied |d| (two rounds each at +1 % and +2 %): the normal approximation with
# the tie correction.
cases.append(case(np.full(7, 100.0), np.array([101.0, 99.5, 102, 102, 103, 101, 98]), "approx"))
print(json.dumps({"scipy": __import__("scipy").__version__, "cases": cases}, indent=1))
