package checkpoint

import (
	"os"
	"sync"
)

// A pack file is opened when an object is read from it and closed when the last
// reader of it is closed, so a Store holds no descriptor between operations (the
// MCP server keeps one for its whole life). An operation that reads many objects
// (a restore reads every changed blob and every tree of two commits) keeps the
// packs open from start to end instead: keepPacksOpen, whose release closes every
// pack no reader still uses; a reader still open then closes its pack when it is
// closed.

// acquire returns the open pack file, opening it when no reader has it open, and
// counts a reader; release undoes it.
func (p *packFile) acquire() (*os.File, error) {
	p.fmu.Lock()
	defer p.fmu.Unlock()
	if p.f == nil {
		//replay:door a pack of the proved shadow, read at the offsets its checked index gives
		f, err := os.Open(p.path)
		if err != nil {
			return nil, err
		}
		p.f = f
	}
	p.users++
	return p.f, nil
}

// release ends a reader of the pack file: the file is closed when it was the last
// and the store does not keep it open.
func (p *packFile) release() error {
	p.fmu.Lock()
	defer p.fmu.Unlock()
	p.users--
	return p.closeIdle()
}

// closeIdle closes the file when no reader uses it and it is not kept; p.fmu is held.
func (p *packFile) closeIdle() error {
	if p.users > 0 || p.kept || p.f == nil {
		return nil
	}
	err := p.f.Close()
	p.f = nil
	return err
}

// packUse is a reader's use of a pack file, ended by Close (once: entryReader
// closes it once).
type packUse struct{ p *packFile }

// Close releases the pack file.
func (u packUse) Close() error { return u.p.release() }

// keepPacksOpen keeps every pack of the store open, once read from, until the
// returned release is called (calls nest; release is idempotent). Every caller
// releases before it returns: a deferred release right after the call.
func (o *objectStore) keepPacksOpen() (release func()) {
	packs := o.loadPacks()
	o.packMu.Lock()
	o.packHolds++
	for _, p := range packs {
		p.fmu.Lock()
		p.kept = true
		p.fmu.Unlock()
	}
	o.packMu.Unlock()
	var once sync.Once
	return func() { once.Do(o.releasePacks) }
}

// releasePacks ends one keepPacksOpen; the last one closes the packs no reader uses.
func (o *objectStore) releasePacks() {
	o.packMu.Lock()
	defer o.packMu.Unlock()
	if o.packHolds--; o.packHolds > 0 {
		return
	}
	for _, p := range o.packList {
		p.fmu.Lock()
		p.kept = false
		_ = p.closeIdle() // read-only: a failed close loses nothing
		p.fmu.Unlock()
	}
}
