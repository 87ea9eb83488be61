module github.com/graphkernel/graphkernel

go 1.26
