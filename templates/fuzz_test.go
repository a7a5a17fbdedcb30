package templates

import (
	"errors"
	"testing"
)

// FuzzParseProfile checks that any input either parses into a profile the engine
// can use or fails with a ProfileError, never a panic.
func FuzzParseProfile(f *testing.F) {
	for _, name := range Known() {
		data, err := profiles.ReadFile(name + ".json")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"skill":"x","phases":[{"id":"1","waves":"pre-{N}"}],"boundaries":[{"name":"b","phase":"1","reasons":["pre-{N}"],"mid":true,"wave":true}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(data)
		if err != nil {
			var pe *ProfileError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *ProfileError", err)
			}
			if pe.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		if p.Skill == "" || len(p.Phases) == 0 {
			t.Fatalf("accepted a profile without skill or phases: %+v", p)
		}
		for _, b := range p.Boundaries {
			if p.PhaseIndex(b.Phase) < 0 || len(b.Reasons) == 0 {
				t.Fatalf("accepted boundary %+v", b)
			}
		}
		_ = p.ClassOf("implementer")
		for _, role := range p.SideEffects.External {
			if !p.IsExternal(role) {
				t.Fatalf("role %q listed external but classed otherwise", role)
			}
		}
	})
}
