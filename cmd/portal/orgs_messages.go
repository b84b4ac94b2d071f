package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"

	"portal/engine/message"
)

// The message settings flags of `portal orgs set` (engine.MessageSettings).
const orgMessagesUsage = `message settings (orgs set; 0 or "" returns one to the default):
  --unpaid-reminder-days 3,10, --expiry-reminder-days N, --resume-after-hours N,
  --renewal-lead-days N, --sender-name NAME, --reply-to EMAIL`

// messageFlags are the message settings flags.
type messageFlags struct {
	unpaid, senderName, replyTo   string
	expiry, resumeAfter, leadDays int
}

func (f *messageFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.unpaid, "unpaid-reminder-days", "", "days after the commit an unpaid order is reminded, comma-separated")
	fs.IntVar(&f.expiry, "expiry-reminder-days", 0, "days before a period ends that members are reminded")
	fs.IntVar(&f.resumeAfter, "resume-after-hours", 0, "idle hours before a registration is suspended and its member gets a link back")
	fs.IntVar(&f.leadDays, "renewal-lead-days", 0, "days before the ending period's end from which renewal prompts go out")
	fs.StringVar(&f.senderName, "sender-name", "", "From name of the organisation's e-mail")
	fs.StringVar(&f.replyTo, "reply-to", "", "Reply-To address of the organisation's e-mail")
}

// change builds the change from the flags given; nil when none was.
func (f *messageFlags) change(fs *flag.FlagSet) (*message.SettingsChange, error) {
	var c message.SettingsChange
	given := false
	var err error
	fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "unpaid-reminder-days":
			days := []int{}
			for _, s := range strings.Split(f.unpaid, ",") {
				if s = strings.TrimSpace(s); s == "" {
					continue
				}
				d, perr := strconv.Atoi(s)
				if perr != nil {
					err = fmt.Errorf("--unpaid-reminder-days: %q is not a number of days", s)
				}
				days = append(days, d)
			}
			c.UnpaidReminderDays = &days
		case "expiry-reminder-days":
			c.ExpiryReminderDays = &f.expiry
		case "resume-after-hours":
			c.ResumeAfterHours = &f.resumeAfter
		case "renewal-lead-days":
			c.RenewalLeadDays = &f.leadDays
		case "sender-name":
			c.SenderName = &f.senderName
		case "reply-to":
			c.ReplyTo = &f.replyTo
		default:
			return
		}
		given = true
	})
	if err != nil || !given {
		return nil, err
	}
	return &c, nil
}
