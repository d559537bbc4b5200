package clevercloud

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"time"
)

// RouteBackups is the backups list of an add-on Clever Cloud backs up (PostgreSQL, MySQL,
// MongoDB, Redis, Elasticsearch). {ref} is the add-on's realId (postgresql_…), not its addon_
// id: clever-client.js src/clients/cc-api/commands/backup/list-backup-command.ts resolves it
// to REAL_ADDON_ID; clever-tools database.backups.command.js passes `ref: realId`.
const RouteBackups = "/v2/backups/{ownerId}/{ref}"

// Backup is one entry of the backups list, reduced to what the operator reports. The answer
// also carries download_url (Elasticsearch: link) and, for Elasticsearch, restore_command and
// delete_command: signed URLs and commands with the add-on's password. They are credentials,
// so this type does not declare them: they are never decoded, kept, logged or published.
// (Field names: clever-client.js src/clients/cc-api/commands/backup/backup-transform.ts.)
type Backup struct {
	BackupID string `json:"backup_id"`
	EntityID string `json:"entity_id"`
	Status   string `json:"status"`
	// CreationDate is an ISO 8601 date with microseconds (backup.types.ts), possibly with
	// the "[UTC]" suffix other v2 dates have (clever-client.js normalizeDate strips it).
	CreationDate string `json:"creation_date"`
	DeleteAt     string `json:"delete_at"`
}

// Created parses CreationDate.
func (b Backup) Created() (time.Time, error) { return parseBackupDate(b.CreationDate) }

// parseBackupDate parses an ISO 8601 date with or without the "[UTC]" suffix.
func parseBackupDate(s string) (time.Time, error) {
	return parseAPIDate(strings.TrimSuffix(strings.TrimSpace(s), "[UTC]"))
}

// ListBackups returns the backups of an add-on (GET /v2/backups/{ownerId}/{realId}), newest
// first. A 404 is returned as an error (IsNotFound): clever-client.js reads it as an empty list
// (list-backup-command.ts getEmptyResponsePolicy), and the caller decides whether it may (the
// engine never lets a 404 erase backups it saw before). The answer is treated as sensitive
// (download URLs): an error never quotes its body.
func (c *Client) ListBackups(ctx context.Context, ownerID, realID string) ([]Backup, error) {
	cl := &call{method: http.MethodGet, route: RouteBackups, idempotent: true, sensitive: true}
	if err := cl.setPath(RouteBackups, "ownerId", ownerID, "ref", realID); err != nil {
		return nil, err
	}
	var out []Backup
	cl.out = &out
	if err := c.do(ctx, cl); err != nil {
		return nil, err
	}
	if out == nil {
		out = []Backup{}
	}
	sortBackupsNewestFirst(out)
	return out, nil
}

// sortBackupsNewestFirst orders by creation_date, newest first (stable; an unparsable date
// sorts last).
func sortBackupsNewestFirst(bs []Backup) {
	slices.SortStableFunc(bs, func(a, b Backup) int {
		ta, erra := a.Created()
		tb, errb := b.Created()
		switch {
		case erra != nil && errb != nil:
			return 0
		case erra != nil:
			return 1
		case errb != nil:
			return -1
		}
		return tb.Compare(ta)
	})
}
