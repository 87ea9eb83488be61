package objstore

import "testing"

// CountRequest and CountError land on the right operation, BytesWritten
// follows Put payloads only, and the derived totals add up.
func TestRequestCountsAccounting(t *testing.T) {
	var c RequestCounts
	c.CountRequest(OpPut, 5)
	c.CountRequest(OpPut, 2)
	c.CountError(OpPut)
	c.CountRequest(OpGet, 0)
	c.CountRequest(OpHead, 0)
	c.CountError(OpHead)
	c.CountRequest(OpList, 0)
	c.CountRequest(OpDelete, 0)
	want := RequestCounts{
		Get: OpCounts{Requests: 1}, Head: OpCounts{Requests: 1, Errors: 1},
		List: OpCounts{Requests: 1}, Put: OpCounts{Requests: 2, Errors: 1},
		Delete: OpCounts{Requests: 1}, BytesWritten: 7,
	}
	if c != want {
		t.Fatalf("counts\n%+v\nwant\n%+v", c, want)
	}
	if c.Requests() != 6 || c.Writes() != 3 || c.Op(OpHead) != want.Head {
		t.Fatalf("derived counts wrong: requests %d writes %d head %+v", c.Requests(), c.Writes(), c.Op(OpHead))
	}
}

// Accounting bugs panic instead of miscounting.
func TestRequestCountsPanics(t *testing.T) {
	for name, f := range map[string]func(c *RequestCounts){
		"unknown op request": func(c *RequestCounts) { c.CountRequest(Op("copy"), 0) },
		"unknown op error":   func(c *RequestCounts) { c.CountError(Op("copy")) },
		"unknown op read":    func(c *RequestCounts) { c.Op(Op("copy")) },
		"payload on get":     func(c *RequestCounts) { c.CountRequest(OpGet, 3) },
		"negative payload":   func(c *RequestCounts) { c.CountRequest(OpPut, -1) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			var c RequestCounts
			f(&c)
		})
	}
}
