package adminapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"portal/engine/dbtest"
	"portal/engine/invitation"
	"portal/engine/organisation"
	"portal/handlers/adminapi"
	"portal/handlers/handlertest"
)

// TestAdminBulkCallsTakeTenThousand: on PostgreSQL, 10,000 persons are
// imported by one CSV call and invited by one call naming all 10,000
// external ids (a body far above the API's 64 KiB), each reported per row,
// then unlinked by one call; a body above the bulk limit is refused
// (413) and changes nothing.
func TestAdminBulkCallsTakeTenThousand(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 rows")
	}
	db := dbtest.Postgres(t)
	env := handlertest.NewOrganisationsEnv(t, db, handlertest.Options{Invitations: handlertest.TestInvitations})
	write, _ := env.ApiKey(2, organisation.ScopeWrite)
	const n = 10000
	var csv strings.Builder
	csv.WriteString("externalId,firstName,lastName,dateOfBirth,userKeys\n")
	ids := make([]string, n)
	links := make([]map[string]string, n)
	for i := range n {
		ids[i] = fmt.Sprintf("B-%05d", i)
		links[i] = map[string]string{"externalId": ids[i], "userKey": fmt.Sprintf("bulk-%05d", i)}
		fmt.Fprintf(&csv, "%s,Kim,Bulk%d,1990-01-02,bulk-%05d\n", ids[i], i, i)
	}
	res := adminCSV(env, write, csv.String())
	var imported importReport
	res.JSON(t, &imported)
	if res.Status != http.StatusOK || imported.Created != n || len(imported.Rows) != n || imported.Rows[n-1].Line != n+1 {
		t.Fatalf("import: %d, %d created, %d rows", res.Status, imported.Created, len(imported.Rows))
	}

	path := "/api/admin/periods/3/invitations"
	body := map[string]any{"externalIds": append(append([]string(nil), ids...), "nobody")}
	if size := len(fmt.Sprint(ids)); size < 64<<10 {
		t.Fatalf("the ids make only %d bytes", size)
	}
	res = env.Admin(write, http.MethodPost, path, body)
	var invited struct {
		Created []struct {
			UserKey string `json:"userKey"`
			Link    string `json:"link"`
		} `json:"created"`
		Skipped []struct {
			ExternalID string `json:"externalId"`
			Reason     string `json:"reason"`
		} `json:"skipped"`
	}
	res.JSON(t, &invited)
	if res.Status != http.StatusCreated || len(invited.Created) != n || len(invited.Skipped) != 1 || invited.Skipped[0].ExternalID != "nobody" ||
		invited.Created[n-1].Link == "" {
		t.Fatalf("invite: %d, %d created, skipped %+v", res.Status, len(invited.Created), invited.Skipped)
	}
	if k, err := db.NewSelect().Model((*invitation.Invitation)(nil)).Where("period_id = 3").Count(t.Context()); err != nil || k != n {
		t.Fatalf("%d invitations stored (%v)", k, err)
	}

	// Above the limit: refused before anything is read into the engine.
	huge := `{"externalIds":["` + strings.Repeat("x", adminapi.MaxBulkBytes) + `"]}`
	handlertest.ExpectHTTPError(t, env.Admin(write, http.MethodPost, path, huge), http.StatusRequestEntityTooLarge, path)

	res = env.Admin(write, http.MethodPost, "/api/admin/persons/unlink", map[string]any{"links": links})
	var unlinked struct {
		Removed int `json:"removed"`
	}
	res.JSON(t, &unlinked)
	if res.Status != http.StatusOK || unlinked.Removed != n {
		t.Fatalf("unlink: %d %s", res.Status, res.Body)
	}
}
