module github.com/seed96588659/muster/sandbox

go 1.26

replace github.com/seed96588659/muster/pkg => ../pkg

replace github.com/seed96588659/muster/coordinator => ../coordinator

replace github.com/seed96588659/muster/edge => ../edge
