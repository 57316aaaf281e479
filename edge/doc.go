// Package edge will hold regional discovery, the work queue and the host flow that provisions nodes.
package edge
