//go:build !unix

package share

// noFollow is 0 where O_NOFOLLOW does not exist; the walk already skips links.
const noFollow = 0
