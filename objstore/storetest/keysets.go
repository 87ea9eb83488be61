package storetest

// keySets are the key sets of the properties whose keys depend on
// RunOptions.FlatKeysOnly.
type keySets struct {
	putGetHead []putCase
	order      []string // ListOrder and ListPagination
	prefix     prefixSet
	survivors  [][]string // InvalidKeys, one slice per phase
	maxKeys    []string
}

// keySetsFor returns the nested key sets, or with opts.FlatKeysOnly the flat
// ones, which check the same properties without a key that is a path-prefix
// of another or a segment over MaxFlatSegmentBytes.
func keySetsFor(opts RunOptions) keySets {
	if opts.FlatKeysOnly {
		return keySets{
			putGetHead: flatPutCases,
			order:      flatOrderKeys,
			prefix:     flatPrefixes,
			survivors:  flatSurvivors,
			maxKeys:    flatMaxKeys(),
		}
	}
	return keySets{
		putGetHead: nestedPutCases,
		order:      orderKeys,
		prefix:     nestedPrefixes,
		survivors:  nestedSurvivors,
		maxKeys:    maxKeys(),
	}
}
