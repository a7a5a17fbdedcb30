package templates

import (
	"fmt"
	"os"
	"strings"
)

// LoadFlag reads the profile a --profile value names: a built-in profile name such
// as "build" (a bare word that is not a file in the working directory), else a
// profile JSON file. A bare word that is neither, and a file that does not exist,
// are errors that list the built-in profiles.
func LoadFlag(value string) (*Profile, error) {
	bare := !strings.ContainsAny(value, `/\`) && !strings.HasSuffix(value, ".json")
	if _, err := os.Lstat(value); err != nil && os.IsNotExist(err) {
		known := strings.Join(Known(), ", ")
		if bare {
			if Has(value) {
				return Load(value)
			}
			return nil, &ProfileError{File: value, Msg: fmt.Sprintf("no such file and no built-in profile of that name; built-in profiles: %s", known)}
		}
		return nil, &ProfileError{File: value, Msg: fmt.Sprintf("no such file; give a profile JSON file or a built-in profile name (%s)", known)}
	}
	return LoadFile(value)
}
