package schema_test

import (
	"fmt"

	"github.com/graphkernel/graphkernel/kernel/schema"
)

func ExampleParse() {
	s, err := schema.Parse([]byte(`
node Person  { name: string  age: int64? }
node Company { name: string }
edge WorksAt: Person -> Company @card(0..1) { since: timestamp? }
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	c, _ := s.Contract()
	fmt.Print(string(c))
	_, err = schema.Parse([]byte("node Person {}\nedge Knows: Person -> Persn {}"))
	fmt.Println(err)
	// Output:
	// graphkernel-schema v1
	// node Company {
	//   name: string
	// }
	// node Person {
	//   name: string
	//   age: int64?
	// }
	// edge WorksAt: Person -> Company @card(0..1) {
	//   since: timestamp?
	// }
	// schema: line 2, column 23: schema: type Knows: to type "Persn" is not a node type of this schema
}
