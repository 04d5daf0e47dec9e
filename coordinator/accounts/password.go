package accounts

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Passwords are kept as argon2id strings in the PHC format
// ($argon2id$v=19$m=...,t=...,p=...$salt$hash), so the cost can be raised
// later without breaking stored hashes: each hash carries its own.
//
// The cost is OWASP's minimum for argon2id (19 MiB, two passes, one
// lane): enough against offline guessing, small enough that a coordinator
// on two cores is not its own denial of service; the sign-in rate limit
// caps how many hashes strangers can make it compute
// (BenchmarkHashPassword measures one).
const (
	argonMemory  = 19 * 1024 // KiB
	argonTime    = 2
	argonThreads = 1
	argonKeyLen  = 32
	argonSaltLen = 16
)

// Password length limits: a floor against guessing, a ceiling so that no
// request makes the hash read megabytes.
const (
	MinPasswordLen = 10
	MaxPasswordLen = 256
)

// HashPassword returns the argon2id string of password with a new salt.
func HashPassword(password string) (string, error) {
	salt := make([]byte, argonSaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	return encodeHash(salt, argonMemory, argonTime, argonThreads, argon2.IDKey([]byte(password), salt, argonTime, argonMemory, argonThreads, argonKeyLen)), nil
}

func encodeHash(salt []byte, m uint32, t uint32, p uint8, key []byte) string {
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, m, t, p, b64.EncodeToString(salt), b64.EncodeToString(key))
}

// checkPassword reports whether password matches an argon2id string. A
// malformed or foreign string matches nothing (and costs no hashing: only
// stored hashes reach it, and the caller pays for a dummy hash itself).
func checkPassword(encoded, password string) bool {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[1] != "argon2id" || parts[2] != fmt.Sprintf("v=%d", argon2.Version) {
		return false
	}
	var m, t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil {
		return false
	}
	// A stored hash is ours, but bound the cost anyway: a tampered row must
	// not make a sign-in allocate gigabytes.
	if m == 0 || m > 1<<20 || t == 0 || t > 16 || p == 0 {
		return false
	}
	b64 := base64.RawStdEncoding
	salt, err1 := b64.DecodeString(parts[4])
	key, err2 := b64.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(key) == 0 || len(key) > 64 {
		return false
	}
	got := argon2.IDKey([]byte(password), salt, t, m, p, uint32(len(key)))
	return subtle.ConstantTimeCompare(got, key) == 1
}
