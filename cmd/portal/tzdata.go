package main

// The container image (Containerfile) is FROM scratch: it has no
// /usr/share/zoneinfo, so the time zone database is built in (about 450
// kB) for TZ and time.LoadLocation to work there as on any host.
import _ "time/tzdata"
