package kinds

// RefreshRead is what one periodic refresh reads (one call).
type RefreshRead int

const (
	ReadEnv RefreshRead = iota
	ReadAddon
	ReadBackups
)

// RefreshReadFor is the read of the n-th periodic refresh (n from 1): the add-on, then its env,
// and again; kinds with backups read the add-on, then their backups (status shows them two
// periods after Ready; creation costs no call for them), then the env.
func (k *Kind) RefreshReadFor(n int) RefreshRead {
	if !k.Backups {
		if n%2 == 1 {
			return ReadAddon
		}
		return ReadEnv
	}
	switch n % 3 {
	case 1:
		return ReadAddon
	case 2:
		return ReadBackups
	}
	return ReadEnv
}
