// Package skills holds the Claude Code skill that ships with replay
// (skills/replay/SKILL.md), embedded so that `replay skill install` writes exactly
// the file the plugin serves. It must not hold logic: only the embedded files.
package skills
