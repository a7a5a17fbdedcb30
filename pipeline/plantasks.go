package pipeline

import (
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/replaytool/replay/internal/runfile"
)

// planFileLimit bounds how much of one plan file is read, planFilesMax how many.
const (
	planFileLimit = 256 << 10
	planFilesMax  = 20
)

// planGlobs are where the build pipeline's plan-writer saves the plan, relative to
// the project: docs/plans/<date>-<topic>-implementation-plan.md, or docs/plan.md.
var planGlobs = []string{"docs/plans/*.md", "docs/plan.md", "docs/plans.md"}

// taskLine starts a task's text in a plan: a heading "### Task 3: ..." or a list
// item or line "- Task 3: ...".
var taskLine = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^\s*(#{1,6}\s*|[-*+]\s*)?task\s+(\d+)\b(.*)$`)
})

// planTasks reads the task texts of the project's plan files, by task number: a
// task heading with the lines below it up to the next heading, or a single task
// line. Symlinks are not followed; unreadable files are skipped.
func planTasks(projectDir string) map[int]string {
	out := map[int]string{}
	if projectDir == "" {
		return out
	}
	var files []string
	for _, g := range planGlobs {
		m, _ := filepath.Glob(filepath.Join(projectDir, filepath.FromSlash(g)))
		files = append(files, m...)
	}
	sort.Strings(files)
	if len(files) > planFilesMax {
		files = files[:planFilesMax]
	}
	for _, f := range files {
		data, err := runfile.ReadHeadNoFollow(f, runfile.PlanDocument, planFileLimit)
		if err != nil {
			continue
		}
		addPlanTasks(out, string(data))
	}
	return out
}

// addPlanTasks adds the task texts of one plan document to out.
func addPlanTasks(out map[int]string, doc string) {
	current := 0
	for _, line := range strings.Split(doc, "\n") {
		if m := taskLine().FindStringSubmatch(line); m != nil {
			n, err := strconv.Atoi(m[2])
			if err != nil {
				current = 0
				continue
			}
			out[n] += m[3] + "\n"
			current = 0
			if strings.HasPrefix(strings.TrimSpace(m[1]), "#") {
				current = n // a heading: the lines below belong to the task
			}
			continue
		}
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			current = 0
			continue
		}
		if current > 0 {
			out[current] += line + "\n"
		}
	}
}
