package enginetest

import (
	"encoding/base64"
	"errors"
	"strings"
)

// Sealer stands in for the session key's sealer (engine.SecretSealer):
// reversible, and bound to its associated data, so that a value moved to
// another organisation or field does not open.
type Sealer struct{}

// Seal writes pt readably, bound to aad.
func (Sealer) Seal(pt, aad []byte) string {
	return "sealed." + base64.RawURLEncoding.EncodeToString(aad) + "." + base64.RawURLEncoding.EncodeToString(pt)
}

// Open gives back what Seal sealed under the same aad, and refuses
// anything else.
func (Sealer) Open(sealed string, aad []byte) ([]byte, error) {
	parts := strings.Split(sealed, ".")
	if len(parts) != 3 || parts[0] != "sealed" || parts[1] != base64.RawURLEncoding.EncodeToString(aad) {
		return nil, errors.New("cannot open")
	}
	return base64.RawURLEncoding.DecodeString(parts[2])
}
