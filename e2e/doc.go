// Package e2e drives the built replay binary as a user would: it builds the binary
// once in TestMain and asserts on exit codes, stdout, stderr and files. It holds
// tests only.
package e2e
