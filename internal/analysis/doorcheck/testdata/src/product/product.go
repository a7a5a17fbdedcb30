package product

import (
	"bytes"
	"io"
	"os"

	git "github.com/go-git/go-git/v5"
)

func calls(f *os.File, r *os.Root) {
	os.ReadFile("x")          // want `os.ReadFile outside the door packages: use runfile.ReadFile`
	os.WriteFile("x", nil, 0) // want `os.WriteFile outside the door packages: use safewrite.WriteAtomicIn`
	os.MkdirAll("d", 0o755)   // want `os.MkdirAll outside the door packages: use safewrite.MkdirIn`
	os.Open("x")              // want `os.Open outside the door packages`
	os.Remove("x")            // want `os.Remove outside the door packages`
	os.Symlink("a", "b")      // want `os.Symlink outside the door packages`
	io.ReadAll(f)             // want `io.ReadAll outside the door packages`
	git.PlainOpen(".")        // want `git.PlainOpen outside the door packages`

	io.ReadAll(bytes.NewReader(nil)) // not a file: fine
	os.Getenv("HOME")                // not a file system call
	r.Remove("x")                    // an os.Root's method is a door's own tool

	//replay:door the user's own file, named on the command line
	os.ReadFile("kept")
	os.ReadFile("kept too") //replay:door the user's own file, on its line
	//replay:door
	os.ReadFile("no reason") // want `needs a reason`
}
