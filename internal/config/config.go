package config

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/foliodev/folio/internal/errs"
)

// ErrInvalid is wrapped by every error about a bad setting.
var ErrInvalid error = errs.E(errs.Invalid, "config: invalid setting")

// Config is the whole configuration.
type Config struct {
	// Path is the file the configuration was read from, "" when none.
	Path string `toml:"-"`

	Server     Server     `toml:"server"`
	Checkpoint Checkpoint `toml:"checkpoint"`
	Limits     Limits     `toml:"limits"`
	Storage    Storage    `toml:"storage"`
	AI         AI         `toml:"ai"`
	Assistant  Assistant  `toml:"assistant"`
	Persona    Persona    `toml:"persona"`
	Privacy    Privacy    `toml:"privacy"`
	Reading    Reading    `toml:"reading"`
	Attributes Attributes `toml:"attributes"`
	Site       Site       `toml:"site"`

	// defined records which AI keys were set and by what: "ai.model" ->
	// "[ai]" or "env FOLIO_AI_MODEL".
	defined map[string]string
}

// Server configures the daemon's listener.
type Server struct {
	// Listen is the HTTP/WebSocket address.
	Listen string `toml:"listen"`
	// AllowedOrigins are the browser origins (e.g. "https://blog.example")
	// of editors served from elsewhere: the HTTP API answers them with CORS
	// headers and the sync endpoint accepts their WebSocket handshakes.
	// "*" allows any origin. Empty: same-origin browsers and non-browser
	// clients only.
	AllowedOrigins []string `toml:"allowed_origins"`

	// MaxConnections caps the client connections open at once and
	// MaxConnectionsPerAddress those of one client address (an IPv6
	// client's /64); 0: no cap. Behind a reverse proxy every connection
	// comes from the proxy's address: raise or disable the per-address cap
	// there and let the proxy limit clients.
	MaxConnections           int `toml:"max_connections"`
	MaxConnectionsPerAddress int `toml:"max_connections_per_address"`
	// An authenticated connection is protected from being closed to make
	// room only within shares: MaxConnectionsPerToken per token,
	// MaxConnectionsPerUser per user, and all non-admins' together at most
	// MaxConnections − AdminConnections, the places kept for admins; 0: no
	// cap (no reserve).
	MaxConnectionsPerToken int `toml:"max_connections_per_token"`
	MaxConnectionsPerUser  int `toml:"max_connections_per_user"`
	AdminConnections       int `toml:"admin_connections"`
	// ReadHeaderTimeout bounds reading a request's headers, ReadTimeout
	// reading its body (from the request's start), IdleTimeout a kept-alive
	// connection's wait for its next request. Upgraded WebSocket
	// connections are exempt.
	ReadHeaderTimeout time.Duration `toml:"read_header_timeout"`
	ReadTimeout       time.Duration `toml:"read_timeout"`
	IdleTimeout       time.Duration `toml:"idle_timeout"`
	// DebugListen, when set, serves Go's runtime profiles
	// (/debug/pprof/) on this address, without authentication: keep it
	// on a loopback address. Empty: off.
	DebugListen string `toml:"debug_listen"`
}

// Checkpoint configures when a draft is sealed into a version.
type Checkpoint struct {
	// Idle seals a draft this long after its last change.
	Idle time.Duration `toml:"idle"`
	// Max seals a draft unsealed for this long even while edits continue.
	Max time.Duration `toml:"max"`
}

// Limits bound what one client may send.
type Limits struct {
	FrameBytes        int64 `toml:"frame_bytes"`
	MessagesPerSecond int   `toml:"messages_per_second"`
	Subscriptions     int   `toml:"subscriptions"`
	DocMaxBlocks      int   `toml:"doc_max_blocks"`
	DocMaxBytes       int64 `toml:"doc_max_bytes"`
	// SaveMaxChanges bounds the changes of one draft save; RequestMaxRuns
	// the rich-text runs, list items and table cells of one request. Both
	// are checked before any work, the HTTP decoder stops reading at them.
	SaveMaxChanges int `toml:"save_max_changes"`
	RequestMaxRuns int `toml:"request_max_runs"`
	// AssetSize bounds one uploaded image or file, in bytes (at most
	// MaxAssetSize).
	AssetSize int `toml:"asset_size"`
}

// MaxAssetSize is the largest asset_size (objstore.MaxAsset: one asset is
// one object, docs/objects.md).
const MaxAssetSize = 24 << 20

// Site names the public site: its pages and the Atom feed.
type Site struct {
	// Title names the site ("" : "Folio"); Author is the feed's author
	// and the pages' footer ("" : the title).
	Title  string `toml:"title"`
	Author string `toml:"author"`
	// URL is the site's public address ("https://blog.example", or with a
	// path prefix "https://example.org/blog"): the links of the Atom feed
	// are built on it, never on a request's Host header. Empty: the feed
	// uses links relative to the feed's own address.
	URL string `toml:"url"`
	// Language is the site's language, "en" or "zh" ("" : none set): the
	// language of preset names and descriptions in listings, and of the
	// default instruction of an editing-preset request whose document
	// has no text to tell its language by (docs/config.md).
	Language string `toml:"language"`
}

// Storage configures how the daemon treats its disk (docs/config.md,
// "storage failures" in docs/cli.md).
type Storage struct {
	// MinFree is the free space, in bytes, kept on the store's disk:
	// below it writes are refused with storage_full (reads work) before
	// the store's write-ahead log can run out of space, which would stop
	// the daemon. 0 keeps no reserve.
	MinFree int64 `toml:"min_free"`
	// MaxStall is how long one disk write or sync may hang before the
	// daemon treats the disk as failed and stops. 0 never does.
	MaxStall time.Duration `toml:"max_stall"`
	// Cache is the store's block cache in bytes: recently read parts of
	// the store kept decompressed in memory.
	Cache int64 `toml:"cache"`

	// Engine is where the store lives: "pebble" (the data directory's
	// disk, the default) or "postgres" (the database DSN names; the data
	// directory keeps only the indexes and the daemon's address).
	Engine string `toml:"engine"`
	// DSN is the PostgreSQL connection string or postgres:// URL. It may
	// hold a password: it is never printed (FOLIO_STORAGE_DSN keeps it
	// out of the file).
	DSN Secret `toml:"dsn"`
	// MaxConns bounds the connections to the database; StatementTimeout
	// bounds one statement (a lock wait included). PostgreSQL only.
	MaxConns         int           `toml:"max_conns"`
	StatementTimeout time.Duration `toml:"statement_timeout"`
}

// The storage engines of [storage] engine.
const (
	EnginePebble   = "pebble"
	EnginePostgres = "postgres"
)

// Assistant switches the writing assistant and each of its entries. With
// Enabled off every request answers assistant_disabled; editing, saving,
// checkpoints, history, restore and export do not depend on it.
type Assistant struct {
	// Enabled is the master switch.
	Enabled bool `toml:"enabled"`
	// Document, Block, Selection and Section switch the request scopes:
	// the whole article (the editor's assistant panel), one block (the
	// block menu), a selection in one text block (the floating toolbar)
	// and a range of top-level blocks (the API only).
	Document  bool `toml:"document"`
	Block     bool `toml:"block"`
	Selection bool `toml:"selection"`
	Section   bool `toml:"section"`
	// WritingPresets and EditingPresets switch requests that choose a
	// preset of that type; requests without one are not affected.
	WritingPresets bool `toml:"writing_presets"`
	EditingPresets bool `toml:"editing_presets"`
}

// DefaultAssistant is every switch on.
func DefaultAssistant() Assistant {
	return Assistant{Enabled: true, Document: true, Block: true, Selection: true, Section: true,
		WritingPresets: true, EditingPresets: true}
}

// Persona switches writing personas: Enabled is the master switch, the
// others switch components under it. With Enabled off no persona call
// works and requests choosing a persona are refused; editing, saving,
// history, restore, publishing and export never depend on it.
type Persona struct {
	Enabled bool `toml:"enabled"`
	// Style: persona runs use the active style profile (generation builds
	// one either way: every persona version pins a style profile).
	Style bool `toml:"style"`
	// Learning and Memory: generation builds a learning snapshot and a
	// memory snapshot, and persona runs use them.
	Learning bool `toml:"learning"`
	Memory   bool `toml:"memory"`
}

// DefaultPersona is every switch on.
func DefaultPersona() Persona {
	return Persona{Enabled: true, Style: true, Learning: true, Memory: true}
}

// Privacy is the deployment's data authorization: what may leave this
// machine. It is separate from the feature switches on purpose: turning
// an assistant on never authorizes sending private content.
type Privacy struct {
	// SendPrivateToProvider lets the content of private and
	// password-protected articles go to an external model provider (any
	// provider but local); persona sources that are private or password
	// need it. Off by default.
	SendPrivateToProvider bool `toml:"send_private_to_provider"`
	// PrivateMemory lets a persona's memory be extracted from private and
	// password sources; it needs SendPrivateToProvider too. Off by
	// default.
	PrivateMemory bool `toml:"private_memory"`
}

// Reading configures the public reading assistant: its switch and the
// bounds of visitor requests. Its model settings and token policy are
// [ai.reading].
type Reading struct {
	// Enabled switches the reading assistant; off, its endpoint answers
	// reading_disabled and the public API keeps working.
	Enabled bool `toml:"enabled"`
	// MaxPassage and MaxQuestion bound a request's selected passage and
	// question, in bytes.
	MaxPassage  int `toml:"max_passage"`
	MaxQuestion int `toml:"max_question"`
	// VisitorPerMinute is the requests one visitor (anonymous id and
	// client address) may make per minute; AddressPerMinute those of one
	// client address whatever ids it presents.
	VisitorPerMinute int `toml:"visitor_per_minute"`
	AddressPerMinute int `toml:"address_per_minute"`
	// VisitorConcurrency and Concurrency bound the explanations running
	// at once for one visitor and in total (cache hits included).
	VisitorConcurrency int `toml:"visitor_concurrency"`
	Concurrency        int `toml:"concurrency"`
	// CacheBytes is the byte budget of the answer cache (LRU).
	CacheBytes int64 `toml:"cache_bytes"`
}

// DefaultReading is the reading assistant's defaults.
func DefaultReading() Reading {
	return Reading{Enabled: true, MaxPassage: 2000, MaxQuestion: 500, VisitorPerMinute: 10, AddressPerMinute: 40,
		VisitorConcurrency: 1, Concurrency: 16, CacheBytes: 32 << 20}
}

// Attributes switches the attributes assistant (summary, slug, category
// and tags suggestions). Its model settings and token policy are
// [ai.attributes].
type Attributes struct {
	Enabled bool `toml:"enabled"`
}

// Secret is a string never printed in clear (API keys).
type Secret string

// String returns "****" for a set secret and "" for an empty one.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return "****"
}

// GoString redacts like String.
func (s Secret) GoString() string { return `"` + s.String() + `"` }

// MarshalText redacts like String, so JSON and TOML output never hold the key.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// AISettings are one section's provider settings and limits. A zero limit
// means unlimited.
type AISettings struct {
	Provider        string        `toml:"provider"`
	BaseURL         string        `toml:"base_url"`
	Model           string        `toml:"model"`
	APIKey          Secret        `toml:"api_key"`
	Timeout         time.Duration `toml:"timeout"`
	ResponseFormat  bool          `toml:"response_format"`
	StreamUsage     bool          `toml:"stream_usage"`
	MaxOutputTokens int           `toml:"max_output_tokens"`

	RequestsPerMinute int   `toml:"requests_per_minute"`
	RequestsPerDay    int   `toml:"requests_per_day"`
	UserConcurrency   int   `toml:"user_concurrency"`
	Concurrency       int   `toml:"concurrency"`
	DailyTokens       int64 `toml:"daily_tokens"`
}

// AI is the [ai] section: generic (legacy) settings and one sub-section per
// category.
type AI struct {
	AISettings
	Writing    AISettings `toml:"writing"`
	Reading    AISettings `toml:"reading"`
	Attributes AISettings `toml:"attributes"`
}

// Categories are the AI categories, in display order.
var Categories = []string{"writing", "reading", "attributes"}

// Source says where a category's settings come from.
type Source string

// Sources: Dedicated (keys set for the category, none taken from [ai]),
// Compat (nothing set for the category, some keys from the legacy shared
// [ai]), Mixed (some of each) and BuiltIn, "default" (nothing set
// anywhere: the built-in defaults).
const (
	Dedicated Source = "dedicated"
	Compat    Source = "compat"
	Mixed     Source = "mixed"
	BuiltIn   Source = "default"
)

// Default returns the configuration used when nothing is set.
func Default() *Config {
	return &Config{
		Server: Server{Listen: "127.0.0.1:7420",
			MaxConnections: 1024, MaxConnectionsPerAddress: 128,
			MaxConnectionsPerToken: 32, MaxConnectionsPerUser: 64, AdminConnections: 64,
			ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 2 * time.Minute, IdleTimeout: 2 * time.Minute},
		Checkpoint: Checkpoint{Idle: 30 * time.Second, Max: 10 * time.Minute},
		Limits: Limits{
			FrameBytes:        1 << 20,
			MessagesPerSecond: 50,
			Subscriptions:     64,
			DocMaxBlocks:      20000,
			DocMaxBytes:       16 << 20,
			AssetSize:         10 << 20,
			SaveMaxChanges:    4000,
			RequestMaxRuns:    250000,
		},
		Storage: Storage{MinFree: 256 << 20, MaxStall: 20 * time.Second, Cache: 256 << 20,
			Engine: EnginePebble, MaxConns: 8, StatementTimeout: 30 * time.Second},
		AI:         AI{AISettings: DefaultAI()},
		Assistant:  DefaultAssistant(),
		Persona:    DefaultPersona(),
		Reading:    DefaultReading(),
		Attributes: Attributes{Enabled: true},
		defined:    map[string]string{},
	}
}

// DefaultAI returns the built-in AI settings every category starts from.
func DefaultAI() AISettings {
	return AISettings{
		Provider:          "local",
		Timeout:           2 * time.Minute,
		ResponseFormat:    true,
		StreamUsage:       true,
		MaxOutputTokens:   1024,
		RequestsPerMinute: 60,
		RequestsPerDay:    5000,
		UserConcurrency:   2,
		Concurrency:       8,
		DailyTokens:       2_000_000,
	}
}

// MaxFileBytes bounds the configuration file: a setting file is a few
// kilobytes, and one that is not (a wrong path, a device) is refused
// before it is read into memory.
const MaxFileBytes = 1 << 20

// readBounded reads the configuration file, refusing one larger than
// MaxFileBytes.
func readBounded(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("config: read %s: %w", path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return "", fmt.Errorf("config: read %s: %w", path, err)
	}
	if len(data) > MaxFileBytes {
		return "", fmt.Errorf("%w: %s is larger than %d bytes; is it the configuration file?", ErrInvalid, path, MaxFileBytes)
	}
	return string(data), nil
}

// envKeys are the AI keys settable from the environment.
var envKeys = []string{"provider", "base_url", "model", "api_key", "timeout"}

// Load reads the file at path ("" for none) over the defaults, then applies
// environment overrides read through getenv (os.LookupEnv when nil).
func Load(path string, getenv func(string) (string, bool)) (*Config, error) {
	if getenv == nil {
		getenv = os.LookupEnv
	}
	c := Default()
	if path != "" {
		text, err := readBounded(path)
		if err != nil {
			return nil, err
		}
		md, err := toml.Decode(text, c)
		if err != nil {
			return nil, fmt.Errorf("config: read %s: %w", path, err)
		}
		if und := md.Undecoded(); len(und) > 0 {
			keys := make([]string, len(und))
			for i, k := range und {
				keys[i] = k.String()
			}
			return nil, fmt.Errorf("%w: unknown key %s in %s (see docs/config.md)", ErrInvalid, strings.Join(keys, ", "), path)
		}
		c.Path = path
		for _, k := range aiKeys() {
			if md.IsDefined("ai", k) {
				c.defined["ai."+k] = "[ai]"
			}
			for _, cat := range Categories {
				if md.IsDefined("ai", cat, k) {
					c.defined["ai."+cat+"."+k] = "[ai." + cat + "]"
				}
			}
		}
	}
	for _, k := range envKeys {
		if err := c.applyEnv(getenv, "FOLIO_AI_"+strings.ToUpper(k), "ai."+k, &c.AI.AISettings, k); err != nil {
			return nil, err
		}
		for _, cat := range Categories {
			name := "FOLIO_AI_" + strings.ToUpper(cat) + "_" + strings.ToUpper(k)
			if err := c.applyEnv(getenv, name, "ai."+cat+"."+k, c.section(cat), k); err != nil {
				return nil, err
			}
		}
	}
	if v, ok := getenv("FOLIO_STORAGE_ENGINE"); ok && v != "" {
		c.Storage.Engine = v
	}
	if v, ok := getenv("FOLIO_STORAGE_DSN"); ok && v != "" {
		c.Storage.DSN = Secret(v)
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Config) applyEnv(getenv func(string) (string, bool), name, key string, s *AISettings, field string) error {
	v, ok := getenv(name)
	if !ok || v == "" {
		return nil
	}
	f := fieldByTag(reflect.ValueOf(s).Elem(), field)
	switch f.Kind() {
	case reflect.String:
		f.SetString(v)
	case reflect.Int64: // time.Duration
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return fmt.Errorf("%w: %s=%q is not a duration like 30s or 2m", ErrInvalid, name, v)
		}
		f.SetInt(int64(d))
	}
	c.defined[key] = "env " + name
	return nil
}

func (c *Config) validate() error {
	if c.Checkpoint.Idle <= 0 || c.Checkpoint.Max <= 0 {
		return fmt.Errorf("%w: checkpoint.idle and checkpoint.max must be positive durations", ErrInvalid)
	}
	if c.Server.MaxConnections < 0 || c.Server.MaxConnectionsPerAddress < 0 ||
		c.Server.MaxConnectionsPerToken < 0 || c.Server.MaxConnectionsPerUser < 0 || c.Server.AdminConnections < 0 {
		return fmt.Errorf("%w: server.max_connections, max_connections_per_address, max_connections_per_token, max_connections_per_user and admin_connections must not be negative (0: no cap)", ErrInvalid)
	}
	if err := checkSiteURL(c.Site.URL); err != nil {
		return err
	}
	if c.Server.MaxConnections > 0 && c.Server.AdminConnections >= c.Server.MaxConnections {
		return fmt.Errorf("%w: server.admin_connections (%d) must be smaller than server.max_connections (%d): it is the share of them kept for admins", ErrInvalid, c.Server.AdminConnections, c.Server.MaxConnections)
	}
	if c.Server.ReadHeaderTimeout <= 0 || c.Server.ReadTimeout <= 0 || c.Server.IdleTimeout <= 0 {
		return fmt.Errorf("%w: server.read_header_timeout, server.read_timeout and server.idle_timeout must be positive durations such as 10s or 2m", ErrInvalid)
	}
	if c.Limits.FrameBytes <= 0 || c.Limits.MessagesPerSecond < 0 || c.Limits.Subscriptions < 0 ||
		c.Limits.DocMaxBlocks < 0 || c.Limits.DocMaxBytes < 0 || c.Limits.SaveMaxChanges < 0 || c.Limits.RequestMaxRuns < 0 {
		return fmt.Errorf("%w: [limits] values must not be negative (frame_bytes must be positive)", ErrInvalid)
	}
	if c.Limits.AssetSize <= 0 || c.Limits.AssetSize > MaxAssetSize {
		return fmt.Errorf("%w: [limits] asset_size must be 1..%d bytes (24 MiB: one asset is one stored object)", ErrInvalid, MaxAssetSize)
	}
	if len(c.Site.Title) > 200 || len(c.Site.Author) > 200 || strings.ContainsAny(c.Site.Title+c.Site.Author, "\r\n") {
		return fmt.Errorf("%w: [site] title and author must be one line of at most 200 bytes", ErrInvalid)
	}
	if l := c.Site.Language; l != "" && l != "en" && l != "zh" {
		return fmt.Errorf("%w: [site] language %q: want \"en\" or \"zh\" (or leave it out)", ErrInvalid, l)
	}
	if c.Storage.MinFree < 0 || c.Storage.MaxStall < 0 {
		return fmt.Errorf("%w: [storage] min_free and max_stall must not be negative (0 turns them off)", ErrInvalid)
	}
	if c.Storage.Cache < 1<<20 {
		return fmt.Errorf("%w: [storage] cache must be at least 1048576 (1 MiB), in bytes", ErrInvalid)
	}
	switch c.Storage.Engine {
	case EnginePebble, EnginePostgres:
	default:
		return fmt.Errorf("%w: [storage] engine %q: want \"pebble\" or \"postgres\"", ErrInvalid, c.Storage.Engine)
	}
	if c.Storage.Engine == EnginePostgres && c.Storage.DSN == "" {
		return fmt.Errorf("%w: [storage] engine = \"postgres\" needs dsn (or FOLIO_STORAGE_DSN), e.g. \"postgres://folio@db.internal/folio\"", ErrInvalid)
	}
	if c.Storage.MaxConns < 1 || c.Storage.MaxConns > 1000 {
		return fmt.Errorf("%w: [storage] max_conns must be 1..1000 (the connections to the database)", ErrInvalid)
	}
	if c.Storage.StatementTimeout < 0 {
		return fmt.Errorf("%w: [storage] statement_timeout must not be negative (0: none)", ErrInvalid)
	}
	if c.Privacy.PrivateMemory && !c.Privacy.SendPrivateToProvider {
		return fmt.Errorf("%w: [privacy] private_memory needs send_private_to_provider = true (memory from private sources is sent to the provider too)", ErrInvalid)
	}
	for _, cat := range Categories {
		if _, err := c.AICategory(cat); err != nil {
			return err
		}
	}
	rd := c.Reading
	if rd.MaxPassage <= 0 || rd.MaxQuestion <= 0 || rd.VisitorPerMinute <= 0 || rd.AddressPerMinute <= 0 ||
		rd.VisitorConcurrency <= 0 || rd.Concurrency <= 0 || rd.CacheBytes < 0 {
		return fmt.Errorf("%w: [reading] max_passage, max_question, visitor_per_minute, address_per_minute, visitor_concurrency and concurrency must be positive, cache_bytes not negative (0 turns the cache off)", ErrInvalid)
	}
	if rd.MaxPassage > 64<<10 || rd.MaxQuestion > 16<<10 {
		return fmt.Errorf("%w: [reading] max_passage is at most 65536 bytes and max_question at most 16384", ErrInvalid)
	}
	return nil
}

func (c *Config) section(cat string) *AISettings {
	switch cat {
	case "writing":
		return &c.AI.Writing
	case "reading":
		return &c.AI.Reading
	case "attributes":
		return &c.AI.Attributes
	}
	return nil
}

// aiKeys returns the TOML keys of AISettings in declaration order.
func aiKeys() []string {
	t := reflect.TypeOf(AISettings{})
	keys := make([]string, t.NumField())
	for i := range keys {
		keys[i] = t.Field(i).Tag.Get("toml")
	}
	return keys
}

func fieldByTag(v reflect.Value, tag string) reflect.Value {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		if t.Field(i).Tag.Get("toml") == tag {
			return v.Field(i)
		}
	}
	panic("config: no AISettings field " + tag)
}

// Resolved is one category's effective AI settings.
type Resolved struct {
	Category string
	Source   Source
	AISettings
	// Origins maps every key to where its value came from: "[ai.writing]",
	// "[ai]", "env FOLIO_AI_WRITING_MODEL", "env FOLIO_AI_MODEL" or "default".
	Origins map[string]string
}

// AICategory resolves category cat ("writing", "reading" or "attributes"):
// each key from the category section (or its environment variable), else
// from [ai] (or FOLIO_AI_*), else the default. It returns an error wrapping
// ErrInvalid naming the key and its origin when a value is unusable.
func (c *Config) AICategory(cat string) (Resolved, error) {
	sec := c.section(cat)
	if sec == nil {
		return Resolved{}, fmt.Errorf("%w: unknown AI category %q (want writing, reading or attributes)", ErrInvalid, cat)
	}
	r := Resolved{Category: cat, Origins: map[string]string{}}
	out := reflect.ValueOf(&r.AISettings).Elem()
	catV, genV := reflect.ValueOf(sec).Elem(), reflect.ValueOf(&c.AI.AISettings).Elem()
	defV := reflect.ValueOf(DefaultAI())
	var own, generic int
	for i, k := range aiKeys() {
		switch {
		case c.defined["ai."+cat+"."+k] != "":
			out.Field(i).Set(catV.Field(i))
			r.Origins[k] = c.defined["ai."+cat+"."+k]
			own++
		case c.defined["ai."+k] != "":
			out.Field(i).Set(genV.Field(i))
			r.Origins[k] = c.defined["ai."+k]
			generic++
		default:
			out.Field(i).Set(defV.Field(i))
			r.Origins[k] = "default"
		}
	}
	switch {
	case own > 0 && generic > 0:
		r.Source = Mixed
	case own > 0:
		r.Source = Dedicated
	case generic > 0:
		r.Source = Compat
	default:
		r.Source = BuiltIn
	}
	return r, r.check()
}

// Legacy reports whether the category takes some of its settings from the
// legacy shared [ai] section (or FOLIO_AI_*): compat or mixed.
func (r Resolved) Legacy() bool { return r.Source == Compat || r.Source == Mixed }

// LegacyAdvice is one sentence for a category on the legacy shared [ai]
// section, naming the keys it takes from there and where to move them;
// "" for a category that is not (Legacy).
func (r Resolved) LegacyAdvice() string {
	if !r.Legacy() {
		return ""
	}
	var keys []string
	for _, k := range aiKeys() {
		if o := r.Origins[k]; o == "[ai]" || strings.HasPrefix(o, "env FOLIO_AI_") && !strings.HasPrefix(o, "env FOLIO_AI_"+strings.ToUpper(r.Category)+"_") {
			keys = append(keys, k+"="+o)
		}
	}
	return fmt.Sprintf("ai %s runs on the legacy shared [ai] section (%s): move these keys to [ai.%s] (or FOLIO_AI_%s_*)",
		r.Category, strings.Join(keys, " "), r.Category, strings.ToUpper(r.Category))
}

// LegacyAdvice is Resolved.LegacyAdvice of every category that runs on
// the legacy shared [ai] section, in Categories order (none: nil).
func (c *Config) LegacyAdvice() []string {
	var out []string
	for _, cat := range Categories {
		r, err := c.AICategory(cat)
		if err != nil {
			continue // Validate reports it
		}
		if a := r.LegacyAdvice(); a != "" {
			out = append(out, a)
		}
	}
	return out
}

func (r Resolved) check() error {
	bad := func(key, why string) error {
		return fmt.Errorf("%w: ai %s: %s %s (from %s)", ErrInvalid, r.Category, key, why, r.Origins[key])
	}
	switch r.Provider {
	case "local":
	case "openai":
		if r.BaseURL == "" {
			return bad("base_url", "is required for provider openai, e.g. https://api.openai.com/v1 or http://127.0.0.1:11434/v1")
		}
		if r.Model == "" {
			return bad("model", "is required for provider openai")
		}
	default:
		return bad("provider", fmt.Sprintf("%q must be local or openai", r.Provider))
	}
	if r.Timeout < 0 {
		return bad("timeout", "must not be negative")
	}
	for _, f := range []struct {
		key string
		v   int64
	}{
		{"max_output_tokens", int64(r.MaxOutputTokens)}, {"requests_per_minute", int64(r.RequestsPerMinute)},
		{"requests_per_day", int64(r.RequestsPerDay)}, {"user_concurrency", int64(r.UserConcurrency)},
		{"concurrency", int64(r.Concurrency)}, {"daily_tokens", r.DailyTokens},
	} {
		if f.v < 0 {
			return bad(f.key, "must not be negative (0 means unlimited)")
		}
	}
	return nil
}

// Describe lists the keys that did not come from defaults, with their
// origins, for status output: "provider=[ai.writing] model=[ai] …".
func (r Resolved) Describe() string {
	var parts []string
	for k, o := range r.Origins {
		if o != "default" {
			parts = append(parts, k+"="+o)
		}
	}
	sort.Strings(parts)
	if len(parts) == 0 {
		return "all defaults"
	}
	return strings.Join(parts, " ")
}

// checkSiteURL accepts "" or an absolute http or https URL without query
// or fragment.
func checkSiteURL(u string) error {
	if u == "" {
		return nil
	}
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" || p.RawQuery != "" || p.Fragment != "" || p.User != nil {
		return fmt.Errorf("%w: site.url %q must be the site's absolute http or https address, such as \"https://blog.example\" (no query, fragment or credentials)", ErrInvalid, u)
	}
	return nil
}
