module github.com/seed96588659/muster/edge

go 1.26

replace github.com/seed96588659/muster/pkg => ../pkg
