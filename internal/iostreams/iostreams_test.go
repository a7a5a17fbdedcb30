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
			s, _, _, _ := Test()
			s.SetTTY(tt.tty)
			s.SetEnv(func(k string) string { return tt.env[k] })
			assert.Equal(t, tt.wantPrompt, s.CanPrompt())
			assert.Equal(t, tt.wantColor, s.ColorEnabled())
		})
	}
}
