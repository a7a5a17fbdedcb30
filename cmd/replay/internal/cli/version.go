package cli

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/replaytool/replay/report"
)

// VersionInfo is what `replay version` prints: the release version, the module
// version and the VCS state the binary was built from (empty when unknown, as
// under `go run` or `go test`).
type VersionInfo struct {
	Version       string `json:"version"`
	ModuleVersion string `json:"module_version,omitempty"`
	GoVersion     string `json:"go_version,omitempty"`
	Revision      string `json:"vcs_revision,omitempty"`
	Time          string `json:"vcs_time,omitempty"`
	Modified      bool   `json:"vcs_modified"`
}

// ReadVersionInfo returns the version of this binary from its embedded build info.
func ReadVersionInfo() VersionInfo {
	v := VersionInfo{Version: Version}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	return versionFrom(v, bi)
}

// versionFrom fills v from the build info bi.
func versionFrom(v VersionInfo, bi *debug.BuildInfo) VersionInfo {
	v.ModuleVersion, v.GoVersion = bi.Main.Version, bi.GoVersion
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

// String is the one-line text form: version, module version and revision.
func (v VersionInfo) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "replay %s", v.Version)
	if v.ModuleVersion != "" {
		fmt.Fprintf(&b, " (module %s", v.ModuleVersion)
		if v.GoVersion != "" {
			fmt.Fprintf(&b, ", %s", v.GoVersion)
		}
		b.WriteString(")")
	}
	if v.Revision != "" {
		fmt.Fprintf(&b, "\nrevision %s", v.Revision)
		if v.Time != "" {
			fmt.Fprintf(&b, " (%s)", v.Time)
		}
		if v.Modified {
			b.WriteString(", with uncommitted changes")
		}
	}
	return b.String()
}

// NewCmdVersion builds `replay version`.
func NewCmdVersion(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of replay and the source it was built from",
		Long: `Print the release version, the Go module version and, when the binary was built
from a git checkout, the commit, its time and whether the tree had uncommitted
changes. With --json, one JSON document.
` + exitStatusFor("version"),
		Example: `  replay version
  replay version --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := ReadVersionInfo()
			if globalsOf(cmd).JSON {
				return report.WriteJSON(f.IOStreams.Out, v)
			}
			_, err := fmt.Fprintln(f.IOStreams.Out, v.String())
			return err
		},
	}
}
