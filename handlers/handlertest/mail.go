package handlertest

import (
	"bytes"
	"io"
	"mime"
	"mime/multipart"
	netmail "net/mail"
	"strings"
	"testing"
)

// PlainPart is the decoded text/plain part of a received message.
func PlainPart(t *testing.T, data []byte) string {
	t.Helper()
	m, err := netmail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var find func(ct string, r io.Reader) string
	find = func(ct string, r io.Reader) string {
		mt, params, _ := mime.ParseMediaType(ct)
		if !strings.HasPrefix(mt, "multipart/") {
			if mt != "text/plain" {
				return ""
			}
			b, _ := io.ReadAll(r)
			return string(b)
		}
		mr := multipart.NewReader(r, params["boundary"])
		for {
			p, err := mr.NextPart() // decodes quoted-printable
			if err != nil {
				return ""
			}
			if s := find(p.Header.Get("Content-Type"), p); s != "" {
				return s
			}
		}
	}
	return find(m.Header.Get("Content-Type"), m.Body)
}
