package handlers_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"portal/engine"
	"portal/engine/dbtest"
	"portal/engine/staff"
	"portal/handlers/handlertest"
)

// longEmail is an address too long for one line of a 390 px phone: the
// registration page must break it before its "@", not inside a word.
const longEmail = "alexandra.featherstonehaugh.smith@membership.riversiderowingclub.example"

// e2eEmailBreaks lists the e-mail addresses of the household that break
// anywhere but before their "@", or stick out of their box. (The
// history's recipients break there too, and inside a word only where
// a part is wider than the timeline's column.)
const e2eEmailBreaks = `(() => {
	const out = [];
	for (const el of document.querySelectorAll('[data-testid=person-email]')) {
		const tops = [], chars = [];
		const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
		for (let n = walk.nextNode(); n; n = walk.nextNode()) {
			for (let i = 0; i < n.length; i++) {
				const r = document.createRange();
				r.setStart(n, i);
				r.setEnd(n, i + 1);
				const rect = r.getClientRects()[0];
				if (rect) { tops.push(rect.top); chars.push(n.data[i]); }
			}
		}
		for (let i = 1; i < tops.length; i++) {
			if (tops[i] > tops[i - 1] + 2 && chars[i] !== '@') out.push(el.textContent + ' breaks before ' + chars.slice(i).join(''));
		}
		if (el.scrollWidth > el.clientWidth + 1) out.push(el.textContent + ' overflows its box');
	}
	return out;
})()`

// e2eOverflowing names the elements that reach past the window's right edge.
const e2eOverflowing = `[...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > window.innerWidth + 1).
	map(e => e.tagName.toLowerCase() + (e.dataset.testid ? '[' + e.dataset.testid + ']' : '') + ' ' + e.className).slice(0, 10)`

// TestE2EStaffRegistrationAtPhoneWidth: at 390 px a registration's page,
// with a part of its transfer captured, fits the window (nothing scrolls
// sideways) and a long e-mail address breaks before its "@".
func TestE2EStaffRegistrationAtPhoneWidth(t *testing.T) {
	t.Parallel()
	env := handlertest.BankTransferStaffEnv(t, dbtest.SQLite(t))
	env.CompleteDemo(env.NewClient())
	if _, err := env.DB.NewUpdate().Model((*engine.Person)(nil)).Set("email = ?", longEmail).Where("email <> ''").Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
	env.AddStaff("treasurer@example.org", staff.RoleTreasurer)
	b := newE2EBrowser(t, env.Env, "staff-registration-390", true, true)
	staffBrowserSignIn(env, b, "treasurer@example.org", `[data-testid=overview-states]`)
	b.navigate("/staff/registrations?state=awaiting_payment")
	b.clickTo(`[data-testid=registration-link]`, `[data-testid=capture-form]`)
	b.do("part", chromedp.SetValue(`#amount`, "10.00"))
	b.clickTo(`[data-testid=capture-submit]`, `[data-testid=staff-flash]`)
	if got := b.text(`[data-testid=staff-flash]`); !strings.Contains(got, "still owed") {
		t.Fatalf("after a part: %q", got)
	}
	b.do("viewport", chromedp.EmulateViewport(390, 900))
	if n := b.count(`[data-testid=person-email]`); n == 0 {
		t.Fatal("no e-mail address shown")
	}
	if scroll, width := e2eEval[int](b, "document.documentElement.scrollWidth"), e2eEval[int](b, "window.innerWidth"); scroll > width {
		t.Errorf("the page is %d px wide in a %d px window; past the edge: %v", scroll, width, e2eEval[[]string](b, e2eOverflowing))
	}
	if bad := e2eEval[[]string](b, e2eEmailBreaks); len(bad) > 0 {
		t.Errorf("e-mail addresses at 390 px: %v", bad)
	}
	b.checkPage("staff-registration-390")
}
