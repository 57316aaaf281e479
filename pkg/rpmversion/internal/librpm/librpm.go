// SPDX-License-Identifier: Apache-2.0

//go:build librpm

package librpm

/*
#cgo pkg-config: rpm
#include <stdlib.h>
#include <rpm/rpmver.h>
*/
import "C"

import (
	"fmt"
	"strings"
	"unsafe"
)

// EVR is librpm's split of an epoch:version-release string; a nil field was absent.
type EVR struct {
	Epoch, Version, Release *string
}

// Vercmp returns librpm's rpmvercmp(a, b), normalised to -1, 0 or 1.
func Vercmp(a, b string) (int, error) {
	ca, cb, err := cstrings(a, b)
	if err != nil {
		return 0, err
	}
	defer C.free(unsafe.Pointer(ca))
	defer C.free(unsafe.Pointer(cb))
	return sign(int(C.rpmvercmp(ca, cb))), nil
}

// Parse returns librpm's rpmverParse split of evr; librpm rejects the empty string.
func Parse(evr string) (EVR, error) {
	rv, err := parse(evr)
	if err != nil {
		return EVR{}, err
	}
	defer C.rpmverFree(rv)
	return EVR{
		Epoch:   gostring(C.rpmverE(rv)),
		Version: gostring(C.rpmverV(rv)),
		Release: gostring(C.rpmverR(rv)),
	}, nil
}

// VerCmp returns librpm's rpmverCmp of the two rpmverParse'd strings, normalised to -1, 0 or 1:
// epochs (missing is 0), versions, then releases, a missing release below any present one.
func VerCmp(a, b string) (int, error) {
	ra, err := parse(a)
	if err != nil {
		return 0, err
	}
	defer C.rpmverFree(ra)
	rb, err := parse(b)
	if err != nil {
		return 0, err
	}
	defer C.rpmverFree(rb)
	return sign(int(C.rpmverCmp(ra, rb))), nil
}

func parse(evr string) (C.rpmver, error) {
	if strings.IndexByte(evr, 0) >= 0 {
		return nil, fmt.Errorf("parse %q: C strings cannot hold NUL", evr)
	}
	cs := C.CString(evr)
	defer C.free(unsafe.Pointer(cs))
	rv := C.rpmverParse(cs)
	if rv == nil {
		return nil, fmt.Errorf("parse %q: rpmverParse returned NULL", evr)
	}
	return rv, nil
}

func cstrings(a, b string) (*C.char, *C.char, error) {
	if strings.IndexByte(a, 0) >= 0 || strings.IndexByte(b, 0) >= 0 {
		return nil, nil, fmt.Errorf("vercmp %q %q: C strings cannot hold NUL", a, b)
	}
	return C.CString(a), C.CString(b), nil
}

func gostring(p *C.char) *string {
	if p == nil {
		return nil
	}
	s := C.GoString(p)
	return &s
}

func sign(c int) int {
	switch {
	case c < 0:
		return -1
	case c > 0:
		return 1
	}
	return 0
}
