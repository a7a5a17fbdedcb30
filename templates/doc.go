// Package templates holds replay's embedded data: the pipeline profiles (phases,
// boundaries with their checkpoint reasons, role classes) that describe a pipeline
// as data rather than code.
//
// It only parses and validates that data; it must not read the user's files.
package templates
