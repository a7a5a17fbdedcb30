// Package textdist measures how far apart two words are, for "did you mean"
// suggestions (a mistyped flag, a template name). It must not know what the
// words name.
package textdist
