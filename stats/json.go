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
}

// MarshalJSON writes a missing bound as null.
func (i Interval) MarshalJSON() ([]byte, error) {
	return json.Marshal(intervalJSON{Lo: nullable(i.Lo), Hi: nullable(i.Hi)})
}

// UnmarshalJSON reads null as NaN.
func (i *Interval) UnmarshalJSON(data []byte) error {
	var j intervalJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	*i = Interval{Lo: orNaN(j.Lo), Hi: orNaN(j.Hi)}
	return nil
}

type mannWhitneyJSON struct {
	U *float64 `json:"u"`
	Z *float64 `json:"z"`
	P *float64 `json:"p"`
}

// MarshalJSON writes a missing statistic as null.
func (m MannWhitney) MarshalJSON() ([]byte, error) {
	return json.Marshal(mannWhitneyJSON{U: nullable(m.U), Z: nullable(m.Z), P: nullable(m.P)})
}

// UnmarshalJSON reads null as NaN.
func (m *MannWhitney) UnmarshalJSON(data []byte) error {
	var j mannWhitneyJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	*m = MannWhitney{U: orNaN(j.U), Z: orNaN(j.Z), P: orNaN(j.P)}
	return nil
}

type tailsJSON struct {
	Greater *float64 `json:"p_greater"`
	Less    *float64 `json:"p_less"`
}

// MarshalJSON writes a missing p-value as null.
func (t Tails) MarshalJSON() ([]byte, error) {
	return json.Marshal(tailsJSON{Greater: nullable(t.Greater), Less: nullable(t.Less)})
}

// UnmarshalJSON reads null as NaN.
func (t *Tails) UnmarshalJSON(data []byte) error {
	var j tailsJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	*t = Tails{Greater: orNaN(j.Greater), Less: orNaN(j.Less)}
	return nil
}

type detectableJSON struct {
	PassRateDrop    *float64 `json:"pass_rate_drop"`
	MetricChange    *float64 `json:"metric_change"`
	Replicas        int      `json:"replicas"`
	ReplicasForDrop int      `json:"replicas_for_drop,omitempty"`
	PassRateNote    string   `json:"pass_rate_note,omitempty"`
	MetricNote      string   `json:"metric_note,omitempty"`
	// Text is Words, for readers of the JSON; it is not read back.
	Text string `json:"text"`
}

// MarshalJSON writes an effect no replicas could detect as null, with the
// notes that say why and the whole in words ("text").
func (d Detectable) MarshalJSON() ([]byte, error) {
	return json.Marshal(detectableJSON{PassRateDrop: nullable(d.PassRateDrop), MetricChange: nullable(d.MetricChange),
		Replicas: d.Replicas, ReplicasForDrop: d.ReplicasForDrop, PassRateNote: d.PassRateNote, MetricNote: d.MetricNote, Text: d.Words()})
}

// UnmarshalJSON reads null as NaN.
func (d *Detectable) UnmarshalJSON(data []byte) error {
	var j detectableJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	*d = Detectable{PassRateDrop: orNaN(j.PassRateDrop), MetricChange: orNaN(j.MetricChange),
		Replicas: j.Replicas, ReplicasForDrop: j.ReplicasForDrop, PassRateNote: j.PassRateNote, MetricNote: j.MetricNote}
	return nil
}
