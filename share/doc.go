// Package share moves a whole run between machines through a store (package
// store): push uploads a run's files and checkpoints, pull fetches one into a
// directory the user chooses.
//
// In the store a run is content-addressed: every file (and the git bundle of
// the shadow checkpoint repository) is one object blobs/sha256/<hex>, so a
// second push uploads nothing new. The run's index, runs/<id>/index.json, lists
// the files with their modes and hashes; it is written last and with a
// compare-and-swap, so a reader never sees a run whose objects are not all
// there, and two pushes of one run never interleave.
package share
