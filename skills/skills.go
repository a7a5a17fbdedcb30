package skills

import _ "embed"

// Replay is the replay skill's SKILL.md as shipped in this repository.
//
//go:embed replay/SKILL.md
var Replay []byte

// ReplayName is the skill's name: the folder it is installed under.
const ReplayName = "replay"
