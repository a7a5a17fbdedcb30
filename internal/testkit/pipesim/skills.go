package pipesim

import (
	"fmt"
	"math/rand/v2"
)

// Class is how a role's work shows on disk, as the generator builds it.
type Class int

const (
	// Mutating roles commit to the project.
	Mutating Class = iota
	// Output roles leave a file beside their dispatch file and/or a receipt.
	Output
	// Conversation roles answer in the conversation and leave nothing.
	Conversation
)

// role is one dispatch a stage makes.
type role struct {
	Name  string
	Class Class
	Task  int // 0: no task
	Desc  string
	Tier  string
}

// stage is a stretch of a pipeline that starts, optionally, with a checkpoint:
// groups run one after the other, the dispatches of a group in parallel.
type stage struct {
	Reason string // checkpoint reason taken before the stage; "" none
	Phase  string // manifest phase; "" records null
	Groups [][]role
}

// script is one skill's run as its orchestrator would drive it.
type script struct {
	Skill  string
	Stages []stage
	// PhaseBoundaries marks a skill with no phase model of its own (no profile
	// describes it): its boundaries are its checkpoints and every phase start
	// its manifest records, taken or not.
	PhaseBoundaries bool
}

// taskTexts are the descriptions plan tasks draw from: commit messages take
// words from them, so attribution by shared words has something to work with.
var taskTexts = []string{
	"charge model with amount validation and currency rounding",
	"refund endpoint for partial refunds against settled charges",
	"invoice export as CSV of settled charges",
	"webhook retries with exponential backoff",
	"ledger reconciliation job for nightly drift",
	"currency conversion cache with expiry",
	"audit log of admin actions",
	"rate limiter for the public API",
	"customer search by email and name",
	"dunning emails for failed payments",
	"tax calculation per region",
	"subscription proration on plan change",
	"idempotency keys for payment requests",
	"export of disputes for the finance team",
	"card fingerprint deduplication",
	"payout schedule per merchant",
	"fraud score threshold settings",
	"receipt PDF rendering",
}

var tiers = []string{"opus", "opus", "sonnet", "haiku", "standard", "provider/custom-model"}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

func r1(r *rand.Rand, name string, c Class, desc string) role {
	return role{Name: name, Class: c, Desc: desc, Tier: pick(r, tiers)}
}

// buildScript is upstream's /build: design, plan, waves of implementers with
// per-task reviewers, completion with code review, inquisitor and quality gate.
func buildScript(r *rand.Rand) script {
	s := script{Skill: "build"}
	s.Stages = append(s.Stages,
		stage{Phase: "1", Groups: [][]role{
			{r1(r, "innovate", Output, "Propose designs for the billing service.")},
			{r1(r, "red-team", Output, "Red-team the design.")},
			{r1(r, "acceptance-test-writer", Mutating, "Write RED acceptance tests.")},
		}},
		stage{Reason: "pre-design-gate", Phase: "2", Groups: [][]role{
			{r1(r, "plan-writer", Mutating, "Write the implementation plan.")},
			{r1(r, "plan-reviewer", Output, "Review the plan.")},
		}},
		stage{Reason: "pre-plan-gate", Phase: "2", Groups: [][]role{
			{r1(r, "red-team", Output, "Red-team the plan.")},
		}},
	)
	waves := 1 + r.IntN(3)
	task := 0
	texts := r.Perm(len(taskTexts))
	for w := 1; w <= waves; w++ {
		width := 1 + r.IntN(6)
		var impl, rev []role
		for i := 0; i < width; i++ {
			task++
			text := taskTexts[texts[(task-1)%len(texts)]]
			impl = append(impl, role{Name: "build-implementer", Class: Mutating, Task: task, Desc: fmt.Sprintf("Task %d: Implement the %s.", task, text), Tier: pick(r, tiers)})
			rev = append(rev, role{Name: "build-reviewer", Class: Output, Task: task, Desc: fmt.Sprintf("Review task %d (%s).", task, text), Tier: pick(r, tiers)})
		}
		groups := [][]role{impl}
		if r.IntN(4) > 0 {
			groups = append(groups, rev)
		}
		s.Stages = append(s.Stages, stage{Reason: fmt.Sprintf("pre-wave-%d", w), Phase: "3", Groups: groups})
	}
	s.Stages = append(s.Stages,
		stage{Reason: "pre-code-review", Phase: "4", Groups: [][]role{{r1(r, "code-reviewer", Output, "Review the whole change.")}}},
		stage{Reason: "pre-inquisitor", Phase: "4", Groups: [][]role{{r1(r, "inquisitor", Output, "Hunt for cross-component bugs.")}}},
		stage{Reason: "pre-impl-gate", Phase: "4", Groups: [][]role{{r1(r, "quality-gate", Conversation, "Quality gate round 1 on the implementation.")}}},
	)
	return s
}

// debuggingScript is upstream's debugging skill: parallel investigators and a
// synthesis step (recorded with phase "synthesis") that answer in the
// conversation, a hypothesis red-team, fix cycles with a checkpoint before each,
// the "Where else?" sibling scan, and the quality gate.
func debuggingScript(r *rand.Rand) script {
	s := script{Skill: "debugging"}
	var inv []role
	for i, what := range []string{"Error analysis", "Change analysis", "Evidence gathering"}[:2+r.IntN(2)] {
		_ = i
		inv = append(inv, r1(r, "investigator", Conversation, what+": refunds of EUR charges fail with a currency mismatch."))
	}
	s.Stages = append(s.Stages,
		stage{Phase: "1", Groups: [][]role{inv}},
		stage{Phase: "synthesis", Groups: [][]role{{r1(r, "synthesis", Conversation, "Consolidate the investigation reports.")}}},
		stage{Phase: "3.5", Groups: [][]role{{r1(r, "red-team", Output, "Red-team the hypothesis.")}}},
	)
	cycles := 1 + r.IntN(2)
	for c := 1; c <= cycles; c++ {
		s.Stages = append(s.Stages, stage{Reason: fmt.Sprintf("pre-debug-fix-cycle-%d", c), Phase: "4", Groups: [][]role{
			{r1(r, "implementer", Mutating, "Fix the root cause: refunds inherit the charge currency. TDD: failing test first.")},
			{r1(r, "fix-verifier", Conversation, "Verify the fix against the reproduction.")},
		}})
	}
	s.Stages = append(s.Stages,
		stage{Reason: "pre-where-else", Phase: "4.5", Groups: [][]role{{r1(r, "where-else", Mutating, "Find and fix siblings of the currency inheritance bug.")}}},
		stage{Reason: "pre-debug-gate", Phase: "5", Groups: [][]role{{r1(r, "quality-gate", Conversation, "Quality gate on the fix.")}}},
	)
	return s
}

// siegeScript is upstream's siege: reconnaissance, parallel attackers writing
// findings, a chain analysis, and fix rounds with a checkpoint before each fix.
func siegeScript(r *rand.Rand) script {
	s := script{Skill: "siege"}
	attackers := []string{"boundary-attacker", "insider-threat", "infrastructure-prober", "betrayed-consumer", "fresh-attacker", "chain-analyst"}
	var atk []role
	for _, a := range attackers[:1+r.IntN(5)] {
		atk = append(atk, r1(r, a, Output, "Attack the payment service from the "+a+" perspective."))
	}
	s.Stages = append(s.Stages,
		stage{Phase: "1", Groups: [][]role{{r1(r, "explorer", Output, "Map the attack surface.")}}},
		stage{Phase: "2", Groups: [][]role{atk}},
		stage{Phase: "3", Groups: [][]role{{r1(r, "chain-analyst", Output, "Chain the findings into attack paths.")}}},
	)
	rounds := 1 + r.IntN(3)
	for n := 1; n <= rounds; n++ {
		s.Stages = append(s.Stages, stage{Reason: fmt.Sprintf("pre-siege-fix-round-%d", n), Phase: "4", Groups: [][]role{
			{r1(r, "siege-fix", Mutating, fmt.Sprintf("Fix round %d: close the reported attack paths.", n))},
			{r1(r, "fix-verifier", Conversation, "Verify the fixes.")},
		}})
	}
	return s
}

// qualityGateScript is a standalone quality gate: one manifest phase per round,
// a red-team review, a checkpoint before each fix agent, then checkers that
// answer in the conversation.
func qualityGateScript(r *rand.Rand) script {
	s := script{Skill: "quality-gate", PhaseBoundaries: true}
	rounds := 1 + r.IntN(4)
	for n := 1; n <= rounds; n++ {
		p := fmt.Sprint(n)
		s.Stages = append(s.Stages,
			stage{Phase: p, Groups: [][]role{{r1(r, "red-team", Output, fmt.Sprintf("Round %d: red-team the implementation.", n))}}},
			stage{Reason: fmt.Sprintf("pre-qg-fix-round-%d", n), Phase: p, Groups: [][]role{
				{r1(r, "fix", Mutating, fmt.Sprintf("Round %d: fix the findings.", n))},
				{r1(r, "fix-verifier", Conversation, "Check each fix."), r1(r, "persistence-checker", Conversation, "Check earlier findings stay fixed.")},
			}},
		)
	}
	return s
}

// auditScript is upstream's audit skill, which replay has no profile for:
// scoping, parallel lens agents writing findings files, a blind-spots pass and a
// synthesis that answers in the conversation. Audit changes no code and takes no
// checkpoints.
func auditScript(r *rand.Rand) script {
	var lenses []role
	for _, l := range []string{"correctness", "robustness", "consistency", "architecture"} {
		lenses = append(lenses, r1(r, l+"-lens", Output, "Audit the payments subsystem through the "+l+" lens; write "+l+"-findings.md."))
	}
	return script{Skill: "audit", PhaseBoundaries: true, Stages: []stage{
		{Phase: "1", Groups: [][]role{{r1(r, "scoping", Output, "Scope the payments subsystem; write manifest.md.")}}},
		{Phase: "2", Groups: [][]role{lenses}},
		{Phase: "2.5", Groups: [][]role{{r1(r, "blind-spots", Output, "Hunt for what the lenses missed.")}}},
		{Phase: "3", Groups: [][]role{{r1(r, "synthesis", Conversation, "Synthesize and rank the findings.")}}},
	}}
}

// pickScript chooses the skill of a seed's run.
func pickScript(r *rand.Rand) script {
	switch n := r.IntN(10); {
	case n < 4:
		return buildScript(r)
	case n < 6:
		return debuggingScript(r)
	case n < 7:
		return siegeScript(r)
	case n < 9:
		return qualityGateScript(r)
	default:
		return auditScript(r)
	}
}
