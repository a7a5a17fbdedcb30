// Package templates holds replay's embedded data: the pipeline profiles (phases,
// boundaries with their checkpoint reasons, role classes) that describe a pipeline
// as data rather than code, one per Crucible skill replay knows, and the generic
// profile derived from a run of a skill it does not.
//
// It parses and validates that data, and reads no file but the profile the user
// names with --profile (LoadFile); it must not read a run's files.
package templates
