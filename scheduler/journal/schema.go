package journal

import "fmt"

// migrations are applied in order; PRAGMA user_version counts the ones applied. Append only.
var migrations = []string{
	// 1: epochs, runs (claims), run-now requests, pauses, arming anchors, watch snapshots.
	`CREATE TABLE epochs (
		epoch       INTEGER PRIMARY KEY,
		acquired_at INTEGER NOT NULL
	);
	CREATE TABLE runs (
		id         INTEGER PRIMARY KEY AUTOINCREMENT,
		routine    TEXT    NOT NULL,
		slot_key   TEXT    NOT NULL,          -- RFC 3339 UTC slot, or "manual:<request id>"
		slot       INTEGER NOT NULL,          -- unix ns
		trigger    TEXT    NOT NULL,
		epoch      INTEGER NOT NULL,
		outcome    TEXT    NOT NULL,
		reason     TEXT    NOT NULL DEFAULT '',
		started    INTEGER,
		finished   INTEGER,
		late_by    INTEGER NOT NULL DEFAULT 0,
		exit_code  INTEGER,
		attempts   INTEGER NOT NULL DEFAULT 0,
		summary    TEXT    NOT NULL DEFAULT '',
		output     BLOB,
		UNIQUE (routine, slot_key)
	);
	CREATE INDEX runs_routine_slot ON runs (routine, slot);
	CREATE INDEX runs_routine_id ON runs (routine, id);
	CREATE INDEX runs_outcome ON runs (outcome);
	CREATE TABLE requests (
		id           INTEGER PRIMARY KEY AUTOINCREMENT,
		routine      TEXT    NOT NULL,
		requested_at INTEGER NOT NULL,
		run_id       INTEGER,
		error        TEXT
	);
	CREATE TABLE pauses (
		routine TEXT PRIMARY KEY,             -- "" pauses every routine
		note    TEXT    NOT NULL DEFAULT '',
		until   INTEGER,                      -- unix ns; NULL = until resumed
		since   INTEGER NOT NULL
	);
	CREATE TABLE arming (
		routine     TEXT PRIMARY KEY,
		first_armed INTEGER NOT NULL,         -- unix ns; catch-up never looks before it
		every       INTEGER NOT NULL DEFAULT 0,
		anchor      INTEGER NOT NULL DEFAULT 0
	);
	CREATE TABLE snapshots (
		id      INTEGER PRIMARY KEY AUTOINCREMENT,
		routine TEXT    NOT NULL,
		taken   INTEGER NOT NULL,
		text    TEXT    NOT NULL
	);
	CREATE INDEX snapshots_routine ON snapshots (routine, id);`,
	// 2: the process a run started (its process group leader) and the journal's own id, so the
	// next owner can find and end what a crashed owner's runs left running (orphans.go).
	`ALTER TABLE runs ADD COLUMN leader_pid INTEGER;         -- NULL: no process recorded
	ALTER TABLE runs ADD COLUMN leader_start_ms INTEGER;     -- its create time, ms since the Unix epoch
	ALTER TABLE runs ADD COLUMN leader_start_ticks INTEGER;  -- Linux: start ticks after boot; 0 elsewhere
	CREATE TABLE meta (
		key   TEXT PRIMARY KEY,
		value TEXT NOT NULL
	);
	INSERT INTO meta (key, value) VALUES ('journal_id', lower(hex(randomblob(16))));`,
	// 3 (hub, deviceMigration): the device that claimed each slot on the hub ('' without a
	// hub): this device's name for its own runs, another's for a slot it lost to that device.
	`ALTER TABLE runs ADD COLUMN device TEXT NOT NULL DEFAULT '';`,
	// 4 (latestMigration): each routine's newest run and latest scheduled slot, kept by a
	// trigger on every insert into runs, whatever writes it. A look at the profile (status,
	// routines, the owner's start) reads these rows instead of descending two indexes of runs per
	// routine: on a cold cache that was about a hundred page reads at 10,000 runs. Retention
	// never deletes a routine's newest run or its latest scheduled slot's row, so the rows stay
	// true. The backfill reads each routine's rows through the indexes (routineNames).
	`CREATE TABLE latest (
		routine   TEXT PRIMARY KEY,
		run_id    INTEGER NOT NULL,   -- the routine's newest run (highest id)
		last_slot INTEGER             -- unix ns: its latest slot of a trigger other than manual; NULL: none
	) WITHOUT ROWID;
	` + routineNames + latestBackfillSQL + `;
	CREATE TRIGGER runs_latest AFTER INSERT ON runs BEGIN
		INSERT INTO latest (routine, run_id, last_slot)
		VALUES (NEW.routine, NEW.id, CASE WHEN NEW.trigger != 'manual' THEN NEW.slot END)
		ON CONFLICT (routine) DO UPDATE SET run_id = excluded.run_id, -- AUTOINCREMENT: the newest id
			last_slot = max(coalesce(last_slot, excluded.last_slot), coalesce(excluded.last_slot, last_slot));
	END;`,
}

// latestBackfillSQL fills the latest table from runs, after routineNames (one index seek per
// routine, never a scan of runs: TestStartQueriesUseIndexes). Part of migration 4: never change it.
const latestBackfillSQL = ` INSERT INTO latest (routine, run_id, last_slot) SELECT name,
		(SELECT MAX(id) FROM runs WHERE routine = name),
		(SELECT slot FROM runs WHERE routine = name AND trigger != 'manual' ORDER BY slot DESC LIMIT 1)
		FROM names WHERE name IS NOT NULL`

// latestMigration is the migration that adds the latest table; a journal opened read-only at
// an older version is read the way it was before (LatestRuns, LastSlots).
const latestMigration = 4

// deviceMigration is the migration that adds runs.device; a journal opened read-only at an
// older version reads every device as "".
const deviceMigration = 3

// migrate brings the schema to the latest version, one transaction per migration.
func (j *Journal) migrate() error {
	for {
		done, err := j.migrateOne()
		if err != nil || done {
			return err
		}
	}
}

// migrateOne applies the next migration, reading the version inside the (immediate)
// transaction so two processes opening a new journal at once do not both apply it.
func (j *Journal) migrateOne() (done bool, err error) {
	tx, err := j.db.Begin()
	if err != nil {
		return false, fmt.Errorf("migrate: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	var version int
	if err := tx.QueryRow(`PRAGMA user_version`).Scan(&version); err != nil {
		return false, fmt.Errorf("schema version: %w", err)
	}
	if version > len(migrations) {
		return false, fmt.Errorf("journal schema version %d is newer than this program (%d)", version, len(migrations))
	}
	if version == len(migrations) {
		return true, nil
	}
	if _, err := tx.Exec(migrations[version]); err != nil {
		return false, fmt.Errorf("migration %d: %w", version+1, err)
	}
	if _, err := tx.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, version+1)); err != nil {
		return false, fmt.Errorf("migration %d: %w", version+1, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("migration %d: %w", version+1, err)
	}
	return false, nil
}
