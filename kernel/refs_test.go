package kernel_test

import "github.com/graphkernel/graphkernel/kernel"

func kernelRef(p kernel.TablePin) kernel.TableRef { return kernel.TableRef{Fork: p.Fork, Version: p.Version} }
