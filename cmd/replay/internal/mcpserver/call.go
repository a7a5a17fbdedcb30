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

	"github.com/replaytool/replay/report"
)

// argv builds one replay command line. Flags are written --name=value, so a value
// that starts with a dash stays a value; positional arguments come after "--", so
// one that starts with a dash stays an argument and never becomes a flag.
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
type inputError struct{ msg, kind string }

func (e *inputError) Error() string { return e.msg }

// badInput refuses an input the command line cannot express (exit kind usage).
func badInput(msg string) error { return &inputError{msg: msg, kind: "usage"} }

// refusal refuses a call a safety rule of the server stops (exit kind refused).
func refusal(msg string) error { return &inputError{msg: msg, kind: "refused"} }

// ErrorDocument is the structured content of a failed tool call.
type ErrorDocument struct {
	// Error is the command's one-line message, as the CLI prints it after "replay: ".
	Error string `json:"error"`
	// ExitCode is the command's exit code; absent when the server refused the call
	// before running a command.
	ExitCode int `json:"exit_code,omitempty"`
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

// addTool adds a tool whose typed input build turns into a replay command line
// that run runs. An input build refuses, a failed command and a panic are tool
// errors: the server goes on answering.
func addTool[In any](s *mcp.Server, run Runner, t *mcp.Tool, build func(In) ([]string, error)) {
	mcp.AddTool(s, t, func(ctx context.Context, _ *mcp.CallToolRequest, in In) (res *mcp.CallToolResult, out any, err error) {
		defer func() {
			if p := recover(); p != nil {
				msg := report.SafeText(fmt.Sprintf("%s: internal error: %v; please report it", t.Name, p))
				res, out, err = errorResult(ErrorDocument{Error: msg, ExitKind: "failure"}), ErrorDocument{Error: msg, ExitKind: "failure"}, nil
			}
		}()
		args, err := build(in)
		if err != nil {
			var ie *inputError
			if !errors.As(err, &ie) {
				ie = &inputError{msg: err.Error(), kind: "usage"}
			}
			doc := ErrorDocument{Error: ie.msg, ExitKind: ie.kind}
			return errorResult(doc), doc, nil
		}
		return result(args, run(ctx, args))
	})
}

// result turns what a command printed into the tool's result: its JSON document
// as structured content with a summary and the document's text, or a tool error
// with the command's one-line message.
func result(args []string, o Outcome) (*mcp.CallToolResult, any, error) {
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
		return errorResult(e), e, nil
	}
	if !isDoc {
		// A command that answers in text even with --json (resume: nothing to
		// resume, a fresh start): the text is the result.
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(o.Stdout) + warnings(o.Stderr)}}}, nil, nil
	}
	return &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: summary(args, doc) + warnings(o.Stderr)},
		&mcp.TextContent{Text: string(o.Stdout)},
	}}, json.RawMessage(doc), nil
}

// errorResult is a tool error whose text is the error line as the CLI prints it.
func errorResult(e ErrorDocument) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "replay: " + e.Error}}}
}

// warnings is the stderr of a successful command, as lines after the summary.
func warnings(stderr string) string {
	if strings.TrimSpace(stderr) == "" {
		return ""
	}
	return "\n" + strings.TrimRight(stderr, "\n")
}
