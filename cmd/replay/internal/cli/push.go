package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/replaytool/replay/internal/errkind"
	"github.com/replaytool/replay/report"
	"github.com/replaytool/replay/share"
	"github.com/replaytool/replay/store"
)

// PushOptions are the flags and argument of `replay push`.
type PushOptions struct {
	cmdBase
	Path    string
	To      string
	Repo    string
	Scratch string
	Shadow  string
	Force   bool
}

// NewCmdPush builds `replay push [PATH] --to URL`.
func NewCmdPush(f *Factory, runF func(*PushOptions) error) *cobra.Command {
	opts := &PushOptions{cmdBase: baseOf(f)}
	cmd := &cobra.Command{
		Use:   "push [PATH] --to URL",
		Short: "Upload a whole run (files, recordings, lineage, checkpoints) to a shared store",
		Long: `Upload the run at PATH (the current project's without PATH) to the store at URL:
its scratch dir (manifest, dispatch files, recordings and the side-effect objects
they carry, fork lineage, reports, markers), and the shadow checkpoint repository
as a git bundle. Every file is stored once under its sha256, so pushing again
uploads only what changed ("0 new objects" when nothing did): large files go
in 8 MiB chunks, memory stays bounded whatever the run's size, and the
checkpoint history is a chain of git bundles, each holding only what is new.
The run's index is written last with a compare-and-swap, so nobody ever sees a
half-pushed run, and a copy that lacks what the store holds (manifest lines,
files, checkpoints: an older copy) never replaces it without --force, which
names what is lost. The run's id is its session and its project's identity
(the root commit, in every clone). Nothing on disk changes (a project that
is not a git repository gets a stored random id, .replay-project-id in the
scratch dir, once).

URL is a directory (a path or file:///dir) or s3://bucket[/prefix] with optional
?endpoint=host:port&insecure=1&region=r. S3 credentials come from the standard
chain: AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, the shared credentials file
(AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials, profile AWS_PROFILE), then
the instance or container role. The endpoint may also come from
AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL.
` + exitStatusFor("push"),
		Example: `  replay push --to s3://team-runs/replay
  replay push ~/.claude/projects/<H>/memory --to /mnt/shared/runs`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Path = args[0]
			}
			if opts.To == "" {
				return usageError("push needs --to URL: a directory or s3://bucket/prefix")
			}
			return runCommand(cmd, &opts.Global, opts, runF, pushRun)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.To, "to", "", "the store `URL`: a directory, file:///dir or s3://bucket/prefix (required)")
	fl.StringVar(&opts.Repo, "repo", "", "project working tree `DIR` (default: the current directory)")
	fl.StringVar(&opts.Scratch, "scratch", "", "scratch directory `DIR` (default: from the pipeline marker)")
	fl.StringVar(&opts.Shadow, "shadow", "", "shadow checkpoint repository `DIR` (default: beside the scratch dir)")
	fl.BoolVar(&opts.Force, "force", false, "replace the store's copy of the run even when it holds manifest lines, files or checkpoints this copy lacks (they are named, then lost)")
	return cmd
}

// openStore opens the store url names with the credentials of the command's
// environment; a relative directory is taken from cwd.
func openStore(ctx context.Context, f *runEnv, cwd, url string) (store.Backend, error) {
	getenv := f.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	return store.OpenEnv(ctx, absStorePath(url, cwd), getenv)
}

func pushRun(opts *PushOptions) error {
	f := opts.env()
	cwd, err := f.Getwd()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(f.baseContext(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := makeStoreDir(f, opts.To, cwd); err != nil {
		return err
	}
	b, err := openStore(ctx, f, cwd, opts.To)
	if err != nil {
		return err
	}
	src := share.Source{Path: opts.Path, Home: f.Getenv("HOME"), Tmp: tmpDir(f), SysTmp: sysTmpDir(f), Cwd: cwd,
		Repo: opts.Repo, Scratch: opts.Scratch, Shadow: opts.Shadow}
	res, err := share.Push(ctx, b, src, share.PushOptions{Replay: Version, Force: opts.Force, Tmp: tmpDir(f)})
	if err != nil && ctx.Err() != nil {
		return errkind.Errorf(context.Canceled, "push interrupted: the store's index of the run was not written (its copy, if any, is unchanged); the objects already uploaded are kept and the next push skips them")
	}
	if err != nil {
		return err
	}
	for _, s := range res.Skipped {
		f.Warnf("left out %s: not a regular file (links are never followed)", report.SafeText(s))
	}
	for _, l := range res.Lost {
		f.Warnf("--force: the store's copy lost %s", l)
	}
	if f.Global.JSON {
		return report.WriteJSON(f.IO.Out, res)
	}
	_, err = fmt.Fprintln(f.IO.Out, res.Summary(b.String()))
	return err
}
