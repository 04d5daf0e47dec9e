// Package registry is the one shape of the registries a kind of job
// plugs into (web pages, commands, client descriptors): entries by name,
// added from package init functions and read once the program runs.
//
// Invariant: a name has one entry. Add refuses a second (a panic: two
// packages claiming one name is a build mistake, found at start); Set
// replaces it, for the registries whose owner may register again.
package registry

import (
	"sort"
	"sync"
)

// Registry holds entries of type T by name; the zero value is not ready,
// use New.
type Registry[T any] struct {
	what    string // what an entry is, for the panic's message
	mu      sync.RWMutex
	entries map[string]T
}

// New makes an empty registry of what ("page", "command", ...).
func New[T any](what string) *Registry[T] {
	return &Registry[T]{what: what, entries: map[string]T{}}
}

// Add adds an entry; a second entry of name panics, and so does an empty
// name.
func (r *Registry[T]) Add(name string, v T) {
	if name == "" {
		panic(r.what + " registered without a name")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.entries[name]; dup {
		panic(r.what + " " + name + " registered twice")
	}
	r.entries[name] = v
}

// Set adds or replaces the entry of name.
func (r *Registry[T]) Set(name string, v T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.entries[name] = v
}

// Get returns the entry of name.
func (r *Registry[T]) Get(name string) (T, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	v, ok := r.entries[name]
	return v, ok
}

// Names lists the names, sorted.
func (r *Registry[T]) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.entries))
	for n := range r.entries {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// All returns the entries by name.
func (r *Registry[T]) All() []T {
	names := r.Names()
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]T, 0, len(names))
	for _, n := range names {
		if v, ok := r.entries[n]; ok {
			out = append(out, v)
		}
	}
	return out
}
