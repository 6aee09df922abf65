package models

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"gorm.io/driver/postgres"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// Store is the database of everything that is not a task.
type Store struct {
	db *gorm.DB
	// nameOrder sorts by name byte by byte on every backend.
	nameOrder string
}

// PostgreSQL connection pool of one Store: a2aflow's own records are small
// and rare next to Temporal's, so a few connections are plenty; they are
// recycled so that a failover or a server-side idle timeout heals.
const (
	pgMaxOpenConns    = 10
	pgMaxIdleConns    = 5
	pgConnMaxLifetime = 30 * time.Minute
	pgConnMaxIdleTime = 5 * time.Minute
	// pgMigrateLock is the advisory lock that serialises AutoMigrate of
	// processes starting at once against the same database.
	pgMigrateLock = 0x61326166 // "a2af"
)

// pgConnectTimeout bounds connecting (TCP and the startup handshake) when
// the DSN sets no connect_timeout, so that Open fails instead of hanging on
// an address that does not answer.
var pgConnectTimeout = 10 * time.Second

// Open opens the database named by dsn, creating its schema or migrating it.
//
// A dsn starting with postgres:// or postgresql://, or a key=value DSN with a
// host= or dbname= field ("host=db dbname=a2aflow user=a2aflow"), is a
// PostgreSQL database; the PG* environment variables fill what it leaves
// out, as with libpq.
//
// Anything else is the path of a SQLite file, created with its folder if
// needed. WAL mode with synchronous=NORMAL: a killed process loses nothing
// committed; an OS crash can lose the last commits, which an activity retry
// then redoes (every write here is idempotent).
//
// Both behave the same through the Store: names compare and sort byte by
// byte, times keep microseconds.
func Open(dsn string) (*Store, error) {
	if isPostgresDSN(dsn) {
		return openPostgres(dsn)
	}
	return openSQLite(dsn)
}

// IsPostgresDSN reports whether dsn names a PostgreSQL database (a
// postgres:// URL or a key=value DSN) rather than a SQLite file.
func IsPostgresDSN(dsn string) bool { return isPostgresDSN(dsn) }

// isPostgresDSN reports whether dsn names a PostgreSQL database rather than
// a SQLite file.
func isPostgresDSN(dsn string) bool {
	lower := strings.ToLower(strings.TrimSpace(dsn))
	if strings.HasPrefix(lower, "postgres://") || strings.HasPrefix(lower, "postgresql://") {
		return true
	}
	// A key=value DSN: a whitespace-separated field host= or dbname=, so
	// that a file path such as /data/host=a/a2aflow.db stays a path.
	for _, f := range strings.Fields(lower) {
		if strings.HasPrefix(f, "host=") || strings.HasPrefix(f, "dbname=") {
			return true
		}
	}
	return false
}

func gormConfig() *gorm.Config {
	return &gorm.Config{
		Logger: logger.Default.LogMode(logger.Silent),
		// PostgreSQL keeps microseconds; SQLite would keep nanoseconds.
		NowFunc: func() time.Time { return time.Now().Local().Truncate(time.Microsecond) },
	}
}

func openSQLite(path string) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("create database folder: %w", err)
	}
	dsn := "file:" + path + "?_journal_mode=WAL&_synchronous=NORMAL&_busy_timeout=5000&_foreign_keys=on"
	db, err := gorm.Open(sqlite.Open(dsn), gormConfig())
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	if err := migrateSQLite(dsn); err != nil {
		_ = closeDB(db)
		return nil, fmt.Errorf("migrate database %s: %w", path, err)
	}
	return &Store{db: db, nameOrder: "name"}, nil
}

// migrateSQLite migrates the schema in one BEGIN IMMEDIATE transaction of
// its own connection: processes opening a new file at once (a server and an
// `a2aflow agents` command) take turns instead of both creating the tables.
func migrateSQLite(dsn string) error {
	db, err := gorm.Open(sqlite.Open(dsn+"&_txlock=immediate"), gormConfig())
	if err != nil {
		return err
	}
	defer closeDB(db)
	return db.Transaction(func(tx *gorm.DB) error {
		if err := tx.AutoMigrate(&RemoteAgent{}, &OAuthLogin{}, &LLMUsage{}, &LLMLease{}, &LLMLimitKey{}, &PolicyVersion{}, &PolicyRequest{}, &Delegation{}); err != nil {
			return err
		}
		return migrateAgentScopes(tx)
	})
}

func openPostgres(dsn string) (*Store, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		// pgx's message shows the DSN with its password redacted.
		return nil, fmt.Errorf("open PostgreSQL database: %w", err)
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = pgConnectTimeout
	}
	// Never the DSN itself in messages: it may hold a password.
	name := fmt.Sprintf("postgres://%s@%s:%d/%s", cfg.User, cfg.Host, cfg.Port, cfg.Database)
	sqlDB := stdlib.OpenDB(*cfg)
	sqlDB.SetMaxOpenConns(pgMaxOpenConns)
	sqlDB.SetMaxIdleConns(pgMaxIdleConns)
	sqlDB.SetConnMaxLifetime(pgConnMaxLifetime)
	sqlDB.SetConnMaxIdleTime(pgConnMaxIdleTime)
	db, err := gorm.Open(postgres.New(postgres.Config{Conn: sqlDB}), gormConfig())
	if err != nil {
		_ = sqlDB.Close()
		return nil, fmt.Errorf("open database %s: %w", name, err)
	}
	// A server and a worker starting together must not both create the
	// tables: hold an advisory lock on one connection while migrating.
	err = db.Connection(func(conn *gorm.DB) error {
		if err := conn.Exec("SELECT pg_advisory_lock(?)", pgMigrateLock).Error; err != nil {
			return err
		}
		defer conn.Exec("SELECT pg_advisory_unlock(?)", pgMigrateLock)
		return conn.Transaction(func(tx *gorm.DB) error {
			if err := tx.AutoMigrate(&RemoteAgent{}, &OAuthLogin{}, &LLMUsage{}, &LLMLease{}, &LLMLimitKey{}, &PolicyVersion{}, &PolicyRequest{}, &Delegation{}); err != nil {
				return err
			}
			return migrateAgentScopes(tx)
		})
	})
	if err != nil {
		_ = sqlDB.Close()
		return nil, fmt.Errorf("migrate database %s: %w", name, err)
	}
	return &Store{db: db, nameOrder: `name COLLATE "C"`}, nil
}

// DB returns the database, for the tables of agents' own activities
// (workerenv): a2aflow's tables are the Store's to change.
func (s *Store) DB() *gorm.DB { return s.db }

// isDuplicate reports whether err is the violation of a unique index.
func (s *Store) isDuplicate(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return true
	}
	if tr, ok := s.db.Dialector.(gorm.ErrorTranslator); ok {
		return errors.Is(tr.Translate(err), gorm.ErrDuplicatedKey)
	}
	return false
}

// Close closes the database.
func (s *Store) Close() error {
	return closeDB(s.db)
}

func closeDB(db *gorm.DB) error {
	sqlDB, err := db.DB()
	if err != nil {
		return err
	}
	return sqlDB.Close()
}

// ErrNotFound is returned when a record does not exist.
var ErrNotFound = errors.New("not found")
