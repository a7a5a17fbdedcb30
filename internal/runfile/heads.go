package runfile

// ReadListedAll is ReadListed for each of names, at most size bytes of each: it
// calls f(i, head, err) for each, in order, head being valid during the call only,
// reusing one buffer for all of them.
func (r *Heads) ReadListedAll(names []string, size int, f func(i int, head []byte, err error)) {
	buf := make([]byte, size)
	for i, name := range names {
		head, err := r.ReadListed(name, buf)
		f(i, head, err)
	}
}
