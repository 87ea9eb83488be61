package storetest_test

import (
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/storetest"
)

// backend is one registered store implementation.
type backend struct {
	factory func(t *testing.T) objstore.Store
	opts    storetest.RunOptions
}

var (
	backends = map[string]backend{}
	cleanups []func()
)

// register adds a backend to TestConformance. Each backend's *_backend_test.go
// calls it from init. Registering a name twice panics.
func register(name string, factory func(t *testing.T) objstore.Store, opts storetest.RunOptions) {
	if _, dup := backends[name]; dup {
		panic(fmt.Sprintf("storetest: backend %q registered twice", name))
	}
	if factory == nil {
		panic(fmt.Sprintf("storetest: backend %q has a nil factory", name))
	}
	backends[name] = backend{factory: factory, opts: opts}
}

// registerCleanup adds f to the functions TestMain runs, last registered
// first, after every test finished (for example to stop a shared server).
func registerCleanup(f func()) { cleanups = append(cleanups, f) }

// TestConformance runs the suite against every registered backend, in name
// order.
func TestConformance(t *testing.T) {
	names := make([]string, 0, len(backends))
	for name := range backends {
		names = append(names, name)
	}
	slices.Sort(names)
	if len(names) == 0 {
		t.Fatal("no backend registered")
	}
	for _, name := range names {
		b := backends[name]
		t.Run(name, func(t *testing.T) { storetest.RunWith(t, b.opts, b.factory) })
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	for i := len(cleanups) - 1; i >= 0; i-- {
		cleanups[i]()
	}
	os.Exit(code)
}
