module github.com/seed96588659/muster/bench/rpmversion

go 1.26

require (
	github.com/knqyf263/go-rpm-version v0.0.0-20260811110310-1815e1f1b790
	github.com/seed96588659/muster/pkg v0.0.0
)

replace github.com/seed96588659/muster/pkg => ../../pkg
