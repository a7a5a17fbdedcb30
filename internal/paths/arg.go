package paths

import (
	"os"
	"path/filepath"
	"strings"
)

// ArgKind is what an argument that may name a file means.
type ArgKind int

const (
	// ArgName is a name the command looks up itself: a session id, a fork's
	// name, a built-in profile. It never names a file.
	ArgName ArgKind = iota
	// ArgPath names a file or directory (that may not exist yet).
	ArgPath
)

// Arg is an argument resolved by ResolveArg.
type Arg struct {
	Kind ArgKind
	// Path is the argument made absolute from the working directory (cleaned,
	// links not resolved) when Kind is ArgPath; "" for a name.
	Path string
}

// ResolveArg says what value, an argument that is a path or else a name (the run
// B of `replay diff A B`: a run's path or a session id; --profile: a file or a
// built-in profile), means from the working directory cwd. It is the one rule the
// commands use and the MCP server's policy asks before it confines a path: a value
// that names an existing entry (not followed: a link is a path too) is a path;
// so is a value that could never be a name (empty of letters, "." or "..", or with
// a path separator). Anything else is a name.
func ResolveArg(cwd, value string) Arg {
	abs := value
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(cwd, value)
	}
	abs = filepath.Clean(abs)
	if _, err := os.Lstat(abs); err == nil || !IsName(value) {
		return Arg{Kind: ArgPath, Path: abs}
	}
	return Arg{Kind: ArgName}
}

// IsName reports whether value can be a name rather than a path: not empty, not
// "." or "..", and without a path separator (either system's).
func IsName(value string) bool {
	return value != "" && value != "." && value != ".." && !strings.ContainsAny(value, `/\`)
}
