package fs_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/graphkernel/graphkernel/objstore"
	"github.com/graphkernel/graphkernel/objstore/fs"
)

// Create a key once, then advance it with compare-and-swap; a stale ETag
// is refused.
func Example() {
	dir, err := os.MkdirTemp("", "fs-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	st, err := fs.Open(dir)
	if err != nil {
		panic(err)
	}
	v1, err := st.Put(ctx, "branches/main", []byte("commit 1"), objstore.CreateOnly)
	if err != nil {
		panic(err)
	}
	_, err = st.Put(ctx, "branches/main", []byte("commit 1"), objstore.CreateOnly)
	fmt.Println("second create:", errors.Is(err, objstore.ErrPreconditionFailed))

	v2, err := st.Put(ctx, "branches/main", []byte("commit 2"), objstore.IfMatch(v1))
	if err != nil {
		panic(err)
	}
	_, err = st.Put(ctx, "branches/main", []byte("commit 2'"), objstore.IfMatch(v1))
	fmt.Println("stale CAS:", errors.Is(err, objstore.ErrPreconditionFailed))

	obj, err := st.Get(ctx, "branches/main")
	if err != nil {
		panic(err)
	}
	fmt.Println(string(obj.Data), obj.ETag == v2)

	page, err := st.List(ctx, "branches/", "", 10)
	if err != nil {
		panic(err)
	}
	fmt.Println(page.Keys)
	// Output:
	// second create: true
	// stale CAS: true
	// commit 2 true
	// [branches/main]
}
