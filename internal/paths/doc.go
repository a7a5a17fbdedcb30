// Package paths computes where a pipeline's files live: the project hash <H>, the
// scratch directory, the shadow checkpoint repository, the live dispatch directory
// and the build-mode file, all under roots that honour $HOME and $TMPDIR.
//
// It only computes names; it must not read or write anything.
package paths
