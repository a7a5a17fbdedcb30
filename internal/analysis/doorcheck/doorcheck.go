// Package doorcheck is a go/analysis analyzer that keeps every file replay
// touches going through its doors: a product (non-test) package that calls a
// file system function of the os package, io.ReadAll on a file, or opens a git
// repository by path, outside the door packages, fails the build, with a message
// that names the door to use instead. A call that must stay carries a comment
// `//replay:door <reason>` on its line or the line above, and the reason is
// required. It must not import any package of the project.
package doorcheck

import (
	"go/ast"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/inspect"
	"golang.org/x/tools/go/ast/inspector"
)

// Analyzer reports the calls that bypass replay's file doors.
var Analyzer = &analysis.Analyzer{
	Name:     "doorcheck",
	Doc:      "reports file system calls outside replay's door packages (internal/runfile, internal/safewrite); annotate a justified exception with //replay:door <reason>",
	Requires: []*analysis.Analyzer{inspect.Analyzer},
	Run:      run,
}

// Marker starts the comment that keeps a call, followed by its reason.
const Marker = "//replay:door"

// DoorPackages are the packages that implement the doors (and the system calls
// under them), each with the reason it may call the os package directly. Which
// packages are checked is the caller's choice: .ci/run checks those the replay
// binary is built from (test-support packages are never shipped).
var DoorPackages = map[string]string{
	"github.com/replaytool/replay/internal/runfile":   "the bounded, non-blocking, regular-file reader",
	"github.com/replaytool/replay/internal/safewrite": "the no-follow writer under a root",
	"github.com/replaytool/replay/internal/platform":  "the system calls under both doors",
	"github.com/replaytool/replay/internal/gitrepo":   "git's own lock protocol for refs, index and objects, in a git directory its caller proved (checkpoint.CheckShadowDir, CheckShadowOwner)",
}

// doors says what to use instead of each reported function.
var doors = map[string]string{
	"os.Open":                  "runfile.Open (or runfile.OpenNoFollow / runfile.OpenIn for a file replay copies or trusts): bounded, non-blocking, regular files only",
	"os.OpenFile":              "runfile.Open to read; safewrite.OpenInRoot to create or write (no link followed under the root)",
	"os.ReadFile":              "runfile.ReadFile (or runfile.ReadFileIn under a root, never through a link): bounded, non-blocking, regular files only",
	"os.WriteFile":             "safewrite.WriteAtomicIn (or safewrite.WriteAtomic): temp file, fsync, rename, no link followed; safewrite.WriteFile for a tree replay builds itself",
	"os.Create":                "safewrite.OpenInRoot(root, rel, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm) or safewrite.WriteAtomicIn",
	"os.MkdirAll":              "safewrite.MkdirIn(root, rel): every directory on the way a real directory, none through a link; safewrite.MkdirAll for a path the user named or replay made",
	"os.Mkdir":                 "safewrite.MkdirNew(root, rel)",
	"os.Rename":                "safewrite.RenameIn(root, from, to), or WriteAtomicIn / WriteAtomicStream: renames inside an os.Root",
	"os.Remove":                "safewrite.RemoveIn(root, rel) (or RemovePath for a path replay made): a link removed, never followed",
	"os.RemoveAll":             "safewrite.RemoveAllIn(root, rel) (or RemoveAllPath for a directory replay made): links removed, never followed",
	"os.Symlink":               "nothing: replay creates no links; annotate the one that must be",
	"io.ReadAll":               "runfile.ReadFile, or read an opened runfile.File (its kind's limit applies)",
	"git.PlainOpen":            "checkpoint.Open / OpenOrInit for a shadow (proved this project's), or annotate the project's own repository",
	"git.PlainOpenWithOptions": "checkpoint.Open / OpenOrInit for a shadow (proved this project's), or annotate the project's own repository",
	"git.PlainInit":            "checkpoint.OpenOrInit (bare storage, never a .git in the project), or gitrepo.InitNew for a repository replay creates (the directory proved new first)",
	"git.PlainInitWithOptions": "checkpoint.OpenOrInit (bare storage, never a .git in the project), or gitrepo.InitNew for a repository replay creates (the directory proved new first)",
	"git.PlainClone":           "nothing in the product clones; annotate why this one must",
}

// gitPath is the import path of go-git, whose Plain* functions open by path.
const gitPath = "github.com/go-git/go-git/v5"

func run(pass *analysis.Pass) (any, error) {
	if _, ok := DoorPackages[pass.Pkg.Path()]; ok {
		return nil, nil
	}
	ins := pass.ResultOf[inspect.Analyzer].(*inspector.Inspector)
	kept := keptLines(pass)
	ins.Preorder([]ast.Node{(*ast.CallExpr)(nil)}, func(n ast.Node) {
		call := n.(*ast.CallExpr)
		name, ok := reported(pass, call)
		if !ok {
			return
		}
		pos := pass.Fset.Position(call.Pos())
		if strings.HasSuffix(pos.Filename, "_test.go") {
			return
		}
		if reason, ok := kept[lineKey{pos.Filename, pos.Line}]; ok {
			if strings.TrimSpace(reason) == "" {
				pass.Reportf(call.Pos(), "%s: %s needs a reason after it (one line: why this call may bypass the doors)", name, Marker)
			}
			return
		}
		pass.Reportf(call.Pos(), "%s outside the door packages: use %s; or, when this call must stay, say why on its line or the line above with %s <reason>", name, doors[name], Marker)
	})
	return nil, nil
}

// reported returns the name of the door-bypassing function call calls, if any.
func reported(pass *analysis.Pass, call *ast.CallExpr) (string, bool) {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return "", false
	}
	fn, ok := pass.TypesInfo.Uses[sel.Sel].(*types.Func)
	if !ok || fn.Pkg() == nil {
		return "", false
	}
	if sig, ok := fn.Type().(*types.Signature); !ok || sig.Recv() != nil {
		return "", false // a method (os.Root's, a File's) is a door's own tool
	}
	var name string
	switch fn.Pkg().Path() {
	case "os":
		name = "os." + fn.Name()
	case "io":
		if fn.Name() != "ReadAll" || len(call.Args) != 1 || !isFile(pass.TypesInfo.TypeOf(call.Args[0])) {
			return "", false
		}
		name = "io.ReadAll"
	case gitPath:
		name = "git." + fn.Name()
	default:
		return "", false
	}
	_, ok = doors[name]
	return name, ok
}

// isFile reports whether t is *os.File.
func isFile(t types.Type) bool {
	p, ok := t.(*types.Pointer)
	if !ok {
		return false
	}
	n, ok := p.Elem().(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "os" && n.Obj().Name() == "File"
}

type lineKey struct {
	file string
	line int
}

// keptLines maps each line a //replay:door comment keeps (its own and the next)
// to the comment's reason.
func keptLines(pass *analysis.Pass) map[lineKey]string {
	kept := map[lineKey]string{}
	for _, f := range pass.Files {
		for _, g := range f.Comments {
			for _, c := range g.List {
				if !strings.HasPrefix(c.Text, Marker) {
					continue
				}
				reason := strings.TrimPrefix(c.Text, Marker)
				if reason != "" && reason[0] != ' ' && reason[0] != '\t' {
					continue // another marker that starts the same
				}
				pos := pass.Fset.Position(c.Pos())
				kept[lineKey{pos.Filename, pos.Line}] = reason
				kept[lineKey{pos.Filename, pos.Line + 1}] = reason
			}
		}
	}
	return kept
}
