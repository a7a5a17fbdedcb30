package platform

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFileStatGivesTheInodeAndCtime(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows gives no inode or ctime")
	}
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	require.NoError(t, os.WriteFile(a, []byte("a"), 0o644))
	require.NoError(t, os.WriteFile(b, []byte("b"), 0o644))
	ia, err := os.Lstat(a)
	require.NoError(t, err)
	ib, err := os.Lstat(b)
	require.NoError(t, err)
	sa, ok := FileStat(ia)
	require.True(t, ok)
	sb, ok := FileStat(ib)
	require.True(t, ok)
	assert.Equal(t, sa.Dev, sb.Dev)
	assert.NotEqual(t, sa.Ino, sb.Ino)
	assert.WithinDuration(t, time.Now(), sa.Ctime, time.Minute)
	assert.Equal(t, uint32(os.Getuid()), sa.UID)
}

// The lock is refused while another descriptor holds it and taken once it is free.
func TestTryLockBothSides(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	f1, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	defer f1.Close()
	f2, err := os.OpenFile(path, os.O_RDWR, 0o644)
	require.NoError(t, err)
	defer f2.Close()
	if runtime.GOOS == "windows" {
		assert.ErrorIs(t, Lock(f1), ErrUnsupported)
		return
	}
	require.NoError(t, Lock(f1))
	assert.ErrorIs(t, TryLock(f2), ErrWouldBlock)
	require.NoError(t, Unlock(f1))
	require.NoError(t, TryLock(f2))
	require.NoError(t, Unlock(f2))
	require.NoError(t, LockShared(f1))
	require.NoError(t, Unlock(f1))
}

// A link in the last component is refused, a regular file opens, for the
// system's own open and for the checked open of systems without O_NOFOLLOW.
func TestNoFollowBothSides(t *testing.T) {
	dir := t.TempDir()
	file, link := filepath.Join(dir, "file"), filepath.Join(dir, "link")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	if err := os.Symlink("file", link); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	r, err := os.OpenRoot(dir)
	require.NoError(t, err)
	defer r.Close()
	opens := map[string]func(name string, flag int) (*os.File, error){
		"OpenNoFollow": func(name string, flag int) (*os.File, error) {
			return OpenNoFollow(filepath.Join(dir, name), flag, 0o644)
		},
		"OpenInRootNoFollow": func(name string, flag int) (*os.File, error) { return OpenInRootNoFollow(r, name, flag, 0o644) },
		"checked": func(name string, flag int) (*os.File, error) {
			path := filepath.Join(dir, name)
			return openChecked(path, flag, func(fl int) (*os.File, error) { return os.OpenFile(path, fl, 0o644) }, func() (os.FileInfo, error) { return os.Lstat(path) })
		},
	}
	for name, open := range opens {
		_, err := open("link", os.O_RDONLY)
		assert.ErrorIs(t, err, ErrLink, name)
		f, err := open("file", os.O_RDONLY)
		require.NoError(t, err, name)
		f.Close()
		f, err = open("new-"+name, os.O_WRONLY|os.O_CREATE|os.O_EXCL)
		require.NoError(t, err, name)
		f.Close()
		_, err = open("link", os.O_WRONLY|os.O_CREATE|os.O_EXCL)
		assert.Error(t, err, name)
	}
	// Without O_NOFOLLOW, a write that is not an exclusive create is refused.
	_, err = opens["checked"]("file", os.O_WRONLY|os.O_APPEND)
	assert.ErrorIs(t, err, ErrUnsupported)
	got, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, "x", string(got), "nothing written through the link")
}

// OpenDirNoFollow opens a directory, and refuses a link to one (ErrLink) and a
// file.
func TestOpenDirNoFollowBothSides(t *testing.T) {
	dir := t.TempDir()
	sub, link, file := filepath.Join(dir, "sub"), filepath.Join(dir, "link"), filepath.Join(dir, "file")
	require.NoError(t, os.Mkdir(sub, 0o755))
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	if err := os.Symlink("sub", link); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	d, err := OpenDirNoFollow(sub)
	require.NoError(t, err)
	st, err := d.Stat()
	require.NoError(t, err)
	assert.True(t, st.IsDir())
	d.Close()
	_, err = OpenDirNoFollow(link)
	assert.ErrorIs(t, err, ErrLink)
	_, err = OpenDirNoFollow(file)
	assert.Error(t, err)
}

// A running process is alive; one that has exited and been waited for is not.
func TestProcessAliveBothSides(t *testing.T) {
	assert.True(t, ProcessAlive(os.Getpid()))
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "-test.run=^$")
	require.NoError(t, cmd.Start())
	pid := cmd.Process.Pid
	require.NoError(t, cmd.Wait())
	assert.False(t, ProcessAlive(pid))
}

// A process group is killed with its children.
func TestKillProcessGroup(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no process groups")
	}
	cmd := exec.Command("sh", "-c", "sleep 30 & echo $!; wait")
	setProcessGroup(cmd)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	buf := make([]byte, 32)
	n, err := out.Read(buf)
	require.NoError(t, err)
	var child int
	_, err = fmt.Sscan(string(buf[:n]), &child)
	require.NoError(t, err)
	require.True(t, ProcessAlive(child))
	require.NoError(t, KillProcessGroup(cmd.Process.Pid))
	_ = cmd.Wait()
	assert.Eventually(t, func() bool { return !ProcessAlive(child) }, 5*time.Second, 10*time.Millisecond, "the child died with the group")
	require.NoError(t, KillProcessGroup(cmd.Process.Pid), "a group gone is no error")
}
