package prompt

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/replaytool/replay/internal/testkit/testtools"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// slowReader hands out one keystroke per Read so the form sees them one at a time,
// like a terminal would.
type slowReader struct{ keys []string }

func (r *slowReader) Read(p []byte) (int, error) {
	if len(r.keys) == 0 {
		// Hold the input open (as a terminal would) until the form has finished.
		time.Sleep(10 * time.Millisecond)
		return 0, io.EOF
	}
	time.Sleep(20 * time.Millisecond)
	n := copy(p, r.keys[0])
	r.keys = r.keys[1:]
	return n, nil
}

// afterFrameReader hands out its keys one per Read, each once out holds frame
// (the form has drawn what the key answers), or after 10 s.
type afterFrameReader struct {
	keys  []string
	out   *testtools.Buffer
	frame string
}

func (r *afterFrameReader) Read(p []byte) (int, error) {
	if len(r.keys) == 0 {
		time.Sleep(10 * time.Millisecond)
		return 0, io.EOF
	}
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end) && !strings.Contains(r.out.String(), r.frame); {
		time.Sleep(5 * time.Millisecond)
	}
	n := copy(p, r.keys[0])
	r.keys = r.keys[1:]
	return n, nil
}

// TestHuhConfirmForm drives the real huh confirmation form with keystrokes.
func TestHuhConfirmForm(t *testing.T) {
	tests := []struct {
		name string
		keys []string
		want bool
	}{
		{"enter takes the default no", []string{"\r"}, false},
		{"down arrow selects yes", []string{"\x1b[B", "\r"}, true},
		{"down then up is no again", []string{"\x1b[B", "\x1b[A", "\r"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			h := &Huh{In: &slowReader{keys: append([]string{}, tt.keys...)}, Out: &out}
			done := make(chan struct{})
			var (
				got bool
				err error
			)
			go func() {
				got, err = h.Confirm("Restore checkpoint pre-wave-2?", "About to restore working directory to checkpoint pre-wave-2.")
				close(done)
			}()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("the huh form did not finish")
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.NotEmpty(t, out.String(), "the form draws on Out, not on /dev/tty")
		})
	}
}

func TestScriptedPrompter(t *testing.T) {
	s := &Scripted{Confirms: []bool{true, false}, Selects: []int{1}}
	ok, err := s.Confirm("first?", "")
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = s.Confirm("second?", "")
	require.NoError(t, err)
	assert.False(t, ok)
	_, err = s.Confirm("third?", "")
	assert.Error(t, err)
	i, err := s.Select("pick", []string{"a", "b"}, 0)
	require.NoError(t, err)
	assert.Equal(t, 1, i)
	assert.Equal(t, []string{"first?", "second?", "third?", "pick"}, s.Asked)
	assert.Equal(t, []int{0}, s.Defaults)
}

// TestHuhSelectDefault drives the real huh selection form: enter alone answers the
// default option, a key press moves the cursor from there.
func TestHuhSelectDefault(t *testing.T) {
	tests := []struct {
		name string
		keys []string
		want int
	}{
		{"enter takes the default", []string{"\r"}, 2},
		{"up then enter takes the one above", []string{"\x1b[A", "\r"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			h := &Huh{In: &slowReader{keys: append([]string{}, tt.keys...)}, Out: &out}
			done := make(chan struct{})
			var (
				got int
				err error
			)
			go func() {
				got, err = h.Select("No checkpoint. What now?", []string{"disk state", "start fresh", "abort"}, 2)
				close(done)
			}()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("the huh form did not finish")
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestHuhAbortKeys drives the real forms: Esc is the safe answer (ErrAborted), Ctrl-C
// an interruption (ErrInterrupted, exit code 130).
func TestHuhAbortKeys(t *testing.T) {
	tests := []struct {
		name    string
		keys    []string
		confirm bool
		want    error
	}{
		{"esc on a confirmation", []string{"\x1b"}, true, ErrAborted},
		{"ctrl-c on a confirmation", []string{"\x03"}, true, ErrInterrupted},
		{"esc on a choice", []string{"\x1b"}, false, ErrAborted},
		{"ctrl-c on a choice after a move", []string{"\x1b[A", "\x03"}, false, ErrInterrupted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			h := &Huh{In: &slowReader{keys: append([]string{}, tt.keys...)}, Out: &out, Plain: true}
			done := make(chan error)
			go func() {
				var err error
				if tt.confirm {
					_, err = h.Confirm("Restore?", "preview")
				} else {
					_, err = h.Select("What now?", []string{"disk state", "start fresh", "abort"}, 2)
				}
				done <- err
			}()
			select {
			case err := <-done:
				assert.ErrorIs(t, err, tt.want)
				if tt.want == ErrInterrupted {
					assert.ErrorIs(t, err, ErrInterrupted)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("the huh form did not finish")
			}
		})
	}
}

// TestHuhPlainMarksTheCursor checks that without colour the answer under the cursor
// is still marked in text.
func TestHuhPlainMarksTheCursor(t *testing.T) {
	out := &testtools.Buffer{}
	// The key waits for the form's first frame: on a loaded machine a key
	// read before the first frame was drawn ended the form with nothing
	// drawn, and the test failed without a bug.
	h := &Huh{In: &afterFrameReader{keys: []string{"\r"}, out: out, frame: answerNo}, Out: out, Plain: true}
	ok, err := h.Confirm("Restore?", "preview")
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Contains(t, out.String(), "> "+answerNo)
	assert.NotContains(t, out.String(), "\x1b[3", "no colour escape in plain mode")
}
