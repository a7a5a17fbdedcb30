// Package prompt asks the user questions: a Prompter interface, its huh-backed
// implementation for terminals and a scripted twin for tests.
//
// Callers must check IOStreams.CanPrompt before using the huh implementation: a huh
// form without a terminal fails opening /dev/tty.
package prompt
