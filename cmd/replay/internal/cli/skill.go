package cli

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/internal/runfile"
	"github.com/replaytool/replay/internal/safewrite"
	"github.com/replaytool/replay/report"
	"github.com/replaytool/replay/skills"
)

// errSkillEdited is the kind of the refusal to overwrite an edited SKILL.md (exit 3).
var errSkillEdited = errors.New("the installed skill was edited")

// NewCmdSkill builds `replay skill`, the Claude Code skill that drives replay.
func NewCmdSkill(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "skill",
		Short: "Install the Claude Code skill that drives replay (/replay)",
		Long: "The replay skill lets Claude Code run replay where its users work: /replay plans the resume,\n" +
			"restores only after the user says yes, and continues the original skill from the Compression\n" +
			"State Block. The repository is also a Claude Code plugin (.claude-plugin/plugin.json) that\n" +
			"serves the same skill and registers `replay mcp`; `replay skill install` is for people who do\n" +
			"not use plugins.\n" + exitStatusFor("skill"),
		Example: `  replay skill install
  replay skill show`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(NewCmdSkillInstall(f, nil), NewCmdSkillShow(f))
	return cmd
}

// SkillInstallOptions are the arguments of `replay skill install`.
type SkillInstallOptions struct {
	cmdBase
	// Dir is the skills folder; the skill goes to Dir/replay/SKILL.md.
	Dir   string
	Force bool
}

// NewCmdSkillInstall builds `replay skill install [--dir D] [--force]`.
func NewCmdSkillInstall(f *Factory, runF func(*SkillInstallOptions) error) *cobra.Command {
	opts := &SkillInstallOptions{cmdBase: baseOf(f)}
	cmd := &cobra.Command{
		Use:   "install [--dir D] [--force]",
		Short: "Write the replay skill into ~/.claude/skills/replay/SKILL.md",
		Long: "Write the SKILL.md this replay ships into D/replay/SKILL.md (D defaults to ~/.claude/skills,\n" +
			"where Claude Code finds personal skills). An identical copy is left alone; an older version this\n" +
			"command wrote, unedited, is replaced (a stamp beside it holds the sha256 of what was written).\n" +
			"An edited copy, or one this command did not write, is not overwritten: the command refuses with\n" +
			"exit 3 unless --force is given, and then keeps the old copy as SKILL.md.bak-<unix time> first.\n" +
			"Nothing is written through a symbolic link, and a relative D is reached from the working directory\n" +
			"without following one (an absolute D is followed as given).\n" + exitStatusFor("skill install"),
		Example: `  replay skill install
  replay skill install --dir .claude/skills
  replay skill install --force`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCommand(cmd, &opts.Global, opts, runF, skillInstallRun)
		},
	}
	cmd.Flags().StringVar(&opts.Dir, "dir", "", "the skills `DIR` (default ~/.claude/skills)")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "overwrite a copy that differs, keeping it as SKILL.md.bak-<unix time>")
	return cmd
}

func skillInstallRun(opts *SkillInstallOptions) error {
	f := opts.env()
	dir := opts.Dir
	if dir == "" {
		home := f.Getenv("HOME")
		if home == "" {
			return usageError("HOME is not set: give the skills folder with --dir (Claude Code reads ~/.claude/skills)")
		}
		dir = filepath.Join(home, ".claude", "skills")
	}
	if cwd, err := f.Getwd(); err == nil && !filepath.IsAbs(dir) {
		// A relative --dir is a path inside the working directory, a cloned
		// repository's .claude/skills most often: its folders are the
		// repository's, so they are reached without following a link (a
		// repository's .claude linked to a private folder would take the
		// skill and its backup there). An absolute --dir, ~/.claude/skills
		// or a path leaving the working directory is the user's own, followed.
		if rel := filepath.Clean(dir); rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			if err := safewrite.MkdirIn(cwd, rel); err != nil {
				return errkind.Errorf(errSkillEdited, "--dir %s (a relative --dir is reached from the working directory without following a link; give an absolute path to follow one): %v", dir, err)
			}
		}
		dir = filepath.Join(cwd, dir)
	}
	rel := filepath.Join(skills.ReplayName, "SKILL.md")
	stamp := filepath.Join(skills.ReplayName, installedStamp)
	path := filepath.Join(dir, rel)
	// The installed copy is read where it is, never through a link (its content is
	// copied into a backup: a link could lead to any private file, /dev/zero or a
	// FIFO) and through SKILL.md's size limit.
	old, err := runfile.ReadFileIn(dir, rel, runfile.Skill)
	if err != nil && (errors.Is(err, runfile.ErrLink) || errors.Is(err, runfile.ErrNotRegular) || errors.Is(err, runfile.ErrTooLarge)) {
		return errkind.Errorf(errSkillEdited, "%v; nothing was written", err)
	}
	switch {
	case err == nil && bytes.Equal(old, skills.Replay):
		return skillDone(f, path, "already installed and up to date")
	case err == nil && wroteIt(dir, stamp, old):
		// An older version this command wrote, unedited: replaced without a question.
	case err == nil && !opts.Force:
		return errkind.Errorf(errSkillEdited, "%s differs from the skill this replay ships (edited, or another version); nothing was written. Keep it, or run 'replay skill install --force' to replace it (the old copy is kept as SKILL.md.bak-<unix time>)", path)
	case err == nil:
		now, nerr := f.Now()
		if nerr != nil {
			return nerr
		}
		backup := rel + ".bak-" + strconv.FormatInt(now().Unix(), 10)
		if err := safewrite.WriteAtomicIn(dir, backup, old); err != nil {
			return err
		}
		f.Warnf("the copy that differed is kept as %s", filepath.Join(dir, backup))
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: %w", path, err)
	}
	//replay:door the skills folder the user named (--dir or ~/.claude/skills): the user's path, followed; below it safewrite refuses links
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("%s: cannot create the skills folder: %w", dir, err)
	}
	if err := safewrite.WriteAtomicIn(dir, rel, skills.Replay); err != nil {
		return err
	}
	sum := sha256.Sum256(skills.Replay)
	if err := safewrite.WriteAtomicIn(dir, stamp, []byte(hex.EncodeToString(sum[:])+"\n")); err != nil {
		return err
	}
	return skillDone(f, path, "installed")
}

// installedStamp is the file beside the installed SKILL.md that holds the sha256 of
// what `replay skill install` wrote, so that a later install can tell an unedited
// older version (replaced) from an edited copy (kept unless --force).
const installedStamp = ".replay-installed-sha256"

// wroteIt reports whether content is exactly what the stamp dir/stamp says the
// installer wrote.
func wroteIt(dir, stamp string, content []byte) bool {
	data, err := runfile.ReadFileIn(dir, stamp, runfile.SkillStamp)
	if err != nil {
		return false
	}
	sum := sha256.Sum256(content)
	return strings.TrimSpace(string(data)) == hex.EncodeToString(sum[:])
}

func skillDone(f *runEnv, path, what string) error {
	if f.Global.JSON {
		return report.WriteJSON(f.IO.Out, map[string]string{"skill": path, "result": what})
	}
	_, err := fmt.Fprintf(f.IO.Out, "%s: %s. In Claude Code, type /replay (or ask to resume the pipeline).\n", shownText(path), what)
	return err
}

// NewCmdSkillShow builds `replay skill show`: print the shipped SKILL.md.
func NewCmdSkillShow(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:     "show",
		Short:   "Print the SKILL.md this replay ships",
		Long:    "Print the replay skill's SKILL.md, exactly as `replay skill install` writes it.\n" + exitStatusFor("skill show"),
		Example: `  replay skill show > .claude/skills/replay/SKILL.md`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := f.IOStreams.Out.Write(skills.Replay)
			return err
		},
	}
}
