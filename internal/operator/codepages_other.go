//go:build !linux

package operator

import "errors"

func adviseRandom(addr, length uintptr) error {
	return errors.New("madvise is only used on Linux")
}
