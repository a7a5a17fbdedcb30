package templates

import "github.com/replaytool/replay/internal/testkit/testtools"

func mkfifo(path string) error { return testtools.Mkfifo(path, 0o600) }
