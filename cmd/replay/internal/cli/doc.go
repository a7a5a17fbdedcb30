// Package cli is the command layer of replay: one file per command, each an Options
// struct, a NewCmdX constructor and an xRun function. It parses flags, asks questions
// and maps errors to exit codes; all domain logic lives in the domain packages.
package cli
