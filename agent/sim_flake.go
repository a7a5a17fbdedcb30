package agent

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// SimStochastic is builtin:sim's seeded stochastic mode, asked for with
// "builtin:sim?flake=RATE&seed=N": each dispatch flakes with probability RATE
// (a gate or reviewer answers FAIL, a mutating role fails) and takes a simulated
// duration, both drawn from a hash of the seed, the replay session (the replica,
// in a replicated A/B run: Request.Replica) and the dispatch's identity (role,
// phase, task, template and body; not its seq, which depends on what else was
// dispatched meanwhile). Replicas differ; the same seed, session or replica and
// dispatch always give the same draw.
type SimStochastic struct {
	Flake float64
	Seed  uint64
}

// ParseSimSpec splits a builtin:sim spec into its stochastic mode: nil for plain
// "builtin:sim"; an error naming the field and what to give for a bad one.
func ParseSimSpec(spec string) (*SimStochastic, error) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(spec), SpecSim)
	if !ok || (rest != "" && rest[0] != '?') {
		return nil, fmt.Errorf("%q is not a builtin:sim spec; give %s or %s?flake=0.3&seed=7", spec, SpecSim, SpecSim)
	}
	if rest == "" {
		return nil, nil
	}
	q, err := url.ParseQuery(rest[1:])
	if err != nil {
		return nil, fmt.Errorf("builtin:sim: %v; give %s?flake=0.3&seed=7", err, SpecSim)
	}
	st := &SimStochastic{}
	for _, k := range slices.Sorted(maps.Keys(q)) {
		vs := q[k]
		if len(vs) != 1 {
			return nil, fmt.Errorf("builtin:sim: %s is given %d times; give it once", k, len(vs))
		}
		switch k {
		case "flake":
			f, err := strconv.ParseFloat(vs[0], 64)
			if err != nil || math.IsNaN(f) || f < 0 || f > 1 {
				return nil, fmt.Errorf("builtin:sim: flake=%q is not a rate; give a number from 0 to 1", vs[0])
			}
			st.Flake = f
		case "seed":
			s, err := strconv.ParseUint(vs[0], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("builtin:sim: seed=%q is not a whole number; give one from 0 to 2^64-1", vs[0])
			}
			st.Seed = s
		default:
			return nil, fmt.Errorf("builtin:sim: unknown parameter %q; builtin:sim takes flake and seed", k)
		}
	}
	return st, nil
}

// String is the spec that asks for s.
func (s *SimStochastic) String() string {
	return SpecSim + "?flake=" + strconv.FormatFloat(s.Flake, 'g', -1, 64) + "&seed=" + strconv.FormatUint(s.Seed, 10)
}

// draw returns two uniform numbers in [0, 1) for req: whether it flakes, and its
// simulated duration. A replicated A/B run names the replica by its arm, its
// index and its pipeline (the original run's session and the project
// directory's name: see replicate), so the replicas of the pipelines of a corpus
// are independent draws, never copies of one another.
func (s *SimStochastic) draw(req Request) (flake, dur float64) {
	h := sha256.New()
	var seed [8]byte
	binary.BigEndian.PutUint64(seed[:], s.Seed)
	h.Write(seed[:])
	body := sha256.Sum256(req.Body)
	who := req.Session
	if req.Replica != "" {
		who = req.Replica
	}
	for _, part := range []string{who, req.Role, req.Phase, taskText(req.Task, "-"), req.Template, string(body[:])} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	sum := h.Sum(nil)
	u := func(b []byte) float64 { return float64(binary.BigEndian.Uint64(b)>>11) / (1 << 53) }
	return u(sum[:8]), u(sum[8:16])
}

// apply decides req's flake and duration: whether it flakes, and the simulated
// duration in seconds (0.5 s to 3.5 s, rounded to 0.1 s, plus 0.1 s per 1000 body
// bytes so longer dispatches take longer). A directive's difficulty D raises the
// failure rate to 1 - (1 - flake)^(1 + D) and multiplies the duration by 1 + D; its
// give-up share G fails the dispatch whenever its duration draw is among the
// slowest G of all draws (a template that gives up on hard, slow work).
func (s *SimStochastic) apply(req Request, e simEffects) (bool, float64) {
	f, d := s.draw(req)
	rate := s.Flake
	if e.difficulty > 0 {
		rate = -math.Expm1((1 + e.difficulty) * math.Log1p(-math.Min(rate, 1-1e-12)))
	}
	secs := (0.5 + 3*d + float64(len(req.Body))/10000) * (1 + e.difficulty)
	return f < rate || d >= 1-e.giveup, math.Round(secs*10) / 10
}

// SimDirective is the prefix of a line in a dispatch body (so in a template, or
// in the recorded context of a pipeline's dispatch) that sets builtin:sim's
// effects for that dispatch, for tests and demos:
//
//	replay-sim: flake=0.7 duration=0.5 difficulty=0.5 giveup=0.15
//
// flake is the dispatch's failure rate (it replaces the spec's flake=), duration
// scales its simulated duration (1 unchanged, 0.5 halves it), difficulty D >= 0
// makes the dispatch harder (failure rate 1 - (1 - flake)^(1 + D), duration
// times 1 + D: pipelines of a corpus can differ in difficulty), giveup G in
// [0, 1] fails it whenever its duration draw is among the slowest share G. A
// body with the directive is drawn as the stochastic mode is, with the spec's
// seed (0 for plain builtin:sim). Every such line counts; a setting given on
// several lines takes the last.
const SimDirective = "replay-sim:"

// simEffects are the effects a body's directive asks for.
type simEffects struct {
	flake      float64
	hasFlake   bool
	scale      float64
	difficulty float64
	giveup     float64
}

// parseSimDirective reads the directive of body: ok is false when there is
// none; an error names the field and what to give.
func parseSimDirective(body []byte) (simEffects, bool, error) {
	e := simEffects{scale: 1}
	found := false
	for line := range strings.SplitSeq(string(body), "\n") {
		_, rest, ok := strings.Cut(line, SimDirective)
		if !ok {
			continue
		}
		found = true
		rest = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "-->"))
		for _, kv := range strings.Fields(rest) {
			k, v, _ := strings.Cut(kv, "=")
			f, err := strconv.ParseFloat(v, 64)
			switch {
			case k == "flake" && err == nil && f >= 0 && f <= 1:
				e.flake, e.hasFlake = f, true
			case k == "duration" && err == nil && f > 0 && !math.IsInf(f, 0):
				e.scale = f
			case k == "difficulty" && err == nil && f >= 0 && f <= 100:
				e.difficulty = f
			case k == "giveup" && err == nil && f >= 0 && f <= 1:
				e.giveup = f
			case k == "difficulty":
				return e, true, fmt.Errorf("%s difficulty=%q is not a difficulty; give a number from 0 (unchanged) to 100", SimDirective, v)
			case k == "giveup":
				return e, true, fmt.Errorf("%s giveup=%q is not a share; give a number from 0 to 1", SimDirective, v)
			case k == "flake":
				return e, true, fmt.Errorf("%s flake=%q is not a rate; give a number from 0 to 1", SimDirective, v)
			case k == "duration":
				return e, true, fmt.Errorf("%s duration=%q is not a scale; give a number above 0 (1 unchanged)", SimDirective, v)
			default:
				return e, true, fmt.Errorf("%s unknown setting %q; give flake=RATE, duration=SCALE, difficulty=D or giveup=SHARE", SimDirective, kv)
			}
		}
	}
	return e, found, nil
}
