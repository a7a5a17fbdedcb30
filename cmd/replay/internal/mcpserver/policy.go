package mcpserver

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/replaytool/replay/internal/paths"
)

// Policy is what the tool calls of one server may reach: the directories their
// paths may name, and the commands their agent and check fields may run. It is
// set from the user's own configuration when the server starts (the flags of
// `replay mcp`), never from a tool call.
type Policy struct {
	// Cwd is the server's working directory: relative paths are from it.
	Cwd string
	// Roots are the directories a tool's paths may name (files below them
	// included): the project, its run area and dispatch directories, and the
	// directories the user added.
	Roots []string
	// RunDirPrefix names the directories under TmpDirs that are runs
	// (crucible-dispatch-<sid>): a path inside one of them is allowed too.
	TmpDirs      []string
	RunDirPrefix string
	// AllowExec lets the caller choose any agent and check command.
	AllowExec bool
	// Agents and Checks are the commands the user configured; without AllowExec a
	// call's agent or check must be one of them (or a built-in agent).
	Agents, Checks []string
}

// path refuses a tool's path field that resolves (symbolic links followed as
// far as they exist) outside the policy's roots.
func (p *Policy) path(field, value string) error {
	if p == nil || value == "" {
		return nil
	}
	real := p.resolve(value)
	for _, root := range p.Roots {
		if within(real, p.resolve(root)) {
			return nil
		}
	}
	for _, tmp := range p.TmpDirs {
		rt := p.resolve(tmp)
		if rel, err := filepath.Rel(rt, real); err == nil && filepath.IsLocal(rel) {
			first := strings.Split(filepath.ToSlash(rel), "/")[0]
			if p.RunDirPrefix != "" && strings.HasPrefix(first, p.RunDirPrefix) {
				return nil
			}
		}
	}
	return refusal(fmt.Sprintf("%s %s: outside the project and its runs (%s); this server reads and writes only there: start it with --root DIR to add a directory", field, value, strings.Join(p.Roots, ", ")))
}

// pathAfter checks the FILE of each SEQ=FILE or ORIG=FILE value.
func (p *Policy) pathAfter(field string, values []string) error {
	for _, v := range values {
		if _, file, ok := strings.Cut(v, "="); ok {
			if err := p.path(field, file); err != nil {
				return err
			}
		}
	}
	return nil
}

// profile checks a profile that names a file (a built-in profile is a name).
func (p *Policy) profile(value string) error { return p.pathOrName("profile", value) }

// pathOrName checks a value that is a path or else a name the command looks up
// (diff's run B or session id, a profile): it asks paths.ResolveArg, the rule the
// command itself uses, what the value means, and confines it when it is a path.
// No guess from the string: "..", a bare file name and a link are paths.
func (p *Policy) pathOrName(field, value string) error {
	if p == nil || value == "" {
		return nil
	}
	if paths.ResolveArg(p.Cwd, value).Kind == paths.ArgPath {
		return p.path(field, value)
	}
	return nil
}

// inDir refuses an output path (html) that does not resolve inside dir.
func (p *Policy) inDir(field, value, dir string) error {
	if p == nil || value == "" {
		return nil
	}
	if !within(p.resolve(value), p.resolve(dir)) {
		return refusal(fmt.Sprintf("%s %s: a tool writes its output only inside the run's directory %s; give a path there", field, value, dir))
	}
	return nil
}

// agent refuses an agent command the user did not configure.
func (p *Policy) agent(value string) error {
	if p == nil || value == "" || p.AllowExec || slices.Contains(p.Agents, value) || isBuiltinAgent(value) {
		return nil
	}
	return refusal(fmt.Sprintf("agent %q: not an agent this server was started with (%s); a caller chooses among the built-in agents (builtin:sim, recorded) and those of 'replay mcp --agent CMD', or any command only with --allow-exec", value, listOr(p.Agents)))
}

// check refuses a check command the user did not configure.
func (p *Policy) check(value string) error {
	if p == nil || value == "" || p.AllowExec || slices.Contains(p.Checks, value) {
		return nil
	}
	return refusal(fmt.Sprintf("check %q: not a check this server was started with (%s); a caller chooses among those of 'replay mcp --check CMD', or any command only with --allow-exec", value, listOr(p.Checks)))
}

// defaultAgent is the agent a call that names none runs with: the first the
// user configured, "" when none.
func (p *Policy) defaultAgent() string {
	if p == nil || len(p.Agents) == 0 {
		return ""
	}
	return p.Agents[0]
}

// isBuiltinAgent reports whether spec names one of replay's own agents, which
// run no command.
func isBuiltinAgent(spec string) bool {
	return spec == "recorded" || spec == "builtin:sim" || strings.HasPrefix(spec, "builtin:sim?")
}

func listOr(vs []string) string {
	if len(vs) == 0 {
		return "none"
	}
	return strings.Join(vs, "; ")
}

// resolve makes path absolute (from Cwd) and resolves the symbolic links of its
// longest existing part, so a link cannot carry a path out of a root.
func (p *Policy) resolve(path string) string {
	if !filepath.IsAbs(path) {
		path = filepath.Join(p.Cwd, path)
	}
	path = filepath.Clean(path)
	rest := ""
	for dir := path; ; dir = filepath.Dir(dir) {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(real, rest)
		}
		if _, err := os.Lstat(dir); err == nil || dir == filepath.Dir(dir) {
			return "\x00" + path // a dangling link: inside no root
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}

// within reports whether path is root or below it.
func within(path, root string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && (rel == "." || filepath.IsLocal(rel))
}
