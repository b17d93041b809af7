"""Reference values of the covariate-adjusted paired change
(internal/stats/covariate.go) from SciPy: the least-squares fit of the
rounds' log ratios on the canaries' log ratios (scipy.stats.linregress), its
intercept (the adjusted change) with the t interval and p-value from the
intercept's standard error on n-2 degrees of freedom, the slope, Pearson's
r, the share of variance removed, and the paired t test of the canaries'
own change. Run: python3 covariate_reference.py > covariate_reference.json
(SciPy 1.17.1 wrote the file beside it)."""
import json

import numpy as np
from scipy import stats

rng = np.random.default_rng(41)
cases = []

for n, shift, node, resid, canary in [(3, 0.0, 0.015, 0.01, 0.003), (5, -0.03, 0.015, 0.01, 0.003),
                                      (6, 0.0, 0.0, 0.02, 0.01), (8, -0.03, 0.02, 0.005, 0.002),
                                      (12, 0.01, 0.01, 0.01, 0.005), (20, -0.02, 0.03, 0.01, 0.01)]:
    # Each run's node quality q (what the canary sees, with its own noise)
    # and the run's residual noise.
    qa, qb = rng.normal(0, node, n), rng.normal(0, node, n)
    base = np.round(1000 * np.exp(qa + rng.normal(0, resid, n)), 3)
    cand = np.round(1000 * np.exp(shift + qb + rng.normal(0, resid, n)), 3)
    base_cov = np.round(500 * np.exp(qa + rng.normal(0, canary, n)), 3)
    cand_cov = np.round(500 * np.exp(qb + rng.normal(0, canary, n)), 3)
    d = np.log(cand) - np.log(base)
    x = np.log(cand_cov) - np.log(base_cov)
    fit = stats.linregress(x, d)
    df = n - 2
    tq = stats.t.ppf(0.975, df)
    sse = np.sum((d - fit.intercept - fit.slope * x) ** 2)
    sst = np.sum((d - d.mean()) ** 2)
    shift_t = stats.ttest_1samp(x, 0.0)
    cases.append({
        "baseline": base.tolist(), "candidate": cand.tolist(),
        "baselineCovariate": base_cov.tolist(), "candidateCovariate": cand_cov.tolist(),
        "deltaPercent": 100 * (np.exp(fit.intercept) - 1),
        "ciLowPercent": 100 * (np.exp(fit.intercept - tq * fit.intercept_stderr) - 1),
        "ciHighPercent": 100 * (np.exp(fit.intercept + tq * fit.intercept_stderr) - 1),
        "p": float(2 * stats.t.sf(abs(fit.intercept / fit.intercept_stderr), df)),
        "theta": float(fit.slope), "correlation": float(fit.rvalue),
        "varianceRemovedPercent": float(100 * (1 - (sse / df) / (sst / (n - 1)))),
        "covariateShiftPercent": float(100 * (np.exp(x.mean()) - 1)),
        "covariateShiftP": float(shift_t.pvalue),
    })
print(json.dumps({"scipy": __import__("scipy").__version__, "cases": cases}, indent=1))
