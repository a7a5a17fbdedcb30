package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/internal/gitrepo"
	"github.com/replaytool/replay/report"
	"github.com/replaytool/replay/share"
)

// PullOptions are the flags and arguments of `replay pull`.
type PullOptions struct {
	cmdBase
	From string
	Run  string
	Into string
	Repo string
	List bool
}

// NewCmdPull builds `replay pull URL [RUN] --into DIR`.
func NewCmdPull(f *Factory, runF func(*PullOptions) error) *cobra.Command {
	opts := &PullOptions{cmdBase: baseOf(f)}
	cmd := &cobra.Command{
		Use:   "pull URL [RUN] --into DIR",
		Short: "Fetch a whole run from a shared store into a new directory",
		Long: `Fetch run RUN (the store's only run without RUN; --list shows them) from the
store at URL into DIR, which must not exist or be empty. Every object is checked
against its sha256 before anything is written; the run is written into a temp
directory beside DIR and renamed into place, so a failure leaves nothing.

DIR/<H>/ is laid out as Crucible's ~/.claude/projects/<H>/, with <H> the
folder name of --repo (default: the current directory) on this machine, so a
run pushed from a clone at another path is re-homed (a note says so): memory/
is the scratch dir and checkpoints/<H>/ the shadow checkpoint repository,
whose working tree is --repo. Objects stream in chunks (memory stays bounded);
an interrupt (SIGINT, SIGTERM) stops within a second and leaves nothing, and
the temp dir of a killed pull is swept by the next one. The pulled run works
with status (--scratch DIR/<H>/memory), plan, verify and A/B replays (PATH
DIR/<H>/memory), run in the project or with --repo.

URL forms and credentials are those of replay push.
` + exitStatusFor("pull"),
		Example: `  replay pull s3://team-runs/replay --list
  replay pull s3://team-runs/replay 1775430161-3f2a9c01b7de --into ./shared-run
  replay plan ./shared-run/<H>/memory`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.From = args[0]
			if len(args) == 2 {
				opts.Run = args[1]
			}
			if opts.Into == "" && !opts.List {
				return usageError("pull needs --into DIR: a new or empty directory for the run")
			}
			return runCommand(cmd, &opts.Global, opts, runF, pullRun)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Into, "into", "", "the new or empty `DIR` to write the run into (required)")
	fl.StringVar(&opts.Repo, "repo", "", "project `DIR` the pulled checkpoints restore into (default: the current directory)")
	fl.BoolVar(&opts.List, "list", false, "list the store's runs and write nothing")
	return cmd
}

func pullRun(opts *PullOptions) error {
	f := opts.env()
	cwd, err := f.Getwd()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(f.baseContext(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	b, err := openStore(ctx, f, cwd, opts.From)
	if err != nil {
		return err
	}
	if opts.List {
		return listRuns(ctx, f, b.String(), func() ([]string, error) { return share.Runs(ctx, b) })
	}
	repo := cwd
	if opts.Repo != "" {
		repo = absPath(cwd, opts.Repo)
	}
	res, err := share.Pull(ctx, b, share.PullOptions{Run: opts.Run, Into: absPath(cwd, opts.Into), Repo: repo})
	if err != nil && ctx.Err() != nil {
		return errkind.Errorf(context.Canceled, "pull interrupted: nothing was written into %s", report.SafeText(absPath(cwd, opts.Into)))
	}
	if err != nil {
		return err
	}
	if f.Global.JSON {
		return report.WriteJSON(f.IO.Out, res)
	}
	_, err = fmt.Fprintf(f.IO.Out, "%s\nnext: replay status %s --scratch %s\n      replay plan %s --repo %s\n",
		res.Summary(), share.ShellQuote(repo), share.ShellQuote(res.Scratch), share.ShellQuote(res.Scratch), share.ShellQuote(repo))
	if res.Rehomed != "" && err == nil {
		f.Printer().Infof("note: the run was pushed from project folder %s; it is laid out under %s, the folder of %s, so resume, plan and A/B replays find it from this clone", res.Rehomed, res.Project, report.SafeText(repo))
	}
	if _, gitErr := gitrepo.Open(repo); gitErr != nil && err == nil {
		// The plan proves work done by finding the run's commits in the project's
		// history: without it every check fails, which reads like a broken run.
		_, err = fmt.Fprintf(f.IO.ErrOut, "note: %s is not a git repository: run the plan inside a clone of the project (or pass --repo DIR), or every commit check fails for want of its history\n", report.SafeText(repo))
	}
	return err
}

func listRuns(ctx context.Context, f *runEnv, where string, runs func() ([]string, error)) error {
	ids, err := runs()
	if err != nil {
		return err
	}
	if f.Global.JSON {
		return report.WriteJSON(f.IO.Out, map[string]any{"store": where, "runs": ids})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s in %s\n", report.Count(len(ids), "run"), report.SafeText(where))
	for _, id := range ids {
		b.WriteString(id + "\n")
	}
	_, err = fmt.Fprint(f.IO.Out, b.String())
	return err
}

// absStorePath makes a relative directory store URL absolute from cwd (the
// command's working directory, not the process's).
func absStorePath(url, cwd string) string {
	if url == "" || strings.Contains(url, "://") {
		return url
	}
	return absPath(cwd, url)
}
