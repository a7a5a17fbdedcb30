// Package cli is the command layer of replay: one file per command, each an Options
// struct, a NewCmdX constructor and an xRun function. It parses flags, asks questions
// and maps errors to exit codes; all domain logic lives in the domain packages.
//
// The Factory holds the dependencies a command takes from the outside world
// (streams, prompter, environment, working directory, clock), never a parsed
// flag: a command's options take from it only the dependencies they use
// (cmdBase, plus the prompter or an agent's environment where needed), and the
// global flags (--now, --json, --quiet, --verbose, --format) reach them as their
// Global field when the command runs (runCommand). The MCP server builds the
// same options from a factory of its own per tool call.
package cli
