package session

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Keyring holds the keys of PORTAL_SESSION_KEY: the first one encrypts, every
// one decrypts, so a key can be rotated by putting the new key first and
// dropping the old one after the longest session lifetime.
type Keyring struct {
	keys [][]byte
}

// keyBytes is the size of a master key: 256 bits.
const keyBytes = 32

// ParseKeyring reads a comma-separated list of 32-byte keys, each as 64 hex
// digits or as base64 (standard or URL alphabet, padded or not). Anything
// shorter is refused rather than stretched: a guessable key would make the
// encryption decorative.
func ParseKeyring(s string) (*Keyring, error) {
	var kr Keyring
	for i, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		key, err := decodeKey(part)
		if err != nil {
			return nil, fmt.Errorf("session key %d: %w", i+1, err)
		}
		kr.keys = append(kr.keys, key)
	}
	return &kr, nil
}

// NewKeyring returns a keyring of the given raw 32-byte keys (tests and tools).
func NewKeyring(keys ...[]byte) (*Keyring, error) {
	if len(keys) == 0 {
		return nil, errors.New("session key: none given")
	}
	var kr Keyring
	for i, k := range keys {
		if len(k) != keyBytes {
			return nil, fmt.Errorf("session key %d: %d bytes, want %d", i+1, len(k), keyBytes)
		}
		kr.keys = append(kr.keys, append([]byte(nil), k...))
	}
	return &kr, nil
}

// GenerateKey returns a fresh key in the form ParseKeyring reads (base64url).
func GenerateKey() string {
	b := make([]byte, keyBytes)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeKey(s string) ([]byte, error) {
	if s == "" {
		return nil, errors.New("empty")
	}
	if len(s) == 2*keyBytes {
		if b, err := hex.DecodeString(s); err == nil {
			return b, nil
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			if len(b) != keyBytes {
				return nil, fmt.Errorf("decodes to %d bytes, want %d (generate one with: openssl rand -base64 32)", len(b), keyBytes)
			}
			return b, nil
		}
	}
	return nil, errors.New("not 64 hex digits or base64 of 32 bytes (generate one with: openssl rand -base64 32)")
}

// Sealer encrypts and authenticates small values with AES-256-GCM under
// keys derived (HKDF-SHA256) from the keyring for one purpose, so the same
// master key never serves two purposes directly.
type Sealer struct {
	prefix string
	aeads  []cipher.AEAD
}

// Sealer returns the sealer for purpose, e.g. "session data".
func (k *Keyring) Sealer(purpose string) *Sealer {
	s := &Sealer{prefix: "s1."}
	for _, sub := range k.DeriveKeys(purpose) {
		block, err := aes.NewCipher(sub)
		if err != nil {
			panic(fmt.Sprintf("session: aes: %v", err))
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			panic(fmt.Sprintf("session: gcm: %v", err))
		}
		s.aeads = append(s.aeads, aead)
	}
	return s
}

// DeriveKeys returns one 32-byte key per key of the keyring, derived
// (HKDF-SHA256) for purpose, the first from the key that encrypts: for
// MACs of other packages (invitation links), which sign with the first and
// accept any, so they survive a rotation like sessions do.
func (k *Keyring) DeriveKeys(purpose string) [][]byte {
	out := make([][]byte, 0, len(k.keys))
	for _, master := range k.keys {
		sub, err := hkdf.Key(sha256.New, master, nil, "portal "+purpose+" v1", keyBytes)
		if err != nil {
			panic(fmt.Sprintf("session: derive key: %v", err)) // only fails for absurd lengths
		}
		out = append(out, sub)
	}
	return out
}

// ErrUnsealable means a sealed value was not made by any key of the keyring
// for this purpose and context, or was altered.
var ErrUnsealable = errors.New("session: value cannot be decrypted")

// Seal encrypts plaintext bound to aad (which is authenticated, not
// stored) and returns printable text.
func (s *Sealer) Seal(plaintext, aad []byte) string {
	aead := s.aeads[0]
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plaintext)+aead.Overhead())
	rand.Read(nonce)
	out := aead.Seal(nonce, nonce, plaintext, aad)
	return s.prefix + base64.RawURLEncoding.EncodeToString(out)
}

// Open reverses Seal with any key of the keyring.
func (s *Sealer) Open(sealed string, aad []byte) ([]byte, error) {
	rest, ok := strings.CutPrefix(sealed, s.prefix)
	if !ok {
		return nil, ErrUnsealable
	}
	raw, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil {
		return nil, ErrUnsealable
	}
	for _, aead := range s.aeads {
		if len(raw) < aead.NonceSize()+aead.Overhead() {
			return nil, ErrUnsealable
		}
		nonce, ct := raw[:aead.NonceSize()], raw[aead.NonceSize():]
		if pt, err := aead.Open(nil, nonce, ct, aad); err == nil {
			return pt, nil
		}
	}
	return nil, ErrUnsealable
}

// valueCodec turns session values into the text a store keeps: JSON, or
// with a sealer the JSON encrypted and bound to the session's id hash, so
// a row copied onto another session's id does not decrypt.
type valueCodec struct {
	sealer *Sealer
}

func (c valueCodec) encode(idHash string, values map[string]string) (string, error) {
	data, err := json.Marshal(cloneValues(values)) // never "null", even for nil values
	if err != nil {
		return "", fmt.Errorf("encode values: %w", err)
	}
	if c.sealer == nil {
		return string(data), nil
	}
	return c.sealer.Seal(data, []byte(idHash)), nil
}

// decode returns the values, or an error wrapping ErrNotFound when they
// cannot be read with the configured keys (a rotated-out key, tampering, or
// plain JSON where encryption is required): such a session is unusable and
// its holder has to sign in again, which is not an outage.
func (c valueCodec) decode(idHash, text string) (map[string]string, error) {
	data := []byte(text)
	if c.sealer != nil {
		pt, err := c.sealer.Open(text, []byte(idHash))
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrNotFound, err)
		}
		data = pt
	} else if strings.HasPrefix(text, "s1.") {
		return nil, fmt.Errorf("%w: encrypted session data but no PORTAL_SESSION_KEY", ErrNotFound)
	}
	values := map[string]string{}
	if err := json.Unmarshal(data, &values); err != nil {
		return nil, fmt.Errorf("%w: decode values: %w", ErrNotFound, err)
	}
	return values, nil
}

// StoreOption configures a store made by NewDBStore or NewRedisStore.
type StoreOption func(*storeOptions)

type storeOptions struct {
	codec       valueCodec
	redisPrefix string
}

// Encrypted makes the store keep session values encrypted with kr
// (AES-256-GCM, bound to the session's id hash).
func Encrypted(kr *Keyring) StoreOption {
	return func(o *storeOptions) {
		if kr != nil {
			o.codec.sealer = kr.Sealer("session data")
		}
	}
}

func applyOptions(opts []StoreOption) storeOptions {
	var o storeOptions
	for _, opt := range opts {
		opt(&o)
	}
	return o
}
