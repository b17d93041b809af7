// Package stats is the one statistics package of dbperf: summaries over
// repetitions, the difference between two samples with its confidence
// interval, a significance test that does not assume normality, verdicts that
// know which direction is better and honour a minimum effect, corrections for
// many metrics at once, an instability flag, and change-point detection over
// a history. Pure Go, no cluster; docs/statistics.md explains the methods and
// gives the power figures of BenchmarkPowerSimulation.
//
// Methods, and why:
//   - Δ % is the Hodges-Lehmann estimate of the shift between the logarithms
//     of candidate and baseline (the median of all pairwise differences),
//     turned into a ratio: exp(shift) − 1. Its confidence interval is the
//     exact distribution-free interval that inverts the Mann-Whitney test
//     (Moses' method): order statistics of the pairwise differences picked by
//     the exact null distribution of U. Working on logarithms makes Δ a ratio,
//     the same whether one reads A→B or B→A (up to the sign of the log).
//   - The significance test is Mann-Whitney U (Wilcoxon rank-sum), two-sided,
//     with the exact null distribution when there are no ties and the samples
//     are small (n1·n2 ≤ 10 000), otherwise the normal approximation with tie
//     and continuity corrections.
//   - Many metrics: Holm's step-down (family-wise error) or Benjamini-Hochberg
//     (false discovery rate) adjustment of the p-values.
//   - Verdict: Better/Worse when the adjusted p-value is below alpha, the
//     interval excludes zero and |Δ| reaches the minimum effect; NoChange when
//     the whole interval lies within ± the minimum effect (equivalence shown);
//     otherwise Inconclusive. An unstable sample (CV above the limit) is
//     Inconclusive whatever the numbers say.
//   - Change points: E-divisive means (energy statistic, binary segmentation;
//     Matteson and James 2014) whose best split must pass a permutation test
//     of the statistic (which accounts for having chosen the split) and a
//     Welch t-test pruning step between the two sides, as Apache Otava
//     (Hunter) does, plus an optional minimum effect.
package stats
