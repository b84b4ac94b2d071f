package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
)

// maxPrefixLen bounds an X-Forwarded-Prefix; real ones are a few segments.
const maxPrefixLen = 256

// validPrefix reports whether p can stand before a path: it starts with
// one slash and holds only path characters, no "..", no query, no fragment.
func validPrefix(p string) bool {
	if len(p) < 2 || len(p) > maxPrefixLen || p[0] != '/' || strings.HasPrefix(p, "//") {
		return false
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "." || seg == ".." {
			return false
		}
	}
	for _, r := range p {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case strings.ContainsRune("/-._~!$&'()*+;=:@%", r): // no comma: a list of prefixes is not one
		default:
			return false
		}
	}
	return true
}

// WithServerPrefix returns the JSON OpenAPI document doc with prefix put
// before the path of every servers entry, as a backend behind a proxy
// that sets X-Forwarded-Prefix publishes it ("/" becomes "/portal",
// "https://h/api" becomes "https://h/portal/api"). Only the url strings
// change; every other byte stays as it was. A document without servers
// gets one entry, the prefix. An empty prefix or "/" returns doc as it is.
func WithServerPrefix(doc []byte, prefix string) ([]byte, error) {
	prefix = strings.TrimSuffix(prefix, "/")
	if prefix == "" {
		return doc, nil
	}
	if !validPrefix(prefix) {
		return nil, fmt.Errorf("server prefix %q is not a path prefix", prefix)
	}
	if !json.Valid(doc) {
		return nil, errors.New("the document is not JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	if err := expectDelim(dec, '{'); err != nil {
		return nil, err
	}
	empty := !dec.More()
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil, err
		}
		if key != "servers" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, err
			}
			continue
		}
		return prefixServerURLs(doc, dec, prefix)
	}
	// No servers: the implied server is "/", so the prefix is the server.
	open := bytes.IndexByte(doc, '{')
	entry, err := json.Marshal(prefix)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	out.Write(doc[:open+1])
	out.WriteString(`"servers":[{"url":` + string(entry) + `}]`)
	if !empty {
		out.WriteByte(',')
	}
	out.Write(doc[open+1:])
	return out.Bytes(), nil
}

// prefixServerURLs rewrites the url of each object in the servers array
// that dec is positioned at, splicing the new strings into doc.
func prefixServerURLs(doc []byte, dec *json.Decoder, prefix string) ([]byte, error) {
	if err := expectDelim(dec, '['); err != nil {
		return nil, fmt.Errorf("servers: %w", err)
	}
	var out bytes.Buffer
	last := 0
	for dec.More() {
		if err := expectDelim(dec, '{'); err != nil {
			return nil, fmt.Errorf("servers entry: %w", err)
		}
		for dec.More() {
			key, err := dec.Token()
			if err != nil {
				return nil, err
			}
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return nil, err
			}
			if key != "url" {
				continue
			}
			var u string
			if err := json.Unmarshal(raw, &u); err != nil {
				return nil, fmt.Errorf("servers url: %w", err)
			}
			end := int(dec.InputOffset())
			start := end - len(raw)
			prefixed, err := json.Marshal(prefixServerURL(u, prefix))
			if err != nil {
				return nil, err
			}
			out.Write(doc[:start][last:]) // not doc[last:start], which Tailwind's class scanner reads as a CSS property
			out.Write(prefixed)
			last = end
		}
		if err := expectDelim(dec, '}'); err != nil {
			return nil, err
		}
	}
	out.Write(doc[last:])
	return out.Bytes(), nil
}

func prefixServerURL(u, prefix string) string {
	if parsed, err := url.Parse(u); err == nil && parsed.Scheme != "" && parsed.Host != "" {
		parsed.Path = joinPrefix(prefix, parsed.Path)
		parsed.RawPath = ""
		return parsed.String()
	}
	return joinPrefix(prefix, u)
}

func joinPrefix(prefix, p string) string {
	p = strings.TrimSuffix(p, "/")
	if p != "" && !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return prefix + p
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err == io.EOF {
		return errors.New("unexpected end of the document")
	}
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("want %q, found %v", want, tok)
	}
	return nil
}
