package sharde2e_test

import "errors"

var (
	errTookWhileFenced = errors.New("took a bucket while fenced")
	errLedWhileSharded = errors.New("the single leader led while bucket Leases were live")
	errShareChanged    = errors.New("p1 handed buckets back because of a member of another B")
)
