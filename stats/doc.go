// Package stats holds the statistics of replicated A/B replays: Fisher's exact
// test and the anytime-valid e-values for pass rates and metrics, medians and
// interquartile ranges, and the decision rule (adopt, reject, skip, expand) that
// turns two arms' replicas into a verdict with the reasons for it. The reference
// computations the e-values are checked against (van Elteren's stratified rank
// test, the Wilson interval) live in its tests.
//
// It is pure computation: no files, no clock, no global random source (every
// random draw comes from the seed it is given), so equal inputs give equal
// outputs. The normal distribution is computed from math.Erfc and math.Erfinv.
package stats
