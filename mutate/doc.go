// Package mutate implements the template side of an A/B replay (SPEC §6, seed Step 7):
// parsing and validating `--mutate ORIG=REPL` flags, matching dispatches to a
// mutation by template name, swapping the template part of a dispatch body for the
// replacement while keeping the context the original dispatch injected, warning about
// templates changed since the original run, and reading every template from a git
// ref (`--template-ref`) into a directory.
//
// # Locating the template part of a dispatch body
//
// A dispatch file is an audit header, a "---" line and a body; the body is the
// template's text followed by context the orchestrator injected (task, cartographer
// data, defect signatures, ...). Substitute finds the template part in this order:
//
//  1. Template prefix: the body starts with the original template's text (trailing
//     whitespace of the template ignored). Exactly that prefix is replaced by the
//     replacement's text (trailing whitespace trimmed), so the whitespace that
//     separated template and context, and the context itself, stay byte for byte.
//  2. Context heading: the original template's text is not at the start (the template
//     changed since, or it is unavailable), but a line of the body starts with one of
//     ContextHeadings ("## Context"). Everything before the first such line is taken
//     as the template part and replaced; the heading and all after it stay.
//  3. Neither: ErrTemplateNotLocated. The caller must not guess: it warns, naming the
//     dispatch file, and stops before dispatching anything (a replay that silently
//     ran the unmutated template would make the A/B comparison meaningless).
//
// The package reads files and git objects and writes only into the directory it is
// given (ExtractRef). It must not import cobra or huh, print to os.Stdout, or touch
// the user's working tree, branch or manifest.
package mutate
