#!/usr/bin/env bash
# bench/house.sh — the house figures of issue 37: how large the product is and how much
# of it only tests reach, printed so that a before and an after can be compared.
#
#  - lines of Go: product (non-test files outside the harness), harness (non-test files
#    of the test-only packages below) and tests (every *_test.go), as `wc -l` counts them;
#  - `deadcode ./cmd/replay`: functions the binary never reaches, split product / harness
#    (needs golang.org/x/tools/cmd/deadcode in $(go env GOPATH)/bin or on PATH; skipped
#    with a message otherwise);
#  - product functions (and methods) longer than LONG lines (default 60), from the `func`
#    line to the closing brace, the longest listed first;
#  - `duplicates` pairs in the product files only (a copy of them, so test files and the
#    harness do not pair), when the `duplicates` tool is on PATH.
#
# The harness: internal/fixture, every package under internal/testkit (the test-only tree),
# internal/analysis and e2e (HARNESS overrides, space separated).
# cmd/replay/internal/docgen (the reference generator, not in the binary) counts as
# product and is also printed alone. Files under testdata/ are not counted.
# Usage: bash bench/house.sh   (LONG=80: another length; SHOW=20: list more rows;
# DEADCODE=off: skip deadcode, the slow part)
set -euo pipefail
cd "$(dirname "$0")/.."
LONG=${LONG:-60}
SHOW=${SHOW:-10}
HARNESS=${HARNESS:-internal/fixture internal/testkit internal/analysis e2e}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/replay-bench-house.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

harness_re=$(printf '%s\n' $HARNESS | sed 's|[.]|[.]|g; s|^|^|; s|$|/|' | paste -sd'|')
find . -name '*.go' -not -path './.git/*' -not -path '*/testdata/*' | sed 's|^\./||' | sort >"$WORK/all"
grep '_test\.go$' "$WORK/all" >"$WORK/tests" || true
grep -v '_test\.go$' "$WORK/all" >"$WORK/nontest" || true
grep -E "$harness_re" "$WORK/nontest" >"$WORK/harness" || true
grep -vE "$harness_re" "$WORK/nontest" >"$WORK/product" || true

lines() { if [ -s "$1" ]; then xargs cat <"$1" | wc -l; else echo 0; fi; }
echo "== house figures $(date -u +%FT%TZ), $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet 2>/dev/null || echo ' (uncommitted changes)')"
printf 'lines of Go: product %s in %s files (docgen %s), harness %s in %s files, tests %s in %s files\n' \
	"$(lines "$WORK/product")" "$(wc -l <"$WORK/product")" \
	"$(grep '^cmd/replay/internal/docgen/' "$WORK/product" >"$WORK/docgen" || true; lines "$WORK/docgen")" \
	"$(lines "$WORK/harness")" "$(wc -l <"$WORK/harness")" \
	"$(lines "$WORK/tests")" "$(wc -l <"$WORK/tests")"

dc=$(command -v deadcode || true)
[ "${DEADCODE:-}" != off ] || dc=-
[ -n "$dc" ] || [ ! -x "$(go env GOPATH)/bin/deadcode" ] || dc="$(go env GOPATH)/bin/deadcode"
if [ "$dc" = - ]; then
	echo "deadcode: DEADCODE=off, skipped"
elif [ -n "$dc" ]; then
	"$dc" ./cmd/replay >"$WORK/dead"
	dp=$(grep -cvE "$harness_re" "$WORK/dead" || true)
	dh=$(grep -cE "$harness_re" "$WORK/dead" || true)
	printf 'deadcode ./cmd/replay: %s unreachable functions: product %s, harness %s\n' "$((dp + dh))" "$dp" "$dh"
	grep -vE "$harness_re" "$WORK/dead" | cut -d: -f1 | xargs -r -n1 dirname | sort | uniq -c | sort -k1,1rn -k2 |
		awk '{ printf "%s%s %s", (NR > 1 ? ", " : "  product by package: "), $2, $1 } END { if (NR) print "" }'
else
	echo "deadcode: not installed (go install golang.org/x/tools/cmd/deadcode@latest), skipped"
fi

# The long functions: a small go/ast walker over the product files.
mkdir -p "$WORK/funcs"
cat >"$WORK/funcs/main.go" <<'GO'
package main

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"sort"
	"strconv"
)

func main() {
	limit, _ := strconv.Atoi(os.Args[1])
	fset := token.NewFileSet()
	type fn struct {
		where string
		n     int
	}
	var long []fn
	total := 0
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		f, err := parser.ParseFile(fset, sc.Text(), nil, parser.SkipObjectResolution)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			total++
			start, end := fset.Position(fd.Pos()), fset.Position(fd.End())
			if n := end.Line - start.Line + 1; n > limit {
				name := fd.Name.Name
				if fd.Recv != nil && len(fd.Recv.List) > 0 {
					name = "(" + types(fd.Recv.List[0].Type) + ")." + name
				}
				long = append(long, fn{fmt.Sprintf("%s:%d %s", start.Filename, start.Line, name), n})
			}
		}
	}
	sort.Slice(long, func(i, j int) bool { return long[i].n > long[j].n })
	fmt.Printf("%d %d\n", len(long), total)
	for _, f := range long {
		fmt.Printf("%d %s\n", f.n, f.where)
	}
}

func types(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return "*" + types(t.X)
	case *ast.Ident:
		return t.Name
	case *ast.IndexExpr:
		return types(t.X)
	case *ast.IndexListExpr:
		return types(t.X)
	}
	return "?"
}
GO
sed "s|^|$PWD/|" "$WORK/product" | (cd "$WORK/funcs" && GOFLAGS= go run main.go "$LONG") | sed "s|$PWD/||" >"$WORK/long"
read -r nlong nfuncs <"$WORK/long"
printf 'product functions over %s lines: %s of %s\n' "$LONG" "$nlong" "$nfuncs"
sed -n "2,$((SHOW + 1))p" "$WORK/long" | sed 's/^/  /'

if command -v duplicates >/dev/null; then
	mkdir -p "$WORK/product-tree"
	while read -r f; do
		mkdir -p "$WORK/product-tree/$(dirname "$f")"
		cp "$f" "$WORK/product-tree/$f"
	done <"$WORK/product"
	dup=$(duplicates --repo "$WORK/product-tree" --most 200 --seconds 300)
	printf 'duplicates (product files, 6+ shared lines): %s\n' "$(head -1 <<<"$dup")"
	if grep -q '^incomplete' <<<"$dup"; then grep '^incomplete' <<<"$dup"; fi
	grep -E '^D[0-9]+ ' <<<"$dup" | head -"$SHOW" | sed 's/^/  /'
else
	echo "duplicates: not on PATH, skipped"
fi
