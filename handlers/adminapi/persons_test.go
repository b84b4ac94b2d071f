package adminapi_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/uptrace/bun"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/organisation"
	"portal/handlers/handlertest"
)

// A person import in another encoding than UTF-8 is refused row by row,
// naming the line and the field, and writes nothing: never stored with
// "�" in place of the letters.
func TestPersonImportRefusesInvalidUTF8(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		env := handlertest.NewOrganisationsEnv(t, db, handlertest.Options{})
		key, _ := env.ApiKey(2, organisation.ScopeWrite)
		count := func() int {
			n, err := db.NewSelect().Model((*engine.Person)(nil)).Where("organisation_id = 2").Count(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			return int(n)
		}
		before := count()
		// Latin-1: "Jürg Müller" with ü as the single byte 0xFC.
		latin1 := "externalId,firstName,lastName,dateOfBirth\nU-1,Anna,Muster,1990-01-01\nU-2,J\xfcrg,M\xfcller,1980-02-03\n"
		e := handlertest.ExpectHTTPError(t, adminCSV(env, key, latin1), http.StatusUnprocessableEntity, "/api/admin/persons/import")
		fields := map[string]bool{}
		for _, f := range e.Errors {
			fields[f.Field] = true
		}
		if !fields["line 3: firstName"] || !fields["line 3: lastName"] || len(fields) != 2 {
			t.Fatalf("errors %+v", e.Errors)
		}
		// JSON: the decoder has replaced the bytes with U+FFFD already.
		res := env.Admin(key, http.MethodPost, "/api/admin/persons/import", map[string]any{"persons": []map[string]any{
			{"externalId": "U-3", "firstName": "J\ufffdrg", "lastName": "Muster", "dateOfBirth": "1980-02-03"}}})
		e = handlertest.ExpectHTTPError(t, res, http.StatusUnprocessableEntity, "/api/admin/persons/import")
		if len(e.Errors) != 1 || e.Errors[0].Field != "line 1: firstName" {
			t.Fatalf("errors %+v", e.Errors)
		}
		if count() != before {
			t.Fatalf("a refused import wrote persons: %d, was %d", count(), before)
		}
	})
}
