package tests

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a2aflow/a2aflow/tests/harness"
)

// The documentation's commands run here, as a reader would run them.
//
// TestDocs runs every shell command of README.md and docs/tutorial.md, in
// order, in one bash session per document (shell functions and variables
// carry from block to block, as in a reader's terminal), against an
// `a2aflow serve` of the test's own: on free ports, in a temporary folder,
// with this build of a2aflow first in PATH as `a2aflow` (and as
// bin/a2aflow). What the docs say to the reader, the test does:
//
//   - A ```sh block runs; a block marked ```sh norun does not (a docker
//     command, a cluster, a placeholder the reader fills in with their own
//     values). Every other block must run: one that cannot fails the test.
//   - Addresses: localhost:8080 (the API), :8233 (the Temporal UI) and
//     :7233 (the Temporal frontend) are rewritten to the test server's;
//     the session's A2AFLOW_HTTP_ADDR, A2AFLOW_UI_ADDR,
//     A2AFLOW_TEMPORAL_ADDR and A2AFLOW_DATA_DIR point there too, so
//     `a2aflow send` without --agent finds the local server, as a reader's
//     does on :8080.
//   - `make run` (and `a2aflow serve ...`) starts the server in the
//     background, as the reader does in a second terminal: `make -n run`
//     must build bin/a2aflow and run `bin/a2aflow serve`, then the test
//     runs its own build of the same command on its ports. The server must
//     not be running already (the docs stop it first, e.g. with kill -9).
//     `make test` and any other make target are checked with `make -n`, not
//     run: the target must exist and run what the docs say it runs.
//   - Placeholders are what the reader copies from earlier answers:
//     TASK_ID is the task the latest command that named no task started
//     (its "id", or the CLI's `Task ID`), APPROVAL_ID and WAITPOINT_ID the
//     latest ID-approval-N and ID-waitpoint-N shown, TOKEN the latest
//     "token". A placeholder used before any answer gave it fails the test.
//   - A command exits 0 unless its comment says otherwise, and keeps its
//     promises: a comment `# -> ...` (at the end of the command's last line,
//     or on the lines right after it) lists what the answer holds: each
//     "quoted phrase" and each TASK_STATE_* word must be in the output, and
//     `exit N` is the exit status it must have.
//
// TestDocs also checks the other docs without running them: each ```toml
// block of README.md, CONTRIBUTING.md and docs/ (not marked norun) is a
// config file `a2aflow config print` takes, and each `a2aflow COMMAND
// --flag` of their ```sh blocks names a command and flags this build has
// (a renamed flag's deprecated alias does not count), and each relative link
// names a file of the repository and, with a #fragment, one of its headings.
func TestDocs(t *testing.T) {
	t.Run("README", func(t *testing.T) { runDoc(t, "README.md") })
	t.Run("tutorial", func(t *testing.T) { runDoc(t, "docs/tutorial.md") })
	t.Run("config-files", checkDocConfigFiles)
	t.Run("commands", checkDocCommands)
	t.Run("links", checkDocLinks)
}

// repoRoot is the repository's root, the tests' parent folder.
func repoRoot(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// docBlock is a fenced code block of a Markdown file.
type docBlock struct {
	lang  string // the info string's first word: sh, toml, go...
	norun bool   // the info string says norun
	line  int    // of the opening fence, 1-based
	text  string
}

// docBlocks returns the fenced code blocks of a Markdown file.
func docBlocks(t testing.TB, path string) []docBlock {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []docBlock
	var cur *docBlock
	var body []string
	for i, line := range strings.Split(string(raw), "\n") {
		trimmed := strings.TrimSpace(line)
		if cur == nil {
			if info, ok := strings.CutPrefix(trimmed, "```"); ok && !strings.Contains(info, "`") {
				words := strings.Fields(info)
				cur = &docBlock{line: i + 1}
				if len(words) > 0 {
					cur.lang = words[0]
					cur.norun = slices.Contains(words[1:], "norun")
				}
				body = nil
			}
			continue
		}
		if trimmed == "```" {
			cur.text = strings.Join(body, "\n")
			blocks = append(blocks, *cur)
			cur = nil
			continue
		}
		// A block inside a list item is indented: drop the fence's indentation.
		body = append(body, strings.TrimPrefix(line, "   "))
	}
	if cur != nil {
		t.Fatalf("%s: the block at line %d is not closed", path, cur.line)
	}
	return blocks
}

// shellLangs are the info strings of shell blocks.
var shellLangs = []string{"sh", "bash", "shell", "console"}

// docCommand is one complete shell command of a block, with the checks its
// comments promise.
type docCommand struct {
	text       string
	line       int      // in the Markdown file
	wantStatus int      // exit status
	phrases    []string // in the output
}

var (
	expectRe   = regexp.MustCompile(`(?:^|\s)# ->(.*)$`)
	quotedRe   = regexp.MustCompile(`"([^"]+)"`)
	stateRe    = regexp.MustCompile(`\bTASK_STATE_[A-Z_]+\b`)
	exitRe     = regexp.MustCompile(`\bexit (\d+)\b`)
	heredocRe  = regexp.MustCompile(`<<-?\s*'?"?([A-Za-z_]+)'?"?`)
	uuidExpr   = `[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`
	taskIDRe   = regexp.MustCompile(`(?:"id":\s*"|Task )(` + uuidExpr + `)(?:"|\s)`)
	approvalRe = regexp.MustCompile(uuidExpr + `-approval-\d+`)
	waitRe     = regexp.MustCompile(uuidExpr + `-waitpoint-\d+`)
	tokenRe    = regexp.MustCompile(`"token":\s*"([^"]+)"`)
)

// splitCommands splits a shell block into complete commands, as bash reads
// them (a command may span lines: a quoted JSON body, a `\` continuation,
// a function, a here-document), and reads each one's `# ->` promises.
func splitCommands(t testing.TB, b docBlock) []docCommand {
	t.Helper()
	var cmds []docCommand
	var acc []string
	start := 0
	heredoc := ""
	for i, line := range strings.Split(b.text, "\n") {
		if len(acc) == 0 {
			if strings.TrimSpace(line) == "" {
				continue
			}
			start = b.line + 1 + i
		}
		acc = append(acc, line)
		if heredoc != "" {
			if strings.TrimSpace(line) == heredoc {
				heredoc = ""
			} else {
				continue
			}
		} else if m := heredocRe.FindStringSubmatch(line); m != nil && !strings.HasPrefix(strings.TrimSpace(line), "#") {
			heredoc = m[1]
			continue
		}
		if strings.HasSuffix(line, `\`) {
			continue
		}
		check := exec.Command("bash", "-n")
		check.Stdin = strings.NewReader(strings.Join(acc, "\n") + "\n")
		if check.Run() != nil {
			continue // an open quote, brace or function: read on
		}
		text := strings.Join(acc, "\n")
		acc = nil
		comment := true
		for _, l := range strings.Split(text, "\n") {
			if !strings.HasPrefix(strings.TrimSpace(l), "#") {
				comment = false
			}
		}
		if comment {
			// A comment alone: its promises are the previous command's.
			if len(cmds) > 0 && strings.Contains(text, "# ->") {
				readPromises(&cmds[len(cmds)-1], text)
			}
			continue
		}
		c := docCommand{text: text, line: start}
		readPromises(&c, text)
		cmds = append(cmds, c)
	}
	if len(acc) > 0 {
		t.Fatalf("line %d: this command does not end: %s", start, strings.Join(acc, "\n"))
	}
	return cmds
}

// readPromises adds the promises of text's `# ->` comments to c.
func readPromises(c *docCommand, text string) {
	for _, line := range strings.Split(text, "\n") {
		m := expectRe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		promise := m[1]
		if e := exitRe.FindStringSubmatch(promise); e != nil {
			c.wantStatus, _ = strconv.Atoi(e[1])
		}
		for _, q := range quotedRe.FindAllStringSubmatch(promise, -1) {
			c.phrases = append(c.phrases, q[1])
		}
		c.phrases = append(c.phrases, stateRe.FindAllString(promise, -1)...)
	}
}

// docSession is a reader's terminal: one bash, the server they started in
// another terminal, and the IDs they copied from answers.
type docSession struct {
	t                 *testing.T
	doc               string
	dir               string // the reader's working directory
	env               []string
	api, ui, temporal int // the server's ports
	server            *harness.Proc
	bash              *exec.Cmd
	stdin             io.WriteCloser
	statuses          chan string
	vars              map[string]string
	outputs           int
}

func newDocSession(t *testing.T, doc string) *docSession {
	s := &docSession{t: t, doc: doc, dir: t.TempDir(), vars: map[string]string{}}
	s.api, s.ui, s.temporal = harness.FreePort(t), harness.FreePort(t), harness.FreePort(t)
	bin := filepath.Join(s.dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(harness.Binary(), filepath.Join(bin, "a2aflow")); err != nil {
		t.Fatal(err)
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "A2AFLOW_") || strings.HasPrefix(k, "TEMPORAL_") || strings.HasPrefix(k, "OTEL_") ||
			k == "OPENAI_API_KEY" || k == "OPENAI_BASE_URL" || k == "ANTHROPIC_API_KEY" || k == "PATH" {
			continue
		}
		s.env = append(s.env, kv)
	}
	s.env = append(s.env,
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		fmt.Sprintf("A2AFLOW_HTTP_ADDR=127.0.0.1:%d", s.api),
		fmt.Sprintf("A2AFLOW_UI_ADDR=127.0.0.1:%d", s.ui),
		fmt.Sprintf("A2AFLOW_TEMPORAL_ADDR=127.0.0.1:%d", s.temporal),
		"A2AFLOW_DATA_DIR="+filepath.Join(s.dir, "data"),
	)

	s.bash = exec.Command("bash", "--noprofile", "--norc")
	s.bash.Dir, s.bash.Env = s.dir, s.env
	var err error
	if s.stdin, err = s.bash.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := s.bash.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr harness.SyncBuffer
	s.bash.Stderr = &stderr
	if err := s.bash.Start(); err != nil {
		t.Fatal(err)
	}
	s.statuses = make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			s.statuses <- sc.Text()
		}
		close(s.statuses)
	}()
	t.Cleanup(func() {
		s.stdin.Close()
		done := make(chan struct{})
		go func() { _ = s.bash.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = s.bash.Process.Kill()
		}
		if t.Failed() && stderr.String() != "" {
			t.Logf("the session's bash said on stderr:\n%s", stderr.String())
		}
	})
	return s
}

// rewrite gives a command the test server's addresses and the IDs the
// earlier answers gave.
func (s *docSession) rewrite(text string, line int) string {
	text = strings.ReplaceAll(text, ":8080", fmt.Sprintf(":%d", s.api))
	text = strings.ReplaceAll(text, ":8233", fmt.Sprintf(":%d", s.ui))
	text = strings.ReplaceAll(text, ":7233", fmt.Sprintf(":%d", s.temporal))
	for _, name := range []string{"APPROVAL_ID", "WAITPOINT_ID", "TASK_ID", "TOKEN"} {
		if !strings.Contains(text, name) {
			continue
		}
		v, ok := s.vars[name]
		if !ok {
			s.t.Fatalf("%s:%d uses %s, which no earlier answer gave:\n%s", s.doc, line, name, text)
		}
		text = strings.ReplaceAll(text, name, v)
	}
	return text
}

// learn keeps the IDs an answer shows, as a reader copies them.
func (s *docSession) learn(cmd, out string) {
	if !strings.Contains(cmd, "TASK_ID") {
		if m := taskIDRe.FindStringSubmatch(out); m != nil {
			s.vars["TASK_ID"] = m[1]
		}
	}
	if m := approvalRe.FindString(out); m != "" {
		s.vars["APPROVAL_ID"] = m
	}
	if m := waitRe.FindString(out); m != "" {
		s.vars["WAITPOINT_ID"] = m
	}
	if m := tokenRe.FindStringSubmatch(out); m != nil {
		s.vars["TOKEN"] = m[1]
	}
}

// serverRunning reports whether the server the docs started still runs.
func (s *docSession) serverRunning() bool {
	if s.server == nil {
		return false
	}
	select {
	case <-s.server.Done:
		return false
	default:
		return true
	}
}

// startServer runs command (an `a2aflow serve ...` of the docs) in the
// background, as the reader does in a second terminal, and waits until
// the API is ready.
func (s *docSession) startServer(command string, line int) {
	s.t.Helper()
	if s.server != nil {
		// A server the docs just killed may take a moment to be gone.
		select {
		case <-s.server.Done:
		case <-time.After(5 * time.Second):
		}
	}
	if s.serverRunning() {
		s.t.Fatalf("%s:%d starts the server while it runs (the reader's would fail: address in use); stop it first:\n%s", s.doc, line, command)
	}
	s.t.Logf("%s:%d: $ %s  (in the background)", s.doc, line, command)
	p := harness.StartProgram(s.t, "bash", "docs server", s.env, "-c", fmt.Sprintf("cd %q && exec %s", s.dir, command))
	p.WaitOutput("a2aflow is serving", 2*time.Minute)
	harness.WaitHealthy(s.t, fmt.Sprintf("http://127.0.0.1:%d", s.api))
	s.server = p
}

// checkMake checks a make command of the docs with `make -n`: the target
// exists and runs what the docs say.
func (s *docSession) checkMake(command string, line int) (target string) {
	s.t.Helper()
	fields := strings.Fields(strings.SplitN(command, "#", 2)[0])
	if len(fields) != 2 {
		s.t.Fatalf("%s:%d: a make command of the docs names one target: %s", s.doc, line, command)
	}
	target = fields[1]
	s.t.Logf("%s:%d: $ make -n %s  (checked, not run)", s.doc, line, target)
	dry := exec.Command("make", "-n", target)
	dry.Dir = repoRoot(s.t)
	out, err := dry.CombinedOutput()
	if err != nil {
		s.t.Fatalf("%s:%d: make -n %s: %v\n%s", s.doc, line, target, err, out)
	}
	want := map[string][]string{
		"run":  {"go build", "-trimpath", "-ldflags='-s -w'", "bin/a2aflow serve"},
		"test": {"go vet", "workflowcheck", "go test -race", "./tests/"},
	}[target]
	for _, w := range want {
		if !strings.Contains(string(out), w) {
			s.t.Errorf("%s:%d: make %s does not run %q; make -n %s:\n%s", s.doc, line, target, w, target, out)
		}
	}
	return target
}

// run runs one command of the docs in the session and checks its promises.
func (s *docSession) run(c docCommand) {
	s.t.Helper()
	command := s.rewrite(c.text, c.line)
	first := strings.Fields(command)[0]
	switch {
	case first == "make":
		if s.checkMake(command, c.line) == "run" {
			s.startServer("a2aflow serve", c.line)
		}
		return
	case regexp.MustCompile(`^(\./)?(bin/)?a2aflow serve\b`).MatchString(command):
		s.startServer(strings.SplitN(command, " #", 2)[0], c.line)
		return
	}

	s.outputs++
	outFile := filepath.Join(s.t.TempDir(), fmt.Sprintf("out-%d", s.outputs))
	script := fmt.Sprintf("{\n%s\n} </dev/null >%q 2>&1\nprintf '%%d\\n' $?\n", command, outFile)
	if _, err := io.WriteString(s.stdin, script); err != nil {
		s.t.Fatalf("%s:%d: the session's bash is gone: %v", s.doc, c.line, err)
	}
	var status string
	select {
	case st, ok := <-s.statuses:
		if !ok {
			s.t.Fatalf("%s:%d: the session's bash exited on:\n%s", s.doc, c.line, command)
		}
		status = st
	case <-time.After(90 * time.Second):
		s.t.Fatalf("%s:%d: no answer within 90 s:\n%s", s.doc, c.line, command)
	}
	raw, _ := os.ReadFile(outFile)
	out := string(raw)
	s.t.Logf("%s:%d: $ %s\n%s", s.doc, c.line, command, out)
	code, err := strconv.Atoi(status)
	if err != nil {
		s.t.Fatalf("%s:%d: the session printed %q for the exit status", s.doc, c.line, status)
	}
	if code != c.wantStatus {
		s.t.Fatalf("%s:%d: exit status %d, want %d (say `# -> exit N` where the docs expect another):\n$ %s\n%s", s.doc, c.line, code, c.wantStatus, command, out)
	}
	for _, p := range c.phrases {
		if p = s.rewrite(p, c.line); !strings.Contains(out, p) {
			s.t.Errorf("%s:%d: the answer does not hold %q, which the docs promise:\n$ %s\n%s", s.doc, c.line, p, command, out)
		}
	}
	if s.t.Failed() {
		s.t.FailNow()
	}
	s.learn(c.text, out)
}

// runDoc runs every shell command of the Markdown file doc.
func runDoc(t *testing.T, doc string) {
	for _, tool := range []string{"bash", "curl", "lsof", "make"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed; the docs' commands use it (.ci/run installs it)", tool)
		}
	}
	s := newDocSession(t, doc)
	ran := 0
	for _, b := range docBlocks(t, filepath.Join(repoRoot(t), doc)) {
		if !slices.Contains(shellLangs, b.lang) || b.norun {
			continue
		}
		for _, c := range splitCommands(t, b) {
			s.run(c)
			ran++
		}
	}
	if ran == 0 {
		t.Fatalf("%s has no shell command to run", doc)
	}
	t.Logf("%s: %d commands ran", doc, ran)
}

// docFiles are the Markdown files whose config files and commands are
// checked: the README, CONTRIBUTING.md and docs/ (the generated references
// excepted: the code writes them).
func docFiles(t *testing.T) []string {
	root := repoRoot(t)
	files := []string{filepath.Join(root, "README.md"), filepath.Join(root, "CONTRIBUTING.md")}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") && d.Name() != "cli.md" && d.Name() != "config.md" {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// checkDocConfigFiles: every ```toml block of the docs is a config file
// a2aflow takes (`config print` refuses unknown keys and bad values).
func checkDocConfigFiles(t *testing.T) {
	root := repoRoot(t)
	checked := 0
	for _, file := range docFiles(t) {
		rel, _ := filepath.Rel(root, file)
		for _, b := range docBlocks(t, file) {
			if b.lang != "toml" || b.norun {
				continue
			}
			path := filepath.Join(t.TempDir(), "a2aflow.toml")
			if err := os.WriteFile(path, []byte(b.text), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := harness.Command("config", "print", "serve", "--config", path)
			cmd.Env = append(os.Environ(), "A2AFLOW_CONFIG=")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("%s:%d: the config file is refused (mark the block `toml norun` if it is not a2aflow's): %v\n%s", rel, b.line, err, out)
			}
			checked++
		}
	}
	t.Logf("%d config files checked", checked)
}

// shellWords splits a command line as a shell would, near enough for the
// docs: quotes group, a comment ends the line.
func shellWords(line string) []string {
	var words []string
	var cur strings.Builder
	in := false
	var quote rune
	for _, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == '#' && !in:
			return words
		case r == ' ' || r == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

// commandHelp is what `a2aflow PATH --help` says a command has.
type commandHelp struct {
	subcommands, flags map[string]bool
}

// checkDocCommands: each `a2aflow COMMAND --flag...` of the docs' shell
// blocks names a command and flags this build has.
func checkDocCommands(t *testing.T) {
	root := repoRoot(t)
	helps := map[string]*commandHelp{}
	help := func(path []string) *commandHelp {
		key := strings.Join(path, " ")
		if h, ok := helps[key]; ok {
			return h
		}
		out, err := harness.Command(append(path, "--help")...).CombinedOutput()
		h := &commandHelp{subcommands: map[string]bool{}, flags: map[string]bool{}}
		if err == nil {
			section := ""
			for _, line := range strings.Split(string(out), "\n") {
				switch {
				case strings.HasSuffix(line, ":") && !strings.HasPrefix(line, " "):
					section = line
				case section == "Available Commands:":
					if f := strings.Fields(line); len(f) > 0 {
						h.subcommands[f[0]] = true
					}
				case section == "Aliases:":
					for _, a := range strings.Split(strings.TrimSpace(line), ", ") {
						h.subcommands[a] = true
					}
				case section == "Flags:" || section == "Global Flags:":
					for _, m := range regexp.MustCompile(`--([a-z0-9-]+)`).FindAllStringSubmatch(line, 1) {
						h.flags[m[1]] = true
					}
				}
			}
		}
		helps[key] = h
		return h
	}
	checked := 0
	for _, file := range docFiles(t) {
		rel, _ := filepath.Rel(root, file)
		for _, b := range docBlocks(t, file) {
			if !slices.Contains(shellLangs, b.lang) {
				continue
			}
			// Join continued lines; check each line that runs a2aflow.
			text := strings.ReplaceAll(b.text, "\\\n", " ")
			for i, line := range strings.Split(text, "\n") {
				words := shellWords(strings.TrimPrefix(strings.TrimSpace(line), "$ "))
				for len(words) > 0 && regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=`).MatchString(words[0]) {
					words = words[1:] // VAR=value before the command
				}
				if len(words) < 2 || !regexp.MustCompile(`^(\./)?(bin/)?a2aflow$`).MatchString(words[0]) {
					continue
				}
				path := []string{}
				rest := words[1:]
				for len(rest) > 0 && help(path).subcommands[rest[0]] {
					path, rest = append(path, rest[0]), rest[1:]
				}
				where := fmt.Sprintf("%s:%d", rel, b.line+1+i)
				if len(path) == 0 {
					t.Errorf("%s: `a2aflow %s` is no command of a2aflow", where, rest[0])
					continue
				}
				flags := help(path).flags
				for _, w := range rest {
					name, ok := strings.CutPrefix(w, "--")
					if !ok || name == "" {
						continue
					}
					name, _, _ = strings.Cut(name, "=")
					if !flags[name] {
						t.Errorf("%s: `a2aflow %s` has no flag --%s", where, strings.Join(path, " "), name)
					}
				}
				checked++
			}
		}
	}
	t.Logf("%d a2aflow command lines checked", checked)
}

var (
	linkRe    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	headingRe = regexp.MustCompile(`(?m)^#+ (.*)$`)
	fenceRe   = regexp.MustCompile("(?s)```.*?```")
)

// anchorOf is GitHub's anchor of a Markdown heading: lower case, spaces as
// '-', other punctuation than '-' and '_' dropped.
func anchorOf(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || ('a' <= r && r <= 'z') || ('0' <= r && r <= '9'):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// checkDocLinks: every relative link of the docs names a file of the
// repository and, with a #fragment, a heading of that file.
func checkDocLinks(t *testing.T) {
	root := repoRoot(t)
	anchors := map[string]map[string]bool{}
	anchorsOf := func(path string) map[string]bool {
		if a, ok := anchors[path]; ok {
			return a
		}
		raw, _ := os.ReadFile(path)
		a := map[string]bool{}
		for _, m := range headingRe.FindAllStringSubmatch(fenceRe.ReplaceAllString(string(raw), ""), -1) {
			a[anchorOf(m[1])] = true
		}
		anchors[path] = a
		return a
	}
	checked := 0
	for _, file := range docFiles(t) {
		rel, _ := filepath.Rel(root, file)
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range linkRe.FindAllStringSubmatch(fenceRe.ReplaceAllString(string(raw), ""), -1) {
			link := m[1]
			if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
				continue
			}
			path, frag, _ := strings.Cut(link, "#")
			target := file
			if path != "" {
				target = filepath.Join(filepath.Dir(file), path)
			}
			if _, err := os.Stat(target); err != nil {
				t.Errorf("%s: the link %s names no file of the repository", rel, link)
				continue
			}
			if frag != "" && strings.HasSuffix(target, ".md") && !anchorsOf(target)[frag] {
				t.Errorf("%s: the link %s names no heading of %s", rel, link, filepath.Base(target))
			}
			checked++
		}
	}
	t.Logf("%d links checked", checked)
}
