package stats

import (
	"encoding/json"
	"math"
)

// JSON has no NaN: a statistic that does not exist (the median of no values,
// the effect no replicas could detect) is written as null and read back as NaN.

func nullable(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

func orNaN(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

type summaryJSON struct {
	N      int      `json:"n"`
	Median *float64 `json:"median"`
	Q1     *float64 `json:"q1"`
	Q3     *float64 `json:"q3"`
}

// MarshalJSON writes a missing statistic as null.
func (s Summary) MarshalJSON() ([]byte, error) {
	return json.Marshal(summaryJSON{N: s.N, Median: nullable(s.Median), Q1: nullable(s.Q1), Q3: nullable(s.Q3)})
}

// UnmarshalJSON reads null as NaN.
func (s *Summary) UnmarshalJSON(data []byte) error {
	var j summaryJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	*s = Summary{N: j.N, Median: orNaN(j.Median), Q1: orNaN(j.Q1), Q3: orNaN(j.Q3)}
	return nil
}

type intervalJSON struct {
	Lo *float64 `json:"lo"`
	Hi *float64 `json:"hi"`
	// Open names an unbounded side ("lo", "hi" or "both"): a confidence
	// sequence too few replicas bound yet. Its bound is null.
	Open string `json:"open,omitempty"`
}

// MarshalJSON writes a missing bound as null, and an unbounded one as null
// with "open" naming the side.
func (i Interval) MarshalJSON() ([]byte, error) {
	j := intervalJSON{Lo: nullable(i.Lo), Hi: nullable(i.Hi)}
	switch lo, hi := math.IsInf(i.Lo, -1), math.IsInf(i.Hi, 1); {
	case lo && hi:
		j.Open = "both"
	case lo:
		j.Open = "lo"
	case hi:
		j.Open = "hi"
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads null as NaN, or as an infinity on an open side.
func (i *Interval) UnmarshalJSON(data []byte) error {
	var j intervalJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	*i = Interval{Lo: orNaN(j.Lo), Hi: orNaN(j.Hi)}
	if j.Open == "lo" || j.Open == "both" {
		i.Lo = math.Inf(-1)
	}
	if j.Open == "hi" || j.Open == "both" {
		i.Hi = math.Inf(1)
	}
	return nil
}

// Maybe is a number that may not exist (NaN) or be unbounded (an e-value
// beyond float64): JSON has neither, so NaN is written as null and read back
// as NaN, and an infinity is written as the largest float64.
type Maybe float64

// MarshalJSON writes NaN as null.
func (m Maybe) MarshalJSON() ([]byte, error) {
	x := float64(m)
	switch {
	case math.IsNaN(x):
		return []byte("null"), nil
	case math.IsInf(x, 1):
		x = math.MaxFloat64
	case math.IsInf(x, -1):
		x = -math.MaxFloat64
	}
	return json.Marshal(x)
}

// UnmarshalJSON reads null as NaN.
func (m *Maybe) UnmarshalJSON(data []byte) error {
	var p *float64
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	*m = Maybe(orNaN(p))
	return nil
}
