// Package stats holds the statistics of replicated A/B replays: Wilson score
// intervals and Fisher's exact test for pass rates, medians and interquartile
// ranges, a seeded bootstrap interval of the difference of medians, the
// Mann-Whitney U test, and the decision rule (adopt, reject, skip, expand) that
// turns two arms' replicas into a verdict with the reasons for it.
//
// It is pure computation: no files, no clock, no global random source (every
// random draw comes from the seed it is given), so equal inputs give equal
// outputs. The normal distribution is computed from math.Erfc and math.Erfinv.
package stats
