// Package iostreams carries the three standard streams and what is known about them
// (terminal or not, colour allowed or not, prompting allowed or not).
//
// Every byte the tool shows goes through an IOStreams value so tests can capture it.
// It must not decide anything about the domain.
package iostreams
