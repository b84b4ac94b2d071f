package handlers_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"portal/engine/dbtest"
	"portal/handlers/handlertest"
)

// TestE2ERegistrationInGerman goes through the whole registration in
// German, chosen with the language switcher, with htmx: every page in
// German, axe-clean, and a switch to French and back in the middle keeps
// every answer. PORTAL_DOCS_SCREENSHOTS=1 also writes docs/MEMBER-PAGES.md's
// docs/img/language-{en,de}.png.
func TestE2ERegistrationInGerman(t *testing.T) {
	t.Parallel()
	e2eRegistrationInLanguage(t, "de", true)
}

// TestE2ERegistrationInFrench is the same in French, without JavaScript:
// the switcher is a plain link. PORTAL_DOCS_SCREENSHOTS=1 writes
// docs/img/language-fr.png.
func TestE2ERegistrationInFrench(t *testing.T) {
	t.Parallel()
	e2eRegistrationInLanguage(t, "fr", false)
}

// languageFlowTexts are the texts the flow checks, per language.
// (innerText, which the checks read, writes French no-break spaces as spaces.)
var languageFlowTexts = map[string]struct {
	available, question1, progress1, required, review, done, success string
}{
	"de": {available: "Verfügbar", question1: "Telefonnummer für Notfälle", progress1: "Frage 1 von 8",
		required: "Die Telefonnummer muss aus 10 Ziffern bestehen", review: "Bestätigen und bezahlen",
		done: "Anmeldung gespeichert: Bezahlen Sie, um abzuschliessen", success: "Zahlung erhalten: Anmeldung abgeschlossen"},
	"fr": {available: "Disponible", question1: "Numéro de téléphone en cas d’urgence", progress1: "Question 1 sur 8",
		required: "Le numéro de téléphone doit comporter 10 chiffres", review: "Confirmer et payer",
		done: "Inscription enregistrée : payez pour terminer", success: "Paiement reçu : inscription terminée"},
}

func e2eRegistrationInLanguage(t *testing.T, code string, js bool) {
	env := handlertest.NewEnv(t, dbtest.SQLite(t))
	b := newE2EBrowser(t, env, "language-"+code, js, true)
	want := languageFlowTexts[code]
	base := "/membership/register/1"
	expectLang := func(where, l string) {
		t.Helper()
		if got := b.attr(`html`, "lang"); got != l {
			t.Errorf("%s: <html lang=%q>, want %s", where, got, l)
		}
	}
	// switchTo follows the switcher's link and waits for the page in l.
	switchTo := func(l, waitFor string) {
		t.Helper()
		b.click(`[data-testid=lang-` + l + `]`)
		b.waitVisible(`html[lang=` + l + `] ` + waitFor)
		b.settled()
	}
	docsShot := func(name string) {
		if os.Getenv("PORTAL_DOCS_SCREENSHOTS") != "1" {
			return
		}
		b.do("viewport", chromedp.EmulateViewport(960, 900))
		page := e2eRun(b, "screenshot", chromedp.FullScreenshot(100))
		if err := os.WriteFile(filepath.Join(e2eModuleRoot(t), "docs", "img", name), page, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	b.arrive(false)
	expectLang("overview", "en")
	switchTo(code, `[data-testid=overview]`)
	b.expectStatuses(map[string]string{"Alex Morgan": want.available})
	if got := b.attr(`[data-testid=lang-`+code+`]`, "aria-current"); got != "true" {
		t.Errorf("the switcher does not mark %s as current (%q)", code, got)
	}
	b.checkPage("overview")

	b.clickTo(`[data-testid=start]`, stepSel(0))
	expectLang("persons", code)
	b.checkPage("persons")
	b.click(`#answer-1`)
	b.click(`#answer-3`)
	b.clickTo(`[data-testid=submit]`, stepSel(1))

	if got := b.text(`[data-testid=question]`); got != want.question1 {
		t.Errorf("question 1 %q, want %q", got, want.question1)
	}
	if got := b.text(`[data-testid=progress]`); got != want.progress1 {
		t.Errorf("progress %q, want %q", got, want.progress1)
	}
	b.typeInto(`#answer-1`, "12345")
	b.typeInto(`#answer-3`, "0687654321")
	b.clickTo(`[data-testid=submit]`, `[data-testid=error-summary]`)
	if got := b.text(`#answer-1-error`); got != want.required {
		t.Errorf("inline error %q, want %q", got, want.required)
	}
	if title := e2eEval[string](b, "document.title"); strings.HasPrefix(title, "Error:") || !strings.Contains(title, ":") {
		t.Errorf("error title %q", title)
	}
	b.checkPage("question-1-error")
	b.typeInto(`#answer-1`, "0612345678")
	b.clickTo(`[data-testid=submit]`, stepSel(2))

	b.checkPage("question-2")
	docsShot("language-" + code + ".png")
	if code == "de" {
		switchTo("en", stepSel(2))
		docsShot("language-en.png")
		switchTo("de", stepSel(2))
	}
	b.do("choose shirt sizes", chromedp.SetValue(chromedp.CSS(`#answer-1`), "M"), chromedp.SetValue(chromedp.CSS(`#answer-3`), "S"))
	b.clickTo(`[data-testid=submit]`, stepSel(3))
	b.click(`#answer-1`)
	b.clickTo(`[data-testid=submit]`, stepSel(4))

	// Switching language mid-registration keeps every answer.
	other := map[string]string{"de": "fr", "fr": "de"}[code]
	switchTo(other, stepSel(4))
	expectLang("question 4 after the switch", other)
	b.clickTo(`[data-testid=back]`, stepSel(3))
	if !b.checked(`#answer-1`) || b.checked(`#answer-3`) {
		t.Errorf("after switching to %s, question 3 lost its answers", other)
	}
	b.clickTo(`[data-testid=back]`, stepSel(2))
	if got := e2eEval[string](b, `document.querySelector("#answer-1").value + document.querySelector("#answer-3").value`); got != "MS" {
		t.Errorf("after switching to %s, question 2's answers are %q, want M and S", other, got)
	}
	b.clickTo(`[data-testid=back]`, stepSel(1))
	if got := e2eEval[string](b, `document.querySelector("#answer-1").value`); got != "0612345678" {
		t.Errorf("after switching to %s, question 1's answer is %q", other, got)
	}
	switchTo(code, stepSel(1))
	for n := 2; n <= 4; n++ {
		b.clickTo(`[data-testid=submit]`, stepSel(n))
	}
	b.checkPage("question-4")
	b.clickTo(`[data-testid=submit]`, stepSel(6)) // nobody transfers: "Which club?" is left out
	b.checkPage("question-6")
	b.click(`#answer-3`)
	b.clickTo(`[data-testid=submit]`, stepSel(7))
	b.checkPage("question-7")
	b.click(`#answer-1`)
	b.clickTo(`[data-testid=submit]`, stepSel(8))
	b.checkPage("question-8")
	b.click(`#answer-1`)
	b.click(`#answer-3`)
	b.clickTo(`[data-testid=submit]`, `[data-testid=review]`)
	expectLang("review", code)
	if got := b.text(`[data-testid=confirm]`); got != want.review {
		t.Errorf("confirm button %q, want %q", got, want.review)
	}
	b.checkPage("review")
	b.clickTo(`[data-testid=confirm]`, `[data-testid=done]`)
	if got := b.text(`[data-testid=done] h1`); got != want.done {
		t.Errorf("done heading %q, want %q", got, want.done)
	}
	if js {
		b.waitPath("/dev/pay/", 15*time.Second) // the countdown leaves by itself
	} else {
		b.checkPage("done")
		b.click(`[data-testid=pay-now]`)
	}
	b.waitVisible(`[data-testid=pay-page]`)
	b.clickTo(`[data-testid=pay-success]`, `[data-testid=payment-return][data-outcome=success]`)
	expectLang("payment return", code)
	if got := b.text(`[data-testid=payment-return] h1`); got != want.success {
		t.Errorf("payment return heading %q, want %q", got, want.success)
	}
	b.checkPage("payment-success")
	b.navigate(base)
	b.waitVisible(`[data-testid=overview]`)
	expectLang("overview after payment", code)
}
