package deploy_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"portal/cmd/portal/config"
)

// drainGrace is how long serve lets requests and jobs in hand finish after
// PORTAL_SHUTDOWN_DELAY with the default relay timeouts (5 s + 30 s + 30 s,
// cmd/portal's serveTimeouts); a pod or unit must be given longer to stop.
const drainGrace = 65 * time.Second

// checkSetting checks that name is a setting the portal reads: one of
// config.Variables (what docs/CONFIGURATION.md documents, held to it by
// cmd/portal/config's test) or the _FILE of a secret one. plain says the
// value is given as is, which a secret's must not be in an example.
func checkSetting(t *testing.T, where, name string, plain bool) {
	t.Helper()
	for _, v := range config.Variables() {
		switch name {
		case v.Name:
			if v.Secret && plain {
				t.Errorf("%s sets the secret %s in plain text; read it from a file (%s_FILE)", where, name, name)
			}
			return
		case v.Name + "_FILE":
			if !v.Secret {
				t.Errorf("%s sets %s, but %s is not a secret: the portal does not read %s", where, name, v.Name, name)
			}
			return
		}
	}
	t.Errorf("%s sets %s, which is no setting of the portal (docs/CONFIGURATION.md)", where, name)
}

// TestSystemdUnit: the example unit and its environment file set only
// settings the portal reads, secrets only as credentials read through
// _FILE, every credential named is loaded and every one loaded is used;
// systemd-analyze verify finds nothing wrong and its security review rates
// the unit's exposure at most 2.0 ("OK").
func TestSystemdUnit(t *testing.T) {
	unit, err := os.ReadFile("systemd/portal.service")
	if err != nil {
		t.Fatal(err)
	}
	credentials := map[string]bool{} // loaded: used?
	var fileSettings []string        // credential names the _FILE settings read
	environment := regexp.MustCompile(`^Environment=(PORTAL_[A-Z0-9_]+)=(.*)$`)
	for _, line := range strings.Split(string(unit), "\n") {
		if name, ok := strings.CutPrefix(line, "LoadCredential="); ok {
			name, _, _ = strings.Cut(name, ":")
			credentials[name] = false
		}
		if strings.HasPrefix(line, "Environment=") {
			m := environment.FindStringSubmatch(line)
			if m == nil {
				t.Errorf("portal.service: %q sets no PORTAL_ setting (one per line, unquoted)", line)
				continue
			}
			checkSetting(t, "portal.service", m[1], !strings.HasSuffix(m[1], "_FILE"))
			if strings.HasSuffix(m[1], "_FILE") {
				cred, ok := strings.CutPrefix(m[2], "%d/")
				if !ok {
					t.Errorf("portal.service: %s is %q, not a credential (%%d/NAME)", m[1], m[2])
				}
				fileSettings = append(fileSettings, cred)
			}
		}
	}
	for _, cred := range fileSettings {
		if _, ok := credentials[cred]; !ok {
			t.Errorf("portal.service reads the credential %s, which no LoadCredential= loads", cred)
		}
		credentials[cred] = true
	}
	for cred, used := range credentials {
		if !used {
			t.Errorf("portal.service loads the credential %s, which no _FILE setting reads", cred)
		}
	}
	env, err := os.ReadFile("systemd/portal.env")
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(env))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, _, ok := strings.Cut(line, "=")
		if !ok {
			t.Errorf("portal.env: %q is not VARIABLE=value", line)
			continue
		}
		checkSetting(t, "portal.env", name, true)
	}

	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed: the unit's settings were checked, not the unit itself (apt-get install systemd)")
	}
	// verify wants ExecStart's binary to exist; this machine has no
	// /usr/local/bin/portal, so the copy it checks starts another
	// executable, and is otherwise the example as written.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	copied := strings.Replace(string(unit), "ExecStart=/usr/local/bin/portal ", "ExecStart="+self+" ", 1)
	if copied == string(unit) {
		t.Fatal("portal.service does not start /usr/local/bin/portal serve")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "portal.service")
	if err := os.WriteFile(file, []byte(copied), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(analyze, "verify", file).CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("systemd-analyze verify portal.service: %v\n%s", err, out)
	}
	out, err := exec.Command(analyze, "security", "--offline=yes", "--threshold=20", file).CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	overall := regexp.MustCompile(`Overall exposure level for portal.service: .*`).Find(out)
	t.Logf("systemd-analyze security: %s", overall)
	if err != nil || overall == nil {
		t.Errorf("systemd-analyze security rates portal.service above 2.0 (or failed: %v):\n%s", err, out)
	}
}

// Just what the test reads of the Kubernetes objects.
type (
	object struct {
		Kind     string `yaml:"kind"`
		Metadata struct {
			Name string `yaml:"name"`
		} `yaml:"metadata"`
	}
	secret struct {
		StringData map[string]string `yaml:"stringData"`
		Data       map[string]string `yaml:"data"`
	}
	service struct {
		Spec struct {
			Selector map[string]string `yaml:"selector"`
			Ports    []struct {
				TargetPort string `yaml:"targetPort"`
			} `yaml:"ports"`
		} `yaml:"spec"`
	}
	deployment struct {
		Spec struct {
			Replicas int `yaml:"replicas"`
			Selector struct {
				MatchLabels map[string]string `yaml:"matchLabels"`
			} `yaml:"selector"`
			Template struct {
				Metadata struct {
					Labels map[string]string `yaml:"labels"`
				} `yaml:"metadata"`
				Spec struct {
					TerminationGracePeriodSeconds int `yaml:"terminationGracePeriodSeconds"`
					SecurityContext               struct {
						RunAsNonRoot bool `yaml:"runAsNonRoot"`
					} `yaml:"securityContext"`
					Containers []container `yaml:"containers"`
					Volumes    []struct {
						Name   string `yaml:"name"`
						Secret *struct {
							SecretName string `yaml:"secretName"`
						} `yaml:"secret"`
					} `yaml:"volumes"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	container struct {
		Name  string   `yaml:"name"`
		Args  []string `yaml:"args"`
		Ports []struct {
			Name          string `yaml:"name"`
			ContainerPort int    `yaml:"containerPort"`
		} `yaml:"ports"`
		Env []struct {
			Name      string     `yaml:"name"`
			Value     *string    `yaml:"value"`
			ValueFrom *yaml.Node `yaml:"valueFrom"`
		} `yaml:"env"`
		VolumeMounts []struct {
			Name      string `yaml:"name"`
			MountPath string `yaml:"mountPath"`
		} `yaml:"volumeMounts"`
		ReadinessProbe *probe `yaml:"readinessProbe"`
		LivenessProbe  *probe `yaml:"livenessProbe"`
	}
	probe struct {
		HTTPGet struct {
			Path string `yaml:"path"`
			Port string `yaml:"port"`
		} `yaml:"httpGet"`
	}
)

// TestKubernetesManifests: every document in deploy/kubernetes parses; the
// Deployment runs two replicas of portal serve as non-root with /readyz as
// its readiness and /healthz as its liveness probe on the port it listens
// on, sets only settings the portal reads, secrets only as files of the
// mounted Secret, each a key the Secret has (and each key used); the
// Service reaches the Deployment's pods on that port; the pods get longer
// to stop than serve's drain takes.
func TestKubernetesManifests(t *testing.T) {
	files, err := filepath.Glob("kubernetes/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in deploy/kubernetes: %v", err)
	}
	docs := map[string]*yaml.Node{} // by kind
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(f)
		for {
			var doc yaml.Node
			if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			var o object
			if err := doc.Decode(&o); err != nil || o.Kind == "" || o.Metadata.Name == "" {
				t.Fatalf("%s: a document without kind or name (%v)", file, err)
			}
			if docs[o.Kind] != nil {
				t.Errorf("%s: a second %s", file, o.Kind)
			}
			docs[o.Kind] = &doc
		}
		f.Close()
	}
	var (
		d   deployment
		s   secret
		svc service
	)
	for kind, into := range map[string]any{"Deployment": &d, "Secret": &s, "Service": &svc} {
		if docs[kind] == nil {
			t.Fatalf("deploy/kubernetes has no %s", kind)
		}
		if err := docs[kind].Decode(into); err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
	}
	var secretName object
	docs["Secret"].Decode(&secretName)

	spec := d.Spec.Template.Spec
	if d.Spec.Replicas != 2 {
		t.Errorf("the Deployment runs %d replicas, want 2", d.Spec.Replicas)
	}
	if !spec.SecurityContext.RunAsNonRoot {
		t.Error("the Deployment's pods do not require runAsNonRoot")
	}
	labels := d.Spec.Template.Metadata.Labels
	if len(d.Spec.Selector.MatchLabels) == 0 || !subset(d.Spec.Selector.MatchLabels, labels) {
		t.Errorf("the Deployment's selector %v does not select its pods %v", d.Spec.Selector.MatchLabels, labels)
	}
	if len(svc.Spec.Selector) == 0 || !subset(svc.Spec.Selector, labels) {
		t.Errorf("the Service's selector %v does not select the Deployment's pods %v", svc.Spec.Selector, labels)
	}
	if len(spec.Containers) != 1 {
		t.Fatalf("the Deployment's pods have %d containers, want the portal alone", len(spec.Containers))
	}
	c := spec.Containers[0]
	if len(c.Args) > 0 && !slices.Equal(c.Args, []string{"serve"}) {
		t.Errorf("the container runs %v, want the image's default, serve", c.Args)
	}

	// Settings, and the files the secret ones are read from.
	mounts := map[string]bool{} // mount paths of the Secret
	for _, v := range spec.Volumes {
		if v.Secret == nil || v.Secret.SecretName != secretName.Metadata.Name {
			continue
		}
		for _, m := range c.VolumeMounts {
			if m.Name == v.Name {
				mounts[m.MountPath] = true
			}
		}
	}
	keys := map[string]bool{} // the Secret's keys: used?
	for k := range s.StringData {
		keys[k] = false
	}
	for k := range s.Data {
		keys[k] = false
	}
	addr, shutdownDelay := ":8080", time.Duration(0)
	for _, e := range c.Env {
		checkSetting(t, "the Deployment", e.Name, e.ValueFrom == nil)
		if e.Value == nil {
			continue
		}
		switch {
		case strings.HasSuffix(e.Name, "_FILE"):
			dir, key := path.Split(*e.Value)
			if _, ok := keys[key]; !ok || !mounts[strings.TrimSuffix(dir, "/")] {
				t.Errorf("the Deployment reads %s from %s, which is no key of the Secret %s where it is mounted", e.Name, *e.Value, secretName.Metadata.Name)
			}
			keys[key] = true
		case e.Name == "PORTAL_ADDR":
			addr = *e.Value
		case e.Name == "PORTAL_SHUTDOWN_DELAY":
			if shutdownDelay, err = time.ParseDuration(*e.Value); err != nil {
				t.Errorf("PORTAL_SHUTDOWN_DELAY: %v", err)
			}
		}
	}
	for k, used := range keys {
		if !used {
			t.Errorf("the Secret's key %s is read by no setting", k)
		}
	}
	if grace := time.Duration(spec.TerminationGracePeriodSeconds) * time.Second; grace <= shutdownDelay+drainGrace {
		t.Errorf("terminationGracePeriodSeconds is %s, not more than PORTAL_SHUTDOWN_DELAY (%s) and the drain (%s): Kubernetes would kill requests in flight", grace, shutdownDelay, drainGrace)
	}

	// Probes and the Service on the port the portal listens on.
	port := ""
	for _, p := range c.Ports {
		if ":"+strconv.Itoa(p.ContainerPort) == addr[strings.LastIndexByte(addr, ':'):] {
			port = p.Name
		}
	}
	if port == "" {
		t.Fatalf("no container port is the port of PORTAL_ADDR %s", addr)
	}
	for _, p := range []struct {
		name  string
		probe *probe
		path  string
	}{{"readiness", c.ReadinessProbe, "/readyz"}, {"liveness", c.LivenessProbe, "/healthz"}} {
		if p.probe == nil || p.probe.HTTPGet.Path != p.path || p.probe.HTTPGet.Port != port {
			t.Errorf("the %s probe is %+v, want GET %s on port %s", p.name, p.probe, p.path, port)
		}
	}
	for _, p := range svc.Spec.Ports {
		if p.TargetPort != port {
			t.Errorf("the Service targets port %q, want %q, where the portal listens", p.TargetPort, port)
		}
	}
}

// subset says every label of sel is in labels.
func subset(sel, labels map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}
