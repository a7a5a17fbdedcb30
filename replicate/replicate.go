package replicate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/replaytool/replay/ab"
	"github.com/replaytool/replay/agent"
	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/stats"
)

// ErrBadOptions is the kind of the error for a replicated A/B replay asked for
// with options it cannot run with: no replicas, a check that cannot be run, an
// agent that would not run live.
var ErrBadOptions = errors.New("bad replicated A/B replay options")

// Arms of a replicated A/B replay.
const (
	Baseline = "baseline"
	Mutated  = "mutated"
)

// Request is a replicated A/B replay as the user asked for it.
type Request struct {
	// AB is the A/B replay each replica runs, with its functions; Baseline, Diff
	// and Info are set per replica.
	AB ab.Request
	// Replicas per arm to run (at least 1): the first ones of a new experiment,
	// or more of one that Prior continues.
	Replicas int
	// Prior are the replicas of an earlier run of the same experiment (see
	// Continue) that this run extends: its replicas take the next indices and
	// the decision is over all of them, the earlier ones as that run recorded
	// them (their comparison with the original run is not made again). Nil
	// starts a new experiment.
	Prior []*Replica
	// UntilDecided adds replicas (one pair per two --jobs) while the decision
	// is undecided, up to MaxReplicas per arm in all.
	UntilDecided bool
	MaxReplicas  int
	// Stratum names the pipeline in the replicas' names, which a seeded
	// simulated agent draws from (with the original run's session): "" is the
	// project directory's name, the same wherever the pipeline lives. A corpus
	// sets each pipeline's path relative to the corpus's directory, so pipelines
	// whose projects share a name (runs/a/project, runs/b/project) are
	// independent strata, not copies of one another.
	Stratum string
	// Jobs bounds how many replicas run at once (at least 1).
	Jobs int
	// Check is a shell command run in each replica's worktree after its replay; its
	// exit status is the replica's outcome. "" takes the pipeline's own verdict.
	Check string
	// Env is the check's environment.
	Env []string
	// Metric is the metric the decision compares (see Metrics); "" is duration_s.
	Metric string
	Rule   stats.Rule
	// Now stamps the result (the injected clock).
	Now time.Time
	Ctx context.Context
	// Info receives progress lines; nil is silent.
	Info func(string)
	// Progress follows each replica as it runs; nil is silent.
	Progress Progress
}

// Result is what a replicated A/B replay did and decided.
type Result struct {
	Generated time.Time `json:"generated_at"`
	Session   string    `json:"original_session"`
	// Experiment identifies the experiment (see ExperimentID): a later run with
	// the same one extends it. Continued is how many replicas per arm it had
	// before this run (0: this run started it).
	Experiment  string          `json:"experiment"`
	Continued   int             `json:"continued,omitempty"`
	Mutations   []string        `json:"mutations"`
	Check       string          `json:"check,omitempty"`
	Jobs        int             `json:"jobs"`
	Metric      string          `json:"metric"`
	Rule        stats.Rule      `json:"rule"`
	RuleText    string          `json:"rule_text"`
	Decision    stats.Decision  `json:"decision"`
	Metrics     []MetricCompare `json:"metrics"`
	PhaseRounds []PhaseRounds   `json:"gate_rounds_by_phase"`
	Dispatches  []DispatchStats `json:"dispatches"`
	Noise       Noise           `json:"noise_floor"`
	Replicas    []*Replica      `json:"replicas"`
	Warnings    []string        `json:"warnings,omitempty"`
	Files       *Files          `json:"-"`
}

// Files are where the result was written beside the manifest.
type Files struct {
	Markdown, JSONL string
}

// validate checks r before anything runs or is written.
func (r *Request) validate() error {
	switch {
	case r.Replicas < 1:
		return errkind.Errorf(ErrBadOptions, "--replicas %d: give at least 1 replica per arm", r.Replicas)
	case r.UntilDecided && r.MaxReplicas < r.Replicas:
		return errkind.Errorf(ErrBadOptions, "--max-replicas %d is below --replicas %d: give --max-replicas at least %d with --until-decided", r.MaxReplicas, r.Replicas, r.Replicas)
	case len(r.Prior)%2 != 0:
		return errkind.Errorf(ErrBadOptions, "the experiment to continue has %d replicas, not a pair per index: start a new one (--new-experiment)", len(r.Prior))
	case len(r.AB.Mutations) == 0:
		return errkind.New(ErrBadOptions, "--replicas compares a mutated arm with the baseline: give --mutate ORIG=REPL")
	case r.AB.Agent == nil:
		return errkind.New(ErrBadOptions, "replicas re-dispatch work: give --agent CMD (or --agent builtin:sim)")
	case r.AB.Agent.Name() == agent.SpecRecorded:
		return errkind.New(ErrBadOptions, "--agent recorded: replicas run live, never from recordings; give --agent CMD or builtin:sim")
	}
	if r.Jobs < 1 {
		r.Jobs = 1
	}
	if r.Rule.Alpha == 0 {
		margin := r.Rule.Margin
		r.Rule = stats.DefaultRule()
		r.Rule.Margin = margin
	}
	if r.Metric == "" {
		r.Metric = MetricDuration
	}
	r.Rule.Resolution = MetricResolution(r.Metric)
	if err := r.Rule.Validate(); err != nil {
		return errkind.Errorf(ErrBadOptions, "decision rule: %v", err)
	}
	if r.Metric == "" {
		r.Metric = MetricDuration
	}
	if !slices.Contains(MetricNames(), r.Metric) {
		return errkind.Errorf(ErrBadOptions, "--metric %s: unknown metric; give one of %s", r.Metric, strings.Join(MetricNames(), ", "))
	}
	if !r.UntilDecided {
		r.MaxReplicas = 0
	}
	r.Rule.MaxReplicas = r.MaxReplicas
	if r.Ctx == nil {
		r.Ctx = context.Background()
	}
	return checkCommand(r.Check, r.AB.Cwd, r.Env)
}

// checkCommand refuses a check whose program cannot be run: not found on PATH, or
// a path that is not an executable file.
func checkCommand(check, cwd string, env []string) error {
	if check == "" {
		return nil
	}
	fields := strings.Fields(check)
	if len(fields) == 0 {
		return errkind.New(ErrBadOptions, "--check is empty: give a command, for example --check 'go test ./...'")
	}
	prog := fields[0]
	if !strings.Contains(prog, "/") {
		if isShellWord(prog) {
			return nil
		}
		if _, err := lookPath(prog, env); err != nil {
			return errkind.Errorf(ErrBadOptions, "--check %q: %s is not found on PATH; give a command that exists", check, prog)
		}
		return nil
	}
	if !filepath.IsAbs(prog) {
		prog = filepath.Join(cwd, prog)
	}
	fi, err := os.Stat(prog)
	if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return errkind.Errorf(ErrBadOptions, "--check %q: %s is not an executable file; give a command that can run (chmod +x?)", check, fields[0])
	}
	return nil
}

func isShellWord(w string) bool {
	switch w {
	case "true", "false", "test", "[", "exit", "cd", "!", "(", "{":
		return true
	}
	return strings.ContainsAny(w, "=$`")
}

// lookPath finds prog on the PATH of env (the process's PATH when env has none).
func lookPath(prog string, env []string) (string, error) {
	path, found := os.Getenv("PATH"), false
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path, found = v, true
		}
	}
	if !found {
		return exec.LookPath(prog)
	}
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, prog)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

// Run carries out the replicated A/B replay of r: r.Replicas more replicas per
// arm (after r.Prior's, when it continues an experiment), then with
// UntilDecided more pairs while the decision is undecided, up to MaxReplicas
// per arm. The decision is anytime-valid (see stats.Rule), so continuing an
// experiment, or stopping it at any point, keeps its error rate.
func Run(r Request) (*Result, error) {
	if err := r.validate(); err != nil {
		return nil, err
	}
	res := &Result{Generated: r.Now, Check: r.Check, Jobs: r.Jobs, Metric: r.Metric, Rule: r.Rule, RuleText: r.Rule.Text()}
	warn := newWarnings(r.AB.Warn)
	reps := make([]*Replica, len(r.Prior))
	for i, p := range r.Prior {
		c := *p
		c.measured = true
		reps[i] = &c
	}
	done := len(reps) / 2
	res.Continued = done
	if done > 0 {
		say(r.Info, fmt.Sprintf("Continuing the experiment: %d replicas per arm so far; adding %d more per arm (--new-experiment starts afresh).\n", done, r.Replicas))
	}
	next := pairs(done, done+r.Replicas)
	for {
		batch, err := runJobs(r, next, warn)
		if err != nil {
			return nil, err
		}
		reps = append(reps, batch...)
		sortReplicas(reps)
		if err := measure(r, res, reps); err != nil {
			return nil, err
		}
		if err := infrastructure(res); err != nil {
			return nil, err
		}
		n := len(reps) / 2
		if !r.UntilDecided || res.Decision.Verdict != stats.Undecided || n >= r.MaxReplicas {
			break
		}
		add := min(max(1, r.Jobs/2), r.MaxReplicas-n)
		say(r.Info, fmt.Sprintf("Undecided at %d replicas per arm (%s); adding %d more per arm (--until-decided, at most %d).\n", n, res.Decision.More.Text, add, r.MaxReplicas))
		next = pairs(n, n+add)
	}
	res.Experiment = ExperimentID(r, res.Session)
	res.Warnings = warn.list()
	return res, nil
}

// pairs are the jobs of replicas from+1 to to of both arms.
func pairs(from, to int) []job {
	var out []job
	for i := from + 1; i <= to; i++ {
		out = append(out, job{arm: Baseline, index: i}, job{arm: Mutated, index: i})
	}
	return out
}

// sortReplicas orders reps by index, the baseline first: replica i of one arm is
// paired with replica i of the other.
func sortReplicas(reps []*Replica) {
	slices.SortStableFunc(reps, func(a, b *Replica) int {
		if a.Index != b.Index {
			return a.Index - b.Index
		}
		if a.Arm == b.Arm {
			return 0
		}
		if a.Arm == Baseline {
			return -1
		}
		return 1
	})
}

// warnings passes each distinct warning on once (every replica repeats them).
type warnings struct {
	mu   sync.Mutex
	seen []string
	to   func(string)
}

func newWarnings(to func(string)) *warnings { return &warnings{to: to} }

func (w *warnings) add(msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if slices.Contains(w.seen, msg) {
		return
	}
	w.seen = append(w.seen, msg)
	say(w.to, msg)
}

func (w *warnings) list() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.seen)
}

func say(to func(string), msg string) {
	if to != nil {
		to(msg)
	}
}

func errkindNothing(format string, args ...any) error {
	return errkind.Errorf(ErrBadOptions, format, args...)
}

// Validate checks r as Run does before anything runs, so a caller that writes
// files of its own first can refuse bad options before it writes them.
func Validate(r Request) error { return r.validate() }
