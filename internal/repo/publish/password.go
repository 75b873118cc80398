package publish

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Passwords of password-protected articles are stored as argon2id hashes in
// the PHC string format ($argon2id$v=19$m=…,t=…,p=…$salt$hash), never in
// clear and never in a version object (so packs and git exports carry no
// trace of them). Argon2id is memory-hard (RFC 9106) and, unlike bcrypt,
// takes passwords of any length without truncating them at 72 bytes.

// Argon2id parameters of new hashes: the OWASP minimum (19 MiB, 2 passes,
// one lane), which costs a few tens of milliseconds per check.
const (
	argonTime    = 2
	argonMemory  = 19 * 1024 // KiB
	argonThreads = 1
	argonKeyLen  = 32
	saltLen      = 16
	// MaxPassword bounds a password's length in bytes.
	MaxPassword = 1024
)

// hashes bounds the hashes of new passwords made at once: each takes
// argonMemory. (The checks of the public reads have their own slots:
// guard.)
var hashes = make(chan struct{}, 2)

func hashPassword(pw string) (string, error) {
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	hashes <- struct{}{}
	key := argon2.IDKey([]byte(pw), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	<-hashes
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemory, argonTime, argonThreads,
		b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// checkPassword reports whether pw matches the encoded hash. A malformed
// hash or parameters beyond the bounds below never match. The caller
// holds a slot of the guard.
func checkPassword(encoded, pw string) bool {
	if len(pw) > MaxPassword {
		return false
	}
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false
	}
	var m, t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil {
		return false
	}
	// Bounds on stored parameters: a corrupt record must not make a check
	// allocate gigabytes or spin for minutes.
	if m < 8 || m > 256*1024 || t < 1 || t > 10 || p < 1 || p > 4 {
		return false
	}
	b64 := base64.RawStdEncoding
	salt, err := b64.DecodeString(parts[4])
	if err != nil || len(salt) < 8 || len(salt) > 64 {
		return false
	}
	want, err := b64.DecodeString(parts[5])
	if err != nil || len(want) < 16 || len(want) > 64 {
		return false
	}
	got := argon2.IDKey([]byte(pw), salt, t, m, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}
