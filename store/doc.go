// Package store keeps objects for sharing runs and corpus shards between
// machines: a local directory (the default) or an S3-compatible bucket.
//
// A Backend is a flat key space of small-to-medium objects. Keys are
// slash-separated, relative and clean ("blobs/sha256/ab...", "runs/x/index.json");
// Open refuses any other. Most objects are content-addressed, so writing one
// twice is harmless; the few mutable ones (indexes) are changed with PutIf, a
// compare-and-swap on the object's version, so two concurrent writers never
// lose each other's update and a reader never sees a half-written object.
package store
