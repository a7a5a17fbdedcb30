package share

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/replaytool/replay/internal/safewrite"
)

// pushCheckpoints returns the shadow repository dir's checkpoints for the
// index: prev's bundles (the store's current ones) kept, and one bundle of
// what is new since them uploaded through u. Refs equal to prev's upload
// nothing. A checkpoint of prev this repository lacks is lost by the push:
// it is named in lost, and only force makes a fresh complete chain instead.
func pushCheckpoints(ctx context.Context, u *uploader, dir, tmp string, prev *Checkpoints, force bool) (c *Checkpoints, lost []string, err error) {
	st := openShadowStorage(dir)
	defer st.Close()
	refs, err := shadowRefs(st)
	if err != nil || len(refs) == 0 {
		return nil, nil, err
	}
	c = &Checkpoints{Refs: refs}
	if head, err := st.Reference(plumbing.HEAD); err == nil && head.Type() == plumbing.SymbolicReference && validRefName(head.Target().String()) {
		c.Head = head.Target().String()
	}
	var prereqs []plumbing.Hash
	if prev != nil {
		for _, r := range prev.Refs {
			if _, err := st.EncodedObject(plumbing.CommitObject, r.Hash); err != nil {
				lost = append(lost, fmt.Sprintf("checkpoint %s (%s)", r.Hash, r.Name))
				continue
			}
			if !slices.Contains(prereqs, r.Hash) {
				prereqs = append(prereqs, r.Hash)
			}
		}
		if len(lost) > 0 && !force {
			return nil, lost, nil
		}
		if len(lost) == 0 {
			c.Bundles = slices.Clone(prev.Bundles)
			if slices.Equal(prev.Refs, refs) {
				return c, nil, nil
			}
		} else {
			prereqs = nil // --force: a fresh, complete chain
		}
	}
	f, err := os.CreateTemp(tmp, "replay-push-bundle-")
	if err != nil {
		return nil, nil, err
	}
	defer safewrite.RemovePath(f.Name())
	defer f.Close()
	n, err := writeBundle(ctxWriter{ctx, f}, st, refs, prereqs)
	if err != nil && ctx.Err() == nil {
		return nil, nil, fmt.Errorf("shadow checkpoint repository %s: %w", dir, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	if n == 0 {
		return c, lost, nil
	}
	size, err := f.Seek(0, 1)
	if err != nil {
		return nil, nil, err
	}
	if _, err := f.Seek(0, 0); err != nil {
		return nil, nil, err
	}
	blob, err := u.putBlob(f, size, "the checkpoints' bundle")
	if err != nil {
		return nil, nil, err
	}
	c.Bundles = append(c.Bundles, blob)
	return c, lost, ctx.Err()
}

// ctxWriter fails its writes once ctx is done, so a long local step (packing
// a large checkpoint) stops at an interrupt.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

// ctxReadSeeker fails its reads once ctx is done (unpacking a large checkpoint).
type ctxReadSeeker struct {
	ctx context.Context
	io.ReadSeeker
}

func (c ctxReadSeeker) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.ReadSeeker.Read(p)
}
