package fakeapi

import (
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/clever-operator/clever-operator/pkg/fakeapi/wire"
)

// Backups of the add-ons Clever Cloud backs up: GET /v2/backups/{ownerId}/{ref}.
//
// The real endpoint, as its clients call it (docs/api-sources.md § Backups):
//
//   - path: clever-client.js esm/api/v2/backups.ts getBackups({ownerId, ref}) →
//     /v2/backups/{ownerId}/{ref}; ref is the add-on's realId (postgresql_…, mysql_…):
//     src/clients/cc-api/commands/backup/list-backup-command.ts resolves addonId to
//     'REAL_ADDON_ID', clever-tools src/commands/database/database.backups.command.js passes
//     `ref: realId`, and the console's cc-addon-backups.smart.js `ref: addon.realId`;
//   - answer: a JSON array of snake_case objects (backup-transform.ts): backup_id, entity_id,
//     status, creation_date ("ISO string with 6 digits microseconds", backup.types.ts),
//     delete_at, download_url (Elasticsearch: link), and for Elasticsearch restore_command and
//     delete_command (cc-addon-backups.smart.js getElasticsearchBackups). No size field is in
//     any source;
//   - 404: list-backup-command.ts treats it as an empty list (getEmptyResponsePolicy).
//
// Which providers have backups: the console's cc-addon-backups.types.d.ts ProviderId lists
// es-addon, postgresql-addon, mysql-addon, mongodb-addon, redis-addon (and jenkins, not an
// operator kind). clever-tools docs/addons-backups.md: "Databases are backup every day, with
// last 7 days of backups available to download".
//
// The fake: a known add-on of one of those providers, owned by {ownerId} and named by its
// realId, answers 200 with its list, oldest first (clients sort it themselves); anything else
// answers 404. Unless a test set its backups (SetBackups), an add-on's list is generated: one
// backup when the add-on is created (a fake simplification: the platform's first one comes the
// next night), then one a day, the last 7 kept (BackupRetention). download_url, link,
// restore_command and delete_command carry credential-like values (a signed URL, a password)
// so that tests can prove they never reach the operator's status, events or logs.

// RouteBackups is the route key of the backups list.
const RouteBackups = "GET /v2/backups/{ownerId}/{ref}"

// BackupRetention is how many daily backups the fake keeps (clever-tools docs: 7 days).
const BackupRetention = 7

// backupProviders are the providers whose add-ons have backups.
var backupProviders = map[string]bool{
	"postgresql-addon": true, "mysql-addon": true, "mongodb-addon": true, "redis-addon": true, "es-addon": true,
}

// Backup is one entry of GET /v2/backups/{ownerId}/{ref} (clever-client.js backup-transform.ts).
type Backup struct {
	BackupID     string `json:"backup_id"`
	EntityID     string `json:"entity_id"`
	Status       string `json:"status"`
	CreationDate string `json:"creation_date"`
	DeleteAt     string `json:"delete_at"`
	// DownloadURL is a signed URL (a credential); Elasticsearch answers Link instead.
	DownloadURL string `json:"download_url,omitempty"`
	Link        string `json:"link,omitempty"`
	// RestoreCommand and DeleteCommand: Elasticsearch only, with the add-on's password.
	RestoreCommand string `json:"restore_command,omitempty"`
	DeleteCommand  string `json:"delete_command,omitempty"`
}

// BackupStatusDone is the status of a finished backup in the fake (no source lists the real
// values; clever-tools only prints the field).
const BackupStatusDone = "DONE"

// backupDateLayout: ISO 8601 with 6 fractional digits, as backup.types.ts describes.
const backupDateLayout = "2006-01-02T15:04:05.000000Z"

// backupState is a test's override of an add-on's backups (SetBackups).
type backupState struct {
	times []time.Time
}

func (s *Server) backupRoutes() {
	s.handle(RouteBackups, s.listBackups)
}

func (s *Server) listBackups(w http.ResponseWriter, r *http.Request) {
	owner := r.PathValue("ownerId")
	if !wire.ValidOwner(owner) {
		wire.OwnerNotFound(w)
		return
	}
	s.lockState()
	rec := s.byRealID[r.PathValue("ref")]
	var out []Backup
	if rec != nil && rec.owner == owner && backupProviders[rec.kind.Spec.ProviderID] {
		out = s.backupsOf(rec, s.now())
	} else {
		rec = nil
	}
	s.mu.Unlock()
	if rec == nil {
		wire.WriteError(w, http.StatusNotFound, wire.ErrIDNotFound, "no backups found")
		return
	}
	wire.WriteJSON(w, http.StatusOK, out)
}

// backupTimes are the creation times of an add-on's backups, oldest first. Caller holds s.mu.
func (s *Server) backupTimes(rec *addonRecord, now time.Time) []time.Time {
	if bs := s.backupOverrides[rec]; bs != nil {
		return slices.Clone(bs.times)
	}
	created := time.UnixMilli(int64(rec.addon.CreationDate)).UTC()
	var out []time.Time
	for t := created; !t.After(now); t = t.Add(24 * time.Hour) {
		out = append(out, t)
	}
	if len(out) > BackupRetention {
		out = out[len(out)-BackupRetention:]
	}
	return out
}

// backupsOf builds the answer for an add-on. Ids and secrets derive from the add-on and the
// backup's time, so repeated reads agree. Caller holds s.mu.
func (s *Server) backupsOf(rec *addonRecord, now time.Time) []Backup {
	times := s.backupTimes(rec, now)
	out := make([]Backup, 0, len(times))
	realID := rec.addon.RealID
	for _, t := range times {
		t = t.UTC()
		id := uuid.NewSHA1(uuid.NameSpaceURL, []byte(realID+"@"+t.Format(time.RFC3339Nano))).String()
		b := Backup{
			BackupID:     id,
			EntityID:     realID,
			Status:       BackupStatusDone,
			CreationDate: t.Format(backupDateLayout),
			DeleteAt:     t.Add(BackupRetention * 24 * time.Hour).Format(backupDateLayout),
		}
		sig := uuid.NewSHA1(uuid.NameSpaceOID, []byte(id)).String()
		url := fmt.Sprintf("https://backups.fake-clever-cloud.invalid/%s/%s.dump?X-Amz-Signature=sig%s", realID, id, sig)
		if rec.kind.Spec.ProviderID == "es-addon" {
			b.Link = url
			pw := "es-backup-pw-" + sig
			b.RestoreCommand = fmt.Sprintf("curl -XPOST -u %s:%s https://%s-elasticsearch.services.clever-cloud.com/_snapshot/cc-s3-repository/%s/_restore", realID, pw, realID, id)
			b.DeleteCommand = fmt.Sprintf("curl -XDELETE -u %s:%s https://%s-elasticsearch.services.clever-cloud.com/_snapshot/cc-s3-repository/%s", realID, pw, realID, id)
		} else {
			b.DownloadURL = url
		}
		out = append(out, b)
	}
	return out
}

// SetBackups replaces the backups of an add-on (addon_ id or realId) by one backup at each
// of times (none: an empty list), instead of the generated daily ones. It fails for an
// unknown add-on or one whose provider has no backups.
func (s *Server) SetBackups(addonID string, times []time.Time) error {
	s.lockState()
	defer s.mu.Unlock()
	rec := s.find(addonID)
	if rec == nil || !backupProviders[rec.kind.Spec.ProviderID] {
		return fmt.Errorf("%w (or no backups for its provider): %s", ErrNotFound, addonID)
	}
	if s.backupOverrides == nil {
		s.backupOverrides = map[*addonRecord]*backupState{}
	}
	ts := slices.Clone(times)
	slices.SortFunc(ts, func(a, b time.Time) int { return a.Compare(b) })
	s.backupOverrides[rec] = &backupState{times: ts}
	return nil
}

// Backups returns what GET /v2/backups/{ownerId}/{ref} answers now for an add-on (addon_ id
// or realId), download URLs and commands included; nil for an unknown add-on or one whose
// provider has no backups.
func (s *Server) Backups(addonID string) []Backup {
	s.lockState()
	defer s.mu.Unlock()
	rec := s.find(addonID)
	if rec == nil || !backupProviders[rec.kind.Spec.ProviderID] {
		return nil
	}
	return s.backupsOf(rec, s.now())
}

// BackupSecrets returns the credential-like values of an add-on's current backups (download
// URLs, links, restore and delete commands): what must never leave the operator.
func (s *Server) BackupSecrets(addonID string) []string {
	var out []string
	for _, b := range s.Backups(addonID) {
		for _, v := range []string{b.DownloadURL, b.Link, b.RestoreCommand, b.DeleteCommand} {
			if v != "" {
				out = append(out, v)
			}
		}
	}
	return out
}
