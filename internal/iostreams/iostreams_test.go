package iostreams

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCanPromptAndColor(t *testing.T) {
	tests := []struct {
		name       string
		tty        bool
		env        map[string]string
		wantPrompt bool
		wantColor  bool
	}{
		{"no tty", false, nil, false, false},
		{"tty", true, nil, true, true},
		{"tty with CI", true, map[string]string{"CI": "true"}, false, true},
		{"tty with REPLAY_PROMPT_DISABLED", true, map[string]string{"REPLAY_PROMPT_DISABLED": "1"}, false, true},
		{"tty with NO_COLOR", true, map[string]string{"NO_COLOR": "1"}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &IOStreams{}
			s.SetTTY(tt.tty)
			s.SetEnv(func(k string) string { return tt.env[k] })
			assert.Equal(t, tt.wantPrompt, s.CanPrompt())
			assert.Equal(t, tt.wantColor, s.ColorEnabled())
		})
	}
}

func TestTerminalWidth(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		tty     bool
		size    int
		columns string
		want    int
	}{
		{"terminal size wins", true, 100, "80", 100},
		{"terminal of unknown size falls back to COLUMNS", true, 0, "80", 80},
		{"not a terminal: COLUMNS", false, 100, "72", 72},
		{"not a terminal, no COLUMNS: no limit", false, 100, "", 0},
		{"bad COLUMNS: no limit", false, 0, "wide", 0},
		{"negative COLUMNS: no limit", false, 0, "-5", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ios := &IOStreams{}
			ios.SetTTY(tt.tty)
			ios.SetWidth(tt.size)
			ios.SetEnv(func(k string) string {
				if k == "COLUMNS" {
					return tt.columns
				}
				return ""
			})
			if got := ios.TerminalWidth(); got != tt.want {
				t.Fatalf("TerminalWidth() = %d, want %d", got, tt.want)
			}
		})
	}
}
