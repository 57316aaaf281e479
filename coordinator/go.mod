module github.com/seed96588659/muster/coordinator

go 1.26

replace github.com/seed96588659/muster/pkg => ../pkg
