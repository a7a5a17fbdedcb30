package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/replaytool/replay/internal/exitcode"
	"github.com/replaytool/replay/report"
)

// argv builds the replay command line a tool call stands for: the summary of a
// successful call names it, and a tool the command layer gives no Commands entry
// for runs it through the Runner. Flags are written --name=value, so a value that
// starts with a dash stays a value; positional arguments come after "--", so one
// that starts with a dash stays an argument and never becomes a flag.
type argv struct{ flags, args []string }

func (a *argv) pos(v string) {
	if v != "" {
		a.args = append(a.args, v)
	}
}

func (a *argv) str(name, v string) {
	if v != "" {
		a.flags = append(a.flags, "--"+name+"="+v)
	}
}

func (a *argv) strs(name string, vs []string) {
	for _, v := range vs {
		a.flags = append(a.flags, "--"+name+"="+v)
	}
}

func (a *argv) flag(name string, on bool) {
	if on {
		a.flags = append(a.flags, "--"+name)
	}
}

func (a *argv) num(name string, n int) {
	if n != 0 {
		a.str(name, strconv.Itoa(n))
	}
}

// line is the command line: the command's words, the flags, "--", the arguments.
func (a *argv) line(command ...string) []string {
	out := append(append([]string{}, command...), a.flags...)
	out = append(out, "--")
	return append(out, a.args...)
}

// inputError is a tool input refused before any command runs.
type inputError struct {
	msg, kind string
	code      int
}

func (e *inputError) Error() string { return e.msg }

// badInput refuses an input the command line cannot express (exit 2, usage).
func badInput(msg string) error {
	return &inputError{msg: msg, kind: exitcode.Name(exitcode.Usage), code: exitcode.Usage}
}

// refusal refuses a call a safety rule of the server stops (exit 3, refused).
func refusal(msg string) error {
	return &inputError{msg: msg, kind: exitcode.Name(exitcode.Refused), code: exitcode.Refused}
}

// ErrorDocument is the structured content of a failed tool call.
type ErrorDocument struct {
	// Error is the command's one-line message, as the CLI prints it after "replay: ".
	Error string `json:"error"`
	// ExitCode is the command's exit code; for a call the server refused before
	// running a command, the code the CLI gives the same refusal (2 for a bad
	// input, 3 for a safety refusal).
	ExitCode int `json:"exit_code"`
	// ExitKind names the exit code: failure, usage, refused, no-resume,
	// unfaithful or interrupted.
	ExitKind string `json:"exit_kind"`
	// Output is the JSON document the command printed before it failed (plan with
	// a failing check, verify --strict), Text what it printed when not JSON.
	Output json.RawMessage `json:"output,omitempty"`
	Text   string          `json:"text,omitempty"`
	// Stderr is what the command printed on stderr: its warnings and error line.
	Stderr string `json:"stderr,omitempty"`
}

// addTool adds a tool whose input is decoded by decodeArgs under In's schema and
// checked by build, which may fill in defaults of the server's (ab's agent) and
// returns the command line the call stands for.
// direct, the command layer's own entry for the tool, runs it; without one, run
// runs the command line. An input refused, a failed command and a panic are tool
// errors whose structured content is an ErrorDocument: the server goes on
// answering.
func addTool[In any](s *mcp.Server, run Runner, t *mcp.Tool, build func(*In) ([]string, error), direct func(context.Context, In) Outcome) {
	schema := inputSchema[In]()
	t.InputSchema = schema
	s.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
		defer func() {
			if p := recover(); p != nil {
				msg := report.SafeText(fmt.Sprintf("%s: internal error: %v; please report it", t.Name, p))
				res, err = errorResult(ErrorDocument{Error: msg, ExitCode: exitcode.Failure, ExitKind: exitcode.Name(exitcode.Failure)}), nil
			}
		}()
		var raw json.RawMessage
		if req != nil && req.Params != nil {
			raw = req.Params.Arguments
		}
		in, err := decodeArgs[In](t.Name, raw, schema)
		var args []string
		if err == nil {
			args, err = build(&in)
		}
		if err != nil {
			var ie *inputError
			if !errors.As(err, &ie) {
				ie = badInput(err.Error()).(*inputError)
			}
			return errorResult(ErrorDocument{Error: ie.msg, ExitCode: ie.code, ExitKind: ie.kind}), nil
		}
		if direct != nil {
			return result(args, direct(ctx, in)), nil
		}
		return result(args, run(ctx, args)), nil
	})
}

// result turns what a command printed into the tool's result: its JSON document
// as structured content with a summary and the document's text, or a tool error
// with the command's one-line message.
func result(args []string, o Outcome) *mcp.CallToolResult {
	doc := bytes.TrimSpace(o.Stdout)
	isDoc := len(doc) > 0 && doc[0] == '{' && json.Valid(doc)
	if o.Code != 0 {
		e := ErrorDocument{Error: o.Err, ExitCode: o.Code, ExitKind: o.Kind, Stderr: o.Stderr}
		if e.Error == "" {
			e.Error = fmt.Sprintf("exit %d (%s)", o.Code, o.Kind)
		}
		if isDoc {
			e.Output = json.RawMessage(doc)
		} else {
			e.Text = string(o.Stdout)
		}
		return errorResult(e)
	}
	if !isDoc {
		// A command that answers in text even with --json (resume: nothing to
		// resume, a fresh start): the text is the result.
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(o.Stdout) + warnings(o.Stderr)}}}
	}
	return &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: summary(args, doc) + warnings(o.Stderr)},
		&mcp.TextContent{Text: string(o.Stdout)},
	}, StructuredContent: json.RawMessage(doc)}
}

// errorResult is a tool error whose text is the error line as the CLI prints it
// and whose structured content is e.
func errorResult(e ErrorDocument) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, StructuredContent: e, Content: []mcp.Content{&mcp.TextContent{Text: "replay: " + e.Error}}}
}

// warnings is the stderr of a successful command, as lines after the summary.
func warnings(stderr string) string {
	if strings.TrimSpace(stderr) == "" {
		return ""
	}
	return "\n" + strings.TrimRight(stderr, "\n")
}
