// Package pkg is the root of Muster's shared module; see its subpackages.
package pkg
