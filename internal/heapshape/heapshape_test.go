package heapshape

import (
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGodebugTakesTheLastSettingOfItsKey(t *testing.T) {
	for _, c := range []struct {
		godebug string
		want    bool
	}{
		{"", false},
		{"disablethp=1", true},
		{"gctrace=1,disablethp=1", true},
		{"disablethp=1,disablethp=0", false},
		{"disablethp=0,disablethp=1", true},
		{"xdisablethp=1", false},
		{"disablethp=10", false},
		{"disablethp", false},
	} {
		t.Setenv("GODEBUG", c.godebug)
		assert.Equal(t, c.want, godebug("disablethp", "1"), c.godebug)
	}
}

// The test binary runs this package's init as the command does; child runs it
// again under other settings and prints what it did.
func TestMain(m *testing.M) {
	if os.Getenv("HEAPSHAPE_CHILD") != "" {
		report()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// report prints the ballast's size, whether the heap was advised, and whether the
// memory mapping holding a new heap object carries the huge-page flag. The object is
// larger than what is left of the heap the runtime started with, so it lands in the
// span the init had mapped, which a collection has freed.
func report() {
	runtime.GC()
	obj := make([]byte, 8<<20)
	flag, err := mappingHasFlag(unsafe.Pointer(unsafe.SliceData(obj)), "hg")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("ballast=%d advised=%t hugepage-flag=%t\n", Ballast(), Advised, flag)
	runtime.KeepAlive(obj)
}

// mappingHasFlag reports whether the memory mapping holding p lists flag among its
// VmFlags in /proc/self/smaps.
func mappingHasFlag(p unsafe.Pointer, flag string) (bool, error) {
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return false, err
	}
	addr, inside := uint64(uintptr(p)), false
	for _, line := range strings.Split(string(b), "\n") {
		if lo, hi, ok := mappingRange(line); ok {
			inside = lo <= addr && addr < hi
			continue
		}
		if rest, ok := strings.CutPrefix(line, "VmFlags:"); ok && inside {
			return slices.Contains(strings.Fields(rest), flag), nil
		}
	}
	return false, fmt.Errorf("no mapping holds %#x", addr)
}

// mappingRange parses the address range that starts a mapping's lines in smaps.
func mappingRange(line string) (lo, hi uint64, ok bool) {
	r, _, _ := strings.Cut(line, " ")
	a, b, found := strings.Cut(r, "-")
	if !found {
		return 0, 0, false
	}
	lo, err1 := strconv.ParseUint(a, 16, 64)
	hi, err2 := strconv.ParseUint(b, 16, 64)
	return lo, hi, err1 == nil && err2 == nil
}

// child runs the test binary's report with GOGC, GOMEMLIMIT and GODEBUG as env
// sets them (unset otherwise) and returns its line.
func child(t *testing.T, env ...string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k != "GOGC" && k != "GOMEMLIMIT" && k != "GODEBUG" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(append(cmd.Env, "HEAPSHAPE_CHILD=1"), env...)
	out, err := cmd.Output()
	require.NoError(t, err)
	return strings.TrimSpace(string(out))
}

// hugePagesOnRequest reports whether the kernel gives transparent huge pages to a
// range advised with MADV_HUGEPAGE.
func hugePagesOnRequest() bool {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	return err == nil && !strings.Contains(string(b), "[never]")
}

func TestTheInitAdvisesTheHeapAndLaysABallast(t *testing.T) {
	if runtime.GOOS != "linux" || !hugePagesOnRequest() {
		t.Skip("no transparent huge pages on request here")
	}
	assert.Equal(t, "ballast=33554432 advised=true hugepage-flag=true", child(t))
}

func TestTheRuntimesOwnSettingsTurnItOff(t *testing.T) {
	got := child(t, "GODEBUG=disablethp=1", "GOGC=100")
	assert.Equal(t, "ballast=0 advised=false hugepage-flag=false", got)
	got = child(t, "GOMEMLIMIT=1GiB", "GODEBUG=disablethp=1")
	assert.Equal(t, "ballast=0 advised=false hugepage-flag=false", got)
}

// The ballast raises the collector's goal: at start it is above twice the ballast.
func TestTheBallastRaisesTheHeapGoal(t *testing.T) {
	if Ballast() == 0 {
		t.Skip("the test binary runs with GOGC or GOMEMLIMIT set")
	}
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}}
	metrics.Read(s)
	assert.GreaterOrEqual(t, s[0].Value.Uint64(), uint64(2*ballastBytes))
}

// Under a limit of the address space (ulimit -v) the init does nothing. The race
// detector's shadow memory needs an unlimited address space, so not under -race.
func TestALimitedAddressSpaceTurnsItOff(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector needs an unlimited address space")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh to set ulimit -v")
	}
	cmd := exec.Command(sh, "-c", `ulimit -v 64000000 && exec "$0" -test.run='^$'`, os.Args[0])
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k != "GOGC" && k != "GOMEMLIMIT" && k != "GODEBUG" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "HEAPSHAPE_CHILD=1")
	out, err := cmd.Output()
	require.NoError(t, err)
	assert.Equal(t, "ballast=0 advised=false hugepage-flag=false", strings.TrimSpace(string(out)))
}

// The package is initialised before the libraries' heavy inits only while it
// imports nothing but the runtime's own packages (syscall, unsafe).
func TestImportsOnlySyscallAndUnsafe(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		require.NoError(t, err)
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			assert.Contains(t, []string{"syscall", "unsafe"}, path, "%s imports %s", name, path)
		}
	}
}
