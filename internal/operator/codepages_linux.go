package operator

import "golang.org/x/sys/unix"

func adviseRandom(addr, length uintptr) error {
	_, _, errno := unix.Syscall(unix.SYS_MADVISE, addr, length, unix.MADV_RANDOM)
	if errno != 0 {
		return errno
	}
	return nil
}
