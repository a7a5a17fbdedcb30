// Package heapshape shapes the Go heap at start, before the other packages' inits
// allocate, for what replay mostly is: a command that reads a few thousand small
// files, allocates some tens of megabytes and exits.
//
// Huge pages. The heap is backed by transparent huge pages where the kernel offers
// them on request (the common "madvise" setting), so a command takes one page fault
// per 2 MiB of new heap instead of one per 4 KiB. On a virtual machine, where a page
// fault costs tens of microseconds, that was a fifth of a plan's time. The Go runtime
// gave its heap that advice itself only in Go 1.21.0, and it maps the heap in pieces
// with mmap(MAP_FIXED), which drops advice given to a range before. So the init
// first makes the runtime map a span of heap in one piece (one large allocation that
// is garbage at once and never touched, so it costs no memory), then advises the heap
// arenas around it.
//
// A floor under the GC's heap goal. A 32 MiB ballast (allocated, never touched, so
// never resident; it holds no pointers, so marking it costs nothing) keeps the
// collector from running every few megabytes while a command's live heap is small.
// With a large live heap it changes the goal by little.
//
// Both change only how the memory is laid out, never what a command does. The
// runtime's own settings turn them off: GODEBUG=disablethp=1 keeps the heap on small
// pages, and setting GOGC or GOMEMLIMIT leaves the collector's pacing to them. Under
// a limit of the address space (ulimit -v) it does nothing: its 80 MiB are address
// space, and the runtime cannot survive a failed allocation.
//
// The package is initialised early because it imports only the runtime's own
// packages (Go initialises packages in import-path order among those whose imports
// are done). It must keep it that way: no strings, no os, no other package of the
// project.
package heapshape
