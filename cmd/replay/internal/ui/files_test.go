package ui

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestFileCounter(t *testing.T) {
	t.Parallel()
	run := func(tty bool) string {
		clock := &fakeClock{t: time.Date(2026, 4, 7, 18, 0, 0, 0, time.UTC)}
		var out bytes.Buffer
		c := NewFileCounter(&out, tty, clock.now)
		for done := 1; done <= 1000; done++ {
			c.Files("hashing", done, 1000)
			clock.t = clock.t.Add(time.Millisecond) // 1000 files in a second
		}
		c.Files("writing", 1, 1)
		return out.String()
	}
	assert.Equal(t, "checkpoint: hashing 1000 of 1000 files\ncheckpoint: writing 1 of 1 file\n", run(false), "off a terminal: once at the end")
	assert.Equal(t, "checkpoint: hashing 201 of 1000 files\n"+
		"checkpoint: hashing 401 of 1000 files\n"+
		"checkpoint: hashing 601 of 1000 files\n"+
		"checkpoint: hashing 801 of 1000 files\n"+
		"checkpoint: hashing 1000 of 1000 files\n"+
		"checkpoint: writing 1 of 1 file\n", run(true), "on a terminal: every 200ms and at the end")
}
