package check

import (
	"fmt"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/graphkernel/graphkernel/model"
)

// DefaultLinTimeout bounds porcupine on one partition.
const DefaultLinTimeout = 10 * time.Second

// LinFailure is one partition porcupine did not accept.
type LinFailure struct {
	// Model is "chain" or "value".
	Model string
	// Partition is the partition key.
	Partition string
	// Result is porcupine.Illegal, or porcupine.Unknown (timed out).
	Result porcupine.CheckResult
	// Ops is the partition's history.
	Ops []porcupine.Operation
}

// Violation renders the failure as a violation.
func (f LinFailure) Violation() Violation {
	name := "linearizability"
	if f.Result == porcupine.Unknown {
		name = "linearizability-unknown"
	}
	return violation(name, "%s model, partition %q: %s over %d operations", f.Model, f.Partition, f.Result, len(f.Ops))
}

// Visualize writes porcupine's HTML visualization of the failing partition.
func (f LinFailure) Visualize(path string, timeout time.Duration) error {
	m := modelNamed(f.Model)
	_, info := porcupine.CheckOperationsVerbose(m, f.Ops, timeout)
	if err := porcupine.VisualizePath(m, info, path); err != nil {
		return fmt.Errorf("visualize %s partition %q: %w", f.Model, f.Partition, err)
	}
	return nil
}

// LinResult sums up the linearizability check of one history.
type LinResult struct {
	// Checks counts the partitions checked.
	Checks int
	// Unknown counts partitions that timed out (each is also a failure).
	Unknown int
	// Failures lists the partitions not accepted, chain model first, each
	// in partition-key order.
	Failures []LinFailure
}

// Linearizable checks h's chain history against model.Chain and its value
// history against model.Value, one partition at a time, each bounded by
// timeout (DefaultLinTimeout if zero). Unknown counts as a failure.
func Linearizable(h *History, timeout time.Duration) LinResult {
	if timeout <= 0 {
		timeout = DefaultLinTimeout
	}
	chain, value := h.Operations()
	var res LinResult
	checkModel(&res, "chain", chain, timeout)
	checkModel(&res, "value", value, timeout)
	return res
}

func checkModel(res *LinResult, name string, ops []porcupine.Operation, timeout time.Duration) {
	m := modelNamed(name)
	for _, part := range m.Partition(ops) {
		record(res, name, part, porcupine.CheckOperationsTimeout(noPartition(m), part, timeout))
	}
}

// record adds one partition's verdict to res: anything but Ok is a failure,
// and Unknown (timed out) is counted as such.
func record(res *LinResult, name string, part []porcupine.Operation, r porcupine.CheckResult) {
	res.Checks++
	if r == porcupine.Ok {
		return
	}
	if r == porcupine.Unknown {
		res.Unknown++
	}
	key := part[0].Input.(model.Keyed).PartitionKey()
	res.Failures = append(res.Failures, LinFailure{Model: name, Partition: key, Result: r, Ops: part})
}

// noPartition returns m checking its input as one partition (it already is).
func noPartition(m porcupine.Model) porcupine.Model {
	m.Partition = nil
	m.PartitionEvent = nil
	return m
}

func modelNamed(name string) porcupine.Model {
	switch name {
	case "chain":
		return model.Chain()
	case "value":
		return model.Value()
	}
	panic(fmt.Sprintf("check: unknown model %q", name))
}
